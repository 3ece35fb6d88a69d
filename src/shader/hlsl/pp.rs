//! The C preprocessor of HLSL, as Microsoft's fxc / d3dcompiler runs it before the parser:
//! `#define` (object-like and function-like, `#` and `##`, `...`), `#undef`, `#if` /
//! `#ifdef` / `#ifndef` / `#elif` / `#else` / `#endif`, `#include`, `#error`, `#line` and
//! `#pragma`. The result is the token stream the parser reads: directives gone, macros
//! expanded, `#pragma pack_matrix` kept as a [`TokenKind::Pragma`] token in its place.
//!
//! Where fxc differs from C, this follows fxc, as vkd3d's `tests/preproc-*.shader_test` and
//! `tests/hlsl_d3d12.c` record it (they run against Microsoft's d3dcompiler on Windows):
//! - the `(` of a function-like macro's arguments must be on the line of its name (a name
//!   that ends a line is left alone, `(` on the next line or not);
//! - commas inside `[]` and `{}` do not split arguments, as commas inside `()` do not;
//! - directives inside a macro's arguments take effect as they are read, and the arguments
//!   are expanded only when the whole invocation has been read;
//! - `##` pastes only in function-like macros: in an object-like body it is a token; in
//!   a function-like one, a `##` an argument brings pastes too;
//! - `#x` in a function-like body is the string `"x"` even when `x` is no parameter;
//! - a parameter named twice is the first one;
//! - `#pragma` lines are never macro-expanded (`#pragma pack_matrix(VALUE)` is ignored,
//!   `majority-pragma.shader_test`, whose listing in the corpus shows column-major).
//!
//! - `#if` arithmetic is unsigned and 32 bits wide (`ppexpr::Integers::Unsigned32`).
//!
//! Where fxc only goes on (D3DPreprocess succeeds), this reports an error, since what
//! follows could not mean what was written: a wrong number of arguments or an argument
//! list the file never closes (fxc keeps the name alone, as this does), an `#endif`,
//! `#else` or `#elif` without its `#if` or after its `#else`, a file that ends inside an
//! `#if` group. Not followed: fxc's `a::b` names in `#define` (vkd3d's `preproc-macro`),
//! which shader model 2–3 code has no use for.
//!
//! Tokens keep the place they were written; tokens a macro's body produced take the place
//! of the invocation, so that the parser's messages point at the line the user wrote. A
//! `#line N "name"` renames the file in messages by adding a [`SourceFile`] of that name
//! with no text (the text stays in the file it renames) and shifts the lines that follow.
//!
//! Hostile input ends with an error naming the place and the limit ([`Limits`]), never a
//! hang, a panic or memory running out: each limit stops the preprocessing.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::diag::Diagnostics;
use super::lex::{lex, Lexed};
use super::token::{FileId, Loc, SourceFile, Sources, Token, TokenKind};
use crate::shader::d3d9::ppexpr;

/// What the command line gives the preprocessor.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `-D NAME[=VALUE]`, in order; `NAME` alone defines it as `1`. A later definition of
    /// a name replaces an earlier one, with a warning if it differs.
    pub defines: Vec<(String, Option<String>)>,
    /// `-I DIR`, in order: where `#include` looks after the folders of the files.
    pub include_dirs: Vec<PathBuf>,
    pub limits: Limits,
}

/// Bounds that hostile or broken input meets before it can exhaust time or memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Tokens handed to the parser.
    pub tokens: usize,
    /// Tokens macro bodies and arguments produce, all expansions together (a macro that
    /// doubles itself forty times meets this, not the time).
    pub expansion: usize,
    /// Files open at once: the main file and the includes inside each other.
    pub include_depth: usize,
    /// `#include`s read, all together (files that each include the next twice, forty
    /// deep, are never deep, only many).
    pub includes: usize,
    /// Bytes `#include`s read, all together.
    pub include_bytes: usize,
    /// Macro invocations inside the arguments of invocations, nested: `F(F(F(…)))`.
    pub argument_nesting: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            tokens: 4 << 20,
            expansion: 2 << 20,
            include_depth: 64,
            includes: 10_000,
            include_bytes: 64 << 20,
            argument_nesting: 100,
        }
    }
}

/// Where included files come from.
pub trait Loader {
    /// The text of the file at `path`; [`std::io::ErrorKind::NotFound`] sends `#include`
    /// on to the next folder, any other error stops it.
    fn load(&self, path: &Path) -> std::io::Result<String>;
}

/// Includes shipped with shaderfs, read when no file of the name is found: `flatout.hlsl`
/// names what FlatOut puts in which register.
pub const BUILT_IN: &[(&str, &str)] = &[("flatout.hlsl", include_str!("flatout.hlsl"))];

/// Files on disk.
#[derive(Debug, Clone, Copy, Default)]
pub struct FsLoader;

impl Loader for FsLoader {
    fn load(&self, path: &Path) -> std::io::Result<String> {
        let bytes = std::fs::read(path)?;
        // Shaders of old tools are often Latin-1: a stray byte must not hide the file.
        Ok(String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }
}

/// Files held in memory by path: includes from an archive, and tests.
#[derive(Debug, Clone, Default)]
pub struct MemoryLoader {
    pub files: HashMap<PathBuf, String>,
}

impl MemoryLoader {
    pub fn add(&mut self, path: impl Into<PathBuf>, text: impl Into<String>) {
        self.files.insert(path.into(), text.into());
    }
}

impl Loader for MemoryLoader {
    fn load(&self, path: &Path) -> std::io::Result<String> {
        self.files.get(path).cloned().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, "no such file in memory")
        })
    }
}

/// The tokens of `main` (already in `sources`) for the parser, directives done and macros
/// expanded; included files are added to `sources`. Every problem goes to `diags`.
pub fn preprocess(
    sources: &mut Sources,
    main: FileId,
    options: &Options,
    loader: &dyn Loader,
    diags: &mut Diagnostics,
) -> Vec<Token> {
    let mut pp = Pp {
        sources,
        diags,
        loader,
        include_dirs: &options.include_dirs,
        limits: options.limits,
        macros: HashMap::new(),
        names: HashMap::new(),
        files: Vec::new(),
        pending: Vec::new(),
        isolated: false,
        nesting: 0,
        made: 0,
        includes: 0,
        read: 0,
        included: HashMap::new(),
        stopped: false,
        once: HashSet::new(),
        aliases: HashMap::new(),
        empty: Rc::from(Vec::new()),
    };
    if main.0 as usize >= pp.sources.files.len() {
        pp.diags.error(
            Loc::default(),
            format!("preprocess: no source file {} to read", main.0),
        );
        return Vec::new();
    }
    pp.open(main, pp.sources.get(main).path.clone());
    // `-D NAME=VALUE` is `#define NAME VALUE` in a file of its own, read before the main.
    if let Some(prelude) = command_line(&options.defines, pp.sources, pp.diags) {
        pp.open(prelude, None);
    }
    let mut out = Vec::new();
    while let Some(t) = pp.next_expanded() {
        if out.len() >= pp.limits.tokens {
            pp.stop(
                t.loc,
                format!(
                    "preprocessing stopped: more than {} tokens (the limit of a shader)",
                    pp.limits.tokens
                ),
            );
            break;
        }
        out.push(Token {
            kind: t.kind,
            text: t.text.to_string(),
            loc: t.loc,
        });
    }
    out
}

/// The `-D` definitions as the text of `#define` lines, added to `sources` as
/// `<command line>`; `None` when there are none. A name that is not an identifier is
/// warned about and left out, as D3DPreprocess leaves it (`-D 0=x` does not define `0`).
fn command_line(
    defines: &[(String, Option<String>)],
    sources: &mut Sources,
    diags: &mut Diagnostics,
) -> Option<FileId> {
    if defines.is_empty() {
        return None;
    }
    let id = FileId(sources.files.len() as u32);
    let mut text = String::new();
    for (n, (name, value)) in defines.iter().enumerate() {
        let ident = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident {
            let loc = Loc {
                file: id,
                line: n as u32 + 1,
                col: 1,
            };
            diags.warning(loc, format!("-D '{name}': not a macro name, ignored"));
            text.push('\n');
            continue;
        }
        let value = value.as_deref().unwrap_or("1").replace(['\r', '\n'], " ");
        text.push_str(&format!("#define {name} {value}\n"));
    }
    Some(sources.add(SourceFile {
        name: "<command line>".to_string(),
        path: None,
        text,
    }))
}

/// The macros a token came out of, by name id: a token never expands a macro it came
/// from (C's "painted blue" rule, kept as Prosser's hide sets).
type Hide = Rc<[u32]>;

/// A token inside the preprocessor: cheap to copy, with the layout `#` needs.
#[derive(Debug, Clone)]
struct Tk {
    kind: TokenKind,
    text: Rc<str>,
    loc: Loc,
    /// Whitespace before it, which `#` keeps as one space.
    space: bool,
    hide: Hide,
}

impl Tk {
    fn is(&self, text: &str) -> bool {
        self.kind == TokenKind::Punct && &*self.text == text
    }
}

#[derive(Debug)]
struct Macro {
    /// `None`: object-like. A parameter named twice is the first one, as in fxc.
    params: Option<Vec<Rc<str>>>,
    /// The last parameter is `__VA_ARGS__`, for `...`.
    variadic: bool,
    body: Vec<Tk>,
    loc: Loc,
}

impl Macro {
    /// The same definition, which C lets a file repeat without a word.
    fn same(&self, other: &Macro) -> bool {
        self.params == other.params
            && self.variadic == other.variadic
            && self.body.len() == other.body.len()
            && self
                .body
                .iter()
                .zip(&other.body)
                .enumerate()
                .all(|(i, (a, b))| {
                    a.kind == b.kind && a.text == b.text && (i == 0 || a.space == b.space)
                })
    }
}

/// An `#if` group being read.
#[derive(Debug, Clone, Copy)]
struct Cond {
    /// Where its `#if` is, for the error if its `#endif` is missing.
    loc: Loc,
    branch: Branch,
    /// Where its `#else` is, once read.
    else_loc: Option<Loc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Branch {
    /// The lines are read.
    Taking,
    /// Skipped, and a later `#elif` or `#else` may be taken.
    Before,
    /// Skipped to the `#endif`: a branch was taken, or the whole group is inside a
    /// skipped one.
    After,
}

/// A file being read.
struct Open {
    id: FileId,
    /// The file tokens are said to be in: `id`, or the name `#line` gave it.
    shown: FileId,
    lexed: Vec<Lexed>,
    pos: usize,
    /// What `#line` added to the lines after it.
    line_delta: i64,
    conds: Vec<Cond>,
    path: Option<PathBuf>,
    /// What the lexer said, kept until the end of the file so that what it said about
    /// lines in skipped groups (which a C preprocessor only skips) can be left out.
    lex_diags: Diagnostics,
    /// Lines skipped by `#if`s, first and last.
    skipped: Vec<(u32, u32)>,
    skip_from: Option<u32>,
}

impl Open {
    fn skipping(&self) -> bool {
        self.conds
            .last()
            .is_some_and(|c| c.branch != Branch::Taking)
    }

