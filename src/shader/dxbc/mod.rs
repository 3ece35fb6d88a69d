//! DXBC containers as they carry DXIL (Shader Model 6), per `shared/formats/dxbc.md`:
//! the envelope ([`container`]), the digest ([`digest`]), the parts ([`parts`], [`psv`],
//! [`rts`]), the `dx.op` intrinsics of the bitcode ([`intrinsics`] over
//! [`bitstream`]), the bitcode as LLVM IR ([`llvm`]), and all of it together: as data
//! ([`decode`]) and as text ([`listing`]).

pub mod bitstream;
mod bytes;
pub mod container;
pub mod decode;
pub mod digest;
pub mod intrinsics;
pub mod listing;
pub mod llvm;
pub mod parts;
pub mod psv;
pub mod rts;
pub mod tables;

/// Bytes as lower-case hex digits, two per byte.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A container's zlib CRC-32 as `0x` and eight hex digits: the key shader-replacement
/// mods name a program by.
pub fn crc32_key(container: &[u8]) -> String {
    format!("{:#010x}", crc32fast::hash(container))
}

#[cfg(test)]
mod corpus;
#[cfg(test)]
pub(crate) mod hlsl;
