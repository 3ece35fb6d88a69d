//! Replacing GTA V programs through a real mount, as a modder would: `cp` a compiled
//! container over `programs/pixel/N.dxil`, check it with `cmp` and the JSON views,
//! unmount, and find every other byte of the database as it was. A container whose
//! digest does not verify is refused (EINVAL, the reason in `.shaderfs/errors`) unless
//! the mount has `-o sign`.

use std::fs;
use std::path::Path;
use std::time::Instant;

use serde_json::Value;
use shaderfs::archive::sgd2::read;
use shaderfs::shader::dxbc::container;

use crate::support::{can_mount, corpus, gen_sgd2, run, sh, shaderfs, Mount};

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

fn listed(census: &Value, list: &str, program: &str) -> bool {
    census[list]["programs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p == program)
}

/// Every program but `skip` (group, index) and every effect byte-identical.
fn only_changed(before: &[u8], after: &[u8], skip: Option<(usize, usize)>) {
    let a = read::index(before).unwrap();
    let b = read::index(after).unwrap();
    for (g, (ga, gb)) in a.groups.iter().zip(&b.groups).enumerate() {
        assert_eq!(ga.programs.len(), gb.programs.len());
        for (i, (p, q)) in ga.programs.iter().zip(&gb.programs).enumerate() {
            let record = |bytes: &[u8], p: &read::Program| {
                let container = if Some((g, i)) == skip {
                    Vec::new()
                } else {
                    bytes[p.container()].to_vec()
                };
                (
                    bytes[p.name()].to_vec(),
                    p.tag,
                    container,
                    bytes[p.table()].to_vec(),
                    bytes[p.bindings()].to_vec(),
                )
            };
            assert!(
                record(before, p) == record(after, q),
                "program {g}/{i} changed"
            );
        }
    }
    assert!(before[a.effects_offset..] == after[b.effects_offset..]);
}

#[test]
fn a_program_is_replaced_by_cp_and_nothing_else_changes() {
    if !can_mount() {
        return;
    }
    let Some(dxil) = corpus("dxil") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let awc = tmp.path().join("sga_win32_60_final.awc");
    gen_sgd2(&awc, &["--programs-per-stage", "6"]).unwrap();
    let original = fs::read(&awc).unwrap();
    let m = Mount::new(&awc, &tmp.path().join("mnt"), &[]);
    let at = |rel: &str| m.path(rel).display().to_string();

    // The census before: pixel program 1 indexes no unbounded sampler array.
    let census = read_json(&m.path("census.json"));
    let target = "programs/pixel/1.dxil";
    assert!(!listed(
        &census,
        "unbounded_sampler_array_pixel_programs",
        target
    ));
    // resource_arrays.hlsl declares `SamplerState smp[] : register(s0, space2)`.
    let new = dxil.join("resource_arrays.dxil");
    let (code, _, _) = sh(&format!(
        "grep -q 'smp\\[\\] : register(s0, space2)' {}",
        dxil.join("resource_arrays.hlsl").display()
    ));
    assert_eq!(code, 0);

    let (code, _, err) = sh(&format!("cp {} {}", new.display(), at(target)));
    assert_eq!(code, 0, "cp: {err}");
    let (code, _, err) = sh(&format!("cmp {} {}", new.display(), at(target)));
    assert_eq!(code, 0, "{err}");
    let j = read_json(&m.path("programs/pixel/1.json"));
    let bytes = fs::read(&new).unwrap();
    assert_eq!(
        j["container"]["crc32"],
        format!("{:#010x}", crc32fast::hash(&bytes))
    );
    assert_eq!(j["container"]["digest"]["status"], "valid");
    assert_eq!(j["container"]["program"]["profile"], "ps_6_0");
    let census = read_json(&m.path("census.json"));
    assert!(listed(
        &census,
        "unbounded_sampler_array_pixel_programs",
        target
    ));

    // A container changed after it was signed: refused, and nothing changes.
    let tampered = tmp.path().join("tampered.dxil");
    let mut bad = fs::read(dxil.join("sampling.dxil")).unwrap();
    let last = bad.len() - 1;
    bad[last] ^= 0x5A;
    fs::write(&tampered, &bad).unwrap();
    let before = fs::read(&awc).unwrap();
    let (code, _, err) = sh(&format!(
        "cp {} {}",
        tampered.display(),
        at("programs/pixel/2.dxil")
    ));
    assert_ne!(code, 0, "a container with a wrong digest was accepted");
    assert!(err.contains("Invalid argument"), "{err}");
    let (_, log, _) = sh(&format!("cat {}", at(".shaderfs/errors")));
    assert!(
        log.contains("programs/pixel/2.dxil") && log.contains("digest"),
        "{log}"
    );
    assert_eq!(fs::read(&awc).unwrap(), before, "the database changed");
    m.unmount();

    // Re-read with the reader: the replaced container, every other byte as it was.
    let after = fs::read(&awc).unwrap();
    only_changed(&original, &after, Some((1, 1)));
    let index = read::index(&after).unwrap();
    assert_eq!(&after[index.groups[1].programs[1].container()], &bytes[..]);

    // With -o sign the same copy is accepted and signed.
    let m = Mount::new(&awc, &tmp.path().join("mnt"), &["-o", "sign"]);
    let (code, _, err) = sh(&format!(
        "cp {} {}",
        tampered.display(),
        m.path("programs/pixel/2.dxil").display()
    ));
    assert_eq!(code, 0, "cp with -o sign: {err}");
    let j = read_json(&m.path("programs/pixel/2.json"));
    assert_eq!(j["container"]["digest"]["status"], "valid");
    let (code, _, _) = sh(&format!(
        "cmp -s {} {}",
        tampered.display(),
        m.path("programs/pixel/2.dxil").display()
    ));
    assert_ne!(code, 0, "the digest was not written");
    m.unmount();
    let signed = fs::read(&awc).unwrap();
    only_changed(&after, &signed, Some((1, 2)));
    let index = read::index(&signed).unwrap();
    let stored = &signed[index.groups[1].programs[2].container()];
    // What sign writes: the digest, and the HASH part (the bitcode's MD5).
    let hash = container::parse(stored)
        .unwrap()
        .part(b"HASH")
        .unwrap()
        .data
        .clone();
    for (i, (s, b)) in stored.iter().zip(&bad).enumerate() {
        assert!(
            s == b || (4..20).contains(&i) || (hash.start + 4..hash.end).contains(&i),
            "byte {i} changed"
        );
    }
    let (code, out, err) = sh(&format!("{} check {}", shaderfs_path(), awc.display()));
    assert_eq!(code, 0, "check after signing: {out}{err}");
}

fn shaderfs_path() -> &'static str {
    env!("CARGO_BIN_EXE_shaderfs")
}

