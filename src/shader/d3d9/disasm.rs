//! D3D9 bytecode to asm text in the syntax D3DX/fxc and Wine print
//! (`shared/formats/d3d9-bytecode.md` §9), written so that [`super::asm::assemble`] gives
//! back the identical bytes.
//!
//! Three things have no D3DX spelling and are kept as *data comments*: a `//` line naming
//! what follows and its size, then `//` lines of 8-hex-digit DWORDs (up to eight a line,
//! optionally followed by `|ascii|` for the reader):
//!
//! ```text
//! // comment-block: 2 dwords
//! // 42415443 0000001c  |CTAB....|
//! // raw-tokens: 3 dwords
//! // 00000001 800f4000 a0e40000
//! // trailing-data: 1 dwords
//! // deadbeef
//! ```
//!
//! * `comment-block`: a comment block (§2) at this place in the stream; the payload is
//!   given, the comment token is rebuilt from its length.
//! * `raw-tokens`: an instruction whose encoding no asm text reproduces (reserved bits
//!   set, an unknown opcode, operands that do not fit the opcode table); the DWORDs are
//!   emitted as they are, instruction token first.
//! * `trailing-data`: DWORDs after the end token.
//!
//! Other assemblers read these lines as comments. `def` values print in the shortest
//! decimal form that reads back to the same bits; infinities, NaNs and other values
//! without one print as their bit pattern in hex (`0x7fc00000`), which our assembler
//! reads as raw bits.

use std::fmt::Write;

use super::bytecode::{self, BytecodeError, Instruction, Item, Param, Shader, ShaderKind, Version};
use super::ctab::ConstantTable;
use super::opcodes::{Controls, Layout, COMPARISONS, TEXLD_VARIANTS};
use super::registers::{register_name, RegisterType};
use super::syntax::{
    format_mask, format_swizzle, RESULT_MODIFIERS, SAMPLER_TYPES, SHIFTS, SOURCE_MODIFIERS, USAGES,
};
use super::validate;

/// Names of the data-comment kinds (see the module documentation).
pub const COMMENT_BLOCK: &str = "comment-block";
pub const RAW_TOKENS: &str = "raw-tokens";
pub const TRAILING_DATA: &str = "trailing-data";

/// FourCC of the D3DX constant table comment (§10.1).
const CTAB: u32 = 0x4241_5443;

/// Disassembles a shader. Fails only where [`bytecode::parse`] fails.
pub fn disassemble(bytes: &[u8]) -> Result<String, BytecodeError> {
    Ok(disassemble_shader(&bytecode::parse(bytes)?))
}

