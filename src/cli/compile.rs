//! `shaderfs d3d9 compile`: HLSL to Direct3D 9 bytecode, with fxc's options.

use std::path::{Path, PathBuf};

use shaderfs::mount::{Failure, EXIT_MALFORMED};
use shaderfs::shader::d3d9::disasm;
use shaderfs::shader::hlsl::compile::{compile as compile_hlsl, Options};

use super::loose::write_out;

/// `d3d9 compile SRC -T PROFILE [-E ENTRY] [-D NAME[=VALUE]]… [-I DIR]… [-Zpr|-Zpc] [-Gec]
/// [-o OUT] [--listing]`.
#[allow(clippy::too_many_arguments)]
/// Warnings and errors go to standard error as `FILE(LINE,COL): error: message`, every one
/// of them; an error exits 2 and writes nothing.
pub fn compile(
    file: &Path,
    profile: &str,
    entry: Option<&str>,
    defines: &[String],
    include_dirs: &[PathBuf],
    out: Option<&Path>,
    listing: bool,
    flags: u32,
) -> Result<(), Failure> {
    let bytes =
        std::fs::read(file).map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
    let text = String::from_utf8(bytes).map_err(|e| Failure {
        code: EXIT_MALFORMED,
        message: format!("{}: not UTF-8 text: {e}", file.display()),
    })?;
    let options = Options {
        profile: profile.to_string(),
        entry: entry.unwrap_or("main").to_string(),
        defines: defines
            .iter()
            .map(|d| match d.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (d.clone(), None),
            })
            .collect(),
        include_dirs: include_dirs.to_vec(),
        flags,
        ..Options::default()
    };
    let name = file.display().to_string();
    match compile_hlsl(&name, &text, Some(file), &options) {
        Ok(compiled) => {
            eprint!("{}", compiled.diagnostics.render(&compiled.sources));
            if let Some(out) = out {
                write_out(out, &compiled.bytecode)?;
            }
            if listing {
                let text = disasm::disassemble_in(&compiled.bytecode, disasm::Style::Fxc).map_err(
                    |e| Failure {
                        code: EXIT_MALFORMED,
                        message: format!("{name}: the compiled shader does not disassemble: {e}"),
                    },
                )?;
                if out.is_some_and(|o| o.as_os_str() == "-") {
                    eprint!("{text}");
                } else {
                    print!("{text}");
                }
            }
            Ok(())
        }
        Err(failed) => {
            eprint!("{}", failed.render());
            Err(Failure {
                code: EXIT_MALFORMED,
                message: format!(
                    "{name}: compilation failed with {} error{}",
                    failed.diagnostics.errors(),
                    if failed.diagnostics.errors() == 1 {
                        ""
                    } else {
                        "s"
                    }
                ),
            })
        }
    }
}
