//! The D3D9 opcode table (`shared/formats/d3d9-bytecode.md` §6): the one place that says
//! which instructions exist, how many operands they take, in which shader versions they
//! are available and what they cost in instruction slots. The parser, the disassembler,
//! the assembler and the validator all read it.

use super::bytecode::{ShaderKind, Version};

/// An inclusive range of shader versions, as `0xMMmm` codes (`0x0201` is 2_x).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub min: u16,
    pub max: u16,
}

impl Span {
    pub fn contains(&self, version: Version) -> bool {
        (self.min..=self.max).contains(&version.code())
    }
}

const fn from(min: u16) -> Option<Span> {
    Some(Span { min, max: 0x0300 })
}

const fn only(min: u16, max: u16) -> Option<Span> {
    Some(Span { min, max })
}

const NONE: Option<Span> = None;

/// How the tokens after the instruction token are laid out (§5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `dst` destination tokens, then `src` source tokens (plus relative-address and
    /// predicate tokens in SM ≥ 2).
    Operands,
    /// `dcl`: a usage/info token, then the declared register.
    Dcl,
    /// `def`, `defi`: a destination, then four raw DWORDs.
    Def4,
    /// `defb`: a destination, then one raw DWORD.
    Def1,
}

/// What the controls field `[23:16]` of the instruction token holds (§3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Controls {
    None,
    /// `ifc`, `breakc`, `setp`: a comparison, printed as a `_gt`… suffix.
    Comparison,
    /// SM ≥ 2 `texld`: 0 `texld`, 1 `texldp`, 2 `texldb`.
    TexldVariant,
}

/// Which instruction-slot budget an instruction draws on (§8; ps_1_x and ps_2_0 split
/// texture and arithmetic slots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Arithmetic,
    Texture,
    /// `texbeml`: one texture and one arithmetic slot.
    TextureAndArithmetic,
    FlowControl,
    /// `dcl`, `def*`, `phase`, `nop`-like bookkeeping: no slot.
    Free,
}

/// A slot cost that differs from a row's default in some versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotOverride {
    pub kind: ShaderKind,
    pub versions: Span,
    pub slots: u8,
}

/// One row of the opcode table. An opcode whose operands or spelling change with the
/// version (`tex`/`texld`, `texcoord`/`texcrd`, `sincos`, `sgn`) has one row per form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpcodeInfo {
    pub opcode: u16,
    pub mnemonic: &'static str,
    pub dst: u8,
    pub src: u8,
    pub layout: Layout,
    pub controls: Controls,
    /// Vertex-shader versions in which Microsoft's asm reference lists the instruction.
    pub vs: Option<Span>,
    /// Pixel-shader versions in which Microsoft's asm reference lists the instruction.
    pub ps: Option<Span>,
    pub class: Class,
    pub slots: u8,
    pub slot_overrides: &'static [SlotOverride],
}

pub const OP_DCL: u16 = 0x1F;
pub const OP_DEF: u16 = 0x51;
pub const OP_DEFI: u16 = 0x30;
pub const OP_DEFB: u16 = 0x2F;
pub const OP_TEX: u16 = 0x42;
pub const OP_PHASE: u16 = 0xFFFD;
pub const OP_COMMENT: u16 = 0xFFFE;
pub const OP_END: u16 = 0xFFFF;

/// One table row with the defaults most rows share (plain operands, no controls).
#[allow(clippy::too_many_arguments)]
const fn row(
    opcode: u16,
    mnemonic: &'static str,
    dst: u8,
    src: u8,
    vs: Option<Span>,
    ps: Option<Span>,
    class: Class,
    slots: u8,
) -> OpcodeInfo {
    OpcodeInfo {
        opcode,
        mnemonic,
        dst,
        src,
        layout: Layout::Operands,
        controls: Controls::None,
        vs,
        ps,
        class,
        slots,
        slot_overrides: &[],
    }
}

const fn with_layout(mut r: OpcodeInfo, layout: Layout) -> OpcodeInfo {
    r.layout = layout;
    r
}

const fn with_controls(mut r: OpcodeInfo, controls: Controls) -> OpcodeInfo {
    r.controls = controls;
    r
}

const fn with_slots(mut r: OpcodeInfo, o: &'static [SlotOverride]) -> OpcodeInfo {
    r.slot_overrides = o;
    r
}

const VS: ShaderKind = ShaderKind::Vertex;
const PS: ShaderKind = ShaderKind::Pixel;
const A: Class = Class::Arithmetic;
const T: Class = Class::Texture;
const F: Class = Class::FlowControl;
const FREE: Class = Class::Free;

