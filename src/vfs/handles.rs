//! Opening, reading and closing files.
//!
//! What each opener sees (and what `stat` reports, [`super::attr`]):
//! - a reader sees what the file showed when it opened, however many commits happen
//!   meanwhile: the archive's content, or a buffer everyone sees ([`visible_buffer`]);
//! - a writer sees its buffer, which no one else sees until it is committed;
//! - scratch files and `.shaderfs/errors` are read live.

use std::sync::Arc;

use super::buffer::WriteBuffer;
use super::fs::{Errno, Invalidation, State, Vfs};
use super::snapshot::Snapshot;
use super::tree::{ArchiveId, Ino, Node, NodeKind, Origin, Retiring};
use super::{Blob, FileKey};

pub(super) struct Handle {
    pub ino: Ino,
    pub archive: Option<ArchiveId>,
    /// What a reader sees until it closes: the file of the snapshot it opened (rendered
    /// when it is first read), or the bytes it showed.
    pub view: Option<Shown>,
    pub writes: bool,

    /// Opened with `O_APPEND`: every write goes to the end of the writer's buffer (the
    /// kernel's idea of the end is the size others see, not the writer's).
    pub append: bool,
}

/// What `open` tells the kernel.
#[derive(Debug, Clone, Copy)]
pub struct Opened {
    pub fh: u64,
    /// The kernel may keep its page cache from earlier opens.
    pub keep_cache: bool,
    /// Bypass the page cache (see `open`).
    pub direct_io: bool,
    /// `close()` has something to hear: the handle writes (a reader's close commits
    /// nothing, and the kernel need not ask).
    pub flush: bool,
}

/// A file out of the tree that the kernel may still read (replaced by a rename, removed,
/// or changed by a commit while it was open): what it held then.
pub(super) struct Retired {
    pub shown: Shown,
    pub stamp: super::tree::Stamp,
    /// Where the kernel last saw it: its folder and name.
    pub parent: Ino,
    pub name: super::tree::Name,
}

/// What a file shows to those who do not write it.
#[derive(Clone)]
pub(super) enum Shown {
    /// Bytes at hand: a buffer everyone sees, the error log.
    Ready(Blob),
    /// A file of a snapshot, rendered with no lock held.
    Render {
        id: ArchiveId,
        snap: Arc<Snapshot>,
        key: FileKey,
        path: String,
    },
}

/// The buffer that is the file's content for everyone: a scratch file's, and that of a
/// file emptied and left so (`truncate -s 0`, `: > X`), which waits for its content.
/// While a writer has a member open, its buffer is its own.
pub(super) fn visible_buffer(node: &Node) -> Option<&WriteBuffer> {
    match &node.kind {
        NodeKind::File {
            origin: Origin::Scratch,
            buffer,
            ..
        } => buffer.as_deref(),
        NodeKind::File {
            buffer: Some(b),
            writers: 0,
            ..
        } => Some(b),
        _ => None,
    }
}

impl Vfs {
    /// What `ino` shows to readers, decided under the tree's lock.
    pub(super) fn shown(&self, state: &State, ino: Ino) -> Result<Shown, Errno> {
        let Some(node) = state.tree.get(ino) else {
            return match state.retired.get(&ino) {
                Some(r) => Ok(r.shown.clone()),
                None => Err(libc::ENOENT),
            };
        };
        if let Some(b) = visible_buffer(node) {
            return Ok(Shown::Ready(Blob::Owned(b.shared())));
        }
        match &node.kind {
            NodeKind::File { origin, .. } => match origin {
                Origin::Archive { key, .. } => {
                    let id = node.archive.ok_or(libc::EIO)?;
                    Ok(Shown::Render {
                        id,
                        snap: self.snapshot(id),
                        key: *key,
                        path: state.tree.path(ino),
                    })
                }
                Origin::ErrorLog => Ok(Shown::Ready(self.errors_text(state))),
                Origin::Pending | Origin::Scratch => Ok(Shown::Ready(Blob::owned(Vec::new()))),
            },
            NodeKind::Dir { .. } => Err(libc::EISDIR),
            NodeKind::Symlink { .. } => Err(libc::EINVAL),
        }
    }

