//! `shaderfs extract` writes the tree a read-write mount shows, as that mount shows it:
//! every name and byte, and each file's and folder's mode and time, with `archive.json`
//! saying what the mount's says (issue 24). So `rsync -a` from an extracted copy to the
//! mount finds nothing to do, and `diff -r` nothing to show.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::support::*;

/// What a user compares of one path: its type, mode, modification time (to the
/// nanosecond), and its bytes or link target.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    kind: &'static str,
    mode: u32,
    mtime: (i64, i64),
    content: Vec<u8>,
}

/// Every path below `root`, as `stat` and `read` see it; the mount's `.shaderfs/` is no
/// part of an archive, and neither is the root of a folder of archives (a mount's shows
/// the time the mount started). The `.hlsl` views that read as EIO (shaders the
/// decompiler does not write yet) are left out, as extract leaves them out, and named
/// apart.
fn seen(root: &Path) -> (BTreeMap<String, Seen>, Vec<String>) {
    fn walk(root: &Path, at: &Path, out: &mut (BTreeMap<String, Seen>, Vec<String>)) {
        let rel = at
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let meta = fs::symlink_metadata(at).unwrap_or_else(|e| panic!("{}: {e}", at.display()));
        let (kind, content) = if meta.file_type().is_symlink() {
            let target = fs::read_link(at).unwrap();
            ("symlink", target.into_os_string().into_encoded_bytes())
        } else if meta.is_dir() {
            ("dir", Vec::new())
        } else {
            match fs::read(at) {
                Err(e) if e.raw_os_error() == Some(libc::EIO) && rel.ends_with(".hlsl") => {
                    return out.1.push(rel);
                }
                bytes => (
                    "file",
                    bytes.unwrap_or_else(|e| panic!("{}: {e}", at.display())),
                ),
            }
        };
        let entry = Seen {
            kind,
            // A symlink's own mode means nothing on Linux.
            mode: match kind {
                "symlink" => 0,
                _ => meta.permissions().mode() & 0o7777,
            },
            mtime: (meta.mtime(), meta.mtime_nsec()),
            content,
        };
        if !rel.is_empty() {
            out.0.insert(rel, entry);
        }
        if kind == "dir" {
            let mut names: Vec<PathBuf> = fs::read_dir(at)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.file_name().is_some_and(|n| n != ".shaderfs"))
                .collect();
            names.sort();
            for path in names {
                walk(root, &path, out);
            }
        }
    }
    let mut out = (BTreeMap::new(), Vec::new());
    walk(root, root, &mut out);
    out
}

/// A folder holding one archive of each format the corpus (or the repository) has.
fn archives(dir: &Path) -> Vec<&'static str> {
    fs::create_dir_all(dir).unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/shaderpackage-example.sdp");
    fs::copy(example, dir.join("shaderpackage001.sdp")).unwrap();
    let mut names = vec!["shaderpackage001.sdp"];
    if let Some(sha) = corpus("sha") {
        fs::copy(sha.join("demo_car_body.sha"), dir.join("car_body.sha")).unwrap();
        names.push("car_body.sha");
    }
    if let Some(sgd2) = corpus("sgd2") {
        fs::copy(sgd2.join("awclib-small.awc"), dir.join("awclib-small.awc")).unwrap();
        names.push("awclib-small.awc");
    }
    names
}

#[test]
fn an_extracted_copy_has_the_modes_times_and_content_a_read_write_mount_shows() {
    if !can_mount() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("shaders");
    let names = archives(&source);
    // Archives written a while ago, as a game's are: times that cannot be the copy's own.
    let (code, _, err) = sh(&format!(
        "touch -d '2024-05-06 07:08:09.123456789' {}/*",
        source.display()
    ));
    assert_eq!(code, 0, "touch: {err}");
    let copy = tmp.path().join("copy");
    let done = run(shaderfs()
        .arg("extract")
        .arg(&source)
        .arg("-C")
        .arg(&copy)
        .arg("-q"));
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let m = Mount::new(&source, &tmp.path().join("mnt"), &[]);

    let ((mounted, unshown), (extracted, none)) = (seen(&m.dir), seen(&copy));
    assert!(none.is_empty(), "{none:?}");
    // The example package's water shader (ps_1_x texbem) may be beyond the decompiler.
    for view in &unshown {
        let (archive, name) = view
            .split_once("/hlsl/")
            .unwrap_or_else(|| panic!("{view}"));
        let shader = m.path(&format!(
            "{archive}/shaders/{}",
            name.strip_suffix(".hlsl").unwrap()
        ));
        assert!(
            shaderfs::shader::d3d9::decompile::decompile(&fs::read(shader).unwrap()).is_err(),
            "{view} reads as EIO"
        );
    }
    assert_eq!(
        mounted.keys().collect::<Vec<_>>(),
        extracted.keys().collect::<Vec<_>>(),
        "the same paths"
    );
    for (path, shown) in &mounted {
        assert_eq!(
            &extracted[path], shown,
            "{path:?}: extracted, then as mounted"
        );
    }
    // What the comparison covers, said as a user would check it.
    for name in &names {
        let json = &extracted[&format!("{name}/archive.json")];
        assert_eq!(json.mode, 0o444, "{name}/archive.json is a read-only view");
        let text = String::from_utf8_lossy(&json.content);
        assert!(text.contains("\"writable\": true"), "{name}: {text}");
    }
    assert!(
        extracted
            .values()
            .any(|s| s.kind == "file" && s.mode == 0o644),
        "files a save goes into are 0644"
    );
    // The root of a folder of archives is no part of one (the mount's shows the time the
    // mount started, the copy's when the extract ended, a second apart under load): give
    // the copy the mount's, so that rsync compares what the archives hold.
    let (code, _, err) = sh(&format!("touch -r {} {}", m.dir.display(), copy.display()));
    assert_eq!(code, 0, "touch: {err}");
    let (code, out, err) = sh(&format!(
        "rsync -a --dry-run --itemize-changes --exclude=.shaderfs {}/ {}/",
        copy.display(),
        m.dir.display()
    ));
    assert_eq!(code, 0, "rsync: {err}");
    assert_eq!(
        out, "",
        "rsync -a from the extracted copy finds nothing to do"
    );
}
