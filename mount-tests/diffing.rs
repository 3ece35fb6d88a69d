//! `diff -r` between a vanilla and a modded mount shows what the mod changed and nothing
//! else: views carry no absolute archive offsets, which move when anything before them
//! grows (issue 14).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use shaderfs::shader::d3d9::decompile::decompile;

use crate::support::{can_mount, gen_sgd2, sh, Mount};

/// The files `diff -rq` finds different between two trees, relative to them. The `hlsl/`
/// views of shaders the decompiler does not write yet read as EIO, which stops GNU diff's
/// whole walk: they are left out.
fn differing(a: &Path, b: &Path) -> BTreeSet<String> {
    let mut excluded = String::new();
    for tree in [a, b] {
        let Ok(views) = fs::read_dir(tree.join("hlsl")) else {
            continue;
        };
        for view in views {
            let name = view.unwrap().file_name().to_string_lossy().into_owned();
            let shader = tree
                .join("shaders")
                .join(name.strip_suffix(".hlsl").unwrap());
            if decompile(&fs::read(&shader).unwrap()).is_err() {
                excluded.push_str(&format!(" --exclude={name}"));
            }
        }
    }
    let (_, out, err) = sh(&format!(
        "diff -rq{excluded} {} {}",
        a.display(),
        b.display()
    ));
    assert!(err.is_empty(), "{err}");
    let prefix = format!("Files {}/", a.display());
    out.lines()
        .map(|l| {
            let rest = l.strip_prefix(&prefix).unwrap_or_else(|| panic!("{l}"));
            rest.split_once(" and ").unwrap().0.to_owned()
        })
        .collect()
}

#[test]
fn one_shader_edited_in_a_package_differs_in_its_own_files_only() {
    if !can_mount() {
        return;
    }
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/shaderpackage-example.sdp");
    let tmp = tempfile::tempdir().unwrap();
    let (vanilla, modded) = (
        tmp.path().join("vanilla.sdp"),
        tmp.path().join("modded.sdp"),
    );
    fs::copy(&example, &vanilla).unwrap();
    fs::copy(&example, &modded).unwrap();
    let a = Mount::new(&vanilla, &tmp.path().join("a"), &["-o", "ro"]);
    let b = Mount::new(&modded, &tmp.path().join("b"), &[]);
    // The first shader grows by an instruction: every record after it moves.
    let asm = b.path("asm/SLS1000.vso.asm");
    let text = fs::read_to_string(&asm).unwrap();
    let line = text
        .lines()
        .rfind(|l| l.trim_start().starts_with("mov o"))
        .unwrap();
    fs::write(&asm, text.replacen(line, &format!("{line}\n{line}"), 1)).unwrap();
    assert_eq!(fs::read_to_string(b.path(".shaderfs/errors")).unwrap(), "");

    let changed = differing(&a.dir, &b.dir);
    let allowed: BTreeSet<String> = [
        "archive.json",
        "shaders/SLS1000.vso",
        "asm/SLS1000.vso.asm",
        "ctab/SLS1000.vso.json",
        "hlsl/SLS1000.vso.hlsl",
    ]
    .map(String::from)
    .into();
    assert!(changed.contains("shaders/SLS1000.vso"), "{changed:?}");
    assert!(changed.is_subset(&allowed), "{changed:?}");
    a.unmount();
    b.unmount();
}

#[test]
fn two_programs_replaced_in_a_database_differ_in_their_own_files_only() {
    if !can_mount() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (vanilla, modded) = (
        tmp.path().join("vanilla.awc"),
        tmp.path().join("modded.awc"),
    );
    if gen_sgd2(&vanilla, &["--programs-per-stage", "24"]).is_none() {
        return;
    }
    fs::copy(&vanilla, &modded).unwrap();
    let a = Mount::new(&vanilla, &tmp.path().join("a"), &["-o", "ro"]);
    let b = Mount::new(&modded, &tmp.path().join("b"), &[]);

    // Programs 3 and 7 of the pixel stage get another program's container, of another
    // size: every record after them moves.
    let index: serde_json::Value =
        serde_json::from_slice(&fs::read(a.path("programs/pixel/index.json")).unwrap()).unwrap();
    let programs = index["programs"].as_array().unwrap();
    let size = |i: usize| {
        fs::metadata(a.path(&format!("programs/pixel/{i}.dxil")))
            .unwrap()
            .len()
    };
    for target in [3, 7] {
        let with = (0..programs.len())
            .find(|&j| programs[j]["crc32"] != programs[target]["crc32"] && size(j) != size(target))
            .expect("a pixel program unlike the one replaced");
        let (code, _, err) = sh(&format!(
            "cp {} {}",
            a.path(&format!("programs/pixel/{with}.dxil")).display(),
            b.path(&format!("programs/pixel/{target}.dxil")).display()
        ));
        assert_eq!(code, 0, "{err}");
    }
    assert_eq!(fs::read_to_string(b.path(".shaderfs/errors")).unwrap(), "");

    // What may differ: the two programs' own files and the links that reach them (by
    // name, from effects and their passes), and the files that index the database.
    let (_, links, _) = sh(&format!("cd {} && find . -type l | sort", b.dir.display()));
    let replaced: BTreeSet<String> = [3, 7]
        .iter()
        .flat_map(|n| ["dxil", "json", "ll"].map(|ext| format!("programs/pixel/{n}.{ext}")))
        .collect();
    // Where a link leads, as a path in the mount.
    let root = fs::canonicalize(&b.dir).unwrap();
    let reaching = |link: &str| {
        let target = fs::canonicalize(b.path(link)).unwrap();
        let target = target.strip_prefix(&root).unwrap().to_str().unwrap();
        replaced.contains(target)
    };
    // The stages' index.json hold their programs' offsets: those of the stages after
    // the pixel stage move.
    let mut allowed: BTreeSet<String> = ["archive.json", "census.json"].map(String::from).into();
    for stage in ["vertex", "pixel", "compute", "domain", "geometry", "hull"] {
        allowed.insert(format!("programs/{stage}/index.json"));
    }
    allowed.extend(replaced.iter().cloned());
    let mut from_effects = 0;
    for link in links.lines().map(|l| l.trim_start_matches("./")) {
        if reaching(link) {
            from_effects += usize::from(link.starts_with("effects/"));
            allowed.insert(link.to_owned());
        }
    }
    assert!(from_effects > 0, "an effect uses program 3 or 7");

    let changed = differing(&a.dir, &b.dir);
    for must in [
        "programs/pixel/3.dxil",
        "programs/pixel/7.json",
        "programs/pixel/7.ll",
        "programs/pixel/index.json",
        "archive.json",
    ] {
        assert!(changed.contains(must), "{must} differs: {changed:?}");
    }
    assert!(
        changed.iter().any(|p| p.starts_with("effects/")),
        "{changed:?}"
    );
    let unexpected: Vec<&String> = changed.difference(&allowed).collect();
    assert!(
        unexpected.is_empty(),
        "only the replaced programs' files differ: {unexpected:?}"
    );
    a.unmount();
    b.unmount();
}