    /// The bytes of what [`Vfs::shown`] decided, rendering with no lock held.
    pub(super) fn produce(&self, shown: Shown) -> Result<Blob, Errno> {
        match shown {
            Shown::Ready(blob) => Ok(blob),
            Shown::Render {
                id,
                snap,
                key,
                path,
            } => self.render(id, &snap, key, &path),
        }
    }

    /// What `ino` shows to readers now.
    pub(super) fn shown_now(&self, ino: Ino) -> Result<Blob, Errno> {
        let shown = {
            let state = self.state.read();
            if let Some(node) = state.tree.get(ino) {
                self.before_render(&state.tree, node);
            }
            self.shown(&state, ino)?
        };
        self.produce(shown)
    }

    /// Whether the archive on disk already holds exactly `data` as file `ino`, whatever
    /// a writer has in hand, in the snapshot and epoch the caller's content was taken
    /// from: a save of it would change nothing (an editor writing back what it read, `sed -i`
    /// that matched nothing, `rsync` restoring what is there).
    pub(super) fn holds_already(&self, ino: Ino, data: &[u8], epoch: u64) -> bool {
        let (id, generation, shown) = {
            let state = self.state.read();
            let Some(node) = state.tree.get(ino) else {
                return false;
            };
            let (Some(id), NodeKind::File { origin, .. }) = (node.archive, &node.kind) else {
                return false;
            };
            let Origin::Archive { key, .. } = origin else {
                return false;
            };
            if self.epoch(id) != epoch {
                return false;
            }
            let snap = self.snapshot(id);
            let generation = snap.generation;
            let path = state.tree.path(ino);
            let shown = Shown::Render {
                id,
                snap,
                key: *key,
                path,
            };
            (id, generation, shown)
        };
        if !self.produce(shown).is_ok_and(|b| b.as_slice() == data) {
            return false;
        }
        // What the mount shows counts only if it is still what the disk holds: an
        // archive another program changed is looked at again (and the save refused).
        // Asked only here, so a save that does change something asks once, in its commit.
        self.refresh(id) == super::snapshot::OnDisk::Unchanged
            && self.snapshot(id).generation == generation
            && self.epoch(id) == epoch
    }

    pub fn open(&self, ino: Ino, flags: i32) -> Result<Opened, Errno> {
        let access = flags & libc::O_ACCMODE;
        let writes = access == libc::O_WRONLY || access == libc::O_RDWR;
        let truncate = flags & libc::O_TRUNC != 0;
        // A commit may land between rendering a writer's content and taking it: then
        // look again.
        for _ in 0..8 {
            let (content, generation) = match writes {
                true => match self.writers_start(ino, truncate) {
                    Err(libc::ESTALE) => return Err(self.stale_for_writer(ino)),
                    started => started?,
                },
                false => (None, None),
            };
            let mut state = self.state.write();
            if writes {
                if let Some(name) = self.part_from_cached_readers(&mut state, ino) {
                    drop(state);
                    self.send(vec![name]);
                    return Err(libc::ESTALE);
                }
                state.for_writer.remove(&ino);
            }
            let Some(node) = state.tree.get(ino) else {
                return self.open_retired(&mut state, ino, writes);
            };
            let origin = file_origin(node, libc::ELOOP)?;
            let archive = node.archive;
            if writes && archive.map(|id| self.snapshot(id).generation) != generation {
                continue;
            }
            // A writer at work changes the size the kernel keeps for the file as it writes:
            // a reader that opens then reads around the page cache.
            let writing = matches!(node.kind, NodeKind::File { writers, .. } if writers > 0);
            // What says whether saves land changes without a commit (`saves.rs`).
            let says_saves = match (&origin, archive) {
                (
                    Origin::Archive {
                        key, size: None, ..
                    },
                    Some(id),
                ) => self.says_saves(id, *key),
                _ => false,
            };
            let uncommitted = writing
                || says_saves
                || visible_buffer(node).is_some()
                || matches!(origin, Origin::ErrorLog | Origin::Scratch | Origin::Pending);
            // Through the kernel's page cache (a mount), a reader of committed content
            // reads what the file holds at each read, as every opener shares that cache;
            // writers, and files that change without a commit, go around it. Without a
            // kernel (offline, tests), a reader is pinned to what the file shows now, the
            // file of this snapshot rendered when it is first read.
            let through_cache = self.opts.page_cache
                && !writes
                && !uncommitted
                && !state.for_writer.contains(&ino)
                && !self.settling.contains(ino);
            let live = matches!(origin, Origin::ErrorLog | Origin::Scratch);
            let view = match writes || live || through_cache {
                true => None,
                false => Some(self.shown(&state, ino)?),
            };
            let epoch = archive.map_or(0, |id| self.epoch(id));
            let Some(NodeKind::File {
                buffer, writers, ..
            }) = state.tree.get_mut(ino).map(|n| &mut n.kind)
            else {
                return Err(libc::ENOENT);
            };
            if writes {
                match (buffer.as_mut(), truncate) {
                    (Some(b), true) => b.clear(),
                    (Some(_), false) => {}
                    (None, _) => {
                        let data = content.map(|c| c.as_slice().to_vec()).unwrap_or_default();
                        *buffer = Some(Box::new(WriteBuffer::new(
                            &self.budget,
                            data,
                            truncate,
                            epoch,
                        )?));
                    }
                }
                *writers += 1;
            }
            let fh = state.add_handle(Handle {
                ino,
                archive,
                view,
                writes,
                append: writes && flags & libc::O_APPEND != 0,
            });
            return Ok(Opened {
                fh,
                keep_cache: through_cache,
                direct_io: !through_cache,
                flush: writes,
            });
        }
        Err(libc::EAGAIN)
    }

