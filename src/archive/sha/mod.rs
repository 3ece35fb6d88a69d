//! FlatOut 1 and 2 shader effects (`.sha`), per `shared/formats/sha.md`.
//!
//! A `.sha` file is D3DX9 effect text: texture declarations, `const string
//! inputStreamFormat`, a `vertexshader` with a DX8 `decl { }` and an `asm { }` block, a
//! `pixelshader` with an `asm { }` block, and `Technique T0 { Pass P0 { … } }`. Mounted,
//! each effect is this tree:
//!
//! ```text
//! archive.json              textures, inputStreamFormat and its stride, shaders and their
//!                           versions, techniques and passes, and every problem the game
//!                           would have with the effect (line:column)
//! effect.fx                 the whole text, byte for byte; saving it replaces the text
//! vertex.asm, pixel.asm     the asm blocks exactly as written between `asm {` and `}`;
//!                           saving one splices it back, every other byte untouched
//! vertex.decl.json          the decl { } block (read-only)
//! passes/T0/P0.json         the pass's state assignments in order, values as written;
//!                           saving rewrites only the assignments that changed
//! vertex.vso, pixel.pso     the blocks assembled to D3D9 bytecode (read-only); EIO, with
//!                           the reason in .shaderfs/errors, when a block does not assemble
//! vertex.hlsl, pixel.hlsl   the shader as HLSL: the source kept above the block ([`kept`]),
//!                           or else the assembled block decompiled; EIO, with the reason,
//!                           when it does not assemble or does not decompile
//! ```
//!
//! An effect without a vertex shader (`VertexShader = null;`) has no `vertex.*` files. A
//! second shader of a stage is `vertex.NAME.asm` and so on; technique and pass names come
//! from the file, escaped like every name shaderfs shows.
//!
//! A shader given as HLSL (`VertexShader = compile vs_2_0 vs_main();` in a pass,
//! `pixelshader ps = compile ps_3_0 ps_main(0.5);` as a variable; [`hlsl`]) has the same
//! views and one more, its shaders and asm blocks named in the order they stand in the
//! text (a `compile` in a pass by its function's name, when not the first of its stage):
//!
//! ```text
//! pixel.hlsl                the function the compile names, from its first word to its
//!                           `}` and that line's end; saving it replaces those bytes only
//! pixel.asm                 the compiled code, listed (read-only)
//! pixel.pso                 the compiled bytecode; EIO with every error when it does not
//!                           compile, or with why it is not compiled
//! ```
//!
//! An asm shader takes HLSL too ([`kept`]): writing its `.hlsl` view compiles the source
//! for the block's shader model into the block and keeps it as a comment above the shader
//! variable, which the view shows from then on. Until then the view shows the block's
//! bytecode decompiled, rendered when it is read (listing decodes nothing); saved as it
//! reads, it changes nothing.
//!
//! It is compiled as D3DX's effect compiler compiles it at load; its errors are the
//! effect's problems, at the `.sha`'s line and column and the `.hlsl` view's, for every
//! profile from vs_1_1 and ps_1_1 to 3.0. A shader left uncompiled (a macro named in the
//! compile statement, an effect past the compile budget) is neither a problem nor passed:
//! it is listed in archive.json (`not_compiled`) and by [`Archive::unchecked`].
//!
//! Every save is checked as the game's effect compiler would check it (`check.rs`): the
//! text parses as D3DX's effect language, each state of a pass is one D3DX knows with a
//! value it takes (`Zbias` is refused, naming `DepthBias`), each block assembles and
//! validates for its shader model (registers, instruction slots), `<names>` are declared
//! before use, `T0`/`P0` exist, `inputStreamFormat` is one of the ten the game knows. A save that fails is refused — `close()` fails with EINVAL, the
//! file is unchanged, and `.shaderfs/errors` says `effect.sha:LINE:COLUMN: what`.
//!
//! A save that introduces a problem D3DX would not mind but the game would (no `T0`/`P0`,
//! an `inputStreamFormat` the game's table lacks, so no vertex stride) is refused too; a
//! file that already had it saves unchanged, and archive.json lists it under `warnings`.
//!
//! An effect on disk that the game would refuse still mounts, so it can be repaired:
//! its problems are listed in archive.json, and a block that does not assemble reads as
//! EIO in its `.vso`/`.pso`. Text whose structure cannot be followed at all (a comment,
//! string or bracket that never closes, a NUL byte) shows only `effect.fx`, to be
//! rewritten, and an `archive.json` that reads as EIO with the reason.

pub mod check;
pub mod edit;
pub mod effect;
pub mod generate;
pub mod grammar;
pub mod hlsl;
pub mod kept;
pub mod states;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_hlsl;
#[cfg(test)]
mod verdicts;

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use self::check::{Finding, Severity, STREAM_FORMATS, STREAM_FORMAT_NAME};
use self::effect::{Effect, Lines, ParseError, Stage};
use self::hlsl::{HlslShader, Outcome};
use super::{file_has_extension, json_view};
use crate::vfs::name::Namer;
use crate::vfs::{
    Archive, ArchiveBytes, Blob, Edit, Entry, EntryKind, FileKey, Format, FormatError, OpenContext,
    Problem, Rewrite, ViewError,
};

pub struct ShaFormat;

