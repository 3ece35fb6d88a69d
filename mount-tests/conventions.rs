//! Mount conventions a Linux user expects: the mount's type, refusing a folder with files
//! in it or a second mount on the same place, `-o debug`, `df`, a clean foreground
//! unmount, and `umount -z`.

use std::fs;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{package_setup, run, sh, shaderfs, Mount};

#[test]
fn the_mount_is_fuse_shaderfs_and_refuses_what_would_hide_files() {
    let Some(s) = package_setup("conv.sdp") else {
        return;
    };
    let m = Mount::new(&s.package, &s.mnt, &["-o", "debug"]);
    let (code, out, err) = sh(&format!("findmnt -n -o FSTYPE,SOURCE {}", m.dir.display()));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.split_whitespace().collect::<Vec<_>>(),
        ["fuse.shaderfs", &s.package.display().to_string()]
    );
    // A second mount on the same place is refused.
    let again = run(shaderfs()
        .arg("mount")
        .arg(&s.package)
        .arg(&m.dir)
        .args(["-o", "ro"]));
    assert_eq!(again.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already a FUSE mount point"));
    // -o debug logs every request, in a log of this mount's own.
    fs::read(m.path(&format!("shaders/{}", s.shaders[0].name))).unwrap();
    let log = shaderfs::mount::pid_file(&fs::canonicalize(&m.dir).unwrap()).with_extension("log");
    let text = fs::read_to_string(&log).unwrap();
    assert!(text.contains("LOOKUP") && text.contains("READ"), "{text}");
    // df shows the space left where the archive lies.
    let (code, out, _) = sh(&format!("df -P {} | tail -1", m.dir.display()));
    assert_eq!(code, 0);
    let avail: u64 = out.split_whitespace().nth(3).unwrap().parse().unwrap();
    assert!(avail > 0, "{out}");
    m.unmount();
    let text = fs::read_to_string(&log).unwrap_or_default();
    let m = Mount::new(&s.package, &s.mnt, &["-o", "debug"]);
    let fresh = fs::read_to_string(&log).unwrap();
    assert!(fresh.len() < text.len(), "each mount starts a fresh log");
    m.unmount();

    // A folder with files in it is refused unless -o nonempty.
    let full = s.package.parent().unwrap().join("full");
    fs::create_dir_all(&full).unwrap();
    fs::write(full.join("mine.txt"), b"x").unwrap();
    let out = run(shaderfs().arg("mount").arg(&s.package).arg(&full));
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-o nonempty"));
    let m = Mount::new(&s.package, &full, &["-o", "ro,nonempty"]);
    assert!(m.path("archive.json").exists());
    m.unmount();
    assert!(full.join("mine.txt").exists());
}

#[test]
fn foreground_unmounts_cleanly_and_umount_z_detaches() {
    let Some(s) = package_setup("fg.sdp") else {
        return;
    };
    fs::create_dir_all(&s.mnt).unwrap();
    let child = shaderfs()
        .arg("mount")
        .arg(&s.package)
        .arg(&s.mnt)
        .arg("-f")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !s.mnt.join("archive.json").exists() {
        assert!(
            Instant::now() < deadline,
            "the foreground mount did not answer"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = run(shaderfs().arg("umount").arg(&s.mnt));
    assert!(out.status.success());
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success());
    let said = String::from_utf8_lossy(&done.stderr);
    assert!(
        said.trim().is_empty(),
        "a clean unmount says nothing: {said}"
    );

    // umount -z detaches at once, even with a file open under the mount.
    let m = Mount::new(&s.package, &s.mnt, &["-o", "ro"]);
    let open = fs::File::open(m.path("archive.json")).unwrap();
    let out = run(shaderfs().arg("umount").arg("-z").arg(&m.dir));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!shaderfs::mount::is_mounted(
        &fs::canonicalize(&m.dir).unwrap()
    ));
    drop(open);
    std::mem::forget(m);
}

/// The lines `scripts/setup` prints for a new user to try on the mounted example.
fn setup_suggestions() -> Vec<String> {
    let script = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/setup")).unwrap();
    let start = script.find("is mounted:").expect("setup's message");
    let message = &script[start..script[start..].find("\nMSG").unwrap() + start];
    message
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .map(|l| l.split("   #").next().unwrap().trim().to_string())
        .collect()
}

