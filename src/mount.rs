//! Mounting: `-o` options, the detaching daemon, and `umount`.
//!
//! `shaderfs mount` opens and indexes the archive in the calling process (so a malformed
//! archive is reported there, with exit code 2), then forks; the child starts a new
//! session, mounts, and tells the parent through a pipe that the mount answers. The
//! parent returns only then. `umount` unmounts and waits for the daemon to exit, so every
//! commit it was making is on disk when it returns.
//!
//! Root mounts directly (fuser's mount(2)). A user who is not root, or a process that
//! cannot open /dev/fuse, mounts through the setuid `fusermount3` ([`crate::fusermount`]),
//! and unmounts through it too.

use std::fs;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::fuse::FuseFs;
use crate::kernel_mount::Mounted;
use crate::tuning::{cores, uring_threads, worker_threads, Tuning};
use crate::vfs::{OpenError, Vfs, VfsOptions};

/// Exit codes (DESIGN.md "Command line").
pub const EXIT_USAGE: i32 = 1;
pub const EXIT_MALFORMED: i32 = 2;
pub const EXIT_MOUNT: i32 = 3;
/// `check`: nothing wrong was found, but something could not be checked (an HLSL shader
/// for a profile the compiler does not compile yet).
pub const EXIT_UNCHECKED: i32 = 4;

/// A failure with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            code: EXIT_USAGE,
            message: message.into(),
        }
    }
    pub fn mount(message: impl Into<String>) -> Failure {
        Failure {
            code: EXIT_MOUNT,
            message: message.into(),
        }
    }
}

impl From<OpenError> for Failure {
    fn from(e: OpenError) -> Failure {
        match e {
            OpenError::Usage(m) => Failure::usage(m),
            OpenError::Malformed(e) => Failure {
                code: EXIT_MALFORMED,
                message: e.message,
            },
            OpenError::Busy(m) => Failure::mount(m),
        }
    }
}

/// The `-o` options shaderfs takes (`=` ends those that take a value).
pub const OPTIONS: &[&str] = &[
    "ro",
    "rw",
    "allow_other",
    "allow_root",
    "uid=",
    "gid=",
    "umask=",
    "backup",
    "sign",
    "max_memory=",
    "nonempty",
    "debug",
];

/// The generic mount flags passed on to the kernel.
pub const KERNEL_FLAGS: &[&str] = &[
    "dev", "nodev", "suid", "nosuid", "exec", "noexec", "atime", "noatime", "sync", "async",
    "dirsync",
];

/// Parsed `-o` options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountOptions {
    pub writable: bool,
    pub allow_other: bool,
    pub allow_root: bool,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub umask: Option<u32>,
    pub backup: bool,
    /// Write the retail digest into saved DXBC containers instead of refusing a wrong
    /// one (SGD2 program replacement).
    pub sign: bool,
    /// `nonempty`: mount over a folder that has files in it (hiding them).
    pub nonempty: bool,
    /// `max_memory=SIZE`: what write buffers and scratch files may hold in all.
    pub max_memory: Option<usize>,
    pub debug: bool,
    /// Generic mount flags `mount.fuse3` passes on (`nodev`, `noatime`, …), handed to the
    /// kernel as they are.
    pub kernel: Vec<fuser::MountOption>,
}

impl Default for MountOptions {
    fn default() -> MountOptions {
        MountOptions {
            writable: true,
            allow_other: false,
            allow_root: false,
            uid: None,
            gid: None,
            umask: None,
            backup: false,
            sign: false,
            nonempty: false,
            max_memory: None,
            debug: false,
            kernel: Vec::new(),
        }
    }
}

