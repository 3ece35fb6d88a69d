//! Writing an edit back into the effect text (`shared/formats/sha.md` §9): the text is
//! the source of truth, and an edit replaces only the bytes it is about.
//!
//! * An asm view replaces exactly the bytes between `asm {` and its `}`.
//! * A pass's JSON is compared with the pass's assignments; only those that changed are
//!   rewritten: a changed value replaces the value's bytes, a removed assignment takes
//!   its line with it (when it had the line to itself), a new one gets a line of its own
//!   after the assignment it follows in the JSON, indented like its neighbours.
//!
//! Whatever an edit produces is parsed and checked again before it is saved (mod.rs).

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::effect::{self, Kind, Pass};

/// `text` with `range` replaced by `data`.
pub fn splice(text: &[u8], range: Range<usize>, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() - range.len() + data.len());
    out.extend_from_slice(&text[..range.start]);
    out.extend_from_slice(data);
    out.extend_from_slice(&text[range.end..]);
    out
}

/// One assignment of a pass as its JSON shows it (and as a save gives it back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    pub value: String,
}

impl State {
    pub fn of(text: &[u8], a: &effect::Assignment) -> State {
        State {
            state: String::from_utf8_lossy(&text[a.state.clone()]).into_owned(),
            index: a.index,
            value: String::from_utf8_lossy(&text[a.value.clone()]).into_owned(),
        }
    }

    fn same_target(&self, other: &State) -> bool {
        self.state == other.state && self.index == other.index
    }

    fn statement(&self) -> String {
        match self.index {
            Some(i) => format!("{}[{i}] = {};", self.state, self.value),
            None => format!("{} = {};", self.state, self.value),
        }
    }

