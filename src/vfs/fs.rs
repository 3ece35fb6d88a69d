//! [`Vfs`]: the mount's state in file-system terms, with errno results. The FUSE adapter
//! translates requests into its calls; the offline commands (`shaderfs ls|cat|extract`)
//! and the model test call them directly.
//!
//! The rooms of the house, each an `impl Vfs` of its own:
//! - this file: the state, loading, names (`lookup`, `readdir`, `resolve`, and filling a
//!   folder of an archive described folder by folder when it is first looked into),
//!   reports;
//! - [`super::snapshot`]: the archive on disk, its lock, noticing another program's change;
//! - [`super::reconcile`]: bringing the tree in line with a new snapshot (a pure function;
//!   the tree is first filled whole from the snapshot it replaces), and filling folders;
//! - [`super::views`]: rendering, the view cache, sizes, rendering ahead of readers;
//! - [`super::handles`]: `open`, `read`, `release`;
//! - [`super::write`]: write buffers, `flush`, commits;
//! - [`super::editors`]: `create`, `unlink`, `rename`, the way editors and `mv` save;
//! - [`super::attr`]: attributes and what `chmod`, `chown`, `touch` change;
//! - [`super::unsaved`]: what the mount holds that the archive does not.
//!
//! Locks: `state` (the tree and the handles) is held only for bookkeeping, never while a
//! view renders or an archive is written; a commit holds its archive's `commit_lock`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::SystemTime;

use parking_lot::{Mutex, RwLock};
use rustc_hash::{FxHashMap, FxHashSet};

use super::buffer::Budget;
use super::errors::ErrorLog;
use super::handles::{Handle, Retired};
use super::reconcile;
use super::snapshot::{self, Snapshot};
use super::tree::{ArchiveId, Ino, Name, Node, NodeKind, Origin, Stamp, Tree, ROOT_INO};
use super::views::Views;
use super::{Blob, Format, OpenContext};

pub use super::attr::{Attr, FileType};

/// Bytes of rendered views (JSON, disassembly) kept by default.
pub const CACHE_BYTES: usize = 16 << 20;
/// What write buffers and scratch files may hold in all, by default (`-o max_memory`).
pub const MAX_MEMORY: usize = 512 << 20;

pub type Errno = i32;

#[derive(Debug, Clone)]
pub struct VfsOptions {
    pub writable: bool,
    pub backup: bool,
    /// `-o sign`, handed to formats (see [`OpenContext::sign`]).
    pub sign: bool,
    pub uid: u32,
    pub gid: u32,
    pub umask: Option<u32>,
    /// Budget of the rendered-view cache, [`CACHE_BYTES`] unless tuned.
    pub cache_bytes: usize,
    /// What write buffers and scratch files may hold in all ([`MAX_MEMORY`] unless set).
    pub max_memory: usize,
    /// Readers go through the kernel's page cache (a mount): each read sees what the file
    /// holds then. Without it (offline commands, tests), a reader sees what it opened.
    pub page_cache: bool,
}

impl VfsOptions {
    /// Read-only, owned by the calling user: what the offline commands use.
    pub fn read_only() -> VfsOptions {
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        VfsOptions {
            writable: false,
            backup: false,
            sign: false,
            uid,
            gid,
            umask: None,
            cache_bytes: CACHE_BYTES,
            max_memory: MAX_MEMORY,
            page_cache: false,
        }
    }
}

/// A kernel cache entry that a commit made stale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalidation {
    /// The file's data and attributes.
    Inode(Ino),
    /// The name `name` in directory `parent`.
    Entry { parent: Ino, name: String },
}

/// Why a mount source could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Malformed(super::FormatError),
    /// Another mount writes the archive (exit code 3).
    #[error("{0}")]
    Busy(String),
}

/// An archive file a mount shows, and the format that reads it (found by
/// `archive::recognise`).
#[derive(Clone)]
pub struct ArchiveFile {
    pub path: PathBuf,
    /// The directory it appears as in a folder mount; empty when it is the mount's root.
    pub dir_name: String,
    pub format: &'static dyn Format,
}

