//! A model test of the vfs, without FUSE and without root (the reference tests of
//! mountpoint-s3, `../shared/STYLE.md`): proptest generates sequences of file-system
//! operations, runs them against [`Vfs`] over an archive in a temporary folder, and after
//! every operation compares what the vfs answers and what the archive on disk holds with
//! a small model of what they should be.
//!
//! The archive is of a format of this module's own ([`TestFormat`]): a header line, then
//! one `name<TAB>hex` line per member. Its tree:
//!
//! | path | what it is |
//! |---|---|
//! | `items/NAME.dat` | the member's bytes; writable; new names `[a-z]+\.dat` become members |
//! | `hex/NAME.hex` | the member as hex text; a save decodes it; removing it alone is refused |
//! | `index.json` | names and sizes of the members; read-only |
//!
//! Content that is empty or holds a `!` is refused (`ViewError::Invalid`), so that saves
//! are refused too.
//!
//! The kernel's part is emulated as FUSE drives the vfs: `close(fh)` is `flush(ino, fh)`
//! (whose result `close()` returns) then `release`, for readers too; `open(path)` resolves
//! the path, then opens the inode; `creat` is `create`; `truncate(path)` and
//! `ftruncate(fh)` are `setattr` without and with `by_writer`; `stat` is `getattr` (and
//! `lookup`, which must agree).
//!
//! The model (the specification, rule by rule):
//! 1. The archive's committed members, in order, are the truth on disk: after every
//!    operation, the file parses to exactly the model's members.
//! 2. A reader handle sees forever what the file showed when it opened, whatever commits,
//!    renames and unlinks happen (a scratch file is read live).
//! 3. A file shows its committed content, except a file emptied and left so (with no
//!    writer open), which shows empty until content arrives; `stat` agrees with `read`.
//! 4. Writers of a file share one private buffer; no one else sees it until it is
//!    committed.
//! 5. `close()` of a writer with changed non-empty content commits it or refuses it
//!    (EINVAL, archive unchanged, the file named in `.shaderfs/errors`); empty content is
//!    no save. A reader's `close()` commits nothing.
//! 6. After the last writer closes, what was not committed is gone (a file created and
//!    never committed goes with it).
//! 7. `create`: a member-to-be where the format accepts the name (it joins the archive at
//!    the end, or in the place of a member of its name the last commit removed), a scratch
//!    file for an editor's temporary name, else EPERM.
//! 8. Renaming a scratch file over a file (or a new member name) saves into it; renaming
//!    a file aside to `X~` hides it, and writing `X` again, or renaming `X~` back, saves it.
//! 9. `unlink` removes a member, hides a view, and refuses `index.json`.
//! 10. `truncate(path, 0)` with no writer empties the file (rule 3); to any other length,
//!     it is a save, committed or refused at once.
//! 11. Listings and `index.json` agree with the model.
//! 12. A save of what a shown file of the archive already holds is no commit: the archive
//!     file stays as it is, and a removed member keeps its place (rule 7).
//! 13. A save into a shown file of what it held before a save of another file changed it
//!     (a sync tool sending back a stale copy of a view) is no commit either. Such
//!     contents are noted by each commit of a write, a few per file; a file's notes go
//!     when it is saved itself, and every note with any other commit.
//! 14. `index.json` opens for writing, to take back a copy of itself (`cp -a` of a copy
//!     of the tree): what it holds, or held before a save of another file changed it, is
//!     no save; a write that makes the writer's content anything else fails with EPERM,
//!     and so does `close()` of a copy cut short. `truncate` of its path with no writer
//!     is EACCES.
//!
//! Where the specification is silent, the model says:
//! - a refusal is heard by every writer's `close()` until the content changes (the
//!   kernel flushes at each close of a descriptor, a forked child's too);
//! - `truncate(path)` while a writer is open changes the writers' buffer, as `ftruncate`;
//! - an emptied file stays emptied while its name is there, whatever member it shows;
//! - `mv items/A.dat items/B.dat` renames the member, replacing any member B;
//! - a hidden file stays hidden while its member keeps its bytes: a commit that changes
//!   them (a save through its other file, another member renamed onto its name) or
//!   removes the member shows it (or drops it) as the file it now is ([`Model::commit`]).
//!
//! Operations whose outcome the specification leaves open are not tried: removing or
//! renaming a file while a writer has it (or its member's other file) open, and moving a
//! scratch file while a handle is open on it.
//!
//! On a failure, the message names the operations as calls with what the vfs answered,
//! shrunk to a minimal sequence. `PROPTEST_CASES=5000` looks harder.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::test_runner::Config;

use super::editors::is_scratch_name;
use super::{
    Archive, ArchiveBytes, ArchiveFile, Blob, Edit, Entry, EntryKind, FileKey, Format, FormatError,
    Ino, OpenContext, Rewrite, SetAttr, Vfs, VfsOptions, ViewError,
};

type Errno = i32;

// ---- the test format ------------------------------------------------------------------

const MAGIC: &[u8] = b"shaderfs model-test archive 1\n";
/// The byte no member may hold: saves with it are refused.
const BANNED: u8 = b'!';

#[derive(Debug, Clone, PartialEq, Eq)]
struct Member {
    name: String,
    data: Vec<u8>,
}

fn member(name: &str, data: &[u8]) -> Member {
    Member {
        name: name.to_string(),
        data: data.to_vec(),
    }
}

/// The member a file name of `items/` stands for: `[a-z]+\.dat`.
fn member_name(file: &str) -> Result<&str, String> {
    match file.strip_suffix(".dat") {
        Some(stem) if !stem.is_empty() && stem.bytes().all(|b| b.is_ascii_lowercase()) => Ok(stem),
        _ => Err(format!(
            "{file:?} is no member name (lowercase letters, then .dat)"
        )),
    }
}

fn check_content(data: &[u8]) -> Result<(), ViewError> {
    if data.is_empty() {
        return Err(ViewError::Invalid("a member has at least one byte".into()));
    }
    match data.iter().position(|&b| b == BANNED) {
        Some(at) => Err(ViewError::Invalid(format!(
            "byte {at}: '!' is not allowed in a member"
        ))),
        None => Ok(()),
    }
}

fn to_hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

/// The `hex/` view of a member's bytes.
fn hex_view(data: &[u8]) -> Vec<u8> {
    format!("{}\n", to_hex(data)).into_bytes()
}

/// A saved `hex/` view: hex digits, trailing white space ignored.
fn from_hex(text: &[u8]) -> Result<Vec<u8>, ViewError> {
    let end = text
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    let text = &text[..end];
    if text.len() % 2 != 0 {
        return Err(ViewError::Invalid(format!(
            "{} hex digits: an odd number",
            text.len()
        )));
    }
    let digit = |at: usize| {
        (text[at] as char)
            .to_digit(16)
            .map(|d| d as u8)
            .ok_or_else(|| ViewError::Invalid(format!("byte {at}: not a hex digit")))
    };
    (0..text.len())
        .step_by(2)
        .map(|at| Ok(digit(at)? << 4 | digit(at + 1)?))
        .collect()
}

fn index_json(members: &[Member]) -> Vec<u8> {
    let list: Vec<String> = members
        .iter()
        .map(|m| format!("{{\"name\": \"{}\", \"size\": {}}}", m.name, m.data.len()))
        .collect();
    format!("{{\"members\": [{}]}}\n", list.join(", ")).into_bytes()
}

fn member_line(m: &Member) -> Vec<u8> {
    format!("{}\t{}\n", m.name, to_hex(&m.data)).into_bytes()
}

fn serialise(members: &[Member]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    for m in members {
        out.extend(member_line(m));
    }
    out
}

/// The members of an archive file, each with the range of its line.
fn parse(bytes: &[u8]) -> Result<Vec<(Member, Range<usize>)>, String> {
    if !bytes.starts_with(MAGIC) {
        return Err("byte 0: expected the header line".into());
    }
    let mut members: Vec<(Member, Range<usize>)> = Vec::new();
    let mut at = MAGIC.len();
    while at < bytes.len() {
        let end = bytes[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| at + i)
            .ok_or_else(|| format!("byte {at}: a member line without its newline"))?;
        let line = &bytes[at..end];
        let tab = line
            .iter()
            .position(|&b| b == b'\t')
            .ok_or_else(|| format!("byte {at}: expected NAME<TAB>HEX"))?;
        let name = std::str::from_utf8(&line[..tab])
            .map_err(|_| format!("byte {at}: a name that is not UTF-8"))?;
        member_name(&format!("{name}.dat")).map_err(|e| format!("byte {at}: {e}"))?;
        let hex = &line[tab + 1..];
        if hex.iter().any(u8::is_ascii_whitespace) {
            return Err(format!("byte {at}: white space in a member's hex"));
        }
        let data = from_hex(hex)
            .and_then(|d| check_content(&d).map(|()| d))
            .map_err(|e| format!("byte {}: member {name}: {e}", at + tab + 1))?;
        if members.iter().any(|(m, _)| m.name == name) {
            return Err(format!("byte {at}: member {name} twice"));
        }
        members.push((member(name, &data), at..end + 1));
        at = end + 1;
    }
    Ok(members)
}

/// A change to the list of members: what the format's `apply` and the model both do.
#[derive(Debug)]
enum MemberEdit {
    Write {
        index: usize,
        data: Vec<u8>,
    },
    Create {
        name: String,
        data: Vec<u8>,
        position: Option<usize>,
    },
    Remove {
        index: usize,
    },
    /// Replaces a member of the new name, if there is one.
    Rename {
        index: usize,
        name: String,
    },
}

fn apply_members(members: &[Member], edit: &MemberEdit) -> Result<Vec<Member>, ViewError> {
    let mut new = members.to_vec();
    let missing = || ViewError::NotPermitted("no such member".into());
    match edit {
        MemberEdit::Write { index, data } => {
            check_content(data)?;
            new.get_mut(*index).ok_or_else(missing)?.data = data.clone();
        }
        MemberEdit::Create {
            name,
            data,
            position,
        } => {
            if new.iter().any(|m| &m.name == name) {
                return Err(ViewError::Invalid(format!("member {name} exists")));
            }
            check_content(data)?;
            let at = position.map_or(new.len(), |p| p.min(new.len()));
            new.insert(at, member(name, data));
        }
        MemberEdit::Remove { index } => {
            if *index >= new.len() {
                return Err(missing());
            }
            new.remove(*index);
        }
        MemberEdit::Rename { index, name } => {
            if *index >= new.len() {
                return Err(missing());
            }
            new[*index].name = name.clone();
            let mut i = 0;
            new.retain(|m| {
                i += 1;
                i - 1 == *index || &m.name != name
            });
        }
    }
    Ok(new)
}

