//! Bringing an archive's subtree in line with a new snapshot: a function of the tree,
//! the snapshot's entries and what changed between the two snapshots.
//!
//! A path that survives keeps its inode, its node (updated in place), its write buffer
//! and its writers; a new path gets a new inode; a vanished one goes, except scratch files
//! and files not yet committed, which stay while their folder does. A file's time changes
//! only when the archive bytes it shows or is derived from changed (its entry's
//! `source`), and a folder's only when names came or went, so after one edit `find
//! -newer`, `rsync` and `make` see only what the edit touched.

use std::cell::OnceCell;

use rustc_hash::{FxHashMap, FxHashSet};
use std::ops::Range;
use std::sync::Arc;
use std::time::SystemTime;

use super::fs::{join_path, Invalidation};
use super::tree::{ArchiveId, Ino, Name, Node, NodeKind, Origin, Stamp, Tree};
use super::{ArchiveBytes, Entry, EntryKind, Member, Members, Piece, Rewrite};

/// What happened between the tree's snapshot and the new one.
pub(super) enum Change<'a> {
    /// The archive as first loaded: every node is new, at this time.
    Load(Stamp),
    /// The same snapshot, with names hidden or shown again: only names come and go, at
    /// this time.
    Names(Stamp),
    /// A commit wrote `rewrite` of `old` (whose kept pieces are ranges of `old`).
    Commit {
        old: Arc<ArchiveBytes>,
        new: Arc<ArchiveBytes>,
        rewrite: &'a Rewrite,
        time: SystemTime,
    },
    /// Another program changed the file; `in_place` when it wrote the file the old
    /// snapshot maps (whose old bytes are then gone).
    Reload {
        old: Arc<ArchiveBytes>,
        new: Arc<ArchiveBytes>,
        in_place: bool,
        /// The new file's modification time.
        time: SystemTime,
    },
}

/// Bring archive `id`'s subtree (rooted at `root`) in line with `entries`. Returns the
/// kernel caches this made stale.
///
/// `reading`: files that readers have open and read live (through the kernel's page
/// cache, which is the inode's). One of them that changes, or goes, is retired
/// ([`Tree::retire`]) with what it held, for its readers, and a file that changed takes a
/// new inode: the kernel never mixes two versions in one inode's cache and size.
pub(super) fn reconcile(
    tree: &mut Tree,
    id: ArchiveId,
    root: Ino,
    entries: Vec<Entry>,
    change: &Change,
    reading: &FxHashSet<Ino>,
) -> Vec<Invalidation> {
    let differ = Differ::new(change);
    let stamp = match change {
        Change::Load(stamp) | Change::Names(stamp) => *stamp,
        Change::Commit { time, .. } | Change::Reload { time, .. } => tree.stamp(*time),
    };
    if matches!(change, Change::Load(_)) {
        tree.reserve(entries.len());
    }
    // Indexed by inode: whether the snapshot still has it.
    let mut seen = vec![false; tree.end() as usize];
    let mut inval = Vec::new();
    // Folders whose names came or went.
    let mut touched: Vec<Ino> = Vec::new();
    // Entries come folder by folder: the last parent looked up is usually the next.
    let mut last_parent: (String, Ino) = (String::new(), root);
    // A hidden file stays hidden while it shows the same bytes; once a commit changes
    // them (another member renamed onto its name, its member saved through another view)
    // or takes it away, it is another file, and shown (or gone) as such.
    let mut hidden: FxHashSet<String> = tree.hidden_paths(id).into_iter().collect();
    for entry in entries {
        if let Some(h) = tree.hidden_at(id, &entry.path) {
            hidden.remove(&entry.path);
            let source = match &entry.kind {
                EntryKind::File { source, .. } => source.clone(),
                _ => None,
            };
            let same = matches!(entry.kind, EntryKind::File { .. })
                && (differ.none || !differ.changed(&h.source, &source));
            if same {
                tree.move_hidden(id, &entry.path, source);
                continue;
            }
            tree.unhide(id, &entry.path);
        }
        let (parent_path, leaf) = split(&entry.path);
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
        if same_place && !(reading.contains(&ino) && changes(tree.get(ino), &entry.kind, &differ)) {
            if let Some(node) = tree.get_mut(ino) {
                update(node, entry.kind, &differ, stamp, ino, &mut inval);
            }
            continue;
        }
        let ino = match same_place {
            // Changed under its readers: they keep this inode; the path takes a new one.
            true => {
                tree.retire(ino);
                touched.push(parent);
                inval.push(Invalidation::Entry {
                    parent,
                    name: leaf.to_string(),
                });
                let fresh = tree.fresh();
                seen.resize(fresh as usize + 1, false);
                seen[fresh as usize] = true;
                fresh
            }
            false => ino,
        };
        detach(tree, ino, &mut touched, &mut inval);
        tree.insert(ino, node(parent, leaf.into(), id, entry.kind, stamp));
        touched.push(parent);
    }
    for gone in hidden {
        tree.unhide(id, &gone);
    }
    // What the snapshot no longer has goes in one batch (a folder's entries are rewritten
    // once, however many of them go).
    let mut gone: FxHashSet<Ino> = FxHashSet::default();
    let mut gone_in_order = Vec::new();
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
        if scratch && tree.get(node.parent).is_some() && !gone.contains(&node.parent) {
            continue;
        }
        if reading.contains(&ino) {
            let (parent, name) = (node.parent, node.name.to_string());
            tree.retire(ino);
            touched.push(parent);
            inval.push(Invalidation::Entry { parent, name });
            continue;
        }
        gone.insert(ino);
        gone_in_order.push(ino);
    }
    for old in tree.detach_all(&gone_in_order) {
        touched.push(old.parent);
        inval.push(Invalidation::Entry {
            parent: old.parent,
            name: old.name.to_string(),
        });
    }
    if !matches!(change, Change::Load(_)) {
        touched.sort_unstable();
        touched.dedup();
        for dir in touched {
            if let Some(node) = tree.get_mut(dir) {
                node.stamp = stamp;
                inval.push(Invalidation::Inode(dir));
            }
        }
    }
    inval
}

