//! FlatOut effects whose shaders are HLSL (`PixelShader = compile ps_2_0 f(…);`) through
//! a real mount: the compiled shader runs as the same function compiled by `shaderfs d3d9
//! compile`; an edit of `pixel.hlsl` with sed lands in the effect, one that breaks the
//! HLSL is refused with the `.sha`'s line; shader model 1 shaders compile like the rest;
//! all of it reads back after a remount. The effects are the repository's
//! (`src/archive/sha/fx-verdicts/own/`), which D3DX's effect compiler accepts, and the
//! corpus's FlatOut effects, whose asm shaders show as HLSL decompiled until HLSL is
//! written to them.

use std::fs;
use std::path::{Path, PathBuf};

use shaderfs::shader::d3d9::decompile::decompile;

use crate::support::{can_mount, halved, identity, run, sh, shaderfs, Mount};

fn own(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/archive/sha/fx-verdicts/own")
        .join(name)
}

fn p(path: &Path) -> String {
    path.display().to_string()
}

/// `shaderfs d3d9 run SHADER` with the same inputs every time: two textures (s0, s1),
/// a colour and a texture coordinate, and `set` (constants by name).
fn run_pixel(shader: &Path, inputs: &Path, set: &[&str]) -> serde_json::Value {
    let mut cmd = shaderfs();
    cmd.args(["d3d9", "run"])
        .arg(shader)
        .arg("--inputs")
        .arg(inputs);
    for s in set {
        cmd.args(["--set", s]);
    }
    let out = run(&mut cmd);
    assert!(
        out.status.success(),
        "d3d9 run {}: {}",
        shader.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    json["outputs"]["oC0"].clone()
}

/// `cp SRC pixel.hlsl` into the mounted effect of an asm shader (which shows its block
/// decompiled until then): the copy succeeds and the view reads back `text`, what SRC
/// holds.
fn copy_in_pixel_hlsl(m: &Mount, src: &Path, text: &str) {
    let code = fs::read(m.path("pixel.pso")).unwrap();
    assert_eq!(
        fs::read_to_string(m.path("pixel.hlsl")).unwrap(),
        decompile(&code).unwrap(),
        "an asm shader shows its block decompiled"
    );
    let (code, _, err) = sh(&format!("cp {} {}", p(src), p(&m.path("pixel.hlsl"))));
    assert_eq!(code, 0, "{err}");
    assert_eq!(fs::read_to_string(m.path("pixel.hlsl")).unwrap(), text);
}

/// `shaderfs d3d9 compile SRC -T PROFILE` into `SRC.PROFILE.pso` beside it.
fn compile_alone(src: &Path, profile: &str) -> PathBuf {
    let out_path = src.with_extension(format!("{profile}.pso"));
    let out = run(shaderfs()
        .args(["d3d9", "compile"])
        .arg(src)
        .args(["-T", profile, "-o"])
        .arg(&out_path));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out_path
}

/// Each component of the outputs `v`, times `k`.
fn times(v: &serde_json::Value, k: f64) -> serde_json::Value {
    let scaled: Vec<f64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() * k)
        .collect();
    serde_json::json!(scaled)
}

const INPUTS: &str = r#"{
  "inputs": {"COLOR0": [0.5, 0.25, 1, 0.75], "TEXCOORD0": [0.25, 0.75, 0, 0]},
  "textures": {
    "s0": {"width": 2, "height": 2, "filter": "point",
           "texels": [[1, 0, 0, 1], [0, 1, 0, 0.5], [0, 0, 1, 1], [0.5, 0.5, 0.5, 0.25]]},
    "s1": {"width": 1, "height": 1, "texels": [[0, 0, 0, 0.5]]}
  }
}"#;