impl MountOptions {
    /// Parse one or more comma-separated `-o` lists. Unknown options are an error.
    pub fn parse<'a>(lists: impl IntoIterator<Item = &'a str>) -> Result<MountOptions, String> {
        use fuser::MountOption as K;
        let mut o = MountOptions::default();
        for opt in lists.into_iter().flat_map(|l| l.split(',')) {
            let (key, value) = match opt.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (opt, None),
            };
            let number = |radix: u32| -> Result<u32, String> {
                let v = value.ok_or_else(|| format!("option {key} needs a value ({key}=N)"))?;
                u32::from_str_radix(v, radix)
                    .map_err(|_| format!("option {key}={v}: not a valid number"))
            };
            match (key, value) {
                ("", None) => {}
                ("ro", None) => o.writable = false,
                ("rw", None) => o.writable = true,
                ("allow_other", None) => o.allow_other = true,
                ("allow_root", None) => o.allow_root = true,
                ("uid", _) => o.uid = Some(number(10)?),
                ("gid", _) => o.gid = Some(number(10)?),
                ("umask", _) => {
                    let m = number(8)?;
                    if m > 0o777 {
                        return Err(format!("option umask={m:o}: at most 777"));
                    }
                    o.umask = Some(m);
                }
                ("backup", None) => o.backup = true,
                ("sign", None) => o.sign = true,
                ("nonempty", None) => o.nonempty = true,
                ("max_memory", _) => {
                    let v = value.ok_or("option max_memory needs a size (max_memory=512M)")?;
                    o.max_memory = Some(parse_size(v).ok_or_else(|| {
                        format!(
                            "option max_memory={v}: expected a size in bytes, or with K, M or \
                             G (max_memory=512M)"
                        )
                    })?);
                }
                ("debug", None) => o.debug = true,
                ("dev", None) => o.kernel.push(K::Dev),
                ("nodev", None) => o.kernel.push(K::NoDev),
                ("suid", None) => o.kernel.push(K::Suid),
                ("nosuid", None) => o.kernel.push(K::NoSuid),
                ("exec", None) => o.kernel.push(K::Exec),
                ("noexec", None) => o.kernel.push(K::NoExec),
                ("atime", None) => o.kernel.push(K::Atime),
                ("noatime", None) => o.kernel.push(K::NoAtime),
                ("sync", None) => o.kernel.push(K::Sync),
                ("async", None) => o.kernel.push(K::Async),
                ("dirsync", None) => o.kernel.push(K::DirSync),
                // Accepted from fstab lines, meaningless to a FUSE file system.
                ("nodiratime" | "relatime" | "strictatime" | "lazytime", None) => {}
                (_, Some(v))
                    if matches!(key, "ro" | "rw" | "backup" | "sign" | "debug" | "nonempty") =>
                {
                    return Err(format!("option {key} takes no value (got {key}={v})"));
                }
                _ => {
                    return Err(format!(
                        "unknown mount option '{opt}' (known: {}; and the generic flags {})",
                        OPTIONS.join(", "),
                        KERNEL_FLAGS.join(", ")
                    ));
                }
            }
        }
        if o.allow_other && o.allow_root {
            return Err("options allow_other and allow_root exclude each other".into());
        }
        Ok(o)
    }

    pub fn vfs_options(&self, tuning: &Tuning) -> VfsOptions {
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        VfsOptions {
            writable: self.writable,
            backup: self.backup,
            sign: self.sign,
            uid: self.uid.unwrap_or(uid),
            gid: self.gid.unwrap_or(gid),
            umask: self.umask,
            cache_bytes: tuning.cache_bytes,
            max_memory: self.max_memory.unwrap_or(crate::vfs::fs::MAX_MEMORY),
            page_cache: true,
        }
    }

    fn fuser_config(&self, source: &Path, tuning: &Tuning) -> fuser::Config {
        use fuser::MountOption as K;
        let mut config = fuser::Config::default();
        config.mount_options = vec![
            K::FSName(source.display().to_string()),
            K::Subtype("shaderfs".into()),
            K::DefaultPermissions,
            if self.writable { K::RW } else { K::RO },
        ];
        config.mount_options.extend(self.kernel.iter().cloned());
        config.acl = if self.allow_other {
            fuser::SessionACL::All
        } else if self.allow_root {
            fuser::SessionACL::RootAndOwner
        } else {
            fuser::SessionACL::Owner
        };
        config.n_threads = Some(tuning.threads.unwrap_or_else(worker_threads));
        config.clone_fd = true;
        config
    }
}

