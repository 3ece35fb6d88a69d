//! The offline commands (`ls`, `cat`, `extract`, `info`, `check`) on packages the project
//! writes itself: these run everywhere, with or without FUSE or the corpus.

use std::fs;
use std::path::Path;
use std::process::Command;

use shaderfs::archive::sdp::write::{self, NameField};

/// `vs_1_1`: `dcl_position v0` / `mov oPos, v0` (shared/formats/sdp.md §2.3).
const VS: [u32; 8] = [
    0xFFFE0101, 0x0000001F, 0x80000000, 0x900F0000, 0x00000001, 0xC00F0000, 0x90E40000, 0x0000FFFF,
];
/// `ps_2_0` from d3d9-bytecode.md §7.1 (dcl, texld, mul, mov).
const PS: [u32; 22] = [
    0xFFFF0200, 0x0200001F, 0x80000000, 0xB00F0000, 0x0200001F, 0x90000000, 0xA00F0800, 0x05000051,
    0xA00F0000, 0x3F800000, 0x00000000, 0x00000000, 0x3F800000, 0x03000042, 0x800F0000, 0xB0E40000,
    0xA0E40800, 0x03000005, 0x800F0000, 0x80E40000, 0xA0E40000, 0x0000FFFF,
];

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A package whose record names are raw bytes, hostile ones included.
fn package(path: &Path, records: &[(&[u8], Vec<u8>)]) {
    let fields: Vec<(NameField, &[u8])> = records
        .iter()
        .map(|(n, d)| {
            let mut raw = [0u8; 256];
            raw[..n.len()].copy_from_slice(n);
            (NameField::from_raw(&raw), d.as_slice())
        })
        .collect();
    fs::write(
        path,
        write::serialise(100, fields.iter().map(|(n, d)| (n, *d))).unwrap(),
    )
    .unwrap();
}

fn shaderfs(args: &[&str]) -> (i32, Vec<u8>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_shaderfs"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn ls_cat_info_check() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("shaderpackage001.sdp");
    package(&pkg, &[(b"SKY.vso", bytes(&VS)), (b"SKY.pso", bytes(&PS))]);
    let p = pkg.to_str().unwrap();

    let (code, out, err) = shaderfs(&["ls", p, "shaders", "-l"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "-         88 SKY.pso\n-         32 SKY.vso\n"
    );

    let (code, out, _) = shaderfs(&["cat", p, "shaders/SKY.pso"]);
    assert_eq!(code, 0);
    assert_eq!(out, bytes(&PS));

    let (code, out, _) = shaderfs(&["info", "--json", p]);
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(json["shader_count"], 2);
    assert_eq!(json["writable"], false);
    assert_eq!(json["shaders"][1]["profile"], "ps_2_0");

    let (code, out, err) = shaderfs(&["check", p]);
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty(), "no problems, nothing on stdout");
    // archive.json, and each shader's bytecode, asm, ctab and hlsl (decompiled) views.
    assert!(err.starts_with(&format!("{p}: ok (9 files")), "{err}");

    let (code, _, err) = shaderfs(&["cat", p, "shaders/NOPE.vso"]);
    assert_eq!(code, 1);
    assert!(err.contains("NOPE.vso"), "{err}");
}

