//! Write buffers, and the memory budget they share (DESIGN.md write-back steps 1 and 8).
//!
//! Everything users write into the mount lives in the daemon's memory until it is
//! committed: the buffers of files being written, and scratch files for the mount's
//! life. They all draw on one [`Budget`] (`-o max_memory`, 512 MiB by default); a write
//! past it fails with ENOSPC (and past [`MAX_BUFFER`] for one file, EFBIG), so no script
//! can get the daemon killed by the OOM killer. A buffer gives its bytes back to the
//! budget when it goes, however it goes.
//!
//! The content is shared (`Arc`), not copied, with whatever reads it meanwhile: a commit
//! in progress, a reader of a scratch file, the view it is shown as.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use super::fs::Errno;

/// Largest file a user may write through the mount; a runaway `cat /dev/zero > x.vso`
/// must not take the daemon's memory.
pub const MAX_BUFFER: usize = 256 << 20;

/// What all buffers may hold together.
#[derive(Debug)]
pub struct Budget {
    limit: usize,
    used: AtomicUsize,
}

impl Budget {
    pub fn new(limit: usize) -> Arc<Budget> {
        Arc::new(Budget {
            limit,
            used: AtomicUsize::new(0),
        })
    }

    /// Bytes held by buffers now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::SeqCst)
    }

    /// Take `bytes` more, or ENOSPC when they do not fit.
    fn take(&self, bytes: usize) -> Result<(), Errno> {
        self.used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.limit)
            })
            .map(|_| ())
            .map_err(|_| libc::ENOSPC)
    }

    fn give(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::SeqCst);
    }
}

/// Content of a file being written (DESIGN.md write-back step 1).
#[derive(Debug)]
pub struct WriteBuffer {
    data: Arc<Vec<u8>>,
    budget: Arc<Budget>,
    /// Changed since the last commit attempt.
    pub dirty: bool,
    /// Why the last attempt to save this content was refused. Every `close()` of the
    /// file hears it until the content changes: the kernel flushes at each close of a
    /// descriptor, a forked child's too, and the one that matters must not hear "saved".
    pub refused: Option<Errno>,
    /// The archive's epoch when the content was taken (see `Mounted::epoch`).
    pub epoch: u64,
    /// When it was last written.
    pub modified: SystemTime,
}

impl WriteBuffer {
    /// A buffer holding `data`, drawn from `budget`.
    pub fn new(
        budget: &Arc<Budget>,
        data: Vec<u8>,
        dirty: bool,
        epoch: u64,
    ) -> Result<WriteBuffer, Errno> {
        if data.len() > MAX_BUFFER {
            return Err(libc::EFBIG);
        }
        budget.take(data.len())?;
        Ok(WriteBuffer {
            data: Arc::new(data),
            budget: budget.clone(),
            dirty,
            refused: None,
            epoch,
            modified: SystemTime::now(),
        })
    }

    pub fn bytes(&self) -> &[u8] {
        &self.data
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The content, shared.
    pub fn shared(&self) -> Arc<Vec<u8>> {
        self.data.clone()
    }

    /// Whether the buffer still holds exactly `content` (taken with [`Self::shared`]).
    pub fn holds(&self, content: &Arc<Vec<u8>>) -> bool {
        Arc::ptr_eq(&self.data, content)
    }

    /// Write `bytes` at `offset`, growing the content as needed.
    pub fn write(&mut self, offset: u64, bytes: &[u8]) -> Result<(), Errno> {
        let end = offset
            .checked_add(bytes.len() as u64)
            .filter(|&e| e <= MAX_BUFFER as u64)
            .ok_or(libc::EFBIG)? as usize;
        self.reserve(end)?;
        let data = Arc::make_mut(&mut self.data);
        if data.len() < end {
            data.resize(end, 0);
        }
        data[offset as usize..end].copy_from_slice(bytes);
        self.changed();
        Ok(())
    }

    /// Cut or extend the content to `len` bytes (zeros).
    pub fn resize(&mut self, len: u64) -> Result<(), Errno> {
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= MAX_BUFFER)
            .ok_or(libc::EFBIG)?;
        self.reserve(len)?;
        let data = Arc::make_mut(&mut self.data);
        let before = data.len();
        data.resize(len, 0);
        if len < before {
            data.shrink_to_fit();
            self.budget.give(before - len);
        }
        self.changed();
        Ok(())
    }

    /// Nothing from the start (`O_TRUNC`).
    pub fn clear(&mut self) {
        self.budget.give(self.data.len());
        self.data = Arc::new(Vec::new());
        self.changed();
    }

    /// Take from the budget what growing to `len` bytes needs.
    fn reserve(&mut self, len: usize) -> Result<(), Errno> {
        match len.checked_sub(self.data.len()) {
            Some(more) if more > 0 => self.budget.take(more),
            _ => Ok(()),
        }
    }

    /// The content changed now: it is to be saved, and no refusal stands for it.
    fn changed(&mut self) {
        self.dirty = true;
        self.refused = None;
        self.modified = SystemTime::now();
    }

    /// An empty file is no shader, asm text or table: it is what `truncate`, `: >` or an
    /// editor leaves before the new content arrives. It waits, uncommitted, for the write
    /// that follows.
    pub fn is_waiting(&self) -> bool {
        self.dirty && self.data.is_empty()
    }
}

impl Drop for WriteBuffer {
    fn drop(&mut self) {
        self.budget.give(self.data.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_draw_on_one_budget_and_give_back_when_they_go() {
        let budget = Budget::new(100);
        let mut a = WriteBuffer::new(&budget, vec![1; 40], false, 0).unwrap();
        let mut b = WriteBuffer::new(&budget, Vec::new(), true, 0).unwrap();
        assert_eq!(budget.used(), 40);
        b.write(0, &[2; 50]).unwrap();
        assert_eq!(budget.used(), 90);
        assert_eq!(b.write(50, &[3; 20]), Err(libc::ENOSPC), "past the budget");
        assert_eq!(b.len(), 50, "a refused write changes nothing");
        a.resize(10).unwrap();
        assert_eq!(budget.used(), 60);
        b.write(50, &[3; 20]).unwrap();
        b.clear();
        assert_eq!(budget.used(), 10);
        drop(a);
        assert_eq!(budget.used(), 0);
        assert_eq!(
            b.write(MAX_BUFFER as u64, &[1]),
            Err(libc::EFBIG),
            "one file has a limit of its own"
        );
    }

    #[test]
    fn shared_content_is_not_copied_until_written() {
        let budget = Budget::new(1 << 20);
        let mut a = WriteBuffer::new(&budget, vec![7; 1000], true, 0).unwrap();
        let taken = a.shared();
        assert!(a.holds(&taken));
        a.write(0, &[1]).unwrap();
        assert!(!a.holds(&taken), "a write after a commit took the content");
        assert_eq!(taken[0], 7, "what was taken stays as it was");
    }
}