/// `4096`, `64K`, `512M`, `2G` (powers of 1024; a trailing `B` or `iB` is allowed).
fn parse_size(text: &str) -> Option<usize> {
    let upper = text.trim().to_ascii_uppercase();
    let digits = upper.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let shift = match &upper[digits.len()..] {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return None,
    };
    digits.parse::<usize>().ok()?.checked_mul(1 << shift)
}

fn canonical_mountpoint(mountpoint: &Path) -> Result<PathBuf, Failure> {
    let path = fs::canonicalize(mountpoint)
        .map_err(|e| Failure::usage(format!("{}: {e}", mountpoint.display())))?;
    if !path.is_dir() {
        return Err(Failure::usage(format!(
            "{}: the mount point must be a directory",
            mountpoint.display()
        )));
    }
    Ok(path)
}

/// Where the daemon of a mount point leaves its process id for `umount`.
pub fn pid_file(mountpoint: &Path) -> PathBuf {
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(d) if uid != 0 => PathBuf::from(d).join("shaderfs"),
        _ if uid == 0 => PathBuf::from("/run/shaderfs"),
        _ => std::env::temp_dir().join(format!("shaderfs-{uid}")),
    };
    let key = crate::vfs::name::escape(mountpoint.as_os_str().as_encoded_bytes());
    dir.join(format!("{key}.pid"))
}

/// `shaderfs mount`: open, then mount in the foreground or as a detached daemon.
pub fn mount(
    source: &Path,
    mountpoint: &Path,
    options: &MountOptions,
    foreground: bool,
) -> Result<(), Failure> {
    let mountpoint = canonical_mountpoint(mountpoint)?;
    let source = fs::canonicalize(source)
        .map_err(|e| Failure::usage(format!("{}: {e}", source.display())))?;
    if is_mounted(&mountpoint) {
        return Err(Failure::mount(format!(
            "{}: already a FUSE mount point; unmount it first",
            mountpoint.display()
        )));
    }
    let has_files = fs::read_dir(&mountpoint)
        .map_err(|e| Failure::usage(format!("{}: {e}", mountpoint.display())))?
        .next()
        .is_some();
    if has_files && !options.nonempty {
        return Err(Failure::mount(format!(
            "{}: not empty; mounting would hide its files (mount over it anyway with -o \
             nonempty)",
            mountpoint.display()
        )));
    }
    let tuning = Tuning::from_env().map_err(Failure::usage)?;
    let vfs = Arc::new(crate::archive::open(&source, options.vfs_options(&tuning))?);
    crate::vfs::release_free_memory();
    // An archive that cannot be replaced where it lies is shown read-only: say so, and
    // when that is every archive, mount read-only.
    for why in vfs.read_only_because() {
        eprintln!("shaderfs: {why}");
    }
    let read_only;
    let options = if options.writable && !vfs.options().writable {
        read_only = MountOptions {
            writable: false,
            ..options.clone()
        };
        &read_only
    } else {
        options
    };
    // One writer per archive: a second read-write mount stops here, naming the first.
    if options.writable {
        vfs.lock_archives()?;
    }
    if foreground {
        return serve(vfs, &source, &mountpoint, options, &tuning, None);
    }

    let mut fds = [0i32; 2];
    // SAFETY: pipe writes two descriptors into the array we own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Failure::mount(format!(
            "pipe: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: both descriptors are fresh and owned only here.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: no other thread exists yet in this process (the vfs spawns none), so the
    // child may continue to run Rust code.
    match unsafe { libc::fork() } {
        -1 => Err(Failure::mount(format!(
            "fork: {}",
            std::io::Error::last_os_error()
        ))),
        0 => {
            drop(read_end);
            // SAFETY: plain system calls in the child.
            unsafe {
                libc::setsid();
            }
            detach_stdio(options.debug, &mountpoint);
            let code = match serve(vfs, &source, &mountpoint, options, &tuning, Some(write_end)) {
                Ok(()) => 0,
                Err(f) => {
                    log::error!("{}", f.message);
                    f.code
                }
            };
            std::process::exit(code);
        }
        _child => {
            drop(write_end);
            // The daemon serves its own copy; freeing this one (a database's tree is tens
            // of thousands of nodes) would only delay the answer.
            std::mem::forget(vfs);
            let mut answer = String::new();
            let _ = fs::File::from(read_end).read_to_string(&mut answer);
            match answer.strip_prefix("ok") {
                Some(_) => Ok(()),
                None if answer.is_empty() => Err(Failure::mount(format!(
                    "{}: the mount daemon exited before the mount was ready",
                    mountpoint.display()
                ))),
                None => Err(Failure::mount(answer)),
            }
        }
    }
}

