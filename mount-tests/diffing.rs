//! `diff -r` between a vanilla and a modded mount shows what the mod changed and nothing
//! else: views carry no absolute archive offsets, which move when anything before them
//! grows (issue 14).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use crate::support::{can_mount, sh, Mount};

/// The files `diff -rq` finds different between two trees, relative to them.
fn differing(a: &Path, b: &Path) -> BTreeSet<String> {
    let (_, out, err) = sh(&format!("diff -rq {} {}", a.display(), b.display()));
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
    ]
    .map(String::from)
    .into();
    assert!(changed.contains("shaders/SLS1000.vso"), "{changed:?}");
    assert!(changed.is_subset(&allowed), "{changed:?}");
    a.unmount();
    b.unmount();
}
