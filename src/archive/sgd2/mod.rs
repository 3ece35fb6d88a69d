//! GTA V Enhanced shader databases (`SGD2`, `sga_win32_60_final*.awc`), per
//! `shared/formats/sgd2.md`. Programs can be replaced; everything else is read-only.
//!
//! ```text
//! archive.json                                   group counts, effect count, file size
//! census.json                                    the whole database counted (census.rs)
//! programs/<stage>/<n>.dxil                      the DXBC container, bytes as stored;
//!                                                writing it replaces the program
//! programs/<stage>/<n>.json                      name, tag, 152-byte table, CRC-32,
//!                                                bindings (both readings), the container
//!                                                decoded (digest checked, every part),
//!                                                the dx.op intrinsics it calls
//! programs/<stage>/<n>.ll                        the program's LLVM IR, as llvm-dis-14
//!                                                prints its bitcode, after a summary of
//!                                                the container (dxbc::listing)
//! programs/<stage>/index.json                    every program's name and CRC-32, and
//!                                                the programs of each name and each CRC
//! programs/<stage>/by-name/<name>/<n>.dxil       symlinks to the programs of a name
//! programs/group6/, group7/                      only when not empty
//! effects/<name>/effect.json                     word, program lists, techniques,
//!                                                proplst sections, name block
//! effects/<name>/pre_proplst.bin                 the region before proplst, raw
//! effects/<name>/programs/<stage>/<k>.{dxil,ll}  symlinks into programs/
//! effects/<name>/passes/<technique>/<p>/state.json          rasterizer, depth-stencil,
//!                                                           blend, samplers
//! effects/<name>/passes/<technique>/<p>/<stage>.{dxil,ll}   symlinks into programs/
//! ```
//!
//! Opening indexes the framing ([`read`]) and looks for each effect's technique table
//! ([`effect::find`], a scan of a few kilobytes per effect, needed to list `passes/`);
//! programs' JSON and IR are rendered on first `stat` and cached by the vfs; the census is
//! computed on its first read and kept with the snapshot.
//!
//! Writing `programs/<stage>/<n>.dxil` checks the container ([`write::check_container`]:
//! envelope, a DXIL program of that stage, a digest that verifies, or with `-o sign` the
//! digest written) and re-serialises the database with it ([`write::serialise`]): every
//! other byte stays as it was, and effects keep addressing programs by the same indices.

pub mod binding;
pub mod census;
pub mod effect;
pub mod generate;
pub mod joaat;
pub mod read;
mod tree;
pub mod write;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_ir;
#[cfg(test)]
mod tests_write;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde_json::{json, Map, Value};

use self::effect::{Decoded, Layout};
use self::read::{group_dir, Index, Program, STAGES};
use super::json_view;
use crate::shader::dxbc::decode::{self, ContainerView};
use crate::shader::dxbc::{crc32_key, listing};
use crate::vfs::name::Namer;
use crate::vfs::{
    walk_folders, Archive, ArchiveBytes, Blob, Edit, Entry, FileKey, Format, FormatError, Members,
    OpenContext, Problem, Rewrite, ViewError,
};

pub struct Sgd2Format;

impl Format for Sgd2Format {
    fn name(&self) -> &'static str {
        "sgd2"
    }

    /// By the magic only: `.awc` is also GTA's audio container (`sgd2.md` §1).
    fn recognises(&self, _path: &Path, head: &[u8]) -> bool {
        head.starts_with(read::MAGIC)
    }

    fn open(
        &self,
        path: &Path,
        map: Arc<ArchiveBytes>,
        ctx: OpenContext,
    ) -> Result<Arc<dyn Archive>, FormatError> {
        let db = Database::open(path, map)
            .map_err(|e| FormatError::at(e.offset(), format!("{}: {e}", path.display())))?;
        Ok(Arc::new(db.with_context(ctx)))
    }
}

/// `programs/<stage>/<n>.json`. Typed rather than built as a `Value`: `ls -l` of a stage
/// renders thousands of these.
#[derive(Serialize)]
struct ProgramJson {
    stage: String,
    group: usize,
    index: usize,
    name: String,
    tag: String,
    wave_size: WaveSize,
    /// `container`, `intrinsics` and `intrinsics_complete`, as `shaderfs dxil info`
    /// shows them for a loose container.
    #[serde(flatten)]
    container: ContainerView,
    table: TableJson,
    bindings: BindingsJson,
}

