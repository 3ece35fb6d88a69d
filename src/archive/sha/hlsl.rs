//! The HLSL shaders of an effect: the `compile` statements of its passes and shader
//! variables (`PixelShader = compile ps_2_0 shade(0.5);`, `vertexshader vs = compile
//! vs_2_0 main();`), the functions they name, and each compiled as D3DX's effect compiler
//! compiles it when the game loads the effect.
//!
//! D3DX compiles the function a `compile` names as the entry point of the effect's HLSL
//! (its globals, structs, samplers and other functions), and gives the statement's
//! arguments to the function's `uniform` parameters, in order. As d3dx9_31 does it:
//! `shade(0.5)` of `float4 shade(float2 uv : TEXCOORD0, uniform float k)` is `shade`
//! with `k` = 0.5, a constant folded into the code (a `def`); a global given as an
//! argument stays in the constant table under its own name; a parameter without
//! `uniform` takes no argument; a count other than the uniform parameters' (less those
//! with a default) is error X3013, "function does not take N parameters".
//!
//! The compiler is given the same: the effect's text with what is not HLSL (the asm
//! shader variables, the techniques) blanked out, every line and column where it was but
//! one line down, and after the last line a function that calls the named one with the
//! arguments in place, compiled as the entry point ([`ENTRY`]). Its messages are put back
//! on the `.sha`'s lines; one about the appended function, or about the shader as a whole
//! (the compiler places those on its first line, which is left empty for them), is put on
//! the `compile` statement.
//!
//! Whether the compiler compiles a profile at all is learnt by compiling a one-line
//! shader for it: where it does not (a profile it does not know), a shader for that
//! profile is [`Outcome::NotCompiled`], neither refused nor passed, with the compiler's
//! reason. Nothing here names the models it compiles: every one from vs_1_1 and ps_1_1
//! to 3.0 is compiled and checked alike.
//!
//! Each shader compiles the whole text, so an effect is given [`BUDGET`] bytes of
//! compiler input: a hostile effect of thousands of `compile` statements is checked as
//! far as that goes, and the shaders past it are not compiled, and said to be.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use super::check::{Finding, Severity};
use super::effect::{Effect, Kind, Lexer, Lines, Other, Stage, Token};
use super::grammar;
use crate::shader::d3d9::disasm;
use crate::shader::hlsl::compile::{compile_with, Failed, Options};
use crate::shader::hlsl::diag;
use crate::shader::hlsl::pp;

/// The function appended to the text, which calls the named one: the entry point.
pub const ENTRY: &str = "__shaderfs_compile";

/// The compiler input an effect's shaders may take in all (each compiles the whole
/// text): a 4 MiB effect compiles 8 shaders, a FlatOut-sized one thousands.
pub const BUDGET: usize = 32 << 20;

/// How the compiler starts a message about code that breaks the shader model's limits.
const DOES_NOT_FIT: &str = "the compiled code does not fit";

/// Said of such code. d3dx9_31's compiler writes some of it without a word (a ps_2_0 of
/// 41 texture instructions, a vs_2_0 that writes no position), and D3DX's effect compiler
/// takes it; Direct3D 9 refuses such a shader when the game creates it.
pub const VALIDATOR: &str = "D3DX's compiler may write such code, but Direct3D 9's shader \
                             validator refuses the shader, so the game cannot create it";

/// One `compile` statement, or the shaders of several that say the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HlslShader {
    pub stage: Stage,
    /// From `compile` to the `)` that closes the arguments.
    pub statement: Range<usize>,
    pub profile: Range<usize>,
    /// The function's name in the statement.
    pub function: Range<usize>,
    /// Each argument's text.
    pub args: Vec<Range<usize>>,
    /// `pixelshader NAME = compile …;`: the variable.
    pub variable: Option<Range<usize>>,
    /// Where it stands among the effect's shaders: the variable's item, or the statement.
    pub at: usize,
    /// The profile or function when it is a `#define`d name, which is not followed.
    pub macro_name: Option<Range<usize>>,
}

