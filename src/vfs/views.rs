//! Rendering the files of a snapshot: the view cache, what each render gave (its size,
//! or that it failed), and rendering ahead of readers ([`super::ahead`]).
//!
//! A render runs with no lock of the tree held. Its result is kept only when the bytes
//! it read are known good: a render that read a page another program took away
//! ([`super::ArchiveBytes::vanished`]) fails with EIO and leaves nothing behind.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::ahead::{Flights, Joined, Queue, ViewKey};
use super::cache::ViewCache;
use super::fs::{Errno, Vfs};
use super::snapshot::Snapshot;
use super::tree::{ArchiveId, Node, NodeKind, Origin, Tree};
use super::{Blob, FileKey};

/// Renders ahead of a reader after which the heap's free memory is given back, once no
/// job has come for [`IDLE`] (a whole-tree read leaves some 20 MB of its transients in
/// free lists; giving them back at every pause of a reader would cost a fifth of a cold
/// read).
const TRIM_AFTER: usize = 64;
const IDLE: std::time::Duration = std::time::Duration::from_millis(500);

/// What rendering a view gave: its size, or `None` when it could not be rendered (the
/// reason is in `.shaderfs/errors` already).
type Rendered = Option<u64>;

pub(super) struct Views {
    cache: Mutex<ViewCache<ViewKey>>,
    /// Outcomes of views rendered once: a listing can give true sizes without rendering
    /// again, whatever the cache has let go, and a view that fails is reported once.
    outcomes: Mutex<HashMap<ViewKey, Rendered>>,
    /// Files that say whether saves land ([`super::Archive::says_writable`]), with the
    /// answer each was rendered with: rendered again when the answer changes.
    saying: Mutex<HashMap<ViewKey, (bool, Blob)>>,
    /// Renders in progress, and views queued for the read-ahead threads.
    flights: Flights,
    queue: Arc<Queue>,
    /// Whether read-ahead threads run (only a mount starts them).
    reading_ahead: AtomicBool,
}

impl Views {
    pub fn new(cache_bytes: usize) -> Views {
        Views {
            cache: Mutex::new(ViewCache::new(cache_bytes)),
            outcomes: Mutex::new(HashMap::new()),
            saying: Mutex::new(HashMap::new()),
            flights: Flights::default(),
            queue: Arc::new(Queue::default()),
            reading_ahead: AtomicBool::new(false),
        }
    }

    /// What rendering `key` gave, if it was rendered.
    pub fn outcome(&self, key: &ViewKey) -> Option<Rendered> {
        self.outcomes.lock().get(key).copied()
    }

    /// Forget the outcomes of archive `id`'s snapshots older than `generation`.
    pub fn forget_older(&self, id: ArchiveId, generation: u64) {
        self.outcomes
            .lock()
            .retain(|&(a, g, _), _| a != id || g >= generation);
        self.saying
            .lock()
            .retain(|&(a, g, _), _| a != id || g >= generation);
    }

    /// Stop the read-ahead threads (they wait on the queue, not on the vfs).
    pub fn close(&self) {
        self.queue.close();
    }

    /// Remember a rendered view: its size for listings, its bytes while they fit.
    pub(super) fn keep(&self, key: ViewKey, blob: &Blob) {
        self.outcomes.lock().insert(key, Some(blob.len() as u64));
        self.cache.lock().put(key, blob.clone());
    }
}

impl Vfs {
    /// Render (or fetch from the cache) file `key` of snapshot `snap` of archive `id`.
    pub(super) fn render(
        &self,
        id: ArchiveId,
        snap: &Snapshot,
        key: FileKey,
        path: &str,
    ) -> Result<Blob, Errno> {
        self.check_readable(id)?;
        if self.writable(id) && snap.archive.says_writable(key) {
            return self.render_saying(id, snap, key, path);
        }
        let view = (id, snap.generation, key);
        if let Some(blob) = self.views.cache.lock().get(&view) {
            return Ok(blob);
        }
        if self.views.outcome(&view) == Some(None) {
            return Err(libc::EIO);
        }
        // A read-ahead thread may be rendering it now: take its result.
        let lead = match self.views.flights.join(view) {
            Joined::Lead(lead) => Some(lead),
            Joined::Followed(Some(blob)) => return Ok(blob),
            // Its render failed: render here, which reports why.
            Joined::Followed(None) => None,
        };
        let result = snap.archive.read(key);
        if snap.bytes.vanished() {
            drop(lead);
            return Err(self.vanished(id));
        }
        match result {
            Ok(blob) => {
                self.views.keep(view, &blob);
                if let Some(lead) = lead {
                    lead.land(Some(blob.clone()));
                }
                Ok(blob)
            }
            Err(e) => {
                drop(lead);
                Err(self.cannot_render(view, path, &e))
            }
        }
    }

