//! Shader-model limits (`shared/formats/d3d9-bytecode.md` §8): which register types each
//! model has, how many of each, and its instruction-slot budget. One table, read by the
//! validator and by the disassembler's slot-count footer.
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
    },
    ModelLimits {
        version: ver(PS, 1, 1),
        registers: PS1X,
        slots: PS1X_SLOTS,
    },
    ModelLimits {
        version: ver(PS, 1, 2),
        registers: PS1X,
        slots: PS1X_SLOTS,
    },
    ModelLimits {
        version: ver(PS, 1, 3),
        registers: PS1X,
        slots: PS1X_SLOTS,
    },
    ModelLimits {
        version: ver(PS, 1, 4),
        registers: &[(Temp, 6), (Input, 2), (Const, 8), (AddrOrTexture, 6)],
        slots: Slots::PerPhase {
            texture: 6,
            arithmetic: 8,
        },
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
    },
];

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