/// The daemon's standard streams go to /dev/null, or with `-o debug` to a log file.
fn detach_stdio(debug: bool, mountpoint: &Path) {
    let target = if debug {
        let log = pid_file(mountpoint).with_extension("log");
        if let Some(dir) = log.parent() {
            let _ = fs::create_dir_all(dir);
        }
        // A fresh log for each mount.
        fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(log)
    } else {
        fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
    };
    if let Ok(file) = target {
        use std::os::fd::AsRawFd;
        let null = fs::File::open("/dev/null");
        // SAFETY: dup2 onto the standard descriptors of this process.
        unsafe {
            if let Ok(null) = &null {
                libc::dup2(null.as_raw_fd(), 0);
            }
            libc::dup2(file.as_raw_fd(), 1);
            libc::dup2(file.as_raw_fd(), 2);
        }
    }
}

/// Mount and answer requests until unmounted. `ready` (the daemon's pipe) hears "ok" once
/// the mount answers, or the reason it failed.
fn serve(
    vfs: Arc<Vfs>,
    source: &Path,
    mountpoint: &Path,
    options: &MountOptions,
    tuning: &Tuning,
    ready: Option<OwnedFd>,
) -> Result<(), Failure> {
    let tell = |message: &str| {
        if let Some(fd) = &ready {
            if let Ok(fd) = fd.try_clone() {
                let _ = fs::File::from(fd).write_all(message.as_bytes());
            }
        }
    };
    malloc_settings();
    // The daemon forked from the command that took the archives' locks: it takes them
    // again itself, so that /proc/locks names it to a second mount.
    if options.writable && ready.is_some() {
        if let Err(e) = vfs.relock_archives() {
            tell(&e.to_string());
            return Err(e.into());
        }
    }
    // Signals that end the daemon are taken by one thread, which unmounts cleanly.
    block_termination_signals();
    // io_uring's rings and threads are ready before the kernel is asked for them: until
    // every queue is registered it holds all requests.
    let rings = tuning
        .uring
        .then(|| crate::uring::Rings::prepare(uring_threads()))
        .flatten();
    let fs = FuseFs::new(vfs.clone(), tuning.clone(), rings.is_some());
    let known = fs.known();
    let (ops, granted) = (fs.ops(), fs.uring_granted());
    let config = options.fuser_config(source, tuning);
    let (session, mounted, device) = match start_session(fs, source, mountpoint, &config) {
        Ok(started) => started,
        Err(e) => {
            let message = format!("{}: cannot mount: {e}", mountpoint.display());
            tell(&message);
            return Err(Failure::mount(message));
        }
    };
    // Notifications are written to the device by the vfs's invalidator.
    let notify = match device.try_clone() {
        Ok(fd) => fd,
        Err(e) => {
            let _ = mounted.unmount();
            let message = format!("{}: cannot mount: {e}", mountpoint.display());
            tell(&message);
            return Err(Failure::mount(message));
        }
    };
    if let Some(rings) = rings {
        if granted.load(std::sync::atomic::Ordering::Relaxed) {
            // SAFETY: geteuid cannot fail.
            let owner = unsafe { libc::geteuid() };
            let access = crate::uring::Access {
                acl: config.acl,
                owner,
            };
            rings.start(ops, device, access, tuning.uring_idle);
        }
    }
    FuseFs::start_invalidator(&vfs, notify, known);
    vfs.start_read_ahead(tuning.ahead_threads);
    // Other programs' changes to the archives show in the mount.
    if let Err(e) = vfs.start_watching() {
        log::warn!("not watching the archives for other programs' changes: {e}");
    }
    let pid_path = pid_file(mountpoint);
    if let Some(dir) = pid_path.parent() {
        let _ = fs::create_dir_all(dir);
    }
    let _ = fs::write(&pid_path, format!("{}\n", std::process::id()));
    // The mount's device, to tell later whether it is still in the tree.
    let device = crate::mountinfo::mounts()
        .into_iter()
        .rev()
        .find(|m| Path::new(&m.mount_point) == mountpoint && m.fstype.starts_with("fuse"))
        .map(|m| m.device);
    std::thread::Builder::new()
        .name("signals".into())
        .spawn({
            let (mountpoint, mounted) = (mountpoint.to_path_buf(), mounted.clone());
            let (vfs, pid_path) = (vfs.clone(), pid_path.clone());
            move || loop {
                wait_for_termination_signal();
                match mounted.unmount() {
                    Ok(()) => break,
                    Err(e) if is_gone(device.as_deref()) => {
                        // Taken off already (`umount -l`), while programs keep files open
                        // under it: the session would last as long as they do. The daemon
                        // ends now, once no commit is under way; the kernel then fails
                        // those files' reads.
                        log::warn!(
                            "{}: the mount was already taken off ({e}); ending",
                            mountpoint.display()
                        );
                        vfs.stop_committing();
                        let _ = fs::remove_file(&pid_path);
                        std::process::exit(0);
                    }
                    Err(e) => log::error!("{}: cannot unmount: {e}", mountpoint.display()),
                }
            }
        })
        .map_err(|e| Failure::mount(format!("spawning the signal thread: {e}")))?;
    tell("ok");
    drop(ready);
    let result = session.run();
    // The session ends when the kernel lets the mount go; if it ended otherwise (an
    // error), the mount is let go here.
    if let Err(e) = mounted.unmount() {
        log::error!("{}: cannot unmount: {e}", mountpoint.display());
    }
    let _ = fs::remove_file(&pid_path);
    result.map_err(|e| Failure::mount(format!("{}: {e}", mountpoint.display())))
}

