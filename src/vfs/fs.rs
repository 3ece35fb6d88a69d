//! [`Vfs`]: the mount's state machine in file-system terms (lookup, read, write, flush,
//! rename, …) with errno results. The FUSE adapter translates requests into these calls;
//! the offline commands (`shaderfs ls|cat|extract`) call them directly.

use std::collections::HashMap;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use memmap2::Mmap;
use parking_lot::{Mutex, RwLock};

use super::ahead::{Flights, Joined, Queue, ViewKey};
use super::cache::ViewCache;
use super::commit::{self, CommitError};
use super::errors::ErrorLog;
use super::mapguard;
use super::name;
use super::tree::{ArchiveId, Ino, Node, NodeKind, Origin, Tree, ROOT_INO};
use super::{Archive, Blob, Edit, EntryKind, FileKey, Format, OpenContext, ViewError};

/// Largest file a user may write through the mount; a runaway `cat /dev/zero > x.vso`
/// must not take the daemon's memory.
const MAX_BUFFER: usize = 256 << 20;
/// Archives up to this size are read ahead whole when they are opened.
const READ_AHEAD_LIMIT: usize = 512 << 20;
/// Bytes of rendered views (JSON, disassembly) kept by default.
pub const CACHE_BYTES: usize = 16 << 20;

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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    Dir,
    File,
    Symlink,
}

#[derive(Debug, Clone)]
pub struct Attr {
    pub ino: Ino,
    pub kind: FileType,
    pub size: u64,
    pub perm: u16,
    pub nlink: u32,
    pub uid: u32,
    pub gid: u32,
    pub mtime: SystemTime,
    /// Changes without a commit (logs, files being written): the kernel must not cache
    /// its attributes.
    pub volatile: bool,
}

/// A kernel cache entry that a commit made stale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalidation {
    /// The file's data and attributes.
    Inode(Ino),
    /// The name `name` in directory `parent`.
    Entry { parent: Ino, name: String },
}

/// What `open` tells the kernel.
#[derive(Debug, Clone, Copy)]
pub struct Opened {
    pub fh: u64,
    /// The kernel may keep its page cache from earlier opens.
    pub keep_cache: bool,
    /// Bypass the page cache (see `open`).
    pub direct_io: bool,
}

/// Why a mount source could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Malformed(String),
}

/// Content of a file being written (DESIGN.md write-back step 1).
#[derive(Debug, Default)]
pub struct WriteBuffer {
    pub data: Vec<u8>,
    /// Changed since the last commit attempt.
    pub dirty: bool,
}

struct Snapshot {
    archive: Arc<dyn Archive>,
    generation: u64,
    /// The mapped file, kept open to notice another program changing it under us, and
    /// to copy unchanged pieces from in a commit.
    file: File,
    map: Arc<Mmap>,
    len: u64,
    mtime: SystemTime,
}

impl Snapshot {
    fn archive_bytes(&self) -> &[u8] {
        &self.map
    }
}

struct Mounted {
    path: PathBuf,
    /// Directory name in a folder mount; empty when the archive is the mount's root.
    dir_name: String,
    format: &'static dyn Format,
    root: Ino,
    snapshot: RwLock<Arc<Snapshot>>,
    commit_lock: Mutex<()>,
    backed_up: AtomicBool,
    /// Another program changed the file under the mount (reported once).
    changed_reported: AtomicBool,
}

struct Handle {
    ino: Ino,
    archive: Option<ArchiveId>,
    /// What a reader sees until it closes, however many commits happen meanwhile.
    pinned: Option<Blob>,
    writes: bool,
}

struct State {
    tree: Tree,
    handles: HashMap<u64, Handle>,
    next_fh: u64,
}

type Notify = Box<dyn Fn(Vec<Invalidation>) + Send + Sync>;

pub struct Vfs {
    opts: VfsOptions,
    archives: Vec<Mounted>,
    state: RwLock<State>,
    cache: Mutex<ViewCache<ViewKey>>,
    /// Sizes of views rendered once: a listing can then give true sizes without
    /// rendering again, whatever the cache has let go.
    sizes: Mutex<HashMap<ViewKey, u64>>,
    /// Renders in progress, and views queued for the read-ahead threads (`ahead.rs`).
    flights: Flights,
    ahead: Arc<Queue>,
    /// Whether read-ahead threads run (only a mount starts them).
    reading_ahead: AtomicBool,
    errors: ErrorLog,
    notify: Mutex<Option<Notify>>,
    started: SystemTime,
    /// `.shaderfs/errors`, whose cached pages go stale with every report.
    errors_ino: Ino,
}

fn open_snapshot(
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
    // SAFETY: the mapping is read-only. Another program truncating the file under us is
    // detected before every read of mapped bytes (`Vfs::check_unchanged`).
    let map = unsafe { Mmap::map(&file) }
        .map_err(|e| OpenError::Usage(format!("{}: cannot map: {e}", path.display())))?;
    // Indexing walks the framing from start to end, and the records of a database lie
    // a page or two apart: ask for the whole file at once (archives are tens of MB), so
    // a cold mount waits for one read-ahead rather than a page fault per record.
    if map.len() <= READ_AHEAD_LIMIT {
        let _ = map.advise(memmap2::Advice::WillNeed);
    }
    let map = Arc::new(map);
    let archive = format
        .open(path, map.clone(), ctx)
        .map_err(|e| OpenError::Malformed(e.message))?;
    Ok(Snapshot {
        archive,
        generation,
        file,
        map,
        len: meta.len(),
        mtime: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
    })
}

