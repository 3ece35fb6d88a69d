//! Rendered views (JSON, disassembly), kept by bytes rather than by count: a database's
//! 7,594 pixel-program JSON files fit, and a run of huge views cannot take the daemon's
//! memory. Views that are ranges of the mapping cost nothing and are not kept.

use std::hash::Hash;

use lru::LruCache;

use super::Blob;

pub struct ViewCache<K: Hash + Eq> {
    lru: LruCache<K, Blob>,
    bytes: usize,
    budget: usize,
}

impl<K: Hash + Eq> ViewCache<K> {
    pub fn new(budget: usize) -> ViewCache<K> {
        ViewCache {
            lru: LruCache::unbounded(),
            bytes: 0,
            budget,
        }
    }

    pub fn get(&mut self, key: &K) -> Option<Blob> {
        self.lru.get(key).cloned()
    }

    pub fn put(&mut self, key: K, blob: Blob) {
        let Blob::Owned(bytes) = &blob else {
            return;
        };
        if bytes.len() > self.budget {
            return;
        }
        self.bytes += bytes.len();
        if let Some(old) = self.lru.put(key, blob) {
            self.bytes -= old.len();
        }
        while self.bytes > self.budget {
            match self.lru.pop_lru() {
                Some((_, old)) => self.bytes -= old.len(),
                None => break,
            }
        }
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_within_its_budget_newest_first() {
        let mut cache = ViewCache::new(10);
        cache.put(1, Blob::owned(vec![0u8; 4]));
        cache.put(2, Blob::owned(vec![0u8; 4]));
        assert!(cache.get(&1).is_some());
        cache.put(3, Blob::owned(vec![0u8; 4]));
        assert!(cache.get(&2).is_none(), "least recently used goes first");
        assert!(cache.get(&1).is_some() && cache.get(&3).is_some());
        assert_eq!(cache.bytes(), 8);
        cache.put(4, Blob::owned(vec![0u8; 11]));
        assert!(cache.get(&4).is_none(), "larger than the whole budget");
        cache.put(3, Blob::owned(vec![0u8; 2]));
        assert_eq!(cache.bytes(), 6);
    }
}
