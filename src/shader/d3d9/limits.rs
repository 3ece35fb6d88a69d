//! Shader-model limits (`shared/formats/d3d9-bytecode.md` §8): which register types each
//! model has, how many of each and how many an instruction may read, its instruction-slot
//! budget, and the per-model facts the full validation reads (source swizzles, read-only
//! and write-only registers, what must be declared, label numbers, flow-control nesting).
//! One table, read by the validator (which the assembler runs), by the disassembler's
//! slot-count footer and notes, and by the property tests' shader generator.
//!
//! Every number carries its source: a page of Microsoft's asm reference
//! (`MicrosoftDocs/win32 desktop-src/direct3dhlsl/…`, published under
//! learn.microsoft.com/windows/win32/direct3dhlsl/) or, for the largest register a token
//! can name, the token format. Where the reference makes a number a device capability
//! ("Equal to D3DCAPS9.MaxVertexShaderConst (at least 256 for vs_2_0)") the table holds the
//! largest value a device may have, so that every shader some device runs is accepted,
//! together with the capability and its guaranteed minimum ([`Cap`]): a shader that goes
//! beyond the minimum is accepted, and [`super::validate::notes`] names the capability it
//! needs.

use super::bytecode::{ShaderKind, Version};
use super::registers::RegisterType;

/// A device capability a limit depends on, and the value every device of the model has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cap {
    /// The `D3DCAPS9` field (`D3DCAPS9.MaxVertexShaderConst`).
    pub name: &'static str,
    pub guaranteed: u32,
}

/// One register type of a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterFile {
    pub ty: RegisterType,
    /// How many registers the model accepts: the documented count, or for a device
    /// capability the largest a device may report (float constants: c0–c8191, the most a
    /// token can name, §4.2).
    pub count: u32,
    /// The capability the count depends on, when it does.
    pub cap: Option<Cap>,
    /// Different registers of this type one instruction may read ("# Read ports" of the
    /// register pages: "the number of different registers (for each register type) that
    /// can be read in a single instruction"); `None` where the pages give none (outputs).
    pub read_ports: Option<u32>,
    /// The page (and its words) the numbers come from.
    pub source: &'static str,
}

/// An instruction-slot budget (`dx9-graphics-reference-asm-vs-differences.md`,
/// `…-ps-differences.md`, "Instruction Slots").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slots {
    /// One budget for all instructions: the most a device may allow, and the capability
    /// above the guaranteed minimum.
    Total(u32, Option<Cap>),
    /// ps_1_1–1_3, ps_2_0: separate texture and arithmetic budgets.
    Split { texture: u32, arithmetic: u32 },
    /// ps_1_4: separate budgets, renewed by `phase`.
    PerPhase { texture: u32, arithmetic: u32 },
}

/// The limits of one shader model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelLimits {
    pub version: Version,
    /// Register types present in the model. Float constants are given once as `Const`
    /// (c0 … count−1, spanning `CONST2`…`CONST4` beyond c2047).
    pub registers: &'static [RegisterFile],
    pub slots: Slots,
    /// Where the slot budget comes from.
    pub slots_source: &'static str,
    /// Source swizzles the model allows on arithmetic instructions.
    pub swizzles: Swizzles,
    /// Register types no instruction may write (`dcl`, `def*` and `texkill`, whose operand
    /// is encoded as a destination but read, excepted). Microsoft's register pages
    /// ("Read-only, Read/Write" of `…-ps-registers-ps-1-x.md`; "I/O permissions" of the
    /// register pages of the later models).
    pub read_only: &'static [RegisterType],
    /// Register types no instruction may read (outputs).
    pub write_only: &'static [RegisterType],
    /// Register types whose registers must be declared with `dcl` before they are used.
    pub declared: &'static [RegisterType],
    /// Label numbers `l0` … `l(labels − 1)` (`label---vs.md`, `label---ps.md`: 0–15 in
    /// vs_2_0/vs_2_x/ps_2_x, 0–2047 in the 3_0 models).
    pub labels: u32,
    /// The highest order of dependent texture reads, and the capability that lifts the
    /// limit where one does: "a given texture instruction may be dependent upon, at most,
    /// third order" in ps_2_0, and in ps_2_x unless the device has
    /// `D3DPS20CAPS_NODEPENDENTREADLIMIT` (`texld---ps-2-0.md`; ps_2_x lists "No dependent
    /// texture read limit" as a cap feature, `…-ps-differences.md`).
    pub dependent_reads: Option<(u32, Option<&'static str>)>,
    /// Flow-control nesting limits; `None`: no flow control.
    pub flow: Option<FlowLimits>,
}

