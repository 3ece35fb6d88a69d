//! What the game's effect compiler, and then the game, demand of a `.sha` effect
//! (`shared/formats/sha.md` §4, §5, §7, §8): the text is D3DX9's effect language and every
//! state a pass sets is one D3DX knows, with a value it takes ([`super::grammar`],
//! [`super::states`]); every asm block assembles for its shader model as D3DX's assembler
//! spells it, within that model's register and slot limits (the same assembler and limits
//! the `.sdp` views use), and passes Direct3D 9's validator; names are declared once and
//! before they are referenced, the pass the game draws with (`T0`/`P0`) exists, and
//! `inputStreamFormat` is one of the ten names the game's stream table holds. What D3DX
//! refuses was learnt from d3dx9_31 and is held to it (`fx-verdicts/`, `verdicts.rs`).
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
use super::grammar;
use crate::shader::d3d9::asm;
use crate::shader::d3d9::{bytecode, opcodes};

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
    /// For errors inside the function an HLSL shader compiles: the shader (index into
    /// [`super::hlsl::Shaders::list`]) and the line and column in its `.hlsl` view.
    pub source: Option<(usize, usize, usize)>,
}

impl Finding {
    fn warning(about: String, offset: usize, message: impl Into<String>) -> Finding {
        Finding {
            severity: Severity::Warning(about),
            offset,
            message: message.into(),
            block: None,
            source: None,
        }
    }

