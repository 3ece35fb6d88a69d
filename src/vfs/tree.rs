//! Nodes and inode numbers.
//!
//! Inode numbers are handed out in the order the tree is first described (archive order
//! within a folder; an archive that describes its tree folder by folder has a folder's
//! entries described, and numbered, when someone first looks into it: [`Tree::defer`]),
//! and are kept by path for the life of the mount: a commit that rebuilds an archive's
//! subtree gives every surviving path its old number, so `ls -i`, `find` and the kernel's
//! dentries stay valid. Numbers are never reused.
//!
//! A path's number is found by walking the tree (the node already at that place), unless
//! a rename bound the path to the inode that moved there, as the kernel's dentry did.
//! Walking needs no table of every path: mounting a database of 34,000 nodes allocates one
//! name per node and nothing else.

use indexmap::IndexMap;
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::ops::Range;
use std::time::SystemTime;

use super::buffer::WriteBuffer;
use super::FileKey;

pub type Ino = u64;

/// A file name as the tree keeps it: held inline up to 24 bytes (`12345.json`, an
/// effect's name), so a folder of 200,000 views allocates nothing per name, and a freed
/// listing leaves no live names scattered over the heap's pages.
pub type Name = compact_str::CompactString;

/// A directory's entries by name, in the order they were added (archive order): lookups
/// by hash, listings by position. The name is a copy of the child's [`Node::name`].
pub type Children = IndexMap<Name, Ino, FxBuildHasher>;

pub const ROOT_INO: Ino = 1;

/// Which archive of the mount a node belongs to (index into the mount's archive list).
pub type ArchiveId = usize;

#[derive(Debug)]
pub struct Node {
    pub parent: Ino,
    pub name: Name,
    /// The archive this node lives in, `None` for the mount's own nodes (a folder mount's
    /// root, `.shaderfs/`).
    pub archive: Option<ArchiveId>,
    pub kind: NodeKind,
    /// When the node last changed: an index into [`Tree::time`], so the tens of
    /// thousands of nodes a commit leaves alone share one time.
    pub stamp: Stamp,
    /// Mode, owner and times a user set (`chmod`, `chown`, `touch -d`), for the mount's
    /// life.
    pub overrides: Option<Box<Overrides>>,
}

/// An index into the tree's table of times.
pub type Stamp = u32;

/// A file of the archive not shown ([`Tree::hide`]).
#[derive(Debug, Clone)]
pub struct Hidden {
    pub since: SystemTime,
    /// The archive bytes it showed (its entry's `source`): when a commit changes them,
    /// or the file goes from the archive, it is no longer the file that was hidden.
    pub source: Option<Range<usize>>,
}

/// What `setattr` changed of a node; `None` fields keep what the mount shows.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub mode: Option<u16>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub atime: Option<SystemTime>,
    pub mtime: Option<SystemTime>,
    /// When the attributes were last changed.
    pub ctime: Option<SystemTime>,
}

#[derive(Debug)]
pub enum NodeKind {
    Dir {
        children: Children,
    },
    File {
        origin: Origin,
        /// Private content while the file is written (protocol step 1 of DESIGN.md).
        /// Boxed: a database has a hundred thousand files and a handful of writers.
        buffer: Option<Box<WriteBuffer>>,
        /// Handles open for writing.
        writers: u32,
    },
    Symlink {
        target: String,
    },
}

/// Where a file's bytes come from.
#[derive(Debug, Clone)]
pub enum Origin {
    /// A file of the archive's current snapshot.
    Archive {
        key: FileKey,
        size: Option<u64>,
        writable: bool,
        /// The archive bytes it shows or derives from (`None`: the whole archive).
        source: Option<Range<usize>>,
    },
    /// Created through the mount, becomes an archive member at its first commit.
    Pending,
    /// A name no archive member has (an editor's swap or temporary file): lives in memory
    /// for the mount's life, never enters the archive.
    Scratch,
    /// `.shaderfs/errors`.
    ErrorLog,
}

