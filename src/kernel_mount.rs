//! Making the kernel's FUSE mount, and unmaking it: directly when this process is root,
//! through the setuid `fusermount3` otherwise, as libfuse does. Either way the mount's
//! type is `fuse.shaderfs` (`findmnt -t fuse.shaderfs`, `mount -t fuse.shaderfs`, fstab
//! and systemd all agree), and the daemon serves the /dev/fuse descriptor it got.
//!
//! The fusermount3 protocol (libfuse's `fusermount.c`): run `fusermount3 -o OPTIONS -- MOUNTPOINT`
//! with `_FUSE_COMMFD` naming one end of a Unix socket pair; it opens /dev/fuse, mounts
//! with `fd=N,rootmode=…,user_id=…,group_id=…` added to the options, sends the
//! descriptor back in one byte's `SCM_RIGHTS`, and exits. `fusermount3 -u` unmounts
//! (only mounts it made for the same user).
//!
//! fusermount3 opens /dev/fuse with the user's file-system identity, not root's: where
//! /dev/fuse is not readable and writable by the user (mode 0600, say) no user can mount,
//! through fusermount3 or otherwise; the error says so.

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const PROGRAM: &str = "fusermount3";
const DEV_FUSE: &str = "/dev/fuse";

/// Whether this process must mount through fusermount3: it is not root (mount(2) of a
/// FUSE file system needs CAP_SYS_ADMIN), or it cannot open /dev/fuse itself.
pub fn needed() -> bool {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return true;
    }
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(DEV_FUSE)
    {
        Ok(_) => false,
        Err(e) => matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)),
    }
}

/// The `-o` list fusermount3 gets for fuser's mount options, as libfuse writes it:
/// `fsname=` and `subtype=` with `,` and `\` escaped by a backslash (fusermount3 undoes
/// it), and `allow_other` for either access rule wider than the owner's (the kernel knows
/// no `allow_root`; fuser refuses other users' requests itself).
pub fn option_list(options: &[fuser::MountOption], acl: fuser::SessionACL) -> String {
    use fuser::MountOption as K;
    let mut list: Vec<String> = options
        .iter()
        .filter_map(|option| {
            Some(match option {
                K::FSName(name) => format!("fsname={}", escape(name)),
                K::Subtype(name) => format!("subtype={}", escape(name)),
                K::CUSTOM(text) => text.clone(),
                // fusermount3 then stays to watch the socket, which this module closes.
                K::AutoUnmount => return None,
                K::DefaultPermissions => "default_permissions".into(),
                K::Dev => "dev".into(),
                K::NoDev => "nodev".into(),
                K::Suid => "suid".into(),
                K::NoSuid => "nosuid".into(),
                K::RO => "ro".into(),
                K::RW => "rw".into(),
                K::Exec => "exec".into(),
                K::NoExec => "noexec".into(),
                K::Atime => "atime".into(),
                K::NoAtime => "noatime".into(),
                K::DirSync => "dirsync".into(),
                K::Sync => "sync".into(),
                K::Async => "async".into(),
            })
        })
        .collect();
    if acl != fuser::SessionACL::Owner {
        list.push("allow_other".into());
    }
    list.join(",")
}

fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, ',' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A mount made here: unmounting goes the way it was made.
#[derive(Debug)]
pub struct Mounted {
    mountpoint: PathBuf,
    /// fusermount3 made it (and must unmake it); else mount(2) did.
    by_fusermount: bool,
    /// A duplicate of the session's /dev/fuse descriptor, to tell whether the kernel still
    /// has the mount (libfuse looks before unmounting too: once a mount is gone another
    /// may be made at the same place, and it must not be the one unmounted).
    device: OwnedFd,
}

impl Mounted {
    /// Whether the kernel still serves the mount through this descriptor.
    pub fn is_connected(&self) -> bool {
        let mut poll = libc::pollfd {
            fd: self.device.as_raw_fd(),
            events: 0,
            revents: 0,
        };
        loop {
            // SAFETY: one valid pollfd, no waiting.
            let n = unsafe { libc::poll(&mut poll, 1, 0) };
            if n >= 0 {
                // An aborted FUSE connection polls as POLLERR.
                return n == 0 || poll.revents & libc::POLLERR == 0;
            }
            if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return true;
            }
        }
    }

    /// Detach the mount (libfuse's unmount on exit): it leaves the tree at once; the
    /// kernel ends the session when the last open file under it closes.
    pub fn unmount(&self) -> Result<(), String> {
        if !self.is_connected() {
            return Ok(());
        }
        match self.by_fusermount {
            true => unmount(&self.mountpoint, true),
            false => detach(&self.mountpoint),
        }
    }
}

