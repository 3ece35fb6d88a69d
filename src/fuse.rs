//! The fuser adapter: translates kernel requests into [`Vfs`] calls. Knows no format.
//!
//! Choices, per DESIGN.md "Architecture": several fuser threads; `init` turns on
//! readdirplus, parallel directory operations and atomic `O_TRUNC`; files of read-only
//! mounts are opened with `FOPEN_KEEP_CACHE` and get long attribute and entry timeouts;
//! files of writable mounts are opened for direct I/O (see `Vfs::open` for why).
//! Kernel caches a commit made stale are invalidated from a thread of their own, never
//! from inside a request (the kernel may hold the locks an invalidation needs). The
//! request that committed waits for the files' caches to go (that needs no lock a request
//! holds), not for the names'.

use std::ffi::OsStr;
use std::sync::mpsc;
use std::sync::Arc;

use parking_lot::Mutex;
use rustc_hash::FxHashMap;
use std::time::{Duration, UNIX_EPOCH};

use fuser::{
    Errno, FileAttr, FileHandle, FopenFlags, Generation, INodeNo, InitFlags, KernelConfig,
    LockOwner, Notifier, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory,
    ReplyDirectoryPlus, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request,
    TimeOrNow, WriteFlags,
};

use crate::tuning::Tuning;
use crate::vfs::{Attr, FileType, Invalidation, Opened, SetAttr, Vfs};

/// Entries taken from the vfs per readdir request: more than a reply buffer holds.
const READDIR_BATCH: usize = 1024;

/// How many times the kernel was handed each inode (lookups, readdirplus entries,
/// creates) less what it forgot: the inodes it may hold caches of. A commit invalidates
/// only those, not every file of a 40,000-file tree.
pub type Known = Arc<Mutex<FxHashMap<u64, u64>>>;

pub struct FuseFs {
    vfs: Arc<Vfs>,
    known: Known,
    /// Read-only mount whose kernel took `FUSE_NO_OPEN_SUPPORT`: `open` answers ENOSYS
    /// once and the kernel stops sending open, flush and release, keeping its page cache.
    /// Nothing is pinned per handle then, which a mount that never changes does not need.
    no_open: bool,
    /// The same for directories (`FUSE_NO_OPENDIR_SUPPORT`): no opendir/releasedir round
    /// trips, two per folder of a `find` or `grep -r`.
    no_opendir: bool,
    tuning: Tuning,
    /// Entry and attribute timeout for files that change only through commits (whose
    /// caches are invalidated explicitly).
    ttl: Duration,
}

impl FuseFs {
    pub fn new(vfs: Arc<Vfs>, tuning: Tuning) -> FuseFs {
        let ttl = if !tuning.long_ttl {
            Duration::from_secs(1)
        } else {
            Duration::from_secs(3600)
        };
        FuseFs {
            vfs,
            known: Known::default(),
            ttl,
            no_open: false,
            no_opendir: false,
            tuning,
        }
    }

    /// The inodes the kernel holds, for [`FuseFs::start_invalidator`].
    pub fn known(&self) -> Known {
        self.known.clone()
    }

    fn remember(&self, ino: u64) {
        *self.known.lock().entry(ino).or_insert(0) += 1;
    }

    /// Forward the vfs's invalidations to the kernel through `notifier`, from a thread,
    /// answering a batch that asks once it is done.
    pub fn start_invalidator(vfs: &Vfs, notifier: Notifier, known: Known) {
        type Batch = (Vec<Invalidation>, Option<mpsc::SyncSender<()>>);
        let (tx, rx) = mpsc::channel::<Batch>();
        vfs.set_notify(Box::new(move |batch, done| {
            let _ = tx.send((batch, done));
        }));
        std::thread::Builder::new()
            .name("invalidate".into())
            .spawn(move || {
                for (batch, done) in rx {
                    let batch: Vec<Invalidation> = {
                        let known = known.lock();
                        batch
                            .into_iter()
                            .filter(|inval| match inval {
                                Invalidation::Inode(ino) => known.contains_key(ino),
                                Invalidation::Entry { parent, .. } => {
                                    *parent == INodeNo::ROOT.0 || known.contains_key(parent)
                                }
                            })
                            .collect()
                    };
                    for inval in batch {
                        // ENOENT means the kernel had nothing cached: nothing to do.
                        let _ = match &inval {
                            Invalidation::Inode(ino) => notifier.inval_inode(INodeNo(*ino), 0, 0),
                            Invalidation::Entry { parent, name } => {
                                notifier.inval_entry(INodeNo(*parent), OsStr::new(name))
                            }
                        };
                    }
                    if let Some(done) = done {
                        let _ = done.send(());
                    }
                }
            })
            .expect("spawning the invalidation thread");
    }

