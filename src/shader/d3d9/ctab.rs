//! The D3DX constant table ("CTAB"): finding it in a token stream, decoding it, encoding it
//! back, and splicing a new one into a shader (`shared/formats/d3d9-bytecode.md` §1, §2, §10).
//!
//! # Units
//! Every function here speaks of one unit, the **payload** of the CTAB comment: the bytes
//! that follow the comment token, starting with the `'CTAB'` FourCC. [`find_ctab`] returns
//! its range, [`ConstantTable::decode`] reads it, [`ConstantTable::encode`] writes it and
//! [`replace_ctab`] takes it. Offsets inside the table (and in every error message) are, as in
//! the format, byte offsets from the DWORD after the FourCC (§10.2).
//!
//! # Layout of an encoded table
//! The bytes [`ConstantTable::encode`] writes follow the producer named by the creator string,
//! because each producer lays the same table out differently (see `encode.rs` for the rules
//! and the corpus files each was learnt from): vkd3d (`"vkd3d-shader …"`) pads every string
//! and shares no matrix types, Wine's hand-built test tables (`"Wine project"`) pad every
//! string and share every repeated type, and everything else gets the layout of
//! Microsoft's compilers, which pack strings and share repeated strings and types. An
//! unedited table always re-encodes byte for byte through [`reencode_preserving`],
//! including the layouts no rule reproduces.
//!
//! # JSON
//! The serde form (see `json.rs`) is the `ctab/*.json` view of the filesystem: keys in a
//! fixed order, enums as their Direct3D names, numbers for values no name covers, default
//! values typed by register set and exact to the bit.

mod decode;
mod encode;
mod json;
mod listing;
#[cfg(test)]
mod tests;

use std::ops::Range;

use serde::{Deserialize, Serialize};

pub(crate) use listing::type_name;
pub use listing::{is_command_line, is_section_title, HeaderError, Style, GENERATED_BY};

/// `'CTAB'` as the first payload DWORD of the comment that holds the table (§10.1).
pub const CTAB_FOURCC: u32 = u32::from_le_bytes(*b"CTAB");

/// The largest comment payload a comment token can declare, in DWORDs (§2, bits 30:16).
pub const MAX_COMMENT_DWORDS: usize = 0x7FFF;

/// Struct nesting accepted when decoding (§10.4 recommends a bound of at most 32).
pub const MAX_NESTING_DEPTH: usize = 32;

/// Type-info nodes accepted per table. Shared type infos are expanded when decoded, so
/// this bounds the memory a hostile table of a few kilobytes can claim.
pub const MAX_TYPE_NODES: usize = 65_536;

const END_TOKEN: u32 = 0x0000_FFFF;
const COMMENT_OPCODE: u32 = 0xFFFE;
const DEF_OPCODE: u32 = 0x51;

