//! Atomic replacement of an archive file (protocol step 3 of DESIGN.md): write the new
//! bytes to a temporary file in the archive's folder, `fsync` it, parse it again with the
//! same reader, `rename` it over the archive and `fsync` the folder. A crash at any point
//! leaves either the old archive or the new one, never a mix.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{ArchiveBytes, Piece, Rewrite};

#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    #[error("writing {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("the new {path} does not read back: {message}")]
    Reread { path: PathBuf, message: String },
    /// The file at the path was not the one the new bytes were made from: another
    /// program replaced or changed it while the commit was written. It is left there.
    #[error("another program changed {path} on disk while this save was written")]
    Changed { path: PathBuf },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> CommitError + '_ {
    move |source| CommitError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The archive as it is on disk after a commit.
pub struct Replaced<T> {
    pub file: File,
    pub bytes: Arc<ArchiveBytes>,
    /// What `reread` made of the new bytes.
    pub value: T,
}

/// Replace `target` with `rewrite`, whose kept pieces are ranges of `current` (the open
/// file the archive's snapshot maps; `current_bytes` is that mapping). `reread` parses
/// the temporary file before it is renamed into place; if it fails, the archive is
/// untouched. With `backup`, `target.bak` is written first when it does not exist yet.
/// With `lock`, the new file carries the one-writer lock (an exclusive `flock`) before it
/// takes the archive's place, so the file at `target` is locked at every moment.
///
/// `is_current` says whether a file (its metadata) is still the archive `current` was
/// read from, unchanged. The new file takes the archive's place only if the file it
/// displaces is: the swap and the check are one step ([`swap_into_place`]), so another
/// program's version written at any moment is never overwritten, only refused
/// ([`CommitError::Changed`]).
#[allow(clippy::too_many_arguments)]
pub fn replace<T>(
    target: &Path,
    current: &File,
    current_bytes: &[u8],
    rewrite: &Rewrite,
    backup: bool,
    lock: bool,
    is_current: impl Fn(&fs::Metadata) -> bool,
    reread: impl FnOnce(&Path, Arc<ArchiveBytes>) -> Result<T, String>,
) -> Result<Replaced<T>, CommitError> {
    let dir = parent_dir(target);
    let old = fs::metadata(target).map_err(io_err(target))?;
    let (temp_path, mut temp) = create_temp(&dir, target, Some(&old)).map_err(io_err(&dir))?;
    let cleanup = TempGuard(Some(temp_path.clone()));

    write_rewrite(&mut temp, current, current_bytes, rewrite).map_err(io_err(&temp_path))?;
    temp.sync_all().map_err(io_err(&temp_path))?;
    let bytes = ArchiveBytes::map(&temp).map_err(io_err(&temp_path))?;
    if bytes.len() != rewrite.len() {
        return Err(CommitError::Reread {
            path: temp_path,
            message: format!("{} bytes read back, {} written", bytes.len(), rewrite.len()),
        });
    }
    let value = reread(&temp_path, bytes.clone()).map_err(|message| CommitError::Reread {
        path: target.to_path_buf(),
        message,
    })?;
    if lock {
        use std::os::fd::AsRawFd;
        // SAFETY: flock on the descriptor we just created.
        if unsafe { libc::flock(temp.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(io_err(&temp_path)(io::Error::last_os_error()));
        }
    }

    if backup {
        write_backup(target, &old)?;
    }
    // From here the temporary's name may hold the displaced archive: the swap alone
    // decides what is removed.
    cleanup.disarm();
    swap_into_place(&temp_path, &temp, target, &is_current)?;
    File::open(&dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(&dir))?;
    Ok(Replaced {
        file: temp,
        bytes,
        value,
    })
}

/// Put the finished file `new` (at `temp_path`) at `target` if what is there now is the
/// archive the commit was made from (`is_current`), and leave `target` alone otherwise.
///
/// A check followed by a `rename` would leave a window in which another program's
/// version, renamed or written into place between the two, is overwritten by a save that
/// then reports success. Here the two files swap places in one step
/// (`renameat2(RENAME_EXCHANGE)`), after which the displaced file sits at `temp_path`
/// and is looked at: the archive the commit was made from is unlinked; anything else is
/// swapped back, and the commit fails with [`CommitError::Changed`]. If a second version
/// was renamed over the new file in the moment between the two swaps, it is newer than
/// the one the first swap displaced, and it is the one left at `target`.
///
/// The file at `target` is also looked at just before the swap, so that a version
/// already there is refused without the new file ever showing at the path. On a file
/// system without the swap, that look is followed by a `rename` (the window is then the
/// time between two system calls).
fn swap_into_place(
    temp_path: &Path,
    new: &File,
    target: &Path,
    is_current: &dyn Fn(&fs::Metadata) -> bool,
) -> Result<(), CommitError> {
    let changed = || CommitError::Changed {
        path: target.to_path_buf(),
    };
    let ours = new.metadata().map_err(io_err(temp_path))?;
    let is_ours = |meta: &fs::Metadata| (meta.dev(), meta.ino()) == (ours.dev(), ours.ino());
    // Looked at first as well: a swap that must be undone shows the new file at the path
    // for a moment, and a program reading it then would build on it. This leaves only a
    // version that lands between this look and the swap to be swapped back.
    match fs::symlink_metadata(target) {
        Ok(now) if is_current(&now) => {}
        Ok(_) => {
            let _ = fs::remove_file(temp_path);
            return Err(changed());
        }
        Err(e) => {
            let _ = fs::remove_file(temp_path);
            return Err(io_err(target)(e));
        }
    }
    match exchange(temp_path, target) {
        Ok(()) => {}
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) => {
            // No swap here: the look above, then a rename.
            return fs::rename(temp_path, target).map_err(|e| {
                let _ = fs::remove_file(temp_path);
                io_err(target)(e)
            });
        }
        Err(e) => {
            let _ = fs::remove_file(temp_path);
            return Err(io_err(target)(e));
        }
    }
    // `target` is the new archive; `temp_path` holds what it displaced.
    let displaced = fs::symlink_metadata(temp_path).map_err(io_err(temp_path))?;
    if is_current(&displaced) {
        // The old archive, as the commit read it: gone from the folder (the snapshot
        // keeps it open until its readers are done).
        fs::remove_file(temp_path).map_err(io_err(temp_path))?;
        return Ok(());
    }
    // Another program's version: back where it was.
    exchange(temp_path, target).map_err(io_err(target))?;
    let back = fs::symlink_metadata(temp_path).map_err(io_err(temp_path))?;
    if !is_ours(&back) {
        // A newer version had been renamed over ours meanwhile: it, not the one the
        // first swap displaced, is the latest, and goes back to `target`.
        exchange(temp_path, target).map_err(io_err(target))?;
    }
    let _ = fs::remove_file(temp_path);
    Err(changed())
}