#[test]
fn an_hlsl_effect_compiles_runs_saves_and_reads_back() {
    if !can_mount() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("shaders");
    fs::create_dir(&folder).unwrap();
    let effect = folder.join("lit.sha");
    fs::copy(own("hlsl_sm2.sha"), &effect).unwrap();
    let original = fs::read_to_string(&effect).unwrap();
    let inputs = tmp.path().join("inputs.json");
    fs::write(&inputs, INPUTS).unwrap();
    let mnt = tmp.path().join("mnt");
    let m = Mount::new(&folder, &mnt, &[]);
    let fx = m.path("lit.sha");

    let (code, out, err) = sh(&format!("ls {}", p(&fx)));
    assert_eq!(code, 0, "{err}");
    for name in [
        "pixel.asm",
        "pixel.pso",
        "pixel.hlsl",
        "vertex.vso",
        "vertex.hlsl",
    ] {
        assert!(out.lines().any(|l| l == name), "no {name} in {out}");
    }
    let (_, json, _) = sh(&format!("cat {}/archive.json", p(&fx)));
    assert!(json.contains("\"function\": \"ps_main\""), "{json}");
    assert!(json.contains("\"problems\": []"), "{json}");

    // The function, compiled on its own by `d3d9 compile` with the effect's globals: its
    // uniform parameters are constants there ($glow, $tint), set to what the effect's
    // compile statement gives them.
    let source = fs::read_to_string(fx.join("pixel.hlsl")).unwrap();
    assert!(source.starts_with("float4 ps_main("), "{source}");
    let start = original.find("sampler2D sBase").unwrap();
    let end = original.find("float4 ps_main(").unwrap();
    let alone = tmp.path().join("ps_main.hlsl");
    fs::write(&alone, format!("{}{source}", &original[start..end])).unwrap();
    let alone_pso = tmp.path().join("ps_main.pso");
    let out = run(shaderfs()
        .args(["d3d9", "compile"])
        .arg(&alone)
        .args(["-T", "ps_2_0", "-E", "ps_main", "-o"])
        .arg(&alone_pso));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = run_pixel(&alone_pso, &inputs, &["$glow=0.5", "$tint=1,1,1,0.5"]);
    let mounted_pso = fx.join("pixel.pso");
    let got = run_pixel(&mounted_pso, &inputs, &[]);
    assert_eq!(got, want);
    assert_ne!(got, serde_json::json!([0.0, 0.0, 0.0, 0.0]));
    // And what the asm view shows is that bytecode.
    let (code, listing, err) = sh(&format!(
        "shaderfs_bin={} && $shaderfs_bin d3d9 disasm {} -o -",
        env!("CARGO_BIN_EXE_shaderfs"),
        p(&mounted_pso)
    ));
    assert_eq!(code, 0, "{err}");
    assert_eq!(fs::read_to_string(fx.join("pixel.asm")).unwrap(), listing);

    // An edit with sed: compiled again, only its line of the effect changes.
    let (code, _, err) = sh(&format!(
        "sed -i 's/return base \\* tint;/return base * tint * 2.0f;/' {}",
        p(&fx.join("pixel.hlsl"))
    ));
    assert_eq!(code, 0, "sed -i: {err}");
    let edited = original.replace("return base * tint;", "return base * tint * 2.0f;");
    assert_eq!(fs::read_to_string(&effect).unwrap(), edited);
    let doubled = run_pixel(&mounted_pso, &inputs, &[]);
    assert_eq!(doubled, times(&want, 2.0));
    let saved_pso = fs::read(&mounted_pso).unwrap();

    // Broken HLSL: the close fails, the effect stays, the error names the .sha's line.
    let (code, _, err) = sh(&format!(
        "sed -i 's/return base \\* tint \\* 2.0f;/return base.rgb * tint;/' {}",
        p(&fx.join("pixel.hlsl"))
    ));
    assert_ne!(code, 0, "a broken function was saved");
    assert!(err.contains("Invalid argument"), "{err}");
    assert_eq!(fs::read_to_string(&effect).unwrap(), edited);
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    let line = original[..original.find("return base * tint;").unwrap()]
        .matches('\n')
        .count()
        + 1;
    assert!(
        log.contains(&format!(
            "lit.sha:{line}:18: pixel shader ps_main: cannot convert from 'float3' to 'float4' \
             (pixel.hlsl:7:18)"
        )),
        "{log}"
    );

    // A shader model 1 effect beside it: its vs_1_1 and ps_1_1 shaders compile, and
    // `check` finds both effects fine.
    fs::copy(own("hlsl_full.sha"), folder.join("full.sha")).unwrap();
    m.unmount();
    let out = run(shaderfs().arg("check").arg(&folder));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(!stdout.contains("lit.sha"), "{stdout}");

    // Another mount reads back what was saved.
    let m = Mount::new(&folder, &mnt, &["-o", "ro"]);
    let source = fs::read_to_string(m.path("lit.sha/pixel.hlsl")).unwrap();
    assert!(source.contains("return base * tint * 2.0f;"), "{source}");
    assert_eq!(fs::read(m.path("lit.sha/pixel.pso")).unwrap(), saved_pso);
    let pso = fs::read(m.path("full.sha/pixel.ps_simple.pso")).unwrap();
    assert_eq!(&pso[..4], &[0x01, 0x01, 0xFF, 0xFF], "ps_1_1 bytecode");
    let vso = fs::read(m.path("full.sha/vertex.vso")).unwrap();
    assert_eq!(&vso[..4], &[0x01, 0x01, 0xFE, 0xFF], "vs_1_1 bytecode");
    assert!(fs::read_to_string(m.path("full.sha/vertex.hlsl"))
        .unwrap()
        .starts_with("VS_OUT vs_main("));
    m.unmount();
}

