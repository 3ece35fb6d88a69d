//! The kernel's requests, whichever way they come: [`Ops`] answers each from the [`Vfs`]
//! in plain values, [`FuseFs`] is fuser's adapter (requests read from /dev/fuse), and
//! `uring.rs` serves the same `Ops` over FUSE's io_uring queues. Knows no format.
//!
//! Choices, per DESIGN.md "Architecture": several fuser threads; `init` turns on
//! readdirplus, parallel directory operations and atomic `O_TRUNC`; files of read-only
//! mounts are opened with `FOPEN_KEEP_CACHE` and get long attribute and entry timeouts;
//! readers of writable mounts share the page cache, and writers and files with a buffer
//! bypass it (direct I/O; see `Vfs::open` for why).
//! Kernel caches a commit made stale are invalidated from threads of their own (one for
//! files, one for names), never from inside a request (the kernel may hold the locks an
//! invalidation needs). The request that committed waits for the files' caches to go
//! (that needs no lock a request holds), not for the names'.

use std::ffi::OsStr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;

use parking_lot::Mutex;
use rustc_hash::FxHashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{
    Errno, FileAttr, FileHandle, FopenFlags, Generation, INodeNo, InitFlags, KernelConfig,
    LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory,
    ReplyDirectoryPlus, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request,
    TimeOrNow, WriteFlags,
};

use crate::tuning::Tuning;
use crate::vfs::{Attr, Done, FileType, Invalidation, Opened, SetAttr, Vfs};

/// Entries taken from the vfs per readdir request: more than a reply buffer holds.
const READDIR_BATCH: usize = 1024;

/// The largest write the kernel sends, and so the size of a request's payload.
pub const MAX_WRITE: u32 = 1 << 20;

/// How many times the kernel was handed each inode (lookups, readdirplus entries,
/// creates) less what it forgot: the inodes it may hold caches of. A commit invalidates
/// only those, not every file of a 40,000-file tree. An entry is counted before its
/// attributes are worked out, so that one worked out before a commit is counted by the
/// time the commit's invalidations are picked, and told of.
pub type Known = Arc<Mutex<FxHashMap<u64, u64>>>;

/// A name's inode with how long the kernel may keep the name and the attributes.
pub struct Entry {
    pub attr: Attr,
    pub entry_ttl: Duration,
    pub attr_ttl: Duration,
}

/// A file handle for the kernel and how it is to use it.
pub struct Handle {
    pub fh: u64,
    pub flags: FopenFlags,
}

/// `statfs`'s answer, in blocks of `block` bytes.
pub struct Space {
    pub blocks: u64,
    pub bfree: u64,
    pub bavail: u64,
    pub files: u64,
    pub ffree: u64,
    pub block: u32,
    pub namelen: u32,
}

/// What `setattr` may change, as the kernel sends it.
pub struct Change {
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub size: Option<u64>,
    pub atime: Option<TimeOrNow>,
    pub mtime: Option<TimeOrNow>,
    /// The handle named (`ftruncate`), 0 or none for a path (`truncate`).
    pub fh: Option<u64>,
}

/// Every request's work, answered in values both transports send.
pub struct Ops {
    vfs: Arc<Vfs>,
    known: Known,
    /// Read-only mount whose kernel took `FUSE_NO_OPEN_SUPPORT`: `open` answers ENOSYS
    /// once and the kernel stops sending open, flush and release, keeping its page cache.
    /// Nothing is pinned per handle then, which a mount that never changes does not need.
    no_open: AtomicBool,
    /// The same for directories (`FUSE_NO_OPENDIR_SUPPORT`): no opendir/releasedir round
    /// trips, two per folder of a `find` or `grep -r`.
    no_opendir: AtomicBool,
    tuning: Tuning,
    /// Entry and attribute timeout for files that change only through commits (whose
    /// caches are invalidated explicitly).
    ttl: Duration,
}

impl Ops {
    pub fn vfs(&self) -> &Vfs {
        &self.vfs
    }

