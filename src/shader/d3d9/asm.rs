//! asm text to D3D9 bytecode: the syntax [`super::disasm`] prints, D3DX/fxc print and
//! people write (`shared/formats/d3d9-bytecode.md` §9; grammar facts from Wine's
//! `asmshader.l`/`asmshader.y` and its tests).
//!
//! Accepted beyond the disassembler's own output:
//! * `vs_1_1`/`vs.1.1`, `ps_2_a`/`ps_2_b`/`vs_2_a` (as 2_x); any case; any whitespace.
//! * `//` and `;` line comments, `/* */` block comments (Wine runs a C preprocessor first);
//!   a `/*` that is never closed is an error. Comments after the version line are kept
//!   (see [Comments](#comments)).
//! * Preprocessor lines: `\` line continuation, object-like `#define NAME text` (expanded
//!   in later lines), `#undef`, `#ifdef`/`#ifndef`/`#else`/`#endif`, and `#line`/`#pragma`
//!   (ignored). `#include` is refused: there is no include handler.
//! * Register forms `c[a0.x + 4]`, `c4[a0.x]`, `c[2 + a0.x + 12]`, `c4[2]`, `v[aL + 12]`.
//! * `def` values with `f` suffixes, exponents, `0.`; `0x…` gives raw bits (our spelling
//!   for non-finite values).
//! * The data comments of [`super::disasm`] (`// comment-block:`, `// raw-tokens:`,
//!   `// trailing-data:`).
//!
//! Every error names the line and column; validation ([`super::validate`]) runs on the
//! result unless [`assemble_unvalidated`] is used.
//!
//! # Comments
//! Every comment written after the version line is stored where it stands in the token
//! stream, as a comment block the runtime skips: a [`UserComment`] (FourCC `'SFCM'`, then
//! a DWORD with the placement and the text's length in bytes, then the text in UTF-8,
//! NUL-padded). [`super::disasm`] prints it back as the same text at the same place, so
//! text → bytes → text → bytes gives the same bytes twice. One block per line:
//! * A line without code (`// note`, `; note`, `/* note */`, any line inside a `/* */`
//!   comment, even an empty one): the whole line, indentation included
//!   ([`Placement::OwnLine`]).
//! * A line with code: what follows the code, from its last character to the end of the
//!   line (`  // tweak`, spaces included), in a block after the instruction's tokens
//!   ([`Placement::AfterCode`]). A `/* */` inside the code (`mov r0, /* a */ r1`) is moved
//!   there, after a space: `mov r0, r1 /* a */`. What comes before the code (`/* a */ mov
//!   r0, r1`, the end of a `/* */` begun on an earlier line) is kept as a line of its own,
//!   trailing spaces dropped, in a block before the instruction.
//! * The version line's comment after the code goes after the version token — after the
//!   CTAB comment when one follows it, so that a table the `.sdp` view inserts there (it
//!   keeps the old table when the new text has none) leaves the comment on the version line.
//! * `\` continuations are joined first: a continued line comes back as one line.
//!
//! Not stored: everything above the version line (the disassembler's header, which it
//! regenerates from the CTAB, or another compiler's), blank lines, comments on
//! preprocessor lines and in branches `#ifdef` leaves out, the data comments, and the two
//! lines the disassembler writes about the shader: `// approximately N instruction slots
//! used …` and `// '…' with an encoding that has no asm spelling:`. A comment longer than
//! a block holds ([`UserComment::MAX_TEXT_BYTES`]) is an error at its line and column.
//! [`assemble_dropping_comments`] stores no comment, as D3DX does.

use std::collections::HashMap;
use std::ops::Range;

use super::bytecode::{
    self, Param, Placement, ShaderKind, UserComment, Version, COMMENT_TOKEN, END_TOKEN,
};
use super::ctab::{CTAB_FOURCC, MAX_COMMENT_DWORDS};
use super::disasm::{
    dcl_uses_usage, is_generated_comment, COMMENT_BLOCK, RAW_TOKENS, TRAILING_DATA,
};
use super::opcodes::{self, Controls, Layout, OpcodeInfo, COMPARISONS};
use super::registers::{parse_register_prefix, RegisterType, CONST_BANK_SIZE, MAX_NUMBER};
use super::syntax::{
    parse_mask, parse_swizzle, source_modifier, RESULT_MODIFIERS, SAMPLER_TYPES, SHIFTS, USAGES,
};
use super::validate;

/// An assembly error at a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct AsmError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Assembles and validates for the declared shader model ([`validate::Level::Full`]).
pub fn assemble(text: &str) -> Result<Vec<u8>, AsmError> {
    assemble_with(text, Some(validate::Level::Full), true)
}

/// Assembles with only the checks D3DX's assembler makes under
/// `D3DCOMPILE_SKIP_VALIDATION` ([`validate::Level::Syntax`]).
pub fn assemble_skip_validation(text: &str) -> Result<Vec<u8>, AsmError> {
    assemble_with(text, Some(validate::Level::Syntax), true)
}

/// Assembles without the per-model validation (encoding errors are still errors).
pub fn assemble_unvalidated(text: &str) -> Result<Vec<u8>, AsmError> {
    assemble_with(text, None, true)
}

/// Assembles and validates like [`assemble`], but stores no comment of the text, as
/// D3DX's assembler does: for bytecode that must equal what D3DX or Wine makes of the
/// same text (the data comments are still read).
pub fn assemble_dropping_comments(text: &str) -> Result<Vec<u8>, AsmError> {
    assemble_with(text, Some(validate::Level::Full), false)
}

fn assemble_with(
    text: &str,
    level: Option<validate::Level>,
    keep_comments: bool,
) -> Result<Vec<u8>, AsmError> {
    let lines = preprocess(text)?;
    let mut asm = Assembler {
        keep_comments,
        ..Assembler::default()
    };
    for line in &lines {
        asm.line(line)?;
    }
    asm.flush_deferred();
    let version = asm.version.ok_or_else(|| AsmError {
        line: lines.last().map_or(1, |l| l.line),
        column: 1,
        message: "no shader version line (e.g. vs_1_1, ps.2.0)".into(),
    })?;
    let mut out: Vec<u8> = Vec::with_capacity(4 * (asm.dwords.len() + 2));
    out.extend_from_slice(&version.token().to_le_bytes());
    for d in asm.dwords.iter().chain([&END_TOKEN]).chain(&asm.trailing) {
        out.extend_from_slice(&d.to_le_bytes());
    }
    let shader =
        bytecode::parse(&out).map_err(|e| asm.error_at_offset(e.offset(), e.to_string()))?;
    if let Some(level) = level {
        if let Some(d) = validate::validate_at(&shader, level).into_iter().next() {
            return Err(asm.error_at_offset(d.offset, d.message));
        }
    }
    Ok(out)
}

/// A logical source line after preprocessing: code with comments blanked out, the text
/// of a trailing `//` comment (which may be a data comment), and the comments kept.
struct Line {
    line: usize,
    code: String,
    comment: Option<(usize, String)>,
    kept: KeptComments,
}

