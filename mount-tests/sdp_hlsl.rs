//! HLSL saved into a `.sdp` package through a real mount: `hlsl/NAME.hlsl` compiled over
//! the shader it names, kept in it, and read back after a remount; a source that does not
//! compile is refused at `close()` with its lines and columns, and the package stays as
//! it was. The shaders are built here (compiled and assembled), but for a package of the
//! corpus's shaders, whose `hlsl/` views show them decompiled.

use std::fs;
use std::path::Path;

use shaderfs::archive::sdp::write::{self, NameField};
use shaderfs::shader::d3d9::asm;
use shaderfs::shader::d3d9::ctab::ConstantTable;
use shaderfs::shader::d3d9::decompile::decompile;
use shaderfs::shader::d3d9::kept_source;
use shaderfs::shader::hlsl::compile::{compile, Options};

use crate::support::{
    can_mount, halved, identity, package_record, package_setup, run, sh, shaderfs, Mount,
};

/// The shader the package starts with: `Tint` at `c5`, where the game sets it.
const OLD: &str = "float4 Tint : register(c5);\nfloat4 main() : COLOR { return Tint; }\n";

/// What the modder saves: a new constant, and `Tint` left for the compiler to place.
const NEW: &str = "// night sky\r\nfloat4 Glow;\nfloat4 Tint;\n\nfloat4 main(float2 uv : TEXCOORD0) : COLOR\n{\n    return Tint * Glow + uv.xyxy; // brighter\n}\n";

fn ps_2_0(text: &str) -> Vec<u8> {
    let options = Options {
        profile: "ps_2_0".into(),
        ..Options::default()
    };
    compile("old.hlsl", text, None, &options)
        .map_err(|f| f.render())
        .unwrap()
        .bytecode
}

fn write_package(path: &Path) {
    let vs = asm::assemble("vs_1_1\ndcl_position v0\nmov oPos, v0\n").unwrap();
    let records = [
        (NameField::new("SKY.pso").unwrap(), ps_2_0(OLD)),
        (NameField::new("OLD.vso").unwrap(), vs),
    ];
    let bytes = write::serialise(100, records.iter().map(|(n, d)| (n, d.as_slice()))).unwrap();
    fs::write(path, bytes).unwrap();
}

fn register_of(code: &[u8], name: &str) -> (String, u16) {
    let table = ConstantTable::from_bytecode(code).unwrap().unwrap();
    let c = table
        .constants
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no {name} in the table"));
    (c.register_set.name().unwrap().to_string(), c.register_index)
}

