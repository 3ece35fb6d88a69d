//! One compilation, source text to bytecode: what `shaderfs d3d9 compile` and the mount's
//! `hlsl/` view run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::diag::{Diagnostics, Severity};
use super::lower::{Lowering, Profile};
use super::token::{FileId, Loc, SourceFile, Sources, Token};
use super::{codegen, parse, pp};
use crate::shader::d3d9::{asm, ctab, disasm};

/// fxc's options, as `d3d9 compile` takes them.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `-T`: `ps_2_0`, `vs_3_0` …
    pub profile: String,
    /// `-E`: the entry point, `main` when empty.
    pub entry: String,
    /// `-D NAME[=VALUE]`.
    pub defines: Vec<(String, Option<String>)>,
    /// `-I DIR`, searched in order after the including file's folder.
    pub include_dirs: Vec<PathBuf>,
    /// Registers to keep: a constant of this name the source does not bind with
    /// `register()` goes to this register (`c`, `s`, `b`, `i` and its number), as in the
    /// shader a save replaces, because the game sets constants by register.
    pub keep_registers: HashMap<String, (char, u32)>,
    /// `D3DCOMPILE_*` flags as fxc takes them: [`PACK_ROW_MAJOR`] (`-Zpr`),
    /// [`PACK_COLUMN_MAJOR`] (`-Zpc`), [`BACKWARDS_COMPATIBILITY`] (`-Gec`). The table
    /// records them, as fxc's does.
    pub flags: u32,
}

/// `D3DCOMPILE_PACK_MATRIX_ROW_MAJOR`: matrices without `row_major`/`column_major` are
/// row-major (`-Zpr`).
pub const PACK_ROW_MAJOR: u32 = 0x8;
/// `D3DCOMPILE_PACK_MATRIX_COLUMN_MAJOR` (`-Zpc`), the default.
pub const PACK_COLUMN_MAJOR: u32 = 0x10;
/// `D3DCOMPILE_ENABLE_BACKWARDS_COMPATIBILITY` (`-Gec`).
pub const BACKWARDS_COMPATIBILITY: u32 = 0x1000;

/// A compiled shader.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub bytecode: Vec<u8>,
    /// The instructions as the code generator wrote them, for the assembler.
    pub asm: String,
    /// Warnings (no errors: those fail the compilation).
    pub diagnostics: Diagnostics,
    pub sources: Sources,
}

/// A compilation that failed: every error and warning, with the files to name them by.
#[derive(Debug, Clone)]
pub struct Failed {
    pub diagnostics: Diagnostics,
    pub sources: Sources,
}

impl Failed {
    pub fn render(&self) -> String {
        self.diagnostics.render(&self.sources)
    }
}

/// Compile `text`, read from `path` (for `#include "…"` beside it) and named `name` in
/// messages.
pub fn compile(
    name: &str,
    text: &str,
    path: Option<&Path>,
    options: &Options,
) -> Result<Compiled, Failed> {
    compile_with(name, text, path, options, &pp::FsLoader)
}

