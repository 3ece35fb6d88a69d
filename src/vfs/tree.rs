//! Nodes and inode numbers.
//!
//! Inode numbers are handed out in the order the tree is first described, which is archive
//! order, and are kept by path for the life of the mount: a commit that rebuilds an
//! archive's subtree gives every surviving path its old number, so `ls -i`, `find` and the
//! kernel's dentries stay valid. Numbers are never reused.

use indexmap::IndexMap;
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};

use super::fs::WriteBuffer;
use super::FileKey;

pub type Ino = u64;

/// A directory's entries by name, in the order they were added (archive order): lookups
/// by hash, listings by position.
pub type Children = IndexMap<String, Ino, FxBuildHasher>;

pub const ROOT_INO: Ino = 1;

/// Which archive of the mount a node belongs to (index into the mount's archive list).
pub type ArchiveId = usize;

#[derive(Debug)]
pub struct Node {
    pub parent: Ino,
    pub name: String,
    /// The archive this node lives in, `None` for the mount's own nodes (a folder mount's
    /// root, `.shaderfs/`).
    pub archive: Option<ArchiveId>,
    /// Path inside the archive (`shaders/X.vso`), empty for an archive's root.
    pub path: String,
    pub kind: NodeKind,
}

#[derive(Debug)]
pub enum NodeKind {
    Dir {
        children: Children,
    },
    File {
        origin: Origin,
        /// Private content while the file is written (protocol step 1 of DESIGN.md).
        buffer: Option<WriteBuffer>,
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
    nodes: FxHashMap<Ino, Node>,
    /// Per archive: path → inode. Looked up by `&str` (no allocation): a database's tree
    /// has some 40,000 paths, and every one is looked up when the tree is built.
    by_path: FxHashMap<ArchiveId, FxHashMap<Box<str>, Ino>>,
    /// Archive files renamed aside (an editor's backup): not shown until a file of that
    /// name is written again. The archive still holds them.
    hidden: FxHashSet<(ArchiveId, Box<str>)>,
    next: Ino,
}

impl Tree {
    pub fn new() -> Tree {
        let mut tree = Tree {
            nodes: FxHashMap::default(),
            by_path: FxHashMap::default(),
            hidden: FxHashSet::default(),
            next: ROOT_INO + 1,
        };
        tree.nodes.insert(
            ROOT_INO,
            Node {
                parent: ROOT_INO,
                name: String::new(),
                archive: None,
                path: String::new(),
                kind: NodeKind::Dir {
                    children: Children::default(),
                },
            },
        );
        tree
    }

    pub fn get(&self, ino: Ino) -> Option<&Node> {
        self.nodes.get(&ino)
    }

    pub fn get_mut(&mut self, ino: Ino) -> Option<&mut Node> {
        self.nodes.get_mut(&ino)
    }

    pub fn child(&self, parent: Ino, name: &str) -> Option<Ino> {
        match &self.nodes.get(&parent)?.kind {
            NodeKind::Dir { children } => children.get(name).copied(),
            _ => None,
        }
    }

    pub fn children(&self, dir: Ino) -> Option<&Children> {
        match &self.nodes.get(&dir)?.kind {
            NodeKind::Dir { children } => Some(children),
            _ => None,
        }
    }

    /// The inode number for an archive path: the one it had, or a new one.
    pub fn ino_for(&mut self, archive: ArchiveId, path: &str) -> Ino {
        if let Some(&ino) = self.by_path.get(&archive).and_then(|m| m.get(path)) {
            return ino;
        }
        let ino = self.fresh();
        self.bind_path(archive, path, ino);
        ino
    }

    pub fn fresh(&mut self) -> Ino {
        let ino = self.next;
        self.next += 1;
        ino
    }

    /// Make `path` of `archive` answer to `ino` from now on (a rename moves the inode
    /// with the name, as in any file system).
    pub fn bind_path(&mut self, archive: ArchiveId, path: &str, ino: Ino) {
        self.by_path
            .entry(archive)
            .or_default()
            .insert(path.into(), ino);
    }

    pub fn unbind_path(&mut self, archive: ArchiveId, path: &str) {
        if let Some(m) = self.by_path.get_mut(&archive) {
            m.remove(path);
        }
    }

    pub fn hide(&mut self, archive: ArchiveId, path: &str) {
        self.hidden.insert((archive, path.into()));
    }

    /// Show a hidden path again; whether it was hidden.
    pub fn unhide(&mut self, archive: ArchiveId, path: &str) -> bool {
        self.hidden.remove(&(archive, path.into()))
    }

    pub fn is_hidden(&self, archive: ArchiveId, path: &str) -> bool {
        !self.hidden.is_empty() && self.hidden.contains(&(archive, path.into()))
    }

    /// Insert `node` as `ino` under its parent.
    pub fn insert(&mut self, ino: Ino, node: Node) {
        let (parent, name) = (node.parent, node.name.clone());
        self.nodes.insert(ino, node);
        if let Some(Node {
            kind: NodeKind::Dir { children },
            ..
        }) = self.nodes.get_mut(&parent)
        {
            children.insert(name, ino);
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
        let node = self.nodes.remove(&ino)?;
        if let Some(Node {
            kind: NodeKind::Dir { children },
            ..
        }) = self.nodes.get_mut(&node.parent)
        {
            if children.get(&node.name) == Some(&ino) {
                children.shift_remove(&node.name);
            }
        }
        Some(node)
    }

    /// Every node of one archive.
    pub fn archive_nodes(&self, archive: ArchiveId) -> Vec<Ino> {
        self.nodes
            .iter()
            .filter(|(_, n)| n.archive == Some(archive))
            .map(|(&ino, _)| ino)
            .collect()
    }
}
