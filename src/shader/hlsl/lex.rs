//! Text to tokens. Comments and whitespace go; a backslash at the end of a line joins it to
//! the next (so a `#define` may span lines); every token keeps its line and column.

use super::diag::Diagnostics;
use super::token::{FileId, Loc, Token, TokenKind};

/// A token and the layout around it, which the preprocessor needs: a directive is a `#`
/// that starts a line and runs to the next token that does, and `#define F(x)` is a
/// function-like macro only when no space comes before its `(`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lexed {
    pub token: Token,
    /// Nothing but whitespace and comments comes before it on its (logical) line.
    pub first_on_line: bool,
    /// Whitespace or a comment comes right before it.
    pub space_before: bool,
}

/// Punctuators, longest first so that the first match is the longest.
const PUNCTS: [&str; 48] = [
    "<<=", ">>=", "...", "::", "++", "--", "&&", "||", "==", "!=", "<=", ">=", "+=", "-=", "*=",
    "/=", "%=", "&=", "|=", "^=", "<<", ">>", "##", "->", "+", "-", "*", "/", "%", "<", ">", "=",
    "!", "~", "&", "|", "^", "?", ":", ";", ",", ".", "(", ")", "[", "]", "{", "}",
];

/// `#` is a punctuator too, but only for the preprocessor.
const HASH: &str = "#";

struct Cursor<'a> {
    chars: Vec<char>,
    pos: usize,
    line: u32,
    col: u32,
    file: FileId,
    _text: &'a str,
}

impl Cursor<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.get(self.pos).copied()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn loc(&self) -> Loc {
        Loc {
            file: self.file,
            line: self.line,
            col: self.col,
        }
    }

    /// A backslash followed by a line end (`\r\n` too) at the cursor: its length.
    fn splice_len(&self) -> Option<usize> {
        if self.peek(0) != Some('\\') {
            return None;
        }
        let mut n = 1;
        while matches!(self.peek(n), Some(' ' | '\t')) {
            n += 1;
        }
        match self.peek(n) {
            Some('\n') => Some(n + 1),
            Some('\r') if self.peek(n + 1) == Some('\n') => Some(n + 2),
            _ => None,
        }
    }
}

/// Every token of `text`, which is file `file`. What cannot be a token (a stray `@`, an
/// unterminated comment or string) is reported and skipped.
pub fn lex(text: &str, file: FileId, diags: &mut Diagnostics) -> Vec<Lexed> {
    let mut c = Cursor {
        chars: text.chars().collect(),
        pos: 0,
        line: 1,
        col: 1,
        file,
        _text: text,
    };
    let mut out = Vec::new();
    let mut first_on_line = true;
    let mut space_before = false;
    while let Some(ch) = c.peek(0) {
        if ch == '\n' {
            c.bump();
            first_on_line = true;
            space_before = true;
            continue;
        }
        if ch.is_whitespace() || ch == '\u{feff}' {
            c.bump();
            space_before = true;
            continue;
        }
        if let Some(n) = c.splice_len() {
            for _ in 0..n {
                c.bump();
            }
            space_before = true;
            continue;
        }
        if ch == '/' && c.peek(1) == Some('/') {
            // A line comment runs to the end of the line, spliced lines included.
            while let Some(ch) = c.peek(0) {
                if let Some(n) = c.splice_len() {
                    for _ in 0..n {
                        c.bump();
                    }
                    continue;
                }
                if ch == '\n' {
                    break;
                }
                c.bump();
            }
            space_before = true;
            continue;
        }
        if ch == '/' && c.peek(1) == Some('*') {
            let start = c.loc();
            c.bump();
            c.bump();
            let mut closed = false;
            while let Some(ch) = c.bump() {
                if ch == '*' && c.peek(0) == Some('/') {
                    c.bump();
                    closed = true;
                    break;
                }
            }
            if !closed {
                diags.error(start, "comment not closed: '/*' without '*/'");
            }
            space_before = true;
            continue;
        }
        let loc = c.loc();
        let start = c.pos;
        let kind = if ch.is_ascii_alphabetic() || ch == '_' {
            while matches!(c.peek(0), Some(ch) if ch.is_ascii_alphanumeric() || ch == '_') {
                c.bump();
            }
            TokenKind::Ident
        } else if ch.is_ascii_digit()
            || (ch == '.' && c.peek(1).is_some_and(|d| d.is_ascii_digit()))
        {
            number(&mut c)
        } else if ch == '"' {
            c.bump();
            let mut closed = false;
            while let Some(ch) = c.peek(0) {
                if ch == '\n' {
                    break;
                }
                c.bump();
                if ch == '\\' {
                    c.bump();
                } else if ch == '"' {
                    closed = true;
                    break;
                }
            }
            if !closed {
                diags.error(
                    loc,
                    "string not closed: '\"' without its closing '\"' on the line",
                );
            }
            TokenKind::Str
        } else if let Some(p) = PUNCTS
            .iter()
            .chain(std::iter::once(&HASH))
            .find(|p| p.chars().enumerate().all(|(i, pc)| c.peek(i) == Some(pc)))
        {
            for _ in 0..p.chars().count() {
                c.bump();
            }
            TokenKind::Punct
        } else {
            c.bump();
            diags.error(loc, format!("unexpected character '{ch}'"));
            space_before = true;
            continue;
        };
        let text: String = c.chars[start..c.pos].iter().collect();
        out.push(Lexed {
            token: Token { kind, text, loc },
            first_on_line,
            space_before,
        });
        first_on_line = false;
        space_before = false;
    }
    out
}

