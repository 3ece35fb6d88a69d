//! What D3DX9's effect compiler refuses in the text of an effect, beyond its asm blocks:
//! the effect language's syntax (HLSL declarations and functions, `technique`, `pass`,
//! `sampler_state`), names used before they are declared, and every state assignment
//! checked against the states D3DX knows ([`super::states`]): the name, the index, and
//! the value.
//!
//! The rules are D3DX's as `d3dx9_31.dll` applies them (`fx-verdicts/`): a syntax error
//! is reported at the token D3DX stops at, and the parse stops there as D3DX's does. A
//! pass's state that is assigned again later in the pass is not looked up by D3DX, so a
//! name it would not take there is not reported (its type still is), as D3DX does.
//!
//! What the checker does not follow (`#` and `##` in a macro, a function-like macro
//! that a macro's expansion calls, an `#if` it cannot evaluate) ends the check quietly:
//! nothing is reported that it cannot stand behind. It never recurses deeper
//! than [`MAX_DEPTH`], and works in time linear in the text.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::ops::Range;

use super::check::Finding;
use super::effect::{self, Kind, Lexer, Stage};
use super::states::{self, Class, State};

/// Deepest nesting of expressions and statements followed.
pub const MAX_DEPTH: usize = 64;

/// Checks an asm block (the bytes between `asm {` and `}`): the stage its version line
/// names, and what is wrong with it.
pub type AsmCheck<'a> = &'a dyn Fn(Range<usize>) -> (Option<Stage>, Option<Finding>);

/// Every problem D3DX's effect compiler has with `text`'s effect language, in the order
/// found (the asm blocks of shader variables are checked by the caller; inline
/// `asm { }` values in passes through `asm`).
pub fn check(text: &[u8], asm: AsmCheck<'_>) -> Vec<Finding> {
    let mut p = Parser {
        c: Cursor::new(text),
        t: text,
        out: Vec::new(),
        globals: HashMap::new(),
        types: HashSet::new(),
        scopes: Vec::new(),
        depth: 0,
        asm,
    };
    match p.file() {
        Ok(()) | Err(Stop::Unsupported) => {}
        Err(Stop::Syntax(f)) => p.out.push(f),
    }
    p.out
}

#[derive(Debug, Clone)]
struct Tok {
    kind: Kind,
    /// Where its text is (in a `#define` for a macro's expansion).
    span: Range<usize>,
    /// Where it is reported (the use of the macro).
    at: usize,
}

enum Stop {
    /// D3DX stops here.
    Syntax(Finding),
    /// Something the checker does not follow: stop without a word.
    Unsupported,
}

/// The tokens of the effect after the preprocessor: `#define`s (object-like, and
/// function-like with their arguments) expanded,
/// `#if`/`#elif`/`#ifdef`/`#ifndef`/`#else`/`#endif` followed.
struct Cursor<'a> {
    t: &'a [u8],
    lx: Lexer<'a>,
    buf: VecDeque<Result<Tok, (usize, String)>>,
    pending: VecDeque<Tok>,
    defines: HashMap<&'a [u8], Range<usize>>,
    /// The parameters of each function-like macro among `defines`.
    params: HashMap<&'a [u8], Vec<&'a [u8]>>,
    /// For each open `#if…`: whether its branch is active, and whether one was taken.
    conds: Vec<(bool, bool)>,
    unsupported: bool,
    ended: bool,
}

