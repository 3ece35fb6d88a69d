//! FUSE over io_uring (Linux 6.14 and later, where the `fuse` module's `enable_uring` is
//! on): the kernel keeps a queue of requests per CPU and hands each request to a thread
//! of this daemon waiting on that CPU, so a request and its answer wake nobody on another
//! CPU. On a VM such a wakeup costs 20–80 µs, most of what an `open` and `close` through
//! a writable mount cost over /dev/fuse (see bench/README.md).
//!
//! The protocol (the kernel's `fs/fuse/dev_uring.c`, `include/uapi/linux/fuse.h`): after
//! INIT granted `FUSE_OVER_IO_URING`, each queue (one per possible CPU) gets ring entries,
//! each a 288-byte header and a payload buffer as large as the largest request, through
//! `IORING_OP_URING_CMD` SQEs on the /dev/fuse descriptor (`FUSE_IO_URING_CMD_REGISTER`).
//! Once every queue has one, requests go to the requester's CPU's queue: the entry's CQE
//! completes with the request's `fuse_in_header` in the header, its first argument (the
//! per-operation struct) after it, and the rest (names, written data) in the payload.
//! The answer goes back the same way, `fuse_out_header` in the header and every reply
//! argument in the payload, with `FUSE_IO_URING_CMD_COMMIT_AND_FETCH`, which also waits
//! for the next request. FORGET and INTERRUPT still come through /dev/fuse, to fuser.
//!
//! Until every queue is registered the kernel holds all requests, so the rings are made
//! and their threads started before the mount asks for io_uring ([`Rings::prepare`]); a
//! registration the kernel refuses turns io_uring off for the connection, and requests
//! go to /dev/fuse as before.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use crate::fuse::{Change, Entry, Handle, Ops, MAX_WRITE};
use crate::vfs::{Attr, FileType};

const ENABLE: &str = "/sys/module/fuse/parameters/enable_uring";

/// `struct fuse_uring_req_header`: `fuse_in_header`/`fuse_out_header` (128 bytes), the
/// per-operation struct (128), then `fuse_uring_ent_in_out` (32).
const HEADER: usize = 288;
const OP_IN: usize = 128;
const ENT_IN_OUT: usize = 256;

const CMD_REGISTER: u32 = 1;
const CMD_COMMIT_AND_FETCH: u32 = 2;

/// Whether the kernel lets FUSE daemons use io_uring (`enable_uring`, off by default).
pub fn enabled() -> bool {
    std::fs::read_to_string(ENABLE).is_ok_and(|s| s.trim() == "Y")
}

/// A CPU list of /sys (`0-3,8-11`): each CPU's number.
fn cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for range in text.trim().split(',').filter(|r| !r.is_empty()) {
        let (a, b) = range.split_once('-').unwrap_or((range, range));
        let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
        if b < a || b - a > 4096 {
            return None;
        }
        cpus.extend(a..=b);
    }
    Some(cpus)
}

fn cpus(which: &str) -> Option<Vec<usize>> {
    cpu_list(&std::fs::read_to_string(format!("/sys/devices/system/cpu/{which}")).ok()?)
}

/// More queues than this (the kernel makes one per possible CPU, online or not) and the
/// threads and buffers cost more than they save: /dev/fuse serves.
const MOST_QUEUES: usize = 256;

/// Whether a thread at the idle class may go back to the normal one (root, or an
/// `RLIMIT_NICE` that allows nice 0): tried on a thread of its own.
fn may_leave_idle_class() -> bool {
    std::thread::spawn(|| {
        idle_class(true);
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: sets this thread's own policy from a parameter on the stack.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) == 0 }
    })
    .join()
    .unwrap_or(false)
}

/// Who may use the mount, as fuser checks it for its own requests.
#[derive(Clone, Copy)]
pub struct Access {
    pub acl: fuser::SessionACL,
    pub owner: u32,
}

struct Start {
    ops: Arc<Ops>,
    device: Arc<OwnedFd>,
    access: Access,
    idle: bool,
}

/// Rings made and threads waiting, before the mount's INIT.
pub struct Rings {
    starts: Vec<mpsc::Sender<Start>>,
    /// The threads may wait at the idle class: they can leave it for a change. (An
    /// unprivileged daemon whose `RLIMIT_NICE` forbids that keeps to the normal class.)
    idle: bool,
}