/// One error type for everything this module refuses. Messages name the field, the byte
/// offset (in the bytecode, or in the table as the format counts it) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CtabError {
    #[error("bytecode is {len} bytes, expected a whole number of 32-bit tokens (at least the version token)")]
    BadBytecodeLength { len: usize },
    #[error("version token {token:#010x} at byte 0 is not a vertex (0xFFFExxxx) or pixel (0xFFFFxxxx) shader version")]
    BadVersionToken { token: u32 },
    #[error("token {token:#010x} at byte {offset} is a parameter token (bit 31 set), expected an instruction, comment or end token")]
    UnexpectedParameterToken { offset: usize, token: u32 },
    #[error("second CTAB comment at byte {second}, expected one constant table per shader (the first is at byte {first})")]
    DuplicateCtab { first: usize, second: usize },
    #[error("CTAB comment at byte {offset} declares {declared} payload DWORDs but only {available} remain in the bytecode; expected the comment to end inside the shader before replacing it")]
    CommentPastEnd {
        offset: usize,
        declared: usize,
        available: usize,
    },
    #[error("CTAB payload is {len} bytes, expected {expected}")]
    BadPayloadLength { len: usize, expected: &'static str },
    #[error("CTAB payload starts with {found:#010x}, expected the FourCC 'CTAB' (0x42415443)")]
    MissingFourcc { found: u32 },
    #[error(
        "{field} at table offset {offset:#x} needs {needed} bytes, but the table ends at {size:#x}"
    )]
    Truncated {
        field: String,
        offset: u64,
        needed: u64,
        size: usize,
    },
    #[error("header Size at table offset 0x0 is {found}, expected 28")]
    BadHeaderSize { found: u32 },
    #[error("header Version at table offset 0x8 is {table:#010x}, expected the shader's version token {shader:#010x}")]
    VersionMismatch { table: u32, shader: u32 },
    #[error("{field} at table offset {at:#x} is {offset:#x}, expected an offset inside the {size}-byte table")]
    OffsetOutOfRange {
        field: String,
        at: usize,
        offset: u32,
        size: usize,
    },
    #[error("header Constants at table offset 0xc is {count}, expected at most {fits} (20-byte entries from ConstantInfo {array:#x} inside the {size}-byte table)")]
    TooManyConstants {
        count: u32,
        fits: u64,
        array: u32,
        size: usize,
    },
    #[error("{field} at table offset {at:#x} is {value}, expected 0 (BOOL), 1 (INT4), 2 (FLOAT4) or 3 (SAMPLER)")]
    BadRegisterSet {
        field: String,
        at: usize,
        value: u16,
    },
    #[error("{field} at table offset {at:#x}: {reason}")]
    BadTypeInfo {
        field: String,
        at: usize,
        reason: String,
    },
    #[error("{field} at table offset {at:#x} is {offset:#x}, expected {needed} bytes of default data for the constant's type inside the {size}-byte table")]
    BadDefault {
        field: String,
        at: usize,
        offset: u32,
        needed: u64,
        size: usize,
    },
    #[error("{field}: {reason}")]
    Invalid { field: String, reason: String },
}

/// Where the CTAB comment sits in a token stream (byte ranges into the bytecode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CtabLocation {
    /// The whole comment block: the comment token and its payload.
    pub comment: Range<usize>,
    /// The payload: the `'CTAB'` FourCC and the table after it.
    pub payload: Range<usize>,
    /// The comment token declares more DWORDs than the bytecode holds; both ranges stop at
    /// the end of the bytecode. Microsoft's D3DX reads such tables (three of Wine's test
    /// shaders are built so), but the shader cannot be re-spliced around them.
    pub truncated: bool,
}

impl CtabLocation {
    /// The table proper (after the FourCC): the bytes the format's offsets count from.
    pub fn table(&self) -> Range<usize> {
        self.payload.start + 4..self.payload.end
    }
}

fn token_at(bytecode: &[u8], index: usize) -> u32 {
    let at = index * 4;
    u32::from_le_bytes([
        bytecode[at],
        bytecode[at + 1],
        bytecode[at + 2],
        bytecode[at + 3],
    ])
}

/// Shader version token of a D3D9 token stream, checked to be a vertex or pixel version.
pub fn shader_version_token(bytecode: &[u8]) -> Result<u32, CtabError> {
    if bytecode.len() < 4 || bytecode.len() % 4 != 0 {
        return Err(CtabError::BadBytecodeLength {
            len: bytecode.len(),
        });
    }
    let token = token_at(bytecode, 0);
    match token >> 16 {
        0xFFFE | 0xFFFF => Ok(token),
        _ => Err(CtabError::BadVersionToken { token }),
    }
}

