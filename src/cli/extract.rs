//! `shaderfs extract`: the tree a mount would show, written to a folder.
//!
//! Each file and folder gets the mode and times a read-write mount of the source shows for
//! it (the attributes [`Vfs::getattr`] gives the mount: read-only views 0444, files a save
//! goes into 0644, each with its own time), and `archive.json` says what that mount's
//! says, so `rsync -a`, `diff -r` and `make` see an extracted copy as the mount's files.

use std::collections::HashSet;
use std::ffi::CString;
use std::fs::{File, FileTimes, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use shaderfs::mount::{Failure, EXIT_MALFORMED};
use shaderfs::vfs::problem::{Problem, Reported};
use shaderfs::vfs::{Attr, FileType, Vfs};

use super::output::{self, Tally, Verbosity};
use super::tree::{self, Node};

/// Write the tree below `path` into `to`. A file that cannot be read or written is
/// reported and the rest still extracted; then the exit status is 2. A file shaderfs
/// cannot render yet ([`Vfs::unshown`]: a shader it does not decompile) is no fault of
/// the archive: it is left out and said, and changes no exit status. Nothing is written
/// through a symlink that was in `to` before (a hostile archive's names cannot make it
/// write outside `to`, and neither can a link someone left there). `to` itself gets the
/// mode and time of the folder of an archive it stands for when this run made it; a
/// folder that was there before keeps its own, and so does the copy of a folder of
/// archives (`folder_source`), whose root in a mount shows the time that mount started.
pub fn extract(
    vfs: &Vfs,
    path: &str,
    to: &Path,
    folder_source: bool,
    verbosity: Verbosity,
) -> Result<(), Failure> {
    let ino = tree::resolve(vfs, path)?;
    let made_to = std::fs::symlink_metadata(to).is_err();
    std::fs::create_dir_all(to).map_err(|e| Failure::usage(format!("{}: {e}", to.display())))?;
    let top = vfs
        .getattr(ino)
        .map_err(|e| Failure::usage(format!("{path}: {}", std::io::Error::from_raw_os_error(e))))?;
    let kind = top.kind;
    let nodes = match kind {
        FileType::Dir => tree::walk(vfs, ino, "")
            .into_iter()
            // The mount's own diagnostics are not part of any archive.
            .filter(|n| !(path.is_empty() && n.path.starts_with(".shaderfs")))
            .collect(),
        kind => vec![Node {
            ino,
            path: path.rsplit('/').next().unwrap_or(path).to_owned(),
            kind,
        }],
    };
    let mut out = Extraction {
        to: to.to_path_buf(),
        made: HashSet::new(),
        folders: Vec::new(),
        failed: Vec::new(),
        unshown: Reported::new(
            &vfs.unshown()
                .into_iter()
                .map(|(_, p)| p)
                .collect::<Vec<Problem>>(),
        ),
        left_out: 0,
        tally: Tally::start(),
    };
    // A folder left read-only by an earlier extract is written into as its owner may.
    let kept_mode = match made_to {
        true => None,
        false => out.writable_while_extracting(to),
    };
    let files = nodes.iter().filter(|n| n.kind == FileType::File).count();
    let bar = output::progress(files as u64, "extracting", verbosity);
    bar.set_message(to.display().to_string());
    for node in &nodes {
        if node.kind == FileType::File {
            bar.inc(1);
        }
        // The path in the tree, for messages.
        let full = match kind {
            FileType::Dir if !path.is_empty() => format!("{path}/{}", node.path),
            FileType::Dir => node.path.clone(),
            _ => path.to_owned(),
        };
        let failures = out.failed.len();
        let left_out = out.left_out;
        match node.kind {
            FileType::Dir => out.dir(vfs, node.ino, &full, &node.path),
            FileType::File => out.file(vfs, node.ino, &full, &node.path),
            FileType::Symlink => out.link(vfs, node.ino, &full, &node.path),
        }
        if out.failed.len() > failures {
            let message = out.failed.last().cloned().unwrap_or_default();
            bar.suspend(|| eprintln!("shaderfs extract: {message}"));
        } else if out.left_out > left_out {
            if verbosity != Verbosity::Quiet {
                bar.suspend(|| {
                    eprintln!("shaderfs extract: {full}: left out: shaderfs cannot show it yet")
                });
            }
        } else if verbosity == Verbosity::Verbose {
            bar.suspend(|| eprintln!("{}", node.path));
        }
    }
    // Folders last, deepest first: what was written into a folder changed its time.
    let mut folders = std::mem::take(&mut out.folders);
    let an_archives = !(folder_source && path.is_empty());
    if kind == FileType::Dir && made_to && an_archives {
        folders.insert(0, (to.to_path_buf(), Shown::of(&top)));
    }
    for (target, shown) in folders.iter().rev() {
        let done = File::options()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(target)
            .and_then(|f| shown.apply(&f));
        if let Err(e) = done {
            let message = format!(
                "{}: cannot give it the mount's mode and time: {e}",
                target.display()
            );
            eprintln!("shaderfs extract: {message}");
            out.failed.push(message);
        }
    }
    if let Some(mode) = kept_mode {
        out.restore_mode(to, mode);
    }
    bar.finish_and_clear();
    out.tally.problems = out.failed.len();
    if verbosity != Verbosity::Quiet {
        let left_out = match out.left_out {
            0 => String::new(),
            n => format!(
                "; {} shaderfs cannot show yet left out",
                output::count(n as u64, "file")
            ),
        };
        eprintln!("{}: {}{left_out}", to.display(), out.tally.summary());
    }
    match out.failed.len() {
        0 => Ok(()),
        n => Err(Failure {
            code: EXIT_MALFORMED,
            message: format!("{} could not be extracted", output::count(n as u64, "file")),
        }),
    }
}

/// What the mount shows of a node beyond its content: its mode and its times.
#[derive(Debug, Clone, Copy)]
struct Shown {
    mode: u32,
    accessed: SystemTime,
    modified: SystemTime,
}

impl Shown {
    fn of(attr: &Attr) -> Shown {
        Shown {
            mode: u32::from(attr.perm) & 0o7777,
            accessed: attr.atime,
            modified: attr.mtime,
        }
    }

    /// Give the open file or folder `file` this mode and these times (the times last:
    /// nothing done to it after changes them).
    fn apply(&self, file: &File) -> std::io::Result<()> {
        file.set_permissions(Permissions::from_mode(self.mode))?;
        file.set_times(
            FileTimes::new()
                .set_accessed(self.accessed)
                .set_modified(self.modified),
        )
    }
}

/// Where `extract` writes, what it made there, and what failed.
struct Extraction {
    to: PathBuf,
    /// The symlinks this run made (the archive's own links).
    made: HashSet<PathBuf>,
    /// The folders written, in tree order, with what the mount shows of each.
    folders: Vec<(PathBuf, Shown)>,
    failed: Vec<String>,
    /// The reasons of the files shaderfs cannot render yet, and how many were left out.
    unshown: Reported,
    left_out: usize,
    tally: Tally,
}

/// The mount's attributes of `ino` (at `full` in the tree), for a file just written.
fn shown(vfs: &Vfs, ino: u64, full: &str) -> Result<Shown, String> {
    vfs.getattr(ino)
        .map(|a| Shown::of(&a))
        .map_err(|e| format!("{full}: {}", std::io::Error::from_raw_os_error(e)))
}

/// `chmod` of `path` itself, never of what a symlink there points at.
fn chmod_here(path: &Path, mode: u32) -> std::io::Result<()> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: a plain system call with a valid C string.
    let done = unsafe {
        libc::fchmodat(
            libc::AT_FDCWD,
            c.as_ptr(),
            mode as libc::mode_t,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    match done {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// The times of the symlink at `path` itself.
fn set_link_times(path: &Path, shown: &Shown) -> std::io::Result<()> {
    let spec = |t: SystemTime| {
        let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
        libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        }
    };
    let times = [spec(shown.accessed), spec(shown.modified)];
    let c = CString::new(path.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: a valid C string and an array of two timespecs, as utimensat takes.
    let done = unsafe {
        libc::utimensat(
            libc::AT_FDCWD,
            c.as_ptr(),
            times.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    match done {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

impl Extraction {
    /// `rel` below `to`, unless a symlink this run did not make stands on the way there
    /// (`leaf`: the last component too).
    fn target(&mut self, rel: &str, leaf: bool) -> Option<PathBuf> {
        let mut at = self.to.clone();
        let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
        for (i, part) in parts.iter().enumerate() {
            at.push(part);
            let last = i + 1 == parts.len();
            let link = std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink());
            if link && (!last || leaf) && !self.made.contains(&at) {
                self.failed.push(format!(
                    "{}: a symlink that was there before; extract writes nothing through it",
                    at.display()
                ));
                return None;
            }
        }
        Some(at)
    }

    /// A folder already there that its owner may not write into or enter (an earlier
    /// extract of a read-only archive gave it 0555) is given that right while extract
    /// writes into it; returns the mode it had, to put back.
    fn writable_while_extracting(&mut self, dir: &Path) -> Option<u32> {
        let meta = std::fs::symlink_metadata(dir).ok().filter(|m| m.is_dir())?;
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o300 == 0o300 {
            return None;
        }
        match chmod_here(dir, mode | 0o300) {
            Ok(()) => Some(mode),
            Err(e) => {
                self.failed.push(format!("{}: {e}", dir.display()));
                None
            }
        }
    }

    fn restore_mode(&mut self, dir: &Path, mode: u32) {
        if let Err(e) = chmod_here(dir, mode) {
            self.failed.push(format!("{}: {e}", dir.display()));
        }
    }

    fn dir(&mut self, vfs: &Vfs, ino: u64, full: &str, rel: &str) {
        let Some(target) = self.target(rel, true) else {
            return;
        };
        let shown = match shown(vfs, ino, full) {
            Ok(shown) => shown,
            Err(e) => return self.failed.push(e),
        };
        if let Err(e) = std::fs::create_dir_all(&target) {
            return self.failed.push(format!("{}: {e}", target.display()));
        }
        // Its mode comes once everything in it is written.
        self.writable_while_extracting(&target);
        self.folders.push((target, shown));
    }

    fn file(&mut self, vfs: &Vfs, ino: u64, full: &str, rel: &str) {
        let bytes = match tree::read_view(vfs, ino, vfs.errors().recorded()) {
            Ok(bytes) => bytes,
            Err(e) if e.errno == libc::EIO && self.unshown.explains(&e.message()) => {
                self.left_out += 1;
                return;
            }
            Err(e) => return self.failed.push(format!("{full}: {}", e.message())),
        };
        // After the read: a stat renders a view too, and what a failed render says is
        // told by the read.
        let shown = match shown(vfs, ino, full) {
            Ok(shown) => shown,
            Err(e) => return self.failed.push(e),
        };
        let Some(target) = self.target(rel, true) else {
            return;
        };
        // O_NOFOLLOW: a link put there after the check is not followed either.
        let open = || {
            OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&target)
        };
        let opened = match open() {
            // A copy an earlier extract left read-only, as its view is: replaced all the same.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                chmod_here(&target, 0o600).and_then(|()| open())
            }
            opened => opened,
        };
        let written = opened.and_then(|mut f| {
            f.write_all(&bytes)?;
            shown.apply(&f)
        });
        match written {
            Ok(()) => {
                self.tally.files += 1;
                self.tally.bytes += bytes.len() as u64;
            }
            Err(e) => self.failed.push(format!("{}: {e}", target.display())),
        }
    }

    fn link(&mut self, vfs: &Vfs, ino: u64, full: &str, rel: &str) {
        let Some(target) = self.target(rel, true) else {
            return;
        };
        let shown = match shown(vfs, ino, full) {
            Ok(shown) => shown,
            Err(e) => return self.failed.push(e),
        };
        let link = vfs.readlink(ino).unwrap_or_default();
        let made = std::fs::remove_file(&target)
            .or_else(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Ok(()),
                _ => Err(e),
            })
            .and_then(|()| std::os::unix::fs::symlink(&link, &target));
        if let Err(e) = made {
            return self.failed.push(format!("{}: {e}", target.display()));
        }
        self.made.insert(target.clone());
        if let Err(e) = set_link_times(&target, &shown) {
            self.failed.push(format!("{}: {e}", target.display()));
        }
    }
}
