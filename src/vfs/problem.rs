//! What an archive holds that the game would refuse, and where: the records of
//! `shaderfs check` (`--json` prints them as they are).

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

#[cfg(test)]
mod tests {
    use super::*;

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
