//! The decoded views of a `.sdp` package through a real mount: `ctab/` against an
//! independent decoding, and `asm/` and `ctab/` saved the ways editors and scripts save.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use shaderfs::archive::sdp::read;
use shaderfs::shader::d3d9::bytecode;
use shaderfs::shader::d3d9::ctab::ConstantTable;

use crate::support::{package_record, package_setup, run, sh, shaderfs, Mount, PackageSetup};

fn setup() -> Option<PackageSetup> {
    package_setup("shaderpackage007.sdp")
}

/// The constants a `.ctab.txt` of the corpus lists: (name, set, index, count, class, type,
/// rows, columns, elements), top level only.
fn listed_constants(txt: &str) -> Vec<[String; 9]> {
    let lines: Vec<&str> = txt.lines().collect();
    let field = |line: &str, key: &str| -> String {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("{key} missing in {line}"))
            .to_string()
    };
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if line.starts_with("  [") && t.starts_with('[') {
            let name = t.split_whitespace().nth(1).unwrap().to_string();
            let ty = lines[i + 1];
            out.push([
                name,
                field(t, "RegisterSet"),
                field(t, "RegisterIndex"),
                field(t, "RegisterCount"),
                field(ty, "Class"),
                field(ty, "Type"),
                field(ty, "Rows"),
                field(ty, "Columns"),
                field(ty, "Elements"),
            ]);
        }
    }
    out
}

#[test]
fn ctab_views_agree_with_the_independent_decoding() {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, &["-o", "ro"]);
    for shader in &s.shaders {
        let txt = fs::read_to_string(shader.source.with_extension("ctab.txt")).unwrap();
        let json: Value = serde_json::from_slice(
            &fs::read(m.path(&format!("ctab/{}.json", shader.name))).unwrap(),
        )
        .unwrap();
        let creator = txt
            .split("Creator='")
            .nth(1)
            .unwrap()
            .split('\'')
            .next()
            .unwrap();
        assert_eq!(json["creator"], creator, "{}", shader.name);
        let got: Vec<[String; 9]> = json["constants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let s = |k: &str| match &c[k] {
                    Value::String(s) => s.clone(),
                    v => v.to_string(),
                };
                [
                    s("name"),
                    s("register_set"),
                    s("register_index"),
                    s("register_count"),
                    s("class"),
                    s("type"),
                    s("rows"),
                    s("columns"),
                    s("elements"),
                ]
            })
            .collect();
        assert_eq!(got, listed_constants(&txt), "{}", shader.name);
    }
    // grep -r finds a constant across the package, as a modder would look for one.
    let (code, out, _) = sh(&format!(
        "grep -rl '\"name\": \"wvp\"' {}",
        m.path("ctab").display()
    ));
    assert_eq!(code, 0);
    let mut want: Vec<String> = s
        .shaders
        .iter()
        .filter(|x| {
            fs::read_to_string(x.source.with_extension("ctab.txt"))
                .unwrap()
                .contains("] wvp ")
        })
        .map(|x| {
            m.path(&format!("ctab/{}.json", x.name))
                .display()
                .to_string()
        })
        .collect();
    want.sort();
    let mut got: Vec<&str> = out.lines().collect();
    got.sort();
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

/// A vs_2_0 shader of the corpus with a CTAB, its asm path and its record name.
fn target(s: &PackageSetup, m: &Mount) -> (String, PathBuf) {
    let shader = s
        .shaders
        .iter()
        .find(|x| x.name.starts_with("H01_VS_WVP_VS_2_0"))
        .unwrap();
    (
        shader.name.clone(),
        m.path(&format!("asm/{}.asm", shader.name)),
    )
}