/// Whether the mount of `device` is no longer in this namespace's tree (`None`: its
/// device was never found, so nothing can be said).
fn is_gone(device: Option<&str>) -> bool {
    device.is_some_and(|d| !crate::mountinfo::mounts().iter().any(|m| m.device == d))
}

/// Mount and shake hands with the kernel: directly where this process can (root), through
/// fusermount3 otherwise. The error says what failed, without the mount point.
fn start_session(
    fs: FuseFs,
    source: &Path,
    mountpoint: &Path,
    config: &fuser::Config,
) -> Result<(fuser::Session<FuseFs>, Arc<Mounted>, OwnedFd), String> {
    let (device, mounted) = if crate::kernel_mount::needed() {
        let list = crate::kernel_mount::option_list(&config.mount_options, config.acl);
        let (device, mounted, said) = crate::kernel_mount::mount(mountpoint, &list)?;
        // `unsafe option suid ignored`, and the like.
        for line in said.lines() {
            log::warn!("{}: {line}", mountpoint.display());
        }
        (device, mounted)
    } else {
        let name = source.display().to_string();
        crate::kernel_mount::mount_direct(&name, mountpoint, &config.mount_options, config.acl)?
    };
    // The io_uring queues are registered through the same connection.
    let second = match device.try_clone() {
        Ok(fd) => fd,
        Err(e) => {
            let _ = mounted.unmount();
            return Err(format!("after the kernel mounted: {e}"));
        }
    };
    match fuser::Session::from_fd(fs, device, config.acl, config.clone()) {
        Ok(session) => Ok((session, Arc::new(mounted), second)),
        Err(e) => {
            let _ = mounted.unmount();
            Err(format!("after the kernel mounted: {e}"))
        }
    }
}

