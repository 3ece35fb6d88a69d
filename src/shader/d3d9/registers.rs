//! Register types of D3D9 bytecode and their asm spellings
//! (`shared/formats/d3d9-bytecode.md` §4.2). One table, read by the disassembler (to print
//! a register), the assembler (to read one) and the validator (through `limits.rs`).

use super::bytecode::{ShaderKind, Version};

/// `D3DSHADER_PARAM_REGISTER_TYPE` (§4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum RegisterType {
    Temp = 0,
    Input = 1,
    Const = 2,
    /// `a0` in vertex shaders, `t#` in pixel shaders.
    AddrOrTexture = 3,
    RastOut = 4,
    AttrOut = 5,
    /// `oT#` before vs_3_0, `o#` in vs_3_0.
    Output = 6,
    ConstInt = 7,
    ColorOut = 8,
    DepthOut = 9,
    Sampler = 10,
    Const2 = 11,
    Const3 = 12,
    Const4 = 13,
    ConstBool = 14,
    Loop = 15,
    TempFloat16 = 16,
    MiscType = 17,
    Label = 18,
    Predicate = 19,
}

impl RegisterType {
    pub fn from_u8(v: u8) -> Option<Self> {
        use RegisterType::*;
        Some(match v {
            0 => Temp,
            1 => Input,
            2 => Const,
            3 => AddrOrTexture,
            4 => RastOut,
            5 => AttrOut,
            6 => Output,
            7 => ConstInt,
            8 => ColorOut,
            9 => DepthOut,
            10 => Sampler,
            11 => Const2,
            12 => Const3,
            13 => Const4,
            14 => ConstBool,
            15 => Loop,
            16 => TempFloat16,
            17 => MiscType,
            18 => Label,
            19 => Predicate,
            _ => return None,
        })
    }

    /// The float-constant bank (`c0`–`c2047` is 0, `CONST2` 1, …), if this is one.
    pub fn const_bank(self) -> Option<u32> {
        match self {
            RegisterType::Const => Some(0),
            RegisterType::Const2 => Some(1),
            RegisterType::Const3 => Some(2),
            RegisterType::Const4 => Some(3),
            _ => None,
        }
    }
}

/// Which shaders a spelling applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Applies {
    Any,
    Vertex,
    Pixel,
    VertexBelow3,
    Vertex3,
}

impl Applies {
    fn matches(self, version: Version) -> bool {
        match self {
            Applies::Any => true,
            Applies::Vertex => version.kind == ShaderKind::Vertex,
            Applies::Pixel => version.kind == ShaderKind::Pixel,
            Applies::VertexBelow3 => version.kind == ShaderKind::Vertex && version.major < 3,
            Applies::Vertex3 => version.kind == ShaderKind::Vertex && version.major >= 3,
        }
    }
}

/// One asm spelling: a prefix followed by a number (`numbered`), or a fixed name for a
/// fixed register number.
struct Spelling {
    name: &'static str,
    ty: RegisterType,
    /// `None`: `name` is followed by the register number. `Some(n)`: `name` alone is
    /// register `n`.
    fixed: Option<u32>,
    applies: Applies,
}

const fn numbered(name: &'static str, ty: RegisterType, applies: Applies) -> Spelling {
    Spelling {
        name,
        ty,
        fixed: None,
        applies,
    }
}

const fn named(name: &'static str, ty: RegisterType, n: u32, applies: Applies) -> Spelling {
    Spelling {
        name,
        ty,
        fixed: Some(n),
        applies,
    }
}

/// §4.2. Listed longest name first so prefix matching picks `oPos` before `o#`. The
/// first spelling matching a register is the one the disassembler prints.
static SPELLINGS: &[Spelling] = &[
    named("oDepth", RegisterType::DepthOut, 0, Applies::Pixel),
    named("vFace", RegisterType::MiscType, 1, Applies::Pixel),
    named("vPos", RegisterType::MiscType, 0, Applies::Pixel),
    named("oPos", RegisterType::RastOut, 0, Applies::Vertex),
    named("oFog", RegisterType::RastOut, 1, Applies::Vertex),
    named("oPts", RegisterType::RastOut, 2, Applies::Vertex),
    named("aL", RegisterType::Loop, 0, Applies::Any),
    numbered("oD", RegisterType::AttrOut, Applies::Vertex),
    numbered("oT", RegisterType::Output, Applies::VertexBelow3),
    numbered("oC", RegisterType::ColorOut, Applies::Pixel),
    numbered("o", RegisterType::Output, Applies::Vertex3),
    numbered("r", RegisterType::Temp, Applies::Any),
    numbered("v", RegisterType::Input, Applies::Any),
    numbered("c", RegisterType::Const, Applies::Any),
    numbered("a", RegisterType::AddrOrTexture, Applies::Vertex),
    numbered("t", RegisterType::AddrOrTexture, Applies::Pixel),
    numbered("i", RegisterType::ConstInt, Applies::Any),
    numbered("b", RegisterType::ConstBool, Applies::Any),
    numbered("s", RegisterType::Sampler, Applies::Any),
    numbered("l", RegisterType::Label, Applies::Any),
    numbered("p", RegisterType::Predicate, Applies::Any),
    // Accepted when reading, never printed: `oT#` in vs_3_0 and `o#` before it are the
    // same register type.
    numbered("oT", RegisterType::Output, Applies::Vertex3),
    numbered("o", RegisterType::Output, Applies::VertexBelow3),
];

