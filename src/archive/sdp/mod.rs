//! Bethesda shader packages (`.sdp`: Oblivion, Fallout 3, Fallout: New Vegas), per
//! `shared/formats/sdp.md`.
//!
//! ```text
//! archive.json              header word, shader count, sizes, writability, warnings
//! shaders/<name>            the record's bytecode: read, overwrite, create, remove, rename
//! ctab/<name>.json          the decoded constant table
//! ```
//!
//! A write to `shaders/` stores exactly the bytes written, once they parse as a D3D9
//! shader of the kind the name's extension says (`.vso` vertex, `.pso` pixel).

pub mod read;
pub mod write;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;
use serde::Serialize;

use self::read::{Index, Record};
use self::write::NameField;
use super::{has_extension, json_view};
use crate::shader::d3d9::bytecode::{self, ShaderKind, Version};
use crate::vfs::name::Namer;
use crate::vfs::{
    Archive, Blob, Edit, Entry, EntryKind, FileKey, Format, FormatError, OpenContext, ViewError,
};

pub struct SdpFormat;

impl Format for SdpFormat {
    fn name(&self) -> &'static str {
        "sdp"
    }

    fn recognises(&self, path: &Path, _head: &[u8]) -> bool {
        path.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| has_extension(n, "sdp"))
    }

    fn open(
        &self,
        path: &Path,
        map: Arc<Mmap>,
        ctx: OpenContext,
    ) -> Result<Arc<dyn Archive>, FormatError> {
        let index =
            read::index(&map).map_err(|e| FormatError::new(format!("{}: {e}", path.display())))?;
        let mut namer = Namer::new();
        let names = index
            .records
            .iter()
            .map(|r| namer.name(&map[r.name.clone()]))
            .collect();
        Ok(Arc::new(Package {
            path: path.to_path_buf(),
            map,
            index,
            names,
            writable: ctx.writable,
        }))
    }
}

/// Which view of a record a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    Shader = 0,
    Ctab = 1,
}

const ARCHIVE_JSON: FileKey = u64::MAX;

fn key(record: usize, view: View) -> FileKey {
    (record as u64) << 2 | view as u64
}

fn unkey(key: FileKey) -> (usize, Option<View>) {
    let view = match key & 3 {
        0 => Some(View::Shader),
        1 => Some(View::Ctab),
        _ => None,
    };
    ((key >> 2) as usize, view)
}

/// An opened package.
struct Package {
    path: PathBuf,
    map: Arc<Mmap>,
    index: Index,
    /// Each record's file name (escaped, unique), in record order.
    names: Vec<String>,
    writable: bool,
}

#[derive(Serialize)]
struct ArchiveJson<'a> {
    format: &'static str,
    file: String,
    header_word: u32,
    shader_count: u32,
    data_size: u32,
    file_size: usize,
    writable: bool,
    warnings: &'a [String],
    shaders: Vec<ShaderJson<'a>>,
}

#[derive(Serialize)]
struct ShaderJson<'a> {
    file: &'a str,
    name: String,
    offset: usize,
    size: usize,
    profile: String,
}

/// The profile a bytecode's first token names (`vs_1_1`), or what it holds instead.
fn profile_of(data: &[u8]) -> String {
    match data.get(..4) {
        Some(word) => {
            let token = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
            match Version::from_token(token) {
                Some(v) => v.to_string(),
                None => format!("not D3D9 bytecode (first token {token:#010x})"),
            }
        }
        None => "empty".to_string(),
    }
}

/// Check that `data` is a D3D9 shader of the kind `name`'s extension calls for.
fn validate_shader(name: &str, data: &[u8]) -> Result<(), ViewError> {
    let shader = bytecode::parse(data)
        .map_err(|e| ViewError::Invalid(format!("not D3D9 shader bytecode: {e}")))?;
    let wanted = if has_extension(name, "vso") {
        Some(ShaderKind::Vertex)
    } else if has_extension(name, "pso") {
        Some(ShaderKind::Pixel)
    } else {
        None
    };
    match wanted {
        Some(kind) if kind != shader.version.kind => Err(ViewError::Invalid(format!(
            "{name} must hold a {} shader, this is {}",
            match kind {
                ShaderKind::Vertex => "vertex (vs_*)",
                ShaderKind::Pixel => "pixel (ps_*)",
            },
            shader.version
        ))),
        _ => Ok(()),
    }
}

/// A name a new or renamed record may take (`sdp.md` §3 and §5 rule 8).
fn check_new_name(name: &str) -> Result<NameField, ViewError> {
    if !(has_extension(name, "vso") || has_extension(name, "pso")) {
        return Err(ViewError::NotPermitted(format!(
            "{name}: shader names end in .vso (vertex) or .pso (pixel)"
        )));
    }
    if name.contains(['\\', ':']) || !name.is_ascii() {
        return Err(ViewError::NotPermitted(format!(
            "{name}: shader names are plain ASCII without '\\' or ':' (the game's tools \
             read them as such)"
        )));
    }
    NameField::new(name).ok_or_else(|| {
        ViewError::NotPermitted(format!("{name}: a shader name has at most 255 bytes"))
    })
}