#[derive(Debug, Default)]
pub struct Tree {
    /// Indexed by inode number; `None` once removed (numbers are never reused).
    nodes: Vec<Option<Node>>,
    /// Per archive: the directory that is its root.
    roots: FxHashMap<ArchiveId, Ino>,
    /// Per archive: paths bound to an inode whatever the tree holds there, the new name
    /// of a renamed file (the inode moves with the name).
    bound: FxHashMap<ArchiveId, FxHashMap<Box<str>, Ino>>,
    /// Archive files renamed aside (an editor's backup) or removed where the archive
    /// cannot lose them alone (a view): not shown until a file of that name is written
    /// again, which saves it. The archive still holds them. With when they went.
    hidden: FxHashMap<(ArchiveId, Box<str>), Hidden>,
    /// The times nodes changed at, indexed by [`Stamp`].
    times: Vec<SystemTime>,
    /// Files taken out of the tree that the kernel may still read ([`Tree::retire`]),
    /// waiting for the vfs to keep what they held.
    retiring: Vec<Retiring>,
    /// Folders of archives that describe their tree folder by folder whose entries are
    /// not in the tree yet, with the time those entries take when they come: nobody has
    /// looked into them since the archive was loaded.
    unbuilt: FxHashMap<Ino, Stamp>,
}

/// A file taken out of the tree that the kernel may still read, with the path it had.
#[derive(Debug)]
pub struct Retiring {
    pub ino: Ino,
    pub node: Node,
    pub path: String,
}

impl Tree {
    pub fn new() -> Tree {
        let mut tree = Tree {
            nodes: Vec::new(),
            roots: FxHashMap::default(),
            bound: FxHashMap::default(),
            hidden: FxHashMap::default(),
            times: vec![SystemTime::now()],
            retiring: Vec::new(),
            unbuilt: FxHashMap::default(),
        };
        // Inode 0 is no inode; the root is 1.
        tree.nodes.push(None);
        tree.nodes.push(Some(Node {
            parent: ROOT_INO,
            name: "".into(),
            archive: None,
            kind: NodeKind::Dir {
                children: Children::default(),
            },
            stamp: 0,
            overrides: None,
        }));
        tree
    }

    /// A stamp for `time` (the last one again when it is the same time).
    pub fn stamp(&mut self, time: SystemTime) -> Stamp {
        if self.times.last() != Some(&time) {
            self.times.push(time);
        }
        (self.times.len() - 1) as Stamp
    }

    pub fn time(&self, stamp: Stamp) -> SystemTime {
        self.times
            .get(stamp as usize)
            .copied()
            .unwrap_or(SystemTime::UNIX_EPOCH)
    }

    pub fn get(&self, ino: Ino) -> Option<&Node> {
        self.nodes.get(usize::try_from(ino).ok()?)?.as_ref()
    }

    pub fn get_mut(&mut self, ino: Ino) -> Option<&mut Node> {
        self.nodes.get_mut(usize::try_from(ino).ok()?)?.as_mut()
    }

    /// Take file `ino` out of the tree as one the kernel may still read: replaced by a
    /// rename, or changed by a commit while readers had it open (they keep reading what
    /// it held, as a file unlinked while open). The vfs keeps its content
    /// ([`Tree::take_retiring`]).
    pub fn retire(&mut self, ino: Ino) {
        let path = self.path(ino);
        if let Some(node) = self.remove(ino) {
            if matches!(node.kind, NodeKind::File { .. }) {
                self.retiring.push(Retiring { ino, node, path });
            }
        }
    }

