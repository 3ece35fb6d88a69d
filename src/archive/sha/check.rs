//! What the game's effect compiler, and then the game, demand of a `.sha` effect
//! (`shared/formats/sha.md` §4, §5, §7, §8): every asm block assembles for its shader
//! model within that model's register and slot limits (the same assembler and limits the
//! `.sdp` views use), names are declared once and before they are referenced, the pass
//! the game draws with (`T0`/`P0`) exists, and `inputStreamFormat` is one of the ten
//! names the game's stream table holds.
//!
//! Where sha.md grades a rule a warning (the effect compiles but the game draws wrongly,
//! or not at all: no stride without a known `inputStreamFormat`, no `T0`/`P0`), a save
//! that introduces the problem is refused, so the user learns at `close()` what they
//! would otherwise learn only in game; a file that already had it still saves unchanged
//! (the corpus's `demo_post_combine2.sha` asks for `PosprojTex2`, which the game's table
//! lacks, and the game still loads it).

use std::ops::Range;

use rustc_hash::FxHashMap;

use super::effect::{self, Effect, ShaderVar, Stage};
use crate::shader::d3d9::asm;
use crate::shader::d3d9::bytecode::{self, ShaderKind};

/// The game's `inputStreamTable` (sha.md §5): name and vertex stride in bytes.
pub const STREAM_FORMATS: [(&str, u32); 10] = [
    ("Pos", 12),
    ("PosColor", 16),
    ("PosTex1", 20),
    ("PosTex2", 28),
    ("PosColorTex1", 24),
    ("PosNormColorTex1", 36),
    ("PosNormTex1", 32),
    ("PosNormTex2", 40),
    ("PosprojTex1", 24),
    ("PosprojTex4", 48),
];

/// The string the game reads with `GetString` (sha.md §4).
pub const STREAM_FORMAT_NAME: &str = "inputStreamFormat";
/// The technique and pass every known file has and the validator selects (sha.md §4).
pub const TECHNIQUE: &str = "T0";
pub const PASS: &str = "P0";

/// How bad a finding is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Severity {
    /// D3DX would not compile the effect: the game loses the shader.
    Error,
    /// The effect compiles but the game uses it wrongly (sha.md §8 grades these
    /// warnings): no `T0`/`P0` to draw with, or a stream format the game does not know,
    /// so it sets no vertex stride. The string says what it is about, without positions,
    /// so a save can tell a warning it introduces from one the file already had.
    Warning(String),
}

/// One reason the game would refuse the effect, at a byte offset of the `.sha`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    pub offset: usize,
    pub message: String,
    /// For asm errors: the shader (index into [`Effect::shaders`]) and the 1-based line
    /// and column inside its asm block, so the message can name the view's line too.
    pub block: Option<(usize, usize, usize)>,
}

impl Finding {
    fn warning(about: String, offset: usize, message: impl Into<String>) -> Finding {
        Finding {
            severity: Severity::Warning(about),
            offset,
            message: message.into(),
            block: None,
        }
    }

    fn at(offset: usize, message: impl Into<String>) -> Finding {
        Finding {
            severity: Severity::Error,
            offset,
            message: message.into(),
            block: None,
        }
    }
}

/// `vertex shader vSdr`
pub fn describe(text: &[u8], shader: &ShaderVar) -> String {
    format!(
        "{} shader {}",
        shader.stage.word(),
        String::from_utf8_lossy(&text[shader.name.clone()])
    )
}

/// The offset of the first byte of code in an asm body (past blanks and comments), where
/// the version line should be.
pub fn first_code(text: &[u8], body: &Range<usize>) -> usize {
    let mut i = body.start;
    while i < body.end {
        let rest = &text[i..body.end];
        if rest[0].is_ascii_whitespace() {
            i += 1;
        } else if rest.starts_with(b"//") || rest[0] == b';' {
            i += rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        } else if rest.starts_with(b"/*") {
            i = rest
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(body.end, |p| i + p + 2);
        } else {
            break;
        }
    }
    i
}

/// The version word of an asm block as written (`vs.1.1`), if there is one.
pub fn version_word(text: &[u8], body: &Range<usize>) -> Option<String> {
    let start = first_code(text, body);
    let end = (start..body.end)
        .find(|&i| text[i].is_ascii_whitespace() || matches!(text[i], b';' | b'/'))
        .unwrap_or(body.end);
    (end > start).then(|| String::from_utf8_lossy(&text[start..end]).into_owned())
}