/// Finds the CTAB comment of a D3D9 shader (§10.1).
///
/// Walks every comment up to the end token, as Wine's `D3DXFindShaderComment` does, but
/// steps over instructions instead of reading their operands as tokens: from SM 2 the
/// instruction token carries its length (bits 27:24); in SM 1 every operand token has bit
/// 31 set, except the four raw values of `def` (§4, §5.2, §7), so the walk needs no opcode
/// table. Running out of tokens (no end token, or an instruction or comment that runs past
/// the end) ends the search; a CTAB comment that runs past the end is clipped and reported
/// as `truncated`. Refused: a length that is not whole tokens, a version token that is no
/// vertex or pixel version (effects `FX`, texture shaders `TX`, …), a parameter token where
/// an SM 2+ instruction should be, and a second CTAB comment.
pub fn find_ctab(bytecode: &[u8]) -> Result<Option<CtabLocation>, CtabError> {
    let version = shader_version_token(bytecode)?;
    let sm_major = (version >> 8) & 0xFF;
    let tokens = bytecode.len() / 4;
    let mut found: Option<CtabLocation> = None;
    let mut i = 1;
    while i < tokens {
        let token = token_at(bytecode, i);
        if token == END_TOKEN {
            break;
        }
        if token & 0xFFFF == COMMENT_OPCODE {
            let declared = ((token >> 16) & 0x7FFF) as usize;
            let available = tokens - i - 1;
            if declared >= 1 && available >= 1 && token_at(bytecode, i + 1) == CTAB_FOURCC {
                let end = (i + 1 + declared).min(tokens) * 4;
                let location = CtabLocation {
                    comment: i * 4..end,
                    payload: (i + 1) * 4..end,
                    truncated: declared > available,
                };
                if let Some(first) = &found {
                    return Err(CtabError::DuplicateCtab {
                        first: first.comment.start,
                        second: location.comment.start,
                    });
                }
                found = Some(location);
            }
            i += 1 + declared;
            continue;
        }
        if token & 0x8000_0000 != 0 {
            return Err(CtabError::UnexpectedParameterToken {
                offset: i * 4,
                token,
            });
        }
        i += 1;
        if sm_major >= 2 {
            i += ((token >> 24) & 0xF) as usize;
        } else if token & 0xFFFF == DEF_OPCODE {
            i += 5;
        } else {
            while i < tokens && token_at(bytecode, i) & 0x8000_0000 != 0 {
                i += 1;
            }
        }
    }
    Ok(found)
}

/// Returns `bytecode` with its CTAB comment replaced by one holding `payload` (which starts
/// with the `'CTAB'` FourCC, as [`ConstantTable::encode`] writes it), or with that comment
/// inserted right after the version token when the shader has none. Every other token is
/// unchanged.
pub fn replace_ctab(bytecode: &[u8], payload: &[u8]) -> Result<Vec<u8>, CtabError> {
    check_payload_framing(payload)?;
    let location = find_ctab(bytecode)?;
    let splice = match &location {
        Some(location) if location.truncated => {
            let token = token_at(bytecode, location.comment.start / 4);
            return Err(CtabError::CommentPastEnd {
                offset: location.comment.start,
                declared: ((token >> 16) & 0x7FFF) as usize,
                available: (bytecode.len() - location.payload.start) / 4,
            });
        }
        Some(location) => location.comment.clone(),
        None => 4..4,
    };
    let token = ((payload.len() / 4) as u32) << 16 | COMMENT_OPCODE;
    let mut out = Vec::with_capacity(bytecode.len() - splice.len() + 4 + payload.len());
    out.extend_from_slice(&bytecode[..splice.start]);
    out.extend_from_slice(&token.to_le_bytes());
    out.extend_from_slice(payload);
    out.extend_from_slice(&bytecode[splice.end..]);
    Ok(out)
}