/// A function definition of the effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// The item: from its first token to the `}` that closes its body (and a `;`).
    pub span: Range<usize>,
    pub name: Range<usize>,
    /// The return type, without modifiers (`float4`, `VS_OUT`, `void`).
    pub returns: Range<usize>,
    pub params: Vec<Param>,
    /// Between the parameters' `)` and the body's `{`: the return semantic, if any.
    pub semantic: Range<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub span: Range<usize>,
    pub name: Range<usize>,
    pub uniform: bool,
    /// The value after `=`.
    pub default: Option<Range<usize>>,
}

/// What compiling a shader gave.
#[derive(Debug, Clone)]
pub enum Outcome {
    Compiled {
        bytecode: Vec<u8>,
        /// The disassembly the `.asm` view shows.
        listing: String,
    },
    /// Why D3DX would refuse it: the compiler's errors, at places of the `.sha`.
    Refused(Vec<Finding>),
    /// Not compiled, so neither refused nor passed: why (for a profile the compiler does
    /// not compile yet, its own words).
    NotCompiled(String),
}

/// The HLSL shaders of one effect text, each compiled once, when first asked for.
pub struct Shaders {
    pub list: Vec<HlslShader>,
    functions: Vec<Option<Function>>,
    outcomes: Vec<OnceLock<Outcome>>,
    /// The `.hlsl` view of each function some shader compiles, by start, with the first
    /// shader that compiles it (whose view an error in it names).
    views: Vec<(Range<usize>, usize)>,
}

impl Shaders {
    pub fn new(text: &[u8], effect: &Effect) -> Shaders {
        let list = find(text, effect);
        // The items by the name they declare, so each shader's function is found at once.
        let mut by_name: HashMap<&[u8], Vec<&Other>> = HashMap::new();
        for o in &effect.others {
            if let Some(n) = &o.name {
                by_name.entry(&text[n.clone()]).or_default().push(o);
            }
        }
        let functions: Vec<Option<Function>> = list
            .iter()
            .map(|s| {
                let name = &text[s.function.clone()];
                let candidates = by_name.get(name).map_or(&[][..], Vec::as_slice);
                pick(text, candidates, name, s.args.len())
            })
            .collect();
        let mut views: Vec<(Range<usize>, usize)> = Vec::new();
        let mut shown = HashSet::new();
        for (i, f) in functions.iter().enumerate() {
            if let Some(f) = f {
                if shown.insert(f.span.start) {
                    views.push((view(text, f), i));
                }
            }
        }
        views.sort_by_key(|(r, _)| r.start);
        let outcomes = list.iter().map(|_| OnceLock::new()).collect();
        Shaders {
            list,
            functions,
            outcomes,
            views,
        }
    }

    /// The function shader `i` compiles, if the effect defines it.
    pub fn function(&self, i: usize) -> Option<&Function> {
        self.functions.get(i)?.as_ref()
    }

    /// The `.hlsl` view that holds `offset`, and the shader it is named after.
    fn view_at(&self, offset: usize) -> Option<&(Range<usize>, usize)> {
        let n = self.views.partition_point(|(r, _)| r.start <= offset);
        self.views[..n].last().filter(|(r, _)| r.contains(&offset))
    }

    /// Shader `i` of `text` (the text these shaders were found in) compiled.
    pub fn outcome(&self, text: &[u8], effect: &Effect, i: usize) -> &Outcome {
        self.outcomes[i].get_or_init(|| {
            if (i + 1).saturating_mul(text.len().max(1)) > BUDGET {
                let n = BUDGET / text.len().max(1);
                return Outcome::NotCompiled(format!(
                    "shaderfs compiles the first {n} HLSL shaders of an effect of {} bytes, \
                     and this is number {}",
                    text.len(),
                    i + 1
                ));
            }
            // An error in a function several shaders compile is told with the view of
            // the first, so it reads the same from each.
            let f = self.function(i);
            let view = f
                .and_then(|f| self.view_at(f.span.start))
                .map_or(i, |(_, first)| *first);
            compile(text, effect, &self.list[i], f, view)
        })
    }

    /// Where `offset` of `text` is in the `.hlsl` view of the first shader whose function
    /// holds it: (shader, line, column).
    pub fn place(&self, text: &[u8], offset: usize) -> Option<(usize, usize, usize)> {
        let (shown, i) = self.view_at(offset)?;
        let (line, column) = Lines::new(&text[shown.clone()]).position(offset - shown.start);
        Some((*i, line, column))
    }