    /// [`Vfs::render`] of a file that says whether saves into archive `id` land: with
    /// what [`Vfs::saves_land`] says now (`saves.rs`), from the cache while that is what
    /// it was rendered with.
    fn render_saying(
        &self,
        id: ArchiveId,
        snap: &Snapshot,
        key: FileKey,
        path: &str,
    ) -> Result<Blob, Errno> {
        let view = (id, snap.generation, key);
        if self.views.outcome(&view) == Some(None) {
            return Err(libc::EIO);
        }
        let lands = self.saves_land(id).is_ok();
        if let Some((said, blob)) = self.views.saying.lock().get(&view) {
            if *said == lands {
                return Ok(blob.clone());
            }
        }
        let result = snap.archive.read_saying(key, lands);
        if snap.bytes.vanished() {
            return Err(self.vanished(id));
        }
        match result {
            Ok(blob) => {
                self.views.saying.lock().insert(view, (lands, blob.clone()));
                Ok(blob)
            }
            Err(e) => Err(self.cannot_render(view, path, &e)),
        }
    }

    /// A view that cannot be rendered: reported once (its outcome is kept), EIO.
    fn cannot_render(&self, view: ViewKey, path: &str, e: &super::ViewError) -> Errno {
        self.views.outcomes.lock().insert(view, None);
        self.report(&self.user_path(view.0, path), &format!("cannot read: {e}"));
        libc::EIO
    }

    /// Start `threads` threads that render views ahead of readers (see `ahead.rs`).
    /// They stop when the vfs goes.
    pub fn start_read_ahead(self: &Arc<Self>, threads: usize) {
        for n in 0..threads {
            let (vfs, queue) = (Arc::downgrade(self), self.views.queue.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("ahead{n}"))
                .spawn(move || {
                    // Renders leave their transient memory in the heap's free lists:
                    // once a run of them is over, it goes back to the system.
                    let mut rendered = 0usize;
                    let idle = |rendered: &mut usize| {
                        if std::mem::take(rendered) >= TRIM_AFTER {
                            super::release_free_memory();
                        }
                    };
                    while let Some(key) = queue.pop_or_idle(IDLE, || idle(&mut rendered)) {
                        match vfs.upgrade() {
                            Some(vfs) => vfs.render_ahead(key),
                            None => return,
                        }
                        rendered += 1;
                    }
                });
            match spawned {
                Ok(_) => self.views.reading_ahead.store(true, Ordering::Relaxed),
                Err(e) => log::warn!("no read-ahead thread: {e}"),
            }
        }
    }

    /// A read-ahead job: render a view unless it is done, being done, or stale. A
    /// failure is not reported here: the reader's own render reports it.
    fn render_ahead(&self, key: ViewKey) {
        let (id, generation, file) = key;
        let snap = self.snapshot(id);
        if snap.generation != generation
            || self.views.outcome(&key).is_some()
            || self.check_readable(id).is_err()
            || (self.writable(id) && snap.archive.says_writable(file))
        {
            return;
        }
        let Joined::Lead(lead) = self.views.flights.join(key) else {
            return;
        };
        let result = snap.archive.read(file);
        if snap.bytes.vanished() {
            drop(lead);
            self.vanished(id);
            return;
        }
        if let Ok(blob) = result {
            self.views.keep(key, &blob);
            lead.land(Some(blob));
        }
    }