/// The source `hlsl_written_into_an_asm_effect_…` writes: what `own/written_hlsl.sha`
/// keeps above its pixel shader.
const PS: &str = "sampler2D s0 : register(s0);\nfloat4 tint : register(c3);\n\n\
float4 main(float2 uv : TEXCOORD0) : COLOR\n{\n    return tex2D(s0, uv) * tint * 2;\n}\n";

#[test]
fn hlsl_written_into_an_asm_effect_is_compiled_into_its_block_and_reads_back() {
    if !can_mount() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let effect = tmp.path().join("sm2.sha");
    fs::copy(own("sm2_sm3.sha"), &effect).unwrap();
    let inputs = tmp.path().join("inputs.json");
    fs::write(&inputs, INPUTS).unwrap();
    let src = tmp.path().join("ps.hlsl");
    fs::write(&src, PS).unwrap();
    let mnt = tmp.path().join("mnt");
    let m = Mount::new(&effect, &mnt, &[]);
    copy_in_pixel_hlsl(&m, &src, PS);
    // The effect is the one D3DX accepts (own/written_hlsl.sha, in the verdicts).
    assert_eq!(
        fs::read(&effect).unwrap(),
        fs::read(own("written_hlsl.sha")).unwrap()
    );

    // pixel.pso runs as the source compiled by `d3d9 compile` (the game sets c3; the
    // block keeps no constant table).
    let alone = compile_alone(&src, "ps_2_0");
    let want = run_pixel(&alone, &inputs, &["tint=0.5,1,0.25,1"]);
    let got = run_pixel(&m.path("pixel.pso"), &inputs, &["c3=0.5,1,0.25,1"]);
    assert_eq!(got, want);
    assert_ne!(got, serde_json::json!([0.0, 0.0, 0.0, 0.0]));

    // sed on the source: compiled again.
    let (code, _, err) = sh(&format!(
        "sed -i 's/tint \\* 2;/tint * 4;/' {}",
        p(&m.path("pixel.hlsl"))
    ));
    assert_eq!(code, 0, "{err}");
    let doubled = run_pixel(&m.path("pixel.pso"), &inputs, &["c3=0.5,1,0.25,1"]);
    assert_eq!(doubled, times(&want, 2.0));
    // A ps.1.4 block: the save compiles into it as into the ps_2_0 one above, and runs
    // as the ps_2_0 code does within ps_1_4's range [-1, 1].
    let (code, _, err) = sh(&format!("cp {} {}", p(&src), p(&m.path("pixel.ps14.hlsl"))));
    assert_eq!(code, 0, "{err}");
    let ps14 = run_pixel(&m.path("pixel.ps14.pso"), &inputs, &["c3=0.5,1,0.25,1"]);
    let clamped: Vec<f64> = want
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap().clamp(-1.0, 1.0))
        .collect();
    assert_eq!(ps14, serde_json::json!(clamped));
    assert!(fs::read_to_string(m.path("pixel.ps14.asm"))
        .unwrap()
        .contains("ps_1_4"));
    m.unmount();

    // The next mount reads back the source as saved.
    let m = Mount::new(&effect, &mnt, &["-o", "ro"]);
    assert_eq!(
        fs::read_to_string(m.path("pixel.hlsl")).unwrap(),
        PS.replace("tint * 2;", "tint * 4;")
    );
    m.unmount();
    let out = run(shaderfs().arg("check").arg(&effect));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The car body's pixel shader of `examples/flatout/car_body.hlsl` with FlatOut's names,