    fn remember(&self, ino: u64) {
        *self.known.lock().entry(ino).or_insert(0) += 1;
    }

    fn attr_ttl(&self, attr: &Attr) -> Duration {
        if attr.volatile {
            Duration::ZERO
        } else {
            self.ttl
        }
    }

    /// The entry of a name, for the kernel (which counts a lookup of it: the caller
    /// remembered it).
    fn entry(&self, attr: Attr) -> Entry {
        let attr_ttl = self.attr_ttl(&attr);
        Entry {
            entry_ttl: attr_ttl.min(self.ttl),
            attr_ttl,
            attr,
        }
    }

    fn handle(&self, opened: Opened) -> Handle {
        let mut flags = FopenFlags::empty();
        if opened.keep_cache && self.tuning.keep_cache {
            flags |= FopenFlags::FOPEN_KEEP_CACHE;
        }
        if opened.direct_io {
            flags |= FopenFlags::FOPEN_DIRECT_IO;
        }
        if !opened.flush {
            flags |= FopenFlags::FOPEN_NOFLUSH;
        }
        Handle {
            fh: opened.fh,
            flags,
        }
    }

    /// Refused on a writable mount (the tree's shape is the archive's), and read-only
    /// on the other.
    fn shape_refused(&self) -> i32 {
        if self.vfs.options().writable {
            libc::EPERM
        } else {
            libc::EROFS
        }
    }

    pub fn forget(&self, ino: u64, nlookup: u64) {
        let mut known = self.known.lock();
        if let Some(count) = known.get_mut(&ino) {
            *count = count.saturating_sub(nlookup);
            if *count == 0 {
                known.remove(&ino);
                drop(known);
                self.vfs.forget(ino);
            }
        }
    }

    pub fn lookup(&self, parent: u64, name: &OsStr) -> Result<Entry, i32> {
        let ino = self.vfs.child(parent, name_str(name)?)?;
        self.remember(ino);
        match self.vfs.getattr(ino) {
            Ok(attr) => Ok(self.entry(attr)),
            Err(e) => {
                self.forget(ino, 1);
                Err(e)
            }
        }
    }

    pub fn getattr(&self, ino: u64) -> Result<(Attr, Duration), i32> {
        let attr = self.vfs.getattr(ino)?;
        let ttl = self.attr_ttl(&attr);
        Ok((attr, ttl))
    }

    pub fn setattr(&self, ino: u64, change: Change) -> Result<(Attr, Duration), i32> {
        let time = |t: TimeOrNow| match t {
            TimeOrNow::SpecificTime(t) => t,
            TimeOrNow::Now => SystemTime::now(),
        };
        let set = SetAttr {
            mode: change.mode,
            uid: change.uid,
            gid: change.gid,
            size: change.size,
            atime: change.atime.map(time),
            mtime: change.mtime.map(time),
            // `ftruncate` names the handle; `truncate` of a path does not.
            by_writer: change.fh.is_some_and(|fh| fh != 0),
        };
        let attr = self.vfs.setattr(ino, &set)?;
        let ttl = self.attr_ttl(&attr);
        Ok((attr, ttl))
    }

    pub fn readlink(&self, ino: u64) -> Result<String, i32> {
        self.vfs.readlink(ino)
    }

    pub fn mkdir(&self) -> i32 {
        self.shape_refused()
    }

    pub fn rmdir(&self) -> i32 {
        self.shape_refused()
    }

    pub fn unlink(&self, parent: u64, name: &OsStr) -> Result<(), i32> {
        self.vfs.unlink(parent, name_str(name)?)
    }

    pub fn rename(
        &self,
        parent: u64,
        name: &OsStr,
        newparent: u64,
        newname: &OsStr,
        flags: u32,
    ) -> Result<(), i32> {
        if flags != 0 {
            // RENAME_EXCHANGE / RENAME_NOREPLACE: callers fall back to plain rename.
            return Err(libc::EINVAL);
        }
        self.vfs
            .rename(parent, name_str(name)?, newparent, name_str(newname)?)
    }

