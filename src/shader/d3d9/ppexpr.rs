//! The condition of an `#if` / `#elif` line, as C's preprocessor (and D3DX's) evaluates it:
//! integers, `defined NAME` / `defined(NAME)`, object-like macros expanded, any other
//! name 0, and C's operators with C's precedence. `None` for what this does not follow
//! (a function-like macro, a malformed expression, division by zero), which the caller
//! treats as a line the checker does not follow.
//!
//! Microsoft's HLSL preprocessor (fxc, d3dcompiler) differs in one thing: its integers are
//! unsigned and 32 bits wide, literals taken modulo 2^32 (`-1 == 0xffffffff`,
//! `8 / -3 == 0`), as vkd3d's `tests/preproc-if-expr.shader_test` records; that is
//! [`Integers::Unsigned32`].

/// How the integers of a condition behave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Integers {
    /// C's: signed and 64 bits wide; a literal beyond that is malformed.
    C,
    /// fxc's: unsigned and 32 bits wide, every literal and result modulo 2^32.
    Unsigned32,
}

impl Integers {
    /// `v` as this kind of integer.
    fn wrap(self, v: i64) -> i64 {
        match self {
            Integers::C => v,
            Integers::Unsigned32 => v & 0xFFFF_FFFF,
        }
    }

    /// The value of the digits of a literal in `radix`.
    fn literal(self, digits: &str, radix: u32) -> Option<i64> {
        match self {
            Integers::C => i64::from_str_radix(digits, radix).ok(),
            Integers::Unsigned32 => {
                let mut v: u64 = 0;
                for c in digits.chars() {
                    v = v
                        .wrapping_mul(u64::from(radix))
                        .wrapping_add(u64::from(c.to_digit(radix)?));
                }
                Some((v & 0xFFFF_FFFF) as i64)
            }
        }
    }
}

/// A token of a condition.
#[derive(Debug, Clone, PartialEq)]
enum Tok<'a> {
    Num(i64),
    Ident(&'a [u8]),
    Op(&'static str),
}

/// Operators, longest first so that `<<` is not read as `<`.
const OPS: [&str; 23] = [
    "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "!", "~", "-", "+", "*", "/", "%", "<", ">",
    "&", "^", "|", "(", ")", "?",
];

fn tokens(text: &[u8], integers: Integers) -> Option<Vec<Tok<'_>>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < text.len() && text[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let word = std::str::from_utf8(&text[start..i]).ok()?;
            let digits = word.trim_end_matches(['u', 'U', 'l', 'L']);
            let value = match digits.strip_prefix("0x").or(digits.strip_prefix("0X")) {
                Some(hex) if !hex.is_empty() => integers.literal(hex, 16)?,
                Some(_) => return None,
                None if digits.len() > 1 && digits.starts_with('0') => {
                    integers.literal(&digits[1..], 8)?
                }
                None => integers.literal(digits, 10)?,
            };
            out.push(Tok::Num(value));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(&text[start..i]));
        } else if c == b':' {
            out.push(Tok::Op(":"));
            i += 1;
        } else if text[i..].starts_with(b"//") {
            break;
        } else {
            let op = OPS.iter().find(|op| text[i..].starts_with(op.as_bytes()))?;
            out.push(Tok::Op(op));
            i += op.len();
        }
    }
    Some(out)
}

/// The value of `text`, with `macro_body` giving an object-like macro's body (`None`:
/// not defined).
pub fn evaluate<'a>(text: &'a [u8], macro_body: &dyn Fn(&[u8]) -> Option<&'a [u8]>) -> Option<i64> {
    evaluate_as(text, macro_body, Integers::C)
}

/// [`evaluate`] with `integers` of the given kind.
pub fn evaluate_as<'a>(
    text: &'a [u8],
    macro_body: &dyn Fn(&[u8]) -> Option<&'a [u8]>,
    integers: Integers,
) -> Option<i64> {
    let mut expanded = Vec::new();
    expand(
        &tokens(text, integers)?,
        macro_body,
        integers,
        0,
        &mut expanded,
    )?;
    let mut p = Parser {
        toks: &expanded,
        pos: 0,
        integers,
        depth: 0,
    };
    let value = p.conditional()?;
    (p.pos == expanded.len()).then_some(value)
}