const PS12_13_TWO: &[SlotOverride] = &[SlotOverride {
    kind: PS,
    versions: Span {
        min: 0x0102,
        max: 0x0103,
    },
    slots: 2,
}];
const VS11_TEN: &[SlotOverride] = &[SlotOverride {
    kind: VS,
    versions: Span {
        min: 0x0101,
        max: 0x0101,
    },
    slots: 10,
}];
const VS11_THREE: &[SlotOverride] = &[SlotOverride {
    kind: VS,
    versions: Span {
        min: 0x0101,
        max: 0x0101,
    },
    slots: 3,
}];

/// §6, row for row. `dst`/`src` are the parameter tokens read (before relative-address,
/// predicate and immediate extras).
pub static OPCODES: &[OpcodeInfo] = &[
    row(0x00, "nop", 0, 0, from(0x0101), from(0x0101), A, 1),
    row(0x01, "mov", 1, 1, from(0x0101), from(0x0101), A, 1),
    row(0x02, "add", 1, 2, from(0x0101), from(0x0101), A, 1),
    row(0x03, "sub", 1, 2, from(0x0101), from(0x0101), A, 1),
    row(0x04, "mad", 1, 3, from(0x0101), from(0x0101), A, 1),
    row(0x05, "mul", 1, 2, from(0x0101), from(0x0101), A, 1),
    row(0x06, "rcp", 1, 1, from(0x0101), from(0x0200), A, 1),
    row(0x07, "rsq", 1, 1, from(0x0101), from(0x0200), A, 1),
    row(0x08, "dp3", 1, 2, from(0x0101), from(0x0101), A, 1),
    with_slots(
        row(0x09, "dp4", 1, 2, from(0x0101), from(0x0102), A, 1),
        PS12_13_TWO,
    ),
    row(0x0A, "min", 1, 2, from(0x0101), from(0x0200), A, 1),
    row(0x0B, "max", 1, 2, from(0x0101), from(0x0200), A, 1),
    row(0x0C, "slt", 1, 2, from(0x0101), NONE, A, 1),
    row(0x0D, "sge", 1, 2, from(0x0101), NONE, A, 1),
    with_slots(
        row(0x0E, "exp", 1, 1, from(0x0101), from(0x0200), A, 1),
        VS11_TEN,
    ),
    with_slots(
        row(0x0F, "log", 1, 1, from(0x0101), from(0x0200), A, 1),
        VS11_TEN,
    ),
    row(0x10, "lit", 1, 1, from(0x0101), NONE, A, 3),
    row(0x11, "dst", 1, 2, from(0x0101), NONE, A, 1),
    row(0x12, "lrp", 1, 3, from(0x0200), from(0x0101), A, 1),
    with_slots(
        row(0x13, "frc", 1, 1, from(0x0101), from(0x0200), A, 1),
        VS11_THREE,
    ),
    row(0x14, "m4x4", 1, 2, from(0x0101), from(0x0200), A, 4),
    row(0x15, "m4x3", 1, 2, from(0x0101), from(0x0200), A, 3),
    row(0x16, "m3x4", 1, 2, from(0x0101), from(0x0200), A, 4),
    row(0x17, "m3x3", 1, 2, from(0x0101), from(0x0200), A, 3),
    row(0x18, "m3x2", 1, 2, from(0x0101), from(0x0200), A, 2),
    row(0x19, "call", 0, 1, from(0x0200), from(0x0201), F, 2),
    row(0x1A, "callnz", 0, 2, from(0x0200), from(0x0201), F, 3),
    row(0x1B, "loop", 0, 2, from(0x0200), only(0x0300, 0x0300), F, 3),
    row(0x1C, "ret", 0, 0, from(0x0200), from(0x0201), F, 1),
    row(
        0x1D,
        "endloop",
        0,
        0,
        from(0x0200),
        only(0x0300, 0x0300),
        F,
        2,
    ),
    row(0x1E, "label", 0, 1, from(0x0200), from(0x0201), F, 0),
    with_layout(
        row(OP_DCL, "dcl", 1, 0, from(0x0101), from(0x0200), FREE, 0),
        Layout::Dcl,
    ),
    row(0x20, "pow", 1, 2, from(0x0200), from(0x0200), A, 3),
    row(0x21, "crs", 1, 2, from(0x0200), from(0x0200), A, 2),
    row(0x22, "sgn", 1, 3, only(0x0200, 0x0201), NONE, A, 3),
    row(0x22, "sgn", 1, 1, only(0x0300, 0x0300), NONE, A, 3),
    row(0x23, "abs", 1, 1, from(0x0200), from(0x0200), A, 1),
    row(0x24, "nrm", 1, 1, from(0x0200), from(0x0200), A, 3),
    row(
        0x25,
        "sincos",
        1,
        3,
        only(0x0200, 0x0201),
        only(0x0200, 0x0201),
        A,
        8,
    ),
    row(
        0x25,
        "sincos",
        1,
        1,
        only(0x0300, 0x0300),
        only(0x0300, 0x0300),
        A,
        8,
    ),
    row(0x26, "rep", 0, 1, from(0x0200), from(0x0201), F, 3),
    row(0x27, "endrep", 0, 0, from(0x0200), from(0x0201), F, 2),
    row(0x28, "if", 0, 1, from(0x0200), from(0x0201), F, 3),
    with_controls(
        row(0x29, "if", 0, 2, from(0x0201), from(0x0201), F, 3),
        Controls::Comparison,
    ),
    row(0x2A, "else", 0, 0, from(0x0200), from(0x0201), F, 1),
    row(0x2B, "endif", 0, 0, from(0x0200), from(0x0201), F, 1),
    row(0x2C, "break", 0, 0, from(0x0201), from(0x0201), F, 1),
    with_controls(
        row(0x2D, "break", 0, 2, from(0x0201), from(0x0201), F, 3),
        Controls::Comparison,
    ),
    row(0x2E, "mova", 1, 1, from(0x0200), NONE, A, 1),
    with_layout(
        row(OP_DEFB, "defb", 1, 0, from(0x0200), from(0x0201), FREE, 0),
        Layout::Def1,
    ),
    with_layout(
        row(OP_DEFI, "defi", 1, 0, from(0x0200), from(0x0201), FREE, 0),
        Layout::Def4,
    ),
    row(0x40, "texcoord", 1, 0, NONE, only(0x0101, 0x0103), T, 1),
    row(0x40, "texcrd", 1, 1, NONE, only(0x0104, 0x0104), T, 1),
    row(0x41, "texkill", 1, 0, NONE, from(0x0101), T, 1),
    row(OP_TEX, "tex", 1, 0, NONE, only(0x0101, 0x0103), T, 1),
    row(OP_TEX, "texld", 1, 1, NONE, only(0x0104, 0x0104), T, 1),
    with_controls(
        row(OP_TEX, "texld", 1, 2, NONE, from(0x0200), T, 1),
        Controls::TexldVariant,
    ),
    row(0x43, "texbem", 1, 1, NONE, only(0x0101, 0x0103), T, 1),
    row(
        0x44,
        "texbeml",
        1,
        1,
        NONE,
        only(0x0101, 0x0103),
        Class::TextureAndArithmetic,
        2,
    ),
    row(0x45, "texreg2ar", 1, 1, NONE, only(0x0101, 0x0103), T, 1),
    row(0x46, "texreg2gb", 1, 1, NONE, only(0x0101, 0x0103), T, 1),
    row(0x47, "texm3x2pad", 1, 1, NONE, only(0x0101, 0x0103), T, 1),
    row(0x48, "texm3x2tex", 1, 1, NONE, only(0x0101, 0x0103), T, 1),
    row(0x49, "texm3x3pad", 1, 1, NONE, only(0x0101, 0x0103), T, 1),
    row(0x4A, "texm3x3tex", 1, 1, NONE, only(0x0101, 0x0103), T, 1),
    row(0x4B, "texm3x3diff", 1, 1, NONE, NONE, T, 1),
    row(0x4C, "texm3x3spec", 1, 2, NONE, only(0x0101, 0x0103), T, 1),
    row(0x4D, "texm3x3vspec", 1, 1, NONE, only(0x0101, 0x0103), T, 1),
    row(0x4E, "expp", 1, 1, from(0x0101), NONE, A, 1),
    row(0x4F, "logp", 1, 1, from(0x0101), NONE, A, 1),
    row(0x50, "cnd", 1, 3, NONE, only(0x0101, 0x0104), A, 1),
    with_layout(
        row(OP_DEF, "def", 1, 0, from(0x0101), from(0x0101), FREE, 0),
        Layout::Def4,
    ),
    row(0x52, "texreg2rgb", 1, 1, NONE, only(0x0102, 0x0103), T, 1),
    row(0x53, "texdp3tex", 1, 1, NONE, only(0x0102, 0x0103), T, 1),
    row(0x54, "texm3x2depth", 1, 1, NONE, only(0x0103, 0x0103), T, 1),
    row(0x55, "texdp3", 1, 1, NONE, only(0x0102, 0x0103), T, 1),
    row(0x56, "texm3x3", 1, 1, NONE, only(0x0102, 0x0103), T, 1),
    row(0x57, "texdepth", 1, 0, NONE, only(0x0104, 0x0104), T, 1),
    with_slots(
        row(0x58, "cmp", 1, 3, NONE, from(0x0102), A, 1),
        PS12_13_TWO,
    ),
    row(0x59, "bem", 1, 2, NONE, only(0x0104, 0x0104), A, 2),
    row(0x5A, "dp2add", 1, 3, NONE, from(0x0200), A, 2),
    row(0x5B, "dsx", 1, 1, NONE, from(0x0201), A, 2),
    row(0x5C, "dsy", 1, 1, NONE, from(0x0201), A, 2),
    row(0x5D, "texldd", 1, 4, NONE, from(0x0201), T, 3),
    with_controls(
        row(0x5E, "setp", 1, 2, from(0x0201), from(0x0201), A, 1),
        Controls::Comparison,
    ),
    row(
        0x5F,
        "texldl",
        1,
        2,
        only(0x0300, 0x0300),
        only(0x0300, 0x0300),
        T,
        2,
    ),
    row(0x60, "breakp", 0, 1, from(0x0201), from(0x0201), F, 3),
    row(OP_PHASE, "phase", 0, 0, NONE, only(0x0104, 0x0104), FREE, 0),
];

