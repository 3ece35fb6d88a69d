//! Per-shader-model validation of D3D9 bytecode.

use super::bytecode::{Shader, Version};
use super::opcodes::Class;

/// Instruction slots a shader uses, by budget (§8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SlotUsage {
    pub texture: u32,
    pub arithmetic: u32,
    pub flow: u32,
}

/// Slots used by the instructions of `shader`; a co-issued instruction shares the slot of
/// the one before it (§7).
pub fn slot_usage(shader: &Shader) -> SlotUsage {
    let mut u = SlotUsage::default();
    for ins in shader.instructions() {
        if ins.coissue() {
            continue;
        }
        if let Some(info) = ins.info {
            add_slots(&mut u, info, shader.version);
        }
    }
    u
}

fn add_slots(u: &mut SlotUsage, info: &super::opcodes::OpcodeInfo, v: Version) {
    let n = info.slots(v);
    match info.class {
        Class::Arithmetic => u.arithmetic += n,
        Class::Texture => u.texture += n,
        Class::TextureAndArithmetic => {
            u.texture += 1;
            u.arithmetic += n.saturating_sub(1);
        }
        Class::FlowControl => u.flow += n,
        Class::Free => {}
    }
}

/// A validation finding at the byte offset of an instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub offset: usize,
    pub message: String,
}

pub fn validate(_shader: &Shader) -> Vec<Diagnostic> {
    Vec::new()
}
