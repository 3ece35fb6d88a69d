//! Names: `create`, `unlink` and `rename`, the ways editors and `mv` save
//! (DESIGN.md write-back step 5).
//!
//! - `sed -i` and atomic-save editors write a temporary file and rename it over the file:
//!   a save of that file.
//! - vim may rename the file to a backup name first (`X.asm~`): the file is hidden (the
//!   archive still holds it) until a file of its name is written again, which saves it.
//! - `mv` from another file system removes the target, then creates it and writes it. A
//!   view the archive cannot lose alone is hidden in the same way; a member is removed,
//!   and takes its old place when it is created again.
//! - A temporary renamed over a file holding what the archive already holds changes
//!   nothing, even over a read-only view (`rsync` restoring a tree): no commit.
//! - A new name is a member where the format accepts it, a scratch file (in memory, never
//!   in the archive) when it is one of the names editors and tools use for their
//!   temporaries ([`is_scratch_name`]), and refused with EPERM otherwise, with the reason
//!   in `.shaderfs/errors`: nothing is accepted that would silently not land.

use super::buffer::WriteBuffer;
use super::fs::{file_node, join_path, split_path, Attr, Errno, Vfs};
use super::handles::Opened;
use super::name;
use super::tree::{Ino, NodeKind, Origin, Tree};
use super::{Edit, ViewError};
use std::time::SystemTime;

/// Whether `name` is one editors and tools give their temporary, swap and backup files:
/// hidden names (vim's `.X.swp`, rsync's `.X.Ab12Cd`, GIO's `.goutputstream-*`), backups
/// (`X~`, `#X#`, `.bak`, `.orig`), vim's write test `4913`, `sed -i`'s `sedAb12Cd`,
/// `perl -i`'s `XXAb12Cd`, GNU patch's `X.oAb12Cd`, gawk's `X.gawk.Ab12Cd`, dos2unix's
/// `d2utmpAb12Cd`, `mktemp`'s and Python's `tmp*`, and the suffixes of atomic-save
/// libraries (`.tmp`, `.new`, JetBrains' `___jb_tmp___`). Such names live in memory for
/// the mount's life.
pub fn is_scratch_name(name: &str) -> bool {
    const SUFFIXES: [&str; 12] = [
        "~",
        ".tmp",
        ".temp",
        ".bak",
        ".orig",
        ".rej",
        ".new",
        ".old",
        ".save",
        ".kate-swp",
        "___jb_tmp___",
        "___jb_old___",
    ];
    let lower = name.to_ascii_lowercase();
    let vim_swap = lower.len() > 4
        && lower.as_bytes()[lower.len() - 4] == b'.'
        && lower[lower.len() - 3..].starts_with("sw")
        && lower.as_bytes()[lower.len() - 1].is_ascii_lowercase();
    // What mkstemp makes of a template: the six X at its end become letters and digits.
    let mkstemp = |prefix: &str| {
        name.len() == prefix.len() + 6
            && name.starts_with(prefix)
            && name[prefix.len()..]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric())
    };
    // A temporary beside `X`, named `X` and a tool's mark, then mkstemp's six.
    let beside = |mark: &str| {
        let Some(stem) = name.len().checked_sub(6).and_then(|i| name.get(..i)) else {
            return false;
        };
        stem.len() > mark.len() && stem.ends_with(mark) && mkstemp(stem)
    };
    let tools = ["sed", "XX", "d2utmp", "u2dtmp"].iter().any(|p| mkstemp(p))
        || [".o", ".gawk."].iter().any(|m| beside(m));
    name.starts_with('.')
        || SUFFIXES.iter().any(|s| lower.ends_with(s))
        || (name.starts_with('#') && name.ends_with('#'))
        || vim_swap
        || tools
        || lower.starts_with("tmp")
        || (!name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()))
}