fn err(line: usize, column: usize, message: impl Into<String>) -> AsmError {
    AsmError {
        line,
        column,
        message: message.into(),
    }
}

/// Splices `\` continuations, strips comments and runs the preprocessor lines.
fn preprocess(text: &str) -> Result<Vec<Line>, AsmError> {
    let mut spliced: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let (start, mut acc) = pending.take().unwrap_or((i + 1, String::new()));
        match raw.strip_suffix('\\') {
            Some(head) => {
                acc.push_str(head);
                pending = Some((start, acc));
            }
            None => {
                acc.push_str(raw);
                spliced.push((start, acc));
            }
        }
    }
    if let Some(p) = pending {
        spliced.push(p);
    }

    let mut defines: HashMap<String, String> = HashMap::new();
    // Conditional stack: (this branch active, some branch taken, parent active).
    let mut conds: Vec<(bool, bool)> = Vec::new();
    let mut in_block = false;
    // Where the `/*` that is open began.
    let mut opened = (0, 0);
    let mut out = Vec::new();
    for (line, text) in spliced {
        let lexed = lex(&text, &mut in_block);
        if in_block && !lexed.in_block_at_start {
            opened = (line, lexed.comments.last().map_or(1, |r| r.start + 1));
        }
        let kept = kept_comments(&text, &lexed);
        let Lexed {
            code,
            line_comment: comment,
            ..
        } = lexed;
        let active = conds.iter().all(|c| c.0);
        let trimmed = code.trim_start();
        if let Some(directive) = trimmed.strip_prefix('#') {
            let column = code.len() - trimmed.len() + 1;
            let directive = directive.trim();
            let (name, rest) = directive
                .split_once(|c: char| c.is_whitespace())
                .map_or((directive, ""), |(a, b)| (a, b.trim()));
            match name {
                "ifdef" | "ifndef" => {
                    let defined = defines.contains_key(rest);
                    conds.push((defined == (name == "ifdef"), false));
                }
                "else" => {
                    let c = conds
                        .last_mut()
                        .ok_or_else(|| err(line, column, "#else without #if"))?;
                    c.0 = !c.0 && !c.1;
                }
                "endif" => {
                    conds
                        .pop()
                        .ok_or_else(|| err(line, column, "#endif without #if"))?;
                }
                _ if !active => {}
                "define" => {
                    let (n, body) = rest
                        .split_once(|c: char| c.is_whitespace())
                        .map_or((rest, ""), |(a, b)| (a, b.trim()));
                    if n.is_empty() || n.contains('(') {
                        return Err(err(
                            line,
                            column,
                            "#define needs a name; macros with parameters are not supported",
                        ));
                    }
                    defines.insert(n.to_string(), body.to_string());
                }
                "undef" => {
                    defines.remove(rest);
                }
                "line" | "pragma" | "" => {}
                "include" => {
                    return Err(err(
                        line,
                        column,
                        format!("#include {rest}: includes are not supported (no include handler)"),
                    ))
                }
                "error" => return Err(err(line, column, format!("#error {rest}"))),
                other => {
                    return Err(err(
                        line,
                        column,
                        format!("unsupported preprocessor directive #{other}"),
                    ))
                }
            }
            if let Some(c) = conds.last_mut() {
                c.1 |= c.0;
            }
            continue;
        }
        if !active {
            continue;
        }
        let code = expand(&code, &defines).map_err(|message| AsmError {
            line,
            column: 1,
            message,
        })?;
        out.push(Line {
            line,
            code,
            comment,
            kept,
        });
    }
    if in_block {
        return Err(err(opened.0, opened.1, "this '/*' comment is never closed"));
    }
    Ok(out)
}

/// One logical line with its comments found.
struct Lexed {
    /// The line with every comment blanked out (byte positions kept) and cut at a `//` or
    /// `;` comment.
    code: String,
    /// Column and text (after the `//`) of a `//` comment.
    line_comment: Option<(usize, String)>,
    /// Byte ranges of the comments, markers included, in order.
    comments: Vec<Range<usize>>,
    /// The line began inside a `/* */` comment.
    in_block_at_start: bool,
}

/// Finds the comments of a line; `in_block` says whether a `/* */` comment is open before
/// and after it.
fn lex(text: &str, in_block: &mut bool) -> Lexed {
    let b = text.as_bytes();
    let in_block_at_start = *in_block;
    let mut code = String::with_capacity(text.len());
    let mut comments = Vec::new();
    let mut opened = 0;
    let mut line_comment = None;
    let mut i = 0;
    while i < b.len() {
        if *in_block {
            if b[i..].starts_with(b"*/") {
                *in_block = false;
                code.push_str("  ");
                i += 2;
                comments.push(opened..i);
            } else {
                code.push(' ');
                i += 1;
            }
            continue;
        }
        if b[i..].starts_with(b"/*") {
            *in_block = true;
            opened = i;
            code.push_str("  ");
            i += 2;
            continue;
        }
        if b[i..].starts_with(b"//") || b[i] == b';' {
            if b[i] == b'/' {
                line_comment = Some((i + 1, text[i + 2..].to_string()));
            }
            comments.push(i..b.len());
            break;
        }
        let ch = text[i..].chars().next().unwrap_or(' ');
        code.push(ch);
        i += ch.len_utf8();
    }
    if *in_block {
        comments.push(opened..b.len());
    }
    Lexed {
        code,
        line_comment,
        comments,
        in_block_at_start,
    }
}

/// The comments of one line that become [`UserComment`] blocks, each with its 1-based
/// column (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KeptComments {
    /// The whole line when it has no code; what precedes the code otherwise.
    pub(crate) own_line: Option<(usize, String)>,
    /// What follows the code (with any comment from inside the code in front).
    pub(crate) after_code: Option<(usize, String)>,
}

fn kept_comments(text: &str, lexed: &Lexed) -> KeptComments {
    let comments = &lexed.comments;
    // A data comment header is the assembler's, not the user's.
    let data_at = lexed
        .line_comment
        .as_ref()
        .filter(|(_, c)| data_comment_header(c).is_some())
        .map(|(column, _)| column - 1);
    let Some(start) = lexed.code.find(|c: char| !c.is_whitespace()) else {
        let is_comment = lexed.in_block_at_start || !comments.is_empty();
        let generated = !lexed.in_block_at_start && is_generated_comment(text);
        if !is_comment || generated || data_at.is_some() {
            return KeptComments::default();
        }
        let column = comments.first().map_or(1, |r| r.start + 1);
        return KeptComments {
            own_line: Some((column, text.to_string())),
            after_code: None,
        };
    };
    let end = lexed.code.trim_end().len();
    let own_line = comments
        .first()
        .filter(|r| r.start < start)
        .map(|r| (r.start + 1, text[..start].trim_end().to_string()));
    let tail_end = data_at.unwrap_or(text.len());
    let mut after = String::new();
    let mut column = None;
    for r in comments.iter().filter(|r| r.start >= start && r.end <= end) {
        column.get_or_insert(r.start + 1);
        after.push(' ');
        after.push_str(&text[r.clone()]);
    }
    if let Some(r) = comments
        .iter()
        .find(|r| r.start >= end && r.start < tail_end)
    {
        column.get_or_insert(r.start + 1);
        let tail = &text[end..tail_end];
        after.push_str(if data_at.is_some() {
            tail.trim_end()
        } else {
            tail
        });
    }
    KeptComments {
        own_line,
        after_code: column.map(|c| (c, after)),
    }
}