    /// Every error of every shader, in file order, each once (an error in the text of a
    /// function two shaders compile is said alike by both).
    pub fn errors(&self, text: &[u8], effect: &Effect) -> Vec<Finding> {
        // Every compile on one thread with the compiler's stack, not a thread each.
        let outcomes: Vec<&Outcome> = crate::shader::hlsl::with_stack(|| {
            (0..self.list.len())
                .map(|i| self.outcome(text, effect, i))
                .collect()
        });
        let mut out: Vec<Finding> = Vec::new();
        let mut said = HashSet::new();
        for outcome in outcomes {
            if let Outcome::Refused(findings) = outcome {
                for f in findings {
                    if said.insert((f.offset, f.message.clone())) {
                        out.push(f.clone());
                    }
                }
            }
        }
        out.sort_by_key(|f| f.offset);
        out
    }
}

/// `pixel shader shade (ps_2_0)`
pub fn describe(text: &[u8], shader: &HlslShader) -> String {
    format!(
        "{} ({})",
        describe_source(text, shader),
        lossy(text, &shader.profile)
    )
}

/// `pixel shader shade`: what an error in the function's text is said of, whatever the
/// profile.
fn describe_source(text: &[u8], shader: &HlslShader) -> String {
    format!(
        "{} shader {}",
        shader.stage.word(),
        lossy(text, &shader.function)
    )
}

fn lossy(text: &[u8], range: &Range<usize>) -> String {
    String::from_utf8_lossy(&text[range.clone()]).into_owned()
}

/// The tokens of `range` (directives left out; none past a lexing error).
fn tokens(text: &[u8], range: &Range<usize>) -> Vec<Token> {
    let mut lx = Lexer::new(&text[..range.end.min(text.len())], range.start);
    let mut out = Vec::new();
    while let Ok(Some(t)) = lx.next() {
        if t.kind != Kind::Directive {
            out.push(t);
        }
    }
    out
}

fn is_ident(text: &[u8], t: &Token, word: &str) -> bool {
    t.kind == Kind::Ident && text[t.span.clone()].eq_ignore_ascii_case(word.as_bytes())
}

/// `compile PROFILE NAME ( ARGS )` at the start of `tokens`: the statement's parts, and
/// how many tokens it took.
fn statement(text: &[u8], tokens: &[Token]) -> Option<(Parts, usize)> {
    let [compile, profile, function, open, ..] = tokens else {
        return None;
    };
    if !is_ident(text, compile, "compile")
        || profile.kind != Kind::Ident
        || function.kind != Kind::Ident
        || open.kind != Kind::Punct(b'(')
    {
        return None;
    }
    let (items, close) = list(text, tokens, 3)?;
    let args = items
        .iter()
        .map(|item| Some(item.first()?.span.start..item.last()?.span.end))
        .collect::<Option<Vec<_>>>()?;
    let parts = Parts {
        statement: compile.span.start..tokens[close].span.end,
        profile: profile.span.clone(),
        function: function.span.clone(),
        args,
    };
    Some((parts, close + 1))
}

/// The elements of the bracketed list that opens at `tokens[open]`: each one's tokens,
/// split at the commas outside inner brackets and `vector<…>`, `matrix<…>`; and the index
/// of the bracket that closes it.
fn list<'t>(text: &[u8], tokens: &'t [Token], open: usize) -> Option<(Vec<&'t [Token]>, usize)> {
    let (mut depth, mut angle) = (0usize, 0usize);
    let mut items = Vec::new();
    let mut start = open + 1;
    for (n, t) in tokens.iter().enumerate().skip(open) {
        match t.kind {
            Kind::Punct(b'(' | b'[' | b'{') => depth += 1,
            Kind::Punct(b')' | b']' | b'}') => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    if n > start || !items.is_empty() {
                        items.push(&tokens[start..n]);
                    }
                    return Some((items, n));
                }
            }
            Kind::Punct(b'<')
                if depth == 1
                    && (is_ident(text, &tokens[n - 1], "vector")
                        || is_ident(text, &tokens[n - 1], "matrix")) =>
            {
                angle += 1
            }
            Kind::Punct(b'>') if depth == 1 && angle > 0 => angle -= 1,
            Kind::Punct(b',') if depth == 1 && angle == 0 => {
                items.push(&tokens[start..n]);
                start = n + 1;
            }
            _ => {}
        }
    }
    None
}

