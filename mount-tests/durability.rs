//! An archive is never lost or torn: not when the daemon is killed in the middle of a
//! commit, not while eight readers read every file as commits land, not when the disk is
//! full or the folder read-only. The tests drive the mount with what a user has (`cp`,
//! `sed -i`, `md5sum`, `kill -9`, `umount -l`) and check what a user would check.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use shaderfs::vfs::VfsOptions;

use crate::support::{
    can_mount, compiled_shaders, corpus, daemon_pid, gen_sgd2, in_ci, lock_holders, package_record,
    package_setup, sh, write_package, Mount, Shader,
};

/// xorshift64: the kill moments are the same in every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn cp(from: &Path, to: &Path) -> (i32, String) {
    let (code, _, err) = sh(&format!("cp {} {}", from.display(), to.display()));
    (code, err)
}

/// What is in a folder, sorted.
fn ls(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The temporary files of commits of `archive` beside it (`.NAME.shaderfs-PID-N`).
fn temps(archive: &Path) -> Vec<String> {
    let name = archive.file_name().unwrap().to_string_lossy();
    let prefix = format!(".{name}.shaderfs-");
    ls(archive.parent().unwrap())
        .into_iter()
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

// ---- kill -9 during commits ----------------------------------------------------------

#[test]
fn a_killed_daemon_leaves_the_old_or_the_new_package() {
    let Some(s) = package_setup("shaderpackage003.sdp") else {
        return;
    };
    let vertex: Vec<&Shader> = s
        .shaders
        .iter()
        .filter(|x| x.name.ends_with(".vso"))
        .collect();
    let target = format!("shaders/{}", vertex[0].name);
    let contents = [vertex[1].source.as_path(), vertex[3].source.as_path()];
    kill_during_commits("package", &s.package, &s.mnt, &target, contents);
    let (code, out, err) = sh(&format!(
        "{} check {}",
        env!("CARGO_BIN_EXE_shaderfs"),
        s.package.display()
    ));
    assert_eq!(code, 0, "shaderfs check: {out}{err}");
}

#[test]
fn a_killed_daemon_leaves_the_old_or_the_new_database() {
    if !can_mount() {
        return;
    }
    let Some(dxil) = corpus("dxil") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let awc = tmp.path().join("sga_win32_60_final.awc");
    gen_sgd2(&awc, &["--programs-per-stage", "6"]).unwrap();
    // Two signed pixel programs (sgd2_write.rs replaces pixel programs with both).
    let (a, b) = (
        dxil.join("resource_arrays.dxil"),
        dxil.join("sampling.dxil"),
    );
    let mnt = tmp.path().join("mnt");
    kill_during_commits("database", &awc, &mnt, "programs/pixel/1.dxil", [&a, &b]);
}

/// Save `contents[0]` and `contents[1]` alternately over `target` in read-write mounts of
/// `archive`, 200 times, each round's last save interrupted by `kill -9` of the daemon at
/// a random moment; after each kill the archive must be the version before that save or
/// the one after it, and the next mount must remove the temporaries the kill left.
fn kill_during_commits(what: &str, archive: &Path, mnt: &Path, target: &str, contents: [&Path; 2]) {
    let started = Instant::now();
    // The two versions of the archive, and how long a save takes, from saves left to end.
    let m = Mount::new(archive, mnt, &[]);
    let mut versions: [Vec<u8>; 2] = Default::default();
    let mut times = Vec::new();
    for round in 0..8 {
        let k = round % 2;
        let t = Instant::now();
        let (code, err) = cp(contents[k], &m.path(target));
        times.push(t.elapsed());
        assert_eq!(code, 0, "cp: {err}");
        assert_eq!(
            fs::read(m.path(target)).unwrap(),
            fs::read(contents[k]).unwrap()
        );
        let bytes = fs::read(archive).unwrap();
        if round < 2 {
            versions[k] = bytes;
        } else {
            assert!(bytes == versions[k], "the same save wrote other bytes");
        }
    }
    m.unmount();
    assert!(versions[0] != versions[1]);
    times.sort();
    let typical = times[times.len() / 2];

    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ what.len() as u64);
    let mut state = 1; // the archive is versions[state]
    let (mut commits, mut kills, mut before, mut after) = (0, 0, 0, 0);
    let (mut left, mut removed, mut stale) = (0, 0, Vec::new());
    while commits < 200 {
        let m = Mount::new(archive, mnt, &[]);
        assert_eq!(
            temps(archive),
            Vec::<String>::new(),
            "a read-write mount kept the temporaries a killed commit left"
        );
        removed += stale.len();
        let pid = daemon_pid(mnt);
        // The daemon alone holds it (seen here, for a moment, on two of its descriptors:
        // one line each in /proc/locks, both with its pid).
        let mut holders = lock_holders(archive);
        holders.dedup();
        assert_eq!(holders, vec![pid], "the daemon holds the lock");
        for _ in 0..rng.below(2) {
            let (code, err) = cp(contents[1 - state], &m.path(target));
            assert_eq!(code, 0, "cp: {err}");
            state = 1 - state;
            assert!(fs::read(archive).unwrap() == versions[state]);
            commits += 1;
        }
        // A save, and the daemon killed during it.
        let mut save = Command::new("cp")
            .arg(contents[1 - state])
            .arg(m.path(target))
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let delay = rng.below(typical.as_micros() as u64 + 1);
        std::thread::sleep(Duration::from_micros(delay));
        let dead = m.kill_daemon();
        let saved = save.wait().unwrap().success();
        let killed = dead.pid;
        drop(dead);
        commits += 1;
        kills += 1;

        let now = fs::read(archive).unwrap();
        if now == versions[state] {
            assert!(
                !saved,
                "kill {kills}: cp succeeded, yet the {what} is the old one"
            );
            before += 1;
        } else if now == versions[1 - state] {
            after += 1;
            state = 1 - state;
        } else {
            panic!(
                "kill {kills} (after {delay} µs): the {what} ({} bytes) is neither the \
                 version before the save ({} bytes) nor after it ({} bytes)",
                now.len(),
                versions[state].len(),
                versions[1 - state].len()
            );
        }
        if let Err(e) = shaderfs::archive::open(archive, VfsOptions::read_only()) {
            panic!("kill {kills}: the {what} does not open: {e}");
        }
        stale = temps(archive);
        let mine = format!("shaderfs-{killed}-");
        assert!(
            stale.iter().all(|t| t.contains(&mine)),
            "{stale:?}: not {killed}'s"
        );
        left += stale.len();
    }
    // The next mount cleans up after the last kill too, and shows what is on disk.
    let m = Mount::new(archive, mnt, &[]);
    assert_eq!(temps(archive), Vec::<String>::new());
    removed += stale.len();
    assert_eq!(
        fs::read(m.path(target)).unwrap(),
        fs::read(contents[state]).unwrap()
    );
    m.unmount();
    assert!(fs::read(archive).unwrap() == versions[state]);
    eprintln!(
        "{what}: {commits} saves, {kills} with the daemon killed 0–{typical:.1?} (a save's \
         time) after the save started: {before} left the version before, {after} the \
         version after; {left} temporaries left beside the {what}, {removed} removed by the \
         next mount; {:.1?} in all",
        started.elapsed()
    );
}

// ---- readers during commits ----------------------------------------------------------

#[test]
fn eight_readers_never_see_a_torn_file_while_200_commits_land() {
    let Some(s) = package_setup("shaderpackage004.sdp") else {
        return;
    };
    let started = Instant::now();
    let m = Mount::new(&s.package, &s.mnt, &[]);
    // X is replaced by cp with A or B; Y is edited by sed -i on its asm, and back.
    let vertex: Vec<&Shader> = s
        .shaders
        .iter()
        .filter(|x| x.name.ends_with(".vso"))
        .collect();
    let (x, a, b) = (vertex[0], vertex[1], vertex[3]);
    let y = s
        .shaders
        .iter()
        .find(|x| x.name == "H14_PS_CONST_COLOR_PS_2_0.pso")
        .unwrap();
    let x_path = m.path(&format!("shaders/{}", x.name));
    let y_asm = m.path(&format!("asm/{}.asm", y.name));
    let text = fs::read_to_string(&y_asm).unwrap();
    assert_eq!(text.matches("    mov oC0, r0\n").count(), 1, "{text}");
    let commit = |i: usize| {
        let script = match (i % 2, i / 2 % 2) {
            (0, k) => format!("cp {} {}", [a, b][k].source.display(), x_path.display()),
            (_, 0) => format!("sed -i 's/mov oC0/mov_sat oC0/' {}", y_asm.display()),
            _ => format!("sed -i 's/mov_sat oC0/mov oC0/' {}", y_asm.display()),
        };
        let (code, _, err) = sh(&script);
        assert_eq!(code, 0, "{script}: {err}");
    };

    let views = |name: &str| {
        [
            format!("shaders/{name}"),
            format!("asm/{name}.asm"),
            format!("ctab/{name}.json"),
        ]
    };
    let mut files = vec!["archive.json".to_string()];
    files.extend(s.shaders.iter().flat_map(|shader| views(&shader.name)));
    let md5sum = format!("md5sum {}", files.join(" "));
    // Readers read the views that change eight times as often as the others.
    let changing_views = [views(&x.name), views(&y.name)].concat();
    let again: String = changing_views.iter().map(|v| format!(" {v}")).collect();
    let reader_md5sum = format!("{md5sum}{}", again.repeat(7));
    let quiet = || {
        let (code, out, err) = sh(&format!("cd {} && {md5sum}", m.dir.display()));
        assert_eq!(code, 0, "{err}");
        out
    };
    // Every version every file has, read while no save runs: the package as written,
    // then after each save of a whole cycle (X: A, Y edited, X: B, Y back, X: A).
    let mut expected: HashMap<String, HashSet<String>> = HashMap::new();
    note(&mut expected, quiet());
    for i in 0..5 {
        commit(i);
        note(&mut expected, quiet());
    }
    let versions = |e: &HashMap<String, HashSet<String>>| e.values().map(HashSet::len).sum();
    let known: usize = versions(&expected);
    for view in files.iter().skip(1).filter(|f| !changing_views.contains(f)) {
        assert_eq!(expected[view].len(), 1, "{view} changed");
    }
    let (_, sums, _) = sh(&format!(
        "md5sum {} {} {} | cut -c1-32",
        x.source.display(),
        a.source.display(),
        b.source.display()
    ));
    assert_eq!(
        expected[&format!("shaders/{}", x.name)],
        sums.lines().map(String::from).collect::<HashSet<_>>()
    );
    assert_eq!(expected[&format!("shaders/{}", y.name)].len(), 2);

    // Eight readers, each a shell reading every file over and over with md5sum.
    let tmp = tempfile::tempdir().unwrap();
    let stop = tmp.path().join("stop");
    let script = tmp.path().join("reader.sh");
    fs::write(
        &script,
        format!(
            "exec >\"$1\" 2>&1\ncd {} || exit 1\nwhile [ ! -e {} ]; do {reader_md5sum}; done\n",
            m.dir.display(),
            stop.display()
        ),
    )
    .unwrap();
    let logs: Vec<PathBuf> = (0..8)
        .map(|i| tmp.path().join(format!("reader{i}")))
        .collect();
    let mut readers: Vec<_> = logs
        .iter()
        .map(|log| Command::new("sh").arg(&script).arg(log).spawn().unwrap())
        .collect();
    // Every reader has read every file once before the first save.
    let deadline = Instant::now() + Duration::from_secs(60);
    while logs
        .iter()
        .any(|l| fs::metadata(l).map_or(0, |m| m.len()) == 0)
    {
        assert!(Instant::now() < deadline, "a reader never read");
        std::thread::sleep(Duration::from_millis(10));
    }
    for i in 5..205 {
        commit(i);
    }
    fs::write(&stop, "").unwrap();
    for r in &mut readers {
        r.wait().unwrap();
    }
    note(&mut expected, quiet());
    assert_eq!(
        versions(&expected),
        known,
        "a version the first cycle did not have"
    );

    let (mut reads, mut of_changing, mut failed, mut torn) = (0, 0, Vec::new(), Vec::new());
    for log in &logs {
        for line in fs::read_to_string(log).unwrap().lines() {
            reads += 1;
            match line.split_once("  ") {
                _ if line.starts_with("md5sum: ") => failed.push(line.to_string()),
                Some((hash, file)) if expected.get(file).is_some_and(|e| e.contains(hash)) => {
                    of_changing += changing_views.iter().any(|v| v == file) as u64;
                }
                _ => torn.push(line.to_string()),
            }
        }
    }
    eprintln!(
        "8 readers checked {reads} reads of the {} files ({of_changing} of the 6 that \
         changed) while 200 saves landed: {} failed, {} read a version the file never had; \
         {:.1?} in all",
        files.len(),
        failed.len(),
        torn.len(),
        started.elapsed()
    );
    assert!(
        torn.is_empty(),
        "reads of a version the file never had: {torn:#?}"
    );
    assert!(failed.is_empty(), "reads that failed: {failed:#?}");
    m.unmount();
    // 205 saves: X ends as A, and Y's edit was made and undone 51 times.
    assert_eq!(package_record(&s.package, &x.name), a.bytes);
    assert_eq!(package_record(&s.package, &y.name), y.bytes);
}

/// Add the hashes of `md5sum`'s output to each file's versions.
fn note(versions: &mut HashMap<String, HashSet<String>>, md5sum: String) {
    for line in md5sum.lines() {
        let (hash, file) = line.split_once("  ").unwrap();
        versions.entry(file.into()).or_default().insert(hash.into());
    }
}

// ---- the folder refuses the commit -----------------------------------------------------

/// A tmpfs of `size` mounted on `dir`, unmounted when dropped; `None` when not root
/// (skipped; a failure under CI=true).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn new(dir: &Path, size: &str) -> Option<Tmpfs> {
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            assert!(!in_ci(), "CI=true but not root: cannot mount a tmpfs");
            eprintln!("skipped: mounting a tmpfs needs root");
            return None;
        }
        fs::create_dir_all(dir).unwrap();
        let (code, _, err) = sh(&format!(
            "mount -t tmpfs -o size={size} shaderfs-test {}",
            dir.display()
        ));
        assert_eq!(code, 0, "mount -t tmpfs: {err}");
        Some(Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        sh(&format!("umount -l {}", self.0.display()));
    }
}