/// How the assembler reads one line the disassembler prints, starting in the `/* */`
/// state `in_block`: the line's code (comments blanked, trimmed) and the comments it keeps.
/// `None` when the text would not read as one line of its own: a line break in it, a
/// final `\` (a continuation) or a final `\r` (dropped with the line break).
pub(crate) fn read_line(text: &str, in_block: &mut bool) -> Option<(String, KeptComments)> {
    if text.contains('\n') || text.ends_with('\\') || text.ends_with('\r') {
        return None;
    }
    let lexed = lex(text, in_block);
    let kept = kept_comments(text, &lexed);
    Some((lexed.code.trim().to_string(), kept))
}

/// The longest a line may grow by `#define` expansion. A macro is not expanded inside
/// its own expansion (as in C), but a chain of macros each naming the next several times
/// grows exponentially; past this the line is an error, not an allocation.
const MAX_EXPANDED_LINE: usize = 1 << 20;

/// Replaces defined names (whole identifiers) by their text, and names in that text in
/// turn, except a macro within its own expansion (C's rule: `#define R R R` gives
/// `R R`).
fn expand(code: &str, defines: &HashMap<String, String>) -> Result<String, String> {
    if defines.is_empty() {
        return Ok(code.to_string());
    }
    let mut out = String::with_capacity(code.len());
    expand_into(code, defines, &mut Vec::new(), &mut out)?;
    Ok(out)
}

fn expand_into<'a>(
    text: &str,
    defines: &'a HashMap<String, String>,
    active: &mut Vec<&'a str>,
    out: &mut String,
) -> Result<(), String> {
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !(c.is_ascii_alphabetic() || c == '_') {
            out.push(c);
            continue;
        }
        let mut end = i + c.len_utf8();
        while let Some(&(j, d)) = chars.peek() {
            if d.is_ascii_alphanumeric() || d == '_' {
                end = j + 1;
                chars.next();
            } else {
                break;
            }
        }
        let word = &text[i..end];
        match defines.get_key_value(word) {
            Some((name, body)) if !active.contains(&name.as_str()) => {
                active.push(name);
                expand_into(body, defines, active, out)?;
                active.pop();
            }
            _ => out.push_str(word),
        }
        if out.len() > MAX_EXPANDED_LINE {
            return Err(format!(
                "#define expansion makes this line longer than {} MiB",
                MAX_EXPANDED_LINE >> 20
            ));
        }
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Num(String),
    Punct(char),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    col: usize,
}

fn tokenize(code: &str, line: usize) -> Result<Vec<Token>, AsmError> {
    let b = code.as_bytes();
    let mut toks: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let col = i + 1;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let after_value = matches!(
            toks.last().map(|t| &t.tok),
            Some(Tok::Word(_) | Tok::Num(_) | Tok::Punct(']'))
        );
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            toks.push(Token {
                tok: Tok::Word(code[start..i].to_string()),
                col,
            });
        } else if c.is_ascii_digit()
            || (c == b'.' && !after_value && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let start = i;
            if b[i..].len() > 1 && c == b'0' && matches!(b[i + 1], b'x' | b'X') {
                i += 2;
                while i < b.len() && b[i].is_ascii_hexdigit() {
                    i += 1;
                }
            } else {
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                    i += 1;
                }
                if i < b.len() && matches!(b[i], b'e' | b'E') {
                    let mut j = i + 1;
                    if j < b.len() && matches!(b[j], b'+' | b'-') {
                        j += 1;
                    }
                    if j < b.len() && b[j].is_ascii_digit() {
                        i = j;
                        while i < b.len() && b[i].is_ascii_digit() {
                            i += 1;
                        }
                    }
                }
                if i < b.len() && matches!(b[i], b'f' | b'F') {
                    i += 1;
                }
            }
            toks.push(Token {
                tok: Tok::Num(code[start..i].to_string()),
                col,
            });
        } else if b",[]+-()!.".contains(&c) {
            toks.push(Token {
                tok: Tok::Punct(c as char),
                col,
            });
            i += 1;
        } else {
            let ch = code[i..].chars().next().unwrap_or('?');
            return Err(err(line, col, format!("unexpected character '{ch}'")));
        }
    }
    Ok(toks)
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Word(w) | Tok::Num(w) => format!("'{w}'"),
            Tok::Punct(c) => format!("'{c}'"),
        }
    }
}

/// A data comment being collected.
struct Pending {
    kind: String,
    needed: usize,
    dwords: Vec<u32>,
    line: usize,
    column: usize,
}

#[derive(Default)]
struct Assembler {
    version: Option<Version>,
    dwords: Vec<u32>,
    trailing: Vec<u32>,
    /// (byte offset of an emitted item, its line, its column).
    locations: Vec<(usize, usize, usize)>,
    pending: Option<Pending>,
    last_line: usize,
    /// The comment block of the version line, waiting for the CTAB comment that may follow.
    deferred: Option<Vec<u32>>,
    /// Store the comments of the text.
    keep_comments: bool,
}

impl Assembler {
    fn error_at_offset(&self, offset: usize, message: String) -> AsmError {
        let (line, column) = self
            .locations
            .iter()
            .rev()
            .find(|(o, _, _)| *o <= offset)
            .map_or((self.last_line.max(1), 1), |&(_, l, c)| (l, c));
        err(line, column, message)
    }

    fn offset(&self) -> usize {
        4 * (self.dwords.len() + 1)
    }