/// Returns `bytecode` without its CTAB comment (unchanged when it has none).
pub fn remove_ctab(bytecode: &[u8]) -> Result<Vec<u8>, CtabError> {
    match find_ctab(bytecode)? {
        Some(location) if location.truncated => {
            let token = token_at(bytecode, location.comment.start / 4);
            Err(CtabError::CommentPastEnd {
                offset: location.comment.start,
                declared: ((token >> 16) & 0x7FFF) as usize,
                available: (bytecode.len() - location.payload.start) / 4,
            })
        }
        Some(location) => {
            let mut out = bytecode[..location.comment.start].to_vec();
            out.extend_from_slice(&bytecode[location.comment.end..]);
            Ok(out)
        }
        None => Ok(bytecode.to_vec()),
    }
}

fn check_payload_framing(payload: &[u8]) -> Result<(), CtabError> {
    if payload.len() < 4 || payload.len() % 4 != 0 {
        return Err(CtabError::BadPayloadLength {
            len: payload.len(),
            expected: "a whole number of DWORDs, starting with the 'CTAB' FourCC",
        });
    }
    if payload.len() / 4 > MAX_COMMENT_DWORDS {
        return Err(CtabError::BadPayloadLength {
            len: payload.len(),
            expected: "at most 0x7FFF DWORDs, the most a comment token can declare",
        });
    }
    let found = u32::from_le_bytes([payload[0], payload[1], payload[2], payload[3]]);
    if found != CTAB_FOURCC {
        return Err(CtabError::MissingFourcc { found });
    }
    Ok(())
}

/// The bytes to store for `new`, given the payload it was decoded from: the original bytes
/// when nothing changed (so an unedited table is always byte-identical, whatever layout its
/// producer chose), otherwise `new.encode()`.
pub fn reencode_preserving(original_payload: &[u8], new: &ConstantTable) -> Vec<u8> {
    match ConstantTable::decode(original_payload, new.version) {
        Ok(old) if old == *new => original_payload.to_vec(),
        _ => new.encode(),
    }
}

/// A decoded constant table (`D3DXSHADER_CONSTANTTABLE`, §10.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "json::TableJson", try_from = "json::TableJson")]
pub struct ConstantTable {
    /// The creator string, one char per byte (Latin-1), so any bytes survive a round trip.
    pub creator: String,
    /// The target string (`"ps_2_0"`); `None` when the Target offset is 0, as vkd3d writes
    /// it (§10.4): offset 0 is the header itself, never a real string.
    pub target: Option<String>,
    /// The Version field; a valid table repeats the shader's version token.
    pub version: u32,
    /// `D3DXSHADER_*` compile flags (§10.3), see [`flag_names`].
    pub flags: u32,
    /// `CONSTANTINFO` entries, in table order.
    pub constants: Vec<Constant>,
}

/// One `D3DXSHADER_CONSTANTINFO` and the type it points to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "json::ConstantJson", try_from = "json::ConstantJson")]
pub struct Constant {
    pub name: String,
    pub register_set: RegisterSet,
    pub register_index: u16,
    pub register_count: u16,
    /// The `Reserved` half-word: 0 where the compiler placed the constant; where the
    /// source's `register()` did, fxc writes the first register used × 4 + 2 and the D3DX9
    /// compilers 2 for a float4 (the header's `Bound by register():` line, `listing.rs`).
    pub reserved: u16,
    pub type_info: TypeInfo,
    /// The default value as raw DWORDs, in register layout: 4 DWORDs (one register) per row
    /// of a `MATRIX_ROWS`, column of a `MATRIX_COLUMNS`, or scalar/vector, per element and
    /// struct member, in the FLOAT4, INT4 and SAMPLER sets; one DWORD per component in the
    /// BOOL set. Its length follows from the type ([`TypeInfo::default_dwords`]); the file
    /// records only where it starts. FLOAT4 values are `f32` bits, the others integers.
    pub default_value: Option<Vec<u32>>,
    /// The compiler gave this constant a type info of its own where it shares an equal one
    /// otherwise: the source spelled the type apart from an earlier constant's (`uint u`
    /// beside `int i`, both INT 1x1 in the table), which the table cannot say but by not
    /// sharing. The header says so in its `Own type info:` line.
    pub own_type: bool,
}