#[derive(Serialize)]
struct WaveSize {
    public_parser: &'static str,
    seed: &'static str,
}

#[derive(Serialize)]
struct TableJson {
    hash_u64: String,
    bytes_144: String,
}

#[derive(Serialize)]
#[serde(untagged)]
enum BindingsJson {
    Decoded(binding::Bindings),
    Error { length: usize, error: String },
}

/// What the tree needs of one effect, found at open.
struct EffectTree {
    /// The effect's directory name (escaped, unique).
    dir: String,
    layout: Decoded,
    /// Per technique, its directory name under `passes/` (escaped, unique).
    technique_dirs: Vec<String>,
}

/// An opened database: the mapping, its framing and each effect's technique layout.
pub struct Database {
    path: PathBuf,
    map: Arc<ArchiveBytes>,
    index: Index,
    effects: Vec<EffectTree>,
    /// Mounted read-write: programs' containers can be replaced.
    writable: bool,
    /// `-o sign`: a replacement's digest is written rather than checked.
    sign: bool,
    /// `census.json`, rendered on its first read.
    census: OnceLock<Blob>,
    /// What finds the tree's folders ([`tree`]).
    folders: tree::Folders,
}

/// Which file a key names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    ArchiveJson,
    Census,
    ProgramDxil { group: usize, index: usize },
    ProgramJson { group: usize, index: usize },
    EffectJson { effect: usize },
    Region { effect: usize },
    State { effect: usize, pass: usize },
    ProgramIr { group: usize, index: usize },
    StageIndex { group: usize },
}

const FIELD: u64 = (1 << 28) - 1;

fn key(view: View) -> FileKey {
    let (kind, a, b) = match view {
        View::ArchiveJson => (0, 0, 0),
        View::ProgramDxil { group, index } => (1, group, index),
        View::ProgramJson { group, index } => (2, group, index),
        View::EffectJson { effect } => (3, effect, 0),
        View::Region { effect } => (4, effect, 0),
        View::State { effect, pass } => (5, effect, pass),
        View::Census => (6, 0, 0),
        View::ProgramIr { group, index } => (7, group, index),
        View::StageIndex { group } => (8, group, 0),
    };
    kind << 56 | (a as u64 & FIELD) << 28 | (b as u64 & FIELD)
}

fn unkey(key: FileKey) -> Option<View> {
    let (a, b) = (((key >> 28) & FIELD) as usize, (key & FIELD) as usize);
    Some(match key >> 56 {
        0 => View::ArchiveJson,
        1 => View::ProgramDxil { group: a, index: b },
        2 => View::ProgramJson { group: a, index: b },
        3 => View::EffectJson { effect: a },
        4 => View::Region { effect: a },
        5 => View::State { effect: a, pass: b },
        6 => View::Census,
        7 => View::ProgramIr { group: a, index: b },
        8 => View::StageIndex { group: a },
        _ => return None,
    })
}

/// Bytes as text, invalid UTF-8 replaced (names are shown, the escaped file names are
/// what identifies them).
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Bytes as lower-case hex digits, two per byte.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(2 * bytes.len());
    for &b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 0xF) as usize] as char);
    }
    out
}

/// A 32-bit hash as the trees show hashes: `"0x1234abcd"`.
fn hex32(v: u32) -> String {
    format!("{v:#010x}")
}

/// The tag byte as the public parser's GUI labels it (`sgd2.md` §3); the seed calls it an
/// unknown tag.
fn wave_size(tag: u8) -> &'static str {
    match tag {
        0x32 => "Wave32",
        0x41 => "Wave64 (preferred)",
        0x42 => "Wave64 (required)",
        _ => "unknown",
    }
}