    /// A writer must not share an inode with readers of the page cache: the kernel keeps
    /// one size for an inode, which the writer's `O_TRUNC` and writes change at once, and
    /// such a reader would then read the committed content under the writer's size (a
    /// 148-byte shader padded with zeros to 288). So, where `ino` has such readers, its
    /// place takes a new inode; the readers keep the old one and what it holds now, as
    /// after a commit. Returns the name to drop from the kernel's cache; the writer is
    /// answered ESTALE, on which the kernel looks the name up again and opens the new
    /// inode, which readers read around the cache until it has.
    fn part_from_cached_readers(&self, state: &mut State, ino: Ino) -> Option<Invalidation> {
        if !self.opts.page_cache {
            return None;
        }
        // Readers of the page cache: a reader pinned to what it opened reads around the
        // cache (the writer's size cannot tear its reads), and a new inode for it would
        // make the writer's second look, which such readers may already have opened too,
        // fail as the first did.
        let cached = |h: &Handle| h.ino == ino && h.view.is_none() && !h.writes;
        if !state.handles.values().any(cached) {
            return None;
        }
        let node = state.tree.get(ino)?;
        let (Some(id), NodeKind::File { writers: 0, .. }) = (node.archive, &node.kind) else {
            return None;
        };
        let parent = node.parent;
        let name = node.name.to_string();
        let fresh = state.tree.renumber(ino)?;
        log::debug!("{name}: inode {ino} stays with its readers, a writer gets {fresh}");
        self.keep_retired(state, id, None);
        // Those whose writer never came and that left the tree since.
        let tree = &state.tree;
        state.for_writer.retain(|&ino| tree.get(ino).is_some());
        state.for_writer.insert(fresh);
        Some(Invalidation::Entry { parent, name })
    }

    /// A writer opened `ino`, which a commit or a rename took out of the tree: it is
    /// answered ESTALE, and the kernel looks the name up again. That second look is the
    /// last: if the file now at the name has readers of the page cache, it is parted
    /// from them now ([`Vfs::part_from_cached_readers`]), and either way readers read it
    /// around the cache until the writer has it, so that the second look finds an inode
    /// that no reader of the cache shares, where the open goes on.
    fn stale_for_writer(&self, ino: Ino) -> Errno {
        let mut state = self.state.write();
        let place = state.retired.get(&ino).map(|r| (r.parent, r.name.clone()));
        let now = place
            .as_ref()
            .and_then(|(parent, name)| state.tree.child(*parent, name));
        let parted = now.and_then(|now| self.part_from_cached_readers(&mut state, now));
        if let (Some(now), None) = (now, &parted) {
            // No such readers now, and none to come before the writer's second look.
            state.for_writer.insert(now);
        }
        drop(state);
        if let Some(name) = parted {
            self.send(vec![name]);
        }
        libc::ESTALE
    }

