//! The D3D9 bytecode model: a version token, comment blocks and instructions up to the
//! end token (`shared/formats/d3d9-bytecode.md` §1–§7).
//!
//! [`parse`] walks a stream with the operand counts of the opcode table for SM 1.x and
//! the length field for SM ≥ 2 (§7). Every item keeps its raw DWORDs, so
//! [`Shader::encode`] gives back the input byte for byte, and decoded views
//! ([`Instruction::operands`], [`Param`] accessors) are computed from those DWORDs.

use std::fmt;

use super::ctab::MAX_COMMENT_DWORDS;
use super::opcodes::{self, Layout, OpcodeInfo, OP_COMMENT, OP_END, OP_PHASE};
use super::registers::RegisterType;

/// The end token (§2).
pub const END_TOKEN: u32 = 0x0000_FFFF;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShaderKind {
    Vertex,
    Pixel,
}

impl ShaderKind {
    /// `vs` or `ps`.
    pub fn prefix(self) -> &'static str {
        match self {
            ShaderKind::Vertex => "vs",
            ShaderKind::Pixel => "ps",
        }
    }
}

/// A shader model, from the version token (§2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Version {
    pub kind: ShaderKind,
    pub major: u8,
    pub minor: u8,
}

impl Version {
    /// The versions of the §2 table, the only ones D3D9 accepts.
    pub const ALL: [Version; 11] = [
        Version::new(ShaderKind::Vertex, 1, 1),
        Version::new(ShaderKind::Vertex, 2, 0),
        Version::new(ShaderKind::Vertex, 2, 1),
        Version::new(ShaderKind::Vertex, 3, 0),
        Version::new(ShaderKind::Pixel, 1, 1),
        Version::new(ShaderKind::Pixel, 1, 2),
        Version::new(ShaderKind::Pixel, 1, 3),
        Version::new(ShaderKind::Pixel, 1, 4),
        Version::new(ShaderKind::Pixel, 2, 0),
        Version::new(ShaderKind::Pixel, 2, 1),
        Version::new(ShaderKind::Pixel, 3, 0),
    ];

    pub const fn new(kind: ShaderKind, major: u8, minor: u8) -> Self {
        Version { kind, major, minor }
    }

    /// `0xMMmm`, the form version ranges of the opcode table use.
    pub fn code(self) -> u16 {
        (self.major as u16) << 8 | self.minor as u16
    }

    pub fn token(self) -> u32 {
        let high = match self.kind {
            ShaderKind::Vertex => 0xFFFE_0000,
            ShaderKind::Pixel => 0xFFFF_0000,
        };
        high | (self.major as u32) << 8 | self.minor as u32
    }

    /// The version a token names, if it is one of [`Version::ALL`].
    pub fn from_token(token: u32) -> Option<Self> {
        let kind = match token >> 16 {
            0xFFFE => ShaderKind::Vertex,
            0xFFFF => ShaderKind::Pixel,
            _ => return None,
        };
        let v = Version::new(kind, (token >> 8) as u8, token as u8);
        Version::ALL.contains(&v).then_some(v)
    }

    pub fn is_ps1(self) -> bool {
        self.kind == ShaderKind::Pixel && self.major == 1
    }
}

impl fmt::Display for Version {
    /// `vs_1_1`, `ps_2_x` (§9).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.major == 2 && self.minor == 1 {
            write!(f, "{}_2_x", self.kind.prefix())
        } else {
            write!(f, "{}_{}_{}", self.kind.prefix(), self.major, self.minor)
        }
    }
}

/// Why a byte stream is not a D3D9 shader. Every variant carries the byte offset where
/// reading stopped and says what was expected there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BytecodeError {
    #[error("shader is {len} bytes long, not a multiple of 4")]
    Length { len: usize },
    #[error("at byte 0: expected a version token (0xFFFE/0xFFFF, major, minor), found {found}")]
    BadVersion { found: String },
    #[error("at byte {offset}: expected the end token 0x0000FFFF, reached the end of the data")]
    MissingEnd { offset: usize },
    #[error(
        "at byte {offset}: comment block of {len} dwords runs past the end of the data \
         ({available} dwords left)"
    )]
    CommentPastEnd {
        offset: usize,
        len: usize,
        available: usize,
    },
    #[error(
        "at byte {offset}: instruction '{mnemonic}' needs {needed} more dwords, \
         only {available} left"
    )]
    InstructionPastEnd {
        offset: usize,
        mnemonic: String,
        needed: usize,
        available: usize,
    },
    #[error(
        "at byte {offset}: expected an instruction token, found parameter token {token:#010x}"
    )]
    ParameterToken { offset: usize, token: u32 },
    #[error(
        "at byte {offset}: expected an instruction, found unknown opcode {opcode:#06x} \
         (its operand count in {version} is unknown)"
    )]
    UnknownOpcode {
        offset: usize,
        opcode: u16,
        version: Version,
    },
}