/// Add the entries of folders whose entries were left out (`filling`, with the time
/// their entries take) to the tree, as the archive was loaded: each takes a new inode,
/// and a folder among them is filled too (from the same `entries`, the whole tree).
pub(super) fn fill(
    tree: &mut Tree,
    id: ArchiveId,
    entries: Vec<Entry>,
    filling: &mut FxHashMap<Ino, Stamp>,
) {
    let mut last_parent: Option<(String, Option<Ino>)> = None;
    for entry in entries {
        let (parent_path, leaf) = split(&entry.path);
        let parent = match &last_parent {
            Some((path, ino)) if path == parent_path => *ino,
            _ => {
                let ino = tree.resolve(id, parent_path);
                last_parent = Some((parent_path.to_string(), ino));
                ino
            }
        };
        let Some((parent, stamp)) = parent.and_then(|p| Some((p, *filling.get(&p)?))) else {
            continue;
        };
        if tree.is_hidden(id, &entry.path) {
            continue;
        }
        let dir = matches!(entry.kind, EntryKind::Dir);
        let Some(ino) = tree.add(node(parent, leaf.into(), id, entry.kind, stamp)) else {
            continue;
        };
        if dir {
            filling.insert(ino, stamp);
        }
    }
}

/// Adds the members of folder `dir` (at `path`, its entries left out until now) to the
/// tree as the archive describes them, each with a new inode and the time `stamp`; its
/// folders are left out in turn, until someone looks into them.
pub(super) struct FolderFill<'a> {
    tree: &'a mut Tree,
    id: ArchiveId,
    dir: Ino,
    path: &'a str,
    stamp: Stamp,
    /// A path is made only where some file is hidden (most mounts hide none).
    any_hidden: bool,
}

impl<'a> FolderFill<'a> {
    pub fn new(tree: &'a mut Tree, id: ArchiveId, dir: Ino, path: &'a str, stamp: Stamp) -> Self {
        let any_hidden = tree.hidden().next().is_some();
        FolderFill {
            tree,
            id,
            dir,
            path,
            stamp,
            any_hidden,
        }
    }
}

impl Members for FolderFill<'_> {
    fn reserve(&mut self, more: usize) {
        self.tree.reserve(more);
        self.tree.reserve_children(self.dir, more);
    }

    fn add(&mut self, Member { name, kind }: Member) {
        if self.any_hidden && self.tree.is_hidden(self.id, &join_path(self.path, &name)) {
            return;
        }
        let folder = matches!(kind, EntryKind::Dir);
        let node = node(self.dir, name, self.id, kind, self.stamp);
        if let Some(ino) = self.tree.add(node) {
            if folder {
                self.tree.defer(ino, self.stamp);
            }
        }
    }
}

/// A new node for an archive's entry.
fn node(parent: Ino, name: Name, id: ArchiveId, kind: EntryKind, stamp: Stamp) -> Node {
    let kind = match kind {
        EntryKind::Dir => NodeKind::Dir {
            children: Default::default(),
        },
        EntryKind::File {
            key,
            size,
            writable,
            source,
        } => NodeKind::File {
            origin: Origin::Archive {
                key,
                size,
                writable,
                source,
            },
            buffer: None,
            writers: 0,
        },
        EntryKind::Symlink { target } => NodeKind::Symlink { target },
    };
    Node {
        parent,
        name,
        archive: Some(id),
        kind,
        stamp,
        overrides: None,
    }
}