/// One archive of the mount.
pub(super) struct Mounted {
    pub path: PathBuf,
    pub dir_name: String,
    pub format: &'static dyn Format,
    pub root: Ino,
    pub snapshot: RwLock<Arc<Snapshot>>,
    /// Held while a commit or a reload replaces the snapshot.
    pub commit_lock: Mutex<()>,
    pub backed_up: AtomicBool,
    /// Counts the times another program changed the archive under the mount: content
    /// taken before (a write buffer) cannot be saved over what replaced it.
    pub epoch: AtomicU64,
    /// Why the archive on disk cannot be served or saved now (another program broke
    /// or removed it), until it reads again.
    pub trouble: Mutex<Option<String>>,
    /// The archive's mapping no longer matches its index (changed in place into
    /// something that does not read): its bytes are not served.
    pub unreadable: AtomicBool,
    /// Saves may land: the mount is read-write and the archive can be replaced on disk.
    pub writable: bool,
    /// Why a read-write mount shows this archive read-only.
    pub read_only_because: Option<String>,
    /// Kernel caches a reload under the commit lock made stale, to be dropped once the
    /// lock is let go ([`Vfs::settle_pending`]).
    pub unsettled: Mutex<Vec<Invalidation>>,
}

pub(super) struct State {
    pub tree: Tree,
    pub handles: HashMap<u64, Handle>,
    pub next_fh: u64,
    /// Files out of the tree that the kernel may still read, until it forgets them.
    pub retired: FxHashMap<Ino, Retired>,
    /// Files given a new inode for a writer that shared the old one with readers of the
    /// page cache ([`Vfs::part_from_cached_readers`]): until the writer opens one, readers
    /// read it around the cache. Not dropped when the kernel forgets one: it forgets the
    /// inode its second look at the name found before it looks again.
    pub for_writer: FxHashSet<Ino>,
}

/// Files a commit changed whose kernel caches are being dropped: until the kernel has,
/// an open reads around the page cache (counted: commits may overlap). Taken after the
/// state's lock where both are.
#[derive(Default)]
pub(super) struct Settling(Mutex<FxHashMap<Ino, u32>>);

impl Settling {
    pub fn contains(&self, ino: Ino) -> bool {
        self.0.lock().contains_key(&ino)
    }

    pub fn begin(&self, ino: Ino) {
        *self.0.lock().entry(ino).or_insert(0) += 1;
    }

    pub fn end(&self, inos: impl IntoIterator<Item = Ino>) {
        let mut settling = self.0.lock();
        for ino in inos {
            if let Some(n) = settling.get_mut(&ino) {
                *n -= 1;
                if *n == 0 {
                    settling.remove(&ino);
                }
            }
        }
    }
}

impl State {
    /// Keep `handle` under a number of its own, and give the number.
    pub fn add_handle(&mut self, handle: Handle) -> u64 {
        let fh = self.next_fh;
        self.next_fh += 1;
        self.handles.insert(fh, handle);
        fh
    }
}

/// Hands the kernel caches a change made stale to the FUSE adapter, which calls the
/// [`Done`] given with them once the kernel has been told.
pub type Notify = Box<dyn Fn(Vec<Invalidation>, Option<Done>) + Send + Sync>;

/// Called with the files of a batch the kernel held no inode of when told.
pub type Done = Box<dyn FnOnce(Vec<Ino>) + Send>;

pub struct Vfs {
    pub(super) opts: VfsOptions,
    pub(super) archives: Vec<Mounted>,
    pub(super) state: RwLock<State>,
    pub(super) views: Views,
    pub(super) errors: ErrorLog,
    notify: Mutex<Option<Notify>>,
    pub(super) settling: Arc<Settling>,
    pub(super) started: SystemTime,
    /// `.shaderfs/errors`, whose cached pages go stale with every report.
    pub(super) errors_ino: Ino,
    /// What write buffers and scratch files hold in all, and may.
    pub(super) budget: Arc<Budget>,
    /// Members removed, by archive and path, with their place ([`super::Archive::position`]):
    /// one created again under the name takes that place (`mv` from another file system).
    pub(super) removed: Mutex<FxHashMap<(ArchiveId, String), usize>>,
    /// What files held before a save of another file changed them.
    pub(super) superseded: super::superseded::Superseded,
}