    pub fn open(&self, ino: u64, flags: i32) -> Result<Handle, i32> {
        if self.no_open.load(Ordering::Relaxed) {
            return Err(libc::ENOSYS);
        }
        Ok(self.handle(self.vfs.open(ino, flags)?))
    }

    pub fn read(&self, ino: u64, fh: u64, offset: u64, size: u32) -> Result<Vec<u8>, i32> {
        self.vfs.read(ino, fh, offset, size)
    }

    pub fn write(&self, ino: u64, fh: u64, offset: u64, data: &[u8]) -> Result<u32, i32> {
        self.vfs.write_at(ino, fh, offset, data)
    }

    pub fn flush(&self, ino: u64, fh: u64) -> Result<(), i32> {
        if !self.vfs.options().writable {
            // Nothing to commit, ever: ENOSYS tells the kernel to stop asking on close.
            return Err(libc::ENOSYS);
        }
        self.vfs.flush(ino, fh)
    }

    pub fn fsync(&self, ino: u64, fh: u64) -> Result<(), i32> {
        self.vfs.flush(ino, fh)
    }

    pub fn release(&self, ino: u64, fh: u64) {
        self.vfs.release(ino, fh);
    }

    pub fn opendir(&self, ino: u64) -> Result<Handle, i32> {
        if self.no_opendir.load(Ordering::Relaxed) {
            return Err(libc::ENOSYS);
        }
        self.vfs.getattr(ino)?;
        // The kernel may keep listings (a second `grep -r` or `find` then lists nothing
        // through here): a commit invalidates the folders it changes.
        let flags = if !self.tuning.keep_cache {
            FopenFlags::empty()
        } else {
            FopenFlags::FOPEN_CACHE_DIR | FopenFlags::FOPEN_KEEP_CACHE
        };
        Ok(Handle { fh: 0, flags })
    }

    /// A folder's entries from `offset`, handed to `add` (inode, offset of the next, type,
    /// name) until it says the reply is full.
    pub fn readdir(
        &self,
        ino: u64,
        offset: u64,
        mut add: impl FnMut(u64, u64, FileType, &str) -> bool,
    ) -> Result<(), i32> {
        let entries = self.vfs.readdir(ino, offset as usize, READDIR_BATCH)?;
        for (i, (child, name, kind)) in entries.into_iter().enumerate() {
            if add(child, offset + i as u64 + 1, kind, &name) {
                break;
            }
        }
        Ok(())
    }

    /// [`Ops::readdir`] with each entry's attributes; `add` says whether the reply is full.
    pub fn readdirplus(
        &self,
        ino: u64,
        offset: u64,
        mut add: impl FnMut(&Entry, u64, &str) -> bool,
    ) -> Result<(), i32> {
        let entries = self.vfs.readdir(ino, offset as usize, READDIR_BATCH)?;
        for (i, (child, name, _)) in entries.into_iter().enumerate() {
            // The kernel counts a lookup for every entry but `.` and `..`.
            let counted = &*name != "." && &*name != "..";
            if counted {
                self.remember(child);
            }
            // Whether the entry went into the reply; none for a file that cannot say.
            let added = match self.vfs.listing_attr(child) {
                Ok(attr) => {
                    let attr_ttl = self.attr_ttl(&attr);
                    let entry = Entry {
                        attr,
                        entry_ttl: attr_ttl,
                        attr_ttl,
                    };
                    Some(!add(&entry, offset + i as u64 + 1, &name))
                }
                Err(_) => None,
            };
            if counted && added != Some(true) {
                self.forget(child, 1);
            }
            if added == Some(false) {
                break;
            }
        }
        Ok(())
    }