/// A `D3DXSHADER_TYPEINFO` with its struct members resolved.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TypeInfo {
    pub class: Class,
    pub param_type: ParamType,
    pub rows: u16,
    pub columns: u16,
    pub elements: u16,
    pub members: Vec<Member>,
}

/// A `D3DXSHADER_STRUCTMEMBERINFO`: a name and a type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Member {
    pub name: String,
    pub type_info: TypeInfo,
}

/// `D3DXREGISTER_SET`; a table is refused when it holds any other value (§10.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RegisterSet(pub u16);

/// `D3DXPARAMETER_CLASS`; values without a name are kept as numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Class(pub u16);

/// `D3DXPARAMETER_TYPE`; values without a name are kept as numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParamType(pub u16);

/// Names of `D3DXREGISTER_SET` values, indexed by value (§10.3).
const REGISTER_SET_NAMES: [&str; 4] = ["BOOL", "INT4", "FLOAT4", "SAMPLER"];

/// Names of `D3DXPARAMETER_CLASS` values, indexed by value (§10.3).
const CLASS_NAMES: [&str; 6] = [
    "SCALAR",
    "VECTOR",
    "MATRIX_ROWS",
    "MATRIX_COLUMNS",
    "OBJECT",
    "STRUCT",
];

/// Names of `D3DXPARAMETER_TYPE` values, indexed by value (§10.3).
const PARAM_TYPE_NAMES: [&str; 20] = [
    "VOID",
    "BOOL",
    "INT",
    "FLOAT",
    "STRING",
    "TEXTURE",
    "TEXTURE1D",
    "TEXTURE2D",
    "TEXTURE3D",
    "TEXTURECUBE",
    "SAMPLER",
    "SAMPLER1D",
    "SAMPLER2D",
    "SAMPLER3D",
    "SAMPLERCUBE",
    "PIXELSHADER",
    "VERTEXSHADER",
    "PIXELFRAGMENT",
    "VERTEXFRAGMENT",
    "UNSUPPORTED",
];

impl RegisterSet {
    pub const BOOL: RegisterSet = RegisterSet(0);
    pub const INT4: RegisterSet = RegisterSet(1);
    pub const FLOAT4: RegisterSet = RegisterSet(2);
    pub const SAMPLER: RegisterSet = RegisterSet(3);

    pub fn name(self) -> Option<&'static str> {
        REGISTER_SET_NAMES.get(usize::from(self.0)).copied()
    }

    /// The set named `name` (`"FLOAT4"`), if it is one.
    pub fn from_name(name: &str) -> Option<RegisterSet> {
        position(&REGISTER_SET_NAMES, name).map(RegisterSet)
    }

    /// Bytes one register of this set holds: 4 in the BOOL set, 16 (four DWORDs) in the others.
    pub fn register_bytes(self) -> usize {
        if self == RegisterSet::BOOL {
            4
        } else {
            16
        }
    }
}

impl Class {
    pub const SCALAR: Class = Class(0);
    pub const VECTOR: Class = Class(1);
    pub const MATRIX_ROWS: Class = Class(2);
    pub const MATRIX_COLUMNS: Class = Class(3);
    pub const OBJECT: Class = Class(4);
    pub const STRUCT: Class = Class(5);

    pub fn name(self) -> Option<&'static str> {
        CLASS_NAMES.get(usize::from(self.0)).copied()
    }

    pub fn from_name(name: &str) -> Option<Class> {
        position(&CLASS_NAMES, name).map(Class)
    }

    pub fn is_matrix(self) -> bool {
        self == Class::MATRIX_ROWS || self == Class::MATRIX_COLUMNS
    }
}

impl ParamType {
    pub const VOID: ParamType = ParamType(0);
    pub const BOOL: ParamType = ParamType(1);
    pub const INT: ParamType = ParamType(2);
    pub const FLOAT: ParamType = ParamType(3);
    pub const SAMPLER2D: ParamType = ParamType(12);

