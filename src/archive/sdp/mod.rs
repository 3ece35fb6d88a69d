//! Bethesda shader packages (`.sdp`: Oblivion, Fallout 3, Fallout: New Vegas), per
//! `shared/formats/sdp.md`.
//!
//! ```text
//! archive.json              header word, shader count, sizes, writability, warnings
//! shaders/<name>            the record's bytecode: read, overwrite, create, remove, rename
//! asm/<name>.asm            the disassembly; saving it assembles it back
//! ctab/<name>.json          the decoded constant table (`null` for none); saving re-encodes it
//! hlsl/<name>.hlsl          the shader as HLSL: the source it keeps, or else the shader
//!                           decompiled; saving compiles it (`hlsl.rs`)
//! ```
//!
//! A write to `shaders/` stores exactly the bytes written, once they parse as a D3D9
//! shader of the kind the name's extension says (`.vso` vertex, `.pso` pixel). A saved
//! `asm/` file is assembled and checked against its shader model; when the new text holds
//! no constant table of its own, the shader keeps the one it had (the engine reads it:
//! `sdp.md` §4). A saved `ctab/` file replaces the table and nothing else. Every shader
//! has an `hlsl/` file: the source it keeps, or its decompiled text, rendered when read
//! (listing the folder decodes nothing); a shader that does not decompile reads as EIO,
//! with the reason in `.shaderfs/errors`. A saved `hlsl/` file is compiled for the
//! shader's profile and kept in it ([`hlsl`]); `asm/` shows the shader without the source
//! it keeps, and an edit of the code there drops the source (which no longer describes
//! the shader; the view shows the shader decompiled again). Saving a view unchanged
//! leaves the record byte-identical.

pub mod generate;
mod hlsl;
pub mod read;
pub mod write;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use self::read::{Index, Record};
use self::write::NameField;
use super::{file_has_extension, has_extension, json_view};
use crate::shader::d3d9::bytecode::{self, ShaderKind, Version};
use crate::shader::d3d9::ctab::{self, ConstantTable};
use crate::shader::d3d9::{asm, disasm, kept_source};
use crate::vfs::name::{Namer, NAME_MAX};
use crate::vfs::{
    Archive, ArchiveBytes, Blob, Edit, Entry, EntryKind, FileKey, Format, FormatError, OpenContext,
    Problem, Rewrite, ViewError,
};

pub struct SdpFormat;

impl Format for SdpFormat {
    fn name(&self) -> &'static str {
        "sdp"
    }

    fn recognises(&self, path: &Path, _head: &[u8]) -> bool {
        file_has_extension(path, "sdp")
    }

    fn open(
        &self,
        path: &Path,
        map: Arc<ArchiveBytes>,
        ctx: OpenContext,
    ) -> Result<Arc<dyn Archive>, FormatError> {
        let index = read::index(&map)
            .map_err(|e| FormatError::at(e.offset(), format!("{}: {e}", path.display())))?;
        // Every view of a record adds to its name (`.asm`, `.json`): leave room for them.
        let mut namer = Namer::with_room(VIEW_SUFFIX_MAX);
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
    Asm = 2,
    Hlsl = 3,
}

impl View {
    const ALL: [View; 4] = [View::Shader, View::Asm, View::Ctab, View::Hlsl];

    fn dir(self) -> &'static str {
        match self {
            View::Shader => "shaders",
            View::Asm => "asm",
            View::Ctab => "ctab",
            View::Hlsl => "hlsl",
        }
    }

    /// What the view adds to the record's file name.
    fn suffix(self) -> &'static str {
        match self {
            View::Shader => "",
            View::Asm => ".asm",
            View::Ctab => ".json",
            View::Hlsl => ".hlsl",
        }
    }

    fn of_dir(dir: &str) -> Option<View> {
        View::ALL.into_iter().find(|v| v.dir() == dir)
    }

    /// The record name a file name of this view stands for (`X.vso.asm` → `X.vso`).
    fn record_name(self, file: &str) -> Option<&str> {
        let base = file.strip_suffix(self.suffix())?;
        (!base.is_empty()).then_some(base)
    }

    /// The record name a new or renamed file of this view gives its shader, checked.
    fn new_record_name(self, file: &str) -> Result<(&str, NameField), ViewError> {
        let base = self.record_name(file).ok_or_else(|| {
            ViewError::NotPermitted(format!(
                "{file}: files in {}/ are named <shader>{}",
                self.dir(),
                self.suffix()
            ))
        })?;
        Ok((base, check_new_name(base)?))
    }
}