    /// Whether the group around the innermost one is skipped.
    fn outer_skipping(&self) -> bool {
        let n = self.conds.len();
        n >= 2 && self.conds[n - 2].branch != Branch::Taking
    }
}

struct Pp<'a> {
    sources: &'a mut Sources,
    diags: &'a mut Diagnostics,
    loader: &'a dyn Loader,
    include_dirs: &'a [PathBuf],
    limits: Limits,
    macros: HashMap<Rc<str>, Rc<Macro>>,
    /// Macro names by id, for hide sets.
    names: HashMap<Rc<str>, u32>,
    files: Vec<Open>,
    /// Tokens to read before the file's, last first: what expansions made, to be rescanned.
    pending: Vec<Tk>,
    /// Reading only `pending`: an argument or a directive's line being expanded.
    isolated: bool,
    nesting: usize,
    made: usize,
    includes: usize,
    /// Bytes of the files `#include` read.
    read: usize,
    /// The sources of included files by path and spelling.
    included: HashMap<(PathBuf, String), FileId>,
    stopped: bool,
    /// Files that said `#pragma once`.
    once: HashSet<PathBuf>,
    aliases: HashMap<(FileId, String), FileId>,
    empty: Hide,
}

/// The part of `text` from line `line`, column `col` (1-based, in characters) on.
fn text_from(text: &str, line: u32, col: u32) -> &str {
    let mut rest = text;
    for _ in 1..line {
        match rest.find('\n') {
            Some(i) => rest = &rest[i + 1..],
            None => return "",
        }
    }
    let skip: usize = rest
        .chars()
        .take(col.saturating_sub(1) as usize)
        .map(char::len_utf8)
        .sum();
    &rest[skip..]
}

/// The text of a string token without its quotes (an unclosed one has only the first).
fn unquote(text: &str) -> &str {
    let inner = text.strip_prefix('"').unwrap_or(text);
    inner.strip_suffix('"').unwrap_or(inner)
}

/// `"…"` with `\` and `"` escaped: what `#` makes of tokens.
fn stringize(tokens: &[Tk]) -> String {
    let mut s = String::from("\"");
    for (i, t) in tokens.iter().enumerate() {
        if i > 0 && t.space {
            s.push(' ');
        }
        if t.kind == TokenKind::Str {
            for c in t.text.chars() {
                if c == '"' || c == '\\' {
                    s.push('\\');
                }
                s.push(c);
            }
        } else {
            s.push_str(&t.text);
        }
    }
    s.push('"');
    s
}

/// Tokens as one line, spaces where the source had them (for messages).
fn spell(tokens: &[Tk]) -> String {
    let mut s = String::new();
    for (i, t) in tokens.iter().enumerate() {
        if i > 0 && t.space {
            s.push(' ');
        }
        s.push_str(&t.text);
    }
    s
}