impl Database {
    /// Index `map` and find each effect's technique table.
    pub fn open(path: &Path, map: Arc<ArchiveBytes>) -> Result<Database, read::Sgd2Error> {
        let index = read::index(&map)?;
        let mut namer = Namer::new();
        let effects = index
            .effects
            .iter()
            .map(|e| {
                let lists = std::array::from_fn(|s| e.list_len(s));
                let layout = effect::find(&map[e.region.clone()], lists, &map[e.names.clone()]);
                let mut techniques = Namer::new();
                let technique_dirs = match &layout {
                    Decoded::Found(l) => l
                        .techniques
                        .iter()
                        .map(|t| techniques.name(&t.name))
                        .collect(),
                    Decoded::Undecoded(_) => Vec::new(),
                };
                EffectTree {
                    dir: namer.name(&map[e.name.clone()]),
                    layout,
                    technique_dirs,
                }
            })
            .collect();
        Ok(Database {
            path: path.to_path_buf(),
            map,
            index,
            effects,
            writable: false,
            sign: false,
            census: OnceLock::new(),
            folders: tree::Folders::default(),
        })
    }

    /// The database as the mount's options open it (read-write, signing).
    pub fn with_context(mut self, ctx: OpenContext) -> Database {
        self.writable = ctx.writable;
        self.sign = ctx.sign;
        self
    }

    /// The whole database re-serialised with no change: byte-identical to the file.
    pub fn serialise(&self) -> Vec<u8> {
        write::serialise(&self.map, &self.index, None).to_vec(&self.map)
    }

    fn census(&self) -> Blob {
        self.census
            .get_or_init(|| json_view(&census::census(&self.map, &self.index)))
            .clone()
    }

    /// Replace a program's container (`write` checks it).
    fn replace_program(
        &self,
        group: usize,
        index: usize,
        data: &[u8],
    ) -> Result<Rewrite, ViewError> {
        self.program(group, index)?;
        let container = write::check_container(data, group, self.sign).map_err(|e| {
            ViewError::Invalid(format!("programs/{}/{index}.dxil: {e}", group_dir(group)))
        })?;
        let replacement = write::Replacement {
            group,
            index,
            container: &container,
        };
        Ok(write::serialise(&self.map, &self.index, Some(&replacement)))
    }

    fn program(&self, group: usize, index: usize) -> Result<&Program, ViewError> {
        self.index
            .groups
            .get(group)
            .and_then(|g| g.programs.get(index))
            .ok_or_else(|| ViewError::Corrupt(format!("no program {index} in group {group}")))
    }

    fn effect(&self, i: usize) -> Result<(&read::Effect, &EffectTree), ViewError> {
        match (self.index.effects.get(i), self.effects.get(i)) {
            (Some(e), Some(t)) => Ok((e, t)),
            _ => Err(ViewError::Corrupt(format!("no effect {i}"))),
        }
    }

    /// `writable`: whether a save into the database would land.
    fn archive_json(&self, writable: bool) -> Value {
        let groups: Vec<Value> = self
            .index
            .groups
            .iter()
            .enumerate()
            .map(|(g, group)| {
                json!({
                    "group": g,
                    "stage": STAGES.get(g).copied(),
                    "directory": group_dir(g),
                    "offset": group.offset,
                    "programs": group.programs.len(),
                })
            })
            .collect();
        let decoded = self
            .effects
            .iter()
            .filter(|e| matches!(e.layout, Decoded::Found(_)))
            .count();
        // Where each effect lies: the effects' own JSON carries no absolute offsets, so
        // that `diff -r` of two databases shows what changed rather than what moved.
        let effects: Vec<Value> = self
            .index
            .effects
            .iter()
            .zip(&self.effects)
            .enumerate()
            .map(|(i, (e, tree))| {
                json!({
                    "index": i,
                    "directory": format!("effects/{}", tree.dir),
                    "offset": e.offset,
                    "region": { "offset": e.region.start, "length": e.region.len() },
                })
            })
            .collect();
        json!({
            "format": "sgd2",
            "file": self.path.file_name().map(|n| n.to_string_lossy().into_owned()),
            "file_size": self.map.len(),
            "writable": writable,
            "sign": self.sign,
            "groups": groups,
            "program_count": self.index.groups.iter().map(|g| g.programs.len()).sum::<usize>(),
            "effect_count": self.index.effects.len(),
            "effects_offset": self.index.effects_offset,
            "effects_with_techniques": decoded,
            "effects_undecoded": self.effects.len() - decoded,
            "effects": effects,
            "warnings": self.index.warnings,
        })
    }