impl Format for ShaFormat {
    fn name(&self) -> &'static str {
        "sha"
    }

    fn recognises(&self, path: &Path, _head: &[u8]) -> bool {
        file_has_extension(path, "sha")
    }

    fn open(
        &self,
        path: &Path,
        map: Arc<ArchiveBytes>,
        ctx: OpenContext,
    ) -> Result<Arc<dyn Archive>, FormatError> {
        if map.len() > effect::MAX_EFFECT_LEN {
            return Err(FormatError::new(format!(
                "{}: {} bytes; an effect of more than {} bytes is not a FlatOut effect",
                path.display(),
                map.len(),
                effect::MAX_EFFECT_LEN
            )));
        }
        let parsed = effect::parse(&map);
        let hlsl = match &parsed {
            Ok(effect) => hlsl::Shaders::new(&map, effect),
            Err(_) => hlsl::Shaders::new(&map, &Effect::default()),
        };
        let kept = match &parsed {
            Ok(effect) => effect.shaders.iter().map(|s| kept::find(&map, s)).collect(),
            Err(_) => Vec::new(),
        };
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut sha = Sha {
            file,
            lines: Lines::new(&map),
            directives: grammar::directive_lines(&map),
            map,
            parsed,
            hlsl,
            kept,
            writable: ctx.writable,
            entries: Vec::new(),
            views: Vec::new(),
            stems: Stems::default(),
            pass_files: Vec::new(),
        };
        sha.build_tree();
        Ok(Arc::new(sha))
    }
}

/// What a file of the tree shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    ArchiveJson,
    EffectText,
    Asm(usize),
    Decl(usize),
    Bytecode(usize),
    Pass(usize, usize),
    /// An HLSL shader (an index into [`hlsl::Shaders::list`]): its compiled code as asm,
    /// its bytecode, and the source of the function it compiles.
    HlslAsm(usize),
    HlslBytecode(usize),
    HlslSource(usize),
    /// The HLSL source kept above asm shader `i` (an index into [`Effect::shaders`]).
    KeptHlsl(usize),
    /// Asm shader `i`, which keeps no source, decompiled.
    DecompiledHlsl(usize),
}

/// An opened effect.
struct Sha {
    /// The file's name, which messages start with (`demo.sha:12:3: …`).
    file: String,
    map: Arc<ArchiveBytes>,
    lines: Lines,
    /// The preprocessor's lines, for the macros a block's bytecode view expands.
    directives: Vec<Range<usize>>,
    parsed: Result<Effect, ParseError>,
    /// The shaders `compile` statements make, compiled when first read.
    hlsl: hlsl::Shaders,
    /// The HLSL source kept above each asm shader, if any ([`kept`]).
    kept: Vec<Option<kept::Kept>>,
    writable: bool,
    entries: Vec<Entry>,
    /// The view of each file key (the key is the index).
    views: Vec<View>,
    /// Each shader's file stem (`vertex`, `pixel`, `vertex.vs2`).
    stems: Stems,
    /// Each technique's pass files (`passes/T0/P0.json`).
    pass_files: Vec<Vec<String>>,
}

/// A shader's name in the tree: the first of a stage is `vertex`/`pixel`, others add
/// their variable name.
fn raw_stem(stage: Stage, first: bool, name: &[u8]) -> Vec<u8> {
    let mut raw = stage.word().as_bytes().to_vec();
    if !first {
        raw.push(b'.');
        // Room for the longest suffix (`.decl.json`) within NAME_MAX.
        raw.extend_from_slice(&name[..name.len().min(200)]);
    }
    raw
}

/// A shader of the tree: an asm block (an index into [`Effect::shaders`]) or an HLSL
/// shader (into [`hlsl::Shaders::list`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ShaderRef {
    Asm(usize),
    Hlsl(usize),
}

/// Each shader's file stem (`vertex`, `pixel`, `vertex.vs2`).
#[derive(Debug, Default)]
struct Stems {
    /// The shaders, asm and HLSL, in the order they stand in the text, with their stems.
    order: Vec<(ShaderRef, String)>,
    asm: Vec<String>,
    hlsl: Vec<String>,
}

/// The stems of the shaders of `text`: the first of a stage is `vertex`/`pixel`, others
/// add their variable's name (an HLSL shader set in a pass, its function's).
fn stems(text: &[u8], effect: &Effect, hlsl: &[HlslShader]) -> Stems {
    let mut shaders: Vec<(usize, ShaderRef, Stage, &[u8])> = effect
        .shaders
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (
                s.span.start,
                ShaderRef::Asm(i),
                s.stage,
                &text[s.name.clone()],
            )
        })
        .collect();
    shaders.extend(hlsl.iter().enumerate().map(|(i, s)| {
        let name = s.variable.as_ref().unwrap_or(&s.function);
        (s.at, ShaderRef::Hlsl(i), s.stage, &text[name.clone()])
    }));
    shaders.sort_by_key(|s| s.0);
    let mut namer = Namer::new();
    for reserved in ["archive", "effect", "passes"] {
        namer.reserve(reserved);
    }
    let mut seen = [false, false];
    let mut out = Stems {
        order: Vec::new(),
        asm: vec![String::new(); effect.shaders.len()],
        hlsl: vec![String::new(); hlsl.len()],
    };
    for (_, shader, stage, name) in shaders {
        let slot = &mut seen[stage as usize];
        let stem = namer.name(&raw_stem(stage, !*slot, name));
        *slot = true;
        match shader {
            ShaderRef::Asm(i) => out.asm[i] = stem.clone(),
            ShaderRef::Hlsl(i) => out.hlsl[i] = stem.clone(),
        }
        out.order.push((shader, stem));
    }
    out
}

fn bytecode_extension(stage: Stage) -> &'static str {
    match stage {
        Stage::Vertex => "vso",
        Stage::Pixel => "pso",
    }
}