/// Which file a [`FileKey`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Index,
    Item(usize),
    Hex(usize),
}

impl Key {
    fn encode(self) -> FileKey {
        match self {
            Key::Index => 0,
            Key::Item(i) => 1 + 2 * i as u64,
            Key::Hex(i) => 2 + 2 * i as u64,
        }
    }

    fn decode(key: FileKey) -> Key {
        match key {
            0 => Key::Index,
            k if k % 2 == 1 => Key::Item(((k - 1) / 2) as usize),
            k => Key::Hex(((k - 2) / 2) as usize),
        }
    }
}

/// `lazy`: the archive says it describes its tree folder by folder, and the vfs fills
/// each folder when it is first looked into (the path of large SGD2 databases).
struct TestFormat {
    lazy: bool,
}

static TEST_FORMAT: TestFormat = TestFormat { lazy: false };
static LAZY_TEST_FORMAT: TestFormat = TestFormat { lazy: true };

impl Format for TestFormat {
    fn name(&self) -> &'static str {
        "model-test"
    }

    fn recognises(&self, _path: &Path, head: &[u8]) -> bool {
        head.starts_with(MAGIC)
    }

    fn open(
        &self,
        path: &Path,
        bytes: Arc<ArchiveBytes>,
        _ctx: OpenContext,
    ) -> Result<Arc<dyn Archive>, FormatError> {
        let members =
            parse(&bytes).map_err(|e| FormatError::new(format!("{}: {e}", path.display())))?;
        Ok(Arc::new(TestArchive {
            members,
            lazy: self.lazy,
        }))
    }
}

struct TestArchive {
    /// With the range of each member's line in the file.
    members: Vec<(Member, Range<usize>)>,
    lazy: bool,
}

impl TestArchive {
    fn list(&self) -> Vec<Member> {
        self.members.iter().map(|(m, _)| m.clone()).collect()
    }

    /// `new` as kept lines of this archive and new ones.
    fn rewrite(&self, new: &[Member]) -> Rewrite {
        let mut rewrite = Rewrite::new();
        rewrite.keep(0..MAGIC.len());
        for m in new {
            match self.members.iter().find(|(old, _)| old == m) {
                Some((_, range)) => rewrite.keep(range.clone()),
                None => rewrite.push(&member_line(m)),
            }
        }
        rewrite
    }
}

impl Archive for TestArchive {
    fn describes_folders(&self) -> bool {
        self.lazy
    }

    fn entries(&self) -> Vec<Entry> {
        let file = |path: String, key: Key, size, writable, source| Entry {
            path,
            kind: EntryKind::File {
                key: key.encode(),
                size,
                writable,
                source,
            },
        };
        let dir = |path: &str| Entry {
            path: path.into(),
            kind: EntryKind::Dir,
        };
        let mut entries = vec![file("index.json".into(), Key::Index, None, false, None)];
        entries.push(dir("items"));
        for (i, (m, range)) in self.members.iter().enumerate() {
            entries.push(file(
                format!("items/{}.dat", m.name),
                Key::Item(i),
                Some(m.data.len() as u64),
                true,
                Some(range.clone()),
            ));
        }
        entries.push(dir("hex"));
        for (i, (m, range)) in self.members.iter().enumerate() {
            entries.push(file(
                format!("hex/{}.hex", m.name),
                Key::Hex(i),
                None,
                true,
                Some(range.clone()),
            ));
        }
        entries
    }

    fn member_of(&self, key: FileKey) -> Option<u64> {
        match Key::decode(key) {
            Key::Index => None,
            Key::Item(i) | Key::Hex(i) => Some(i as u64),
        }
    }

    fn sums_up(&self, key: FileKey) -> bool {
        matches!(Key::decode(key), Key::Index)
    }

    fn read(&self, key: FileKey) -> Result<Blob, ViewError> {
        let member = |i: usize| {
            self.members
                .get(i)
                .map(|(m, _)| m)
                .ok_or_else(|| ViewError::Corrupt(format!("no member {i}")))
        };
        Ok(match Key::decode(key) {
            Key::Index => Blob::owned(index_json(&self.list())),
            Key::Item(i) => Blob::owned(member(i)?.data.clone()),
            Key::Hex(i) => Blob::owned(hex_view(&member(i)?.data)),
        })
    }

    fn new_member(&self, dir: &str, name: &str) -> Result<(), String> {
        match dir {
            "items" => member_name(name).map(|_| ()),
            _ => Err(format!("only items/ takes new members, not {dir:?}/")),
        }
    }

    fn position(&self, key: FileKey) -> Option<usize> {
        match Key::decode(key) {
            Key::Item(i) | Key::Hex(i) => Some(i),
            Key::Index => None,
        }
    }

    fn apply(&self, edit: &Edit<'_>) -> Result<Rewrite, ViewError> {
        let edit = match *edit {
            Edit::Write { key, data } => match Key::decode(key) {
                Key::Index => {
                    return Err(ViewError::NotPermitted(
                        "index.json sums up the archive; it is not written".into(),
                    ))
                }
                Key::Item(index) => MemberEdit::Write {
                    index,
                    data: data.to_vec(),
                },
                Key::Hex(index) => MemberEdit::Write {
                    index,
                    data: from_hex(data)?,
                },
            },
            Edit::Create {
                dir,
                name,
                data,
                position,
            } => {
                self.new_member(dir, name)
                    .map_err(ViewError::NotPermitted)?;
                MemberEdit::Create {
                    name: member_name(name).map_err(ViewError::NotPermitted)?.into(),
                    data: data.to_vec(),
                    position,
                }
            }
            Edit::Remove { key } => match Key::decode(key) {
                Key::Item(index) => MemberEdit::Remove { index },
                _ => {
                    return Err(ViewError::NotPermitted(
                        "a view goes with its member: remove items/NAME.dat".into(),
                    ))
                }
            },
            Edit::Rename { key, dir, name } => match Key::decode(key) {
                Key::Item(index) if dir == "items" => MemberEdit::Rename {
                    index,
                    name: member_name(name).map_err(ViewError::NotPermitted)?.into(),
                },
                _ => {
                    return Err(ViewError::NotPermitted(
                        "only members are renamed, within items/".into(),
                    ))
                }
            },
        };
        Ok(self.rewrite(&apply_members(&self.list(), &edit)?))
    }
}

// ---- the mount, as the kernel drives it -----------------------------------------------

struct Mount {
    _dir: tempfile::TempDir,
    path: PathBuf,
    vfs: Vfs,
}

impl Mount {
    fn new(members: &[Member]) -> Mount {
        Mount::of(members, &TEST_FORMAT)
    }

    fn of(members: &[Member], format: &'static TestFormat) -> Mount {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("test.arc");
        std::fs::write(&path, serialise(members)).unwrap();
        let vfs = Vfs::load(
            vec![ArchiveFile {
                path: path.clone(),
                dir_name: String::new(),
                format,
            }],
            VfsOptions {
                writable: true,
                ..VfsOptions::read_only()
            },
        )
        .unwrap_or_else(|e| panic!("load: {e}"));
        Mount {
            _dir: dir,
            path,
            vfs,
        }
    }

    fn bytes_on_disk(&self) -> Vec<u8> {
        std::fs::read(&self.path).unwrap()
    }

    fn on_disk(&self) -> Vec<Member> {
        parse(&self.bytes_on_disk())
            .unwrap_or_else(|e| panic!("the archive on disk does not read: {e}"))
            .into_iter()
            .map(|(m, _)| m)
            .collect()
    }

    fn ino(&self, path: &str) -> Result<Ino, Errno> {
        self.vfs.resolve(path)
    }

    /// `open(path, flags)`: the handle's inode and number.
    fn open(&self, path: &str, flags: i32) -> Result<(Ino, u64), Errno> {
        let ino = self.ino(path)?;
        Ok((ino, self.vfs.open(ino, flags)?.fh))
    }

    /// Everything a handle reads.
    fn read(&self, (ino, fh): (Ino, u64)) -> Result<Vec<u8>, Errno> {
        self.vfs.read(ino, fh, 0, u32::MAX)
    }

    fn write(&self, (ino, fh): (Ino, u64), offset: u64, data: &[u8]) -> Result<u32, Errno> {
        self.vfs.write_at(ino, fh, offset, data)
    }

    /// `close(fh)`: what it returns.
    fn close(&self, (ino, fh): (Ino, u64)) -> Result<(), Errno> {
        let result = self.vfs.flush(ino, fh);
        self.vfs.release(ino, fh);
        result
    }

    /// `cat path`, by a reader whose close is not looked at: open, read, release.
    fn cat(&self, path: &str) -> Result<Vec<u8>, Errno> {
        let (ino, fh) = self.open(path, libc::O_RDONLY)?;
        let data = self.read((ino, fh));
        self.vfs.release(ino, fh);
        data
    }

    fn size(&self, path: &str) -> Result<u64, Errno> {
        Ok(self.vfs.getattr(self.ino(path)?)?.size)
    }

    fn truncate(&self, path: &str, size: u64) -> Result<(), Errno> {
        let set = SetAttr {
            size: Some(size),
            by_writer: false,
            ..SetAttr::default()
        };
        self.vfs.setattr(self.ino(path)?, &set).map(|_| ())
    }

    /// `ftruncate(fh)`: the size it answers.
    fn ftruncate(&self, (ino, _fh): (Ino, u64), size: u64) -> Result<u64, Errno> {
        let set = SetAttr {
            size: Some(size),
            by_writer: true,
            ..SetAttr::default()
        };
        Ok(self.vfs.setattr(ino, &set)?.size)
    }

    /// `creat(path)` of a name the directory does not have.
    fn create(&self, path: &str) -> Result<(Ino, u64), Errno> {
        let (dir, leaf) = split(path);
        let (attr, opened) =
            self.vfs
                .create(self.ino(dir)?, leaf, libc::O_WRONLY | libc::O_CREAT)?;
        Ok((attr.ino, opened.fh))
    }

    fn unlink(&self, path: &str) -> Result<(), Errno> {
        let (dir, leaf) = split(path);
        self.vfs.unlink(self.ino(dir)?, leaf)
    }

    fn rename(&self, from: &str, to: &str) -> Result<(), Errno> {
        let ((from_dir, from_leaf), (to_dir, to_leaf)) = (split(from), split(to));
        self.vfs
            .rename(self.ino(from_dir)?, from_leaf, self.ino(to_dir)?, to_leaf)
    }

    /// The names of a directory, sorted.
    fn list(&self, dir: &str) -> Result<Vec<String>, Errno> {
        let mut names: Vec<String> = self
            .vfs
            .readdir(self.ino(dir)?, 0, usize::MAX)?
            .into_iter()
            .map(|(_, name, _)| name.to_string())
            .filter(|n| n != "." && n != "..")
            .collect();
        names.sort();
        Ok(names)
    }