/// [`compile`] with `#include`s read through `loader` (in memory, from an archive).
pub fn compile_with(
    name: &str,
    text: &str,
    path: Option<&Path>,
    options: &Options,
    loader: &dyn pp::Loader,
) -> Result<Compiled, Failed> {
    let mut sources = Sources::default();
    let main = sources.add(SourceFile {
        name: name.to_string(),
        path: path.map(Path::to_path_buf),
        text: text.to_string(),
    });
    let mut diags = Diagnostics::default();
    let Some(profile) = Profile::parse(&options.profile) else {
        diags.error(
            Loc { file: main, line: 1, col: 1 },
            format!(
                "unknown profile '{}': expected vs_1_1, vs_2_0, vs_2_x, vs_3_0, ps_1_1, ps_1_2, ps_1_3, ps_1_4, ps_2_0, ps_2_x (ps_2_a, ps_2_b) or ps_3_0",
                options.profile
            ),
        );
        return Err(Failed {
            diagnostics: diags,
            sources,
        });
    };
    let entry = if options.entry.is_empty() {
        "main"
    } else {
        options.entry.as_str()
    };
    let mut tokens = tokens(&mut sources, main, options, loader, &mut diags);
    let left_out = parse::leave_out_wide_ints(&mut tokens, &mut diags);
    let failed = |mut diagnostics: Diagnostics, sources: Sources| {
        // What failed may be what followed a literal left out: each is an error then.
        for &i in &left_out {
            diagnostics.list[i].severity = Severity::Error;
        }
        Failed {
            diagnostics,
            sources,
        }
    };
    let result = super::with_stack(|| {
        let program = parse::parse(&tokens, &mut diags);
        if diags.has_errors() {
            return None;
        }
        // What is said of the code as a whole is said at the entry point's name.
        let at = program
            .items
            .iter()
            .find_map(|item| match item {
                super::ast::Item::Function(f) if f.name == entry && f.body.is_some() => Some(f.loc),
                _ => None,
            })
            .filter(|l| l.line > 0)
            .unwrap_or(Loc {
                file: main,
                line: 1,
                col: 1,
            });
        let ir = Lowering::new(profile, &mut diags)
            .keep_registers(options.keep_registers.clone())
            .row_major(options.flags & PACK_ROW_MAJOR != 0)
            .run(&program, entry)?;
        let generated = if let Some(block) = &ir.shader_asm {
            super::asm_shader::generate(&ir, block, profile, &options.profile, options.flags)
        } else if profile.pixel && profile.major == 1 {
            super::ps1::generate(&ir, profile, &options.profile, options.flags)
        } else {
            codegen::generate(&ir, profile, &options.profile, options.flags)
        };
        match generated {
            Ok(g) => Some((g, at)),
            Err(errors) => {
                for (loc, e) in errors {
                    // A place the code generator knows (a node's), else the entry point.
                    let loc = if loc.line > 0 { loc } else { at };
                    diags.error(loc, e);
                }
                None
            }
        }
    });
    let Some((generated, place)) = result else {
        return Err(failed(diags, sources));
    };
    let bytecode = match asm::assemble_dropping_comments(&generated.asm) {
        Ok(b) => b,
        Err(e) => {
            let line = generated
                .asm
                .lines()
                .nth(e.line.saturating_sub(1))
                .unwrap_or("");
            diags.error(
                place,
                format!(
                    "the compiled code does not fit {}: {} (at '{}'){}",
                    options.profile,
                    e.message,
                    line.trim(),
                    if e.message.starts_with("too many instructions") {
                        slots_used(&generated.asm)
                    } else {
                        String::new()
                    }
                ),
            );
            return Err(failed(diags, sources));
        }
    };
    let bytecode = match ctab::replace_ctab(&bytecode, &generated.table.encode()) {
        Ok(b) => b,
        Err(e) => {
            diags.error(
                place,
                format!("the constant table could not be written: {e}"),
            );
            return Err(failed(diags, sources));
        }
    };
    Ok(Compiled {
        bytecode,
        asm: generated.asm,
        diagnostics: diags,
        sources,
    })
}

/// How many instruction slots code that does not fit its model takes, as its listing
/// counts them: `; it takes 10 (0 texture, 10 arithmetic)`.
fn slots_used(asm_text: &str) -> String {
    let Ok(bytes) = asm::assemble_unvalidated(asm_text) else {
        return String::new();
    };
    let Ok(listing) = disasm::disassemble(&bytes) else {
        return String::new();
    };
    listing
        .lines()
        .find_map(|l| l.strip_prefix("// approximately "))
        .and_then(|rest| {
            let (n, detail) = rest.split_once(" instruction slot")?;
            let detail = detail
                .split_once('(')
                .map_or("", |(_, d)| d.trim_end_matches(')'));
            Some(if detail.is_empty() {
                format!("; it takes {n}")
            } else {
                format!("; it takes {n} ({detail})")
            })
        })
        .unwrap_or_default()
}

/// The source's tokens after preprocessing.
fn tokens(
    sources: &mut Sources,
    main: FileId,
    options: &Options,
    loader: &dyn pp::Loader,
    diags: &mut Diagnostics,
) -> Vec<Token> {
    let pp_options = pp::Options {
        defines: options.defines.clone(),
        include_dirs: options.include_dirs.clone(),
        ..pp::Options::default()
    };
    pp::preprocess(sources, main, &pp_options, loader, diags)
}