/// Source swizzles allowed on arithmetic instructions (Microsoft, "Source Register
/// Swizzling", `dx9-graphics-reference-asm-ps-registers-modifiers-source-register-swizzling.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swizzles {
    /// ps_1_1–1_3: `.xyzw`, `.w`, and `.z` only when the destination mask is `.w`.
    Ps11,
    /// ps_1_4: `.xyzw` and the four replicates.
    Ps14,
    /// ps_2_0: `.xyzw`, the replicates, `.yzxw`, `.zxyw`, `.wzyx`.
    Ps20,
    /// Every swizzle (vertex shaders, ps_2_x, ps_3_0).
    Any,
}

/// Flow-control nesting limits (Microsoft, "Flow Control Nesting Limits",
/// `dx9-graphics-reference-asm-vs-instructions-flow-control.md`, and "Flow Control
/// Limitations", `dx9-graphics-reference-asm-ps-instructions-flow-control.md`). Where a
/// limit depends on the device's caps, the largest value a device may report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowLimits {
    /// loop/rep blocks inside each other.
    pub loop_rep: u32,
    /// Subroutine calls inside each other.
    pub call: u32,
    /// `if b#` blocks inside each other (`None`: bounded only by `static_count`).
    pub static_depth: Option<u32>,
    /// `if_comp`/`if p0`/`break_comp`/`callnz p0` inside each other.
    pub dynamic_depth: u32,
    /// Static flow instructions in the whole shader (`if b#`, its `else`, `loop`, `rep`,
    /// `call`, `callnz b#`); `None`: no limit.
    pub static_count: Option<u32>,
    /// The page and table the numbers come from.
    pub source: &'static str,
}

use RegisterType::*;

const fn ver(kind: ShaderKind, major: u8, minor: u8) -> Version {
    Version::new(kind, major, minor)
}

const VS: ShaderKind = ShaderKind::Vertex;
const PS: ShaderKind = ShaderKind::Pixel;

const fn reg(
    ty: RegisterType,
    count: u32,
    read_ports: Option<u32>,
    source: &'static str,
) -> RegisterFile {
    RegisterFile {
        ty,
        count,
        cap: None,
        read_ports,
        source,
    }
}

const fn capped(
    ty: RegisterType,
    count: u32,
    cap: &'static str,
    guaranteed: u32,
    read_ports: Option<u32>,
    source: &'static str,
) -> RegisterFile {
    RegisterFile {
        ty,
        count,
        cap: Some(Cap {
            name: cap,
            guaranteed,
        }),
        read_ports,
        source,
    }
}

/// The most float constants a token can name: c0–c2047 as `CONST`, up to c8191 as
/// `CONST2`–`CONST4` (§4.2).
const MAX_FLOAT_CONSTANTS: u32 = 8192;
const MAX_VS_CONST: &str = "D3DCAPS9.MaxVertexShaderConst";

const VS11_PAGE: &str = "dx9-graphics-reference-asm-vs-registers-vs-1-1.md";
const VS20_PAGE: &str = "dx9-graphics-reference-asm-vs-registers-vs-2-0.md";
const VS2X_PAGE: &str = "dx9-graphics-reference-asm-vs-registers-vs-2-x.md";
const VS30_PAGE: &str = "dx9-graphics-reference-asm-vs-registers-vs-3-0.md";
const PS1X_PAGE: &str =
    "dx9-graphics-reference-asm-ps-registers-ps-1-x.md (Register Types, Read Port Limit)";
const PS20_PAGE: &str = "dx9-graphics-reference-asm-ps-registers-ps-2-0.md (it lists the 2_x ranges; ps_2_0's 12 r# and 32 c#: dx9-graphics-reference-asm-ps-differences.md)";
const PS30_PAGE: &str = "dx9-graphics-reference-asm-ps-registers-ps-3-0.md";

/// The outputs of vs_1_1 to vs_2_x (their register pages, "Output Registers"): oPos, oFog,
/// oPts; oD0–oD1; oT0–oT7.
const fn vs_outputs(page: &'static str) -> [RegisterFile; 3] {
    [
        reg(RastOut, 3, None, page),
        reg(AttrOut, 2, None, page),
        reg(Output, 8, None, page),
    ]
}

