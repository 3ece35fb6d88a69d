//! Shader-model limits (`shared/formats/d3d9-bytecode.md` §8): which register types each
//! model has, how many of each, its instruction-slot budget, and the per-model facts the
//! full validation reads (source swizzles, read-only and write-only registers, what must
//! be declared, label numbers, flow-control nesting). One table, read by the validator
//! (which the assembler runs) and by the disassembler's slot-count footer.
//!
//! Where §8 gives a caps-dependent range (vs_2_x temps, vs_3_0 slots, …) the table holds
//! the largest value a device may report, so every shader some device accepts passes;
//! float constants use the 256 D3DX itself assembles for vertex shaders.

use super::bytecode::{ShaderKind, Version};
use super::registers::RegisterType;

/// An instruction-slot budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slots {
    /// One budget for all instructions.
    Total(u32),
    /// ps_1_1–1_3, ps_2_0: separate texture and arithmetic budgets.
    Split { texture: u32, arithmetic: u32 },
    /// ps_1_4: separate budgets, renewed by `phase`.
    PerPhase { texture: u32, arithmetic: u32 },
}

/// The limits of one shader model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelLimits {
    pub version: Version,
    /// Register types present in the model, with their count. Float constants are given
    /// once as `Const` (c0 … count−1, spanning `CONST2`…`CONST4` beyond c2047).
    pub registers: &'static [(RegisterType, u32)],
    pub slots: Slots,
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
}

use RegisterType::*;

const VS_OUT_1: [(RegisterType, u32); 3] = [(RastOut, 3), (AttrOut, 2), (Output, 8)];

const fn ver(kind: ShaderKind, major: u8, minor: u8) -> Version {
    Version::new(kind, major, minor)
}

const VS: ShaderKind = ShaderKind::Vertex;
const PS: ShaderKind = ShaderKind::Pixel;