/// Find the format of `path`, if any (the only place formats are recognised is the list
/// the caller passes, built in `archive::FORMATS`).
fn recognise(path: &Path, formats: &[&'static dyn Format]) -> Option<&'static dyn Format> {
    use std::io::Read;
    let mut head = [0u8; 64];
    let n = File::open(path).and_then(|mut f| f.read(&mut head)).ok()?;
    formats
        .iter()
        .copied()
        .find(|f| f.recognises(path, &head[..n]))
}

impl Vfs {
    /// Open `source` (an archive, or a folder of archives) without mounting anything.
    pub fn load(
        source: &Path,
        formats: &[&'static dyn Format],
        opts: VfsOptions,
    ) -> Result<Vfs, OpenError> {
        mapguard::install();
        let meta = std::fs::metadata(source)
            .map_err(|e| OpenError::Usage(format!("{}: {e}", source.display())))?;
        let ctx = OpenContext {
            writable: opts.writable,
            sign: opts.sign,
        };
        let mut found: Vec<(PathBuf, String, &'static dyn Format)> = Vec::new();
        if meta.is_dir() {
            let mut paths: Vec<PathBuf> = std::fs::read_dir(source)
                .map_err(|e| OpenError::Usage(format!("{}: {e}", source.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect();
            paths.sort();
            let mut namer = name::Namer::new();
            namer.reserve(".shaderfs");
            for path in paths {
                if let Some(format) = recognise(&path, formats) {
                    let raw = path.file_name().unwrap_or_default().as_encoded_bytes();
                    found.push((path.clone(), namer.name(raw), format));
                }
            }
            if found.is_empty() {
                let names: Vec<&str> = formats.iter().map(|f| f.name()).collect();
                return Err(OpenError::Usage(format!(
                    "{}: no archive in this folder (looked for {})",
                    source.display(),
                    names.join(", ")
                )));
            }
        } else {
            let format = recognise(source, formats).ok_or_else(|| {
                OpenError::Malformed(format!(
                    "{}: not an archive shaderfs knows (.sdp, .sha, SGD2)",
                    source.display()
                ))
            })?;
            found.push((source.to_path_buf(), String::new(), format));
        }

        let mut tree = Tree::new();
        let mut archives = Vec::new();
        for (id, (path, dir_name, format)) in found.into_iter().enumerate() {
            let snapshot = open_snapshot(format, &path, ctx, 0)?;
            let root = if dir_name.is_empty() {
                tree.set_root(id, ROOT_INO);
                // The root is the archive's root: editors' temporary files (sed -i,
                // atomic saves) are created beside views that live there.
                if let Some(node) = tree.get_mut(ROOT_INO) {
                    node.archive = Some(id);
                }
                ROOT_INO
            } else {
                let ino = tree.fresh();
                tree.set_root(id, ino);
                tree.insert(ino, dir_node(ROOT_INO, &dir_name, Some(id), ""));
                ino
            };
            archives.push(Mounted {
                path,
                dir_name,
                format,
                root,
                snapshot: RwLock::new(Arc::new(snapshot)),
                commit_lock: Mutex::new(()),
                backed_up: AtomicBool::new(false),
                changed_reported: AtomicBool::new(false),
            });
        }
        let cache_bytes = opts.cache_bytes;
        let mut vfs = Vfs {
            opts,
            archives,
            state: RwLock::new(State {
                tree,
                handles: HashMap::new(),
                next_fh: 1,
            }),
            cache: Mutex::new(ViewCache::new(cache_bytes)),
            sizes: Mutex::new(HashMap::new()),
            flights: Flights::default(),
            ahead: Arc::new(Queue::default()),
            reading_ahead: AtomicBool::new(false),
            errors: ErrorLog::default(),
            notify: Mutex::new(None),
            started: SystemTime::now(),
            errors_ino: 0,
        };
        let errors_ino;
        {
            let mut state = vfs.state.write();
            let tree = &mut state.tree;
            let dir = tree.fresh();
            tree.insert(dir, dir_node(ROOT_INO, ".shaderfs", None, ""));
            let log = tree.fresh();
            errors_ino = log;
            tree.insert(
                log,
                Node {
                    parent: dir,
                    name: "errors".into(),
                    archive: None,
                    path: String::new(),
                    kind: file_kind(Origin::ErrorLog),
                },
            );
            for id in 0..vfs.archives.len() {
                vfs.sync_subtree(tree, id);
            }
        }
        vfs.errors_ino = errors_ino;
        Ok(vfs)
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

    /// Every archive's [`Archive::problems`], each with the archive's path in the mount.
    pub fn problems(&self) -> Vec<String> {
        (0..self.archives.len())
            .flat_map(|id| {
                let place = self.user_path(id, "");
                self.snapshot(id)
                    .archive
                    .problems()
                    .into_iter()
                    .map(move |p| match place.is_empty() {
                        true => p,
                        false => format!("{place}: {p}"),
                    })
            })
            .collect()
    }

    /// The archive files behind this mount.
    pub fn archive_paths(&self) -> Vec<&Path> {
        self.archives.iter().map(|m| m.path.as_path()).collect()
    }

    fn snapshot(&self, id: ArchiveId) -> Arc<Snapshot> {
        self.archives[id].snapshot.read().clone()
    }

    /// Bring one archive's subtree in line with its current snapshot: a path that
    /// survives keeps its inode, its node (updated in place) and its write buffer and
    /// writers; a new path gets a new inode; a vanished one goes, except scratch files
    /// and files not yet committed, which stay while their folder does. Returns the
    /// kernel caches this made stale.
    fn sync_subtree(&self, tree: &mut Tree, id: ArchiveId) -> Vec<Invalidation> {
        let snap = self.snapshot(id);
        let root = self.archives[id].root;
        let entries = snap.archive.entries();
        // Indexed by inode: whether the snapshot still has it.
        let mut seen = vec![false; tree.end() as usize];
        let mut inval = Vec::new();
        // Entries come folder by folder: the last parent looked up is usually the next.
        let mut last_parent: (String, Ino) = (String::new(), root);
        for entry in entries {
            if tree.is_hidden(id, &entry.path) {
                continue;
            }
            let (parent_path, leaf) = split_path(&entry.path);
            let parent = if parent_path == last_parent.0 {
                last_parent.1
            } else {
                let ino = tree.ino_for(id, parent_path);
                last_parent = (parent_path.to_string(), ino);
                ino
            };
            // The inode a rename bound the path to, else the one already at that place.
            let (found, in_place) = match tree.bound(id, &entry.path) {
                Some(ino) => (Some(ino), tree.child(parent, leaf) == Some(ino)),
                None => (tree.child(parent, leaf), true),
            };
            let ino = match found {
                // A binding left by an earlier rename may name an inode another path of
                // this snapshot has: that path keeps it, this one gets its own.
                Some(ino) if seen.get(ino as usize) != Some(&true) => ino,
                _ => tree.fresh(),
            };
            if seen.len() <= ino as usize {
                seen.resize(ino as usize + 1, false);
            }
            seen[ino as usize] = true;
            let same_place = found == Some(ino)
                && in_place
                && tree
                    .get(ino)
                    .is_some_and(|n| n.parent == parent && same_type(&n.kind, &entry.kind));
            if same_place {
                if let Some(node) = tree.get_mut(ino) {
                    match (&mut node.kind, entry.kind) {
                        (
                            NodeKind::File { origin, .. },
                            EntryKind::File {
                                key,
                                size,
                                writable,
                            },
                        ) => {
                            *origin = Origin::Archive {
                                key,
                                size,
                                writable,
                            };
                            inval.push(Invalidation::Inode(ino));
                        }
                        (NodeKind::Symlink { target }, EntryKind::Symlink { target: new })
                            if *target != new =>
                        {
                            *target = new;
                            inval.push(Invalidation::Inode(ino));
                        }
                        _ => {}
                    }
                }
                continue;
            }
            if let Some(old) = tree.detach(ino) {
                inval.push(Invalidation::Entry {
                    parent: old.parent,
                    name: old.name.to_string(),
                });
            }
            let kind = match entry.kind {
                EntryKind::Dir => NodeKind::Dir {
                    children: Default::default(),
                },
                EntryKind::File {
                    key,
                    size,
                    writable,
                } => file_kind(Origin::Archive {
                    key,
                    size,
                    writable,
                }),
                EntryKind::Symlink { target } => NodeKind::Symlink { target },
            };
            tree.insert(
                ino,
                Node {
                    parent,
                    name: leaf.into(),
                    archive: Some(id),
                    path: entry.path,
                    kind,
                },
            );
        }
        for ino in tree.archive_nodes(id) {
            if ino == root || seen.get(ino as usize) == Some(&true) {
                continue;
            }
            let Some(node) = tree.get(ino) else { continue };
            let scratch = matches!(
                node.kind,
                NodeKind::File {
                    origin: Origin::Scratch | Origin::Pending,
                    ..
                }
            );
            if scratch && tree.get(node.parent).is_some() {
                continue;
            }
            if let Some(old) = tree.detach(ino) {
                inval.push(Invalidation::Entry {
                    parent: old.parent,
                    name: old.name.to_string(),
                });
            }
        }
        inval
    }

    // ---- attributes -------------------------------------------------------------------

    /// A file whose view cannot be rendered has no size to show: EIO, as reading it would
    /// give (a size of 0 would let the kernel's page cache answer an empty file instead).
    ///
    /// `lazy` (for listings): a view never rendered is not rendered for its size; it is
    /// listed with no size and attributes the kernel must fetch again (`stat`, or a read
    /// past the size it has, asks for them), so `ls` of 7,594 program JSON files renders
    /// none of them, and `ls -l` renders each once.
    fn attr_of(&self, ino: Ino, node: &Node, lazy: bool) -> Result<Attr, Errno> {
        let (mtime, writable_archive) = match node.archive {
            Some(id) => (self.snapshot(id).mtime, self.opts.writable),
            None => (self.started, false),
        };
        let mut volatile = matches!(
            &node.kind,
            NodeKind::File {
                origin: Origin::ErrorLog | Origin::Scratch | Origin::Pending,
                ..
            } | NodeKind::File {
                buffer: Some(_),
                ..
            }
        );
        let (kind, size, perm) = match &node.kind {
            NodeKind::Dir { .. } => (
                FileType::Dir,
                0,
                if self.opts.writable { 0o755 } else { 0o555 },
            ),
            NodeKind::Symlink { target } => (FileType::Symlink, target.len() as u64, 0o777),
            NodeKind::File { origin, buffer, .. } => {
                let writable = match origin {
                    Origin::Archive { writable, .. } => *writable && writable_archive,
                    Origin::Pending | Origin::Scratch => true,
                    Origin::ErrorLog => false,
                };
                let size = match buffer {
                    Some(b) => b.data.len() as u64,
                    None => match self.content_size(node, origin, lazy)? {
                        Some(size) => size,
                        None => {
                            volatile = true;
                            0
                        }
                    },
                };
                (FileType::File, size, if writable { 0o644 } else { 0o444 })
            }
        };
        let perm = match self.opts.umask {
            Some(umask) if kind != FileType::Symlink => perm & !(umask as u16) & 0o777,
            _ => perm,
        };
        Ok(Attr {
            ino,
            kind,
            size,
            perm,
            nlink: if kind == FileType::Dir { 2 } else { 1 },
            uid: self.opts.uid,
            gid: self.opts.gid,
            mtime,
            volatile,
        })
    }

    fn content_size(&self, node: &Node, origin: &Origin, lazy: bool) -> Result<Option<u64>, Errno> {
        Ok(Some(match origin {
            Origin::Archive {
                size: Some(size), ..
            } => *size,
            Origin::Archive { key, .. } => {
                let id = node.archive.ok_or(libc::EIO)?;
                let memo = (id, self.snapshot(id).generation, *key);
                if let Some(&size) = self.sizes.lock().get(&memo) {
                    return Ok(Some(size));
                }
                if lazy {
                    return Ok(None);
                }
                self.render(id, *key, &node.path)?.len() as u64
            }
            Origin::ErrorLog => self.errors.render().len() as u64,
            Origin::Pending | Origin::Scratch => 0,
        }))
    }

    pub fn getattr(&self, ino: Ino) -> Result<Attr, Errno> {
        let state = self.state.read();
        let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
        self.before_render(&state.tree, node);
        self.attr_of(ino, node, false)
    }

    /// A `stat` of a view never rendered renders it (its size is its rendering): the
    /// moment to render the next ones of its folder on the other threads.
    fn before_render(&self, tree: &Tree, node: &Node) {
        // Also when this one was rendered ahead: the reader is moving through the
        // folder, and the threads keep a window ahead of it.
        if derived_view(node).is_some() && self.reading_ahead.load(Ordering::Relaxed) {
            self.read_ahead(tree, node);
        }
    }

    /// Attributes for a directory listing: an unreadable file is listed all the same,
    /// with no size and nothing the kernel may keep (its lookup then reports EIO).
    pub fn listing_attr(&self, ino: Ino) -> Result<Attr, Errno> {
        let state = self.state.read();
        let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
        self.attr_of(ino, node, true).or_else(|e| {
            if e != libc::EIO {
                return Err(e);
            }
            Ok(Attr {
                ino,
                kind: FileType::File,
                size: 0,
                perm: 0o444,
                nlink: 1,
                uid: self.opts.uid,
                gid: self.opts.gid,
                mtime: self.started,
                volatile: true,
            })
        })
    }

    pub fn lookup(&self, parent: Ino, name: &str) -> Result<Attr, Errno> {
        let state = self.state.read();
        let ino = match state.tree.get(parent) {
            None => return Err(libc::ENOENT),
            Some(Node {
                kind: NodeKind::Dir { .. },
                ..
            }) => state.tree.child(parent, name).ok_or(libc::ENOENT)?,
            Some(_) => return Err(libc::ENOTDIR),
        };
        let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
        self.before_render(&state.tree, node);
        self.attr_of(ino, node, false)
    }

    /// At most `limit` entries of a directory from `offset` on, with `.` and `..` first.
    /// (A reply to the kernel holds a few dozen; building the whole remaining list for
    /// each of them would make listing a 15,000-entry folder quadratic.)
    pub fn readdir(
        &self,
        ino: Ino,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<(Ino, Arc<str>, FileType)>, Errno> {
        let state = self.state.read();
        let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
        let children = state.tree.children(ino).ok_or(libc::ENOTDIR)?;
        let dots = [
            (ino, Arc::from("."), FileType::Dir),
            (node.parent, Arc::from(".."), FileType::Dir),
        ];
        // Children are indexed by position: skipping to `offset` costs nothing.
        let listed = children
            .iter()
            .skip(offset.saturating_sub(dots.len()))
            .filter_map(|(name, &child)| {
                let kind = match &state.tree.get(child)?.kind {
                    NodeKind::Dir { .. } => FileType::Dir,
                    NodeKind::File { .. } => FileType::File,
                    NodeKind::Symlink { .. } => FileType::Symlink,
                };
                Some((child, name.clone(), kind))
            });
        Ok(dots
            .into_iter()
            .skip(offset)
            .chain(listed)
            .take(limit)
            .collect())
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
        let state = self.state.read();
        let mut ino = ROOT_INO;
        for part in path.split('/').filter(|p| !p.is_empty() && *p != ".") {
            ino = if part == ".." {
                state.tree.get(ino).map(|n| n.parent).ok_or(libc::ENOENT)?
            } else {
                state.tree.child(ino, part).ok_or(libc::ENOENT)?
            };
        }
        Ok(ino)
    }

    // ---- reading ----------------------------------------------------------------------

    /// Render (or fetch from the cache) a file of an archive's current snapshot.
    fn render(&self, id: ArchiveId, key: FileKey, path: &str) -> Result<Blob, Errno> {
        let snap = self.snapshot(id);
        let cache_key = (id, snap.generation, key);
        if let Some(blob) = self.cache.lock().get(&cache_key) {
            return Ok(blob.clone());
        }
        // A read-ahead thread may be rendering it now: take its result.
        let lead = match self.flights.join(cache_key) {
            Joined::Lead(lead) => Some(lead),
            Joined::Followed(Some(blob)) => return Ok(blob),
            // Its render failed: render here, which reports why.
            Joined::Followed(None) => None,
        };
        match snap.archive.read(key) {
            Ok(blob) => {
                self.keep(cache_key, &blob);
                if let Some(lead) = lead {
                    lead.land(Some(blob.clone()));
                }
                Ok(blob)
            }
            Err(e) => {
                drop(lead);
                self.report(&self.user_path(id, path), &format!("cannot read: {e}"));
                Err(libc::EIO)
            }
        }
    }

    /// Remember a rendered view: its size for listings, its bytes while they fit.
    fn keep(&self, key: ViewKey, blob: &Blob) {
        self.sizes.lock().insert(key, blob.len() as u64);
        self.cache.lock().put(key, blob.clone());
    }

    /// Start `threads` threads that render views ahead of readers (see `ahead.rs`).
    /// They stop when the vfs goes.
    pub fn start_read_ahead(self: &Arc<Self>, threads: usize) {
        for n in 0..threads {
            let (vfs, queue) = (Arc::downgrade(self), self.ahead.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("ahead{n}"))
                .spawn(move || {
                    while let Some(key) = queue.pop() {
                        match vfs.upgrade() {
                            Some(vfs) => vfs.render_ahead(key),
                            None => return,
                        }
                    }
                });
            match spawned {
                Ok(_) => self.reading_ahead.store(true, Ordering::Relaxed),
                Err(e) => log::warn!("no read-ahead thread: {e}"),
            }
        }
    }

    /// A read-ahead job: render a view unless it is done, being done, or stale. A
    /// failure is not reported here: the reader's own render reports it.
    fn render_ahead(&self, key: ViewKey) {
        let (id, generation, file) = key;
        let snap = self.snapshot(id);
        if snap.generation != generation || self.sizes.lock().contains_key(&key) {
            return;
        }
        let Joined::Lead(lead) = self.flights.join(key) else {
            return;
        };
        if self.check_unchanged(id).is_err() {
            return;
        }
        if let Ok(blob) = snap.archive.read(file) {
            self.keep(key, &blob);
            lead.land(Some(blob));
        }
    }

    /// A reader asks for `node`: queue the next files of its folder that still need
    /// rendering, when the folder is large enough to be read through.
    fn read_ahead(&self, tree: &Tree, node: &Node) {
        /// Folders smaller than this are not read ahead (the root's few views, an
        /// effect's `effect.json`).
        const MIN_FOLDER: usize = 16;
        /// Views queued ahead of the reader, and siblings looked at to find them.
        const AHEAD: usize = 8;
        const LOOK: usize = 4 * AHEAD;
        let Some(id) = node.archive else { return };
        let Some(children) = tree.children(node.parent) else {
            return;
        };
        if children.len() < MIN_FOLDER {
            return;
        }
        let Some(at) = children.get_index_of(&*node.name) else {
            return;
        };
        // A folder's files are of one archive: one snapshot and one look at the sizes.
        let generation = self.snapshot(id).generation;
        let wanted: Vec<ViewKey> = {
            let sizes = self.sizes.lock();
            children
                .values()
                .skip(at + 1)
                .take(LOOK)
                .filter_map(|&sibling| derived_view(tree.get(sibling)?))
                .map(|key| (id, generation, key))
                .filter(|view| !sizes.contains_key(view))
                .take(AHEAD)
                .collect()
        };
        for view in wanted {
            if !self.flights.is_flying(&view) {
                self.ahead.push(view);
            }
        }
    }

    fn user_path(&self, id: ArchiveId, path: &str) -> String {
        let dir = &self.archives[id].dir_name;
        match (dir.is_empty(), path.is_empty()) {
            (true, _) => path.to_string(),
            (false, true) => dir.clone(),
            (false, false) => format!("{dir}/{path}"),
        }
    }

    /// Another program replaced or truncated the archive while it is mapped: refuse to
    /// touch the mapping (a read past a truncated end would be SIGBUS).
    fn check_unchanged(&self, id: ArchiveId) -> Result<(), Errno> {
        let snap = self.snapshot(id);
        let changed = match snap.file.metadata() {
            Ok(meta) => {
                meta.len() != snap.len
                    || meta.modified().unwrap_or(SystemTime::UNIX_EPOCH) != snap.mtime
            }
            Err(_) => true,
        };
        if changed
            && !self.archives[id]
                .changed_reported
                .swap(true, Ordering::Relaxed)
        {
            self.report(
                &self.user_path(id, ""),
                "the archive was changed by another program while mounted; \
                 unmount and mount it again",
            );
        }
        if changed {
            return Err(libc::EIO);
        }
        Ok(())
    }

    /// The content writers see: their buffer while there is one, else what is committed.
    fn content(&self, state: &State, ino: Ino) -> Result<Blob, Errno> {
        match state.tree.get(ino).map(|n| &n.kind) {
            Some(NodeKind::File {
                buffer: Some(b), ..
            }) => Ok(Blob::owned(b.data.clone())),
            _ => self.committed(state, ino),
        }
    }

    /// The content readers see: what the archive holds (a write buffer is private to its
    /// writers until it is committed). Scratch files have only their buffer.
    fn committed(&self, state: &State, ino: Ino) -> Result<Blob, Errno> {
        let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
        match &node.kind {
            NodeKind::File {
                origin: Origin::Scratch,
                buffer: Some(b),
                ..
            } => Ok(Blob::owned(b.data.clone())),
            NodeKind::File { origin, .. } => match origin {
                Origin::Archive { key, .. } => {
                    let id = node.archive.ok_or(libc::EIO)?;
                    self.check_unchanged(id)?;
                    self.render(id, *key, &node.path)
                }
                Origin::ErrorLog => Ok(Blob::owned(self.errors.render())),
                Origin::Pending | Origin::Scratch => Ok(Blob::owned(Vec::new())),
            },
            NodeKind::Dir { .. } => Err(libc::EISDIR),
            NodeKind::Symlink { .. } => Err(libc::EINVAL),
        }
    }

    pub fn open(&self, ino: Ino, flags: i32) -> Result<Opened, Errno> {
        let access = flags & libc::O_ACCMODE;
        let writes = access == libc::O_WRONLY || access == libc::O_RDWR;
        let truncate = flags & libc::O_TRUNC != 0;
        let mut state = self.state.write();
        let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
        let origin = file_origin(node, libc::ELOOP)?;
        if writes {
            self.check_writable(&origin)?;
        }
        // The kernel's page cache and file size are shared by every opener, while each
        // handle here reads what it opened (a reader keeps the content it opened across
        // commits; a writer sees its own buffer). In a writable mount the two can differ,
        // so reads bypass the page cache; a read-only mount never changes and keeps it.
        let direct_io = self.opts.writable
            || matches!(origin, Origin::ErrorLog | Origin::Scratch | Origin::Pending);
        let pinned = if writes || matches!(origin, Origin::ErrorLog | Origin::Scratch) {
            None
        } else {
            Some(self.committed(&state, ino)?)
        };
        if writes {
            let current = if truncate {
                None
            } else {
                Some(self.committed(&state, ino)?)
            };
            if let Some(NodeKind::File {
                buffer, writers, ..
            }) = state.tree.get_mut(ino).map(|n| &mut n.kind)
            {
                *writers += 1;
                match (buffer.as_mut(), truncate) {
                    (Some(b), true) => {
                        b.data.clear();
                        b.dirty = true;
                    }
                    (Some(_), false) => {}
                    (None, true) => {
                        *buffer = Some(WriteBuffer {
                            data: Vec::new(),
                            dirty: true,
                        })
                    }
                    (None, false) => {
                        *buffer = Some(WriteBuffer {
                            data: current.map(|c| c.as_slice().to_vec()).unwrap_or_default(),
                            dirty: false,
                        })
                    }
                }
            }
        }
        let fh = state.next_fh;
        state.next_fh += 1;
        let archive = state.tree.get(ino).and_then(|n| n.archive);
        state.handles.insert(
            fh,
            Handle {
                ino,
                archive,
                pinned,
                writes,
            },
        );
        Ok(Opened {
            fh,
            keep_cache: !direct_io,
            direct_io,
        })
    }

    fn check_writable(&self, origin: &Origin) -> Result<(), Errno> {
        match origin {
            Origin::Scratch | Origin::Pending => Ok(()),
            _ if !self.opts.writable => Err(libc::EROFS),
            Origin::Archive { writable: true, .. } => Ok(()),
            _ => Err(libc::EACCES),
        }
    }

    pub fn read(&self, ino: Ino, fh: u64, offset: u64, size: u32) -> Result<Vec<u8>, Errno> {
        let state = self.state.read();
        let blob = match state.handles.get(&fh) {
            Some(Handle {
                pinned: Some(blob),
                ino: h,
                ..
            }) if *h == ino => blob.clone(),
            Some(Handle { writes: false, .. }) => self.committed(&state, ino)?,
            _ => self.content(&state, ino)?,
        };
        let archive = state.handles.get(&fh).and_then(|h| h.archive);
        drop(state);
        let mapped = matches!(blob, Blob::Mapped(..));
        if let (true, Some(id)) = (mapped, archive) {
            self.check_unchanged(id)?;
        }
        let bytes = blob.as_slice();
        let start = (offset.min(bytes.len() as u64)) as usize;
        let end = start.saturating_add(size as usize).min(bytes.len());
        let out = bytes[start..end].to_vec();
        if mapped && mapguard::take_fault() {
            if let Some(id) = archive {
                let _ = self.check_unchanged(id);
            }
            return Err(libc::EIO);
        }
        Ok(out)
    }

    // ---- writing ----------------------------------------------------------------------

    fn with_buffer<T>(
        &self,
        ino: Ino,
        f: impl FnOnce(&mut WriteBuffer) -> Result<T, Errno>,
    ) -> Result<T, Errno> {
        let mut state = self.state.write();
        match state.tree.get_mut(ino).map(|n| &mut n.kind) {
            Some(NodeKind::File {
                buffer: Some(b), ..
            }) => f(b),
            Some(NodeKind::File { .. }) => Err(libc::EBADF),
            Some(_) => Err(libc::EISDIR),
            None => Err(libc::ENOENT),
        }
    }

    pub fn write(&self, ino: Ino, offset: u64, data: &[u8]) -> Result<u32, Errno> {
        self.with_buffer(ino, |b| {
            let end = offset
                .checked_add(data.len() as u64)
                .filter(|&e| e <= MAX_BUFFER as u64)
                .ok_or(libc::EFBIG)? as usize;
            if b.data.len() < end {
                b.data.resize(end, 0);
            }
            b.data[offset as usize..end].copy_from_slice(data);
            b.dirty = true;
            Ok(data.len() as u32)
        })
    }

    /// `truncate`/`ftruncate`: the new length goes into the write buffer; the archive
    /// changes when a writer closes.
    pub fn set_size(&self, ino: Ino, size: u64) -> Result<Attr, Errno> {
        if size > MAX_BUFFER as u64 {
            return Err(libc::EFBIG);
        }
        {
            let mut state = self.state.write();
            let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
            let origin = file_origin(node, libc::EINVAL)?;
            self.check_writable(&origin)?;
            let has_buffer = matches!(
                node.kind,
                NodeKind::File {
                    buffer: Some(_),
                    ..
                }
            );
            let current = if has_buffer || size == 0 {
                None
            } else {
                Some(self.content(&state, ino)?)
            };
            if let Some(NodeKind::File { buffer, .. }) =
                state.tree.get_mut(ino).map(|n| &mut n.kind)
            {
                let b = buffer.get_or_insert_with(|| WriteBuffer {
                    data: current.map(|c| c.as_slice().to_vec()).unwrap_or_default(),
                    dirty: false,
                });
                b.data.resize(size as usize, 0);
                b.dirty = true;
            }
        }
        self.getattr(ino)
    }

    /// `close()` and `fsync()`: validate and commit a dirty buffer (protocol step 2). The
    /// error is what `close()` returns to the program that wrote.
    pub fn flush(&self, ino: Ino) -> Result<(), Errno> {
        let (id, origin, path, data) = {
            let state = self.state.read();
            let Some(node) = state.tree.get(ino) else {
                return Ok(());
            };
            match &node.kind {
                NodeKind::File {
                    buffer: Some(b),
                    origin,
                    ..
                } if b.dirty => match (node.archive, origin) {
                    (Some(id), Origin::Archive { .. } | Origin::Pending) => {
                        (id, origin.clone(), node.path.clone(), b.data.clone())
                    }
                    _ => return Ok(()),
                },
                _ => return Ok(()),
            }
        };
        // An empty file is no shader, asm text or table: it is what `truncate`, `: >` or
        // an editor leaves before the new content arrives. It waits, uncommitted, for the
        // write that follows (and readers keep seeing the committed content).
        if data.is_empty() {
            return Ok(());
        }
        let (dir, leaf) = split_path(&path);
        let edit = match origin {
            Origin::Archive { key, .. } => Edit::Write { key, data: &data },
            _ => Edit::Create {
                dir,
                name: leaf,
                data: &data,
            },
        };
        let result = self.commit(id, &path, &edit, |_| {});
        // Whatever the outcome, this content has had its answer: it is not retried.
        let mut state = self.state.write();
        if let Some(NodeKind::File {
            buffer: Some(b), ..
        }) = state.tree.get_mut(ino).map(|n| &mut n.kind)
        {
            if b.data == data {
                b.dirty = false;
            }
        }
        result
    }

    pub fn release(&self, ino: Ino, fh: u64) {
        let handle = self.state.write().handles.remove(&fh);
        if !handle.is_some_and(|h| h.writes) {
            return;
        }
        // Nothing can report an error from here; flush() has normally committed already.
        let _ = self.flush(ino);
        let mut state = self.state.write();
        let mut drop_node = false;
        if let Some(node) = state.tree.get_mut(ino) {
            if let NodeKind::File {
                buffer,
                writers,
                origin,
                ..
            } = &mut node.kind
            {
                *writers = writers.saturating_sub(1);
                let waiting = buffer
                    .as_ref()
                    .is_some_and(|b| b.dirty && b.data.is_empty());
                if *writers == 0 && !waiting {
                    match origin {
                        // A scratch file's buffer is its content.
                        Origin::Scratch => {}
                        // Created but never committed (its only save was refused).
                        Origin::Pending => drop_node = true,
                        _ => *buffer = None,
                    }
                }
            }
        }
        if drop_node {
            state.tree.remove(ino);
        }
    }

    /// Commit `edit` to archive `id` (protocol step 3), then bring its subtree in line.
    /// `adjust` runs on the tree first (renames move inode numbers with the name).
    fn commit(
        &self,
        id: ArchiveId,
        path: &str,
        edit: &Edit<'_>,
        adjust: impl FnOnce(&mut Tree),
    ) -> Result<(), Errno> {
        let mounted = &self.archives[id];
        let _serial = mounted.commit_lock.lock();
        let old = self.snapshot(id);
        let user_path = self.user_path(id, path);
        let rewrite = match old.archive.apply(edit) {
            Ok(rewrite) => rewrite,
            Err(e) => {
                self.report(&user_path, &format!("refused: {e}"));
                return Err(match e {
                    ViewError::Invalid(_) => libc::EINVAL,
                    ViewError::NotPermitted(_) => libc::EPERM,
                    ViewError::Corrupt(_) => libc::EIO,
                });
            }
        };
        let ctx = OpenContext {
            writable: self.opts.writable,
            sign: self.opts.sign,
        };
        let backup = self.opts.backup && !mounted.backed_up.load(Ordering::Relaxed);
        let format = mounted.format;
        // The temporary file is read as the archive it is about to become.
        let replaced = commit::replace(
            &mounted.path,
            &old.file,
            old.archive_bytes(),
            &rewrite,
            backup,
            |_temp, map| format.open(&mounted.path, map, ctx).map_err(|e| e.message),
        );
        let replaced = match replaced {
            Ok(r) => r,
            Err(e) => {
                self.report(&user_path, &format!("not saved: {e}"));
                return Err(match e {
                    CommitError::Io { source, .. } => source.raw_os_error().unwrap_or(libc::EIO),
                    CommitError::Reread { .. } => libc::EIO,
                });
            }
        };
        if backup {
            mounted.backed_up.store(true, Ordering::Relaxed);
        }
        let meta = replaced.file.metadata().ok();
        let snapshot = Snapshot {
            archive: replaced.value,
            generation: old.generation + 1,
            file: replaced.file,
            map: replaced.map,
            len: rewrite.len() as u64,
            mtime: meta
                .and_then(|m| m.modified().ok())
                .unwrap_or(SystemTime::UNIX_EPOCH),
        };
        let generation = snapshot.generation;
        *mounted.snapshot.write() = Arc::new(snapshot);
        self.sizes
            .lock()
            .retain(|&(a, g, _), _| a != id || g == generation);
        let inval = {
            let mut state = self.state.write();
            adjust(&mut state.tree);
            self.sync_subtree(&mut state.tree, id)
        };
        log::info!("committed {user_path} into {}", mounted.path.display());
        self.send(inval);
        retire(old);
        Ok(())
    }

    /// Record a diagnostic in `.shaderfs/errors` (and the log).
    fn report(&self, path: &str, message: &str) {
        self.errors.record(path, message);
        self.send(vec![Invalidation::Inode(self.errors_ino)]);
    }

    fn send(&self, inval: Vec<Invalidation>) {
        if let Some(notify) = self.notify.lock().as_ref() {
            notify(inval);
        }
    }

    /// The key of an archive file by its path, hidden or not.
    fn key_of(&self, id: ArchiveId, path: &str) -> Option<FileKey> {
        self.snapshot(id)
            .archive
            .entries()
            .into_iter()
            .find_map(|e| match e.kind {
                EntryKind::File { key, .. } if e.path == path => Some(key),
                _ => None,
            })
    }

    // ---- names ------------------------------------------------------------------------

    /// `creat`/`open(O_CREAT)`: a new archive member where the format accepts the name,
    /// else a scratch file.
    pub fn create(&self, parent: Ino, leaf: &str, flags: i32) -> Result<(Attr, Opened), Errno> {
        if !name::is_plain(leaf) {
            return Err(libc::EINVAL);
        }
        {
            let mut state = self.state.write();
            let dir = state.tree.get(parent).ok_or(libc::ENOENT)?;
            if state.tree.child(parent, leaf).is_some() {
                return Err(libc::EEXIST);
            }
            let id = dir.archive.ok_or(libc::EACCES)?;
            if !matches!(dir.kind, NodeKind::Dir { .. }) {
                return Err(libc::ENOTDIR);
            }
            if !self.opts.writable {
                return Err(libc::EROFS);
            }
            let dir_path = dir.path.clone();
            let path = join_path(&dir_path, leaf);
            // A file renamed aside comes back under its name: this is its new content.
            if state.tree.unhide(id, &path) {
                state.tree.unbind_path(id, &path);
                let inval = self.sync_subtree(&mut state.tree, id);
                drop(state);
                self.send(inval);
                let ino = self.lookup(parent, leaf)?.ino;
                let opened = self.open(ino, flags | libc::O_TRUNC)?;
                return Ok((self.getattr(ino)?, opened));
            }
            let origin = if self.snapshot(id).archive.accepts_new(&dir_path, leaf) {
                Origin::Pending
            } else {
                Origin::Scratch
            };
            let ino = state.tree.fresh();
            state.tree.insert(
                ino,
                Node {
                    parent,
                    name: leaf.into(),
                    archive: Some(id),
                    path,
                    kind: NodeKind::File {
                        origin,
                        buffer: Some(WriteBuffer {
                            data: Vec::new(),
                            dirty: true,
                        }),
                        writers: 0,
                    },
                },
            );
        }
        let ino = self.lookup(parent, leaf)?.ino;
        let opened = self.open(ino, flags | libc::O_TRUNC)?;
        Ok((self.getattr(ino)?, opened))
    }

    pub fn unlink(&self, parent: Ino, leaf: &str) -> Result<(), Errno> {
        let (ino, id, origin, path) = {
            let state = self.state.read();
            let ino = state.tree.child(parent, leaf).ok_or(libc::ENOENT)?;
            let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
            match (&node.kind, node.archive) {
                (NodeKind::File { origin, .. }, Some(id)) => {
                    (ino, id, origin.clone(), node.path.clone())
                }
                (NodeKind::Dir { .. }, _) => return Err(libc::EISDIR),
                _ => return Err(libc::EPERM),
            }
        };
        match origin {
            Origin::Scratch | Origin::Pending => {
                self.state.write().tree.remove(ino);
                Ok(())
            }
            Origin::Archive { key, .. } => {
                if !self.opts.writable {
                    return Err(libc::EROFS);
                }
                self.commit(id, &path, &Edit::Remove { key }, |_| {})
            }
            Origin::ErrorLog => Err(libc::EPERM),
        }
    }

    pub fn rename(
        &self,
        parent: Ino,
        leaf: &str,
        new_parent: Ino,
        new_leaf: &str,
    ) -> Result<(), Errno> {
        if !name::is_plain(new_leaf) {
            return Err(libc::EINVAL);
        }
        let state = self.state.read();
        let ino = state.tree.child(parent, leaf).ok_or(libc::ENOENT)?;
        let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
        let target_dir = state.tree.get(new_parent).ok_or(libc::ENOENT)?;
        let id = node.archive.ok_or(libc::EPERM)?;
        if target_dir.archive != Some(id) {
            return Err(libc::EXDEV);
        }
        let NodeKind::File { origin, buffer, .. } = &node.kind else {
            return Err(libc::EPERM);
        };
        if !self.opts.writable {
            return Err(libc::EROFS);
        }
        let origin = origin.clone();
        let data = buffer.as_ref().map(|b| b.data.clone()).unwrap_or_default();
        let from_path = node.path.clone();
        let to_path = join_path(&target_dir.path, new_leaf);
        let target_ino = state.tree.child(new_parent, new_leaf);
        let target_origin = target_ino.and_then(|t| match &state.tree.get(t)?.kind {
            NodeKind::File { origin, .. } => Some(origin.clone()),
            _ => None,
        });
        if target_ino.is_some() && target_origin.is_none() {
            return Err(libc::EISDIR);
        }
        let accepts = self
            .snapshot(id)
            .archive
            .accepts_new(&target_dir.path, new_leaf);
        let target_hidden = state.tree.is_hidden(id, &to_path);
        drop(state);
        // Back over a file that was renamed aside (an editor restoring its backup, or
        // saving its new text by rename): a save of that file.
        let target_origin = match (target_hidden, target_origin) {
            (true, None) => self.key_of(id, &to_path).map(|key| Origin::Archive {
                key,
                size: None,
                writable: true,
            }),
            (_, origin) => origin,
        };

        let (dir, name) = split_path(&to_path);
        // Moves the inode with its name, as the kernel's dentry does.
        let rebind = |tree: &mut Tree| {
            if let Some(t) = target_ino {
                tree.remove(t);
            }
            tree.unbind_path(id, &from_path);
            tree.bind_path(id, &to_path, ino);
        };
        match (&origin, &target_origin) {
            // An editor's temporary file saved over a view: a save of that view.
            (Origin::Scratch | Origin::Pending, Some(Origin::Archive { key, .. })) => {
                let edit = Edit::Write {
                    key: *key,
                    data: &data,
                };
                self.commit(id, &to_path, &edit, |tree| {
                    tree.remove(ino);
                    tree.unhide(id, &to_path);
                    rebind(tree);
                })
            }
            (Origin::Scratch | Origin::Pending, _) if accepts => {
                let edit = Edit::Create {
                    dir,
                    name,
                    data: &data,
                };
                self.commit(id, &to_path, &edit, |tree| {
                    if let Some(t) = target_ino {
                        tree.remove(t);
                    }
                    tree.remove(ino);
                    tree.bind_path(id, &to_path, ino);
                })
            }
            // Scratch to scratch: just a name change in memory.
            (Origin::Scratch | Origin::Pending, _) => {
                let mut state = self.state.write();
                if let Some(t) = target_ino {
                    state.tree.remove(t);
                }
                let Some(mut node) = state.tree.remove(ino) else {
                    return Err(libc::ENOENT);
                };
                node.parent = new_parent;
                node.name = new_leaf.into();
                node.path = to_path.clone();
                if let NodeKind::File { origin, .. } = &mut node.kind {
                    *origin = Origin::Scratch;
                }
                state.tree.insert(ino, node);
                Ok(())
            }
            // Renamed to a name that is no archive member (`X.asm~`, an editor's backup):
            // the content moves to a scratch file of that name and the original is hidden
            // until a file of its name is written again. The archive does not change.
            (Origin::Archive { .. }, None | Some(Origin::Scratch)) if !accepts => {
                let mut state = self.state.write();
                let content = self.committed(&state, ino)?;
                if let Some(t) = target_ino {
                    state.tree.remove(t);
                }
                state.tree.remove(ino);
                state.tree.unbind_path(id, &from_path);
                state.tree.hide(id, &from_path);
                state.tree.insert(
                    ino,
                    Node {
                        parent: new_parent,
                        name: new_leaf.into(),
                        archive: Some(id),
                        path: to_path.clone(),
                        kind: NodeKind::File {
                            origin: Origin::Scratch,
                            buffer: Some(WriteBuffer {
                                data: content.as_slice().to_vec(),
                                dirty: false,
                            }),
                            writers: 0,
                        },
                    },
                );
                Ok(())
            }
            (Origin::Archive { key, .. }, _) => {
                let edit = Edit::Rename {
                    key: *key,
                    dir,
                    name,
                };
                self.commit(id, &to_path, &edit, rebind)
            }
            (Origin::ErrorLog, _) => Err(libc::EPERM),
        }
    }
}

/// The origin of a file node; what opening or truncating anything else answers.
fn file_origin(node: &Node, symlink: Errno) -> Result<Origin, Errno> {
    match &node.kind {
        NodeKind::File { origin, .. } => Ok(origin.clone()),
        NodeKind::Dir { .. } => Err(libc::EISDIR),
        NodeKind::Symlink { .. } => Err(symlink),
    }
}

/// The key of a file whose bytes are rendered (its size is only known by rendering it),
/// unless a writer's buffer stands in for it.
fn derived_view(node: &Node) -> Option<FileKey> {
    match &node.kind {
        NodeKind::File {
            origin: Origin::Archive {
                key, size: None, ..
            },
            buffer: None,
            ..
        } => Some(*key),
        _ => None,
    }
}

impl Drop for Vfs {
    fn drop(&mut self) {
        // The read-ahead threads wait on the queue, not on the vfs.
        self.ahead.close();
    }
}

/// Let go of a snapshot a commit replaced, off the path of the reply: when its last
/// reference goes, unmapping the old archive and closing its (now unlinked) file frees
/// its pages, some 15 ms for a 60 MB database that the `close()` waiting on the commit
/// need not wait for.
fn retire(old: Arc<Snapshot>) {
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

fn dir_node(parent: Ino, name: &str, archive: Option<ArchiveId>, path: &str) -> Node {
    Node {
        parent,
        name: name.into(),
        archive,
        path: path.to_string(),
        kind: NodeKind::Dir {
            children: Default::default(),
        },
    }
}

/// Whether a node and an entry are the same kind of thing (a path that turns from a file
/// into a folder gets a new node).
fn same_type(kind: &NodeKind, entry: &EntryKind) -> bool {
    matches!(
        (kind, entry),
        (NodeKind::Dir { .. }, EntryKind::Dir)
            | (NodeKind::File { .. }, EntryKind::File { .. })
            | (NodeKind::Symlink { .. }, EntryKind::Symlink { .. })
    )
}

fn file_kind(origin: Origin) -> NodeKind {
    NodeKind::File {
        origin,
        buffer: None,
        writers: 0,
    }
}

fn join_path(dir: &str, leaf: &str) -> String {
    if dir.is_empty() {
        leaf.to_string()
    } else {
        format!("{dir}/{leaf}")
    }
}

fn split_path(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => ("", path),
    }
}