impl Vfs {
    /// `creat`/`open(O_CREAT)`: a new archive member where the format accepts the name, a
    /// scratch file where the name is an editor's, else EPERM.
    pub fn create(&self, parent: Ino, leaf: &str, flags: i32) -> Result<(Attr, Opened), Errno> {
        if !name::is_plain(leaf) {
            return Err(libc::EINVAL);
        }
        self.ensure_built(parent)?;
        let ino = {
            let mut state = self.state.write();
            let dir = state.tree.get(parent).ok_or(libc::ENOENT)?;
            if !matches!(dir.kind, NodeKind::Dir { .. }) {
                return Err(libc::ENOTDIR);
            }
            if state.tree.child(parent, leaf).is_some() {
                return Err(libc::EEXIST);
            }
            let Some(id) = dir.archive else {
                if !self.opts.writable {
                    return Err(libc::EROFS);
                }
                let log_folder = state.tree.get(self.errors_ino).map(|n| n.parent);
                if log_folder == Some(parent) && is_scratch_name(leaf) {
                    // A sync tool's temporary for `.shaderfs/errors` (see `rename`).
                    let ino = state.tree.fresh();
                    let mut node = file_node(parent, leaf, None, Origin::Scratch);
                    if let NodeKind::File { buffer, .. } = &mut node.kind {
                        *buffer = Some(Box::new(WriteBuffer::new(
                            &self.budget,
                            Vec::new(),
                            true,
                            0,
                        )?));
                    }
                    node.stamp = state.tree.stamp(std::time::SystemTime::now());
                    state.tree.insert(ino, node);
                    drop(state);
                    let opened = self.open(ino, flags | libc::O_TRUNC)?;
                    return Ok((self.getattr(ino)?, opened));
                }
                drop(state);
                self.report(
                    leaf,
                    "not created: only the folders of an archive take new files (archives \
                     are not made through the mount)",
                );
                return Err(libc::EPERM);
            };
            if !self.writable(id) {
                return Err(libc::EROFS);
            }
            let dir_path = state.tree.path(parent);
            let path = join_path(&dir_path, leaf);
            // A file renamed aside or removed comes back under its name: what is written
            // now is its new content.
            if state.tree.is_hidden(id, &path) && self.key_of(id, &path).is_some() {
                state.tree.unhide(id, &path);
                state.tree.unbind_path(id, &path);
                let inval = self.resync(&mut state.tree, id);
                drop(state);
                self.send(inval);
                let ino = self.resolve_child(parent, leaf)?;
                let opened = self.open(ino, flags | libc::O_TRUNC)?;
                return Ok((self.getattr(ino)?, opened));
            }
            let origin = match self.snapshot(id).archive.new_member(&dir_path, leaf) {
                Ok(()) => Origin::Pending,
                Err(_) if is_scratch_name(leaf) => Origin::Scratch,
                Err(why) => {
                    drop(state);
                    let why = why.strip_prefix(&format!("{leaf}: ")).unwrap_or(&why);
                    self.report(
                        &self.user_path(id, &path),
                        &format!(
                            "not created: {why} (editors' temporary names live in memory only)"
                        ),
                    );
                    return Err(libc::EPERM);
                }
            };
            let ino = state.tree.fresh();
            let mut node = file_node(parent, leaf, Some(id), origin);
            if let NodeKind::File { buffer, .. } = &mut node.kind {
                *buffer = Some(Box::new(WriteBuffer::new(
                    &self.budget,
                    Vec::new(),
                    true,
                    self.epoch(id),
                )?));
            }
            let now = state.tree.stamp(std::time::SystemTime::now());
            node.stamp = now;
            state.tree.insert(ino, node);
            if let Some(dir) = state.tree.get_mut(parent) {
                dir.stamp = now;
            }
            ino
        };
        let opened = self.open(ino, flags | libc::O_TRUNC)?;
        Ok((self.getattr(ino)?, opened))
    }

    /// A file of `.shaderfs/` renamed: only a sync tool's temporary copy of
    /// `.shaderfs/errors` over it, holding what the log held when the copy was made (every
    /// line one the log has), which leaves the log as it is: `rsync -a copy/ mnt/` of a
    /// copy made with `rsync -a mnt/ copy/` sends the log back whenever it grew since.
    /// Anything else is refused: the log is the mount's to write.
    fn rename_over_log(&self, ino: Ino, new_parent: Ino, new_leaf: &str) -> Result<(), Errno> {
        let mut state = self.state.write();
        let target = state.tree.child(new_parent, new_leaf);
        let content = match state.tree.get(ino).map(|n| &n.kind) {
            Some(NodeKind::File {
                origin: Origin::Scratch,
                buffer,
                ..
            }) if target == Some(self.errors_ino) => buffer
                .as_ref()
                .map(|b| b.bytes().to_vec())
                .unwrap_or_default(),
            _ => return Err(libc::EPERM),
        };
        let fits = self
            .copies_of(&state, self.errors_ino)
            .is_some_and(|log| log.allow(&content, true));
        if !fits {
            drop(state);
            return Err(self.refuse_log_copy());
        }
        state.tree.remove(ino);
        Ok(())
    }