struct Parts {
    statement: Range<usize>,
    profile: Range<usize>,
    function: Range<usize>,
    args: Vec<Range<usize>>,
}

/// The stage a profile compiles for (`vs_…`, `ps_…`).
fn profile_stage(profile: &[u8]) -> Option<Stage> {
    match profile.get(..3).map(|p| p.to_ascii_lowercase()) {
        Some(p) if p == b"vs_" => Some(Stage::Vertex),
        Some(p) if p == b"ps_" => Some(Stage::Pixel),
        _ => None,
    }
}

/// The `compile` statements of `effect`, in file order; statements that say the same
/// (profile, function and arguments, token for token) are one shader, as they compile to
/// one. A statement whose profile is of the other stage than its state or variable is
/// left out (the effect check refuses it); one of a profile that is no `vs_`/`ps_` one
/// (a macro, a typo) takes its state's or variable's stage.
pub fn find(text: &[u8], effect: &Effect) -> Vec<HlslShader> {
    let mut out: Vec<HlslShader> = Vec::new();
    let mut candidates: Vec<(usize, HlslShader)> = Vec::new();
    for technique in &effect.techniques {
        for pass in &technique.passes {
            for a in &pass.states {
                let state = &text[a.state.clone()];
                let stage = if state.eq_ignore_ascii_case(b"vertexshader") {
                    Stage::Vertex
                } else if state.eq_ignore_ascii_case(b"pixelshader") {
                    Stage::Pixel
                } else {
                    continue;
                };
                let toks = tokens(text, &a.value);
                let Some((parts, used)) = statement(text, &toks) else {
                    continue;
                };
                let elsewhere =
                    profile_stage(&text[parts.profile.clone()]).is_some_and(|s| s != stage);
                if used != toks.len() || elsewhere {
                    continue;
                }
                candidates.push((
                    parts.statement.start,
                    HlslShader {
                        stage,
                        at: parts.statement.start,
                        statement: parts.statement,
                        profile: parts.profile,
                        function: parts.function,
                        args: parts.args,
                        variable: None,
                        macro_name: None,
                    },
                ));
            }
        }
    }
    for other in &effect.others {
        let toks = tokens(text, &other.span);
        let [kind, name, equals, rest @ ..] = toks.as_slice() else {
            continue;
        };
        let stage = if is_ident(text, kind, "vertexshader") {
            Stage::Vertex
        } else if is_ident(text, kind, "pixelshader") {
            Stage::Pixel
        } else {
            continue;
        };
        if name.kind != Kind::Ident || equals.kind != Kind::Punct(b'=') {
            continue;
        }
        let Some((parts, used)) = statement(text, rest) else {
            continue;
        };
        let ends = match &rest[used..] {
            [] => true,
            [semi] => semi.kind == Kind::Punct(b';'),
            _ => false,
        };
        let elsewhere = profile_stage(&text[parts.profile.clone()]).is_some_and(|s| s != stage);
        if !ends || elsewhere {
            continue;
        }
        candidates.push((
            other.span.start,
            HlslShader {
                stage,
                at: other.span.start,
                statement: parts.statement,
                profile: parts.profile,
                function: parts.function,
                args: parts.args,
                variable: Some(name.span.clone()),
                macro_name: None,
            },
        ));
    }
    candidates.sort_by_key(|(at, _)| *at);
    let macros = grammar::Macros::new(text);
    // The words of each pass's statement seen so far.
    let mut seen: HashSet<Vec<&[u8]>> = HashSet::new();
    for (_, mut shader) in candidates {
        if shader.variable.is_none() {
            let words = tokens(text, &shader.statement)
                .iter()
                .map(|t| &text[t.span.clone()])
                .collect();
            if !seen.insert(words) {
                continue;
            }
        }
        shader.macro_name = [&shader.profile, &shader.function]
            .into_iter()
            .find(|r| macros.names().contains(&text[(*r).clone()]))
            .cloned();
        out.push(shader);
    }
    out
}

/// Words that may stand before a function's return type.
const FUNCTION_MODIFIERS: &[&str] = &["static", "inline", "extern", "precise", "const"];