#[test]
fn asm_saved_by_sed_vim_cp_redirection_truncate_rename_patch_and_perl() {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let (name, asm) = target(&s, &m);
    let original_text = fs::read_to_string(&asm).unwrap();
    let original_table = ConstantTable::from_bytecode(&package_record(&s.package, &name)).unwrap();
    assert!(original_table.is_some());
    assert!(original_text.contains("    vs_2_0\n"));
    assert!(
        original_text.contains("//   wvp          c8       4\n"),
        "{original_text}"
    );
    assert!(original_text.lines().any(|l| l.starts_with("    def c1,")));

    // Each way of saving puts a different value into `def c1`, then the package holds it.
    let cases: Vec<(&str, String)> = vec![
        ("sed -i", format!("sed -i 's/^    def c1, .*/    def c1, 11, 0, 0, 0/' {}", asm.display())),
        // vim -es says nothing of an error but its exit code: its messages go to a log.
        ("vim -es", format!("vim -es -V1/tmp/shaderfs-vim-es.log -c '%s/^    def c1, .*/    def c1, 12, 0, 0, 0/' -c wq {} || {{ cat /tmp/shaderfs-vim-es.log >&2; exit 1; }}", asm.display())),
        ("vim :w", format!("vim -N -u NONE -c '%s/^    def c1, .*/    def c1, 13, 0, 0, 0/' -c 'w' -c 'q' {} </dev/null >/dev/null 2>&1", asm.display())),
        ("cp", format!("sed 's/^    def c1, .*/    def c1, 14, 0, 0, 0/' {a} > /tmp/shaderfs-cp.asm && cp /tmp/shaderfs-cp.asm {a}", a = asm.display())),
        ("redirection", format!("t=$(sed 's/^    def c1, .*/    def c1, 15, 0, 0, 0/' {a}); printf '%s\\n' \"$t\" > {a}", a = asm.display())),
        ("truncate and append", format!("t=$(sed 's/^    def c1, .*/    def c1, 16, 0, 0, 0/' {a}); truncate -s 0 {a} && printf '%s\\n' \"$t\" >> {a}", a = asm.display())),
        ("atomic save", format!("sed 's/^    def c1, .*/    def c1, 17, 0, 0, 0/' {a} > {d}/.edit.tmp && mv {d}/.edit.tmp {a}", a = asm.display(), d = asm.parent().unwrap().display())),
        ("rename aside", format!("mv {a} {a}~ && sed 's/^    def c1, .*/    def c1, 18, 0, 0, 0/' {a}~ > {a} && rm {a}~", a = asm.display())),
        ("patch", format!("sed 's/^    def c1, .*/    def c1, 19, 0, 0, 0/' {a} > /tmp/shaderfs-patch.asm; diff -u {a} /tmp/shaderfs-patch.asm > /tmp/shaderfs.patch; patch {a} < /tmp/shaderfs.patch", a = asm.display())),
        // perl warns and exits 0 when it cannot make its temporary: the content tells.
        ("perl -pi", format!("perl -pi -e 's/^    def c1, .*/    def c1, 20, 0, 0, 0/' {}", asm.display())),
    ];
    for (i, (how, script)) in cases.iter().enumerate() {
        let (code, _, err) = sh(script);
        assert_eq!(code, 0, "{how}: {err}");
        let value = 11 + i;
        let text = fs::read_to_string(&asm).unwrap();
        assert!(
            text.contains(&format!("    def c1, {value}, 0, 0, 0\n")),
            "{how}: mount shows\n{text}"
        );
        let code = package_record(&s.package, &name);
        let again = shaderfs::shader::d3d9::disasm::disassemble(&code).unwrap();
        assert!(
            again.contains(&format!("def c1, {value}, 0, 0, 0")),
            "{how}: package holds\n{again}"
        );
        assert_eq!(
            ConstantTable::from_bytecode(&code).unwrap(),
            original_table,
            "{how}: CTAB kept"
        );
    }
    // No editor left anything behind, and nothing of theirs entered the package.
    let (_, listing, _) = sh(&format!("ls -A {}", asm.parent().unwrap().display()));
    assert_eq!(listing.lines().count(), s.shaders.len(), "{listing}");
    assert_eq!(
        read::index(&fs::read(&s.package).unwrap())
            .unwrap()
            .records
            .len(),
        s.shaders.len()
    );
}