/// Every finding of `text`: the effect's own checks, and the errors of its HLSL shaders
/// on lines those leave alone (where D3DX's parse already stops, or a name is not
/// declared, the compiler only says it again). One in the function of an HLSL shader
/// says where in its `.hlsl` view.
fn all_findings(text: &[u8], effect: &Effect, hlsl: &hlsl::Shaders) -> Vec<Finding> {
    let lines = Lines::new(text);
    let mut out = check::check(text, effect);
    for f in &mut out {
        if f.block.is_none() && f.source.is_none() {
            f.source = hlsl.place(text, f.offset);
        }
    }
    let taken: std::collections::HashSet<usize> = out
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| lines.position(f.offset).0)
        .collect();
    out.extend(
        hlsl.errors(text, effect)
            .into_iter()
            .filter(|f| !taken.contains(&lines.position(f.offset).0)),
    );
    out.sort_by_key(|f| f.offset);
    out
}

impl Sha {
    fn text(&self) -> &[u8] {
        &self.map
    }

    fn file(&mut self, path: String, view: View, writable: bool, size: Option<u64>) {
        let source = self.source(view);
        self.entries.push(Entry {
            path,
            kind: EntryKind::File {
                key: self.views.len() as FileKey,
                size,
                writable: writable && self.writable,
                source,
            },
        });
        self.views.push(view);
    }

    /// The span of the text a view shows or is made from (`None`: the whole text).
    fn source(&self, view: View) -> Option<Range<usize>> {
        let effect = self.parsed.as_ref().ok()?;
        match view {
            View::ArchiveJson | View::EffectText => None,
            View::Asm(i) | View::Bytecode(i) | View::DecompiledHlsl(i) => {
                Some(effect.shaders.get(i)?.asm.clone())
            }
            View::Decl(i) => Some(effect.shaders.get(i)?.decl.as_ref()?.body.clone()),
            View::Pass(t, p) => Some(effect.techniques.get(t)?.passes.get(p)?.span.clone()),
            // Compiled from the whole text: its globals, structs, other functions.
            View::HlslAsm(_) | View::HlslBytecode(_) => None,
            View::HlslSource(i) => Some(hlsl::view(self.text(), self.hlsl.function(i)?)),
            View::KeptHlsl(i) => Some(self.kept.get(i)?.as_ref()?.span.clone()),
        }
    }

    fn build_tree(&mut self) {
        self.file("archive.json".into(), View::ArchiveJson, false, None);
        let len = self.map.len() as u64;
        self.file("effect.fx".into(), View::EffectText, true, Some(len));
        let Ok(effect) = self.parsed.clone() else {
            return;
        };
        self.stems = stems(self.text(), &effect, &self.hlsl.list);
        for (shader, stem) in self.stems.order.clone() {
            match shader {
                ShaderRef::Asm(i) => {
                    let shader = &effect.shaders[i];
                    self.file(
                        format!("{stem}.asm"),
                        View::Asm(i),
                        true,
                        Some(shader.asm.len() as u64),
                    );
                    if shader.decl.is_some() {
                        self.file(format!("{stem}.decl.json"), View::Decl(i), false, None);
                    }
                    let ext = bytecode_extension(shader.stage);
                    self.file(format!("{stem}.{ext}"), View::Bytecode(i), false, None);
                    match self.kept.get(i) {
                        Some(Some(k)) => {
                            let len = k.text.len() as u64;
                            self.file(format!("{stem}.hlsl"), View::KeptHlsl(i), true, Some(len));
                        }
                        _ => self.file(format!("{stem}.hlsl"), View::DecompiledHlsl(i), true, None),
                    }
                }
                ShaderRef::Hlsl(i) => {
                    // The asm a compiler wrote is read, not edited: pixel.hlsl is.
                    self.file(format!("{stem}.asm"), View::HlslAsm(i), false, None);
                    let ext = bytecode_extension(self.hlsl.list[i].stage);
                    self.file(format!("{stem}.{ext}"), View::HlslBytecode(i), false, None);
                    if let Some(f) = self.hlsl.function(i) {
                        let len = hlsl::view(self.text(), f).len() as u64;
                        self.file(format!("{stem}.hlsl"), View::HlslSource(i), true, Some(len));
                    }
                }
            }
        }
        if effect.techniques.is_empty() {
            return;
        }
        self.entries.push(Entry {
            path: "passes".into(),
            kind: EntryKind::Dir,
        });
        let mut techniques = Namer::new();
        for (t, technique) in effect.techniques.iter().enumerate() {
            let dir = techniques.name(&name_or_index(&self.map[technique.name.clone()], t));
            self.entries.push(Entry {
                path: format!("passes/{dir}"),
                kind: EntryKind::Dir,
            });
            let mut passes = Namer::new();
            let mut files = Vec::new();
            for (p, pass) in technique.passes.iter().enumerate() {
                let mut raw = name_or_index(&self.map[pass.name.clone()], p);
                raw.extend_from_slice(b".json");
                let path = format!("passes/{dir}/{}", passes.name(&raw));
                self.file(path.clone(), View::Pass(t, p), true, None);
                files.push(path);
            }
            self.pass_files.push(files);
        }
    }

    fn effect(&self) -> Result<&Effect, ViewError> {
        self.parsed
            .as_ref()
            .map_err(|e| ViewError::Corrupt(self.located(&self.lines, e.offset, &e.message)))
    }

    /// `demo.sha:12:3: message`
    fn located(&self, lines: &Lines, offset: usize, message: &str) -> String {
        let (line, column) = lines.position(offset);
        format!("{}:{line}:{column}: {message}", self.file)
    }

    fn finding(&self, lines: &Lines, f: &Finding, stems: &Stems) -> String {
        let mut s = self.located(lines, f.offset, &f.message);
        if let Some((path, line, column)) = in_view(f, stems) {
            s.push_str(&format!(" ({path}:{line}:{column})"));
        }
        s
    }

