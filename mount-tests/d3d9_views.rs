//! The `asm/` view of D3D9 shaders as Microsoft's tools print them (issue 16), through a
//! real mount: `diff` against fxc's own listings, fxc's listing saved over the view,
//! Direct3D 8-style vertex shaders, counts that are device capabilities, and the tables of
//! Oblivion's compiler (D3DX9 9.08) as headers (issue 25).

use std::fs;
use std::path::PathBuf;

use shaderfs::shader::d3d9::asm;
use shaderfs::test_corpus::corpus;

use crate::support::{can_mount, package_record, sh, write_package, Mount, Shader};

/// A package of `shaders` and a mount point, in a folder of their own.
struct Setup {
    _tmp: tempfile::TempDir,
    package: PathBuf,
    mnt: PathBuf,
}

fn package_of(shaders: &[Shader]) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let package = tmp.path().join("shaderpackage016.sdp");
    write_package(&package, &shaders.iter().collect::<Vec<_>>());
    let mnt = tmp.path().join("mnt");
    Setup {
        _tmp: tmp,
        package,
        mnt,
    }
}

/// The 14 shaders of `fxc-listings/`, with record names and the listing fxc printed.
fn fxc_shaders() -> Option<Vec<(Shader, PathBuf)>> {
    let dir = corpus("d3d9/fxc-listings")?;
    let mut out = Vec::new();
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "vso" || e == "pso"))
        .collect();
    paths.sort();
    for p in paths {
        let file = p.file_name().unwrap().to_string_lossy().into_owned();
        let (stem, ext) = file.rsplit_once('.').unwrap();
        let name = format!("{}.{ext}", stem.to_uppercase().replace('~', "_"));
        let listing = p.with_file_name(format!("{file}.fxc.txt"));
        out.push((
            Shader {
                name,
                bytes: fs::read(&p).unwrap(),
                source: p,
            },
            listing,
        ));
    }
    Some(out)
}

#[test]
fn diff_against_fxc_shows_only_its_command_line_and_its_listing_saves_as_the_shader() {
    if !can_mount() {
        return;
    }
    let Some(shaders) = fxc_shaders() else { return };
    assert_eq!(shaders.len(), 14);
    let records: Vec<Shader> = shaders
        .iter()
        .map(|(s, _)| Shader {
            name: s.name.clone(),
            bytes: s.bytes.clone(),
            source: s.source.clone(),
        })
        .collect();
    let s = package_of(&records);
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let before = fs::read(&s.package).unwrap();
    for (shader, listing) in &shaders {
        let view = m.path(&format!("asm/{}.asm", shader.name));
        // `diff` exits 1 and prints only fxc's command line, which the bytes do not keep,
        // and, in its place, the line of ours that says which constants register() placed.
        let (code, out, _) = sh(&format!("diff {} {}", view.display(), listing.display()));
        assert_eq!(code, 1, "{}", shader.name);
        let changed: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with('<') || l.starts_with('>'))
            .collect();
        assert!(
            !changed.is_empty()
                && changed.iter().all(|l| l.starts_with("> //   fxc ")
                    || l.starts_with("> //    ")
                    || l.starts_with("< //   Bound by register(): ")),
            "{}:\n{out}",
            shader.name
        );
        // fxc's listing copied over the view is a save that gives back the same shader,
        // constant table included.
        let (code, _, err) = sh(&format!("cp {} {}", listing.display(), view.display()));
        assert_eq!(code, 0, "{}: {err}", shader.name);
        assert_eq!(
            package_record(&s.package, &shader.name),
            shader.bytes,
            "{}",
            shader.name
        );
    }
    assert_eq!(fs::read(&s.package).unwrap(), before);
    // Renaming a constant in the header renames it in the shader's table.
    let view = m.path("asm/DEFAULT_PS.pso.asm");
    let (code, _, err) = sh(&format!(
        "sed -i 's/fogColor;/mistColor;/; s/^\\/\\/   fogColor     c0/\\/\\/   mistColor    c0/' {}",
        view.display()
    ));
    assert_eq!(code, 0, "{err}");
    let (_, json, _) = sh(&format!(
        "cat {}",
        m.path("ctab/DEFAULT_PS.pso.json").display()
    ));
    assert!(json.contains("\"name\": \"mistColor\""), "{json}");
    assert!(!json.contains("fogColor"), "{json}");
}

