//! No SIGBUS from a truncated archive.
//!
//! Archives are mapped, and a program that truncates one while it is mounted would make
//! the next read of a vanished page kill the daemon with SIGBUS. Reads check the file's
//! size and time first ([`super::fs`]), but a truncation can land between that check and
//! the copy. For that window this handler replaces the faulting page with a zero page and
//! raises a flag; the read that touched it sees the flag and fails with EIO, and the
//! size check reports the truncation from then on.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

static FAULTED: AtomicBool = AtomicBool::new(false);
static PAGE: AtomicUsize = AtomicUsize::new(4096);
static INSTALL: Once = Once::new();

/// Install the handler (once per process).
pub fn install() {
    INSTALL.call_once(|| {
        // SAFETY: sysconf and sigaction with a handler that only makes async-signal-safe
        // system calls (mmap, signal, raise) and atomic stores.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    });
}

/// Whether a mapped page has vanished under the process since the last call.
pub fn take_fault() -> bool {
    FAULTED.swap(false, Ordering::SeqCst)
}

extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel hands a valid siginfo to an SA_SIGINFO handler.
    unsafe {
        let addr = (*info).si_addr() as usize;
        if (*info).si_code == libc::BUS_ADRERR && addr != 0 {
            let page = PAGE.load(Ordering::Relaxed);
            let start = addr & !(page - 1);
            let replaced = libc::mmap(
                start as *mut libc::c_void,
                page,
                libc::PROT_READ,
                libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if replaced != libc::MAP_FAILED {
                FAULTED.store(true, Ordering::SeqCst);
                return;
            }
        }
        libc::signal(libc::SIGBUS, libc::SIG_DFL);
        libc::raise(libc::SIGBUS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_truncated_mapping_reads_zeros_and_raises_the_flag() {
        install();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&vec![7u8; 3 * 4096]).unwrap();
        // SAFETY: the test truncates the file on purpose; the handler catches the fault.
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        assert_eq!(map[2 * 4096], 7);
        file.set_len(4096).unwrap();
        let _ = take_fault();
        let byte = unsafe { std::ptr::read_volatile(&map[2 * 4096 + 5]) };
        assert_eq!(byte, 0);
        assert!(take_fault());
        assert_eq!(map[10], 7, "pages still in the file are untouched");
    }
}