    fn resolve_child(&self, parent: Ino, leaf: &str) -> Result<Ino, Errno> {
        self.state
            .read()
            .tree
            .child(parent, leaf)
            .ok_or(libc::ENOENT)
    }

    /// Bring archive `id`'s subtree in line with its snapshot again after hiding or
    /// showing a path: only names change.
    fn resync(&self, tree: &mut Tree, id: usize) -> Vec<super::fs::Invalidation> {
        self.build_all(tree, id);
        let snap = self.snapshot(id);
        let root = self.archives[id].root;
        let stamp = tree.stamp(std::time::SystemTime::now());
        super::reconcile::reconcile(
            tree,
            id,
            root,
            snap.archive.entries(),
            &super::reconcile::Change::Names(stamp),
            &Default::default(),
        )
    }

    pub fn unlink(&self, parent: Ino, leaf: &str) -> Result<(), Errno> {
        self.ensure_built(parent)?;
        let (ino, id, origin, path) = {
            let state = self.state.read();
            let ino = state.tree.child(parent, leaf).ok_or(libc::ENOENT)?;
            let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
            match (&node.kind, node.archive) {
                (NodeKind::File { origin, .. }, Some(id)) => {
                    (ino, id, origin.clone(), state.tree.path(ino))
                }
                (
                    NodeKind::File {
                        origin: Origin::Scratch,
                        ..
                    },
                    None,
                ) => {
                    drop(state);
                    self.state.write().tree.remove(ino);
                    return Ok(());
                }
                (NodeKind::Dir { .. }, _) => return Err(libc::EISDIR),
                _ if !self.opts.writable => return Err(libc::EROFS),
                _ => return Err(libc::EPERM),
            }
        };
        match origin {
            Origin::Scratch | Origin::Pending => {
                self.state.write().tree.remove(ino);
                Ok(())
            }
            Origin::Archive {
                writable,
                key,
                source,
                ..
            } => {
                if !self.writable(id) {
                    return Err(libc::EROFS);
                }
                if !writable {
                    return Err(libc::EPERM);
                }
                match self.snapshot(id).archive.apply(&Edit::Remove { key }) {
                    // A view the archive cannot lose alone (`asm/X.asm`, a program of a
                    // database): hidden until a file of its name saves it.
                    Err(ViewError::NotPermitted(_)) => {
                        let mut state = self.state.write();
                        state.tree.hide(id, &path, source);
                        let inval = self.resync(&mut state.tree, id);
                        drop(state);
                        self.send(inval);
                        Ok(())
                    }
                    _ => self.commit(id, &path, &Edit::Remove { key }, None, |_| {}),
                }
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
        self.ensure_built(parent)?;
        self.ensure_built(new_parent)?;
        let state = self.state.read();
        let ino = state.tree.child(parent, leaf).ok_or(libc::ENOENT)?;
        let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
        let target_dir = state.tree.get(new_parent).ok_or(libc::ENOENT)?;
        if node.archive.is_none() && matches!(node.kind, NodeKind::File { .. }) {
            drop(state);
            return self.rename_over_log(ino, new_parent, new_leaf);
        }
        let id = node.archive.ok_or(libc::EPERM)?;
        if target_dir.archive != Some(id) {
            return Err(libc::EXDEV);
        }
        let NodeKind::File { origin, buffer, .. } = &node.kind else {
            return Err(libc::EPERM);
        };
        // Times set on the file before it is renamed (`rsync`, `cp -p` through a
        // temporary) go with it, as they go with an inode.
        let times = node.overrides.as_deref().map(|o| (o.atime, o.mtime));
        if !self.writable(id) {
            return Err(libc::EROFS);
        }
        let origin = origin.clone();
        let (data, epoch) = buffer
            .as_ref()
            .map(|b| (b.shared(), b.epoch))
            .unwrap_or_else(|| (Default::default(), self.epoch(id)));
        let from_path = state.tree.path(ino);
        let target_dir_path = state.tree.path(new_parent);
        let to_path = join_path(&target_dir_path, new_leaf);
        let target_ino = state.tree.child(new_parent, new_leaf);
        let target_origin = target_ino.and_then(|t| match &state.tree.get(t)?.kind {
            NodeKind::File { origin, .. } => Some(origin.clone()),
            _ => None,
        });
        if target_ino.is_some() && target_origin.is_none() {
            return Err(libc::EISDIR);
        }
        let member = self
            .snapshot(id)
            .archive
            .new_member(&target_dir_path, new_leaf);
        let target_hidden = state.tree.is_hidden(id, &to_path);
        drop(state);
        // Back over a file that was renamed aside (an editor restoring its backup, or
        // saving its new text by rename): a save of that file.
        let target_origin = match (target_hidden, target_origin) {
            (true, None) => self.key_of(id, &to_path).map(|key| Origin::Archive {
                key,
                size: None,
                writable: true,
                source: None,
            }),
            (_, origin) => origin,
        };

        let (dir, name) = split_path(&to_path);
        // Moves the inode with its name, as the kernel's dentry does.
        let rebind = |tree: &mut Tree| {
            if let Some(t) = target_ino {
                tree.retire(t);
            }
            tree.unbind_path(id, &from_path);
            tree.bind_path(id, &to_path, ino);
        };
        match (&origin, &target_origin) {
            // A copy of what the archive already holds renamed over the file: `sed -i`
            // that matched nothing, an editor saving what it read, `rsync` restoring a
            // tree (whose read-only views follow from the files it restored before
            // them). The archive does not change; the file takes the copy's times.
            (Origin::Scratch | Origin::Pending, Some(Origin::Archive { .. }))
                if target_ino.is_some_and(|t| {
                    self.holds_already(t, &data, epoch) || self.is_superseded(id, &to_path, &data)
                }) =>
            {
                let target = target_ino.ok_or(libc::ENOENT)?;
                self.keep_file_as(id, target, ino, &from_path, &to_path, times)
            }
            // An editor's temporary file saved over a file of the archive: a save of it.
            (Origin::Scratch | Origin::Pending, Some(Origin::Archive { key, .. })) => {
                let edit = Edit::Write {
                    key: *key,
                    data: &data,
                };
                self.commit(id, &to_path, &edit, Some(epoch), |tree| {
                    tree.remove(ino);
                    tree.unhide(id, &to_path);
                    rebind(tree);
                })?;
                self.keep_times(ino, times);
                Ok(())
            }
            (Origin::Scratch | Origin::Pending, _) if member.is_ok() => {
                let edit = Edit::Create {
                    dir,
                    name,
                    data: &data,
                    position: self.removed.lock().get(&(id, to_path.clone())).copied(),
                };
                self.commit(id, &to_path, &edit, Some(epoch), |tree| {
                    if let Some(t) = target_ino {
                        tree.retire(t);
                    }
                    tree.remove(ino);
                    tree.bind_path(id, &to_path, ino);
                })
            }
            // Scratch to scratch: just a name change in memory.
            (Origin::Scratch | Origin::Pending, _) if is_scratch_name(new_leaf) => {
                let mut state = self.state.write();
                if let Some(t) = target_ino {
                    state.tree.retire(t);
                    self.keep_retired(&mut state, id, None);
                }
                let Some(mut node) = state.tree.remove(ino) else {
                    return Err(libc::ENOENT);
                };
                node.parent = new_parent;
                node.name = new_leaf.into();
                if let NodeKind::File { origin, .. } = &mut node.kind {
                    *origin = Origin::Scratch;
                }
                state.tree.insert(ino, node);
                Ok(())
            }
            // Renamed to an editor's backup name (`X.asm~`): the content moves to a
            // scratch file of that name and the original is hidden until a file of its
            // name is written again. The archive does not change.
            (Origin::Archive { source, .. }, None | Some(Origin::Scratch))
                if member.is_err() && is_scratch_name(new_leaf) =>
            {
                let content = self.shown_now(ino)?;
                let buffer = WriteBuffer::new(
                    &self.budget,
                    content.as_slice().to_vec(),
                    false,
                    self.epoch(id),
                )?;
                let mut state = self.state.write();
                if let Some(t) = target_ino {
                    state.tree.retire(t);
                    self.keep_retired(&mut state, id, None);
                }
                let Some(mut node) = state.tree.remove(ino) else {
                    return Err(libc::ENOENT);
                };
                state.tree.unbind_path(id, &from_path);
                state.tree.hide(id, &from_path, source.clone());
                node.parent = new_parent;
                node.name = new_leaf.into();
                node.kind = NodeKind::File {
                    origin: Origin::Scratch,
                    buffer: Some(Box::new(buffer)),
                    writers: 0,
                };
                state.tree.insert(ino, node);
                Ok(())
            }
            (Origin::Archive { key, .. }, _) if member.is_ok() || target_origin.is_some() => {
                let edit = Edit::Rename {
                    key: *key,
                    dir,
                    name,
                };
                self.commit(id, &to_path, &edit, None, rebind)
            }
            (Origin::ErrorLog, _) => Err(libc::EPERM),
            // A name that can be neither a member nor an editor's scratch file.
            _ => {
                let why = member.err().unwrap_or_default();
                self.report(
                    &self.user_path(id, &to_path),
                    &format!("not renamed: {why} (editors' temporary names live in memory only)"),
                );
                Err(libc::EPERM)
            }
        }
    }

    /// After a rename whose copy changes nothing: the kernel now gives the file's name
    /// to the copy's inode `ino`, so the file moves to that number with the copy's
    /// `times` (readers of `file`'s old number keep reading what they opened) and the
    /// copy is gone.
    fn keep_file_as(
        &self,
        id: usize,
        file: Ino,
        ino: Ino,
        from_path: &str,
        to_path: &str,
        times: Times,
    ) -> Result<(), Errno> {
        let mut state = self.state.write();
        let Some(shown) = state.tree.get(file) else {
            return Err(libc::ENOENT);
        };
        let NodeKind::File { origin, .. } = &shown.kind else {
            return Err(libc::EISDIR);
        };
        let mut moved = super::tree::Node {
            parent: shown.parent,
            name: shown.name.clone(),
            archive: shown.archive,
            kind: NodeKind::File {
                origin: origin.clone(),
                buffer: None,
                writers: 0,
            },
            stamp: shown.stamp,
            overrides: shown.overrides.clone(),
        };
        take_times(&mut moved, times);
        state.tree.remove(ino);
        state.tree.retire(file);
        self.keep_retired(&mut state, id, None);
        state.tree.unbind_path(id, from_path);
        state.tree.insert(ino, moved);
        state.tree.bind_path(id, to_path, ino);
        drop(state);
        self.send(vec![super::fs::Invalidation::Inode(ino)]);
        Ok(())
    }

    /// Give file `ino` the access and modification `times` a file renamed onto it had
    /// been given.
    fn keep_times(&self, ino: Ino, times: Times) {
        if times.is_none() {
            return;
        }
        if let Some(node) = self.state.write().tree.get_mut(ino) {
            take_times(node, times);
        }
        self.send(vec![super::fs::Invalidation::Inode(ino)]);
    }

    /// The key of an archive file by its path, hidden or not.
    fn key_of(&self, id: usize, path: &str) -> Option<super::FileKey> {
        self.snapshot(id)
            .archive
            .entries()
            .into_iter()
            .find_map(|e| match e.kind {
                super::EntryKind::File { key, .. } if e.path == path => Some(key),
                _ => None,
            })
    }
}

/// The access and modification times set on a file, which go with it when it is renamed.
type Times = Option<(Option<SystemTime>, Option<SystemTime>)>;

/// Set on `node` the `times` a file renamed onto it had been given.
fn take_times(node: &mut super::tree::Node, times: Times) {
    let Some((atime, mtime)) = times else { return };
    let overrides = node.overrides.get_or_insert_with(Default::default);
    overrides.atime = atime.or(overrides.atime);
    overrides.mtime = mtime.or(overrides.mtime);
}

#[cfg(test)]
mod tests {
    use super::is_scratch_name;

    #[test]
    fn editors_temporary_names_are_scratch_and_others_are_not() {
        for name in [
            ".X.asm.swp",
            ".X.asm.swx",
            "X.asm~",
            "#X.asm#",
            "4913",
            "sedAb12Cd",
            "tmp8x1ab2cd",
            "X.asm.tmp",
            ".goutputstream-ABC123",
            "X.json___jb_tmp___",
            "P0.json.new",
            "X.vso.asm.o4kgFyZ",
            "XX2rDijT",
            "X.asm.gawk.Ab12Cd",
            "d2utmpAb12Cd",
        ] {
            assert!(is_scratch_name(name), "{name}");
        }
        for name in [
            "notes.txt",
            "X.vso",
            "17.dxil",
            "readme",
            "sed",
            "sedish.txt",
            "XX",
            "XXL.vso",
            "o4kgFyZ",
            "X.vso.o4kgFy",
            "X.vso.o4kg-yZ",
        ] {
            assert!(!is_scratch_name(name), "{name}");
        }
    }
}
