//! Rendering views ahead of the reader.
//!
//! `cat`, `tar`, `grep -r` and `cp -r` read a folder's files one after another, so a
//! daemon that renders only what it is asked for renders on one core. When a view of a
//! large folder has to be rendered, the next few files of that folder that also need
//! rendering are queued for a small pool of threads; when the reader gets to them they
//! are in the view cache, or being rendered, and the reader waits for that render rather
//! than starting its own ([`Flights`]).
//!
//! Rendering is a pure function of a snapshot, so a render ahead can never show anything
//! a reader would not have got; a commit changes the generation in the key, and a job for
//! an old generation is dropped.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use rustc_hash::{FxHashMap, FxHashSet};

use super::tree::ArchiveId;
use super::{Blob, FileKey};

/// A rendered view: archive, snapshot generation, file.
pub type ViewKey = (ArchiveId, u64, FileKey);

/// Renders in progress, so one view is never rendered twice at once.
#[derive(Default)]
pub struct Flights {
    flying: Mutex<FxHashMap<ViewKey, Arc<Flight>>>,
}

#[derive(Default)]
struct Flight {
    /// `None` while rendering; then the blob, or `None` inside if the render failed.
    outcome: Mutex<Option<Option<Blob>>>,
    landed: Condvar,
}

/// What joining a flight gives.
pub enum Joined<'a> {
    /// Nobody renders this view: render it, and [`Lead::land`] the result.
    Lead(Lead<'a>),
    /// Another thread rendered it: its blob, or `None` if its render failed (render it
    /// yourself to report why).
    Followed(Option<Blob>),
}

/// The right and duty to render one view. Dropped without landing (an error, a panic),
/// it tells the waiters the render failed.
pub struct Lead<'a> {
    flights: &'a Flights,
    key: ViewKey,
    flight: Arc<Flight>,
    landed: bool,
}

impl Flights {
    pub fn join(&self, key: ViewKey) -> Joined<'_> {
        let flight = {
            let mut flying = self.flying.lock();
            match flying.get(&key) {
                Some(flight) => flight.clone(),
                None => {
                    let flight = Arc::new(Flight::default());
                    flying.insert(key, flight.clone());
                    return Joined::Lead(Lead {
                        flights: self,
                        key,
                        flight,
                        landed: false,
                    });
                }
            }
        };
        let mut outcome = flight.outcome.lock();
        while outcome.is_none() {
            flight.landed.wait(&mut outcome);
        }
        Joined::Followed(outcome.clone().flatten())
    }

    pub fn is_flying(&self, key: &ViewKey) -> bool {
        self.flying.lock().contains_key(key)
    }
}

impl Lead<'_> {
    /// Hand the render's result to every thread waiting for it.
    pub fn land(mut self, blob: Option<Blob>) {
        self.finish(blob);
    }

    fn finish(&mut self, blob: Option<Blob>) {
        if self.landed {
            return;
        }
        self.landed = true;
        self.flights.flying.lock().remove(&self.key);
        *self.flight.outcome.lock() = Some(blob);
        self.flight.landed.notify_all();
    }
}

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        self.finish(None);
    }
}

/// Jobs for the read-ahead threads: views to render, oldest first.
pub struct Queue {
    inner: Mutex<Jobs>,
    ready: Condvar,
}

#[derive(Default)]
struct Jobs {
    order: VecDeque<ViewKey>,
    queued: FxHashSet<ViewKey>,
    closed: bool,
}

/// Jobs kept at most: a reader who jumps around leaves old ones behind; they go first.
const MAX_JOBS: usize = 256;

impl Default for Queue {
    fn default() -> Queue {
        Queue {
            inner: Mutex::new(Jobs::default()),
            ready: Condvar::new(),
        }
    }
}

