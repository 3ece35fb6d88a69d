//! The one escape function for names that come out of archives.
//!
//! Archives come from the internet; a record may be called `../../etc/passwd`, hold a NUL
//! or a newline, run past 255 bytes, or share its name with another record. Every format
//! and `extract` turn such names into file names the same way:
//!
//! - a byte that cannot stand in a file name (`/`, NUL, control characters, bytes that are
//!   not UTF-8) becomes `%XX`; a `%` that would read as such an escape becomes `%25`, so
//!   the escape is reversible and a name never changes meaning;
//! - the names `.` and `..` become `%2E` and `%2E%2E`; an empty name becomes `%`;
//! - a name over 255 bytes (or over what a format leaves room for: `.sdp` records show
//!   as `asm/NAME.asm` and `ctab/NAME.json`, so their names keep 5 bytes free) is cut at
//!   a character boundary and ends in `~`, the CRC-32 of the whole name in hex, and its
//!   extension, which says what the file is;
//! - a name already taken in its directory gets `~1`, `~2`, … before its extension.

use std::collections::HashSet;

/// Longest file name Linux accepts (`NAME_MAX`).
pub const NAME_MAX: usize = 255;

/// Escape one name read from an archive. Does not resolve collisions; see [`Namer`].
pub fn escape(raw: &[u8]) -> String {
    escape_within(raw, NAME_MAX)
}

/// [`escape`], in at most `max` bytes.
pub fn escape_within(raw: &[u8], max: usize) -> String {
    match raw {
        b"" => return "%".to_string(),
        b"." => return "%2E".to_string(),
        b".." => return "%2E%2E".to_string(),
        _ => {}
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while !rest.is_empty() {
        let (valid, invalid) = match std::str::from_utf8(rest) {
            Ok(s) => (s, &[][..]),
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                let bad_len = e.error_len().unwrap_or(bad.len());
                // SAFETY of the unwrap-free path: `good` is valid UTF-8 by construction.
                (
                    std::str::from_utf8(good).unwrap_or_default(),
                    &bad[..bad_len],
                )
            }
        };
        let chars: Vec<char> = valid.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            let looks_escaped = c == '%'
                && chars.get(i + 1).is_some_and(char::is_ascii_hexdigit)
                && chars.get(i + 2).is_some_and(char::is_ascii_hexdigit);
            if c == '/' || c.is_control() || looks_escaped {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            } else {
                out.push(c);
            }
        }
        for b in invalid {
            out.push_str(&format!("%{b:02X}"));
        }
        rest = &rest[valid.len() + invalid.len()..];
    }
    if out.len() > max {
        let (_, ext) = split_extension(&out);
        let ext = match ext.len() <= 16 {
            true => ext.to_string(),
            false => String::new(),
        };
        let tag = format!("~{:08x}{ext}", crc32fast::hash(raw));
        let mut cut = max.saturating_sub(tag.len());
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str(&tag);
    }
    out
}

/// Whether `name` may be used as a file name as it is (what users create through the
/// mount is checked with this before it reaches a format).
pub fn is_plain(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name.len() <= NAME_MAX
        && !name.contains('/')
        && !name.chars().any(char::is_control)
}

/// Hands out unique escaped names within one directory.
#[derive(Debug)]
pub struct Namer {
    taken: HashSet<String>,
    /// The longest name it hands out.
    max: usize,
}

impl Default for Namer {
    fn default() -> Namer {
        Namer::new()
    }
}

impl Namer {
    pub fn new() -> Namer {
        Namer::with_room(0)
    }

    /// A namer whose names leave `room` bytes for what a view adds (`.asm`, `.json`).
    pub fn with_room(room: usize) -> Namer {
        Namer {
            taken: HashSet::new(),
            max: NAME_MAX.saturating_sub(room),
        }
    }

    /// Reserve a name that must appear exactly as given (e.g. `archive.json`).
    pub fn reserve(&mut self, name: &str) {
        self.taken.insert(name.to_string());
    }

    /// The escaped, unique name for `raw`.
    pub fn name(&mut self, raw: &[u8]) -> String {
        let escaped = escape_within(raw, self.max);
        if self.taken.insert(escaped.clone()) {
            return escaped;
        }
        let (stem, ext) = split_extension(&escaped);
        for n in 1u64.. {
            let suffix = format!("~{n}");
            let mut stem = stem.to_string();
            let room = self.max.saturating_sub(suffix.len() + ext.len());
            while stem.len() > room {
                stem.pop();
            }
            let candidate = format!("{stem}{suffix}{ext}");
            if self.taken.insert(candidate.clone()) {
                return candidate;
            }
        }
        unreachable!("u64 suffixes cannot run out")
    }
}

/// `("name", ".ext")`; a leading dot is part of the stem (`.hidden` has no extension).
fn split_extension(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(i) if i > 0 => name.split_at(i),
        _ => (name, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_kept() {
        assert_eq!(escape(b"SLS1000.vso"), "SLS1000.vso");
        assert_eq!(escape("schön.pso".as_bytes()), "schön.pso");
        assert_eq!(escape(b"50%.pso"), "50%.pso");
    }

    #[test]
    fn unsafe_names_are_escaped() {
        assert_eq!(escape(b"../x.vso"), "..%2Fx.vso");
        assert_eq!(escape(b".."), "%2E%2E");
        assert_eq!(escape(b"."), "%2E");
        assert_eq!(escape(b""), "%");
        assert_eq!(escape(b"a\nb\0"), "a%0Ab%00");
        assert_eq!(escape(b"a\xffb"), "a%FFb");
        assert_eq!(escape(b"a%2Fb"), "a%252Fb");
    }

    #[test]
    fn long_names_fit() {
        let raw = vec![b'x'; 300];
        let name = escape(&raw);
        assert_eq!(name.len(), NAME_MAX);
        assert!(name.ends_with(&format!("~{:08x}", crc32fast::hash(&raw))));
        let wide = "é".repeat(200);
        assert!(escape(wide.as_bytes()).len() <= NAME_MAX);
    }

    #[test]
    fn long_names_keep_room_for_a_view_and_their_extension() {
        let mut namer = Namer::with_room(5);
        let raw = format!("{}.vso", "A".repeat(251));
        let name = namer.name(raw.as_bytes());
        assert_eq!(name.len(), 250);
        assert!(name.ends_with(&format!("~{:08x}.vso", crc32fast::hash(raw.as_bytes()))));
        assert!(format!("{name}.json").len() <= NAME_MAX);
        let again = namer.name(raw.as_bytes());
        assert!(again.len() <= 250 && again != name && again.ends_with(".vso"));
    }

    #[test]
    fn collisions_get_a_suffix_before_the_extension() {
        let mut namer = Namer::new();
        assert_eq!(namer.name(b"X.vso"), "X.vso");
        assert_eq!(namer.name(b"X.vso"), "X~1.vso");
        assert_eq!(namer.name(b"X.vso"), "X~2.vso");
        assert_eq!(namer.name(b"X~1.vso"), "X~1~1.vso");
        namer.reserve("archive.json");
        assert_eq!(namer.name(b"archive.json"), "archive~1.json");
    }

    #[test]
    fn escaped_names_are_plain() {
        for raw in [&b"a/b"[..], b"..", b"\x01", b"\xff\xfe", &[b'y'; 400]] {
            assert!(is_plain(&escape(raw)), "{raw:?}");
        }
    }
}