/// A package on a tmpfs of its own, and a mount point outside it.
struct OnTmpfs {
    shaders: Vec<Shader>,
    package: PathBuf,
    mnt: PathBuf,
    disk: Tmpfs,
    _tmp: tempfile::TempDir,
}

fn package_on_tmpfs() -> Option<OnTmpfs> {
    if !can_mount() {
        return None;
    }
    let shaders = compiled_shaders()?;
    let tmp = tempfile::tempdir().unwrap();
    let disk = Tmpfs::new(&tmp.path().join("disk"), "1m")?;
    let package = disk.0.join("shaderpackage005.sdp");
    write_package(&package, &shaders.iter().collect::<Vec<_>>());
    Some(OnTmpfs {
        shaders,
        package,
        mnt: tmp.path().join("mnt"),
        disk,
        _tmp: tmp,
    })
}

/// `cp` of a valid shader must fail at close with `why`, named in `.shaderfs/errors`,
/// and leave the package and its folder as they were.
fn save_fails(t: &OnTmpfs, m: &Mount, why: &str) {
    let (victim, replacement) = (&t.shaders[0], &t.shaders[2]);
    let before = fs::read(&t.package).unwrap();
    let folder = ls(&t.disk.0);
    let (code, err) = cp(
        &replacement.source,
        &m.path(&format!("shaders/{}", victim.name)),
    );
    assert_ne!(code, 0, "cp succeeded");
    assert!(
        err.contains("failed to close") && err.contains(why),
        "{err}"
    );
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    let line = log.lines().last().unwrap_or_default();
    eprintln!("{err}.shaderfs/errors: {line}");
    assert!(
        line.contains(&format!("shaders/{}", victim.name)) && line.contains(why),
        "{log}"
    );
    assert!(
        fs::read(&t.package).unwrap() == before,
        "the package changed"
    );
    assert_eq!(ls(&t.disk.0), folder, "a temporary file was left");
    assert_eq!(
        fs::read(m.path(&format!("shaders/{}", victim.name))).unwrap(),
        victim.bytes
    );
}

