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
//! ```
//!
//! An effect without a vertex shader (`VertexShader = null;`) has no `vertex.*` files. A
//! second shader of a stage is `vertex.NAME.asm` and so on; technique and pass names come
//! from the file, escaped like every name shaderfs shows.
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
pub mod states;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod verdicts;

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use self::check::{Finding, Severity, STREAM_FORMATS, STREAM_FORMAT_NAME};
use self::effect::{Effect, Lines, ParseError, Stage};
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
            writable: ctx.writable,
            entries: Vec::new(),
            views: Vec::new(),
            stems: Vec::new(),
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
    writable: bool,
    entries: Vec<Entry>,
    /// The view of each file key (the key is the index).
    views: Vec<View>,
    /// Each shader's file stem (`vertex`, `pixel`, `vertex.vs2`).
    stems: Vec<String>,
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
            View::Asm(i) | View::Bytecode(i) => Some(effect.shaders.get(i)?.asm.clone()),
            View::Decl(i) => Some(effect.shaders.get(i)?.decl.as_ref()?.body.clone()),
            View::Pass(t, p) => Some(effect.techniques.get(t)?.passes.get(p)?.span.clone()),
        }
    }

    fn build_tree(&mut self) {
        self.file("archive.json".into(), View::ArchiveJson, false, None);
        let len = self.map.len() as u64;
        self.file("effect.fx".into(), View::EffectText, true, Some(len));
        let Ok(effect) = self.parsed.clone() else {
            return;
        };
        let mut stems = Namer::new();
        for reserved in ["archive", "effect", "passes"] {
            stems.reserve(reserved);
        }
        let mut seen = [false, false];
        for (i, shader) in effect.shaders.iter().enumerate() {
            let slot = &mut seen[shader.stage as usize];
            let stem = stems.name(&raw_stem(
                shader.stage,
                !*slot,
                &self.map[shader.name.clone()],
            ));
            *slot = true;
            self.file(
                format!("{stem}.asm"),
                View::Asm(i),
                true,
                Some(shader.asm.len() as u64),
            );
            if shader.decl.is_some() {
                self.file(format!("{stem}.decl.json"), View::Decl(i), false, None);
            }
            let ext = match shader.stage {
                Stage::Vertex => "vso",
                Stage::Pixel => "pso",
            };
            self.file(format!("{stem}.{ext}"), View::Bytecode(i), false, None);
            self.stems.push(stem);
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

    fn finding(&self, lines: &Lines, f: &Finding, stems: &[String]) -> String {
        let mut s = self.located(lines, f.offset, &f.message);
        if let Some((i, line, column)) = f.block {
            if let Some(stem) = stems.get(i) {
                s.push_str(&format!(" ({stem}.asm:{line}:{column})"));
            }
        }
        s
    }

    /// What the game's effect compiler would refuse, and what it would only warn about.
    fn findings(&self, effect: &Effect) -> (Vec<String>, Vec<String>) {
        let (mut problems, mut warnings) = (Vec::new(), Vec::new());
        for f in check::check(self.text(), effect) {
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
        let shaders = effect
            .shaders
            .iter()
            .zip(&self.stems)
            .map(|(s, stem)| ShaderJson {
                variable: lossy(&s.name),
                stage: s.stage.word(),
                version: check::version_word(t, &s.asm),
                line: line(s.span.start),
                asm: format!("{stem}.asm"),
                decl: s.decl.as_ref().map(|_| format!("{stem}.decl.json")),
                bytecode: format!(
                    "{stem}.{}",
                    match s.stage {
                        Stage::Vertex => "vso",
                        Stage::Pixel => "pso",
                    }
                ),
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
        let effect = self.effect()?;
        check::assemble_with_lines(self.text(), &self.directives, effect, i)
            .map(Blob::owned)
            .map_err(|f| ViewError::Corrupt(self.finding(&self.lines, &f, &self.stems)))
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
        let findings: Vec<Finding> = check::check(&new, &effect)
            .into_iter()
            .filter(|f| f.severity == Severity::Error || !had.contains(&f.severity))
            .collect();
        if findings.is_empty() {
            return Ok(new);
        }
        // Name the views of the new text (the stems the tree would give it).
        let mut namer = Namer::new();
        for reserved in ["archive", "effect", "passes"] {
            namer.reserve(reserved);
        }
        let mut seen = [false, false];
        let stems: Vec<String> = effect
            .shaders
            .iter()
            .map(|s| {
                let slot = &mut seen[s.stage as usize];
                let stem = namer.name(&raw_stem(s.stage, !*slot, &new[s.name.clone()]));
                *slot = true;
                stem
            })
            .collect();
        let messages: Vec<String> = findings
            .iter()
            .map(|f| self.finding(&lines, f, &stems))
            .collect();
        Err(ViewError::Invalid(messages.join("\n")))
    }
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
    variable: String,
    stage: &'static str,
    version: Option<String>,
    line: usize,
    asm: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    decl: Option<String>,
    bytecode: String,
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
        check::check(self.text(), effect)
            .into_iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| {
                let (line, column) = self.lines.position(f.offset);
                let mut problem = Problem::in_text(line, column, f.message);
                // An asm error: the view to edit, and the place in it.
                if let Some((i, line, column)) = f.block {
                    if let Some(stem) = self.stems.get(i) {
                        problem.message += &format!(" ({stem}.asm:{line}:{column})");
                        problem.path = Some(format!("{stem}.asm"));
                    }
                }
                problem
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

    fn new_member(&self, _dir: &str, _name: &str) -> Result<(), String> {
        Err(
            "an effect's files follow from its text: edit effect.fx to add shaders, \
             techniques or passes"
                .into(),
        )
    }

    fn apply(&self, edit: &Edit<'_>) -> Result<Rewrite, ViewError> {
        let Edit::Write { key, data } = *edit else {
            return Err(ViewError::NotPermitted(
                "an effect's files follow from its text: edit effect.fx to add, remove or \
                 rename shaders, techniques or passes"
                    .into(),
            ));
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
                }
                new
            }
            Some(View::Pass(t, p)) => self.edit_pass(t, p, data)?,
            _ => {
                return Err(ViewError::NotPermitted(
                    "this view is read-only; edit effect.fx, the .asm files or passes/".into(),
                ))
            }
        };
        self.validate(new).map(Rewrite::whole)
    }
}