impl Rings {
    /// A ring and a waiting thread per entry: `per_queue` entries for each possible CPU,
    /// each thread on its queue's CPU. `None` where the kernel would not take them.
    /// A CPU that is not online gets one thread, which no request reaches until it is.
    pub fn prepare(per_queue: usize) -> Option<Rings> {
        if !enabled() {
            return None;
        }
        // The kernel numbers its queues 0.. by count of possible CPUs.
        let queues = cpus("possible")?.len();
        if queues > MOST_QUEUES {
            log::info!("io_uring: {queues} possible CPUs, one queue each: serving /dev/fuse");
            return None;
        }
        let online = cpus("online").unwrap_or_default();
        let mut starts = Vec::new();
        for qid in 0..queues {
            let threads = if online.contains(&qid) { per_queue } else { 1 };
            for _ in 0..threads {
                let worker = match Worker::new(qid as u16) {
                    Ok(worker) => worker,
                    Err(e) => {
                        log::warn!("io_uring: cannot make a ring ({e}); serving /dev/fuse");
                        return None;
                    }
                };
                let (tx, rx) = mpsc::channel::<Start>();
                let spawned = std::thread::Builder::new()
                    .name(format!("uring-{qid}"))
                    .spawn(move || {
                        if let Ok(start) = rx.recv() {
                            worker.serve(start);
                        }
                    });
                if let Err(e) = spawned {
                    log::warn!("io_uring: cannot start a thread ({e}); serving /dev/fuse");
                    return None;
                }
                starts.push(tx);
            }
        }
        Some(Rings {
            starts,
            idle: may_leave_idle_class(),
        })
    }

    /// Register every entry with the connection of `device` and serve its requests.
    /// `idle`: the threads wait, and read, at the idle scheduling class (see
    /// [`idle_class`]).
    pub fn start(self, ops: Arc<Ops>, device: OwnedFd, access: Access, idle: bool) {
        let idle = idle && self.idle;
        let device = Arc::new(device);
        for tx in self.starts {
            let _ = tx.send(Start {
                ops: ops.clone(),
                device: device.clone(),
                access,
                idle,
            });
        }
    }
}

struct Worker {
    qid: u16,
    ring: IoUring<squeue::Entry128, cqueue::Entry>,
    header: Box<[u8; HEADER]>,
    payload: Vec<u8>,
    iov: [libc::iovec; 2],
}

// SAFETY: the iovecs point into the worker's own boxes, which move with it.
unsafe impl Send for Worker {}

impl Worker {
    fn new(qid: u16) -> io::Result<Worker> {
        let ring = IoUring::<squeue::Entry128, cqueue::Entry>::builder()
            .setup_coop_taskrun()
            .build(4)?;
        // Any request fits: the largest write, or the largest read's readahead.
        let mut header = Box::new([0u8; HEADER]);
        let mut payload = vec![0u8; MAX_WRITE as usize];
        let iov = [
            libc::iovec {
                iov_base: header.as_mut_ptr().cast(),
                iov_len: HEADER,
            },
            libc::iovec {
                iov_base: payload.as_mut_ptr().cast(),
                iov_len: payload.len(),
            },
        ];
        Ok(Worker {
            qid,
            ring,
            header,
            payload,
            iov,
        })
    }