/// Comparison suffixes of the controls field `[18:16]` (§3); index = value.
pub const COMPARISONS: [&str; 8] = ["", "gt", "eq", "ge", "lt", "ne", "le", ""];

/// Spellings of SM ≥ 2 `texld` controls (§3); index = value.
pub const TEXLD_VARIANTS: [&str; 3] = ["texld", "texldp", "texldb"];

impl OpcodeInfo {
    /// The versions of `kind` in which this row is available.
    pub fn span(&self, kind: ShaderKind) -> Option<Span> {
        match kind {
            ShaderKind::Vertex => self.vs,
            ShaderKind::Pixel => self.ps,
        }
    }

    pub fn available(&self, version: Version) -> bool {
        self.span(version.kind).is_some_and(|s| s.contains(version))
    }

    /// Instruction slots this row costs in `version` (§6 notes).
    pub fn slots(&self, version: Version) -> u32 {
        self.slot_overrides
            .iter()
            .find(|o| o.kind == version.kind && o.versions.contains(version))
            .map_or(self.slots, |o| o.slots) as u32
    }
}

/// The row describing `opcode` in `version`: the row available there, else (for parsing
/// instructions the version does not list) the closest row by version.
pub fn lookup(opcode: u16, version: Version) -> Option<&'static OpcodeInfo> {
    let rows = || OPCODES.iter().filter(move |r| r.opcode == opcode);
    rows()
        .find(|r| r.available(version))
        .or_else(|| rows().find(|r| [r.vs, r.ps].iter().flatten().any(|s| s.contains(version))))
        .or_else(|| {
            rows().rfind(|r| {
                [r.vs, r.ps]
                    .iter()
                    .flatten()
                    .any(|s| s.min <= version.code())
            })
        })
        .or_else(|| rows().next())
}

