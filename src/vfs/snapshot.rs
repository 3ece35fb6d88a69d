//! The archive on disk: a [`Snapshot`] of it, the one-writer lock, and what happens when
//! another program changes it under the mount (DESIGN.md write-back step 6).
//!
//! A snapshot remembers the identity of the file it was read from (device, inode, size,
//! modification and change times, taken before its bytes were read). Before every commit,
//! and whenever the watcher ([`super::watch`]) hears of a change in the archive's folder,
//! the file at the archive's path is compared with that identity; if it differs, another
//! program changed or replaced the archive: the mount reloads it and serves it as it now
//! is, and a save whose content was taken from the old archive is refused.
//!
//! A read-write mount holds an exclusive `flock` on its archive file. A commit takes it
//! on the temporary file before renaming it over the archive, so the file at the path is
//! locked at every moment, and a second read-write mount is refused, naming the first.

use std::fs::{self, File, Metadata};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use super::commit;
use super::fs::{Invalidation, OpenError, Vfs};
use super::reconcile::{self, Change};
use rustc_hash::FxHashSet;

use super::tree::{ArchiveId, Ino, Tree};
use super::{Archive, ArchiveBytes, Format, OpenContext};

/// An opened archive: immutable. Commits and reloads make new ones.
pub(super) struct Snapshot {
    pub archive: Arc<dyn Archive>,
    pub bytes: Arc<ArchiveBytes>,
    pub generation: u64,
    /// The file read, kept open: commits copy unchanged pieces from it, and a read-write
    /// mount holds its lock through it.
    pub file: File,
    pub identity: Identity,
}

/// What makes "the same file, unchanged": taken from the file before its bytes are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Identity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Identity {
    pub fn of(meta: &Metadata) -> Identity {
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    pub fn mtime(&self) -> SystemTime {
        let (secs, nanos) = self.mtime;
        match u64::try_from(secs) {
            Ok(secs) => SystemTime::UNIX_EPOCH + Duration::new(secs, nanos as u32),
            Err(_) => SystemTime::UNIX_EPOCH,
        }
    }

    /// Whether `meta` is still this file with the content it had, after a rename moved
    /// it: a rename changes a file's change time, never its size or modification time.
    pub fn moved_unchanged(&self, meta: &Metadata) -> bool {
        let now = Identity::of(meta);
        (now.dev, now.ino, now.len, now.mtime) == (self.dev, self.ino, self.len, self.mtime)
    }

    fn same_file(&self, other: &Identity) -> bool {
        (self.dev, self.ino) == (other.dev, other.ino)
    }
}

/// Open and index the archive at `path`.
pub(super) fn open(
    format: &'static dyn Format,
    path: &Path,
    ctx: OpenContext,
    generation: u64,
) -> Result<Snapshot, OpenError> {
    let file = File::open(path)
        .map_err(|e| OpenError::Usage(format!("{}: cannot open: {e}", path.display())))?;
    let meta = file
        .metadata()
        .map_err(|e| OpenError::Usage(format!("{}: {e}", path.display())))?;
    let bytes = ArchiveBytes::map(&file)
        .map_err(|e| OpenError::Usage(format!("{}: cannot map: {e}", path.display())))?;
    let archive = format
        .open(path, bytes.clone(), ctx)
        .map_err(OpenError::Malformed)?;
    if bytes.vanished() {
        return Err(OpenError::Malformed(super::FormatError::new(format!(
            "{}: the file was truncated while it was read",
            path.display()
        ))));
    }
    Ok(Snapshot {
        archive,
        bytes,
        generation,
        file,
        identity: Identity::of(&meta),
    })
}

/// Why the archive at `path` cannot be replaced where it is, if it cannot: a commit
/// writes a new file in its folder and renames it over the archive.
pub(super) fn unwritable(path: &Path) -> Option<String> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let denied = |target: &Path, mode: libc::c_int| -> Option<std::io::Error> {
        let c = std::ffi::CString::new(target.as_os_str().as_encoded_bytes()).ok()?;
        // SAFETY: a plain system call with a valid C string.
        match unsafe { libc::access(c.as_ptr(), mode) } {
            0 => None,
            _ => Some(std::io::Error::last_os_error()),
        }
    };
    let why = |e: std::io::Error, what: &str| match e.raw_os_error() {
        Some(libc::EROFS) => format!("{what} is on a read-only file system"),
        _ => format!("{what} cannot be written by this user ({e})"),
    };
    if let Some(e) = denied(folder, libc::W_OK | libc::X_OK) {
        return Some(why(e, &format!("its folder {}", folder.display())));
    }
    denied(path, libc::W_OK).map(|e| why(e, "the file"))
}

