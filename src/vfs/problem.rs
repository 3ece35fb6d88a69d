//! What an archive holds that the game would refuse, and where: the records of
//! `shaderfs check` (`--json` prints them as they are).

use std::cell::Cell;

use aho_corasick::AhoCorasick;
use serde::Serialize;

/// One problem of an archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The file of the archive's tree to open to fix it (`pixel.asm`,
    /// `programs/pixel/3.dxil`), when there is one.
    pub path: Option<String>,
    /// 1-based line and column in the archive's own text (formats that are text).
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Byte offset in the archive (formats that are binary), when one place is to blame.
    pub offset: Option<u64>,
    pub message: String,
}

impl Problem {
    /// A problem of the file `path` of the tree.
    pub fn in_file(path: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            path: Some(path.into()),
            line: None,
            column: None,
            offset: None,
            message: message.into(),
        }
    }

    /// A problem at `line`:`column` of the archive's text.
    pub fn in_text(line: usize, column: usize, message: impl Into<String>) -> Problem {
        Problem {
            path: None,
            line: Some(line),
            column: Some(column),
            offset: None,
            message: message.into(),
        }
    }

    /// A problem of the archive as a whole.
    pub fn whole(message: impl Into<String>) -> Problem {
        Problem {
            path: None,
            line: None,
            column: None,
            offset: None,
            message: message.into(),
        }
    }

    /// As a compiler says it, so editors and `grep` find the place: `demo.sha:12:3:
    /// message`, `db.awc: programs/pixel/3.dxil: message`, `x.sdp: offset 0x1c: message`.
    pub fn located(&self, archive: &str) -> String {
        let mut s = archive.to_owned();
        if let (Some(line), Some(column)) = (self.line, self.column) {
            s.push_str(&format!(":{line}:{column}"));
        }
        if let Some(path) = self.path.as_deref().filter(|_| self.line.is_none()) {
            s.push_str(&format!(": {path}"));
        }
        if let Some(offset) = self.offset {
            s.push_str(&format!(": offset {offset:#x}"));
        }
        s.push_str(": ");
        s.push_str(&self.message);
        s
    }
}

/// The messages of an archive's problems, once reported: whether what a file that cannot
/// be read says names one of them (it fails because of a problem already reported, and is
/// not reported again).
///
/// One automaton over all the messages, so each file's reason is read once, whatever the
/// number of problems: an effect of 4,000 blocks the game refuses has 2,000 problems and
/// 2,000 bytecode views that cannot be read, and testing each reason against each message
/// was 4 million substring searches.
pub struct Reported {
    /// `None` when there is no problem (nothing is explained), or when the messages are
    /// too many for one automaton; then each is searched for in turn.
    matcher: Option<AhoCorasick>,
    messages: Vec<String>,
    /// Bytes of reasons read so far: the work [`Reported::explains`] does.
    searched: Cell<usize>,
}

impl Reported {
    pub fn new(problems: &[Problem]) -> Reported {
        let messages: Vec<String> = problems.iter().map(|p| p.message.clone()).collect();
        let matcher = match messages.is_empty() {
            true => None,
            false => AhoCorasick::new(&messages).ok(),
        };
        Reported {
            matcher,
            messages,
            searched: Cell::new(0),
        }
    }

    /// Whether `why` (what a file that cannot be read says) holds one of the messages.
    pub fn explains(&self, why: &str) -> bool {
        match &self.matcher {
            Some(matcher) => {
                self.searched.set(self.searched.get() + why.len());
                matcher.is_match(why)
            }
            None => self.messages.iter().any(|m| {
                self.searched.set(self.searched.get() + why.len());
                why.contains(m.as_str())
            }),
        }
    }

    /// How many bytes of reasons [`Reported::explains`] has read.
    pub fn searched(&self) -> usize {
        self.searched.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_that_names_a_reported_problem_is_explained() {
        let problems = [
            Problem::in_text(
                35,
                9,
                "pixel shader pSdr: 'mov' needs 2 operands (pixel.asm:3:3)",
            ),
            Problem::in_file("programs/pixel/3.dxil", "no DXIL part"),
        ];
        let reported = Reported::new(&problems);
        assert!(reported
            .explains("demo.sha:35:9: pixel shader pSdr: 'mov' needs 2 operands (pixel.asm:3:3)"));
        assert!(reported.explains("cannot read: no DXIL part; and more"));
        assert!(!reported.explains("demo.sha:40:1: pixel shader pSdr_1: something else"));
        assert!(!Reported::new(&[]).explains("anything"));
    }

    /// An effect of N refused blocks has N problems and N views that cannot be read: each
    /// view's reason is read once, not once per problem (the work grows with N, not N²).
    #[test]
    fn each_reason_is_read_once_whatever_the_number_of_problems() {
        let message = |i: usize| format!("pixel shader pSdr_{i}: 'mov' needs 2 operands");
        let why = |i: usize| format!("big.sha:{}:9: {} (pixel.{i}.asm:3:3)", 10 * i, message(i));
        for blocks in [40, 4000] {
            let problems: Vec<Problem> = (0..blocks)
                .map(|i| Problem::in_text(10 * i, 9, message(i)))
                .collect();
            let reported = Reported::new(&problems);
            let reasons: Vec<String> = (0..blocks).map(why).collect();
            assert!(reasons.iter().all(|w| reported.explains(w)));
            let read: usize = reasons.iter().map(String::len).sum();
            assert_eq!(reported.searched(), read, "{blocks} blocks");
            assert!(!reported.explains("big.sha:1:1: pixel shader pSdr_4000: other"));
        }
    }

    #[test]
    fn located_as_a_compiler_says_it() {
        let text = Problem::in_text(12, 3, "<Tex9> is not declared");
        assert_eq!(
            text.located("demo.sha"),
            "demo.sha:12:3: <Tex9> is not declared"
        );
        let file = Problem::in_file("programs/pixel/3.dxil", "no DXIL part");
        assert_eq!(
            file.located("db.awc"),
            "db.awc: programs/pixel/3.dxil: no DXIL part"
        );
        let at = Problem {
            offset: Some(0x1c),
            ..Problem::whole("runs past the end")
        };
        assert_eq!(at.located("x.sdp"), "x.sdp: offset 0x1c: runs past the end");
    }
}