/// All rows spelled `mnemonic` (lower case), for the assembler.
pub fn by_mnemonic(mnemonic: &str) -> impl Iterator<Item = &'static OpcodeInfo> + '_ {
    OPCODES.iter().filter(move |r| r.mnemonic == mnemonic)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(kind: ShaderKind, major: u8, minor: u8) -> Version {
        Version { kind, major, minor }
    }

    #[test]
    fn version_dependent_rows() {
        let ps13 = v(PS, 1, 3);
        let ps14 = v(PS, 1, 4);
        let ps20 = v(PS, 2, 0);
        assert_eq!(lookup(OP_TEX, ps13).unwrap().src, 0);
        assert_eq!(lookup(OP_TEX, ps14).unwrap().src, 1);
        assert_eq!(lookup(OP_TEX, ps20).unwrap().src, 2);
        assert_eq!(lookup(0x40, ps14).unwrap().mnemonic, "texcrd");
        assert_eq!(lookup(0x25, v(VS, 3, 0)).unwrap().src, 1);
        assert_eq!(lookup(0x25, v(VS, 2, 1)).unwrap().src, 3);
    }

    #[test]
    fn availability_and_slots() {
        let break_row = lookup(0x2C, v(VS, 2, 0)).unwrap();
        assert!(!break_row.available(v(VS, 2, 0)));
        assert!(break_row.available(v(VS, 2, 1)));
        let dp4 = lookup(0x09, v(PS, 1, 3)).unwrap();
        assert_eq!(dp4.slots(v(PS, 1, 3)), 2);
        assert_eq!(dp4.slots(v(VS, 1, 1)), 1);
        assert!(lookup(0x31, v(VS, 2, 0)).is_none());
        // Every opcode has rows whose spans do not overlap within one shader kind.
        for a in OPCODES {
            for b in OPCODES {
                if std::ptr::eq(a, b) || a.opcode != b.opcode {
                    continue;
                }
                for kind in [VS, PS] {
                    if let (Some(x), Some(y)) = (a.span(kind), b.span(kind)) {
                        assert!(x.max < y.min || y.max < x.min, "{}", a.mnemonic);
                    }
                }
            }
        }
    }
}
