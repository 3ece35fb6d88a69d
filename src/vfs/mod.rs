//! The format-free virtual tree.
//!
//! A format (under `archive/`) opens an archive into an immutable [`Archive`] snapshot
//! over its bytes ([`ArchiveBytes`], mapped) and describes its tree as a list of
//! [`Entry`]s. This module turns that into directories with stable inode numbers, serves
//! reads, keeps write buffers and scratch files, and commits edits atomically
//! ([`commit`]). It imports no format and knows nothing of FUSE: the adapter in `fuse.rs`,
//! the offline commands and the model test all drive [`Vfs`]; `fs.rs` lists its rooms.

pub mod ahead;
pub mod attr;
pub mod buffer;
pub mod bytes;
pub mod cache;
pub mod commit;
mod copies;
pub mod editors;
pub mod errors;
pub mod fs;
pub mod handles;
pub mod mapguard;
#[cfg(test)]
mod model_tests;
pub mod name;
pub mod problem;
mod reconcile;
mod saves;
mod snapshot;
mod superseded;
pub mod tree;
pub mod unsaved;
mod views;
mod watch;
mod write;

use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

pub use attr::{Attr, FileType, SetAttr};
pub use bytes::ArchiveBytes;
pub use fs::{ArchiveFile, Done, Invalidation, OpenError, Vfs, VfsOptions};
pub use handles::Opened;
pub use problem::Problem;
pub use tree::{Ino, NodeKind};

/// Bytes a file serves: a range of the archive's bytes, or bytes a view rendered.
#[derive(Clone)]
pub enum Blob {
    Archive(Arc<ArchiveBytes>, Range<usize>),
    /// A `Vec` rather than `[u8]`: a rendered view moves in without being copied.
    Owned(Arc<Vec<u8>>),
}

impl Blob {
    pub fn owned(bytes: impl Into<Vec<u8>>) -> Blob {
        Blob::Owned(Arc::new(bytes.into()))
    }

    pub fn as_slice(&self) -> &[u8] {
        match self {
            Blob::Archive(bytes, range) => &bytes[range.clone()],
            Blob::Owned(bytes) => bytes,
        }
    }

    /// Whether what was read of this blob may be zeros standing for a page another
    /// program took away ([`ArchiveBytes::vanished`]): check after reading.
    pub fn vanished(&self) -> bool {
        match self {
            Blob::Archive(bytes, _) => bytes.vanished(),
            Blob::Owned(_) => false,
        }
    }

    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for Blob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Blob({} bytes)", self.len())
    }
}

/// A file's identity inside one snapshot, chosen by the format (for example the record
/// index and which view of it). It only has to be unique within the snapshot.
pub type FileKey = u64;

/// One node of an archive's tree, as the format describes it. Paths are relative to the
/// archive's root and use `/`; every component must already be a valid file name (formats
/// build them with [`name::Namer`], the one escape function).
#[derive(Debug, Clone)]
pub struct Entry {
    pub path: String,
    pub kind: EntryKind,
}

/// One entry of a folder, named by its leaf: what [`Archive::members_in`] hands on. A
/// name of up to 24 bytes is held inline, so describing a folder of 200,000 programs
/// allocates no name.
#[derive(Debug, Clone)]
pub struct Member {
    pub name: tree::Name,
    pub kind: EntryKind,
}

/// Where a folder's members go as an archive describes them ([`Archive::members_in`]).
pub trait Members {
    /// Room for `more` members: how many are coming, where the archive knows.
    fn reserve(&mut self, more: usize);
    fn add(&mut self, member: Member);
}

impl Members for Vec<Member> {
    fn reserve(&mut self, more: usize) {
        self.reserve_exact(more);
    }

    fn add(&mut self, member: Member) {
        self.push(member);
    }
}

#[derive(Debug, Clone)]
pub enum EntryKind {
    Dir,
    File {
        key: FileKey,
        /// The size when known without rendering (raw bytes); `None` for derived views,
        /// whose size is learnt by rendering them on first `stat`.
        size: Option<u64>,
        /// Whether writing this file is a meaningful edit of the archive.
        writable: bool,
        /// The archive bytes the file shows or is derived from (a record), or `None` for
        /// a file that sums up the whole archive. A commit changes the time of the files
        /// whose bytes changed, and of no other.
        source: Option<Range<usize>>,
    },
    Symlink {
        target: String,
    },
}