/// Disassembles a parsed shader.
pub fn disassemble_shader(shader: &Shader) -> String {
    let v = shader.version;
    let mut out = String::new();
    for c in shader.comments() {
        if c.payload.first() == Some(&CTAB) {
            if let Some(header) = ctab_header(c, v) {
                for line in header.lines() {
                    let _ = writeln!(out, "{}", format!("// {line}").trim_end());
                }
                out.push_str("//\n");
            }
        }
    }
    let _ = writeln!(out, "    {v}");
    let mut depth = 0usize;
    for item in &shader.items {
        match item {
            Item::Comment(c) => {
                if c.token == 0xFFFE | (c.payload.len() as u32) << 16 {
                    data_comment(&mut out, COMMENT_BLOCK, &c.payload);
                } else {
                    let mut all = vec![c.token];
                    all.extend_from_slice(&c.payload);
                    data_comment(&mut out, RAW_TOKENS, &all);
                }
            }
            Item::Instruction(ins) => {
                let op = ins.opcode();
                if matches!(op, 0x2A | 0x2B | 0x1D | 0x27) {
                    depth = depth.saturating_sub(1);
                }
                let indent = " ".repeat(4 + 2 * depth.min(16));
                match instruction_text(ins, v) {
                    Some(text) => {
                        let _ = writeln!(out, "{indent}{text}");
                    }
                    None => {
                        let _ = writeln!(
                            out,
                            "{indent}// '{}' with an encoding that has no asm spelling:",
                            ins.mnemonic()
                        );
                        let mut all = vec![ins.token];
                        all.extend_from_slice(&ins.tokens);
                        data_comment(&mut out, RAW_TOKENS, &all);
                    }
                }
                if matches!(op, 0x28 | 0x29 | 0x2A | 0x1B | 0x26) {
                    depth += 1;
                }
            }
        }
    }
    if !shader.trailing.is_empty() {
        let dwords: Vec<u32> = shader
            .trailing
            .chunks(4)
            .map(|c| {
                let mut b = [0u8; 4];
                b[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(b)
            })
            .collect();
        data_comment(&mut out, TRAILING_DATA, &dwords);
    }
    out.push('\n');
    out.push_str(&slot_footer(shader));
    out
}

/// The D3DX-style `//` header describing a CTAB. A table that does not decode gets none;
/// it still travels, exactly, as its `comment-block`.
fn ctab_header(comment: &bytecode::Comment, v: Version) -> Option<String> {
    let payload: Vec<u8> = comment
        .payload
        .iter()
        .flat_map(|d| d.to_le_bytes())
        .collect();
    ConstantTable::decode(&payload, v.token())
        .ok()
        .map(|t| t.listing())
}

/// `// approximately N instruction slots used (T texture, A arithmetic)` (§9).
fn slot_footer(shader: &Shader) -> String {
    let u = validate::slot_usage(shader);
    if shader.version.kind == ShaderKind::Pixel && shader.version.code() <= 0x0200 {
        format!(
            "// approximately {} instruction slots used ({} texture, {} arithmetic)\n",
            u.texture + u.arithmetic,
            u.texture,
            u.arithmetic
        )
    } else {
        format!(
            "// approximately {} instruction slots used\n",
            u.texture + u.arithmetic + u.flow
        )
    }
}

fn data_comment(out: &mut String, kind: &str, dwords: &[u32]) {
    let _ = writeln!(out, "    // {kind}: {} dwords", dwords.len());
    for chunk in dwords.chunks(8) {
        let hex: Vec<String> = chunk.iter().map(|d| format!("{d:08x}")).collect();
        let ascii: String = chunk
            .iter()
            .flat_map(|d| d.to_le_bytes())
            .map(|b| {
                if b.is_ascii_graphic() && b != b'\\' || b == b' ' {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        let _ = writeln!(out, "    // {}  |{}|", hex.join(" "), ascii);
    }
}

/// The asm text of one instruction, or `None` when no text assembles back to exactly its
/// DWORDs.
pub fn instruction_text(ins: &Instruction, v: Version) -> Option<String> {
    let info = ins.info?;
    let ops = ins.operands.as_ref()?;
    let controls = ins.controls();
    let controls_ok = match info.controls {
        Controls::None => controls == 0,
        Controls::Comparison => (1..=6).contains(&controls),
        Controls::TexldVariant => controls <= 2,
    };
    if !controls_ok {
        return None;
    }
    let sm2 = v.major >= 2;
    let expected = ins.opcode() as u32
        | (controls as u32) << 16
        | if sm2 {
            (ins.tokens.len() as u32) << 24
        } else {
            0
        }
        | if sm2 { ins.token & (1 << 28) } else { 0 }
        | ins.token & (1 << 30);
    if ins.token != expected || (ins.tokens.len() > 15 && sm2) {
        return None;
    }
    let rgba = v.is_ps1();
    let mut s = String::new();
    if ins.coissue() {
        s.push('+');
    }
    if let Some(p) = ops.predicate {
        let p = Param {
            token: p,
            relative: None,
        };
        if p.register_type() != Some(RegisterType::Predicate) {
            return None;
        }
        let _ = write!(s, "({}) ", src_text(&p, v, rgba)?);
    }
    let mut mnemonic = match info.controls {
        Controls::None => info.mnemonic.to_string(),
        Controls::Comparison => format!("{}_{}", info.mnemonic, COMPARISONS[controls as usize]),
        Controls::TexldVariant => TEXLD_VARIANTS[controls as usize].to_string(),
    };
    let mut operands = Vec::new();
    if let Some(dst) = &ops.dst {
        if info.layout == Layout::Dcl {
            mnemonic.push_str(&dcl_suffix(ops.decl?, dst, v)?);
        }
        let (text, suffixes) = dst_text(dst, v, rgba)?;
        mnemonic.push_str(&suffixes);
        operands.push(text);
    }
    match info.layout {
        Layout::Def4 if info.opcode == super::opcodes::OP_DEF => {
            operands.extend(ops.immediates.iter().map(|&b| format_float(b)));
        }
        Layout::Def4 => operands.extend(ops.immediates.iter().map(|&b| (b as i32).to_string())),
        Layout::Def1 => operands.push(
            match ops.immediates[0] {
                0 => "false",
                1 => "true",
                _ => return None,
            }
            .to_string(),
        ),
        Layout::Dcl | Layout::Operands => {}
    }
    for src in &ops.srcs {
        operands.push(src_text(src, v, rgba)?);
    }
    s.push_str(&mnemonic);
    if !operands.is_empty() {
        s.push(' ');
        s.push_str(&operands.join(", "));
    }
    Some(s)
}

/// Does `(ty, version)` declare with a usage (`dcl_texcoord1 v2`) rather than bare?
pub fn dcl_uses_usage(ty: RegisterType, v: Version) -> bool {
    match v.kind {
        ShaderKind::Vertex => {
            ty == RegisterType::Input || (v.major >= 3 && ty == RegisterType::Output)
        }
        ShaderKind::Pixel => v.major >= 3 && ty == RegisterType::Input,
    }
}

fn dcl_suffix(decl: u32, dst: &Param, v: Version) -> Option<String> {
    let ty = dst.register_type()?;
    if ty == RegisterType::Sampler {
        let t = (decl >> 27) & 0xF;
        if decl != 0x8000_0000 | t << 27 || !(1..=4).contains(&t) {
            return None;
        }
        return Some(format!("_{}", SAMPLER_TYPES[t as usize]));
    }
    if dcl_uses_usage(ty, v) {
        let usage = decl & 0xF;
        let index = (decl >> 16) & 0xF;
        if decl != 0x8000_0000 | usage | index << 16 || usage as usize >= USAGES.len() {
            return None;
        }
        let mut s = format!("_{}", USAGES[usage as usize]);
        if index > 0 {
            let _ = write!(s, "{index}");
        }
        return Some(s);
    }
    (decl == 0x8000_0000).then(String::new)
}

/// The register, with relative addressing, as text.
fn register_text(p: &Param, v: Version) -> Option<String> {
    let ty = p.register_type()?;
    let name = register_name(ty, p.number(), v)?;
    if !p.is_relative() {
        return Some(name);
    }
    if v.major < 2 {
        // VS 1.x: implicit a0.x, no address token (§4.1).
        if v.kind != ShaderKind::Vertex || ty != RegisterType::Const {
            return None;
        }
        let n = p.number();
        return Some(if n == 0 {
            "c[a0.x]".to_string()
        } else {
            format!("c[a0.x + {n}]")
        });
    }
    let addr = Param {
        token: p.relative?,
        relative: None,
    };
    let aty = addr.register_type()?;
    let swz = addr.swizzle();
    if addr.token != Param::make(aty, 0, false, (swz as u32) << 16) {
        return None;
    }
    let aname = match aty {
        RegisterType::AddrOrTexture if v.kind == ShaderKind::Vertex => "a0",
        RegisterType::Loop => "aL",
        _ => return None,
    };
    Some(format!("{name}[{aname}{}]", format_swizzle(swz, false)))
}

/// Destination operand text and the mnemonic suffixes its modifiers add.
fn dst_text(p: &Param, v: Version, rgba: bool) -> Option<(String, String)> {
    if p.token & 0xC000 != 0 || p.result_modifiers() & 8 != 0 {
        return None;
    }
    let mut suffixes = String::new();
    let shift = p.shift();
    if shift != 0 {
        let (_, name) = SHIFTS.iter().find(|(s, _)| *s == shift)?;
        let _ = write!(suffixes, "_{name}");
    }
    for (bit, name) in RESULT_MODIFIERS {
        if p.result_modifiers() & bit != 0 {
            let _ = write!(suffixes, "_{name}");
        }
    }
    let text = register_text(p, v)? + &format_mask(p.write_mask(), rgba);
    Some((text, suffixes))
}

fn src_text(p: &Param, v: Version, rgba: bool) -> Option<String> {
    if p.token & 0xC000 != 0 {
        return None;
    }
    let m = SOURCE_MODIFIERS.get(p.source_modifier() as usize)?;
    let mut s = String::new();
    if m.not {
        s.push('!');
    }
    if m.negate {
        s.push('-');
    }
    if m.complement {
        s.push_str("1-");
    }
    s.push_str(&register_text(p, v)?);
    if !m.suffix.is_empty() {
        let _ = write!(s, "_{}", m.suffix);
    }
    s.push_str(&format_swizzle(p.swizzle(), rgba));
    Some(s)
}

/// The shortest decimal that reads back to `bits`, or `0x…` when there is none.
pub fn format_float(bits: u32) -> String {
    let f = f32::from_bits(bits);
    if !f.is_finite() {
        return format!("{bits:#010x}");
    }
    let s = format!("{f:?}");
    let s = s.strip_suffix(".0").unwrap_or(&s).to_string();
    if s.parse::<f32>().map(f32::to_bits) == Ok(bits) {
        s
    } else {
        format!("{bits:#010x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dis(dwords: &[u32]) -> String {
        let b: Vec<u8> = dwords.iter().flat_map(|d| d.to_le_bytes()).collect();
        disassemble(&b).unwrap()
    }

    fn body(text: &str) -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("// approx"))
            .map(String::from)
            .collect()
    }

    #[test]
    fn spec_vectors() {
        let t = dis(&[
            0xFFFE0101, 0x0000001F, 0x80000000, 0x900F0000, 0x00000014, 0xC00F0000, 0x90E40000,
            0xA0E40000, 0x00000001, 0x800F0000, 0xA0E42005, 0x0000FFFF,
        ]);
        assert_eq!(
            body(&t),
            [
                "vs_1_1",
                "dcl_position v0",
                "m4x4 oPos, v0, c0",
                "mov r0, c[a0.x + 5]"
            ]
        );
        let t = dis(&[
            0xFFFF0103, 0x00000042, 0xB00F0000, 0x00000005, 0x80070000, 0xB0E40000, 0xA0E40003,
            0x40000001, 0x80080000, 0xA0E40004, 0x00000005, 0x810F0000, 0x80E40000, 0x90E40000,
            0x0000FFFF,
        ]);
        assert_eq!(
            body(&t),
            [
                "ps_1_3",
                "tex t0",
                "mul r0.rgb, t0, c3",
                "+mov r0.a, c4",
                "mul_x2 r0, r0, v0"
            ]
        );
        let t = dis(&[
            0xFFFF0200, 0x0200001F, 0x80000000, 0xB00F0000, 0x0200001F, 0x90000000, 0xA00F0800,
            0x05000051, 0xA00F0000, 0x3F800000, 0x00000000, 0x3F000000, 0x3F800000, 0x03000042,
            0x800F0000, 0xB0E40000, 0xA0E40800, 0x0000FFFF,
        ]);
        assert_eq!(
            body(&t),
            [
                "ps_2_0",
                "dcl t0",
                "dcl_2d s0",
                "def c0, 1, 0, 0.5, 1",
                "texld r0, t0, s0"
            ]
        );
        assert!(t.contains("(1 texture, 0 arithmetic)"));
        let t = dis(&[
            0xFFFE0201, 0x14000002, 0x800F0000, 0xBDE41000, 0x80E40001, 0x80E40002, 0x03000001,
            0x800F0000, 0xA1002005, 0xB0FF0000, 0x0000FFFF,
        ]);
        assert_eq!(
            body(&t),
            ["vs_2_x", "(!p0) add r0, r1, r2", "mov r0, -c5[a0.w].x"]
        );
    }

    #[test]
    fn flow_control_and_comparisons() {
        let t = dis(&[
            0xFFFF0201, 0x02030029, 0x80E40000, 0x80E40001, 0x0000002A, 0x0000002B, 0x0301005E,
            0xB00F1000, 0x80E40000, 0x80E40001, 0x0000FFFF,
        ]);
        assert_eq!(
            t.lines().take(5).collect::<Vec<_>>(),
            [
                "    ps_2_x",
                "    if_ge r0, r1",
                "    else",
                "    endif",
                "    setp_gt p0, r0, r1"
            ]
        );
    }

    #[test]
    fn comments_and_odd_encodings_become_data_comments() {
        let t = dis(&[
            0xFFFF0200, 0x0002FFFE, 0x42415443, 0x5C5C0000, 0x02000001, 0x800F4000, 0x80E40000,
            0x0000FFFF, 0x12345678,
        ]);
        assert!(t.contains("// comment-block: 2 dwords\n    // 42415443 5c5c0000  |CTAB....|"));
        assert!(t.contains("// raw-tokens: 3 dwords\n    // 02000001 800f4000 80e40000"));
        assert!(t.contains("// trailing-data: 1 dwords\n    // 12345678"));
    }

    #[test]
    fn floats_read_back_to_their_bits() {
        for bits in [
            0u32, 0x80000000, 0x3F800000, 0x3DCCCCCD, 0x00000001, 0x7F7FFFFF, 0x7F800000,
            0x7FC00000, 0xFFFFFFFF, 0xB5D00D01,
        ] {
            let s = format_float(bits);
            let back = match s.strip_prefix("0x") {
                Some(h) => u32::from_str_radix(h, 16).unwrap(),
                None => s.parse::<f32>().unwrap().to_bits(),
            };
            assert_eq!(back, bits, "{s}");
        }
        assert_eq!(format_float(0x3F000000), "0.5");
        assert_eq!(format_float(0x80000000), "-0");
    }
}
