//! Whether a save into an archive would land now: the one place that decides what an
//! archive's `archive.json` says under `writable`.
//!
//! A read-write mount decides at mount time which archives it can save into (the mount
//! is read-write, the archive's folder and file can be written: `snapshot::unwritable`),
//! and shows the others read-only. A folder can change under the mount (`mount -o
//! remount,ro` of the file system holding it, a `chmod`): a commit then fails at its
//! temporary file in that folder, with EROFS or EACCES at `close()`. So a file that says
//! whether saves land ([`super::Archive::says_writable`]) is rendered, each time it is
//! read, with the same test made again: it says what a save would do then. Such files
//! change without a commit, so the kernel keeps neither their attributes nor their pages
//! (`attr.rs`, `handles.rs`), and the view cache keeps them with the answer they were
//! rendered with (`views.rs`).

use super::fs::Vfs;
use super::snapshot;
use super::tree::ArchiveId;
use super::FileKey;

impl Vfs {
    /// Whether a save into archive `id` would land now; `Err` says why it would not.
    pub fn saves_land(&self, id: ArchiveId) -> Result<(), String> {
        let Some(mounted) = self.archives.get(id) else {
            return Err(format!("no archive {id}"));
        };
        if !self.writable(id) {
            return Err(match &mounted.read_only_because {
                Some(why) => format!("shown read-only: {why}"),
                None => "the mount is read-only".into(),
            });
        }
        match snapshot::unwritable(&mounted.path) {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }

    /// Whether file `key` of archive `id` says whether saves land and may change its
    /// answer: only in an archive the mount can save into (a read-only one says so for
    /// the mount's life).
    pub(super) fn says_saves(&self, id: ArchiveId, key: FileKey) -> bool {
        self.writable(id) && self.snapshot(id).archive.says_writable(key)
    }
}
