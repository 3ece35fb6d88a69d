//! What each instruction reads and writes, component by component, for the rules of full
//! validation that follow values through a shader ([`super::rules`]): temporaries read
//! before anything wrote them, and the order of dependent texture reads.
//!
//! Components are bit masks (bit 0 = x). A source's components are those of its register,
//! after its swizzle: `mov r0.x, r1.yxxx` reads `r1.y`.

use std::collections::HashMap;

use super::bytecode::{Instruction, Param, Shader, ShaderKind, Version};
use super::opcodes::{Class, Layout, OP_DCL, OP_TEX};
use super::registers::RegisterType;

const OP_DST: u16 = 0x11;
const OP_LIT: u16 = 0x10;
const OP_SGN: u16 = 0x22;
const OP_SINCOS: u16 = 0x25;
const OP_TEXKILL: u16 = 0x41;
const OP_TEXLDD: u16 = 0x5D;
const OP_TEXLDL: u16 = 0x5F;
const OP_LABEL: u16 = 0x1E;

/// The sampler texture type of every `dcl_*` sampler (`s#` → 1 1D, 2 2D, 3 cube, 4 volume).
pub(super) fn sampler_types(shader: &Shader) -> HashMap<u32, u32> {
    shader
        .instructions()
        .filter(|i| i.opcode() == OP_DCL)
        .filter_map(|i| {
            let ops = i.operands.as_ref()?;
            let d = ops.dst.as_ref()?;
            let decl = ops.decl?;
            (d.register_type() == Some(RegisterType::Sampler))
                .then(|| (d.number(), (decl >> 27) & 0xF))
        })
        .collect()
}

/// Components of the register behind `src` that the swizzle maps `dst_components` to.
fn through_swizzle(src: &Param, dst_components: u8) -> u8 {
    let s = src.swizzle();
    (0..4)
        .filter(|k| dst_components & (1 << k) != 0)
        .fold(0, |acc, k| acc | 1 << ((s >> (2 * k)) & 3))
}

/// Whether destination component k of `op` reads component k of its sources (after the
/// swizzle) and nothing else.
fn per_component(op: u16) -> bool {
    !matches!(
        op,
        0x06 | 0x07 // rcp, rsq
            | 0x08 | 0x09 // dp3, dp4
            | 0x0E | 0x0F | 0x4E | 0x4F // exp, log, expp, logp
            | OP_LIT
            | OP_DST
            | 0x14
            ..=0x18 // m4x4 … m3x2
            | 0x20 // pow
            | 0x21 // crs
            | OP_SGN
            | 0x24 // nrm
            | OP_SINCOS
            | 0x59 // bem
            | 0x5A // dp2add
    )
}

/// The components (in destination order, before the swizzle) that an arithmetic
/// instruction reads from source `i` for destination mask `mask`: whole vectors for dot
/// products and matrix macros, the first component for the scalar instructions (whose
/// source takes a replicate swizzle), per component otherwise.
pub(super) fn components_read(op: u16, i: usize, mask: u8) -> u8 {
    match (op, i) {
        (0x09 | 0x14 | 0x15, _) => 0xF, // dp4, m4x4, m4x3
        (0x08 | 0x16 | 0x17 | 0x18 | 0x21 | 0x24, _) => 0x7, // dp3, m3x*, crs, nrm
        (0x5A, 0 | 1) => 0x3,           // dp2add
        (0x5A, _) => 0x1,
        (0x06 | 0x07 | 0x0E | 0x0F | 0x4E | 0x4F | 0x20, _) => 0x1, // rcp, rsq, exp, log, pow
        (OP_LIT, _) => 0xB,                                         // x, y, w
        (OP_DST, 0) => mask & 0x6,                                  // y, z
        (OP_DST, _) => mask & 0xA,                                  // y, w
        (OP_SINCOS, 0) => 0x1,
        (OP_SINCOS, _) => 0xF,
        (0x59, _) => mask & 0x3, // bem writes .xy from .xy
        _ => mask,
    }
}