    /// `df`: a read-only mount is as large as its archives and full; a writable one shows
    /// the space left where its archives lie (what a commit's new file can take).
    pub fn statfs(&self) -> Space {
        let paths = self.vfs.archive_paths();
        let bytes: u64 = paths
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        let block = 4096u64;
        let used = bytes.div_ceil(block);
        let host = paths
            .first()
            .filter(|_| self.vfs.options().writable)
            .and_then(|p| host_space(p));
        let (free, avail, files, ffree) = host.unwrap_or((0, 0, 0, 0));
        Space {
            blocks: used + free / block,
            bfree: free / block,
            bavail: avail / block,
            files,
            ffree,
            block: block as u32,
            namelen: 255,
        }
    }

    pub fn access(&self, ino: u64) -> Result<(), i32> {
        self.vfs.getattr(ino).map(|_| ())
    }

    pub fn create(&self, parent: u64, name: &OsStr, flags: i32) -> Result<(Entry, Handle), i32> {
        let (attr, opened) = self.vfs.create(parent, name_str(name)?, flags)?;
        self.remember(attr.ino);
        // A new file's attributes change with every write: the kernel asks again.
        let entry = Entry {
            attr,
            entry_ttl: Duration::ZERO,
            attr_ttl: Duration::ZERO,
        };
        Ok((entry, self.handle(opened)))
    }
}

/// fuser's adapter: each request of its /dev/fuse threads goes to [`Ops`].
pub struct FuseFs {
    ops: Arc<Ops>,
    /// Ask the kernel for io_uring queues (`uring.rs` has them ready to register).
    uring: bool,
    /// The kernel granted them.
    uring_granted: Arc<AtomicBool>,
}

impl FuseFs {
    pub fn new(vfs: Arc<Vfs>, tuning: Tuning, uring: bool) -> FuseFs {
        let ttl = if !tuning.long_ttl {
            Duration::from_secs(1)
        } else {
            Duration::from_secs(3600)
        };
        let ops = Ops {
            vfs,
            known: Known::default(),
            ttl,
            no_open: AtomicBool::new(false),
            no_opendir: AtomicBool::new(false),
            tuning,
        };
        FuseFs {
            ops: Arc::new(ops),
            uring,
            uring_granted: Arc::default(),
        }
    }

    /// The requests' work, for the io_uring transport.
    pub fn ops(&self) -> Arc<Ops> {
        self.ops.clone()
    }

    /// Set once `init` has asked for io_uring queues of a kernel that offers them.
    pub fn uring_granted(&self) -> Arc<AtomicBool> {
        self.uring_granted.clone()
    }

    /// The inodes the kernel holds, for [`FuseFs::start_invalidator`].
    pub fn known(&self) -> Known {
        self.ops.known.clone()
    }

    /// Forward the vfs's invalidations to the kernel through `device`, from two threads:
    /// one for files, whose invalidations never wait, and one for batches that drop
    /// names, which wait for the locks of their folders (held by the kernel while a
    /// rename there waits for its reply, perhaps for a commit waiting for the first). A
    /// batch's `done` hears which of its files the kernel held no inode of.
    pub fn start_invalidator(vfs: &Vfs, device: OwnedFd, known: Known) {
        let device = Arc::new(Device(device));
        let files = invalidator("invalidate", device.clone(), known.clone());
        let names = invalidator("invalidate names", device, known);
        vfs.set_notify(Box::new(move |batch, done| {
            let names_too = batch
                .iter()
                .any(|inval| matches!(inval, Invalidation::Entry { .. }));
            let to = if names_too { &names } else { &files };
            let _ = to.send((batch, done));
        }));
    }
}

type Batch = (Vec<Invalidation>, Option<Done>);