    fn line(&mut self, line: &Line) -> Result<(), AsmError> {
        self.last_line = line.line;
        let none = KeptComments::default();
        let kept = if self.keep_comments {
            &line.kept
        } else {
            &none
        };
        let code = line.code.trim();
        if let Some(p) = &mut self.pending {
            let words = line
                .comment
                .as_ref()
                .filter(|_| code.is_empty())
                .map(|(_, c)| hex_words(c))
                .unwrap_or_default();
            if words.is_empty() {
                return Err(err(
                    p.line,
                    p.column,
                    format!(
                        "{} needs {} dwords of hex on the following '//' lines, found {}",
                        p.kind,
                        p.needed,
                        p.dwords.len()
                    ),
                ));
            }
            p.dwords.extend(words);
            if p.dwords.len() > p.needed {
                return Err(err(
                    line.line,
                    1,
                    format!("{} has more than its {} dwords", p.kind, p.needed),
                ));
            }
            if p.dwords.len() == p.needed {
                let p = self.pending.take().unwrap_or_else(|| unreachable!());
                self.finish_data(p)?;
            }
            return Ok(());
        }
        if !code.is_empty() {
            if !self.trailing.is_empty() {
                return Err(err(line.line, 1, "nothing may follow trailing-data"));
            }
            let column = line.code.len() - line.code.trim_start().len() + 1;
            match self.version {
                None => {
                    self.version = Some(parse_version(code, line.line, column)?);
                    if let Some(c) = &kept.after_code {
                        self.deferred = Some(user_block(Placement::AfterCode, c, line.line)?);
                    }
                }
                Some(v) => {
                    if let Some(c) = &kept.own_line {
                        self.emit(user_block(Placement::OwnLine, c, line.line)?);
                    }
                    self.flush_deferred();
                    self.locations.push((self.offset(), line.line, column));
                    let dwords = statement(&tokenize(&line.code, line.line)?, v, line.line)?;
                    self.dwords.extend(dwords);
                    if let Some(c) = &kept.after_code {
                        self.emit(user_block(Placement::AfterCode, c, line.line)?);
                    }
                }
            }
        } else if let (Some(c), Some(_)) = (&kept.own_line, self.version) {
            self.emit(user_block(Placement::OwnLine, c, line.line)?);
        }
        if let Some((column, text)) = &line.comment {
            if let Some((kind, n)) = data_comment_header(text) {
                if self.version.is_none() {
                    return Err(err(
                        line.line,
                        *column,
                        format!("{kind} before the version line"),
                    ));
                }
                let p = Pending {
                    kind: kind.to_string(),
                    needed: n,
                    dwords: Vec::new(),
                    line: line.line,
                    column: *column,
                };
                if n == 0 {
                    self.finish_data(p)?;
                } else {
                    self.pending = Some(p);
                }
            }
        }
        Ok(())
    }

    /// Appends DWORDs after the deferred comment of the version line.
    fn emit(&mut self, dwords: Vec<u32>) {
        self.flush_deferred();
        self.dwords.extend(dwords);
    }

    fn flush_deferred(&mut self) {
        if let Some(d) = self.deferred.take() {
            self.dwords.extend(d);
        }
    }

    fn finish_data(&mut self, p: Pending) -> Result<(), AsmError> {
        let is_ctab = p.kind == COMMENT_BLOCK && p.dwords.first() == Some(&CTAB_FOURCC);
        if !is_ctab && p.kind != TRAILING_DATA {
            self.flush_deferred();
        }
        self.locations.push((self.offset(), p.line, p.column));
        match p.kind.as_str() {
            COMMENT_BLOCK => {
                if p.needed > MAX_COMMENT_DWORDS {
                    return Err(err(
                        p.line,
                        p.column,
                        format!(
                            "comment-block of {} dwords exceeds the 32767 limit",
                            p.needed
                        ),
                    ));
                }
                self.dwords.push(COMMENT_TOKEN | (p.needed as u32) << 16);
                self.dwords.extend(p.dwords);
            }
            RAW_TOKENS => self.dwords.extend(p.dwords),
            _ => self.trailing.extend(p.dwords),
        }
        Ok(())
    }
}

/// The comment block holding a comment of the text: its token and payload.
fn user_block(
    placement: Placement,
    (column, text): &(usize, String),
    line: usize,
) -> Result<Vec<u32>, AsmError> {
    if text.len() > UserComment::MAX_TEXT_BYTES {
        return Err(err(
            line,
            *column,
            format!(
                "this comment is {} bytes long; a comment block holds at most {} \
                 (32767 DWORDs): split it over several lines",
                text.len(),
                UserComment::MAX_TEXT_BYTES
            ),
        ));
    }
    let payload = UserComment {
        placement,
        text: text.clone(),
    }
    .payload();
    let mut out = Vec::with_capacity(1 + payload.len());
    out.push(COMMENT_TOKEN | (payload.len() as u32) << 16);
    out.extend(payload);
    Ok(out)
}

/// `comment-block: 12 dwords` and the like.
fn data_comment_header(text: &str) -> Option<(&'static str, usize)> {
    let t = text.trim();
    let (kind, rest) = t.split_once(':')?;
    let kind = [COMMENT_BLOCK, RAW_TOKENS, TRAILING_DATA]
        .into_iter()
        .find(|k| *k == kind.trim())?;
    let rest = rest.trim();
    let n = rest
        .strip_suffix("dwords")
        .or_else(|| rest.strip_suffix("dword"))?
        .trim()
        .parse()
        .ok()?;
    Some((kind, n))
}

/// The leading 8-digit hex words of a data line.
fn hex_words(text: &str) -> Vec<u32> {
    text.split_whitespace()
        .map_while(|w| {
            (w.len() == 8)
                .then(|| u32::from_str_radix(w, 16).ok())
                .flatten()
        })
        .collect()
}

fn parse_version(code: &str, line: usize, column: usize) -> Result<Version, AsmError> {
    let lower = code.to_ascii_lowercase();
    let bad = || {
        err(
            line,
            column,
            format!("expected a shader version (vs_1_1, ps.1.4, ps_2_x, …), found '{code}'"),
        )
    };
    let kind = match lower.get(..2) {
        Some("vs") => ShaderKind::Vertex,
        Some("ps") => ShaderKind::Pixel,
        _ => return Err(bad()),
    };
    let parts: Vec<&str> = lower[2..].split(['.', '_']).collect();
    let ["", major, minor] = parts.as_slice() else {
        return Err(bad());
    };
    let major: u8 = major.parse().map_err(|_| bad())?;
    let minor = match (*minor, major) {
        ("x", 2) => 1,
        ("a", 2) | ("b", 2) if kind == ShaderKind::Pixel || *minor == "a" => 1,
        (m, _) => m.parse().map_err(|_| bad())?,
    };
    let v = Version::new(kind, major, minor);
    if !Version::ALL.contains(&v) {
        return Err(err(
            line,
            column,
            format!("shader model '{code}' is not supported"),
        ));
    }
    Ok(v)
}

/// What the mnemonic word says.
struct Mnemonic {
    info: &'static OpcodeInfo,
    controls: u8,
    /// `dcl`: sampler type or (usage, index).
    sampler: Option<u32>,
    usage: Option<(u32, u32)>,
    result_mods: u32,
    shift: u32,
}

