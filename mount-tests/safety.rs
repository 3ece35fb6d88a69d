//! Write-back that never loses anyone's work, through a real mount: one writer per
//! archive, archives another program changes, names that cannot land, sizes and times
//! that tell the truth, moves from other file systems, and comments in asm views.

use std::fs;
use std::os::fd::IntoRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::support::{
    can_mount, corpus, gen_sgd2, package_records, package_setup, run, sh, shaderfs, write_package,
    Mount, PackageSetup, Shader,
};

fn setup() -> Option<PackageSetup> {
    package_setup("ex.sdp")
}

fn vertex_shaders(s: &PackageSetup) -> Vec<&Shader> {
    s.shaders
        .iter()
        .filter(|x| x.name.ends_with(".vso"))
        .collect()
}

/// Wait (up to 5 s) until `check` holds; whether it did.
fn eventually(check: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    check()
}

/// Close a file and return what close() said (Rust's `drop` would swallow it).
fn close(file: fs::File) -> Result<(), std::io::Error> {
    let fd = file.into_raw_fd();
    // SAFETY: we own the descriptor and close it once.
    match unsafe { libc::close(fd) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

fn errors(m: &Mount) -> String {
    fs::read_to_string(m.path(".shaderfs/errors")).unwrap()
}

fn mtime(path: &Path) -> SystemTime {
    fs::symlink_metadata(path).unwrap().modified().unwrap()
}

/// Every file and folder below `dir`, relative to it.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n == ".shaderfs") {
            continue;
        }
        out.push(path.clone());
        if path.is_dir() && !path.is_symlink() {
            out.extend(tree(&path));
        }
    }
    out
}