/// A thread telling the kernel each batch it is sent, in order.
fn invalidator(name: &str, device: Arc<Device>, known: Known) -> mpsc::Sender<Batch> {
    let (tx, rx) = mpsc::channel::<Batch>();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            for (batch, done) in rx {
                // Files the kernel was never handed hold no cache.
                let batch: Vec<Invalidation> = {
                    let counts = known.lock();
                    batch
                        .into_iter()
                        .filter(|inval| match inval {
                            Invalidation::Inode(ino) => counts.contains_key(ino),
                            Invalidation::Entry { parent, .. } => {
                                *parent == INodeNo::ROOT.0 || counts.contains_key(parent)
                            }
                        })
                        .collect()
                };
                let mut absent = Vec::new();
                for inval in batch {
                    let told = match &inval {
                        Invalidation::Inode(ino) => device.inval_inode(*ino),
                        Invalidation::Entry { parent, name } => device.inval_entry(*parent, name),
                    };
                    match (told, &inval) {
                        (Ok(()), _) => {}
                        // The kernel holds no such inode or name (now).
                        (Err(e), inval) if e.raw_os_error() == Some(libc::ENOENT) => {
                            if let Invalidation::Inode(ino) = inval {
                                absent.push(*ino);
                            }
                        }
                        (Err(e), inval) => log::debug!("telling the kernel {inval:?}: {e}"),
                    }
                }
                if let Some(done) = done {
                    done(absent);
                }
            }
        })
        .expect("spawning an invalidation thread");
    tx
}

/// The FUSE device, for notifications written here rather than through fuser's
/// `Notifier`, which answers ENOENT (the kernel holds no such inode) with success.
struct Device(OwnedFd);

impl Device {
    const INVAL_INODE: i32 = 2;
    const INVAL_ENTRY: i32 = 3;

    fn inval_inode(&self, ino: u64) -> std::io::Result<()> {
        // fuse_notify_inval_inode_out: the inode, then offset 0 and length 0 (all of it).
        let mut body = [0u8; 24];
        body[..8].copy_from_slice(&ino.to_ne_bytes());
        self.notify(Self::INVAL_INODE, &[&body])
    }

    fn inval_entry(&self, parent: u64, name: &str) -> std::io::Result<()> {
        // fuse_notify_inval_entry_out: the folder, the name's length, flags; the name
        // with its NUL.
        let mut body = [0u8; 16];
        body[..8].copy_from_slice(&parent.to_ne_bytes());
        body[8..12].copy_from_slice(&(name.len() as u32).to_ne_bytes());
        self.notify(Self::INVAL_ENTRY, &[&body, name.as_bytes(), &[0]])
    }

    /// One notification: fuse_out_header (length, the code where a reply has its
    /// error, unique 0) and `parts`, in one write.
    fn notify(&self, code: i32, parts: &[&[u8]]) -> std::io::Result<()> {
        let len = 16 + parts.iter().map(|p| p.len()).sum::<usize>();
        let mut header = [0u8; 16];
        header[..4].copy_from_slice(&(len as u32).to_ne_bytes());
        header[4..8].copy_from_slice(&code.to_ne_bytes());
        let iov: Vec<libc::iovec> = std::iter::once(&header[..])
            .chain(parts.iter().copied())
            .map(|p| libc::iovec {
                iov_base: p.as_ptr() as *mut libc::c_void,
                iov_len: p.len(),
            })
            .collect();
        // SAFETY: every iovec points into a buffer that outlives the call.
        let written = unsafe { libc::writev(self.0.as_raw_fd(), iov.as_ptr(), iov.len() as i32) };
        match written < 0 {
            true => Err(std::io::Error::last_os_error()),
            false => Ok(()),
        }
    }
}

fn to_fuse(attr: &Attr) -> FileAttr {
    FileAttr {
        ino: INodeNo(attr.ino),
        size: attr.size,
        blocks: attr.size.div_ceil(512),
        atime: attr.atime,
        mtime: attr.mtime,
        ctime: attr.ctime,
        crtime: UNIX_EPOCH,
        kind: match attr.kind {
            FileType::Dir => fuser::FileType::Directory,
            FileType::File => fuser::FileType::RegularFile,
            FileType::Symlink => fuser::FileType::Symlink,
        },
        perm: attr.perm,
        nlink: attr.nlink,
        uid: attr.uid,
        gid: attr.gid,
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

/// Free and available bytes, and total and free inodes, of the file system holding `path`.
fn host_space(path: &std::path::Path) -> Option<(u64, u64, u64, u64)> {
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty())?;
    let c = std::ffi::CString::new(folder.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs fills the struct we own from a valid C string.
    let mut vfs: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut vfs) } != 0 {
        return None;
    }
    let frsize = vfs.f_frsize as u64;
    Some((
        vfs.f_bfree as u64 * frsize,
        vfs.f_bavail as u64 * frsize,
        vfs.f_files as u64,
        vfs.f_ffree as u64,
    ))
}