    /// Give file `ino`'s place a new inode: the file under the old one is retired (its
    /// readers keep what it holds, [`Tree::retire`]), and a node like it, with its times
    /// and overrides, takes its name under the new number. Only a file with no buffer.
    pub fn renumber(&mut self, ino: Ino) -> Option<Ino> {
        let node = self.get(ino)?;
        let NodeKind::File {
            origin,
            buffer: None,
            ..
        } = &node.kind
        else {
            return None;
        };
        let like = Node {
            parent: node.parent,
            name: node.name.clone(),
            archive: node.archive,
            kind: NodeKind::File {
                origin: origin.clone(),
                buffer: None,
                writers: 0,
            },
            stamp: node.stamp,
            overrides: node.overrides.clone(),
        };
        let archive = like.archive;
        let path = self.path(ino);
        self.retire(ino);
        let fresh = self.fresh();
        self.insert(fresh, like);
        if let Some(archive) = archive {
            if self.bound(archive, &path) == Some(ino) {
                self.bind_path(archive, &path, fresh);
            }
        }
        Some(fresh)
    }

    /// The files retired since the last call.
    pub fn take_retiring(&mut self) -> Vec<Retiring> {
        std::mem::take(&mut self.retiring)
    }

    /// The path of `ino` inside its archive (`shaders/X.vso`): its names from the
    /// archive's root down; empty for an archive's root and the mount's own nodes. Not
    /// kept in each node: a database has hundreds of thousands, and a path is asked for
    /// only when a file is rendered, written or renamed.
    pub fn path(&self, ino: Ino) -> String {
        let Some(archive) = self.get(ino).and_then(|n| n.archive) else {
            return String::new();
        };
        let root = self.roots.get(&archive).copied();
        let mut names: Vec<&str> = Vec::new();
        let mut at = ino;
        while Some(at) != root {
            let Some(node) = self.get(at) else { break };
            if node.archive != Some(archive) || at == ROOT_INO {
                break;
            }
            names.push(&node.name);
            at = node.parent;
        }
        names.reverse();
        names.join("/")
    }

    pub fn child(&self, parent: Ino, name: &str) -> Option<Ino> {
        match &self.get(parent)?.kind {
            NodeKind::Dir { children } => children.get(name).copied(),
            _ => None,
        }
    }

    pub fn children(&self, dir: Ino) -> Option<&Children> {
        match &self.get(dir)?.kind {
            NodeKind::Dir { children } => Some(children),
            _ => None,
        }
    }

    /// The inode an archive path answers to now: its binding, else the node at that place
    /// in the tree.
    pub fn resolve(&self, archive: ArchiveId, path: &str) -> Option<Ino> {
        if path.is_empty() {
            return self.roots.get(&archive).copied();
        }
        if let Some(ino) = self.bound(archive, path) {
            return Some(ino);
        }
        let (parent, leaf) = match path.rfind('/') {
            Some(i) => (&path[..i], &path[i + 1..]),
            None => ("", path),
        };
        self.child(self.resolve(archive, parent)?, leaf)
    }

    /// The inode `path` is bound to, if a binding says (cheap when none does: most
    /// mounts never rename).
    pub fn bound(&self, archive: ArchiveId, path: &str) -> Option<Ino> {
        let map = self.bound.get(&archive)?;
        match map.is_empty() {
            true => None,
            false => map.get(path).copied(),
        }
    }

    /// The inode number for an archive path: the one it has, or a new one.
    pub fn ino_for(&mut self, archive: ArchiveId, path: &str) -> Ino {
        match self.resolve(archive, path) {
            Some(ino) => ino,
            None => self.fresh(),
        }
    }

    pub fn fresh(&mut self) -> Ino {
        self.nodes.push(None);
        (self.nodes.len() - 1) as Ino
    }

    /// Room for `more` nodes, so loading a database of 300,000 files does not leave the
    /// table with as much again unused (a doubling vector's slack).
    pub fn reserve(&mut self, more: usize) {
        self.nodes.reserve_exact(more);
    }

    /// Room for `more` entries in folder `dir`.
    pub fn reserve_children(&mut self, dir: Ino, more: usize) {
        if let Some(Node {
            kind: NodeKind::Dir { children },
            ..
        }) = self.get_mut(dir)
        {
            children.reserve_exact(more);
        }
    }