/// Take the one-writer lock on `file`: `false` when another open file holds it.
pub(super) fn lock(file: &File) -> std::io::Result<bool> {
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let err = std::io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EWOULDBLOCK) => Ok(false),
        _ => Err(err),
    }
}

fn unlock(file: &File) {
    // SAFETY: flock on a descriptor we own.
    unsafe {
        libc::flock(file.as_raw_fd(), libc::LOCK_UN);
    }
}

/// Who holds the lock on the archive at `path`, as far as /proc can tell: the pid from
/// /proc/locks, and the mount point of a FUSE mount of the archive (or of its folder)
/// from /proc/self/mountinfo.
pub(super) fn holder(path: &Path) -> String {
    let Ok(meta) = fs::metadata(path) else {
        return "another program".into();
    };
    // /proc/locks names the file as MAJOR:MINOR:INODE, the device numbers in hex.
    let (major, minor) = (libc::major(meta.dev()), libc::minor(meta.dev()));
    let wanted = format!("{major:02x}:{minor:02x}:{}", meta.ino());
    let pid = crate::mountinfo::read_proc("/proc/locks")
        .ok()
        .and_then(|locks| {
            locks.lines().find_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let at = fields.iter().position(|f| *f == wanted)?;
                fields.get(at.checked_sub(1)?)?.parse::<u32>().ok()
            })
        });
    let folder = path.parent().unwrap_or(Path::new("/"));
    let mounts: Vec<String> = crate::mountinfo::mounts()
        .into_iter()
        .filter(|m| m.fstype.starts_with("fuse"))
        .filter(|m| Path::new(&m.source) == path || Path::new(&m.source) == folder)
        .map(|m| m.mount_point)
        .collect();
    let program = pid
        .and_then(|pid| fs::read_to_string(format!("/proc/{pid}/comm")).ok())
        .map(|comm| comm.trim().to_string());
    let who = match (pid, program) {
        (Some(pid), Some(program)) => format!("{program} (pid {pid})"),
        (Some(pid), None) => format!("pid {pid}"),
        (None, _) => "another program".into(),
    };
    match mounts.as_slice() {
        [] => who,
        [one] => format!("{who}, mounted read-write at {one}"),
        many => format!("{who}, mounted at one of {}", many.join(", ")),
    }
}

/// Whether a check of the archive on disk found it as the snapshot has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OnDisk {
    Unchanged,
    /// Another program changed it: the mount now serves what is there (or, where that
    /// does not read, refuses to).
    Changed,
}

impl Vfs {
    /// Take the one-writer lock of every archive (read-write mounts), and remove the
    /// temporary files a killed commit left beside them. The error names who holds a lock.
    pub fn lock_archives(&self) -> Result<(), OpenError> {
        for (id, mounted) in self.archives.iter().enumerate() {
            if !mounted.writable {
                continue;
            }
            let snap = self.snapshot(id);
            let locked = lock(&snap.file).map_err(|e| {
                OpenError::Busy(format!("{}: cannot lock: {e}", mounted.path.display()))
            })?;
            if !locked {
                return Err(OpenError::Busy(format!(
                    "{}: already open for writing by {}; mount it read-only (-o ro), or \
                     unmount the other first",
                    mounted.path.display(),
                    holder(&mounted.path)
                )));
            }
            commit::remove_stale_temps(&mounted.path);
        }
        Ok(())
    }

    /// Wait for the commits under way, and let no other begin: the daemon ends right
    /// after (a commit cut short leaves the old archive or the new, but an archive of
    /// another program's that a commit had swapped aside must be swapped back first).
    pub fn stop_committing(&self) {
        for mounted in &self.archives {
            std::mem::forget(mounted.commit_lock.lock());
        }
    }

