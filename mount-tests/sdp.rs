//! Bethesda `.sdp` packages through a real mount.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use shaderfs::shader::d3d9::disasm;

use crate::support::{
    can_mount, package_records, package_setup, run, sh, shaderfs, write_package, Mount,
    PackageSetup, Shader,
};

fn setup() -> Option<PackageSetup> {
    package_setup("shaderpackage003.sdp")
}

#[test]
fn ls_stat_and_cat_show_the_package() {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let (code, out, err) = sh(&format!("ls {}", m.path("shaders").display()));
    assert_eq!(code, 0, "{err}");
    let mut want: Vec<&str> = s.shaders.iter().map(|s| s.name.as_str()).collect();
    want.sort();
    assert_eq!(out.lines().collect::<Vec<_>>(), want);

    for shader in &s.shaders {
        let path = m.path(&format!("shaders/{}", shader.name));
        let meta = fs::metadata(&path).unwrap();
        assert_eq!(
            meta.len(),
            shader.bytes.len() as u64,
            "ls -l size of {}",
            shader.name
        );
        let (code, _, err) = sh(&format!(
            "cat {} | cmp - {}",
            path.display(),
            shader.source.display()
        ));
        assert_eq!(
            code, 0,
            "cat {} differs from its source: {err}",
            shader.name
        );
    }

    // Reads at odd offsets and sizes.
    let first = &s.shaders[0];
    let path = m.path(&format!("shaders/{}", first.name));
    for (skip, count) in [(0, 1), (3, 7), (100, 1000), (first.bytes.len() - 1, 10)] {
        let (code, out, _) = sh(&format!(
            "dd if={} bs=1 skip={skip} count={count} status=none | od -An -v -tx1",
            path.display()
        ));
        assert_eq!(code, 0);
        let got: Vec<u8> = out
            .split_whitespace()
            .map(|h| u8::from_str_radix(h, 16).unwrap())
            .collect();
        let end = (skip + count).min(first.bytes.len());
        assert_eq!(got, &first.bytes[skip..end], "dd skip={skip} count={count}");
    }

    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(m.path("archive.json")).unwrap()).unwrap();
    assert_eq!(json["header_word"], 100);
    assert_eq!(json["shader_count"], s.shaders.len());
    assert_eq!(json["file_size"], fs::metadata(&s.package).unwrap().len());
    assert_eq!(json["writable"], true);
}

#[test]
fn inode_numbers_are_stable_across_commits() {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let inos = |dir: &Path| -> HashMap<String, u64> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().into_string().unwrap(),
                    e.metadata().unwrap().ino(),
                )
            })
            .collect()
    };
    let before = inos(&m.path("shaders"));
    let victim = &s.shaders[1];
    let replacement = &s.shaders[2];
    fs::copy(
        &replacement.source,
        m.path(&format!("shaders/{}", victim.name)),
    )
    .unwrap();
    let after = inos(&m.path("shaders"));
    assert_eq!(before, after, "a commit renumbered files");

    // A rename moves the inode with the name, as the kernel's dentry did; every other
    // file keeps its number through the commit.
    let moved = &s.shaders[3].name;
    fs::rename(
        m.path(&format!("shaders/{moved}")),
        m.path("shaders/MOVED.vso"),
    )
    .unwrap();
    let mut renamed = inos(&m.path("shaders"));
    assert_eq!(renamed.remove("MOVED.vso"), before.get(moved).copied());
    let mut expected = before.clone();
    expected.remove(moved);
    assert_eq!(renamed, expected, "a rename renumbered other files");
}