impl<'a> Cursor<'a> {
    fn new(t: &'a [u8]) -> Cursor<'a> {
        Cursor {
            t,
            lx: Lexer::new(t, 0),
            buf: VecDeque::new(),
            pending: VecDeque::new(),
            defines: HashMap::new(),
            params: HashMap::new(),
            conds: Vec::new(),
            unsupported: false,
            ended: false,
        }
    }

    fn active(&self) -> bool {
        self.conds.iter().all(|c| c.0)
    }

    /// The next token after the preprocessor, an error of the lexer, or `None` at the end.
    fn raw(&mut self) -> Option<Result<Tok, (usize, String)>> {
        loop {
            if let Some(t) = self.pending.pop_front() {
                return Some(Ok(t));
            }
            if self.ended || self.unsupported {
                return None;
            }
            let token = match self.lx.next() {
                Err(e) => {
                    self.ended = true;
                    return Some(Err((e.offset, e.message)));
                }
                Ok(None) => {
                    self.ended = true;
                    return None;
                }
                Ok(Some(t)) => t,
            };
            if token.kind == Kind::Directive {
                self.directive(token.span);
                continue;
            }
            if !self.active() {
                continue;
            }
            if token.kind == Kind::Ident && self.defines.contains_key(&self.t[token.span.clone()]) {
                let at = token.span.start;
                if self.params.contains_key(&self.t[token.span.clone()]) {
                    if self.call(&token.span) {
                        continue;
                    }
                    // Not a call: the name stands for itself.
                    return Some(Ok(Tok {
                        kind: token.kind,
                        at,
                        span: token.span,
                    }));
                }
                self.expand(&token.span, at, 0);
                continue;
            }
            return Some(Ok(Tok {
                kind: token.kind,
                at: token.span.start,
                span: token.span,
            }));
        }
    }

    /// A use of function-like macro `name`: its arguments read from the text and its body
    /// queued with them in place of its parameters (object-like macros in the result
    /// expanded); `false` when no `(` follows (the name is then no call, and the text
    /// after it is read again). What this does not follow (`#`, `##`, a function-like macro
    /// in the result, a line inside the arguments, the text ending first) ends the check.
    fn call(&mut self, name: &Range<usize>) -> bool {
        let at = name.start;
        let t = self.t;
        let before = self.lx.pos;
        match self.lx.next() {
            Ok(Some(open)) if open.kind == Kind::Punct(b'(') => {}
            _ => {
                self.lx.pos = before;
                return false;
            }
        }
        let mut args: Vec<Vec<Range<usize>>> = vec![Vec::new()];
        let mut depth = 0usize;
        loop {
            let token = match self.lx.next() {
                Ok(Some(token)) if token.kind != Kind::Directive => token,
                _ => {
                    self.unsupported = true;
                    return true;
                }
            };
            match token.kind {
                Kind::Punct(b')') if depth == 0 => break,
                Kind::Punct(b',') if depth == 0 => {
                    args.push(Vec::new());
                    continue;
                }
                Kind::Punct(b'(') => depth += 1,
                Kind::Punct(b')') => depth -= 1,
                _ => {}
            }
            if let Some(last) = args.last_mut() {
                last.push(token.span);
            }
        }
        let params = self
            .params
            .get(&t[name.clone()])
            .cloned()
            .unwrap_or_default();
        if args.len() == 1 && args[0].is_empty() && params.is_empty() {
            args.clear();
        }
        let Some(body) = self.defines.get(&t[name.clone()]).cloned() else {
            return true;
        };
        if args.len() != params.len() || t[body.clone()].contains(&b'#') {
            self.unsupported = true;
            return true;
        }
        let mut lx = Lexer::new(&t[..body.end], body.start);
        let mut out = Vec::new();
        loop {
            match lx.next() {
                Ok(Some(token)) if token.kind == Kind::Ident => {
                    let word = &t[token.span.clone()];
                    match params.iter().position(|p| *p == word) {
                        Some(i) => out.extend(args[i].iter().cloned()),
                        None => out.push(token.span),
                    }
                }
                Ok(Some(token)) => out.push(token.span),
                Ok(None) => break,
                Err(_) => {
                    self.unsupported = true;
                    return true;
                }
            }
        }
        for span in out {
            let word = &t[span.clone()];
            if self.params.contains_key(word) {
                self.unsupported = true;
                return true;
            }
            if self.defines.contains_key(word) {
                self.expand(&span, at, 1);
            } else {
                let kind = super::effect::Lexer::new(&t[..span.end], span.start)
                    .next()
                    .ok()
                    .flatten()
                    .map_or(Kind::Ident, |k| k.kind);
                self.pending.push_back(Tok { kind, span, at });
            }
        }
        true
    }

    /// Queues the tokens of macro `name`, reported at `at`.
    fn expand(&mut self, name: &Range<usize>, at: usize, depth: usize) {
        let Some(body) = self.defines.get(&self.t[name.clone()]).cloned() else {
            return;
        };
        if depth > 16 {
            self.unsupported = true;
            return;
        }
        let mut lx = Lexer::new(&self.t[..body.end], body.start);
        loop {
            match lx.next() {
                Ok(Some(t))
                    if t.kind == Kind::Ident
                        && self.defines.contains_key(&self.t[t.span.clone()]) =>
                {
                    if self.t[t.span.clone()] == self.t[name.clone()] {
                        self.unsupported = true;
                        return;
                    }
                    self.expand(&t.span, at, depth + 1);
                }
                Ok(Some(t)) => self.pending.push_back(Tok {
                    kind: t.kind,
                    span: t.span,
                    at,
                }),
                Ok(None) => return,
                Err(_) => {
                    self.unsupported = true;
                    return;
                }
            }
        }
    }

    fn directive(&mut self, span: Range<usize>) {
        let t = self.t;
        let line = &t[span.clone()];
        if line.ends_with(b"\\") {
            self.unsupported = true;
            return;
        }
        let skip = |mut i: usize| {
            while i < span.end && matches!(t[i], b' ' | b'\t') {
                i += 1;
            }
            i
        };
        let word_start = skip(span.start + 1);
        let mut word_end = word_start;
        while word_end < span.end && (t[word_end].is_ascii_alphanumeric() || t[word_end] == b'_') {
            word_end += 1;
        }
        let word = &t[word_start..word_end];
        let name_start = skip(word_end);
        let mut name_end = name_start;
        while name_end < span.end && (t[name_end].is_ascii_alphanumeric() || t[name_end] == b'_') {
            name_end += 1;
        }
        let name = &t[name_start..name_end];
        let active = self.active();
        match word {
            b"define" if active => {
                if name.is_empty() {
                    self.unsupported = true;
                } else if t.get(name_end) == Some(&b'(') {
                    let Some(close) = t[name_end..span.end].iter().position(|&b| b == b')') else {
                        self.unsupported = true;
                        return;
                    };
                    let list = &t[name_end + 1..name_end + close];
                    let params: Vec<&[u8]> = list
                        .split(|&b| b == b',')
                        .map(|p| p.trim_ascii())
                        .filter(|p| !p.is_empty())
                        .collect();
                    let names =
                        |p: &&[u8]| p.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_');
                    if !params.iter().all(names) {
                        self.unsupported = true;
                        return;
                    }
                    self.defines.insert(name, name_end + close + 1..span.end);
                    self.params.insert(name, params);
                } else {
                    self.params.remove(name);
                    self.defines.insert(name, name_end..span.end);
                }
            }
            b"undef" if active => {
                self.defines.remove(name);
                self.params.remove(name);
            }
            b"ifdef" | b"ifndef" => {
                let defined = self.defines.contains_key(name);
                let on = defined == (word == b"ifdef");
                self.conds.push((on, on));
            }
            b"else" => match self.conds.last_mut() {
                Some(c) => {
                    c.0 = !c.1;
                    c.1 = true;
                }
                None => self.unsupported = true,
            },
            b"endif" if self.conds.pop().is_none() => self.unsupported = true,
            b"if" => {
                // Evaluated only where it counts: inside a branch not taken, it is not.
                let on = active && self.condition(word_end..span.end);
                self.conds.push((on, !active || on));
            }
            b"elif" => match self.conds.last().copied() {
                Some((_, true)) => self.conds.last_mut().unwrap().0 = false,
                Some((_, false)) => {
                    let on = self.condition(word_end..span.end);
                    *self.conds.last_mut().unwrap() = (on, on);
                }
                None => self.unsupported = true,
            },
            // #include is check.rs's to report; #pragma, #line, #error: not followed.
            _ => {}
        }
    }

    /// The value of an `#if` / `#elif` condition at `range` of the text (see `ppexpr`); one
    /// it cannot evaluate ends the check.
    fn condition(&mut self, range: Range<usize>) -> bool {
        let (t, defines) = (self.t, &self.defines);
        let body = |name: &[u8]| defines.get(name).map(|r| &t[r.clone()]);
        match crate::shader::d3d9::ppexpr::evaluate(&t[range], &body) {
            Some(v) => v != 0,
            None => {
                self.unsupported = true;
                false
            }
        }
    }

    fn fill(&mut self, n: usize) {
        while self.buf.len() <= n {
            match self.raw() {
                Some(item) => self.buf.push_back(item),
                None => break,
            }
        }
    }
}

/// The preprocessor's lines of an effect (D3DX preprocesses the whole text, asm blocks
/// too), found once, for the macros defined at places of it. Asked in the order of the
/// text, it reads each line once.
pub struct Macros<'t> {
    text: &'t [u8],
    /// Each `#…` line (from the `#`, to the line's end).
    lines: Cow<'t, [Range<usize>]>,
    names: HashSet<&'t [u8]>,
    /// How many lines have been read into the cursor.
    state: RefCell<(usize, Cursor<'t>)>,
}

/// Each preprocessor line of `text`: from its `#` to the line's end.
pub fn directive_lines(text: &[u8]) -> Vec<Range<usize>> {
    let mut lines = Vec::new();
    let mut start = 0;
    while let Some(p) = text[start..].iter().position(|&b| b == b'#') {
        let hash = start + p;
        let line_start = text[..hash]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let end = text[hash..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(text.len(), |p| hash + p);
        if text[line_start..hash]
            .iter()
            .all(|b| matches!(b, b' ' | b'\t'))
        {
            lines.push(hash..end);
        }
        start = end;
    }
    lines
}

impl<'t> Macros<'t> {
    pub fn new(text: &'t [u8]) -> Macros<'t> {
        Macros::with_lines(text, Cow::Owned(directive_lines(text)))
    }

    /// With the text's [`directive_lines`] found already.
    pub fn with_lines(text: &'t [u8], lines: Cow<'t, [Range<usize>]>) -> Macros<'t> {
        let names = lines
            .iter()
            .filter_map(|l| {
                let rest = text[l.start + 1..l.end].trim_ascii_start();
                let rest = rest.strip_prefix(b"define")?.trim_ascii_start();
                let end = rest
                    .iter()
                    .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                    .unwrap_or(rest.len());
                Some(&rest[..end])
            })
            .collect();
        Macros {
            text,
            lines,
            names,
            state: RefCell::new((0, Cursor::new(text))),
        }
    }

    /// Every name a `#define` line defines.
    pub fn names(&self) -> &HashSet<&'t [u8]> {
        &self.names
    }

    /// The object-like macros defined where `body` starts that `body` uses (and those
    /// their bodies use), as (name, body) in the order defined; `None` when a line
    /// before it is one the checker does not follow (`#if`).
    pub fn used_in(&self, body: &Range<usize>) -> Option<Vec<(&'t [u8], &'t [u8])>> {
        let mut state = self.state.borrow_mut();
        if self
            .lines
            .get(state.0.wrapping_sub(1))
            .is_some_and(|l| l.end > body.start)
        {
            *state = (0, Cursor::new(self.text));
        }
        let (read, cursor) = &mut *state;
        while let Some(line) = self.lines.get(*read).filter(|l| l.end <= body.start) {
            cursor.directive(line.clone());
            *read += 1;
        }
        if cursor.unsupported {
            return None;
        }
        let words = |range: Range<usize>| {
            self.text[range]
                .split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                .filter(|w| !w.is_empty())
        };
        let mut used: Vec<(&'t [u8], Range<usize>)> = Vec::new();
        let mut todo: Vec<&[u8]> = words(body.clone()).collect();
        while let Some(word) = todo.pop() {
            if used.iter().any(|(n, _)| *n == word) {
                continue;
            }
            if let Some((name, value)) = cursor.defines.get_key_value(word) {
                // The asm preprocessor takes object-like macros only.
                if cursor.params.contains_key(word) {
                    return None;
                }
                used.push((name, value.clone()));
                todo.extend(words(value.clone()));
            }
        }
        used.sort_by_key(|(_, value)| value.start);
        Some(
            used.into_iter()
                .map(|(name, value)| (name, self.text[value].trim_ascii()))
                .collect(),
        )
    }
}

/// What a declared name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sym {
    Texture,
    Sampler,
    Shader(Stage),
    Str,
    Numeric,
    Function,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Base {
    Float,
    Int,
    Bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Numeric(Base, u8, u8),
    Texture,
    Sampler,
    Str,
    Shader(Stage),
    Void,
    User,
}

/// A term of a `|` chain: a name or a number.
#[derive(Debug, Clone)]
enum Term {
    Name(Range<usize>, usize),
    Number { value: f64, integer: bool },
}

/// A state's value, as far as its checks need it.
#[derive(Debug, Clone)]
enum Value {
    Simple(Vec<Term>),
    /// `<name>`: what the name is (`None`: not declared, reported), and the name.
    Ref(Option<Sym>, String),
    /// `( … )`: a lone name's kind, or `Numeric`.
    Paren(Option<Sym>),
    Ctor(Base, u8, u8),
    Braces,
    /// `compile …` or `asm { }`: the stage (`None`: unknown, reported).
    Shader(Option<Stage>),
}

/// What an expression is, as far as a state's value needs it.
#[derive(Debug, Clone)]
enum Expr {
    Literal,
    Ident(Option<Sym>),
    Ctor(Base, u8, u8),
    Other,
}

struct Parser<'a, 'b> {
    c: Cursor<'a>,
    t: &'a [u8],
    out: Vec<Finding>,
    globals: HashMap<Vec<u8>, Sym>,
    types: HashSet<Vec<u8>>,
    scopes: Vec<HashSet<Vec<u8>>>,
    depth: usize,
    asm: AsmCheck<'b>,
}

const MODIFIERS: &[&str] = &[
    "static",
    "const",
    "uniform",
    "extern",
    "shared",
    "volatile",
    "inline",
    "row_major",
    "column_major",
];

const PARAMETER_MODIFIERS: &[&str] = &["in", "out", "inout", "uniform", "const"];

/// The targets `compile` takes in d3dx9_31, and the stage of each.
const PROFILES: &[(&str, Stage)] = &[
    ("vs_1_1", Stage::Vertex),
    ("vs_2_0", Stage::Vertex),
    ("vs_2_a", Stage::Vertex),
    ("vs_2_sw", Stage::Vertex),
    ("vs_3_0", Stage::Vertex),
    ("vs_3_sw", Stage::Vertex),
    ("ps_1_1", Stage::Pixel),
    ("ps_1_2", Stage::Pixel),
    ("ps_1_3", Stage::Pixel),
    ("ps_1_4", Stage::Pixel),
    ("ps_2_0", Stage::Pixel),
    ("ps_2_a", Stage::Pixel),
    ("ps_2_b", Stage::Pixel),
    ("ps_2_sw", Stage::Pixel),
    ("ps_3_0", Stage::Pixel),
    ("ps_3_sw", Stage::Pixel),
];

/// A numeric type name: `float`, `half4`, `int2`, `float4x4`, `bool`, `vector`, `matrix`.
fn numeric_type(word: &[u8]) -> Option<(Base, u8, u8)> {
    match word {
        b"vector" => return Some((Base::Float, 1, 4)),
        b"matrix" => return Some((Base::Float, 4, 4)),
        _ => {}
    }
    let (base, rest) = [
        ("float", Base::Float),
        ("half", Base::Float),
        ("double", Base::Float),
        ("int", Base::Int),
        ("uint", Base::Int),
        ("dword", Base::Int),
        ("bool", Base::Bool),
    ]
    .iter()
    .find_map(|(name, base)| word.strip_prefix(name.as_bytes()).map(|r| (*base, r)))?;
    let dim = |b: u8| (b'1'..=b'4').contains(&b).then_some(b - b'0');
    match rest {
        [] => Some((base, 1, 1)),
        [n] => Some((base, 1, dim(*n)?)),
        [r, b'x', c] => Some((base, dim(*r)?, dim(*c)?)),
        _ => None,
    }
}

/// The value of a number token and whether it is an integer, or `None` when D3DX would
/// not read it as a number (`08`, `0x`, `1e`).
fn number(text: &[u8]) -> Option<(f64, bool)> {
    let s = std::str::from_utf8(text).ok()?;
    let lower = s.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0x") {
        let digits = hex.trim_end_matches(['u', 'l']);
        return u64::from_str_radix(digits, 16)
            .ok()
            .map(|v| (v as f64, true));
    }
    let int = lower.trim_end_matches(['u', 'l']);
    if !int.is_empty() && int.bytes().all(|b| b.is_ascii_digit()) {
        if int.len() > 1 && int.starts_with('0') {
            return u64::from_str_radix(int, 8).ok().map(|v| (v as f64, true));
        }
        return int.parse::<u64>().ok().map(|v| (v as f64, true));
    }
    let float = lower.trim_end_matches(['f', 'h']);
    let valid = float
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'+' | b'-'))
        && float.bytes().any(|b| b.is_ascii_digit())
        && !float.ends_with('e')
        && (float.contains('.') || float.contains('e'));
    if !valid {
        return None;
    }
    float.parse::<f64>().ok().map(|v| (v, false))
}

