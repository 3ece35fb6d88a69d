//! Errors and warnings, printed as fxc prints them: `FILE(LINE,COL): error: message`.

use std::fmt::Write;

use super::token::{Loc, Sources};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub loc: Loc,
    pub message: String,
}

/// What a compilation found, in the order it found it.
#[derive(Debug, Clone, Default)]
pub struct Diagnostics {
    pub list: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn error(&mut self, loc: Loc, message: impl Into<String>) {
        self.list.push(Diagnostic {
            severity: Severity::Error,
            loc,
            message: message.into(),
        });
    }

    pub fn warning(&mut self, loc: Loc, message: impl Into<String>) {
        self.list.push(Diagnostic {
            severity: Severity::Warning,
            loc,
            message: message.into(),
        });
    }

    pub fn has_errors(&self) -> bool {
        self.list.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn errors(&self) -> usize {
        self.list
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }

    /// Every message, one per line, as `FILE(LINE,COL): error: message`.
    pub fn render(&self, sources: &Sources) -> String {
        let mut out = String::new();
        for d in &self.list {
            let what = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let _ = writeln!(
                out,
                "{}({},{}): {what}: {}",
                sources.name(d.loc.file),
                d.loc.line,
                d.loc.col,
                d.message
            );
        }
        out
    }
}