    pub fn name(self) -> Option<&'static str> {
        PARAM_TYPE_NAMES.get(usize::from(self.0)).copied()
    }

    pub fn from_name(name: &str) -> Option<ParamType> {
        position(&PARAM_TYPE_NAMES, name).map(ParamType)
    }
}

fn position(names: &[&str], name: &str) -> Option<u16> {
    names.iter().position(|n| *n == name).map(|i| i as u16)
}

/// `D3DXSHADER_*` flags with one bit each (§10.3, SDK `d3dx9shader.h`).
const FLAG_BITS: [(u32, &str); 14] = [
    (1 << 0, "DEBUG"),
    (1 << 1, "SKIPVALIDATION"),
    (1 << 2, "SKIPOPTIMIZATION"),
    (1 << 3, "PACKMATRIX_ROWMAJOR"),
    (1 << 4, "PACKMATRIX_COLUMNMAJOR"),
    (1 << 5, "PARTIALPRECISION"),
    (1 << 6, "FORCE_VS_SOFTWARE_NOOPT"),
    (1 << 7, "FORCE_PS_SOFTWARE_NOOPT"),
    (1 << 8, "NO_PRESHADER"),
    (1 << 9, "AVOID_FLOW_CONTROL"),
    (1 << 10, "PREFER_FLOW_CONTROL"),
    (1 << 12, "ENABLE_BACKWARDS_COMPATIBILITY"),
    (1 << 13, "IEEE_STRICTNESS"),
    (1 << 16, "USE_LEGACY_D3DX9_31_DLL"),
];

/// The two optimisation-level bits and the names of their non-default values
/// (`OPTIMIZATION_LEVEL1`, the default, is both bits clear and gets no name).
const OPTIMIZATION_MASK: u32 = 3 << 14;
const OPTIMIZATION_LEVELS: [(u32, &str); 3] = [
    (1 << 14, "OPTIMIZATION_LEVEL0"),
    (3 << 14, "OPTIMIZATION_LEVEL2"),
    (1 << 15, "OPTIMIZATION_LEVEL3"),
];

/// The `D3DXSHADER_*` names of `flags`, lowest bit first; bits without a name appear as
/// `"0x…"` strings, so the list always describes every bit.
pub fn flag_names(flags: u32) -> Vec<String> {
    let level = OPTIMIZATION_LEVELS
        .iter()
        .find(|(level, _)| flags & OPTIMIZATION_MASK == *level);
    let mut named: Vec<(u32, &str)> = FLAG_BITS
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .chain(level)
        .copied()
        .collect();
    named.sort_by_key(|(bits, _)| bits.trailing_zeros());
    let rest = named.iter().fold(flags, |rest, (bits, _)| rest & !bits);
    let unnamed = (0..32).map(|b| 1u32 << b).filter(|bit| rest & bit != 0);
    named
        .iter()
        .map(|(_, name)| name.to_string())
        .chain(unnamed.map(|bit| format!("{bit:#010x}")))
        .collect()
}

/// The flags that a list of names made by [`flag_names`] (or written by hand) stands for.
pub fn flags_from_names(names: &[String]) -> Result<u32, String> {
    names.iter().try_fold(0u32, |flags, name| {
        let bits = FLAG_BITS
            .iter()
            .chain(OPTIMIZATION_LEVELS.iter())
            .find(|(_, known)| known == name)
            .map(|(bits, _)| *bits)
            .or_else(|| (name == "OPTIMIZATION_LEVEL1").then_some(0))
            .or_else(|| parse_hex_u32(name))
            .ok_or_else(|| format!("unknown D3DXSHADER flag name {name:?}"))?;
        Ok(flags | bits)
    })
}