fn parse_mnemonic(word: &str, v: Version, line: usize, col: usize) -> Result<Mnemonic, AsmError> {
    let lower = word.to_ascii_lowercase();
    let mut parts = lower.split('_');
    let mut base = parts.next().unwrap_or_default().to_string();
    let mut rest: Vec<&str> = parts.collect();
    let e = |m: String| err(line, col, m);
    let mut controls = 0u8;
    let mut want = Controls::None;
    match base.as_str() {
        "texldp" | "texldb" => {
            controls = if base == "texldp" { 1 } else { 2 };
            base = "texld".into();
            want = Controls::TexldVariant;
        }
        "texld" if v.major >= 2 => want = Controls::TexldVariant,
        "if" | "break" | "setp" => {
            if let Some(i) = rest
                .first()
                .and_then(|r| COMPARISONS.iter().position(|c| !c.is_empty() && c == r))
            {
                controls = i as u8;
                want = Controls::Comparison;
                rest.remove(0);
            } else if base == "setp" {
                return Err(e(format!(
                    "'{word}': setp needs a comparison (setp_gt, _eq, _ge, _lt, _ne, _le)"
                )));
            }
        }
        _ => {}
    }
    let mut sampler = None;
    let mut usage = None;
    if base == "dcl" {
        if let Some(first) = rest.first().copied() {
            let digits = first.len() - first.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            let name = &first[..first.len() - digits];
            if let Some(t) = SAMPLER_TYPES
                .iter()
                .position(|s| !s.is_empty() && *s == first)
            {
                sampler = Some(t as u32);
                rest.remove(0);
            } else if let Some(u) = USAGES.iter().position(|s| *s == name) {
                let index: u32 = if digits > 0 {
                    first[name.len()..].parse().unwrap_or(u32::MAX)
                } else {
                    0
                };
                if index > 15 {
                    return Err(e(format!("usage index in '{word}' is above 15")));
                }
                usage = Some((u as u32, index));
                rest.remove(0);
            } else if !is_modifier(first) {
                return Err(e(format!(
                    "'{first}' in '{word}' is not a declaration usage or sampler type"
                )));
            }
        }
    }
    let candidates: Vec<&'static OpcodeInfo> = opcodes::by_mnemonic(&base)
        .filter(|r| r.controls == want || (want == Controls::None && base == "texld"))
        .collect();
    if candidates.is_empty() {
        return Err(e(format!("unknown instruction '{word}'")));
    }
    let info = candidates
        .iter()
        .find(|r| r.available(v))
        .or_else(|| {
            candidates
                .iter()
                .rfind(|r| r.span(v.kind).is_some_and(|s| s.min <= v.code()))
        })
        .unwrap_or(&candidates[0]);
    let mut result_mods = 0u32;
    let mut shift = None;
    for part in rest {
        if let Some((bit, _)) = RESULT_MODIFIERS.iter().find(|(_, n)| *n == part) {
            if result_mods & *bit as u32 != 0 {
                return Err(e(format!("'_{part}' given twice in '{word}'")));
            }
            result_mods |= *bit as u32;
        } else if let Some((s, _)) = SHIFTS.iter().find(|(_, n)| *n == part) {
            if shift.is_some() {
                return Err(e(format!("'{word}' has two shift modifiers")));
            }
            shift = Some(*s as u32);
        } else {
            return Err(e(format!("unknown modifier '_{part}' in '{word}'")));
        }
    }
    Ok(Mnemonic {
        info,
        controls,
        sampler,
        usage,
        result_mods,
        shift: shift.unwrap_or(0),
    })
}

fn is_modifier(part: &str) -> bool {
    RESULT_MODIFIERS.iter().any(|(_, n)| *n == part) || SHIFTS.iter().any(|(_, n)| *n == part)
}

/// Assembles one statement (everything but the version line) to its DWORDs.
fn statement(toks: &[Token], v: Version, line: usize) -> Result<Vec<u32>, AsmError> {
    let mut pos = 0;
    let at = |pos: usize| {
        toks.get(pos)
            .map_or(toks.last().map_or(1, |t| t.col + 1), |t| t.col)
    };
    let mut coissue = false;
    if toks.first().map(|t| &t.tok) == Some(&Tok::Punct('+')) {
        coissue = true;
        pos += 1;
    }
    let mut predicate = None;
    if toks.get(pos).map(|t| &t.tok) == Some(&Tok::Punct('(')) {
        let close = toks[pos..]
            .iter()
            .position(|t| t.tok == Tok::Punct(')'))
            .map(|i| pos + i)
            .ok_or_else(|| err(line, at(pos), "predicate '(' without ')'"))?;
        if v.major < 2 {
            return Err(err(
                line,
                at(pos),
                format!("predication needs shader model 2_x or later, not {v}"),
            ));
        }
        let p = operand(&toks[pos + 1..close], v, line, Role::Source)?;
        if p.ty != RegisterType::Predicate {
            return Err(err(
                line,
                at(pos + 1),
                "an instruction predicate must be p0",
            ));
        }
        predicate = Some(p.token);
        pos = close + 1;
    }
    let Some(Token {
        tok: Tok::Word(word),
        col,
    }) = toks.get(pos)
    else {
        return Err(err(line, at(pos), "expected an instruction"));
    };
    let m = parse_mnemonic(word, v, line, *col)?;
    pos += 1;
    let info = m.info;
    // Operands split at top-level commas.
    let mut groups: Vec<&[Token]> = Vec::new();
    if pos < toks.len() {
        let mut start = pos;
        for i in pos..=toks.len() {
            if i == toks.len() || toks[i].tok == Tok::Punct(',') {
                if i == start {
                    return Err(err(line, at(i), "missing operand"));
                }
                groups.push(&toks[start..i]);
                start = i + 1;
            }
        }
    }
    let expected = match info.layout {
        Layout::Dcl => 1,
        Layout::Def4 => 5,
        Layout::Def1 => 2,
        Layout::Operands => (info.dst + info.src) as usize,
    };
    if groups.len() != expected {
        return Err(err(
            line,
            *col,
            format!(
                "'{}' takes {expected} operand{} in {v}, found {}",
                info.mnemonic,
                if expected == 1 { "" } else { "s" },
                groups.len()
            ),
        ));
    }
    let mut out = Vec::new();
    let mut groups = groups.into_iter();
    if info.dst > 0 {
        let g = groups.next().unwrap_or_default();
        let mut d = operand(g, v, line, Role::Destination)?;
        d.token |= m.result_mods << 20 | m.shift << 24;
        if info.layout == Layout::Dcl {
            out.push(dcl_token(&m, &d, v, line, g[0].col)?);
        }
        out.push(d.token);
        out.extend(d.address);
    } else if m.result_mods != 0 || m.shift != 0 {
        return Err(err(
            line,
            *col,
            format!("'{word}': modifiers need a destination register"),
        ));
    }
    if let Some(p) = predicate {
        out.push(p);
    }
    match info.layout {
        Layout::Def4 | Layout::Def1 => {
            for g in groups {
                out.push(immediate(g, info, line)?);
            }
        }
        Layout::Dcl | Layout::Operands => {
            for g in groups {
                let s = operand(g, v, line, Role::Source)?;
                out.push(s.token);
                out.extend(s.address);
            }
        }
    }
    let len = if v.major >= 2 {
        (out.len() as u32) << 24
    } else {
        0
    };
    let token = info.opcode as u32
        | (m.controls as u32) << 16
        | len
        | (predicate.is_some() as u32) << 28
        | (coissue as u32) << 30;
    out.insert(0, token);
    Ok(out)
}