impl Vfs {
    /// Open the archives of a mount without mounting anything.
    /// An archive a read-write mount cannot replace on disk (its file or folder is not
    /// writable, or on a read-only file system) is shown read-only; if none can be, the
    /// whole mount is read-only ([`Vfs::read_only_because`] says why).
    pub fn load(files: Vec<ArchiveFile>, mut opts: VfsOptions) -> Result<Vfs, OpenError> {
        let mut tree = Tree::new();
        let mut archives = Vec::new();
        let mut loaded = Vec::new();
        for (id, file) in files.into_iter().enumerate() {
            let read_only_because = match opts.writable {
                true => snapshot::unwritable(&file.path),
                false => None,
            };
            let ctx = OpenContext {
                writable: opts.writable && read_only_because.is_none(),
                sign: opts.sign,
            };
            let snapshot = snapshot::open(file.format, &file.path, ctx, 0)?;
            let stamp = tree.stamp(snapshot.identity.mtime());
            let root = if file.dir_name.is_empty() {
                tree.set_root(id, ROOT_INO);
                // The root is the archive's root: editors' temporary files (sed -i,
                // atomic saves) are created beside views that live there.
                if let Some(node) = tree.get_mut(ROOT_INO) {
                    node.archive = Some(id);
                    node.stamp = stamp;
                }
                ROOT_INO
            } else {
                let ino = tree.fresh();
                tree.set_root(id, ino);
                let mut node = dir_node(ROOT_INO, &file.dir_name, Some(id));
                node.stamp = stamp;
                tree.insert(ino, node);
                ino
            };
            // A large archive's folders are described when someone looks into them.
            let entries = match snapshot.archive.describes_folders() {
                true => None,
                false => Some(snapshot.archive.entries()),
            };
            loaded.push((id, root, entries, stamp));
            archives.push(Mounted {
                path: file.path,
                dir_name: file.dir_name,
                format: file.format,
                root,
                snapshot: RwLock::new(Arc::new(snapshot)),
                commit_lock: Mutex::new(()),
                backed_up: AtomicBool::new(false),
                epoch: AtomicU64::new(0),
                trouble: Mutex::new(None),
                unreadable: AtomicBool::new(false),
                writable: ctx.writable,
                read_only_because,
                unsettled: Mutex::new(Vec::new()),
            });
        }
        let dir = tree.fresh();
        tree.insert(dir, dir_node(ROOT_INO, ".shaderfs", None));
        let errors_ino = tree.fresh();
        tree.insert(errors_ino, file_node(dir, "errors", None, Origin::ErrorLog));
        for (id, root, entries, stamp) in loaded {
            let Some(entries) = entries else {
                tree.defer(root, stamp);
                continue;
            };
            reconcile::reconcile(
                &mut tree,
                id,
                root,
                entries,
                &reconcile::Change::Load(stamp),
                &Default::default(),
            );
        }
        if !archives.iter().any(|m| m.writable) {
            opts.writable = false;
        }
        let budget = Budget::new(opts.max_memory);
        Ok(Vfs {
            views: Views::new(opts.cache_bytes),
            opts,
            archives,
            state: RwLock::new(State {
                tree,
                handles: HashMap::new(),
                next_fh: 1,
                retired: FxHashMap::default(),
                for_writer: FxHashSet::default(),
            }),
            errors: ErrorLog::default(),
            notify: Mutex::new(None),
            settling: Arc::default(),
            started: SystemTime::now(),
            errors_ino,
            removed: Mutex::new(FxHashMap::default()),
            superseded: Default::default(),
            budget,
        })
    }

    /// Called with the kernel caches a commit made stale (the FUSE adapter forwards them
    /// to the kernel).
    pub fn set_notify(&self, notify: Notify) {
        *self.notify.lock() = Some(notify);
    }

    pub fn options(&self) -> &VfsOptions {
        &self.opts
    }

    pub fn errors(&self) -> &ErrorLog {
        &self.errors
    }

    /// Every archive's [`super::Archive::problems`], each with the archive's file.
    pub fn problems(&self) -> Vec<(PathBuf, super::Problem)> {
        self.of_each_archive(|a| a.problems())
    }

    /// Every archive's [`super::Archive::unchecked`], each with the archive's file.
    pub fn unchecked(&self) -> Vec<(PathBuf, super::Problem)> {
        self.of_each_archive(|a| a.unchecked())
    }