    pub(super) fn at(offset: usize, message: impl Into<String>) -> Finding {
        Finding {
            severity: Severity::Error,
            offset,
            message: message.into(),
            block: None,
            source: None,
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
    assemble_in(text, &grammar::Macros::new(text), effect, index)
}

/// [`assemble`], with the text's [`grammar::directive_lines`] found already (a view of
/// one block of a large effect need not look through all of it).
pub fn assemble_with_lines(
    text: &[u8],
    directives: &[Range<usize>],
    effect: &Effect,
    index: usize,
) -> Result<Vec<u8>, Finding> {
    let macros = grammar::Macros::with_lines(text, std::borrow::Cow::Borrowed(directives));
    assemble_in(text, &macros, effect, index)
}

/// [`assemble`], with the text's macros found already.
fn assemble_in(
    text: &[u8],
    macros: &grammar::Macros,
    effect: &Effect,
    index: usize,
) -> Result<Vec<u8>, Finding> {
    let Some(shader) = effect.shaders.get(index) else {
        return Err(Finding::at(0, format!("no shader {index}")));
    };
    let what = describe(text, shader);
    assemble_block(text, macros, &shader.asm, Some(shader.stage), &what).map_err(|mut f| {
        if let Some(block) = &mut f.block {
            block.0 = index;
        }
        f
    })
}

/// The version spellings D3DX's assembler (d3dx9_31) reads, lower case only. `vs.1.0` and
/// `ps.1.0` it assembles as 1.1, with a warning.
const VERSIONS: &[&str] = &[
    "vs.1.0", "vs_1_0", "vs.1.1", "vs_1_1", "vs.2.0", "vs_2_0", "vs.2.x", "vs_2_x", "vs_2_sw",
    "vs.3.0", "vs_3_0", "vs_3_sw", "ps.1.0", "ps_1_0", "ps.1.1", "ps_1_1", "ps.1.2", "ps_1_2",
    "ps.1.3", "ps_1_3", "ps.1.4", "ps_1_4", "ps.2.0", "ps_2_0", "ps.2.x", "ps_2_x", "ps_2_sw",
    "ps.3.0", "ps_3_0", "ps_3_sw",
];

/// Said of a block D3DX's assembler takes but Direct3D 9's shader validator refuses.
pub const VALIDATOR: &str = "D3DX's assembler lets this through, but Direct3D 9's shader \
                             validator refuses the shader, so the game cannot create it";

/// Rules of `validate`'s syntax level that D3DX's assembler does not apply itself (under
/// Wine, whose d3d9.dll validator accepts every shader, d3dx9_31 takes such blocks): the
/// ps_1_x write masks, texture instructions after arithmetic ones, and the slot budgets.
/// The words are validate.rs's messages; the verdict tests hold them to it.
const VALIDATOR_ONLY: &[&str] = &[
    "write masks are",
    "texture instructions come before arithmetic",
    "too many instructions",
];

/// The stage an asm body's version line names, if it names one.
pub fn block_stage(text: &[u8], body: &Range<usize>) -> Option<Stage> {
    let word = version_word(text, body)?;
    match word.get(..2) {
        Some("vs") => Some(Stage::Vertex),
        Some("ps") => Some(Stage::Pixel),
        _ => None,
    }
}

/// Assembles the asm `body` (the bytes between `asm {` and `}`) as D3DX would, for a
/// shader of stage `want` (`None`: whichever the version line names). An error has
/// `block` set to the line and column in the body (and shader 0).
pub fn assemble_block(
    text: &[u8],
    macros: &grammar::Macros,
    body: &Range<usize>,
    want: Option<Stage>,
    what: &str,
) -> Result<Vec<u8>, Finding> {
    let lines = effect::Lines::new(&text[body.clone()]);
    let in_block = |offset: usize, message: String| {
        let (line, column) = lines.position(offset.saturating_sub(body.start));
        Finding {
            severity: Severity::Error,
            offset,
            message,
            block: Some((0, line, column)),
            source: None,
        }
    };
    let source = std::str::from_utf8(&text[body.clone()]).map_err(|e| {
        Finding::at(
            body.start + e.valid_up_to(),
            format!("{what}: the asm block is not text (byte is not ASCII/UTF-8)"),
        )
    })?;
    let version_at = first_code(text, body);
    let word = version_word(text, body).unwrap_or_default();
    if !VERSIONS.contains(&word.as_str()) {
        let hint = match word.to_ascii_lowercase().as_str() {
            w if VERSIONS.contains(&w) => " (in lower case)".to_string(),
            "ps_2_a" | "ps_2_b" | "vs_2_a" | "ps.2.a" | "ps.2.b" | "vs.2.a" => {
                " (d3dx9_31 has no 2_a/2_b models: write ps_2_x or vs_2_x)".to_string()
            }
            _ => String::new(),
        };
        return Err(in_block(
            version_at,
            format!(
                "{what}: the asm block must start with its version, as D3DX's assembler \
                 spells it (vs.1.1, vs_2_0, ps.1.3, ps_2_0, ...){hint}, found '{word}'"
            ),
        ));
    }
    let written = match &word[..2] {
        "vs" => Stage::Vertex,
        _ => Stage::Pixel,
    };
    let spelling = d3dx_spelling(text, macros.names(), body, &word);
    // The effect's macros apply in the block: D3DX preprocesses the whole text first. They
    // go ahead of the block's text, and errors are moved back by as many lines.
    let defines = macros.used_in(body).unwrap_or_default();
    let mut head = String::new();
    for (name, value) in &defines {
        let (name, value) = (
            String::from_utf8_lossy(name),
            String::from_utf8_lossy(value),
        );
        head.push_str(&format!("#define {name} {value}\n"));
    }
    let shift = defines.len();
    // 1.0 is assembled as 1.1 (the same length: columns stay).
    let source = match word.as_str() {
        "vs.1.0" | "ps.1.0" | "vs_1_0" | "ps_1_0" => {
            let at = version_at - body.start;
            let mut s = source.to_string();
            let fixed = format!("{}1{}1", &word[..3], &word[4..5]);
            s.replace_range(at..at + word.len(), &fixed);
            s
        }
        _ => source.to_string(),
    };
    let source = head + &source;
    let located = |mut e: asm::AsmError| {
        if e.line > shift {
            e.line -= shift;
        } else {
            (e.line, e.column) = (1, 1);
        }
        let line_start = body_line_start(&text[body.clone()], e.line);
        Finding {
            severity: Severity::Error,
            offset: (body.start + line_start + e.column.saturating_sub(1)).min(body.end),
            message: format!("{what}: {}", e.message),
            block: Some((0, e.line, e.column)),
            source: None,
        }
    };
    let wrong_kind = || {
        let want = want.unwrap_or(written);
        Finding::at(
            body.start.saturating_sub(1),
            format!(
                "{what}: the asm block is {} shader code ('{word}'), and a {} shader must \
                 start with a {} version (e.g. {})",
                written.word(),
                want.word(),
                want.word(),
                match want {
                    Stage::Vertex => "vs.1.1",
                    Stage::Pixel => "ps.1.3",
                }
            ),
        )
    };
    let kind_ok = want.map_or(true, |w| w == written);
    if let Some((offset, message)) = spelling {
        // What comes first of this and what our assembler refuses by D3DX's rules.
        let spelt = in_block(offset, format!("{what}: {message}"));
        return Err(match asm::assemble_skip_validation(&source) {
            Err(e) if !VALIDATOR_ONLY.iter().any(|m| e.message.contains(m)) => {
                let e = located(e);
                if e.offset <= spelt.offset {
                    e
                } else {
                    spelt
                }
            }
            _ => spelt,
        });
    }
    match asm::assemble_dropping_comments(&source) {
        Ok(bytes) if kind_ok => {
            if bytecode::shader_version(&bytes).is_none() {
                return Err(wrong_kind());
            }
            Ok(bytes)
        }
        Ok(_) => Err(wrong_kind()),
        Err(full) => match asm::assemble_skip_validation(&source) {
            // What D3DX's assembler refuses itself.
            Err(syntax) if !VALIDATOR_ONLY.iter().any(|m| syntax.message.contains(m)) => {
                Err(located(syntax))
            }
            Err(_) if !kind_ok => Err(wrong_kind()),
            Err(syntax) => {
                let mut f = located(syntax);
                f.message = format!("{} ({VALIDATOR})", f.message);
                Err(f)
            }
            Ok(_) if !kind_ok => Err(wrong_kind()),
            Ok(_) => {
                let mut f = located(full);
                f.message = format!("{} ({VALIDATOR})", f.message);
                Err(f)
            }
        },
    }
}

/// Registers D3DX spells with capitals; everything else in an asm block is lower case.
fn camel_register(word: &str) -> bool {
    let digits = |rest: &str| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit());
    matches!(
        word,
        "oPos" | "oFog" | "oPts" | "oDepth" | "vFace" | "vPos" | "aL"
    ) || ["oD", "oT", "oC"]
        .iter()
        .any(|p| word.strip_prefix(p).is_some_and(digits))
}

/// What D3DX's assembler refuses in the spelling of a block that ours takes: capitals
/// (`MUL`, `R0`, `.RGBA`), and the output registers of the other vertex models (`oT0` in
/// vs_3_0, `o0` before it), which are the same register in the bytecode.
fn d3dx_spelling(
    text: &[u8],
    defines: &std::collections::HashSet<&[u8]>,
    body: &Range<usize>,
    version: &str,
) -> Option<(usize, String)> {
    let vs3 = version.starts_with("vs") && version.contains('3');
    let vs = version.starts_with("vs");
    let mut i = body.start;
    let mut line_start = true;
    // The first word of a line: the instruction (after a '+' for co-issue).
    let mut line_first = true;
    while i < body.end {
        let rest = &text[i..body.end];
        if rest.starts_with(b"//") || rest[0] == b';' {
            i += rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            continue;
        }
        if rest.starts_with(b"/*") {
            i = rest
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(body.end, |p| i + p + 2);
            continue;
        }
        let c = rest[0];
        if c == b'\n' {
            line_start = true;
            line_first = true;
            i += 1;
            continue;
        }
        if c == b'#' && line_start {
            i += rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        line_start = false;
        if !(c.is_ascii_alphanumeric() || c == b'_') {
            i += 1;
            continue;
        }
        let len = rest
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
            .unwrap_or(rest.len());
        let word = String::from_utf8_lossy(&rest[..len]);
        let at = i;
        i += len;
        let first_word = std::mem::replace(&mut line_first, false);
        if c.is_ascii_digit() || defines.contains(&rest[..len]) {
            continue;
        }
        let old_output = ["oPos", "oFog", "oPts"].contains(&word.as_ref())
            || ["oD", "oT"].iter().any(|p| {
                word.strip_prefix(p)
                    .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
            });
        if vs3 && old_output {
            return Some((
                at,
                format!(
                    "{word} is not a register of {version}: its outputs are o0-o11, \
                     declared with dcl_position, dcl_texcoord, …"
                ),
            ));
        }
        let new_output = word
            .strip_prefix('o')
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()));
        if vs && !vs3 && new_output {
            return Some((
                at,
                format!("{word} is a vs_3_0 register; {version} writes oPos, oD#, oT#, …"),
            ));
        }
        if first_word {
            let base = word.split('_').next().unwrap_or_default();
            if vs && !vs3 && word.split('_').skip(1).any(|m| m == "sat") {
                return Some((
                    at,
                    format!("'{word}': {version} instructions take no _sat (vs_3_0 has it)"),
                ));
            }
            if !vs
                && base == "tex"
                && !matches!(
                    version,
                    "ps.1.1"
                        | "ps_1_1"
                        | "ps.1.2"
                        | "ps_1_2"
                        | "ps.1.3"
                        | "ps_1_3"
                        | "ps.1.0"
                        | "ps_1_0"
                )
            {
                return Some((
                    at,
                    format!("'tex' is not an instruction of {version}: it samples with texld"),
                ));
            }
        }
        let lower = word.to_ascii_lowercase();
        let camel = ["opos", "ofog", "opts", "odepth", "vface", "vpos", "al"]
            .contains(&lower.as_str())
            || ["od", "ot", "oc"].iter().any(|p| {
                lower
                    .strip_prefix(p)
                    .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
            });
        if camel && !camel_register(&word) {
            let spelt = match lower.as_str() {
                "opos" => "oPos".to_string(),
                "ofog" => "oFog".to_string(),
                "opts" => "oPts".to_string(),
                "odepth" => "oDepth".to_string(),
                "vface" => "vFace".to_string(),
                "vpos" => "vPos".to_string(),
                "al" => "aL".to_string(),
                _ => format!("o{}{}", lower[1..2].to_ascii_uppercase(), &lower[2..]),
            };
            return Some((
                at,
                format!("D3DX's assembler knows no register '{word}': it is spelt {spelt}"),
            ));
        }
        // An instruction in capitals: only one D3DX knows in lower case (of another word
        // the assembler's own message says more).
        let known = !first_word || {
            let base = lower.split('_').next().unwrap_or_default();
            base == "dcl" || opcodes::by_mnemonic(base).next().is_some()
        };
        if known && word.bytes().any(|b| b.is_ascii_uppercase()) && !camel_register(&word) {
            return Some((
                at,
                format!(
                    "D3DX's assembler reads '{word}' only in lower case ('{}')",
                    word.to_ascii_lowercase()
                ),
            ));
        }
    }
    None
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

struct Declared<'a> {
    name: &'a [u8],
    offset: usize,
}