/// as a modder writes it into the ps.1.3 block of a FlatOut effect.
const CAR_BODY_PS: &str = include_str!("../examples/flatout/car_body_pixel.hlsl");

/// The inputs of a FlatOut pixel shader of up to four textures.
const FOUR_TEXTURES: &str = r#"{
  "inputs": {"COLOR0": [0.5, 0.25, 1, 0.75], "COLOR1": [0.125, 0.5, 0.25, 0.375],
             "TEXCOORD0": [0.25, 0.75, 0, 0], "TEXCOORD1": [1, 0.5, -0.25, 0],
             "TEXCOORD2": [0.75, 0.25, 0, 0], "TEXCOORD3": [-0.5, 1, 0.25, 0]},
  "textures": {
    "s0": {"width": 2, "height": 2, "filter": "point",
           "texels": [[1, 0, 0, 1], [0, 1, 0, 0.5], [0, 0, 1, 1], [0.5, 0.5, 0.5, 0.25]]},
    "s1": {"width": 1, "height": 1, "texels": [[0.25, 0.5, 0.75, 0.5]]},
    "s2": {"width": 1, "height": 1, "texels": [[0.5, 0.375, 0.25, 1]]},
    "s3": {"width": 1, "height": 1, "texels": [[0, 0, 0, 0.625]]}
  }
}"#;