/// Profile names of the version tokens D3D9 defines (§2), both directions.
pub fn version_name(token: u32) -> Option<String> {
    let stage = match token >> 16 {
        0xFFFE => "vs",
        0xFFFF => "ps",
        _ => return None,
    };
    let (major, minor) = ((token >> 8) & 0xFF, token & 0xFF);
    let minor = match (stage, major, minor) {
        (_, 2, 1) => "x".to_string(),
        ("vs", 1, 0..=1) | ("ps", 1, 0..=4) | (_, 2, 0) | (_, 3, 0) => minor.to_string(),
        _ => return None,
    };
    Some(format!("{stage}_{major}_{minor}"))
}

/// The version token of a profile name made by [`version_name`].
pub fn version_from_name(name: &str) -> Option<u32> {
    let mut parts = name.split('_');
    let high = match parts.next()? {
        "vs" => 0xFFFE,
        "ps" => 0xFFFF,
        _ => return None,
    };
    let major: u32 = parts.next()?.parse().ok()?;
    let minor = match parts.next()? {
        "x" => 1,
        digits => digits.parse().ok()?,
    };
    if parts.next().is_some() || major > 0xFF || minor > 0xFF {
        return None;
    }
    let token = high << 16 | major << 8 | minor;
    (version_name(token).as_deref() == Some(name)).then_some(token)
}

/// `"0x1234abcd"` (any case, 1–8 digits) as a number.
fn parse_hex_u32(text: &str) -> Option<u32> {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))?;
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

impl TypeInfo {
    /// Registers the type fills in the FLOAT4, INT4 or SAMPLER set: per element, one per
    /// row of `MATRIX_ROWS`, per column of `MATRIX_COLUMNS`, the sum of the members of a
    /// `STRUCT`, one otherwise. Saturates instead of overflowing on absurd types.
    pub fn registers(&self) -> u64 {
        let per_element = match self.class {
            Class::MATRIX_ROWS => u64::from(self.rows),
            Class::MATRIX_COLUMNS => u64::from(self.columns),
            Class::STRUCT => self
                .members
                .iter()
                .fold(0u64, |sum, m| sum.saturating_add(m.type_info.registers())),
            _ => 1,
        };
        per_element.saturating_mul(u64::from(self.elements))
    }

    /// Components (one BOOL register each): rows × columns per element, or the sum of
    /// the members of a `STRUCT`.
    pub fn components(&self) -> u64 {
        let per_element = if self.class == Class::STRUCT {
            self.members
                .iter()
                .fold(0u64, |sum, m| sum.saturating_add(m.type_info.components()))
        } else {
            u64::from(self.rows) * u64::from(self.columns)
        };
        per_element.saturating_mul(u64::from(self.elements))
    }

    /// DWORDs of a default value of this type in `set`, as Microsoft's compiler lays it out:
    /// one per component in the BOOL set, four per register elsewhere. (D3DX's
    /// `SetDefaults` copies RegisterCount registers instead, which can run past the data.)
    pub fn default_dwords(&self, set: RegisterSet) -> u64 {
        if set == RegisterSet::BOOL {
            self.components()
        } else {
            self.registers().saturating_mul(4)
        }
    }

    /// Nesting depth: 0 for a type without members.
    pub fn depth(&self) -> usize {
        self.members
            .iter()
            .map(|m| m.type_info.depth() + 1)
            .max()
            .unwrap_or(0)
    }

    /// Type-info nodes, this one included.
    pub fn nodes(&self) -> usize {
        1 + self
            .members
            .iter()
            .map(|m| m.type_info.nodes())
            .sum::<usize>()
    }
}

impl ConstantTable {
    /// Decodes a CTAB comment payload (starting with the `'CTAB'` FourCC) of a shader whose
    /// version token is `shader_version_token`, with every check of §10.4.
    pub fn decode(payload: &[u8], shader_version_token: u32) -> Result<ConstantTable, CtabError> {
        decode::decode(payload, shader_version_token)
    }