/// The register components an instruction reads from each of its temporary (`r#`) sources:
/// (register number, components). Texture sampling reads as many coordinates as the
/// sampler's dimension (`texld---ps-2-0.md`: "If src1 is declared as a 2D sampler, then
/// src0 must contain .xy coordinates; … cube … or volume …, .xyz"), plus `.w` for
/// `texldp`, `texldb` and `texldl`.
pub(super) fn temp_reads(
    ins: &Instruction,
    v: Version,
    samplers: &HashMap<u32, u32>,
) -> Vec<(u32, u8)> {
    let (Some(info), Some(ops)) = (ins.info, &ins.operands) else {
        return vec![];
    };
    let op = info.opcode;
    let temp = |p: &Param| p.register_type() == Some(RegisterType::Temp) && !p.is_relative();
    let mut out = Vec::new();
    if info.layout != Layout::Operands {
        return out;
    }
    if op == OP_TEXKILL {
        // `texkill---ps.md`: "For ps_1_4, texkill operates on the data in the first three
        // components of the destination register" (the legacy compilers write only r0.xyz
        // before a ps_1_4 `texkill r0`, whose .w `phase` has dropped); from ps_2_0 on it
        // tests the components its mask names.
        let tested = if v.is_ps1() { 0x7 } else { 0xF };
        if let Some(d) = ops.dst.as_ref().filter(|d| temp(d)) {
            out.push((d.number(), d.write_mask() & tested));
        }
        return out;
    }
    let sampling = v.major >= 2 && matches!(op, OP_TEX | OP_TEXLDD | OP_TEXLDL);
    if sampling {
        let dims = ops
            .srcs
            .get(1)
            .and_then(|s| samplers.get(&s.number()))
            .map_or(0x3, |t| match t {
                1 => 0x1,
                3 | 4 => 0x7,
                _ => 0x3,
            });
        let w = if op == OP_TEXLDL || (op == OP_TEX && ins.controls() != 0) {
            0x8
        } else {
            0
        };
        for (i, s) in ops.srcs.iter().enumerate() {
            if i == 1 || !temp(s) {
                continue;
            }
            let wanted = if i == 0 { dims | w } else { dims };
            out.push((s.number(), through_swizzle(s, wanted)));
        }
        return out;
    }
    if v.is_ps1() && v.minor == 4 && matches!(op, OP_TEX | 0x40) {
        // ps_1_4 texld with r# coordinates: the texture's dimension is not known before
        // the shader runs, so only the .xy every lookup reads count.
        if let Some(s) = ops.srcs.first().filter(|s| temp(s)) {
            out.push((s.number(), through_swizzle(s, 0x3)));
        }
        return out;
    }
    if info.class != Class::Arithmetic && info.class != Class::FlowControl {
        return out;
    }
    let mask = ops.dst.as_ref().map_or(0xF, |d| d.write_mask());
    for (i, s) in ops.srcs.iter().enumerate() {
        // sgn's second and third sources are scratch registers it writes (`sgn---vs.md`).
        if !temp(s) || (op == OP_SGN && i > 0) {
            continue;
        }
        out.push((s.number(), through_swizzle(s, components_read(op, i, mask))));
    }
    out
}

/// The temporary an instruction writes and its components.
pub(super) fn temp_write(ins: &Instruction) -> Option<(u32, u8)> {
    let info = ins.info?;
    if info.layout != Layout::Operands || info.opcode == OP_TEXKILL {
        return None;
    }
    let d = ins.operands.as_ref()?.dst.as_ref()?;
    (d.register_type() == Some(RegisterType::Temp)).then(|| (d.number(), d.write_mask()))
}

/// Temporaries written by subroutines (the code after the first `label`): a `call` makes
/// them written at the call.
pub(super) fn subroutine_writes(shader: &Shader) -> HashMap<u32, u8> {
    let mut out: HashMap<u32, u8> = HashMap::new();
    let mut in_routine = false;
    for ins in shader.instructions() {
        in_routine |= ins.opcode() == OP_LABEL;
        if in_routine {
            if let Some((r, m)) = temp_write(ins) {
                *out.entry(r).or_default() |= m;
            }
        }
    }
    out
}

/// The order of dependent texture reads (`texld---ps-2-0.md`): "A first-order dependent
/// texture instruction is a texture instruction in which either src0 is a Temporary
/// Register (r#) [or] dst was previously written, now being written again. A second-order
/// dependent texture instruction … reads or writes to a Temporary Register (r#) whose
/// contents, before executing the texture instruction, depend (perhaps indirectly) on the
/// outcome of a first-order dependent texture instruction", and so on.
pub(super) struct DependentReads {
    /// For each component of each `r#`: 0 when it depends on no texture instruction, else
    /// 1 + the highest order of the texture instructions it depends on.
    levels: HashMap<u32, [u32; 4]>,
    written: HashMap<u32, u8>,
    samplers: HashMap<u32, u32>,
}

