//! joaat, the RAGE name hash: Jenkins one-at-a-time over bytes (`sgd2.md` §6).
//!
//! RAGE hashes lower-cased names; the seed found binding-table hashes of exact-case names
//! too, so resolution tries both, and the `_name` form the public parser gives samplers.

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

/// The first of `names` whose hash, in one of the three forms, is `hash`.
pub fn resolve<'a>(hash: u32, names: &[&'a [u8]]) -> Option<(&'a [u8], Match)> {
    if hash == 0 {
        return None;
    }
    for &name in names {
        if joaat(name) == hash {
            return Some((name, Match::ExactCase));
        }
        if joaat_lower(name) == hash {
            return Some((name, Match::Lowercase));
        }
    }
    names
        .iter()
        .find(|n| joaat_underscore(n) == hash)
        .map(|&n| (n, Match::UnderscoreLowercase))
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
        let names: [&[u8]; 2] = [b"specularFresnel", b"DiffuseSampler"];
        assert_eq!(
            resolve(0x719E_302A, &names),
            Some((&b"specularFresnel"[..], Match::ExactCase))
        );
        assert_eq!(
            resolve(0x27B9_B2FA, &names),
            Some((&b"specularFresnel"[..], Match::Lowercase))
        );
        assert_eq!(
            resolve(0x63C1_9FC8, &names),
            Some((&b"DiffuseSampler"[..], Match::UnderscoreLowercase))
        );
        assert_eq!(resolve(0, &names), None);
        assert_eq!(resolve(1, &names), None);
    }
}