/// Swap the files at `a` and `b` in one step.
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path with a NUL byte"))
    };
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: two valid C strings, relative to the working folder.
    let done = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    match done {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// The name of a temporary file for `like` (the archive, or its backup) made by process
/// `pid`, attempt `attempt`: hidden, beside it, and telling what it is.
fn temp_name(like: &str, pid: u32, attempt: u32) -> String {
    format!(".{like}.shaderfs-{pid}-{attempt}")
}

/// Whether `name` is a temporary file [`temp_name`] made for `like`.
fn is_temp_of(name: &str, like: &str) -> bool {
    let Some(rest) = name
        .strip_prefix('.')
        .and_then(|n| n.strip_prefix(like))
        .and_then(|n| n.strip_prefix(".shaderfs-"))
    else {
        return false;
    };
    let mut numbers = rest.split('-');
    let number =
        |n: Option<&str>| n.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    number(numbers.next()) && number(numbers.next()) && numbers.next().is_none()
}

/// Remove the temporary files a commit of `target` left when it was killed (the archive
/// and its backup's), up to the archive's size each. Only the holder of the archive's
/// one-writer lock may call this: no one else is writing them.
pub fn remove_stale_temps(target: &Path) {
    let Some(base) = target.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let bak = format!("{base}.bak");
    let Ok(entries) = fs::read_dir(parent_dir(target)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if is_temp_of(name, base) || is_temp_of(name, &bak) {
            match fs::remove_file(entry.path()) {
                Ok(()) => log::info!("removed {}, left by an interrupted commit", name),
                Err(e) => log::warn!("cannot remove {name}, left by an interrupted commit: {e}"),
            }
        }
    }
}

/// Write the pieces in order: kept ranges copied from `current` inside the kernel
/// (`copy_file_range`; where the file system cannot, from the mapping), new bytes
/// written.
fn write_rewrite(
    out: &mut File,
    current: &File,
    current_bytes: &[u8],
    rewrite: &Rewrite,
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    for piece in rewrite.pieces() {
        match piece {
            Piece::New(bytes) => out.write_all(bytes)?,
            Piece::Keep(range) => {
                if range.end > current_bytes.len() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "a kept range runs past the archive",
                    ));
                }
                let mut offset = range.start as i64;
                let end = range.end as i64;
                while offset < end {
                    // SAFETY: both descriptors are open files; `offset` is ours to advance
                    // and the output offset is the file's own.
                    let n = unsafe {
                        libc::copy_file_range(
                            current.as_raw_fd(),
                            &mut offset,
                            out.as_raw_fd(),
                            std::ptr::null_mut(),
                            (end - offset) as usize,
                            0,
                        )
                    };
                    if n > 0 {
                        continue;
                    }
                    let err = io::Error::last_os_error();
                    if n < 0 && err.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    // No copy in the kernel here (or a short file): write from the map.
                    out.write_all(&current_bytes[offset as usize..range.end])?;
                    break;
                }
            }
        }
    }
    Ok(())
}