    /// What the game's effect compiler would refuse, and what it would only warn about.
    fn findings(&self, effect: &Effect) -> (Vec<String>, Vec<String>) {
        let (mut problems, mut warnings) = (Vec::new(), Vec::new());
        for f in all_findings(self.text(), effect, &self.hlsl) {
            let message = self.finding(&self.lines, &f, &self.stems);
            match f.severity {
                Severity::Error => problems.push(message),
                Severity::Warning(_) => warnings.push(message),
            }
        }
        (problems, warnings)
    }

    /// `writable`: whether a save into the effect would land.
    fn archive_json(&self, writable: bool) -> Result<Blob, ViewError> {
        let effect = self.effect()?;
        let t = self.text();
        let lossy = |r: &Range<usize>| String::from_utf8_lossy(&t[r.clone()]).into_owned();
        let line = |offset: usize| self.lines.position(offset).0;
        let stream = effect
            .strings
            .iter()
            .rfind(|s| &t[s.name.clone()] == STREAM_FORMAT_NAME.as_bytes())
            .map(|s| {
                let name = lossy(&s.value);
                StreamJson {
                    stride: STREAM_FORMATS
                        .iter()
                        .find(|(n, _)| *n == name)
                        .map(|(_, stride)| *stride),
                    name,
                }
            });
        let shaders = self
            .stems
            .order
            .iter()
            .map(|(shader, stem)| match *shader {
                ShaderRef::Asm(i) => {
                    let s = &effect.shaders[i];
                    ShaderJson {
                        variable: Some(lossy(&s.name)),
                        stage: s.stage.word(),
                        version: check::version_word(t, &s.asm),
                        line: line(s.span.start),
                        asm: format!("{stem}.asm"),
                        decl: s.decl.as_ref().map(|_| format!("{stem}.decl.json")),
                        bytecode: format!("{stem}.{}", bytecode_extension(s.stage)),
                        hlsl: None,
                        kept_hlsl: self
                            .kept
                            .get(i)
                            .and_then(Option::as_ref)
                            .map(|_| format!("{stem}.hlsl")),
                    }
                }
                ShaderRef::Hlsl(i) => {
                    let s = &self.hlsl.list[i];
                    let f = self.hlsl.function(i);
                    let not_compiled = match self.hlsl.outcome(t, effect, i) {
                        Outcome::NotCompiled(why) => Some(why.clone()),
                        _ => None,
                    };
                    ShaderJson {
                        variable: s.variable.as_ref().map(lossy),
                        stage: s.stage.word(),
                        version: Some(lossy(&s.profile)),
                        line: line(s.at),
                        asm: format!("{stem}.asm"),
                        decl: None,
                        bytecode: format!("{stem}.{}", bytecode_extension(s.stage)),
                        hlsl: Some(HlslJson {
                            function: lossy(&s.function),
                            profile: lossy(&s.profile),
                            arguments: s.args.iter().map(lossy).collect(),
                            line: f.map(|f| line(f.span.start)),
                            source: f.map(|_| format!("{stem}.hlsl")),
                            not_compiled,
                        }),
                        kept_hlsl: None,
                    }
                }
            })
            .collect();
        let techniques = effect
            .techniques
            .iter()
            .zip(&self.pass_files)
            .map(|(tech, files)| TechniqueJson {
                name: lossy(&tech.name),
                line: line(tech.span.start),
                passes: tech
                    .passes
                    .iter()
                    .zip(files)
                    .map(|(p, file)| PassRefJson {
                        name: lossy(&p.name),
                        line: line(p.span.start),
                        file: file.clone(),
                    })
                    .collect(),
            })
            .collect();
        let (problems, warnings) = self.findings(effect);
        Ok(json_view(&ArchiveJson {
            format: "sha",
            file: self.file.clone(),
            file_size: t.len(),
            writable,
            line_endings: line_endings(t),
            input_stream_format: stream,
            textures: effect.textures.iter().map(|x| lossy(&x.name)).collect(),
            shaders,
            techniques,
            problems,
            warnings,
        }))
    }

    fn decl_json(&self, i: usize) -> Result<Blob, ViewError> {
        let effect = self.effect()?;
        let t = self.text();
        let shader = effect.shaders.get(i).ok_or_else(|| missing(i))?;
        let decl = shader.decl.as_ref().ok_or_else(|| missing(i))?;
        let lossy = |r: &Range<usize>| String::from_utf8_lossy(&t[r.clone()]).into_owned();
        let statements = decl
            .statements
            .iter()
            .map(|st| {
                let words: Vec<String> = st.words.iter().map(lossy).collect();
                let number = |w: Option<&String>| w.and_then(|w| w.parse::<u32>().ok());
                let mut out = DeclStatementJson {
                    comment: st.comment.as_ref().map(lossy),
                    ..DeclStatementJson::default()
                };
                match words.as_slice() {
                    [kw, n] if kw.eq_ignore_ascii_case("stream") && number(Some(n)).is_some() => {
                        out.stream = number(Some(n))
                    }
                    [kw, n] if kw.eq_ignore_ascii_case("skip") && number(Some(n)).is_some() => {
                        out.skip = number(Some(n))
                    }
                    [ty, reg] | [ty, reg, _]
                        if reg.starts_with(['v', 'V'])
                            && (words.len() == 2 || number(words.get(2)).is_some()) =>
                    {
                        out.r#type = Some(ty.clone());
                        out.register = Some(reg.clone());
                        out.count = number(words.get(2));
                    }
                    _ => out.text = Some(lossy(&st.span)),
                }
                out
            })
            .collect();
        Ok(json_view(&DeclJson {
            variable: lossy(&shader.name),
            statements,
        }))
    }