#[test]
fn cp_rm_mv_land_in_the_package() {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let shaders = |name: &str| m.path(&format!("shaders/{name}"));
    let (a, b, c) = (&s.shaders[0], &s.shaders[3], &s.shaders[4]);
    let vertex = s
        .shaders
        .iter()
        .find(|x| x.name.ends_with(".vso") && x.name != a.name)
        .unwrap();

    // Replace, add, rename, remove: each with the real program.
    let script = format!(
        "set -e; cp {src} {dst}; cp {src} {new}; mv {new} {renamed}; rm {gone}",
        src = vertex.source.display(),
        dst = shaders(&a.name).display(),
        new = shaders("ADDED.vso").display(),
        renamed = shaders("RENAMED.vso").display(),
        gone = shaders(&b.name).display(),
    );
    let (code, _, err) = sh(&script);
    assert_eq!(code, 0, "{err}");
    // The mount shows it before the unmount …
    assert_eq!(fs::read(shaders(&a.name)).unwrap(), vertex.bytes);
    assert!(!shaders("ADDED.vso").exists());
    assert_eq!(fs::read(shaders("RENAMED.vso")).unwrap(), vertex.bytes);
    assert!(!shaders(&b.name).exists());
    // … and renaming over an existing shader replaces it, as mv does.
    let (code, _, err) = sh(&format!(
        "mv {} {}",
        shaders("RENAMED.vso").display(),
        shaders(&c.name).display()
    ));
    assert_eq!(code, 0, "{err}");
    m.unmount();

    let got = package_records(&s.package);
    let mut want: Vec<(String, Vec<u8>)> = s
        .shaders
        .iter()
        .filter(|x| x.name != b.name)
        .map(|x| {
            let bytes = if x.name == a.name || x.name == c.name {
                vertex.bytes.clone()
            } else {
                x.bytes.clone()
            };
            (x.name.clone(), bytes)
        })
        .collect();
    // The renamed record took the place of the one it was renamed over … at the end,
    // where new records go.
    let moved = want.iter().position(|(n, _)| n == &c.name).unwrap();
    let entry = want.remove(moved);
    want.push(entry);
    assert_eq!(
        got.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        want.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>()
    );
    assert_eq!(got, want);
}

#[test]
fn a_refused_write_fails_close_and_leaves_the_package() {
    let Some(s) = setup() else { return };
    let original = fs::read(&s.package).unwrap();
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let target = m.path(&format!("shaders/{}", s.shaders[0].name));
    let pixel = s.shaders.iter().find(|x| x.name.ends_with(".pso")).unwrap();
    let vertex_name = s.shaders.iter().find(|x| x.name.ends_with(".vso")).unwrap();
    let vertex_target = m.path(&format!("shaders/{}", vertex_name.name));
    let tmp = tempfile::tempdir().unwrap();

    let cases: Vec<(&str, Vec<u8>, &Path)> = vec![
        ("not bytecode", b"this is not a shader\n".to_vec(), &target),
        (
            "no end token",
            s.shaders[0].bytes[..s.shaders[0].bytes.len() - 4].to_vec(),
            &target,
        ),
        (
            "bad version token",
            {
                let mut b = s.shaders[0].bytes.clone();
                b[2..4].copy_from_slice(&[0x12, 0x34]);
                b
            },
            &target,
        ),
        (
            "comment past the end",
            {
                let mut b = s.shaders[0].bytes[..12].to_vec();
                b[4..8].copy_from_slice(&0x7fff_fffeu32.to_le_bytes());
                b
            },
            &target,
        ),
        ("pixel shader as .vso", pixel.bytes.clone(), &vertex_target),
    ];
    for (what, bytes, target) in cases {
        let file = tmp.path().join("input");
        fs::write(&file, &bytes).unwrap();
        let (code, _, err) = sh(&format!("cp {} {}", file.display(), target.display()));
        assert_ne!(code, 0, "{what}: cp succeeded");
        assert!(err.contains("Invalid argument"), "{what}: {err}");
    }
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    assert_eq!(
        log.lines().filter(|l| l.contains("refused")).count(),
        5,
        "{log}"
    );
    assert!(log.contains("expected the end token"), "{log}");
    assert!(log.contains("must hold a vertex"), "{log}");
    // The mount still shows the old bytes.
    assert_eq!(fs::read(&target).unwrap(), s.shaders[0].bytes);
    m.unmount();
    assert_eq!(
        fs::read(&s.package).unwrap(),
        original,
        "the package changed"
    );
}

#[test]
fn read_only_mounts_refuse_writes() {
    let Some(s) = setup() else { return };
    let original = fs::read(&s.package).unwrap();
    let m = Mount::new(&s.package, &s.mnt, &["-o", "ro"]);
    let target = m.path(&format!("shaders/{}", s.shaders[0].name));
    for script in [
        format!("cp {} {}", s.shaders[1].source.display(), target.display()),
        format!("rm {}", target.display()),
        format!(
            "mv {} {}",
            target.display(),
            m.path("shaders/X.vso").display()
        ),
        format!("touch {}", m.path("shaders/NEW.vso").display()),
    ] {
        let (code, _, err) = sh(&script);
        assert_ne!(code, 0, "{script}");
        assert!(err.contains("Read-only file system"), "{script}: {err}");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(m.path("archive.json")).unwrap()).unwrap();
    assert_eq!(json["writable"], false);
    m.unmount();
    assert_eq!(fs::read(&s.package).unwrap(), original);
}

