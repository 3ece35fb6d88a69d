//! What a save made stale elsewhere: the content other files of the archive held before
//! a save changed them as a consequence (the bytecode and constant table of a shader
//! whose asm was saved, `archive.json`).
//!
//! A copy of the tree made before the save still holds those contents, and a sync tool
//! sends them back: `rsync -a mnt/ copy/`, an edit of `copy/asm/X.asm`, then
//! `rsync -a copy/ mnt/` saves the asm, and the next run finds the mount's
//! `shaders/X` newer than the copy's and sends the copy's, the bytecode from before the
//! edit, which would undo it. Such a save is no save: the file keeps what the later save
//! made of it, and `.shaderfs/errors` says so. A file's entries go when the file itself
//! is saved; all of an archive's, when another program changes it.
//!
//! Bounded: a few contents per file, files of up to [`MOST_BYTES`] each, and
//! [`MOST_IN_ALL`] bytes in all, the oldest going first.

use std::sync::Arc;

use indexmap::IndexMap;
use parking_lot::Mutex;

use super::tree::ArchiveId;

/// Contents kept for one file: a shader saved through each of its views in turn leaves
/// each of the others one.
const PER_FILE: usize = 4;
/// Larger files are not kept (a program's listing of megabytes is not sent back whole
/// by a copy that was made before; and if it were, it would be saved).
const MOST_BYTES: usize = 1 << 20;
const MOST_IN_ALL: usize = 16 << 20;

#[derive(Default)]
pub(super) struct Superseded(Mutex<Inner>);

/// A file: its archive and path.
type File = (ArchiveId, Box<str>);

#[derive(Default)]
struct Inner {
    /// By file, in the order they were last noted.
    files: IndexMap<File, Vec<Arc<[u8]>>>,
    bytes: usize,
}

impl Superseded {
    /// `path` of archive `id` held `content` before a save of another file changed it.
    pub fn note(&self, id: ArchiveId, path: &str, content: &[u8]) {
        if content.len() > MOST_BYTES {
            return;
        }
        let mut inner = self.0.lock();
        let key = (id, Box::from(path));
        let mut kept = inner.files.shift_remove(&key).unwrap_or_default();
        if !kept.iter().any(|c| &c[..] == content) {
            kept.push(Arc::from(content));
            inner.bytes += content.len();
        }
        if kept.len() > PER_FILE {
            let gone = kept.remove(0);
            inner.bytes -= gone.len();
        }
        inner.files.insert(key, kept);
        while inner.bytes > MOST_IN_ALL {
            let Some((_, gone)) = inner.files.shift_remove_index(0) else {
                break;
            };
            inner.bytes -= gone.iter().map(|c| c.len()).sum::<usize>();
        }
    }

    /// Whether `content` is what `path` held before a later save of another file.
    pub fn holds(&self, id: ArchiveId, path: &str, content: &[u8]) -> bool {
        let inner = self.0.lock();
        let key = (id, Box::from(path));
        inner
            .files
            .get(&key)
            .is_some_and(|kept| kept.iter().any(|c| &c[..] == content))
    }

    /// What `path` held before later saves of other files.
    pub fn of(&self, id: ArchiveId, path: &str) -> Vec<super::Blob> {
        let inner = self.0.lock();
        let kept = inner.files.get(&(id, Box::from(path)));
        let owned = |c: &Arc<[u8]>| super::Blob::owned(c.to_vec());
        kept.map(|k| k.iter().map(owned).collect())
            .unwrap_or_default()
    }

    /// `path` was saved itself: what it held before is what its user now replaced.
    pub fn forget(&self, id: ArchiveId, path: &str) {
        let mut inner = self.0.lock();
        if let Some(gone) = inner.files.shift_remove(&(id, Box::from(path))) {
            inner.bytes -= gone.iter().map(|c| c.len()).sum::<usize>();
        }
    }

    /// Another program changed archive `id`: nothing it held before says anything now.
    pub fn forget_archive(&self, id: ArchiveId) {
        let mut inner = self.0.lock();
        let mut freed = 0;
        inner.files.retain(|(a, _), kept| {
            let keep = *a != id;
            if !keep {
                freed += kept.iter().map(|c| c.len()).sum::<usize>();
            }
            keep
        });
        inner.bytes -= freed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_noted_content_is_held_until_the_file_itself_is_saved() {
        let s = Superseded::default();
        s.note(0, "shaders/X.vso", b"old bytecode");
        assert!(s.holds(0, "shaders/X.vso", b"old bytecode"));
        assert!(!s.holds(0, "shaders/X.vso", b"other bytecode"));
        assert!(
            !s.holds(1, "shaders/X.vso", b"old bytecode"),
            "another archive's"
        );
        assert!(
            !s.holds(0, "ctab/X.vso.json", b"old bytecode"),
            "another file's"
        );
        s.forget(0, "shaders/X.vso");
        assert!(!s.holds(0, "shaders/X.vso", b"old bytecode"));
    }

    #[test]
    fn memory_is_bounded_per_file_and_in_all() {
        let s = Superseded::default();
        for i in 0..10u8 {
            s.note(0, "a", &[i; 8]);
        }
        assert!(!s.holds(0, "a", &[0; 8]), "the oldest went");
        assert!(s.holds(0, "a", &[9; 8]));
        let big = vec![1u8; MOST_BYTES];
        for i in 0..(MOST_IN_ALL / MOST_BYTES + 4) {
            s.note(0, &format!("f{i}"), &big);
        }
        assert!(s.0.lock().bytes <= MOST_IN_ALL);
        assert!(!s.holds(0, "f0", &big), "the oldest file went");
        assert!(!s.holds(0, "huge", &vec![0; MOST_BYTES + 1]));
        s.note(0, "huge", &vec![0; MOST_BYTES + 1]);
        assert!(
            !s.holds(0, "huge", &vec![0; MOST_BYTES + 1]),
            "too large to keep"
        );
        s.forget_archive(0);
        assert_eq!(s.0.lock().bytes, 0);
    }
}
