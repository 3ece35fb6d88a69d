//! No SIGBUS from a truncated archive, and no zeros taken for its bytes.
//!
//! Archives are mapped, and a program that truncates one while it is mounted would make
//! the next read of a vanished page kill the daemon with SIGBUS. The handler here puts a
//! zero page where the vanished one was, so the read completes, and first marks the
//! mapping the page belonged to as *vanished*. Every mapping is registered with its
//! address range and its flag ([`super::bytes::ArchiveBytes`] does it), and whoever reads
//! a mapping checks the flag after reading. So the zeros are never taken for the
//! archive's bytes, whichever thread faulted and whichever thread later reads the zero
//! page: the flag belongs to the mapping, not to a thread or to the process.
//!
//! The flag is raised before the page is replaced: a reader that sees the zero page
//! sees the flag. The registry is a fixed table of atomics, the only kind of memory a
//! signal handler may touch; a mapping that finds it full is not made (the file is read
//! into memory instead).

use std::ops::Range;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Once;

/// Mappings watched at once: one per archive of a mount, plus those a commit or a reload
/// is making.
const SLOTS: usize = 1024;

struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    flag: AtomicPtr<AtomicBool>,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    flag: AtomicPtr::new(ptr::null_mut()),
};

static REGISTRY: [Slot; SLOTS] = [FREE; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(4096);
static INSTALL: Once = Once::new();

/// A mapping's place in the registry; leaving it when dropped.
#[derive(Debug)]
pub struct Registration(usize);

impl Drop for Registration {
    fn drop(&mut self) {
        let slot = &REGISTRY[self.0];
        slot.start.store(0, Ordering::SeqCst);
        slot.end.store(0, Ordering::SeqCst);
        slot.flag.store(ptr::null_mut(), Ordering::SeqCst);
    }
}

/// Watch the mapped addresses `range`: a fault in them raises `flag`. The flag must
/// outlive the registration (the owner drops the registration first). `None` when the
/// registry is full.
pub fn register(range: Range<usize>, flag: &AtomicBool) -> Option<Registration> {
    install();
    let wanted = flag as *const AtomicBool as *mut AtomicBool;
    for (i, slot) in REGISTRY.iter().enumerate() {
        if slot
            .flag
            .compare_exchange(ptr::null_mut(), wanted, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            slot.end.store(range.end, Ordering::SeqCst);
            slot.start.store(range.start, Ordering::SeqCst);
            return Some(Registration(i));
        }
    }
    None
}

/// Install the handler (once per process).
pub fn install() {
    INSTALL.call_once(|| {
        // SAFETY: sysconf and sigaction with a handler that only touches atomics and makes
        // async-signal-safe system calls (mmap, signal, raise).
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

/// The flag of the registered mapping holding `addr`.
fn flag_of(addr: usize) -> Option<&'static AtomicBool> {
    REGISTRY.iter().find_map(|slot| {
        let start = slot.start.load(Ordering::SeqCst);
        let end = slot.end.load(Ordering::SeqCst);
        let flag = slot.flag.load(Ordering::SeqCst);
        // SAFETY: a registered flag outlives its registration, and the mapping holding
        // `addr` is being read right now, so it is registered.
        (start != 0 && start <= addr && addr < end && !flag.is_null()).then(|| unsafe { &*flag })
    })
}

extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel hands a valid siginfo to an SA_SIGINFO handler.
    unsafe {
        let addr = (*info).si_addr() as usize;
        if (*info).si_code == libc::BUS_ADRERR && addr != 0 {
            if let Some(flag) = flag_of(addr) {
                flag.store(true, Ordering::SeqCst);
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
                    return;
                }
            }
        }
        // Not an archive's page: a real fault, which must not be hidden.
        libc::signal(libc::SIGBUS, libc::SIG_DFL);
        libc::raise(libc::SIGBUS);
    }
}