    /// Open a retired file (one the kernel still names after a rename replaced it): it
    /// reads as it was, and cannot be written.
    fn open_retired(&self, state: &mut State, ino: Ino, writes: bool) -> Result<Opened, Errno> {
        let retired = state.retired.get(&ino).ok_or(libc::ESTALE)?;
        if writes {
            log::debug!("inode {ino}: retired, opened for writing: ESTALE");
            return Err(libc::ESTALE);
        }
        let view = Some(retired.shown.clone());
        let fh = state.add_handle(Handle {
            ino,
            archive: None,
            view,
            writes: false,
            append: false,
        });
        let through_cache = self.opts.page_cache && !self.settling.contains(ino);
        Ok(Opened {
            fh,
            keep_cache: through_cache,
            direct_io: !through_cache,
            flush: false,
        })
    }

    /// Keep what the files just retired held (files of archive `id`, whose keys belong to
    /// `old`, or to the current snapshot), and have their readers keep reading it.
    pub(super) fn keep_retired(
        &self,
        state: &mut State,
        id: ArchiveId,
        old: Option<&Arc<Snapshot>>,
    ) {
        for Retiring { ino, node, path } in state.tree.take_retiring() {
            let shown = match (&node.kind, visible_buffer(&node)) {
                (_, Some(b)) => Shown::Ready(Blob::Owned(b.shared())),
                (
                    NodeKind::File {
                        origin: Origin::Archive { key, .. },
                        ..
                    },
                    None,
                ) => Shown::Render {
                    id,
                    snap: old.cloned().unwrap_or_else(|| self.snapshot(id)),
                    key: *key,
                    path,
                },
                _ => continue,
            };
            for h in state.handles.values_mut() {
                if h.ino == ino && h.view.is_none() && !h.writes {
                    h.view = Some(shown.clone());
                }
            }
            let retired = Retired {
                shown,
                stamp: node.stamp,
                parent: node.parent,
                name: node.name,
            };
            state.retired.insert(ino, retired);
        }
    }

    /// What a writer opening `ino` starts from: its content, rendered with no lock held,
    /// unless it truncates or a buffer is there already; and the snapshot generation it
    /// was taken from.
    fn writers_start(
        &self,
        ino: Ino,
        truncate: bool,
    ) -> Result<(Option<Blob>, Option<u64>), Errno> {
        let shown = {
            let state = self.state.read();
            // A file a commit or a rename took out of the tree, which the kernel still
            // names: ESTALE makes the kernel look the name up again and open what it
            // names now (the save goes on there), where ENOENT would fail the save, and
            // `cp` would then try to create the file and fail with EEXIST.
            let Some(node) = state.tree.get(ino) else {
                log::debug!("inode {ino}: not in the tree, opened for writing: ESTALE");
                return Err(libc::ESTALE);
            };
            let origin = file_origin(node, libc::ELOOP)?;
            match super::copies::copies_only(&origin) && self.writable_at(node) {
                // Opened to write back a copy of itself (`cp -a copy/. mnt/`).
                true => {}
                false => self.check_writable(node, &origin)?,
            }
            let has_buffer = matches!(
                node.kind,
                NodeKind::File {
                    buffer: Some(_),
                    ..
                }
            );
            let live = matches!(origin, Origin::ErrorLog | Origin::Scratch);
            let generation = node.archive.map(|id| self.snapshot(id).generation);
            match !truncate && !has_buffer && !live {
                true => (Some(self.shown(&state, ino)?), generation),
                false => (None, generation),
            }
        };
        Ok((shown.0.map(|s| self.produce(s)).transpose()?, shown.1))
    }

    /// Whether `fh` is a handle of `ino` that `what` says yes to.
    pub(super) fn handle_is(&self, fh: u64, ino: Ino, what: impl Fn(&Handle) -> bool) -> bool {
        self.state
            .read()
            .handles
            .get(&fh)
            .is_some_and(|h| h.ino == ino && what(h))
    }