/// Give the heap's free memory back to the system (after loading an archive, or
/// describing a large folder, whose transient lists are gone).
pub fn release_free_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only returns free memory of glibc's heap to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The whole tree of an archive that describes it folder by folder: each folder's
/// entries, each followed by what is under it (parents before children, archive order).
pub fn walk_folders(archive: &dyn Archive) -> Vec<Entry> {
    fn walk(archive: &dyn Archive, dir: &str, out: &mut Vec<Entry>) {
        let mut members = Vec::new();
        archive.members_in(dir, &mut members);
        for Member { name, kind } in members {
            let path = fs::join_path(dir, &name);
            let sub = matches!(kind, EntryKind::Dir).then(|| path.clone());
            out.push(Entry { path, kind });
            if let Some(sub) = sub {
                walk(archive, &sub, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(archive, "", &mut out);
    out
}

/// One change a user made, handed to the format to validate and serialise.
#[derive(Debug)]
pub enum Edit<'a> {
    /// New content for an existing file.
    Write {
        key: FileKey,
        data: &'a [u8],
    },
    /// A new file in a directory where the format accepts new names.
    Create {
        dir: &'a str,
        name: &'a str,
        data: &'a [u8],
        /// Where a member of this name was removed just before ([`Archive::position`]):
        /// `mv` from another file system removes the target, then writes it anew, and the
        /// member keeps its place.
        position: Option<usize>,
    },
    Remove {
        key: FileKey,
    },
    Rename {
        key: FileKey,
        dir: &'a str,
        name: &'a str,
    },
}

/// The bytes of a new archive: pieces of the current one and new bytes, in order. A
/// commit copies the kept pieces inside the kernel (`copy_file_range`), so replacing one
/// program of a 60 MB database moves kilobytes through the daemon, not megabytes.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Rewrite {
    pieces: Vec<Piece>,
    len: usize,
    /// What the format warns of in a save it accepts (a compiler's warnings), one message
    /// per save: the commit records it in `.shaderfs/errors`, since `close()` succeeds and
    /// says nothing.
    warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// A range of the current archive's bytes.
    Keep(Range<usize>),
    New(Vec<u8>),
}

impl Rewrite {
    pub fn new() -> Rewrite {
        Rewrite::default()
    }

    /// A rewrite that is all new bytes (formats that serialise the whole archive).
    pub fn whole(bytes: Vec<u8>) -> Rewrite {
        let len = bytes.len();
        Rewrite {
            pieces: vec![Piece::New(bytes)],
            len,
            warnings: Vec::new(),
        }
    }

    /// The same rewrite, with `warnings` to record once it is committed.
    pub fn with_warnings(mut self, warnings: Vec<String>) -> Rewrite {
        self.warnings.extend(warnings);
        self
    }

    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Append a range of the current archive (joined to the previous range when they
    /// touch).
    pub fn keep(&mut self, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        self.len += range.len();
        if let Some(Piece::Keep(last)) = self.pieces.last_mut() {
            if last.end == range.start {
                last.end = range.end;
                return;
            }
        }
        self.pieces.push(Piece::Keep(range));
    }

    /// Append new bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.len += bytes.len();
        match self.pieces.last_mut() {
            Some(Piece::New(last)) => last.extend_from_slice(bytes),
            _ => self.pieces.push(Piece::New(bytes.to_vec())),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// The new archive's bytes, given the current archive's.
    pub fn to_vec(&self, current: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for piece in &self.pieces {
            match piece {
                Piece::Keep(range) => out.extend_from_slice(&current[range.clone()]),
                Piece::New(bytes) => out.extend_from_slice(bytes),
            }
        }
        out
    }
}

/// Why a format refused an edit or could not render a view. The message is what the user
/// reads in `.shaderfs/errors`, so it names the place (line:column, byte offset) and what
/// was expected.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ViewError {
    /// The new content is invalid (EINVAL): the save is refused.
    #[error("{0}")]
    Invalid(String),
    /// The operation makes no sense for this file (EPERM), e.g. removing archive.json.
    #[error("{0}")]
    NotPermitted(String),
    /// The archive's bytes could not be decoded for this view (EIO).
    #[error("{0}")]
    Corrupt(String),
}

/// An opened archive: an immutable snapshot. Commits produce a new snapshot.
pub trait Archive: Send + Sync {
    /// The whole tree, parents before children, in archive order.
    fn entries(&self) -> Vec<Entry>;
    /// The entries directly in folder `dir` ("" for the root), by their names in it, in
    /// the order [`Archive::entries`] has them (none for a path that is no folder),
    /// handed to `out` one at a time as they are described: the mount adds each to its
    /// tree as it comes, so a folder of 227,822 views is never a list.
    fn members_in(&self, dir: &str, out: &mut dyn Members) {
        for Entry { path, kind } in self.entries() {
            let (parent, leaf) = fs::split_path(&path);
            if parent == dir {
                out.add(Member {
                    name: leaf.into(),
                    kind,
                });
            }
        }
    }
    /// Whether [`Archive::members_in`] answers without describing the whole tree: the
    /// mount then fills a folder only when someone looks into it, so a large archive
    /// mounts in the time its framing takes to index.
    fn describes_folders(&self) -> bool {
        false
    }
    /// The content of a file of this snapshot.
    fn read(&self, key: FileKey) -> Result<Blob, ViewError>;
    /// The member file `key` is a view of, where several files show one member (a
    /// shader's bytecode, asm and constant table; a program's container, JSON and
    /// listing): the files of one member answer the same. `None` for a file of no one
    /// member (`archive.json`, an index).
    fn member_of(&self, _key: FileKey) -> Option<u64> {
        None
    }
    /// Whether file `key` is a small one that sums up the whole archive (`archive.json`,
    /// an index of its members): cheap to render, and changed by most saves.
    fn sums_up(&self, _key: FileKey) -> bool {
        false
    }
    /// Whether file `key` says whether a save into the archive would land (archive.json's
    /// `writable`). That can change with no commit (the archive's folder remounted
    /// read-only, then read-write): a read-write mount renders such a file with
    /// [`Archive::read_saying`] and what [`Vfs::saves_land`] says when it is read.
    fn says_writable(&self, _key: FileKey) -> bool {
        false
    }
    /// The content of file `key`, saying `writable` where it says whether a save into the
    /// archive would land.
    fn read_saying(&self, key: FileKey, _writable: bool) -> Result<Blob, ViewError> {
        self.read(key)
    }
    /// Whether a new file `name` in `dir` would become an archive member: `Err` says why
    /// not (the user reads it in `.shaderfs/errors` when the name is refused).
    fn new_member(&self, dir: &str, name: &str) -> Result<(), String>;
    /// The place among the archive's members of the member `key` (for example its record
    /// index), for [`Edit::Create::position`]. `None` where members have no order to keep.
    fn position(&self, _key: FileKey) -> Option<usize> {
        None
    }
    /// Validate an edit and return the complete new archive (as a [`Rewrite`] of the
    /// current one).
    fn apply(&self, edit: &Edit<'_>) -> Result<Rewrite, ViewError>;
    /// What the game would refuse in the archive as it stands, beyond views that cannot
    /// be read (`shaderfs check` reports both; a view that cannot be read because of one
    /// of these is not reported again).
    fn problems(&self) -> Vec<Problem> {
        Vec::new()
    }
    /// What shaderfs cannot check in the archive yet, and why (a shader for a profile its
    /// compiler does not compile): neither a problem nor known to be fine. `shaderfs
    /// check` reports these apart; a view that cannot be read because of one is not
    /// reported again.
    fn unchecked(&self) -> Vec<Problem> {
        Vec::new()
    }
    /// The files shaderfs cannot render yet, and why (a shader its decompiler does not
    /// write as HLSL): a limit of shaderfs, neither a problem of the archive nor something
    /// left unchecked. Reading one fails with EIO, as any view that cannot be rendered;
    /// `shaderfs check` counts them apart and does not report their reads.
    fn unshown(&self) -> Vec<Problem> {
        Vec::new()
    }
}

/// Why an archive could not be opened: names the archive, the record, the byte offset and
/// what was expected.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct FormatError {
    pub message: String,
    /// The byte offset to blame, when one is (`check --json` gives it on its own).
    pub offset: Option<u64>,
}

impl FormatError {
    pub fn new(message: impl Into<String>) -> FormatError {
        FormatError {
            message: message.into(),
            offset: None,
        }
    }

    /// A problem at byte `offset` of the archive.
    pub fn at(offset: Option<usize>, message: impl Into<String>) -> FormatError {
        FormatError {
            message: message.into(),
            offset: offset.map(|o| o as u64),
        }
    }
}

/// Options a format sees when opening: what changes the tree it shows or how it saves.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenContext {
    pub writable: bool,
    /// `-o sign`: a format whose members carry a digest (DXBC containers) writes the
    /// digest of saved content instead of refusing content whose digest is wrong.
    pub sign: bool,
}

/// An archive format: recognises its files and opens them.
pub trait Format: Send + Sync {
    /// Short name, e.g. `"sdp"`.
    fn name(&self) -> &'static str;
    /// Whether the file at `path`, starting with `head`, is of this format.
    fn recognises(&self, path: &Path, head: &[u8]) -> bool;
    /// Index the framing of `bytes` (the content of the file at `path`).
    fn open(
        &self,
        path: &Path,
        bytes: Arc<ArchiveBytes>,
        ctx: OpenContext,
    ) -> Result<Arc<dyn Archive>, FormatError>;
}