/// `ARCHIVE.bak`, written once (atomically itself) before the first commit of a mount.
fn write_backup(target: &Path, old: &fs::Metadata) -> Result<(), CommitError> {
    let mut bak = target.as_os_str().to_owned();
    bak.push(".bak");
    let bak = PathBuf::from(bak);
    if bak.exists() {
        return Ok(());
    }
    let dir = parent_dir(target);
    let (temp_path, mut temp) = create_temp(&dir, &bak, Some(old)).map_err(io_err(&dir))?;
    let cleanup = TempGuard(Some(temp_path.clone()));
    let original = fs::read(target).map_err(io_err(target))?;
    temp.write_all(&original).map_err(io_err(&temp_path))?;
    temp.sync_all().map_err(io_err(&temp_path))?;
    fs::rename(&temp_path, &bak).map_err(io_err(&bak))?;
    cleanup.disarm();
    Ok(())
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A new file next to `like`, with the permissions and (when we may) the owner of `old`
/// (`like` as it is), or as a new file is made when there is none.
fn create_temp(dir: &Path, like: &Path, old: Option<&fs::Metadata>) -> io::Result<(PathBuf, File)> {
    let base = like
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mode = old.map_or(0o666, |old| old.permissions().mode() & 0o7777);
    for attempt in 0u32.. {
        let path = dir.join(temp_name(&base, std::process::id(), attempt));
        match OpenOptions::new()
            .write(true)
            .read(true)
            .create_new(true)
            .mode(mode)
            .open(&path)
        {
            Ok(file) => {
                if let Some(old) = old {
                    // Keep the owner when running as root; harmless to fail otherwise.
                    let _ = std::os::unix::fs::fchown(&file, Some(old.uid()), Some(old.gid()));
                }
                return Ok((path, file));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 1000 => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("the loop returns")
}

/// Write `bytes` to `target` as a commit replaces an archive: a temporary file beside it,
/// `fsync`, read back and compared, `rename`, `fsync` of the folder. An existing `target`
/// keeps its permissions and stays whole if anything fails. For the files the offline
/// commands make (`sdp pack`, `d3d9 asm -o`).
///
/// A `target` that is a symbolic link is replaced where it points, the link kept; one
/// that is not a regular file (`/dev/null`, a pipe) is written as it is, since renaming
/// over it would replace the device with a file.
pub fn write_whole(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let linked = fs::symlink_metadata(target).is_ok_and(|m| m.file_type().is_symlink());
    let real;
    let target = match linked {
        true => {
            real = fs::canonicalize(target)?;
            real.as_path()
        }
        false => target,
    };
    let old = fs::metadata(target).ok();
    if let Some(m) = old.as_ref().filter(|m| !m.is_file()) {
        if m.is_dir() {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        return fs::OpenOptions::new()
            .write(true)
            .open(target)?
            .write_all(bytes);
    }
    let dir = parent_dir(target);
    let (temp_path, mut temp) = create_temp(&dir, target, old.as_ref())?;
    let cleanup = TempGuard(Some(temp_path.clone()));
    temp.write_all(bytes)?;
    temp.sync_all()?;
    if fs::read(&temp_path)? != bytes {
        return Err(io::Error::other(
            "the file written does not read back the same",
        ));
    }
    fs::rename(&temp_path, target)?;
    cleanup.disarm();
    File::open(&dir)?.sync_all()
}

struct TempGuard(Option<PathBuf>);

impl TempGuard {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn write_whole_writes_devices_and_links_in_place() {
        // Renaming over `-o /dev/null` would make it a file for everyone: a pipe shows it.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(fifo).unwrap())
        };
        write_whole(&fifo, b"through").unwrap();
        assert_eq!(reader.join().unwrap(), b"through");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        let real = dir.path().join("real.bin");
        let link = dir.path().join("link.bin");
        fs::write(&real, b"old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_whole(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&real).unwrap(), b"new");
        let err = write_whole(dir.path(), b"x").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EISDIR));
    }

    /// `replace` with all-new bytes.
    fn replace_with<T>(
        target: &Path,
        bytes: &[u8],
        backup: bool,
        reread: impl FnOnce(&Path, Arc<ArchiveBytes>) -> Result<T, String>,
    ) -> Result<Replaced<T>, CommitError> {
        let current = File::open(target).unwrap();
        let old = fs::read(target).unwrap();
        let read = current.metadata().unwrap();
        replace(
            target,
            &current,
            &old,
            &Rewrite::whole(bytes.to_vec()),
            backup,
            false,
            |now| (now.ino(), now.mtime_nsec()) == (read.ino(), read.mtime_nsec()),
            reread,
        )
    }

    #[test]
    fn kept_pieces_are_copied_from_the_current_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.awc");
        let old: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        fs::write(&target, &old).unwrap();
        let mut rewrite = Rewrite::new();
        rewrite.keep(0..1000);
        rewrite.keep(1000..5000);
        rewrite.push(b"NEW");
        rewrite.keep(150_000..200_000);
        assert_eq!(rewrite.pieces().len(), 3, "touching ranges are joined");
        let current = File::open(&target).unwrap();
        let done = replace(
            &target,
            &current,
            &old,
            &rewrite,
            false,
            true,
            |_| true,
            |_, map| Ok(map.to_vec()),
        )
        .unwrap();
        // SAFETY: flock on a descriptor we own.
        let lockable = unsafe {
            let probe = File::open(&target).unwrap();
            libc::flock(
                std::os::fd::AsRawFd::as_raw_fd(&probe),
                libc::LOCK_EX | libc::LOCK_NB,
            )
        };
        assert_ne!(lockable, 0, "the new archive carries the lock");
        let want = [&old[..5000], b"NEW", &old[150_000..]].concat();
        assert_eq!(done.value, want);
        assert_eq!(fs::read(&target).unwrap(), want);
        assert_eq!(rewrite.to_vec(&old), want);
    }

    #[test]
    fn replaces_and_keeps_backup() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.sdp");
        fs::write(&target, b"old").unwrap();
        let done = replace_with(&target, b"new", true, |_, map| Ok(map.len())).unwrap();
        assert_eq!(done.value, 3);
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(fs::read(dir.path().join("a.sdp.bak")).unwrap(), b"old");
        // A second commit keeps the first backup.
        replace_with(&target, b"newer", true, |_, _| Ok(())).unwrap();
        assert_eq!(fs::read(dir.path().join("a.sdp.bak")).unwrap(), b"old");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no temporary left"
        );
    }

    #[test]
    fn another_programs_version_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.sdp");
        fs::write(&target, b"as the mount read it").unwrap();
        let current = File::open(&target).unwrap();
        let read = current.metadata().unwrap();
        // Another program renames its version over the archive after the mount read it.
        let theirs = dir.path().join("theirs");
        fs::write(&theirs, b"another program's version").unwrap();
        fs::rename(&theirs, &target).unwrap();
        let err = replace(
            &target,
            &current,
            b"as the mount read it",
            &Rewrite::whole(b"the save".to_vec()),
            false,
            true,
            |now| now.ino() == read.ino(),
            |_, _| Ok(()),
        );
        assert!(
            matches!(err, Err(CommitError::Changed { .. })),
            "{:?}",
            err.err()
        );
        assert_eq!(fs::read(&target).unwrap(), b"another program's version");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
        // The file now there takes a commit made from it.
        let current = File::open(&target).unwrap();
        let read = current.metadata().unwrap();
        replace(
            &target,
            &current,
            b"another program's version",
            &Rewrite::whole(b"the save".to_vec()),
            false,
            true,
            |now| now.ino() == read.ino(),
            |_, _| Ok(()),
        )
        .unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"the save");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn failed_reread_leaves_the_archive() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.sdp");
        fs::write(&target, b"old").unwrap();
        let err = replace_with(&target, b"bad", false, |_, _| Err::<(), _>("nope".into()));
        assert!(matches!(err, Err(CommitError::Reread { .. })));
        assert_eq!(fs::read(&target).unwrap(), b"old");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn temporaries_a_killed_commit_left_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.sdp");
        fs::write(&target, b"archive").unwrap();
        let names = [
            ".a.sdp.shaderfs-123-0",
            ".a.sdp.shaderfs-99-17",
            ".a.sdp.bak.shaderfs-5-0",
        ];
        let kept = [
            "a.sdp.bak",
            ".a.sdp.swp",
            ".b.sdp.shaderfs-1-0",
            ".a.sdp.shaderfs-x-0",
            ".a.sdp.shaderfs-1-2-3",
            ".ab.sdp.shaderfs-1-0",
        ];
        for name in names.iter().chain(&kept) {
            fs::write(dir.path().join(name), b"x").unwrap();
        }
        remove_stale_temps(&target);
        for name in names {
            assert!(!dir.path().join(name).exists(), "{name} removed");
        }
        for name in kept.iter().chain(&["a.sdp"]) {
            assert!(dir.path().join(name).exists(), "{name} kept");
        }
    }
}