    fn pin(&self) {
        // SAFETY: a CPU set on the stack, for this thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(self.qid as usize, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) != 0 {
                log::debug!("io_uring: queue {} stays unpinned", self.qid);
            }
        }
    }

    /// The SQE for `cmd`: its iovecs (header and payload) and, in the command area,
    /// `struct fuse_uring_cmd_req` (flags, commit id, queue).
    fn sqe(&self, device: &OwnedFd, cmd: u32, commit_id: u64) -> squeue::Entry128 {
        let mut area = [0u8; 80];
        area[8..16].copy_from_slice(&commit_id.to_le_bytes());
        area[16..18].copy_from_slice(&self.qid.to_le_bytes());
        let mut sqe = opcode::UringCmd80::new(types::Fd(device.as_raw_fd()), cmd)
            .cmd(area)
            .addr(Some(self.iov.as_ptr() as u64))
            .build();
        // The crate sets no length: the kernel wants the iovec count (2) in `sqe->len`,
        // at byte 24 of the SQE (`struct io_uring_sqe`), which `Entry128` starts with.
        // SAFETY: Entry128 is `repr(C)` and begins with the 64-byte SQE.
        unsafe {
            let bytes = (&mut sqe as *mut squeue::Entry128).cast::<u8>();
            bytes.add(24).cast::<u32>().write_unaligned(2);
        }
        sqe
    }

    /// Send `sqe` and wait for its completion's result.
    fn exchange(&mut self, sqe: squeue::Entry128) -> io::Result<i32> {
        // SAFETY: the SQE's buffers (header, payload, iovecs) live as long as the worker,
        // which waits for the completion before touching them.
        unsafe {
            self.ring
                .submission()
                .push(&sqe)
                .map_err(|_| io::Error::other("submission queue full"))?;
        }
        loop {
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => return Err(e),
            }
            if let Some(cqe) = self.ring.completion().next() {
                return Ok(cqe.result());
            }
        }
    }

    fn serve(mut self, start: Start) {
        self.pin();
        if start.idle {
            idle_class(true);
        }
        let device = start.device.clone();
        // Registration waits for the kernel to have taken INIT's answer.
        let mut result;
        let mut tries = 0;
        loop {
            let sqe = self.sqe(&device, CMD_REGISTER, 0);
            result = self.exchange(sqe);
            match result {
                Ok(r) if r == -libc::EAGAIN && tries < 2000 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(1));
                }
                _ => break,
            }
        }
        loop {
            match result {
                Ok(0) => {}
                // The connection ended (unmount), or this process is exiting.
                Ok(r) if r == -libc::ENOTCONN || r == -libc::ECANCELED => return,
                Ok(r) => {
                    let e = io::Error::from_raw_os_error(-r);
                    log::warn!("io_uring queue {}: {e}; serving /dev/fuse", self.qid);
                    return;
                }
                Err(e) => {
                    log::warn!("io_uring queue {}: {e}; serving /dev/fuse", self.qid);
                    return;
                }
            }
            // A change (a commit, often) is done at the normal class, whatever else runs.
            let heavy = start.idle && changes(u32_at(&self.header[..], 4));
            if heavy {
                idle_class(false);
            }
            let unique = self.answer(&start);
            if heavy {
                idle_class(true);
            }
            let sqe = self.sqe(&device, CMD_COMMIT_AND_FETCH, unique);
            result = self.exchange(sqe);
        }
    }

    /// Do the request in the buffers and put its answer there; its unique id.
    fn answer(&mut self, start: &Start) -> u64 {
        let h = &self.header[..];
        let unique = u64_at(h, 8);
        let request = Request {
            opcode: u32_at(h, 4),
            nodeid: u64_at(h, 16),
            uid: u32_at(h, 24),
            op: &self.header[OP_IN..OP_IN * 2],
        };
        // The answer is written where the request's names and data were: they are read
        // from a copy (a name, mostly; a write's data at most).
        let size = (u32_at(&self.header[..], ENT_IN_OUT + 16) as usize).min(self.payload.len());
        let input = self.payload[..size].to_vec();
        let mut out = Out {
            buf: &mut self.payload[..],
            len: 0,
        };
        if log::log_enabled!(log::Level::Debug) {
            log::debug!(
                "FUSE({unique}) ino {:#018x} {} over io_uring queue {}",
                request.nodeid,
                op::name(request.opcode),
                self.qid
            );
        }
        let result = if allowed(&start.access, &request) {
            dispatch(&start.ops, &request, &input, &mut out)
        } else {
            Err(libc::EACCES)
        };
        let (error, len) = match result {
            Ok(()) => (0, out.len),
            Err(e) => (-e, 0),
        };
        let h = &mut self.header[..];
        put_u32(h, 0, 16 + len as u32);
        put_u32(h, 4, error as u32);
        put_u64(h, 8, unique);
        put_u32(h, ENT_IN_OUT + 16, len as u32);
        unique
    }
}