const ARCHIVE_JSON: FileKey = u64::MAX;

/// The longest suffix a view adds to a record's name (`.json`, `.hlsl`).
const VIEW_SUFFIX_MAX: usize = 5;

fn key(record: usize, view: View) -> FileKey {
    (record as u64) << 2 | view as u64
}

fn unkey(key: FileKey) -> (usize, Option<View>) {
    if key == ARCHIVE_JSON {
        return (usize::MAX, None);
    }
    let view = match key & 3 {
        0 => Some(View::Shader),
        1 => Some(View::Ctab),
        2 => Some(View::Asm),
        _ => Some(View::Hlsl),
    };
    ((key >> 2) as usize, view)
}

/// An opened package.
struct Package {
    path: PathBuf,
    map: Arc<ArchiveBytes>,
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

/// The bytecode a view's new content stands for, given the record's current bytecode
/// (`None` for a new record); what the HLSL compiler warns of goes to `warnings`.
fn bytecode_from(
    view: View,
    name: &str,
    current: Option<&[u8]>,
    content: &[u8],
    warnings: &mut Vec<String>,
) -> Result<Vec<u8>, ViewError> {
    let code = match view {
        View::Shader => {
            // Checked before it is copied: a runaway write is refused at its own size.
            validate_shader(name, content)?;
            return Ok(content.to_vec());
        }
        View::Asm => match current.and_then(kept_source::split) {
            Some((bare, kept)) => hlsl::keeping_source(
                assemble_keeping_ctab(content, Some(&bare))?,
                &bare,
                current.unwrap_or_default(),
                &kept.text,
            ),
            None => assemble_keeping_ctab(content, current)?,
        },
        View::Hlsl => {
            let current = current.ok_or_else(|| {
                ViewError::NotPermitted(
                    "a new shader starts in shaders/ or asm/; hlsl/ compiles over a shader \
                     of the package, for its profile"
                        .into(),
                )
            })?;
            hlsl::compile_over(&format!("hlsl/{name}.hlsl"), current, content, warnings)?
        }
        View::Ctab => {
            let current = current.ok_or_else(|| {
                ViewError::NotPermitted("a new shader starts in shaders/ or asm/, not ctab/".into())
            })?;
            with_table(current, content)?
        }
    };
    validate_shader(name, &code)?;
    Ok(code)
}

/// One shader for [`pack`]: its record name and the files it is made from.
pub struct PackInput<'a> {
    pub name: &'a str,
    /// Bytecode, or asm text when `is_asm`.
    pub content: &'a [u8],
    pub is_asm: bool,
    /// A `ctab/`-style JSON table to put in the shader.
    pub table: Option<&'a [u8]>,
}

/// Why [`pack`] made no package.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackError {
    /// Input `index` cannot be a record by its name.
    #[error("{message}")]
    Name { index: usize, message: String },
    /// Inputs `first` and `second` would be records of the same name.
    #[error("{name} is given twice: a package holds one shader of each name")]
    Twice {
        first: usize,
        second: usize,
        name: String,
    },
    /// Input `index` is not a shader the record can hold (`table`: its constant table is
    /// what is wrong).
    #[error("{message}")]
    Content {
        index: usize,
        table: bool,
        message: String,
    },
    /// The records do not fit in a package.
    #[error("{0}")]
    Package(String),
}