impl Package {
    fn record(&self, i: usize) -> Result<&Record, ViewError> {
        self.index
            .records
            .get(i)
            .ok_or_else(|| ViewError::Corrupt(format!("no record {i}")))
    }

    fn data(&self, r: &Record) -> &[u8] {
        &self.map[r.data.clone()]
    }

    fn archive_json(&self) -> Blob {
        let shaders = self
            .index
            .records
            .iter()
            .zip(&self.names)
            .map(|(r, file)| ShaderJson {
                file,
                name: String::from_utf8_lossy(&self.map[r.name.clone()]).into_owned(),
                offset: r.offset,
                size: r.data.len(),
                profile: profile_of(self.data(r)),
            })
            .collect();
        json_view(&ArchiveJson {
            format: "sdp",
            file: self
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            header_word: self.index.magic,
            shader_count: self.index.count,
            data_size: self.index.data_size,
            file_size: self.map.len(),
            writable: self.writable,
            warnings: &self.index.warnings,
            shaders,
        })
    }

    /// The package with `records` (name field, bytecode) in place of the current ones.
    fn serialise<'a>(
        &self,
        records: impl IntoIterator<Item = (NameField, &'a [u8])>,
    ) -> Result<Vec<u8>, ViewError> {
        let records: Vec<(NameField, &[u8])> = records.into_iter().collect();
        write::serialise(self.index.magic, records.iter().map(|(n, d)| (n, *d)))
            .map_err(ViewError::Invalid)
    }

    /// The current records as (name field, bytecode).
    fn current(&self) -> Vec<(NameField, &[u8])> {
        self.index
            .records
            .iter()
            .map(|r| (NameField::from_raw(&self.map[r.name_field()]), self.data(r)))
            .collect()
    }

    fn find_name(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
}

impl Archive for Package {
    fn entries(&self) -> Vec<Entry> {
        let writable = self.writable;
        let mut out = vec![Entry {
            path: "archive.json".into(),
            kind: EntryKind::File {
                key: ARCHIVE_JSON,
                size: None,
                writable: false,
            },
        }];
        out.push(Entry {
            path: "shaders".into(),
            kind: EntryKind::Dir,
        });
        for (i, (r, name)) in self.index.records.iter().zip(&self.names).enumerate() {
            out.push(Entry {
                path: format!("shaders/{name}"),
                kind: EntryKind::File {
                    key: key(i, View::Shader),
                    size: Some(r.data.len() as u64),
                    writable,
                },
            });
        }
        out
    }

    fn read(&self, key: FileKey) -> Result<Blob, ViewError> {
        if key == ARCHIVE_JSON {
            return Ok(self.archive_json());
        }
        let (i, view) = unkey(key);
        let r = self.record(i)?;
        match view {
            Some(View::Shader) => Ok(Blob::Mapped(self.map.clone(), r.data.clone())),
            Some(View::Ctab) => Err(ViewError::Corrupt(format!("no view {key:#x}"))),
            None => Err(ViewError::Corrupt(format!("no view {key:#x}"))),
        }
    }

    fn accepts_new(&self, dir: &str, name: &str) -> bool {
        dir == "shaders" && check_new_name(name).is_ok()
    }

    fn apply(&self, edit: &Edit<'_>) -> Result<Vec<u8>, ViewError> {
        let mut records = self.current();
        match *edit {
            Edit::Write { key, data } => {
                let (i, view) = unkey(key);
                if key == ARCHIVE_JSON || view != Some(View::Shader) {
                    return Err(ViewError::NotPermitted(
                        "this view is read-only; write shaders/ instead".into(),
                    ));
                }
                self.record(i)?;
                validate_shader(&self.names[i], data)?;
                records[i].1 = data;
            }
            Edit::Create { dir, name, data } => {
                if dir != "shaders" {
                    return Err(ViewError::NotPermitted(format!(
                        "new shaders go in shaders/, not {dir}/"
                    )));
                }
                let field = check_new_name(name)?;
                validate_shader(name, data)?;
                records.push((field, data));
            }
            Edit::Remove { key } => match unkey(key) {
                (i, Some(View::Shader)) if key != ARCHIVE_JSON => {
                    self.record(i)?;
                    records.remove(i);
                }
                _ => {
                    return Err(ViewError::NotPermitted(
                        "only shaders/ files can be removed (that removes the shader)".into(),
                    ))
                }
            },
            Edit::Rename { key, dir, name } => {
                let (i, view) = unkey(key);
                if key == ARCHIVE_JSON || view != Some(View::Shader) || dir != "shaders" {
                    return Err(ViewError::NotPermitted(
                        "only shaders/ files can be renamed, within shaders/".into(),
                    ));
                }
                self.record(i)?;
                let field = check_new_name(name)?;
                if (has_extension(name, "vso") != has_extension(&self.names[i], "vso"))
                    || (has_extension(name, "pso") != has_extension(&self.names[i], "pso"))
                {
                    validate_shader(name, records[i].1)?;
                }
                records[i].0 = field;
                // Renaming over another shader replaces it, as `mv` does.
                if let Some(j) = self.find_name(name).filter(|&j| j != i) {
                    records.remove(j);
                }
            }
        }
        self.serialise(records)
    }
}