/// The definition of function `name` among the effect's items: of several (overloads),
/// the first whose uniform parameters take `args` arguments, or else the first.
pub fn function(text: &[u8], effect: &Effect, name: &[u8], args: usize) -> Option<Function> {
    let named: Vec<&Other> = effect
        .others
        .iter()
        .filter(|o| o.name.as_ref().is_some_and(|n| &text[n.clone()] == name))
        .collect();
    pick(text, &named, name, args)
}

/// Of the items `candidates`, the definition of function `name` whose uniform parameters
/// take `args` arguments, or else the first.
fn pick(text: &[u8], candidates: &[&Other], name: &[u8], args: usize) -> Option<Function> {
    let defined: Vec<Function> = candidates
        .iter()
        .filter_map(|o| definition(text, &o.span))
        .filter(|f| &text[f.name.clone()] == name)
        .collect();
    let fits = |f: &Function| {
        let uniform: Vec<&Param> = f.params.iter().filter(|p| p.uniform).collect();
        let defaults = uniform
            .iter()
            .rev()
            .take_while(|p| p.default.is_some())
            .count();
        (uniform.len() - defaults..=uniform.len()).contains(&args)
    };
    defined
        .iter()
        .find(|f| fits(f))
        .or(defined.first())
        .cloned()
}

/// The item at `span` as a function definition, if it is one.
pub fn definition(text: &[u8], span: &Range<usize>) -> Option<Function> {
    let toks = tokens(text, span);
    let mut i = 0;
    // Attributes (`[maxtempreg(8)]`) and modifiers.
    loop {
        match toks.get(i)? {
            t if t.kind == Kind::Punct(b'[') => {
                i += toks[i..].iter().position(|t| t.kind == Kind::Punct(b']'))? + 1;
            }
            t if FUNCTION_MODIFIERS.iter().any(|m| is_ident(text, t, m)) => i += 1,
            _ => break,
        }
    }
    let returns_start = toks.get(i)?.span.start;
    let open = toks
        .iter()
        .position(|t| t.kind == Kind::Punct(b'('))
        .filter(|&o| o > i)?;
    let name = &toks[open - 1];
    if name.kind != Kind::Ident || open - 1 <= i {
        return None;
    }
    let returns = returns_start..toks[open - 2].span.end;
    // The parameters, to the `)` that closes them.
    let (items, close) = list(text, &toks, open)?;
    let mut params = items
        .iter()
        .map(|item| param(text, item))
        .collect::<Option<Vec<_>>>()?;
    // `(void)` takes nothing.
    if let [only] = params.as_slice() {
        if &text[only.span.clone()] == b"void" {
            params.clear();
        }
    }
    let body = close
        + 1
        + toks[close + 1..]
            .iter()
            .position(|t| t.kind == Kind::Punct(b'{'))?;
    if toks[close + 1..body]
        .iter()
        .any(|t| t.kind == Kind::Punct(b';'))
    {
        return None;
    }
    Some(Function {
        span: span.clone(),
        name: name.span.clone(),
        returns,
        params,
        semantic: toks[close].span.end..toks[body].span.start,
    })
}

/// One parameter's tokens.
fn param(text: &[u8], toks: &[Token]) -> Option<Param> {
    let first = toks.first()?;
    let last = toks.last()?;
    let stop = toks
        .iter()
        .position(|t| matches!(t.kind, Kind::Punct(b':' | b'=' | b'[')))
        .unwrap_or(toks.len());
    let name = toks[..stop].iter().rev().find(|t| t.kind == Kind::Ident)?;
    let default = toks
        .iter()
        .position(|t| t.kind == Kind::Punct(b'='))
        .and_then(|e| Some(toks.get(e + 1)?.span.start..last.span.end));
    Some(Param {
        span: first.span.start..last.span.end,
        name: name.span.clone(),
        uniform: toks[..stop]
            .iter()
            .any(|t| t.kind == Kind::Ident && &text[t.span.clone()] == b"uniform"),
        default,
    })
}

/// The text a `.hlsl` view shows of `function`: its item, and the rest of the line after
/// it when that is blank (so an editor's final newline is the function's own).
pub fn view(text: &[u8], function: &Function) -> Range<usize> {
    let mut end = function.span.end;
    while matches!(text.get(end), Some(b' ' | b'\t' | b'\r')) {
        end += 1;
    }
    match text.get(end) {
        Some(b'\n') => function.span.start..end + 1,
        _ => function.span.clone(),
    }
}