/// Whether the file `node` shows other bytes as `entry` (a symlink another target).
fn changes(node: Option<&Node>, entry: &EntryKind, differ: &Differ) -> bool {
    match (node.map(|n| &n.kind), entry) {
        (
            Some(NodeKind::File {
                origin: Origin::Archive { source, .. },
                ..
            }),
            EntryKind::File { source: new, .. },
        ) => differ.changed(source, new),
        _ => false,
    }
}

/// Take `ino` out of its folder (which then counts as changed), telling the kernel.
fn detach(tree: &mut Tree, ino: Ino, touched: &mut Vec<Ino>, inval: &mut Vec<Invalidation>) {
    if let Some(old) = tree.detach(ino) {
        touched.push(old.parent);
        inval.push(Invalidation::Entry {
            parent: old.parent,
            name: old.name.to_string(),
        });
    }
}

/// A surviving node takes its entry's new key and size; its time moves only if its bytes
/// changed. Its data is invalidated all the same: a view may render differently.
fn update(
    node: &mut Node,
    kind: EntryKind,
    differ: &Differ,
    stamp: Stamp,
    ino: Ino,
    inval: &mut Vec<Invalidation>,
) {
    let changed = match (&mut node.kind, kind) {
        (
            NodeKind::File { origin, .. },
            EntryKind::File {
                key,
                size,
                writable,
                source,
            },
        ) => {
            let old_source = match origin {
                Origin::Archive { source, .. } => source.clone(),
                _ => None,
            };
            let changed = differ.changed(&old_source, &source);
            *origin = Origin::Archive {
                key,
                size,
                writable,
                source,
            };
            if !differ.none {
                inval.push(Invalidation::Inode(ino));
            }
            changed
        }
        (NodeKind::Symlink { target }, EntryKind::Symlink { target: new }) if *target != new => {
            *target = new;
            inval.push(Invalidation::Inode(ino));
            true
        }
        _ => false,
    };
    if changed {
        node.stamp = stamp;
        if let Some(o) = node.overrides.as_mut() {
            o.mtime = None;
        }
    }
}

/// Tells whether the bytes behind a file changed.
struct Differ<'a> {
    old: Option<&'a ArchiveBytes>,
    new: Option<&'a ArchiveBytes>,
    /// Kept pieces of a commit, as (start in the new archive, range of the old).
    kept: Vec<(usize, Range<usize>)>,
    /// Nothing can be compared: everything counts as changed.
    all: bool,
    /// Nothing changed but names.
    none: bool,
    whole: OnceCell<bool>,
}

impl<'a> Differ<'a> {
    fn new(change: &'a Change) -> Differ<'a> {
        let (old, new, rewrite, all) = match change {
            Change::Load(_) | Change::Names(_) => (None, None, None, true),
            Change::Commit {
                old, new, rewrite, ..
            } => (Some(&**old), Some(&**new), Some(*rewrite), false),
            Change::Reload {
                old, new, in_place, ..
            } => (Some(&**old), Some(&**new), None, *in_place),
        };
        let mut kept = Vec::new();
        let mut at = 0;
        for piece in rewrite.map(Rewrite::pieces).unwrap_or_default() {
            match piece {
                Piece::Keep(range) => {
                    kept.push((at, range.clone()));
                    at += range.len();
                }
                Piece::New(bytes) => at += bytes.len(),
            }
        }
        let all = all || old.is_some_and(|o| o.vanished());
        Differ {
            old,
            new,
            kept,
            all,
            none: matches!(change, Change::Names(_)),
            whole: OnceCell::new(),
        }
    }

    fn changed(&self, old: &Option<Range<usize>>, new: &Option<Range<usize>>) -> bool {
        if self.none {
            return false;
        }
        if self.all {
            return true;
        }
        let (Some(old_bytes), Some(new_bytes)) = (self.old, self.new) else {
            return true;
        };
        match (old, new) {
            (Some(o), Some(n)) => {
                if o.len() != n.len() {
                    return true;
                }
                if self.kept_in_place(o, n) {
                    return false;
                }
                match (old_bytes.get(o.clone()), new_bytes.get(n.clone())) {
                    (Some(a), Some(b)) => a != b,
                    _ => true,
                }
            }
            _ => *self
                .whole
                .get_or_init(|| old_bytes[..] != new_bytes[..] || old_bytes.vanished()),
        }
    }

    /// Whether the commit copied the old range `o` whole to the new range `n`.
    fn kept_in_place(&self, o: &Range<usize>, n: &Range<usize>) -> bool {
        let i = self.kept.partition_point(|(start, _)| *start <= n.start);
        let Some((start, range)) = i.checked_sub(1).and_then(|i| self.kept.get(i)) else {
            return false;
        };
        let offset = n.start - start;
        range.start + offset == o.start && offset + n.len() <= range.len()
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

fn split(path: &str) -> (&str, &str) {
    super::fs::split_path(path)
}