#[test]
fn a_direct3d8_vertex_shader_is_named_and_its_edits_say_how_to_mend_them() {
    if !can_mount() {
        return;
    }
    let d3d8 = asm::assemble_d3d8("vs_1_1\nm4x4 oPos, v0, c0\nmov oD0, v1\n").unwrap();
    let s = package_of(&[Shader {
        name: "OLD.vso".into(),
        bytes: d3d8.clone(),
        source: PathBuf::new(),
    }]);
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let view = m.path("asm/OLD.vso.asm");
    let text = fs::read_to_string(&view).unwrap();
    assert!(
        text.starts_with("// Direct3D 8-style vs_1_1: no dcl."),
        "{text}"
    );
    // Saved unchanged: nothing changes. Edited: refused, saying why and what to do.
    let (code, _, err) = sh(&format!(
        "cp {0} /tmp/shaderfs-old.asm && cp /tmp/shaderfs-old.asm {0}",
        view.display()
    ));
    assert_eq!(code, 0, "{err}");
    assert_eq!(package_record(&s.package, "OLD.vso"), d3d8);
    let (code, _, err) = sh(&format!(
        "sed -i 's/mov oD0, v1/mov oD1, v1/' {}",
        view.display()
    ));
    assert_ne!(code, 0);
    assert!(
        err.contains("Invalid argument") || err.contains("sed"),
        "{err}"
    );
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    let last = log.lines().last().unwrap();
    assert!(last.contains("asm/OLD.vso.asm"), "{last}");
    assert!(last.contains("Direct3D 8-style vs_1_1"), "{last}");
    assert!(last.contains("dcl_position v0"), "{last}");
    assert_eq!(package_record(&s.package, "OLD.vso"), d3d8);
    // With a dcl for each input it is a Direct3D 9 shader, and saves.
    let (code, _, err) = sh(&format!(
        "sed -i 's/^    vs_1_1$/    vs_1_1\\n    dcl_position v0\\n    dcl_color v1/' {}",
        view.display()
    ));
    assert_eq!(code, 0, "{err}");
    let text = fs::read_to_string(&view).unwrap();
    assert!(!text.contains("Direct3D 8-style"), "{text}");
    assert!(text.contains("    dcl_color v1\n"), "{text}");
}

#[test]
fn constants_beyond_the_guaranteed_256_save_and_name_the_cap() {
    if !can_mount() {
        return;
    }
    let vs = asm::assemble("vs_2_0\ndcl_position v0\nmov oPos, v0\n").unwrap();
    let s = package_of(&[Shader {
        name: "WIDE.vso".into(),
        bytes: vs,
        source: PathBuf::new(),
    }]);
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let view = m.path("asm/WIDE.vso.asm");
    fs::write(
        "/tmp/shaderfs-wide.asm",
        "vs_2_0\ndcl_position v0\nadd r0, v0, c297\nmov oPos, r0\n",
    )
    .unwrap();
    let (code, _, err) = sh(&format!("cp /tmp/shaderfs-wide.asm {}", view.display()));
    assert_eq!(code, 0, "{err}");
    let text = fs::read_to_string(&view).unwrap();
    assert!(
        text.starts_with(
            "// Needs D3DCAPS9.MaxVertexShaderConst >= 298: it uses c297, and vs_2_0 \
             guarantees 256.\n"
        ),
        "{text}"
    );
}

/// Shaders as Oblivion's compiler wrote them (D3DX9 9.08, d3dx9_27) and d3dx9_31's: the
/// view's header is their table, saving it unchanged keeps the package's bytes, and
/// renaming a constant in the header renames it in the table and changes nothing else.
#[test]
fn oblivions_compiler_tables_are_headers_and_renaming_one_edits_the_table() {
    use shaderfs::shader::d3d9::ctab::ConstantTable;
    if !can_mount() {
        return;
    }
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/shader/d3d9/ctab/testdata"
    ));
    let shaders: Vec<Shader> = [
        ("SLS2000.pso", "bound_mixed.ps_3_0.d3dx9_27.bin"),
        ("SLS2000.vso", "bound_all.vs_1_1.d3dx9_27.bin"),
        ("SLS2001.pso", "structs_defaults.ps_3_0.d3dx9_31.bin"),
    ]
    .iter()
    .map(|(name, file)| Shader {
        name: name.to_string(),
        bytes: fs::read(dir.join(file)).unwrap(),
        source: dir.join(file),
    })
    .collect();
    let s = package_of(&shaders);
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let before = fs::read(&s.package).unwrap();
    for shader in &shaders {
        let view = m.path(&format!("asm/{}.asm", shader.name));
        let text = fs::read_to_string(&view).unwrap();
        assert!(
            text.contains("// Generated by Microsoft (R) D3DX9 Shader Compiler 9.")
                && text.contains("// Parameters:")
                && !text.contains("comment-block"),
            "{}:\n{text}",
            shader.name
        );
        let (code, _, err) = sh(&format!(
            "cp {0} {1}/copy.asm && cp {1}/copy.asm {0}",
            view.display(),
            s.mnt.parent().unwrap().display()
        ));
        assert_eq!(code, 0, "{err}");
    }
    assert_eq!(fs::read(&s.package).unwrap(), before);
    let view = m.path("asm/SLS2000.pso.asm");
    let (code, _, err) = sh(&format!(
        "sed -i '/^\\/\\//s/\\<tint\\>/tone/g' {}",
        view.display()
    ));
    assert_eq!(code, 0, "{err}");
    let old = ConstantTable::from_bytecode(&shaders[0].bytes)
        .unwrap()
        .unwrap();
    let saved = package_record(&s.package, "SLS2000.pso");
    let new = ConstantTable::from_bytecode(&saved).unwrap().unwrap();
    let mut expected = old.clone();
    let tint = expected
        .constants
        .iter_mut()
        .find(|c| c.name == "tint")
        .unwrap();
    tint.name = "tone".into();
    assert_eq!(new, expected);
    let json = fs::read_to_string(m.path("ctab/SLS2000.pso.json")).unwrap();
    assert!(
        json.contains("\"name\": \"tone\"") && !json.contains("tint"),
        "{json}"
    );
    // The code after the table is the shader's own.
    let code_of = |b: &[u8]| {
        let at = shaderfs::shader::d3d9::ctab::find_ctab(b)
            .unwrap()
            .unwrap()
            .payload
            .end;
        b[at..].to_vec()
    };
    assert_eq!(code_of(&saved), code_of(&shaders[0].bytes));
}