const VS11_OUT: [RegisterFile; 3] = vs_outputs(VS11_PAGE);
const VS20_OUT: [RegisterFile; 3] = vs_outputs(VS20_PAGE);
const VS2X_OUT: [RegisterFile; 3] = vs_outputs(VS2X_PAGE);

/// §8, one row per model.
pub static LIMITS: &[ModelLimits] = &[
    ModelLimits {
        version: ver(VS, 1, 1),
        registers: &[
            reg(Temp, 12, Some(3), VS11_PAGE),
            reg(Input, 16, Some(1), VS11_PAGE),
            capped(
                Const,
                MAX_FLOAT_CONSTANTS,
                MAX_VS_CONST,
                96,
                Some(1),
                VS11_PAGE,
            ),
            reg(AddrOrTexture, 1, Some(1), VS11_PAGE),
            VS11_OUT[0],
            VS11_OUT[1],
            VS11_OUT[2],
        ],
        slots: Slots::Total(128, None),
        slots_source: "dx9-graphics-reference-asm-vs-differences.md: vs_1_1 128",
        swizzles: Swizzles::Any,
        read_only: VS_READ_ONLY,
        write_only: VS_WRITE_ONLY,
        declared: &[Input],
        labels: 0,
        dependent_reads: None,
        flow: None,
    },
    ModelLimits {
        version: ver(VS, 2, 0),
        registers: &[
            reg(Temp, 12, Some(3), VS20_PAGE),
            reg(Input, 16, Some(1), VS20_PAGE),
            capped(
                Const,
                MAX_FLOAT_CONSTANTS,
                MAX_VS_CONST,
                256,
                Some(1),
                VS20_PAGE,
            ),
            reg(AddrOrTexture, 1, Some(1), VS20_PAGE),
            VS20_OUT[0],
            VS20_OUT[1],
            VS20_OUT[2],
            reg(ConstInt, 16, Some(1), VS20_PAGE),
            reg(ConstBool, 16, Some(1), VS20_PAGE),
            reg(Loop, 1, Some(1), VS20_PAGE),
            reg(
                Label,
                2048,
                None,
                "label---vs.md (numbers checked against `labels`)",
            ),
        ],
        slots: Slots::Total(256, None),
        slots_source: "dx9-graphics-reference-asm-vs-differences.md: vs_2_0 256",
        swizzles: Swizzles::Any,
        read_only: VS_READ_ONLY,
        write_only: VS_WRITE_ONLY,
        declared: &[Input],
        labels: 16,
        dependent_reads: None,
        flow: Some(FlowLimits {
            loop_rep: 1,
            call: 1,
            static_depth: None,
            dynamic_depth: 0,
            static_count: Some(16),
            source: "dx9-graphics-reference-asm-vs-instructions-flow-control.md, vs_2_0: \
                     loop/rep 1, call 1, static flow count 16, static nesting limited \
                     only by that count, no dynamic flow control",
        }),
    },
    ModelLimits {
        version: ver(VS, 2, 1),
        registers: &[
            capped(
                Temp,
                32,
                "D3DCAPS9.VS20Caps.NumTemps",
                12,
                Some(3),
                VS2X_PAGE,
            ),
            reg(Input, 16, Some(1), VS2X_PAGE),
            capped(
                Const,
                MAX_FLOAT_CONSTANTS,
                MAX_VS_CONST,
                256,
                Some(1),
                VS2X_PAGE,
            ),
            reg(AddrOrTexture, 1, Some(1), VS2X_PAGE),
            VS2X_OUT[0],
            VS2X_OUT[1],
            VS2X_OUT[2],
            reg(ConstInt, 16, Some(1), VS2X_PAGE),
            reg(ConstBool, 16, Some(1), VS2X_PAGE),
            reg(Loop, 1, Some(1), VS2X_PAGE),
            reg(
                Label,
                2048,
                None,
                "label---vs.md (numbers checked against `labels`)",
            ),
            reg(Predicate, 1, Some(1), VS2X_PAGE),
        ],
        slots: Slots::Total(256, None),
        slots_source: "dx9-graphics-reference-asm-vs-differences.md: vs_2_x 256",
        swizzles: Swizzles::Any,
        read_only: VS_READ_ONLY,
        write_only: VS_WRITE_ONLY,
        declared: &[Input],
        labels: 16,
        dependent_reads: None,
        flow: Some(FlowLimits {
            loop_rep: 4,
            call: 4,
            static_depth: None,
            dynamic_depth: 24,
            static_count: Some(16),
            source: "dx9-graphics-reference-asm-vs-instructions-flow-control.md, vs_2_x: \
                     loop/rep and call 1 to 4 (VS20Caps.StaticFlowControlDepth), dynamic \
                     0 or 24 (VS20Caps.DynamicFlowControlDepth), static flow count 16; \
                     the largest values",
        }),
    },
    ModelLimits {
        version: ver(VS, 3, 0),
        registers: &[
            reg(Temp, 32, Some(3), VS30_PAGE),
            reg(Input, 16, Some(1), VS30_PAGE),
            capped(
                Const,
                MAX_FLOAT_CONSTANTS,
                MAX_VS_CONST,
                256,
                Some(1),
                VS30_PAGE,
            ),
            reg(AddrOrTexture, 1, Some(1), VS30_PAGE),
            reg(Output, 12, None, VS30_PAGE),
            reg(ConstInt, 16, Some(1), VS30_PAGE),
            reg(ConstBool, 16, Some(1), VS30_PAGE),
            reg(Loop, 1, Some(1), VS30_PAGE),
            reg(
                Label,
                2048,
                None,
                "label---vs.md (numbers checked against `labels`)",
            ),
            reg(Predicate, 1, Some(1), VS30_PAGE),
            reg(Sampler, 4, Some(1), VS30_PAGE),
        ],
        slots: Slots::Total(
            32768,
            Some(Cap {
                name: "D3DCAPS9.MaxVertexShader30InstructionSlots",
                guaranteed: 512,
            }),
        ),
        slots_source: "dx9-graphics-reference-asm-vs-differences.md: vs_3_0 \"512 minimum, and \
                       up to D3DCAPS9.MaxVertexShader30InstructionSlots\" (at most 32768, \
                       D3DMAX30SHADERINSTRUCTIONS in d3d9caps.h)",
        swizzles: Swizzles::Any,
        read_only: VS_READ_ONLY,
        write_only: &[Output],
        declared: &[Input, Output, Sampler],
        labels: 2048,
        dependent_reads: None,
        flow: Some(SM3_FLOW),
    },
    ModelLimits {
        version: ver(PS, 1, 1),
        registers: &[
            reg(Temp, 2, Some(2), PS1X_PAGE),
            reg(Input, 2, Some(2), PS1X_PAGE),
            reg(Const, 8, Some(2), PS1X_PAGE),
            reg(AddrOrTexture, 4, Some(2), PS1X_PAGE),
        ],
        slots: PS1X_SLOTS,
        slots_source: PS1X_SLOTS_SOURCE,
        swizzles: Swizzles::Ps11,
        read_only: &[Input, Const],
        write_only: &[],
        declared: &[],
        labels: 0,
        dependent_reads: None,
        flow: None,
    },
    ModelLimits {
        version: ver(PS, 1, 2),
        registers: PS12,
        slots: PS1X_SLOTS,
        slots_source: PS1X_SLOTS_SOURCE,
        swizzles: Swizzles::Ps11,
        read_only: &[Input, Const],
        write_only: &[],
        declared: &[],
        labels: 0,
        dependent_reads: None,
        flow: None,
    },
    ModelLimits {
        version: ver(PS, 1, 3),
        registers: PS12,
        slots: PS1X_SLOTS,
        slots_source: PS1X_SLOTS_SOURCE,
        swizzles: Swizzles::Ps11,
        read_only: &[Input, Const],
        write_only: &[],
        declared: &[],
        labels: 0,
        dependent_reads: None,
        flow: None,
    },
    ModelLimits {
        version: ver(PS, 1, 4),
        registers: &[
            reg(Temp, 6, Some(3), PS1X_PAGE),
            reg(Input, 2, Some(2), PS1X_PAGE),
            reg(Const, 8, Some(2), PS1X_PAGE),
            reg(AddrOrTexture, 6, Some(1), PS1X_PAGE),
        ],
        slots: Slots::PerPhase {
            texture: 6,
            arithmetic: 8,
        },
        slots_source: "dx9-graphics-reference-asm-ps-differences.md: ps_1_4 6 texture + 8 \
                       arithmetic per phase",
        swizzles: Swizzles::Ps14,
        read_only: &[Input, Const, AddrOrTexture],
        write_only: &[],
        declared: &[],
        labels: 0,
        dependent_reads: None,
        flow: None,
    },
    ModelLimits {
        version: ver(PS, 2, 0),
        registers: &[
            reg(Temp, 12, Some(3), PS20_PAGE),
            reg(Input, 2, Some(1), PS20_PAGE),
            reg(Const, 32, Some(1), PS20_PAGE),
            reg(AddrOrTexture, 8, Some(1), PS20_PAGE),
            reg(Sampler, 16, Some(1), PS20_PAGE),
            reg(ColorOut, 4, None, PS20_PAGE),
            reg(DepthOut, 1, None, PS20_PAGE),
        ],
        slots: Slots::Split {
            texture: 32,
            arithmetic: 64,
        },
        slots_source: "dx9-graphics-reference-asm-ps-differences.md: ps_2_0 32 texture + 64 \
                       arithmetic",
        swizzles: Swizzles::Ps20,
        read_only: PS2_READ_ONLY,
        write_only: &[ColorOut, DepthOut],
        declared: &[Input, AddrOrTexture, Sampler],
        labels: 0,
        dependent_reads: Some((3, None)),
        flow: None,
    },
    ModelLimits {
        version: ver(PS, 2, 1),
        registers: &[
            capped(
                Temp,
                32,
                "D3DCAPS9.PS20Caps.NumTemps",
                12,
                Some(3),
                PS20_PAGE,
            ),
            reg(Input, 2, Some(1), PS20_PAGE),
            reg(Const, 32, Some(1), PS20_PAGE),
            reg(AddrOrTexture, 8, Some(1), PS20_PAGE),
            reg(Sampler, 16, Some(1), PS20_PAGE),
            reg(ColorOut, 4, None, PS20_PAGE),
            reg(DepthOut, 1, None, PS20_PAGE),
            reg(ConstInt, 16, Some(1), PS20_PAGE),
            reg(ConstBool, 16, Some(1), PS20_PAGE),
            reg(
                Label,
                2048,
                None,
                "label---ps.md (numbers checked against `labels`)",
            ),
            reg(Predicate, 1, Some(1), PS20_PAGE),
        ],
        slots: Slots::Total(
            512,
            Some(Cap {
                name: "D3DCAPS9.PS20Caps.NumInstructionSlots",
                guaranteed: 96,
            }),
        ),
        slots_source: "dx9-graphics-reference-asm-ps-differences.md: ps_2_x \"96 minimum, and \
                       up to D3DPSHADERCAPS2_0.NumInstructionSlots\" (at most 512, \
                       D3DPS20_MAX_NUMINSTRUCTIONSLOTS in d3d9caps.h)",
        swizzles: Swizzles::Any,
        read_only: PS2_READ_ONLY,
        write_only: &[ColorOut, DepthOut],
        declared: &[Input, AddrOrTexture, Sampler],
        labels: 16,
        dependent_reads: Some((3, Some("D3DPS20CAPS_NODEPENDENTREADLIMIT"))),
        flow: Some(FlowLimits {
            loop_rep: 4,
            call: 4,
            static_depth: Some(24),
            dynamic_depth: 24,
            static_count: None,
            source: "dx9-graphics-reference-asm-ps-instructions-flow-control.md, ps_2_x: \
                     static nesting 24, dynamic 0 to 24 (PS20Caps.DynamicFlowControlDepth), \
                     rep and call 0 to 4 (PS20Caps.StaticFlowControlDepth); the largest \
                     values",
        }),
    },
    ModelLimits {
        version: ver(PS, 3, 0),
        registers: &[
            reg(Temp, 32, Some(3), PS30_PAGE),
            reg(Input, 10, Some(1), PS30_PAGE),
            reg(Const, 224, Some(1), PS30_PAGE),
            reg(Sampler, 16, Some(1), PS30_PAGE),
            reg(ColorOut, 4, None, PS30_PAGE),
            reg(DepthOut, 1, None, PS30_PAGE),
            reg(ConstInt, 16, Some(1), PS30_PAGE),
            reg(ConstBool, 16, Some(1), PS30_PAGE),
            reg(Loop, 1, Some(1), PS30_PAGE),
            reg(
                Label,
                2048,
                None,
                "label---ps.md (numbers checked against `labels`)",
            ),
            reg(Predicate, 1, Some(1), PS30_PAGE),
            reg(MiscType, 2, Some(1), PS30_PAGE),
        ],
        slots: Slots::Total(
            32768,
            Some(Cap {
                name: "D3DCAPS9.MaxPixelShader30InstructionSlots",
                guaranteed: 512,
            }),
        ),
        slots_source: "dx9-graphics-reference-asm-ps-differences.md: ps_3_0 \"512 minimum, and \
                       up to D3DCAPS9.MaxPixelShader30InstructionSlots\" (at most 32768, \
                       D3DMAX30SHADERINSTRUCTIONS in d3d9caps.h)",
        swizzles: Swizzles::Any,
        read_only: &[
            Input, Const, Sampler, ConstInt, ConstBool, Loop, Label, MiscType,
        ],
        write_only: &[ColorOut, DepthOut],
        declared: &[Input, Sampler],
        labels: 2048,
        dependent_reads: None,
        flow: Some(SM3_FLOW),
    },
];