/// Number of registers in each float-constant bank (§4.2: `CONST2` starts at c2048).
pub const CONST_BANK_SIZE: u32 = 2048;
/// Largest register number a parameter token can hold (`[10:0]`).
pub const MAX_NUMBER: u32 = 0x7FF;

/// The asm name of register `number` of type `ty` in `version`, or `None` if it has no
/// spelling there (then the disassembler falls back to raw tokens).
pub fn register_name(ty: RegisterType, number: u32, version: Version) -> Option<String> {
    let (ty, number) = match ty.const_bank() {
        Some(bank) => (RegisterType::Const, bank * CONST_BANK_SIZE + number),
        None => (ty, number),
    };
    SPELLINGS
        .iter()
        .find(|s| s.ty == ty && s.applies.matches(version) && s.fixed.map_or(true, |n| n == number))
        .map(|s| match s.fixed {
            Some(_) => s.name.to_string(),
            None => format!("{}{}", s.name, number),
        })
}

/// What [`parse_register_prefix`] recognised at the start of a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterName {
    pub ty: RegisterType,
    /// `Some` for fixed names (`oPos`) and when digits followed the prefix.
    pub number: Option<u32>,
    /// Bytes of the word consumed.
    pub len: usize,
}

/// Recognises a register name at the start of `word` (any case), e.g. `c12`, `oPos`,
/// `c` (in `c[a0.x + 4]`). Constants above 2047 come back as `CONST2`…`CONST4`.
/// Returns `Err(message)` when the name exists only in the other kind of shader.
pub fn parse_register_prefix(word: &str, version: Version) -> Result<RegisterName, String> {
    let lower = word.to_ascii_lowercase();
    let mut other_kind = None;
    for s in SPELLINGS {
        let name = s.name.to_ascii_lowercase();
        if !lower.starts_with(&name) {
            continue;
        }
        let rest = &lower[name.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let after = &rest[digits..];
        if !after.is_empty() {
            continue;
        }
        if s.fixed.is_some() && digits > 0 {
            continue;
        }
        if !s.applies.matches(version) {
            other_kind.get_or_insert(s.name);
            continue;
        }
        let number = match s.fixed {
            Some(n) => Some(n),
            None if digits > 0 => Some(
                rest[..digits]
                    .parse::<u32>()
                    .map_err(|_| format!("register number in '{word}' is too large"))?,
            ),
            None => None,
        };
        let (ty, number) = match (s.ty, number) {
            (RegisterType::Const, Some(n))
                if (CONST_BANK_SIZE..4 * CONST_BANK_SIZE).contains(&n) =>
            {
                let bank = n / CONST_BANK_SIZE;
                let ty = [
                    RegisterType::Const,
                    RegisterType::Const2,
                    RegisterType::Const3,
                    RegisterType::Const4,
                ][bank as usize];
                (ty, Some(n % CONST_BANK_SIZE))
            }
            other => other,
        };
        return Ok(RegisterName {
            ty,
            number,
            len: word.len(),
        });
    }
    match other_kind {
        Some(name) => Err(format!(
            "register '{word}' ({name}) does not exist in {version}"
        )),
        None => Err(format!("'{word}' is not a register")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(kind: ShaderKind, major: u8, minor: u8) -> Version {
        Version { kind, major, minor }
    }

    #[test]
    fn names_round_trip() {
        let vs11 = v(ShaderKind::Vertex, 1, 1);
        let vs30 = v(ShaderKind::Vertex, 3, 0);
        let ps30 = v(ShaderKind::Pixel, 3, 0);
        for (ty, n, ver, name) in [
            (RegisterType::AddrOrTexture, 0, vs11, "a0"),
            (RegisterType::AddrOrTexture, 3, ps30, "t3"),
            (RegisterType::Output, 5, vs11, "oT5"),
            (RegisterType::Output, 5, vs30, "o5"),
            (RegisterType::RastOut, 2, vs11, "oPts"),
            (RegisterType::MiscType, 1, ps30, "vFace"),
            (RegisterType::Const2, 2, vs30, "c2050"),
            (RegisterType::Loop, 0, vs30, "aL"),
            (RegisterType::DepthOut, 0, ps30, "oDepth"),
        ] {
            assert_eq!(register_name(ty, n, ver).as_deref(), Some(name));
            let parsed = parse_register_prefix(name, ver).unwrap();
            assert_eq!((parsed.ty, parsed.number), (ty, Some(n)), "{name}");
        }
        assert_eq!(register_name(RegisterType::RastOut, 3, vs11), None);
        assert!(parse_register_prefix("a0", ps30).is_err());
        assert!(parse_register_prefix("OPOS", vs11).is_ok());
        assert_eq!(parse_register_prefix("c", vs11).unwrap().number, None);
        assert!(parse_register_prefix("x3", vs11).is_err());
    }
}