    fn pass_json(&self, t: usize, p: usize) -> Result<Blob, ViewError> {
        let effect = self.effect()?;
        let text = self.text();
        let technique = effect.techniques.get(t).ok_or_else(|| missing(t))?;
        let pass = technique.passes.get(p).ok_or_else(|| missing(p))?;
        Ok(json_view(&PassJson {
            technique: String::from_utf8_lossy(&text[technique.name.clone()]).into_owned(),
            pass: String::from_utf8_lossy(&text[pass.name.clone()]).into_owned(),
            states: pass
                .states
                .iter()
                .map(|a| edit::State::of(text, a))
                .collect(),
        }))
    }

    fn bytecode(&self, i: usize) -> Result<Blob, ViewError> {
        self.assembled(i).map(Blob::owned)
    }

    /// Asm shader `i`'s block assembled, or why it does not assemble.
    fn assembled(&self, i: usize) -> Result<Vec<u8>, ViewError> {
        let effect = self.effect()?;
        check::assemble_with_lines(self.text(), &self.directives, effect, i)
            .map_err(|f| ViewError::Corrupt(self.finding(&self.lines, &f, &self.stems)))
    }

    /// Asm shader `i`, which keeps no source, as HLSL: its block assembled, decompiled.
    fn decompiled(&self, i: usize) -> Result<String, ViewError> {
        super::decompiled(&self.assembled(i)?)
    }

    /// HLSL shader `i` compiled: its bytecode, or the listing of it (`listing`). EIO
    /// with every error when it does not compile, or with why it is not compiled yet.
    fn compiled(&self, i: usize, listing: bool) -> Result<Blob, ViewError> {
        let effect = self.effect()?;
        match self.hlsl.outcome(self.text(), effect, i) {
            Outcome::Compiled { bytecode, .. } if !listing => Ok(Blob::owned(bytecode.clone())),
            Outcome::Compiled { listing, .. } => Ok(Blob::owned(listing.clone().into_bytes())),
            Outcome::Refused(findings) => Err(ViewError::Corrupt(
                findings
                    .iter()
                    .map(|f| self.finding(&self.lines, f, &self.stems))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )),
            Outcome::NotCompiled(why) => {
                let shader = &self.hlsl.list[i];
                Err(ViewError::Corrupt(self.located(
                    &self.lines,
                    shader.profile.start,
                    &not_checked(self.text(), shader, why),
                )))
            }
        }
    }

    /// The HLSL shaders the compiler cannot compile yet, as `check` reports them.
    fn not_compiled(&self) -> Vec<Problem> {
        let Ok(effect) = &self.parsed else {
            return Vec::new();
        };
        (0..self.hlsl.list.len())
            .filter_map(|i| match self.hlsl.outcome(self.text(), effect, i) {
                Outcome::NotCompiled(why) => {
                    let shader = &self.hlsl.list[i];
                    let (line, column) = self.lines.position(shader.profile.start);
                    let mut problem =
                        Problem::in_text(line, column, not_checked(self.text(), shader, why));
                    problem.path = Some(format!(
                        "{}.{}",
                        self.stems.hlsl[i],
                        bytecode_extension(shader.stage)
                    ));
                    Some(problem)
                }
                _ => None,
            })
            .collect()
    }

    /// The new text of a pass edit.
    fn edit_pass(&self, t: usize, p: usize, data: &[u8]) -> Result<Vec<u8>, ViewError> {
        let effect = self.effect()?;
        let text = self.text();
        let technique = effect.techniques.get(t).ok_or_else(|| missing(t))?;
        let pass = technique.passes.get(p).ok_or_else(|| missing(p))?;
        let input: PassInput = serde_json::from_slice(data)
            .map_err(|e| ViewError::Invalid(format!("not the JSON of a pass: {e}")))?;
        let renamed = |given: &Option<String>, range: &Range<usize>| {
            given
                .as_ref()
                .is_some_and(|g| g.as_bytes() != &text[range.clone()])
        };
        if renamed(&input.technique, &technique.name) || renamed(&input.pass, &pass.name) {
            return Err(ViewError::Invalid(
                "technique and pass names are changed in effect.fx, not in the pass's JSON".into(),
            ));
        }
        for (n, state) in input.states.iter().enumerate() {
            state.check(n).map_err(ViewError::Invalid)?;
        }
        let new = edit::edit_pass(text, pass, &input.states);
        // The rewritten pass must read back as exactly the JSON's assignments.
        let reparsed = effect::parse(&new).ok();
        let states: Option<Vec<edit::State>> = reparsed.as_ref().and_then(|e| {
            let pass = e.techniques.get(t)?.passes.get(p)?;
            Some(
                pass.states
                    .iter()
                    .map(|a| edit::State::of(&new, a))
                    .collect(),
            )
        });
        if states.as_deref() != Some(input.states.as_slice()) {
            return Err(ViewError::Invalid(
                "the assignments do not read back as written; a value must be one effect \
                 value (Clamp, <Tex0>, float4(1, 0, 0, 1), null)"
                    .into(),
            ));
        }
        Ok(new)
    }

    /// The asm shader whose `.hlsl` view `name` would be, when it keeps no source yet.
    fn asm_shader_named(&self, name: &str) -> Option<usize> {
        let stem = name.strip_suffix(".hlsl")?;
        let i = self.stems.asm.iter().position(|s| s == stem)?;
        matches!(self.kept.get(i), Some(None)).then_some(i)
    }