    /// Every archive's [`super::Archive::unshown`], each with the archive's file.
    pub fn unshown(&self) -> Vec<(PathBuf, super::Problem)> {
        self.of_each_archive(|a| a.unshown())
    }

    /// What `say` says of each archive's current snapshot, each with the archive's file.
    fn of_each_archive(
        &self,
        say: impl Fn(&dyn super::Archive) -> Vec<super::Problem>,
    ) -> Vec<(PathBuf, super::Problem)> {
        self.archives
            .iter()
            .enumerate()
            .flat_map(|(id, mounted)| {
                let said = say(&*self.snapshot(id).archive);
                said.into_iter().map(|p| (mounted.path.clone(), p))
            })
            .collect()
    }

    /// Each archive a read-write mount shows read-only, and why.
    pub fn read_only_because(&self) -> Vec<String> {
        self.archives
            .iter()
            .filter_map(|m| {
                let why = m.read_only_because.as_ref()?;
                Some(format!("{}: shown read-only: {why}", m.path.display()))
            })
            .collect()
    }

    /// Whether saves into archive `id` may land.
    pub(super) fn writable(&self, id: ArchiveId) -> bool {
        self.archives[id].writable
    }

    /// Whether `node` lies where saves may land (a read-write mount, and for an archive's
    /// node, an archive that can be replaced).
    pub(super) fn writable_at(&self, node: &Node) -> bool {
        node.archive
            .map_or(self.opts.writable, |id| self.writable(id))
    }

    /// The archive files behind this mount.
    pub fn archive_paths(&self) -> Vec<&Path> {
        self.archives.iter().map(|m| m.path.as_path()).collect()
    }

    pub(super) fn snapshot(&self, id: ArchiveId) -> Arc<Snapshot> {
        self.archives[id].snapshot.read().clone()
    }

    // ---- names ------------------------------------------------------------------------

    /// Fill folder `dir` if its entries were left out ([`Tree::defer`]): the first look
    /// into a folder of an archive that describes its tree folder by folder describes it.
    ///
    /// A folder described from pages that vanished (another program truncated the
    /// archive) would name what zeros say, a link to program 0 for every effect: its
    /// entries are taken out again, the archive is looked at anew, and the look fails
    /// with EIO.
    pub(super) fn ensure_built(&self, dir: Ino) -> Result<(), Errno> {
        if !self.state.read().tree.is_unbuilt(dir) {
            return Ok(());
        }
        let id = {
            let mut state = self.state.write();
            let tree = &mut state.tree;
            let (Some(id), Some(stamp)) = (
                tree.get(dir).and_then(|n| n.archive),
                tree.take_unbuilt(dir),
            ) else {
                return Ok(());
            };
            let path = tree.path(dir);
            let snap = self.snapshot(id);
            let mut fill = reconcile::FolderFill::new(tree, id, dir, &path, stamp);
            snap.archive.members_in(&path, &mut fill);
            if !snap.bytes.vanished() {
                return Ok(());
            }
            let described: Vec<Ino> = tree
                .children(dir)
                .map(|c| c.values().copied().collect())
                .unwrap_or_default();
            tree.detach_all(&described);
            tree.defer(dir, stamp);
            id
        };
        Err(self.vanished(id))
    }

    /// Fill every folder of archive `id` whose entries were left out, from the snapshot
    /// the tree shows: a change is reconciled against the whole tree, so that every file
    /// keeps its time unless the change touched it.
    pub(super) fn build_all(&self, tree: &mut Tree, id: ArchiveId) {
        let mut filling: FxHashMap<Ino, Stamp> = FxHashMap::default();
        for dir in tree.unbuilt_of(id) {
            if let Some(stamp) = tree.take_unbuilt(dir) {
                filling.insert(dir, stamp);
            }
        }
        if !filling.is_empty() {
            let entries = self.snapshot(id).archive.entries();
            reconcile::fill(tree, id, entries, &mut filling);
        }
    }

    pub fn lookup(&self, parent: Ino, name: &str) -> Result<Attr, Errno> {
        self.getattr(self.child(parent, name)?)
    }