/// The same `cp` succeeds and lands in the package.
fn save_lands(t: &OnTmpfs, m: Mount) {
    let (victim, replacement) = (&t.shaders[0], &t.shaders[2]);
    let (code, err) = cp(
        &replacement.source,
        &m.path(&format!("shaders/{}", victim.name)),
    );
    assert_eq!(code, 0, "{err}");
    m.unmount();
    assert_eq!(package_record(&t.package, &victim.name), replacement.bytes);
    assert_eq!(temps(&t.package), Vec::<String>::new());
}

#[test]
fn a_full_disk_fails_the_close_and_keeps_the_archive() {
    let Some(t) = package_on_tmpfs() else { return };
    let filler = t.disk.0.join("filler");
    // Fill the disk, then free less room than the package takes.
    let (_, _, err) = sh(&format!("dd if=/dev/zero of={} bs=4k", filler.display()));
    assert!(err.contains("No space left on device"), "{err}");
    let (code, _, err) = sh(&format!("truncate -s -8K {}", filler.display()));
    assert_eq!(code, 0, "{err}");
    let (_, free, _) = sh(&format!(
        "df --output=avail -B1 {} | tail -1",
        t.disk.0.display()
    ));
    let size = fs::metadata(&t.package).unwrap().len();
    assert!(free.trim().parse::<u64>().unwrap() < size, "{free} free");

    let m = Mount::new(&t.package, &t.mnt, &[]);
    save_fails(&t, &m, "No space left on device");
    fs::remove_file(&filler).unwrap();
    save_lands(&t, m);
}