    /// The table of a whole shader: `Ok(None)` when it has no CTAB comment.
    pub fn from_bytecode(bytecode: &[u8]) -> Result<Option<ConstantTable>, CtabError> {
        let Some(location) = find_ctab(bytecode)? else {
            return Ok(None);
        };
        let version = shader_version_token(bytecode)?;
        ConstantTable::decode(&bytecode[location.payload], version).map(Some)
    }

    /// Encodes the table as a CTAB comment payload (starting with the `'CTAB'` FourCC), laid
    /// out as its creator's compiler does (module documentation). For a table that passes
    /// [`ConstantTable::validate`], `decode(encode(t), t.version) == t`.
    pub fn encode(&self) -> Vec<u8> {
        encode::encode(self)
    }

    /// Checks what [`ConstantTable::encode`] needs to give back an identical table when
    /// decoded: strings of chars U+0001–U+00FF, at most 65535 struct members, nesting and
    /// type nodes within the decoder's bounds, default values of the length their type asks,
    /// and a payload that fits one comment.
    pub fn validate(&self) -> Result<(), CtabError> {
        let invalid = |field: String, reason: String| Err(CtabError::Invalid { field, reason });
        check_string("creator", &self.creator)?;
        if let Some(target) = &self.target {
            check_string("target", target)?;
        }
        let mut nodes = 0usize;
        for (i, constant) in self.constants.iter().enumerate() {
            let field = format!("constants[{i}] ({:?})", constant.name);
            check_string(&format!("{field}.name"), &constant.name)?;
            if constant.register_set.name().is_none() {
                return invalid(
                    format!("{field}.register_set"),
                    format!("{} is not 0–3", constant.register_set.0),
                );
            }
            check_type(&field, &constant.type_info, 0)?;
            nodes = nodes.saturating_add(constant.type_info.nodes());
            if let Some(default) = &constant.default_value {
                let expected = constant.type_info.default_dwords(constant.register_set);
                if default.len() as u64 != expected {
                    return invalid(
                        format!("{field}.default_value"),
                        format!(
                            "{} DWORDs, expected {expected} for its type in the {} set",
                            default.len(),
                            constant.register_set.name().unwrap_or("?")
                        ),
                    );
                }
            }
        }
        if nodes > MAX_TYPE_NODES {
            return invalid(
                "constants".into(),
                format!("{nodes} type infos, expected at most {MAX_TYPE_NODES}"),
            );
        }
        let len = self.encode().len();
        if len / 4 > MAX_COMMENT_DWORDS {
            return invalid(
                "table".into(),
                format!(
                    "encodes to {len} bytes, expected at most {} (one comment)",
                    MAX_COMMENT_DWORDS * 4
                ),
            );
        }
        Ok(())
    }
}

fn check_string(field: &str, text: &str) -> Result<(), CtabError> {
    match text.chars().find(|c| *c == '\0' || u32::from(*c) > 0xFF) {
        Some(c) => Err(CtabError::Invalid {
            field: field.to_string(),
            reason: format!("contains {c:?}, expected chars U+0001–U+00FF (one byte each, no NUL)"),
        }),
        None => Ok(()),
    }
}

fn check_type(field: &str, type_info: &TypeInfo, depth: usize) -> Result<(), CtabError> {
    if depth > MAX_NESTING_DEPTH {
        return Err(CtabError::Invalid {
            field: field.to_string(),
            reason: format!("struct nesting deeper than {MAX_NESTING_DEPTH}"),
        });
    }
    if type_info.members.len() > usize::from(u16::MAX) {
        return Err(CtabError::Invalid {
            field: field.to_string(),
            reason: format!(
                "{} struct members, expected at most 65535",
                type_info.members.len()
            ),
        });
    }
    for (i, member) in type_info.members.iter().enumerate() {
        let field = format!("{field}.struct_members[{i}] ({:?})", member.name);
        check_string(&format!("{field}.name"), &member.name)?;
        check_type(&field, &member.type_info, depth + 1)?;
    }
    Ok(())
}