/// The text the compiler reads: an empty line, then the effect's, every byte read as one
/// character (so columns count bytes, as the `.sha`'s do), with what is not HLSL blanked
/// out — asm shader variables, techniques and shader variables, but for the
/// preprocessor's lines in them, which count for the rest of the text — and the entry
/// point appended.
fn source(text: &[u8], effect: &Effect, shader: &HlslShader, f: &Function) -> String {
    let mut blank: Vec<Range<usize>> = effect.shaders.iter().map(|s| s.span.clone()).collect();
    blank.extend(effect.techniques.iter().map(|t| t.span.clone()));
    blank.extend(effect.others.iter().filter_map(|o| {
        let first = tokens(text, &o.span).into_iter().next()?;
        (is_ident(text, &first, "vertexshader") || is_ident(text, &first, "pixelshader"))
            .then(|| o.span.clone())
    }));
    blank.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(text.len() + 256);
    out.push('\n');
    let mut blanks = blank.iter().peekable();
    let mut i = 0;
    while i < text.len() {
        while blanks.peek().is_some_and(|r| r.end <= i) {
            blanks.next();
        }
        let line_end = text[i..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(text.len(), |p| i + p + 1);
        let line = &text[i..line_end];
        let directive = line
            .iter()
            .find(|b| !matches!(b, b' ' | b'\t'))
            .is_some_and(|&b| b == b'#');
        for (at, &b) in (i..).zip(line) {
            let blanked = !directive && blanks.peek().is_some_and(|r| r.contains(&at));
            out.push(match (blanked, b) {
                (true, b'\n' | b'\r') | (false, _) => char::from(b),
                (true, _) => ' ',
            });
        }
        i = line_end;
    }
    out.push('\n');
    out.push_str(&entry(text, shader, f));
    out
}

/// The entry point: `RET ENTRY(varying parameters) : SEMANTIC { return f(…); }`, the
/// uniform parameters given the statement's arguments (or their defaults).
fn entry(text: &[u8], shader: &HlslShader, f: &Function) -> String {
    let latin1 = |r: &Range<usize>| {
        text[r.clone()]
            .iter()
            .map(|&b| char::from(b))
            .collect::<String>()
    };
    // A parameter named as something an argument reads would hide it: renamed.
    let read: Vec<&[u8]> = shader
        .args
        .iter()
        .flat_map(|a| tokens(text, a))
        .filter(|t| t.kind == Kind::Ident)
        .map(|t| &text[t.span.clone()])
        .collect();
    let mut params = Vec::new();
    let mut call = Vec::new();
    let mut args = shader.args.iter();
    for (n, p) in f.params.iter().enumerate() {
        if p.uniform {
            match (args.next(), &p.default) {
                (Some(a), _) | (None, Some(a)) => call.push(format!("({})", latin1(a))),
                (None, None) => {}
            }
            continue;
        }
        let name = match read.contains(&&text[p.name.clone()]) {
            true => format!("{ENTRY}_{n}"),
            false => latin1(&p.name),
        };
        params.push(format!(
            "{}{name}{}",
            latin1(&(p.span.start..p.name.start)),
            latin1(&(p.name.end..p.span.end))
        ));
        call.push(name);
    }
    let returns = latin1(&f.returns);
    let call = format!("{}({})", latin1(&f.name), call.join(", "));
    let body = match returns.as_str() {
        "void" => format!("{call};"),
        _ => format!("return {call};"),
    };
    format!(
        "{returns} {ENTRY}({}){}{{ {body} }}\n",
        params.join(", "),
        latin1(&f.semantic)
    )
}

/// `#include` in an effect, or in a source written into one: the game compiles the effect
/// from memory, without an include handler (and the daemon reads no file of the host's on
/// a save's behalf).
pub(super) struct NoIncludes;

impl pp::Loader for NoIncludes {
    fn load(&self, _path: &Path) -> std::io::Result<String> {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "#include cannot work: the game compiles the effect from memory, without an \
             include handler",
        ))
    }
}

