//! The effect text of a `.sha` file, parsed into spans over the original bytes
//! (`shared/formats/sha.md` §2, §3).
//!
//! Nothing is copied or normalised: every item, name and value is a byte range of the
//! text, so a view can be cut out and an edit spliced back with every other byte —
//! comments, indentation, line endings — left as it was. What the parser does not know
//! (HLSL functions, `sampler_state`, annotations, preprocessor lines) is kept as an
//! [`Other`] span and never touched.
//!
//! The parser never panics and never recurses; nesting is bounded by [`MAX_NESTING`] and
//! the text by [`MAX_EFFECT_LEN`], so what it allocates is bounded by the input.

use std::ops::Range;

/// Largest effect accepted. The biggest known FlatOut effect is a few kilobytes; D3DX
/// itself would choke long before this.
pub const MAX_EFFECT_LEN: usize = 4 << 20;

/// Deepest `{ ( [` nesting inside an item the parser follows.
pub const MAX_NESTING: usize = 64;

/// Where the text stops making sense, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

fn error<T>(offset: usize, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        offset,
        message: message.into(),
    })
}

/// Byte offsets to 1-based line and column (columns count bytes; a tab is one column).
#[derive(Debug, Clone)]
pub struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    pub fn new(text: &[u8]) -> Lines {
        let mut starts = vec![0];
        starts.extend(
            text.iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Lines { starts }
    }

    pub fn position(&self, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        (line, offset - self.starts[line - 1] + 1)
    }

    /// The offset of the start of 1-based `line` (the end of the text past the last line).
    pub fn start(&self, line: usize) -> Option<usize> {
        self.starts.get(line.checked_sub(1)?).copied()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Vertex,
    Pixel,
}

impl Stage {
    /// The file names' stem and the word the user reads: `vertex`, `pixel`.
    pub fn word(self) -> &'static str {
        match self {
            Stage::Vertex => "vertex",
            Stage::Pixel => "pixel",
        }
    }
}

/// `Texture Tex0;`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextureDecl {
    pub span: Range<usize>,
    pub name: Range<usize>,
}

/// `const string inputStreamFormat = "PosColorTex1";` (`value` excludes the quotes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringConst {
    pub span: Range<usize>,
    pub name: Range<usize>,
    pub value: Range<usize>,
}

/// `vertexshader vSdr = decl { … } asm { … };` or `pixelshader pSdr = asm { … };`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShaderVar {
    pub span: Range<usize>,
    pub stage: Stage,
    pub name: Range<usize>,
    pub decl: Option<DeclBlock>,
    /// The bytes between `asm {` and its closing `}`.
    pub asm: Range<usize>,
}

/// The DX8-style vertex declaration, `decl { stream 0; float v0[3]; … }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclBlock {
    pub body: Range<usize>,
    pub statements: Vec<DeclStatement>,
}

/// One `…;` of a decl block: its words (`float`, `v0`, `3`) and a `//` comment that ends
/// its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclStatement {
    pub span: Range<usize>,
    pub words: Vec<Range<usize>>,
    pub comment: Option<Range<usize>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Technique {
    pub span: Range<usize>,
    /// Empty range for an unnamed technique.
    pub name: Range<usize>,
    pub passes: Vec<Pass>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pass {
    pub span: Range<usize>,
    pub name: Range<usize>,
    /// Offset of the `{` and of the `}` of the pass body.
    pub open: usize,
    pub close: usize,
    pub states: Vec<Assignment>,
}

/// `AddressU[1] = Clamp;` — `span` runs from the state name to the `;` included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub span: Range<usize>,
    pub state: Range<usize>,
    pub index: Option<u32>,
    pub value: Range<usize>,
}

/// A top-level item the parser keeps without interpreting it. `name` is the identifier
/// it most likely declares (the last one before `=`, `:`, `<` or `;`), so references to
/// it resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Other {
    pub span: Range<usize>,
    pub name: Option<Range<usize>>,
}

/// A `#…` line (`#define`, `#include`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    pub span: Range<usize>,
    pub word: Range<usize>,
}

/// An effect: its items by kind, each in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Effect {
    pub textures: Vec<TextureDecl>,
    pub strings: Vec<StringConst>,
    pub shaders: Vec<ShaderVar>,
    pub techniques: Vec<Technique>,
    pub others: Vec<Other>,
    pub directives: Vec<Directive>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ident,
    Number,
    Str,
    Punct(u8),
    Directive,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub span: Range<usize>,
}