/// What a modder writes above the version line of an `asm/` view (a note at the top of the
/// file, another right above `vs_2_0`) is still there after the save, a remount and an
/// unchanged save, and the package checks clean.
#[test]
fn asm_comments_above_the_version_line_survive_save_and_remount() {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let (name, asm) = target(&s, &m);
    let original_text = fs::read_to_string(&asm).unwrap();
    let original_code = package_record(&s.package, &name);
    assert!(original_text.contains("\n    vs_2_0\n"), "{original_text}");

    let (code, _, err) = sh(&format!(
        "sed -i -e '1i ; night level: fog off' -e 's|^    vs_2_0$|// was c8, now c12\\n    vs_2_0|' {}",
        asm.display()
    ));
    assert_eq!(code, 0, "{err}");
    let shown = fs::read_to_string(&asm).unwrap();
    assert!(shown.starts_with("; night level: fog off\n"), "{shown}");
    assert!(
        shown.contains("\n// was c8, now c12\n    vs_2_0\n"),
        "{shown}"
    );
    // Nothing else of the listing moved.
    let without =
        shown
            .replacen("; night level: fog off\n", "", 1)
            .replacen("// was c8, now c12\n", "", 1);
    assert_eq!(without, original_text);

    // The package holds the shader as it was, with the two comments and the same table.
    let stored = package_record(&s.package, &name);
    let mut shader = bytecode::parse(&stored).unwrap();
    let comments: Vec<String> = shader
        .comments()
        .filter_map(|c| c.user_comment())
        .map(|c| c.text)
        .collect();
    assert_eq!(comments, ["; night level: fog off", "// was c8, now c12"]);
    shader
        .items
        .retain(|i| !matches!(i, bytecode::Item::Comment(c) if c.user_comment().is_some()));
    assert_eq!(shader.encode(), original_code);
    assert_eq!(
        ConstantTable::from_bytecode(&stored).unwrap(),
        ConstantTable::from_bytecode(&original_code).unwrap()
    );

    // Saved again unchanged: the same bytes.
    let (code, _, err) = sh(&format!(
        "sed -i 's/^    vs_2_0$/    vs_2_0/' {}",
        asm.display()
    ));
    assert_eq!(code, 0, "{err}");
    assert_eq!(package_record(&s.package, &name), stored);
    m.unmount();

    let m = Mount::new(&s.package, &s.mnt, &["-o", "ro"]);
    assert_eq!(
        fs::read_to_string(m.path(&format!("asm/{name}.asm"))).unwrap(),
        shown
    );
    m.unmount();
    let out = run(shaderfs().arg("check").arg(&s.package));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains(": ok ("), "{said}");
}

#[test]
fn asm_without_a_ctab_keeps_the_shaders_table_and_errors_refuse_the_save() {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let (name, asm) = target(&s, &m);
    let before = fs::read(&s.package).unwrap();
    let table = ConstantTable::from_bytecode(&package_record(&s.package, &name)).unwrap();

    // Text as a person writes it: no header, no data comments, dotted version, `;` comments.
    let text =
        "vs.2.0 ; hand written\ndcl_position v0\nm4x4 oPos, v0, c8 // transform\nmov oD0, c12\n";
    let file = Path::new("/tmp/shaderfs-hand.asm");
    fs::write(file, text).unwrap();
    let (code, _, err) = sh(&format!("cp {} {}", file.display(), asm.display()));
    assert_eq!(code, 0, "{err}");
    let stored = package_record(&s.package, &name);
    assert_eq!(
        ConstantTable::from_bytecode(&stored).unwrap(),
        table,
        "the CTAB travels"
    );
    // The comments written come back where they were.
    let shown = fs::read_to_string(&asm).unwrap();
    assert!(
        shown.contains("    m4x4 oPos, v0, c8 // transform\n"),
        "{shown}"
    );
    assert!(shown.contains("    vs_2_0 ; hand written\n"), "{shown}");

    // Mistakes are refused with the place and the reason; nothing changes.
    let before_bad = fs::read(&s.package).unwrap();
    for (bad, reason) in [
        ("vs_2_0\nmov r0, v99\n", "2:"),
        ("vs_2_0\nfrobnicate r0, v0\n", "unknown instruction"),
        ("ps_2_0\nmov oC0, c0\n", "must hold a vertex"),
        ("vs_2_0\nmov r40, v0\n", "r40"),
    ] {
        fs::write(file, bad).unwrap();
        let (code, _, err) = sh(&format!("cp {} {}", file.display(), asm.display()));
        assert_ne!(code, 0, "{bad}");
        assert!(err.contains("Invalid argument"), "{err}");
        let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
        let last = log.lines().last().unwrap();
        assert!(last.contains(&format!("asm/{name}.asm")), "{last}");
        assert!(last.contains(reason), "{bad}: {last}");
    }
    assert_eq!(fs::read(&s.package).unwrap(), before_bad);
    assert_ne!(before, before_bad);
}

