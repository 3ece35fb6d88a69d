//! The database's tree, one folder at a time.
//!
//! A mount asks for a folder's entries when someone first looks into it, so mounting a
//! database ten times the game's size describes its root and nothing else, and `ls
//! programs/pixel` describes that folder alone. [`Database::folder`] describes any
//! folder from the framing index (and a few maps built on first use: each stage's
//! program names, the effects' folder names); the whole tree is the same answers walked
//! from the root ([`crate::vfs::walk_folders`]).

use rustc_hash::FxHashMap;
use std::ops::Range;
use std::sync::OnceLock;

use super::effect::Decoded;
use super::read::{group_dir, GROUPS, STAGES};
use super::{key, Database, View};
use crate::vfs::name::Namer;
use crate::vfs::tree::Name;
use crate::vfs::{EntryKind, Member, Members};

/// The views of a program that links point at, by extension.
const LINKED: [&str; 2] = ["dxil", "ll"];

/// One stage's program names: the folder under `by-name/` of each distinct name, in the
/// order names first appear, and which of them each program has.
pub(super) struct NameDirs {
    pub dirs: Vec<String>,
    pub of: Vec<usize>,
    /// The programs under each folder, in order.
    members: Vec<Vec<u32>>,
    by_dir: FxHashMap<String, usize>,
}

/// Maps the tree's folders are found by, built on first use.
#[derive(Default)]
pub(super) struct Folders {
    names: [OnceLock<NameDirs>; GROUPS],
    effects: OnceLock<FxHashMap<String, usize>>,
}

impl Database {
    /// Group `g`'s program names (computed once).
    pub(super) fn name_dirs(&self, g: usize) -> &NameDirs {
        self.folders.names[g].get_or_init(|| {
            let mut namer = Namer::new();
            let mut seen: FxHashMap<&[u8], usize> = FxHashMap::default();
            let mut dirs = Vec::new();
            let mut members: Vec<Vec<u32>> = Vec::new();
            let programs = &self.index.groups[g].programs;
            let mut of = Vec::with_capacity(programs.len());
            for (i, p) in programs.iter().enumerate() {
                let raw = &self.map[p.name()];
                let k = *seen.entry(raw).or_insert_with(|| {
                    dirs.push(namer.name(raw));
                    members.push(Vec::new());
                    dirs.len() - 1
                });
                members[k].push(i as u32);
                of.push(k);
            }
            let by_dir = dirs
                .iter()
                .enumerate()
                .map(|(k, d)| (d.clone(), k))
                .collect();
            NameDirs {
                dirs,
                of,
                members,
                by_dir,
            }
        })
    }

    /// The effect whose folder under `effects/` is `name`.
    fn effect_named(&self, name: &str) -> Option<usize> {
        let by_dir = self.folders.effects.get_or_init(|| {
            let dirs = self.effects.iter().enumerate();
            dirs.map(|(i, tree)| (tree.dir.clone(), i)).collect()
        });
        by_dir.get(name).copied()
    }

    /// The group whose folder under `programs/` is `name`.
    fn group_named(&self, name: &str) -> Option<usize> {
        self.shown_groups().find(|&g| group_dir(g) == name)
    }

