//! Commands on loose files, with the code the mount uses: `d3d9 disasm|asm|ctab`,
//! `dxil dis|info` and `sdp pack`.

use std::path::{Path, PathBuf};

use shaderfs::mount::{Failure, EXIT_MALFORMED};
use shaderfs::shader::d3d9::disasm;
use shaderfs::vfs::commit::write_whole;

use super::output::print;

fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))
}

/// Write `bytes` to `out`, or to standard output when `out` is `-`; a file is replaced
/// atomically, so a failed run leaves what was there.
pub fn write_out(out: &Path, bytes: &[u8]) -> Result<(), Failure> {
    match out.as_os_str() == "-" {
        true => print(bytes),
        false => {
            write_whole(out, bytes).map_err(|e| Failure::usage(format!("{}: {e}", out.display())))
        }
    }
}

/// The input `path` is not what it should be (exit status 2).
fn malformed(path: &Path, e: &dyn std::fmt::Display) -> Failure {
    Failure {
        code: EXIT_MALFORMED,
        message: format!("{}: {e}", path.display()),
    }
}

/// `d3d9 disasm FILE [-o OUT] [--style fxc|d3ddisassemble]`
pub fn disasm(file: &Path, out: Option<&Path>, style: disasm::Style) -> Result<(), Failure> {
    let text = disasm::disassemble_in(&read(file)?, style).map_err(|e| malformed(file, &e))?;
    write_out(out.unwrap_or(Path::new("-")), text.as_bytes())
}

/// `d3d9 decompile FILE [-o OUT]`
pub fn decompile(file: &Path, out: Option<&Path>) -> Result<(), Failure> {
    use shaderfs::shader::d3d9::decompile;
    let text = decompile::decompile(&read(file)?).map_err(|e| malformed(file, &e))?;
    write_out(out.unwrap_or(Path::new("-")), text.as_bytes())
}

/// The checks `d3d9 asm` makes.
pub enum Rules {
    /// The shader model's, for Direct3D 9.
    Direct3D9,
    /// Direct3D 8's (`--d3d8`): no dcl, vertex inputs bound by the vertex declaration.
    Direct3D8,
    /// Encoding only (`--no-validate`).
    None,
}

/// `d3d9 asm FILE -o OUT [--no-validate | --d3d8]`
pub fn asm(file: &Path, out: &Path, rules: Rules) -> Result<(), Failure> {
    use shaderfs::shader::d3d9::asm;
    let text = String::from_utf8(read(file)?)
        .map_err(|e| malformed(file, &format!("not UTF-8 text: {e}")))?;
    let code = match rules {
        Rules::Direct3D9 => asm::assemble(&text),
        Rules::Direct3D8 => asm::assemble_d3d8(&text),
        Rules::None => asm::assemble_unvalidated(&text),
    }
    .map_err(|e| malformed(file, &e))?;
    write_out(out, &code)
}

/// `d3d9 ctab FILE`: the constant table as JSON, `null` when there is none.
pub fn ctab(file: &Path) -> Result<(), Failure> {
    use shaderfs::shader::d3d9::ctab::ConstantTable;
    let table = ConstantTable::from_bytecode(&read(file)?).map_err(|e| malformed(file, &e))?;
    let mut json = serde_json::to_vec_pretty(&table).expect("tables serialise");
    json.push(b'\n');
    print(&json)
}

/// `dxil dis FILE [-o OUT]`: the `programs/<stage>/<n>.ll` view of a loose container.
pub fn dxil_dis(file: &Path, out: Option<&Path>) -> Result<(), Failure> {
    use shaderfs::shader::dxbc::listing::listing;
    let text =
        listing(&read(file)?, &file.display().to_string()).map_err(|e| malformed(file, &e))?;
    write_out(out.unwrap_or(Path::new("-")), text.as_bytes())
}

/// `dxil info FILE`: what `programs/<stage>/<n>.json` says of a program's container
/// (`container`, `intrinsics`, `intrinsics_complete`); the rest of that view comes from
/// the database's record. A container with problems (a digest that does not verify, a
/// part that does not decode) is shown with them; a file that is not a DXBC container
/// at all exits 2.
pub fn dxil_info(file: &Path) -> Result<(), Failure> {
    use shaderfs::shader::dxbc::decode::ContainerView;
    let view = ContainerView::of(&read(file)?);
    if view.container.version.is_none() {
        let why = view.container.problems.join("; ");
        return Err(malformed(file, &why));
    }
    let mut json = serde_json::to_vec_pretty(&view).expect("views serialise");
    json.push(b'\n');
    print(&json)
}

/// `sdp pack OUT FILE…`: what is wrong with how it was called exits 1 (a name that cannot
/// be a record, the same name twice, a file that cannot be read); a shader that does not
/// assemble or is not what its name says exits 2, naming the file.
pub fn pack(out: &Path, files: &[PathBuf]) -> Result<(), Failure> {
    use shaderfs::archive::sdp::{pack, PackError, PackInput};
    struct Loaded {
        name: String,
        content: Vec<u8>,
        is_asm: bool,
        table: Option<(PathBuf, Vec<u8>)>,
    }
    let mut loaded = Vec::new();
    for file in files {
        let file_name = file
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| Failure::usage(format!("{}: not a file name", file.display())))?;
        let (name, is_asm) = match file_name.strip_suffix(".asm") {
            Some(base) => (base.to_owned(), true),
            None => (file_name.to_owned(), false),
        };
        let table_path = file.with_file_name(format!("{name}.json"));
        let table = match table_path.exists() {
            true => Some((table_path.clone(), read(&table_path)?)),
            false => None,
        };
        loaded.push(Loaded {
            content: read(file)?,
            name,
            is_asm,
            table,
        });
    }
    let inputs: Vec<PackInput> = loaded
        .iter()
        .map(|l| PackInput {
            name: &l.name,
            content: &l.content,
            is_asm: l.is_asm,
            table: l.table.as_ref().map(|(_, t)| t.as_slice()),
        })
        .collect();
    let bytes = pack(&inputs).map_err(|e| match &e {
        PackError::Name { .. } => Failure::usage(e.to_string()),
        PackError::Twice { first, second, .. } => Failure::usage(format!(
            "{e} ({} and {})",
            files[*first].display(),
            files[*second].display()
        )),
        // The file, or the table beside it.
        PackError::Content {
            index,
            table,
            message,
        } => {
            let from = match &loaded[*index].table {
                Some((path, _)) if *table => path.as_path(),
                _ => files[*index].as_path(),
            };
            malformed(from, message)
        }
        PackError::Package(message) => Failure::usage(format!("{}: {message}", out.display())),
    })?;
    write_whole(out, &bytes).map_err(|e| Failure::usage(format!("{}: {e}", out.display())))
}