/// Assembles and validates the asm block of `effect.shaders[index]` as D3DX would.
pub fn assemble(text: &[u8], effect: &Effect, index: usize) -> Result<Vec<u8>, Finding> {
    let Some(shader) = effect.shaders.get(index) else {
        return Err(Finding::at(0, format!("no shader {index}")));
    };
    let what = describe(text, shader);
    let body = &text[shader.asm.clone()];
    let source = std::str::from_utf8(body).map_err(|e| {
        Finding::at(
            shader.asm.start + e.valid_up_to(),
            format!("{what}: the asm block is not text (byte is not ASCII/UTF-8)"),
        )
    })?;
    let wanted = match shader.stage {
        Stage::Vertex => ShaderKind::Vertex,
        Stage::Pixel => ShaderKind::Pixel,
    };
    let wrong_kind = || {
        let at = first_code(text, &shader.asm);
        let lines = effect::Lines::new(body);
        let (line, column) = lines.position(at - shader.asm.start);
        Finding {
            severity: Severity::Error,
            offset: at,
            message: format!(
                "{what}: the asm block must start with a {} version (e.g. {}), found '{}'",
                shader.stage.word(),
                match shader.stage {
                    Stage::Vertex => "vs.1.1",
                    Stage::Pixel => "ps.1.3",
                },
                version_word(text, &shader.asm).unwrap_or_default()
            ),
            block: Some((index, line, column)),
        }
    };
    // The block's kind first: a vertex block in a pixel shader is that mistake, whatever
    // its instructions would then be found to break.
    let word = version_word(text, &shader.asm)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let written = match word.get(..2) {
        Some("vs") => Some(ShaderKind::Vertex),
        Some("ps") => Some(ShaderKind::Pixel),
        _ => None,
    };
    if written.is_some_and(|k| k != wanted) {
        return Err(wrong_kind());
    }
    let bytes = asm::assemble_dropping_comments(source).map_err(|e| {
        let line_start = body_line_start(body, e.line);
        Finding {
            severity: Severity::Error,
            offset: (shader.asm.start + line_start + e.column.saturating_sub(1))
                .min(shader.asm.end),
            message: format!("{what}: {}", e.message),
            block: Some((index, e.line, e.column)),
        }
    })?;
    if bytecode::shader_version(&bytes).map(|v| v.kind) != Some(wanted) {
        return Err(wrong_kind());
    }
    Ok(bytes)
}

/// The offset in `body` where its 1-based `line` starts (as `str::lines` counts them).
fn body_line_start(body: &[u8], line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    body.iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(line - 2)
        .map_or(body.len(), |(i, _)| i + 1)
}

/// What a declared name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeclKind {
    Texture,
    String,
    Shader(Stage),
    Other,
}

struct Declared<'a> {
    name: &'a [u8],
    offset: usize,
    kind: DeclKind,
}

/// Every declaration in file order, and the first of each name, which references resolve
/// to (looked up by name: an effect of thousands of shaders and references is checked in
/// time linear in its size).
struct Declarations<'a> {
    all: Vec<Declared<'a>>,
    first: FxHashMap<&'a [u8], usize>,
}

impl<'a> Declarations<'a> {
    /// The first declaration of `name`.
    fn of(&self, name: &[u8]) -> Option<&Declared<'a>> {
        self.first.get(name).map(|&i| &self.all[i])
    }
}

fn declarations<'a>(text: &'a [u8], effect: &Effect) -> Declarations<'a> {
    let mut out: Vec<Declared> = Vec::new();
    let mut add = |range: &Range<usize>, kind| {
        out.push(Declared {
            name: &text[range.clone()],
            offset: range.start,
            kind,
        })
    };
    for t in &effect.textures {
        add(&t.name, DeclKind::Texture);
    }
    for s in &effect.strings {
        add(&s.name, DeclKind::String);
    }
    for s in &effect.shaders {
        add(&s.name, DeclKind::Shader(s.stage));
    }
    for o in &effect.others {
        if let Some(name) = &o.name {
            add(name, DeclKind::Other);
        }
    }
    out.sort_by_key(|d| d.offset);
    let mut first = FxHashMap::default();
    for (i, d) in out.iter().enumerate() {
        first.entry(d.name).or_insert(i);
    }
    Declarations { all: out, first }
}