/// Move this thread to the idle scheduling class (`SCHED_IDLE`), or back to the normal
/// one.
///
/// Where the kernel wakes the process a request came from, when its answer is in,
/// decides what a request costs. The answer is committed by the thread that did the
/// work, on the requester's CPU: the scheduler sees that CPU busy, and the other idle,
/// and wakes the requester on the other. On a VM without guest halt polling, waking an
/// idle virtual CPU takes 20–40 µs, and the requester bounces between CPUs at every
/// request. A CPU whose only runnable thread is at the idle class counts as free, so
/// the requester is woken where it was, and the thread, no longer needed, yields to it.
/// Measured by hand on the 2-CPU VM of bench/results.md: an `open` and `close` through a
/// writable mount took 7–9 µs (against 10–50 µs at the normal class, 17–20 over
/// /dev/fuse), and a warm `grep -r` over the database's JSON 230–420 ms (860–1,900; 850).
/// With eight CPU-bound processes beside it, 20 µs (18.5 at the normal class; 208 over
/// /dev/fuse): the threads still got the CPU whenever the requester waited for them.
/// Requests that change something (a commit, often) are done at the normal class all
/// the same, so the threads wait at the idle class only where they may leave it again
/// (root, or an `RLIMIT_NICE` of 20: the kernel treats the idle class as nice 20).
fn idle_class(idle: bool) {
    let policy = if idle {
        libc::SCHED_IDLE
    } else {
        libc::SCHED_OTHER
    };
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sets this thread's own policy from a parameter on the stack.
    if unsafe { libc::sched_setscheduler(0, policy, &param) } != 0 {
        log::debug!("io_uring: {}", io::Error::last_os_error());
    }
}

/// Requests that may change the tree or an archive.
fn changes(opcode: u32) -> bool {
    matches!(
        opcode,
        op::SETATTR
            | op::UNLINK
            | op::RENAME
            | op::RENAME2
            | op::WRITE
            | op::FLUSH
            | op::FSYNC
            | op::CREATE
    )
}

struct Request<'a> {
    opcode: u32,
    nodeid: u64,
    uid: u32,
    op: &'a [u8],
}

/// fuser's rule for requests of other users than the mount's owner: only those the
/// kernel sends with whatever task's identity is at hand.
fn allowed(access: &Access, request: &Request) -> bool {
    use fuser::SessionACL;
    let other = request.uid != access.owner;
    let refused = match access.acl {
        SessionACL::All => false,
        SessionACL::RootAndOwner => other && request.uid != 0,
        SessionACL::Owner => other,
    };
    !refused
        || matches!(
            request.opcode,
            op::READ
                | op::READDIR
                | op::READDIRPLUS
                | op::WRITE
                | op::FSYNC
                | op::FSYNCDIR
                | op::RELEASE
                | op::RELEASEDIR
        )
}

/// `enum fuse_opcode`, the ones answered here.
mod op {
    pub const LOOKUP: u32 = 1;
    pub const GETATTR: u32 = 3;
    pub const SETATTR: u32 = 4;
    pub const READLINK: u32 = 5;
    pub const MKDIR: u32 = 9;
    pub const UNLINK: u32 = 10;
    pub const RMDIR: u32 = 11;
    pub const RENAME: u32 = 12;
    pub const OPEN: u32 = 14;
    pub const READ: u32 = 15;
    pub const WRITE: u32 = 16;
    pub const STATFS: u32 = 17;
    pub const RELEASE: u32 = 18;
    pub const FSYNC: u32 = 20;
    pub const FLUSH: u32 = 25;
    pub const OPENDIR: u32 = 27;
    pub const READDIR: u32 = 28;
    pub const RELEASEDIR: u32 = 29;
    pub const FSYNCDIR: u32 = 30;
    pub const ACCESS: u32 = 34;
    pub const CREATE: u32 = 35;
    pub const READDIRPLUS: u32 = 44;
    pub const RENAME2: u32 = 45;

    /// As `-o debug` logs it (fuser's spelling).
    pub fn name(opcode: u32) -> &'static str {
        match opcode {
            LOOKUP => "LOOKUP",
            GETATTR => "GETATTR",
            SETATTR => "SETATTR",
            READLINK => "READLINK",
            MKDIR => "MKDIR",
            UNLINK => "UNLINK",
            RMDIR => "RMDIR",
            RENAME => "RENAME",
            OPEN => "OPEN",
            READ => "READ",
            WRITE => "WRITE",
            STATFS => "STATFS",
            RELEASE => "RELEASE",
            FSYNC => "FSYNC",
            FLUSH => "FLUSH",
            OPENDIR => "OPENDIR",
            READDIR => "READDIR",
            RELEASEDIR => "RELEASEDIR",
            FSYNCDIR => "FSYNCDIR",
            ACCESS => "ACCESS",
            CREATE => "CREATE",
            READDIRPLUS => "READDIRPLUS",
            RENAME2 => "RENAME2",
            _ => "(not served: ENOSYS)",
        }
    }
}