/// The effect-level lexer (HLSL rules: `//` and `/* */` comments, `"…"` strings, `#`
/// lines). `asm` bodies are not lexed with it: `;` starts a comment there.
pub(super) struct Lexer<'a> {
    pub(super) text: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(text: &'a [u8], pos: usize) -> Lexer<'a> {
        Lexer { text, pos }
    }

    fn skip_space(&mut self) -> Result<(), ParseError> {
        let t = self.text;
        while self.pos < t.len() {
            let rest = &t[self.pos..];
            if rest[0].is_ascii_whitespace() {
                self.pos += 1;
            } else if rest.starts_with(b"//") {
                self.pos = line_end(t, self.pos);
            } else if rest.starts_with(b"/*") {
                match find(t, self.pos + 2, b"*/") {
                    Some(end) => self.pos = end + 2,
                    None => return error(self.pos, "'/*' comment is never closed"),
                }
            } else {
                break;
            }
        }
        Ok(())
    }

    pub(super) fn next(&mut self) -> Result<Option<Token>, ParseError> {
        self.skip_space()?;
        let t = self.text;
        let start = self.pos;
        let Some(&c) = t.get(start) else {
            return Ok(None);
        };
        let kind = if c.is_ascii_alphabetic() || c == b'_' {
            self.pos = scan(t, start, |b| b.is_ascii_alphanumeric() || b == b'_');
            Kind::Ident
        } else if c.is_ascii_digit()
            || (c == b'.' && t.get(start + 1).is_some_and(u8::is_ascii_digit))
        {
            self.pos = scan(t, start, |b| b.is_ascii_alphanumeric() || b == b'.');
            // An exponent's sign: 1.5e-3.
            while matches!(t.get(self.pos), Some(b'+' | b'-'))
                && matches!(t.get(self.pos - 1), Some(b'e' | b'E'))
                && !t[start..].starts_with(b"0x")
            {
                self.pos = scan(t, self.pos + 1, |b| b.is_ascii_alphanumeric() || b == b'.');
            }
            Kind::Number
        } else if c == b'"' {
            let mut i = start + 1;
            loop {
                match t.get(i) {
                    Some(b'"') => break,
                    Some(b'\\') => i += 2,
                    Some(b'\n') | None => return error(start, "string is never closed"),
                    Some(_) => i += 1,
                }
            }
            self.pos = i + 1;
            Kind::Str
        } else if c == b'#' {
            self.pos = line_end(t, start);
            Kind::Directive
        } else {
            self.pos = start + 1;
            Kind::Punct(c)
        };
        Ok(Some(Token {
            kind,
            span: start..self.pos,
        }))
    }

    fn peek(&mut self) -> Result<Option<Token>, ParseError> {
        let save = self.pos;
        let token = self.next();
        self.pos = save;
        token
    }
}

fn scan(t: &[u8], mut i: usize, keep: impl Fn(u8) -> bool) -> usize {
    while t.get(i).is_some_and(|&b| keep(b)) {
        i += 1;
    }
    i
}