/// The mount's file-system type: FUSE, with the subtype fusermount3 also writes.
pub const TYPE: &str = "fuse.shaderfs";

/// Mount directly (mount(2), as root): open /dev/fuse and mount `source` on `mountpoint`
/// as [`TYPE`], with fuser's options turned into what the kernel reads.
pub fn mount_direct(
    source: &str,
    mountpoint: &Path,
    options: &[fuser::MountOption],
    acl: fuser::SessionACL,
) -> Result<(OwnedFd, Mounted), String> {
    use fuser::MountOption as K;
    use std::os::unix::fs::MetadataExt;
    let device = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(DEV_FUSE)
        .map_err(|e| format!("{DEV_FUSE}: {e}"))?;
    let root_mode = std::fs::metadata(mountpoint)
        .map_err(|e| e.to_string())?
        .mode()
        & libc::S_IFMT;
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let mut data = format!(
        "fd={},rootmode={root_mode:o},user_id={uid},group_id={gid}",
        device.as_raw_fd()
    );
    let mut flags = libc::MS_NOSUID | libc::MS_NODEV;
    for option in options {
        match option {
            K::DefaultPermissions => data.push_str(",default_permissions"),
            K::Dev => flags &= !libc::MS_NODEV,
            K::Suid => flags &= !libc::MS_NOSUID,
            K::NoDev => flags |= libc::MS_NODEV,
            K::NoSuid => flags |= libc::MS_NOSUID,
            K::RO => flags |= libc::MS_RDONLY,
            K::NoExec => flags |= libc::MS_NOEXEC,
            K::NoAtime => flags |= libc::MS_NOATIME,
            K::Sync => flags |= libc::MS_SYNCHRONOUS,
            K::DirSync => flags |= libc::MS_DIRSYNC,
            _ => {}
        }
    }
    if acl != fuser::SessionACL::Owner {
        data.push_str(",allow_other");
    }
    let c = |text: &str| std::ffi::CString::new(text).map_err(|_| format!("{text:?}: a NUL byte"));
    let (c_source, c_type, c_data) = (c(source)?, c(TYPE)?, c(&data)?);
    let c_target = std::ffi::CString::new(mountpoint.as_os_str().as_encoded_bytes())
        .map_err(|_| "a mount point with a NUL byte".to_string())?;
    // SAFETY: mount(2) with valid C strings that outlive the call.
    let mounted = unsafe {
        libc::mount(
            c_source.as_ptr(),
            c_target.as_ptr(),
            c_type.as_ptr(),
            flags,
            c_data.as_ptr().cast(),
        )
    };
    if mounted != 0 {
        return Err(format!("mount(2): {}", io::Error::last_os_error()));
    }
    let device = OwnedFd::from(device);
    let copy = device
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| format!("duplicating the /dev/fuse descriptor: {e}"))?;
    Ok((
        device,
        Mounted {
            mountpoint: mountpoint.to_path_buf(),
            by_fusermount: false,
            device: copy,
        },
    ))
}

/// `umount2(MNT_DETACH)`.
fn detach(mountpoint: &Path) -> Result<(), String> {
    let c_target = std::ffi::CString::new(mountpoint.as_os_str().as_encoded_bytes())
        .map_err(|_| "a mount point with a NUL byte".to_string())?;
    // SAFETY: a plain system call with a valid C string.
    match unsafe { libc::umount2(c_target.as_ptr(), libc::MNT_DETACH) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error().to_string()),
    }
}