/// The allocator's settings for a daemon that renders views on several threads.
///
/// glibc gives threads up to eight arenas a core, each keeping what it freed. One arena
/// a core: reading the database tree with its caches dropped, three times over, left
/// RssAnon at 67 MiB with glibc's default and about 37–50 MiB with this, at the same
/// speed (a single arena halves the speed of parallel renders, which then queue for the
/// arena's lock).
///
/// And blocks of 128 KiB and more are mapped on their own, always: glibc raises that
/// threshold each time such a block is freed (up to 32 MiB), after which a folder's node
/// table or a large rendered view lands among a reader's transients in an arena and pins
/// its pages. A cold read of the database tree then left RssAnon at 67–74 MiB (42–63
/// once idle); with the threshold kept, 45 MiB (41–42 once idle), in the same time.
fn malloc_settings() {
    // glibc's own MALLOC_ARENA_MAX and MALLOC_MMAP_THRESHOLD_, when set, are the user's.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let set = |name: &str, param: libc::c_int, value: usize| {
            if std::env::var_os(name).is_none() {
                // SAFETY: mallopt only sets an allocator parameter; called before threads
                // start.
                unsafe {
                    libc::mallopt(param, value as libc::c_int);
                }
            }
        };
        set("MALLOC_ARENA_MAX", libc::M_ARENA_MAX, cores().clamp(1, 8));
        set("MALLOC_MMAP_THRESHOLD_", libc::M_MMAP_THRESHOLD, 128 << 10);
    }
}

fn termination_signals() -> libc::sigset_t {
    // SAFETY: sigset manipulation on a local value.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGHUP);
        set
    }
}