fn dcl_token(
    m: &Mnemonic,
    d: &Operand,
    v: Version,
    line: usize,
    col: usize,
) -> Result<u32, AsmError> {
    let is_sampler = d.ty == RegisterType::Sampler;
    if let Some(t) = m.sampler {
        if !is_sampler {
            return Err(err(line, col, "a sampler type declares an s# register"));
        }
        return Ok(0x8000_0000 | t << 27);
    }
    if let Some((usage, index)) = m.usage {
        if is_sampler || !dcl_uses_usage(d.ty, v) {
            return Err(err(
                line,
                col,
                format!("a usage cannot be declared for this register in {v}"),
            ));
        }
        return Ok(0x8000_0000 | usage | index << 16);
    }
    Ok(0x8000_0000)
}

fn immediate(g: &[Token], info: &OpcodeInfo, line: usize) -> Result<u32, AsmError> {
    let col = g[0].col;
    let (neg, rest) = match g {
        [Token {
            tok: Tok::Punct('-'),
            ..
        }, rest @ ..] => (true, rest),
        _ => (false, g),
    };
    let value = match rest {
        [one] => &one.tok,
        [] => return Err(err(line, col, "missing value")),
        [_, extra, ..] => {
            return Err(err(
                line,
                extra.col,
                format!(
                    "unexpected {} after a value: expressions are not allowed here",
                    extra.tok.describe()
                ),
            ))
        }
    };
    let e = |m: String| err(line, col, m);
    if info.layout == Layout::Def1 {
        return match value {
            Tok::Word(w) if !neg && w.eq_ignore_ascii_case("true") => Ok(1),
            Tok::Word(w) if !neg && w.eq_ignore_ascii_case("false") => Ok(0),
            _ => Err(e("defb takes true or false".into())),
        };
    }
    let Tok::Num(n) = value else {
        return Err(e(format!("expected a number, found {}", value.describe())));
    };
    if let Some(hex) = n.strip_prefix("0x").or_else(|| n.strip_prefix("0X")) {
        if neg {
            return Err(e("a raw 0x… value takes no sign".into()));
        }
        return u32::from_str_radix(hex, 16)
            .map_err(|_| e(format!("'{n}' is not a 32-bit hex value")));
    }
    if info.opcode == opcodes::OP_DEF {
        let digits = n.trim_end_matches(['f', 'F']);
        let f: f32 = digits
            .parse()
            .map_err(|_| e(format!("'{n}' is not a number")))?;
        return Ok(if neg { -f } else { f }.to_bits());
    }
    if !n.bytes().all(|b| b.is_ascii_digit()) {
        return Err(e(format!("defi takes integers, found '{n}'")));
    }
    let i: i64 = n.parse().map_err(|_| e(format!("'{n}' is too large")))?;
    let i = if neg { -i } else { i };
    i32::try_from(i)
        .map(|i| i as u32)
        .map_err(|_| e(format!("{i} does not fit a 32-bit integer")))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Destination,
    Source,
}

#[derive(Debug)]
struct Operand {
    ty: RegisterType,
    token: u32,
    address: Option<u32>,
}

/// Reads a register operand: `-c[a0.x + 4].x`, `1-r0`, `r1_bx2.a`, `!b0`, `oC0.xy`.
fn operand(g: &[Token], v: Version, line: usize, role: Role) -> Result<Operand, AsmError> {
    let mut pos = 0;
    let col = |pos: usize| g.get(pos).or(g.last()).map_or(1, |t| t.col);
    let mut negate = false;
    let mut complement = false;
    let mut not = false;
    loop {
        match g.get(pos).map(|t| &t.tok) {
            Some(Tok::Punct('-')) if !negate && !complement => negate = true,
            Some(Tok::Punct('!')) if !not => not = true,
            Some(Tok::Num(n)) if g.get(pos + 1).map(|t| &t.tok) == Some(&Tok::Punct('-')) => {
                if n != "1" {
                    return Err(err(
                        line,
                        col(pos),
                        format!("only '1 -' (complement) may precede a register, not '{n} -'"),
                    ));
                }
                if complement {
                    return Err(err(line, col(pos), "complement given twice"));
                }
                complement = true;
                pos += 1;
            }
            _ => break,
        }
        pos += 1;
    }
    if role == Role::Destination && (negate || complement || not) {
        return Err(err(line, col(0), "a destination takes no source modifier"));
    }
    let Some(Token {
        tok: Tok::Word(word),
        col: wcol,
    }) = g.get(pos)
    else {
        return Err(err(line, col(pos), "expected a register"));
    };
    let wcol = *wcol;
    pos += 1;
    let (name, mut suffix) = match word.split_once('_') {
        Some((a, b)) => (a, b.to_ascii_lowercase()),
        None => (word.as_str(), String::new()),
    };
    let reg = parse_register_prefix(name, v).map_err(|m| err(line, wcol, m))?;
    let mut number = reg.number;
    let mut ty = reg.ty;
    let mut address: Option<Address> = None;
    if g.get(pos).map(|t| &t.tok) == Some(&Tok::Punct('[')) {
        if !suffix.is_empty() {
            return Err(err(line, wcol, "a modifier goes after the ']'"));
        }
        let close = g[pos..]
            .iter()
            .position(|t| t.tok == Tok::Punct(']'))
            .map(|i| pos + i)
            .ok_or_else(|| err(line, col(pos), "'[' without ']'"))?;
        let (offset, addr) = relative(&g[pos + 1..close], v, line, col(pos))?;
        let base = ty.const_bank().map_or(0, |b| b * CONST_BANK_SIZE) + number.unwrap_or(0);
        let total = base + offset;
        if ty.const_bank().is_some() {
            if total >= 4 * CONST_BANK_SIZE {
                return Err(err(line, wcol, format!("c{total} is beyond c8191")));
            }
            ty = [
                RegisterType::Const,
                RegisterType::Const2,
                RegisterType::Const3,
                RegisterType::Const4,
            ][(total / CONST_BANK_SIZE) as usize];
            number = Some(total % CONST_BANK_SIZE);
        } else {
            number = Some(total);
        }
        address = addr;
        pos = close + 1;
        if let Some(Token {
            tok: Tok::Word(w), ..
        }) = g.get(pos)
        {
            if let Some(s) = w.strip_prefix('_') {
                suffix = s.to_ascii_lowercase();
                pos += 1;
            }
        }
    }
    let number =
        number.ok_or_else(|| err(line, wcol, format!("register '{name}' needs a number")))?;
    if number > MAX_NUMBER {
        return Err(err(
            line,
            wcol,
            format!("register number {number} is above {MAX_NUMBER}"),
        ));
    }
    let mut components = None;
    if g.get(pos).map(|t| &t.tok) == Some(&Tok::Punct('.')) {
        match g.get(pos + 1) {
            Some(Token {
                tok: Tok::Word(w), ..
            }) => {
                components = Some(w.clone());
                pos += 2;
            }
            _ => {
                return Err(err(
                    line,
                    col(pos),
                    if role == Role::Source {
                        "empty swizzle after '.'"
                    } else {
                        "empty write mask after '.'"
                    },
                ))
            }
        }
    }
    if let Some(extra) = g.get(pos) {
        return Err(err(
            line,
            extra.col,
            format!("unexpected {} after the operand", extra.tok.describe()),
        ));
    }
    let rel = address.is_some();
    let address_token = match address {
        None => None,
        Some((aty, swz)) if v.major < 2 => {
            if v.kind != ShaderKind::Vertex || aty != RegisterType::AddrOrTexture || swz != Some(0)
            {
                return Err(err(
                    line,
                    wcol,
                    format!("relative addressing in {v} must use a0.x"),
                ));
            }
            None
        }
        Some((aty, swz)) => {
            if aty == RegisterType::Loop && swz.is_some() {
                return Err(err(
                    line,
                    wcol,
                    "aL is a scalar register and takes no swizzle",
                ));
            }
            Some(Param::make(
                aty,
                0,
                false,
                (swz.unwrap_or(0xE4) as u32) << 16,
            ))
        }
    };
    let fields = match role {
        Role::Destination => {
            if !suffix.is_empty() {
                return Err(err(
                    line,
                    wcol,
                    format!(
                        "'_{suffix}' is not a destination modifier; write it on the instruction"
                    ),
                ));
            }
            let mask = match &components {
                Some(c) => parse_mask(c).map_err(|m| err(line, wcol, m))?,
                None => 0xF,
            };
            (mask as u32) << 16
        }
        Role::Source => {
            let m = source_modifier(negate, complement, not, &suffix).ok_or_else(|| {
                err(
                    line,
                    col(0),
                    format!(
                        "no source modifier is written this way{}",
                        if suffix.is_empty() {
                            String::new()
                        } else {
                            format!(" ('_{suffix}')")
                        }
                    ),
                )
            })?;
            let swz = match &components {
                Some(c) => parse_swizzle(c).map_err(|m| err(line, wcol, m))?,
                None => 0xE4,
            };
            (swz as u32) << 16 | (m.value as u32) << 24
        }
    };
    Ok(Operand {
        ty,
        token: Param::make(ty, number, rel, fields),
        address: address_token,
    })
}