impl BytecodeError {
    /// Byte offset into the input where the problem was found.
    pub fn offset(&self) -> usize {
        match self {
            BytecodeError::Length { len } => len - len % 4,
            BytecodeError::BadVersion { .. } => 0,
            BytecodeError::MissingEnd { offset }
            | BytecodeError::CommentPastEnd { offset, .. }
            | BytecodeError::InstructionPastEnd { offset, .. }
            | BytecodeError::ParameterToken { offset, .. }
            | BytecodeError::UnknownOpcode { offset, .. } => *offset,
        }
    }
}

/// A parameter token (§4), with the SM ≥ 2 relative-address token that follows it when
/// its bit 13 is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    pub token: u32,
    pub relative: Option<u32>,
}

impl Param {
    pub fn register_type_value(&self) -> u8 {
        (((self.token >> 28) & 7) | ((self.token >> 8) & 0x18)) as u8
    }

    pub fn register_type(&self) -> Option<RegisterType> {
        RegisterType::from_u8(self.register_type_value())
    }

    pub fn number(&self) -> u32 {
        self.token & 0x7FF
    }

    /// Bit 13: relative addressing (§4.1).
    pub fn is_relative(&self) -> bool {
        self.token & (1 << 13) != 0
    }

    /// Destination write mask, bit 0 = x (§4.3).
    pub fn write_mask(&self) -> u8 {
        ((self.token >> 16) & 0xF) as u8
    }

    /// Destination result modifiers: 1 saturate, 2 partial precision, 4 centroid (§4.3).
    pub fn result_modifiers(&self) -> u8 {
        ((self.token >> 20) & 0xF) as u8
    }

    /// Destination shift scale, 4-bit signed (§4.3).
    pub fn shift(&self) -> u8 {
        ((self.token >> 24) & 0xF) as u8
    }

    /// Source swizzle, 2 bits per component (§4.4).
    pub fn swizzle(&self) -> u8 {
        (self.token >> 16) as u8
    }

    /// Source modifier (§4.4).
    pub fn source_modifier(&self) -> u8 {
        ((self.token >> 24) & 0xF) as u8
    }

    /// Builds a parameter token from its fields (`bits_16_27` is the mask/modifier/shift
    /// or swizzle/modifier field, already positioned at bit 16).
    pub fn make(ty: RegisterType, number: u32, relative: bool, bits_16_27: u32) -> u32 {
        let t = ty as u32;
        0x8000_0000
            | (t & 7) << 28
            | (t & 0x18) << 8
            | number & 0x7FF
            | (relative as u32) << 13
            | bits_16_27 & 0x0FFF_0000
    }
}

/// The operands of an instruction, decoded by the layout of its opcode-table row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Operands {
    /// `dcl`: the usage/info token (§5.1).
    pub decl: Option<u32>,
    pub dst: Option<Param>,
    /// SM ≥ 2 predicated instructions: the predicate source token (§3 bit 28).
    pub predicate: Option<u32>,
    pub srcs: Vec<Param>,
    /// `def`, `defi`, `defb`: the raw DWORDs (§5.2).
    pub immediates: Vec<u32>,
}

/// One instruction: its token, the DWORDs that follow it, and what they decode to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// Byte offset of the instruction token.
    pub offset: usize,
    pub token: u32,
    /// Every DWORD after the instruction token that belongs to it.
    pub tokens: Vec<u32>,
    /// The opcode-table row for this opcode and version (`None`: unknown opcode, only
    /// possible in SM ≥ 2 where the length field still allows skipping it).
    pub info: Option<&'static OpcodeInfo>,
    /// `None` when the DWORDs do not fit the row's layout.
    pub operands: Option<Operands>,
}

impl Instruction {
    pub fn opcode(&self) -> u16 {
        self.token as u16
    }

    /// Controls `[23:16]` (§3).
    pub fn controls(&self) -> u8 {
        (self.token >> 16) as u8
    }

    /// Length field `[27:24]` (SM ≥ 2).
    pub fn length_field(&self) -> usize {
        ((self.token >> 24) & 0xF) as usize
    }

