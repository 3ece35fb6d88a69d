//! Bounded whatever is thrown at it: the memory write buffers and scratch files may take,
//! names a view can take, archives the daemon cannot write, and `extract` into a folder
//! with symlinks in it.

use std::fs;
use std::path::Path;

use crate::support::{
    can_mount, compiled_shaders, daemon_pid, package_setup, run, sh, shaderfs, write_package,
    Mount, Shader,
};

/// The daemon's resident memory now and at its peak, in bytes (from /proc).
fn rss(pid: i32) -> (u64, u64) {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .unwrap_or_else(|| panic!("{name} in /proc/{pid}/status"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Start measuring the peak anew (Linux: writing 5 to clear_refs resets VmHWM).
fn reset_peak(pid: i32) {
    fs::write(format!("/proc/{pid}/clear_refs"), "5").unwrap();
}

const MIB: u64 = 1 << 20;

#[test]
fn write_buffers_and_scratch_files_share_one_budget() {
    let Some(s) = package_setup("big.sdp") else {
        return;
    };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let pid = daemon_pid(&m.dir);
    let (base, _) = rss(pid);
    reset_peak(pid);
    // Eight scratch files of 255 MiB: two fit the 512 MiB budget, the rest do not.
    let mut refused = 0;
    for i in 0..8 {
        let (code, _, err) = sh(&format!(
            "dd if=/dev/zero of={} bs=1M count=255 status=none",
            m.path(&format!("shaders/.scratch{i}.tmp")).display()
        ));
        if code != 0 {
            assert!(err.contains("No space left on device"), "{err}");
            refused += 1;
        }
    }
    assert_eq!(refused, 6, "two 255 MiB files fit in 512 MiB");
    let (_, peak) = rss(pid);
    eprintln!(
        "8 x 255 MiB of scratch files: daemon base {} MiB, peak {} MiB",
        base / MIB,
        peak / MIB
    );
    assert!(
        peak < base + 512 * MIB + 64 * MIB,
        "peak {} MiB over a base of {} MiB",
        peak / MIB,
        base / MIB
    );
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    assert!(log.contains(".scratch0.tmp: kept in memory only"), "{log}");

    // Gone, they give their memory back: a 255 MiB shader can be written, and closing it
    // (refused: no shader is that large) costs no copy of it.
    let (code, _, err) = sh(&format!("rm {}/shaders/.scratch*", m.dir.display()));
    assert_eq!(code, 0, "{err}");
    let (now, _) = rss(pid);
    reset_peak(pid);
    let target = m.path(&format!("shaders/{}", s.shaders[0].name));
    let (code, _, err) = sh(&format!(
        "dd if=/dev/zero of={} bs=1M count=255 status=none",
        target.display()
    ));
    assert_ne!(code, 0, "255 MiB of zeros is no shader");
    assert!(err.contains("Invalid argument"), "{err}");
    let (_, peak) = rss(pid);
    eprintln!(
        "closing a 255 MiB shader: {} MiB before, peak {} MiB",
        now / MIB,
        peak / MIB
    );
    assert!(
        peak < now + 255 * MIB * 3 / 2,
        "closing a 255 MiB write peaked at {} MiB over {} MiB",
        (peak - now) / MIB,
        now / MIB
    );
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    assert!(log.contains("no Direct3D 9 shader is larger"), "{log}");
    assert_eq!(fs::read(&target).unwrap(), s.shaders[0].bytes);
    m.unmount();

    // -o max_memory sets the budget.
    let m = Mount::new(&s.package, &s.mnt, &["-o", "max_memory=1M"]);
    let (code, _, err) = sh(&format!(
        "dd if=/dev/zero of={} bs=64K count=32 status=none",
        m.path("shaders/.two.tmp").display()
    ));
    assert_ne!(code, 0);
    assert!(err.contains("No space left on device"), "{err}");
    let out = run(shaderfs()
        .arg("mount")
        .arg(&s.package)
        .arg(Path::new("/nonexistent"))
        .args(["-o", "max_memory=lots"]));
    assert_eq!(out.status.code(), Some(1));
}

/// Every file below `dir`, relative and sorted (what `find` lists).
fn listing(dir: &Path) -> Vec<String> {
    let (code, out, err) = sh(&format!(
        "cd {} && find . -mindepth 1 | sort",
        dir.display()
    ));
    assert_eq!(code, 0, "{err}");
    out.lines()
        .filter(|l| !l.starts_with("./.shaderfs"))
        .map(String::from)
        .collect()
}

#[test]
fn records_with_255_byte_names_copy_with_every_tool() {
    if !can_mount() {
        return;
    }
    let Some(corpus) = compiled_shaders() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let of_kind = |ext: &str| corpus.iter().find(|s| s.name.ends_with(ext)).unwrap();
    // Names of 255 bytes, the most the record field holds, two alike but for the end.
    let shaders: Vec<Shader> = [("A", ".vso"), ("B", ".vso"), ("A", ".pso")]
        .iter()
        .map(|(tail, ext)| {
            let name = format!("{}{tail}{ext}", "L".repeat(255 - 1 - ext.len()));
            let model = of_kind(ext);
            Shader {
                name,
                source: model.source.clone(),
                bytes: model.bytes.clone(),
            }
        })
        .collect();
    let package = tmp.path().join("long.sdp");
    write_package(&package, &shaders.iter().collect::<Vec<_>>());
    // Read-write: what `extract` writes, archive.json's `writable` included.
    let m = Mount::new(&package, &tmp.path().join("mnt"), &[]);
    let files = listing(&m.dir);
    // archive.json, four folders, four views each (hlsl/: each shader decompiled).
    assert_eq!(files.len(), 5 + 3 * 4, "{files:#?}");
    for file in &files {
        let name = file.rsplit('/').next().unwrap();
        assert!(name.len() <= 255, "{name}");
    }
    let json = fs::read_to_string(m.path("archive.json")).unwrap();
    for shader in &shaders {
        assert!(
            json.contains(&shader.name),
            "archive.json names {}",
            shader.name
        );
    }
    let out = tmp.path().join("cp");
    let (code, _, err) = sh(&format!("cp -r {} {}", m.dir.display(), out.display()));
    assert_eq!(code, 0, "cp -r: {err}");
    assert_eq!(listing(&out), files);
    let (code, _, err) = sh(&format!(
        "tar cf {} -C {} --exclude=./.shaderfs .",
        tmp.path().join("t.tar").display(),
        m.dir.display()
    ));
    assert_eq!(code, 0, "tar: {err}");
    let (code, _, err) = sh(&format!(
        "rsync -a --exclude=.shaderfs {}/ {}/",
        m.dir.display(),
        tmp.path().join("rsync").display()
    ));
    assert_eq!(code, 0, "rsync: {err}");
    assert_eq!(listing(&tmp.path().join("rsync")), files);
    let extracted = tmp.path().join("x");
    let done = run(shaderfs()
        .arg("extract")
        .arg(&package)
        .arg("-C")
        .arg(&extracted));
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_eq!(
        listing(&extracted),
        files,
        "extract names them as the mount does"
    );
    for file in &files {
        let (a, b) = (m.dir.join(file), extracted.join(file));
        if a.is_file() {
            assert_eq!(fs::read(&a).unwrap(), fs::read(&b).unwrap(), "{file}");
        }
    }
}

/// A tmpfs mounted for a test, unmounted when dropped.
struct Tmpfs(std::path::PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = sh(&format!("umount -l {}", self.0.display()));
    }
}

#[test]
fn an_archive_on_a_read_only_file_system_mounts_read_only_by_itself() {
    let Some(s) = package_setup("ro.sdp") else {
        return;
    };
    let fs_dir = s.package.parent().unwrap().join("fs");
    fs::create_dir_all(&fs_dir).unwrap();
    let (code, _, err) = sh(&format!(
        "mount -t tmpfs -o size=4M tmpfs {}",
        fs_dir.display()
    ));
    if code != 0 {
        assert!(!crate::support::in_ci(), "CI=true but no tmpfs: {err}");
        eprintln!("skipped: cannot mount a tmpfs here ({err})");
        return;
    }
    let _tmpfs = Tmpfs(fs_dir.clone());
    let package = fs_dir.join("ro.sdp");
    fs::copy(&s.package, &package).unwrap();
    let (code, _, err) = sh(&format!("mount -o remount,ro {}", fs_dir.display()));
    assert_eq!(code, 0, "{err}");

    let (m, err) = Mount::saying(&package, &s.mnt, &[]);
    assert!(err.contains("shown read-only: its folder"), "{err}");
    assert!(err.contains("read-only file system"), "{err}");
    let json = fs::read_to_string(m.path("archive.json")).unwrap();
    assert!(json.contains("\"writable\": false"), "{json}");
    use std::os::unix::fs::PermissionsExt;
    let shader = m.path(&format!("shaders/{}", s.shaders[0].name));
    assert_eq!(
        fs::metadata(&shader).unwrap().permissions().mode() & 0o777,
        0o444
    );
    assert_eq!(
        fs::metadata(m.path("shaders"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o555
    );
    let (code, _, err) = sh(&format!(
        "cp {} {}",
        s.shaders[1].source.display(),
        shader.display()
    ));
    assert_ne!(code, 0);
    assert!(err.contains("Read-only file system"), "{err}");
}