impl<'a, 'b> Parser<'a, 'b> {
    fn peek(&mut self, n: usize) -> Result<Option<Tok>, Stop> {
        self.c.fill(n);
        if self.c.unsupported && self.c.buf.len() <= n {
            return Err(Stop::Unsupported);
        }
        match self.c.buf.get(n) {
            None => Ok(None),
            Some(Ok(t)) => Ok(Some(t.clone())),
            Some(Err((at, message))) => Err(Stop::Syntax(Finding::at(*at, message.clone()))),
        }
    }

    fn next(&mut self) -> Result<Option<Tok>, Stop> {
        let t = self.peek(0)?;
        self.c.buf.pop_front();
        Ok(t)
    }

    fn word(&self, t: &Tok) -> &'a [u8] {
        &self.t[t.span.clone()]
    }

    fn shown(&self, t: &Tok) -> String {
        String::from_utf8_lossy(self.word(t)).into_owned()
    }

    fn is_punct(t: &Option<Tok>, c: u8) -> bool {
        t.as_ref().is_some_and(|t| t.kind == Kind::Punct(c))
    }

    /// An identifier spelt `w`, in any case.
    fn is_keyword(&self, t: &Option<Tok>, w: &str) -> bool {
        t.as_ref().is_some_and(|t| {
            t.kind == Kind::Ident && self.word(t).eq_ignore_ascii_case(w.as_bytes())
        })
    }

    fn is_word(&self, t: &Option<Tok>, w: &str) -> bool {
        t.as_ref()
            .is_some_and(|t| t.kind == Kind::Ident && self.word(t) == w.as_bytes())
    }

    /// D3DX's syntax error at `t` (the end of the text for `None`).
    fn unexpected(&self, t: Option<&Tok>, expected: &str) -> Stop {
        let (at, what) = match t {
            None => (self.t.len(), "end of file".to_string()),
            Some(t) => (
                t.at,
                match t.kind {
                    Kind::Str => "string constant".to_string(),
                    _ => format!("'{}'", self.shown(t)),
                },
            ),
        };
        Stop::Syntax(Finding::at(
            at,
            format!("syntax error: unexpected {what} (expected {expected})"),
        ))
    }

    fn expect_punct(&mut self, c: u8, expected: &str) -> Result<Tok, Stop> {
        match self.next()? {
            Some(t) if t.kind == Kind::Punct(c) => Ok(t),
            other => Err(self.unexpected(other.as_ref(), expected)),
        }
    }

    fn expect_ident(&mut self, expected: &str) -> Result<Tok, Stop> {
        match self.next()? {
            Some(t) if t.kind == Kind::Ident => Ok(t),
            other => Err(self.unexpected(other.as_ref(), expected)),
        }
    }

    fn deeper(&mut self) -> Result<(), Stop> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Stop::Unsupported);
        }
        Ok(())
    }

    fn type_of(&self, t: &Option<Tok>) -> Option<Ty> {
        let t = t.as_ref().filter(|t| t.kind == Kind::Ident)?;
        let w = self.word(t);
        let ci = |s: &str| w.eq_ignore_ascii_case(s.as_bytes());
        if ci("texture") {
            return Some(Ty::Texture);
        }
        if ci("sampler") {
            return Some(Ty::Sampler);
        }
        if ci("string") {
            return Some(Ty::Str);
        }
        if ci("pixelshader") {
            return Some(Ty::Shader(Stage::Pixel));
        }
        if ci("vertexshader") {
            return Some(Ty::Shader(Stage::Vertex));
        }
        match w {
            b"texture1D" | b"texture2D" | b"texture3D" | b"textureCUBE" => Some(Ty::Texture),
            b"sampler1D" | b"sampler2D" | b"sampler3D" | b"samplerCUBE" => Some(Ty::Sampler),
            b"void" => Some(Ty::Void),
            _ => match numeric_type(w) {
                Some((b, r, c)) => Some(Ty::Numeric(b, r, c)),
                None => self.types.contains(w).then_some(Ty::User),
            },
        }
    }

    fn declare(&mut self, name: &Tok, sym: Sym) {
        let word = self.word(name).to_vec();
        match self.scopes.last_mut() {
            Some(scope) => {
                scope.insert(word);
            }
            None => {
                self.globals.entry(word).or_insert(sym);
            }
        }
    }

    /// What a name refers to: a local (`Numeric`), a global, or nothing.
    fn lookup(&self, name: &[u8]) -> Option<Sym> {
        if self.scopes.iter().any(|s| s.contains(name)) {
            return Some(Sym::Numeric);
        }
        self.globals.get(name).copied()
    }

    fn undeclared(&mut self, t: &Tok, bracketed: bool) {
        let name = self.shown(t);
        let message = match bracketed {
            true => format!("<{name}> is not declared"),
            false => format!("'{name}' is not declared"),
        };
        self.out.push(Finding::at(t.at, message));
    }

    // ---- items --------------------------------------------------------------------

    fn file(&mut self) -> Result<(), Stop> {
        while self.peek(0)?.is_some() {
            self.item()?;
        }
        Ok(())
    }

    fn item(&mut self) -> Result<(), Stop> {
        let first = self.peek(0)?;
        if Self::is_punct(&first, b';') {
            self.next()?;
            return Ok(());
        }
        if self.is_keyword(&first, "technique") {
            self.next()?;
            return self.technique();
        }
        if self.is_word(&first, "struct") {
            self.next()?;
            return self.structure();
        }
        if self.is_word(&first, "typedef") {
            return Err(Stop::Unsupported);
        }
        self.declaration()
    }

    /// `[modifiers] type name … ;` or a function.
    fn declaration(&mut self) -> Result<(), Stop> {
        let mut t = self.next()?;
        while t
            .as_ref()
            .is_some_and(|t| MODIFIERS.iter().any(|m| self.word(t) == m.as_bytes()))
        {
            t = self.next()?;
        }
        let Some(ty) = self.type_of(&t) else {
            return match t {
                // An unknown name where a type should be: D3DX stops at what follows it.
                Some(t) if t.kind == Kind::Ident => {
                    let after = self.next()?;
                    Err(self.unexpected(after.as_ref(), "a declaration"))
                }
                other => Err(self.unexpected(other.as_ref(), "a declaration")),
            };
        };
        if matches!(ty, Ty::Numeric(..)) && Self::is_punct(&self.peek(0)?, b'<') {
            // vector<float, 4>
            return Err(Stop::Unsupported);
        }
        loop {
            let name = self.expect_ident("a name")?;
            if Self::is_punct(&self.peek(0)?, b'(') {
                return self.function(&name);
            }
            // The element count of an array (`None`: not an array; `Some(None)`: not a
            // literal size).
            let mut array: Option<Option<usize>> = None;
            while Self::is_punct(&self.peek(0)?, b'[') {
                self.next()?;
                let size = self
                    .peek(0)?
                    .filter(|t| t.kind == Kind::Number)
                    .and_then(|t| number(self.word(&t)).filter(|n| n.1).map(|n| n.0 as usize));
                let size = match (array, size) {
                    (None, Some(n)) => Some(n),
                    (Some(Some(m)), Some(n)) => Some(m.saturating_mul(n)),
                    _ => None,
                };
                array = Some(size);
                if !Self::is_punct(&self.peek(0)?, b']') {
                    self.expr()?;
                }
                self.expect_punct(b']', "']'")?;
            }
            self.semantic()?;
            self.annotations()?;
            if Self::is_punct(&self.peek(0)?, b'=') {
                self.next()?;
                self.initializer(ty, array, &name)?;
            }
            let sym = match ty {
                Ty::Texture => Sym::Texture,
                Ty::Sampler => Sym::Sampler,
                Ty::Str => Sym::Str,
                Ty::Shader(stage) => Sym::Shader(stage),
                _ => Sym::Numeric,
            };
            self.declare(&name, sym);
            match self.next()? {
                Some(t) if t.kind == Kind::Punct(b',') => continue,
                Some(t) if t.kind == Kind::Punct(b';') => return Ok(()),
                other => return Err(self.unexpected(other.as_ref(), "';'")),
            }
        }
    }

    /// `: SEMANTIC` or `: register(c0)`.
    fn semantic(&mut self) -> Result<(), Stop> {
        if !Self::is_punct(&self.peek(0)?, b':') {
            return Ok(());
        }
        self.next()?;
        let name = self.expect_ident("a semantic")?;
        if matches!(self.word(&name), b"register" | b"packoffset") {
            self.expect_punct(b'(', "'('")?;
            loop {
                match self.next()? {
                    Some(t) if t.kind == Kind::Punct(b')') => break,
                    Some(_) => {}
                    None => return Err(self.unexpected(None, "')'")),
                }
            }
        }
        Ok(())
    }

    /// `< type name = value; … >` after a name. A value is an expression, in which D3DX
    /// reads a `>` as an operator.
    fn annotations(&mut self) -> Result<(), Stop> {
        if !Self::is_punct(&self.peek(0)?, b'<') {
            return Ok(());
        }
        self.next()?;
        loop {
            let t = self.next()?;
            if Self::is_punct(&t, b'>') {
                return Ok(());
            }
            if self.type_of(&t).is_none() {
                return Err(self.unexpected(t.as_ref(), "an annotation or '>'"));
            }
            self.expect_ident("the annotation's name")?;
            if Self::is_punct(&self.peek(0)?, b'=') {
                self.next()?;
                if Self::is_punct(&self.peek(0)?, b'{') {
                    self.braces()?;
                } else {
                    self.assignment()?;
                }
            }
            self.expect_punct(b';', "';'")?;
        }
    }

    /// After `=`; `array`: the element count of an array declaration, as `declaration`.
    fn initializer(
        &mut self,
        ty: Ty,
        array: Option<Option<usize>>,
        name: &Tok,
    ) -> Result<(), Stop> {
        let first = self.peek(0)?;
        match ty {
            Ty::Shader(stage) => {
                if self.is_keyword(&first, "decl") && Self::is_punct(&self.peek(1)?, b'{') {
                    self.next()?;
                    self.next()?;
                    self.skip_braces()?;
                    let next = self.peek(0)?;
                    if !self.is_keyword(&next, "asm") {
                        return Err(self.unexpected(next.as_ref(), "'asm' after the decl block"));
                    }
                }
                let first = self.peek(0)?;
                if self.is_keyword(&first, "asm") && Self::is_punct(&self.peek(1)?, b'{') {
                    // The block of a shader variable is check.rs's to assemble.
                    self.asm_block()?;
                    return Ok(());
                }
                if self.is_keyword(&first, "compile") {
                    let got = self.compile()?;
                    if got.is_some_and(|s| s != stage) {
                        self.out.push(Finding::at(
                            name.at,
                            format!(
                                "'{}' is a {} shader variable, and is given a {} shader",
                                self.shown(name),
                                stage.word(),
                                got.map_or("", |s| s.word())
                            ),
                        ));
                    }
                    return Ok(());
                }
                if Self::is_punct(&first, b'{') {
                    // An initializer list: D3DX reads `asm`-less asm text as expressions.
                    self.braces()?;
                } else {
                    self.expr()?;
                }
            }
            Ty::Sampler if self.is_word(&first, "sampler_state") => {
                self.next()?;
                self.expect_punct(b'{', "'{'")?;
                self.states(true)?;
            }
            Ty::Numeric(_, rows, cols) if Self::is_punct(&first, b'{') => {
                let (count, literal) = self.braces()?;
                let components = usize::from(rows) * usize::from(cols);
                let want = match array {
                    None => Some(components),
                    Some(Some(n)) => Some(n.saturating_mul(components)),
                    Some(None) => None,
                };
                if let Some(want) = want.filter(|&w| literal && count > 1 && count != w) {
                    self.out.push(Finding::at(
                        name.at,
                        format!(
                            "'{}' has {want} components and the list gives {count}",
                            self.shown(name)
                        ),
                    ));
                }
            }
            _ => {
                if Self::is_punct(&first, b'{') {
                    self.braces()?;
                } else {
                    self.expr()?;
                }
            }
        }
        Ok(())
    }

    /// After `decl {`: to the matching `}`.
    fn skip_braces(&mut self) -> Result<(), Stop> {
        let mut depth = 1usize;
        loop {
            match self.next()? {
                Some(t) if t.kind == Kind::Punct(b'{') => depth += 1,
                Some(t) if t.kind == Kind::Punct(b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Some(_) => {}
                None => return Err(self.unexpected(None, "'}'")),
            }
        }
    }

    /// `asm {` … `}` (the cursor on `asm`): the block's bytes. The asm text is not lexed as
    /// HLSL (`;` starts a comment in it).
    fn asm_block(&mut self) -> Result<Range<usize>, Stop> {
        self.next()?;
        let open = self.next()?.ok_or(Stop::Unsupported)?;
        if open.at != open.span.start || !self.c.pending.is_empty() {
            // From a macro: not followed.
            return Err(Stop::Unsupported);
        }
        let body = effect::scan_asm(self.t, open.span.end)
            .map_err(|e| Stop::Syntax(Finding::at(e.offset, e.message)))?;
        self.c.buf.clear();
        self.c.lx.pos = body.end + 1;
        // The preprocessor's lines in the block count for the rest of the text.
        let mut start = body.start;
        while start < body.end {
            let end = self.t[start..body.end]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(body.end, |p| start + p);
            let lead = self.t[start..end]
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t'))
                .count();
            if self.t.get(start + lead) == Some(&b'#') {
                self.c.directive(start + lead..end);
            }
            start = end + 1;
        }
        Ok(body)
    }

    /// `{ a, b, … }` (on the `{`): how many elements, and whether all are literals.
    fn braces(&mut self) -> Result<(usize, bool), Stop> {
        self.expect_punct(b'{', "'{'")?;
        let (mut count, mut literal) = (0, true);
        if Self::is_punct(&self.peek(0)?, b'}') {
            self.next()?;
            return Ok((0, true));
        }
        loop {
            if Self::is_punct(&self.peek(0)?, b'{') {
                self.deeper()?;
                self.braces()?;
                self.depth -= 1;
                literal = false;
            } else {
                literal &= matches!(self.assignment()?, Expr::Literal);
            }
            count += 1;
            match self.next()? {
                Some(t) if t.kind == Kind::Punct(b',') => {
                    if Self::is_punct(&self.peek(0)?, b'}') {
                        self.next()?;
                        return Ok((count, literal));
                    }
                }
                Some(t) if t.kind == Kind::Punct(b'}') => return Ok((count, literal)),
                other => return Err(self.unexpected(other.as_ref(), "',' or '}'")),
            }
        }
    }

    /// `compile PROFILE function(args)` (on `compile`): the profile's stage.
    fn compile(&mut self) -> Result<Option<Stage>, Stop> {
        self.next()?;
        let profile = self.expect_ident("a compile target (vs_1_1, ps_2_0, …)")?;
        let stage = PROFILES
            .iter()
            .find(|(p, _)| p.as_bytes() == self.word(&profile))
            .map(|(_, s)| *s);
        if stage.is_none() {
            self.out.push(Finding::at(
                profile.at,
                format!(
                    "'{}' is not a compile target D3DX knows ({})",
                    self.shown(&profile),
                    PROFILES
                        .iter()
                        .map(|(p, _)| *p)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let function = self.expect_ident("the function to compile")?;
        if self.lookup(self.word(&function)) != Some(Sym::Function) {
            self.out.push(Finding::at(
                function.at,
                format!("'{}' is not a declared function", self.shown(&function)),
            ));
        }
        self.expect_punct(b'(', "'('")?;
        self.arguments()?;
        Ok(stage)
    }

    /// After `(`: arguments up to `)`, and how many.
    fn arguments(&mut self) -> Result<(usize, bool), Stop> {
        let (mut count, mut literal) = (0, true);
        if Self::is_punct(&self.peek(0)?, b')') {
            self.next()?;
            return Ok((0, true));
        }
        loop {
            literal &= matches!(self.assignment()?, Expr::Literal);
            count += 1;
            match self.next()? {
                Some(t) if t.kind == Kind::Punct(b',') => {}
                Some(t) if t.kind == Kind::Punct(b')') => return Ok((count, literal)),
                other => return Err(self.unexpected(other.as_ref(), "',' or ')'")),
            }
        }
    }

    fn structure(&mut self) -> Result<(), Stop> {
        let name = self.expect_ident("the struct's name")?;
        self.types.insert(self.word(&name).to_vec());
        self.expect_punct(b'{', "'{'")?;
        loop {
            let t = self.peek(0)?;
            if Self::is_punct(&t, b'}') {
                self.next()?;
                break;
            }
            let mut t = self.next()?;
            while t
                .as_ref()
                .is_some_and(|t| MODIFIERS.iter().any(|m| self.word(t) == m.as_bytes()))
            {
                t = self.next()?;
            }
            if self.type_of(&t).is_none() {
                return Err(self.unexpected(t.as_ref(), "a member"));
            }
            loop {
                self.expect_ident("a member's name")?;
                self.array_sizes()?;
                self.semantic()?;
                match self.next()? {
                    Some(t) if t.kind == Kind::Punct(b',') => {}
                    Some(t) if t.kind == Kind::Punct(b';') => break,
                    other => return Err(self.unexpected(other.as_ref(), "';'")),
                }
            }
        }
        // Variables of the struct may follow; then ';'.
        loop {
            match self.next()? {
                Some(t) if t.kind == Kind::Punct(b';') => return Ok(()),
                Some(t) if t.kind == Kind::Ident => {
                    self.declare(&t, Sym::Numeric);
                    if Self::is_punct(&self.peek(0)?, b',') {
                        self.next()?;
                    }
                }
                other => return Err(self.unexpected(other.as_ref(), "';'")),
            }
        }
    }

    /// After `type name`, on `(`.
    fn function(&mut self, name: &Tok) -> Result<(), Stop> {
        self.next()?;
        self.declare(name, Sym::Function);
        let mut params = HashSet::new();
        if Self::is_punct(&self.peek(0)?, b')') {
            self.next()?;
        } else {
            loop {
                let mut t = self.next()?;
                while t.as_ref().is_some_and(|t| {
                    PARAMETER_MODIFIERS
                        .iter()
                        .any(|m| self.word(t) == m.as_bytes())
                }) {
                    t = self.next()?;
                }
                if self.type_of(&t).is_none() {
                    return Err(self.unexpected(t.as_ref(), "a parameter's type"));
                }
                let param = self.expect_ident("a parameter's name")?;
                params.insert(self.word(&param).to_vec());
                self.array_sizes()?;
                self.semantic()?;
                if Self::is_punct(&self.peek(0)?, b'=') {
                    self.next()?;
                    self.assignment()?;
                }
                match self.next()? {
                    Some(t) if t.kind == Kind::Punct(b',') => {}
                    Some(t) if t.kind == Kind::Punct(b')') => break,
                    other => return Err(self.unexpected(other.as_ref(), "',' or ')'")),
                }
            }
        }
        self.semantic()?;
        let t = self.next()?;
        if Self::is_punct(&t, b';') {
            return Ok(());
        }
        if !Self::is_punct(&t, b'{') {
            return Err(self.unexpected(t.as_ref(), "'{'"));
        }
        self.scopes.push(params);
        let body = self.block_rest();
        self.scopes.clear();
        body
    }

    // ---- statements -----------------------------------------------------------------

    /// After `{`: statements up to `}`.
    fn block_rest(&mut self) -> Result<(), Stop> {
        self.deeper()?;
        self.scopes.push(HashSet::new());
        loop {
            let t = self.peek(0)?;
            match t {
                None => return Err(self.unexpected(None, "'}'")),
                Some(ref t) if t.kind == Kind::Punct(b'}') => {
                    self.next()?;
                    break;
                }
                Some(_) => self.statement()?,
            }
        }
        self.scopes.pop();
        self.depth -= 1;
        Ok(())
    }

    fn statement(&mut self) -> Result<(), Stop> {
        self.deeper()?;
        let t = self.peek(0)?;
        let result = self.statement_at(t);
        self.depth -= 1;
        result
    }

    fn statement_at(&mut self, t: Option<Tok>) -> Result<(), Stop> {
        if Self::is_punct(&t, b';') {
            self.next()?;
            return Ok(());
        }
        if Self::is_punct(&t, b'{') {
            self.next()?;
            return self.block_rest();
        }
        if Self::is_punct(&t, b'[') {
            // An attribute: [unroll], [loop], [branch], [flatten], [unroll(4)].
            self.next()?;
            self.expect_ident("an attribute")?;
            if Self::is_punct(&self.peek(0)?, b'(') {
                self.next()?;
                self.arguments()?;
            }
            self.expect_punct(b']', "']'")?;
            return self.statement();
        }
        for word in ["break", "continue", "discard"] {
            if self.is_word(&t, word) {
                self.next()?;
                self.expect_punct(b';', "';'")?;
                return Ok(());
            }
        }
        if self.is_word(&t, "return") {
            self.next()?;
            if !Self::is_punct(&self.peek(0)?, b';') {
                self.expr()?;
            }
            self.expect_punct(b';', "';'")?;
            return Ok(());
        }
        if self.is_word(&t, "if") || self.is_word(&t, "while") {
            let is_if = self.is_word(&t, "if");
            self.next()?;
            self.expect_punct(b'(', "'('")?;
            self.expr()?;
            self.expect_punct(b')', "')'")?;
            self.statement()?;
            let after = self.peek(0)?;
            if is_if && self.is_word(&after, "else") {
                self.next()?;
                self.statement()?;
            }
            return Ok(());
        }
        if self.is_word(&t, "do") {
            self.next()?;
            self.statement()?;
            let w = self.expect_ident("'while'")?;
            if self.word(&w) != b"while" {
                return Err(self.unexpected(Some(&w), "'while'"));
            }
            self.expect_punct(b'(', "'('")?;
            self.expr()?;
            self.expect_punct(b')', "')'")?;
            self.expect_punct(b';', "';'")?;
            return Ok(());
        }
        if self.is_word(&t, "for") {
            self.next()?;
            self.expect_punct(b'(', "'('")?;
            self.scopes.push(HashSet::new());
            if !Self::is_punct(&self.peek(0)?, b';') {
                if self.starts_local()? {
                    self.local()?;
                } else {
                    self.expr()?;
                    self.expect_punct(b';', "';'")?;
                }
            } else {
                self.next()?;
            }
            if !Self::is_punct(&self.peek(0)?, b';') {
                self.expr()?;
            }
            self.expect_punct(b';', "';'")?;
            if !Self::is_punct(&self.peek(0)?, b')') {
                self.expr()?;
            }
            self.expect_punct(b')', "')'")?;
            let body = self.statement();
            self.scopes.pop();
            return body;
        }
        if self.starts_local()? {
            return self.local();
        }
        self.expr()?;
        self.expect_punct(b';', "';'")?;
        Ok(())
    }

    /// Whether a local declaration starts here: `[const|static] type name`.
    fn starts_local(&mut self) -> Result<bool, Stop> {
        let mut n = 0;
        while self
            .peek(n)?
            .is_some_and(|t| matches!(self.word(&t), b"const" | b"static" | b"uniform"))
        {
            n += 1;
        }
        let t = self.peek(n)?;
        Ok(self.type_of(&t).is_some() && self.peek(n + 1)?.is_some_and(|t| t.kind == Kind::Ident))
    }

    fn local(&mut self) -> Result<(), Stop> {
        let mut t = self.next()?;
        while t
            .as_ref()
            .is_some_and(|t| matches!(self.word(t), b"const" | b"static" | b"uniform"))
        {
            t = self.next()?;
        }
        let ty = self.type_of(&t);
        loop {
            let name = self.expect_ident("a name")?;
            self.array_sizes()?;
            self.semantic()?;
            if Self::is_punct(&self.peek(0)?, b'=') {
                self.next()?;
                if Self::is_punct(&self.peek(0)?, b'{') {
                    self.braces()?;
                } else {
                    self.assignment()?;
                }
            }
            let _ = ty;
            self.declare(&name, Sym::Numeric);
            match self.next()? {
                Some(t) if t.kind == Kind::Punct(b',') => {}
                Some(t) if t.kind == Kind::Punct(b';') => return Ok(()),
                other => return Err(self.unexpected(other.as_ref(), "';'")),
            }
        }
    }

    // ---- expressions ----------------------------------------------------------------

    /// The operator at the cursor, made of adjacent punctuation: its text and length in
    /// tokens.
    fn operator(&mut self) -> Result<Option<(Vec<u8>, usize)>, Stop> {
        let mut chars = Vec::new();
        let mut end = None;
        for n in 0..3 {
            let Some(t) = self.peek(n)? else { break };
            let Kind::Punct(c) = t.kind else { break };
            if let Some(e) = end {
                if t.span.start != e || t.at != t.span.start {
                    break;
                }
            }
            chars.push(c);
            end = Some(t.span.end);
        }
        const OPS: &[&str] = &[
            "<<=", ">>=", "||", "&&", "==", "!=", "<=", ">=", "<<", ">>", "+=", "-=", "*=", "/=",
            "%=", "&=", "|=", "^=", "++", "--", "|", "^", "&", "<", ">", "+", "-", "*", "/", "%",
            "=", "?", ":", "!", "~",
        ];
        Ok(OPS
            .iter()
            .find(|op| chars.starts_with(op.as_bytes()))
            .map(|op| (op.as_bytes().to_vec(), op.len())))
    }

    fn take(&mut self, n: usize) -> Result<(), Stop> {
        for _ in 0..n {
            self.next()?;
        }
        Ok(())
    }

    /// `a, b` (the comma operator).
    fn expr(&mut self) -> Result<Expr, Stop> {
        let mut e = self.assignment()?;
        while Self::is_punct(&self.peek(0)?, b',') {
            self.next()?;
            self.assignment()?;
            e = Expr::Other;
        }
        Ok(e)
    }

    fn assignment(&mut self) -> Result<Expr, Stop> {
        self.deeper()?;
        let left = self.ternary()?;
        let op = self.operator()?;
        let result = match op {
            Some((op, n))
                if matches!(
                    &op[..],
                    b"=" | b"+="
                        | b"-="
                        | b"*="
                        | b"/="
                        | b"%="
                        | b"&="
                        | b"|="
                        | b"^="
                        | b"<<="
                        | b">>="
                ) =>
            {
                self.take(n)?;
                self.assignment()?;
                Expr::Other
            }
            _ => left,
        };
        self.depth -= 1;
        Ok(result)
    }

    /// The `[N]…` after a declared name, each size an expression.
    fn array_sizes(&mut self) -> Result<(), Stop> {
        while Self::is_punct(&self.peek(0)?, b'[') {
            self.next()?;
            self.expr()?;
            self.expect_punct(b']', "']'")?;
        }
        Ok(())
    }

    fn ternary(&mut self) -> Result<Expr, Stop> {
        let cond = self.binary(0)?;
        if !matches!(self.operator()?, Some((op, _)) if op == b"?") {
            return Ok(cond);
        }
        self.next()?;
        self.assignment()?;
        self.expect_punct(b':', "':'")?;
        self.assignment()?;
        Ok(Expr::Other)
    }

    fn binary(&mut self, level: usize) -> Result<Expr, Stop> {
        use crate::shader::d3d9::ppexpr::LEVELS;
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        loop {
            let Some((op, n)) = self.operator()? else {
                return Ok(left);
            };
            if !LEVELS[level].iter().any(|o| o.as_bytes() == op) {
                return Ok(left);
            }
            self.take(n)?;
            self.binary(level + 1)?;
            left = Expr::Other;
        }
    }

    fn unary(&mut self) -> Result<Expr, Stop> {
        self.deeper()?;
        let result = self.unary_inner();
        self.depth -= 1;
        result
    }

    fn unary_inner(&mut self) -> Result<Expr, Stop> {
        if let Some((op, n)) = self.operator()? {
            if matches!(&op[..], b"-" | b"+" | b"!" | b"~" | b"++" | b"--") {
                self.take(n)?;
                let e = self.unary()?;
                return Ok(match (op.as_slice(), e) {
                    (b"-" | b"+", Expr::Literal) => Expr::Literal,
                    _ => Expr::Other,
                });
            }
        }
        // A cast: (type) expr.
        let (open, ty, close) = (self.peek(0)?, self.peek(1)?, self.peek(2)?);
        if Self::is_punct(&open, b'(')
            && self.type_of(&ty).is_some()
            && Self::is_punct(&close, b')')
        {
            self.take(3)?;
            self.unary()?;
            return Ok(Expr::Other);
        }
        let mut e = self.primary()?;
        loop {
            let t = self.peek(0)?;
            if Self::is_punct(&t, b'.') {
                self.next()?;
                self.expect_ident("a member or swizzle")?;
                e = Expr::Other;
            } else if Self::is_punct(&t, b'[') {
                self.next()?;
                self.expr()?;
                self.expect_punct(b']', "']'")?;
                e = Expr::Other;
            } else if matches!(self.operator()?, Some((op, _)) if op == b"++" || op == b"--") {
                self.take(2)?;
                e = Expr::Other;
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, Stop> {
        let t = self.next()?;
        let Some(tok) = t.clone() else {
            return Err(self.unexpected(None, "an expression"));
        };
        match tok.kind {
            Kind::Number => {
                if number(self.word(&tok)).is_none() {
                    return Err(self.unexpected(Some(&tok), "a number"));
                }
                Ok(Expr::Literal)
            }
            Kind::Str => Ok(Expr::Other),
            Kind::Punct(b'(') => {
                let e = self.expr()?;
                self.expect_punct(b')', "')'")?;
                Ok(e)
            }
            Kind::Ident => {
                let w = self.word(&tok);
                if w == b"true" || w == b"false" {
                    return Ok(Expr::Literal);
                }
                if w.eq_ignore_ascii_case(b"null") {
                    return Ok(Expr::Ident(None));
                }
                if let Some(ty) = self.type_of(&t) {
                    self.expect_punct(b'(', "'(' after a type")?;
                    let (count, literal) = self.arguments()?;
                    if let Ty::Numeric(base, rows, cols) = ty {
                        let want = usize::from(rows) * usize::from(cols);
                        if literal && count != want && count > 1 {
                            self.out.push(Finding::at(
                                tok.at,
                                format!(
                                    "{}(…) takes {want} values, and is given {count}",
                                    self.shown(&tok)
                                ),
                            ));
                        }
                        return Ok(Expr::Ctor(base, rows, cols));
                    }
                    return Ok(Expr::Other);
                }
                let call = Self::is_punct(&self.peek(0)?, b'(');
                if call
                    && crate::shader::hlsl::INTRINSICS
                        .iter()
                        .any(|i| i.as_bytes() == w)
                {
                    self.next()?;
                    self.arguments()?;
                    return Ok(Expr::Other);
                }
                let sym = self.lookup(w);
                if sym.is_none() {
                    self.undeclared(&tok, false);
                }
                if call {
                    self.next()?;
                    self.arguments()?;
                    return Ok(Expr::Other);
                }
                Ok(Expr::Ident(sym))
            }
            _ => Err(self.unexpected(Some(&tok), "an expression")),
        }
    }

    // ---- techniques, passes and states ---------------------------------------------

    /// After `technique`.
    fn technique(&mut self) -> Result<(), Stop> {
        if self.peek(0)?.is_some_and(|t| t.kind == Kind::Ident) {
            self.next()?;
        }
        self.annotations()?;
        self.expect_punct(b'{', "'{' to open the technique")?;
        loop {
            let t = self.next()?;
            if Self::is_punct(&t, b'}') {
                return Ok(());
            }
            if !self.is_keyword(&t, "pass") {
                return Err(self.unexpected(t.as_ref(), "'pass' or the technique's '}'"));
            }
            if self.peek(0)?.is_some_and(|t| t.kind == Kind::Ident) {
                self.next()?;
            }
            self.annotations()?;
            self.expect_punct(b'{', "'{' to open the pass")?;
            self.states(false)?;
        }
    }

    /// After the `{` of a pass or a `sampler_state`: assignments up to `}`, then their
    /// checks.
    fn states(&mut self, sampler_block: bool) -> Result<(), Stop> {
        struct Assign {
            name: Tok,
            index: Option<u32>,
            value: Value,
            at: usize,
        }
        let mut all: Vec<Assign> = Vec::new();
        loop {
            let t = self.next()?;
            if Self::is_punct(&t, b'}') {
                break;
            }
            let name = match t {
                Some(t) if t.kind == Kind::Ident => t,
                other => {
                    return Err(self.unexpected(
                        other.as_ref(),
                        if sampler_block {
                            "a sampler state or '}'"
                        } else {
                            "a state or the pass's '}'"
                        },
                    ))
                }
            };
            let mut index = None;
            if Self::is_punct(&self.peek(0)?, b'[') {
                self.next()?;
                let n = self.next()?;
                let value = match &n {
                    Some(t) if t.kind == Kind::Number => number(self.word(t)).filter(|v| v.1),
                    _ => None,
                };
                let Some((value, _)) = value else {
                    return Err(self.unexpected(n.as_ref(), "an index (0, 1, …)"));
                };
                if value > f64::from(u32::MAX) {
                    let at = n.map_or(name.at, |n| n.at);
                    return Err(Stop::Syntax(Finding::at(
                        at,
                        "the index does not fit in 32 bits",
                    )));
                }
                index = Some(value as u32);
                self.expect_punct(b']', "']'")?;
            }
            self.expect_punct(b'=', "'='")?;
            let at = self.peek(0)?.map_or(self.t.len(), |t| t.at);
            let value = self.value()?;
            self.expect_punct(b';', "';' after the value")?;
            all.push(Assign {
                name,
                index,
                value,
                at,
            });
        }
        // D3DX looks up names in the last assignment of a state only.
        let mut last: HashMap<(&'static str, Option<u32>), usize> = HashMap::new();
        for (i, a) in all.iter().enumerate() {
            if let Some(state) = states::find(self.word(&a.name)) {
                last.insert((state.name, a.index), i);
            }
        }
        for (i, a) in all.iter().enumerate() {
            let shown = self.shown(&a.name);
            let Some(state) = states::find(self.word(&a.name)) else {
                self.out
                    .push(Finding::at(a.name.at, states::unknown(&shown)));
                continue;
            };
            if sampler_block && !state.sampler {
                self.out.push(Finding::at(
                    a.name.at,
                    format!(
                        "{} is not a sampler state: a sampler_state block sets only AddressU, \
                         MinFilter, Texture and the like",
                        state.name
                    ),
                ));
                continue;
            }
            let index_problem = match sampler_block {
                true => a.index.map(|_| {
                    format!(
                        "{0} is not indexed in a sampler_state: write '{0} = …'",
                        state.name
                    )
                }),
                false => state.index_problem(a.index),
            };
            if let Some(m) = index_problem {
                self.out.push(Finding::at(a.name.at, m));
                continue;
            }
            let last = last.get(&(state.name, a.index)) == Some(&i);
            if let Some((at, m)) = judge(self.t, state, a.index, &a.value, last, a.at) {
                self.out.push(Finding::at(at, m));
            }
        }
        Ok(())
    }

    /// A state's value, up to the `;`.
    fn value(&mut self) -> Result<Value, Stop> {
        let t = self.peek(0)?;
        let Some(tok) = t.clone() else {
            return Err(self.unexpected(None, "a value"));
        };
        match tok.kind {
            Kind::Punct(b'<') => {
                self.next()?;
                let name = self.expect_ident("a name after '<'")?;
                self.expect_punct(b'>', "'>'")?;
                let sym = self.lookup(self.word(&name));
                if sym.is_none() {
                    self.undeclared(&name, true);
                }
                Ok(Value::Ref(sym, self.shown(&name)))
            }
            Kind::Punct(b'(') => {
                self.next()?;
                let e = self.expr()?;
                self.expect_punct(b')', "')'")?;
                Ok(Value::Paren(match e {
                    Expr::Ident(sym) => sym,
                    _ => Some(Sym::Numeric),
                }))
            }
            Kind::Punct(b'{') => {
                self.braces()?;
                Ok(Value::Braces)
            }
            Kind::Ident if self.is_keyword(&t, "compile") => Ok(Value::Shader(self.compile()?)),
            Kind::Ident if self.is_keyword(&t, "asm") && Self::is_punct(&self.peek(1)?, b'{') => {
                let body = self.asm_block()?;
                let (stage, problem) = (self.asm)(body);
                self.out.extend(problem);
                Ok(Value::Shader(stage))
            }
            Kind::Ident if self.type_of(&t).is_some() && Self::is_punct(&self.peek(1)?, b'(') => {
                Ok(match self.unary()? {
                    Expr::Ctor(b, r, c) => Value::Ctor(b, r, c),
                    _ => Value::Paren(Some(Sym::Numeric)),
                })
            }
            Kind::Ident | Kind::Number | Kind::Punct(b'-') => {
                let mut terms = Vec::new();
                loop {
                    let mut t = self.next()?;
                    let negative = Self::is_punct(&t, b'-');
                    if negative {
                        t = self.next()?;
                    }
                    match t {
                        Some(t) if t.kind == Kind::Number => {
                            let Some((value, integer)) = number(self.word(&t)) else {
                                return Err(self.unexpected(Some(&t), "a number"));
                            };
                            terms.push(Term::Number {
                                value: if negative { -value } else { value },
                                integer,
                            });
                        }
                        Some(t) if t.kind == Kind::Ident && !negative => {
                            terms.push(Term::Name(t.span.clone(), t.at));
                        }
                        other => return Err(self.unexpected(other.as_ref(), "a number")),
                    }
                    let bar = Self::is_punct(&self.peek(0)?, b'|')
                        && !matches!(self.operator()?, Some((op, _)) if op == b"||");
                    if !bar {
                        return Ok(Value::Simple(terms));
                    }
                    self.next()?;
                }
            }
            _ => Err(self.unexpected(Some(&tok), "a value")),
        }
    }
}

/// What is wrong with `value` for `state` (at the value's first token, or at a name it
/// does not take), if anything. Names are looked up only in the `last` assignment of the
/// state, as D3DX does.
fn judge(
    t: &[u8],
    state: &State,
    index: Option<u32>,
    value: &Value,
    last: bool,
    at: usize,
) -> Option<(usize, String)> {
    let name = match index {
        Some(i) => format!("{}[{i}]", state.name),
        None => state.name.to_string(),
    };
    let takes = |what: &str| Some((at, format!("{name} takes {what}")));
    // Names it does not take (only in the last assignment).
    if let Value::Simple(terms) = value {
        for term in terms {
            let Term::Name(span, term_at) = term else {
                continue;
            };
            let word = &t[span.clone()];
            let null = word.eq_ignore_ascii_case(b"null");
            let known = match state.class {
                Class::Texture | Class::Sampler | Class::StateBlock | Class::Shader(_) => null,
                _ => state
                    .names()
                    .iter()
                    .any(|n| n.as_bytes().eq_ignore_ascii_case(word)),
            };
            if known || !last {
                continue;
            }
            let word = String::from_utf8_lossy(word);
            let names = state.names();
            let message = match state.class {
                Class::Dword(_) | Class::BoolConstant if !names.is_empty() => {
                    let near = states::nearest(&word, names.iter().copied());
                    format!(
                        "{name} does not take '{word}'{}: it takes {} (any case), or a number",
                        near.map(|n| format!(" (did you mean {n}?)"))
                            .unwrap_or_default(),
                        names.join(", ")
                    )
                }
                Class::Fvf => format!(
                    "{name} does not take '{word}': it takes D3DFVF flags ({}) joined with '|'",
                    state.names().join(", ")
                ),
                Class::Texture => format!(
                    "{name} does not take '{word}': it takes a texture, as <{word}> \
                     (or NULL)"
                ),
                Class::Shader(stage) => format!(
                    "{name} does not take '{word}': it takes a {} shader, as <{word}> \
                     (or NULL)",
                    stage.word()
                ),
                Class::Sampler => format!("{name} does not take '{word}': it takes a sampler"),
                Class::StateBlock => {
                    format!("{name} does not take '{word}': it takes a state block")
                }
                _ => format!("{name} takes a number, not '{word}'"),
            };
            return Some((*term_at, message));
        }
    }
    let numbers: Vec<(f64, bool)> = match value {
        Value::Simple(terms) => terms
            .iter()
            .filter_map(|t| match t {
                Term::Number { value, integer } => Some((*value, *integer)),
                Term::Name(..) => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let only_numbers = matches!(value, Value::Simple(terms) if terms.iter().all(|t| matches!(t, Term::Number { .. })));
    let is_null = |value: &Value| match value {
        Value::Simple(terms) => terms.iter().all(|term| match term {
            Term::Name(span, _) => t[span.clone()].eq_ignore_ascii_case(b"null"),
            Term::Number { value, .. } => *value == 0.0,
        }),
        _ => false,
    };
    let object = |sym: &Option<Sym>| {
        matches!(
            sym,
            Some(Sym::Texture | Sym::Sampler | Sym::Shader(_) | Sym::Str | Sym::Function)
        )
    };
    match state.class {
        Class::Dword(_) => match value {
            Value::Ctor(Base::Float, 1, 1 | 4) | Value::Braces | Value::Simple(_) => None,
            Value::Ref(sym, _) | Value::Paren(sym) if !object(sym) => None,
            _ => takes("a number, a name it knows or a float4(…)"),
        },
        Class::Float => match value {
            Value::Ctor(Base::Float, 1, 1) | Value::Simple(_) | Value::Braces => None,
            Value::Ref(sym, _) | Value::Paren(sym) if !object(sym) => None,
            _ => takes("one number (a float)"),
        },
        Class::LightVector => match value {
            Value::Simple(_) if numbers.iter().any(|n| !n.1) => {
                takes("a float3(…), a float4(…) or a whole number")
            }
            Value::Ctor(Base::Float, 1, 3 | 4) | Value::Simple(_) | Value::Braces => None,
            Value::Ref(sym, _) | Value::Paren(sym) if !object(sym) => None,
            _ => takes("a float3(…), a float4(…) or a whole number"),
        },
        Class::Material | Class::Matrix | Class::Constant | Class::BoolConstant => match value {
            Value::Ref(sym, _) if object(sym) => takes("numbers, not a reference"),
            Value::Paren(sym) if object(sym) => takes("numbers"),
            Value::Shader(_) => takes("numbers"),
            _ => None,
        },
        Class::Texture | Class::Sampler | Class::StateBlock | Class::Shader(_) => {
            let (want, what): (Option<Sym>, String) = match state.class {
                Class::Texture => (Some(Sym::Texture), "a texture or NULL".into()),
                Class::Sampler => (Some(Sym::Sampler), "a sampler or NULL".into()),
                Class::Shader(stage) => (
                    Some(Sym::Shader(stage)),
                    format!("a {} shader or NULL", stage.word()),
                ),
                _ => (None, "a state block or NULL".into()),
            };
            match value {
                Value::Ref(sym, _) | Value::Paren(sym) if sym.is_none() || *sym == want => None,
                Value::Ref(Some(Sym::Numeric), _) | Value::Paren(Some(Sym::Numeric))
                    if want.is_none() =>
                {
                    None
                }
                Value::Ref(Some(sym), shown) => {
                    let is = match sym {
                        Sym::Texture => "a texture".to_string(),
                        Sym::Sampler => "a sampler".to_string(),
                        Sym::Shader(stage) => format!("a {} shader", stage.word()),
                        Sym::Str => "a string".to_string(),
                        Sym::Numeric => "a number".to_string(),
                        Sym::Function => "a function".to_string(),
                    };
                    Some((
                        at,
                        format!("{name} = <{shown}>: {shown} is {is}, and {name} takes {what}"),
                    ))
                }
                Value::Shader(stage) => match (state.class, stage) {
                    (Class::Shader(want), Some(got)) if want != *got => {
                        takes(&format!("{what}, not a {} shader", got.word()))
                    }
                    (Class::Shader(_), _) => None,
                    _ => takes(&what),
                },
                Value::Simple(_) if only_numbers && numbers.iter().any(|n| !n.1) => takes(&what),
                Value::Simple(_) if only_numbers && !is_null(value) => {
                    takes(&format!("{what}; a number must be 0 (NULL)"))
                }
                Value::Simple(_) => None,
                _ => takes(&what),
            }
        }
        Class::Fvf => match value {
            _ if is_null(value) => Some((
                at,
                format!("{name} must not be 0 (NULL): it takes D3DFVF flags, as XYZ | TEX1"),
            )),
            Value::Simple(_) => None,
            Value::Ctor(Base::Float, 1, 1 | 4) | Value::Braces => None,
            _ => takes("D3DFVF flags, as XYZ | TEX1"),
        },
    }
}
