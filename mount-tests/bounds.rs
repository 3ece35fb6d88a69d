//! Bounded whatever is thrown at it: the memory write buffers and scratch files may take,
//! names a view can take, archives the daemon cannot write, and `extract` into a folder
//! with symlinks in it.

use std::fs;
use std::path::Path;

use crate::support::{daemon_pid, package_setup, run, sh, shaderfs, Mount};

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