/// `FATTR_*`: which fields of `fuse_setattr_in` a setattr sets.
mod fattr {
    pub const MODE: u32 = 1 << 0;
    pub const UID: u32 = 1 << 1;
    pub const GID: u32 = 1 << 2;
    pub const SIZE: u32 = 1 << 3;
    pub const ATIME: u32 = 1 << 4;
    pub const MTIME: u32 = 1 << 5;
    pub const FH: u32 = 1 << 6;
    pub const ATIME_NOW: u32 = 1 << 7;
    pub const MTIME_NOW: u32 = 1 << 8;
}

/// The request's work, its answer's arguments written to `out`. Operations the fuser
/// adapter leaves to fuser's defaults get the same answers here (ENOSYS, mostly).
fn dispatch(ops: &Ops, r: &Request, payload: &[u8], out: &mut Out) -> Result<(), i32> {
    let ino = r.nodeid;
    let op = r.op;
    match r.opcode {
        op::LOOKUP => out.entry(&ops.lookup(ino, name(payload, 0)?)?),
        op::GETATTR => {
            let (attr, ttl) = ops.getattr(ino)?;
            out.attr_out(&attr, ttl);
        }
        op::SETATTR => {
            let valid = u32_at(op, 0);
            let set = |bit: u32| valid & bit != 0;
            let time = |now: u32, bit: u32, secs: usize, nsecs: usize| {
                if set(now) {
                    Some(fuser::TimeOrNow::Now)
                } else if set(bit) {
                    Some(fuser::TimeOrNow::SpecificTime(time_of(
                        u64_at(op, secs) as i64,
                        u32_at(op, nsecs),
                    )))
                } else {
                    None
                }
            };
            let change = Change {
                mode: set(fattr::MODE).then(|| u32_at(op, 68)),
                uid: set(fattr::UID).then(|| u32_at(op, 76)),
                gid: set(fattr::GID).then(|| u32_at(op, 80)),
                size: set(fattr::SIZE).then(|| u64_at(op, 16)),
                atime: time(fattr::ATIME_NOW, fattr::ATIME, 32, 56),
                mtime: time(fattr::MTIME_NOW, fattr::MTIME, 40, 60),
                fh: set(fattr::FH).then(|| u64_at(op, 8)),
            };
            let (attr, ttl) = ops.setattr(ino, change)?;
            out.attr_out(&attr, ttl);
        }
        op::READLINK => out.bytes(ops.readlink(ino)?.as_bytes()),
        op::MKDIR => return Err(ops.mkdir()),
        op::RMDIR => return Err(ops.rmdir()),
        op::UNLINK => ops.unlink(ino, name(payload, 0)?)?,
        op::RENAME | op::RENAME2 => {
            let flags = if r.opcode == op::RENAME2 {
                u32_at(op, 8)
            } else {
                0
            };
            let from = name(payload, 0)?;
            let to = name(payload, from.len() + 1)?;
            ops.rename(ino, from, u64_at(op, 0), to, flags)?;
        }
        op::OPEN => out.open_out(&ops.open(ino, u32_at(op, 0) as i32)?),
        op::OPENDIR => out.open_out(&ops.opendir(ino)?),
        op::READ => {
            let size = u32_at(op, 16).min(out.buf.len() as u32);
            out.bytes(&ops.read(ino, u64_at(op, 0), u64_at(op, 8), size)?);
        }
        op::WRITE => {
            let size = (u32_at(op, 16) as usize).min(payload.len());
            let written = ops.write(ino, u64_at(op, 0), u64_at(op, 8), &payload[..size])?;
            out.u32(written);
            out.u32(0);
        }
        op::FLUSH => ops.flush(ino, u64_at(op, 0))?,
        op::FSYNC => ops.fsync(ino, u64_at(op, 0))?,
        op::RELEASE => ops.release(ino, u64_at(op, 0)),
        op::RELEASEDIR => {}
        op::READDIR => {
            let limit = (u32_at(op, 16) as usize).min(out.buf.len());
            ops.readdir(ino, u64_at(op, 8), |child, next, kind, name| {
                !out.dirent(limit, child, next, kind, name)
            })?;
        }
        op::READDIRPLUS => {
            let limit = (u32_at(op, 16) as usize).min(out.buf.len());
            ops.readdirplus(ino, u64_at(op, 8), |entry, next, name| {
                !out.direntplus(limit, entry, next, name)
            })?;
        }
        op::STATFS => {
            let s = ops.statfs();
            for n in [s.blocks, s.bfree, s.bavail, s.files, s.ffree] {
                out.u64(n);
            }
            for n in [s.block, s.namelen, s.block, 0, 0, 0, 0, 0, 0, 0] {
                out.u32(n);
            }
        }
        op::ACCESS => ops.access(ino)?,
        op::CREATE => {
            let (entry, handle) = ops.create(ino, name(payload, 0)?, u32_at(op, 0) as i32)?;
            out.entry(&entry);
            out.open_out(&handle);
        }
        _ => return Err(libc::ENOSYS),
    }
    Ok(())
}