#[test]
fn check_reports_a_wrong_digest() {
    let Some(dxil) = corpus("dxil") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let awc = tmp.path().join("db.awc");
    gen_sgd2(&awc, &["--programs-per-stage", "2"]).unwrap();
    let mut bytes = fs::read(&awc).unwrap();
    let index = read::index(&bytes).unwrap();
    let c = index.groups[0].programs[1].container();
    bytes[c.end - 1] ^= 1;
    fs::write(&awc, &bytes).unwrap();
    let out = run(shaderfs().arg("check").arg(&awc));
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("programs/vertex/1.dxil") && said.contains("does not match"),
        "{said}"
    );
    assert!(dxil.is_dir());
}

/// The full-size database: one program replaced through the mount, timed against
/// copying the database once (`cp db copy && sync`) in the same run.
#[test]
fn a_full_size_replacement_costs_about_a_copy() {
    if !can_mount() {
        return;
    }
    let Some(dxil) = corpus("dxil") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let awc = tmp.path().join("sga_win32_60_final.awc");
    gen_sgd2(&awc, &["--full"]).unwrap();
    let original = fs::read(&awc).unwrap();
    let copy = tmp.path().join("copy.awc");
    let started = Instant::now();
    let (code, _, err) = sh(&format!("cp {} {} && sync", awc.display(), copy.display()));
    let copied = started.elapsed();
    assert_eq!(code, 0, "{err}");

    let m = Mount::new(&awc, &tmp.path().join("mnt"), &[]);
    let new = dxil.join("resource_arrays.dxil");
    let started = Instant::now();
    let (code, _, err) = sh(&format!(
        "cp {} {}",
        new.display(),
        m.path("programs/pixel/7000.dxil").display()
    ));
    let replaced = started.elapsed();
    assert_eq!(code, 0, "{err}");
    m.unmount();
    only_changed(&original, &fs::read(&awc).unwrap(), Some((1, 7000)));
    let ratio = replaced.as_secs_f64() / copied.as_secs_f64();
    eprintln!(
        "full-size database ({} MB): replacing one program took {replaced:?}; `cp db copy && \
         sync` took {copied:?}; ratio {ratio:.2}",
        original.len() >> 20
    );
    // Generous: debug builds on a shared machine. The release figure is in the report.
    assert!(replaced.as_secs_f64() < 60.0, "{replaced:?}");
}