impl Pp<'_> {
    fn stop(&mut self, loc: Loc, message: String) {
        if !self.stopped {
            self.diags.error(loc, message);
            self.stopped = true;
        }
    }

    fn open(&mut self, id: FileId, path: Option<PathBuf>) {
        let mut lex_diags = Diagnostics::default();
        let lexed = lex(&self.sources.get(id).text, id, &mut lex_diags);
        self.files.push(Open {
            id,
            shown: id,
            lexed,
            pos: 0,
            line_delta: 0,
            conds: Vec::new(),
            path,
            lex_diags,
            skipped: Vec::new(),
            skip_from: None,
        });
    }

    /// The file's end: its open `#if`s are errors, the lexer's messages go out.
    fn close(&mut self) {
        let Some(mut f) = self.files.pop() else {
            return;
        };
        if let Some(from) = f.skip_from {
            f.skipped.push((from, u32::MAX));
        }
        // The ranges are in order and apart: the one that may hold a line is the last
        // that starts before it.
        for d in f.lex_diags.list {
            let line = d.loc.line;
            let n = f.skipped.partition_point(|&(from, _)| from <= line);
            let skipped = n > 0 && f.skipped[n - 1].1 >= line;
            if !skipped {
                self.diags.list.push(d);
            }
        }
        const SHOWN: usize = 16;
        for c in f.conds.iter().rev().take(SHOWN) {
            self.diags.error(
                c.loc,
                "#if without #endif: the file ends before the #endif of this #if",
            );
        }
        if f.conds.len() > SHOWN {
            let c = f.conds[0];
            self.diags.error(
                c.loc,
                format!("and {} more #if without #endif", f.conds.len() - SHOWN),
            );
        }
    }

    /// Where a token of the current file is said to be, after `#line`.
    fn place(&self, loc: Loc) -> Loc {
        match self.files.last() {
            Some(f) => Loc {
                file: f.shown,
                line: (i64::from(loc.line) + f.line_delta).clamp(1, i64::from(u32::MAX)) as u32,
                col: loc.col,
            },
            None => loc,
        }
    }

    fn tk(&self, l: &Lexed) -> Tk {
        Tk {
            kind: l.token.kind,
            text: Rc::from(l.token.text.as_str()),
            loc: self.place(l.token.loc),
            space: l.space_before,
            hide: self.empty.clone(),
        }
    }

    /// The next token before expansion: rescanned tokens first, then the files, with
    /// their directives done as they come.
    fn next_raw(&mut self) -> Option<Tk> {
        if self.stopped {
            return None;
        }
        if let Some(t) = self.pending.pop() {
            return Some(t);
        }
        if self.isolated {
            return None;
        }
        loop {
            if self.stopped {
                return None;
            }
            let f = self.files.last_mut()?;
            let Some(l) = f.lexed.get(f.pos) else {
                self.close();
                continue;
            };
            if l.first_on_line && l.token.kind == TokenKind::Punct && l.token.text == "#" {
                if let Some(t) = self.directive() {
                    return Some(t);
                }
                continue;
            }
            f.pos += 1;
            if f.skipping() {
                continue;
            }
            let f = self.files.last()?;
            return Some(self.tk(&f.lexed[f.pos - 1]));
        }
    }

    /// Whether the next token is the `(` of an invocation: on the line of the name.
    fn lparen_next(&self) -> bool {
        if let Some(t) = self.pending.last() {
            return t.is("(");
        }
        if self.isolated {
            return false;
        }
        let Some(f) = self.files.last() else {
            return false;
        };
        f.lexed.get(f.pos).is_some_and(|l| {
            !l.first_on_line && l.token.kind == TokenKind::Punct && l.token.text == "("
        })
    }

    fn name_id(&mut self, name: &Rc<str>) -> u32 {
        let next = self.names.len() as u32;
        *self.names.entry(name.clone()).or_insert(next)
    }

    /// The next token after expansion.
    fn next_expanded(&mut self) -> Option<Tk> {
        loop {
            let t = self.next_raw()?;
            if t.kind != TokenKind::Ident {
                return Some(t);
            }
            let Some(m) = self.macros.get(&t.text).cloned() else {
                return Some(self.builtin(t));
            };
            let id = self.name_id(&t.text);
            if t.hide.contains(&id) {
                return Some(t);
            }
            let (args, hide) = match &m.params {
                None => (Vec::new(), with(&t.hide, id)),
                Some(params) => {
                    if !self.lparen_next() {
                        return Some(t);
                    }
                    self.next_raw();
                    let Some((args, close)) = self.arguments(&t) else {
                        return Some(t);
                    };
                    let Some(args) = self.fit(&t, params.len(), m.variadic, args) else {
                        return Some(t);
                    };
                    (args, with(&intersect(&t.hide, &close.hide), id))
                }
            };
            let out = self.substitute(&m, &args, &hide, &t);
            // The work of an expansion: its tokens, and the hide set each one carries (a
            // chain of a hundred thousand macros is short but its hide sets are not).
            self.made += out.len() + hide.len();
            if self.made > self.limits.expansion {
                self.stop(
                    t.loc,
                    format!(
                        "preprocessing stopped: macros made more than {} tokens expanding \
                         this line (more than a shader needs: macros that grow without end?)",
                        self.limits.expansion
                    ),
                );
                return None;
            }
            self.pending.extend(out.into_iter().rev());
        }
    }

    /// `__LINE__` and `__FILE__` (fxc predefines no other macro for Direct3D 9 targets);
    /// any other name as it is.
    fn builtin(&self, t: Tk) -> Tk {
        let text = match &*t.text {
            "__LINE__" => t.loc.line.to_string(),
            "__FILE__" => stringize(&[Tk {
                kind: TokenKind::Str,
                text: Rc::from(self.sources.name(t.loc.file)),
                ..t.clone()
            }]),
            _ => return t,
        };
        let kind = if &*t.text == "__LINE__" {
            TokenKind::Int
        } else {
            TokenKind::Str
        };
        Tk {
            kind,
            text: Rc::from(text.as_str()),
            ..t
        }
    }

    /// The arguments of an invocation of `name`, its `(` read: split at commas outside
    /// `()`, `[]` and `{}`, with the `)` that ends them. `None` (reported) when the files
    /// end first.
    fn arguments(&mut self, name: &Tk) -> Option<(Vec<Vec<Tk>>, Tk)> {
        let mut args = vec![Vec::new()];
        let mut depth = 0usize;
        loop {
            let Some(t) = self.next_raw() else {
                if !self.stopped {
                    self.diags.error(
                        name.loc,
                        format!(
                            "the arguments of macro '{}' are not closed: ')' expected before \
                             the end of the file",
                            name.text
                        ),
                    );
                }
                return None;
            };
            if t.kind == TokenKind::Punct {
                match &*t.text {
                    "(" | "[" | "{" => depth += 1,
                    ")" if depth == 0 => return Some((args, t)),
                    ")" | "]" | "}" => depth = depth.saturating_sub(1),
                    "," if depth == 0 => {
                        args.push(Vec::new());
                        continue;
                    }
                    _ => {}
                }
            }
            if let Some(last) = args.last_mut() {
                last.push(t);
            }
        }
    }

    /// The arguments matched to `params` parameters: `F()` is no argument, the extra
    /// ones of a variadic macro are its last, commas included. `None` (reported) when
    /// their number is wrong.
    fn fit(
        &mut self,
        name: &Tk,
        params: usize,
        variadic: bool,
        mut args: Vec<Vec<Tk>>,
    ) -> Option<Vec<Vec<Tk>>> {
        if params == 0 && args.len() == 1 && args[0].is_empty() {
            return Some(Vec::new());
        }
        if variadic {
            if args.len() + 1 == params {
                args.push(Vec::new());
            }
            if args.len() > params {
                let extra = args.split_off(params);
                let last = &mut args[params - 1];
                for arg in extra {
                    let comma_at = arg.first().map_or(name.loc, |t| t.loc);
                    last.push(Tk {
                        kind: TokenKind::Punct,
                        text: Rc::from(","),
                        loc: comma_at,
                        space: false,
                        hide: self.empty.clone(),
                    });
                    last.extend(arg);
                }
            }
        }
        if args.len() == params {
            return Some(args);
        }
        let wanted = if variadic {
            format!("at least {}", params - 1)
        } else {
            params.to_string()
        };
        self.diags.error(
            name.loc,
            format!(
                "macro '{}' takes {wanted} argument{}, but {} {} given",
                name.text,
                if params == 1 && !variadic { "" } else { "s" },
                args.len(),
                if args.len() == 1 { "was" } else { "were" }
            ),
        );
        None
    }

    /// `tokens` with every macro in them expanded, as an argument is before it replaces its
    /// parameter, or a directive's line.
    fn expand_alone(&mut self, tokens: Vec<Tk>, at: Loc) -> Vec<Tk> {
        if self.nesting >= self.limits.argument_nesting {
            self.stop(
                at,
                format!(
                    "preprocessing stopped: macro invocations nested more than {} deep in \
                     arguments",
                    self.limits.argument_nesting
                ),
            );
            return Vec::new();
        }
        let outer = std::mem::replace(&mut self.pending, tokens.into_iter().rev().collect());
        let was_isolated = std::mem::replace(&mut self.isolated, true);
        self.nesting += 1;
        let mut out = Vec::new();
        while let Some(t) = self.next_expanded() {
            out.push(t);
        }
        self.nesting -= 1;
        self.isolated = was_isolated;
        self.pending = outer;
        out
    }

    /// The body of `m` with its parameters replaced, `#` and `##` done, every token given
    /// `hide`: what the invocation `name` becomes, to be rescanned.
    fn substitute(&mut self, m: &Macro, args: &[Vec<Tk>], hide: &Hide, name: &Tk) -> Vec<Tk> {
        let at = name.loc;
        let params = m.params.as_deref().unwrap_or(&[]);
        let function_like = m.params.is_some();
        let param = |t: &Tk| {
            (t.kind == TokenKind::Ident)
                .then(|| params.iter().position(|p| *p == t.text))
                .flatten()
        };
        let body_token = |t: &Tk| Tk {
            loc: at,
            ..t.clone()
        };
        let mut expanded: Vec<Option<Vec<Tk>>> = vec![None; args.len()];
        let mut out: Vec<Tk> = Vec::new();
        // The last thing put out is an empty argument that `##` follows.
        let mut left_empty = false;
        let body = &m.body;
        let mut i = 0;
        while i < body.len() {
            let b = &body[i];
            if function_like && b.is("##") && i + 1 < body.len() {
                let right = match param(&body[i + 1]) {
                    Some(p) => args[p].clone(),
                    None => vec![body_token(&body[i + 1])],
                };
                i += 2;
                if right.is_empty() {
                    continue;
                }
                let left = if left_empty { None } else { out.pop() };
                left_empty = false;
                let mut right = right.into_iter();
                match (left, right.next()) {
                    (Some(l), Some(r)) => {
                        let pasted = self.paste(l, r, at);
                        out.extend(pasted);
                    }
                    (None, Some(r)) => out.push(r),
                    (Some(l), None) => out.push(l),
                    (None, None) => {}
                }
                out.extend(right);
                continue;
            }
            left_empty = false;
            if function_like && b.is("#") {
                if let Some(next) = body.get(i + 1).filter(|t| t.kind == TokenKind::Ident) {
                    let text = match param(next) {
                        Some(p) => stringize(&args[p]),
                        None => stringize(std::slice::from_ref(next)),
                    };
                    out.push(Tk {
                        kind: TokenKind::Str,
                        text: Rc::from(text.as_str()),
                        loc: at,
                        space: b.space,
                        hide: self.empty.clone(),
                    });
                    i += 2;
                    continue;
                }
            }
            match param(b) {
                Some(p) => {
                    let start = out.len();
                    if function_like && body.get(i + 1).is_some_and(|t| t.is("##")) {
                        left_empty = args[p].is_empty();
                        out.extend(args[p].iter().cloned());
                    } else {
                        if expanded[p].is_none() {
                            expanded[p] = Some(self.expand_alone(args[p].clone(), at));
                        }
                        out.extend(expanded[p].iter().flatten().cloned());
                    }
                    if let Some(first) = out.get_mut(start) {
                        first.space = b.space;
                    }
                }
                None => out.push(body_token(b)),
            }
            i += 1;
        }
        // fxc: a `##` an argument brought pastes too, once the body is filled in.
        if function_like && out.iter().any(|t| t.is("##")) {
            out = self.paste_brought(out, at);
        }
        // Tokens of one argument share their hide set: one union serves them all.
        let mut last: Option<(Hide, Hide)> = None;
        for t in &mut out {
            t.hide = match &last {
                Some((from, to)) if Rc::ptr_eq(from, &t.hide) => to.clone(),
                _ => {
                    let to = union(&t.hide, hide);
                    last = Some((t.hide.clone(), to.clone()));
                    to
                }
            };
        }
        if let Some(first) = out.first_mut() {
            first.space = name.space;
        }
        out
    }

    /// `tokens` with each `##` between two tokens done: the `##`s arguments brought into
    /// a function-like macro's body, which fxc pastes (vkd3d's `preproc-macro` tests).
    fn paste_brought(&mut self, tokens: Vec<Tk>, at: Loc) -> Vec<Tk> {
        let mut out: Vec<Tk> = Vec::with_capacity(tokens.len());
        let mut rest = tokens.into_iter().peekable();
        while let Some(t) = rest.next() {
            if t.is("##") && !out.is_empty() && rest.peek().is_some() {
                if let (Some(left), Some(right)) = (out.pop(), rest.next()) {
                    out.extend(self.paste(left, right, at));
                    continue;
                }
            }
            out.push(t);
        }
        out
    }

    /// `left ## right`: one token if their texts together are one, else an error and
    /// both.
    fn paste(&mut self, left: Tk, right: Tk, at: Loc) -> Vec<Tk> {
        let text = format!("{}{}", left.text, right.text);
        let mut quiet = Diagnostics::default();
        let lexed = lex(&text, at.file, &mut quiet);
        if let [one] = lexed.as_slice() {
            if !quiet.has_errors() && one.token.text == text {
                return vec![Tk {
                    kind: one.token.kind,
                    text: Rc::from(text.as_str()),
                    loc: at,
                    space: left.space,
                    hide: self.empty.clone(),
                }];
            }
        }
        self.diags.error(
            at,
            format!(
                "'##' of '{}' and '{}' does not make one token ('{text}')",
                left.text, right.text
            ),
        );
        vec![left, right]
    }

    /// A directive: the current file is at its `#`. Its line is read and done; a
    /// `#pragma` the parser must see comes back as a token.
    fn directive(&mut self) -> Option<Tk> {
        let f = self.files.last_mut()?;
        let hash = f.lexed[f.pos].token.loc;
        let end = f.lexed[f.pos + 1..]
            .iter()
            .position(|l| l.first_on_line)
            .map_or(f.lexed.len(), |n| f.pos + 1 + n);
        let line: Vec<Lexed> = f.lexed[f.pos + 1..end].to_vec();
        f.pos = end;
        let skipping = f.skipping();
        let last_line = line.last().map_or(hash.line, |l| l.token.loc.line);
        let at = self.place(hash);
        let Some(first) = line.first() else {
            return None; // `#` alone: the null directive.
        };
        let name = first.token.text.as_str();
        let rest: Vec<Tk> = line[1..].iter().map(|l| self.tk(l)).collect();
        let name_at = self.place(first.token.loc);
        match name {
            "if" | "ifdef" | "ifndef" => {
                let branch = if skipping {
                    Branch::After
                } else {
                    let taken = match name {
                        "if" => self.condition(rest, name_at),
                        _ => {
                            let defined = self.defined_name(&rest, name, name_at);
                            defined == Some(name == "ifdef")
                        }
                    };
                    if taken {
                        Branch::Taking
                    } else {
                        Branch::Before
                    }
                };
                self.push_cond(Cond {
                    loc: at,
                    branch,
                    else_loc: None,
                });
            }
            "elif" | "else" => {
                let Some(c) = self.files.last().and_then(|f| f.conds.last()).copied() else {
                    self.diags.error(at, format!("#{name} without #if"));
                    return None;
                };
                if let Some(e) = c.else_loc {
                    self.diags.error(
                        at,
                        format!(
                            "#{name} after the #else of this group ({})",
                            self.where_is(e)
                        ),
                    );
                    return None;
                }
                let branch = match c.branch {
                    Branch::Taking | Branch::After => Branch::After,
                    Branch::Before if name == "else" => Branch::Taking,
                    Branch::Before => {
                        if self.condition(rest.clone(), name_at) {
                            Branch::Taking
                        } else {
                            Branch::Before
                        }
                    }
                };
                if name == "else" && !self.files.last().is_some_and(Open::outer_skipping) {
                    self.extra(&rest, "#else");
                }
                self.set_cond(Cond {
                    branch,
                    else_loc: (name == "else").then_some(at),
                    ..c
                });
            }
            "endif" => {
                if self.files.last().is_some_and(|f| f.conds.is_empty()) {
                    self.diags.error(at, "#endif without #if");
                    return None;
                }
                self.pop_cond(hash.line);
                if !self.files.last().is_some_and(Open::skipping) {
                    self.extra(&rest, "#endif");
                }
            }
            _ if skipping => {}
            "define" => self.define(&line[1..], name_at),
            "undef" => match rest.first() {
                Some(t) if t.kind == TokenKind::Ident => {
                    self.macros.remove(&t.text);
                    self.extra(&rest[1..], "#undef NAME");
                }
                found => self.expected(found, name_at, "#undef", "a macro name"),
            },
            "include" => self.include(&line[1..], name_at),
            "error" => {
                self.diags.error(at, format!("#error {}", spell(&rest)));
            }
            "line" => self.line(rest, name_at, last_line),
            "pragma" => return self.pragma(&rest, at),
            _ => self
                .diags
                .error(name_at, format!("unknown preprocessor directive '#{name}'")),
        }
        None
    }

    /// `file(line,col)` of a place, for messages that name a second one.
    fn where_is(&self, loc: Loc) -> String {
        format!("{}({},{})", self.sources.name(loc.file), loc.line, loc.col)
    }

    fn push_cond(&mut self, c: Cond) {
        if let Some(f) = self.files.last_mut() {
            let was = f.skipping();
            f.conds.push(c);
            self.track_skip(was, c.loc.line);
        }
    }

    fn set_cond(&mut self, c: Cond) {
        if let Some(f) = self.files.last_mut() {
            let was = f.skipping();
            if let Some(top) = f.conds.last_mut() {
                *top = c;
            }
            self.track_skip(was, c.loc.line);
        }
    }

    fn pop_cond(&mut self, line: u32) {
        if let Some(f) = self.files.last_mut() {
            let was = f.skipping();
            f.conds.pop();
            self.track_skip(was, line);
        }
    }

    /// Keeps the lines of skipped groups, whose lexer messages are left out.
    fn track_skip(&mut self, was: bool, line: u32) {
        let Some(f) = self.files.last_mut() else {
            return;
        };
        let line = f
            .lexed
            .get(f.pos.saturating_sub(1))
            .map_or(line, |l| l.token.loc.line);
        match (was, f.skipping()) {
            (false, true) => f.skip_from = Some(line),
            (true, false) => {
                if let Some(from) = f.skip_from.take() {
                    f.skipped.push((from, line));
                }
            }
            _ => {}
        }
    }

    fn expected(&mut self, found: Option<&Tk>, at: Loc, directive: &str, what: &str) {
        match found {
            Some(t) => self.diags.error(
                t.loc,
                format!("{directive}: expected {what}, found '{}'", t.text),
            ),
            None => self
                .diags
                .error(at, format!("{directive}: expected {what} on its line")),
        }
    }

    /// Tokens after a directive's end are warned about, as C compilers do.
    fn extra(&mut self, rest: &[Tk], directive: &str) {
        if let Some(t) = rest.first() {
            self.diags.warning(
                t.loc,
                format!("'{}' after {directive} ignored", spell(rest)),
            );
        }
    }

    /// Whether the name of `#ifdef NAME` / `#ifndef NAME` is a macro; `None` (reported)
    /// when there is no name.
    fn defined_name(&mut self, rest: &[Tk], directive: &str, at: Loc) -> Option<bool> {
        match rest.first() {
            Some(t) if t.kind == TokenKind::Ident => {
                self.extra(&rest[1..], &format!("#{directive} NAME"));
                Some(self.is_defined(&t.text))
            }
            found => {
                self.expected(found, at, &format!("#{directive}"), "a macro name");
                None
            }
        }
    }

    fn is_defined(&self, name: &str) -> bool {
        self.macros.contains_key(name) || matches!(name, "__LINE__" | "__FILE__")
    }

    /// The condition of `#if` / `#elif`: `defined` done, macros expanded, the rest
    /// evaluated as fxc does (`ppexpr`: C's operators on unsigned 32-bit integers), names
    /// left over being 0. A condition that is no
    /// integer expression is an error, and false.
    fn condition(&mut self, rest: Vec<Tk>, at: Loc) -> bool {
        if rest.is_empty() {
            self.diags
                .error(at, "#if / #elif: expected a condition on its line");
            return false;
        }
        let mut toks = Vec::with_capacity(rest.len());
        let mut i = 0;
        while i < rest.len() {
            let t = &rest[i];
            if t.kind != TokenKind::Ident || &*t.text != "defined" {
                toks.push(t.clone());
                i += 1;
                continue;
            }
            let (name, next) = match (rest.get(i + 1), rest.get(i + 2), rest.get(i + 3)) {
                (Some(n), ..) if n.kind == TokenKind::Ident => (n, i + 2),
                (Some(open), Some(n), Some(close))
                    if open.is("(") && n.kind == TokenKind::Ident && close.is(")") =>
                {
                    (n, i + 4)
                }
                _ => {
                    self.diags.error(
                        t.loc,
                        "'defined' needs a macro name: 'defined NAME' or 'defined(NAME)'",
                    );
                    return false;
                }
            };
            toks.push(Tk {
                kind: TokenKind::Int,
                text: Rc::from(if self.is_defined(&name.text) {
                    "1"
                } else {
                    "0"
                }),
                ..t.clone()
            });
            i = next;
        }
        let expanded = self.expand_alone(toks, at);
        if self.stopped {
            return false;
        }
        let text = spell(&expanded);
        match ppexpr::evaluate_as(text.as_bytes(), &|_| None, ppexpr::Integers::Unsigned32) {
            Some(v) => v != 0,
            None => {
                self.diags.error(
                    at,
                    format!(
                        "cannot evaluate the condition '{}' (after macros: '{text}'): expected \
                         an integer expression of C's operators, nested at most 200 deep, that \
                         does not divide by zero",
                        spell(&rest)
                    ),
                );
                false
            }
        }
    }

    /// `#define NAME BODY` or `#define NAME(PARAMS) BODY`; `line` follows `define`.
    fn define(&mut self, line: &[Lexed], at: Loc) {
        let Some(first) = line.first() else {
            self.expected(None, at, "#define", "a macro name");
            return;
        };
        let name = self.tk(first);
        if name.kind != TokenKind::Ident {
            self.expected(Some(&name), at, "#define", "a macro name");
            return;
        }
        if &*name.text == "defined" {
            self.diags
                .error(name.loc, "'defined' cannot be a macro name");
            return;
        }
        let mut i = 1;
        let mut params = None;
        let mut variadic = false;
        if line
            .get(1)
            .is_some_and(|l| l.token.text == "(" && !l.space_before)
        {
            let mut list: Vec<Rc<str>> = Vec::new();
            i = 2;
            loop {
                let t = line.get(i).map(|l| self.tk(l));
                match t {
                    Some(t) if t.is(")") && list.is_empty() => {
                        i += 1;
                        break;
                    }
                    Some(t) if t.is("...") => {
                        variadic = true;
                        list.push(Rc::from("__VA_ARGS__"));
                        i += 1;
                        match line.get(i).map(|l| self.tk(l)) {
                            Some(c) if c.is(")") => {
                                i += 1;
                                break;
                            }
                            found => {
                                self.expected(found.as_ref(), at, "#define", "')' after '...'");
                                return;
                            }
                        }
                    }
                    Some(t) if t.kind == TokenKind::Ident => {
                        if list.contains(&t.text) {
                            self.diags.warning(
                                t.loc,
                                format!(
                                    "parameter '{}' of macro '{}' is named twice; the first \
                                     one is used",
                                    t.text, name.text
                                ),
                            );
                        }
                        list.push(t.text.clone());
                        i += 1;
                        match line.get(i).map(|l| self.tk(l)) {
                            Some(c) if c.is(",") => i += 1,
                            Some(c) if c.is(")") => {
                                i += 1;
                                break;
                            }
                            found => {
                                self.expected(
                                    found.as_ref(),
                                    at,
                                    "#define",
                                    "',' or ')' after a parameter",
                                );
                                return;
                            }
                        }
                    }
                    found => {
                        self.expected(found.as_ref(), at, "#define", "a parameter name or ')'");
                        return;
                    }
                }
            }
            params = Some(list);
        }
        let body: Vec<Tk> = line[i..].iter().map(|l| self.tk(l)).collect();
        if params.is_some() {
            let ends = [body.first(), body.last()];
            if let Some(t) = ends.into_iter().flatten().find(|t| t.is("##")) {
                self.diags.error(
                    t.loc,
                    format!("'##' cannot begin or end the body of macro '{}'", name.text),
                );
                return;
            }
        }
        let m = Macro {
            params,
            variadic,
            body,
            loc: name.loc,
        };
        if let Some(old) = self.macros.get(&name.text) {
            if !old.same(&m) {
                let was = self.where_is(old.loc);
                self.diags.warning(
                    name.loc,
                    format!("macro '{}' redefined (it was defined at {was})", name.text),
                );
            }
        }
        self.macros.insert(name.text, Rc::new(m));
    }

    /// `#include "name"` / `#include <name>` (or a macro that becomes one); `line` follows
    /// `include`.
    fn include(&mut self, line: &[Lexed], at: Loc) {
        let Some(first) = line.first() else {
            self.expected(None, at, "#include", "\"file\" or <file>");
            return;
        };
        let (name, angled) = if first.token.kind == TokenKind::Str {
            let rest: Vec<Tk> = line[1..].iter().map(|l| self.tk(l)).collect();
            self.extra(&rest, "#include \"file\"");
            let text = &first.token.text;
            (unquote(text).to_string(), false)
        } else if first.token.text.starts_with('<') {
            // Between `<` and `>` as written, spaces and all: tokens would lose them.
            let Some(f) = self.files.last() else {
                return;
            };
            let text = &self.sources.get(f.id).text;
            let from = text_from(text, first.token.loc.line, first.token.loc.col);
            let from = from.get(1..).unwrap_or("");
            let line_text = from.split('\n').next().unwrap_or("");
            match line_text.find('>') {
                Some(n) => (line_text[..n].to_string(), true),
                None => {
                    self.diags.error(
                        self.place(first.token.loc),
                        "#include <file: '>' expected on its line",
                    );
                    return;
                }
            }
        } else {
            let rest: Vec<Tk> = line.iter().map(|l| self.tk(l)).collect();
            let expanded = self.expand_alone(rest, at);
            match expanded.first() {
                Some(t) if t.kind == TokenKind::Str && expanded.len() == 1 => {
                    (unquote(&t.text).to_string(), false)
                }
                Some(t) if t.is("<") && expanded.last().is_some_and(|t| t.is(">")) => {
                    let inner = &expanded[1..expanded.len() - 1];
                    (inner.iter().map(|t| &*t.text).collect(), true)
                }
                _ => {
                    let t = self.tk(first);
                    self.expected(Some(&t), at, "#include", "\"file\" or <file>");
                    return;
                }
            }
        };
        if name.is_empty() {
            self.diags.error(at, "#include: the file name is empty");
            return;
        }
        self.includes += 1;
        if self.includes > self.limits.includes {
            self.stop(
                at,
                format!(
                    "preprocessing stopped: more than {} #includes read",
                    self.limits.includes
                ),
            );
            return;
        }
        if self.files.len() >= self.limits.include_depth {
            self.stop(
                at,
                format!(
                    "preprocessing stopped: #include \"{name}\" nested more than {} deep \
                     (does it include itself?)",
                    self.limits.include_depth
                ),
            );
            return;
        }
        let Some((path, text)) = self.resolve(&name, angled, at) else {
            return;
        };
        if self.once.contains(&path) {
            return;
        }
        self.read += text.len();
        if self.read > self.limits.include_bytes {
            self.stop(
                at,
                format!(
                    "preprocessing stopped: #includes read more than {} bytes",
                    self.limits.include_bytes
                ),
            );
            return;
        }
        // A file included again under the same name is the same source, not a copy.
        let key = (path.clone(), name.clone());
        let id = match self.included.get(&key) {
            Some(&id) => id,
            None => {
                let id = self.sources.add(SourceFile {
                    name,
                    path: Some(path.clone()),
                    text,
                });
                self.included.insert(key, id);
                id
            }
        };
        self.open(id, Some(path));
    }

    /// Where `#include` finds `name`, and its text. As Microsoft documents the directive
    /// ("#include Directive", HLSL reference), `"name"` is looked for beside the file that
    /// includes it, then beside each file that includes that one, outwards, then in the
    /// `-I` folders in order; `<name>` only in the `-I` folders. (fxc then reads the
    /// INCLUDE environment variable: a caller that wants it puts it in `include_dirs`.) A
    /// file read from no path (a source in memory) has no folder to look beside. `\` in
    /// the name is a folder separator, as on Windows where these shaders are written.
    fn resolve(&mut self, name: &str, angled: bool, at: Loc) -> Option<(PathBuf, String)> {
        let relative = PathBuf::from(name.replace('\\', "/"));
        let mut dirs: Vec<PathBuf> = Vec::new();
        if relative.is_absolute() {
            dirs.push(PathBuf::new());
        } else {
            if !angled {
                for f in self.files.iter().rev() {
                    if let Some(dir) = f.path.as_deref().and_then(Path::parent) {
                        if !dirs.iter().any(|d| d == dir) {
                            dirs.push(dir.to_path_buf());
                        }
                    }
                }
            }
            for d in self.include_dirs {
                if !dirs.contains(d) {
                    dirs.push(d.clone());
                }
            }
        }
        for dir in &dirs {
            let path = dir.join(&relative);
            match self.loader.load(&path) {
                Ok(text) => return Some((path, text)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    self.diags.error(
                        at,
                        format!(
                            "cannot read include file '{name}' ({}): {e}",
                            path.display()
                        ),
                    );
                    return None;
                }
            }
        }
        // The includes shaderfs ships, where no file of the name was found.
        if let Some(&(_, text)) = BUILT_IN.iter().find(|(n, _)| Path::new(n) == relative) {
            return Some((
                PathBuf::from(format!("<shaderfs>/{name}")),
                text.to_string(),
            ));
        }
        let looked = if dirs.is_empty() {
            "no folder to look in (the including file has no path and no -I folder was \
             given)"
                .to_string()
        } else {
            let list: Vec<String> = dirs
                .iter()
                .map(|d| match d.as_os_str().is_empty() {
                    true => "'.'".to_string(),
                    false => format!("'{}'", d.display()),
                })
                .collect();
            format!("looked in {}", list.join(", "))
        };
        self.diags.error(
            at,
            format!("cannot open include file '{name}': not found; {looked}"),
        );
        None
    }

    /// `#line N` / `#line N "name"`, macros expanded: the next line is line N (of "name").
    fn line(&mut self, rest: Vec<Tk>, at: Loc, last_line: u32) {
        let expanded = self.expand_alone(rest, at);
        let n = match expanded.first() {
            Some(t) if t.kind == TokenKind::Int && t.text.bytes().all(|b| b.is_ascii_digit()) => {
                match t.text.parse::<u32>() {
                    Ok(n) if n <= i32::MAX as u32 => n,
                    _ => {
                        self.diags.error(
                            t.loc,
                            format!(
                                "#line: {} is beyond the last line number, 2147483647",
                                t.text
                            ),
                        );
                        return;
                    }
                }
            }
            found => {
                self.expected(found, at, "#line", "a line number");
                return;
            }
        };
        let name = match expanded.get(1) {
            None => None,
            Some(t) if t.kind == TokenKind::Str => {
                self.extra(&expanded[2..], "#line N \"file\"");
                Some(unquote(&t.text).to_string())
            }
            found => {
                self.expected(found, at, "#line N", "a file name in quotes");
                return;
            }
        };
        if let Some(name) = name {
            let Some(f) = self.files.last() else {
                return;
            };
            let key = (f.id, name.clone());
            let shown = match self.aliases.get(&key) {
                Some(&id) => id,
                None if name == self.sources.get(f.id).name => f.id,
                None => {
                    let path = self.sources.get(f.id).path.clone();
                    let id = self.sources.add(SourceFile {
                        name,
                        path,
                        text: String::new(),
                    });
                    self.aliases.insert(key, id);
                    id
                }
            };
            if let Some(f) = self.files.last_mut() {
                f.shown = shown;
            }
        }
        if let Some(f) = self.files.last_mut() {
            f.line_delta = i64::from(n) - (i64::from(last_line) + 1);
        }
    }

    /// `#pragma`, never macro-expanded (fxc does not, `majority-pragma.shader_test`).
    /// `pack_matrix(row_major)` / `pack_matrix(column_major)` go to the parser as a
    /// [`TokenKind::Pragma`]; `once` marks the file; `warning(…)` is accepted (its numbers
    /// are fxc's own); `message("text")` is a warning with the text, as fxc prints it
    /// during compilation; `def` (documented, "infrequently used") is refused with a
    /// warning; any other pragma is warned about and ignored, as Microsoft's "#pragma
    /// Directive" page says the compiler does.
    fn pragma(&mut self, rest: &[Tk], at: Loc) -> Option<Tk> {
        let Some(first) = rest.first() else {
            self.diags.warning(at, "#pragma without a name ignored");
            return None;
        };
        match &*first.text {
            "pack_matrix" => {
                let text: String = rest.iter().map(|t| &*t.text).collect();
                match text.as_str() {
                    "pack_matrix(row_major)" | "pack_matrix(column_major)" => {
                        return Some(Tk {
                            kind: TokenKind::Pragma,
                            text: Rc::from(text.as_str()),
                            loc: at,
                            space: true,
                            hide: self.empty.clone(),
                        });
                    }
                    _ => self.diags.warning(
                        first.loc,
                        format!(
                            "#pragma {}: expected pack_matrix(row_major) or \
                             pack_matrix(column_major); ignored",
                            spell(rest)
                        ),
                    ),
                }
            }
            "once" => {
                let f = self.files.last()?;
                let key = f
                    .path
                    .clone()
                    .unwrap_or_else(|| PathBuf::from(self.sources.get(f.id).name.as_str()));
                self.once.insert(key);
            }
            "warning" => {}
            "def" => self.diags.warning(
                first.loc,
                "#pragma def (a register filled before the shader runs) is not supported; \
                 ignored",
            ),
            "message" => match (rest.get(1), rest.get(2), rest.get(3)) {
                (Some(open), Some(s), Some(close))
                    if open.is("(") && s.kind == TokenKind::Str && close.is(")") =>
                {
                    let text = unquote(&s.text);
                    self.diags.warning(at, text.to_string());
                }
                _ => self.diags.warning(
                    first.loc,
                    format!(
                        "#pragma {}: expected message(\"text\"); ignored",
                        spell(rest)
                    ),
                ),
            },
            name => self
                .diags
                .warning(first.loc, format!("unknown pragma '{name}' ignored")),
        }
        None
    }
}