    pub fn predicated(&self) -> bool {
        self.token & (1 << 28) != 0
    }

    pub fn coissue(&self) -> bool {
        self.token & (1 << 30) != 0
    }

    pub fn mnemonic(&self) -> &'static str {
        self.info.map_or("?", |i| i.mnemonic)
    }
}

/// A comment block (§2): the token and its payload DWORDs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    pub offset: usize,
    pub token: u32,
    pub payload: Vec<u32>,
}

impl Comment {
    /// Whether the token is exactly what a comment of this payload gets written as: opcode
    /// 0xFFFE, the length in bits 30:16 and nothing else. Only such a block is printed as a
    /// `comment-block` (or a user comment); another is kept as raw tokens.
    pub fn is_plain(&self) -> bool {
        self.token == COMMENT_TOKEN | (self.payload.len() as u32) << 16
    }

    /// The asm-text comment this block holds, when it is a well-formed [`UserComment`].
    pub fn user_comment(&self) -> Option<UserComment> {
        if !self.is_plain() {
            return None;
        }
        UserComment::from_payload(&self.payload)
    }
}

/// Opcode of a comment token (§2): the payload length goes in bits 30:16.
pub const COMMENT_TOKEN: u32 = OP_COMMENT as u32;

/// `'SFCM'` ("shaderfs comment"), the first payload DWORD of a comment block that holds a
/// comment written in the asm text. The Direct3D runtime skips every comment block;
/// D3DX's CTAB lookup and ours match only `'CTAB'`.
pub const USER_COMMENT_FOURCC: u32 = u32::from_le_bytes(*b"SFCM");

/// Where a comment of the asm text stood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// On a line of its own (the text is the whole line, indentation included).
    OwnLine = 0,
    /// After the instruction (or version) just before it, on that line (the text starts
    /// with whatever separated it from the code).
    AfterCode = 1,
    /// On a line of its own above the version line, before the notes and the
    /// constant-table header the disassembler prints there. The block follows the version
    /// token (and the CTAB comment right after it), since no comment may come before it.
    Top = 2,
    /// On a line of its own above the version line, after those notes and that header (or
    /// anywhere above it when the disassembler prints neither). Its block sits where
    /// [`Self::Top`]'s does, after the version token.
    AboveVersion = 3,
}

/// A comment written in the asm text, kept in the bytecode as a comment block:
///
/// | DWORD | content |
/// |---|---|
/// | 0 | [`USER_COMMENT_FOURCC`] |
/// | 1 | bits 7:0 the [`Placement`], bits 31:8 the text's length in bytes |
/// | 2… | the text in UTF-8, NUL-padded to a whole DWORD |
///
/// The length makes the text exact (a NUL in it is kept). A block that does not follow
/// this layout to the bit is not a user comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserComment {
    pub placement: Placement,
    pub text: String,
}

impl UserComment {
    /// The longest text a comment block holds: 32767 DWORDs less the two header DWORDs.
    pub const MAX_TEXT_BYTES: usize = (MAX_COMMENT_DWORDS - 2) * 4;

