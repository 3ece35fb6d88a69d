//! joaat, the RAGE name hash: Jenkins one-at-a-time over bytes (`sgd2.md` §6).
//!
//! RAGE hashes lower-cased names; the seed found binding-table hashes of exact-case names
//! too, so resolution tries both, and the `_name` form the public parser gives samplers.

use std::collections::HashMap;

/// Jenkins one-at-a-time over a stream of bytes, 32-bit wrap-around (`sgd2.md` §6).
fn one_at_a_time(bytes: impl IntoIterator<Item = u8>) -> u32 {
    let mut h: u32 = 0;
    for c in bytes {
        h = h.wrapping_add(c as u32);
        h = h.wrapping_add(h << 10);
        h ^= h >> 6;
    }
    h = h.wrapping_add(h << 3);
    h ^= h >> 11;
    h.wrapping_add(h << 15)
}

/// joaat of `bytes` as they are.
pub fn joaat(bytes: &[u8]) -> u32 {
    one_at_a_time(bytes.iter().copied())
}

/// joaat of the ASCII-lower-cased bytes.
pub fn joaat_lower(bytes: &[u8]) -> u32 {
    one_at_a_time(bytes.iter().map(u8::to_ascii_lowercase))
}

/// joaat of `_` followed by the lower-cased bytes (the public parser's sampler form).
pub fn joaat_underscore(bytes: &[u8]) -> u32 {
    one_at_a_time(std::iter::once(b'_').chain(bytes.iter().map(u8::to_ascii_lowercase)))
}

/// How a hash matched a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Match {
    /// joaat of the name as stored.
    ExactCase,
    /// joaat of the lower-cased name.
    Lowercase,
    /// joaat of `_` + the lower-cased name.
    UnderscoreLowercase,
}

/// Names by their hashes, in the three forms. Built once per table, so resolving is a
/// lookup however many names and records a (hostile) table holds.
pub struct Resolver<'a> {
    by_hash: HashMap<u32, (&'a [u8], Match)>,
}

impl<'a> Resolver<'a> {
    /// The first name, in order, matches: each name's exact-case and lower-case hashes
    /// before the next name's; the `_name` form only where no name matches otherwise.
    pub fn new(names: &[&'a [u8]]) -> Resolver<'a> {
        let mut by_hash = HashMap::with_capacity(names.len() * 3);
        for &name in names {
            by_hash
                .entry(joaat(name))
                .or_insert((name, Match::ExactCase));
            by_hash
                .entry(joaat_lower(name))
                .or_insert((name, Match::Lowercase));
        }
        for &name in names {
            by_hash
                .entry(joaat_underscore(name))
                .or_insert((name, Match::UnderscoreLowercase));
        }
        Resolver { by_hash }
    }

    /// The name whose hash, in one of the three forms, is `hash` (never for 0, the hash
    /// of nothing).
    pub fn resolve(&self, hash: u32) -> Option<(&'a [u8], Match)> {
        if hash == 0 {
            return None;
        }
        self.by_hash.get(&hash).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table of `sgd2.md` §6.
    #[test]
    fn reference_values() {
        assert_eq!(joaat(b""), 0);
        assert_eq!(joaat(b"a"), 0xCA2E_9442);
        assert_eq!(
            joaat(b"The quick brown fox jumps over the lazy dog"),
            0x519E_91F5
        );
        assert_eq!(joaat(b"adder"), 0xB779_A091);
        assert_eq!(joaat(b"ADDER"), 0xAFC5_5086);
        assert_eq!(joaat_lower(b"ADDER"), 0xB779_A091);
        assert_eq!(joaat(b"proplst"), 0xE435_592B);
        assert_eq!(joaat(b"default"), 0xE4DF_46D5);
        assert_eq!(joaat(b"diffusesampler"), 0xF1FE_2B71);
        assert_eq!(joaat(b"_diffusesampler"), 0x63C1_9FC8);
        assert_eq!(joaat_underscore(b"DiffuseSampler"), 0x63C1_9FC8);
        assert_eq!(joaat(b"specularFresnel"), 0x719E_302A);
        assert_eq!(joaat_lower(b"specularFresnel"), 0x27B9_B2FA);
    }

    #[test]
    fn resolution_reports_the_form() {
        let names = Resolver::new(&[b"specularFresnel", b"DiffuseSampler"]);
        assert_eq!(
            names.resolve(0x719E_302A),
            Some((&b"specularFresnel"[..], Match::ExactCase))
        );
        assert_eq!(
            names.resolve(0x27B9_B2FA),
            Some((&b"specularFresnel"[..], Match::Lowercase))
        );
        assert_eq!(
            names.resolve(0x63C1_9FC8),
            Some((&b"DiffuseSampler"[..], Match::UnderscoreLowercase))
        );
        assert_eq!(names.resolve(0), None);
        assert_eq!(names.resolve(1), None);
    }
}