fn errno(e: i32) -> Errno {
    Errno::from_i32(e)
}

fn name_str(name: &OsStr) -> Result<&str, i32> {
    // Every name shaderfs shows is UTF-8 (the escape function sees to it), so a name that
    // is not cannot exist, and cannot be created either.
    name.to_str().ok_or(libc::EINVAL)
}

fn kind(kind: FileType) -> fuser::FileType {
    match kind {
        FileType::Dir => fuser::FileType::Directory,
        FileType::File => fuser::FileType::RegularFile,
        FileType::Symlink => fuser::FileType::Symlink,
    }
}

fn reply_entry(reply: ReplyEntry, result: Result<Entry, i32>) {
    match result {
        Ok(e) => reply.entry_with_ttls(&e.entry_ttl, &e.attr_ttl, &to_fuse(&e.attr), Generation(0)),
        Err(e) => reply.error(errno(e)),
    }
}

fn reply_attr(reply: ReplyAttr, result: Result<(Attr, Duration), i32>) {
    match result {
        Ok((attr, ttl)) => reply.attr(&ttl, &to_fuse(&attr)),
        Err(e) => reply.error(errno(e)),
    }
}

fn reply_empty(reply: ReplyEmpty, result: Result<(), i32>) {
    match result {
        Ok(()) => reply.ok(),
        Err(e) => reply.error(errno(e)),
    }
}

fn reply_open(reply: ReplyOpen, result: Result<Handle, i32>) {
    match result {
        Ok(h) => reply.opened(FileHandle(h.fh), h.flags),
        Err(e) => reply.error(errno(e)),
    }
}

