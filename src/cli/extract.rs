//! `shaderfs extract`: the tree a mount would show, written to a folder.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use shaderfs::mount::{Failure, EXIT_MALFORMED};
use shaderfs::vfs::{FileType, Vfs};

use super::output::{self, Tally, Verbosity};
use super::tree::{self, Node};

/// Write the tree below `path` into `to`. A file that cannot be read or written is
/// reported and the rest still extracted; then the exit status is 2. Nothing is written
/// through a symlink that was in `to` before (a hostile archive's names cannot make it
/// write outside `to`, and neither can a link someone left there).
pub fn extract(vfs: &Vfs, path: &str, to: &Path, verbosity: Verbosity) -> Result<(), Failure> {
    let ino = tree::resolve(vfs, path)?;
    std::fs::create_dir_all(to).map_err(|e| Failure::usage(format!("{}: {e}", to.display())))?;
    let kind = vfs
        .getattr(ino)
        .map_err(|e| Failure::usage(format!("{path}: {}", std::io::Error::from_raw_os_error(e))))?
        .kind;
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
        failed: Vec::new(),
        tally: Tally::start(),
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
        match node.kind {
            FileType::Dir => out.dir(&node.path),
            FileType::File => out.file(vfs, node.ino, &full, &node.path),
            FileType::Symlink => out.link(&vfs.readlink(node.ino).unwrap_or_default(), &node.path),
        }
        if out.failed.len() > failures {
            let message = out.failed.last().cloned().unwrap_or_default();
            bar.suspend(|| eprintln!("shaderfs extract: {message}"));
        } else if verbosity == Verbosity::Verbose {
            bar.suspend(|| eprintln!("{}", node.path));
        }
    }
    bar.finish_and_clear();
    out.tally.problems = out.failed.len();
    if verbosity != Verbosity::Quiet {
        eprintln!("{}: {}", to.display(), out.tally.summary());
    }
    match out.failed.len() {
        0 => Ok(()),
        n => Err(Failure {
            code: EXIT_MALFORMED,
            message: format!("{} could not be extracted", output::count(n as u64, "file")),
        }),
    }
}

/// Where `extract` writes, what it made there, and what failed.
struct Extraction {
    to: PathBuf,
    /// The symlinks this run made (the archive's own links).
    made: HashSet<PathBuf>,
    failed: Vec<String>,
    tally: Tally,
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

    fn dir(&mut self, rel: &str) {
        let Some(target) = self.target(rel, true) else {
            return;
        };
        if let Err(e) = std::fs::create_dir_all(&target) {
            self.failed.push(format!("{}: {e}", target.display()));
        }
    }

    fn file(&mut self, vfs: &Vfs, ino: u64, full: &str, rel: &str) {
        use std::os::unix::fs::OpenOptionsExt;
        let bytes = match tree::read_all(vfs, ino, full) {
            Ok(bytes) => bytes,
            Err(f) => return self.failed.push(f.message),
        };
        let Some(target) = self.target(rel, true) else {
            return;
        };
        // O_NOFOLLOW: a link put there after the check is not followed either.
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&target)
            .and_then(|mut f| f.write_all(&bytes));
        match written {
            Ok(()) => {
                self.tally.files += 1;
                self.tally.bytes += bytes.len() as u64;
            }
            Err(e) => self.failed.push(format!("{}: {e}", target.display())),
        }
    }

    fn link(&mut self, link: &str, rel: &str) {
        let Some(target) = self.target(rel, true) else {
            return;
        };
        let made = std::fs::remove_file(&target)
            .or_else(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Ok(()),
                _ => Err(e),
            })
            .and_then(|()| std::os::unix::fs::symlink(link, &target));
        match made {
            Ok(()) => {
                self.made.insert(target);
            }
            Err(e) => self.failed.push(format!("{}: {e}", target.display())),
        }
    }
}