    pub(super) fn epoch(&self, id: ArchiveId) -> u64 {
        self.archives[id]
            .epoch
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Whether `node`, a file of `origin`, may be opened for writing or truncated.
    pub(super) fn check_writable(&self, node: &Node, origin: &Origin) -> Result<(), Errno> {
        match origin {
            Origin::Scratch | Origin::Pending => Ok(()),
            _ if !self.writable_at(node) => Err(libc::EROFS),
            Origin::Archive { writable: true, .. } => Ok(()),
            _ => Err(libc::EACCES),
        }
    }

    /// `size` bytes at `offset` of what handle `fh` (0: none) reads of `ino`.
    pub fn read(&self, ino: Ino, fh: u64, offset: u64, size: u32) -> Result<Vec<u8>, Errno> {
        let range = |len: usize| {
            let start = (offset.min(len as u64)) as usize;
            start..start.saturating_add(size as usize).min(len)
        };
        let (shown, archive) = {
            let state = self.state.read();
            let handle = state.handles.get(&fh).filter(|h| h.ino == ino);
            match handle {
                // A reader reads what it opened, even if the file has gone since.
                Some(Handle {
                    view: Some(view),
                    archive,
                    ..
                }) => (view.clone(), *archive),
                // A writer reads its buffer; a scratch file is read live.
                Some(Handle { writes, .. }) if *writes || is_scratch(state.tree.get(ino)) => {
                    let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
                    let data = match &node.kind {
                        NodeKind::File {
                            buffer: Some(b), ..
                        } => b.bytes(),
                        _ => &[][..],
                    };
                    return Ok(data[range(data.len())].to_vec());
                }
                _ => (self.shown(&state, ino)?, None),
            }
        };
        let saying = matches!(&shown, Shown::Render { id, key, .. } if self.says_saves(*id, *key));
        let blob = self.produce(shown)?;
        let bytes = blob.as_slice();
        let out = bytes[range(bytes.len())].to_vec();
        if blob.vanished() {
            let id = archive.or_else(|| self.archive_of(ino));
            return Err(id.map_or(libc::EIO, |id| self.vanished(id)));
        }
        if saying {
            // What says whether saves land (`saves.rs`) reads, for its opener, as it did
            // at the first read: the answer may change between two reads.
            if let Some(h) = self.state.write().handles.get_mut(&fh) {
                if h.ino == ino && matches!(h.view, Some(Shown::Render { .. })) {
                    h.view = Some(Shown::Ready(blob));
                }
            }
        }
        Ok(out)
    }

    fn archive_of(&self, ino: Ino) -> Option<ArchiveId> {
        self.state.read().tree.get(ino)?.archive
    }

    pub fn release(&self, ino: Ino, fh: u64) {
        let Some(handle) = self.state.write().handles.remove(&fh) else {
            return;
        };
        if !handle.writes {
            return;
        }
        // Nothing can report an error from here; flush() has normally committed already.
        let _ = self.commit_buffer(ino);
        let mut state = self.state.write();
        let mut drop_node = false;
        let mut stale = false;
        if let Some(node) = state.tree.get_mut(ino) {
            if let NodeKind::File {
                buffer,
                writers,
                origin,
                ..
            } = &mut node.kind
            {
                *writers = writers.saturating_sub(1);
                // A file that takes only copies of itself never shows an emptied one.
                let waiting = buffer.as_deref().is_some_and(WriteBuffer::is_waiting)
                    && !super::copies::copies_only(origin);
                if *writers == 0 && !waiting {
                    match origin {
                        // A scratch file's buffer is its content.
                        Origin::Scratch => {}
                        // Created but never committed (its only save was refused).
                        Origin::Pending => drop_node = true,
                        _ => {
                            // What the writer wrote is gone unless it was committed: the
                            // kernel's idea of the size came from the writes.
                            stale = buffer.as_ref().is_some_and(|b| b.refused.is_some());
                            *buffer = None;
                        }
                    }
                }
            }
        }
        if drop_node {
            if let Some(node) = state.tree.remove(ino) {
                drop(state);
                self.send(vec![super::fs::Invalidation::Entry {
                    parent: node.parent,
                    name: node.name.to_string(),
                }]);
            }
        } else if stale {
            drop(state);
            self.send(vec![super::fs::Invalidation::Inode(ino)]);
        }
    }
}

/// Whether `node` is a scratch file.
fn is_scratch(node: Option<&Node>) -> bool {
    matches!(
        node.map(|n| &n.kind),
        Some(NodeKind::File {
            origin: Origin::Scratch,
            ..
        })
    )
}

/// The origin of a file node; what opening or truncating anything else answers.
pub(super) fn file_origin(node: &Node, symlink: Errno) -> Result<Origin, Errno> {
    match &node.kind {
        NodeKind::File { origin, .. } => Ok(origin.clone()),
        NodeKind::Dir { .. } => Err(libc::EISDIR),
        NodeKind::Symlink { .. } => Err(symlink),
    }
}