/// Every reason the game would refuse `effect`, in file order.
pub fn check(text: &[u8], effect: &Effect) -> Vec<Finding> {
    let lines = effect::Lines::new(text);
    let line_of = |offset: usize| lines.position(offset).0;
    let mut out = Vec::new();

    for d in &effect.directives {
        if text[d.word.clone()].eq_ignore_ascii_case(b"include") {
            out.push(Finding::at(
                d.span.start,
                "#include cannot work: the game compiles the effect from memory, \
                 without an include handler",
            ));
        }
    }

    let declared = declarations(text, effect);
    for (i, d) in declared.all.iter().enumerate() {
        let first = declared.first.get(d.name).filter(|&&f| f != i);
        if let Some(first) = first.map(|&f| &declared.all[f]) {
            out.push(Finding::at(
                d.offset,
                format!(
                    "'{}' is already declared on line {}",
                    String::from_utf8_lossy(d.name),
                    line_of(first.offset)
                ),
            ));
        }
    }

    for i in 0..effect.shaders.len() {
        if let Err(f) = assemble(text, effect, i) {
            out.push(f);
        }
    }

    let names: Vec<&str> = STREAM_FORMATS.iter().map(|(n, _)| *n).collect();
    match effect
        .strings
        .iter()
        .rfind(|s| &text[s.name.clone()] == STREAM_FORMAT_NAME.as_bytes())
    {
        None => out.push(Finding::warning(
            STREAM_FORMAT_NAME.into(),
            effect.techniques.first().map_or(0, |t| t.span.start),
            format!(
                "no 'const string {STREAM_FORMAT_NAME} = \"…\";': the game then sets no vertex \
                 stride; use one of {}",
                names.join(", ")
            ),
        )),
        Some(s) => {
            let value = &text[s.value.clone()];
            if !names.iter().any(|n| n.as_bytes() == value) {
                out.push(Finding::warning(
                    format!("{STREAM_FORMAT_NAME}={}", String::from_utf8_lossy(value)),
                    s.value.start,
                    format!(
                        "{STREAM_FORMAT_NAME} \"{}\" is not a stream format the game knows \
                         (exact case): {}",
                        String::from_utf8_lossy(value),
                        names.join(", ")
                    ),
                ));
            }
        }
    }

    let t0 = effect
        .techniques
        .iter()
        .find(|t| &text[t.name.clone()] == TECHNIQUE.as_bytes());
    match t0 {
        None => out.push(Finding::warning(
            TECHNIQUE.into(),
            effect
                .techniques
                .first()
                .map_or(text.len(), |t| t.span.start),
            format!("no 'Technique {TECHNIQUE}': the game draws with {TECHNIQUE}/{PASS}"),
        )),
        Some(t)
            if !t
                .passes
                .iter()
                .any(|p| &text[p.name.clone()] == PASS.as_bytes()) =>
        {
            out.push(Finding::warning(
                PASS.into(),
                t.span.start,
                format!("technique {TECHNIQUE} has no 'Pass {PASS}': the game draws with it"),
            ))
        }
        Some(_) => {}
    }

    for technique in &effect.techniques {
        for pass in &technique.passes {
            for a in &pass.states {
                check_assignment(text, a, &declared, &line_of, &mut out);
            }
        }
    }
    out.sort_by_key(|f| f.offset);
    out
}

fn check_assignment(
    text: &[u8],
    a: &effect::Assignment,
    declared: &Declarations<'_>,
    line_of: &dyn Fn(usize) -> usize,
    out: &mut Vec<Finding>,
) {
    let state = &text[a.state.clone()];
    let shader_stage = if state.eq_ignore_ascii_case(b"VertexShader") {
        Some(Stage::Vertex)
    } else if state.eq_ignore_ascii_case(b"PixelShader") {
        Some(Stage::Pixel)
    } else {
        None
    };
    let state_name = String::from_utf8_lossy(state);
    for r in effect::references(text, &a.value) {
        let name = &text[r.clone()];
        let shown = String::from_utf8_lossy(name);
        let Some(d) = declared.of(name) else {
            out.push(Finding::at(r.start, format!("<{shown}> is not declared")));
            continue;
        };
        if d.offset > r.start {
            out.push(Finding::at(
                r.start,
                format!(
                    "<{shown}> is used before its declaration on line {}",
                    line_of(d.offset)
                ),
            ));
            continue;
        }
        match (shader_stage, d.kind) {
            (Some(want), DeclKind::Shader(have)) if want != have => out.push(Finding::at(
                r.start,
                format!(
                    "{state_name} = <{shown}>: {shown} is a {} shader",
                    have.word()
                ),
            )),
            (Some(want), DeclKind::Texture | DeclKind::String) => out.push(Finding::at(
                r.start,
                format!(
                    "{state_name} = <{shown}>: {shown} is not a {} shader",
                    want.word()
                ),
            )),
            (None, DeclKind::Shader(_)) if state.eq_ignore_ascii_case(b"Texture") => {
                out.push(Finding::at(
                    r.start,
                    format!("{state_name} = <{shown}>: {shown} is a shader, not a texture"),
                ))
            }
            _ => {}
        }
    }
}