/// Whether the compiler compiles `profile` (for a shader of `stage`): a one-line shader
/// compiled for it, once per profile. `Err`: the compiler's reason.
fn compiles(profile: &str, stage: Stage) -> Result<(), String> {
    static KNOWN: OnceLock<Mutex<HashMap<String, Result<(), String>>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Default::default);
    if let Some(answer) = known.lock().ok().and_then(|k| k.get(profile).cloned()) {
        return answer;
    }
    let source = match stage {
        Stage::Vertex => "float4 main() : POSITION { return 0; }\n",
        Stage::Pixel => "float4 main() : COLOR { return 0; }\n",
    };
    let options = Options {
        profile: profile.to_string(),
        ..Options::default()
    };
    let answer = match catch_unwind(|| compile_with("probe", source, None, &options, &NoIncludes)) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(failed)) => Err(errors_of(&failed).join("; ")),
        Err(_) => Err(format!("the compiler stopped on a shader for {profile}")),
    };
    if let Ok(mut k) = known.lock() {
        k.insert(profile.to_string(), answer.clone());
    }
    answer
}

fn errors_of(failed: &Failed) -> Vec<String> {
    failed
        .diagnostics
        .list
        .iter()
        .filter(|d| d.severity == diag::Severity::Error)
        .map(|d| d.message.clone())
        .collect()
}

/// Compiles `shader` of `text` as D3DX would; an error in the function is placed in the
/// `.hlsl` view of shader `view`.
fn compile(
    text: &[u8],
    effect: &Effect,
    shader: &HlslShader,
    f: Option<&Function>,
    view: usize,
) -> Outcome {
    let what = describe(text, shader);
    let profile = lossy(text, &shader.profile);
    let name = lossy(text, &shader.function);
    if let Some(m) = &shader.macro_name {
        return Outcome::NotCompiled(format!(
            "'{}' is a macro, and shaderfs does not follow macros in a compile statement",
            lossy(text, m)
        ));
    }
    let refused = |message: String| {
        Outcome::Refused(vec![Finding::at(
            shader.function.start,
            format!("{what}: {message}"),
        )])
    };
    let Some(f) = f else {
        return refused(format!("'{name}' is not a function of the effect"));
    };
    let uniform = f.params.iter().filter(|p| p.uniform).count();
    let defaults = f
        .params
        .iter()
        .filter(|p| p.uniform)
        .rev()
        .take_while(|p| p.default.is_some())
        .count();
    if !(uniform - defaults..=uniform).contains(&shader.args.len()) {
        let n = shader.args.len();
        return refused(format!(
            "'{name}': function does not take {n} parameter{}: the arguments of a compile are \
             its function's uniform parameters, and {name} has {uniform}{}",
            if n == 1 { "" } else { "s" },
            match defaults {
                0 => String::new(),
                d => format!(" ({d} with a default)"),
            }
        ));
    }
    // What is wrong without compiling is said above, whatever the profile; the rest
    // needs the compiler, and a profile it does not compile yet is not checked.
    if let Err(why) = compiles(&profile, shader.stage) {
        return Outcome::NotCompiled(format!("shaderfs cannot compile {profile} yet ({why})"));
    }
    let source = source(text, effect, shader, f);
    let options = Options {
        profile,
        entry: ENTRY.into(),
        ..Options::default()
    };
    let compiled = catch_unwind(AssertUnwindSafe(|| {
        compile_with("effect", &source, None, &options, &NoIncludes)
    }));
    match compiled {
        Err(_) => {
            refused("internal error: the compiler stopped on this shader (please report it)".into())
        }
        Ok(Ok(c)) => Outcome::Compiled {
            listing: disasm::disassemble(&c.bytecode).unwrap_or_else(|_| c.asm.clone()),
            bytecode: c.bytecode,
        },
        Ok(Err(failed)) => Outcome::Refused(placed(text, shader, f, view, &failed)),
    }
}

