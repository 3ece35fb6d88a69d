//! The tree a mount would show, read without FUSE: `ls` and `cat`, and the walking and
//! reading the other offline commands share.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use shaderfs::mount::{Failure, MountOptions, EXIT_MALFORMED, EXIT_USAGE};
use shaderfs::tuning::Tuning;
use shaderfs::vfs::{ArchiveFile, FileType, OpenError, Vfs, VfsOptions};

use super::output::stdout_failure;

/// The tree of `source` (an archive or a folder of archives), read-only.
pub fn open(source: &Path) -> Result<Vfs, Failure> {
    Ok(shaderfs::archive::open(source, VfsOptions::read_only())?)
}

/// The tree of `source` as a read-write mount with its default options shows it (`mount
/// SOURCE MNT`, the options of [`MountOptions::vfs_options`]): each file writable where a
/// save would land, with that mount's modes and times, and `archive.json` saying what
/// that mount says. Nothing is written through it, and no lock is taken: only a mount
/// that can save holds the one-writer lock.
pub fn open_as_mounted(source: &Path) -> Result<Vfs, Failure> {
    let opts = VfsOptions {
        // Readers of an offline command keep what they opened (there is no page cache).
        page_cache: false,
        ..MountOptions::default().vfs_options(&Tuning::default())
    };
    Ok(shaderfs::archive::open(source, opts)?)
}

/// The tree of one archive, read-only.
pub fn open_one(archive: &ArchiveFile) -> Result<Vfs, OpenError> {
    let file = ArchiveFile {
        dir_name: String::new(),
        ..archive.clone()
    };
    Vfs::load(vec![file], VfsOptions::read_only())
}

pub fn resolve(vfs: &Vfs, path: &str) -> Result<u64, Failure> {
    vfs.resolve(path)
        .map_err(|_| Failure::usage(format!("{path}: no such file in the tree")))
}

/// A node of the tree: its inode, its path from where the walk started, its type.
pub struct Node {
    pub ino: u64,
    pub path: String,
    pub kind: FileType,
}

/// Every node below `ino`, depth first in name order, with paths below `prefix`.
pub fn walk(vfs: &Vfs, ino: u64, prefix: &str) -> Vec<Node> {
    let mut out = Vec::new();
    walk_into(vfs, ino, prefix, &mut out);
    out
}

fn walk_into(vfs: &Vfs, ino: u64, prefix: &str, out: &mut Vec<Node>) {
    for (child, name, kind) in sorted_entries(vfs, ino).unwrap_or_default() {
        let path = join(prefix, &name);
        out.push(Node {
            ino: child,
            path: path.clone(),
            kind,
        });
        if kind == FileType::Dir {
            walk_into(vfs, child, &path, out);
        }
    }
}

fn join(prefix: &str, name: &str) -> String {
    match prefix.is_empty() {
        true => name.to_owned(),
        false => format!("{prefix}/{name}"),
    }
}

/// A directory's entries sorted by name, as `ls` shows them.
fn sorted_entries(
    vfs: &Vfs,
    ino: u64,
) -> Result<Vec<(u64, shaderfs::vfs::tree::Name, FileType)>, i32> {
    let mut entries = vfs.readdir(ino, 2, usize::MAX)?;
    entries.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(entries)
}

/// Why a file of the tree could not be read: the errno the mount would answer, and what
/// `.shaderfs/errors` says about it.
pub struct Unreadable {
    pub errno: i32,
    pub why: Vec<String>,
}

impl Unreadable {
    pub fn message(&self) -> String {
        match self.why.is_empty() {
            true => std::io::Error::from_raw_os_error(self.errno).to_string(),
            false => self.why.join("; "),
        }
    }
}

impl Unreadable {
    /// `errno`, and what was recorded about it after the log's mark `mark`.
    pub fn since(vfs: &Vfs, mark: u64, errno: i32) -> Unreadable {
        let why = vfs.errors().since(mark).into_iter().map(|d| d.message);
        Unreadable {
            errno,
            why: why.collect(),
        }
    }
}

/// The whole content of the file `ino`; why it could not be read is what the log
/// recorded after `mark` (taken before anything that may render the view: a `getattr`
/// renders it too, and a view that failed once fails again without a word).
pub fn read_view(vfs: &Vfs, ino: u64, mark: u64) -> Result<Vec<u8>, Unreadable> {
    let fail = |errno: i32| Unreadable::since(vfs, mark, errno);
    let opened = vfs.open(ino, libc::O_RDONLY).map_err(fail)?;
    let result = vfs.read(ino, opened.fh, 0, u32::MAX).map_err(fail);
    vfs.release(ino, opened.fh);
    result
}

/// The whole content of the file `ino` (at `path`); a view that cannot be rendered fails
/// with exit status 2 and what `.shaderfs/errors` says about it.
pub fn read_all(vfs: &Vfs, ino: u64, path: &str) -> Result<Vec<u8>, Failure> {
    read_view(vfs, ino, vfs.errors().recorded()).map_err(|e| Failure {
        code: match e.errno {
            libc::EIO => EXIT_MALFORMED,
            _ => EXIT_USAGE,
        },
        message: format!("{path}: {}", e.message()),
    })
}

/// How `ls` lists.
#[derive(Debug, Clone, Copy)]
pub struct Listing {
    pub long: bool,
    pub recursive: bool,
    pub json: bool,
}

/// One line of `ls --json`.
#[derive(Serialize)]
struct Listed<'a> {
    path: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<String>,
}

/// `shaderfs ls`: the entries of the directory `path` (or the file itself).
pub fn ls(vfs: &Vfs, path: &str, how: Listing) -> Result<(), Failure> {
    let ino = resolve(vfs, path)?;
    let kind = vfs
        .getattr(ino)
        .map_err(|e| Failure::usage(format!("{path}: {}", std::io::Error::from_raw_os_error(e))))?
        .kind;
    let nodes = match kind {
        FileType::Dir if how.recursive => walk(vfs, ino, ""),
        FileType::Dir => sorted_entries(vfs, ino)
            .unwrap_or_default()
            .into_iter()
            .map(|(ino, name, kind)| Node {
                ino,
                path: name.to_string(),
                kind,
            })
            .collect(),
        kind => vec![Node {
            ino,
            path: path.rsplit('/').next().unwrap_or(path).to_owned(),
            kind,
        }],
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for node in &nodes {
        let line = describe(vfs, node, how);
        out.write_all(line.as_bytes()).map_err(stdout_failure)?;
    }
    out.flush().map_err(stdout_failure)
}

fn describe(vfs: &Vfs, node: &Node, how: Listing) -> String {
    if !how.long && !how.json {
        return format!("{}\n", node.path);
    }
    let size = vfs.getattr(node.ino).map(|a| a.size).unwrap_or(0);
    let target = match node.kind {
        FileType::Symlink => Some(vfs.readlink(node.ino).unwrap_or_default()),
        _ => None,
    };
    if how.json {
        let listed = Listed {
            path: &node.path,
            kind: match node.kind {
                FileType::Dir => "dir",
                FileType::File => "file",
                FileType::Symlink => "symlink",
            },
            size,
            target,
        };
        let mut line = serde_json::to_string(&listed).expect("listings serialise");
        line.push('\n');
        return line;
    }
    let tag = match node.kind {
        FileType::Dir => 'd',
        FileType::File => '-',
        FileType::Symlink => 'l',
    };
    let arrow = target.map(|t| format!(" -> {t}")).unwrap_or_default();
    format!("{tag} {size:>10} {}{arrow}\n", node.path)
}