    fn program_json(&self, group: usize, index: usize) -> Result<ProgramJson, ViewError> {
        let p = self.program(group, index)?;
        let bytes = &self.map[p.container()];
        let table = &self.map[p.table()];
        let bindings = match binding::decode(&self.map[p.bindings()]) {
            Ok(b) => BindingsJson::Decoded(b),
            Err(error) => BindingsJson::Error {
                length: p.bindings().len(),
                error,
            },
        };
        Ok(ProgramJson {
            stage: group_dir(group),
            group,
            index,
            name: text(&self.map[p.name()]),
            tag: format!("{:#04x}", p.tag),
            wave_size: WaveSize {
                public_parser: wave_size(p.tag),
                seed: "unknown tag (0x32, 0x41 or 0x42 observed)",
            },
            container: ContainerView::of(bytes),
            table: TableJson {
                hash_u64: format!(
                    "{:#018x}",
                    u64::from_le_bytes(table[..8].try_into().expect("8 bytes"))
                ),
                bytes_144: hex(&table[8..]),
            },
            bindings,
        })
    }

    /// `programs/<stage>/<n>.ll`: the container summed up, then its IR. Bitcode that
    /// does not read is an error that says where in the file and in which record.
    fn program_ir(&self, group: usize, index: usize) -> Result<Blob, ViewError> {
        let p = self.program(group, index)?;
        let name = format!("programs/{}/{index}.dxil", group_dir(group));
        match listing::listing(&self.map[p.container()], &name) {
            Ok(text) => Ok(Blob::owned(text.into_bytes())),
            Err(e) => Err(ViewError::Corrupt(match e.offset() {
                Some(at) => format!("file offset {:#x}: {e}", p.container().start + at),
                None => format!("{name}: {e}"),
            })),
        }
    }

    /// `programs/<stage>/index.json`: each program's name and CRC-32 (the key mods use),
    /// and the programs of each name and of each CRC-32.
    fn stage_index(&self, g: usize) -> Result<Value, ViewError> {
        let group = self
            .index
            .groups
            .get(g)
            .ok_or_else(|| ViewError::Corrupt(format!("no group {g}")))?;
        let mut programs = Vec::with_capacity(group.programs.len());
        let mut by_name: Map<String, Value> = Map::new();
        let mut by_crc: Map<String, Value> = Map::new();
        let names = self.name_dirs(g);
        for ((i, p), &k) in group.programs.iter().enumerate().zip(&names.of) {
            let name_dir = &names.dirs[k];
            let name = text(&self.map[p.name()]);
            let crc = crc32_key(&self.map[p.container()]);
            programs.push(json!({
                "index": i,
                "name": name,
                "crc32": crc,
                "by_name": format!("by-name/{name_dir}"),
                "offset": p.offset,
                "container": { "offset": p.container().start, "length": p.container().len() },
            }));
            for (map, key) in [(&mut by_name, name), (&mut by_crc, crc)] {
                match map.get_mut(&key) {
                    Some(Value::Array(list)) => list.push(json!(i)),
                    _ => {
                        map.insert(key, json!([i]));
                    }
                }
            }
        }
        Ok(json!({
            "stage": group_dir(g),
            "programs": programs,
            "by_name": by_name,
            "by_crc32": by_crc,
        }))
    }

    fn effect_json(&self, i: usize) -> Result<Value, ViewError> {
        let (e, tree) = self.effect(i)?;
        let bytes: &[u8] = &self.map;
        let block = &bytes[e.names.clone()];
        let names = effect::names(block);
        let mut lists = Map::new();
        for (s, stage) in STAGES.iter().enumerate() {
            lists.insert(
                (*stage).into(),
                json!(e.list(bytes, s).collect::<Vec<u32>>()),
            );
        }
        let bodies: Vec<&[u8]> = e.sections.iter().map(|r| &bytes[r.clone()]).collect();
        let resolver = joaat::Resolver::new(&names);
        let sections: Vec<Value> = bodies
            .iter()
            .enumerate()
            .map(|(k, body)| effect::section_json(k, body, &resolver))
            .collect();
        let referenced = effect::referenced_hashes(&bodies);
        let (techniques, table) = match &tree.layout {
            Decoded::Found(layout) => (
                self.techniques_json(e, tree, layout, &names),
                json!({
                    "found_at": layout.at,
                    "length": layout.end - layout.at,
                    "state_tables": {
                        "rasterizer": layout.state_count(0),
                        "depth_stencil": layout.state_count(1),
                        "blend": layout.state_count(2),
                        "sampler": layout.state_count(3),
                    },
                }),
            ),
            Decoded::Undecoded(why) => (json!("undecoded"), json!({ "undecoded": why })),
        };
        Ok(json!({
            "name": text(&bytes[e.name.clone()]),
            "index": i,
            "word": e.word,
            "word_readings": {
                "seed": "purpose unresolved; not the record's size",
                "public_parser": "data_buffer_size",
            },
            "programs": lists,
            "region": {
                "length": e.region.len(),
                "file": "pre_proplst.bin",
            },
            "technique_table": table,
            "techniques": techniques,
            "proplst": sections,
            "name_block": names.iter().map(|n| text(n)).collect::<Vec<_>>(),
            "public_parser_techniques": effect::public_techniques(&names, &referenced),
        }))
    }

