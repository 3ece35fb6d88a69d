//! Copies written back over files no save goes into: a read-only view (`archive.json`,
//! an index) and `.shaderfs/errors`.
//!
//! `cp -a copy/. mnt/` writes every file of a copy of the tree back, those too. What it
//! writes into one is taken as no save when it is what the file holds, or what it held
//! before a save of another file changed it ([`super::superseded`]); for the log, lines
//! the log has. Anything else is refused as soon as it can no longer become such a copy:
//! at the `write` that makes it so (EPERM, which even a shell's `>` reports), and at
//! `close()` for a copy cut short.

use super::fs::{Errno, State, Vfs};
use super::handles::Shown;
use super::tree::{Ino, NodeKind, Origin};
use super::Blob;

/// What a copy written over one such file may hold.
pub(super) enum Copies {
    /// What the view shows, and what it showed before later saves of other files.
    View(Vec<Blob>),
    /// The log's lines.
    Log(Blob),
}

/// Whether a file of `origin` takes only copies of itself.
pub(super) fn copies_only(origin: &Origin) -> bool {
    matches!(
        origin,
        Origin::Archive {
            writable: false,
            ..
        } | Origin::ErrorLog
    )
}

impl Copies {
    /// Whether `data` is such a copy (`whole`), or the start of one.
    pub fn allow(&self, data: &[u8], whole: bool) -> bool {
        match self {
            Copies::View(contents) => contents.iter().any(|c| match whole {
                true => c.as_slice() == data,
                false => c.as_slice().starts_with(data),
            }),
            Copies::Log(log) => {
                let lines: Vec<&[u8]> = log.as_slice().split(|&b| b == b'\n').collect();
                let mut written = data.split(|&b| b == b'\n').peekable();
                while let Some(line) = written.next() {
                    let last = written.peek().is_none();
                    let fits = match last && !whole {
                        true => lines.iter().any(|l| l.starts_with(line)),
                        false => lines.contains(&line),
                    };
                    if !fits {
                        return false;
                    }
                }
                true
            }
        }
    }
}

impl Vfs {
    /// What a copy written over file `ino` may hold, if it is a file that takes only
    /// copies. Called with the tree's lock held (the view is rendered from its cache, or
    /// now: `archive.json` and indexes are small).
    pub(super) fn copies_of(&self, state: &State, ino: Ino) -> Option<Copies> {
        let node = state.tree.get(ino)?;
        let NodeKind::File { origin, .. } = &node.kind else {
            return None;
        };
        match origin {
            Origin::ErrorLog => Some(Copies::Log(self.errors_text(state))),
            Origin::Archive {
                writable: false,
                key,
                ..
            } => {
                let id = node.archive?;
                let path = state.tree.path(ino);
                let shown = Shown::Render {
                    id,
                    snap: self.snapshot(id),
                    key: *key,
                    path: path.clone(),
                };
                let mut contents: Vec<Blob> = self.produce(shown).ok().into_iter().collect();
                contents.extend(self.superseded.of(id, &path));
                Some(Copies::View(contents))
            }
            _ => None,
        }
    }

    /// The `close()` of a writer of `.shaderfs/errors`: a copy of the log changes nothing;
    /// anything else is refused.
    pub(super) fn close_log_copy(&self, ino: Ino) -> Result<(), Errno> {
        let state = self.state.read();
        let Some(NodeKind::File {
            buffer: Some(b), ..
        }) = state.tree.get(ino).map(|n| &n.kind)
        else {
            return Ok(());
        };
        if let Some(e) = b.refused {
            return Err(e);
        }
        let fits = self
            .copies_of(&state, ino)
            .is_some_and(|c| c.allow(b.bytes(), true));
        drop(state);
        match fits {
            true => Ok(()),
            false => Err(self.refuse_log_copy()),
        }
    }

    /// Report content for `.shaderfs/errors` that is no copy of it: EPERM.
    pub(super) fn refuse_log_copy(&self) -> Errno {
        self.report(
            ".shaderfs/errors",
            "not saved: the mount writes its log itself; it takes only a copy of what it \
             held (a sync tool sending it back)",
        );
        libc::EPERM
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_takes_its_content_and_what_it_held_and_their_starts() {
        let c = Copies::View(vec![
            Blob::owned(b"{\"a\": 1}".to_vec()),
            Blob::owned(b"old".to_vec()),
        ]);
        assert!(c.allow(b"{\"a\"", false));
        assert!(c.allow(b"{\"a\": 1}", true));
        assert!(c.allow(b"old", true));
        assert!(!c.allow(b"{\"a\"", true), "a copy cut short");
        assert!(!c.allow(b"x", false));
        assert!(c.allow(b"", false));
    }

    #[test]
    fn the_log_takes_lines_it_has() {
        let c = Copies::Log(Blob::owned(b"t1 a: one\nt2 b: two\n".to_vec()));
        assert!(c.allow(b"t1 a: one\n", true));
        assert!(c.allow(b"t2 b: two\nt1 a: one\n", true));
        assert!(c.allow(b"t2 b: t", false), "a line still being written");
        assert!(!c.allow(b"t2 b: t", true));
        assert!(!c.allow(b"junk\n", false));
        assert!(c.allow(b"", true));
    }
}