    /// A `stat` or `open` of a view about to be rendered: the moment to render the next
    /// ones of its folder on the other threads. Also when this one was rendered ahead:
    /// the reader is moving through the folder, and the threads keep a window ahead.
    pub(super) fn before_render(&self, tree: &Tree, node: &Node) {
        if derived_view(node).is_some() && self.views.reading_ahead.load(Ordering::Relaxed) {
            self.read_ahead(tree, node);
        }
    }

    /// A reader asks for `node`: queue the next files of its folder that still need
    /// rendering and are of its kind (its extension: `cat *.ll` or `grep -r
    /// --include='*.json'` reads one kind, and a whole-tree read asks for every kind in
    /// turn), when the folder is large enough to be read through.
    fn read_ahead(&self, tree: &Tree, node: &Node) {
        /// Folders smaller than this are not read ahead (the root's few views, an
        /// effect's `effect.json`).
        const MIN_FOLDER: usize = 16;
        /// Views queued ahead of the reader, and siblings looked at to find them.
        const AHEAD: usize = 8;
        const LOOK: usize = 4 * AHEAD;
        let Some(id) = node.archive else { return };
        let Some(children) = tree.children(node.parent) else {
            return;
        };
        if children.len() < MIN_FOLDER {
            return;
        }
        let Some(at) = children.get_index_of(&*node.name) else {
            return;
        };
        // A folder's files are of one archive: one snapshot and one look at the outcomes.
        let generation = self.snapshot(id).generation;
        let kind = extension(&node.name);
        let wanted: Vec<ViewKey> = {
            let outcomes = self.views.outcomes.lock();
            children
                .iter()
                .skip(at + 1)
                .take(LOOK)
                .filter(|(name, _)| extension(name) == kind)
                .filter_map(|(_, &sibling)| derived_view(tree.get(sibling)?))
                .map(|key| (id, generation, key))
                .filter(|view| !outcomes.contains_key(view))
                .take(AHEAD)
                .collect()
        };
        for view in wanted {
            if !self.views.flights.is_flying(&view) {
                self.views.queue.push(view);
            }
        }
    }
}

/// What follows the last `.` of a file name (`None` without one).
fn extension(name: &str) -> Option<&str> {
    name.rsplit_once('.').map(|(_, ext)| ext)
}

/// The key of a file whose bytes are rendered (its size is only known by rendering it),
/// unless a buffer stands in for it.
pub(super) fn derived_view(node: &Node) -> Option<FileKey> {
    match &node.kind {
        NodeKind::File {
            origin: Origin::Archive {
                key, size: None, ..
            },
            buffer: None,
            ..
        } => Some(*key),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::derived_view;
    use crate::archive::sgd2::generate::{self, Spec};
    use crate::archive::sgd2::Sgd2Format;
    use crate::vfs::fs::{ArchiveFile, Vfs, VfsOptions};

    /// Reading `programs/pixel/3.ll` queues the IR of the programs after it, not the
    /// JSON between them: `cat *.ll` renders only what it reads, ahead of it.
    #[test]
    fn a_read_queues_the_next_views_of_its_own_kind() {
        let Some(dir) = crate::test_corpus::corpus("dxil") else {
            return;
        };
        let containers = generate::corpus_containers(&dir).unwrap();
        let mut db = Vec::new();
        generate::generate(&Spec::per_stage(40), &containers, &mut db).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("db.awc");
        std::fs::write(&path, &db).unwrap();
        let vfs = Vfs::load(
            vec![ArchiveFile {
                path,
                dir_name: String::new(),
                format: &Sgd2Format,
            }],
            VfsOptions::read_only(),
        )
        .unwrap();
        // As if read-ahead threads were there, but with nothing taking the jobs.
        vfs.views.reading_ahead.store(true, Ordering::Relaxed);
        let key = |path: &str| {
            let ino = vfs.resolve(path).unwrap();
            derived_view(vfs.state.read().tree.get(ino).unwrap()).unwrap()
        };
        vfs.getattr(vfs.resolve("programs/pixel/3.ll").unwrap())
            .unwrap();
        let queued: Vec<_> = vfs.views.queue.waiting().iter().map(|k| k.2).collect();
        let next: Vec<_> = (4..12)
            .map(|i| key(&format!("programs/pixel/{i}.ll")))
            .collect();
        assert_eq!(queued, next);
    }
}