#[test]
fn a_second_read_write_mount_is_refused_and_read_only_mounts_follow_commits() {
    let Some(s) = setup() else { return };
    let tmp = s.package.parent().unwrap();
    let m2 = Mount::new(&s.package, &tmp.join("m2"), &[]);
    let m3 = tmp.join("m3");
    fs::create_dir_all(&m3).unwrap();
    let out = run(shaderfs().arg("mount").arg(&s.package).arg(&m3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let first = fs::canonicalize(&m2.dir).unwrap();
    let pid = fs::read_to_string(shaderfs::mount::pid_file(&first)).unwrap();
    assert!(err.contains(&first.display().to_string()), "{err}");
    assert!(err.contains(&format!("pid {}", pid.trim())), "{err}");

    // Read-only mounts may sit beside it, and show what it saves.
    let m4 = Mount::new(&s.package, &tmp.join("m4"), &["-o", "ro"]);
    let name = &s.shaders[0].name;
    let asm = format!("asm/{name}.asm");
    let (code, _, err) = sh(&format!(
        "sed -i '$a // saved through m2' {}",
        m2.path(&asm).display()
    ));
    assert_eq!(code, 0, "{err}");
    assert!(
        eventually(|| fs::read_to_string(m4.path(&asm))
            .unwrap()
            .contains("// saved through m2")),
        "the read-only mount shows the commit"
    );
    m2.unmount();
    // Once the writer is gone, another may take its place.
    let m3 = Mount::new(&s.package, &m3, &[]);
    assert!(fs::read_to_string(m3.path(&asm))
        .unwrap()
        .contains("// saved through m2"));
}

#[test]
fn an_archive_another_program_replaces_is_never_written_over() {
    let Some(s) = setup() else { return };
    let tmp = s.package.parent().unwrap().to_path_buf();
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let vs = vertex_shaders(&s);
    let (a, b, c, d) = (vs[0], vs[1], vs[2], vs[3]);
    // A writer opens a view of the package as it is now, and keeps it open.
    let held = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(m.path(&format!("asm/{}.asm", a.name)))
        .unwrap();

    // Another program replaces the package: only two of its shaders, the second changed.
    let replacement = tmp.join("new.sdp");
    let changed = Shader {
        name: b.name.clone(),
        source: c.source.clone(),
        bytes: c.bytes.clone(),
    };
    write_package(&replacement, &[a, &changed]);
    let new_bytes = fs::read(&replacement).unwrap();
    fs::rename(&replacement, &s.package).unwrap();
    let listed = || {
        let mut names: Vec<String> = fs::read_dir(m.path("shaders"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let mut want = vec![a.name.clone(), b.name.clone()];
    want.sort();
    assert!(
        eventually(|| listed() == want),
        "the mount shows the new package"
    );
    assert_eq!(
        fs::read(m.path(&format!("shaders/{}", b.name))).unwrap(),
        c.bytes
    );

    // What the writer took from the old package is not saved over the new one.
    let mut held = held;
    use std::io::Write;
    held.write_all(b"// an edit of the old package\n").unwrap();
    let err = close(held).expect_err("the save is refused");
    assert_eq!(err.raw_os_error(), Some(libc::EIO), "{err}");
    assert!(errors(&m).contains("changed it on disk"), "{}", errors(&m));
    assert_eq!(fs::read(&s.package).unwrap(), new_bytes);

    // A save made after looking again lands in the new package, and keeps the rest.
    let (code, _, err) = sh(&format!(
        "sed -i '$a // tweak' {}",
        m.path(&format!("asm/{}.asm", a.name)).display()
    ));
    assert_eq!(code, 0, "{err}");
    let now = package_records(&s.package);
    assert_eq!(now.len(), 2);
    assert_eq!(now[1].1, c.bytes, "the other program's change kept");

    // Replaced again, and saved at once: the save never lands in the old package.
    let again = tmp.join("again.sdp");
    write_package(&again, &[b, a]);
    let again_bytes = fs::read(&again).unwrap();
    fs::rename(&again, &s.package).unwrap();
    let (code, _, _) = sh(&format!(
        "cp {} {}",
        d.source.display(),
        m.path(&format!("shaders/{}", a.name)).display()
    ));
    let after = package_records(&s.package);
    match code {
        0 => {
            assert_eq!(after.len(), 2, "saved into the replacement");
            assert_eq!(after[0].1, b.bytes);
            assert_eq!(after[1].1, d.bytes);
        }
        _ => assert_eq!(fs::read(&s.package).unwrap(), again_bytes),
    }
}

#[test]
fn names_that_cannot_land_are_refused_and_scratch_files_are_reported() {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let before = fs::read(&s.package).unwrap();
    let (code, _, err) = sh(&format!("touch {}", m.path("shaders/notes.txt").display()));
    assert_ne!(code, 0);
    assert!(err.contains("Operation not permitted"), "{err}");
    assert!(!m.path("shaders/notes.txt").exists());
    let log = errors(&m);
    assert!(
        log.contains("shaders/notes.txt: not created") && log.contains(".vso"),
        "{log}"
    );

    // An editor's scratch file is accepted, and said to live in memory only.
    fs::write(m.path("shaders/.notes.swp"), b"scratch").unwrap();
    assert_eq!(fs::read(m.path("shaders/.notes.swp")).unwrap(), b"scratch");
    let log = errors(&m);
    assert!(
        log.contains("shaders/.notes.swp: kept in memory only, not in the archive"),
        "{log}"
    );
    assert_eq!(fs::read(&s.package).unwrap(), before);
    let out = run(shaderfs().arg("umount").arg(&m.dir));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "umount failed: {err}");
    assert!(err.contains("shaders/.notes.swp"), "umount says: {err}");
    std::mem::forget(m);
}

#[test]
fn a_program_past_the_end_of_its_group_is_refused() {
    if !can_mount() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db.awc");
    let Some(()) = gen_sgd2(&db, &["--programs-per-stage", "4"]) else {
        return;
    };
    let Some(dxil) = corpus("dxil") else { return };
    let container = fs::read_dir(&dxil)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "dxil"))
        .unwrap();
    let before = fs::read(&db).unwrap();
    let m = Mount::new(&db, &tmp.path().join("mnt"), &[]);
    let (code, _, err) = sh(&format!(
        "cp {} {}",
        container.display(),
        m.path("programs/pixel/99999.dxil").display()
    ));
    assert_ne!(code, 0);
    assert!(err.contains("Operation not permitted"), "{err}");
    assert!(errors(&m).contains("past the end"), "{}", errors(&m));
    assert!(!m.path("programs/pixel/99999.dxil").exists());
    m.unmount();
    assert_eq!(fs::read(&db).unwrap(), before);
}

/// `stat`'s size and the bytes `cat` gives, for one file.
fn stat_and_cat(path: &Path) -> (u64, usize) {
    let (_, size, _) = sh(&format!("stat -c %s {}", path.display()));
    let (_, count, _) = sh(&format!("cat {} | wc -c", path.display()));
    (size.trim().parse().unwrap(), count.trim().parse().unwrap())
}

#[test]
fn stat_and_read_agree_after_truncate_during_a_write_and_after_a_refused_save() {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let vs = vertex_shaders(&s);
    let (x, y) = (vs[0], vs[1]);
    let path = m.path(&format!("shaders/{}", x.name));
    let before = fs::read(&s.package).unwrap();

    // Emptied (not a save): everyone sees it empty, the package keeps the shader.
    let (code, _, err) = sh(&format!("truncate -s 0 {}", path.display()));
    assert_eq!(code, 0, "{err}");
    assert_eq!(stat_and_cat(&path), (0, 0));
    assert_eq!(fs::read(&s.package).unwrap(), before);
    assert!(
        errors(&m).contains("emptied and not saved"),
        "{}",
        errors(&m)
    );
    // Content arrives: saved.
    let (code, _, err) = sh(&format!("cat {} >> {}", y.source.display(), path.display()));
    assert_eq!(code, 0, "{err}");
    let size = y.bytes.len();
    assert_eq!(stat_and_cat(&path), (size as u64, size));
    let place = s.shaders.iter().position(|s| s.name == x.name).unwrap();
    assert_eq!(package_records(&s.package)[place].1, y.bytes);

    // A writer's buffer is its own: others see the committed file meanwhile.
    let mut writer = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    use std::io::Write;
    writer.write_all(b"half a shader").unwrap();
    assert_eq!(stat_and_cat(&path), (size as u64, size));
    let err = close(writer).expect_err("half a shader is refused");
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    // After the refused save, the committed file again, to stat and to read.
    assert_eq!(stat_and_cat(&path), (size as u64, size));
    let (code, _, _) = sh(&format!("echo broken | cat > {}", path.display()));
    assert_ne!(code, 0);
    assert_eq!(stat_and_cat(&path), (size as u64, size));
    // Whole-folder tools copy what they read.
    let copy = s.package.parent().unwrap().join("copy");
    let (code, _, err) = sh(&format!(
        "cp -a {} {}",
        m.path("shaders").display(),
        copy.display()
    ));
    assert_eq!(code, 0, "{err}");
    for entry in fs::read_dir(&copy).unwrap() {
        let entry = entry.unwrap();
        let shown = fs::read(m.path(&format!("shaders/{}", entry.file_name().to_string_lossy())));
        assert_eq!(fs::read(entry.path()).unwrap(), shown.unwrap());
    }
}

#[test]
fn an_effect_that_does_not_assemble_lists_stats_and_fails_only_its_read() {
    if !can_mount() {
        return;
    }
    let Some(dir) = corpus("sha") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("shaders");
    fs::create_dir_all(&folder).unwrap();
    for name in ["demo_static2x.sha", "demo_car_body.sha"] {
        fs::copy(dir.join(name), folder.join(name)).unwrap();
    }
    let m = Mount::new(&folder, &tmp.path().join("mnt"), &["-o", "ro"]);
    let (code, out, err) = sh(&format!("ls -l {}", m.path("demo_static2x.sha").display()));
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains('?'), "{out}");
    let bad = m.path("demo_static2x.sha/vertex.vso");
    assert!(fs::metadata(&bad).is_ok());
    let err = fs::read(&bad).expect_err("it does not assemble");
    assert_eq!(err.raw_os_error(), Some(libc::EIO));
    assert!(
        errors(&m).contains("demo_static2x.sha/vertex.vso: cannot read"),
        "{}",
        errors(&m)
    );
    // Its HLSL view is the block decompiled: it fails the same way.
    let hlsl = fs::read(m.path("demo_static2x.sha/vertex.hlsl")).expect_err("no block to show");
    assert_eq!(hlsl.raw_os_error(), Some(libc::EIO));
    // cp -r reports the block's two files and copies every other.
    let out_dir = tmp.path().join("out");
    let (code, _, err) = sh(&format!("cp -r {} {}", m.dir.display(), out_dir.display()));
    assert_ne!(code, 0);
    assert!(
        err.contains("vertex.vso") && err.contains("vertex.hlsl"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(out_dir.join("demo_static2x.sha/pixel.pso").exists());
    assert!(out_dir.join("demo_car_body.sha/vertex.vso").exists());
    // extract does the same, and says so with its exit code.
    let out = run(shaderfs()
        .arg("extract")
        .arg(&folder)
        .arg("-C")
        .arg(tmp.path().join("x")));
    assert_eq!(out.status.code(), Some(2));
    assert!(tmp.path().join("x/demo_static2x.sha/pixel.pso").exists());
    assert!(String::from_utf8_lossy(&out.stderr).contains("demo_static2x.sha/vertex.vso"));
}

#[test]
fn a_commit_changes_the_times_of_what_changed_and_nothing_else() {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let files = tree(&m.dir);
    let before: Vec<SystemTime> = files.iter().map(|f| mtime(f)).collect();
    std::thread::sleep(Duration::from_millis(50));
    let x = &s.shaders[0].name;
    let (code, _, err) = sh(&format!(
        "sed -i '$a // newer' {}",
        m.path(&format!("asm/{x}.asm")).display()
    ));
    assert_eq!(code, 0, "{err}");
    let mut changed: Vec<String> = files
        .iter()
        .zip(&before)
        .filter(|(f, t)| mtime(f) != **t)
        .map(|(f, _)| f.strip_prefix(&m.dir).unwrap().display().to_string())
        .collect();
    changed.sort();
    // sed -i made its temporary file in asm/: the folder changed too, as on any disk.
    let mut want = vec![
        "archive.json".to_string(),
        "asm".to_string(),
        format!("asm/{x}.asm"),
        format!("ctab/{x}.json"),
        format!("hlsl/{x}.hlsl"),
        format!("shaders/{x}"),
    ];
    want.sort();
    assert_eq!(changed, want);

    // Modes, owners and times a user sets hold; none is accepted and dropped.
    let y = m.path(&format!("shaders/{}", s.shaders[1].name));
    fs::set_permissions(&y, fs::Permissions::from_mode(0o600)).unwrap();
    let (code, _, err) = sh(&format!("chown 1234:4321 {}", y.display()));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = sh(&format!("touch -d '2020-01-02 03:04:05Z' {}", y.display()));
    assert_eq!(code, 0, "{err}");
    let check = || {
        let meta = fs::metadata(&y).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o600);
        assert_eq!((meta.uid(), meta.gid()), (1234, 4321));
        assert_eq!(meta.mtime(), 1_577_934_245);
    };
    check();
    // Another shader's commit leaves them.
    let (code, _, err) = sh(&format!(
        "sed -i '$a // newest' {}",
        m.path(&format!("asm/{x}.asm")).display()
    ));
    assert_eq!(code, 0, "{err}");
    check();
    // A read-only file cannot be made writable.
    let err = fs::set_permissions(m.path("archive.json"), fs::Permissions::from_mode(0o666))
        .expect_err("archive.json cannot be written");
    assert_eq!(err.raw_os_error(), Some(libc::EPERM));
}

#[test]
fn moves_from_another_file_system_save_in_place() {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let elsewhere = tempfile::tempdir_in("/dev/shm").unwrap();
    // A shader moved in over another keeps its place in the package.
    let vs = vertex_shaders(&s);
    let (third, replacement) = (vs[2], vs[5]);
    let place = s.shaders.iter().position(|x| x.name == third.name).unwrap();
    let moved = elsewhere.path().join("x.vso");
    let bytes = replacement.bytes.clone();
    fs::write(&moved, &bytes).unwrap();
    let (code, _, err) = sh(&format!(
        "mv {} {}",
        moved.display(),
        m.path(&format!("shaders/{}", third.name)).display()
    ));
    assert_eq!(code, 0, "{err}");
    let now = package_records(&s.package);
    assert_eq!(now.len(), s.shaders.len());
    assert_eq!(now[place], (third.name.clone(), bytes));

    // An asm view edited elsewhere and moved back in is a save of that view.
    let asm = m.path(&format!("asm/{}.asm", s.shaders[0].name));
    let edited = elsewhere.path().join("y.asm");
    let text = fs::read_to_string(&asm).unwrap() + "// moved in\n";
    fs::write(&edited, &text).unwrap();
    let (code, _, err) = sh(&format!("mv {} {}", edited.display(), asm.display()));
    assert_eq!(code, 0, "{err}");
    assert!(fs::read_to_string(&asm).unwrap().contains("// moved in"));
    assert_eq!(
        package_records(&s.package)[0].0,
        s.shaders[0].name,
        "still first"
    );
    assert!(!fs::read_to_string(m.path(".shaderfs/errors"))
        .unwrap()
        .contains("not shown"));
}

#[test]
fn a_pass_edited_elsewhere_and_moved_back_is_saved() {
    if !can_mount() {
        return;
    }
    let Some(dir) = corpus("sha") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let effect = tmp.path().join("demo_car_body.sha");
    fs::copy(dir.join("demo_car_body.sha"), &effect).unwrap();
    let m = Mount::new(&effect, &tmp.path().join("mnt"), &[]);
    let pass = m.path("passes/T0/P0.json");
    let elsewhere = tempfile::tempdir_in("/dev/shm").unwrap();
    let p = elsewhere.path().join("p.json");
    let (code, _, err) = sh(&format!(
        "sed 's/0.0174533f/0.5f/' {} > {} && mv {} {}",
        pass.display(),
        p.display(),
        p.display(),
        pass.display()
    ));
    assert_eq!(code, 0, "{err}");
    let text = fs::read_to_string(&effect).unwrap();
    assert!(text.contains("0.5f, 1.0f, 0.5f, 0.0f"), "{text}");
    assert!(!text.contains("0.0174533f"));
}

#[test]
fn comments_written_into_an_asm_view_survive_the_save() {
    let Some(s) = setup() else { return };
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let x = &s.shaders[0].name;
    let asm = m.path(&format!("asm/{x}.asm"));
    let text = fs::read_to_string(&asm).unwrap();
    let version = text
        .lines()
        .position(|l| l.trim_start().starts_with("vs_") || l.trim_start().starts_with("ps_"))
        .unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines.insert(version + 1, "    // tweaked for the night sky".into());
    let last = lines
        .iter()
        .rposition(|l| l.starts_with("    ") && !l.trim_start().starts_with("//"))
        .unwrap();
    lines[last].push_str(" // brighter");
    let edited = lines.join("\n") + "\n";
    fs::write(&asm, &edited).unwrap();
    let shown = fs::read_to_string(&asm).unwrap();
    assert!(
        shown.contains("    // tweaked for the night sky\n"),
        "{shown}"
    );
    assert!(
        shown.contains(&format!(
            "{} // brighter",
            lines[last].trim_end_matches(" // brighter")
        )),
        "{shown}"
    );
    // Saving the text unchanged leaves the package byte-identical.
    let before = fs::read(&s.package).unwrap();
    let again = s.package.parent().unwrap().join("again.asm");
    fs::write(&again, &shown).unwrap();
    let (code, _, err) = sh(&format!("cp {} {}", again.display(), asm.display()));
    assert_eq!(code, 0, "{err}");
    assert_eq!(fs::read(&s.package).unwrap(), before);
}