    /// Take the locks again from this process (the daemon, after it forked from the
    /// command that took them), so that /proc/locks names the daemon.
    pub fn relock_archives(&self) -> Result<(), OpenError> {
        for (id, mounted) in self.archives.iter().enumerate() {
            if mounted.writable {
                unlock(&self.snapshot(id).file);
            }
        }
        self.lock_archives()
    }

    /// Look at every archive on disk now, as the watcher does when it hears of a change
    /// (the offline commands and tests run no watcher).
    pub fn check_archives(&self) {
        for id in 0..self.archives.len() {
            self.refresh(id);
        }
    }

    /// Compare the archive on disk with the snapshot, and reload it if another program
    /// changed it.
    pub(super) fn refresh(&self, id: ArchiveId) -> OnDisk {
        let on_disk = {
            let _serial = self.archives[id].commit_lock.lock();
            self.refresh_held(id)
        };
        self.settle_pending(id);
        on_disk
    }

    /// [`Vfs::refresh`] with the archive's commit lock held by the caller.
    pub(super) fn refresh_held(&self, id: ArchiveId) -> OnDisk {
        let mounted = &self.archives[id];
        let snap = self.snapshot(id);
        let identity = match fs::metadata(&mounted.path) {
            Ok(meta) => Identity::of(&meta),
            Err(e) => {
                self.trouble(
                    id,
                    true,
                    format!(
                        "the archive is gone from disk ({e}): the mount shows it as it was, \
                         and refuses saves until it is back"
                    ),
                );
                return OnDisk::Changed;
            }
        };
        if identity == snap.identity && !snap.bytes.vanished() {
            if mounted.trouble.lock().take().is_some() {
                mounted.unreadable.store(false, Ordering::SeqCst);
                self.report(&self.user_path(id, ""), "the archive is back as it was");
            }
            return OnDisk::Unchanged;
        }
        let ctx = OpenContext {
            writable: mounted.writable,
            sign: self.opts.sign,
        };
        let mut new = match open(mounted.format, &mounted.path, ctx, snap.generation + 1) {
            Ok(new) => new,
            Err(e) => {
                // The mapping of a file changed in place no longer matches its index.
                let readable = !identity.same_file(&snap.identity);
                self.trouble(
                    id,
                    readable,
                    format!("the archive was changed by another program and does not read: {e}"),
                );
                return OnDisk::Changed;
            }
        };
        if mounted.writable && new.identity.same_file(&snap.identity) {
            // Changed in place: the file is the one this mount holds the lock of, through
            // the old snapshot's descriptor. A second descriptor of its own would be
            // refused that lock (it is the open file's, not the process's); the new
            // snapshot keeps the old descriptor, and with it the lock.
            match snap.file.try_clone() {
                Ok(file) => new.file = file,
                Err(e) => {
                    self.trouble(
                        id,
                        true,
                        format!("the archive was changed in place and cannot be kept open: {e}"),
                    );
                    return OnDisk::Changed;
                }
            }
        } else if mounted.writable && !matches!(lock(&new.file), Ok(true)) {
            self.trouble(
                id,
                true,
                format!(
                    "the archive was replaced by another program, and {} holds its lock: \
                     saves are refused",
                    holder(&mounted.path)
                ),
            );
            return OnDisk::Changed;
        }
        // A file changed in place shows its new bytes through the old mapping too: its
        // old content cannot be compared, so all of it counts as changed.
        let in_place = identity.same_file(&snap.identity) || snap.bytes.vanished();
        let same = !in_place && snap.bytes[..] == new.bytes[..] && !snap.bytes.vanished();
        if !same {
            mounted.epoch.fetch_add(1, Ordering::SeqCst);
            self.superseded.forget_archive(id);
        }
        let change = Change::Reload {
            old: snap.bytes.clone(),
            new: new.bytes.clone(),
            in_place,
            time: new.identity.mtime(),
        };
        let inval = self.install(id, new, &change, |_| {});
        mounted.unsettled.lock().extend(inval);
        *mounted.trouble.lock() = None;
        mounted.unreadable.store(false, Ordering::SeqCst);
        if !same {
            self.report(
                &self.user_path(id, ""),
                "the archive was changed on disk by another program: the mount now shows \
                 it as it is there",
            );
        }
        OnDisk::Changed
    }

