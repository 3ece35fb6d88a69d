//! An archive's bytes: a read-only mapping of its file (watched by [`super::mapguard`]),
//! or bytes in memory (tests, and files too many to watch).

use std::fs::File;
use std::ops::Deref;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use memmap2::Mmap;

use super::mapguard::{self, Registration};

/// Archives up to this size are read ahead whole when they are mapped: indexing walks
/// the framing from start to end, and the records of a database lie a page or two
/// apart, so a cold mount waits for one read-ahead rather than a page fault per record.
const READ_AHEAD_LIMIT: usize = 512 << 20;

pub struct ArchiveBytes {
    // Dropped first: the guard stops watching before the mapping goes.
    registration: OnceLock<Registration>,
    data: Data,
    vanished: AtomicBool,
    /// The mapped file, to ask its length: a file cut short inside its last page reads
    /// zeros there with no fault for the guard to catch.
    file: Option<File>,
}

enum Data {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl ArchiveBytes {
    /// Map `file` read-only. When the guard cannot watch one more mapping, the file is
    /// read into memory instead.
    pub fn map(file: &File) -> std::io::Result<Arc<ArchiveBytes>> {
        let len = file.metadata()?.len();
        if len == 0 {
            return Ok(ArchiveBytes::owned(Vec::new()));
        }
        // SAFETY: the mapping is read-only; another program truncating the file under
        // us is caught by the guard, which raises `vanished` (checked after every read).
        let map = unsafe { Mmap::map(file) }?;
        if map.len() <= READ_AHEAD_LIMIT {
            let _ = map.advise(memmap2::Advice::WillNeed);
        }
        let start = map.as_ptr() as usize;
        let range = start..start + map.len();
        let bytes = Arc::new(ArchiveBytes {
            registration: OnceLock::new(),
            data: Data::Mapped(map),
            vanished: AtomicBool::new(false),
            file: file.try_clone().ok(),
        });
        match mapguard::register(range, &bytes.vanished) {
            Some(registration) => {
                let _ = bytes.registration.set(registration);
                Ok(bytes)
            }
            None => {
                let mut data = vec![0u8; len as usize];
                file.read_exact_at(&mut data, 0)?;
                Ok(ArchiveBytes::owned(data))
            }
        }
    }

    pub fn owned(data: Vec<u8>) -> Arc<ArchiveBytes> {
        Arc::new(ArchiveBytes {
            registration: OnceLock::new(),
            data: Data::Owned(data),
            vanished: AtomicBool::new(false),
            file: None,
        })
    }

    /// Whether a page of the mapping vanished under the process (another program
    /// truncated the file): what was read of it may be zeros, and nothing read from it
    /// from now on can be trusted. Asked after a read: the file is also looked at, as
    /// a file cut short inside a page reads zeros from there to the page's end without
    /// a fault (a database cut by 1% loses its effects to zeros that way).
    pub fn vanished(&self) -> bool {
        if self.vanished.load(Ordering::SeqCst) {
            return true;
        }
        let shorter = self
            .file
            .as_ref()
            .and_then(|f| f.metadata().ok())
            .is_some_and(|m| m.len() < self.len() as u64);
        if shorter {
            self.vanished.store(true, Ordering::SeqCst);
        }
        shorter
    }
}

impl Deref for ArchiveBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.data {
            Data::Mapped(map) => map,
            Data::Owned(bytes) => bytes,
        }
    }
}

impl std::fmt::Debug for ArchiveBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ArchiveBytes({} bytes)", self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_truncated_mapping_reads_zeros_and_says_it_vanished() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&vec![7u8; 3 * 4096]).unwrap();
        let bytes = ArchiveBytes::map(&file).unwrap();
        let mut untouched = tempfile::tempfile().unwrap();
        untouched.write_all(&vec![7u8; 3 * 4096]).unwrap();
        let other = ArchiveBytes::map(&untouched).unwrap();
        assert_eq!(bytes[2 * 4096], 7);
        file.set_len(4096).unwrap();
        // SAFETY: the read is volatile so it happens; the guard catches the fault.
        let byte = unsafe { std::ptr::read_volatile(&bytes[2 * 4096 + 5]) };
        assert_eq!(byte, 0);
        assert!(bytes.vanished());
        assert!(
            !other.vanished(),
            "the flag is the mapping's, not the process's"
        );
        assert_eq!(bytes[10], 7, "pages still in the file are untouched");
    }

    #[test]
    fn a_file_cut_inside_its_last_page_says_it_vanished() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&vec![7u8; 4096 + 1000]).unwrap();
        let bytes = ArchiveBytes::map(&file).unwrap();
        assert!(!bytes.vanished());
        file.set_len(4096 + 10).unwrap();
        assert_eq!(bytes[4096 + 500], 0, "zeros, and no fault");
        assert!(bytes.vanished());
        file.set_len(4096 + 1000).unwrap();
        assert!(
            bytes.vanished(),
            "once read from zeros, never trusted again"
        );
    }

    #[test]
    fn a_fault_on_one_thread_flags_the_mapping_for_every_thread() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&vec![1u8; 8 * 4096]).unwrap();
        let bytes = ArchiveBytes::map(&file).unwrap();
        file.set_len(0).unwrap();
        let faulting = bytes.clone();
        std::thread::spawn(move || {
            // SAFETY: as above.
            unsafe { std::ptr::read_volatile(&faulting[4096]) }
        })
        .join()
        .unwrap();
        assert!(bytes.vanished(), "seen from the thread that did not fault");
    }
}
