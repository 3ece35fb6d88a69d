//! Mounts by a user who is not root: through the setuid fusermount3, with the user's
//! `shaderfs mount`, the mount.fuse3 form, `shaderfs umount`, and the daemon's signals.
//!
//! fusermount3 opens /dev/fuse as the user (libfuse drops to the user's file-system
//! identity for that), so a user mounts where /dev/fuse is readable and writable by them
//! (mode 0666, as distributions ship it) and nowhere else: at mode 0600 the mount fails,
//! and says why. The tests change the mode of /dev/fuse, one at a time (a lock), and put
//! it back afterwards, failed or not; the other mount tests run as root, which opens
//! /dev/fuse whatever its mode.
//!
//! They need root (to make the user and change the mode), `useradd`, `setpriv` and a
//! setuid fusermount3; without them they say they are skipped, except under CI=true.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::support::{
    can_mount, has_exited, in_ci, package_record, package_setup, run, write_package, PackageSetup,
    Shader,
};

const USER: &str = "shaderfs-test";
const DEV_FUSE: &str = "/dev/fuse";

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|p| p.join(program).is_file()))
        .unwrap_or(false)
}

fn fusermount3_is_setuid() -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|p| {
            std::fs::metadata(p.join("fusermount3"))
                .is_ok_and(|m| m.is_file() && m.uid() == 0 && m.mode() & 0o4000 != 0)
        })
    })
}