/// §8, one row per model.
pub static LIMITS: &[ModelLimits] = &[
    ModelLimits {
        version: ver(VS, 1, 1),
        registers: &[
            (Temp, 12),
            (Input, 16),
            (Const, 256),
            (AddrOrTexture, 1),
            VS_OUT_1[0],
            VS_OUT_1[1],
            VS_OUT_1[2],
        ],
        slots: Slots::Total(128),
        swizzles: Swizzles::Any,
        read_only: VS_READ_ONLY,
        write_only: VS_WRITE_ONLY,
        declared: &[Input],
        labels: 0,
        flow: None,
    },
    ModelLimits {
        version: ver(VS, 2, 0),
        registers: &[
            (Temp, 12),
            (Input, 16),
            (Const, 256),
            (AddrOrTexture, 1),
            VS_OUT_1[0],
            VS_OUT_1[1],
            VS_OUT_1[2],
            (ConstInt, 16),
            (ConstBool, 16),
            (Loop, 1),
            (Label, 2048),
        ],
        slots: Slots::Total(256),
        swizzles: Swizzles::Any,
        read_only: VS_READ_ONLY,
        write_only: VS_WRITE_ONLY,
        declared: &[Input],
        labels: 16,
        flow: Some(FlowLimits {
            loop_rep: 1,
            call: 1,
            static_depth: None,
            dynamic_depth: 0,
            static_count: Some(16),
        }),
    },
    ModelLimits {
        version: ver(VS, 2, 1),
        registers: &[
            (Temp, 32),
            (Input, 16),
            (Const, 256),
            (AddrOrTexture, 1),
            VS_OUT_1[0],
            VS_OUT_1[1],
            VS_OUT_1[2],
            (ConstInt, 16),
            (ConstBool, 16),
            (Loop, 1),
            (Label, 2048),
            (Predicate, 1),
        ],
        slots: Slots::Total(256),
        swizzles: Swizzles::Any,
        read_only: VS_READ_ONLY,
        write_only: VS_WRITE_ONLY,
        declared: &[Input],
        labels: 16,
        flow: Some(FlowLimits {
            loop_rep: 4,
            call: 4,
            static_depth: None,
            dynamic_depth: 24,
            static_count: Some(16),
        }),
    },
    ModelLimits {
        version: ver(VS, 3, 0),
        registers: &[
            (Temp, 32),
            (Input, 16),
            (Const, 256),
            (AddrOrTexture, 1),
            (Output, 12),
            (ConstInt, 16),
            (ConstBool, 16),
            (Loop, 1),
            (Label, 2048),
            (Predicate, 1),
            (Sampler, 4),
        ],
        slots: Slots::Total(32768),
        swizzles: Swizzles::Any,
        read_only: VS_READ_ONLY,
        write_only: &[Output],
        declared: &[Input, Output, Sampler],
        labels: 2048,
        flow: Some(SM3_FLOW),
    },
    ModelLimits {
        version: ver(PS, 1, 1),
        registers: PS1X,
        slots: PS1X_SLOTS,
        swizzles: Swizzles::Ps11,
        read_only: &[Input, Const],
        write_only: &[],
        declared: &[],
        labels: 0,
        flow: None,
    },
    ModelLimits {
        version: ver(PS, 1, 2),
        registers: PS1X,
        slots: PS1X_SLOTS,
        swizzles: Swizzles::Ps11,
        read_only: &[Input, Const],
        write_only: &[],
        declared: &[],
        labels: 0,
        flow: None,
    },
    ModelLimits {
        version: ver(PS, 1, 3),
        registers: PS1X,
        slots: PS1X_SLOTS,
        swizzles: Swizzles::Ps11,
        read_only: &[Input, Const],
        write_only: &[],
        declared: &[],
        labels: 0,
        flow: None,
    },
    ModelLimits {
        version: ver(PS, 1, 4),
        registers: &[(Temp, 6), (Input, 2), (Const, 8), (AddrOrTexture, 6)],
        slots: Slots::PerPhase {
            texture: 6,
            arithmetic: 8,
        },
        swizzles: Swizzles::Ps14,
        read_only: &[Input, Const, AddrOrTexture],
        write_only: &[],
        declared: &[],
        labels: 0,
        flow: None,
    },
    ModelLimits {
        version: ver(PS, 2, 0),
        registers: &[
            (Temp, 12),
            (Input, 2),
            (Const, 32),
            (AddrOrTexture, 8),
            (Sampler, 16),
            (ColorOut, 4),
            (DepthOut, 1),
        ],
        slots: Slots::Split {
            texture: 32,
            arithmetic: 64,
        },
        swizzles: Swizzles::Ps20,
        read_only: PS2_READ_ONLY,
        write_only: &[ColorOut, DepthOut],
        declared: &[Input, AddrOrTexture, Sampler],
        labels: 0,
        flow: None,
    },
    ModelLimits {
        version: ver(PS, 2, 1),
        registers: &[
            (Temp, 32),
            (Input, 2),
            (Const, 32),
            (AddrOrTexture, 8),
            (Sampler, 16),
            (ColorOut, 4),
            (DepthOut, 1),
            (ConstInt, 16),
            (ConstBool, 16),
            (Label, 2048),
            (Predicate, 1),
        ],
        slots: Slots::Total(512),
        swizzles: Swizzles::Any,
        read_only: PS2_READ_ONLY,
        write_only: &[ColorOut, DepthOut],
        declared: &[Input, AddrOrTexture, Sampler],
        labels: 16,
        flow: Some(FlowLimits {
            loop_rep: 4,
            call: 4,
            static_depth: Some(24),
            dynamic_depth: 24,
            static_count: None,
        }),
    },
    ModelLimits {
        version: ver(PS, 3, 0),
        registers: &[
            (Temp, 32),
            (Input, 10),
            (Const, 224),
            (Sampler, 16),
            (ColorOut, 4),
            (DepthOut, 1),
            (ConstInt, 16),
            (ConstBool, 16),
            (Loop, 1),
            (Label, 2048),
            (Predicate, 1),
            (MiscType, 2),
        ],
        slots: Slots::Total(32768),
        swizzles: Swizzles::Any,
        read_only: &[
            Input, Const, Sampler, ConstInt, ConstBool, Loop, Label, MiscType,
        ],
        write_only: &[ColorOut, DepthOut],
        declared: &[Input, Sampler],
        labels: 2048,
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
};

const PS1X: &[(RegisterType, u32)] = &[(Temp, 2), (Input, 2), (Const, 8), (AddrOrTexture, 4)];
const PS1X_SLOTS: Slots = Slots::Split {
    texture: 4,
    arithmetic: 8,
};

/// The limits of `version`.
pub fn limits(version: Version) -> Option<&'static ModelLimits> {
    LIMITS.iter().find(|l| l.version == version)
}

impl ModelLimits {
    /// How many registers of `ty` the model has (`None`: the type does not exist there).
    /// `Const2`…`Const4` answer with the float-constant count, like `Const`.
    pub fn count(&self, ty: RegisterType) -> Option<u32> {
        let ty = if ty.const_bank().is_some() { Const } else { ty };
        self.registers
            .iter()
            .find(|(t, _)| *t == ty)
            .map(|&(_, n)| n)
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
        assert_eq!(vs30.count(Const3), Some(256));
    }
}
