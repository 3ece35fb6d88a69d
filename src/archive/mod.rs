//! Archive formats, one module each. Each indexes the framing of an archive over its
//! mapped bytes, describes its tree to [`crate::vfs`] and serialises edits. This file is
//! the one place formats are recognised.

pub mod sdp;
pub mod sgd2;
pub mod sha;

use std::fs::File;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::shader::d3d9::decompile::decompile;
use crate::vfs::name::Namer;
use crate::vfs::{ArchiveFile, Blob, Format, OpenError, Vfs, VfsOptions, ViewError};

/// Every format shaderfs knows, in the order they are tried.
pub static FORMATS: &[&'static dyn Format] = &[&sdp::SdpFormat, &sha::ShaFormat, &sgd2::Sgd2Format];

/// The format of the file at `path`, if shaderfs knows it.
pub fn format_of(path: &Path) -> Option<&'static dyn Format> {
    use std::io::Read;
    let mut head = [0u8; 64];
    let n = File::open(path).and_then(|mut f| f.read(&mut head)).ok()?;
    FORMATS
        .iter()
        .copied()
        .find(|f| f.recognises(path, &head[..n]))
}

/// The archives a mount of `source` shows: the archive itself, or each archive in the
/// folder `source` (as a directory named after its file, escaped as every name is).
pub fn recognise(source: &Path) -> Result<Vec<ArchiveFile>, OpenError> {
    let meta = std::fs::metadata(source)
        .map_err(|e| OpenError::Usage(format!("{}: {e}", source.display())))?;
    if !meta.is_dir() {
        let format = format_of(source).ok_or_else(|| {
            OpenError::Malformed(crate::vfs::FormatError::new(format!(
                "{}: not an archive shaderfs knows (.sdp, .sha, SGD2)",
                source.display()
            )))
        })?;
        return Ok(vec![ArchiveFile {
            path: source.to_path_buf(),
            dir_name: String::new(),
            format,
        }]);
    }
    let mut paths: Vec<PathBuf> = std::fs::read_dir(source)
        .map_err(|e| OpenError::Usage(format!("{}: {e}", source.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    let mut namer = Namer::new();
    namer.reserve(".shaderfs");
    let found: Vec<ArchiveFile> = paths
        .into_iter()
        .filter_map(|path| {
            let format = format_of(&path)?;
            let raw = path.file_name().unwrap_or_default().as_encoded_bytes();
            Some(ArchiveFile {
                dir_name: namer.name(raw),
                path,
                format,
            })
        })
        .collect();
    if found.is_empty() {
        let names: Vec<&str> = FORMATS.iter().map(|f| f.name()).collect();
        return Err(OpenError::Usage(format!(
            "{}: no archive in this folder (looked for {})",
            source.display(),
            names.join(", ")
        )));
    }
    Ok(found)
}

/// Recognise and open `source` (an archive, or a folder of archives).
pub fn open(source: &Path, opts: VfsOptions) -> Result<Vfs, OpenError> {
    Vfs::load(recognise(source)?, opts)
}

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

/// The HLSL view of D3D9 shader `code` that keeps no source of its own (`hlsl/NAME.hlsl`
/// of a package, `pixel.hlsl` of an effect's asm shader): its decompiled text, which
/// compiles back, for the shader's profile and entry `main`, to a shader that behaves the
/// same. Rendered when the view is read, never to list it. A shader the decompiler cannot
/// write (a construct it does not write yet, bytecode that does not parse) is a view that
/// cannot be rendered: EIO, with this reason in `.shaderfs/errors`.
pub fn decompiled(code: &[u8]) -> Result<String, ViewError> {
    let not = |why: String| {
        ViewError::Corrupt(format!(
            "no HLSL to show: the shader keeps no source, and it does not decompile: {why}"
        ))
    };
    // A view is rendered on the daemon's threads: whatever the decompiler does with these
    // bytes, the daemon lives.
    std::panic::catch_unwind(|| decompile(code))
        .map_err(|_| {
            not("internal error: the decompiler stopped on this shader (please report it)".into())
        })?
        .map_err(|e| not(e.to_string()))
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