impl Queue {
    /// Queue `key` unless it already is.
    pub fn push(&self, key: ViewKey) {
        let mut jobs = self.inner.lock();
        if jobs.closed || !jobs.queued.insert(key) {
            return;
        }
        jobs.order.push_back(key);
        while jobs.order.len() > MAX_JOBS {
            if let Some(old) = jobs.order.pop_front() {
                jobs.queued.remove(&old);
            }
        }
        drop(jobs);
        self.ready.notify_one();
    }

    /// The next job, waiting for one; `None` once the queue is closed.
    #[cfg(test)]
    pub fn pop(&self) -> Option<ViewKey> {
        self.pop_or_idle(Duration::MAX, || {})
    }

    /// The next job, waiting for one; `None` once the queue is closed. When no job has
    /// come for `after`, calls `idle` once (with the queue unlocked) before it waits on.
    pub fn pop_or_idle(&self, after: Duration, mut idle: impl FnMut()) -> Option<ViewKey> {
        let mut jobs = self.inner.lock();
        let mut idled = false;
        loop {
            if jobs.closed {
                return None;
            }
            if let Some(key) = jobs.order.pop_front() {
                jobs.queued.remove(&key);
                return Some(key);
            }
            if idled {
                self.ready.wait(&mut jobs);
            } else if self.ready.wait_for(&mut jobs, after).timed_out()
                && jobs.order.is_empty()
                && !jobs.closed
            {
                drop(jobs);
                idle();
                idled = true;
                jobs = self.inner.lock();
            }
        }
    }

    /// The jobs waiting, first first.
    #[cfg(test)]
    pub fn waiting(&self) -> Vec<ViewKey> {
        self.inner.lock().order.iter().copied().collect()
    }

    /// Stop the threads (the mount is going away).
    pub fn close(&self) {
        let mut jobs = self.inner.lock();
        jobs.closed = true;
        jobs.order.clear();
        jobs.queued.clear();
        drop(jobs);
        self.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_view_is_rendered_once_however_many_ask() {
        let flights = Arc::new(Flights::default());
        let renders = Arc::new(AtomicUsize::new(0));
        let key = (0, 1, 7);
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (flights, renders) = (flights.clone(), renders.clone());
                std::thread::spawn(move || match flights.join(key) {
                    Joined::Lead(lead) => {
                        renders.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(50));
                        lead.land(Some(Blob::owned(b"rendered".to_vec())));
                        b"rendered".to_vec()
                    }
                    Joined::Followed(blob) => blob.expect("landed").as_slice().to_vec(),
                })
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().unwrap(), b"rendered");
        }
        assert_eq!(renders.load(Ordering::SeqCst), 1);
        assert!(!flights.is_flying(&key));
    }

    #[test]
    fn a_lead_dropped_without_landing_wakes_the_waiters_with_nothing() {
        let flights = Arc::new(Flights::default());
        let key = (0, 1, 7);
        let Joined::Lead(lead) = flights.join(key) else {
            panic!("the first to join leads")
        };
        let waiter = {
            let flights = flights.clone();
            std::thread::spawn(move || matches!(flights.join(key), Joined::Followed(None)))
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        drop(lead);
        // Either it waited and heard the failure, or it came after and leads itself.
        let _ = waiter.join().unwrap();
        assert!(!flights.is_flying(&key));
    }

    #[test]
    fn the_queue_keeps_order_drops_duplicates_and_bounds_itself() {
        let queue = Queue::default();
        queue.push((0, 0, 1));
        queue.push((0, 0, 2));
        queue.push((0, 0, 1));
        assert_eq!(queue.pop(), Some((0, 0, 1)));
        assert_eq!(queue.pop(), Some((0, 0, 2)));
        for k in 0..(MAX_JOBS as u64 + 10) {
            queue.push((0, 0, k));
        }
        assert_eq!(queue.pop(), Some((0, 0, 10)), "the oldest jobs went first");
        queue.close();
        assert_eq!(queue.pop(), None);
    }
}
