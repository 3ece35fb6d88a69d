//! The mounts of this process's namespace, from `/proc/self/mountinfo`: where `umount`
//! checks a mount point is ours, and where a refused second mount finds the first.
//! [`read_proc`] reads such lists whole.

use std::io::Read;

/// One mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    pub mount_point: String,
    /// `fuse`, `fuse.shaderfs`, `ext4`, …
    pub fstype: String,
    /// What was mounted: for shaderfs, the archive or folder.
    pub source: String,
    /// The mount's device, `MAJOR:MINOR` (a FUSE mount's is its connection's).
    pub device: String,
}

/// Every mount, or none when /proc cannot say.
pub fn mounts() -> Vec<MountEntry> {
    read_proc("/proc/self/mountinfo")
        .map(|info| info.lines().filter_map(parse_line).collect())
        .unwrap_or_default()
}

/// A list of /proc (`/proc/locks`, `/proc/self/mountinfo`) read with reads as large as it
/// can be. The kernel takes the lines of one read together (a page of them), and the next
/// read resumes at a line number: when another process changes the list between reads, a
/// line is lost or comes twice. `fs::read_to_string` would begin with a 32-byte read, and
/// so split even a list of two lines.
pub fn read_proc(path: &str) -> std::io::Result<String> {
    let mut text = String::with_capacity(256 << 10);
    std::fs::File::open(path)?.read_to_string(&mut text)?;
    Ok(text)
}

/// `36 35 98:0 /mnt1 /mnt/a\040b rw,noatime master:1 - fuse.shaderfs /src/x.sdp rw,…`
fn parse_line(line: &str) -> Option<MountEntry> {
    let fields: Vec<&str> = line.split(' ').collect();
    let sep = fields.iter().position(|f| *f == "-")?;
    Some(MountEntry {
        device: fields.get(2)?.to_string(),
        mount_point: unescape(fields.get(4)?),
        fstype: fields.get(sep + 1)?.to_string(),
        source: unescape(fields.get(sep + 2)?),
    })
}

/// A field with its octal escapes (`\040` for a space) undone.
fn unescape(field: &str) -> String {
    let mut out = Vec::new();
    let bytes = field.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() {
            if let Ok(v) = u8::from_str_radix(&field[i + 1..i + 4], 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_escapes() {
        let line =
            r"36 35 0:52 / /mnt/a\040b rw,nosuid shared:1 - fuse.shaderfs /src/x.sdp rw,user_id=0";
        assert_eq!(
            parse_line(line),
            Some(MountEntry {
                mount_point: "/mnt/a b".into(),
                fstype: "fuse.shaderfs".into(),
                source: "/src/x.sdp".into(),
                device: "0:52".into(),
            })
        );
        assert_eq!(parse_line("garbage"), None);
    }
}
