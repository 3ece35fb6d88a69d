//! Tokens and where they came from, shared by the lexer, the preprocessor and the parser.

use std::path::PathBuf;

/// An index into [`Sources`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A place in a source file: 1-based line and column (the column counts characters, as
/// fxc's `FILE(LINE,COL)` does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Loc {
    pub file: FileId,
    pub line: u32,
    pub col: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// A name or keyword: `float4`, `main`, `if`.
    Ident,
    /// An integer literal as written, suffix included: `12`, `0x1F`, `07`, `5u`, `3L`.
    Int,
    /// A floating literal as written, suffix included: `1.5`, `.5f`, `1e-3`, `2.h`, `1.0L`.
    Float,
    /// A string literal, quotes included: `"name"`.
    Str,
    /// An operator or punctuator: `+`, `+=`, `<<=`, `(`, `::`, `#` …
    Punct,
    /// A `#pragma` the parser must see, its text after `pragma` with spaces removed:
    /// `pack_matrix(row_major)`.
    Pragma,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub text: String,
    /// Where the token starts; for a token a macro produced, where the macro was invoked.
    pub loc: Loc,
}

impl Token {
    pub fn is(&self, text: &str) -> bool {
        self.text == text && matches!(self.kind, TokenKind::Punct | TokenKind::Ident)
    }
}

/// One file the compiler read.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// As the user or the `#include` spelled it, which is how messages name it.
    pub name: String,
    /// Where it was read from, if from disk (`#include "x"` resolves beside it first).
    pub path: Option<PathBuf>,
    pub text: String,
}

/// Every file a compilation read, so that a [`Loc`] can be named.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub files: Vec<SourceFile>,
}

impl Sources {
    pub fn add(&mut self, file: SourceFile) -> FileId {
        self.files.push(file);
        FileId(self.files.len() as u32 - 1)
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn name(&self, id: FileId) -> &str {
        self.files
            .get(id.0 as usize)
            .map_or("<unknown>", |f| f.name.as_str())
    }
}