/// `toks` with `defined X` replaced by 0 or 1 and macros by their bodies' tokens.
fn expand<'a>(
    toks: &[Tok<'a>],
    macro_body: &dyn Fn(&[u8]) -> Option<&'a [u8]>,
    integers: Integers,
    depth: usize,
    out: &mut Vec<Tok<'a>>,
) -> Option<()> {
    if depth > 16 {
        return None;
    }
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Ident(b"defined") => {
                let (name, next) = match (toks.get(i + 1), toks.get(i + 2), toks.get(i + 3)) {
                    (Some(Tok::Op("(")), Some(Tok::Ident(n)), Some(Tok::Op(")"))) => (*n, i + 4),
                    (Some(Tok::Ident(n)), ..) => (*n, i + 2),
                    _ => return None,
                };
                out.push(Tok::Num(i64::from(macro_body(name).is_some())));
                i = next;
                continue;
            }
            Tok::Ident(name) => match macro_body(name) {
                // A function-like use: not followed.
                Some(_) if toks.get(i + 1) == Some(&Tok::Op("(")) => return None,
                Some(body) => expand(
                    &tokens(body, integers)?,
                    macro_body,
                    integers,
                    depth + 1,
                    out,
                )?,
                None => out.push(Tok::Num(0)),
            },
            t => out.push(t.clone()),
        }
        i += 1;
    }
    Some(())
}

struct Parser<'t, 'a> {
    toks: &'t [Tok<'a>],
    pos: usize,
    integers: Integers,
    depth: usize,
}

/// How deep a condition may nest (parentheses, `?:`, unary operators): deeper is not
/// followed, so that a hostile line cannot exhaust the stack.
const MAX_NESTING: usize = 200;