/// The NUL-terminated name at `at` of a request's payload.
fn name(payload: &[u8], at: usize) -> Result<&OsStr, i32> {
    let rest = payload.get(at..).ok_or(libc::EINVAL)?;
    let end = rest.iter().position(|&b| b == 0).ok_or(libc::EINVAL)?;
    Ok(OsStr::from_bytes(&rest[..end]))
}

fn time_of(secs: i64, nsecs: u32) -> SystemTime {
    let nsecs = Duration::from_nanos(u64::from(nsecs.min(999_999_999)));
    if secs >= 0 {
        UNIX_EPOCH + Duration::from_secs(secs as u64) + nsecs
    } else {
        UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs()) + nsecs
    }
}

/// Seconds and nanoseconds since the epoch, before it negative.
fn secs_of(t: SystemTime) -> (u64, u32) {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => (d.as_secs(), d.subsec_nanos()),
        Err(e) => {
            let d = e.duration();
            let (mut secs, mut nsecs) = (-(d.as_secs() as i64), d.subsec_nanos());
            if nsecs > 0 {
                secs -= 1;
                nsecs = 1_000_000_000 - nsecs;
            }
            (secs as u64, nsecs)
        }
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |s| u32::from_le_bytes(s.try_into().unwrap_or_default()))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .map_or(0, |s| u64::from_le_bytes(s.try_into().unwrap_or_default()))
}

fn put_u32(b: &mut [u8], at: usize, n: u32) {
    b[at..at + 4].copy_from_slice(&n.to_le_bytes());
}

fn put_u64(b: &mut [u8], at: usize, n: u64) {
    b[at..at + 8].copy_from_slice(&n.to_le_bytes());
}

/// An answer's arguments, written into the payload buffer.
struct Out<'a> {
    buf: &'a mut [u8],
    len: usize,
}

const ATTR: usize = 88;
const ENTRY_OUT: usize = 40 + ATTR;
const DIRENT: usize = 24;