    fn error_lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.vfs.errors().render())
            .lines()
            .map(str::to_string)
            .collect()
    }
}

fn split(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => ("", path),
    }
}

fn errno_name(e: Errno) -> String {
    match e {
        libc::ENOENT => "ENOENT".into(),
        libc::EPERM => "EPERM".into(),
        libc::EINVAL => "EINVAL".into(),
        libc::EACCES => "EACCES".into(),
        libc::EEXIST => "EEXIST".into(),
        libc::EIO => "EIO".into(),
        libc::EBADF => "EBADF".into(),
        e => format!("errno {e}"),
    }
}

fn show<T: std::fmt::Debug>(r: &Result<T, Errno>) -> String {
    match r {
        Ok(v) => format!("Ok({v:?})"),
        Err(e) => format!("Err({})", errno_name(*e)),
    }
}

fn text(data: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(data))
}

// ---- the model ------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A file of the archive (a member, its view, the index).
    Archive,
    /// Created in `items/`, not yet in the archive.
    Pending,
    /// An editor's temporary: in memory only.
    Scratch,
}

#[derive(Debug, Clone)]
struct Buf {
    data: Vec<u8>,
    /// Changed since the last save attempt.
    dirty: bool,
    /// Why the last attempt to save this content was refused: every writer's `close()`
    /// hears it until the content changes (a choice the specification leaves open; the
    /// kernel flushes at every close of a descriptor, a forked child's too).
    refused: Option<Errno>,
}

impl Buf {
    fn waiting(&self) -> bool {
        self.dirty && self.data.is_empty()
    }
}

#[derive(Debug, Clone)]
struct MFile {
    kind: Kind,
    /// The writers' shared buffer, a file emptied and waiting, or a scratch file's
    /// content.
    buf: Option<Buf>,
    writers: u32,
}

/// What a handle reads.
#[derive(Debug, Clone)]
enum MHandle {
    /// A reader: what the file showed when it opened.
    Pinned(Vec<u8>),
    /// A reader of a scratch file, which is read live.
    Live(String),
    /// A writer of the file at this path: its buffer.
    Writer(String),
}

#[derive(Debug, Default)]
struct Model {
    members: Vec<Member>,
    /// Every file the mount shows, by path.
    files: BTreeMap<String, MFile>,
    /// Files of the archive not shown (renamed aside, or a view removed).
    hidden: BTreeSet<String>,
    /// The member the last commit removed, with its place.
    removed: Option<(String, usize)>,
    /// What files held before a save of another file changed them (rule 13).
    superseded: BTreeMap<String, Vec<Vec<u8>>>,
}

fn item_path(name: &str) -> String {
    format!("items/{name}.dat")
}

fn hex_path(name: &str) -> String {
    format!("hex/{name}.hex")
}

/// What a file of the archive is: `None` for the index.
fn archive_file(path: &str) -> Option<(bool, &str)> {
    if let Some(name) = path
        .strip_prefix("items/")
        .and_then(|p| p.strip_suffix(".dat"))
    {
        return Some((true, name));
    }
    path.strip_prefix("hex/")
        .and_then(|p| p.strip_suffix(".hex"))
        .map(|name| (false, name))
}

fn errno_of(e: &ViewError) -> Errno {
    match e {
        ViewError::Invalid(_) => libc::EINVAL,
        ViewError::NotPermitted(_) => libc::EPERM,
        ViewError::Corrupt(_) => libc::EIO,
    }
}

impl Model {
    fn new(members: Vec<Member>) -> Model {
        let mut model = Model {
            members,
            ..Model::default()
        };
        model.sync();
        model
    }

    fn index_of(&self, name: &str) -> Option<usize> {
        self.members.iter().position(|m| m.name == name)
    }

    /// Bring the files in line with the members and what is hidden: files of the archive
    /// come and go, a pending file whose member was committed is the member's file.
    fn sync(&mut self) {
        let mut wanted = vec!["index.json".to_string()];
        for m in &self.members {
            wanted.push(item_path(&m.name));
            wanted.push(hex_path(&m.name));
        }
        wanted.retain(|p| !self.hidden.contains(p));
        self.files
            .retain(|path, f| f.kind != Kind::Archive || wanted.contains(path));
        for path in wanted {
            let f = self.files.entry(path).or_insert(MFile {
                kind: Kind::Archive,
                buf: None,
                writers: 0,
            });
            if f.kind == Kind::Pending {
                f.kind = Kind::Archive;
            }
        }
    }

    /// The committed content of a file of the archive.
    fn committed(&self, path: &str) -> Vec<u8> {
        if path == "index.json" {
            return index_json(&self.members);
        }
        let Some((item, name)) = archive_file(path) else {
            return Vec::new();
        };
        match self.members.iter().find(|m| m.name == name) {
            Some(m) if item => m.data.clone(),
            Some(m) => hex_view(&m.data),
            None => Vec::new(),
        }
    }

    /// What a new reader of `path` reads (rule 3).
    fn shown(&self, path: &str) -> Vec<u8> {
        let f = &self.files[path];
        match (&f.buf, f.kind) {
            (buf, Kind::Scratch) => buf.as_ref().map(|b| b.data.clone()).unwrap_or_default(),
            (Some(b), _) if f.writers == 0 => b.data.clone(),
            (_, Kind::Pending) => Vec::new(),
            _ => self.committed(path),
        }
    }

    /// Commit a change of the members (or refuse it). `path` is the file it is saved
    /// through.
    fn commit(&mut self, path: &str, edit: MemberEdit) -> Result<(), Errno> {
        let new = apply_members(&self.members, &edit).map_err(|e| errno_of(&e))?;
        // A hidden file stays hidden while it shows the same bytes: once a commit changes
        // its member (saved through its other file, another member renamed onto its
        // name) or removes it, it is another file, shown (or gone) as such.
        let content = |members: &[Member], name: &str| {
            members
                .iter()
                .find(|m| m.name == name)
                .map(|m| m.data.clone())
        };
        let old = self.members.clone();
        self.hidden.retain(|path| {
            let Some((_, name)) = archive_file(path) else {
                return true;
            };
            let now = content(&new, name);
            now.is_some() && now == content(&old, name)
        });
        self.removed = match edit {
            MemberEdit::Remove { index } => Some((path.to_string(), index)),
            _ => None,
        };
        let before: Vec<(String, Vec<u8>)> = self
            .files
            .iter()
            .filter(|(_, f)| f.kind == Kind::Archive)
            .map(|(p, _)| (p.clone(), self.committed(p)))
            .collect();
        let write = matches!(edit, MemberEdit::Write { .. });
        self.members = new;
        self.sync();
        // Rule 13: a write notes what the other shown files it changed held; any other
        // commit forgets every note.
        if !write {
            self.superseded.clear();
            return Ok(());
        }
        for (other, was) in before {
            let shown = self
                .files
                .get(&other)
                .is_some_and(|f| f.kind == Kind::Archive);
            if other == path || !shown || self.committed(&other) == was {
                continue;
            }
            let kept = self.superseded.entry(other).or_default();
            if !kept.contains(&was) {
                kept.push(was);
            }
            if kept.len() > 4 {
                kept.remove(0);
            }
        }
        self.superseded.remove(path);
        Ok(())
    }

    /// Save `data` into the file at `path` (a file of the archive, shown or hidden, or a
    /// new member).
    fn save(&mut self, path: &str, data: &[u8]) -> Result<(), Errno> {
        // Rule 14: index.json takes only a copy of itself, which is no save.
        if path == "index.json" {
            return match self.copy_of(path, data, true) {
                true => Ok(()),
                false => Err(libc::EPERM),
            };
        }
        // A save of what a shown file of the archive already holds changes nothing: no
        // commit, so a removed member keeps its place.
        let shown_member = archive_file(path)
            .is_some_and(|(_, name)| self.index_of(name).is_some() && !self.hidden.contains(path));
        if shown_member && self.committed(path) == data {
            return Ok(());
        }
        // Rule 13: what the file held before a save of another file changed it.
        if shown_member
            && self
                .superseded
                .get(path)
                .is_some_and(|k| k.iter().any(|c| c == data))
        {
            return Ok(());
        }
        let edit = match archive_file(path) {
            None => return Err(libc::EPERM),
            Some((item, name)) => match self.index_of(name) {
                Some(index) if item => MemberEdit::Write {
                    index,
                    data: data.to_vec(),
                },
                Some(index) => MemberEdit::Write {
                    index,
                    data: from_hex(data).map_err(|e| errno_of(&e))?,
                },
                None if item => MemberEdit::Create {
                    name: name.to_string(),
                    data: data.to_vec(),
                    position: self
                        .removed
                        .as_ref()
                        .filter(|(p, _)| p == path)
                        .map(|(_, at)| *at),
                },
                None => return Err(libc::EPERM),
            },
        };
        self.commit(path, edit)
    }

    /// Whether `data` is (`whole`), or begins, what `path` holds or held before a save of
    /// another file changed it (rule 14).
    fn copy_of(&self, path: &str, data: &[u8], whole: bool) -> bool {
        let fits = |c: &[u8]| match whole {
            true => c == data,
            false => c.starts_with(data),
        };
        let kept = self.superseded.get(path).into_iter().flatten();
        fits(&self.committed(path)) || kept.into_iter().any(|c| fits(c))
    }

    /// Whether a new name in `dir` would become a member.
    fn accepts(dir: &str, leaf: &str) -> bool {
        dir == "items" && member_name(leaf).is_ok()
    }
}

// ---- operations -----------------------------------------------------------------------

const MEMBERS: [&str; 3] = ["a", "b", "c"];
const SCRATCH: [&str; 6] = [
    "items/a.dat~",
    "items/b.dat~",
    "items/sedAb12Cd",
    "items/4913",
    "hex/a.hex~",
    "hex/.b.hex.swp",
];
/// Names that are neither members nor an editor's.
const REFUSED: [&str; 4] = [
    "items/A.dat",
    "items/notes.txt",
    "hex/d.hex",
    "index.json.new2",
];
const DATA: [&[u8]; 8] = [b"ab", b"6162", b"!", b"zz", b"0", b"21", b"\n", b"xyz"];
const CONTENT: [&[u8]; 4] = [b"ab", b"xyz", b"\x00\x01", b"hello"];

fn files() -> Vec<String> {
    let mut all = vec!["index.json".to_string()];
    all.extend(views());
    all.extend(SCRATCH.iter().map(|s| s.to_string()));
    all
}