#[test]
fn a_read_only_folder_fails_the_close_and_keeps_the_archive() {
    let Some(t) = package_on_tmpfs() else { return };
    let m = Mount::new(&t.package, &t.mnt, &[]);
    let remount = |how: &str| {
        let (code, _, err) = sh(&format!("mount -o remount,{how} {}", t.disk.0.display()));
        assert_eq!(code, 0, "mount -o remount,{how}: {err}");
    };
    remount("ro");
    save_fails(&t, &m, "Read-only file system");
    remount("rw");
    save_lands(&t, m);
}

/// archive.json's `writable` says what a save would do when it is read: false once the
/// archive's folder is remounted read-only (a save then fails), true again once it is
/// read-write (a save lands), with `stat` and `read` agreeing each time.
#[test]
fn archive_json_says_whether_a_save_would_land_as_the_folder_turns_read_only_and_back() {
    let Some(t) = package_on_tmpfs() else { return };
    let m = Mount::new(&t.package, &t.mnt, &[]);
    let remount = |how: &str| {
        let (code, _, err) = sh(&format!("mount -o remount,{how} {}", t.disk.0.display()));
        assert_eq!(code, 0, "mount -o remount,{how}: {err}");
    };
    let writable = || {
        let path = m.path("archive.json");
        let text = fs::read(&path).unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().len(),
            text.len() as u64,
            "stat and read agree"
        );
        let json: serde_json::Value = serde_json::from_slice(&text).unwrap();
        json["writable"].as_bool().unwrap()
    };
    assert!(writable(), "a read-write mount of a writable folder");
    remount("ro");
    assert!(!writable(), "the folder is read-only now");
    save_fails(&t, &m, "Read-only file system");
    assert!(!writable(), "still read-only");
    remount("rw");
    assert!(writable(), "read-write again");
    save_lands(&t, m);
}