    /// The groups with a folder under `programs/`: the six stages, and the two unnamed
    /// groups when they hold programs.
    fn shown_groups(&self) -> impl Iterator<Item = usize> + '_ {
        let groups = self.index.groups.iter().enumerate();
        groups
            .filter(|(g, group)| *g < STAGES.len() || !group.programs.is_empty())
            .map(|(g, _)| g)
    }

    /// Hand the entries directly in `folder` ("" for the root) to `members`, in archive
    /// order; none for a path that is not a folder of the tree.
    pub(super) fn folder(&self, folder: &str, members: &mut dyn Members) {
        let parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
        let mut out = Folder { members };
        match parts[..] {
            [] => {
                out.summary("archive.json", View::ArchiveJson);
                out.summary("census.json", View::Census);
                out.dir("programs");
                out.dir("effects");
            }
            ["programs"] => {
                for g in self.shown_groups() {
                    out.dir(group_dir(g));
                }
            }
            ["programs", stage] => {
                if let Some(g) = self.group_named(stage) {
                    self.stage_folder(g, &mut out);
                }
            }
            ["programs", stage, "by-name"] => {
                if let Some(g) = self.group_named(stage) {
                    for name in &self.name_dirs(g).dirs {
                        out.dir(name);
                    }
                }
            }
            ["programs", stage, "by-name", name] => {
                let Some(names) = self.group_named(stage).map(|g| self.name_dirs(g)) else {
                    return;
                };
                let members = names.by_dir.get(name).map(|&k| &names.members[k]);
                for i in members.into_iter().flatten() {
                    out.link(numbered(*i as usize, "dxil"), format!("../../{i}.dxil"));
                }
            }
            ["effects"] => {
                for tree in &self.effects {
                    out.dir(&tree.dir);
                }
            }
            ["effects", effect, ref rest @ ..] => {
                if let Some(i) = self.effect_named(effect) {
                    self.effect_folder(i, rest, &mut out);
                }
            }
            _ => {}
        }
    }

    /// `programs/<stage>/`: each program's container, JSON and IR, the stage's index and
    /// its `by-name/` folder.
    fn stage_folder(&self, g: usize, out: &mut Folder) {
        let group = &self.index.groups[g];
        out.members.reserve(3 * group.programs.len() + 2);
        for (i, p) in group.programs.iter().enumerate() {
            let record = Some(p.offset..p.bindings().end);
            let size = Some(p.container().len() as u64);
            let dxil = View::ProgramDxil { group: g, index: i };
            out.file(
                numbered(i, "dxil"),
                dxil,
                size,
                self.writable,
                record.clone(),
            );
            let json = View::ProgramJson { group: g, index: i };
            out.file(numbered(i, "json"), json, None, false, record.clone());
            let ir = View::ProgramIr { group: g, index: i };
            out.file(numbered(i, "ll"), ir, None, false, record);
        }
        let index = View::StageIndex { group: g };
        out.file("index.json", index, None, false, self.group_records(g));
        out.dir("by-name");
    }

    /// The bytes of group `g`'s program records (what `index.json` is made of).
    fn group_records(&self, g: usize) -> Option<Range<usize>> {
        let group = &self.index.groups[g];
        let end = group
            .programs
            .last()
            .map_or(group.offset, |p| p.bindings().end);
        Some(group.offset..end)
    }

    /// A folder of effect `i`: its own (`rest` empty) or one below it.
    fn effect_folder(&self, i: usize, rest: &[&str], out: &mut Folder) {
        let (e, tree) = (&self.index.effects[i], &self.effects[i]);
        let bytes: &[u8] = &self.map;
        let record = Some(e.offset..e.names.end);
        let has_lists = (0..STAGES.len()).any(|s| e.list_len(s) > 0);
        let layout = match &tree.layout {
            Decoded::Found(layout) => Some(layout),
            Decoded::Undecoded(_) => None,
        };
        let stage_of = |name: &str| STAGES.iter().position(|s| *s == name);
        match rest {
            [] => {
                out.file(
                    "effect.json",
                    View::EffectJson { effect: i },
                    None,
                    false,
                    record,
                );
                let region = e.region.clone();
                let size = Some(region.len() as u64);
                out.file(
                    "pre_proplst.bin",
                    View::Region { effect: i },
                    size,
                    false,
                    Some(region),
                );
                if has_lists {
                    out.dir("programs");
                }
                if layout.is_some() {
                    out.dir("passes");
                }
            }
            ["programs"] if has_lists => {
                for (s, stage) in STAGES.iter().enumerate() {
                    if e.list_len(s) > 0 {
                        out.dir(*stage);
                    }
                }
            }
            ["programs", stage] => {
                if let Some(s) = stage_of(stage) {
                    for (k, program) in e.list(bytes, s).enumerate() {
                        for ext in LINKED {
                            out.link(numbered(k, ext), program_link(4, s, program, ext));
                        }
                    }
                }
            }
            ["passes"] if layout.is_some() => {
                for tdir in &tree.technique_dirs {
                    out.dir(tdir);
                }
            }
            ["passes", technique, ref pass @ ..] => {
                let Some(layout) = layout else { return };
                let Some(t) = tree.technique_dirs.iter().position(|d| d == technique) else {
                    return;
                };
                let passes = layout.techniques[t].passes.clone();
                match pass {
                    [] => {
                        for k in 0..passes.len() {
                            out.dir(number(k));
                        }
                    }
                    [k] => {
                        // Only the number as the folder is named names a pass (not `01`).
                        let number = k.parse::<usize>().ok().filter(|n| n.to_string() == *k);
                        let Some(p) = number.and_then(|n| passes.clone().nth(n)) else {
                            return;
                        };
                        let state = View::State { effect: i, pass: p };
                        out.file("state.json", state, None, false, record);
                        for (s, &pos) in layout.passes[p].programs.iter().enumerate() {
                            let program = pos
                                .checked_sub(1)
                                .and_then(|q| e.list(bytes, s).nth(q as usize));
                            if let Some(program) = program {
                                for ext in LINKED {
                                    let name = compact_str::format_compact!("{}.{ext}", STAGES[s]);
                                    out.link(name, program_link(5, s, program, ext));
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

/// `N.ext`, written without the formatting machinery (a stage folder of the ten-times
/// database names 227,822 files so; compact_str's own integer conversion was a fifth of
/// describing that folder).
fn numbered(n: usize, ext: &str) -> Name {
    let mut name = number(n);
    name.push('.');
    name.push_str(ext);
    name
}

/// `N` as a name.
fn number(n: usize) -> Name {
    Name::new(itoa::Buffer::new().format(n))
}

/// The entries of one folder, handed on as they are described.
struct Folder<'a> {
    members: &'a mut dyn Members,
}

impl Folder<'_> {
    fn dir(&mut self, name: impl Into<Name>) {
        self.members.add(Member {
            name: name.into(),
            kind: EntryKind::Dir,
        });
    }

    /// A file that sums up the whole database (`source` of [`EntryKind::File`]: none).
    fn summary(&mut self, name: impl Into<Name>, view: View) {
        self.file(name, view, None, false, None);
    }

    fn file(
        &mut self,
        name: impl Into<Name>,
        view: View,
        size: Option<u64>,
        writable: bool,
        source: Option<Range<usize>>,
    ) {
        self.members.add(Member {
            name: name.into(),
            kind: EntryKind::File {
                key: key(view),
                size,
                writable,
                source,
            },
        });
    }

    fn link(&mut self, name: impl Into<Name>, target: String) {
        self.members.add(Member {
            name: name.into(),
            kind: EntryKind::Symlink { target },
        });
    }
}

/// Where a symlink `depth` directories below the archive's root finds a program's view
/// `ext` (`dxil`, `ll`).
pub(super) fn program_link(depth: usize, group: usize, index: u32, ext: &str) -> String {
    format!(
        "{}programs/{}/{index}.{ext}",
        "../".repeat(depth),
        group_dir(group)
    )
}