    /// HLSL written to asm shader `i`'s `.hlsl` view: compiled into its block, kept above
    /// it ([`kept`]), the whole effect checked.
    fn write_kept(&self, i: usize, data: &[u8]) -> Result<Vec<u8>, ViewError> {
        let shader = self.effect()?.shaders.get(i).ok_or_else(|| missing(i))?;
        let view = format!("{}.hlsl", self.stems.asm[i]);
        // The view saved as it reads: the effect as it is.
        let unchanged = match self.kept.get(i) {
            Some(Some(k)) => k.text.as_bytes() == data,
            Some(None) => self
                .decompiled(i)
                .is_ok_and(|shown| shown.as_bytes() == data),
            None => false,
        };
        if unchanged {
            return Ok(self.text().to_vec());
        }
        let new = kept::write(self.text(), shader, &view, data).map_err(ViewError::Invalid)?;
        self.validate(new)
    }

    /// The new text of a save of HLSL shader `i`'s function: the view's bytes replaced,
    /// every other byte kept. What is written must be whole declarations, one of them the
    /// function: a `{` or `}` too many would change the items around it.
    fn edit_function(&self, i: usize, data: &[u8]) -> Result<Vec<u8>, ViewError> {
        let f = self.hlsl.function(i).ok_or_else(|| missing(i))?;
        let range = hlsl::view(self.text(), f);
        let new = edit::splice(self.text(), range.clone(), data);
        let Ok(effect) = effect::parse(&new) else {
            // The whole text's check says where it stops making sense.
            return Ok(new);
        };
        let written = range.start..range.start + data.len();
        let lines = Lines::new(&new);
        let stem = &self.stems.hlsl[i];
        let spans = effect
            .textures
            .iter()
            .map(|x| &x.span)
            .chain(effect.strings.iter().map(|x| &x.span))
            .chain(effect.shaders.iter().map(|x| &x.span))
            .chain(effect.techniques.iter().map(|x| &x.span))
            .chain(effect.others.iter().map(|x| &x.span));
        for span in spans {
            let overlaps = span.start < written.end && written.start < span.end;
            if overlaps && (span.start < written.start || span.end > written.end) {
                let at = span.start.max(written.start);
                return Err(ViewError::Invalid(self.located(
                    &lines,
                    at,
                    &format!(
                        "{stem}.hlsl: this declaration runs out of what {stem}.hlsl holds                          (a '{{' or '}}' too many or too few?)"
                    ),
                )));
            }
        }
        let name = &self.text()[self.hlsl.list[i].function.clone()];
        let defined = effect.others.iter().any(|o| {
            written.start <= o.span.start
                && o.span.end <= written.end
                && hlsl::definition(&new, &o.span).is_some_and(|d| &new[d.name.clone()] == name)
        });
        if !defined {
            return Err(ViewError::Invalid(format!(
                "{stem}.hlsl: no definition of '{}' in it: the effect compiles that function \
                 (rename it in effect.fx)",
                String::from_utf8_lossy(name)
            )));
        }
        Ok(new)
    }

    /// The whole new text must be an effect the game accepts.
    fn validate(&self, new: Vec<u8>) -> Result<Vec<u8>, ViewError> {
        let lines = Lines::new(&new);
        let effect = effect::parse(&new).map_err(|e| {
            let mut messages: Vec<String> = check::language(&new)
                .iter()
                .map(|f| self.located(&lines, f.offset, &f.message))
                .collect();
            messages.push(self.located(&lines, e.offset, &e.message));
            ViewError::Invalid(messages.join("\n"))
        })?;
        // Warnings the effect already had do not stop a save; new ones do.
        let had: Vec<Severity> = match &self.parsed {
            Ok(old) => check::check(self.text(), old)
                .into_iter()
                .map(|f| f.severity)
                .filter(|s| *s != Severity::Error)
                .collect(),
            Err(_) => Vec::new(),
        };
        let shaders = hlsl::Shaders::new(&new, &effect);
        let findings: Vec<Finding> = all_findings(&new, &effect, &shaders)
            .into_iter()
            .filter(|f| f.severity == Severity::Error || !had.contains(&f.severity))
            .collect();
        // Named as the tree of the new text would name its views.
        let stems = stems(&new, &effect, &shaders.list);
        if findings.is_empty() {
            for (i, shader) in shaders.list.iter().enumerate() {
                if let Outcome::NotCompiled(why) = shaders.outcome(&new, &effect, i) {
                    log::warn!(
                        "{}: saved, but not checked ({}.{})",
                        self.located(
                            &lines,
                            shader.profile.start,
                            &not_checked(&new, shader, why)
                        ),
                        stems.hlsl[i],
                        bytecode_extension(shader.stage)
                    );
                }
            }
            return Ok(new);
        }
        let messages: Vec<String> = findings
            .iter()
            .map(|f| self.finding(&lines, f, &stems))
            .collect();
        Err(ViewError::Invalid(messages.join("\n")))
    }
}

/// What is said of an HLSL shader that is not compiled, and why.
fn not_checked(text: &[u8], shader: &HlslShader, why: &str) -> String {
    format!("{} is not checked: {why}", hlsl::describe(text, shader))
}

/// The view and the place in it a finding is about: a line of an asm block, or of the
/// function an HLSL shader compiles.
fn in_view(f: &Finding, stems: &Stems) -> Option<(String, usize, usize)> {
    if let Some((i, line, column)) = f.block {
        return Some((format!("{}.asm", stems.asm.get(i)?), line, column));
    }
    let (i, line, column) = f.source?;
    Some((format!("{}.hlsl", stems.hlsl.get(i)?), line, column))
}

