//! Write buffers and commits (DESIGN.md write-back steps 1–3 and 6).
//!
//! A file opened for writing gets a buffer: its content, or nothing on `O_TRUNC`. On
//! `flush` (what `close()` waits for) or `fsync`, a changed buffer is validated by the
//! format and committed, or refused with the error `close()` returns. A commit first
//! checks that the archive on disk is still the one the mount read, and that the buffer's
//! content was taken from it: if another program changed it, nothing is written.

use super::buffer::{WriteBuffer, MAX_BUFFER};
use super::commit::{self, CommitError};
use super::fs::{split_path, Errno, Invalidation, Vfs};
use super::handles::file_origin;
use super::reconcile::Change;
use super::snapshot::{self, Identity, OnDisk, Snapshot};
use super::tree::{ArchiveId, Ino, NodeKind, Origin, Tree};
use super::{Edit, FileKey, OpenContext, ViewError};

impl Vfs {
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
        self.write_at(ino, 0, offset, data)
    }

    /// `write` through handle `fh` (0: none): at `offset`, or at the end of the buffer
    /// for a handle opened with `O_APPEND`.
    pub fn write_at(&self, ino: Ino, fh: u64, offset: u64, data: &[u8]) -> Result<u32, Errno> {
        let append = self.handle_is(fh, ino, |h| h.append);
        // A file that takes only copies of itself refuses the write that makes its
        // writer's content something else (see `copies`).
        let copies = self.copies_of(&self.state.read(), ino);
        let refused = self.with_buffer(ino, |b| {
            let offset = if append { b.len() as u64 } else { offset };
            b.write(offset, data)?;
            match copies.as_ref().is_some_and(|c| !c.allow(b.bytes(), false)) {
                true => {
                    // Every close() of it hears this; it is not tried again.
                    b.refused = Some(libc::EPERM);
                    b.dirty = false;
                    Ok(true)
                }
                false => Ok(false),
            }
        })?;
        if refused {
            let path = {
                let state = self.state.read();
                match state.tree.get(ino).and_then(|n| n.archive) {
                    Some(id) => self.user_path(id, &state.tree.path(ino)),
                    None => ".shaderfs/errors".to_string(),
                }
            };
            self.report(
                &path,
                "not saved: this file follows from the archive (or is the mount's log); it \
                 takes only a copy of what it holds, as a sync tool writes back",
            );
            return Err(libc::EPERM);
        }
        Ok(data.len() as u32)
    }

    /// `truncate`/`ftruncate`. Through a writer's handle the new length goes into its
    /// buffer, committed when it closes. Without one (`truncate(2)` of a path), a new
    /// non-empty length is a save, committed now or refused now; an empty file waits for
    /// its content (see [`WriteBuffer::is_waiting`]) and everyone sees it empty meanwhile.
    pub fn set_size(&self, ino: Ino, size: u64, writer: bool) -> Result<(), Errno> {
        if size > MAX_BUFFER as u64 {
            return Err(libc::EFBIG);
        }
        let needs_content = {
            let state = self.state.read();
            let node = state.tree.get(ino).ok_or(libc::ENOENT)?;
            let origin = file_origin(node, libc::EINVAL)?;
            let written = matches!(node.kind, NodeKind::File { writers, .. } if writers > 0);
            match written && super::copies::copies_only(&origin) && self.writable_at(node) {
                // `O_TRUNC` of a copy's writer (the kernel names no handle for it): the
                // writer's buffer.
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
            !has_buffer && size > 0
        };
        let current = match needs_content {
            true => Some(self.shown_now(ino)?),
            false => None,
        };
        let commit_now = {
            let mut state = self.state.write();
            let archive = state.tree.get(ino).and_then(|n| n.archive);
            let epoch = archive.map_or(0, |id| self.epoch(id));
            let Some(NodeKind::File {
                buffer,
                writers,
                origin,
            }) = state.tree.get_mut(ino).map(|n| &mut n.kind)
            else {
                return Err(libc::ENOENT);
            };
            if buffer.is_none() {
                let data = current.map(|c| c.as_slice().to_vec()).unwrap_or_default();
                *buffer = Some(Box::new(WriteBuffer::new(
                    &self.budget,
                    data,
                    false,
                    epoch,
                )?));
            }
            if let Some(b) = buffer.as_mut() {
                b.resize(size)?;
            }
            !writer && *writers == 0 && size > 0 && !matches!(origin, Origin::Scratch)
        };
        if !commit_now {
            return Ok(());
        }
        let result = self.commit_buffer(ino);
        // The save had its answer: the file shows the archive again.
        let mut state = self.state.write();
        if let Some(NodeKind::File {
            buffer, writers: 0, ..
        }) = state.tree.get_mut(ino).map(|n| &mut n.kind)
        {
            if !buffer.as_deref().is_some_and(WriteBuffer::is_waiting) {
                *buffer = None;
            }
        }
        drop(state);
        self.send(vec![Invalidation::Inode(ino)]);
        result
    }

    /// `close()` and `fsync()` of handle `fh`: validate and commit a changed buffer
    /// (protocol step 2). The error is what `close()` returns to the program that wrote.
    /// A reader's close commits nothing (a writer's buffer is the writer's to save).
    pub fn flush(&self, ino: Ino, fh: u64) -> Result<(), Errno> {
        match self.handle_is(fh, ino, |h| h.writes) {
            true => self.commit_buffer(ino),
            false => Ok(()),
        }
    }

    /// Validate and commit the buffer of `ino`, if it changed.
    pub(super) fn commit_buffer(&self, ino: Ino) -> Result<(), Errno> {
        let (id, origin, path, data, epoch) = {
            let state = self.state.read();
            let Some(node) = state.tree.get(ino) else {
                return Ok(());
            };
            match &node.kind {
                NodeKind::File {
                    buffer: Some(b), ..
                } if !b.dirty => {
                    return match b.refused {
                        Some(e) => Err(e),
                        None => Ok(()),
                    }
                }
                NodeKind::File {
                    buffer: Some(b),
                    origin,
                    ..
                } => match (node.archive, origin) {
                    (Some(id), Origin::Archive { .. } | Origin::Pending) => (
                        id,
                        origin.clone(),
                        state.tree.path(ino),
                        b.shared(),
                        b.epoch,
                    ),
                    (None, Origin::ErrorLog) => {
                        drop(state);
                        return self.close_log_copy(ino);
                    }
                    _ => return Ok(()),
                },
                _ => return Ok(()),
            }
        };
        // An empty file is never a save: one that takes only copies just stays as it is.
        if super::copies::copies_only(&origin) && !data.is_empty() {
            return self.close_copy(ino, &path, id, &data);
        }
        if data.is_empty() {
            return Ok(());
        }
        let result = match self.holds_already(ino, &data, epoch) {
            // Nothing to write: the archive stays byte for byte as it is.
            true => Ok(()),
            false
                if matches!(origin, Origin::Archive { .. })
                    && self.is_superseded(id, &path, &data) =>
            {
                Ok(())
            }
            false => self.commit_content(id, origin, &path, &data, epoch),
        };
        // Whatever the outcome, this content has had its answer: it is not retried.
        let mut state = self.state.write();
        if let Some(NodeKind::File {
            buffer: Some(b), ..
        }) = state.tree.get_mut(ino).map(|n| &mut n.kind)
        {
            if b.holds(&data) {
                b.dirty = false;
                b.refused = result.err();
            }
        }
        result
    }

    /// Commit `data` as the file at `path` of archive `id` (of `origin`), taken from the
    /// archive at `epoch`.
    fn commit_content(
        &self,
        id: ArchiveId,
        origin: Origin,
        path: &str,
        data: &[u8],
        epoch: u64,
    ) -> Result<(), Errno> {
        let (dir, leaf) = split_path(path);
        let edit = match origin {
            Origin::Archive { key, .. } => Edit::Write { key, data },
            _ => Edit::Create {
                dir,
                name: leaf,
                data,
                position: self.removed.lock().get(&(id, path.to_string())).copied(),
            },
        };
        self.commit(id, path, &edit, Some(epoch), |_| {})
    }

    /// Commit `edit` to archive `id` (protocol step 3), then bring its subtree in line.
    /// `base_epoch` is the epoch the edit's content was taken at, if it has content;
    /// `adjust` runs on the tree first (renames move inode numbers with the name).
    pub(super) fn commit(
        &self,
        id: ArchiveId,
        path: &str,
        edit: &Edit<'_>,
        base_epoch: Option<u64>,
        adjust: impl FnOnce(&mut Tree),
    ) -> Result<(), Errno> {
        let done = {
            let _serial = self.archives[id].commit_lock.lock();
            self.commit_held(id, path, edit, base_epoch, adjust)
        };
        self.settle_pending(id);
        self.settle(done?);
        Ok(())
    }

    /// [`Vfs::commit`] with the archive's commit lock held; returns the kernel caches the
    /// commit made stale.
    fn commit_held(
        &self,
        id: ArchiveId,
        path: &str,
        edit: &Edit<'_>,
        base_epoch: Option<u64>,
        adjust: impl FnOnce(&mut Tree),
    ) -> Result<Vec<Invalidation>, Errno> {
        let mounted = &self.archives[id];
        let user_path = self.user_path(id, path);
        let refuse = |message: &str| {
            self.report(&user_path, &format!("not saved: {message}"));
            Err(libc::EIO)
        };
        if self.refresh_held(id) == OnDisk::Changed {
            return refuse(&match mounted.trouble.lock().clone() {
                Some(trouble) => trouble,
                None => "another program changed the archive on disk since the mount read \
                         it; the mount now shows it as it is there, so look again and save \
                         your change into that"
                    .into(),
            });
        }
        if base_epoch.is_some_and(|e| e != self.epoch(id)) {
            return refuse(
                "this content was taken from the archive before another program changed \
                 it on disk; the mount now shows the archive as it is there, so look again \
                 and save your change into that",
            );
        }
        let old = self.snapshot(id);
        let applied = old.archive.apply(edit);
        if old.bytes.vanished() {
            self.refresh_held(id);
            return refuse("the archive was truncated by another program while it was read");
        }
        let rewrite = match applied {
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
            writable: mounted.writable,
            sign: self.opts.sign,
        };
        let backup =
            self.opts.backup && !mounted.backed_up.load(std::sync::atomic::Ordering::Relaxed);
        let format = mounted.format;
        commit::remove_stale_temps(&mounted.path);
        // The temporary file is read as the archive it is about to become.
        let replaced = commit::replace(
            &mounted.path,
            &old.file,
            &old.bytes,
            &rewrite,
            backup,
            mounted.writable,
            |meta| old.identity.moved_unchanged(meta),
            |_temp, bytes| {
                let archive = format
                    .open(&mounted.path, bytes.clone(), ctx)
                    .map_err(|e| e.message)?;
                match bytes.vanished() {
                    true => Err("the new file was truncated while it was read".into()),
                    false => Ok(archive),
                }
            },
        );
        let replaced = match replaced {
            Ok(r) => r,
            Err(CommitError::Changed { .. }) => {
                // Whatever is there now is what the mount shows from here on.
                self.refresh_held(id);
                return refuse(
                    "another program changed the archive on disk while this save was \
                     written, and its version is kept; the mount now shows the archive as \
                     it is there, so look again and save your change into that",
                );
            }
            Err(e) => {
                self.report(&user_path, &format!("not saved: {e}"));
                return Err(match e {
                    CommitError::Io { source, .. } => source.raw_os_error().unwrap_or(libc::EIO),
                    CommitError::Reread { .. } | CommitError::Changed { .. } => libc::EIO,
                });
            }
        };
        if backup {
            mounted
                .backed_up
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let identity = match replaced.file.metadata() {
            Ok(meta) => Identity::of(&meta),
            Err(e) => return refuse(&format!("the new archive cannot be read back: {e}")),
        };
        let new = Snapshot {
            archive: replaced.value,
            bytes: replaced.bytes,
            generation: old.generation + 1,
            file: replaced.file,
            identity,
        };
        let change = Change::Commit {
            old: old.bytes.clone(),
            new: new.bytes.clone(),
            rewrite: &rewrite,
            time: identity.mtime(),
        };
        // A member removed keeps its place for one created again under its name, until
        // the next commit.
        let place = match edit {
            Edit::Remove { key } => old.archive.position(*key),
            _ => None,
        };
        {
            let mut removed = self.removed.lock();
            removed.retain(|(a, _), _| *a != id);
            if let Some(place) = place {
                removed.insert((id, path.to_string()), place);
            }
        }
        let inval = self.install(id, new, &change, adjust);
        match edit {
            Edit::Write { key, .. } => self.note_superseded(id, path, *key, &old, &inval),
            // Files moved, came or went: what they held before says nothing any more.
            _ => self.superseded.forget_archive(id),
        }
        log::info!("committed {user_path} into {}", mounted.path.display());
        for warning in rewrite.warnings() {
            self.report(&user_path, &format!("saved, with warnings: {warning}"));
        }
        snapshot::retire(old);
        Ok(inval)
    }
}

impl Vfs {
    /// Note what the files a save of `saved` (of key `saved_key`) changed as a
    /// consequence held before it (see [`super::superseded`]), from `old`, the snapshot
    /// the save replaced: the other views of its member, and the small files that sum up
    /// the whole archive (`archive.json`, [`super::Archive::sums_up`]), at most [`MOST`]
    /// of them. Others that a save changes (a database's census, its effects) cost a
    /// render each, old and new, on every commit, and no sync sends them stale alone. A write keeps every file's key (only
    /// content changes), so a file's key in the new tree names the same file in `old`.
    fn note_superseded(
        &self,
        id: ArchiveId,
        saved: &str,
        saved_key: FileKey,
        old: &Snapshot,
        inval: &[Invalidation],
    ) {
        /// Files noted for one save; a member has a few views.
        const MOST: usize = 16;
        let new = self.snapshot(id);
        let member = new.archive.member_of(saved_key);
        let files: Vec<(String, FileKey)> = {
            let state = self.state.read();
            let tree = &state.tree;
            let mut files: Vec<(String, FileKey)> = Vec::new();
            for inval in inval {
                let ino = match inval {
                    Invalidation::Inode(ino) => Some(*ino),
                    Invalidation::Entry { parent, name } => tree.child(*parent, name),
                };
                let Some((ino, node)) = ino.and_then(|ino| tree.get(ino).map(|n| (ino, n))) else {
                    continue;
                };
                let NodeKind::File {
                    origin: Origin::Archive { key, .. },
                    ..
                } = &node.kind
                else {
                    continue;
                };
                let of = new.archive.member_of(*key);
                let counted = match of {
                    Some(_) => of == member,
                    None => new.archive.sums_up(*key),
                };
                if !counted {
                    continue;
                }
                let path = tree.path(ino);
                if path != saved && !files.iter().any(|(p, _)| *p == path) {
                    files.push((path, *key));
                }
                if files.len() == MOST {
                    break;
                }
            }
            files
        };
        for (path, key) in files {
            let (Ok(was), Ok(is)) = (old.archive.read(key), new.archive.read(key)) else {
                continue;
            };
            // Kept: whoever reads the file next finds it rendered.
            if !new.bytes.vanished() {
                self.views.keep((id, new.generation, key), &is);
            }
            // Moved in the archive, the same content: nothing to supersede.
            if was.as_slice() != is.as_slice() && !old.bytes.vanished() {
                self.superseded.note(id, &path, was.as_slice());
            }
        }
        self.superseded.forget(id, saved);
    }

    /// Whether `data`, saved as `path` of archive `id`, is what the file held before a
    /// later save of another file changed it: a stale copy, which is no save (reported).
    pub(super) fn is_superseded(&self, id: ArchiveId, path: &str, data: &[u8]) -> bool {
        if !self.superseded.holds(id, path, data) {
            return false;
        }
        self.report(
            &self.user_path(id, path),
            "kept as it is: this is what the file held before a later save of another \
             view of it changed it (a copy made before that save, as a sync tool sends \
             back); that save stands. Save a change to this file to change it",
        );
        true
    }
}

impl Vfs {
    /// The `close()` of a writer of a file that takes only copies of itself (see
    /// `copies`): a copy is no save; anything else is refused.
    fn close_copy(
        &self,
        ino: Ino,
        path: &str,
        id: ArchiveId,
        data: &std::sync::Arc<Vec<u8>>,
    ) -> Result<(), Errno> {
        let fits = {
            let state = self.state.read();
            self.copies_of(&state, ino)
                .is_some_and(|c| c.allow(data, true))
        };
        let result = match fits {
            true => Ok(()),
            false => {
                self.report(
                    &self.user_path(id, path),
                    "not saved: this file follows from the archive; it takes only a copy of \
                     what it holds, as a sync tool writes back",
                );
                Err(libc::EPERM)
            }
        };
        let mut state = self.state.write();
        if let Some(NodeKind::File {
            buffer: Some(b), ..
        }) = state.tree.get_mut(ino).map(|n| &mut n.kind)
        {
            if b.holds(data) {
                b.dirty = false;
                b.refused = result.err();
            }
        }
        result
    }
}