    /// The number that will be handed out next (every number below it has been).
    pub fn end(&self) -> Ino {
        self.nodes.len() as Ino
    }

    /// Make `ino` the directory that is `archive`'s root.
    pub fn set_root(&mut self, archive: ArchiveId, ino: Ino) {
        self.roots.insert(archive, ino);
    }

    /// Make `path` of `archive` answer to `ino` from now on (a rename moves the inode
    /// with the name, as in any file system).
    pub fn bind_path(&mut self, archive: ArchiveId, path: &str, ino: Ino) {
        self.bound
            .entry(archive)
            .or_default()
            .insert(path.into(), ino);
    }

    pub fn unbind_path(&mut self, archive: ArchiveId, path: &str) {
        if let Some(m) = self.bound.get_mut(&archive) {
            m.remove(path);
        }
    }

    pub fn hide(&mut self, archive: ArchiveId, path: &str, source: Option<Range<usize>>) {
        let hidden = Hidden {
            since: SystemTime::now(),
            source,
        };
        self.hidden.insert((archive, path.into()), hidden);
    }

    /// What is known of hidden `path`, if it is hidden.
    pub fn hidden_at(&self, archive: ArchiveId, path: &str) -> Option<&Hidden> {
        match self.hidden.is_empty() {
            true => None,
            false => self.hidden.get(&(archive, path.into())),
        }
    }

    /// Hidden `path` shows the same bytes at `source` in a new snapshot.
    pub fn move_hidden(&mut self, archive: ArchiveId, path: &str, source: Option<Range<usize>>) {
        if let Some(h) = self.hidden.get_mut(&(archive, path.into())) {
            h.source = source;
        }
    }

    /// The hidden paths of one archive.
    pub fn hidden_paths(&self, archive: ArchiveId) -> Vec<String> {
        self.hidden
            .keys()
            .filter(|(a, _)| *a == archive)
            .map(|(_, p)| p.to_string())
            .collect()
    }

    /// Show a hidden path again; whether it was hidden.
    pub fn unhide(&mut self, archive: ArchiveId, path: &str) -> bool {
        self.hidden.remove(&(archive, path.into())).is_some()
    }

    pub fn is_hidden(&self, archive: ArchiveId, path: &str) -> bool {
        !self.hidden.is_empty() && self.hidden.contains_key(&(archive, path.into()))
    }

    /// Every hidden path, with its archive and when it went.
    pub fn hidden(&self) -> impl Iterator<Item = (ArchiveId, &str, SystemTime)> {
        self.hidden
            .iter()
            .map(|((id, path), hidden)| (*id, &**path, hidden.since))
    }

    /// Every node, with its number.
    pub fn nodes(&self) -> impl Iterator<Item = (Ino, &Node)> {
        self.nodes
            .iter()
            .enumerate()
            .filter_map(|(ino, n)| Some((ino as Ino, n.as_ref()?)))
    }

    /// Insert `node` as `ino` under its parent.
    pub fn insert(&mut self, ino: Ino, node: Node) {
        let (parent, name) = (node.parent, node.name.clone());
        let Ok(slot) = usize::try_from(ino) else {
            return;
        };
        if slot >= self.nodes.len() {
            self.nodes.resize_with(slot + 1, || None);
        }
        self.nodes[slot] = Some(node);
        if let Some(Node {
            kind: NodeKind::Dir { children },
            ..
        }) = self.get_mut(parent)
        {
            children.insert(name, ino);
        }
    }