/// A technique or pass without a name is known by its index (as D3DX's
/// `GetTechnique(index)` knows it).
fn name_or_index(raw: &[u8], index: usize) -> Vec<u8> {
    if raw.is_empty() {
        index.to_string().into_bytes()
    } else {
        raw.to_vec()
    }
}

fn missing(i: usize) -> ViewError {
    ViewError::Corrupt(format!("no item {i} in this effect"))
}

fn line_endings(t: &[u8]) -> &'static str {
    let lf = t.iter().filter(|&&b| b == b'\n').count();
    let crlf = t.windows(2).filter(|w| w == b"\r\n").count();
    match (lf, crlf) {
        (0, _) => "none",
        (n, c) if n == c => "CRLF",
        (_, 0) => "LF",
        _ => "mixed",
    }
}

#[derive(Serialize)]
struct ArchiveJson {
    format: &'static str,
    file: String,
    file_size: usize,
    writable: bool,
    line_endings: &'static str,
    input_stream_format: Option<StreamJson>,
    textures: Vec<String>,
    shaders: Vec<ShaderJson>,
    techniques: Vec<TechniqueJson>,
    /// Why D3DX would not compile the effect (the game would lose the shader).
    problems: Vec<String>,
    /// What the game would do wrong with it (check.rs, `Severity::Warning`).
    warnings: Vec<String>,
}

#[derive(Serialize)]
struct StreamJson {
    name: String,
    /// The vertex stride the game sets; `null` when the game does not know the name.
    stride: Option<u32>,
}

#[derive(Serialize)]
struct ShaderJson {
    /// The shader variable (`vSdr`); none for a `compile` in a pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    variable: Option<String>,
    stage: &'static str,
    /// The asm block's version line as written, or the profile an HLSL shader is
    /// compiled for.
    version: Option<String>,
    line: usize,
    asm: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    decl: Option<String>,
    bytecode: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    hlsl: Option<HlslJson>,
    /// An asm shader's HLSL source, kept above it when it was written through the view.
    #[serde(skip_serializing_if = "Option::is_none")]
    kept_hlsl: Option<String>,
}

/// What an HLSL shader compiles: `compile PROFILE FUNCTION(ARGUMENTS)`.
#[derive(Serialize)]
struct HlslJson {
    function: String,
    profile: String,
    /// The arguments as written, given to the function's uniform parameters.
    arguments: Vec<String>,
    /// The function's line; `null` when the effect defines no such function.
    line: Option<usize>,
    /// The view that shows the function (`pixel.hlsl`).
    source: Option<String>,
    /// Why it is not compiled (a profile shaderfs does not compile yet), so not checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_compiled: Option<String>,
}

#[derive(Serialize)]
struct TechniqueJson {
    name: String,
    line: usize,
    passes: Vec<PassRefJson>,
}

#[derive(Serialize)]
struct PassRefJson {
    name: String,
    line: usize,
    file: String,
}

#[derive(Serialize)]
struct DeclJson {
    variable: String,
    statements: Vec<DeclStatementJson>,
}

#[derive(Serialize, Default)]
struct DeclStatementJson {
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skip: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    r#type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    register: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<u32>,
    /// A statement of another shape, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    comment: Option<String>,
}

#[derive(Serialize)]
struct PassJson {
    technique: String,
    pass: String,
    states: Vec<edit::State>,
}

/// What a save of a pass's JSON may hold: the names only to check they did not change.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PassInput {
    #[serde(default)]
    technique: Option<String>,
    #[serde(default)]
    pass: Option<String>,
    states: Vec<edit::State>,
}

impl Archive for Sha {
    fn entries(&self) -> Vec<Entry> {
        self.entries.clone()
    }