impl fuser::Filesystem for FuseFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        let ops = &self.ops;
        let mut wanted = InitFlags::FUSE_PARALLEL_DIROPS
            | InitFlags::FUSE_BIG_WRITES
            | InitFlags::FUSE_ASYNC_READ
            // Direct-I/O files (writers, scratch files) can still be mapped.
            | InitFlags::FUSE_DIRECT_IO_ALLOW_MMAP
            // Before a read through the page cache, the kernel refreshes a size another
            // opener's writing made stale, and drops pages whose file changed.
            | InitFlags::FUSE_AUTO_INVAL_DATA;
        // Readers share the page cache and the size the kernel keeps: a writer's
        // `O_TRUNC` must not empty them. Without atomic O_TRUNC the kernel asks with a
        // setattr, whose answer keeps the committed size (the writer's buffer is
        // emptied all the same).
        if !ops.vfs.options().writable {
            wanted |= InitFlags::FUSE_ATOMIC_O_TRUNC;
        }
        if ops.tuning.readdirplus {
            wanted |= InitFlags::FUSE_DO_READDIRPLUS | InitFlags::FUSE_READDIRPLUS_AUTO;
        }
        let offered = config.capabilities();
        // The kernel offers io_uring queues only where its `enable_uring` is on.
        if self.uring && offered.contains(InitFlags::FUSE_OVER_IO_URING) {
            wanted |= InitFlags::FUSE_OVER_IO_URING;
        }
        let granted = config.add_capabilities(wanted & offered).is_ok();
        if granted && wanted.contains(InitFlags::FUSE_OVER_IO_URING) {
            self.uring_granted.store(true, Ordering::Relaxed);
        }
        if !ops.vfs.options().writable
            && ops.tuning.no_open
            && offered.contains(InitFlags::FUSE_NO_OPEN_SUPPORT)
            && config
                .add_capabilities(InitFlags::FUSE_NO_OPEN_SUPPORT)
                .is_ok()
        {
            ops.no_open.store(true, Ordering::Relaxed);
        }
        // Folders are never written through a handle: no opendir/releasedir round trips,
        // and the kernel keeps their listings (a commit invalidates the folders it
        // changes, and the kernel those it changes itself).
        if ops.tuning.no_open
            && offered.contains(InitFlags::FUSE_NO_OPENDIR_SUPPORT)
            && config
                .add_capabilities(InitFlags::FUSE_NO_OPENDIR_SUPPORT)
                .is_ok()
        {
            ops.no_opendir.store(true, Ordering::Relaxed);
        }
        let _ = config.set_max_write(MAX_WRITE);
        let _ = config.set_max_readahead(ops.tuning.readahead);
        Ok(())
    }

    fn forget(&self, _req: &Request, ino: INodeNo, nlookup: u64) {
        self.ops.forget(ino.0, nlookup);
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        reply_entry(reply, self.ops.lookup(parent.0, name));
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        reply_attr(reply, self.ops.getattr(ino.0));
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let change = Change {
            mode,
            uid,
            gid,
            size,
            atime,
            mtime,
            fh: fh.map(|fh| fh.0),
        };
        reply_attr(reply, self.ops.setattr(ino.0, change));
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        match self.ops.readlink(ino.0) {
            Ok(target) => reply.data(target.as_bytes()),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn mkdir(
        &self,
        _req: &Request,
        _parent: INodeNo,
        _name: &OsStr,
        _mode: u32,
        _umask: u32,
        reply: ReplyEntry,
    ) {
        reply.error(errno(self.ops.mkdir()));
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        reply_empty(reply, self.ops.unlink(parent.0, name));
    }

    fn rmdir(&self, _req: &Request, _parent: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
        reply.error(errno(self.ops.rmdir()));
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let result = self
            .ops
            .rename(parent.0, name, newparent.0, newname, flags.bits());
        reply_empty(reply, result);
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        reply_open(reply, self.ops.open(ino.0, flags.0));
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match self.ops.read(ino.0, fh.0, offset, size) {
            Ok(data) => reply.data(&data),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        match self.ops.write(ino.0, fh.0, offset, data) {
            Ok(n) => reply.written(n),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply_empty(reply, self.ops.flush(ino.0, fh.0));
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply_empty(reply, self.ops.fsync(ino.0, fh.0));
    }

    fn release(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.ops.release(ino.0, fh.0);
        reply.ok();
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        reply_open(reply, self.ops.opendir(ino.0));
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let result = self.ops.readdir(ino.0, offset, |child, next, k, name| {
            reply.add(INodeNo(child), next, kind(k), name)
        });
        reply_empty_dir(reply, result);
    }

    fn readdirplus(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectoryPlus,
    ) {
        let result = self.ops.readdirplus(ino.0, offset, |entry, next, name| {
            reply.add(
                INodeNo(entry.attr.ino),
                next,
                name,
                &entry.attr_ttl,
                &to_fuse(&entry.attr),
                Generation(0),
            )
        });
        match result {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let s = self.ops.statfs();
        reply.statfs(
            s.blocks, s.bfree, s.bavail, s.files, s.ffree, s.block, s.namelen, s.block,
        );
    }

    fn access(&self, _req: &Request, ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        reply_empty(reply, self.ops.access(ino.0));
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        _mode: u32,
        _umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        match self.ops.create(parent.0, name, flags) {
            Ok((entry, handle)) => reply.created(
                &entry.entry_ttl,
                &to_fuse(&entry.attr),
                Generation(0),
                FileHandle(handle.fh),
                handle.flags,
            ),
            Err(e) => reply.error(errno(e)),
        }
    }
}

fn reply_empty_dir(reply: ReplyDirectory, result: Result<(), i32>) {
    match result {
        Ok(()) => reply.ok(),
        Err(e) => reply.error(errno(e)),
    }
}