/// A new package of the given shaders, each checked as a save through the mount would
/// check it (`shaderfs sdp pack`).
pub fn pack(inputs: &[PackInput<'_>]) -> Result<Vec<u8>, PackError> {
    let mut records = Vec::new();
    for (index, input) in inputs.iter().enumerate() {
        let field = check_new_name(input.name).map_err(|e| PackError::Name {
            index,
            message: e.to_string(),
        })?;
        if let Some(first) = inputs[..index].iter().position(|i| i.name == input.name) {
            return Err(PackError::Twice {
                first,
                second: index,
                name: input.name.to_owned(),
            });
        }
        let content = |table: bool| {
            move |e: ViewError| PackError::Content {
                index,
                table,
                message: e.to_string(),
            }
        };
        let view = if input.is_asm {
            View::Asm
        } else {
            View::Shader
        };
        // Bytecode, asm and tables: nothing here compiles HLSL, so nothing warns.
        let none = &mut Vec::new();
        let mut code =
            bytecode_from(view, input.name, None, input.content, none).map_err(content(false))?;
        if let Some(table) = input.table {
            code = bytecode_from(View::Ctab, input.name, Some(&code), table, none)
                .map_err(content(true))?;
        }
        records.push((field, code));
    }
    write::serialise(
        read::EXPECTED_MAGIC,
        records.iter().map(|(n, d)| (n, d.as_slice())),
    )
    .map_err(PackError::Package)
}

/// The largest shader a save may hold. Shader model 3 allows 32,768 instruction slots,
/// about 1 MiB of tokens at their longest; the rest is room for comment blocks and the
/// constant table. Checked before anything is parsed or copied.
pub const MAX_SHADER_LEN: usize = 4 << 20;

/// Check that `data` is a D3D9 shader of the kind `name`'s extension calls for.
fn validate_shader(name: &str, data: &[u8]) -> Result<(), ViewError> {
    if data.len() > MAX_SHADER_LEN {
        return Err(ViewError::Invalid(format!(
            "{} bytes: no Direct3D 9 shader is larger than {} MiB (32,768 instruction slots \
             and their tables)",
            data.len(),
            MAX_SHADER_LEN >> 20
        )));
    }
    bytecode::parse(data)
        .map_err(|e| ViewError::Invalid(format!("not D3D9 shader bytecode: {e}")))?;
    validate_kind(name, data)
}

/// A `.vso` record holds a vertex shader, a `.pso` record a pixel shader (`sdp.md` §3).
fn validate_kind(name: &str, data: &[u8]) -> Result<(), ViewError> {
    let wanted = if has_extension(name, "vso") {
        ShaderKind::Vertex
    } else if has_extension(name, "pso") {
        ShaderKind::Pixel
    } else {
        return Ok(());
    };
    match bytecode::shader_version(data) {
        Some(version) if version.kind != wanted => Err(ViewError::Invalid(format!(
            "{name} must hold a {} shader, this is {version}",
            match wanted {
                ShaderKind::Vertex => "vertex (vs_*)",
                ShaderKind::Pixel => "pixel (ps_*)",
            },
        ))),
        _ => Ok(()),
    }
}

/// Assemble a saved `asm/` file. Unedited text gives back the current bytes; text without a
/// constant table keeps the one the shader had.
fn assemble_keeping_ctab(content: &[u8], current: Option<&[u8]>) -> Result<Vec<u8>, ViewError> {
    let text = std::str::from_utf8(content).map_err(|e| {
        ViewError::Invalid(format!(
            "not UTF-8 text (byte {} cannot be read)",
            e.valid_up_to()
        ))
    })?;
    if let Some(current) = current {
        if disasm::disassemble(current).is_ok_and(|t| t == text) {
            return Ok(current.to_vec());
        }
    }
    let code = match asm::assemble(text) {
        Ok(code) => code,
        // A shader that breaks its model's limits as it stands (some compilers write such)
        // may still be saved unchanged in another layout.
        Err(e) => match (asm::assemble_unvalidated(text), current) {
            (Ok(code), Some(current)) if code == current => code,
            _ => return Err(ViewError::Invalid(e.to_string())),
        },
    };
    let own = ctab::find_ctab(&code).map_err(|e| ViewError::Invalid(e.to_string()))?;
    match (
        own,
        current.and_then(|c| ctab::find_ctab(c).ok().flatten().map(|l| (c, l))),
    ) {
        (None, Some((current, location))) if !location.truncated => {
            ctab::replace_ctab(&code, &current[location.payload])
                .map_err(|e| ViewError::Invalid(e.to_string()))
        }
        (Some(_), Some((current, _))) => Ok(keeping_unsaid(text, code, current)),
        _ => Ok(code),
    }
}

/// `code` assembled from `text`, with what its header left unsaid taken from the table of
/// `current` ([`ConstantTable::keep_unsaid`]): fxc's listing of the shader, saved over its
/// view, gives back the shader's bytes.
fn keeping_unsaid(text: &str, code: Vec<u8>, current: &[u8]) -> Vec<u8> {
    let (Ok(Some(mut table)), Ok(Some(old))) = (
        ConstantTable::from_bytecode(&code),
        ConstantTable::from_bytecode(current),
    ) else {
        return code;
    };
    let header: Vec<&str> = text
        .lines()
        .map_while(|l| {
            l.trim_start()
                .strip_prefix("//")
                .or(l.trim().is_empty().then_some(""))
        })
        .collect();
    let before = table.clone();
    table.keep_unsaid(&header, &old);
    if table == before {
        return code;
    }
    ctab::replace_ctab(&code, &table.encode()).unwrap_or(code)
}

/// `current` with the constant table a saved `ctab/` file holds (`null`: none).
fn with_table(current: &[u8], content: &[u8]) -> Result<Vec<u8>, ViewError> {
    let table: Option<ConstantTable> = serde_json::from_slice(content)
        .map_err(|e| ViewError::Invalid(format!("{}:{}: {e}", e.line(), e.column())))?;
    let location = ctab::find_ctab(current).map_err(|e| ViewError::Invalid(e.to_string()))?;
    let spliced = match table {
        None => ctab::remove_ctab(current),
        Some(table) => {
            let version = ctab::shader_version_token(current)
                .map_err(|e| ViewError::Invalid(e.to_string()))?;
            if table.version != version {
                return Err(ViewError::Invalid(format!(
                    "\"version\" is {}, but the shader is {}: a table names its own shader's \
                     version",
                    ctab::version_name(table.version)
                        .unwrap_or_else(|| format!("{:#010x}", table.version)),
                    ctab::version_name(version).unwrap_or_else(|| format!("{version:#010x}")),
                )));
            }
            let payload = match &location {
                Some(l) => ctab::reencode_preserving(&current[l.payload.clone()], &table),
                None => table.encode(),
            };
            ctab::replace_ctab(current, &payload)
        }
    };
    spliced.map_err(|e| ViewError::Invalid(e.to_string()))
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
    if name.len() > NAME_MAX - VIEW_SUFFIX_MAX {
        return Err(ViewError::NotPermitted(format!(
            "{name}: a new shader name has at most {} bytes (its ctab/ view adds .json)",
            NAME_MAX - VIEW_SUFFIX_MAX
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

    /// `writable`: whether a save into the package would land.
    fn archive_json(&self, writable: bool) -> Blob {
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
            writable,
            warnings: &self.index.warnings,
            shaders,
        })
    }

    fn ctab_json(&self, data: &[u8]) -> Result<Blob, ViewError> {
        let table = ConstantTable::from_bytecode(data)
            .map_err(|e| ViewError::Corrupt(format!("the constant table: {e}")))?;
        Ok(json_view(&table))
    }

    /// The disassembly of the shader without the source it keeps (that is `hlsl/`).
    fn asm_text(&self, data: &[u8]) -> Result<Blob, ViewError> {
        let bare = kept_source::split(data).map(|(bare, _)| bare);
        let text = disasm::disassemble(bare.as_deref().unwrap_or(data))
            .map_err(|e| ViewError::Corrupt(format!("not D3D9 shader bytecode: {e}")))?;
        Ok(Blob::owned(text.into_bytes()))
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

    /// The shader a new `hlsl/` file `file` compiles over.
    fn source_target(&self, file: &str) -> Result<usize, String> {
        View::Hlsl
            .record_name(file)
            .and_then(|base| self.find_name(base))
            .ok_or_else(|| {
                format!(
                    "{file}: files in hlsl/ are named <shader>.hlsl after a shader of the \
                     package, whose profile they are compiled for (a new shader starts in \
                     shaders/ or asm/)"
                )
            })
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
                source: None,
            },
        }];
        out.push(Entry {
            path: "shaders".into(),
            kind: EntryKind::Dir,
        });
        for view in View::ALL {
            if view != View::Shader {
                out.push(Entry {
                    path: view.dir().into(),
                    kind: EntryKind::Dir,
                });
            }
            // Every view but the bytecode is rendered when read (its size with it):
            // nothing is decoded to list a folder.
            for (i, (r, name)) in self.index.records.iter().zip(&self.names).enumerate() {
                out.push(Entry {
                    path: format!("{}/{name}{}", view.dir(), view.suffix()),
                    kind: EntryKind::File {
                        key: key(i, view),
                        size: (view == View::Shader).then_some(r.data.len() as u64),
                        writable,
                        source: Some(r.data.clone()),
                    },
                });
            }
        }
        out
    }

    fn read(&self, key: FileKey) -> Result<Blob, ViewError> {
        if key == ARCHIVE_JSON {
            return Ok(self.archive_json(self.writable));
        }
        let (i, view) = unkey(key);
        let r = self.record(i)?;
        match view {
            Some(View::Shader) => Ok(Blob::Archive(self.map.clone(), r.data.clone())),
            Some(View::Ctab) => self.ctab_json(self.data(r)),
            Some(View::Asm) => self.asm_text(self.data(r)),
            Some(View::Hlsl) => hlsl::view_of(self.data(r)).map(Blob::owned),
            None => Err(ViewError::Corrupt(format!("no view {key:#x}"))),
        }
    }

    fn member_of(&self, key: FileKey) -> Option<u64> {
        match unkey(key) {
            (record, Some(_)) => Some(record as u64),
            (_, None) => None,
        }
    }

    fn sums_up(&self, key: FileKey) -> bool {
        key == ARCHIVE_JSON
    }

    fn says_writable(&self, key: FileKey) -> bool {
        key == ARCHIVE_JSON
    }

    fn read_saying(&self, key: FileKey, writable: bool) -> Result<Blob, ViewError> {
        match key == ARCHIVE_JSON {
            true => Ok(self.archive_json(writable)),
            false => self.read(key),
        }
    }

    fn new_member(&self, dir: &str, name: &str) -> Result<(), String> {
        match View::of_dir(dir) {
            Some(view @ (View::Shader | View::Asm)) => view
                .new_record_name(name)
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Some(View::Ctab) => {
                Err("a new shader starts in shaders/ or asm/; ctab/ files follow from it".into())
            }
            Some(View::Hlsl) => self.source_target(name).map(|_| ()),
            None => Err(format!(
                "a package holds shaders/, asm/, ctab/ and hlsl/ and nothing else{}",
                if dir.is_empty() {
                    String::new()
                } else {
                    format!(" (not {dir}/)")
                }
            )),
        }
    }

    fn unshown(&self) -> Vec<Problem> {
        self.index
            .records
            .iter()
            .zip(&self.names)
            .filter_map(|(r, name)| {
                let why = hlsl::unshown(self.data(r))?;
                Some(Problem::in_file(
                    format!("hlsl/{name}.hlsl"),
                    why.to_string(),
                ))
            })
            .collect()
    }

    fn position(&self, key: FileKey) -> Option<usize> {
        match unkey(key) {
            (i, Some(View::Shader)) if i < self.index.records.len() => Some(i),
            _ => None,
        }
    }

    fn apply(&self, edit: &Edit<'_>) -> Result<Rewrite, ViewError> {
        let mut records = self.current();
        let replaced: Vec<u8>;
        let mut warnings = Vec::new();
        match *edit {
            Edit::Write { key, data } => {
                let (i, view) = unkey(key);
                let view = view
                    .ok_or_else(|| ViewError::NotPermitted("archive.json is read-only".into()))?;
                let r = self.record(i)?;
                replaced = bytecode_from(
                    view,
                    &self.names[i],
                    Some(self.data(r)),
                    data,
                    &mut warnings,
                )?;
                records[i].1 = &replaced;
            }
            Edit::Create {
                dir,
                name,
                data,
                position,
            } => {
                let view = View::of_dir(dir).ok_or_else(|| {
                    ViewError::NotPermitted(format!("new shaders go in shaders/, not {dir}/"))
                })?;
                if view == View::Hlsl {
                    // The source of a shader that kept none: saved over that shader.
                    let i = self.source_target(name).map_err(ViewError::NotPermitted)?;
                    replaced = bytecode_from(
                        view,
                        &self.names[i],
                        Some(records[i].1),
                        data,
                        &mut warnings,
                    )?;
                    records[i].1 = &replaced;
                    return self
                        .serialise(records)
                        .map(|bytes| Rewrite::whole(bytes).with_warnings(warnings));
                }
                let (base, field) = view.new_record_name(name)?;
                replaced = bytecode_from(view, base, None, data, &mut warnings)?;
                let at = position.unwrap_or(records.len()).min(records.len());
                records.insert(at, (field, &replaced));
            }
            Edit::Remove { key } => match unkey(key) {
                (i, Some(View::Shader)) => {
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
                let view = view
                    .filter(|v| v.dir() == dir)
                    .ok_or_else(|| ViewError::NotPermitted("renames stay in one folder".into()))?;
                self.record(i)?;
                let (base, field) = view.new_record_name(name)?;
                validate_kind(base, records[i].1)?;
                records[i].0 = field;
                // Renaming over another shader replaces it, as `mv` does.
                if let Some(j) = self.find_name(base).filter(|&j| j != i) {
                    records.remove(j);
                }
            }
        }
        self.serialise(records)
            .map(|bytes| Rewrite::whole(bytes).with_warnings(warnings))
    }
}