/// The test user (made once, `useradd -M -r`, if missing), or `None` with the reason
/// printed where this machine cannot run these tests; under CI=true that is a failure.
fn test_user() -> Option<(u32, u32)> {
    if !can_mount() {
        return None;
    }
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let missing: Vec<&str> = [
        (!root, "root"),
        (!on_path("setpriv"), "setpriv"),
        (
            user_ids().is_none() && !on_path("useradd"),
            "useradd (or a user shaderfs-test)",
        ),
        (!fusermount3_is_setuid(), "a setuid-root fusermount3"),
    ]
    .into_iter()
    .filter_map(|(lacking, what)| lacking.then_some(what))
    .collect();
    if !missing.is_empty() {
        assert!(
            !in_ci(),
            "CI=true but the user mount tests cannot run here: they need {}",
            missing.join(", ")
        );
        eprintln!("skipped: the user mount tests need {}", missing.join(", "));
        return None;
    }
    static USER_IDS: OnceLock<Result<(u32, u32), String>> = OnceLock::new();
    let ids = USER_IDS.get_or_init(|| {
        if user_ids().is_none() {
            let out =
                run(Command::new("useradd").args(["-M", "-r", "-s", "/usr/sbin/nologin", USER]));
            // Another test process may have made it meanwhile (exit 9: it exists).
            if !out.status.success() && user_ids().is_none() {
                return Err(format!(
                    "useradd {USER}: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
        user_ids().ok_or_else(|| format!("id {USER}: no such user after useradd"))
    });
    match ids {
        Ok(ids) => Some(*ids),
        Err(e) => panic!("{e}"),
    }
}

fn user_ids() -> Option<(u32, u32)> {
    let name = std::ffi::CString::new(USER).unwrap();
    // SAFETY: an all-zero passwd is valid; getpwnam_r fills it, pointing into `buf`.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16384];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; buf.len() is its size.
    let rc = unsafe {
        libc::getpwnam_r(
            name.as_ptr(),
            &mut entry,
            buf.as_mut_ptr(),
            buf.len(),
            &mut found,
        )
    };
    (rc == 0 && !found.is_null()).then_some((entry.pw_uid, entry.pw_gid))
}

/// Holds /dev/fuse's mode for one test (the tests that change it run one at a time) and
/// puts the mode it found back when dropped, the test failed or not.
struct DevFuseMode {
    original: u32,
    _one_at_a_time: MutexGuard<'static, ()>,
}

impl DevFuseMode {
    fn lock() -> DevFuseMode {
        static LOCK: Mutex<()> = Mutex::new(());
        let guard = LOCK.lock().unwrap_or_else(PoisonError::into_inner);
        let original = std::fs::metadata(DEV_FUSE).unwrap().mode() & 0o7777;
        DevFuseMode {
            original,
            _one_at_a_time: guard,
        }
    }

    fn set(&self, mode: u32) {
        std::fs::set_permissions(DEV_FUSE, std::fs::Permissions::from_mode(mode))
            .unwrap_or_else(|e| panic!("chmod {mode:o} {DEV_FUSE}: {e}"));
    }
}

impl Drop for DevFuseMode {
    fn drop(&mut self) {
        let restored =
            std::fs::set_permissions(DEV_FUSE, std::fs::Permissions::from_mode(self.original));
        if let Err(e) = restored {
            eprintln!(
                "could not put {DEV_FUSE} back to mode {:o}: {e}",
                self.original
            );
        }
    }
}

/// A package and mount point the test user owns, in a folder of theirs, which is also
/// their HOME; XDG_RUNTIME_DIR (where the daemon leaves its pid file) is `run/` in it.
struct UserSetup {
    s: PackageSetup,
    uid: u32,
    gid: u32,
    home: PathBuf,
}

impl UserSetup {
    fn new() -> Option<UserSetup> {
        let (uid, gid) = test_user()?;
        let s = package_setup("shaderpackage003.sdp")?;
        let home = s.package.parent().unwrap().to_path_buf();
        let setup = UserSetup { s, uid, gid, home };
        std::fs::create_dir_all(&setup.s.mnt).unwrap();
        std::fs::create_dir_all(setup.run_dir()).unwrap();
        setup.give(&setup.home);
        Some(setup)
    }

    /// chown -R to the test user.
    fn give(&self, path: &Path) {
        std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid)).unwrap();
        if path.is_dir() {
            for entry in std::fs::read_dir(path).unwrap() {
                self.give(&entry.unwrap().path());
            }
        }
    }

    fn run_dir(&self) -> PathBuf {
        self.home.join("run")
    }

    /// `program ARGS…` as the test user, with no supplementary groups.
    fn as_user(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new("setpriv");
        command
            .arg(format!("--reuid={}", self.uid))
            .arg(format!("--regid={}", self.gid))
            .args(["--clear-groups", "--"])
            .arg(program)
            .env("HOME", &self.home)
            .env("XDG_RUNTIME_DIR", self.run_dir())
            .env("USER", USER)
            .env("LOGNAME", USER)
            .current_dir(&self.home);
        command
    }

    fn shaderfs(&self) -> Command {
        self.as_user(env!("CARGO_BIN_EXE_shaderfs"))
    }

    /// A shell command line as the test user.
    fn sh(&self, script: &str) -> Output {
        run(self.as_user("sh").arg("-c").arg(script))
    }

    /// The pid the user's daemon left for `shaderfs umount` (the only one in `run/`).
    fn daemon_pid(&self) -> i32 {
        let dir = self.run_dir().join("shaderfs");
        let pids: Vec<i32> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "pid"))
            .map(|p| std::fs::read_to_string(p).unwrap().trim().parse().unwrap())
            .collect();
        assert_eq!(pids.len(), 1, "pid files in {}: {pids:?}", dir.display());
        pids[0]
    }

    /// Two different pixel shaders: one to copy over the other.
    fn pixel_pair(&self) -> (&Shader, &Shader) {
        let pixel: Vec<&Shader> = self
            .s
            .shaders
            .iter()
            .filter(|s| s.name.ends_with(".pso"))
            .collect();
        let from = pixel[0];
        let to = pixel
            .iter()
            .find(|s| s.bytes != from.bytes)
            .expect("two different pixel shaders");
        (from, to)
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The mountinfo line of `mountpoint`, if mounted.
fn mountinfo_line(mountpoint: &Path) -> Option<String> {
    let want = format!(" {} ", mountpoint.display());
    shaderfs::mountinfo::read_proc("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .find(|l| l.contains(&want))
        .map(String::from)
}

fn mount_entry(mountpoint: &Path) -> Option<shaderfs::mountinfo::MountEntry> {
    let want = mountpoint.to_string_lossy();
    shaderfs::mountinfo::mounts()
        .into_iter()
        .find(|m| m.mount_point == want)
}

/// Detaches (as root) whatever is still mounted at `dir` when dropped, so that a failed
/// test leaves no mount behind.
struct Detach(PathBuf);

impl Drop for Detach {
    fn drop(&mut self) {
        if mount_entry(&self.0).is_some() {
            let _ = run(Command::new("umount").arg("-l").arg(&self.0));
        }
    }
}

fn wait_for_exit(pid: i32) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !has_exited(pid) {
        assert!(Instant::now() < deadline, "daemon {pid} did not exit");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// As the user: `ls` and `cat` the mount, copy one shader over another, `shaderfs
/// umount` (which returns once the daemon has exited), and find the copy in the package.
fn use_and_unmount(u: &UserSetup, mnt: &Path, package: &Path) {
    let shaders = mnt.join("shaders");
    let out = u.sh(&format!("ls '{}'", shaders.display()));
    assert!(out.status.success(), "ls: {}", text(&out.stderr));
    let mut want: Vec<&str> = u.s.shaders.iter().map(|s| s.name.as_str()).collect();
    want.sort();
    assert_eq!(text(&out.stdout).lines().collect::<Vec<_>>(), want);

    let (from, to) = u.pixel_pair();
    let out = run(u.as_user("cat").arg(shaders.join(&to.name)));
    assert!(out.status.success(), "cat: {}", text(&out.stderr));
    assert!(
        out.stdout == to.bytes,
        "cat {} differs from the package",
        to.name
    );

    let out = run(u
        .as_user("cp")
        .arg(shaders.join(&from.name))
        .arg(shaders.join(&to.name)));
    assert!(out.status.success(), "cp (a commit): {}", text(&out.stderr));

    let pid = u.daemon_pid();
    let out = run(u.shaderfs().arg("umount").arg(mnt));
    assert!(
        out.status.success(),
        "shaderfs umount as {USER}: {}",
        text(&out.stderr)
    );
    assert!(
        has_exited(pid),
        "shaderfs umount returned before the daemon {pid} exited"
    );
    assert!(mount_entry(mnt).is_none(), "still mounted after umount");
    assert!(
        package_record(package, &to.name) == from.bytes,
        "the package does not hold the copied shader"
    );
}

#[test]
fn user_mounts_through_fusermount3() {
    let Some(u) = UserSetup::new() else { return };
    let mode = DevFuseMode::lock();
    let mnt = u.s.mnt.clone();
    let _detach = Detach(mnt.clone());

    // Mode 0600: fusermount3 cannot open /dev/fuse for the user either. The mount fails
    // with exit code 3, naming the mount point and why.
    mode.set(0o600);
    let out = run(u.shaderfs().arg("mount").arg(&u.s.package).arg(&mnt));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "mount at 0600: {err}");
    assert!(
        err.contains(&mnt.display().to_string())
            && err.contains("fusermount3")
            && err.contains("/dev/fuse"),
        "the error should name the mount point, fusermount3 and /dev/fuse: {err}"
    );
    assert!(mount_entry(&mnt).is_none(), "a failed mount left a mount");

    // Root still mounts directly (fuser's mount(2), type `fuse` without a subtype).
    let root_mnt = u.home.join("root-mnt");
    std::fs::create_dir_all(&root_mnt).unwrap();
    let _detach_root = Detach(root_mnt.clone());
    let out = run(crate::support::shaderfs()
        .arg("mount")
        .arg(&u.s.package)
        .arg(&root_mnt)
        .args(["-o", "ro"]));
    assert!(out.status.success(), "root mount: {}", text(&out.stderr));
    assert_eq!(mount_entry(&root_mnt).unwrap().fstype, "fuse.shaderfs");
    let out = run(crate::support::shaderfs().arg("umount").arg(&root_mnt));
    assert!(out.status.success(), "root umount: {}", text(&out.stderr));

    // Mode 0666: the user mounts through fusermount3.
    mode.set(0o666);
    let out = run(u.shaderfs().arg("mount").arg(&u.s.package).arg(&mnt));
    assert!(out.status.success(), "mount at 0666: {}", text(&out.stderr));
    let entry = mount_entry(&mnt).expect("mounted");
    assert_eq!(entry.fstype, "fuse.shaderfs");
    assert_eq!(entry.source, u.s.package.to_string_lossy());
    let line = mountinfo_line(&mnt).unwrap();
    assert!(
        line.contains(&format!("user_id={}", u.uid)) && line.contains("default_permissions"),
        "{line}"
    );
    use_and_unmount(&u, &mnt, &u.s.package);
}

#[test]
fn user_mounts_in_the_mount_fuse3_form() {
    let Some(u) = UserSetup::new() else { return };
    let mode = DevFuseMode::lock();
    mode.set(0o666);
    // A comma and a backslash in the source's path: fusermount3 takes them escaped.
    let folder = u.home.join(r"games,1\x");
    std::fs::create_dir_all(&folder).unwrap();
    let package = folder.join("shaderpackage003.sdp");
    write_package(&package, &u.s.shaders.iter().collect::<Vec<_>>());
    u.give(&folder);
    let mnt = u.s.mnt.clone();
    let _detach = Detach(mnt.clone());

    let out = run(u
        .shaderfs()
        .arg(&package)
        .arg(&mnt)
        .args(["-o", "rw,nodev,nosuid"]));
    assert!(
        out.status.success(),
        "shaderfs SOURCE MNT -o rw as {USER}: {}",
        text(&out.stderr)
    );
    let entry = mount_entry(&mnt).expect("mounted");
    assert_eq!(entry.fstype, "fuse.shaderfs");
    assert_eq!(entry.source, package.to_string_lossy());
    use_and_unmount(&u, &mnt, &package);

    // Read-only reaches the kernel too.
    let out = run(u.shaderfs().arg(&package).arg(&mnt).args(["-o", "ro"]));
    assert!(out.status.success(), "-o ro: {}", text(&out.stderr));
    let line = mountinfo_line(&mnt).unwrap();
    assert!(line.split(' ').nth(5).unwrap().starts_with("ro"), "{line}");
    let (from, to) = u.pixel_pair();
    let out = run(u
        .as_user("cp")
        .arg(mnt.join("shaders").join(&from.name))
        .arg(mnt.join("shaders").join(&to.name)));
    assert!(!out.status.success(), "cp into a read-only mount succeeded");
    let out = run(u.shaderfs().arg("umount").arg(&mnt));
    assert!(out.status.success(), "umount: {}", text(&out.stderr));
}

#[test]
fn user_daemon_unmounts_on_sigterm_and_sigint() {
    let Some(u) = UserSetup::new() else { return };
    let mode = DevFuseMode::lock();
    mode.set(0o666);
    let mnt = u.s.mnt.clone();
    let _detach = Detach(mnt.clone());
    // One pixel shader copied over two others, one for each signal.
    let (from, _) = u.pixel_pair();
    let targets: Vec<&Shader> =
        u.s.shaders
            .iter()
            .filter(|s| s.name.ends_with(".pso") && s.bytes != from.bytes)
            .collect();
    for (signal, to) in [(libc::SIGTERM, targets[0]), (libc::SIGINT, targets[1])] {
        let out = run(u.shaderfs().arg("mount").arg(&u.s.package).arg(&mnt));
        assert!(out.status.success(), "mount: {}", text(&out.stderr));
        let shaders = mnt.join("shaders");
        let out = run(u
            .as_user("cp")
            .arg(shaders.join(&from.name))
            .arg(shaders.join(&to.name)));
        assert!(out.status.success(), "cp (a commit): {}", text(&out.stderr));
        let pid = u.daemon_pid();
        // SAFETY: kill sends a signal to the daemon.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        wait_for_exit(pid);
        assert!(
            mount_entry(&mnt).is_none(),
            "signal {signal}: the daemon exited but left its mount"
        );
        assert!(
            package_record(&u.s.package, &to.name) == from.bytes,
            "signal {signal}: the package does not hold the copied shader"
        );
    }
}

#[test]
fn an_archive_the_user_cannot_write_mounts_read_only_by_itself() {
    let Some(u) = UserSetup::new() else { return };
    let mode = DevFuseMode::lock();
    mode.set(0o666);
    // The package lies in a folder the user may read but not write: a commit could not
    // put its new file there.
    let folder = u.home.join("shared-games");
    std::fs::create_dir_all(&folder).unwrap();
    let package = folder.join("shaderpackage003.sdp");
    write_package(&package, &u.s.shaders.iter().collect::<Vec<_>>());
    let before = std::fs::read(&package).unwrap();
    let mnt = u.s.mnt.clone();
    let _detach = Detach(mnt.clone());

    let out = run(u.shaderfs().arg("mount").arg(&package).arg(&mnt));
    let err = text(&out.stderr);
    assert!(out.status.success(), "mount: {err}");
    assert!(
        err.contains("shown read-only") && err.contains("cannot be written by this user"),
        "{err}"
    );
    // The mount is the user's own: look through the user's eyes.
    let json = text(&run(u.as_user("cat").arg(mnt.join("archive.json"))).stdout);
    assert!(json.contains("\"writable\": false"), "{json}");
    let line = mountinfo_line(&mnt).unwrap();
    assert!(line.split(' ').nth(5).unwrap().starts_with("ro"), "{line}");
    let (from, to) = u.pixel_pair();
    let shader = mnt.join("shaders").join(&to.name);
    let perm = text(&run(u.as_user("stat").args(["-c", "%a"]).arg(&shader)).stdout);
    assert_eq!(perm.trim(), "444", "read-only modes");
    let out = run(u
        .as_user("cp")
        .arg(mnt.join("shaders").join(&from.name))
        .arg(&shader));
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("Read-only file system"),
        "{}",
        text(&out.stderr)
    );
    let out = run(u.shaderfs().arg("umount").arg(&mnt));
    assert!(out.status.success(), "umount: {}", text(&out.stderr));
    assert_eq!(std::fs::read(&package).unwrap(), before);
}