    /// Make `new` the archive's snapshot and bring the tree in line with it; `adjust`
    /// runs on the tree first (a rename moves the inode with the name). Returns the
    /// kernel caches this made stale, for the caller to send once it holds no lock.
    pub(super) fn install(
        &self,
        id: ArchiveId,
        new: Snapshot,
        change: &Change,
        adjust: impl FnOnce(&mut Tree),
    ) -> Vec<Invalidation> {
        let generation = new.generation;
        let entries = new.archive.entries();
        // The snapshot changes with the tree's lock held: whoever reads a node's key and
        // the snapshot under that lock gets a pair that belong together.
        let (old, inval) = {
            let mut state = self.state.write();
            // The tree holds the whole archive as it was, folders nobody looked into
            // included: the change is reconciled against all of it.
            self.build_all(&mut state.tree, id);
            let old = std::mem::replace(&mut *self.archives[id].snapshot.write(), Arc::new(new));
            // Files with readers: one that changes gets a new inode, and its readers keep
            // the old one, as a file replaced by a rename (the kernel keeps one size for
            // an inode, which every opener's `fstat` and page-cache reads go by).
            // Without a kernel (offline, tests), only readers of the live file: the others
            // read what they opened. A file a writer has open keeps its inode: the writer's
            // buffer is there, and the kernel's size for it is the writer's anyway.
            let kernel = self.opts.page_cache;
            let writing: FxHashSet<Ino> = state
                .handles
                .values()
                .filter(|h| h.writes)
                .map(|h| h.ino)
                .collect();
            let reading: FxHashSet<Ino> = state
                .handles
                .values()
                .filter(|h| !h.writes && h.archive == Some(id) && (kernel || h.view.is_none()))
                .map(|h| h.ino)
                .filter(|ino| !writing.contains(ino))
                .collect();
            adjust(&mut state.tree);
            let root = self.archives[id].root;
            let inval = reconcile::reconcile(&mut state.tree, id, root, entries, change, &reading);
            self.keep_retired(&mut state, id, Some(&old));
            for inval in &inval {
                if let Invalidation::Inode(ino) = inval {
                    self.settling.begin(*ino);
                }
            }
            (old, inval)
        };
        self.views.forget_older(id, generation);
        retire(old);
        inval
    }

    /// Record why the archive cannot be served or saved (once per reason).
    fn trouble(&self, id: ArchiveId, readable: bool, message: String) {
        let mounted = &self.archives[id];
        mounted.unreadable.store(!readable, Ordering::SeqCst);
        let mut trouble = mounted.trouble.lock();
        if trouble.as_deref() != Some(message.as_str()) {
            self.report(&self.user_path(id, ""), &message);
            *trouble = Some(message);
        }
    }

    /// Whether the archive's bytes may be served: not when another program changed the
    /// file in place into something that does not read.
    pub(super) fn check_readable(&self, id: ArchiveId) -> Result<(), i32> {
        match self.archives[id].unreadable.load(Ordering::SeqCst) {
            true => Err(libc::EIO),
            false => Ok(()),
        }
    }

    /// A read found zeros where a page of the archive vanished: report it, and serve
    /// what the disk holds now.
    pub(super) fn vanished(&self, id: ArchiveId) -> i32 {
        self.report(
            &self.user_path(id, ""),
            "the archive was truncated by another program while it was read",
        );
        self.refresh(id);
        libc::EIO
    }
}

/// Let go of a snapshot a commit replaced, off the path of the reply: when its last
/// reference goes, unmapping the old archive and closing its (now unlinked) file frees
/// its pages, some 15 ms for a 60 MB database that the `close()` waiting on the commit
/// need not wait for.
pub(super) fn retire(old: Arc<Snapshot>) {
    static REAPER: OnceLock<std::sync::mpsc::Sender<Arc<Snapshot>>> = OnceLock::new();
    let reaper = REAPER.get_or_init(|| {
        let (send, receive) = std::sync::mpsc::channel::<Arc<Snapshot>>();
        let spawned = std::thread::Builder::new()
            .name("retire".into())
            .spawn(move || receive.into_iter().for_each(drop));
        if let Err(e) = spawned {
            log::warn!("no thread to retire old snapshots ({e}); they go inline");
        }
        send
    });
    // If the thread could not start, the snapshot comes back and is dropped here.
    let _ = reaper.send(old);
}