#[test]
fn readers_never_see_a_torn_file() {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let target_name = s.shaders[0].name.clone();
    let versions: Vec<Vec<u8>> = s
        .shaders
        .iter()
        .filter(|x| x.name.ends_with(".vso"))
        .take(2)
        .map(|x| x.bytes.clone())
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let mut all: Vec<(std::path::PathBuf, Vec<Vec<u8>>)> = s
        .shaders
        .iter()
        .map(|x| {
            let mut ok = vec![x.bytes.clone()];
            if x.name == target_name {
                ok.extend(versions.iter().cloned());
            }
            (m.path(&format!("shaders/{}", x.name)), ok)
        })
        .collect();
    // The disassembly views too: rendered views, which a read through asm/ renders ahead
    // on another thread while commits change the snapshot under it.
    let text = |bytes: &[u8]| disasm::disassemble(bytes).ok().map(String::into_bytes);
    all.extend(s.shaders.iter().filter_map(|x| {
        let mut ok = vec![text(&x.bytes)?];
        if x.name == target_name {
            ok.extend(versions.iter().filter_map(|v| text(v)));
        }
        Some((m.path(&format!("asm/{}.asm", x.name)), ok))
    }));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let stop = stop.clone();
            let all = all.clone();
            std::thread::spawn(move || {
                let mut reads = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for (path, ok) in &all {
                        let got = fs::read(path).unwrap();
                        assert!(
                            ok.contains(&got),
                            "torn read of {}: {} bytes, first diff at {:?}",
                            path.display(),
                            got.len(),
                            ok.iter()
                                .map(|o| o.iter().zip(&got).position(|(a, b)| a != b))
                                .collect::<Vec<_>>()
                        );
                        reads += 1;
                    }
                }
                reads
            })
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    for round in 0..30 {
        let file = tmp.path().join("v");
        fs::write(&file, &versions[round % 2]).unwrap();
        let (code, _, err) = sh(&format!(
            "cp {} {}",
            file.display(),
            m.path(&format!("shaders/{target_name}")).display()
        ));
        assert_eq!(code, 0, "{err}");
    }
    stop.store(true, Ordering::Relaxed);
    let reads: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(reads > 0);
    m.unmount();
    let got = package_records(&s.package);
    assert_eq!(got[0].1, versions[1]);
}

#[test]
fn a_folder_mounts_every_package() {
    let Some(s) = setup() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("Shaders");
    fs::create_dir(&folder).unwrap();
    let (vs, ps): (Vec<&Shader>, Vec<&Shader>) =
        s.shaders.iter().partition(|x| x.name.ends_with(".vso"));
    write_package(&folder.join("shaderpackage001.sdp"), &vs);
    write_package(&folder.join("shaderpackage002.sdp"), &ps);
    fs::write(folder.join("readme.txt"), "not an archive").unwrap();
    let m = Mount::new(&folder, &tmp.path().join("mnt"), &[]);
    let (code, out, _) = sh(&format!("ls {}", m.dir.display()));
    assert_eq!(code, 0);
    assert_eq!(out, "shaderpackage001.sdp\nshaderpackage002.sdp\n");
    let count = |pkg: &str| {
        fs::read_dir(m.path(&format!("{pkg}/shaders")))
            .unwrap()
            .count()
    };
    assert_eq!(count("shaderpackage001.sdp"), vs.len());
    assert_eq!(count("shaderpackage002.sdp"), ps.len());
    // A write in one package leaves the other alone.
    let other = fs::read(folder.join("shaderpackage002.sdp")).unwrap();
    fs::copy(
        &vs[1].source,
        m.path(&format!("shaderpackage001.sdp/shaders/{}", vs[0].name)),
    )
    .unwrap();
    m.unmount();
    assert_eq!(
        package_records(&folder.join("shaderpackage001.sdp"))[0].1,
        vs[1].bytes
    );
    assert_eq!(
        fs::read(folder.join("shaderpackage002.sdp")).unwrap(),
        other
    );
}