/// Mount `mountpoint` with the `-o` list `options` and return the /dev/fuse descriptor
/// to serve it (close-on-exec), with what fusermount3 said on the way (warnings such as
/// `unsafe option suid ignored`). The error is fusermount3's own words.
pub fn mount(mountpoint: &Path, options: &str) -> Result<(OwnedFd, Mounted, String), String> {
    let (ours, theirs) =
        UnixStream::pair().map_err(|e| format!("a socket pair for {PROGRAM}: {e}"))?;
    let their_fd = theirs.as_raw_fd();
    let mut command = Command::new(PROGRAM);
    command
        .arg("-o")
        .arg(options)
        .arg("--")
        .arg(mountpoint)
        .env("_FUSE_COMMFD", their_fd.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: only fcntl, async-signal-safe, between fork and exec: fusermount3 inherits
    // its end of the pair, which std opened close-on-exec.
    unsafe {
        command.pre_exec(move || {
            if libc::fcntl(their_fd, libc::F_SETFD, 0) == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command.spawn().map_err(|e| spawn_error(&e))?;
    drop(theirs);
    let received = receive_fd(&ours);
    drop(ours);
    let output = child
        .wait_with_output()
        .map_err(|e| format!("waiting for {PROGRAM}: {e}"))?;
    let said = String::from_utf8_lossy(&output.stderr).trim().to_string();
    let device = match received {
        Ok(Some(fd)) => fd,
        Ok(None) | Err(_) if !said.is_empty() => return Err(with_hint(said)),
        Ok(None) => {
            return Err(format!(
                "{PROGRAM} ({}) sent no /dev/fuse descriptor",
                output.status
            ))
        }
        Err(e) => return Err(format!("receiving /dev/fuse from {PROGRAM}: {e}")),
    };
    let copy = device
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| format!("duplicating the /dev/fuse descriptor: {e}"))?;
    let mounted = Mounted {
        mountpoint: mountpoint.to_path_buf(),
        by_fusermount: true,
        device: copy,
    };
    Ok((device, mounted, said))
}

/// `fusermount3 -u [-z] -- MOUNTPOINT`; the error is its own words.
pub fn unmount(mountpoint: &Path, lazy: bool) -> Result<(), String> {
    let mut command = Command::new(PROGRAM);
    command.arg("-u");
    if lazy {
        command.arg("-z");
    }
    let output = command
        .arg("--")
        .arg(mountpoint)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| spawn_error(&e))?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr).trim().to_string();
    Err(if said.is_empty() {
        format!("{PROGRAM} -u: {}", output.status)
    } else {
        said
    })
}

fn spawn_error(e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::NotFound {
        format!(
            "{PROGRAM} not found (it comes with fuse3): a user who is not root mounts through it"
        )
    } else {
        format!("running {PROGRAM}: {e}")
    }
}

/// fusermount3's words, and why when it could not open /dev/fuse: the device's mode.
fn with_hint(said: String) -> String {
    if !said.contains(DEV_FUSE) {
        return said;
    }
    let Ok(c_path) = std::ffi::CString::new(DEV_FUSE) else {
        return said;
    };
    // SAFETY: access with a valid C string; it checks with the real user and group, as
    // fusermount3 opens the device.
    if unsafe { libc::access(c_path.as_ptr(), libc::R_OK | libc::W_OK) } == 0 {
        return said;
    }
    use std::os::unix::fs::MetadataExt;
    let mode = std::fs::metadata(DEV_FUSE).map_or(":".into(), |m| {
        let mode = m.mode() & 0o7777;
        format!(" has mode {mode:04o}, owner {}:{}:", m.uid(), m.gid())
    });
    format!(
        "{said} ({DEV_FUSE}{mode} a user who is not root can mount only where it is readable \
         and writable by that user, as with the mode 0666 distributions give it)"
    )
}

/// One byte with the descriptor in `SCM_RIGHTS`; `None` when fusermount3 closed its end
/// without sending one (it failed, and said why on its standard error).
fn receive_fd(socket: &UnixStream) -> io::Result<Option<OwnedFd>> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: byte.len(),
    };
    // Room for a few descriptors' control message, aligned as cmsghdr needs.
    let mut control = [0u64; 16];
    // SAFETY: an all-zero msghdr is valid; the pointers set below outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    loop {
        // SAFETY: msg describes buffers owned by this frame.
        let n = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n > 0 {
            break;
        }
        if n == 0 {
            return Ok(None);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
    let mut first: Option<OwnedFd> = None;
    // SAFETY: the CMSG_* macros walk the control buffer recvmsg filled, within
    // msg_controllen; each descriptor received is owned here from now on (extra ones
    // are closed by dropping them).
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg).cast::<libc::c_int>();
                let bytes = (*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                for i in 0..bytes / std::mem::size_of::<libc::c_int>() {
                    let fd = OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i)));
                    if first.is_none() {
                        first = Some(fd);
                    }
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    if first.is_none() && msg.msg_flags & libc::MSG_CTRUNC != 0 {
        return Err(io::Error::other("the control message was truncated"));
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuser::MountOption as K;

    #[test]
    fn options_as_libfuse_passes_them() {
        let options = [
            K::FSName(r"/games/a,b\c.sdp".into()),
            K::Subtype("shaderfs".into()),
            K::DefaultPermissions,
            K::RO,
            K::NoDev,
            K::NoAtime,
        ];
        assert_eq!(
            option_list(&options, fuser::SessionACL::Owner),
            r"fsname=/games/a\,b\\c.sdp,subtype=shaderfs,default_permissions,ro,nodev,noatime"
        );
        for acl in [fuser::SessionACL::All, fuser::SessionACL::RootAndOwner] {
            assert_eq!(option_list(&[K::RW], acl), "rw,allow_other");
        }
        assert_eq!(option_list(&[K::AutoUnmount], fuser::SessionACL::Owner), "");
    }
}