#[test]
fn ctab_json_edits_reencode_the_table() {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let (name, _) = target(&s, &m);
    let json_path = m.path(&format!("ctab/{name}.json"));
    let original = fs::read(&json_path).unwrap();
    let code_before = package_record(&s.package, &name);

    // Saving it unchanged leaves the shader byte-identical.
    let (code, _, err) = sh(&format!(
        "cat {p} > /tmp/shaderfs-ctab.json && cp /tmp/shaderfs-ctab.json {p}",
        p = json_path.display()
    ));
    assert_eq!(code, 0, "{err}");
    assert_eq!(package_record(&s.package, &name), code_before);

    let mut json: Value = serde_json::from_slice(&original).unwrap();
    // Rename a constant, move one, give one a default, add one.
    json["constants"][0]["name"] = "Tint".into();
    json["constants"][1]["register_index"] = 20.into();
    json["constants"][0]["default_value"] = serde_json::json!([[1.0, 0.5, 0.25, 1.0]]);
    let mut extra = json["constants"][0].clone();
    extra["name"] = "Extra".into();
    extra["register_index"] = 30.into();
    extra.as_object_mut().unwrap().remove("default_value");
    json["constants"].as_array_mut().unwrap().push(extra);
    fs::write(
        "/tmp/shaderfs-ctab.json",
        serde_json::to_vec_pretty(&json).unwrap(),
    )
    .unwrap();
    let (code, _, err) = sh(&format!(
        "cp /tmp/shaderfs-ctab.json {}",
        json_path.display()
    ));
    assert_eq!(code, 0, "{err}");
    let table = ConstantTable::from_bytecode(&package_record(&s.package, &name))
        .unwrap()
        .unwrap();
    let names: Vec<&str> = table.constants.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Tint", "wvp", "Extra"]);
    assert_eq!(table.constants[1].register_index, 20);
    assert_eq!(table.constants[2].register_index, 30);
    assert_eq!(
        table.constants[0].default_value,
        Some(
            [1.0f32, 0.5, 0.25, 1.0]
                .iter()
                .map(|f| f.to_bits())
                .collect()
        )
    );
    // The code itself did not move: only the comment changed.
    let after = package_record(&s.package, &name);
    assert!(after.ends_with(&code_before[code_before.len() - 64..]));

    // Remove a constant; then bad JSON is refused with the place.
    json["constants"].as_array_mut().unwrap().pop();
    fs::write(
        "/tmp/shaderfs-ctab.json",
        serde_json::to_vec_pretty(&json).unwrap(),
    )
    .unwrap();
    let (code, _, _) = sh(&format!(
        "cp /tmp/shaderfs-ctab.json {}",
        json_path.display()
    ));
    assert_eq!(code, 0);
    let table = ConstantTable::from_bytecode(&package_record(&s.package, &name))
        .unwrap()
        .unwrap();
    assert_eq!(table.constants.len(), 2);

    let before = fs::read(&s.package).unwrap();
    fs::write("/tmp/shaderfs-ctab.json", "{\n  \"creator\": 5\n}\n").unwrap();
    let (code, _, err) = sh(&format!(
        "cp /tmp/shaderfs-ctab.json {}",
        json_path.display()
    ));
    assert_ne!(code, 0);
    assert!(err.contains("Invalid argument"), "{err}");
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    assert!(log.lines().last().unwrap().contains("2:"), "{log}");
    assert_eq!(fs::read(&s.package).unwrap(), before);

    // `null` removes the table; the shader still assembles.
    fs::write("/tmp/shaderfs-ctab.json", "null\n").unwrap();
    let (code, _, err) = sh(&format!(
        "cp /tmp/shaderfs-ctab.json {}",
        json_path.display()
    ));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        ConstantTable::from_bytecode(&package_record(&s.package, &name)).unwrap(),
        None
    );
    assert_eq!(fs::read_to_string(&json_path).unwrap(), "null\n");
}