#[test]
fn hostile_names_are_escaped_the_same_in_ls_and_extract() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("evil.sdp");
    package(
        &pkg,
        &[
            (b"../../escape.vso", bytes(&VS)),
            (b"..", bytes(&VS)),
            (b"tab\there.vso", bytes(&VS)),
            (b"dup.vso", bytes(&VS)),
            (b"dup.vso", bytes(&PS)),
            (b"bad\xffutf8.pso", bytes(&PS)),
        ],
    );
    let p = pkg.to_str().unwrap();
    let (code, out, err) = shaderfs(&["ls", p, "shaders"]);
    assert_eq!(code, 0, "{err}");
    let listed = String::from_utf8(out).unwrap();
    let want = [
        "%2E%2E",
        "..%2F..%2Fescape.vso",
        "bad%FFutf8.pso",
        "dup.vso",
        "dup~1.vso",
        "tab%09here.vso",
    ];
    assert_eq!(listed.lines().collect::<Vec<_>>(), want);

    let out_dir = tmp.path().join("out");
    let (code, _, err) = shaderfs(&["extract", p, "-C", out_dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let mut extracted: Vec<String> = fs::read_dir(out_dir.join("shaders"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    extracted.sort();
    assert_eq!(extracted, want);
    assert_eq!(
        fs::read(out_dir.join("shaders/dup~1.vso")).unwrap(),
        bytes(&PS)
    );
    assert!(!tmp.path().join("escape.vso").exists());
    // The archive.json lists the raw names beside the file names.
    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(out_dir.join("archive.json")).unwrap()).unwrap();
    assert_eq!(json["shaders"][0]["name"], "../../escape.vso");
    assert_eq!(json["shaders"][0]["file"], "..%2F..%2Fescape.vso");
}

#[test]
fn malformed_packages_exit_2_with_the_place() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("short.sdp");
    package(&pkg, &[(b"A.vso", bytes(&VS))]);
    let full = fs::read(&pkg).unwrap();
    fs::write(&pkg, &full[..full.len() - 3]).unwrap();
    let (code, out, err) = shaderfs(&["check", pkg.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("short.sdp"), "{out}");
    assert!(out.contains("record 0 at offset 0xc"), "{out}");
    assert!(out.contains("runs past the end"), "{out}");
    let (code, out, _) = shaderfs(&["check", "--json", pkg.to_str().unwrap()]);
    assert_eq!(code, 2);
    let record: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(record["archive"], pkg.to_str().unwrap());
    // The size field that runs past the end: after the 256-byte name of record 0.
    assert_eq!(record["offset"], 0xc + 256);

    let (code, _, err) = shaderfs(&["ls", tmp.path().join("none.sdp").to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
}

/// A FlatOut effect written for this test (no corpus needed).
const EFFECT: &str = "Texture Tex0;\n\nconst string inputStreamFormat = \"PosprojTex1\";\n\npixelshader pSdr =\n\tasm\n\t{\n\t\tps.1.3\n\t\ttex t0\n\t\tmul r0, t0, c3\n\t};\n\nTechnique T0\n{\n\tPass P0\n\t{\n\t\tTexture[0] = <Tex0>;\n\t\tVertexShader = null;\n\t\tPixelShader = <pSdr>;\n\t}\n}\n";

#[test]
fn check_reports_what_the_game_would_refuse_in_an_effect() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good.sha");
    fs::write(&good, EFFECT).unwrap();
    let (code, _, err) = shaderfs(&["check", good.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = shaderfs(&["cat", good.to_str().unwrap(), "pixel.asm"]);
    assert_eq!(code, 0);
    assert!(String::from_utf8(out).unwrap().contains("mul r0, t0, c3"));

    // An undeclared texture: every file still reads, but the game would refuse it.
    let bad = tmp.path().join("bad.sha");
    fs::write(&bad, EFFECT.replace("<Tex0>", "<Tex9>")).unwrap();
    let (code, out, err) = shaderfs(&["check", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains("bad.sha:17:17: <Tex9> is not declared"),
        "{out}"
    );
}

#[test]
fn extract_writes_nothing_through_a_symlink_it_did_not_make() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("shaderpackage001.sdp");
    package(&pkg, &[(b"SKY.vso", bytes(&VS)), (b"SKY.pso", bytes(&PS))]);
    let out = tmp.path().join("out");
    let elsewhere = tmp.path().join("elsewhere");
    let victim = tmp.path().join("victim.txt");
    fs::create_dir_all(&out).unwrap();
    fs::create_dir_all(&elsewhere).unwrap();
    fs::write(&victim, b"keep me").unwrap();
    std::os::unix::fs::symlink(&elsewhere, out.join("asm")).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("archive.json")).unwrap();

    let (code, _, err) = shaderfs(&[
        "extract",
        pkg.to_str().unwrap(),
        "-C",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&out.join("asm").display().to_string()),
        "{err}"
    );
    assert!(
        err.contains(&out.join("archive.json").display().to_string()),
        "{err}"
    );
    assert_eq!(
        fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "nothing written through asm"
    );
    assert_eq!(fs::read(&victim).unwrap(), b"keep me");
    // Everything else is extracted.
    assert_eq!(fs::read(out.join("shaders/SKY.vso")).unwrap(), bytes(&VS));
    assert!(out.join("ctab/SKY.pso.json").is_file());
}

/// A FlatOut effect whose pixel block the game refuses (`mov` without its source).
const REFUSED: &str = "const string inputStreamFormat = \"Pos\";\n\nvertexshader vSdr =\n\tasm\n\t{\n\t\tvs.1.1\n\t\tdcl_position v0\n\t\tm4x4 oPos, v0, c0\n\t};\n\npixelshader pSdr =\n\tasm\n\t{\n\t\tps.1.3\n\t\tmov r0, \n\t};\n\nTechnique T0\n{\n\tPass P0\n\t{\n\t\tVertexShader = <vSdr>;\n\t\tPixelShader = <pSdr>;\n\t}\n}\n";

/// The 1-based line of each `pixelshader` item in `text`.
fn pixel_shader_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("pixelshader "))
        .map(|(i, _)| i + 1)
        .collect()
}

/// Issue 24: an effect of 4,000 blocks, 2,000 of which the game refuses, is reported
/// block by block exactly as the one-block effect is: each refused block once, where it
/// is, and no line for the bytecode views that cannot be read because of it (telling
/// those apart was quadratic in the number of blocks).
#[test]
fn check_reports_each_block_of_a_large_effect_as_it_reports_one() {
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("one.sha");
    fs::write(&one, REFUSED).unwrap();
    let (code, out, err) = shaderfs(&["check", one.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    let out = String::from_utf8(out).unwrap();
    let line: Vec<&str> = out.lines().collect();
    let [line] = line.as_slice() else {
        panic!("one problem expected: {out}")
    };
    // `one.sha:LINE:COLUMN: pixel shader pSdr: … (pixel.asm:…)`
    let rest = line.strip_prefix(&format!("{}:", one.display())).unwrap();
    let (at, message) = rest.split_once(": ").unwrap();
    let (problem_line, column) = at.split_once(':').unwrap();
    let below_item = problem_line.parse::<usize>().unwrap() - pixel_shader_lines(REFUSED)[0];
    assert!(message.starts_with("pixel shader pSdr: "), "{message}");

    let big = shaderfs::archive::sha::generate::repeat_blocks(REFUSED.as_bytes(), 4000).unwrap();
    let big_text = String::from_utf8(big.clone()).unwrap();
    let path = tmp.path().join("big.sha");
    fs::write(&path, &big).unwrap();
    let expected: String = pixel_shader_lines(&big_text)
        .into_iter()
        .enumerate()
        .map(|(copy, item)| {
            let message = match copy {
                0 => message.to_owned(),
                n => message
                    .replace("pSdr", &format!("pSdr_{n}"))
                    .replace("(pixel.asm", &format!("(pixel.pSdr_{n}.asm")),
            };
            format!(
                "{}:{}:{column}: {message}\n",
                path.display(),
                item + below_item
            )
        })
        .collect();
    assert_eq!(expected.lines().count(), 2000);
    let (code, out, err) = shaderfs(&["check", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(String::from_utf8(out).unwrap(), expected);
    assert!(err.contains("2,000 problems"), "{err}");
}

/// `d3d9 disasm --style d3ddisassemble` prints what D3DDisassemble printed for one of the
/// goldens kept in the repository (d3dx9_27, Oblivion's compiler); the default style is
/// fxc's listing, which assembles back to the same bytes.
#[test]
fn d3d9_disasm_in_both_styles() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/shader/d3d9/ctab/testdata");
    let golden = format!("{dir}/bound_mixed.ps_3_0.d3dx9_27");
    let bin = format!("{golden}.bin");
    let (code, out, err) = shaderfs(&["d3d9", "disasm", &bin, "--style", "d3ddisassemble"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        String::from_utf8(out).unwrap(),
        fs::read_to_string(format!("{golden}.txt")).unwrap()
    );
    let tmp = tempfile::tempdir().unwrap();
    let asm = tmp.path().join("x.asm");
    let back = tmp.path().join("x.pso");
    let (code, _, err) = shaderfs(&["d3d9", "disasm", &bin, "-o", asm.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let text = fs::read_to_string(&asm).unwrap();
    assert!(
        text.starts_with("\n//\n// Generated by Microsoft (R) D3DX9 Shader Compiler 9.08.299.0000\n//\n//   Bound by register(): "),
        "{text}"
    );
    let (code, _, err) = shaderfs(&[
        "d3d9",
        "asm",
        asm.to_str().unwrap(),
        "-o",
        back.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(fs::read(&back).unwrap(), fs::read(&bin).unwrap());
    let (code, _, err) = shaderfs(&["d3d9", "disasm", &bin, "--style", "msft"]);
    assert_eq!(code, 1, "a usage error: {err}");
    assert!(err.contains("d3ddisassemble"), "{err}");
}

/// `d3d9 run` on asm text (assembled first) and on bytecode: constants from `--set`, an
/// input semantic, a texture from `--inputs`; bad input exits 2 naming the file.
#[test]
fn d3d9_run_prints_outputs_as_json() {
    let tmp = tempfile::tempdir().unwrap();
    let asm = tmp.path().join("tint.asm");
    fs::write(
        &asm,
        "ps_2_0\ndcl t0.xy\nmov r0, c0\nadd r0.xy, r0, t0\nrcp r0.z, c1.x\nmov oC0, r0\n",
    )
    .unwrap();
    let (code, out, err) = shaderfs(&[
        "d3d9",
        "run",
        asm.to_str().unwrap(),
        "--set",
        "c0=1,2,3,4",
        "--set",
        "TEXCOORD0=0.25,0.5",
    ]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(json["profile"], "ps_2_0");
    assert_eq!(
        json["outputs"]["oC0"],
        serde_json::json!([1.25, 2.5, "inf", 4.0])
    );
    assert_eq!(json["discarded"], false);

    // Bytecode made by `d3d9 asm`: texld of s0 at t0, times c0 (defined as 1, 0, 0, 1).
    let text = tmp.path().join("tex.asm");
    fs::write(
        &text,
        "ps_2_0\ndcl t0\ndcl_2d s0\ndef c0, 1, 0, 0, 1\ntexld r0, t0, s0\nmul r0, r0, c0\nmov oC0, r0\n",
    )
    .unwrap();
    let bin = tmp.path().join("ps.pso");
    let (code, _, err) = shaderfs(&[
        "d3d9",
        "asm",
        text.to_str().unwrap(),
        "-o",
        bin.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let inputs = tmp.path().join("inputs.json");
    fs::write(
        &inputs,
        r#"{"textures": {"s0": {"width": 2, "height": 1, "texels": [[0.5, 1, 1, 1], [0.25, 1, 1, 0.5]]}},
            "inputs": {"TEXCOORD0": [0.75, 0, 0, 0]}}"#,
    )
    .unwrap();
    let (code, out, err) = shaderfs(&[
        "d3d9",
        "run",
        bin.to_str().unwrap(),
        "--inputs",
        inputs.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        json["outputs"]["oC0"],
        serde_json::json!([0.25, 0.0, 0.0, 0.5])
    );

    let junk = tmp.path().join("junk.pso");
    fs::write(&junk, [0xFFu8, 0xFF, 0xFF, 0xFF]).unwrap();
    let (code, _, err) = shaderfs(&["d3d9", "run", junk.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("junk.pso"), "{err}");
}

#[test]
fn d3d9_compile_writes_a_shader_that_runs_and_reports_every_error_with_its_place() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("tint.hlsl");
    fs::write(
        &src,
        "#include \"scale.hlsl\"\nfloat4 tint;\nfloat4 main(float2 uv : TEXCOORD0) : COLOR\n{\n    return tint * SCALE + float4(uv, 0, 0);\n}\n",
    )
    .unwrap();
    let inc = tmp.path().join("inc");
    fs::create_dir(&inc).unwrap();
    fs::write(inc.join("scale.hlsl"), "#define SCALE 2\n").unwrap();
    let pso = tmp.path().join("tint.pso");
    let (code, _, err) = shaderfs(&[
        "d3d9",
        "compile",
        src.to_str().unwrap(),
        "-T",
        "ps_2_0",
        "-I",
        inc.to_str().unwrap(),
        "-o",
        pso.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    // The constant table names `tint`: set it by name, and the texture coordinate.
    let (code, out, err) = shaderfs(&[
        "d3d9",
        "run",
        pso.to_str().unwrap(),
        "--set",
        "tint=1,2,3,4",
        "--set",
        "TEXCOORD0=0.25,0.5",
    ]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        json["outputs"]["oC0"],
        serde_json::json!([2.25, 4.5, 6.0, 8.0])
    );

    // Two broken lines: both reported, as FILE(LINE,COL): error: …, exit 2, nothing written.
    let bad = tmp.path().join("bad.hlsl");
    fs::write(
        &bad,
        "float4 main() : COLOR\n{\n    float a = b;\n    return c;\n}\n",
    )
    .unwrap();
    let out = tmp.path().join("bad.pso");
    let (code, _, err) = shaderfs(&[
        "d3d9",
        "compile",
        bad.to_str().unwrap(),
        "-T",
        "ps_2_0",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    let name = bad.display().to_string();
    assert!(
        err.contains(&format!("{name}(3,15): error: undeclared identifier 'b'")),
        "{err}"
    );
    assert!(
        err.contains(&format!("{name}(4,12): error: undeclared identifier 'c'")),
        "{err}"
    );
    assert!(!out.exists());
}

/// Pixel shader model 1 compiles as Microsoft's legacy compiler compiles it, and runs
/// with ps_1_x's range: every result held to [-1, 1]. What the model has no instruction
/// for is refused at its line, naming the profile.
#[test]
fn d3d9_compile_pixel_shader_model_1_and_run_it_within_its_range() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("blend.hlsl");
    fs::write(
        &src,
        "float4 tint;\nfloat4 main(float4 c : COLOR0) : COLOR\n{\n    return lerp(c, tint, 0.25) * 2;\n}\n",
    )
    .unwrap();
    for profile in ["ps_1_1", "ps_1_2", "ps_1_3", "ps_1_4"] {
        let pso = tmp.path().join(format!("{profile}.pso"));
        let (code, listing, err) = shaderfs(&[
            "d3d9",
            "compile",
            src.to_str().unwrap(),
            "-T",
            profile,
            "--listing",
            "-o",
            pso.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{profile}: {err}");
        let listing = String::from_utf8(listing).unwrap();
        assert!(listing.contains(&format!("    {profile}\n")), "{listing}");
        let (code, out, err) = shaderfs(&[
            "d3d9",
            "run",
            pso.to_str().unwrap(),
            "--set",
            "tint=0.5,0.25,0,1",
            "--set",
            "COLOR0=0.25,0.5,0.75,1",
        ]);
        assert_eq!(code, 0, "{err}");
        let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
        // (0.3125, 0.4375, 0.5625, 1) * 2, held to 1.
        assert_eq!(
            json["outputs"]["oC0"],
            serde_json::json!([0.625, 0.875, 1.0, 1.0]),
            "{profile}: {listing}"
        );
    }
    // FlatOut's car body, with the names of the built-in <flatout.hlsl>.
    let car = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/flatout/car_body.hlsl"
    );
    for (profile, entry, registers) in [
        (
            "vs_1_1",
            "vs_body",
            ["FlatOutLocalToScreen c0", "CAMERA               c8"],
        ),
        ("ps_1_1", "ps_body", ["SHADOW       c2", "Reflection   s1"]),
    ] {
        let (code, listing, err) = shaderfs(&[
            "d3d9",
            "compile",
            car,
            "-T",
            profile,
            "-E",
            entry,
            "--listing",
            "-o",
            "/dev/null",
        ]);
        assert_eq!(code, 0, "{profile}: {err}");
        let listing = String::from_utf8(listing).unwrap();
        for r in registers {
            assert!(listing.contains(r), "{profile}: {r}: {listing}");
        }
    }
    let bad = tmp.path().join("bad.hlsl");
    fs::write(
        &bad,
        "float4 main(float4 c : COLOR0) : COLOR\n{\n    return 1 / c;\n}\n",
    )
    .unwrap();
    let (code, _, err) = shaderfs(&["d3d9", "compile", bad.to_str().unwrap(), "-T", "ps_1_1"]);
    assert_eq!(code, 2);
    let name = bad.display().to_string();
    assert!(
        err.contains(&format!("{name}(3,")) && err.contains("ps_1_1 has no reciprocal"),
        "{err}"
    );
    // Code that does not fit the model is refused with the limit, at the entry point.
    fs::write(
        &bad,
        "float4 u;\nfloat4 v;\nfloat4 main() : COLOR\n{\n    float4 r = 0;\n    r.xyz = cross(u.xyz, v.xyz);\n    return r;\n}\n",
    )
    .unwrap();
    let (code, _, err) = shaderfs(&["d3d9", "compile", bad.to_str().unwrap(), "-T", "ps_1_1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!("{name}(3,8): error: "))
            && err.contains("ps_1_1 allows 8 arithmetic instruction slots"),
        "{err}"
    );
    // … and says how many the code takes.
    let takes: u32 = err
        .split("; it takes ")
        .nth(1)
        .and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(takes > 8, "{err}");
}

#[test]
fn d3d9_compile_keeps_a_loop_over_an_int_uniform_as_rep_and_it_runs_that_many_times() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("sum.hlsl");
    fs::write(
        &src,
        "int count;\nfloat4 step;\nfloat4 main() : COLOR\n{\n    float4 sum = 0;\n    for (int i = 0; i < count; i++)\n        sum += step * i;\n    return sum;\n}\n",
    )
    .unwrap();
    for profile in ["ps_3_0", "vs_2_0"] {
        let src = if profile.starts_with("vs") {
            let vs = tmp.path().join("sum_vs.hlsl");
            fs::write(
                &vs,
                fs::read_to_string(&src)
                    .unwrap()
                    .replace("COLOR", "POSITION"),
            )
            .unwrap();
            vs
        } else {
            src.clone()
        };
        let out = tmp.path().join(format!("sum.{profile}"));
        let (code, listing, err) = shaderfs(&[
            "d3d9",
            "compile",
            src.to_str().unwrap(),
            "-T",
            profile,
            "-o",
            out.to_str().unwrap(),
            "--listing",
        ]);
        assert_eq!(code, 0, "{err}");
        let listing = String::from_utf8(listing).unwrap();
        // The count is the table's integer register, and the loop is one loop.
        assert!(
            listing
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["//", "count", "i0", "1"]),
            "{listing}"
        );
        assert_eq!(listing.matches("rep i0").count(), 1, "{listing}");
        for (n, want) in [(0, 0.0), (1, 0.0), (4, 6.0), (10, 45.0)] {
            let (code, out_json, err) = shaderfs(&[
                "d3d9",
                "run",
                out.to_str().unwrap(),
                "--set",
                &format!("count={n}"),
                "--set",
                "step=1,2,0.5,-1",
            ]);
            assert_eq!(code, 0, "{err}");
            let json: serde_json::Value = serde_json::from_slice(&out_json).unwrap();
            let reg = if profile.starts_with("vs") {
                "oPos"
            } else {
                "oC0"
            };
            assert_eq!(
                json["outputs"][reg],
                serde_json::json!([want, 2.0 * want, 0.5 * want, -want]),
                "{profile} count={n}"
            );
        }
    }
    // ps_2_0 has no loops: the count must be known, and this one is not.
    let (code, _, err) = shaderfs(&["d3d9", "compile", src.to_str().unwrap(), "-T", "ps_2_0"]);
    assert_eq!(code, 2);
    assert!(err.contains("unable to unroll loop"), "{err}");
    // A count that is also read as a value would need two register sets.
    let both = tmp.path().join("both.hlsl");
    fs::write(
        &both,
        "int count;\nfloat4 main() : COLOR\n{\n    float4 sum = 0;\n    for (int i = 0; i < count; i++)\n        sum += 1;\n    return sum + count;\n}\n",
    )
    .unwrap();
    let (code, _, err) = shaderfs(&["d3d9", "compile", both.to_str().unwrap(), "-T", "ps_3_0"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("'count' counts a loop and is read as a value"),
        "{err}"
    );
}

/// What Microsoft's compiler (d3dcompiler_43, through msd3d) makes of three small loops,
/// found by running both compilers' output through `d3d9 run`: a `[loop]` whose results
/// fold to constants is no loop at all; a loop taking a cosine of an input stays a `rep`
/// and computes what fxc's does; and the variable a `for` declares is still there after
/// the loop, a second `for (int i …)` with a warning (fxc's X3078).
#[test]
fn d3d9_compile_loops_as_microsofts_compiler_scopes_folds_and_keeps_them() {
    let tmp = tempfile::tempdir().unwrap();
    let compile = |name: &str, text: &str| -> (String, String, std::path::PathBuf) {
        let src = tmp.path().join(format!("{name}.hlsl"));
        fs::write(&src, text).unwrap();
        let out = tmp.path().join(format!("{name}.pso"));
        let (code, listing, err) = shaderfs(&[
            "d3d9",
            "compile",
            src.to_str().unwrap(),
            "-T",
            "ps_3_0",
            "-o",
            out.to_str().unwrap(),
            "--listing",
        ]);
        assert_eq!(code, 0, "{name}: {err}");
        (String::from_utf8(listing).unwrap(), err, out)
    };
    let run = |out: &Path, t: &str| -> serde_json::Value {
        let (code, json, err) = shaderfs(&[
            "d3d9",
            "run",
            out.to_str().unwrap(),
            "--set",
            &format!("TEXCOORD0={t}"),
        ]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_slice::<serde_json::Value>(&json).unwrap()["outputs"]["oC0"].clone()
    };
    let (listing, _, out) = compile(
        "fold",
        "float4 main(float t : TEXCOORD0) : COLOR\n{\n    float total = 0;\n    [loop]\n    for (int n = 0; n < 6; n++)\n        total += n * 2;\n    return float4(total, n, 0, 1);\n}\n",
    );
    assert!(!listing.contains("rep "), "{listing}");
    assert_eq!(run(&out, "0.3"), serde_json::json!([30.0, 6.0, 0.0, 1.0]));
    let (listing, _, out) = compile(
        "wave",
        "float4 main(float t : TEXCOORD0) : COLOR\n{\n    float total = 0;\n    for (int n = 0; n < 6; n++)\n        total += cos(t * n);\n    return float4(total, n, 0, 1);\n}\n",
    );
    assert_eq!(listing.matches("rep i0").count(), 1, "{listing}");
    // Microsoft's shader gives 3.8353774547576904 at t = 0.3 and 0.5497208833694458 at
    // t = -1.7 through `d3d9 run`.
    for (t, want) in [
        ("0.3", 3.835_377_454_757_690_4),
        ("-1.7", 0.549_720_883_369_445_8),
    ] {
        let got = run(&out, t);
        assert!((got[0].as_f64().unwrap() - want).abs() < 1e-6, "{t}: {got}");
        assert_eq!(got[1], serde_json::json!(6.0));
    }
    let (_, warnings, out) = compile(
        "twice",
        "float4 main(float t : TEXCOORD0) : COLOR\n{\n    float a = 0, b = 0;\n    for (int i = 0; i < 3; i++) a += i * t;\n    for (int i = 0; i < 5; i++) b += i;\n    return float4(a, b, i, 1);\n}\n",
    );
    assert!(
        warnings.contains("(5,5): warning: 'i': loop control variable conflicts"),
        "{warnings}"
    );
    assert_eq!(run(&out, "0.5"), serde_json::json!([1.5, 10.0, 5.0, 1.0]));
    assert_eq!(run(&out, "2"), serde_json::json!([6.0, 10.0, 5.0, 1.0]));
}

/// A loop left at a run-time condition (a `break`, a `continue`, a `return` from an
/// inner loop) unrolls into choices made on the tests themselves, as fxc makes them; the
/// values are those of Microsoft's shaders through `d3d9 run`.
#[test]
fn d3d9_compile_unrolls_loops_left_at_run_time_conditions_as_microsofts_compiler() {
    let tmp = tempfile::tempdir().unwrap();
    let compile = |name: &str, profile: &str, text: &str| -> std::path::PathBuf {
        let src = tmp.path().join(format!("{name}.hlsl"));
        fs::write(&src, text).unwrap();
        let out = tmp.path().join(format!("{name}.pso"));
        let (code, _, err) = shaderfs(&[
            "d3d9",
            "compile",
            src.to_str().unwrap(),
            "-T",
            profile,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{name}: {err}");
        out
    };
    let run = |out: &Path, sets: &[&str]| -> serde_json::Value {
        let mut args = vec!["d3d9", "run", out.to_str().unwrap()];
        for s in sets {
            args.extend(["--set", s]);
        }
        let (code, json, err) = shaderfs(&args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_slice::<serde_json::Value>(&json).unwrap()["outputs"]["oC0"].clone()
    };
    // ps_2_0 has no loops: ten iterations, each may break or continue.
    let out = compile(
        "leave",
        "ps_2_0",
        "float4 main(float t : TEXCOORD0) : COLOR\n{\n    float x = 0;\n    int i;\n    for (i = 0; i < 10; i++)\n    {\n        x += i;\n        if (t > 0.5 && i == 5)\n            break;\n        if (t > -0.5 && i >= 7)\n            continue;\n        x -= 1;\n    }\n    return float4(i, x, 0, 1);\n}\n",
    );
    for (t, want) in [
        ("0.7", [5.0, 10.0, 0.0, 1.0]),
        ("0.2", [10.0, 38.0, 0.0, 1.0]),
        ("-0.9", [10.0, 35.0, 0.0, 1.0]),
    ] {
        assert_eq!(
            run(&out, &[&format!("TEXCOORD0={t}")]),
            serde_json::json!(want)
        );
    }
    // A return from an inner loop: which element the test reads is known on every path
    // still running.
    let out = compile(
        "inner",
        "ps_3_0",
        "uniform float4 limits[3];\nfloat4 main(float t : TEXCOORD0) : COLOR\n{\n    float4 ret = t;\n    for (int i = 0; i < 3; i++)\n    {\n        for (int j = 0; j < 3; j++)\n        {\n            if (ret.x > limits[j].x)\n                return ret;\n        }\n        ret *= 2;\n    }\n    return -1;\n}\n",
    );
    let limits = ["limits=1,0,0,0", "c1=2,0,0,0", "c2=4,0,0,0"];
    for (t, want) in [("0.3", 1.2f32), ("1.5", 1.5), ("5", 5.0), ("-2", -1.0)] {
        let mut sets = limits.to_vec();
        let input = format!("TEXCOORD0={t}");
        sets.push(&input);
        assert_eq!(
            run(&out, &sets),
            serde_json::json!(vec![want; 4]),
            "t = {t}"
        );
    }
    // Loops that leave at run-time conditions for hundreds of iterations, nested: refused
    // once, at the inner loop, as fxc refuses a loop it does not see end.
    let src = tmp.path().join("endless.hlsl");
    fs::write(
        &src,
        "float4 main(float x : TEXCOORD0) : COLOR\n{\n    float s = 0;\n    [unroll] for (int i = 0; i < 250; i++) { if (x < i) break; [unroll] for (int j = 0; j < 250; j++) { if (x < j) break; s += 1; } }\n    return s;\n}\n",
    )
    .unwrap();
    let (code, _, err) = shaderfs(&[
        "d3d9",
        "compile",
        src.to_str().unwrap(),
        "-T",
        "ps_3_0",
        "-o",
        tmp.path().join("endless.pso").to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    let refusal =
        "endless.hlsl(4,64): error: unable to unroll loop, loop does not appear to terminate";
    assert_eq!(err.matches(refusal).count(), 1, "{err}");
}

/// Corners of the language fxc accepts and real sources meet: a typedef that takes a
/// built-in type's name inside a function, an `out` argument cast on its way back, `?:`
/// with a vector condition choosing between scalars, an unsized array sized by another,
/// and an `SV_Position` input ps_2_0 cannot read but the shader does not read either.
/// The values are those of Microsoft's shader through `d3d9 run`.
#[test]
fn d3d9_compile_accepts_the_corners_of_the_language_microsofts_compiler_accepts() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("corners.hlsl");
    fs::write(
        &src,
        "typedef float2 Pair;\nuniform float4 f;\nvoid get(out float4 o) { o = f; }\nfloat4 main(float4 pos : SV_Position, float4 color : COLOR0) : COLOR\n{\n    typedef Pair float;\n    float p = {1, 2};\n    int4 whole;\n    get((float4)whole);\n    float4 pick = color ? p.x : p.y;\n    float4 copy[] = {pick, pick};\n    float4 again[] = copy;\n    return float4(p.x + p.y, whole.x, again[1].x, pick.y);\n}\n",
    )
    .unwrap();
    let out = tmp.path().join("corners.pso");
    let (code, _, err) = shaderfs(&[
        "d3d9",
        "compile",
        src.to_str().unwrap(),
        "-T",
        "ps_2_0",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    for (f, color, want) in [
        ("f=2.7,0,0,0", "COLOR0=1,0,0,0", [3.0, 2.0, 1.0, 2.0]),
        ("f=-3.5,0,0,0", "COLOR0=0,1,0,0", [3.0, -3.0, 2.0, 1.0]),
    ] {
        let (code, json, err) = shaderfs(&[
            "d3d9",
            "run",
            out.to_str().unwrap(),
            "--set",
            f,
            "--set",
            color,
        ]);
        assert_eq!(code, 0, "{err}");
        let got =
            serde_json::from_slice::<serde_json::Value>(&json).unwrap()["outputs"]["oC0"].clone();
        assert_eq!(got, serde_json::json!(want), "{f} {color}");
    }
    // Read, the position is an input ps_2_0 has no register for.
    fs::write(
        &src,
        "float4 main(float4 pos : SV_Position, float4 color : COLOR0) : COLOR\n{\n    return pos + color;\n}\n",
    )
    .unwrap();
    let (code, _, err) = shaderfs(&[
        "d3d9",
        "compile",
        src.to_str().unwrap(),
        "-T",
        "ps_2_0",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("corners.hlsl(1,20): error: invalid ps_2_0 input semantic 'SV_Position'"),
        "{err}"
    );
}

/// Branches kept as branches, where fxc keeps them, and with the values Microsoft's
/// shaders (d3dcompiler_43, through msd3d) give through `d3d9 run`: a test of a `bool`
/// uniform whose arms call functions is `if b#`, the bool in the table's BOOL set (and in
/// the FLOAT4 set too where it is also read as a value, as fxc lists it); an arm that
/// samples a texture is an `if_comp`; `[branch]` is refused where the profile has no flow
/// control, and where an arm would take gradients of a computed value.
#[test]
fn d3d9_compile_keeps_branches_where_microsofts_compiler_does() {
    let tmp = tempfile::tempdir().unwrap();
    let compile = |name: &str, text: &str, profile: &str| -> (i32, String, String) {
        let src = tmp.path().join(format!("{name}.hlsl"));
        fs::write(&src, text).unwrap();
        let out = tmp.path().join(format!("{name}.{profile}"));
        let (code, listing, err) = shaderfs(&[
            "d3d9",
            "compile",
            src.to_str().unwrap(),
            "-T",
            profile,
            "-o",
            out.to_str().unwrap(),
            "--listing",
        ]);
        (
            code,
            String::from_utf8(listing).unwrap(),
            format!("{err}{}", out.display()),
        )
    };
    let run = |shader: &str, args: &[&str], reg: &str| -> Vec<f64> {
        let mut all = vec!["d3d9", "run", shader];
        all.extend_from_slice(args);
        let (code, json, err) = shaderfs(&all);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        v["outputs"][reg]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let close = |got: &[f64], want: &[f64]| {
        got.len() == want.len()
            && got
                .iter()
                .zip(want)
                .all(|(g, w)| (g - w).abs() <= 1e-6 * w.abs().max(1.0))
    };

    let bools = "bool UseA;\nbool UseB : register(b2);\nfloat4 k;\nfloat4 H(float4 x) { return x * k.w + 0.5; }\nfloat4 H2(float4 x) { return x * k.z + 0.25; }\nfloat4 main(float4 p : TEXCOORD0) : COLOR\n{\n    float4 r = p;\n    if (UseA) r = H(r); else r = H2(r);\n    if (!UseB) r = H(r) * 2; else r = H2(r) - 1;\n    return r * UseA + r;\n}\n";
    // Microsoft's oC0 for k = (0.5, -2, 3, 0.75), TEXCOORD0 = (0.2, -1.5, 4, 1).
    let want = [
        (true, true, [2.4, -5.25, 19.5, 6.0]),
        (true, false, [3.95, 0.125, 12.5, 5.75]),
        (false, true, [1.8, -13.5, 36.0, 9.0]),
        (false, false, [2.275, -5.375, 19.375, 5.875]),
    ];
    for (profile, input, output) in [
        ("ps_3_0", "TEXCOORD0", "oC0"),
        ("vs_2_0", "POSITION", "oPos"),
    ] {
        let text = if profile.starts_with("vs") {
            bools.replace("p : TEXCOORD0) : COLOR", "p : POSITION) : POSITION")
        } else {
            bools.to_string()
        };
        let (code, listing, out) = compile("bools", &text, profile);
        assert_eq!(code, 0, "{out}");
        let out = out.lines().last().unwrap().to_string();
        assert_eq!(listing.matches("if b0").count(), 1, "{listing}");
        assert_eq!(listing.matches("if b2").count(), 1, "{listing}");
        let rows: Vec<Vec<&str>> = listing
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        for row in [
            ["//", "UseA", "b0", "1"],
            ["//", "UseB", "b2", "1"],
            ["//", "UseA", "c0", "1"],
        ] {
            assert!(rows.iter().any(|r| r == &row), "{row:?}\n{listing}");
        }
        for (a, b, o) in want {
            let input = format!("{input}=0.2,-1.5,4,1");
            let got = run(
                &out,
                &[
                    "--set",
                    &format!("b0={a}"),
                    "--set",
                    &format!("b2={b}"),
                    "--set",
                    &format!("c0={}", u8::from(a)),
                    "--set",
                    "k=0.5,-2,3,0.75",
                    "--set",
                    &input,
                ],
                output,
            );
            assert!(close(&got, &o), "{profile} UseA={a} UseB={b}: {got:?}");
        }
    }

    let tex = "sampler2D s;\nfloat4 k;\nfloat4 main(float4 p : TEXCOORD0) : COLOR\n{\n    float4 r = p * k;\n    if (p.x > k.x)\n        r = tex2D(s, p.xy);\n    else if (p.y <= k.y)\n        r += tex2Dlod(s, float4(p.x, 0.25, 0, 0));\n    return r;\n}\n";
    let (code, listing, out) = compile("tex", tex, "ps_3_0");
    assert_eq!(code, 0, "{out}");
    let out = out.lines().last().unwrap().to_string();
    assert!(listing.contains("if_gt v0.x, c0.x"), "{listing}");
    assert!(listing.contains("if_le v0.y, c0.y"), "{listing}");
    assert!(listing.contains("texld oC0, v0"), "{listing}");
    let inputs = tmp.path().join("tex.json");
    fs::write(
        &inputs,
        r#"{"constants": {"k": [0.5, 0.4, 2, -1]}, "textures": {"s0": {"width": 2, "height": 2, "texels": [[1,0,0,1],[0,1,0,1],[0,0,1,1],[0.5,0.5,0.5,0.5]], "filter": "point", "address": "wrap"}}}"#,
    )
    .unwrap();
    // Microsoft's oC0 at four texture coordinates, one down each path.
    for (t, o) in [
        ("0.7,0.2,1,1", [0.0, 1.0, 0.0, 1.0]),
        ("0.3,0.2,1,1", [1.15, 0.08, 2.0, 0.0]),
        ("0.3,0.9,1,1", [0.15, 0.36, 2.0, -1.0]),
        ("0.9,0.9,-1,2", [0.5, 0.5, 0.5, 0.5]),
    ] {
        let got = run(
            &out,
            &[
                "--inputs",
                inputs.to_str().unwrap(),
                "--set",
                &format!("TEXCOORD0={t}"),
            ],
            "oC0",
        );
        assert!(close(&got, &o), "{t}: {got:?}");
    }

    // fxc: "error X3528: can't use flow control on this profile" for both.
    let forced = "float4 k;\nfloat4 main(float4 p : TEXCOORD0) : COLOR\n{\n    float4 r = p;\n    [branch] if (p.x > k.x) r *= 2;\n    return r;\n}\n";
    let (code, _, err) = compile("forced", forced, "ps_2_0");
    assert_eq!(code, 2);
    assert!(
        err.contains("forced.hlsl(5,18): error: can't use flow control on this profile"),
        "{err}"
    );
    let (code, _, err) = compile("forced_vs", &forced.replace("COLOR", "POSITION"), "vs_2_0");
    assert_eq!(code, 2);
    assert!(
        err.contains("can't use flow control on this profile"),
        "{err}"
    );
    // fxc: "error X3528: can't force branch with gradients on non-inputs".
    let gradients = "sampler2D s;\nfloat4 k;\nfloat4 main(float4 p : TEXCOORD0) : COLOR\n{\n    float4 r = p;\n    [branch] if (p.x > k.x) r = tex2D(s, p.xy * 2);\n    return r;\n}\n";
    let (code, _, err) = compile("gradients", gradients, "ps_3_0");
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "gradients.hlsl(6,18): error: can't force branch with gradients on non-inputs"
        ),
        "{err}"
    );
    // Left to the compiler, that `if` is flattened, as fxc flattens it.
    let (code, listing, out) = compile("flat", &gradients.replace("[branch] ", ""), "ps_3_0");
    assert_eq!(code, 0, "{out}");
    assert!(!listing.contains("if_"), "{listing}");
}

/// `shaderfs d3d9 compile DIR/NAME.hlsl -T ps_2_0 -o DIR/NAME.pso` of `text`: the exit
/// status, what it said, the shader's path (no file there when refused) and the source's
/// name as messages give it.
fn compile_ps_2_0(dir: &Path, name: &str, text: &str) -> (i32, String, std::path::PathBuf, String) {
    let src = dir.join(format!("{name}.hlsl"));
    fs::write(&src, text).unwrap();
    let out = dir.join(format!("{name}.pso"));
    let _ = fs::remove_file(&out);
    let (code, _, err) = shaderfs(&[
        "d3d9",
        "compile",
        src.to_str().unwrap(),
        "-T",
        "ps_2_0",
        "-o",
        out.to_str().unwrap(),
    ]);
    (code, err, out, src.display().to_string())
}

/// `CompileShader(ps_2_0, f())` (or `compile ps_2_0 f()`) as an item of a global's
/// initializer list: fxc takes it as one component it never writes, so a uniform holding
/// one has no default value in the table (not even its numbers), and a static holds 0
/// there. Refused, as fxc refuses them, at the `CompileShader`: a target it does not
/// know, a function not declared, arguments that are not its uniform parameters, and
/// any of it inside a function. The verdicts are Microsoft's (d3dcompiler_43).
#[test]
fn d3d9_compile_takes_a_compiled_shader_in_a_globals_initializer_list_as_microsofts_compiler() {
    let tmp = tempfile::tempdir().unwrap();
    let compile = |name: &str, text: &str| compile_ps_2_0(tmp.path(), name, text);
    let (code, err, out, _) = compile(
        "objects",
        "float4 fun() { return 0; }\nfloat4 lit(uniform float a) { return a; }\nfloat k;\nfloat2 p = {5, CompileShader(ps_2_0, fun())};\nfloat2 q = {1, 2};\nfloat2x2 m = {compile vs_3_0 lit(k), 2, 3, 4};\nstatic float2 s = {7, CompileShader(ps_3_0, fun())};\nfloat4 main() : COLOR\n{\n    return float4(p + q + m[1], s);\n}\n",
    );
    assert_eq!(code, 0, "{err}");
    let (code, json, err) = shaderfs(&["d3d9", "ctab", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let table: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let defaults: Vec<(String, serde_json::Value)> = table["constants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["default_value"].clone(),
            )
        })
        .collect();
    assert_eq!(
        defaults,
        [
            ("m".to_string(), serde_json::Value::Null),
            ("p".to_string(), serde_json::Value::Null),
            ("q".to_string(), serde_json::json!([[1.0, 2.0, 0.0, 0.0]])),
        ]
    );
    // Run with the table's defaults: q's (1, 2) alone; the static's shader is a zero.
    let (code, json, err) = shaderfs(&["d3d9", "run", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let got = serde_json::from_slice::<serde_json::Value>(&json).unwrap()["outputs"]["oC0"].clone();
    assert_eq!(got, serde_json::json!([1.0, 2.0, 7.0, 0.0]));

    for (name, global, body, place, said) in [
        (
            "target",
            "float2 p = {5, CompileShader(ps_9_9, fun())};",
            "return p.xyxy;",
            "(2,16)",
            "unsupported compiler target 'ps_9_9'",
        ),
        (
            "undeclared",
            "float2 p = {5, CompileShader(ps_2_0, nothere())};",
            "return p.xyxy;",
            "(2,16)",
            "undeclared identifier 'nothere'",
        ),
        (
            "inputs",
            "float4 two(float a) { return a; } float2 p = {5, CompileShader(ps_2_0, two(3))};",
            "return p.xyxy;",
            "(2,50)",
            "'two': no overload has 1 uniform parameter",
        ),
        (
            "local",
            "float2 p = {5, 6};",
            "float2 q = {5, CompileShader(ps_2_0, fun())}; return q.xyxy;",
            "(5,20)",
            "a compiled shader cannot stand inside a function",
        ),
        (
            "value",
            "float p = CompileShader(ps_2_0, fun());",
            "return p;",
            "(2,11)",
            "a compiled shader is an object, not a value",
        ),
    ] {
        let (code, err, _, src) = compile(
            name,
            &format!(
                "float4 fun() {{ return 0; }}\n{global}\nfloat4 main() : COLOR\n{{\n    {body}\n}}\n"
            ),
        );
        assert_eq!(code, 2, "{name}: {err}");
        assert!(
            err.contains(&format!("{src}{place}: error: {said}")),
            "{name}: {err}"
        );
    }
}

/// Integer literals as d3dcompiler_43 reads them, each in the places a source puts one.
/// Without a suffix, a decimal past 2147483647 or a hex or octal past 0xFFFFFFFF is left
/// out by Microsoft's lexer, so the line reads as if it were not there: refused where that
/// does not parse or check (`{X, 1}`, `return X;`), accepted where it does (`X + 1` is
/// `+1`). Ours gives the same verdicts, and names the literal at its place: an error when
/// refused, a warning when accepted. A `u` or `l` suffix keeps the low 32 bits. Every
/// verdict and value here is Microsoft's.
#[test]
fn d3d9_compile_reads_integer_literals_as_microsofts_compiler() {
    let tmp = tempfile::tempdir().unwrap();
    let compile = |text: &str| compile_ps_2_0(tmp.path(), "literal", text);
    // X stands for the literal; the column is where it lands.
    let forms = [
        "float4 main() : COLOR { float2 aa = {X, 1}; return float4(aa, 0, 0); }",
        "float4 main() : COLOR { float2 aa = {1, X}; return float4(aa, 0, 0); }",
        "float4 main() : COLOR { float a = X; return a; }",
        "float4 main() : COLOR { return X; }",
        "float4 main() : COLOR { return float4(X, 1, 0, 0); }",
        "float4 main() : COLOR { float2 aa = {(X), 1}; return float4(aa, 0, 0); }",
        "float4 main() : COLOR { float aa[1] = {X}; return aa[0]; }",
        "static const float g = X; float4 main() : COLOR { return g; }",
        "float4 main() : COLOR { float a = X + 1; return a; }",
    ];
    let fits = [
        "2147483647",
        "3000000000u",
        "3000000000U",
        "3000000000l",
        "3000000000L",
        "3000000000ul",
        "4294967296u",
        "0x7FFFFFFF",
        "0x80000000",
        "0xFFFFFFFF",
        "0x100000000u",
        "037777777777",
    ];
    let left_out = [
        "2147483648",
        "3000000000",
        "4294967295",
        "4294967296",
        "0x100000000",
        "040000000000",
    ];
    for form in forms {
        let col = form.find('X').unwrap() + 1;
        for literal in fits {
            let (code, err, _, _) = compile(&form.replace('X', literal));
            assert_eq!(code, 0, "{literal} in {form}: {err}");
            assert!(
                !err.contains("integer literal"),
                "{literal} in {form}: {err}"
            );
        }
        for literal in left_out {
            let (code, err, _, src) = compile(&form.replace('X', literal));
            let said = format!("integer literal {literal} does not fit in ");
            if form.contains("X + 1") {
                // Microsoft's reads `+ 1`, and so does ours, with a word.
                assert_eq!(code, 0, "{literal} in {form}: {err}");
                assert!(
                    err.contains(&format!("{src}(1,{col}): warning: {said}")),
                    "{literal} in {form}: {err}"
                );
            } else {
                assert_eq!(code, 2, "{literal} in {form}: {err}");
                assert!(
                    err.contains(&format!("{src}(1,{col}): error: {said}")),
                    "{literal} in {form}: {err}"
                );
            }
        }
        // Past 64 bits, with or without a suffix, Microsoft's refuses it everywhere.
        for literal in ["99999999999999999999", "99999999999999999999u"] {
            let (code, err, _, src) = compile(&form.replace('X', literal));
            assert_eq!(code, 2, "{literal} in {form}: {err}");
            assert!(
                err.contains(&format!(
                    "{src}(1,{col}): error: integer literal {literal} does not fit in 64 bits"
                )),
                "{literal} in {form}: {err}"
            );
        }
    }
    // The values: the low 32 bits, signed with `l`, and the literal left out of `X + 1`.
    for (literal, want) in [
        ("3000000000l", -1294967296.0),
        ("0xFFFFFFFFl", -1.0),
        ("4294967296u", 0.0),
        ("0x100000001u", 1.0),
        ("0xFFFFFFFF", 4294967296.0),
        ("3000000000 + 1", 1.0),
        ("0x100000000 - 2", -2.0),
    ] {
        let (code, err, out, _) = compile(&format!(
            "float4 main() : COLOR {{ return float4({literal}, 0, 0, 0); }}"
        ));
        assert_eq!(code, 0, "{literal}: {err}");
        let (code, json, err) = shaderfs(&["d3d9", "run", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        let got =
            serde_json::from_slice::<serde_json::Value>(&json).unwrap()["outputs"]["oC0"].clone();
        assert_eq!(got, serde_json::json!([want, 0.0, 0.0, 0.0]), "{literal}");
    }
}

/// Loops that leave at run time, kept as loops where the profile can leave one
/// (`break_comp`, ps_3_0 and vs_3_0) as fxc keeps them, with the values Microsoft's
/// shaders (d3dcompiler_43, through msd3d) give through `d3d9 run`: a count from an `int`
/// uniform and a `break`; a `while` whose end unrolling cannot see (`rep` 255 times at
/// most, leaving where the condition fails); a `do` loop; `continue` and `break`
/// together. vs_2_0 has no breaks: there such a loop is refused, with fxc's warning.
#[test]
fn d3d9_compile_keeps_loops_that_leave_at_run_time_as_microsofts_compiler() {
    let tmp = tempfile::tempdir().unwrap();
    let compile = |name: &str, text: &str, profile: &str| -> (i32, String, String) {
        let src = tmp.path().join(format!("{name}.hlsl"));
        fs::write(&src, text).unwrap();
        let out = tmp.path().join(format!("{name}.{profile}"));
        let (code, listing, err) = shaderfs(&[
            "d3d9",
            "compile",
            src.to_str().unwrap(),
            "-T",
            profile,
            "-o",
            out.to_str().unwrap(),
            "--listing",
        ]);
        assert!(code != 0 || out.exists());
        (
            code,
            String::from_utf8(listing).unwrap(),
            format!("{err}\n{}", out.display()),
        )
    };
    let run = |out: &str, args: &[&str], reg: &str| -> serde_json::Value {
        let path = out.lines().last().unwrap();
        let mut all = vec!["d3d9", "run", path];
        all.extend_from_slice(args);
        let (code, json, err) = shaderfs(&all);
        assert_eq!(code, 0, "{err}");
        serde_json::from_slice::<serde_json::Value>(&json).unwrap()["outputs"][reg].clone()
    };

    let (code, listing, out) = compile(
        "count",
        "int count;\nfloat4 step;\nfloat limit;\nfloat4 main(float4 p : TEXCOORD0) : COLOR\n{\n    float4 sum = p;\n    for (int i = 0; i < count; i++) {\n        sum += step * i;\n        if (sum.x > limit) break;\n    }\n    return sum;\n}\n",
        "ps_3_0",
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(listing.matches("rep i0").count(), 1, "{listing}");
    assert!(listing.contains("break_gt"), "{listing}");
    for (count, limit, t, want) in [
        (
            "5",
            "3",
            "0.5,0,0,0",
            serde_json::json!([3.5, 6.0, 9.0, 12.0]),
        ),
        (
            "5",
            "100",
            "0.5,0,0,0",
            serde_json::json!([10.5, 20.0, 30.0, 40.0]),
        ),
        (
            "200",
            "1",
            "0.5,1,0,0",
            serde_json::json!([1.0499999523162842, 1.0, 0.0, 0.0]),
        ),
    ] {
        let step = if count == "200" {
            "0.01,0,0,0"
        } else {
            "1,2,3,4"
        };
        let got = run(
            &out,
            &[
                "--set",
                &format!("count={count}"),
                "--set",
                &format!("step={step}"),
                "--set",
                &format!("limit={limit}"),
                "--set",
                &format!("TEXCOORD0={t}"),
            ],
            "oC0",
        );
        assert_eq!(got, want, "count={count} limit={limit}");
    }

    let doubling = "float4 k;\nfloat4 main(float4 p : TEXCOORD0) : COLOR\n{\n    float4 x = p;\n    while (x.x < k.x) x *= 2;\n    return x;\n}\n";
    let vertex = doubling.replace("p : TEXCOORD0) : COLOR", "p : POSITION) : POSITION");
    for (profile, text, input, output) in [
        ("ps_3_0", doubling.to_string(), "TEXCOORD0", "oC0"),
        ("vs_3_0", vertex.clone(), "POSITION", "o0"),
    ] {
        let (code, listing, out) = compile("doubling", &text, profile);
        assert_eq!(code, 0, "{out}");
        assert!(listing.contains("defi i0, 255, 0, 0, 0"), "{listing}");
        assert!(listing.contains("break_ge r0.x, c0.x"), "{listing}");
        for (k, want) in [
            (
                "10",
                serde_json::json!([19.200000762939453, 64.0, 128.0, 192.0]),
            ),
            (
                "-1",
                serde_json::json!([0.30000001192092896, 1.0, 2.0, 3.0]),
            ),
        ] {
            let got = run(
                &out,
                &[
                    "--set",
                    &format!("k={k},0,0,0"),
                    "--set",
                    &format!("{input}=0.3,1,2,3"),
                ],
                output,
            );
            assert_eq!(got, want, "{profile} k={k}");
        }
    }
    let (code, _, err) = compile("doubling", &vertex, "vs_2_0");
    assert_eq!(code, 2);
    assert!(
        err.contains("warning: cannot map loop to shader target"),
        "{err}"
    );
    assert!(err.contains("error: unable to unroll loop"), "{err}");

    let (code, listing, out) = compile(
        "until",
        "float4 k;\nfloat4 main(float4 p : TEXCOORD0) : COLOR\n{\n    float4 x = p;\n    do { x = x * 1.5 + k.y; } while (x.x < k.x);\n    return x;\n}\n",
        "ps_3_0",
    );
    assert_eq!(code, 0, "{out}");
    assert!(listing.contains("rep i0"), "{listing}");
    for (k, want) in [
        (
            "10,0.5,0,0",
            serde_json::json!([13.80781364440918, 21.78125, 33.171875, 44.5625]),
        ),
        (
            "-1,0.5,0,0",
            serde_json::json!([0.9500000476837158, 2.0, 3.5, 5.0]),
        ),
    ] {
        let got = run(
            &out,
            &["--set", &format!("k={k}"), "--set", "TEXCOORD0=0.3,1,2,3"],
            "oC0",
        );
        assert_eq!(got, want, "k={k}");
    }

    let (code, _, out) = compile(
        "skips",
        "int count;\nfloat4 step;\nfloat4 main(float4 p : TEXCOORD0) : COLOR\n{\n    float4 sum = 0;\n    for (int i = 0; i < count; i++) {\n        if (p.y > i) continue;\n        sum += step * i;\n        if (sum.w > p.z) break;\n    }\n    return sum;\n}\n",
        "ps_3_0",
    );
    assert_eq!(code, 0, "{out}");
    for (count, step, t, want) in [
        (
            "6",
            "1,2,3,4",
            "0,2.5,30,0",
            serde_json::json!([12.0, 24.0, 36.0, 48.0]),
        ),
        (
            "6",
            "1,2,3,4",
            "0,2.5,10,0",
            serde_json::json!([3.0, 6.0, 9.0, 12.0]),
        ),
        (
            "10",
            "1,2,3,-4",
            "0,-1,10,0",
            serde_json::json!([45.0, 90.0, 135.0, -180.0]),
        ),
    ] {
        let got = run(
            &out,
            &[
                "--set",
                &format!("count={count}"),
                "--set",
                &format!("step={step}"),
                "--set",
                &format!("TEXCOORD0={t}"),
            ],
            "oC0",
        );
        assert_eq!(got, want, "count={count} t={t}");
    }
}

/// A vertex shader's loop over a uniform array at its counter is `loop aL` reading
/// `c#[aL]`, as fxc writes it, and gives what Microsoft's shaders (d3dcompiler_43, through
/// msd3d) give through `d3d9 run`; the count set by name is what D3DX sets, (n, 0, 1, 0).
#[test]
fn d3d9_compile_loops_over_uniform_arrays_with_al_as_microsofts_compiler() {
    let tmp = tempfile::tempdir().unwrap();
    let arrays = [
        "--set",
        "c0=1,2,3,4",
        "--set",
        "c1=0.5,0.25,2,1",
        "--set",
        "c2=-1,3,0,2",
        "--set",
        "c3=4,4,4,4",
        "--set",
        "c4=0,1,0,1",
        "--set",
        "c5=2,2,-2,2",
        "--set",
        "c6=0.1,0.2,0.3,0.4",
        "--set",
        "c7=9,8,7,6",
        "--set",
        "POSITION=0.5,1,2,3",
    ];
    let compile = |name: &str, text: &str, profile: &str| -> (String, std::path::PathBuf) {
        let src = tmp.path().join(format!("{name}.hlsl"));
        fs::write(&src, text).unwrap();
        let out = tmp.path().join(format!("{name}.{profile}"));
        let (code, listing, err) = shaderfs(&[
            "d3d9",
            "compile",
            src.to_str().unwrap(),
            "-T",
            profile,
            "-o",
            out.to_str().unwrap(),
            "--listing",
        ]);
        assert_eq!(code, 0, "{err}");
        (String::from_utf8(listing).unwrap(), out)
    };
    // As f32, the precision the shader computes in (JSON's text of an f32 may read back
    // one f64 ulp away).
    let run = |out: &Path, more: &[&str], reg: &str| -> Vec<f32> {
        let mut all = vec!["d3d9", "run", out.to_str().unwrap()];
        all.extend_from_slice(&arrays);
        all.extend_from_slice(more);
        let (code, json, err) = shaderfs(&all);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        v["outputs"][reg]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect()
    };
    let sum = "int count;\nfloat4 arr[8];\nfloat4 main(float4 p : POSITION) : POSITION\n{\n    float4 sum = p;\n    for (int i = 0; i < count; i++)\n        sum += arr[i] * p.x;\n    return sum;\n}\n";
    for profile in ["vs_2_0", "vs_3_0"] {
        let (listing, out) = compile("sum", sum, profile);
        assert_eq!(listing.matches("loop aL, i0").count(), 1, "{listing}");
        assert!(listing.contains("c0[aL]"), "{listing}");
        assert!(!listing.contains("mova"), "{listing}");
        let reg = if profile == "vs_2_0" { "oPos" } else { "o0" };
        for (n, want) in [
            ("0", [0.5, 1.0, 2.0, 3.0]),
            ("3", [0.75, 3.625, 4.5, 6.5]),
            ("8", [8.3, 11.225, 9.15, 13.2]),
        ] {
            let count = format!("count={n}");
            assert_eq!(
                run(&out, &["--set", &count], reg),
                want,
                "{profile} count={n}"
            );
        }
    }
    // A known count from 1, registers either side of the counter: `defi` holds the
    // start and step; the one before the first, an offset below 0, goes through a0.
    let (listing, out) = compile(
        "around",
        "float4 arr[8];\nfloat4 main(float4 p : POSITION) : POSITION\n{\n    float4 sum = p;\n    [loop] for (int i = 1; i < 6; i++)\n        sum += arr[i + 1] * p.x + i * arr[i - 1];\n    return sum;\n}\n",
        "vs_3_0",
    );
    assert!(listing.contains("defi i0, 5, 1, 1, 0"), "{listing}");
    assert!(listing.contains("c1[aL]"), "{listing}");
    assert_eq!(run(&out, &[], "o0"), [18.05, 38.6, 26.15, 40.7]);
}

/// What fxc refuses of a function's shape: a value not returned on every path (X3507,
/// at the function's name; a loop may run no times), and a vertex shader that writes no
/// position (X4541).
#[test]
fn d3d9_compile_refuses_paths_without_a_return_and_vertex_shaders_without_a_position() {
    let tmp = tempfile::tempdir().unwrap();
    let compile = |name: &str, text: &str, profile: &str| -> (i32, String) {
        let src = tmp.path().join(format!("{name}.hlsl"));
        fs::write(&src, text).unwrap();
        let (code, _, err) = shaderfs(&["d3d9", "compile", src.to_str().unwrap(), "-T", profile]);
        (code, err)
    };
    for (name, text) in [
        ("half", "float4 f(float x) { if (x > 0) return 1; }\nfloat4 main(float4 p : TEXCOORD0) : COLOR { return f(p.x); }\n"),
        ("looped", "float4 f(float x) { for (int i = 0; i < 3; i++) { if (x > i) return i; } }\nfloat4 main(float4 p : TEXCOORD0) : COLOR { return f(p.x); }\n"),
    ] {
        let (code, err) = compile(name, text, "ps_2_0");
        assert_eq!(code, 2, "{name}");
        assert!(
            err.contains(&format!("{name}.hlsl(1,8): error: 'f': not all control paths return a value")),
            "{err}"
        );
    }
    // Both arms, a switch with a default, or a function nothing calls: accepted.
    for (name, text) in [
        ("arms", "float4 f(float x) { if (x > 0) return 1; else return 2; }\nfloat4 main(float4 p : TEXCOORD0) : COLOR { return f(p.x); }\n"),
        ("cases", "uint4 v;\nfloat4 main() : COLOR { switch (v.x) { case 0: return 3.0; default: return 5.0; } }\n"),
        ("unused", "float4 f(float x) { }\nfloat4 main(float4 p : TEXCOORD0) : COLOR { return 1; }\n"),
    ] {
        let (code, err) = compile(name, text, "ps_2_0");
        assert_eq!(code, 0, "{name}: {err}");
    }
    for profile in ["vs_2_0", "vs_3_0"] {
        let (code, err) = compile(
            "nowhere",
            "float4 main(float4 p : TEXCOORD0, out float4 c : COLOR) : TEXCOORD0 { c = p; return p; }\n",
            profile,
        );
        assert_eq!(code, 2, "{profile}");
        assert!(
            err.contains("nowhere.hlsl(1,8): error: 'main': a vertex shader must write all four components of POSITION"),
            "{err}"
        );
    }
}

/// `d3d9 decompile` prints HLSL with the shader's constants by name; compiled back for
/// the same profile it runs as the original on the same constants and inputs. A
/// shader it cannot express yet is refused with the instruction's place, exit 2.
#[test]
fn d3d9_decompile_prints_hlsl_that_compiles_back_and_runs_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("lit.hlsl");
    fs::write(
        &src,
        "float4 tint : register(c2);\nfloat3 light;\nsampler2D base : register(s0);\n\
         float4 main(float2 uv : TEXCOORD0, float3 n : TEXCOORD1) : COLOR\n{\n    \
         float d = saturate(dot(normalize(n), light));\n    \
         return tex2D(base, uv) * tint * d + float4(0.1, 0.1, 0.1, 0);\n}\n",
    )
    .unwrap();
    let p = |x: &Path| x.to_str().unwrap().to_string();
    // `d3d9 compile SOURCE -T PROFILE -o OUT`: its exit code and standard error.
    let compile = |source: &Path, profile: &str, out: &Path| {
        let (code, _, err) =
            shaderfs(&["d3d9", "compile", &p(source), "-T", profile, "-o", &p(out)]);
        (code, err)
    };
    let original = tmp.path().join("lit.pso");
    let (code, err) = compile(&src, "ps_2_0", &original);
    assert_eq!(code, 0, "{err}");
    let (code, text, err) = shaderfs(&["d3d9", "decompile", &p(&original)]);
    assert_eq!(code, 0, "{err}");
    let text = String::from_utf8(text).unwrap();
    for name in [
        "tint",
        "light",
        "base",
        "register(c2)",
        "TEXCOORD1",
        "void main(",
    ] {
        assert!(text.contains(name), "{name} missing:\n{text}");
    }
    let back_src = tmp.path().join("back.hlsl");
    fs::write(&back_src, &text).unwrap();
    let back = tmp.path().join("back.pso");
    let (code, err) = compile(&back_src, "ps_2_0", &back);
    assert_eq!(code, 0, "{err}\n{text}");
    let run = |shader: &Path| {
        let (code, out, err) = shaderfs(&[
            "d3d9",
            "run",
            &p(shader),
            "--set",
            "tint=0.5,1,0.25,1",
            "--set",
            "light=0,0.6,0.8,0",
            "--set",
            "TEXCOORD0=0.25,0.75,0,0",
            "--set",
            "TEXCOORD1=0,0,2,0",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        v["outputs"].clone()
    };
    let want = run(&original);
    assert_eq!(run(&back), want);
    assert_ne!(want["oC0"], serde_json::json!([0.0, 0.0, 0.0, 0.0]));

    // Bump-environment mapping has no HLSL: its texture stage is an asm block, which
    // `d3d9 compile` takes back.
    let bumped = tmp.path().join("bump.pso");
    let asm = tmp.path().join("bump.asm");
    fs::write(&asm, "ps_1_1\ntex t0\ntexbem t1, t0\nmov r0, t1\n").unwrap();
    let (code, _, err) = shaderfs(&["d3d9", "asm", &p(&asm), "-o", &p(&bumped)]);
    assert_eq!(code, 0, "{err}");
    let text = tmp.path().join("bump.hlsl");
    let (code, _, err) = shaderfs(&["d3d9", "decompile", &p(&bumped), "-o", &p(&text)]);
    assert_eq!(code, 0, "{err}");
    let hlsl = fs::read_to_string(&text).unwrap();
    assert!(hlsl.contains("        texbem t1, t0\n"), "{hlsl}");
    let back = tmp.path().join("bump-back.pso");
    let (code, err) = compile(&text, "ps_1_1", &back);
    assert_eq!(code, 0, "{err}");
    let (_, listing, _) = shaderfs(&["d3d9", "disasm", &p(&back)]);
    let listing = String::from_utf8(listing).unwrap();
    assert!(listing.contains("    texbem t1, t0\n"), "{listing}");

    // Inputs read at aL from a register no dcl declares, which no HLSL compiles to: the
    // text is the instructions in an asm block, saying where and why, and compiles back
    // to them.
    let looped = tmp.path().join("loop.vso");
    fs::write(
        &asm,
        "vs_3_0\ndcl_position v0\ndcl_position o0\nmov r0, c0\nloop aL, i0\nadd r0, r0, v5[aL]\nendloop\nmov o0, r0\n",
    )
    .unwrap();
    let (code, _, err) = shaderfs(&["d3d9", "asm", &p(&asm), "-o", &p(&looped)]);
    assert_eq!(code, 0, "{err}");
    let text = tmp.path().join("loop.hlsl");
    let (code, _, err) = shaderfs(&["d3d9", "decompile", &p(&looped), "-o", &p(&text)]);
    assert_eq!(code, 0, "{err}");
    let hlsl = fs::read_to_string(&text).unwrap();
    assert!(
        hlsl.contains("// written as asm: at byte ")
            && hlsl.contains("'add'")
            && hlsl.contains("from v5, which no dcl declares")
            && hlsl.contains("            add r0, r0, v5[aL]\n"),
        "{hlsl}"
    );
    let back = tmp.path().join("loop-back.vso");
    let (code, err) = compile(&text, "vs_3_0", &back);
    assert_eq!(code, 0, "{err}");
    let listing = |f: &Path| {
        let (_, out, _) = shaderfs(&["d3d9", "disasm", &p(f)]);
        let out = String::from_utf8(out).unwrap();
        out.lines()
            .filter(|l| !l.is_empty() && !l.starts_with("//"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(listing(&back), listing(&looped));
}