/// Every declaration in file order, and the first of each name, which references resolve
/// to (looked up by name: an effect of thousands of shaders and references is checked in
/// time linear in its size).
struct Declarations<'a> {
    all: Vec<Declared<'a>>,
    first: FxHashMap<&'a [u8], usize>,
}

fn declarations<'a>(text: &'a [u8], effect: &Effect) -> Declarations<'a> {
    let mut out: Vec<Declared> = Vec::new();
    let mut add = |range: &Range<usize>| {
        out.push(Declared {
            name: &text[range.clone()],
            offset: range.start,
        })
    };
    for t in &effect.textures {
        add(&t.name);
    }
    for s in &effect.strings {
        add(&s.name);
    }
    for s in &effect.shaders {
        add(&s.name);
    }
    for o in &effect.others {
        if let Some(name) = &o.name {
            add(name);
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

    let macros = grammar::Macros::new(text);
    for i in 0..effect.shaders.len() {
        if let Err(f) = assemble_in(text, &macros, effect, i) {
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

    out.extend(language(text));
    out.sort_by_key(|f| f.offset);
    out
}

/// What D3DX's effect compiler refuses in the effect language ([`grammar`]), inline
/// `asm { }` values in passes assembled as D3DX would. Also for text [`effect::parse`]
/// cannot follow, to say where D3DX would stop.
pub fn language(text: &[u8]) -> Vec<Finding> {
    let macros = grammar::Macros::new(text);
    let inline = |body: Range<usize>| {
        let stage = block_stage(text, &body);
        let problem = assemble_block(text, &macros, &body, None, "inline asm shader")
            .err()
            .map(|mut f| {
                f.block = None;
                f
            });
        (stage, problem)
    };
    grammar::check(text, &inline)
}
