//! What the mount holds that the archive does not, listed at the end of
//! `.shaderfs/errors` for as long as it is so, and by `shaderfs umount` when it drops
//! it: scratch files written and left, files emptied and not written again, new files
//! with no content yet, and files hidden (renamed aside or removed) that the archive
//! still holds.

use super::errors::format_time;
use super::fs::{State, Vfs};
use super::tree::{NodeKind, Origin};

/// The words `shaderfs umount` looks for to tell the user what it drops.
pub const KEPT_IN_MEMORY: &str = "kept in memory only, not in the archive";

impl Vfs {
    /// One line per thing the archive does not hold, oldest first.
    pub(super) fn unsaved(&self, state: &State) -> Vec<String> {
        let mut notes = Vec::new();
        for (ino, node) in state.tree.nodes() {
            let (
                Some(id),
                NodeKind::File {
                    origin,
                    buffer: Some(b),
                    writers,
                },
            ) = (node.archive, &node.kind)
            else {
                continue;
            };
            // A scratch file is memory only from its first write, and a program that
            // wrote it may look right after its close(), before the kernel's release
            // of the handle (which comes on its own time) has arrived: it shows while
            // open too. An empty file only once nobody writes it.
            if *writers != 0 && !matches!(origin, Origin::Scratch) {
                continue;
            }
            let path = self.user_path(id, &state.tree.path(ino));
            let what = match origin {
                Origin::Scratch if !b.is_empty() => format!(
                    "{KEPT_IN_MEMORY} ({} bytes): rename it over a file of the archive to \
                     save it; it is dropped at unmount",
                    b.len()
                ),
                Origin::Pending if b.is_waiting() => {
                    "created, still empty, not in the archive: write its content to add it"
                        .to_string()
                }
                Origin::Archive { .. } if b.is_waiting() => {
                    "emptied and not saved (an empty file is no content to save): the \
                     archive still holds what it had; write the new content to save it"
                        .to_string()
                }
                _ => continue,
            };
            notes.push((
                b.modified,
                format!("{} {path}: {what}\n", format_time(b.modified)),
            ));
        }
        for (id, path, when) in state.tree.hidden() {
            let path = self.user_path(id, path);
            notes.push((
                when,
                format!(
                    "{} {path}: not shown (renamed aside or removed), still in the archive: \
                     a file written under this name saves it\n",
                    format_time(when)
                ),
            ));
        }
        notes.sort();
        notes.into_iter().map(|(_, line)| line).collect()
    }
}