/// Vertex-shader inputs, constants, samplers, aL and labels are read-only.
const VS_READ_ONLY: &[RegisterType] = &[Input, Const, ConstInt, ConstBool, Sampler, Loop, Label];
/// The outputs before vs_3_0 are write-only.
const VS_WRITE_ONLY: &[RegisterType] = &[RastOut, AttrOut, Output];
/// ps_2_0/ps_2_x: `v#`, `t#` (texture coordinates from ps_1_4 on) and `s#` are inputs.
const PS2_READ_ONLY: &[RegisterType] = &[
    Input,
    Const,
    AddrOrTexture,
    Sampler,
    ConstInt,
    ConstBool,
    Label,
];
/// vs_3_0 and ps_3_0: 24 static and dynamic levels, 4 loop/rep, 4 call.
const SM3_FLOW: FlowLimits = FlowLimits {
    loop_rep: 4,
    call: 4,
    static_depth: Some(24),
    dynamic_depth: 24,
    static_count: None,
    source: "dx9-graphics-reference-asm-vs-instructions-flow-control.md and \
             …-ps-instructions-flow-control.md, vs_3_0 and ps_3_0: static and dynamic \
             nesting 24, loop/rep 4, call 4",
};

const PS12: &[RegisterFile] = &[
    reg(Temp, 2, Some(2), PS1X_PAGE),
    reg(Input, 2, Some(2), PS1X_PAGE),
    reg(Const, 8, Some(2), PS1X_PAGE),
    reg(AddrOrTexture, 4, Some(3), PS1X_PAGE),
];
const PS1X_SLOTS: Slots = Slots::Split {
    texture: 4,
    arithmetic: 8,
};
const PS1X_SLOTS_SOURCE: &str =
    "dx9-graphics-reference-asm-ps-differences.md: ps_1_1 to ps_1_3 4 texture + 8 arithmetic";

