//! Archive formats, one module each. Each indexes the framing of an archive over its
//! mapped bytes, describes its tree to [`crate::vfs`] and serialises edits. This file is
//! the one place formats are recognised.

pub mod sdp;
pub mod sgd2;
pub mod sha;

use serde::Serialize;

use crate::vfs::{Blob, Format};

/// Every format shaderfs knows, in the order they are tried.
pub static FORMATS: &[&'static dyn Format] = &[&sdp::SdpFormat, &sha::ShaFormat, &sgd2::Sgd2Format];

/// A JSON view: pretty-printed, keys in the order the type declares them, and a trailing
/// newline, so `diff` between two archives shows only real differences.
pub fn json_view<T: Serialize>(value: &T) -> Blob {
    // A program's JSON is some 14 KB: start there rather than grow from nothing.
    let mut bytes = Vec::with_capacity(16 << 10);
    serde_json::to_writer_pretty(&mut bytes, value).expect("views serialise to JSON");
    bytes.push(b'\n');
    // Views are kept in the cache by their length: give back what was not used.
    bytes.shrink_to_fit();
    Blob::owned(bytes)
}

/// Whether the file name of `path` ends in `.ext`, ignoring case (how formats without a
/// magic number recognise their files).
pub fn file_has_extension(path: &std::path::Path, ext: &str) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| has_extension(n, ext))
}

/// Whether `name` ends in `.ext`, ignoring case.
pub fn has_extension(name: &str, ext: &str) -> bool {
    name.len() > ext.len() + 1
        && name.as_bytes()[name.len() - ext.len() - 1] == b'.'
        && name.as_bytes()[name.len() - ext.len()..].eq_ignore_ascii_case(ext.as_bytes())
}