/// A number at the cursor: digits, a fraction, an exponent and a suffix, as C and HLSL
/// write them. Whether it is well formed (`0x`, `1e`) is the parser's to say, with the text.
fn number(c: &mut Cursor) -> TokenKind {
    if c.peek(0) == Some('0') && matches!(c.peek(1), Some('x' | 'X')) {
        c.bump();
        c.bump();
        while matches!(c.peek(0), Some(ch) if ch.is_ascii_hexdigit()) {
            c.bump();
        }
        while matches!(c.peek(0), Some('u' | 'U' | 'l' | 'L')) {
            c.bump();
        }
        return TokenKind::Int;
    }
    let mut float = false;
    while matches!(c.peek(0), Some(ch) if ch.is_ascii_digit()) {
        c.bump();
    }
    if c.peek(0) == Some('.') {
        float = true;
        c.bump();
        while matches!(c.peek(0), Some(ch) if ch.is_ascii_digit()) {
            c.bump();
        }
    }
    if matches!(c.peek(0), Some('e' | 'E')) {
        let sign = matches!(c.peek(1), Some('+' | '-'));
        let digit_at = if sign { 2 } else { 1 };
        if c.peek(digit_at).is_some_and(|d| d.is_ascii_digit()) {
            float = true;
            for _ in 0..digit_at {
                c.bump();
            }
            while matches!(c.peek(0), Some(ch) if ch.is_ascii_digit()) {
                c.bump();
            }
        }
    }
    if float {
        if matches!(c.peek(0), Some('f' | 'F' | 'h' | 'H' | 'l' | 'L')) {
            c.bump();
        }
        TokenKind::Float
    } else if matches!(c.peek(0), Some('f' | 'F' | 'h' | 'H')) {
        // `1f` and `2h` are floats in HLSL.
        c.bump();
        TokenKind::Float
    } else {
        while matches!(c.peek(0), Some('u' | 'U' | 'l' | 'L')) {
            c.bump();
        }
        TokenKind::Int
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<(TokenKind, String)> {
        let mut d = Diagnostics::default();
        let out = lex(src, FileId(0), &mut d);
        assert!(!d.has_errors(), "{:?}", d.list);
        out.into_iter()
            .map(|l| (l.token.kind, l.token.text))
            .collect()
    }

    #[test]
    fn numbers_keep_their_spelling_and_kind() {
        use TokenKind::*;
        let t = texts("1 1.5 .5f 2.h 1e3 1e-3f 0x1Fu 07 5u 1f 3L x.y");
        let want = [
            (Int, "1"),
            (Float, "1.5"),
            (Float, ".5f"),
            (Float, "2.h"),
            (Float, "1e3"),
            (Float, "1e-3f"),
            (Int, "0x1Fu"),
            (Int, "07"),
            (Int, "5u"),
            (Float, "1f"),
            (Int, "3L"),
            (Ident, "x"),
            (Punct, "."),
            (Ident, "y"),
        ];
        let want: Vec<_> = want.iter().map(|(k, s)| (*k, s.to_string())).collect();
        assert_eq!(t, want);
    }

    #[test]
    fn punctuators_take_the_longest_match() {
        let t: Vec<String> = texts("a<<=b>>c&&d||!e##f->g...h::i")
            .into_iter()
            .map(|(_, s)| s)
            .collect();
        assert_eq!(
            t,
            [
                "a", "<<=", "b", ">>", "c", "&&", "d", "||", "!", "e", "##", "f", "->", "g", "...",
                "h", "::", "i"
            ]
        );
    }

    #[test]
    fn places_layout_and_splices() {
        let mut d = Diagnostics::default();
        let out = lex(
            "#define F(x) \\\n  x\n/* a\n b */ y // c\n\tz",
            FileId(3),
            &mut d,
        );
        let got: Vec<_> = out
            .iter()
            .map(|l| {
                (
                    l.token.text.as_str(),
                    l.token.loc.line,
                    l.token.loc.col,
                    l.first_on_line,
                    l.space_before,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("#", 1, 1, true, false),
                ("define", 1, 2, false, false),
                ("F", 1, 9, false, true),
                ("(", 1, 10, false, false),
                ("x", 1, 11, false, false),
                (")", 1, 12, false, false),
                ("x", 2, 3, false, true),
                ("y", 4, 7, true, true),
                ("z", 5, 2, true, true),
            ]
        );
        assert_eq!(out[0].token.loc.file, FileId(3));
    }

    #[test]
    fn bad_characters_and_open_comments_are_reported_with_their_place() {
        let mut d = Diagnostics::default();
        let out = lex("a @ b\n/* open", FileId(0), &mut d);
        assert_eq!(out.len(), 2);
        let msgs: Vec<_> = d
            .list
            .iter()
            .map(|d| (d.loc.line, d.loc.col, d.message.clone()))
            .collect();
        assert_eq!(
            msgs,
            [
                (1, 3, "unexpected character '@'".to_string()),
                (2, 1, "comment not closed: '/*' without '*/'".to_string())
            ]
        );
    }
}