/// The limits of `version`.
pub fn limits(version: Version) -> Option<&'static ModelLimits> {
    LIMITS.iter().find(|l| l.version == version)
}

impl ModelLimits {
    /// How many registers of `ty` the model has (`None`: the type does not exist there).
    /// `Const2`…`Const4` answer with the float-constant count, like `Const`.
    pub fn count(&self, ty: RegisterType) -> Option<u32> {
        self.register(ty).map(|r| r.count)
    }

    /// The row of `ty` (`Const2`…`Const4` answer with `Const`'s).
    pub fn register(&self, ty: RegisterType) -> Option<&RegisterFile> {
        let ty = if ty.const_bank().is_some() { Const } else { ty };
        self.registers.iter().find(|r| r.ty == ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_has_limits() {
        for v in Version::ALL {
            assert!(limits(v).is_some(), "{v}");
        }
        let ps13 = limits(ver(PS, 1, 3)).unwrap();
        assert_eq!(ps13.count(Temp), Some(2));
        assert_eq!(ps13.count(ColorOut), None);
        let vs30 = limits(ver(VS, 3, 0)).unwrap();
        assert_eq!(vs30.count(Output), Some(12));
        assert_eq!(vs30.count(Const3), Some(8192));
        assert_eq!(
            vs30.register(Const).unwrap().cap.unwrap().name,
            "D3DCAPS9.MaxVertexShaderConst"
        );
    }

    /// Every limit names its source.
    #[test]
    fn every_limit_has_a_source() {
        for l in LIMITS {
            assert!(l.slots_source.ends_with(".md") || l.slots_source.contains(".md:"));
            for r in l.registers {
                assert!(r.source.contains(".md"), "{} {:?}", l.version, r.ty);
            }
            if let Some(f) = l.flow {
                assert!(f.source.contains(".md"), "{}", l.version);
            }
        }
    }
}