/// The issue's FlatOut case: HLSL written to `pixel.hlsl` of the corpus's car body (an asm
/// effect of Zack's compiler, ps.1.3) compiles into its block, runs as `d3d9 compile`'s
/// code of the same source, reads back after a remount, and leaves the effect that
/// D3DX's effect compiler accepts (`own/car_body_written.sha`, in the verdicts).
#[test]
fn hlsl_written_into_a_flatout_car_body_lands_in_its_ps_1_3_block() {
    if !can_mount() {
        return;
    }
    let Some(corpus) = shaderfs::test_corpus::corpus("sha") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let effect = tmp.path().join("car_body.sha");
    fs::copy(corpus.join("demo_car_body.sha"), &effect).unwrap();
    let original = fs::read(&effect).unwrap();
    let inputs = tmp.path().join("inputs.json");
    fs::write(&inputs, FOUR_TEXTURES).unwrap();
    let src = tmp.path().join("ps.hlsl");
    fs::write(&src, CAR_BODY_PS).unwrap();
    let mnt = tmp.path().join("mnt");

    let m = Mount::new(&effect, &mnt, &[]);
    copy_in_pixel_hlsl(&m, &src, CAR_BODY_PS);
    let asm = fs::read_to_string(m.path("pixel.asm")).unwrap();
    assert!(asm.contains("ps_1_3"), "{asm}");

    // The block's code runs as `d3d9 compile -T ps_1_3` of the same source (the game
    // sets SHADOW in c2; the block keeps no constant table).
    let alone = compile_alone(&src, "ps_1_3");
    let want = run_pixel(&alone, &inputs, &["SHADOW=0.75,0.5,0.25,1"]);
    let got = run_pixel(&m.path("pixel.pso"), &inputs, &["c2=0.75,0.5,0.25,1"]);
    assert_eq!(got, want);
    assert_ne!(got, serde_json::json!([0.0, 0.0, 0.0, 0.0]));
    m.unmount();

    // Only the pixel block changed: the vertex shader and the technique are the game's.
    let saved = fs::read(&effect).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&saved),
        fs::read_to_string(own("car_body_written.sha")).unwrap()
    );
    let (saved, original) = (
        String::from_utf8_lossy(&saved).into_owned(),
        String::from_utf8_lossy(&original).into_owned(),
    );
    // Before the pixel shader (the kept source goes just above it), and after its block.
    let before = |t: &str, mark: &str| t[..t.find(mark).unwrap()].to_string();
    let after = |t: &str| {
        let block = t.find("pixelshader").unwrap();
        t[block + t[block..].find("};").unwrap()..].to_string()
    };
    assert_eq!(
        before(&saved, "// shaderfs hlsl:"),
        before(&original, "pixelshader")
    );
    assert_eq!(after(&saved), after(&original));

    // The next mount reads the source back, and `check` passes the effect.
    let m = Mount::new(&effect, &mnt, &["-o", "ro"]);
    assert_eq!(
        fs::read_to_string(m.path("pixel.hlsl")).unwrap(),
        CAR_BODY_PS
    );
    let again = run_pixel(&m.path("pixel.pso"), &inputs, &["c2=0.75,0.5,0.25,1"]);
    assert_eq!(again, want);
    m.unmount();
    let out = run(shaderfs().arg("check").arg(&effect));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A FlatOut effect of the corpus (Zack's compiler: vs.1.1 and ps.1.3 asm blocks): its
/// `vertex.hlsl` and `pixel.hlsl` are its blocks decompiled; saved back unchanged they
/// leave the effect as it was, with no commit; an edit compiles into the block, runs as
/// edited, and reads back after a remount. A broken edit is refused with its place.
#[test]
fn a_flatout_effects_asm_shaders_show_as_hlsl_decompiled() {
    if !can_mount() {
        return;
    }
    let Some(corpus) = shaderfs::test_corpus::corpus("sha") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let effect = tmp.path().join("sunflare.sha");
    fs::copy(corpus.join("demo_pro_sunflare.sha"), &effect).unwrap();
    let original = fs::read(&effect).unwrap();
    let inputs = tmp.path().join("inputs.json");
    fs::write(&inputs, FOUR_TEXTURES).unwrap();
    let copy = tmp.path().join("copy.hlsl");
    let mnt = tmp.path().join("mnt");
    let m = Mount::new(&effect, &mnt, &[]);

    let mut shown = Vec::new();
    for (view, code) in [("vertex.hlsl", "vertex.vso"), ("pixel.hlsl", "pixel.pso")] {
        let text = fs::read_to_string(m.path(view)).unwrap();
        let code = fs::read(m.path(code)).unwrap();
        assert_eq!(text, decompile(&code).unwrap(), "{view}");
        assert_eq!(fs::metadata(m.path(view)).unwrap().len(), text.len() as u64);
        // Saved back as it reads: no commit, the effect byte for byte as it was.
        let unsaved = identity(&effect);
        fs::write(&copy, &text).unwrap();
        let (status, _, err) = sh(&format!("cp {} {}", p(&copy), p(&m.path(view))));
        assert_eq!(status, 0, "{view}: {err}");
        assert_eq!(fs::read(&effect).unwrap(), original, "{view}");
        assert_eq!(identity(&effect), unsaved, "{view}: nothing was committed");
        shown.push(text);
    }
    let json = fs::read_to_string(m.path("archive.json")).unwrap();
    assert!(!json.contains("kept_hlsl"), "{json}");

    // The pixel shader edited: the colour halved, compiled into the ps.1.3 block, the
    // source kept above it; it runs as the original, halved.
    let was = tmp.path().join("was.pso");
    fs::copy(m.path("pixel.pso"), &was).unwrap();
    let edited = halved(&shown[1]);
    fs::write(&copy, &edited).unwrap();
    let (status, _, err) = sh(&format!("cp {} {}", p(&copy), p(&m.path("pixel.hlsl"))));
    assert_eq!(status, 0, "{err}\n{edited}");
    assert_eq!(fs::read_to_string(m.path("pixel.hlsl")).unwrap(), edited);
    assert_ne!(fs::read(&effect).unwrap(), original);
    let want = run_pixel(&was, &inputs, &[]);
    assert_ne!(want, serde_json::json!([0.0, 0.0, 0.0, 0.0]));
    let got = run_pixel(&m.path("pixel.pso"), &inputs, &[]);
    assert_eq!(got, times(&want, 0.5));
    assert!(fs::read_to_string(m.path("pixel.asm"))
        .unwrap()
        .contains("ps_1_3"));
    assert_eq!(fs::read_to_string(m.path("vertex.hlsl")).unwrap(), shown[0]);

    // A broken edit: refused at close() with the compiler's place, the effect unchanged.
    let saved = fs::read(&effect).unwrap();
    let broken = format!("{edited}float4 x = ;\n");
    fs::write(&copy, &broken).unwrap();
    let (status, _, err) = sh(&format!("cp {} {}", p(&copy), p(&m.path("pixel.hlsl"))));
    assert_ne!(status, 0, "a broken source was saved");
    assert!(err.contains("Invalid argument"), "{err}");
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    let line = broken.lines().count();
    assert!(
        log.contains(&format!("pixel.hlsl({line},")) && log.contains(": error: "),
        "{log}"
    );
    assert_eq!(fs::read(&effect).unwrap(), saved);
    m.unmount();

    // The next mount reads the edit back, and the vertex shader still decompiled.
    let m = Mount::new(&effect, &mnt, &["-o", "ro"]);
    assert_eq!(fs::read_to_string(m.path("pixel.hlsl")).unwrap(), edited);
    assert_eq!(fs::read_to_string(m.path("vertex.hlsl")).unwrap(), shown[0]);
    m.unmount();
    let out = run(shaderfs().arg("check").arg(&effect));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The corpus's skinning effect writes a0 to index its bone matrices. Where the
/// decompiler does not write that yet, `vertex.hlsl` reads as EIO with the reason in
/// `.shaderfs/errors`, every other file reads, and `check` passes the effect, counting
/// the view apart; where it does, the view is the block decompiled.
#[test]
fn an_asm_shader_that_does_not_decompile_is_one_unreadable_file() {
    if !can_mount() {
        return;
    }
    let Some(corpus) = shaderfs::test_corpus::corpus("sha") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let effect = tmp.path().join("skin.sha");
    fs::copy(corpus.join("demo_pro_skin.sha"), &effect).unwrap();
    let mnt = tmp.path().join("mnt");
    let m = Mount::new(&effect, &mnt, &["-o", "ro"]);
    let code = fs::read(m.path("vertex.vso")).unwrap();
    let (status, _, err) = sh(&format!("cat {}", p(&m.path("vertex.hlsl"))));
    match decompile(&code) {
        Ok(text) => {
            assert_eq!(status, 0, "{err}");
            assert_eq!(fs::read_to_string(m.path("vertex.hlsl")).unwrap(), text);
        }
        Err(why) => {
            assert_ne!(status, 0);
            assert!(err.contains("Input/output error"), "{err}");
            let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
            assert!(
                log.contains("vertex.hlsl: cannot read: ") && log.contains(&why.to_string()),
                "{log}"
            );
        }
    }
    // Every other file reads: cp -r reports at most the one.
    let (_, _, err) = sh(&format!(
        "cp -r {} {}",
        p(&m.dir),
        p(&tmp.path().join("copy"))
    ));
    let failed: Vec<&str> = err.lines().collect();
    assert!(
        failed.len() <= 1 && failed.iter().all(|l| l.contains("vertex.hlsl")),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(m.path("pixel.hlsl")).unwrap(),
        decompile(&fs::read(m.path("pixel.pso")).unwrap()).unwrap()
    );
    m.unmount();
    let out = run(shaderfs().arg("check").arg("-v").arg(&effect));
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    if decompile(&code).is_err() {
        assert!(
            said.contains("vertex.hlsl: no HLSL to show")
                && said.contains("1 file shaderfs cannot show yet"),
            "{said}"
        );
    }
}

/// A vs_3_0 block that writes its outputs at aL, which no HLSL compiles to: through a
/// real mount its `.hlsl` view is its instructions in an `asm { }` block, saying why;
/// `cp` of the view over itself changes no byte of the effect; an edit with sed lands in
/// the block, and reads back after a remount.
#[test]
fn a_shader_no_hlsl_says_shows_as_its_instructions_and_saves() {
    if !can_mount() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let effect = tmp.path().join("looped.sha");
    let text = fs::read_to_string(own("sm2_sm3.sha")).unwrap();
    let looped = text.replace(
        "\t\tdcl_texcoord\to1.xy\n\t\tm4x4\to0, v0, c0\n\t\tmov\to1.xy, v1\n",
        "\t\tdcl_texcoord\to1\n\t\tdcl_texcoord1\to2\n\t\tdefi\ti0, 2, 0, 1, 0\n\t\tm4x4\to0, v0, c0\n\
         \t\tloop\taL, i0\n\t\tmov\to1[aL], v1\n\t\tendloop\n",
    );
    assert_ne!(looped, text);
    fs::write(&effect, &looped).unwrap();
    let mnt = tmp.path().join("mnt");
    let m = Mount::new(&effect, &mnt, &[]);
    let view = m.path("vertex.vs3.hlsl");
    let shown = fs::read_to_string(&view).unwrap();
    assert_eq!(
        shown,
        decompile(&fs::read(m.path("vertex.vs3.vso")).unwrap()).unwrap()
    );
    assert!(
        shown.contains("// written as asm: ")
            && shown.contains("writes o1 at a relative address")
            && shown.contains("    asm {\n")
            && shown.contains("        loop aL, i0\n            mov o1[aL], v1\n"),
        "{shown}"
    );
    // Saved as it reads: not a byte of the effect changes.
    let copy = tmp.path().join("shown.hlsl");
    fs::write(&copy, &shown).unwrap();
    let (code, _, err) = sh(&format!("cp {} {}", p(&copy), p(&view)));
    assert_eq!(code, 0, "{err}");
    assert_eq!(fs::read_to_string(&effect).unwrap(), looped);
    // An edit of an instruction is the new block.
    let (code, _, err) = sh(&format!(
        "sed -i 's/mov o1\\[aL\\], v1/add o1[aL], v1, v1/' {}",
        p(&view)
    ));
    assert_eq!(code, 0, "{err}");
    let edited = shown.replace("mov o1[aL], v1", "add o1[aL], v1, v1");
    assert_eq!(fs::read_to_string(&view).unwrap(), edited);
    let block = fs::read_to_string(m.path("vertex.vs3.asm")).unwrap();
    assert!(block.contains("add o1[aL], v1, v1"), "{block}");
    m.unmount();
    let m = Mount::new(&effect, &mnt, &["-o", "ro"]);
    assert_eq!(
        fs::read_to_string(m.path("vertex.vs3.hlsl")).unwrap(),
        edited
    );
    let out = run(shaderfs().arg("check").arg(&effect));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