fn block_termination_signals() {
    let set = termination_signals();
    // SAFETY: changes this thread's mask; threads spawned later inherit it.
    unsafe {
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

fn wait_for_termination_signal() {
    let set = termination_signals();
    let mut sig = 0;
    // SAFETY: the signals are blocked in every thread, so sigwait receives them.
    unsafe {
        libc::sigwait(&set, &mut sig);
    }
}

/// `shaderfs umount`: unmount, then wait until the daemon has exited (and with it every
/// commit it was making).
/// With `lazy`, the mount is detached at once and this returns without waiting: the daemon
/// finishes its write-back and exits when the last file under the mount is closed.
pub fn umount(mountpoint: &Path, lazy: bool) -> Result<(), Failure> {
    let mountpoint = fs::canonicalize(mountpoint)
        .map_err(|e| Failure::usage(format!("{}: {e}", mountpoint.display())))?;
    if !is_mounted(&mountpoint) {
        return Err(Failure::usage(format!(
            "{}: not a FUSE mount point",
            mountpoint.display()
        )));
    }
    let pid_path = pid_file(&mountpoint);
    let pid: Option<i32> = fs::read_to_string(&pid_path)
        .ok()
        .and_then(|s| s.trim().parse().ok());
    // What lives only in the mount's memory goes with it: say so once it has gone.
    let dropped: Vec<String> = fs::read_to_string(mountpoint.join(".shaderfs/errors"))
        .map(|log| {
            log.lines()
                .filter(|l| l.contains(crate::vfs::unsaved::KEPT_IN_MEMORY))
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    let c_path = std::ffi::CString::new(mountpoint.as_os_str().as_encoded_bytes())
        .map_err(|_| Failure::usage("mount point with a NUL byte"))?;
    let flags = if lazy { libc::MNT_DETACH } else { 0 };
    // A file closed just before (an editor's save, a `cat`) may still be on its way out
    // of the kernel, which keeps the mount busy for that moment: busy is tried again for
    // a while before it is the answer.
    let busy_until = Instant::now() + Duration::from_secs(3);
    let unmounted = || {
        // SAFETY: a plain system call with a valid C string.
        if unsafe { libc::umount2(c_path.as_ptr(), flags) } == 0 {
            return Ok(());
        }
        Err(std::io::Error::last_os_error())
    };
    let mut result = unmounted();
    while result
        .as_ref()
        .is_err_and(|e| e.raw_os_error() == Some(libc::EBUSY))
        && Instant::now() < busy_until
    {
        std::thread::sleep(Duration::from_millis(20));
        result = unmounted();
    }
    if let Err(err) = result {
        if err.raw_os_error() == Some(libc::EPERM) {
            // Not root: the mount's user unmounts through fusermount3.
            crate::kernel_mount::unmount(&mountpoint, lazy).map_err(|e| {
                Failure::mount(format!("{}: cannot unmount: {e}", mountpoint.display()))
            })?;
        } else {
            return Err(Failure::mount(format!(
                "{}: cannot unmount: {err}",
                mountpoint.display()
            )));
        }
    }
    for line in dropped {
        // `2026-…Z PATH: kept in memory only, not in the archive (N bytes): …`
        let note = line.split_once(' ').map_or(line.as_str(), |(_, rest)| rest);
        let marker = format!(": {}", crate::vfs::unsaved::KEPT_IN_MEMORY);
        let (path, rest) = note.split_once(&marker).unwrap_or((note, ""));
        let size = rest
            .trim_start()
            .strip_prefix('(')
            .and_then(|r| r.split_once(')'))
            .map_or(String::new(), |(size, _)| format!(" ({size})"));
        eprintln!(
            "shaderfs umount: dropped {path}{size}: it was kept in memory only, never in the archive"
        );
    }
    if let Some(pid) = pid.filter(|_| !lazy) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while process_exists(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    Ok(())
}

/// Whether process `pid` exists (it may be another user's: kill then says EPERM).
fn process_exists(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks that the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    let exists = alive || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    // A foreground daemon that has exited stays a zombie until its parent waits for it:
    // its work is done. (The leader of a process whose other threads still run shows as
    // a zombie too: those threads may still be writing back.)
    let zombie = fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next())
            == Some("Z")
    });
    let threads = fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count());
    exists && !(zombie && threads <= 1)
}

/// Whether `path` is the mount point of a FUSE mount (from /proc/self/mountinfo): a
/// shaderfs mount is `fuse.shaderfs`; plain `fuse` is another FUSE file system's, or a
/// mount made by an older shaderfs.
pub fn is_mounted(path: &Path) -> bool {
    let want = path.to_string_lossy();
    crate::mountinfo::mounts()
        .iter()
        .any(|m| m.mount_point == want && matches!(m.fstype.as_str(), "fuse" | "fuse.shaderfs"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse() {
        let o = MountOptions::parse(["ro,uid=1000,gid=100,umask=022,backup"]).unwrap();
        assert!(!o.writable && o.backup && !o.sign);
        assert!(MountOptions::parse(["rw,sign"]).unwrap().sign);
        assert_eq!((o.uid, o.gid, o.umask), (Some(1000), Some(100), Some(0o22)));
        assert!(MountOptions::parse(["rw"]).unwrap().writable);
        assert!(
            MountOptions::parse([""]).unwrap().writable,
            "read-write by default"
        );
        let o = MountOptions::parse(["nodev,nosuid", "noatime"]).unwrap();
        assert_eq!(o.kernel.len(), 3);
        let o = MountOptions::parse(["max_memory=64M"]).unwrap();
        assert_eq!(o.max_memory, Some(64 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("4096"), Some(4096));
    }

    #[test]
    fn bad_options_are_refused() {
        for bad in [
            "frobnicate",
            "uid=abc",
            "uid",
            "umask=999",
            "ro=1",
            "sign=yes",
            "max_memory",
            "max_memory=lots",
            "max_memory=5T",
            "allow_other,allow_root",
        ] {
            assert!(MountOptions::parse([bad]).is_err(), "{bad}");
        }
    }
}