    fn attr_ttl(&self, attr: &Attr) -> Duration {
        if attr.volatile {
            Duration::ZERO
        } else {
            self.ttl
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

fn name_str(name: &OsStr) -> Result<&str, Errno> {
    // Every name shaderfs shows is UTF-8 (the escape function sees to it), so a name that
    // is not cannot exist, and cannot be created either.
    name.to_str().ok_or(Errno::EINVAL)
}

impl FuseFs {
    fn reply_entry(&self, reply: ReplyEntry, result: Result<Attr, i32>) {
        match result {
            Ok(attr) => {
                self.remember(attr.ino);
                let ttl = self.attr_ttl(&attr);
                reply.entry_with_ttls(&ttl.min(self.ttl), &ttl, &to_fuse(&attr), Generation(0));
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn open_flags(&self, opened: Opened) -> FopenFlags {
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
        flags
    }
}

impl fuser::Filesystem for FuseFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
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
        if !self.vfs.options().writable {
            wanted |= InitFlags::FUSE_ATOMIC_O_TRUNC;
        }
        if self.tuning.readdirplus {
            wanted |= InitFlags::FUSE_DO_READDIRPLUS | InitFlags::FUSE_READDIRPLUS_AUTO;
        }
        let offered = config.capabilities();
        let _ = config.add_capabilities(wanted & offered);
        if !self.vfs.options().writable
            && self.tuning.no_open
            && offered.contains(InitFlags::FUSE_NO_OPEN_SUPPORT)
            && config
                .add_capabilities(InitFlags::FUSE_NO_OPEN_SUPPORT)
                .is_ok()
        {
            self.no_open = true;
        }
        // Folders are never written through a handle: no opendir/releasedir round trips,
        // and the kernel keeps their listings (a commit invalidates the folders it
        // changes, and the kernel those it changes itself).
        if self.tuning.no_open
            && offered.contains(InitFlags::FUSE_NO_OPENDIR_SUPPORT)
            && config
                .add_capabilities(InitFlags::FUSE_NO_OPENDIR_SUPPORT)
                .is_ok()
        {
            self.no_opendir = true;
        }
        let _ = config.set_max_write(1 << 20);
        let _ = config.set_max_readahead(self.tuning.readahead);
        Ok(())
    }

    fn forget(&self, _req: &Request, ino: INodeNo, nlookup: u64) {
        let mut known = self.known.lock();
        if let Some(count) = known.get_mut(&ino.0) {
            *count = count.saturating_sub(nlookup);
            if *count == 0 {
                known.remove(&ino.0);
                drop(known);
                self.vfs.forget(ino.0);
            }
        }
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match name_str(name) {
            Ok(name) => self.reply_entry(reply, self.vfs.lookup(parent.0, name)),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.vfs.getattr(ino.0) {
            Ok(attr) => reply.attr(&self.attr_ttl(&attr), &to_fuse(&attr)),
            Err(e) => reply.error(errno(e)),
        }
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
        _ctime: Option<std::time::SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<std::time::SystemTime>,
        _chgtime: Option<std::time::SystemTime>,
        _bkuptime: Option<std::time::SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let time = |t: TimeOrNow| match t {
            TimeOrNow::SpecificTime(t) => t,
            TimeOrNow::Now => std::time::SystemTime::now(),
        };
        let set = SetAttr {
            mode,
            uid,
            gid,
            size,
            atime: atime.map(time),
            mtime: mtime.map(time),
            // `ftruncate` names the handle; `truncate` of a path does not.
            by_writer: fh.is_some_and(|fh| fh.0 != 0),
        };
        match self.vfs.setattr(ino.0, &set) {
            Ok(attr) => reply.attr(&self.attr_ttl(&attr), &to_fuse(&attr)),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        match self.vfs.readlink(ino.0) {
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
        let e = if self.vfs.options().writable {
            Errno::EPERM
        } else {
            Errno::EROFS
        };
        reply.error(e);
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        match name_str(name).map_err(i32::from) {
            Ok(name) => match self.vfs.unlink(parent.0, name) {
                Ok(()) => reply.ok(),
                Err(e) => reply.error(errno(e)),
            },
            Err(e) => reply.error(errno(e)),
        }
    }

    fn rmdir(&self, _req: &Request, _parent: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
        reply.error(if self.vfs.options().writable {
            Errno::EPERM
        } else {
            Errno::EROFS
        });
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
        if flags.bits() != 0 {
            // RENAME_EXCHANGE / RENAME_NOREPLACE: callers fall back to plain rename.
            reply.error(Errno::EINVAL);
            return;
        }
        let (Ok(name), Ok(newname)) = (name_str(name), name_str(newname)) else {
            reply.error(Errno::EINVAL);
            return;
        };
        match self.vfs.rename(parent.0, name, newparent.0, newname) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        if self.no_open {
            reply.error(Errno::ENOSYS);
            return;
        }
        match self.vfs.open(ino.0, flags.0) {
            Ok(opened) => reply.opened(FileHandle(opened.fh), self.open_flags(opened)),
            Err(e) => reply.error(errno(e)),
        }
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
        match self.vfs.read(ino.0, fh.0, offset, size) {
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
        match self.vfs.write_at(ino.0, fh.0, offset, data) {
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
        if !self.vfs.options().writable {
            // Nothing to commit, ever: ENOSYS tells the kernel to stop asking on close.
            reply.error(Errno::ENOSYS);
            return;
        }
        match self.vfs.flush(ino.0, fh.0) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.vfs.flush(ino.0, fh.0) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
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
        self.vfs.release(ino.0, fh.0);
        reply.ok();
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if self.no_opendir {
            reply.error(Errno::ENOSYS);
            return;
        }
        if let Err(e) = self.vfs.getattr(ino.0) {
            reply.error(errno(e));
            return;
        }
        // The kernel may keep listings (a second `grep -r` or `find` then lists nothing
        // through here): a commit invalidates the folders it changes.
        let flags = if !self.tuning.keep_cache {
            FopenFlags::empty()
        } else {
            FopenFlags::FOPEN_CACHE_DIR | FopenFlags::FOPEN_KEEP_CACHE
        };
        reply.opened(FileHandle(0), flags);
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        match self.vfs.readdir(ino.0, offset as usize, READDIR_BATCH) {
            Ok(entries) => {
                for (i, (child, name, kind)) in entries.into_iter().enumerate() {
                    let kind = match kind {
                        FileType::Dir => fuser::FileType::Directory,
                        FileType::File => fuser::FileType::RegularFile,
                        FileType::Symlink => fuser::FileType::Symlink,
                    };
                    if reply.add(INodeNo(child), offset + i as u64 + 1, kind, &*name) {
                        break;
                    }
                }
                reply.ok();
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    fn readdirplus(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectoryPlus,
    ) {
        match self.vfs.readdir(ino.0, offset as usize, READDIR_BATCH) {
            Ok(entries) => {
                for (i, (child, name, _)) in entries.into_iter().enumerate() {
                    let Ok(attr) = self.vfs.listing_attr(child) else {
                        continue;
                    };
                    let ttl = self.attr_ttl(&attr);
                    let next = offset + i as u64 + 1;
                    if reply.add(
                        INodeNo(child),
                        next,
                        &*name,
                        &ttl,
                        &to_fuse(&attr),
                        Generation(0),
                    ) {
                        break;
                    }
                    // The kernel counts a lookup for every entry but `.` and `..`.
                    if &*name != "." && &*name != ".." {
                        self.remember(child);
                    }
                }
                reply.ok();
            }
            Err(e) => reply.error(errno(e)),
        }
    }

    /// `df`: a read-only mount is as large as its archives and full; a writable one shows
    /// the space left where its archives lie (what a commit's new file can take).
    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
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
        match host {
            Some((free, avail, files, ffree)) => reply.statfs(
                used + free / block,
                free / block,
                avail / block,
                files,
                ffree,
                block as u32,
                255,
                block as u32,
            ),
            None => reply.statfs(used, 0, 0, 0, 0, block as u32, 255, block as u32),
        }
    }

    fn access(&self, _req: &Request, ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        match self.vfs.getattr(ino.0) {
            Ok(_) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
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
        let Ok(name) = name_str(name) else {
            reply.error(Errno::EINVAL);
            return;
        };
        match self.vfs.create(parent.0, name, flags) {
            Ok((attr, opened)) => {
                self.remember(attr.ino);
                reply.created(
                    &Duration::ZERO,
                    &to_fuse(&attr),
                    Generation(0),
                    FileHandle(opened.fh),
                    self.open_flags(opened),
                );
            }
            Err(e) => reply.error(errno(e)),
        }
    }
}
