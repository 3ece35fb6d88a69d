//! DXIL's bitcode as LLVM IR text, with no LLVM: a reader of the LLVM 3.7 bitcode dxc
//! writes ([`read`]) into a small model of the module ([`ir`]), brought to what LLVM 14's
//! reader makes of it ([`upgrade`]), and a writer of LLVM's textual IR ([`write`]) that
//! prints it as `llvm-dis-14` does, line for line, but for the `; ModuleID` and
//! `source_filename` lines, which name what the caller says.
//!
//! What it does not print (debug-info metadata, aliases, comdats, exception handling,
//! vectors of pointers, …; none of which dxc puts in a DXIL program) is an [`IrError`]
//! naming the record, as is damaged bitcode: never a panic, and never more work than a
//! small multiple of the input.

mod codes;
mod float;
pub mod ir;
mod layout;
mod read;
mod upgrade;
pub(crate) mod write;

/// Why bitcode could not be disassembled: where, in which record, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bitcode byte {:#x} (bit {bit}), {record}: {message}", .bit / 8)]
pub struct IrError {
    /// Where the record (or block) starts, in bits from the start of the bitcode.
    pub bit: usize,
    /// The record and its block, as `llvm-bcanalyzer` names them.
    pub record: String,
    pub message: String,
}

impl IrError {
    fn new(bit: usize, record: String, message: String) -> IrError {
        // The bitstream reader's own messages say where they are.
        let message = match message.strip_prefix("bitcode at bit ") {
            Some(rest) => rest.split_once(": ").map_or(rest, |r| r.1).to_string(),
            None => message,
        };
        IrError {
            bit,
            record,
            message,
        }
    }
}

/// Read bitcode (the bytes after a `DXIL` part's program header) into a module.
pub fn parse(bitcode: &[u8]) -> Result<ir::Module, IrError> {
    read::read(bitcode)
}

/// The module's IR as `llvm-dis-14` prints it; `module_id` is what the `; ModuleID` and
/// `source_filename` lines say (none when empty).
pub fn disassemble(bitcode: &[u8], module_id: &str) -> Result<String, IrError> {
    let m = read::read(bitcode)?;
    // Real programs print as some ten times their bitcode.
    let limit = (64usize << 20).max(bitcode.len().saturating_mul(64));
    write::write(&m, module_id, limit).map_err(|limit| {
        IrError::new(
            0,
            "the module".into(),
            format!("its text would be longer than {} MiB", limit >> 20),
        )
    })
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_written;