#[test]
fn hlsl_saved_into_a_package_compiles_keeps_its_registers_and_reads_back() {
    if !can_mount() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let package = tmp.path().join("shaderpackage010.sdp");
    write_package(&package);
    let mnt = tmp.path().join("mnt");
    let m = Mount::new(&package, &mnt, &[]);
    let view = m.path("hlsl/SKY.pso.hlsl");
    // No source kept yet: the view shows the shader decompiled.
    assert_eq!(
        fs::read(&view).unwrap(),
        decompile(&package_record(&package, "SKY.pso"))
            .unwrap()
            .into_bytes()
    );
    assert_eq!(
        register_of(&package_record(&package, "SKY.pso"), "Tint").1,
        5
    );

    // A new file of the shader's name: compiled for ps_2_0, stored as the shader.
    let src = tmp.path().join("sky.hlsl");
    fs::write(&src, NEW).unwrap();
    let (code, _, err) = sh(&format!("cp {} {}", src.display(), view.display()));
    assert_eq!(code, 0, "{err}");
    let stored = package_record(&package, "SKY.pso");
    assert_eq!(fs::read(m.path("shaders/SKY.pso")).unwrap(), stored);
    assert_eq!(
        register_of(&stored, "Tint"),
        ("FLOAT4".into(), 5),
        "Tint stays at c5"
    );
    assert_ne!(register_of(&stored, "Glow").1, 5);
    assert_eq!(kept_source::find(&stored).unwrap().unwrap().text, NEW);
    // stat and read agree, and give back what was written, byte for byte.
    assert_eq!(fs::metadata(&view).unwrap().len(), NEW.len() as u64);
    assert_eq!(fs::read(&view).unwrap(), NEW.as_bytes());
    let (_, listing, _) = sh(&format!("ls {}", m.path("hlsl").display()));
    assert_eq!(listing, "OLD.vso.hlsl\nSKY.pso.hlsl\n");
    // asm/ and ctab/ show the new shader; asm/ without the source.
    let text = fs::read_to_string(m.path("asm/SKY.pso.asm")).unwrap();
    assert!(text.contains("//   Tint         c5       1"), "{text}");
    assert!(text.contains("    dcl t0"), "{text}");
    assert!(
        !text.contains("comment-block") && !text.contains("brighter"),
        "{text}"
    );
    let json = fs::read_to_string(m.path("ctab/SKY.pso.json")).unwrap();
    assert!(json.contains("\"name\": \"Glow\""), "{json}");

    // An editor's save (a temporary renamed over the view) compiles too.
    let (code, _, err) = sh(&format!(
        "sed -i 's/brighter/brightest/' {}",
        view.display()
    ));
    assert_eq!(code, 0, "{err}");
    let edited = NEW.replace("brighter", "brightest");
    assert_eq!(fs::read(&view).unwrap(), edited.as_bytes());
    assert_eq!(
        kept_source::find(&package_record(&package, "SKY.pso"))
            .unwrap()
            .unwrap()
            .text,
        edited
    );

    // The same text saved again is no change: the package keeps its bytes.
    let before = fs::read(&package).unwrap();
    fs::write(&src, &edited).unwrap();
    let (code, _, err) = sh(&format!("cp {} {}", src.display(), view.display()));
    assert_eq!(code, 0, "{err}");
    assert_eq!(fs::read(&package).unwrap(), before);

    // A source with mistakes fails the close, says where, and changes nothing.
    let broken = "float4 Tint;\nfloat4 main() : COLOR\n{\n    return Tint * ;\n}\n";
    fs::write(&src, broken).unwrap();
    let (code, _, err) = sh(&format!("cp {} {}", src.display(), view.display()));
    assert_ne!(code, 0, "a broken source was saved");
    assert!(err.contains("Invalid argument"), "{err}");
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    assert!(log.contains("hlsl/SKY.pso.hlsl(4,19): error: "), "{log}");
    assert_eq!(fs::read(&package).unwrap(), before);
    // A vs_1_1 shader takes HLSL too: compiled as the legacy compiler compiles it.
    // (cp, not a shell's redirection: shells do not report the close of one.)
    fs::write(&src, "float4 main() : POSITION { return 0; }\n").unwrap();
    let (code, _, err) = sh(&format!(
        "cp {} {}",
        src.display(),
        m.path("hlsl/OLD.vso.hlsl").display()
    ));
    assert_eq!(code, 0, "{err}");
    let listing = fs::read_to_string(m.path("asm/OLD.vso.asm")).unwrap();
    assert!(listing.contains("vs_1_1"), "{listing}");
    assert_eq!(
        fs::read_to_string(m.path("hlsl/OLD.vso.hlsl")).unwrap(),
        "float4 main() : POSITION { return 0; }\n"
    );
    m.unmount();

    // Another mount, and `shaderfs cat`, read the source as it was saved.
    let m = Mount::new(&package, &mnt, &["-o", "ro"]);
    assert_eq!(
        fs::read(m.path("hlsl/SKY.pso.hlsl")).unwrap(),
        edited.as_bytes()
    );
    m.unmount();
    let out = run(shaderfs().arg("cat").arg(&package).arg("hlsl/SKY.pso.hlsl"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, edited.as_bytes());
    let out = run(shaderfs().arg("check").arg(&package));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A source that compiles with warnings is saved (`cp` succeeds), and its warnings, every
/// one as `hlsl/NAME.hlsl(LINE,COL): warning: …`, are in `.shaderfs/errors` as one entry
/// of the save, where a refusal's errors would be: nothing else tells the user of them.
/// The file is a log: a later save without warnings adds nothing, and takes nothing back.
#[test]
fn hlsl_saved_with_warnings_is_saved_and_its_warnings_are_in_the_errors_file() {
    if !can_mount() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let package = tmp.path().join("shaderpackage011.sdp");
    write_package(&package);
    let mnt = tmp.path().join("mnt");
    let m = Mount::new(&package, &mnt, &[]);
    let view = m.path("hlsl/SKY.pso.hlsl");
    let errors = m.path(".shaderfs/errors");
    assert_eq!(fs::read_to_string(&errors).unwrap(), "");

    let warned = "float4 Tint;\n#pragma frobnicate\nfloat4 main(float4 uv : TEXCOORD0) : COLOR\n{\n    float2 two = uv;\n    return Tint * two.x;\n}\n";
    let src = tmp.path().join("sky.hlsl");
    fs::write(&src, warned).unwrap();
    let (code, _, err) = sh(&format!("cp {} {}", src.display(), view.display()));
    assert_eq!(code, 0, "{err}");
    let stored = package_record(&package, "SKY.pso");
    assert_eq!(kept_source::find(&stored).unwrap().unwrap().text, warned);
    let log = fs::read_to_string(&errors).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(
        lines[0].ends_with(
            " hlsl/SKY.pso.hlsl: saved, with warnings: hlsl/SKY.pso.hlsl(2,9): warning: unknown pragma 'frobnicate' ignored"
        ),
        "{log}"
    );
    assert_eq!(
        lines[1], "    hlsl/SKY.pso.hlsl(5,18): warning: implicit truncation of vector type",
        "{log}"
    );

    // Fixed and saved again: saved, and the log has nothing new.
    let clean = warned
        .replace("#pragma frobnicate\n", "")
        .replace("float2 two = uv;", "float2 two = uv.xy;");
    fs::write(&src, &clean).unwrap();
    let (code, _, err) = sh(&format!("cp {} {}", src.display(), view.display()));
    assert_eq!(code, 0, "{err}");
    assert_eq!(fs::read_to_string(&view).unwrap(), clean);
    assert_eq!(fs::read_to_string(&errors).unwrap(), log);
    m.unmount();
}

/// Whether `text` holds `word` as grep -w finds it: not inside a longer name.
fn has_word(text: &str, word: &str) -> bool {
    let name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word)
        .any(|(at, _)| !text[..at].ends_with(name) && !text[at + word.len()..].starts_with(name))
}

/// `shaderfs d3d9 run SHADER --set c0=…`: the colour a constant-colour pixel shader writes.
fn colour_of(shader: &Path, c0: &str) -> serde_json::Value {
    let out = run(shaderfs()
        .args(["d3d9", "run"])
        .arg(shader)
        .args(["--set", &format!("c0={c0}")]));
    assert!(
        out.status.success(),
        "d3d9 run {}: {}",
        shader.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["outputs"]["oC0"].clone()
}

/// A package of the corpus's compiled shaders, none keeping a source: `hlsl/` lists one
/// file per shader, each the shader decompiled (`shaderfs d3d9 decompile` of its
/// `shaders/` file), stat and read agreeing; `grep -r` finds a constant there; each saved
/// back unchanged is no commit; an edit compiles over the shader, keeps its registers,
/// runs as edited and reads back after a remount; a broken edit is refused with its line.
#[test]
fn every_shader_of_a_package_shows_as_hlsl_decompiled() {
    let Some(s) = package_setup("shaderpackage012.sdp") else {
        return;
    };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let hlsl = m.path("hlsl");
    let (code, listing, err) = sh(&format!("ls {}", hlsl.display()));
    assert_eq!(code, 0, "{err}");
    let mut want: Vec<String> = s
        .shaders
        .iter()
        .map(|x| format!("{}.hlsl", x.name))
        .collect();
    want.sort();
    assert_eq!(listing.lines().collect::<Vec<_>>(), want);

    let mut shown = std::collections::BTreeMap::new();
    for shader in &s.shaders {
        let view = hlsl.join(format!("{}.hlsl", shader.name));
        let out = run(shaderfs()
            .args(["d3d9", "decompile"])
            .arg(m.path(&format!("shaders/{}", shader.name))));
        assert!(
            out.status.success(),
            "{}: {}",
            shader.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let text = fs::read(&view).unwrap();
        assert_eq!(text, out.stdout, "{}", shader.name);
        assert_eq!(text, decompile(&shader.bytes).unwrap().into_bytes());
        assert_eq!(fs::metadata(&view).unwrap().len(), text.len() as u64);
        shown.insert(shader.name.clone(), String::from_utf8(text).unwrap());
    }

    // grep -r finds a constant of a shader's table in the HLSL of the shaders that use it.
    let wvp = s
        .shaders
        .iter()
        .find(|x| x.name.starts_with("H01_VS_WVP"))
        .unwrap();
    let table = ConstantTable::from_bytecode(&wvp.bytes).unwrap().unwrap();
    let constant = &table.constants.last().unwrap().name;
    let (code, found, err) = sh(&format!(
        "cd {} && grep -rlw {constant} . | sort",
        hlsl.display()
    ));
    assert_eq!(code, 0, "{err}");
    let mut want: Vec<String> = shown
        .iter()
        .filter(|(_, text)| has_word(text, constant))
        .map(|(name, _)| format!("./{name}.hlsl"))
        .collect();
    want.sort();
    assert!(want.contains(&format!("./{}.hlsl", wvp.name)), "{want:?}");
    assert_eq!(found.lines().collect::<Vec<_>>(), want);

    // Each view saved back as it reads: no commit, the package byte-identical.
    let before = fs::read(&s.package).unwrap();
    let unsaved = identity(&s.package);
    let copy = s.mnt.with_file_name("copy.hlsl");
    for shader in &s.shaders {
        let view = hlsl.join(format!("{}.hlsl", shader.name));
        let (code, _, err) = sh(&format!(
            "cat {v} > {c} && cp {c} {v}",
            v = view.display(),
            c = copy.display()
        ));
        assert_eq!(code, 0, "{}: {err}", shader.name);
    }
    assert_eq!(fs::read(&s.package).unwrap(), before);
    assert_eq!(identity(&s.package), unsaved, "nothing was committed");
    assert_eq!(fs::read_to_string(m.path(".shaderfs/errors")).unwrap(), "");

    // An edit: the colour halved. Compiled for ps_2_0 over the shader, `color` kept at
    // c0 where the game sets it, the source kept; it runs halved.
    let name = "H14_PS_CONST_COLOR_PS_2_0.pso";
    let view = hlsl.join(format!("{name}.hlsl"));
    let original = package_record(&s.package, name);
    let edited = halved(&shown[name]);
    fs::write(&copy, &edited).unwrap();
    let (code, _, err) = sh(&format!("cp {} {}", copy.display(), view.display()));
    assert_eq!(code, 0, "{err}\n{edited}");
    assert_eq!(fs::read_to_string(&view).unwrap(), edited);
    let stored = package_record(&s.package, name);
    assert_ne!(stored, original);
    assert_eq!(
        fs::read(m.path(&format!("shaders/{name}"))).unwrap(),
        stored
    );
    assert_eq!(kept_source::find(&stored).unwrap().unwrap().text, edited);
    assert_eq!(register_of(&stored, "color"), ("FLOAT4".into(), 0));
    let was = s.mnt.with_file_name("was.pso");
    fs::write(&was, &original).unwrap();
    let colour = "0.5,1,0.25,1";
    assert_eq!(
        colour_of(&was, colour),
        serde_json::json!([0.5, 1.0, 0.25, 1.0])
    );
    assert_eq!(
        colour_of(&m.path(&format!("shaders/{name}")), colour),
        serde_json::json!([0.25, 0.5, 0.125, 0.5])
    );
    // The other shaders are as they were.
    for shader in s.shaders.iter().filter(|x| x.name != name) {
        assert_eq!(package_record(&s.package, &shader.name), shader.bytes);
    }

    // A broken edit is refused at close() with the compiler's place; nothing changes.
    let saved = fs::read(&s.package).unwrap();
    let broken = format!("{edited}float4 x = ;\n");
    fs::write(&copy, &broken).unwrap();
    let (code, _, err) = sh(&format!("cp {} {}", copy.display(), view.display()));
    assert_ne!(code, 0, "a broken source was saved");
    assert!(err.contains("Invalid argument"), "{err}");
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    let line = broken.lines().count();
    assert!(
        log.contains(&format!("hlsl/{name}.hlsl({line},")) && log.contains(": error: "),
        "{log}"
    );
    assert_eq!(fs::read(&s.package).unwrap(), saved);
    assert_eq!(fs::read_to_string(&view).unwrap(), edited);
    m.unmount();

    // Another mount reads the edit back, and the rest decompiled as before.
    let m = Mount::new(&s.package, &s.mnt, &["-o", "ro"]);
    assert_eq!(
        fs::read_to_string(m.path(&format!("hlsl/{name}.hlsl"))).unwrap(),
        edited
    );
    let other = &s.shaders[0];
    assert_eq!(
        fs::read_to_string(m.path(&format!("hlsl/{}.hlsl", other.name))).unwrap(),
        shown[&other.name]
    );
    m.unmount();
    let out = run(shaderfs().arg("check").arg(&s.package));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains(": ok ("), "{said}");
}

/// A package of bump-mapping shaders (`texbem`/`texbeml` in ps_1_1, `bem` in ps_1_4): each
/// `hlsl/` view reads as `shaderfs d3d9 decompile` prints it, the texture stage an
/// `asm { }` block with the first comment saying why; saved back unchanged it is no
/// commit; an edit of the arithmetic compiles over the shader with the block's
/// instructions as they were, keeps its source, and reads back after a remount.
#[test]
fn a_bump_mapping_shader_shows_its_texture_stage_as_asm_and_saves_an_edit() {
    if !can_mount() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let package = tmp.path().join("shaderpackage007.sdp");
    let water =
        asm::assemble("ps_1_1\ntex t0\ntexbem t1, t0\ntexbeml t2, t0\nmul r0, t1, t2\n").unwrap();
    let glass = asm::assemble(
        "ps_1_4\ntexld r0, t0\ntexcrd r1.rgb, t1\nbem r2.rg, r1, r0\nphase\ntexld r2, r2\nmov r0, r2\n",
    )
    .unwrap();
    let records = [
        (NameField::new("WATER.pso").unwrap(), water.clone()),
        (NameField::new("GLASS.pso").unwrap(), glass.clone()),
    ];
    let bytes = write::serialise(100, records.iter().map(|(n, d)| (n, d.as_slice()))).unwrap();
    fs::write(&package, bytes).unwrap();
    let mnt = tmp.path().join("mnt");
    let m = Mount::new(&package, &mnt, &[]);

    for (name, code, block) in [
        (
            "WATER.pso",
            &water,
            "texbem t1, t0\n        texbeml t2, t0\n",
        ),
        ("GLASS.pso", &glass, "bem r2.xy, r1, r0\n        phase\n"),
    ] {
        let view = m.path(&format!("hlsl/{name}.hlsl"));
        let text = fs::read_to_string(&view).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(text, decompile(code).unwrap(), "{name}");
        assert_eq!(fs::metadata(&view).unwrap().len(), text.len() as u64);
        assert!(text.contains(block), "{name}:\n{text}");
        assert!(
            text.lines()
                .nth(1)
                .is_some_and(|l| l.contains("bump mapping")),
            "{name}:\n{text}"
        );
    }

    // Saved back as they read: no commit.
    let before = fs::read(&package).unwrap();
    let unsaved = identity(&package);
    let copy = tmp.path().join("copy.hlsl");
    for name in ["WATER.pso", "GLASS.pso"] {
        let (code, _, err) = sh(&format!(
            "cat {v} > {c} && cp {c} {v}",
            v = m.path(&format!("hlsl/{name}.hlsl")).display(),
            c = copy.display()
        ));
        assert_eq!(code, 0, "{name}: {err}");
    }
    assert_eq!(fs::read(&package).unwrap(), before);
    assert_eq!(identity(&package), unsaved, "nothing was committed");

    // The water's colour halved: compiled over it, the texture stage as it was.
    let view = m.path("hlsl/WATER.pso.hlsl");
    let edited = halved(&fs::read_to_string(&view).unwrap());
    fs::write(&copy, &edited).unwrap();
    let (code, _, err) = sh(&format!("cp {} {}", copy.display(), view.display()));
    assert_eq!(code, 0, "{err}\n{edited}");
    let stored = package_record(&package, "WATER.pso");
    assert_ne!(stored, water);
    let listing = shaderfs::shader::d3d9::disasm::disassemble(&stored).unwrap();
    let code: Vec<&str> = listing
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with("def "))
        .collect();
    assert_eq!(
        &code[..4],
        ["ps_1_1", "tex t0", "texbem t1, t0", "texbeml t2, t0"],
        "{listing}"
    );
    assert!(code[4..].iter().all(|l| !l.starts_with("tex")), "{listing}");
    assert_eq!(kept_source::find(&stored).unwrap().unwrap().text, edited);
    assert_eq!(package_record(&package, "GLASS.pso"), glass);
    m.unmount();

    let m = Mount::new(&package, &mnt, &["-o", "ro"]);
    assert_eq!(
        fs::read_to_string(m.path("hlsl/WATER.pso.hlsl")).unwrap(),
        edited
    );
    m.unmount();
}