/// The offset of the `\n` that ends the line holding `i` (or the end of the text).
fn line_end(t: &[u8], i: usize) -> usize {
    t[i.min(t.len())..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(t.len(), |p| i + p)
}

fn find(t: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    t.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

/// Scans an `asm` body from just after its `{` to the `}` that closes it. Inside asm,
/// `//` and `;` comment to the end of the line and `/* */` comments a block (Wine's
/// `asmshader.l`); a `}` inside a comment does not close the block.
pub fn scan_asm(t: &[u8], start: usize) -> Result<Range<usize>, ParseError> {
    let mut i = start;
    while i < t.len() {
        let rest = &t[i..];
        if rest.starts_with(b"//") || rest[0] == b';' {
            i = line_end(t, i);
        } else if rest.starts_with(b"/*") {
            match find(t, i + 2, b"*/") {
                Some(end) => i = end + 2,
                None => return error(i, "'/*' comment in the asm block is never closed"),
            }
        } else if rest[0] == b'}' {
            return Ok(start..i);
        } else {
            i += 1;
        }
    }
    error(
        start.saturating_sub(1),
        "the asm block's '{' is never closed by '}'",
    )
}

/// Parses a whole effect. Only text the game could not have compiled is an error:
/// NUL bytes, comments or strings that never end, unbalanced brackets, an `asm` block
/// that never closes.
pub fn parse(text: &[u8]) -> Result<Effect, ParseError> {
    if text.len() > MAX_EFFECT_LEN {
        return error(
            MAX_EFFECT_LEN,
            format!(
                "the effect is {} bytes, more than {MAX_EFFECT_LEN}",
                text.len()
            ),
        );
    }
    if let Some(nul) = text.iter().position(|&b| b == 0) {
        return error(nul, "NUL byte: an effect is text");
    }
    let mut p = Parser {
        lx: Lexer { text, pos: 0 },
        effect: Effect::default(),
    };
    while let Some(token) = p.lx.peek()? {
        let start = token.span.start;
        if token.kind == Kind::Directive {
            p.lx.next()?;
            let word_start = scan(text, start + 1, |b| b == b' ' || b == b'\t');
            let word_end = scan(text, word_start, |b| b.is_ascii_alphanumeric() || b == b'_');
            p.effect.directives.push(Directive {
                span: token.span,
                word: word_start..word_end,
            });
            continue;
        }
        if !p.known_item()? {
            p.lx.pos = start;
            p.other_item()?;
        }
    }
    Ok(p.effect)
}

struct Parser<'a> {
    lx: Lexer<'a>,
    effect: Effect,
}

impl Parser<'_> {
    fn word(&self, token: &Token) -> &[u8] {
        &self.lx.text[token.span.clone()]
    }

    fn is_word(&self, token: &Option<Token>, word: &str) -> bool {
        token.as_ref().is_some_and(|t| {
            t.kind == Kind::Ident && self.word(t).eq_ignore_ascii_case(word.as_bytes())
        })
    }

    fn ident(&mut self) -> Result<Option<Range<usize>>, ParseError> {
        Ok(match self.lx.next()? {
            Some(t) if t.kind == Kind::Ident => Some(t.span),
            _ => None,
        })
    }

    fn punct(&mut self, c: u8) -> Result<Option<usize>, ParseError> {
        Ok(match self.lx.next()? {
            Some(t) if t.kind == Kind::Punct(c) => Some(t.span.start),
            _ => None,
        })
    }

    fn peek_punct(&mut self, c: u8) -> Result<bool, ParseError> {
        Ok(self.lx.peek()?.is_some_and(|t| t.kind == Kind::Punct(c)))
    }

    /// Tries the items of sha.md §3. `Ok(false)`: not one of them (the caller rewinds
    /// and keeps it as an [`Other`]).
    fn known_item(&mut self) -> Result<bool, ParseError> {
        let first = self.lx.next()?;
        let Some(first_token) = first.clone() else {
            return Ok(false);
        };
        let start = first_token.span.start;
        if self.is_word(&first, "texture") {
            let Some(name) = self.ident()? else {
                return Ok(false);
            };
            let Some(semi) = self.punct(b';')? else {
                return Ok(false);
            };
            self.effect.textures.push(TextureDecl {
                span: start..semi + 1,
                name,
            });
            return Ok(true);
        }
        if self.is_word(&first, "const") {
            let second = self.lx.next()?;
            if !self.is_word(&second, "string") {
                return Ok(false);
            }
            let Some(name) = self.ident()? else {
                return Ok(false);
            };
            if self.punct(b'=')?.is_none() {
                return Ok(false);
            }
            let value = match self.lx.next()? {
                Some(t) if t.kind == Kind::Str => t.span.start + 1..t.span.end - 1,
                _ => return Ok(false),
            };
            let Some(semi) = self.punct(b';')? else {
                return Ok(false);
            };
            self.effect.strings.push(StringConst {
                span: start..semi + 1,
                name,
                value,
            });
            return Ok(true);
        }
        let stage = if self.is_word(&first, "vertexshader") {
            Stage::Vertex
        } else if self.is_word(&first, "pixelshader") {
            Stage::Pixel
        } else if self.is_word(&first, "technique") {
            return self.technique(start);
        } else {
            return Ok(false);
        };
        let Some(name) = self.ident()? else {
            return Ok(false);
        };
        if self.punct(b'=')?.is_none() {
            return Ok(false);
        }
        let mut next = self.lx.next()?;
        let mut decl = None;
        if self.is_word(&next, "decl") {
            if self.punct(b'{')?.is_none() {
                return Ok(false);
            }
            decl = Some(self.decl_block()?);
            next = self.lx.next()?;
        }
        if !self.is_word(&next, "asm") {
            // `= compile vs_2_0 main();` and the like: an item D3DX knows, kept as is.
            return Ok(false);
        }
        // From here on it is a shader item, and must be complete (sha.md §8 check 3).
        let what = format!(
            "{}shader {}",
            stage.word(),
            String::from_utf8_lossy(&self.lx.text[name.clone()])
        );
        let Some(open) = self.punct(b'{')? else {
            return error(self.lx.pos, format!("{what}: expected '{{' after 'asm'"));
        };
        let asm = scan_asm(self.lx.text, open + 1)?;
        self.lx.pos = asm.end + 1;
        let Some(semi) = self.punct(b';')? else {
            return error(
                asm.end,
                format!("{what}: the asm block must end with '}};'"),
            );
        };
        self.effect.shaders.push(ShaderVar {
            span: start..semi + 1,
            stage,
            name,
            decl,
            asm,
        });
        Ok(true)
    }

    /// After `decl {`: statements up to the closing `}`.
    fn decl_block(&mut self) -> Result<DeclBlock, ParseError> {
        let body_start = self.lx.pos;
        let mut statements = Vec::new();
        loop {
            let Some(token) = self.lx.next()? else {
                return error(body_start - 1, "the decl block's '{' is never closed");
            };
            match token.kind {
                Kind::Punct(b'}') => {
                    return Ok(DeclBlock {
                        body: body_start..token.span.start,
                        statements,
                    })
                }
                Kind::Ident | Kind::Number => {
                    let start = token.span.start;
                    let mut words = vec![token.span];
                    let end = loop {
                        match self.lx.next()? {
                            Some(t) if t.kind == Kind::Punct(b';') => break t.span.end,
                            Some(t) if t.kind == Kind::Punct(b'}') => {
                                return error(t.span.start, "decl statement without ';'")
                            }
                            Some(t) if matches!(t.kind, Kind::Ident | Kind::Number) => {
                                words.push(t.span)
                            }
                            Some(t) if matches!(t.kind, Kind::Punct(b'[' | b']')) => {}
                            Some(t) => {
                                return error(t.span.start, "unexpected character in decl block")
                            }
                            None => return error(start, "decl statement without ';'"),
                        }
                    };
                    let comment = trailing_comment(self.lx.text, end);
                    statements.push(DeclStatement {
                        span: start..end,
                        words,
                        comment,
                    });
                }
                _ => return error(token.span.start, "expected a decl statement or '}'"),
            }
        }
    }

    /// After `technique`: `[name] [<annotations>] { pass … }`.
    fn technique(&mut self, start: usize) -> Result<bool, ParseError> {
        let mut name = self.lx.pos..self.lx.pos;
        if let Some(t) = self.lx.peek()? {
            if t.kind == Kind::Ident {
                self.lx.next()?;
                name = t.span;
            }
        }
        self.annotations()?;
        let Some(open) = self.punct(b'{')? else {
            return Ok(false);
        };
        let mut passes = Vec::new();
        loop {
            let token = self.lx.peek()?;
            match &token {
                None => return error(open, "the technique's '{' is never closed"),
                Some(t) if t.kind == Kind::Punct(b'}') => {
                    self.lx.next()?;
                    let mut end = t.span.end;
                    if self.peek_punct(b';')? {
                        end = self.lx.next()?.map_or(end, |t| t.span.end);
                    }
                    self.effect.techniques.push(Technique {
                        span: start..end,
                        name,
                        passes,
                    });
                    return Ok(true);
                }
                Some(t) if self.is_word(&token, "pass") => {
                    let pass_start = t.span.start;
                    self.lx.next()?;
                    passes.push(self.pass(pass_start)?);
                }
                Some(t) => {
                    // Something D3DX may know inside a technique; skipped whole.
                    let at = t.span.start;
                    self.skip_item(at)?;
                }
            }
        }
    }

    /// `< … >` after a technique or pass name.
    fn annotations(&mut self) -> Result<(), ParseError> {
        if !self.peek_punct(b'<')? {
            return Ok(());
        }
        let start = self.lx.pos;
        self.lx.next()?;
        loop {
            match self.lx.next()? {
                Some(t) if t.kind == Kind::Punct(b'>') => return Ok(()),
                Some(_) => {}
                None => return error(start, "annotation '<' is never closed by '>'"),
            }
        }
    }

    /// After `pass`: `[name] [<annotations>] { state = value; … }`.
    fn pass(&mut self, start: usize) -> Result<Pass, ParseError> {
        let mut name = self.lx.pos..self.lx.pos;
        if let Some(t) = self.lx.peek()? {
            if t.kind == Kind::Ident {
                self.lx.next()?;
                name = t.span;
            }
        }
        self.annotations()?;
        let Some(open) = self.punct(b'{')? else {
            return error(self.lx.pos, "expected '{' to open the pass");
        };
        let mut states = Vec::new();
        loop {
            let Some(token) = self.lx.peek()? else {
                return error(open, "the pass's '{' is never closed");
            };
            match token.kind {
                Kind::Punct(b'}') => {
                    self.lx.next()?;
                    return Ok(Pass {
                        span: start..token.span.end,
                        name,
                        open,
                        close: token.span.start,
                        states,
                    });
                }
                Kind::Directive => {
                    self.lx.next()?;
                }
                Kind::Ident => {
                    if let Some(a) = self.assignment()? {
                        states.push(a);
                    } else {
                        self.lx.pos = token.span.start;
                        self.skip_item(token.span.start)?;
                    }
                }
                _ => {
                    self.skip_item(token.span.start)?;
                }
            }
        }
    }

    /// `STATE [ "[" INT "]" ] "=" value ";"`, or `None` (rewind and skip) when the
    /// statement has another shape.
    fn assignment(&mut self) -> Result<Option<Assignment>, ParseError> {
        let Some(state) = self.ident()? else {
            return Ok(None);
        };
        let mut index = None;
        if self.peek_punct(b'[')? {
            self.lx.next()?;
            let n = match self.lx.next()? {
                Some(t) if t.kind == Kind::Number => {
                    std::str::from_utf8(&self.lx.text[t.span.clone()])
                        .ok()
                        .and_then(|s| s.parse::<u32>().ok())
                }
                _ => None,
            };
            let (Some(n), Some(_)) = (n, self.punct(b']')?) else {
                return Ok(None);
            };
            index = Some(n);
        }
        if self.punct(b'=')?.is_none() {
            return Ok(None);
        }
        let value_start = match self.lx.peek()? {
            Some(t) => t.span.start,
            None => return Ok(None),
        };
        let (value_end, semi) = self.value_extent(value_start)?;
        if value_end <= value_start {
            return error(value_start, "a state assignment needs a value before ';'");
        }
        Ok(Some(Assignment {
            span: state.start..semi + 1,
            state,
            index,
            value: value_start..value_end,
        }))
    }

    /// Tokens up to the `;` at depth 0: (end of the last value token, offset of `;`).
    fn value_extent(&mut self, start: usize) -> Result<(usize, usize), ParseError> {
        let mut depth = 0usize;
        let mut end = start;
        loop {
            let Some(t) = self.lx.next()? else {
                return error(start, "state assignment without ';'");
            };
            match t.kind {
                Kind::Punct(b';') if depth == 0 => return Ok((end, t.span.start)),
                Kind::Punct(b'(' | b'[' | b'{') => {
                    depth += 1;
                    if depth > MAX_NESTING {
                        return error(t.span.start, "brackets nested too deeply");
                    }
                }
                Kind::Punct(b')' | b']' | b'}') => {
                    if depth == 0 {
                        return error(t.span.start, "unbalanced closing bracket in a value");
                    }
                    depth -= 1;
                }
                Kind::Ident
                    if self.lx.text[t.span.clone()].eq_ignore_ascii_case(b"asm")
                        && self.peek_punct(b'{')? =>
                {
                    let open = self.lx.next()?.map_or(t.span.end, |o| o.span.start);
                    let body = scan_asm(self.lx.text, open + 1)?;
                    self.lx.pos = body.end + 1;
                    end = body.end + 1;
                    continue;
                }
                _ => {}
            }
            end = t.span.end;
        }
    }

    /// An item the parser does not know: up to a `;` at depth 0, or up to the `}` that
    /// brings the depth back to 0 (then an optional `;`). Recorded as an [`Other`].
    fn other_item(&mut self) -> Result<(), ParseError> {
        let start = self.lx.pos;
        let (end, name) = self.skip_item(start)?;
        self.effect.others.push(Other {
            span: start..end,
            name,
        });
        Ok(())
    }

    fn skip_item(&mut self, start: usize) -> Result<(usize, Option<Range<usize>>), ParseError> {
        let mut stack: Vec<(u8, usize)> = Vec::new();
        let mut name: Option<Range<usize>> = None;
        let mut last_ident: Option<Range<usize>> = None;
        loop {
            let Some(t) = self.lx.next()? else {
                return match stack.last() {
                    Some(&(_, at)) => error(at, "bracket is never closed"),
                    None => error(start, "expected ';' at the end of this item"),
                };
            };
            match t.kind {
                Kind::Ident => {
                    if self.lx.text[t.span.clone()].eq_ignore_ascii_case(b"asm")
                        && self.peek_punct(b'{')?
                    {
                        let open = self.lx.next()?.map_or(t.span.end, |o| o.span.start);
                        let body = scan_asm(self.lx.text, open + 1)?;
                        self.lx.pos = body.end + 1;
                        if stack.is_empty() {
                            // `asm { … }` closes an item like a block does.
                            return self.finish_block_item(name.or(last_ident));
                        }
                        continue;
                    }
                    last_ident = Some(t.span);
                }
                Kind::Punct(b';') if stack.is_empty() => {
                    return Ok((t.span.end, name.or(last_ident)));
                }
                Kind::Punct(b'=' | b':' | b'<') if stack.is_empty() && name.is_none() => {
                    name = last_ident.clone();
                }
                Kind::Punct(c @ (b'(' | b'[' | b'{')) => {
                    if stack.is_empty() && name.is_none() && c != b'[' {
                        name = last_ident.clone();
                    }
                    stack.push((c, t.span.start));
                    if stack.len() > MAX_NESTING {
                        return error(t.span.start, "brackets nested too deeply");
                    }
                }
                Kind::Punct(c @ (b')' | b']' | b'}')) => {
                    let want = match c {
                        b')' => b'(',
                        b']' => b'[',
                        _ => b'{',
                    };
                    match stack.pop() {
                        Some((open, _)) if open == want => {}
                        Some((_, at)) => {
                            return error(
                                t.span.start,
                                format!(
                                    "'{}' does not match the '{}' opened at offset {at}",
                                    c as char, self.lx.text[at] as char
                                ),
                            )
                        }
                        None => {
                            return error(
                                t.span.start,
                                format!("'{}' without an opener", c as char),
                            )
                        }
                    }
                    if c == b'}' && stack.is_empty() {
                        return self.finish_block_item(name.or(last_ident));
                    }
                }
                _ => {}
            }
        }
    }

    /// After a top-level `}`: an optional `;` belongs to the item.
    fn finish_block_item(
        &mut self,
        name: Option<Range<usize>>,
    ) -> Result<(usize, Option<Range<usize>>), ParseError> {
        let end = self.lx.pos;
        if self.peek_punct(b';')? {
            let semi = self.lx.next()?.map_or(end, |t| t.span.end);
            return Ok((semi, name));
        }
        Ok((end, name))
    }
}