    /// A state name is an identifier; a value is one effect value: it lexes, its brackets
    /// balance, and it holds no `;` or braces that would end the pass or the statement.
    pub fn check(&self, n: usize) -> Result<(), String> {
        let s = self.state.as_bytes();
        let ident = !s.is_empty()
            && (s[0].is_ascii_alphabetic() || s[0] == b'_')
            && s.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_');
        if !ident {
            return Err(format!(
                "states[{n}]: state \"{}\" is not a state name (letters, digits, '_')",
                self.state
            ));
        }
        let tokens = effect::lex_value(self.value.as_bytes())
            .map_err(|e| format!("states[{n}] ({}): value: {}", self.state, e.message))?;
        if tokens.is_empty() {
            return Err(format!("states[{n}] ({}): the value is empty", self.state));
        }
        let mut depth = 0i32;
        for t in &tokens {
            match t.kind {
                Kind::Punct(b';' | b'{' | b'}') | Kind::Directive => {
                    return Err(format!(
                        "states[{n}] ({}): a value cannot hold ';', braces or '#' lines \
                         (edit effect.fx for that)",
                        self.state
                    ))
                }
                Kind::Punct(b'(' | b'[') => depth += 1,
                Kind::Punct(b')' | b']') => {
                    depth -= 1;
                    if depth < 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        if depth != 0 {
            return Err(format!(
                "states[{n}] ({}): brackets in the value do not balance",
                self.state
            ));
        }
        Ok(())
    }
}

fn line_start(t: &[u8], i: usize) -> usize {
    t[..i]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1)
}

/// Offset just past the `\n` ending the line holding `i` (the end of the text if none).
fn next_line(t: &[u8], i: usize) -> usize {
    t[i..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(t.len(), |p| i + p + 1)
}

fn blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| matches!(b, b' ' | b'\t'))
}

/// Only blanks, then perhaps a `//` comment, up to the end of the line.
fn rest_is_blank(t: &[u8], from: usize) -> bool {
    let end = next_line(t, from);
    let rest = &t[from..end];
    let rest = rest.strip_suffix(b"\n").unwrap_or(rest);
    let rest = rest.strip_suffix(b"\r").unwrap_or(rest);
    let lead = rest
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    rest[lead..].is_empty() || rest[lead..].starts_with(b"//")
}

/// The new text with `pass`'s assignments turned into `new`, touching only what changed.
pub fn edit_pass(text: &[u8], pass: &Pass, new: &[State]) -> Vec<u8> {
    let old: Vec<State> = pass.states.iter().map(|a| State::of(text, a)).collect();
    // Match new entries to old ones, in order, by state name and index.
    let mut matched: Vec<Option<usize>> = Vec::with_capacity(new.len());
    let mut used = vec![false; old.len()];
    let mut cursor = 0;
    for n in new {
        let found = (cursor..old.len()).find(|&k| !used[k] && old[k].same_target(n));
        if let Some(k) = found {
            used[k] = true;
            cursor = k + 1;
        }
        matched.push(found);
    }

    let eol: &[u8] = if text.windows(2).any(|w| w == b"\r\n") {
        b"\r\n"
    } else {
        b"\n"
    };
    let indent: Vec<u8> = match pass.states.last() {
        Some(a) => {
            let ls = line_start(text, a.span.start);
            let lead = text[ls..a.span.start]
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t'))
                .count();
            text[ls..ls + lead].to_vec()
        }
        None => {
            let ls = line_start(text, pass.span.start);
            let lead = text[ls..]
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t'))
                .count();
            let mut v = text[ls..ls + lead].to_vec();
            v.push(b'\t');
            v
        }
    };

    // (start, end, replacement); insertions have start == end.
    let mut edits: Vec<(usize, usize, Vec<u8>)> = Vec::new();
    for (k, a) in pass.states.iter().enumerate() {
        if used[k] {
            continue;
        }
        let ls = line_start(text, a.span.start);
        if blank(&text[ls..a.span.start]) && rest_is_blank(text, a.span.end) {
            edits.push((ls, next_line(text, a.span.end), Vec::new()));
        } else {
            edits.push((a.span.start, a.span.end, Vec::new()));
        }
    }
    let mut anchor: Option<usize> = None;
    for (n, m) in new.iter().zip(&matched) {
        if let Some(k) = *m {
            anchor = Some(k);
            if n.value != old[k].value {
                edits.push((
                    pass.states[k].value.start,
                    pass.states[k].value.end,
                    n.value.clone().into_bytes(),
                ));
            }
            continue;
        }
        let statement = n.statement().into_bytes();
        let own_line = |at: usize| {
            let mut line = indent.clone();
            line.extend_from_slice(&statement);
            line.extend_from_slice(eol);
            (at, at, line)
        };
        let edit = match anchor.map(|k| &pass.states[k]) {
            Some(a) if rest_is_blank(text, a.span.end) => own_line(next_line(text, a.span.end)),
            Some(a) => {
                let mut s = b" ".to_vec();
                s.extend_from_slice(&statement);
                (a.span.end, a.span.end, s)
            }
            None => match pass.states.first() {
                Some(f) if blank(&text[line_start(text, f.span.start)..f.span.start]) => {
                    own_line(line_start(text, f.span.start))
                }
                Some(f) => {
                    let mut s = statement.clone();
                    s.push(b' ');
                    (f.span.start, f.span.start, s)
                }
                None if blank(&text[line_start(text, pass.close)..pass.close]) => {
                    own_line(line_start(text, pass.close))
                }
                None => {
                    let mut s = eol.to_vec();
                    s.extend_from_slice(&indent);
                    s.extend_from_slice(&statement);
                    s.extend_from_slice(eol);
                    (pass.close, pass.close, s)
                }
            },
        };
        edits.push(edit);
    }
    // Stable: insertions at one point keep the JSON's order and come before a removal
    // that starts there.
    edits.sort_by_key(|e| (e.0, e.1));
    let mut out = Vec::with_capacity(text.len() + 64 * new.len());
    let mut at = 0;
    for (start, end, replacement) in edits {
        let start = start.max(at);
        out.extend_from_slice(&text[at..start]);
        out.extend_from_slice(&replacement);
        at = end.max(start);
    }
    out.extend_from_slice(&text[at..]);
    out
}