/// C's binary operators by precedence, loosest first (HLSL's too: `sha/grammar.rs`).
pub(crate) const LEVELS: [&[&str]; 10] = [
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", ">", "<=", ">="],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

impl Parser<'_, '_> {
    fn op(&mut self, ops: &[&str]) -> Option<&'static str> {
        match self.toks.get(self.pos) {
            Some(Tok::Op(op)) if ops.contains(op) => {
                self.pos += 1;
                Some(op)
            }
            _ => None,
        }
    }

    /// `f` one level deeper, if the condition may nest so deep.
    fn nested(&mut self, f: impl FnOnce(&mut Self) -> Option<i64>) -> Option<i64> {
        if self.depth >= MAX_NESTING {
            return None;
        }
        self.depth += 1;
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn conditional(&mut self) -> Option<i64> {
        self.nested(Self::ternary)
    }

    fn ternary(&mut self) -> Option<i64> {
        let c = self.binary(0)?;
        if self.op(&["?"]).is_none() {
            return Some(c);
        }
        let a = self.conditional()?;
        self.op(&[":"])?;
        let b = self.conditional()?;
        Some(if c != 0 { a } else { b })
    }

    fn binary(&mut self, level: usize) -> Option<i64> {
        let Some(ops) = LEVELS.get(level) else {
            return self.unary();
        };
        let mut left = self.binary(level + 1)?;
        while let Some(op) = self.op(ops) {
            let right = self.binary(level + 1)?;
            left = match op {
                "||" => i64::from(left != 0 || right != 0),
                "&&" => i64::from(left != 0 && right != 0),
                "|" => left | right,
                "^" => left ^ right,
                "&" => left & right,
                "==" => i64::from(left == right),
                "!=" => i64::from(left != right),
                "<" => i64::from(left < right),
                ">" => i64::from(left > right),
                "<=" => i64::from(left <= right),
                ">=" => i64::from(left >= right),
                "<<" => left.checked_shl(self.shift(right)?)?,
                ">>" => left.checked_shr(self.shift(right)?)?,
                "+" => left.wrapping_add(right),
                "-" => left.wrapping_sub(right),
                "*" => left.wrapping_mul(right),
                "/" => left.checked_div(right)?,
                _ => left.checked_rem(right)?,
            };
            left = self.integers.wrap(left);
        }
        Some(left)
    }

    /// A shift's count: beyond the width of the integers it is undefined, here malformed.
    fn shift(&self, count: i64) -> Option<u32> {
        let width = match self.integers {
            Integers::C => 64,
            Integers::Unsigned32 => 32,
        };
        u32::try_from(count).ok().filter(|&n| n < width)
    }

    fn unary(&mut self) -> Option<i64> {
        if let Some(op) = self.op(&["!", "~", "-", "+"]) {
            let v = self.nested(Self::unary)?;
            return Some(self.integers.wrap(match op {
                "!" => i64::from(v == 0),
                "~" => !v,
                "-" => v.wrapping_neg(),
                _ => v,
            }));
        }
        if self.op(&["("]).is_some() {
            let v = self.conditional()?;
            self.op(&[")"])?;
            return Some(v);
        }
        match self.toks.get(self.pos) {
            Some(Tok::Num(n)) => {
                self.pos += 1;
                Some(*n)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::evaluate;

    #[test]
    fn conditions_evaluate_as_c_preprocessors_do() {
        let macros = |name: &[u8]| match name {
            b"ONE" => Some(&b"1"[..]),
            b"TWO" => Some(&b"(ONE + ONE)"[..]),
            b"EMPTY" => Some(&b""[..]),
            b"F" => Some(&b"x"[..]),
            _ => None,
        };
        for (text, value) in [
            ("1", Some(1)),
            ("0x10 >> 2", Some(4)),
            ("010", Some(8)),
            ("defined ONE && !defined(NOPE)", Some(1)),
            ("TWO * 3 == 6", Some(1)),
            ("UNDEFINED", Some(0)),
            ("1 + 2 * 3", Some(7)),
            ("(1 + 2) * 3", Some(9)),
            ("ONE ? 5 : 6", Some(5)),
            ("0 || 0 ? 5 : 6", Some(6)),
            ("-1 < 0", Some(1)),
            ("1 / 0", None),
            ("F(2)", None),
            ("1 +", None),
            ("(1", None),
            ("1 // a comment", Some(1)),
            ("3 % 2 | 4 ^ 1 & 1", Some(5)),
        ] {
            assert_eq!(evaluate(text.as_bytes(), &macros), value, "{text}");
        }
    }

    #[test]
    fn fxc_conditions_are_unsigned_32_bit() {
        use super::{evaluate_as, Integers::Unsigned32};
        for (text, value) in [
            ("-1 == 0xffffffff", Some(1)),
            ("-1 == 0xfffffff", Some(0)),
            ("-1 == 0xeffffffffl", Some(1)),
            (
                "(-1 == 4294967295l) && (-1 == 8589934591l) && (1 == 4294967297l)",
                Some(1),
            ),
            ("(-1ul == 4294967295ul) && (1lu == 4294967297lu)", Some(1)),
            ("36893488147419103233 == 1", Some(1)),
            ("8 / -3", Some(0)),
            ("-8 / 3 == 1431655762", Some(1)),
            ("-1 < 0", Some(0)),
            ("~0", Some(0xFFFF_FFFF)),
            ("0xffffffff + 2", Some(1)),
            ("65536 * 65536", Some(0)),
            ("1 << 31 >> 31", Some(1)),
            ("1 << 32", None),
            ("012lu == 10", Some(1)),
            ("1 / 0", None),
        ] {
            assert_eq!(
                evaluate_as(text.as_bytes(), &|_| None, Unsigned32),
                value,
                "{text}"
            );
        }
        // Nesting beyond 200 is not followed (nor a stack exhausted).
        let deep =
            |n: usize, open: &str, close: &str| format!("{}1{}", open.repeat(n), close.repeat(n));
        assert_eq!(evaluate(deep(150, "(", ")").as_bytes(), &|_| None), Some(1));
        assert_eq!(
            evaluate(deep(100_000, "(", ")").as_bytes(), &|_| None),
            None
        );
        assert_eq!(evaluate(deep(100_000, "-", "").as_bytes(), &|_| None), None);
        assert_eq!(
            evaluate(deep(100_000, "1?", ":0").as_bytes(), &|_| None),
            None
        );
        // C's integers are unchanged: signed, and too big a literal is malformed.
        assert_eq!(evaluate(b"-1 < 0", &|_| None), Some(1));
        assert_eq!(evaluate(b"36893488147419103233 == 1", &|_| None), None);
    }
}