/// `hide` and `id`.
fn with(hide: &Hide, id: u32) -> Hide {
    if hide.contains(&id) {
        return hide.clone();
    }
    let mut v = hide.to_vec();
    v.push(id);
    v.sort_unstable();
    Rc::from(v)
}

fn union(a: &Hide, b: &Hide) -> Hide {
    if b.is_empty() || Rc::ptr_eq(a, b) {
        return a.clone();
    }
    if a.is_empty() {
        return b.clone();
    }
    let mut v: Vec<u32> = a.iter().chain(b.iter()).copied().collect();
    v.sort_unstable();
    v.dedup();
    Rc::from(v)
}

fn intersect(a: &Hide, b: &Hide) -> Hide {
    if Rc::ptr_eq(a, b) {
        return a.clone();
    }
    let v: Vec<u32> = a.iter().filter(|x| b.contains(x)).copied().collect();
    Rc::from(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shader::hlsl::diag::Severity;

    /// The main file `main.hlsl` in `/src` of `loader`'s files, preprocessed.
    fn session(
        main: &str,
        loader: &MemoryLoader,
        options: &Options,
    ) -> (Vec<Token>, Diagnostics, Sources) {
        let mut sources = Sources::default();
        let id = sources.add(SourceFile {
            name: "main.hlsl".to_string(),
            path: Some(PathBuf::from("/src/main.hlsl")),
            text: main.to_string(),
        });
        let mut diags = Diagnostics::default();
        let out = preprocess(&mut sources, id, options, loader, &mut diags);
        (out, diags, sources)
    }

    /// The token texts of `src`, which must preprocess without a message.
    fn texts(src: &str) -> Vec<String> {
        let (out, diags, sources) = session(src, &MemoryLoader::default(), &Options::default());
        assert!(diags.list.is_empty(), "{}", diags.render(&sources));
        out.into_iter().map(|t| t.text).collect()
    }

    /// The token texts of `src` joined by spaces, which must preprocess without a message.
    fn line(src: &str) -> String {
        texts(src).join(" ")
    }

    /// Every message of `src`, rendered as fxc prints them.
    fn messages(src: &str) -> String {
        let (_, diags, sources) = session(src, &MemoryLoader::default(), &Options::default());
        diags.render(&sources)
    }

    #[test]
    fn object_like_macros_expand_and_rescan() {
        assert_eq!(line("#define KEY pass\nKEY"), "pass");
        assert_eq!(line("#define KEY fail\npass"), "pass");
        assert_eq!(line("#define A B\n#define B pass\nA"), "pass");
        assert_eq!(line("#define B pass\n#define A B\nA"), "pass");
        assert_eq!(line("#define A B\n#define B x\n#undef B\nA"), "B");
        assert_eq!(line("#define EMPTY\na EMPTY b"), "a b");
        assert_eq!(line("#define OP ==\n1 OP 2"), "1 == 2");
        assert_eq!(line("  #  define  KEY  pass\nKEY"), "pass");
        assert_eq!(line("#define \\\nKEY \\\npass\nKEY"), "pass");
        // A comment over lines is one space: the directive goes on after it.
        assert_eq!(
            line("#define KEY(a, b) /* multiline\n\ncomment */ a\nKEY(pass, fail)"),
            "pass"
        );
        assert_eq!(line("#define KEY //\nKEY pass"), "pass");
        // `#` outside a directive is a token, and what follows it is expanded.
        assert_eq!(line("#define KEY pass\napple # KEY"), "apple # pass");
        // The same definition twice is no redefinition.
        assert_eq!(line("#define A 1 + 2\n#define A 1 + 2\nA"), "1 + 2");
    }

    #[test]
    fn redefinition_with_another_body_is_warned_about_and_replaces() {
        let (out, diags, sources) = session(
            "#define KEY fail\n#define KEY pass\nKEY",
            &MemoryLoader::default(),
            &Options::default(),
        );
        assert_eq!(out[0].text, "pass");
        assert_eq!(
            diags.render(&sources),
            "main.hlsl(2,9): warning: macro 'KEY' redefined (it was defined at main.hlsl(1,9))\n"
        );
        assert!(!diags.has_errors());
    }

    #[test]
    fn function_like_macros_take_arguments() {
        assert_eq!(line("#define KEY(a, b) a\nKEY(pass, fail)"), "pass");
        assert_eq!(line("#define KEY(pass, fail) fail\nKEY(x, y)"), "y");
        assert_eq!(line("#define KEY(a, b) a\nKEY(\npass\n,\nfail\n)"), "pass");
        assert_eq!(
            line("#define KEY(a, b) b\nKEY((p, q), (r, s))"),
            "( r , s )"
        );
        // fxc: commas inside [] and {} do not split arguments either.
        assert_eq!(
            line("#define KEY(a, b) b\nKEY([1, 2], {3, 4})"),
            "{ 3 , 4 }"
        );
        assert_eq!(line("#define KEY(a, b) b\nKEY(\"x,y\", z)"), "z");
        assert_eq!(line("#define F() one\nF()"), "one");
        assert_eq!(line("#define F(a) [a]\nF()"), "[ ]");
        // A space before `(` in the definition makes the macro object-like.
        assert_eq!(line("#define KEY (pass)\nKEY(a,b)"), "( pass ) ( a , b )");
        // Not in the definition's invocation: spaces before `(` are fine there.
        assert_eq!(line("#define F(a) [a]\nF  (  x  )"), "[ x ]");
        assert_eq!(
            line("#define F(a) pass\n#define LEFT F(\nLEFT fail)"),
            "pass"
        );
        assert_eq!(line("#define F(a) pass\n#define KEY F\nKEY (fail)"), "pass");
        // A parameter named twice is the first, as in fxc.
        let (out, diags, _) = session(
            "#define KEY(a,a) a\nKEY(pass,fail)",
            &MemoryLoader::default(),
            &Options::default(),
        );
        assert_eq!(out[0].text, "pass");
        assert_eq!(diags.list.len(), 1);
        assert_eq!(diags.list[0].severity, Severity::Warning);
    }

    #[test]
    fn a_function_like_name_without_its_parenthesis_is_left_alone() {
        assert_eq!(line("#define pass(a) fail\npass"), "pass");
        assert_eq!(line("#define pass(a) fail\npass;"), "pass ;");
        // fxc looks for the `(` on the name's line only.
        assert_eq!(
            line("#define pass(a, b) fail\npass\n(a, b)"),
            "pass ( a , b )"
        );
    }

    #[test]
    fn arguments_are_expanded_first_except_beside_hash_and_paste() {
        assert_eq!(
            line("#define K1(a, b) a\n#define K2 pass\n#define K3 fail\nK1(K2, K3)"),
            "pass"
        );
        assert_eq!(line("#define a b\n#define KEY(a) a\nKEY(pass)"), "pass");
        assert_eq!(line("#define a b\n#define KEY(a) b\nKEY(x)"), "b");
        let both = "#define ONE 1\n#define STR(x) #x\n#define XSTR(x) STR(x)\n";
        assert_eq!(line(&format!("{both}STR(ONE) XSTR(ONE)")), "\"ONE\" \"1\"");
        assert_eq!(
            line("#define ONE 1\n#define CAT(a, b) a ## b\nCAT(ONE, 2) CAT(x, ONE)"),
            "ONE2 xONE"
        );
        // An invocation inside an argument is expanded with the argument.
        assert_eq!(
            line("#define KEY(a, b) a b\nKEY(KEY(x, y), pass)"),
            "x y pass"
        );
        // Arguments are expanded when the whole invocation has been read, with the
        // definitions of then.
        assert_eq!(
            line("#define KEY(a) a\nKEY(fail\n#define fail pass\n)"),
            "pass"
        );
        assert_eq!(
            line("#define KEY(a) a\nKEY(\n#define OBJ\n#ifdef OBJ\npass\n#endif\n)"),
            "pass"
        );
        assert_eq!(
            line("#define F(a) value\nF(fail\n#define KEY pass\n)\nKEY"),
            "value pass"
        );
    }

    #[test]
    fn hash_makes_strings() {
        assert_eq!(line("#define KEY(a) #a\nKEY(apple)"), "\"apple\"");
        assert_eq!(
            line("#define KEY(a) # a\nKEY( \t\r\n apple \t\r\n )"),
            "\"apple\""
        );
        assert_eq!(line("#define KEY(a) #a\nKEY(  x  +  y )"), "\"x + y\"");
        assert_eq!(line("#define KEY(a) #a\nKEY(\"a\\b\")"), r#""\"a\\b\"""#);
        // fxc: `#` and a name that is no parameter is the name as a string.
        assert_eq!(line("#define KEY(a) #b\nKEY(apple)"), "\"b\"");
        assert_eq!(
            line("#define K2(x) #x\n#define KEY(a) K2(#a)\nKEY(apple)"),
            r#""\"apple\"""#
        );
        // Not in an object-like macro, and not in an argument.
        assert_eq!(line("#define KEY #apple\nKEY"), "# apple");
        assert_eq!(
            line("#define KEY(a) a\nKEY(banana #apple)"),
            "banana # apple"
        );
    }

    #[test]
    fn double_hash_pastes_in_function_like_macros_only() {
        assert_eq!(
            line("#define KEY(a, b) a ## b\nKEY  (  pa  ,  ss  )"),
            "pass"
        );
        assert_eq!(line("#define KEY(a, b) pa ## ss\nKEY(fail, fail)"), "pass");
        assert_eq!(line("#define KEY(a) a ## ss\nKEY(pa)"), "pass");
        assert_eq!(
            line("#define KEY(x) p \\\n ## \\\n x \\\n ## \\\n ss\nKEY(\na\n)"),
            "pass"
        );
        assert_eq!(
            line("#define KEY(a, b) a ## b\nKEY(, x) KEY(y, ) KEY(,)"),
            "x y"
        );
        assert_eq!(
            line("#define KEY(a, b) a ## b\nKEY(1, 2) KEY(+, =) KEY(<<, =)"),
            "12 += <<="
        );
        // The pasted name is rescanned.
        assert_eq!(
            line("#define pass ok\n#define KEY2(x) x ## ss\n#define KEY(a) KEY2(a)\nKEY(pa)"),
            "ok"
        );
        // fxc: `##` in an object-like macro is a token, and so outside macros; but one
        // an argument brings into a function-like macro pastes there.
        assert_eq!(line("#define KEY fa ## il\nKEY"), "fa ## il");
        assert_eq!(line("fa ## il"), "fa ## il");
        assert_eq!(line("#define KEY(a) a\nKEY(pa ## ss)"), "pass");
        assert_eq!(line("#define KEY(a) a\nKEY(## x ##)"), "## x ##");
        assert_eq!(
            messages("#define KEY(a, b) a ## b\nKEY(+, /)"),
            "main.hlsl(2,1): error: '##' of '+' and '/' does not make one token ('+/')\n"
        );
        assert_eq!(
            messages("#define KEY(a) a ##\nKEY(x)"),
            "main.hlsl(1,18): error: '##' cannot begin or end the body of macro 'KEY'\n"
        );
    }

    #[test]
    fn a_macro_is_not_expanded_inside_its_own_expansion() {
        assert_eq!(line("#define foo foo bar\nfoo"), "foo bar");
        assert_eq!(line("#define a b\n#define b a\na b"), "a b");
        assert_eq!(line("#define f(x) f(x + 1)\nf(2)"), "f ( 2 + 1 )");
        // C99 6.10.3.5's example: the `g` that the rescan of `f(2)` meets is expanded
        // with the `(9)` after it; the inner `f` it makes is not.
        assert_eq!(
            line("#define f(a) a*g\n#define g(a) f(a)\nf(2)(9)"),
            "2 * 9 * g"
        );
        // Once painted, a name stays unexpanded when it comes out later.
        assert_eq!(line("#define id(x) x\n#define self id(self)\nself"), "self");
    }

    #[test]
    fn variadic_macros_gather_the_extra_arguments() {
        assert_eq!(
            line("#define V(...) [__VA_ARGS__]\nV(1, (2, 3), 4)"),
            "[ 1 , ( 2 , 3 ) , 4 ]"
        );
        assert_eq!(
            line("#define V(a, ...) a: __VA_ARGS__\nV(x) V(x, y, z)"),
            "x : x : y , z"
        );
        assert_eq!(line("#define V(...) #__VA_ARGS__\nV(a,b)"), "\"a,b\"");
    }

    #[test]
    fn wrong_argument_counts_and_open_argument_lists_are_errors_keeping_the_name() {
        let (out, diags, sources) = session(
            "#define KEY(a, b) fail\nKEY(fail, fail, fail) pass\nKEY(x)\n#define ONE(a) a\nONE(1, 2)",
            &MemoryLoader::default(),
            &Options::default(),
        );
        let t: Vec<_> = out.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(t, ["KEY", "pass", "KEY", "ONE"]);
        assert_eq!(
            diags.render(&sources),
            "main.hlsl(2,1): error: macro 'KEY' takes 2 arguments, but 3 were given\n\
             main.hlsl(3,1): error: macro 'KEY' takes 2 arguments, but 1 was given\n\
             main.hlsl(5,1): error: macro 'ONE' takes 1 argument, but 2 were given\n"
        );
        let (out, diags, sources) = session(
            "#define pass(a, b) a b fail\nx pass(fail, fail\nfail",
            &MemoryLoader::default(),
            &Options::default(),
        );
        let t: Vec<_> = out.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(t, ["x", "pass"]);
        assert_eq!(
            diags.render(&sources),
            "main.hlsl(2,3): error: the arguments of macro 'pass' are not closed: ')' expected \
             before the end of the file\n"
        );
    }

    #[test]
    fn conditions_choose_the_lines() {
        assert_eq!(line("#if 1\na\n#else\nb\n#endif"), "a");
        assert_eq!(
            line("#if 0\na\n#elif 2 > 1\nb\n#elif 1\nc\n#else\nd\n#endif"),
            "b"
        );
        assert_eq!(line("#if 0\na\n#elif 0\nb\n#else\nd\n#endif"), "d");
        assert_eq!(
            line("#define X\n#ifdef X\na\n#endif\n#ifndef X\nb\n#endif"),
            "a"
        );
        assert_eq!(
            line("#if defined X || defined(Y)\na\n#else\nb\n#endif"),
            "b"
        );
        assert_eq!(line("#define Y 0\n#if defined(Y) && !Y\na\n#endif"), "a");
        // fxc's integers are unsigned and 32 bits wide.
        assert_eq!(
            line("#if -1 == 0xffffffff && 8 / -3 == 0\npass\n#endif"),
            "pass"
        );
        // Names that are no macros are 0.
        assert_eq!(line("#if UNDEFINED == 0\na\n#endif"), "a");
        assert_eq!(
            line("#define OP==\n#if 2 OP 3\nfail\n#elif 2 OP 2\npass\n#endif"),
            "pass"
        );
        assert_eq!(
            line("#define KEY(a, b) (a < b)\n#if KEY(2, 1)\nfail\n#elif KEY(1, 2)\npass\n#endif"),
            "pass"
        );
        // Skipped groups are not expanded, but their nesting is kept.
        assert_eq!(
            line("#if 0\n#if 1\na\n#else\nb\n#endif\nc\n#else\nd\n#endif"),
            "d"
        );
        // Nothing in a skipped group is an error: not #error, an unknown directive, a
        // stray character nor a bad condition.
        assert_eq!(
            line("#if 0\n#error no\n#foo\ndon't @\n#if 1 +\n#endif\n#elif 1\npass\n#endif"),
            "pass"
        );
        assert_eq!(
            line("#define F1(a) a ## ss\n#define F2(a, b) a < b\nF1(\n#if F2(3, 2)\nfail\n#elif F2(2, 3)\npa\n#else\nfail\n#endif\n)"),
            "pass"
        );
    }

    #[test]
    fn broken_conditionals_are_errors_at_their_place() {
        assert_eq!(
            messages("a\n  #endif\n#else\n#elif 1"),
            "main.hlsl(2,3): error: #endif without #if\n\
             main.hlsl(3,1): error: #else without #if\n\
             main.hlsl(4,1): error: #elif without #if\n"
        );
        assert_eq!(
            messages("#if 1\n#else\n#else\n#elif 1\n#endif"),
            "main.hlsl(3,1): error: #else after the #else of this group (main.hlsl(2,1))\n\
             main.hlsl(4,1): error: #elif after the #else of this group (main.hlsl(2,1))\n"
        );
        assert_eq!(
            messages("#if 1\n #ifdef X\nx\n#endif"),
            "main.hlsl(1,1): error: #if without #endif: the file ends before the #endif of this #if\n"
        );
        assert_eq!(
            messages("#if 1 +\n#endif\n#if 1.5\n#endif\n#if 1/0\n#endif\n#if\n#endif\n#ifdef\n#endif\n#if defined(\n#endif"),
            "main.hlsl(1,2): error: cannot evaluate the condition '1 +' (after macros: '1 +'): \
             expected an integer expression of C's operators, nested at most 200 deep, that does not divide by zero\n\
             main.hlsl(3,2): error: cannot evaluate the condition '1.5' (after macros: '1.5'): \
             expected an integer expression of C's operators, nested at most 200 deep, that does not divide by zero\n\
             main.hlsl(5,2): error: cannot evaluate the condition '1/0' (after macros: '1/0'): \
             expected an integer expression of C's operators, nested at most 200 deep, that does not divide by zero\n\
             main.hlsl(7,2): error: #if / #elif: expected a condition on its line\n\
             main.hlsl(9,2): error: #ifdef: expected a macro name on its line\n\
             main.hlsl(11,5): error: 'defined' needs a macro name: 'defined NAME' or 'defined(NAME)'\n"
        );
        assert_eq!(
            messages("#endif x"),
            "main.hlsl(1,1): error: #endif without #if\n"
        );
        assert_eq!(
            messages("#ifdef X Y\n#else W\n#if 0\n#else V\n#endif U\n#endif Z"),
            "main.hlsl(1,10): warning: 'Y' after #ifdef NAME ignored\n\
             main.hlsl(2,7): warning: 'W' after #else ignored\n\
             main.hlsl(4,7): warning: 'V' after #else ignored\n\
             main.hlsl(5,8): warning: 'U' after #endif ignored\n\
             main.hlsl(6,8): warning: 'Z' after #endif ignored\n"
        );
        assert_eq!(messages("#if 0\n#ifdef X Y\n#else W\n#endif Z\n#endif"), "");
    }

    #[test]
    fn other_broken_directives_are_errors_at_their_place_and_all_are_reported() {
        assert_eq!(
            messages("#foo bar\n#\n#define\n#define 1 x\n#define F(a b\n#define G(a,\n#undef\n#error this is \"it\"\n#define defined 1\n#define H(...\nok"),
            "main.hlsl(1,2): error: unknown preprocessor directive '#foo'\n\
             main.hlsl(3,2): error: #define: expected a macro name on its line\n\
             main.hlsl(4,9): error: #define: expected a macro name, found '1'\n\
             main.hlsl(5,13): error: #define: expected ',' or ')' after a parameter, found 'b'\n\
             main.hlsl(6,2): error: #define: expected a parameter name or ')' on its line\n\
             main.hlsl(7,2): error: #undef: expected a macro name on its line\n\
             main.hlsl(8,1): error: #error this is \"it\"\n\
             main.hlsl(9,9): error: 'defined' cannot be a macro name\n\
             main.hlsl(10,2): error: #define: expected ')' after '...' on its line\n"
        );
    }

    #[test]
    fn tokens_from_macros_are_placed_at_the_invocation_and_arguments_where_written() {
        let (out, _, _) = session(
            "#define F(a) (a + k)\nx\n  F(\n y)",
            &MemoryLoader::default(),
            &Options::default(),
        );
        let got: Vec<_> = out
            .iter()
            .map(|t| (t.text.as_str(), t.loc.line, t.loc.col))
            .collect();
        assert_eq!(
            got,
            [
                ("x", 2, 1),
                ("(", 3, 3),
                ("y", 4, 2),
                ("+", 3, 3),
                ("k", 3, 3),
                (")", 3, 3)
            ]
        );
    }

    #[test]
    fn line_and_file_are_predefined_and_line_moves_them() {
        assert_eq!(line("__LINE__\n\n__LINE__ __FILE__"), "1 3 \"main.hlsl\"");
        assert_eq!(line("#define KEY __LINE__\n\nKEY"), "3");
        assert_eq!(line("#define __LINE__ pass\n__LINE__"), "pass");
        assert_eq!(line("#ifdef __LINE__\nyes\n#endif"), "yes");
        let (out, diags, sources) = session(
            "a\n#line 100\nb\n#line 7 \"other.fx\"\nc\n#define N 50\n#line N\nd\nx @",
            &MemoryLoader::default(),
            &Options::default(),
        );
        let got: Vec<_> = out
            .iter()
            .map(|t| (t.text.as_str(), sources.name(t.loc.file), t.loc.line))
            .collect();
        assert_eq!(
            got,
            [
                ("a", "main.hlsl", 1),
                ("b", "main.hlsl", 100),
                ("c", "other.fx", 7),
                ("d", "other.fx", 50),
                ("x", "other.fx", 51)
            ]
        );
        // The lexer's messages keep the place in the file as it is.
        assert_eq!(
            diags.render(&sources),
            "main.hlsl(9,3): error: unexpected character '@'\n"
        );
        assert_eq!(
            messages("#line x\n#line 99999999999\n#line 5 x"),
            "main.hlsl(1,7): error: #line: expected a line number, found 'x'\n\
             main.hlsl(2,7): error: #line: 99999999999 is beyond the last line number, 2147483647\n\
             main.hlsl(3,9): error: #line N: expected a file name in quotes, found 'x'\n"
        );
    }

    #[test]
    fn pragmas_pack_matrix_goes_to_the_parser_others_are_handled_or_warned_about() {
        let (out, diags, sources) = session(
            "a\n  #pragma pack_matrix( row_major )\n#pragma pack_matrix(column_major)\n\
             #define VALUE row_major\n#pragma pack_matrix(VALUE)\n#pragma warning(disable : 3206)\n\
             #pragma message(\"hello\")\n#pragma def(ps_1_1, c0, 0, 0, 0, 0)\n#pragma\nb",
            &MemoryLoader::default(),
            &Options::default(),
        );
        let got: Vec<_> = out
            .iter()
            .map(|t| (t.kind, t.text.as_str(), t.loc.line, t.loc.col))
            .collect();
        assert_eq!(
            got,
            [
                (TokenKind::Ident, "a", 1, 1),
                (TokenKind::Pragma, "pack_matrix(row_major)", 2, 3),
                (TokenKind::Pragma, "pack_matrix(column_major)", 3, 1),
                (TokenKind::Ident, "b", 10, 1),
            ]
        );
        assert_eq!(
            diags.render(&sources),
            "main.hlsl(5,9): warning: #pragma pack_matrix(VALUE): expected pack_matrix(row_major) \
             or pack_matrix(column_major); ignored\n\
             main.hlsl(7,1): warning: hello\n\
             main.hlsl(8,9): warning: #pragma def (a register filled before the shader runs) is \
             not supported; ignored\n\
             main.hlsl(9,1): warning: #pragma without a name ignored\n"
        );
        // Never macro-expanded: this is no pack_matrix.
        assert_eq!(
            messages("#define KEY pack_matrix\n#pragma KEY(row_major)"),
            "main.hlsl(2,9): warning: unknown pragma 'KEY' ignored\n"
        );
    }

    #[test]
    fn command_line_defines_come_first() {
        let options = Options {
            defines: vec![
                ("ONE".into(), None),
                ("TWO".into(), Some("2".into())),
                ("KEY(a)".into(), Some("value".into())),
                ("EMPTY".into(), Some(String::new())),
            ],
            ..Options::default()
        };
        let (out, diags, sources) = session(
            "ONE TWO EMPTY KEY(a)\n#undef ONE\nONE",
            &MemoryLoader::default(),
            &options,
        );
        let t: Vec<_> = out.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(t, ["1", "2", "KEY", "(", "a", ")", "ONE"]);
        assert_eq!(
            diags.render(&sources),
            "<command line>(3,1): warning: -D 'KEY(a)': not a macro name, ignored\n"
        );
    }

    fn includes() -> MemoryLoader {
        let mut l = MemoryLoader::default();
        l.add("/src/beside.h", "beside");
        l.add(
            "/src/sub/inner.h",
            "#include \"beside.h\"\n#include \"outer.h\"\ninner",
        );
        l.add("/src/outer.h", "outer_of_src");
        l.add("/inc1/outer.h", "outer_of_inc1");
        l.add("/inc1/only1.h", "only1");
        l.add("/inc2/only1.h", "only1_of_inc2");
        l.add("/inc2/only2.h", "only2");
        l.add("/inc1/ spaced ", "spaced");
        l
    }

    fn with_dirs() -> Options {
        Options {
            include_dirs: vec![PathBuf::from("/inc1"), PathBuf::from("/inc2")],
            ..Options::default()
        }
    }

    #[test]
    fn quoted_includes_look_beside_the_file_then_its_includers_then_the_dirs() {
        let (out, diags, sources) = session(
            "#include \"beside.h\"\n#include \"sub/inner.h\"\n#include \"only1.h\"\n\
             #include \"only2.h\"\nend",
            &includes(),
            &with_dirs(),
        );
        assert!(diags.list.is_empty(), "{}", diags.render(&sources));
        let t: Vec<_> = out.iter().map(|t| t.text.as_str()).collect();
        // `sub/inner.h` finds `beside.h` and `outer.h` beside its includer, in `/src`.
        assert_eq!(
            t,
            [
                "beside",
                "beside",
                "outer_of_src",
                "inner",
                "only1",
                "only2",
                "end"
            ]
        );
        // Included files are named as the directive spells them, with the path found.
        let file = out[3].loc.file;
        assert_eq!(sources.name(file), "sub/inner.h");
        assert_eq!(
            sources.get(file).path.as_deref(),
            Some(Path::new("/src/sub/inner.h"))
        );
        assert_eq!((out[3].loc.line, out[3].loc.col), (3, 1));
    }

    #[test]
    fn angled_includes_look_in_the_dirs_only_and_keep_spaces() {
        let (out, diags, sources) = session(
            "#include <outer.h>\n#include <only2.h>\n#include < spaced >\n#include <beside.h>",
            &includes(),
            &with_dirs(),
        );
        let t: Vec<_> = out.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(t, ["outer_of_inc1", "only2", "spaced"]);
        assert_eq!(
            diags.render(&sources),
            "main.hlsl(4,2): error: cannot open include file 'beside.h': not found; looked in \
             '/inc1', '/inc2'\n"
        );
    }

    #[test]
    fn include_errors_name_the_file_and_where_it_was_looked_for() {
        let (out, diags, sources) = session(
            "#include \"nope.h\"\n#include <nope.h>\n#include\n#include nope\n#include <open\n\
             #define H \"beside.h\"\n#include H\n#include \"\"\nafter",
            &includes(),
            &Options::default(),
        );
        let t: Vec<_> = out.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(t, ["beside", "after"]);
        assert_eq!(
            diags.render(&sources),
            "main.hlsl(1,2): error: cannot open include file 'nope.h': not found; looked in '/src'\n\
             main.hlsl(2,2): error: cannot open include file 'nope.h': not found; no folder to \
             look in (the including file has no path and no -I folder was given)\n\
             main.hlsl(3,2): error: #include: expected \"file\" or <file> on its line\n\
             main.hlsl(4,10): error: #include: expected \"file\" or <file>, found 'nope'\n\
             main.hlsl(5,10): error: #include <file: '>' expected on its line\n\
             main.hlsl(8,2): error: #include: the file name is empty\n"
        );
    }

    #[test]
    fn include_state_carries_across_files() {
        // After vkd3d's include test: definitions, #undef and #pragma once across files,
        // and an invocation whose arguments start in one file and end in another.
        let mut l = MemoryLoader::default();
        l.add(
            "/src/file1",
            "#define BRONTES\n#include \"file3\"\n#ifndef BRONTES\n#define STEROPES\n#endif",
        );
        l.add(
            "/inc/ file2 ",
            "#ifdef STEROPES\n#define ARGES pass\n#undef STEROPES\n#include < file2 >\n#endif",
        );
        l.add("/src/file3", "#undef BRONTES");
        l.add("/src/file4", "FUNC(pa");
        l.add("/src/once.h", "#pragma once\nonce");
        let options = Options {
            include_dirs: vec![PathBuf::from("/inc")],
            ..Options::default()
        };
        let (out, diags, sources) = session(
            "#include \"file1\"\n#include < file2 >\nARGES\n#define FUNC(a, b) a ## b\n\
             #include \"file4\"\n,ss)\n#include \"once.h\"\n#include \"once.h\"",
            &l,
            &options,
        );
        assert!(diags.list.is_empty(), "{}", diags.render(&sources));
        let t: Vec<_> = out.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(t, ["pass", "pass", "once"]);
    }

    #[test]
    fn an_include_that_does_not_close_its_if_is_an_error_in_it() {
        let mut l = MemoryLoader::default();
        l.add("/src/open.h", "#if 1\nx");
        let (out, diags, sources) =
            session("#include \"open.h\"\ny\n#endif", &l, &Options::default());
        let t: Vec<_> = out.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(t, ["x", "y"]);
        assert_eq!(
            diags.render(&sources),
            "open.h(1,1): error: #if without #endif: the file ends before the #endif of this #if\n\
             main.hlsl(3,1): error: #endif without #if\n"
        );
    }

    #[test]
    fn a_file_that_includes_itself_meets_the_depth_limit() {
        let mut l = MemoryLoader::default();
        l.add("/src/self.h", "x\n#include \"self.h\"\ny");
        let (out, diags, sources) = session("#include \"self.h\"", &l, &Options::default());
        assert_eq!(out.len(), 63);
        assert_eq!(
            diags.render(&sources),
            "self.h(2,2): error: preprocessing stopped: #include \"self.h\" nested more than 64 \
             deep (does it include itself?)\n"
        );
    }

    #[test]
    fn includes_that_multiply_meet_the_count_limit() {
        let mut l = MemoryLoader::default();
        for i in 0..40 {
            l.add(
                format!("/src/f{i}.h"),
                format!("#include \"f{n}.h\"\n#include \"f{n}.h\"", n = i + 1),
            );
        }
        l.add("/src/f40.h", "");
        let (_, diags, sources) = session("#include \"f0.h\"", &l, &Options::default());
        assert_eq!(diags.errors(), 1, "{}", diags.render(&sources));
        assert!(diags.list[0].message.contains("more than 10000 #includes"));
    }

    #[test]
    fn a_big_file_included_again_and_again_meets_the_byte_limit_and_is_kept_once() {
        let mut l = MemoryLoader::default();
        l.add("/src/big.h", format!("/*{}*/", " ".repeat(1 << 20)));
        let src = "#include \"big.h\"\n".repeat(100);
        let options = Options {
            limits: Limits {
                include_bytes: 50 << 20,
                ..Limits::default()
            },
            ..Options::default()
        };
        let (_, diags, sources) = session(&src, &l, &options);
        assert_eq!(
            diags.render(&sources),
            "main.hlsl(50,2): error: preprocessing stopped: #includes read more than 52428800 \
             bytes\n"
        );
        assert_eq!(sources.files.len(), 2);
    }

    #[test]
    fn a_doubling_macro_meets_the_expansion_limit() {
        let mut src = String::from("#define a0 x\n");
        for i in 1..=40 {
            src.push_str(&format!("#define a{i} a{j} a{j}\n", j = i - 1));
        }
        src.push_str("a40");
        let options = Options {
            limits: Limits {
                expansion: 100_000,
                ..Limits::default()
            },
            ..Options::default()
        };
        let (out, diags, sources) = session(&src, &MemoryLoader::default(), &options);
        assert!(out.len() < 100_000);
        assert_eq!(
            diags.render(&sources),
            "main.hlsl(42,1): error: preprocessing stopped: macros made more than 100000 tokens \
             expanding this line (more than a shader needs: macros that grow without end?)\n"
        );
        // With the default limits too, in bounded time and memory.
        let (_, diags, _) = session(&src, &MemoryLoader::default(), &Options::default());
        assert_eq!(diags.errors(), 1);
    }

    #[test]
    fn doubling_arguments_and_deep_invocations_meet_their_limits() {
        let mut src = String::from("#define f(x) x x\n");
        src.push_str(&"f(".repeat(40));
        src.push('1');
        src.push_str(&")".repeat(40));
        let (_, diags, _) = session(&src, &MemoryLoader::default(), &Options::default());
        assert_eq!(diags.errors(), 1);
        assert!(
            diags.list[0].message.contains("macros made more than"),
            "{:?}",
            diags.list
        );
        let mut src = String::from("#define g(x) x\n");
        src.push_str(&"g(".repeat(10_000));
        src.push_str(&")".repeat(10_000));
        let (_, diags, sources) = session(&src, &MemoryLoader::default(), &Options::default());
        assert_eq!(
            diags.render(&sources),
            "main.hlsl(2,201): error: preprocessing stopped: macro invocations nested more than \
             100 deep in arguments\n"
        );
    }

    #[test]
    fn a_long_chain_of_macros_meets_the_expansion_limit() {
        let n = 50_000;
        let mut src: String = (0..n)
            .map(|i| format!("#define m{i} m{}\n", i + 1))
            .collect();
        src.push_str("m0");
        let (out, diags, sources) = session(&src, &MemoryLoader::default(), &Options::default());
        assert!(out.is_empty());
        assert_eq!(diags.errors(), 1, "{}", diags.render(&sources));
        assert!(diags.list[0]
            .message
            .contains("macros made more than 2097152 tokens"));
    }

    #[test]
    fn a_condition_nested_too_deep_is_an_error() {
        let deep = format!(
            "#if {}1{}\nx\n#endif\ny",
            "(".repeat(50_000),
            ")".repeat(50_000)
        );
        let (out, diags, _) = session(&deep, &MemoryLoader::default(), &Options::default());
        assert_eq!(out.len(), 1);
        assert_eq!(diags.errors(), 1);
        assert!(diags.list[0].message.contains("nested at most 200 deep"));
    }

    #[test]
    fn deep_conditionals_and_huge_lines_are_only_work() {
        let n = 100_000;
        let src = format!("{}x\n{}", "#if 1\n".repeat(n), "#endif\n".repeat(n));
        assert_eq!(line(&src), "x");
        let src = format!("{}x\n", "#if 1\n".repeat(n));
        let (out, diags, _) = session(&src, &MemoryLoader::default(), &Options::default());
        assert_eq!(out.len(), 1);
        assert_eq!(diags.errors(), 17);
        assert_eq!(
            diags.list[16].message,
            format!("and {} more #if without #endif", n - 16)
        );
        let huge = "a + ".repeat(300_000);
        let body = "a + ".repeat(50_000);
        assert_eq!(texts(&format!("#define H {body}b\nH H")).len(), 200_002);
        let options = Options {
            limits: Limits {
                tokens: 1000,
                ..Limits::default()
            },
            ..Options::default()
        };
        let (out, diags, sources) = session(&huge, &MemoryLoader::default(), &options);
        assert_eq!(out.len(), 1000);
        assert_eq!(
            diags.render(&sources),
            "main.hlsl(1,2001): error: preprocessing stopped: more than 1000 tokens (the limit of \
             a shader)\n"
        );
    }

    /// Every shader source of the corpus (`.hlsl` and `.fx`) preprocesses without an
    /// error, with no exception: Microsoft's refusals there (`*.refused.txt`) are all of
    /// the parser, the checker or the code generator (X3xxx, X4xxx), none of the
    /// preprocessor (X1xxx). The 32 pragmas are the `pack_matrix` lines of the
    /// majority-pragma sections in `vkd3d/` and `legacy/` (34, less the two with a macro).
    #[test]
    fn corpus_sources_preprocess_without_errors() {
        let Some(dir) = crate::test_corpus::corpus("hlsl") else {
            return;
        };
        let mut files = Vec::new();
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "hlsl" || x == "fx") {
                    files.push(p);
                }
            }
        }
        files.sort();
        let mut failed = Vec::new();
        let mut pragmas = 0;
        for path in &files {
            let mut sources = Sources::default();
            let id = sources.add(SourceFile {
                name: path.file_name().unwrap().to_string_lossy().into_owned(),
                path: Some(path.clone()),
                text: FsLoader.load(path).unwrap(),
            });
            let mut diags = Diagnostics::default();
            let out = preprocess(&mut sources, id, &Options::default(), &FsLoader, &mut diags);
            pragmas += out.iter().filter(|t| t.kind == TokenKind::Pragma).count();
            if diags.has_errors() || out.is_empty() {
                failed.push(diags.render(&sources));
            }
        }
        eprintln!(
            "{} of {} corpus sources preprocess without an error ({pragmas} pack_matrix pragmas)",
            files.len() - failed.len(),
            files.len()
        );
        assert!(files.len() > 1000, "only {} sources found", files.len());
        assert!(failed.is_empty(), "{}", failed.join(""));
        assert_eq!(pragmas, 32);
    }
}