fn new_names() -> Vec<String> {
    let mut all = files();
    all.push("items/d.dat".into());
    all.extend(REFUSED.iter().map(|s| s.to_string()));
    all
}

fn views() -> Vec<String> {
    MEMBERS
        .iter()
        .flat_map(|m| [item_path(m), hex_path(m)])
        .collect()
}

/// A path an operation names: one of a fixed list, or one of the files the mount shows
/// at that moment (so that few operations go to names that are not there).
#[derive(Debug, Clone)]
enum P {
    Named(String),
    /// Any file shown.
    Shown(Index),
    /// A scratch file shown.
    Scratch(Index),
    /// A member's file or view shown, or a file created and not yet committed.
    View(Index),
    /// A scratch file whose name ends in `~`.
    Backup(Index),
}

/// An open handle an operation uses.
#[derive(Debug, Clone)]
enum H {
    /// The one opened last.
    Last,
    Any(Index),
}

#[derive(Debug, Clone)]
enum Op {
    OpenRead(P),
    OpenWrite {
        path: P,
        rdwr: bool,
        trunc: bool,
    },
    /// `pwrite` through an open writer.
    Write {
        writer: H,
        offset: u64,
        data: &'static [u8],
    },
    Ftruncate {
        writer: H,
        size: u64,
    },
    Close(H),
    Truncate {
        path: P,
        size: u64,
    },
    /// `creat` of a name not shown.
    Create(String),
    Unlink(P),
    /// `mv SCRATCH TO`.
    RenameScratch {
        from: P,
        to: P,
    },
    /// `mv X X~`.
    RenameAside(P),
    /// `mv X~ X`, naming `X~`.
    RenameBack(P),
    /// `mv items/A.dat items/B.dat`.
    RenameMember {
        from: String,
        to: String,
    },
    Stat(P),
    /// Read everything through an open handle.
    ReadHeld(H),
}

fn path_strategy() -> impl Strategy<Value = P> {
    prop_oneof![
        2 => select(files()).prop_map(P::Named),
        3 => any::<Index>().prop_map(P::Shown),
    ]
}

fn handle_strategy() -> impl Strategy<Value = H> {
    prop_oneof![2 => Just(H::Last), 1 => any::<Index>().prop_map(H::Any)]
}

/// One operation, or a few that belong together.
fn ops_strategy() -> impl Strategy<Value = Vec<Op>> {
    let one = prop_oneof![
        3 => path_strategy().prop_map(Op::OpenRead),
        4 => (path_strategy(), any::<bool>(), prop::bool::weighted(0.3))
            .prop_map(|(path, rdwr, trunc)| Op::OpenWrite { path, rdwr, trunc }),
        6 => (handle_strategy(), 0..6u64, select(DATA.to_vec()))
            .prop_map(|(writer, offset, data)| Op::Write { writer, offset, data }),
        2 => (handle_strategy(), prop_oneof![Just(0u64), 0..6u64])
            .prop_map(|(writer, size)| Op::Ftruncate { writer, size }),
        6 => handle_strategy().prop_map(Op::Close),
        3 => (path_strategy(), prop_oneof![2 => Just(0u64), 1 => 1..6u64])
            .prop_map(|(path, size)| Op::Truncate { path, size }),
        3 => select(new_names()).prop_map(Op::Create),
        2 => prop_oneof![
            1 => select(files()).prop_map(P::Named),
            2 => any::<Index>().prop_map(P::View),
        ]
        .prop_map(Op::Unlink),
        2 => (
            prop_oneof![
                1 => select(SCRATCH.to_vec()).prop_map(|s| P::Named(s.into())),
                3 => any::<Index>().prop_map(P::Scratch),
            ],
            prop_oneof![select(new_names()).prop_map(P::Named), any::<Index>().prop_map(P::Shown)],
        )
            .prop_map(|(from, to)| Op::RenameScratch { from, to }),
        2 => prop_oneof![
            1 => select(views()).prop_map(P::Named),
            3 => any::<Index>().prop_map(P::View),
        ]
        .prop_map(Op::RenameAside),
        2 => prop_oneof![
            1 => select(views()).prop_map(|v| P::Named(format!("{v}~"))),
            3 => any::<Index>().prop_map(P::Backup),
        ]
        .prop_map(Op::RenameBack),
        1 => (select(MEMBERS.to_vec()), select(vec!["a", "b", "c", "d"])).prop_map(
            |(from, to)| Op::RenameMember { from: item_path(from), to: item_path(to) }
        ),
        1 => path_strategy().prop_map(Op::Stat),
        2 => handle_strategy().prop_map(Op::ReadHeld),
    ];
    prop_oneof![
        10 => one.prop_map(|op| vec![op]),
        // `mv` from another file system, or `cp` after `rm`: the member goes, and comes
        // back in its place.
        1 => (select(MEMBERS.to_vec()), select(DATA.to_vec())).prop_map(|(m, data)| {
            let path = item_path(m);
            vec![
                Op::Unlink(P::Named(path.clone())),
                Op::Create(path),
                Op::Write { writer: H::Last, offset: 0, data },
                Op::Close(H::Last),
            ]
        }),
    ]
}

fn members_strategy() -> impl Strategy<Value = Vec<Member>> {
    (
        Just(MEMBERS.to_vec()).prop_shuffle(),
        0..=MEMBERS.len(),
        prop::collection::vec(select(CONTENT.to_vec()), MEMBERS.len()),
    )
        .prop_map(|(names, n, contents)| {
            names[..n]
                .iter()
                .zip(contents)
                .map(|(name, data)| member(name, data))
                .collect()
        })
}

// ---- running operations against the vfs and the model ---------------------------------

/// An open handle: the vfs's, and what the model says it reads.
struct Held {
    handle: (Ino, u64),
    model: MHandle,
    /// How the log names it (`fd3`).
    name: String,
}

struct Run {
    mount: Mount,
    model: Model,
    held: Vec<Held>,
    opened: usize,
    /// What happened, as calls and what the vfs answered, for the failure message.
    log: Vec<String>,
    /// Operations still to run before the tree is compared whole (which looks into
    /// every folder).
    unlooked: usize,
}