    /// The name a pass takes from the name block: its position in the trailing run of
    /// pass names, when the run is long enough (the public parser's reading).
    fn pass_name(names: &[&[u8]], k: usize) -> Option<String> {
        let run = &names[effect::pass_run(names)..];
        run.get(k).map(|n| text(n))
    }

    fn pass_programs(&self, e: &read::Effect, pass: &effect::Pass) -> Map<String, Value> {
        let mut out = Map::new();
        for (s, &pos) in pass.programs.iter().enumerate() {
            if pos == 0 {
                continue;
            }
            let program = e.list(&self.map, s).nth(pos as usize - 1);
            out.insert(
                STAGES[s].into(),
                json!({ "position": pos, "program": program }),
            );
        }
        out
    }

    fn techniques_json(
        &self,
        e: &read::Effect,
        tree: &EffectTree,
        layout: &Layout,
        names: &[&[u8]],
    ) -> Value {
        let list: Vec<Value> = layout
            .techniques
            .iter()
            .zip(&tree.technique_dirs)
            .map(|(t, dir)| {
                let passes: Vec<Value> = t
                    .passes
                    .clone()
                    .enumerate()
                    .map(|(k, p)| {
                        let pass = &layout.passes[p];
                        json!({
                            "pass": k,
                            "name": Self::pass_name(names, k),
                            "programs": self.pass_programs(e, pass),
                            "rasterizer": pass.rasterizer,
                            "depth_stencil": pass.depth_stencil,
                            "blend": pass.blend,
                        })
                    })
                    .collect();
                json!({
                    "name": text(&t.name),
                    "directory": dir,
                    "name_offset": t.name_offset,
                    "passes": passes,
                })
            })
            .collect();
        json!(list)
    }

    fn state_json(&self, i: usize, p: usize) -> Result<Value, ViewError> {
        let (e, tree) = self.effect(i)?;
        let Decoded::Found(layout) = &tree.layout else {
            return Err(ViewError::Corrupt(format!("effect {i} has no passes")));
        };
        let pass = layout
            .passes
            .get(p)
            .ok_or_else(|| ViewError::Corrupt(format!("effect {i} has no pass {p}")))?;
        let t = layout
            .techniques
            .iter()
            .find(|t| t.passes.contains(&p))
            .ok_or_else(|| ViewError::Corrupt(format!("pass {p} belongs to no technique")))?;
        let k = p - t.passes.start;
        let bytes: &[u8] = &self.map;
        let region = &bytes[e.region.clone()];
        let names = effect::names(&bytes[e.names.clone()]);
        let record = &region[pass.at..pass.at + effect::PASS_LEN];
        let samplers: Vec<Value> = (0..layout.state_count(3))
            .map(|s| effect::sampler_json(s, layout.state(region, 3, s)))
            .collect();
        Ok(json!({
            "effect": text(&bytes[e.name.clone()]),
            "technique": text(&t.name),
            "pass": k,
            "name": Self::pass_name(&names, k),
            "record_in_region": pass.at,
            "programs": self.pass_programs(e, pass),
            "rasterizer": effect::rasterizer_json(pass.rasterizer as usize, layout.state(region, 0, pass.rasterizer as usize)),
            "depth_stencil": effect::depth_stencil_json(pass.depth_stencil as usize, layout.state(region, 1, pass.depth_stencil as usize)),
            "blend": effect::blend_json(pass.blend as usize, layout.state(region, 2, pass.blend as usize)),
            "samplers": samplers,
            "samplers_note": "the effect's sampler table; pass records name no sampler",
            "unknown_06_07": hex(&record[6..8]),
            "unknown_0b_17": hex(&record[11..24]),
        }))
    }
}