    /// The inode of `name` in folder `parent`.
    pub fn child(&self, parent: Ino, name: &str) -> Result<Ino, Errno> {
        self.ensure_built(parent)?;
        let state = self.state.read();
        match state.tree.get(parent) {
            None => Err(libc::ENOENT),
            Some(Node {
                kind: NodeKind::Dir { .. },
                ..
            }) => state.tree.child(parent, name).ok_or(libc::ENOENT),
            Some(_) => Err(libc::ENOTDIR),
        }
    }

    /// At most `limit` entries of a directory from `offset` on, with `.` and `..` first.
    /// (A reply to the kernel holds a few dozen; building the whole remaining list for
    /// each of them would make listing a 15,000-entry folder quadratic.)
    pub fn readdir(
        &self,
        ino: Ino,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<(Ino, Name, FileType)>, Errno> {
        self.ensure_built(ino)?;
        let state = self.state.read();
        let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
        let children = state.tree.children(ino).ok_or(libc::ENOTDIR)?;
        let dots = [
            (ino, Name::from("."), FileType::Dir),
            (node.parent, Name::from(".."), FileType::Dir),
        ];
        // Children are indexed by position: skipping to `offset` costs nothing.
        let listed = children
            .iter()
            .skip(offset.saturating_sub(dots.len()))
            .filter_map(|(name, &child)| {
                let kind = FileType::of(&state.tree.get(child)?.kind);
                Some((child, name.clone(), kind))
            });
        Ok(dots
            .into_iter()
            .skip(offset)
            .chain(listed)
            .take(limit)
            .collect())
    }

    /// The kernel no longer names `ino` (its lookup count went to zero).
    pub fn forget(&self, ino: Ino) {
        self.state.write().retired.remove(&ino);
    }

    pub fn readlink(&self, ino: Ino) -> Result<String, Errno> {
        let state = self.state.read();
        match &state.tree.get(ino).ok_or(libc::ENOENT)?.kind {
            NodeKind::Symlink { target } => Ok(target.clone()),
            _ => Err(libc::EINVAL),
        }
    }

    /// Resolve a `/`-separated path from the mount's root.
    pub fn resolve(&self, path: &str) -> Result<Ino, Errno> {
        let mut ino = ROOT_INO;
        for part in path.split('/').filter(|p| !p.is_empty() && *p != ".") {
            self.ensure_built(ino)?;
            let state = self.state.read();
            ino = if part == ".." {
                state.tree.get(ino).map(|n| n.parent).ok_or(libc::ENOENT)?
            } else {
                state.tree.child(ino, part).ok_or(libc::ENOENT)?
            };
        }
        Ok(ino)
    }

    // ---- reports ----------------------------------------------------------------------

    /// Where the user sees a path of archive `id`: its folder's name first in a folder
    /// mount.
    pub(super) fn user_path(&self, id: ArchiveId, path: &str) -> String {
        let dir = &self.archives[id].dir_name;
        match (dir.is_empty(), path.is_empty()) {
            (true, _) => path.to_string(),
            (false, true) => dir.clone(),
            (false, false) => format!("{dir}/{path}"),
        }
    }

    /// Record a diagnostic in `.shaderfs/errors` (and the log).
    pub(super) fn report(&self, path: &str, message: &str) {
        self.errors.record(path, message);
        self.send(vec![Invalidation::Inode(self.errors_ino)]);
    }

    /// Tell the kernel, without waiting, what it must drop.
    pub(super) fn send(&self, inval: Vec<Invalidation>) {
        if inval.is_empty() {
            return;
        }
        if let Some(notify) = self.notify.lock().as_ref() {
            notify(inval, None);
        }
    }

    /// Tell the kernel what a commit made stale, and wait until it has dropped the files'
    /// cached data and attributes: the `close()` or `rename()` that committed returns only
    /// then, so whoever looks next (`stat`, `read`, another process) sees the commit.
    /// Names are dropped without waiting (the kernel may hold the locks of their folders
    /// while it waits for this very reply), after the inodes: when another program's
    /// change takes 20,000 files out of a folder, the folder lists anew at once, not once
    /// each name has gone. Called with no lock of the vfs held.
    ///
    /// A file the kernel held no inode of may still get one with its old size: a lookup
    /// answered before the commit can reach the kernel after it was told, and nothing
    /// there tells the two apart (the kernel drops a late answer only for an inode it
    /// holds). Reading the new content under the old size would tear it. A lookup holds
    /// its folder's lock until it has made the inode, and dropping the name takes that
    /// lock: so once the name is dropped, the file is invalidated again, and only then may
    /// its opens use the page cache.
    pub(super) fn settle(&self, inval: Vec<Invalidation>) {
        let (mut files, mut names) = (Vec::new(), Vec::new());
        for inval in inval {
            match inval {
                Invalidation::Inode(ino) => files.push(ino),
                entry => names.push(entry),
            }
        }
        if files.is_empty() {
            self.send(names);
            return;
        }
        let (done, wait) = std::sync::mpsc::sync_channel(1);
        let notified = match self.notify.lock().as_ref() {
            Some(notify) => {
                let done: Done = Box::new(move |absent| {
                    let _ = done.send(absent);
                });
                notify(
                    files.iter().map(|&ino| Invalidation::Inode(ino)).collect(),
                    Some(done),
                );
                true
            }
            None => false,
        };
        // A kernel that cannot answer in this time is stuck elsewhere; the caches still
        // go, only later.
        let absent = match notified {
            true => wait
                .recv_timeout(std::time::Duration::from_secs(2))
                .unwrap_or_default(),
            false => Vec::new(),
        };
        // Of those, the ones the tree (or, once a later commit retired them, the retired
        // files) still names.
        let mut again = FxHashSet::default();
        {
            let state = self.state.read();
            for ino in absent {
                let seen = match (state.tree.get(ino), state.retired.get(&ino)) {
                    (Some(node), _) => Some((node.parent, &node.name)),
                    (None, Some(retired)) => Some((retired.parent, &retired.name)),
                    (None, None) => None,
                };
                if let Some((parent, name)) = seen {
                    names.push(Invalidation::Entry {
                        parent,
                        name: name.to_string(),
                    });
                    again.insert(ino);
                }
            }
        }
        // Opens may use the page cache of these files again; of the others, once the
        // kernel was told their names and them again.
        self.settling
            .end(files.into_iter().filter(|ino| !again.contains(ino)));
        if again.is_empty() {
            self.send(names);
            return;
        }
        names.extend(again.iter().map(|&ino| Invalidation::Inode(ino)));
        let settling = self.settling.clone();
        let done: Done = Box::new(move |_| settling.end(again));
        match self.notify.lock().as_ref() {
            Some(notify) => notify(names, Some(done)),
            None => done(Vec::new()),
        }
    }

    /// Settle what a reload of archive `id` left stale (see `Mounted::unsettled`).
    pub(super) fn settle_pending(&self, id: ArchiveId) {
        let pending = std::mem::take(&mut *self.archives[id].unsettled.lock());
        self.settle(pending);
    }

    /// The text of `.shaderfs/errors`: what went wrong, then what the mount holds that the
    /// archive does not.
    pub(super) fn errors_text(&self, state: &State) -> Blob {
        let mut text = self.errors.render();
        for note in self.unsaved(state) {
            text.extend_from_slice(note.as_bytes());
        }
        Blob::owned(text)
    }
}

impl Drop for Vfs {
    fn drop(&mut self) {
        self.views.close();
    }
}

pub(super) fn dir_node(parent: Ino, name: &str, archive: Option<ArchiveId>) -> Node {
    Node {
        parent,
        name: name.into(),
        archive,
        kind: NodeKind::Dir {
            children: Default::default(),
        },
        stamp: 0,
        overrides: None,
    }
}

pub(super) fn file_node(
    parent: Ino,
    name: &str,
    archive: Option<ArchiveId>,
    origin: Origin,
) -> Node {
    Node {
        parent,
        name: name.into(),
        archive,
        kind: NodeKind::File {
            origin,
            buffer: None,
            writers: 0,
        },
        stamp: 0,
        overrides: None,
    }
}

pub(super) fn join_path(dir: &str, leaf: &str) -> String {
    if dir.is_empty() {
        return leaf.to_string();
    }
    // Written once into a string of its size: a database's whole tree joins 39,001.
    let mut path = String::with_capacity(dir.len() + 1 + leaf.len());
    path.push_str(dir);
    path.push('/');
    path.push_str(leaf);
    path
}

pub(crate) fn split_path(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => ("", path),
    }
}