    /// The payload DWORDs, FourCC first. The text must be at most [`Self::MAX_TEXT_BYTES`].
    pub fn payload(&self) -> Vec<u32> {
        let text = self.text.as_bytes();
        let mut out = Vec::with_capacity(2 + text.len().div_ceil(4));
        out.push(USER_COMMENT_FOURCC);
        out.push(self.placement as u32 | (text.len() as u32) << 8);
        out.extend(text.chunks(4).map(|c| {
            let mut b = [0u8; 4];
            b[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(b)
        }));
        out
    }

    /// Reads a payload written by [`Self::payload`]; `None` for anything else.
    pub fn from_payload(payload: &[u32]) -> Option<Self> {
        let [fourcc, header, text @ ..] = payload else {
            return None;
        };
        if *fourcc != USER_COMMENT_FOURCC {
            return None;
        }
        let placement = match header & 0xFF {
            0 => Placement::OwnLine,
            1 => Placement::AfterCode,
            2 => Placement::Top,
            3 => Placement::AboveVersion,
            _ => return None,
        };
        let len = (header >> 8) as usize;
        if text.len() != len.div_ceil(4) {
            return None;
        }
        let mut bytes: Vec<u8> = text.iter().flat_map(|d| d.to_le_bytes()).collect();
        if bytes[len..].iter().any(|&b| b != 0) {
            return None;
        }
        bytes.truncate(len);
        Some(UserComment {
            placement,
            text: String::from_utf8(bytes).ok()?,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Comment(Comment),
    Instruction(Instruction),
}

/// A parsed shader. `encode()` reproduces the parsed bytes exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shader {
    pub version: Version,
    pub items: Vec<Item>,
    /// Byte offset of the end token.
    pub end_offset: usize,
    /// Bytes after the end token (not part of the shader, kept for round trips).
    pub trailing: Vec<u8>,
}

impl Shader {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.end_offset + 4 + self.trailing.len());
        out.extend_from_slice(&self.version.token().to_le_bytes());
        for item in &self.items {
            match item {
                Item::Comment(c) => {
                    out.extend_from_slice(&c.token.to_le_bytes());
                    for d in &c.payload {
                        out.extend_from_slice(&d.to_le_bytes());
                    }
                }
                Item::Instruction(i) => {
                    out.extend_from_slice(&i.token.to_le_bytes());
                    for d in &i.tokens {
                        out.extend_from_slice(&d.to_le_bytes());
                    }
                }
            }
        }
        out.extend_from_slice(&END_TOKEN.to_le_bytes());
        out.extend_from_slice(&self.trailing);
        out
    }

    pub fn instructions(&self) -> impl Iterator<Item = &Instruction> {
        self.items.iter().filter_map(|i| match i {
            Item::Instruction(i) => Some(i),
            Item::Comment(_) => None,
        })
    }

    pub fn comments(&self) -> impl Iterator<Item = &Comment> {
        self.items.iter().filter_map(|i| match i {
            Item::Comment(c) => Some(c),
            Item::Instruction(_) => None,
        })
    }
}

/// The shader model of `bytes` from its first DWORD alone, without walking the stream.
pub fn shader_version(bytes: &[u8]) -> Option<Version> {
    let first = bytes.get(..4)?;
    Version::from_token(u32::from_le_bytes(first.try_into().ok()?))
}

/// Parses a whole shader (§7). Never panics; allocations are bounded by the input size.
pub fn parse(bytes: &[u8]) -> Result<Shader, BytecodeError> {
    if bytes.len() % 4 != 0 {
        return Err(BytecodeError::Length { len: bytes.len() });
    }
    let dwords: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let Some(&first) = dwords.first() else {
        return Err(BytecodeError::BadVersion {
            found: "no data".into(),
        });
    };
    let version = Version::from_token(first).ok_or_else(|| BytecodeError::BadVersion {
        found: format!("{first:#010x}"),
    })?;
    let mut items = Vec::new();
    let mut pos = 1;
    loop {
        let offset = pos * 4;
        let Some(&t) = dwords.get(pos) else {
            return Err(BytecodeError::MissingEnd { offset });
        };
        if t == END_TOKEN {
            return Ok(Shader {
                version,
                items,
                end_offset: offset,
                trailing: bytes[offset + 4..].to_vec(),
            });
        }
        let available = dwords.len() - pos - 1;
        if t as u16 == OP_COMMENT {
            let len = ((t >> 16) & 0x7FFF) as usize;
            if len > available {
                return Err(BytecodeError::CommentPastEnd {
                    offset,
                    len,
                    available,
                });
            }
            items.push(Item::Comment(Comment {
                offset,
                token: t,
                payload: dwords[pos + 1..pos + 1 + len].to_vec(),
            }));
            pos += 1 + len;
            continue;
        }
        if t & 0x8000_0000 != 0 {
            return Err(BytecodeError::ParameterToken { offset, token: t });
        }
        let opcode = t as u16;
        let info = if opcode == OP_END {
            None
        } else {
            opcodes::lookup(opcode, version)
        };
        let needed = if version.major >= 2 {
            ((t >> 24) & 0xF) as usize
        } else if opcode == OP_PHASE {
            0
        } else {
            let info = info.ok_or(BytecodeError::UnknownOpcode {
                offset,
                opcode,
                version,
            })?;
            sm1_operand_dwords(info)
        };
        if needed > available {
            return Err(BytecodeError::InstructionPastEnd {
                offset,
                mnemonic: info.map_or_else(|| format!("{opcode:#06x}"), |i| i.mnemonic.to_string()),
                needed,
                available,
            });
        }
        let tokens = dwords[pos + 1..pos + 1 + needed].to_vec();
        let operands = info.and_then(|info| decode_operands(info, version, t, &tokens));
        items.push(Item::Instruction(Instruction {
            offset,
            token: t,
            tokens,
            info,
            operands,
        }));
        pos += 1 + needed;
    }
}

/// DWORDs after an SM 1.x instruction token (§7): no length field, no relative-address
/// tokens, so the table's counts are the whole story.
fn sm1_operand_dwords(info: &OpcodeInfo) -> usize {
    match info.layout {
        Layout::Dcl => 2,
        Layout::Def4 => 5,
        Layout::Def1 => 2,
        Layout::Operands => (info.dst + info.src) as usize,
    }
}

/// Decodes `tokens` by the layout of `info`; `None` if they do not fit it exactly.
pub fn decode_operands(
    info: &OpcodeInfo,
    version: Version,
    token: u32,
    tokens: &[u32],
) -> Option<Operands> {
    let is_param = |t: u32| t & 0x8000_0000 != 0;
    let mut ops = Operands::default();
    match info.layout {
        Layout::Dcl => {
            let [decl, dst] = tokens else { return None };
            if !is_param(*dst) {
                return None;
            }
            ops.decl = Some(*decl);
            ops.dst = Some(Param {
                token: *dst,
                relative: None,
            });
        }
        Layout::Def4 | Layout::Def1 => {
            let n = if info.layout == Layout::Def4 { 4 } else { 1 };
            let (dst, imm) = tokens.split_first()?;
            if imm.len() != n || !is_param(*dst) {
                return None;
            }
            ops.dst = Some(Param {
                token: *dst,
                relative: None,
            });
            ops.immediates = imm.to_vec();
        }
        Layout::Operands => {
            let mut rest = tokens;
            let take = |rest: &mut &[u32]| -> Option<Param> {
                let (&t, r) = rest.split_first()?;
                if !is_param(t) {
                    return None;
                }
                *rest = r;
                let mut p = Param {
                    token: t,
                    relative: None,
                };
                if version.major >= 2 && p.is_relative() {
                    let (&a, r) = rest.split_first()?;
                    if !is_param(a) {
                        return None;
                    }
                    *rest = r;
                    p.relative = Some(a);
                }
                Some(p)
            };
            if info.dst > 0 {
                ops.dst = Some(take(&mut rest)?);
            }
            if version.major >= 2 && token & (1 << 28) != 0 {
                let (&p, r) = rest.split_first()?;
                if !is_param(p) {
                    return None;
                }
                rest = r;
                ops.predicate = Some(p);
            }
            for _ in 0..info.src {
                let p = take(&mut rest)?;
                ops.srcs.push(p);
            }
            if !rest.is_empty() {
                return None;
            }
        }
    }
    Some(ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(dwords: &[u32]) -> Vec<u8> {
        dwords.iter().flat_map(|d| d.to_le_bytes()).collect()
    }

    /// §7.1 test vectors.
    const VS11: &[u32] = &[
        0xFFFE0101, 0x0000001F, 0x80000000, 0x900F0000, 0x00000014, 0xC00F0000, 0x90E40000,
        0xA0E40000, 0x00000001, 0x800F0000, 0xA0E42005, 0x0000FFFF,
    ];
    const PS13: &[u32] = &[
        0xFFFF0103, 0x00000042, 0xB00F0000, 0x00000005, 0x80070000, 0xB0E40000, 0xA0E40003,
        0x40000001, 0x80080000, 0xA0E40004, 0x00000005, 0x810F0000, 0x80E40000, 0x90E40000,
        0x0000FFFF,
    ];
    const PS20: &[u32] = &[
        0xFFFF0200, 0x0200001F, 0x80000000, 0xB00F0000, 0x0200001F, 0x90000000, 0xA00F0800,
        0x05000051, 0xA00F0000, 0x3F800000, 0x00000000, 0x00000000, 0x3F800000, 0x03000042,
        0x800F0000, 0xB0E40000, 0xA0E40800, 0x03000005, 0x800F0000, 0x80E40000, 0xA0E40000,
        0x02000001, 0x800F0800, 0x80E40000, 0x0000FFFF,
    ];

    #[test]
    fn spec_vectors_walk_and_round_trip() {
        for (v, count) in [(VS11, 3), (PS13, 4), (PS20, 6)] {
            let b = bytes(v);
            let s = parse(&b).unwrap();
            assert_eq!(s.instructions().count(), count);
            assert!(s.instructions().all(|i| i.operands.is_some()));
            assert_eq!(s.encode(), b);
            assert_eq!(s.end_offset, b.len() - 4);
        }
        let s = parse(&bytes(PS13)).unwrap();
        let i: Vec<_> = s.instructions().collect();
        assert!(i[2].coissue());
        assert_eq!(i[0].mnemonic(), "tex");
        let s = parse(&bytes(VS11)).unwrap();
        let mov = s.instructions().nth(2).unwrap().operands.clone().unwrap();
        assert!(mov.srcs[0].is_relative());
        assert_eq!(mov.srcs[0].number(), 5);
        assert_eq!(mov.srcs[0].relative, None);
    }

    #[test]
    fn predicated_and_relative_sm2() {
        let b = bytes(&[
            0xFFFE0201, 0x14000002, 0x800F0000, 0xB0E41000, 0x80E40001, 0x80E40002, 0xFFFE0200,
            0x03000001, 0x800F0000, 0xA0E42005, 0xB0000000, 0x0000FFFF,
        ]);
        // The second instruction belongs to a vs_2_0 stream; inside vs_2_x it still walks.
        let s = parse(&b).unwrap_err();
        assert!(matches!(
            s,
            BytecodeError::ParameterToken { offset: 24, .. }
        ));
        let b = bytes(&[
            0xFFFE0201, 0x14000002, 0x800F0000, 0xB0E41000, 0x80E40001, 0x80E40002, 0x03000001,
            0x800F0000, 0xA0E42005, 0xB0000000, 0x0000FFFF,
        ]);
        let s = parse(&b).unwrap();
        let i: Vec<_> = s.instructions().collect();
        let ops = i[0].operands.as_ref().unwrap();
        assert_eq!(ops.predicate, Some(0xB0E41000));
        assert_eq!(ops.srcs.len(), 2);
        let ops = i[1].operands.as_ref().unwrap();
        assert_eq!(ops.srcs[0].relative, Some(0xB0000000));
    }

    #[test]
    fn comments_and_trailing_bytes_are_kept() {
        let b = bytes(&[
            0xFFFF0200, 0x0002FFFE, 0x42415443, 0x12345678, 0x0000FFFF, 0xDEADBEEF,
        ]);
        let s = parse(&b).unwrap();
        assert_eq!(
            s.comments().next().unwrap().payload,
            vec![0x42415443, 0x12345678]
        );
        assert_eq!(s.trailing, 0xDEADBEEFu32.to_le_bytes());
        assert_eq!(s.encode(), b);
    }

    #[test]
    fn errors_say_where_and_what() {
        assert!(matches!(
            parse(&[1, 2, 3]),
            Err(BytecodeError::Length { len: 3 })
        ));
        assert!(matches!(parse(&[]), Err(BytecodeError::BadVersion { .. })));
        assert!(matches!(
            parse(&bytes(&[0xFEFF0901])),
            Err(BytecodeError::BadVersion { .. })
        ));
        assert_eq!(
            parse(&bytes(&[0xFFFF0200])).unwrap_err(),
            BytecodeError::MissingEnd { offset: 4 }
        );
        assert!(matches!(
            parse(&bytes(&[0xFFFF0200, 0x0005FFFE, 0, 0xFFFF])),
            Err(BytecodeError::CommentPastEnd {
                offset: 4,
                len: 5,
                available: 2
            })
        ));
        assert!(matches!(
            parse(&bytes(&[0xFFFE0101, 0x00000004, 0x800F0000, 0x0000FFFF])),
            Err(BytecodeError::InstructionPastEnd {
                offset: 4,
                needed: 4,
                ..
            })
        ));
        assert!(matches!(
            parse(&bytes(&[0xFFFE0101, 0x00000031, 0x0000FFFF])),
            Err(BytecodeError::UnknownOpcode {
                offset: 4,
                opcode: 0x31,
                ..
            })
        ));
        let e = parse(&bytes(&[0xFFFE0101, 0x800F0000, 0x0000FFFF])).unwrap_err();
        assert_eq!(e.offset(), 4);
        assert!(e.to_string().contains("expected an instruction token"));
    }

    #[test]
    fn every_prefix_is_refused() {
        for v in [VS11, PS13, PS20] {
            let b = bytes(v);
            for n in 0..b.len() {
                assert!(parse(&b[..n]).is_err(), "prefix {n}");
            }
        }
    }

    #[test]
    fn version_accessor() {
        assert_eq!(
            shader_version(&bytes(PS20)),
            Some(Version::new(ShaderKind::Pixel, 2, 0))
        );
        assert_eq!(shader_version(&[0xFF]), None);
        assert_eq!(Version::new(ShaderKind::Pixel, 2, 1).to_string(), "ps_2_x");
    }
}