/// The address register of a relative operand and its swizzle, if one was written.
type Address = (RegisterType, Option<u8>);

/// Reads the inside of `[…]`: a sum of integers and at most one address register.
fn relative(
    g: &[Token],
    v: Version,
    line: usize,
    col: usize,
) -> Result<(u32, Option<Address>), AsmError> {
    let mut offset: u32 = 0;
    let mut addr = None;
    let mut pos = 0;
    if g.is_empty() {
        return Err(err(line, col, "empty '[]'"));
    }
    loop {
        let Some(t) = g.get(pos) else {
            return Err(err(line, col, "expected a term after '+'"));
        };
        match &t.tok {
            Tok::Num(n) => {
                if !n.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(err(
                        line,
                        t.col,
                        format!("relative addressing takes integer offsets, found '{n}'"),
                    ));
                }
                let n: u32 = n
                    .parse()
                    .map_err(|_| err(line, t.col, "offset too large"))?;
                offset = offset.saturating_add(n);
                pos += 1;
            }
            Tok::Word(w) => {
                let r = parse_register_prefix(w, v).map_err(|m| err(line, t.col, m))?;
                let is_addr = (r.ty == RegisterType::AddrOrTexture && v.kind == ShaderKind::Vertex
                    || r.ty == RegisterType::Loop)
                    && r.number == Some(0);
                if !is_addr {
                    return Err(err(
                        line,
                        t.col,
                        format!("relative addressing uses a0 or aL, not '{w}'"),
                    ));
                }
                if addr.is_some() {
                    return Err(err(line, t.col, "only one address register may be used"));
                }
                pos += 1;
                let mut swz = None;
                if g.get(pos).map(|t| &t.tok) == Some(&Tok::Punct('.')) {
                    let Some(Token {
                        tok: Tok::Word(s),
                        col,
                    }) = g.get(pos + 1)
                    else {
                        return Err(err(line, t.col, "empty swizzle after '.'"));
                    };
                    swz = Some(parse_swizzle(s).map_err(|m| err(line, *col, m))?);
                    pos += 2;
                }
                addr = Some((r.ty, swz));
            }
            Tok::Punct('-') => {
                return Err(err(
                    line,
                    t.col,
                    "'-' is not allowed in relative addressing",
                ));
            }
            other => {
                return Err(err(
                    line,
                    t.col,
                    format!("unexpected {} in relative addressing", other.describe()),
                ))
            }
        }
        match g.get(pos) {
            None => break,
            Some(Token {
                tok: Tok::Punct('+'),
                ..
            }) => pos += 1,
            Some(t) => {
                return Err(err(
                    line,
                    t.col,
                    format!("unexpected {} in relative addressing", t.tok.describe()),
                ))
            }
        }
    }
    Ok((offset, addr))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<u32> {
        words_of(&assemble_unvalidated(text).unwrap_or_else(|e| panic!("{text}: {e}")))
    }

    #[test]
    fn spec_vectors() {
        assert_eq!(
            words("vs_1_1\ndcl_position v0\nm4x4 oPos, v0, c0\nmov r0, c[a0.x + 5]\n"),
            [
                0xFFFE0101, 0x0000001F, 0x80000000, 0x900F0000, 0x00000014, 0xC00F0000, 0x90E40000,
                0xA0E40000, 0x00000001, 0x800F0000, 0xA0E42005, 0x0000FFFF
            ]
        );
        assert_eq!(
            words("ps.1.3\ntex t0\nmul r0.rgb, t0, c3\n+ mov r0.a, c4\nmul_x2 r0, r0, v0"),
            [
                0xFFFF0103, 0x00000042, 0xB00F0000, 0x00000005, 0x80070000, 0xB0E40000, 0xA0E40003,
                0x40000001, 0x80080000, 0xA0E40004, 0x00000005, 0x810F0000, 0x80E40000, 0x90E40000,
                0x0000FFFF
            ]
        );
        assert_eq!(
            words("ps_2_0\ndcl t0\ndcl_2d s0\ndef c0, 1, 0, 0, 1\ntexld r0, t0, s0\nmul r0, r0, c0\nmov oC0, r0"),
            [
                0xFFFF0200, 0x0200001F, 0x80000000, 0xB00F0000, 0x0200001F, 0x90000000, 0xA00F0800,
                0x05000051, 0xA00F0000, 0x3F800000, 0x00000000, 0x00000000, 0x3F800000, 0x03000042,
                0x800F0000, 0xB0E40000, 0xA0E40800, 0x03000005, 0x800F0000, 0x80E40000, 0xA0E40000,
                0x02000001, 0x800F0800, 0x80E40000, 0x0000FFFF
            ]
        );
        assert_eq!(
            words("vs_2_x\n(p0) add r0, r1, r2")[1..6],
            [0x14000002, 0x800F0000, 0xB0E41000, 0x80E40001, 0x80E40002]
        );
        assert_eq!(
            words("vs_2_0\nmov r0, c5[a0.x]")[1..5],
            [0x03000001, 0x800F0000, 0xA0E42005, 0xB0000000]
        );
    }

    /// The DWORDs without the comment blocks that keep comments of the text.
    fn code_words(text: &str) -> Vec<u32> {
        let mut shader = bytecode::parse(&assemble_unvalidated(text).unwrap()).unwrap();
        shader
            .items
            .retain(|i| !matches!(i, bytecode::Item::Comment(c) if c.user_comment().is_some()));
        words_of(&shader.encode())
    }

    fn words_of(bytes: &[u8]) -> Vec<u32> {
        bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    #[test]
    fn a_macro_is_not_expanded_inside_itself_and_expansion_is_bounded() {
        let defines: HashMap<String, String> = [("R", "R R"), ("A", "B"), ("B", "A c0")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(expand("mov R", &defines).unwrap(), "mov R R");
        assert_eq!(expand("add A", &defines).unwrap(), "add A c0");
        let mut text = String::from("#define A0 r0\n");
        for i in 1..24 {
            text.push_str(&format!("#define A{i} A{p} A{p} A{p} A{p}\n", p = i - 1));
        }
        text.push_str("vs.1.1\nmov A23\n");
        let err = assemble_unvalidated(&text).unwrap_err();
        assert!(err.message.contains("longer than"), "{err}");
    }

    #[test]
    fn comments_preprocessor_and_case() {
        let text = "/* block\n comment */ VS.1.1 ; x\n#define R r0\nADD R, R, r1 // y\n";
        assert_eq!(code_words(text), words("vs_1_1\nadd r0, r0, r1"));
        assert_eq!(
            words_of(&assemble_dropping_comments(text).unwrap()),
            words("vs_1_1\nadd r0, r0, r1")
        );
        let kept: Vec<_> = bytecode::parse(&assemble_unvalidated(text).unwrap())
            .unwrap()
            .comments()
            .filter_map(|c| c.user_comment())
            .map(|c| (c.placement, c.text))
            .collect();
        assert_eq!(
            kept,
            [
                (Placement::AfterCode, " ; x".to_string()),
                (Placement::AfterCode, " // y".to_string())
            ]
        );
        let a = words("#define REG 1 + 2 +\\\n3 + 4\nvs.1.1\nmov r0, c0[ REG ]");
        assert_eq!(a[3], 0xA0E4000A);
        let a = words("#ifdef NOPE\nnonsense\n#else\nvs_1_1\n#endif\nnop");
        assert_eq!(a, [0xFFFE0101, 0, 0xFFFF]);
        assert!(assemble("#include \"x.vsh\"\nvs_1_1").is_err());
    }

    /// The comments a text keeps, in stream order.
    fn kept(text: &str) -> Vec<(Placement, String)> {
        bytecode::parse(&assemble_unvalidated(text).unwrap_or_else(|e| panic!("{text}: {e}")))
            .unwrap()
            .comments()
            .filter_map(|c| c.user_comment())
            .map(|c| (c.placement, c.text))
            .collect()
    }

    #[test]
    fn which_comments_are_kept_and_how() {
        use Placement::{AfterCode, OwnLine};
        let text = "// header line, regenerated\n/* also */ ps_2_0 /* v */\n\n  // own\n\
                    /* open\n\n  close */ mov r0, /* inner */ c0 ;tail \n\
                    #define X 1 // on a directive\n#ifdef NOPE\n// left out\n#endif\n\
                    // approximately 1 instruction slots used (0 texture, 1 arithmetic)\n\
                    // 'mov' with an encoding that has no asm spelling:\n// a \\\ncontinued\n";
        let own = |t: &str| (OwnLine, t.to_string());
        let after = |t: &str| (AfterCode, t.to_string());
        assert_eq!(
            kept(text),
            [
                after(" /* v */"),
                own("  // own"),
                own("/* open"),
                own(""),
                own("  close */"),
                after(" /* inner */ ;tail "),
                own("// a continued"),
            ]
        );
        // The comment of the version line follows the CTAB comment that follows it.
        let ctab = "ps_2_0 // v\n// comment-block: 2 dwords\n// 42415443 00000000\nnop";
        let w = words(ctab);
        assert_eq!(w[1..4], [0x0002FFFE, CTAB_FOURCC, 0]);
        assert_eq!(w[5], bytecode::USER_COMMENT_FOURCC);
        assert_eq!(kept(ctab), [after(" // v")]);
    }

    #[test]
    fn comment_errors_name_line_and_column() {
        let e = assemble_unvalidated("vs_1_1\nnop\n  mov r0, r1 /* never\n closed").unwrap_err();
        assert_eq!((e.line, e.column), (3, 14), "{e}");
        assert!(e.message.contains("never closed"), "{e}");
        let fits = format!("vs_1_1\n//{}", "x".repeat(UserComment::MAX_TEXT_BYTES - 2));
        assert!(assemble_unvalidated(&fits).is_ok());
        let long = format!(
            "vs_1_1\nnop\n  nop ;{}",
            "x".repeat(UserComment::MAX_TEXT_BYTES)
        );
        let e = assemble_unvalidated(&long).unwrap_err();
        assert_eq!((e.line, e.column), (3, 7), "{e}");
        assert!(e.message.contains("comment block holds at most"), "{e}");
    }

    #[test]
    fn data_comments() {
        let a = words("ps_2_0\n// comment-block: 2 dwords\n// 42415443 00000001 |CTAB|\n// raw-tokens: 1 dwords\n// 00000000\n// trailing-data: 1 dwords\n// deadbeef\n");
        assert_eq!(
            a,
            [0xFFFF0200, 0x0002FFFE, 0x42415443, 1, 0, 0xFFFF, 0xDEADBEEF]
        );
        let e =
            assemble("ps_2_0\n// comment-block: 3 dwords\n// 42415443\nmov r0, r1").unwrap_err();
        assert_eq!((e.line, e.column), (2, 1));
    }

    #[test]
    fn errors_have_positions() {
        let e = assemble_unvalidated("vs_1_1\nmov r0, r1, r2").unwrap_err();
        assert_eq!((e.line, e.column), (2, 1));
        assert!(e.message.contains("takes 2 operands"), "{e}");
        let e = assemble_unvalidated("vs_2_0\nmov r0, r1.xyzwx").unwrap_err();
        assert_eq!(e.line, 2);
        let e = assemble_unvalidated("vs_1_1\nfoo r0").unwrap_err();
        assert!(e.to_string().starts_with("2:1: unknown instruction"), "{e}");
        assert!(assemble_unvalidated("mov r0, r1").is_err());
        assert!(assemble_unvalidated("vs_2_0\ndefi i0, -1 - 1, 1, 10, 0").is_err());
        assert!(assemble_unvalidated("vs_2_0\ndefi i0, 1.0, 1, 10, 0").is_err());
        assert!(assemble_unvalidated("vs_3_0\nmov r2, c[ aL + 3.4 ]").is_err());
    }

    #[test]
    fn def_values() {
        let a = words("vs_1_1\ndef c0, 1.0f, -0, 0x7fc00000, -1.5500992e-006");
        assert_eq!(
            a[3..7],
            [
                0x3F800000,
                0x80000000,
                0x7FC00000,
                (-1.5500992e-006f32).to_bits()
            ]
        );
    }
}