macro_rules! check {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

/// Compare the vfs's result with the model's.
fn agree<T: std::fmt::Debug, U: std::fmt::Debug>(
    what: &str,
    got: &Result<T, Errno>,
    want: &Result<U, Errno>,
) -> Result<(), String> {
    match (got, want) {
        (Ok(_), Ok(_)) => Ok(()),
        (Err(a), Err(b)) if a == b => Ok(()),
        _ => Err(format!(
            "{what}: the vfs answered {}, the model expects {}",
            show(got),
            show(want)
        )),
    }
}

fn flags_text(flags: i32) -> String {
    let mut text = match flags & libc::O_ACCMODE {
        libc::O_RDONLY => "O_RDONLY",
        libc::O_WRONLY => "O_WRONLY",
        _ => "O_RDWR",
    }
    .to_string();
    if flags & libc::O_TRUNC != 0 {
        text.push_str("|O_TRUNC");
    }
    text
}

/// `Ok` or the errno, for the log.
fn outcome<T>(r: &Result<T, Errno>) -> String {
    match r {
        Ok(_) => "ok".into(),
        Err(e) => errno_name(*e),
    }
}

impl Run {
    fn new(members: Vec<Member>, lazy: bool) -> Run {
        let format = if lazy {
            &LAZY_TEST_FORMAT
        } else {
            &TEST_FORMAT
        };
        Run {
            mount: Mount::of(&members, format),
            model: Model::new(members),
            held: Vec::new(),
            opened: 0,
            log: Vec::new(),
            unlooked: 0,
        }
    }

    /// The path `p` names now; `None` when it names none.
    fn path(&self, p: &P) -> Option<String> {
        let pick = |i: &Index, f: &dyn Fn(&str, &MFile) -> bool| {
            let all: Vec<&String> = self
                .model
                .files
                .iter()
                .filter(|(path, file)| f(path, file))
                .map(|(path, _)| path)
                .collect();
            (!all.is_empty()).then(|| all[i.index(all.len())].clone())
        };
        match p {
            P::Named(path) => Some(path.clone()),
            P::Shown(i) => pick(i, &|_, _| true),
            P::Scratch(i) => pick(i, &|_, f| f.kind == Kind::Scratch),
            P::View(i) => pick(i, &|p, f| f.kind != Kind::Scratch && p != "index.json"),
            P::Backup(i) => pick(i, &|p, f| f.kind == Kind::Scratch && p.ends_with('~')),
        }
    }

    /// The handle `h` names now.
    fn held_index(&self, h: &H, writers_only: bool) -> Option<usize> {
        let all: Vec<usize> = (0..self.held.len())
            .filter(|&i| !writers_only || matches!(self.held[i].model, MHandle::Writer(_)))
            .collect();
        match h {
            H::Last => all.last().copied(),
            H::Any(i) => (!all.is_empty()).then(|| all[i.index(all.len())]),
        }
    }

    fn hold(&mut self, handle: (Ino, u64), model: MHandle) -> String {
        self.opened += 1;
        let name = format!("fd{}", self.opened);
        self.held.push(Held {
            handle,
            model,
            name: name.clone(),
        });
        name
    }

    /// Handles that read `path` live or write it.
    fn users(&self, path: &str) -> usize {
        self.held
            .iter()
            .filter(|h| matches!(&h.model, MHandle::Live(p) | MHandle::Writer(p) if p == path))
            .count()
    }

    fn has_writers(&self, path: &str) -> bool {
        self.model.files.get(path).is_some_and(|f| f.writers > 0)
    }

    /// Whether the files of the member a path stands for have writers open.
    fn member_busy(&self, path: &str) -> bool {
        match archive_file(path) {
            Some((_, name)) => {
                self.has_writers(&item_path(name)) || self.has_writers(&hex_path(name))
            }
            None => self.has_writers(path),
        }
    }

    /// `path` is a scratch or pending file with handles on it, which no operation that
    /// moves or removes it is tried with (where such a handle then reads or writes is
    /// beyond the specification).
    fn in_memory_busy(&self, path: &str) -> bool {
        self.model
            .files
            .get(path)
            .is_some_and(|f| f.kind != Kind::Archive && (f.writers > 0 || self.users(path) > 0))
    }

    /// Run one operation on both, compare, then compare everything. Operations whose
    /// outcome the specification leaves open are skipped.
    fn step(&mut self, op: &Op) -> Result<(), String> {
        let errors_before = self.mount.error_lines().len();
        // The path `.shaderfs/errors` must name when the operation is refused.
        let mut reported: Option<String> = None;
        let result = self.apply(op, &mut reported);
        if let Some(line) = result.as_ref().ok().and_then(|l| l.clone()) {
            self.log.push(line);
        }
        result?;
        if let Some(path) = reported {
            let lines = self.mount.error_lines();
            check!(
                lines.len() > errors_before
                    && lines
                        .last()
                        .is_some_and(|l| l.contains(&format!(" {path}: "))),
                ".shaderfs/errors does not name {path} after its refusal: {:?}",
                lines.last()
            );
        }
        if self.unlooked > 0 {
            // Folders nobody has looked into stay so: only the archive is checked.
            self.unlooked -= 1;
            return self.check_disk();
        }
        self.check_all()
    }

    /// One operation: the line for the log, `None` when skipped.
    fn apply(&mut self, op: &Op, reported: &mut Option<String>) -> Result<Option<String>, String> {
        macro_rules! path {
            ($p:expr) => {
                match self.path($p) {
                    Some(path) => path,
                    None => return Ok(None),
                }
            };
        }
        macro_rules! logged {
            ($line:expr, $check:expr) => {{
                let line = $line;
                if let Err(e) = $check {
                    self.log.push(line);
                    return Err(e);
                }
                Ok(Some(line))
            }};
        }
        match op {
            Op::OpenRead(p) => {
                let path = path!(p);
                let want = match self.model.files.get(&path) {
                    None => Err(libc::ENOENT),
                    Some(f) if f.kind == Kind::Scratch => Ok(MHandle::Live(path.clone())),
                    Some(_) => Ok(MHandle::Pinned(self.model.shown(&path))),
                };
                let got = self.mount.open(&path, libc::O_RDONLY);
                let check = agree(&format!("open({path:?}, O_RDONLY)"), &got, &want);
                let fd = match (got, want) {
                    (Ok(handle), Ok(model)) => self.hold(handle, model),
                    (got, _) => outcome(&got),
                };
                logged!(format!("open({path:?}, O_RDONLY) = {fd}"), check)
            }
            Op::OpenWrite {
                path: p,
                rdwr,
                trunc,
            } => {
                let path = path!(p);
                let flags = if *rdwr { libc::O_RDWR } else { libc::O_WRONLY }
                    | if *trunc { libc::O_TRUNC } else { 0 };
                let call = format!("open({path:?}, {})", flags_text(flags));
                let want = self.model_open_writer(&path, *trunc);
                let got = self.mount.open(&path, flags);
                let check = agree(&call, &got, &want);
                let fd = match got {
                    Ok(handle) => self.hold(handle, MHandle::Writer(path.clone())),
                    Err(e) => errno_name(e),
                };
                logged!(format!("{call} = {fd}"), check)
            }
            Op::Write {
                writer,
                offset,
                data,
            } => {
                let Some(i) = self.held_index(writer, true) else {
                    return Ok(None);
                };
                let (handle, name) = (self.held[i].handle, self.held[i].name.clone());
                let MHandle::Writer(path) = self.held[i].model.clone() else {
                    unreachable!()
                };
                let b = self
                    .model
                    .files
                    .get_mut(&path)
                    .unwrap()
                    .buf
                    .as_mut()
                    .unwrap();
                let end = *offset as usize + data.len();
                if b.data.len() < end {
                    b.data.resize(end, 0);
                }
                b.data[*offset as usize..end].copy_from_slice(data);
                b.dirty = true;
                b.refused = None;
                // Rule 14: the write that makes a copy of index.json something else.
                let written = b.data.clone();
                let want = match path == "index.json" && !self.model.copy_of(&path, &written, false)
                {
                    true => {
                        let b = self
                            .model
                            .files
                            .get_mut(&path)
                            .unwrap()
                            .buf
                            .as_mut()
                            .unwrap();
                        b.refused = Some(libc::EPERM);
                        b.dirty = false;
                        Err(libc::EPERM)
                    }
                    false => Ok(()),
                };
                let got = self.mount.write(handle, *offset, data);
                let call = format!("pwrite({name}, {}, {offset})", text(data));
                logged!(
                    format!("{call} -> {}", outcome(&got)),
                    agree(&call, &got, &want)
                )
            }
            Op::Ftruncate { writer, size } => {
                let Some(i) = self.held_index(writer, true) else {
                    return Ok(None);
                };
                let (handle, name) = (self.held[i].handle, self.held[i].name.clone());
                let MHandle::Writer(path) = self.held[i].model.clone() else {
                    unreachable!()
                };
                let b = self
                    .model
                    .files
                    .get_mut(&path)
                    .unwrap()
                    .buf
                    .as_mut()
                    .unwrap();
                b.data.resize(*size as usize, 0);
                b.dirty = true;
                b.refused = None;
                let got = self.mount.ftruncate(handle, *size);
                let call = format!("ftruncate({name}, {size})");
                let check = match got {
                    Ok(s) if s != *size => Err(format!(
                        "{call} answered size {s}, the size of the writer's file is {size}"
                    )),
                    _ => agree(&call, &got, &Ok(())),
                };
                logged!(format!("{call} -> {}", outcome(&got)), check)
            }
            Op::Close(h) => {
                let Some(i) = self.held_index(h, false) else {
                    return Ok(None);
                };
                let held = self.held.remove(i);
                let want = match &held.model {
                    MHandle::Writer(path) => {
                        let path = path.clone();
                        self.model_close_writer(&path, reported)
                    }
                    // A reader's close commits nothing, and has nothing to refuse.
                    _ => Ok(()),
                };
                let got = self.mount.close(held.handle);
                let call = format!("close({}) of a {}", held.name, describe(&held.model));
                logged!(
                    format!("close({}) -> {}", held.name, outcome(&got)),
                    agree(&call, &got, &want)
                )
            }
            Op::Truncate { path: p, size } => {
                let path = path!(p);
                let want = self.model_truncate(&path, *size);
                if want == Err(libc::EINVAL) {
                    *reported = Some(path.clone());
                }
                let got = self.mount.truncate(&path, *size);
                let call = format!("truncate({path:?}, {size})");
                logged!(
                    format!("{call} -> {}", outcome(&got)),
                    agree(&call, &got, &want)
                )
            }
            Op::Create(path) => {
                let want = self.model_create(path);
                if want == Err(libc::EPERM) {
                    *reported = Some(path.clone());
                }
                let got = self.mount.create(path);
                let call = format!("creat({path:?})");
                let check = agree(&call, &got, &want);
                let fd = match got {
                    Ok(handle) => self.hold(handle, MHandle::Writer(path.clone())),
                    Err(e) => errno_name(e),
                };
                logged!(format!("{call} = {fd}"), check)
            }
            Op::Unlink(p) => {
                let path = path!(p);
                if self.member_busy(&path) || self.in_memory_busy(&path) {
                    return Ok(None);
                }
                let want = self.model_unlink(&path);
                let got = self.mount.unlink(&path);
                let call = format!("unlink({path:?})");
                logged!(
                    format!("{call} -> {}", outcome(&got)),
                    agree(&call, &got, &want)
                )
            }
            Op::RenameScratch { from, to } => {
                let (from, to) = (path!(from), path!(to));
                self.rename_scratch(&from, &to, reported)
            }
            Op::RenameBack(p) => {
                let from = path!(p);
                let to = from.strip_suffix('~').unwrap_or(&from).to_string();
                self.rename_scratch(&from, &to, reported)
            }
            Op::RenameAside(p) => {
                let path = path!(p);
                let to = format!("{path}~");
                if self.member_busy(&path) || self.in_memory_busy(&path) || self.in_memory_busy(&to)
                {
                    return Ok(None);
                }
                let want = self.model_rename_aside(&path, &to);
                let got = self.mount.rename(&path, &to);
                let call = format!("rename({path:?}, {to:?})");
                logged!(
                    format!("{call} -> {}", outcome(&got)),
                    agree(&call, &got, &want)
                )
            }
            Op::RenameMember { from, to } => {
                let pending = |p: &str| {
                    self.model
                        .files
                        .get(p)
                        .is_some_and(|f| f.kind == Kind::Pending)
                };
                if from == to
                    || pending(from)
                    || self.member_busy(from)
                    || self.member_busy(to)
                    || self.in_memory_busy(to)
                {
                    return Ok(None);
                }
                let want = self.model_rename_member(from, to);
                let got = self.mount.rename(from, to);
                let call = format!("rename({from:?}, {to:?})");
                logged!(
                    format!("{call} -> {}", outcome(&got)),
                    agree(&call, &got, &want)
                )
            }
            Op::Stat(p) => {
                let path = path!(p);
                let want = match self.model.files.get(&path) {
                    Some(_) => Ok(self.model.shown(&path).len() as u64),
                    None => Err(libc::ENOENT),
                };
                let got = self.mount.size(&path);
                let check = match got == want {
                    true => Ok(()),
                    false => Err(format!(
                        "stat({path:?}).st_size: the vfs answered {}, the model expects {}",
                        show(&got),
                        show(&want)
                    )),
                };
                logged!(format!("stat({path:?}) -> {}", show(&got)), check)
            }
            // Every held handle is also read after every operation.
            Op::ReadHeld(h) => {
                let Some(i) = self.held_index(h, false) else {
                    return Ok(None);
                };
                let held = &self.held[i];
                let want = self.held_reads(&held.model);
                let got = self.mount.read(held.handle);
                let check = match got.as_ref() == Ok(&want) {
                    true => Ok(()),
                    false => Err(format!(
                        "a {} reads {}, the model expects {}",
                        describe(&held.model),
                        got.as_ref().map_or_else(|e| errno_name(*e), |d| text(d)),
                        text(&want)
                    )),
                };
                logged!(
                    format!(
                        "read({}) -> {}",
                        held.name,
                        got.as_ref().map_or_else(|e| errno_name(*e), |d| text(d))
                    ),
                    check
                )
            }
        }
    }

    fn rename_scratch(
        &mut self,
        from: &str,
        to: &str,
        reported: &mut Option<String>,
    ) -> Result<Option<String>, String> {
        if from == to
            || self.in_memory_busy(from)
            || self.in_memory_busy(to)
            || self.member_busy(to)
            || self
                .model
                .files
                .get(from)
                .is_some_and(|f| f.kind != Kind::Scratch)
        {
            return Ok(None);
        }
        let want = self.model_rename_scratch(from, to, reported);
        let got = self.mount.rename(from, to);
        let call = format!("rename({from:?}, {to:?})");
        let line = format!("{call} -> {}", outcome(&got));
        match agree(&call, &got, &want) {
            Ok(()) => Ok(Some(line)),
            Err(e) => {
                self.log.push(line);
                Err(e)
            }
        }
    }

    fn model_open_writer(&mut self, path: &str, trunc: bool) -> Result<(), Errno> {
        if !self.model.files.contains_key(path) {
            return Err(libc::ENOENT);
        }
        let shown = self.model.shown(path);
        let f = self.model.files.get_mut(path).unwrap();
        f.writers += 1;
        match (&mut f.buf, trunc) {
            (Some(b), true) => {
                b.data.clear();
                b.dirty = true;
                b.refused = None;
            }
            (Some(_), false) => {}
            (buf @ None, _) => {
                *buf = Some(Buf {
                    data: if trunc { Vec::new() } else { shown },
                    dirty: trunc,
                    refused: None,
                })
            }
        }
        Ok(())
    }

    /// A writer's `close()`: save changed content (rule 5), then let go of what was not
    /// saved when it was the last writer (rule 6).
    fn model_close_writer(
        &mut self,
        path: &str,
        reported: &mut Option<String>,
    ) -> Result<(), Errno> {
        let f = &self.model.files[path];
        let b = f.buf.as_ref().unwrap();
        let result = if f.kind != Kind::Scratch && b.dirty && !b.data.is_empty() {
            let data = b.data.clone();
            let result = self.model.save(path, &data);
            if result.is_err() {
                *reported = Some(path.to_string());
            }
            let b = self
                .model
                .files
                .get_mut(path)
                .unwrap()
                .buf
                .as_mut()
                .unwrap();
            b.dirty = false;
            b.refused = result.err();
            result
        } else {
            b.refused.map_or(Ok(()), Err)
        };
        let f = self.model.files.get_mut(path).unwrap();
        f.writers -= 1;
        let copies_only = path == "index.json";
        if f.writers == 0 && (copies_only || !f.buf.as_ref().is_some_and(Buf::waiting)) {
            match f.kind {
                Kind::Scratch => {}
                Kind::Archive => f.buf = None,
                Kind::Pending => {
                    self.model.files.remove(path);
                }
            }
        }
        result
    }

    fn model_truncate(&mut self, path: &str, size: u64) -> Result<(), Errno> {
        let Some(f) = self.model.files.get(path) else {
            return Err(libc::ENOENT);
        };
        if path == "index.json" && f.writers == 0 {
            return Err(libc::EACCES);
        }
        let shown = self.model.shown(path);
        let (kind, writers) = (f.kind, f.writers);
        let f = self.model.files.get_mut(path).unwrap();
        let b = f.buf.get_or_insert(Buf {
            data: shown,
            dirty: false,
            refused: None,
        });
        b.data.resize(size as usize, 0);
        b.dirty = true;
        b.refused = None;
        if kind == Kind::Scratch || writers > 0 || size == 0 {
            return Ok(());
        }
        // A save, now (rule 10).
        let data = b.data.clone();
        let result = self.model.save(path, &data);
        if let Some(f) = self.model.files.get_mut(path) {
            f.buf = None;
        }
        result
    }

    fn model_create(&mut self, path: &str) -> Result<(), Errno> {
        let (dir, leaf) = split(path);
        if self.model.files.contains_key(path) {
            return Err(libc::EEXIST);
        }
        if self.model.hidden.remove(path) {
            // Back under its name: what is written now is its new content.
            self.model.sync();
            return self.model_open_writer(path, true);
        }
        let kind = if Model::accepts(dir, leaf) {
            Kind::Pending
        } else if is_scratch_name(leaf) {
            Kind::Scratch
        } else {
            return Err(libc::EPERM);
        };
        self.model.files.insert(
            path.to_string(),
            MFile {
                kind,
                buf: Some(Buf {
                    data: Vec::new(),
                    dirty: true,
                    refused: None,
                }),
                writers: 1,
            },
        );
        Ok(())
    }

    fn model_unlink(&mut self, path: &str) -> Result<(), Errno> {
        let Some(f) = self.model.files.get(path) else {
            return Err(libc::ENOENT);
        };
        match (f.kind, archive_file(path)) {
            (Kind::Scratch | Kind::Pending, _) => {
                self.model.files.remove(path);
                Ok(())
            }
            (Kind::Archive, None) => Err(libc::EPERM),
            (Kind::Archive, Some((true, name))) => {
                let index = self.model.index_of(name).unwrap();
                self.model.commit(path, MemberEdit::Remove { index })
            }
            (Kind::Archive, Some((false, _))) => {
                self.model.hidden.insert(path.to_string());
                self.model.sync();
                Ok(())
            }
        }
    }

    /// `mv X X~`: the content moves to a scratch file, X is hidden (rule 8).
    fn model_rename_aside(&mut self, path: &str, to: &str) -> Result<(), Errno> {
        let Some(f) = self.model.files.get(path) else {
            return Err(libc::ENOENT);
        };
        let buf = match f.kind {
            Kind::Archive => {
                let content = self.model.shown(path);
                self.model.hidden.insert(path.to_string());
                self.model.sync();
                Some(Buf {
                    data: content,
                    dirty: false,
                    refused: None,
                })
            }
            // A new file not yet in the archive: its (empty) content moves.
            _ => self.model.files.remove(path).unwrap().buf,
        };
        self.model.files.insert(
            to.to_string(),
            MFile {
                kind: Kind::Scratch,
                buf,
                writers: 0,
            },
        );
        Ok(())
    }

    /// `mv SCRATCH TO`: a save into TO when it is a file of the archive (shown or
    /// hidden) or a new member; a new name when it is an editor's; else EPERM.
    fn model_rename_scratch(
        &mut self,
        from: &str,
        to: &str,
        reported: &mut Option<String>,
    ) -> Result<(), Errno> {
        let Some(f) = self.model.files.get(from) else {
            return Err(libc::ENOENT);
        };
        let data = f.buf.as_ref().map(|b| b.data.clone()).unwrap_or_default();
        let target = self.model.files.get(to).map(|t| t.kind);
        let (dir, leaf) = split(to);
        let saves = target == Some(Kind::Archive)
            || self.model.hidden.contains(to)
            || Model::accepts(dir, leaf);
        if saves {
            let result = match to == "index.json" {
                // A copy of what it shows is taken, changing nothing; another is refused.
                true if !self.model.hidden.contains(to) && self.model.committed(to) == data => {
                    Ok(())
                }
                true => Err(libc::EPERM),
                false => self.model.save(to, &data),
            };
            match result {
                Ok(()) => {
                    self.model.files.remove(from);
                    self.model.hidden.remove(to);
                    // The file at TO is the one that was renamed there: no buffer.
                    self.model.files.remove(to);
                    self.model.sync();
                }
                Err(_) => *reported = Some(to.to_string()),
            }
            return result;
        }
        if is_scratch_name(leaf) {
            let mut f = self.model.files.remove(from).unwrap();
            f.kind = Kind::Scratch;
            self.model.files.insert(to.to_string(), f);
            return Ok(());
        }
        *reported = Some(to.to_string());
        Err(libc::EPERM)
    }

    fn model_rename_member(&mut self, from: &str, to: &str) -> Result<(), Errno> {
        if !self.model.files.contains_key(from) {
            return Err(libc::ENOENT);
        }
        let (Some((_, old)), Some((_, new))) = (archive_file(from), archive_file(to)) else {
            unreachable!()
        };
        let index = self.model.index_of(old).unwrap();
        let new = new.to_string();
        // The file at TO is the one renamed there.
        self.model.files.remove(to);
        self.model
            .commit(from, MemberEdit::Rename { index, name: new })
    }

    /// What an open handle reads (rules 2 and 4).
    fn held_reads(&self, handle: &MHandle) -> Vec<u8> {
        match handle {
            MHandle::Pinned(data) => data.clone(),
            MHandle::Live(path) => self.model.shown(path),
            MHandle::Writer(path) => self.model.files[path].buf.as_ref().unwrap().data.clone(),
        }
    }

    /// Everything the model predicts, looked at after every operation.
    /// Rule 1: the archive on disk.
    fn check_disk(&self) -> Result<(), String> {
        let on_disk = self.mount.on_disk();
        check!(
            on_disk == self.model.members,
            "the archive on disk holds {}, the model {}",
            describe_members(&on_disk),
            describe_members(&self.model.members)
        );
        Ok(())
    }

    fn check_all(&self) -> Result<(), String> {
        self.check_disk()?;
        // Rule 11: listings.
        for dir in ["items", "hex"] {
            let want: Vec<String> = self
                .model
                .files
                .keys()
                .filter(|p| split(p).0 == dir)
                .map(|p| split(p).1.to_string())
                .collect();
            let got = self.mount.list(dir);
            check!(
                got.as_ref() == Ok(&want),
                "ls {dir}: the vfs lists {}, the model {want:?}",
                show(&got)
            );
        }
        let root = self.mount.list("");
        check!(
            root.as_deref()
                == Ok(&[".shaderfs", "hex", "index.json", "items"].map(String::from)[..]),
            "ls /: {}",
            show(&root)
        );
        // Rules 3 and 11: what each file shows, to stat and to a new reader.
        for path in self.model.files.keys() {
            let want = self.model.shown(path);
            let size = self.mount.size(path);
            check!(
                size == Ok(want.len() as u64),
                "stat({path}).size: the vfs answered {}, the model expects {} ({})",
                show(&size),
                want.len(),
                text(&want)
            );
            let (dir, leaf) = split(path);
            let looked_up = self.mount.vfs.lookup(self.mount.ino(dir).unwrap(), leaf);
            check!(
                looked_up.as_ref().map(|a| a.size) == Ok(want.len() as u64),
                "lookup({path}).size: the vfs answered {}, the model expects {}",
                show(&looked_up.map(|a| a.size)),
                want.len()
            );
            let got = self.mount.cat(path);
            check!(
                got.as_ref() == Ok(&want),
                "cat {path}: the vfs reads {}, the model expects {}",
                got.as_ref().map_or_else(|e| errno_name(*e), |d| text(d)),
                text(&want)
            );
        }
        for path in &self.model.hidden {
            let got = self.mount.ino(path);
            check!(
                got == Err(libc::ENOENT),
                "{path} is hidden, yet it resolves: {}",
                show(&got)
            );
        }
        // Rules 2 and 4: what each open handle reads.
        for held in &self.held {
            let want = self.held_reads(&held.model);
            let got = self.mount.read(held.handle);
            check!(
                got.as_ref() == Ok(&want),
                "a {} reads {}, the model expects {}",
                describe(&held.model),
                got.as_ref().map_or_else(|e| errno_name(*e), |d| text(d)),
                text(&want)
            );
        }
        Ok(())
    }
}

fn describe(handle: &MHandle) -> String {
    match handle {
        MHandle::Pinned(_) => "reader".into(),
        MHandle::Live(path) => format!("reader of {path}"),
        MHandle::Writer(path) => format!("writer of {path}"),
    }
}

fn describe_members(members: &[Member]) -> String {
    let list: Vec<String> = members
        .iter()
        .map(|m| format!("{}={}", m.name, text(&m.data)))
        .collect();
    format!("[{}]", list.join(", "))
}

/// Run `ops` from an archive of `members`; the error tells the operations that led to the
/// disagreement.
fn run(members: Vec<Member>, ops: &[Op], lazy: bool) -> Result<(), String> {
    let mut run = Run::new(members.clone(), lazy);
    let start = describe_members(&members);
    if lazy {
        // The first half of the operations meet folders not yet filled (a commit or a
        // rename fills them all first); then everything is compared after each.
        run.unlooked = ops.len() / 2;
        run.check_disk()
    } else {
        run.check_all()
    }
    .map_err(|e| format!("at load of {start}: {e}"))?;
    for op in ops {
        if let Err(e) = run.step(op) {
            return Err(format!(
                "{e}\n  archive at start: {start}\n  operations:\n    {}",
                run.log.join("\n    ")
            ));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(Config {
        // A few seconds in a debug build.
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256),
        // Other engineers edit src/ concurrently: no regression files written beside it.
        failure_persistence: None,
        ..Config::default()
    })]

    #[test]
    fn the_vfs_agrees_with_its_model(
        members in members_strategy(),
        ops in prop::collection::vec(ops_strategy(), 1..32),
        lazy in any::<bool>(),
    ) {
        let ops: Vec<Op> = ops.into_iter().flatten().take(40).collect();
        run(members, &ops, lazy).map_err(TestCaseError::fail)?;
    }
}

// ---- headline examples ----------------------------------------------------------------

fn ab() -> Vec<Member> {
    vec![member("a", b"hello"), member("b", b"xyz")]
}

#[test]
fn a_reader_keeps_its_content_across_a_commit() {
    let m = Mount::new(&ab());
    let reader = m.open("items/a.dat", libc::O_RDONLY).unwrap();
    let hex_reader = m.open("hex/a.hex", libc::O_RDONLY).unwrap();
    let w = m
        .open("items/a.dat", libc::O_WRONLY | libc::O_TRUNC)
        .unwrap();
    m.write(w, 0, b"new content").unwrap();
    assert_eq!(
        m.read(reader).unwrap(),
        b"hello",
        "a writer's buffer is private"
    );
    assert_eq!(m.size("items/a.dat").unwrap(), 5);
    m.close(w).unwrap();
    assert_eq!(
        m.on_disk(),
        vec![member("a", b"new content"), member("b", b"xyz")]
    );
    assert_eq!(m.read(reader).unwrap(), b"hello");
    assert_eq!(m.read(hex_reader).unwrap(), hex_view(b"hello"));
    assert_eq!(m.cat("items/a.dat").unwrap(), b"new content");
    assert_eq!(m.cat("hex/a.hex").unwrap(), hex_view(b"new content"));
    assert_eq!(m.size("items/a.dat").unwrap(), 11);
    // `sed -i` saves by renaming over the file, `rm` removes it: readers keep theirs.
    let reader = m.open("items/b.dat", libc::O_RDONLY).unwrap();
    let w = m.create("items/sedAb12Cd").unwrap();
    m.write(w, 0, b"sed").unwrap();
    m.close(w).unwrap();
    m.rename("items/sedAb12Cd", "items/b.dat").unwrap();
    assert_eq!(m.read(reader).unwrap(), b"xyz");
    m.unlink("items/b.dat").unwrap();
    assert_eq!(m.read(reader).unwrap(), b"xyz");
    m.unlink("hex/a.hex").unwrap();
    assert_eq!(m.read(hex_reader).unwrap(), hex_view(b"hello"));
}

#[test]
fn a_readers_close_commits_nothing() {
    let m = Mount::new(&ab());
    let before = m.bytes_on_disk();
    let w = m
        .open("items/a.dat", libc::O_WRONLY | libc::O_TRUNC)
        .unwrap();
    m.write(w, 0, b"half").unwrap();
    let reader = m.open("items/a.dat", libc::O_RDONLY).unwrap();
    assert_eq!(m.close(reader), Ok(()));
    assert_eq!(
        m.bytes_on_disk(),
        before,
        "the writer's buffer is the writer's to save"
    );
    m.write(w, 0, b"!").unwrap();
    let reader = m.open("items/a.dat", libc::O_RDONLY).unwrap();
    assert_eq!(m.close(reader), Ok(()), "nor is its refusal the reader's");
    assert_eq!(m.close(w), Err(libc::EINVAL));
    assert_eq!(m.bytes_on_disk(), before);
}

#[test]
fn a_member_removed_then_created_again_keeps_its_place() {
    let m = Mount::new(&[member("a", b"1"), member("b", b"2"), member("c", b"3")]);
    // `mv` from another file system: unlink the target, then write it anew.
    m.unlink("items/b.dat").unwrap();
    let w = m.create("items/b.dat").unwrap();
    m.write(w, 0, b"new").unwrap();
    m.close(w).unwrap();
    assert_eq!(
        m.on_disk(),
        vec![member("a", b"1"), member("b", b"new"), member("c", b"3")]
    );
}

#[test]
fn a_file_renamed_aside_comes_back_when_written() {
    let m = Mount::new(&ab());
    let before = m.bytes_on_disk();
    // vim with backupcopy=no: the original becomes the backup, a new file is written.
    m.rename("items/a.dat", "items/a.dat~").unwrap();
    assert_eq!(m.bytes_on_disk(), before, "the archive still holds it");
    assert_eq!(m.list("items").unwrap(), ["a.dat~", "b.dat"]);
    assert_eq!(m.cat("items/a.dat~").unwrap(), b"hello");
    let w = m.create("items/a.dat").unwrap();
    m.write(w, 0, b"vim").unwrap();
    m.close(w).unwrap();
    assert_eq!(m.on_disk(), vec![member("a", b"vim"), member("b", b"xyz")]);
    // And a backup renamed back is a save of what it holds.
    m.rename("hex/b.hex", "hex/b.hex~").unwrap();
    m.rename("hex/b.hex~", "hex/b.hex").unwrap();
    assert_eq!(m.on_disk(), vec![member("a", b"vim"), member("b", b"xyz")]);
    assert_eq!(m.list("hex").unwrap(), ["a.hex", "b.hex"]);
}

/// Found by the model test: a member renamed onto a name that was renamed aside is in
/// the archive, but not shown.
#[test]
fn a_member_renamed_onto_a_name_renamed_aside_is_shown() {
    let m = Mount::new(&ab());
    m.rename("items/a.dat", "items/a.dat~").unwrap();
    m.rename("items/b.dat", "items/a.dat").unwrap();
    assert_eq!(m.on_disk(), vec![member("a", b"xyz")]);
    assert_eq!(
        m.list("items").unwrap(),
        ["a.dat", "a.dat~"],
        "member a is in the archive"
    );
    assert_eq!(m.cat("items/a.dat"), Ok(b"xyz".to_vec()));
}

/// Found by the model test: a view hidden (removed, or renamed aside) stays hidden for a
/// later member of the same name, which is another member.
#[test]
fn a_new_member_of_a_removed_name_shows_its_view() {
    let m = Mount::new(&ab());
    m.unlink("hex/a.hex").unwrap();
    m.unlink("items/a.dat").unwrap();
    let w = m.create("items/a.dat").unwrap();
    m.write(w, 0, b"new").unwrap();
    m.close(w).unwrap();
    assert_eq!(m.on_disk(), vec![member("a", b"new"), member("b", b"xyz")]);
    assert_eq!(m.list("hex").unwrap(), ["a.hex", "b.hex"]);
}

#[test]
fn a_member_renamed_onto_a_name_whose_view_was_renamed_aside_shows_its_view() {
    let m = Mount::new(&ab());
    m.rename("hex/a.hex", "hex/a.hex~").unwrap();
    m.rename("items/b.dat", "items/a.dat").unwrap();
    assert_eq!(m.on_disk(), vec![member("a", b"xyz")]);
    assert_eq!(m.list("hex").unwrap(), ["a.hex", "a.hex~"]);
}

/// Found by the model test: with no member of its name, a view's name is no name a file
/// can take (EPERM, like any other); `creat` answered ENOENT, and forgot that the view was
/// hidden.
#[test]
fn the_view_of_a_removed_member_cannot_be_created() {
    let m = Mount::new(&ab());
    m.unlink("hex/a.hex").unwrap();
    m.unlink("items/a.dat").unwrap();
    assert_eq!(m.create("hex/a.hex").map(|_| ()), Err(libc::EPERM));
    let last = m.error_lines().pop().unwrap_or_default();
    assert!(last.contains(" hex/a.hex: not created"), "{last:?}");
}

#[test]
fn truncate_to_zero_then_stat_agrees_with_read() {
    let m = Mount::new(&ab());
    let before = m.bytes_on_disk();
    for path in ["items/a.dat", "hex/b.hex"] {
        m.truncate(path, 0).unwrap();
        assert_eq!(m.size(path).unwrap(), 0, "{path}");
        assert_eq!(m.cat(path).unwrap(), b"", "{path}");
    }
    assert_eq!(m.bytes_on_disk(), before, "an empty file is no save");
    // `echo … >> X`: the content arrives and is saved.
    let w = m.open("items/a.dat", libc::O_WRONLY).unwrap();
    m.write(w, 0, b"again").unwrap();
    // While a writer has it open, its buffer is its own, and others see the archive.
    assert_eq!(m.size("items/a.dat").unwrap(), 5);
    assert_eq!(m.cat("items/a.dat").unwrap(), b"hello");
    m.close(w).unwrap();
    assert_eq!(m.on_disk()[0], member("a", b"again"));
    assert_eq!(m.size("items/a.dat").unwrap(), 5);
    assert_eq!(m.cat("items/a.dat").unwrap(), b"again");
    assert_eq!(
        m.size("hex/b.hex").unwrap(),
        0,
        "still waiting for its content"
    );
}

#[test]
fn a_refused_save_leaves_the_archive_byte_identical() {
    let m = Mount::new(&ab());
    let before = m.bytes_on_disk();
    let w = m
        .open("items/b.dat", libc::O_WRONLY | libc::O_TRUNC)
        .unwrap();
    m.write(w, 0, b"no!").unwrap();
    assert_eq!(m.close(w), Err(libc::EINVAL));
    assert_eq!(m.bytes_on_disk(), before);
    let last = m.error_lines().pop().unwrap();
    assert!(last.contains(" items/b.dat: refused: byte 2"), "{last}");
    assert_eq!(
        m.cat("items/b.dat").unwrap(),
        b"xyz",
        "the committed content shows"
    );
    // A view's save that does not decode, and a truncate that is a save.
    let w = m.open("hex/a.hex", libc::O_RDWR).unwrap();
    m.write(w, 0, b"zz").unwrap();
    assert_eq!(m.close(w), Err(libc::EINVAL));
    assert_eq!(m.truncate("hex/a.hex", 3), Err(libc::EINVAL));
    assert_eq!(m.bytes_on_disk(), before);
    assert_eq!(m.cat("hex/a.hex").unwrap(), hex_view(b"hello"));
    assert_eq!(
        m.size("hex/a.hex").unwrap(),
        hex_view(b"hello").len() as u64
    );
}

#[test]
fn editors_names_are_scratch_files_and_other_names_are_refused() {
    let m = Mount::new(&ab());
    let before = m.bytes_on_disk();
    for path in [
        "items/.a.dat.swp",
        "items/a.dat~",
        "items/sedAb12Cd",
        "items/4913",
        "hex/a.hex~",
    ] {
        let w = m
            .create(path)
            .unwrap_or_else(|e| panic!("{path}: {}", errno_name(e)));
        m.write(w, 0, b"scratch!").unwrap();
        assert_eq!(
            m.close(w),
            Ok(()),
            "{path}: scratch content is never validated"
        );
        assert_eq!(m.cat(path).unwrap(), b"scratch!", "{path}");
    }
    for path in [
        "items/A.dat",
        "items/notes.txt",
        "hex/c.hex",
        "index.json.new2",
    ] {
        assert_eq!(m.create(path).map(|_| ()), Err(libc::EPERM), "{path}");
        let last = m.error_lines().pop().unwrap();
        assert!(last.contains(&format!(" {path}: not created")), "{last}");
    }
    assert_eq!(
        m.bytes_on_disk(),
        before,
        "scratch files never enter the archive"
    );
    // sed -i: a scratch file renamed over a file saves it.
    let w = m.create("items/sedXy34Zw").unwrap();
    m.write(w, 0, b"edited").unwrap();
    m.close(w).unwrap();
    m.rename("items/sedXy34Zw", "items/b.dat").unwrap();
    assert_eq!(
        m.on_disk(),
        vec![member("a", b"hello"), member("b", b"edited")]
    );
    // A new member name joins the archive at the end.
    let w = m.create("items/new.dat").unwrap();
    m.write(w, 0, b"fresh").unwrap();
    m.close(w).unwrap();
    assert_eq!(m.on_disk()[2], member("new", b"fresh"));
}

/// An archive that describes its tree folder by folder is filled one folder at a time,
/// when a folder is first looked into, and shows what an eager load shows.
#[test]
fn a_folder_is_filled_when_first_looked_into() {
    let m = Mount::of(&ab(), &LAZY_TEST_FORMAT);
    let nodes = |m: &Mount| m.vfs.state.read().tree.nodes().count();
    // The root, `.shaderfs/` and its `errors`: the archive's root is not described yet.
    assert_eq!(nodes(&m), 3);
    assert_eq!(m.cat("items/b.dat").unwrap(), b"xyz");
    // Now its root (index.json, items/, hex/) and items/ (a.dat, b.dat): not hex/.
    assert_eq!(nodes(&m), 3 + 3 + 2);
    let eager = Mount::new(&ab());
    for dir in ["", "items", "hex"] {
        assert_eq!(m.list(dir), eager.list(dir), "ls {dir}");
    }
    assert_eq!(nodes(&m), nodes(&eager));
    assert_eq!(m.cat("hex/a.hex").unwrap(), hex_view(b"hello"));
}

/// A commit fills every folder from the archive as it was before reconciling: a file of
/// a folder nobody had looked into takes the commit's time if the commit changed its
/// bytes, and keeps the archive's time if not.
#[test]
fn a_commit_dates_files_of_folders_nobody_looked_into() {
    let m = Mount::of(&ab(), &LAZY_TEST_FORMAT);
    let mtime = |path: &str| m.vfs.getattr(m.ino(path).unwrap()).unwrap().mtime;
    let loaded = std::fs::metadata(&m.path).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let w = m
        .open("items/a.dat", libc::O_WRONLY | libc::O_TRUNC)
        .unwrap();
    m.write(w, 0, b"changed").unwrap();
    m.close(w).unwrap();
    assert_eq!(m.cat("hex/a.hex").unwrap(), hex_view(b"changed"));
    assert_eq!(mtime("hex/b.hex"), loaded, "hex/b.hex did not change");
    assert!(mtime("hex/a.hex") > loaded, "hex/a.hex changed with a.dat");
    assert_eq!(mtime("hex/a.hex"), mtime("items/a.dat"));
}

#[test]
fn the_test_format_reads_what_it_writes() {
    let members = ab();
    let bytes = serialise(&members);
    let archive = TEST_FORMAT
        .open(
            Path::new("x"),
            ArchiveBytes::owned(bytes.clone()),
            OpenContext::default(),
        )
        .unwrap();
    let edit = Edit::Write {
        key: Key::Item(1).encode(),
        data: b"QQ",
    };
    let rewrite = archive.apply(&edit).unwrap();
    let new: Vec<Member> = parse(&rewrite.to_vec(&bytes))
        .unwrap()
        .into_iter()
        .map(|(m, _)| m)
        .collect();
    assert_eq!(new, vec![member("a", b"hello"), member("b", b"QQ")]);
    assert_eq!(
        rewrite.pieces().len(),
        2,
        "the header and a kept; b new: {:?}",
        rewrite.pieces()
    );
    assert_eq!(from_hex(b"6162\n").unwrap(), b"ab");
    assert!(from_hex(b"616").is_err());
    assert!(parse(b"nope").is_err());
}

/// A save that changes nothing is no commit: a removed member still comes back in its
/// place, and a copy of `index.json` renamed over it is taken, where another is refused.
#[test]
fn a_save_that_changes_nothing_is_no_commit() {
    let m = Mount::new(&[member("c", b"ab"), member("a", b"hello")]);
    m.unlink("items/c.dat").unwrap();
    let hex = m.cat("hex/a.hex").unwrap();
    let w = m.open("hex/a.hex", libc::O_WRONLY | libc::O_TRUNC).unwrap();
    m.write(w, 0, &hex).unwrap();
    m.close(w).unwrap();
    let w = m.create("items/c.dat").unwrap();
    m.write(w, 0, b"ab").unwrap();
    m.close(w).unwrap();
    assert_eq!(m.on_disk(), vec![member("c", b"ab"), member("a", b"hello")]);

    let index = m.cat("index.json").unwrap();
    let w = m.create("items/sedAb12Cd").unwrap();
    m.write(w, 0, &index).unwrap();
    m.close(w).unwrap();
    m.rename("items/sedAb12Cd", "index.json").unwrap();
    assert_eq!(m.cat("index.json").unwrap(), index);
    let w = m.create("items/sedAb12Cd").unwrap();
    m.write(w, 0, b"{}").unwrap();
    m.close(w).unwrap();
    assert_eq!(m.rename("items/sedAb12Cd", "index.json"), Err(libc::EPERM));
}

/// A commit's files whose inode the kernel did not hold when told (a lookup answered
/// before the commit may still be making one, with the old size) are told again once
/// their names are dropped, and until then their opens go around the page cache.
#[test]
fn a_file_the_kernel_held_no_inode_of_is_told_again_after_its_name() {
    use super::fs::{Done, Invalidation};
    use parking_lot::Mutex;
    let m = Mount::new(&ab());
    let vfs = Vfs::load(
        vec![ArchiveFile {
            path: m.path.clone(),
            dir_name: String::new(),
            format: &TEST_FORMAT,
        }],
        VfsOptions {
            writable: true,
            page_cache: true,
            ..VfsOptions::read_only()
        },
    )
    .unwrap();
    let hex = vfs.resolve("hex/a.hex").unwrap();
    let hex_dir = vfs.resolve("hex").unwrap();
    // A kernel that held every inode but the hex view's, and answers the batch that
    // follows up later, when the test says.
    type Told = Vec<(Vec<Invalidation>, bool)>;
    let told: Arc<Mutex<Told>> = Arc::default();
    let later: Arc<Mutex<Vec<Done>>> = Arc::default();
    let (t, l) = (told.clone(), later.clone());
    vfs.set_notify(Box::new(move |batch, done| {
        let follow_up = batch
            .iter()
            .any(|i| matches!(i, Invalidation::Entry { .. }));
        t.lock().push((batch.clone(), done.is_some()));
        match (done, follow_up) {
            (Some(done), false) if batch.contains(&Invalidation::Inode(hex)) => done(vec![hex]),
            (Some(done), false) => done(Vec::new()),
            (Some(done), true) => l.lock().push(done),
            (None, _) => {}
        }
    }));
    let through_cache = |ino: Ino| {
        let opened = vfs.open(ino, libc::O_RDONLY).unwrap();
        vfs.release(ino, opened.fh);
        assert_eq!(opened.keep_cache, !opened.direct_io);
        opened.keep_cache
    };
    assert!(through_cache(hex));

    let ino = vfs.resolve("items/a.dat").unwrap();
    let w = vfs.open(ino, libc::O_WRONLY | libc::O_TRUNC).unwrap().fh;
    vfs.write_at(ino, w, 0, b"a longer content").unwrap();
    vfs.flush(ino, w).unwrap();
    vfs.release(ino, w);

    let follow_up: Vec<Invalidation> = told
        .lock()
        .iter()
        .filter(|(_, done)| *done)
        .map(|(batch, _)| batch.clone())
        .find(|batch| {
            batch
                .iter()
                .any(|i| matches!(i, Invalidation::Entry { .. }))
        })
        .expect("a batch following up the absent file");
    let name = Invalidation::Entry {
        parent: hex_dir,
        name: "a.hex".into(),
    };
    let at = |inval: &Invalidation| follow_up.iter().position(|i| i == inval);
    assert!(
        at(&name).unwrap() < at(&Invalidation::Inode(hex)).unwrap(),
        "the name goes before the file is told again: {follow_up:?}"
    );
    assert!(
        !follow_up.contains(&Invalidation::Inode(ino)),
        "only the absent file is told again: {follow_up:?}"
    );
    // The written file, which the kernel held, is read through the cache at once; the
    // hex view only once the kernel has been told again.
    assert!(through_cache(ino));
    assert!(!through_cache(hex));
    for done in later.lock().drain(..) {
        done(Vec::new());
    }
    assert!(through_cache(hex));
    assert_eq!(
        vfs.read(hex, vfs.open(hex, libc::O_RDONLY).unwrap().fh, 0, 1 << 20)
            .unwrap(),
        hex_view(b"a longer content")
    );
}
