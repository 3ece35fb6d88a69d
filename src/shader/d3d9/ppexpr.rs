//! The condition of an `#if` / `#elif` line, as C's preprocessor (and D3DX's) evaluates it:
//! integers, `defined NAME` / `defined(NAME)`, object-like macros expanded, any other
//! name 0, and C's operators with C's precedence. `None` for what this does not follow
//! (a function-like macro, a malformed expression, division by zero), which the caller
//! treats as a line the checker does not follow.

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

fn tokens(text: &[u8]) -> Option<Vec<Tok<'_>>> {
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
                Some(hex) => i64::from_str_radix(hex, 16).ok()?,
                None if digits.len() > 1 && digits.starts_with('0') => {
                    i64::from_str_radix(&digits[1..], 8).ok()?
                }
                None => digits.parse().ok()?,
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
    let mut expanded = Vec::new();
    expand(&tokens(text)?, macro_body, 0, &mut expanded)?;
    let mut p = Parser {
        toks: &expanded,
        pos: 0,
    };
    let value = p.conditional()?;
    (p.pos == expanded.len()).then_some(value)
}

/// `toks` with `defined X` replaced by 0 or 1 and macros by their bodies' tokens.
fn expand<'a>(
    toks: &[Tok<'a>],
    macro_body: &dyn Fn(&[u8]) -> Option<&'a [u8]>,
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
                Some(body) => expand(&tokens(body)?, macro_body, depth + 1, out)?,
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
}

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

    fn conditional(&mut self) -> Option<i64> {
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
                "<<" => left.checked_shl(u32::try_from(right).ok()?)?,
                ">>" => left.checked_shr(u32::try_from(right).ok()?)?,
                "+" => left.wrapping_add(right),
                "-" => left.wrapping_sub(right),
                "*" => left.wrapping_mul(right),
                "/" => left.checked_div(right)?,
                _ => left.checked_rem(right)?,
            };
        }
        Some(left)
    }

    fn unary(&mut self) -> Option<i64> {
        if let Some(op) = self.op(&["!", "~", "-", "+"]) {
            let v = self.unary()?;
            return Some(match op {
                "!" => i64::from(v == 0),
                "~" => !v,
                "-" => v.wrapping_neg(),
                _ => v,
            });
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
}