/// The compiler's errors at their places in the `.sha`: in the text, where they are (said
/// of the function); in the appended entry point or about the whole shader, on the
/// `compile` statement (said of the shader, profile and all). One inside the function
/// also says where in the `.hlsl` view of shader `in_view`.
fn placed(
    text: &[u8],
    shader: &HlslShader,
    f: &Function,
    in_view: usize,
    failed: &Failed,
) -> Vec<Finding> {
    let lines = Lines::new(text);
    // The compiler's line of the text's first; the entry point starts on the line after
    // its last.
    const FIRST: usize = 2;
    let entry_line = text.iter().filter(|&&b| b == b'\n').count() + 1 + FIRST;
    let name = lossy(text, &f.name);
    let shown = view(text, f);
    let view_lines = Lines::new(&text[shown.clone()]);
    let mut out: Vec<Finding> = Vec::new();
    for d in &failed.diagnostics.list {
        if d.severity != diag::Severity::Error {
            continue;
        }
        let (line, col) = (d.loc.line as usize, d.loc.col as usize);
        let offset = match (d.loc.file.0, line) {
            (0, FIRST..) if line < entry_line => lines.start(line + 1 - FIRST).map(|s| {
                let end = text[s..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(text.len(), |p| s + p);
                (s + col.saturating_sub(1)).min(end)
            }),
            _ => None,
        };
        let mut message = d.message.replace(ENTRY, &name);
        if message.starts_with(DOES_NOT_FIT) {
            message = format!("{message} ({VALIDATOR})");
        }
        let what = match offset {
            Some(_) => describe_source(text, shader),
            None => describe(text, shader),
        };
        let mut finding = Finding {
            severity: Severity::Error,
            offset: offset.unwrap_or(shader.function.start),
            message: format!("{what}: {message}"),
            block: None,
            source: None,
        };
        if shown.contains(&finding.offset) {
            let (line, column) = view_lines.position(finding.offset - shown.start);
            finding.source = Some((in_view, line, column));
        }
        if !out.contains(&finding) {
            out.push(finding);
        }
    }
    if out.is_empty() {
        out.push(Finding::at(
            shader.function.start,
            format!(
                "{}: the compiler refused it without a word",
                describe(text, shader)
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::sha::effect;

    const EFFECT: &str = "texture Tex0;\n\
        sampler2D s = sampler_state { Texture = <Tex0>; };\n\
        float gScale = 0.25;\n\
        float4 f(float2 uv : TEXCOORD0, uniform float k, uniform float4 tint = 1) : COLOR\n\
        {\n\
        \treturn tex2D(s, uv) * k + tint;\n\
        }\n\
        pixelshader named = compile ps_2_0 f(gScale);\n\
        technique T0\n\
        {\n\
        \tpass P0 { PixelShader = compile ps_2_0 f(0.5, float4(1, 2, 3, 4)); }\n\
        \tpass P1 { PixelShader = compile ps_2_0 f( 0.5 , float4(1,2,3,4) ); }\n\
        }\n";

    #[test]
    fn statements_functions_and_the_entry_point() {
        let text = EFFECT.as_bytes();
        let e = effect::parse(text).unwrap();
        let shaders = find(text, &e);
        // The two statements of the passes say the same: one shader.
        assert_eq!(shaders.len(), 2);
        assert_eq!(lossy(text, shaders[0].variable.as_ref().unwrap()), "named");
        let args: Vec<String> = shaders[1].args.iter().map(|a| lossy(text, a)).collect();
        assert_eq!(args, ["0.5", "float4(1, 2, 3, 4)"]);
        let f = function(text, &e, b"f", 2).unwrap();
        assert_eq!(lossy(text, &f.returns), "float4");
        assert_eq!(lossy(text, &f.semantic).trim(), ": COLOR");
        let uniform: Vec<bool> = f.params.iter().map(|p| p.uniform).collect();
        assert_eq!(uniform, [false, true, true]);
        assert_eq!(
            entry(text, &shaders[0], &f),
            format!(
                "float4 {ENTRY}(float2 uv : TEXCOORD0) : COLOR\n{{ return f(uv, (gScale), (1)); }}\n"
            )
        );
        let view = view(text, &f);
        assert!(lossy(text, &view).starts_with("float4 f("));
        assert!(lossy(text, &view).ends_with("}\n"));
        // Blanked: the shader variable and the technique; lines stay where they were.
        let src = source(text, &e, &shaders[1], &f);
        let effect_part = &src[1..text.len() + 1];
        assert!(
            src.starts_with('\n'),
            "the compiler's first line is left empty"
        );
        assert_eq!(effect_part.lines().count(), EFFECT.lines().count());
        assert!(!effect_part.contains("technique"));
        assert!(!effect_part.contains("named"));
        assert!(effect_part.contains("sampler_state"));
    }
}