#[test]
fn malformed_packages_and_bad_options_are_refused_with_exit_codes() {
    if !can_mount() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("mnt");
    fs::create_dir(&mnt).unwrap();
    let bad = tmp.path().join("bad.sdp");
    let mut bytes = vec![0u8; 12 + 260];
    bytes[0] = 100;
    bytes[4] = 1;
    bytes[8..12].copy_from_slice(&260u32.to_le_bytes());
    bytes[12..12 + 256].fill(b'A');
    fs::write(&bad, &bytes).unwrap();
    let out = run(shaderfs().arg("mount").arg(&bad).arg(&mnt));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.sdp"), "{err}");
    assert!(err.contains("record 0 at offset 0xc"), "{err}");
    assert!(err.contains("no NUL"), "{err}");

    let good = tmp.path().join("good.sdp");
    fs::write(&good, [100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    let out = run(shaderfs()
        .arg("mount")
        .arg(&good)
        .arg(&mnt)
        .args(["-o", "ro,bogus"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown mount option 'bogus'"));

    let out = run(shaderfs()
        .arg("mount")
        .arg(&good)
        .arg(tmp.path().join("missing")));
    assert_eq!(out.status.code(), Some(1));
    let out = run(shaderfs().arg("frobnicate"));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn the_mount_fuse3_form_and_an_empty_package() {
    if !can_mount() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("mnt");
    fs::create_dir(&mnt).unwrap();
    let empty = tmp.path().join("empty.sdp");
    fs::write(&empty, [100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    // What mount.fuse3 runs for an fstab line of type fuse.shaderfs.
    let out = run(shaderfs()
        .arg(&empty)
        .arg(&mnt)
        .args(["-o", "ro,nodev,nosuid"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, out, _) = sh(&format!(
        "ls -A {}/shaders | wc -l; grep -c ' {} ' /proc/self/mountinfo",
        mnt.display(),
        mnt.display()
    ));
    assert_eq!(code, 0);
    assert_eq!(out, "0\n1\n");
    let out = run(shaderfs().arg("umount").arg(&mnt));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, out, _) = sh(&format!(
        "grep -c ' {} ' /proc/self/mountinfo",
        mnt.display()
    ));
    assert_eq!(out.trim(), "0", "still mounted after umount returned");
}

#[test]
fn an_archive_truncated_under_the_mount_is_reported_not_a_crash() {
    truncated_under(&[]);
}

#[test]
fn an_archive_truncated_under_a_read_only_mount_is_reported_not_a_crash() {
    truncated_under(&["-o", "ro"]);
}

fn truncated_under(args: &[&str]) {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, args);
    // Read the log once, so a stale cached copy would show.
    assert_eq!(fs::read_to_string(m.path(".shaderfs/errors")).unwrap(), "");
    let first = m.path(&format!("shaders/{}", s.shaders[0].name));
    let last = m.path(&format!("shaders/{}", s.shaders.last().unwrap().name));
    assert_eq!(fs::read(&first).unwrap(), s.shaders[0].bytes);
    // Another program cuts the package short while it is mounted.
    fs::OpenOptions::new()
        .write(true)
        .open(&s.package)
        .unwrap()
        .set_len(300)
        .unwrap();
    let err = fs::read(&last).expect_err("read past the truncated end");
    assert_eq!(err.raw_os_error(), Some(libc::EIO));
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    assert!(log.contains("changed by another program"), "{log}");
    assert_eq!(
        log.matches("changed by another program").count(),
        1,
        "{log}"
    );
    // The daemon is alive and answers.
    assert!(fs::read_dir(m.path("shaders")).unwrap().count() > 0);
    m.unmount();
}

#[test]
fn owner_mode_and_backup_options() {
    let Some(s) = setup() else { return };
    let original = fs::read(&s.package).unwrap();
    let m = Mount::new(
        &s.package,
        &s.mnt,
        &["-o", "uid=1234,gid=5678,umask=027,backup"],
    );
    let shader = m.path(&format!("shaders/{}", s.shaders[0].name));
    let meta = fs::metadata(&shader).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (1234, 5678));
    assert_eq!(meta.mode() & 0o777, 0o640);
    assert_eq!(
        fs::metadata(m.path("shaders")).unwrap().mode() & 0o777,
        0o750
    );
    assert_eq!(
        fs::metadata(m.path("archive.json")).unwrap().mode() & 0o777,
        0o440
    );

    let bak = s.package.with_extension("sdp.bak");
    assert!(!bak.exists(), "no backup before the first commit");
    fs::copy(&s.shaders[1].source, &shader).unwrap();
    assert_eq!(
        fs::read(&bak).unwrap(),
        original,
        "backup holds the package before the commit"
    );
    fs::copy(&s.shaders[2].source, &shader).unwrap();
    assert_eq!(
        fs::read(&bak).unwrap(),
        original,
        "later commits keep the first backup"
    );
    m.unmount();
    assert_eq!(package_records(&s.package)[0].1, s.shaders[2].bytes);
}
