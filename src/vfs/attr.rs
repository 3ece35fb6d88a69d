//! Attributes: what `stat` shows, and what `chmod`, `chown` and `touch` change.
//!
//! What `stat` reports is what `read` returns to a new opener: the archive's content, or
//! a buffer everyone sees ([`super::handles::visible_buffer`]). A writer's buffer is its
//! own until it is committed, so its size shows nowhere else. A view that cannot be
//! rendered still stats and lists (whole-tree tools must not stop at it), with a size a
//! read must ask the daemon for, and reading it fails with EIO.
//!
//! Each file keeps its own time: the time of the commit that last changed the bytes it
//! shows (see [`super::reconcile`]). Modes, owners and times a user sets hold for the
//! mount's life; a mode that would let a file be written that cannot be is refused.

use std::time::SystemTime;

use super::fs::{Errno, State, Vfs};
use super::handles::{visible_buffer, Retired, Shown};
use super::tree::{Ino, Node, NodeKind, Origin, Overrides};

/// The size a view that cannot be rendered shows: not 0, which would let the kernel's
/// page cache answer reads with an empty file; reads come to the daemon and fail.
pub const UNREADABLE_SIZE: u64 = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    Dir,
    File,
    Symlink,
}

impl FileType {
    pub(super) fn of(kind: &NodeKind) -> FileType {
        match kind {
            NodeKind::Dir { .. } => FileType::Dir,
            NodeKind::File { .. } => FileType::File,
            NodeKind::Symlink { .. } => FileType::Symlink,
        }
    }
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
    pub atime: SystemTime,
    pub mtime: SystemTime,
    pub ctime: SystemTime,
    /// Changes without a commit (logs, files being written): the kernel must not cache
    /// its attributes.
    pub volatile: bool,
}

/// What `setattr` asks for; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct SetAttr {
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub size: Option<u64>,
    pub atime: Option<SystemTime>,
    pub mtime: Option<SystemTime>,
    /// The size changes through a handle open for writing (`ftruncate`).
    pub by_writer: bool,
}

/// A size still to be learnt by rendering.
type Unrendered = Shown;

impl Vfs {
    pub fn getattr(&self, ino: Ino) -> Result<Attr, Errno> {
        self.attr(ino, false)
    }

    /// Attributes for a directory listing: a view never rendered is not rendered for its
    /// size; it is listed with no size and attributes the kernel must fetch again (`stat`,
    /// or a read past the size it has, asks for them), so `ls` of 7,594 program JSON
    /// files renders none of them, and `ls -l` renders each once.
    pub fn listing_attr(&self, ino: Ino) -> Result<Attr, Errno> {
        self.attr(ino, true)
    }