// ---- the mount taken off under the daemon ------------------------------------------------

/// `umount -l` takes a mount out of the tree while programs keep files open under it; the
/// daemon must still end when told to (it used to wait for those programs, ignoring
/// SIGTERM, with no mount point left to unmount).
#[test]
fn a_daemon_whose_mount_was_taken_off_ends_on_sigterm() {
    let Some(s) = package_setup("shaderpackage006.sdp") else {
        return;
    };
    let before = fs::read(&s.package).unwrap();
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let pid = daemon_pid(&s.mnt);
    // A program holds a file of the mount open.
    let mut holder = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec 3<{}; echo opened; exec sleep 120",
            m.path("archive.json").display()
        ))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    std::io::Read::read_to_string(
        &mut std::io::Read::take(holder.stdout.take().unwrap(), 7),
        &mut said,
    )
    .unwrap();
    assert_eq!(said, "opened\n");
    let (code, _, err) = sh(&format!("umount -l {}", s.mnt.display()));
    assert_eq!(code, 0, "umount -l: {err}");
    // The mount is gone; what is left to end is the daemon.
    std::mem::forget(m);
    // SAFETY: kill sends a signal to the daemon.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !crate::support::has_exited(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let ended = crate::support::has_exited(pid);
    let _ = holder.kill();
    let _ = holder.wait();
    assert!(
        ended,
        "the daemon {pid} did not end on SIGTERM with its mount taken off"
    );
    assert_eq!(fs::read(&s.package).unwrap(), before, "the package changed");
}
