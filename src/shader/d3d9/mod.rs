//! Direct3D 9 shader bytecode (SM 1.0–3.0), per `shared/formats/d3d9-bytecode.md`.

pub mod asm;
pub mod bytecode;
pub mod ctab;
mod dataflow;
pub mod decompile;
pub mod disasm;
pub mod kept_source;
pub mod limits;
pub mod opcodes;
pub(crate) mod ppexpr;
mod preamble;
pub mod registers;
mod rules;
pub mod run;
pub mod shader_test;
pub mod syntax;
pub mod validate;

#[cfg(test)]
mod comments;
#[cfg(test)]
mod corpus;
#[cfg(test)]
mod decompile_props;
#[cfg(test)]
mod goldens;
#[cfg(test)]
mod microsoft;
#[cfg(test)]
mod roundtrip;