impl Archive for Database {
    fn entries(&self) -> Vec<Entry> {
        walk_folders(self)
    }

    fn members_in(&self, dir: &str, out: &mut dyn Members) {
        self.folder(dir, out)
    }

    fn describes_folders(&self) -> bool {
        true
    }

    fn member_of(&self, key: FileKey) -> Option<u64> {
        match unkey(key)? {
            View::ProgramDxil { group, index }
            | View::ProgramJson { group, index }
            | View::ProgramIr { group, index } => Some((group as u64) << 32 | index as u64),
            _ => None,
        }
    }

    fn says_writable(&self, key: FileKey) -> bool {
        matches!(unkey(key), Some(View::ArchiveJson))
    }

    fn read_saying(&self, key: FileKey, writable: bool) -> Result<Blob, ViewError> {
        match self.says_writable(key) {
            true => Ok(json_view(&self.archive_json(writable))),
            false => self.read(key),
        }
    }

    fn read(&self, key: FileKey) -> Result<Blob, ViewError> {
        let view = unkey(key).ok_or_else(|| ViewError::Corrupt(format!("no view {key:#x}")))?;
        let value = match view {
            View::ArchiveJson => self.archive_json(self.writable),
            View::Census => return Ok(self.census()),
            View::ProgramDxil { group, index } => {
                let p = self.program(group, index)?;
                return Ok(Blob::Archive(self.map.clone(), p.container()));
            }
            View::Region { effect } => {
                let (e, _) = self.effect(effect)?;
                return Ok(Blob::Archive(self.map.clone(), e.region.clone()));
            }
            View::ProgramJson { group, index } => {
                return Ok(json_view(&self.program_json(group, index)?));
            }
            View::ProgramIr { group, index } => return self.program_ir(group, index),
            View::StageIndex { group } => self.stage_index(group)?,
            View::EffectJson { effect } => self.effect_json(effect)?,
            View::State { effect, pass } => self.state_json(effect, pass)?,
        };
        Ok(json_view(&value))
    }

    fn new_member(&self, dir: &str, name: &str) -> Result<(), String> {
        let group = dir
            .strip_prefix("programs/")
            .and_then(|d| (0..read::GROUPS).find(|&g| group_dir(g) == d));
        let index = name
            .strip_suffix(".dxil")
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        match (group, index) {
            (Some(g), Some(n)) => {
                let count = self.index.groups.get(g).map_or(0, |g| g.programs.len());
                Err(format!(
                    "program {n} is past the end of {dir}/ ({count} programs, 0.dxil to \
                     {}.dxil): programs can be replaced, not added, as effects address them \
                     by index",
                    count.saturating_sub(1)
                ))
            }
            _ => Err(
                "in an SGD2 database only programs/<stage>/<n>.dxil can be written (replaced)"
                    .into(),
            ),
        }
    }

    fn apply(&self, edit: &Edit<'_>) -> Result<Rewrite, ViewError> {
        if let Edit::Write { key, data } = edit {
            if let Some(View::ProgramDxil { group, index }) = unkey(*key) {
                return self.replace_program(group, index, data);
            }
        }
        Err(ViewError::NotPermitted(
            "in an SGD2 database only programs/<stage>/<n>.dxil can be written (replaced); \
             programs cannot be added, removed or renamed, as effects address them by index"
                .into(),
        ))
    }

    /// Every program whose container D3D12 or the game would refuse as it stands.
    fn problems(&self) -> Vec<Problem> {
        let mut out = Vec::new();
        for (g, group) in self.index.groups.iter().enumerate() {
            for (i, p) in group.programs.iter().enumerate() {
                let at = format!("programs/{}/{i}.dxil", group_dir(g));
                match decode::decode(&self.map[p.container()]) {
                    Ok(program) => out.extend(
                        program
                            .problems()
                            .into_iter()
                            .map(|problem| Problem::in_file(&at, problem)),
                    ),
                    Err(e) => out.push(Problem {
                        offset: Some(p.container().start as u64),
                        ..Problem::in_file(&at, e.to_string())
                    }),
                }
            }
        }
        out
    }
}