/// A `//` comment after `end` on the same line, with only blanks before it.
fn trailing_comment(t: &[u8], end: usize) -> Option<Range<usize>> {
    let stop = line_end(t, end);
    let line = &t[end..stop];
    let lead = line
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    if line[lead..].starts_with(b"//") {
        let mut text_start = end + lead + 2;
        while text_start < stop && matches!(t[text_start], b' ' | b'\t') {
            text_start += 1;
        }
        let mut text_end = stop;
        while text_end > text_start && t[text_end - 1].is_ascii_whitespace() {
            text_end -= 1;
        }
        Some(text_start..text_end)
    } else {
        None
    }
}

/// The `<name>` references in a value, as ranges of the names.
pub fn references(text: &[u8], value: &Range<usize>) -> Vec<Range<usize>> {
    let mut lx = Lexer {
        text: &text[..value.end.min(text.len())],
        pos: value.start,
    };
    let mut tokens = Vec::new();
    while let Ok(Some(t)) = lx.next() {
        tokens.push(t);
    }
    tokens
        .windows(3)
        .filter(|w| {
            w[0].kind == Kind::Punct(b'<')
                && w[1].kind == Kind::Ident
                && w[2].kind == Kind::Punct(b'>')
        })
        .map(|w| w[1].span.clone())
        .collect()
}

/// The tokens of a standalone value (for checking a value the user typed into a pass's
/// JSON): an error when it does not lex.
pub fn lex_value(value: &[u8]) -> Result<Vec<Token>, ParseError> {
    let mut lx = Lexer {
        text: value,
        pos: 0,
    };
    let mut tokens = Vec::new();
    while let Some(t) = lx.next()? {
        tokens.push(t);
    }
    Ok(tokens)
}