    fn attr(&self, ino: Ino, lazy: bool) -> Result<Attr, Errno> {
        let (mut attr, unrendered) = {
            let state = self.state.read();
            let Some(node) = state.tree.get(ino) else {
                let retired = state.retired.get(&ino).ok_or(libc::ENOENT)?;
                let attr = self.retired_attr(&state, ino, retired);
                let shown = retired.shown.clone();
                drop(state);
                let size = self
                    .produce(shown)
                    .map_or(UNREADABLE_SIZE, |b| b.len() as u64);
                return Ok(Attr { size, ..attr });
            };
            if !lazy {
                self.before_render(&state.tree, node);
            }
            self.attr_of(&state, ino, node, lazy)?
        };
        if let Some(shown) = unrendered {
            match self.produce(shown) {
                Ok(blob) => attr.size = blob.len() as u64,
                Err(libc::EIO) => {
                    attr.size = UNREADABLE_SIZE;
                    attr.volatile = true;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(attr)
    }

    /// The attributes of a retired file (read-only, as it was), but for its size.
    fn retired_attr(&self, state: &State, ino: Ino, retired: &Retired) -> Attr {
        let mtime = state.tree.time(retired.stamp);
        Attr {
            ino,
            kind: FileType::File,
            size: 0,
            perm: 0o444 & !(self.opts.umask.unwrap_or(0) as u16),
            nlink: 0,
            uid: self.opts.uid,
            gid: self.opts.gid,
            atime: mtime,
            mtime,
            ctime: mtime,
            volatile: false,
        }
    }

    /// The attributes of `node`, but for a size that only rendering can tell.
    fn attr_of(
        &self,
        state: &State,
        ino: Ino,
        node: &Node,
        lazy: bool,
    ) -> Result<(Attr, Option<Unrendered>), Errno> {
        let mut mtime = state.tree.time(node.stamp);
        let mut volatile = false;
        let mut unrendered = None;
        let (kind, size, perm) = match &node.kind {
            NodeKind::Dir { .. } => (
                FileType::Dir,
                0,
                if self.writable_at(node) { 0o755 } else { 0o555 },
            ),
            NodeKind::Symlink { target } => (FileType::Symlink, target.len() as u64, 0o777),
            NodeKind::File { origin, buffer, .. } => {
                // Anything with a buffer may change without a commit.
                volatile = buffer.is_some();
                let size = if let Some(b) = visible_buffer(node) {
                    mtime = b.modified;
                    b.len() as u64
                } else {
                    match origin {
                        Origin::Archive {
                            size: Some(size), ..
                        } => *size,
                        Origin::Archive { key, .. } => {
                            let id = node.archive.ok_or(libc::EIO)?;
                            let snap = self.snapshot(id);
                            match self.views.outcome(&(id, snap.generation, *key)) {
                                Some(Some(size)) => size,
                                Some(None) => {
                                    volatile = true;
                                    UNREADABLE_SIZE
                                }
                                None if lazy => {
                                    volatile = true;
                                    0
                                }
                                None => {
                                    // What says whether saves land changes without a
                                    // commit (`saves.rs`): asked again at every stat.
                                    volatile =
                                        self.writable(id) && snap.archive.says_writable(*key);
                                    unrendered = Some(Shown::Render {
                                        id,
                                        snap,
                                        key: *key,
                                        path: state.tree.path(ino),
                                    });
                                    0
                                }
                            }
                        }
                        Origin::ErrorLog => {
                            volatile = true;
                            mtime = self.errors.modified().unwrap_or(self.started);
                            self.errors_text(state).len() as u64
                        }
                        Origin::Pending | Origin::Scratch => {
                            volatile = true;
                            0
                        }
                    }
                };
                (
                    FileType::File,
                    size,
                    if self.may_write(node) { 0o644 } else { 0o444 },
                )
            }
        };
        let perm = match self.opts.umask {
            Some(umask) if kind != FileType::Symlink => perm & !(umask as u16) & 0o777,
            _ => perm,
        };
        let o = node.overrides.as_deref();
        let mtime = o.and_then(|o| o.mtime).unwrap_or(mtime);
        let attr = Attr {
            ino,
            kind,
            size,
            perm: o.and_then(|o| o.mode).unwrap_or(perm),
            nlink: if kind == FileType::Dir { 2 } else { 1 },
            uid: o.and_then(|o| o.uid).unwrap_or(self.opts.uid),
            gid: o.and_then(|o| o.gid).unwrap_or(self.opts.gid),
            atime: o.and_then(|o| o.atime).unwrap_or(mtime),
            mtime,
            ctime: o.and_then(|o| o.ctime).unwrap_or(mtime),
            volatile,
        };
        Ok((attr, unrendered))
    }

    /// Whether writing `node` can change anything (a member or view that may be saved,
    /// or a file of the user's own).
    fn may_write(&self, node: &Node) -> bool {
        match &node.kind {
            NodeKind::File { origin, .. } => match origin {
                Origin::Archive { writable, .. } => *writable && self.writable_at(node),
                Origin::Pending | Origin::Scratch => true,
                Origin::ErrorLog => false,
            },
            NodeKind::Dir { .. } => node.archive.is_some() && self.writable_at(node),
            NodeKind::Symlink { .. } => false,
        }
    }

    /// `chmod`, `chown`, `truncate`, `touch`: each takes effect (modes, owners and times
    /// for the mount's life) or fails; none is accepted and dropped.
    pub fn setattr(&self, ino: Ino, set: &SetAttr) -> Result<Attr, Errno> {
        if let Some(size) = set.size {
            self.set_size(ino, size, set.by_writer)?;
        }
        let changes_meta = set.mode.is_some()
            || set.uid.is_some()
            || set.gid.is_some()
            || set.atime.is_some()
            || set.mtime.is_some();
        if changes_meta {
            let mut state = self.state.write();
            let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
            if !self.writable_at(node) {
                return Err(libc::EROFS);
            }
            if let Some(mode) = set.mode {
                // The mode it shows, set again (`cp -a`, `rsync -a` of a copy), is no
                // change.
                let shown = self.attr_of(&state, ino, node, true).map(|(a, _)| a.perm);
                let same = shown.is_ok_and(|p| u32::from(p) == mode & 0o7777);
                if mode & 0o222 != 0 && !self.may_write(node) && !same {
                    return Err(libc::EPERM);
                }
            }
            let node = state.tree.get_mut(ino).ok_or(libc::ENOENT)?;
            let o = node
                .overrides
                .get_or_insert_with(|| Box::new(Overrides::default()));
            if let Some(mode) = set.mode {
                o.mode = Some((mode & 0o7777) as u16);
            }
            if let Some(uid) = set.uid {
                o.uid = Some(uid);
            }
            if let Some(gid) = set.gid {
                o.gid = Some(gid);
            }
            if let Some(atime) = set.atime {
                o.atime = Some(atime);
            }
            if let Some(mtime) = set.mtime {
                o.mtime = Some(mtime);
            }
            o.ctime = Some(SystemTime::now());
        }
        let mut attr = self.getattr(ino)?;
        // Through FUSE the kernel keeps one size for every opener, so a writer's
        // `ftruncate` answers what everyone sees (the writer's buffer is its own until it
        // is committed). Without the kernel, the writer hears its own size.
        if set.by_writer && set.size.is_some() && !self.opts.page_cache {
            let state = self.state.read();
            if let Some(NodeKind::File {
                buffer: Some(b), ..
            }) = state.tree.get(ino).map(|n| &n.kind)
            {
                attr.size = b.len() as u64;
                attr.volatile = true;
            }
        }
        Ok(attr)
    }
}