    /// Add `node` under its parent with a new number, unless the parent has an entry of
    /// its name (one hash of the name, where [`Tree::child`] then [`Tree::insert`] take
    /// two: describing a folder of 200,000 entries does this for each).
    pub fn add(&mut self, node: Node) -> Option<Ino> {
        let ino = self.end();
        let Some(Node {
            kind: NodeKind::Dir { children },
            ..
        }) = self.get_mut(node.parent)
        else {
            return None;
        };
        match children.entry(node.name.clone()) {
            indexmap::map::Entry::Occupied(_) => None,
            indexmap::map::Entry::Vacant(slot) => {
                slot.insert(ino);
                self.nodes.push(Some(node));
                Some(ino)
            }
        }
    }

    /// Remove `ino` (and everything under it) from its parent and the table.
    pub fn remove(&mut self, ino: Ino) -> Option<Node> {
        let node = self.detach(ino)?;
        if let NodeKind::Dir { children } = &node.kind {
            for &child in children.values() {
                self.remove(child);
            }
        }
        Some(node)
    }

    /// Take `ino` out of the table and out of its parent's entries, leaving the nodes
    /// under it in the table (a rebuild decides about each of them).
    pub fn detach(&mut self, ino: Ino) -> Option<Node> {
        let node = self.take(ino)?;
        if let Some(Node {
            kind: NodeKind::Dir { children },
            ..
        }) = self.get_mut(node.parent)
        {
            if children.get(&*node.name) == Some(&ino) {
                children.shift_remove(&*node.name);
            }
        }
        Some(node)
    }

    /// Leave folder `dir`'s entries out until someone looks into it; they will have
    /// time `stamp`.
    pub fn defer(&mut self, dir: Ino, stamp: Stamp) {
        self.unbuilt.insert(dir, stamp);
    }

    /// Whether folder `dir`'s entries are still to be described (cheap when none are).
    pub fn is_unbuilt(&self, dir: Ino) -> bool {
        !self.unbuilt.is_empty() && self.unbuilt.contains_key(&dir)
    }

    /// The time deferred folder `dir`'s entries take, taking it off the list: `None` if
    /// its entries are in the tree.
    pub fn take_unbuilt(&mut self, dir: Ino) -> Option<Stamp> {
        match self.unbuilt.is_empty() {
            true => None,
            false => self.unbuilt.remove(&dir),
        }
    }

    /// The deferred folders of one archive.
    pub fn unbuilt_of(&self, archive: ArchiveId) -> Vec<Ino> {
        let archive_of = |ino: &Ino| self.get(*ino).and_then(|n| n.archive);
        let dirs = self.unbuilt.keys().copied();
        dirs.filter(|ino| archive_of(ino) == Some(archive))
            .collect()
    }

    /// [`Tree::detach`] each of `inos`, touching each folder's entries once: taking
    /// 20,000 files out of a folder one at a time moves its entries 20,000 times.
    pub fn detach_all(&mut self, inos: &[Ino]) -> Vec<Node> {
        let mut out = Vec::with_capacity(inos.len());
        let mut from: FxHashMap<Ino, rustc_hash::FxHashSet<Ino>> = FxHashMap::default();
        for &ino in inos {
            let Some(node) = self.take(ino) else { continue };
            from.entry(node.parent).or_default().insert(ino);
            out.push(node);
        }
        for (parent, gone) in from {
            if let Some(Node {
                kind: NodeKind::Dir { children },
                ..
            }) = self.get_mut(parent)
            {
                children.retain(|_, child| !gone.contains(child));
            }
        }
        out
    }

    /// Take `ino` out of the table (and off the deferred folders), leaving its parent's
    /// entries to the caller.
    fn take(&mut self, ino: Ino) -> Option<Node> {
        let node = self.nodes.get_mut(usize::try_from(ino).ok()?)?.take()?;
        if !self.unbuilt.is_empty() {
            self.unbuilt.remove(&ino);
        }
        Some(node)
    }

    /// Every node of one archive.
    pub fn archive_nodes(&self, archive: ArchiveId) -> Vec<Ino> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.as_ref().is_some_and(|n| n.archive == Some(archive)))
            .map(|(ino, _)| ino as Ino)
            .collect()
    }
}