#[test]
fn what_setup_suggests_works_on_the_example() {
    if !crate::support::can_mount() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let package = tmp.path().join("shaderpackage-example.sdp");
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/shaderpackage-example.sdp"
    );
    fs::copy(example, &package).unwrap();
    let before = fs::read(&package).unwrap();
    let m = Mount::new(&package, &tmp.path().join("mnt"), &[]);
    let suggestions = setup_suggestions();
    assert!(suggestions.len() >= 4, "{suggestions:?}");
    for line in &suggestions {
        if line.starts_with("shaderfs umount") {
            continue;
        }
        let line = line.replace("example/mnt", &m.dir.display().to_string());
        let (code, out, err) = sh(&line);
        assert_eq!(code, 0, "{line}: {err}");
        if !line.starts_with("sed -i") {
            assert!(!out.trim().is_empty(), "{line} printed nothing");
        }
    }
    // The edit it suggests is one: the package changed, and still checks.
    m.unmount();
    assert!(
        fs::read(&package).unwrap() != before,
        "the suggested edit changed nothing"
    );
    let check = run(shaderfs().arg("check").arg(&package));
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
}

/// Where the kernel lets FUSE daemons use io_uring (`enable_uring`), requests come over
/// it, to a thread per CPU waiting at the idle scheduling class; elsewhere, and with
/// `SHADERFS_TUNE=no_uring`, over /dev/fuse. Either way a save lands. (`scripts/test`
/// runs the mount tests once over each where it may turn the setting on.)
#[test]
fn requests_come_over_io_uring_where_the_kernel_allows_it() {
    let Some(s) = package_setup("uring.sdp") else {
        return;
    };
    let enabled = fs::read_to_string("/sys/module/fuse/parameters/enable_uring")
        .is_ok_and(|v| v.trim() == "Y")
        && !std::env::var("SHADERFS_TUNE").is_ok_and(|t| t.contains("no_uring"));
    let m = Mount::new(&s.package, &s.mnt, &["-o", "debug"]);
    let shader = &s.shaders[0];
    let asm = m.path(&format!("asm/{}.asm", shader.name));
    let before = fs::read(&s.package).unwrap();
    let text = fs::read_to_string(&asm).unwrap();
    let edited = text.replacen("mov r0, v1", "mov r0, v0", 1);
    assert_ne!(edited, text, "the shader has no `mov r0, v1` to change");
    fs::write(&asm, &edited).unwrap();
    assert!(fs::read_to_string(&asm).unwrap().contains("mov r0, v0"));
    assert_ne!(
        fs::read(&s.package).unwrap(),
        before,
        "the save did not land"
    );

    let pid = crate::support::daemon_pid(&m.dir);
    let threads: Vec<(String, String)> = fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| {
            let t = t.ok()?.path();
            let comm = fs::read_to_string(t.join("comm")).ok()?.trim().to_string();
            // `policy` in /proc/PID/task/TID/sched: 0 normal, 5 idle.
            let sched = fs::read_to_string(t.join("sched")).unwrap_or_default();
            let policy = sched
                .lines()
                .find(|l| l.starts_with("policy"))
                .and_then(|l| l.split(':').nth(1))
                .map(|p| p.trim().to_string())
                .unwrap_or_default();
            Some((comm, policy))
        })
        .collect();
    let uring: Vec<_> = threads
        .iter()
        .filter(|(c, _)| c.starts_with("uring-"))
        .collect();
    let log = shaderfs::mount::pid_file(&fs::canonicalize(&m.dir).unwrap()).with_extension("log");
    let log = fs::read_to_string(&log).unwrap();
    let over_uring = |op: &str| {
        log.lines()
            .any(|l| l.contains(&format!(" {op} over io_uring queue")))
    };
    if enabled {
        assert!(!uring.is_empty(), "no io_uring threads: {threads:?}");
        assert!(uring.iter().all(|(_, p)| p == "5"), "{threads:?}");
        for op in ["LOOKUP", "OPEN", "READ", "WRITE", "FLUSH"] {
            assert!(over_uring(op), "no {op} over io_uring in the log:\n{log}");
        }
    } else {
        assert!(uring.is_empty(), "{threads:?}");
        assert!(!log.contains("over io_uring"), "{log}");
        assert!(log.contains("OPEN"), "{log}");
    }
    m.unmount();
}