/// The archive file's identity: a commit replaces it (a new file renamed over it).
fn file_identity(path: &Path) -> (u64, std::time::SystemTime) {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(path).unwrap();
    (meta.ino(), meta.modified().unwrap())
}

#[test]
fn rsync_restores_a_tree_and_saves_that_change_nothing_leave_the_archive() {
    if !can_mount() {
        return;
    }
    if corpus("dxil").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let awc = tmp.path().join("sga_win32_60_final.awc");
    gen_sgd2(&awc, &["--programs-per-stage", "6"]).unwrap();
    let original = fs::read(&awc).unwrap();
    let m = Mount::new(&awc, &tmp.path().join("mnt"), &[]);
    let pixel = m.path("programs/pixel").display().to_string();
    let backup = tmp.path().join("backup");
    let (code, _, err) = sh(&format!("rsync -a {pixel}/ {}/", backup.display()));
    assert_eq!(code, 0, "rsync out: {err}");

    // A program replaced, then the folder restored from the copy: rsync renames its
    // temporaries over the program and over its read-only views (which by then show the
    // restored program again), and sets their times.
    let (code, _, err) = sh(&format!("cp {pixel}/3.dxil {pixel}/1.dxil"));
    assert_eq!(code, 0, "cp: {err}");
    assert!(fs::read(&awc).unwrap() != original);
    let (code, _, err) = sh(&format!("rsync -a {}/ {pixel}/", backup.display()));
    assert_eq!(code, 0, "rsync back: {err}");
    assert!(
        fs::read(&awc).unwrap() == original,
        "the database is as it was"
    );
    let (code, changed, err) = sh(&format!("rsync -ai {}/ {pixel}/", backup.display()));
    assert_eq!(code, 0, "{err}");
    assert_eq!(changed, "", "a second rsync finds nothing to do");
    let (code, _, err) = sh(&format!("diff -r {} {pixel}", backup.display()));
    assert_eq!(code, 0, "{err}");

    // Saves that change nothing leave the archive's file alone: an editor writing back
    // what it read, sed -i that matched nothing (also on a read-only view, which it
    // replaces by a rename), cp of the same bytes.
    let before = file_identity(&awc);
    for script in [
        format!("sed -i 's/no such text/x/' {pixel}/2.json {pixel}/2.ll"),
        format!("cp {}/2.dxil {pixel}/2.dxil", backup.display()),
        format!("cat {pixel}/4.dxil > {pixel}/4.dxil.tmp && mv {pixel}/4.dxil.tmp {pixel}/4.dxil"),
    ] {
        let (code, _, err) = sh(&script);
        assert_eq!(code, 0, "{script}: {err}");
        assert_eq!(file_identity(&awc), before, "{script} rewrote the database");
    }
    // A rename over a read-only view that would change it is still refused.
    fs::write(tmp.path().join("other.json"), b"{}\n").unwrap();
    let (code, _, err) = sh(&format!(
        "cp {} {pixel}/.x.tmp && mv {pixel}/.x.tmp {pixel}/2.json",
        tmp.path().join("other.json").display()
    ));
    assert_ne!(code, 0, "a different 2.json was taken");
    assert!(err.contains("Operation not permitted"), "{err}");
    assert!(fs::read(&awc).unwrap() == original);
}
