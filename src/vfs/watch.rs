//! Hearing of another program's change to a mounted archive, so the mount shows it: an
//! inotify watch on each archive's folder. Read-only mounts show what a read-write mount
//! (or anything else) wrote; a read-write mount learns of it before the next save, which
//! then refuses content taken from the old archive.
//!
//! Events come in bursts (a program writing a file in place makes many): the archives
//! they name are looked at once the folder has been quiet for [`SETTLE`].

use std::collections::{HashMap, HashSet};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::fs::Vfs;

/// Quiet time before a changed archive is looked at.
const SETTLE: Duration = Duration::from_millis(100);
/// How often an idle watcher checks that the mount still exists.
const IDLE: Duration = Duration::from_secs(1);

impl Vfs {
    /// Watch the archives' folders on a thread of its own, which ends with the vfs.
    pub fn start_watching(self: &Arc<Self>) -> std::io::Result<()> {
        // SAFETY: plain system call.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mask = libc::IN_MODIFY
            | libc::IN_ATTRIB
            | libc::IN_CLOSE_WRITE
            | libc::IN_MOVED_TO
            | libc::IN_MOVED_FROM
            | libc::IN_CREATE
            | libc::IN_DELETE;
        // Watch descriptor → (file name → archive ids) of the folder it watches.
        let mut folders: HashMap<i32, HashMap<Vec<u8>, Vec<usize>>> = HashMap::new();
        let mut added: HashMap<PathBuf, i32> = HashMap::new();
        for (id, path) in self.archive_paths().into_iter().enumerate() {
            let folder = path.parent().unwrap_or(Path::new("/")).to_path_buf();
            let name = path.file_name().unwrap_or_default().as_bytes().to_vec();
            let wd = match added.get(&folder) {
                Some(&wd) => wd,
                None => {
                    let c = CString::new(folder.as_os_str().as_bytes())
                        .map_err(|_| std::io::Error::other("a folder name with a NUL byte"))?;
                    // SAFETY: a valid descriptor and C string.
                    let wd = unsafe { libc::inotify_add_watch(fd, c.as_ptr(), mask) };
                    if wd < 0 {
                        let err = std::io::Error::last_os_error();
                        // SAFETY: closing our own descriptor.
                        unsafe { libc::close(fd) };
                        return Err(err);
                    }
                    added.insert(folder, wd);
                    wd
                }
            };
            folders
                .entry(wd)
                .or_default()
                .entry(name)
                .or_default()
                .push(id);
        }
        let vfs = Arc::downgrade(self);
        std::thread::Builder::new()
            .name("watch".into())
            .spawn(move || watch(fd, &folders, vfs))?;
        Ok(())
    }
}

fn watch(fd: i32, folders: &HashMap<i32, HashMap<Vec<u8>, Vec<usize>>>, vfs: Weak<Vfs>) {
    let mut changed: HashSet<usize> = HashSet::new();
    let mut buffer = vec![0u8; 64 << 10];
    loop {
        let timeout = if changed.is_empty() { IDLE } else { SETTLE };
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, timeout.as_millis() as i32) };
        if ready > 0 {
            // SAFETY: reading into a buffer we own, of its length.
            let n = unsafe { libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len()) };
            if n > 0 {
                for (wd, name) in events(&buffer[..n as usize]) {
                    if let Some(ids) = folders.get(&wd).and_then(|f| f.get(name)) {
                        changed.extend(ids);
                    }
                }
            }
            continue;
        }
        let Some(vfs) = vfs.upgrade() else {
            break;
        };
        for id in changed.drain() {
            vfs.refresh(id);
        }
    }
    // SAFETY: closing our own descriptor.
    unsafe { libc::close(fd) };
}

/// The (watch descriptor, file name) of each event in a buffer `read` from inotify.
fn events(mut bytes: &[u8]) -> Vec<(i32, &[u8])> {
    const HEADER: usize = std::mem::size_of::<libc::inotify_event>();
    let mut out = Vec::new();
    while bytes.len() >= HEADER {
        let wd = i32::from_ne_bytes(bytes[0..4].try_into().unwrap_or_default());
        let len = u32::from_ne_bytes(bytes[12..16].try_into().unwrap_or_default()) as usize;
        let Some(name) = bytes.get(HEADER..HEADER + len) else {
            break;
        };
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        out.push((wd, name));
        bytes = &bytes[HEADER + len..];
    }
    out
}