impl Out<'_> {
    fn u32(&mut self, n: u32) {
        put_u32(self.buf, self.len, n);
        self.len += 4;
    }

    fn u64(&mut self, n: u64) {
        put_u64(self.buf, self.len, n);
        self.len += 8;
    }

    fn bytes(&mut self, data: &[u8]) {
        let data = &data[..data.len().min(self.buf.len() - self.len)];
        self.buf[self.len..self.len + data.len()].copy_from_slice(data);
        self.len += data.len();
    }

    /// `struct fuse_attr`.
    fn attr(&mut self, a: &Attr) {
        let times = [a.atime, a.mtime, a.ctime].map(secs_of);
        self.u64(a.ino);
        self.u64(a.size);
        self.u64(a.size.div_ceil(512));
        for (secs, _) in times {
            self.u64(secs);
        }
        for (_, nsecs) in times {
            self.u32(nsecs);
        }
        self.u32(mode_bits(a.kind) | u32::from(a.perm));
        self.u32(a.nlink);
        self.u32(a.uid);
        self.u32(a.gid);
        self.u32(0); // rdev
        self.u32(4096); // blksize
        self.u32(0); // flags
    }

    /// `struct fuse_entry_out`.
    fn entry(&mut self, e: &Entry) {
        let (entry, attr) = (split(e.entry_ttl), split(e.attr_ttl));
        self.u64(e.attr.ino);
        self.u64(0); // generation
        self.u64(entry.0);
        self.u64(attr.0);
        self.u32(entry.1);
        self.u32(attr.1);
        self.attr(&e.attr);
    }

    /// `struct fuse_attr_out`.
    fn attr_out(&mut self, attr: &Attr, ttl: Duration) {
        let (secs, nsecs) = split(ttl);
        self.u64(secs);
        self.u32(nsecs);
        self.u32(0);
        self.attr(attr);
    }

    /// `struct fuse_open_out`.
    fn open_out(&mut self, h: &Handle) {
        self.u64(h.fh);
        self.u32(h.flags.bits());
        self.u32(0); // backing id
    }

    /// `struct fuse_dirent`, padded to 8 bytes; false when it does not fit in `limit`.
    fn dirent(&mut self, limit: usize, ino: u64, next: u64, kind: FileType, name: &str) -> bool {
        let size = (DIRENT + name.len()).next_multiple_of(8);
        if self.len + size > limit {
            return false;
        }
        self.u64(ino);
        self.u64(next);
        self.u32(name.len() as u32);
        self.u32(mode_bits(kind) >> 12);
        self.bytes(name.as_bytes());
        let pad = size - DIRENT - name.len();
        self.buf[self.len..self.len + pad].fill(0);
        self.len += pad;
        true
    }

    /// `struct fuse_direntplus`: an entry and its dirent; false when it does not fit.
    fn direntplus(&mut self, limit: usize, e: &Entry, next: u64, name: &str) -> bool {
        let size = ENTRY_OUT + (DIRENT + name.len()).next_multiple_of(8);
        if self.len + size > limit {
            return false;
        }
        self.entry(e);
        self.dirent(limit, e.attr.ino, next, e.attr.kind, name)
    }
}

fn split(ttl: Duration) -> (u64, u32) {
    (ttl.as_secs(), ttl.subsec_nanos())
}

fn mode_bits(kind: FileType) -> u32 {
    match kind {
        FileType::Dir => libc::S_IFDIR,
        FileType::File => libc::S_IFREG,
        FileType::Symlink => libc::S_IFLNK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_name_every_cpu_of_every_range() {
        assert_eq!(cpu_list("0-3,8-9\n"), Some(vec![0, 1, 2, 3, 8, 9]));
        assert_eq!(cpu_list("0"), Some(vec![0]));
        assert_eq!(cpu_list("3-1"), None);
        assert_eq!(cpu_list("x"), None);
        assert!(cpus("possible").is_some_and(|c| !c.is_empty()));
    }

    #[test]
    fn names_end_at_their_nul_and_a_missing_one_is_refused() {
        let payload = b"old.json\0new.json\0";
        let from = name(payload, 0).unwrap();
        assert_eq!(from, "old.json");
        assert_eq!(name(payload, from.len() + 1).unwrap(), "new.json");
        assert_eq!(name(b"unterminated", 0), Err(libc::EINVAL));
        assert_eq!(name(payload, 100), Err(libc::EINVAL));
    }

    #[test]
    fn times_before_the_epoch_round_trip() {
        for (secs, nsecs) in [(0i64, 0u32), (1_700_000_000, 5), (-2, 250_000_000)] {
            let t = time_of(secs, nsecs);
            assert_eq!(secs_of(t), (secs as u64, nsecs));
        }
    }

    #[test]
    fn a_dirent_is_padded_and_one_past_the_limit_is_left_out() {
        let mut buf = vec![0xffu8; 64];
        let mut out = Out {
            buf: &mut buf,
            len: 0,
        };
        assert!(out.dirent(64, 7, 1, FileType::File, "a.asm"));
        assert_eq!(out.len, 32);
        assert!(!out.dirent(64, 8, 2, FileType::Dir, "a-longer-name"));
        assert_eq!(out.len, 32);
        assert_eq!(u32_at(&buf, 16), 5);
        assert_eq!(u32_at(&buf, 20), libc::DT_REG as u32);
        assert_eq!(&buf[24..32], b"a.asm\0\0\0");
    }
}