    fn problems(&self) -> Vec<Problem> {
        let effect = match &self.parsed {
            Ok(effect) => effect,
            Err(e) => {
                // Where D3DX would stop, then why the structure cannot be followed.
                let mut problems: Vec<Problem> = check::language(self.text())
                    .into_iter()
                    .map(|f| {
                        let (line, column) = self.lines.position(f.offset);
                        Problem::in_text(line, column, f.message)
                    })
                    .collect();
                let (line, column) = self.lines.position(e.offset);
                problems.push(Problem::in_text(line, column, e.message.clone()));
                return problems;
            }
        };
        all_findings(self.text(), effect, &self.hlsl)
            .into_iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| {
                let (line, column) = self.lines.position(f.offset);
                // An error in an asm block or an HLSL function: the view to edit, and
                // the place in it.
                let place = in_view(&f, &self.stems);
                let mut problem = Problem::in_text(line, column, f.message);
                if let Some((path, line, column)) = place {
                    problem.message += &format!(" ({path}:{line}:{column})");
                    problem.path = Some(path);
                }
                problem
            })
            .collect()
    }

    fn unchecked(&self) -> Vec<Problem> {
        self.not_compiled()
    }

    /// The asm shaders without a kept source whose block assembles but does not
    /// decompile (one that does not assemble is a problem, reported as such).
    fn unshown(&self) -> Vec<Problem> {
        self.views
            .iter()
            .filter_map(|view| {
                let View::DecompiledHlsl(i) = *view else {
                    return None;
                };
                let code = self.assembled(i).ok()?;
                let why = super::decompiled(&code).err()?;
                Some(Problem::in_file(
                    format!("{}.hlsl", self.stems.asm.get(i)?),
                    why.to_string(),
                ))
            })
            .collect()
    }

    fn read(&self, key: FileKey) -> Result<Blob, ViewError> {
        let view = *self
            .views
            .get(key as usize)
            .ok_or_else(|| ViewError::Corrupt(format!("no view {key}")))?;
        match view {
            View::ArchiveJson => self.archive_json(self.writable),
            View::EffectText => Ok(Blob::Archive(self.map.clone(), 0..self.map.len())),
            View::Asm(i) => {
                let shader = self.effect()?.shaders.get(i).ok_or_else(|| missing(i))?;
                Ok(Blob::Archive(self.map.clone(), shader.asm.clone()))
            }
            View::Decl(i) => self.decl_json(i),
            View::Bytecode(i) => self.bytecode(i),
            View::Pass(t, p) => self.pass_json(t, p),
            View::HlslAsm(i) => self.compiled(i, true),
            View::HlslBytecode(i) => self.compiled(i, false),
            View::HlslSource(i) => {
                let f = self.hlsl.function(i).ok_or_else(|| missing(i))?;
                Ok(Blob::Archive(self.map.clone(), hlsl::view(self.text(), f)))
            }
            View::KeptHlsl(i) => {
                let k = self.kept.get(i).and_then(Option::as_ref);
                Ok(Blob::owned(
                    k.ok_or_else(|| missing(i))?.text.clone().into_bytes(),
                ))
            }
            View::DecompiledHlsl(i) => self.decompiled(i).map(Blob::owned),
        }
    }

    fn says_writable(&self, key: FileKey) -> bool {
        self.views.get(key as usize) == Some(&View::ArchiveJson)
    }

    fn read_saying(&self, key: FileKey, writable: bool) -> Result<Blob, ViewError> {
        match self.says_writable(key) {
            true => self.archive_json(writable),
            false => self.read(key),
        }
    }

    fn new_member(&self, dir: &str, name: &str) -> Result<(), String> {
        if dir.is_empty() && self.asm_shader_named(name).is_some() {
            return Ok(());
        }
        Err(
            "an effect's files follow from its text: edit effect.fx to add shaders, \
             techniques or passes (or write HLSL to an asm shader's NAME.hlsl)"
                .into(),
        )
    }

    fn apply(&self, edit: &Edit<'_>) -> Result<Rewrite, ViewError> {
        // HLSL written to an asm shader's NAME.hlsl, which it does not have yet.
        if let Edit::Create {
            dir: "",
            name,
            data,
            ..
        } = *edit
        {
            if let Some(i) = self.asm_shader_named(name) {
                return self.write_kept(i, data).map(Rewrite::whole);
            }
        }
        // Removing it drops the source kept in the effect; the asm stays.
        if let Edit::Remove { key } = *edit {
            if let Some(&View::KeptHlsl(i)) = self.views.get(key as usize) {
                let shader = self.effect()?.shaders.get(i).ok_or_else(|| missing(i))?;
                let new = kept::drop(self.text(), shader).ok_or_else(|| missing(i))?;
                return self.validate(new).map(Rewrite::whole);
            }
        }
        let (key, data) = match *edit {
            Edit::Write { key, data } => (key, data),
            _ => {
                return Err(ViewError::NotPermitted(
                    "an effect's files follow from its text: edit effect.fx to add, remove or \
                     rename shaders, techniques or passes"
                        .into(),
                ))
            }
        };
        // Checked before anything is copied: a runaway write is refused at its own size.
        if data.len() > effect::MAX_EFFECT_LEN {
            return Err(ViewError::Invalid(format!(
                "{} bytes: an effect of more than {} bytes is not a FlatOut effect",
                data.len(),
                effect::MAX_EFFECT_LEN
            )));
        }
        let view = self.views.get(key as usize).copied();
        let new = match view {
            Some(View::EffectText) => data.to_vec(),
            Some(View::Asm(i)) => {
                let shader = self.effect()?.shaders.get(i).ok_or_else(|| missing(i))?;
                let new = edit::splice(self.text(), shader.asm.clone(), data);
                // The new block must be the whole block: a '}' in it would end it early.
                let wanted = shader.asm.start..shader.asm.start + data.len();
                if let Ok(e) = effect::parse(&new) {
                    if e.shaders.get(i).map(|s| &s.asm) != Some(&wanted) {
                        let at = e.shaders.get(i).map_or(wanted.start, |s| s.asm.end);
                        let lines = Lines::new(&new);
                        return Err(ViewError::Invalid(self.located(
                            &lines,
                            at,
                            "a '}' in the asm text would end the asm block here",
                        )));
                    }
                    // HLSL kept above the block describes it no more once its code
                    // changes (an edit of its comments keeps it).
                    let old_code = check::assemble(self.text(), self.effect()?, i).ok();
                    let new_code = check::assemble(&new, &e, i).ok();
                    if self.kept.get(i).is_some_and(Option::is_some)
                        && (old_code.is_none() || old_code != new_code)
                    {
                        if let Some(dropped) = kept::drop(&new, &e.shaders[i]) {
                            return self.validate(dropped).map(Rewrite::whole);
                        }
                    }
                }
                new
            }
            Some(View::Pass(t, p)) => self.edit_pass(t, p, data)?,
            Some(View::HlslSource(i)) => self.edit_function(i, data)?,
            Some(View::KeptHlsl(i) | View::DecompiledHlsl(i)) => {
                return self.write_kept(i, data).map(Rewrite::whole)
            }
            Some(View::HlslAsm(i) | View::HlslBytecode(i)) => {
                return Err(ViewError::NotPermitted(format!(
                    "this is the code {}.hlsl compiles to: edit {0}.hlsl (or effect.fx)",
                    self.stems
                        .hlsl
                        .get(i)
                        .map_or("the shader's", String::as_str)
                )))
            }
            _ => {
                return Err(ViewError::NotPermitted(
                    "this view is read-only; edit effect.fx, the .asm files or passes/".into(),
                ))
            }
        };
        self.validate(new).map(Rewrite::whole)
    }
}