impl DependentReads {
    pub(super) fn new(shader: &Shader) -> Self {
        DependentReads {
            levels: HashMap::new(),
            written: HashMap::new(),
            samplers: sampler_types(shader),
        }
    }

    /// Follows one instruction of a pixel shader; for a texture-sampling instruction,
    /// returns its order.
    pub(super) fn step(&mut self, ins: &Instruction, v: Version) -> Option<u32> {
        let (info, ops) = (ins.info?, ins.operands.as_ref()?);
        if v.kind != ShaderKind::Pixel || v.major < 2 || info.layout != Layout::Operands {
            return None;
        }
        let op = info.opcode;
        let temp = |p: &Param| p.register_type() == Some(RegisterType::Temp);
        let level_of = |levels: &HashMap<u32, [u32; 4]>, r: u32, comps: u8| {
            levels.get(&r).map_or(0, |l| {
                (0..4)
                    .filter(|c| comps & (1 << c) != 0)
                    .map(|c| l[c])
                    .max()
                    .unwrap_or(0)
            })
        };
        if matches!(op, OP_TEX | OP_TEXLDD) {
            let dst = ops.dst.as_ref()?;
            let mut order = 0;
            if ops.srcs.first().is_some_and(temp) {
                order = 1;
            }
            for (r, comps) in temp_reads(ins, v, &self.samplers) {
                order = order.max(level_of(&self.levels, r, comps));
            }
            if self.written.get(&dst.number()).is_some_and(|m| *m != 0) {
                order = order.max(1).max(level_of(&self.levels, dst.number(), 0xF));
            }
            self.levels.insert(dst.number(), [order + 1; 4]);
            *self.written.entry(dst.number()).or_default() |= dst.write_mask();
            return Some(order);
        }
        let dst = ops.dst.as_ref().filter(|d| temp(d))?;
        let mask = dst.write_mask();
        let mut new = self.levels.get(&dst.number()).copied().unwrap_or_default();
        for (k, slot) in new.iter_mut().enumerate() {
            if mask & (1 << k) == 0 {
                continue;
            }
            *slot = ops
                .srcs
                .iter()
                .enumerate()
                .filter(|(_, s)| temp(s))
                .map(|(i, s)| {
                    let comps = if per_component(op) {
                        through_swizzle(s, 1 << k)
                    } else {
                        through_swizzle(s, components_read(op, i, mask))
                    };
                    level_of(&self.levels, s.number(), comps)
                })
                .max()
                .unwrap_or(0);
        }
        self.levels.insert(dst.number(), new);
        *self.written.entry(dst.number()).or_default() |= mask;
        None
    }
}

/// The highest order of dependent texture read in a pixel shader (0 when none depends).
pub(super) fn dependent_read_order(shader: &Shader) -> u32 {
    let mut d = DependentReads::new(shader);
    shader
        .instructions()
        .filter_map(|i| d.step(i, shader.version))
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::super::asm::assemble_unvalidated;
    use super::super::bytecode;
    use super::*;

    fn order(text: &str) -> u32 {
        let b = assemble_unvalidated(text).unwrap();
        dependent_read_order(&bytecode::parse(&b).unwrap())
    }

    #[test]
    fn dependent_read_orders() {
        let head = "ps_2_0\ndcl t0\ndcl_2d s0\n";
        assert_eq!(order(&format!("{head}texld r0, t0, s0\n")), 0);
        assert_eq!(order(&format!("{head}mov r1, t0\ntexld r0, r1, s0\n")), 1);
        assert_eq!(
            order(&format!("{head}texld r0, t0, s0\ntexld r0, t0, s0\n")),
            1
        );
        let chain = format!(
            "{head}texld r0, t0, s0\ntexld r1, r0, s0\nadd r2, r1, t0\ntexld r3, r2, s0\n\
             texld r4, r3, s0\n"
        );
        assert_eq!(order(&chain), 3);
        // The coordinates a 2D sample reads are .xy; a dependency in .w does not count.
        let partial = format!(
            "{head}texld r0, t0, s0\ntexld r1, r0, s0\nmov r2, t0\nmov r2.y, r1.x\n\
             texld r3, r2, s0\n"
        );
        assert_eq!(order(&partial), 2);
        let spared = format!(
            "{head}texld r0, t0, s0\ntexld r1, r0, s0\nmov r2.xy, t0\nmov r2.zw, r1.x\n\
             mov r3.xy, r2\ntexld r4, r3, s0\n"
        );
        assert_eq!(order(&spared), 1);
    }
}
