//! `a0` as an element index: where a vertex shader reads an array of matrices or structs
//! at a relative address (`dp4 r0.x, v0, c0[a0.x]` of `float4x3 Bones[29]`), HLSL can only
//! say an element (`Bones[i]`), whose registers the compilers find at `i * 3`. The text
//! says so only where the shader's `a0` is that product for every input, as its code
//! shows:
//!
//! - `mova a0, r1` after `mul r1, v6, 765.005859`, a D3DCOLOR's bytes as indices
//!   (`D3DCOLORtoUBYTE4`, which scales by 255.001953, the compilers fold into the
//!   product by the element's registers without rounding it first): the index is
//!   `D3DCOLORtoUBYTE4(v6)`'s component, compiled back to the same `mul` and `mova`;
//! - `mova a0.x, r0.w` after `mul r0.w, r0.z, 4`, where every write to r0.z is a whole
//!   number (a loop counter `0`, `+ 1`): the index is `(int)r0.z`, which the compilers
//!   multiply by the element's registers, whole numbers both ways.
//!
//! Anything else (a product the code does not show, a lane read by arrays of elements of
//! different sizes) leaves `a0` as the register offset it is, and a relative read of such
//! an array stops the statements (the shader is then written as asm).

use std::collections::{BTreeMap, BTreeSet};

use super::super::bytecode::{Instruction, Param};
use super::super::registers::RegisterType;

/// What D3DCOLORtoUBYTE4 scales a colour by (the bytes of a D3DCOLOR read as 0–1).
const COLOR_BYTES: f32 = 255.001_95;

/// How the text writes one lane of an instruction that writes `a0`: from operand `operand`
/// of `mul`, read at lane `lane` (the product's lane the address instruction reads).
#[derive(Debug, Clone)]
pub(super) struct Index {
    pub mul: Instruction,
    pub operand: Param,
    pub lane: usize,
    pub kind: IndexKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IndexKind {
    /// `D3DCOLORtoUBYTE4(operand)`'s component that holds the lane.
    Color,
    /// The operand's lane, a whole number, times this.
    Whole(u32),
    /// The address instruction's own operand (the product of a whole number and a
    /// multiple of the element's registers, the `mul` having written over its operand)
    /// divided by this, the element's registers.
    Divided(u32),
}

/// Which `a0` lanes the text writes as element indices, and how.
#[derive(Debug, Default)]
pub(super) struct Elements {
    /// Per lane: the registers one element takes, where the lane is an element index.
    pub registers: [Option<u32>; 4],
    /// Per instruction writing `a0` (by offset): each scaled lane it writes and how.
    pub writes: BTreeMap<usize, Vec<(usize, Index)>>,
}

/// `a0`'s lane a source reads at a relative address of a constant, if it does (`None`
/// for `aL` or no relative address).
fn address_lane(p: &Param) -> Option<usize> {
    if !p.is_relative() {
        return None;
    }
    match p.relative {
        // vs_1_1: a0.x, said by the register token alone.
        None => Some(0),
        Some(t) => {
            let r = Param {
                token: t,
                relative: None,
            };
            (r.register_type() == Some(RegisterType::AddrOrTexture))
                .then_some(((t >> 16) & 3) as usize)
        }
    }
}

fn lanes_of(mask: u8) -> impl Iterator<Item = usize> {
    (0..4).filter(move |l| mask & (1 << l) != 0)
}

pub(super) fn swizzled(p: &Param, lane: usize) -> usize {
    usize::from((p.swizzle() >> (2 * lane)) & 3)
}

/// Whether the instruction changes the flow (a block, a loop, a call): where a search
/// back for what wrote a register stops, and what the text knows of a0 ends.
pub(super) fn flow(ins: &Instruction) -> bool {
    matches!(
        ins.mnemonic(),
        "if" | "else"
            | "endif"
            | "rep"
            | "endrep"
            | "loop"
            | "endloop"
            | "break"
            | "breakp"
            | "call"
            | "callnz"
            | "label"
            | "ret"
    )
}

/// What is known of the temporaries at a point of the code; `None`: nothing (after a
/// call, in a subroutine).
type Known = Option<State>;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct State {
    /// Lanes that may not hold a whole number.
    not: BTreeSet<(u32, usize)>,
    /// Lanes that hold `frc` of a register's lane (type, number, lane), as written there.
    frc: BTreeMap<(u32, usize), (u8, u32, usize)>,
}

fn join(a: &Known, b: &Known) -> Known {
    let (a, b) = (a.as_ref()?, b.as_ref()?);
    Some(State {
        not: a.not.union(&b.not).copied().collect(),
        frc: a
            .frc
            .iter()
            .filter(|(k, v)| b.frc.get(k) == Some(v))
            .map(|(k, v)| (*k, *v))
            .collect(),
    })
}

/// What lanes hold whole numbers before each instruction, following the code's blocks
/// and loops: a lane is whole after `mov`, `add`, `mul`, `mad`, `min` or `max` (saturated
/// or not) of whole `def` literals and whole lanes, after `slt`, `sge` and `sgn`, and
/// after `x - frc(x)`, which is `floor(x)` (the compilers' code of a cast to int). The
/// text starts every temporary at 0.
struct Whole<'a> {
    code: &'a [&'a Instruction],
    defs: &'a BTreeMap<u32, [f32; 4]>,
    /// Before each instruction that computes: what is known there.
    before: Vec<Option<Known>>,
    /// Instructions looked at so far: past [`Whole::STEPS`], nothing is known (loops
    /// nested deep in a hostile shader).
    steps: usize,
}

impl Whole<'_> {
    const STEPS: usize = 1 << 20;

    /// The block from `i` to the instruction that closes it (`else`, `endif`, `endrep`,
    /// `endloop`, `label`, or the end): where it stopped, and the state there. `breaks`
    /// collects the states that leave the innermost loop early.
    fn block(
        &mut self,
        mut i: usize,
        mut state: Known,
        breaks: &mut Vec<Known>,
    ) -> Option<(usize, Known)> {
        while let Some(ins) = self.code.get(i) {
            self.steps += 1;
            if self.steps > Self::STEPS {
                return None;
            }
            match ins.mnemonic() {
                "else" | "endif" | "endrep" | "endloop" | "label" => return Some((i, state)),
                "if" => {
                    let (j, then) = self.block(i + 1, state.clone(), breaks)?;
                    if self.code.get(j).is_some_and(|e| e.mnemonic() == "else") {
                        let (k, otherwise) = self.block(j + 1, state.clone(), breaks)?;
                        state = join(&then, &otherwise);
                        i = k + 1;
                    } else {
                        state = join(&then, &state);
                        i = j + 1;
                    }
                }
                "rep" | "loop" => {
                    let mut entry = state.clone();
                    loop {
                        let mut inner = Vec::new();
                        let (j, end) = self.block(i + 1, entry.clone(), &mut inner)?;
                        let next = join(&entry, &end);
                        if next == entry {
                            state = inner.iter().fold(entry, |s, b| join(&s, b));
                            i = j + 1;
                            break;
                        }
                        entry = next;
                    }
                }
                "break" | "breakp" => {
                    breaks.push(state.clone());
                    i += 1;
                }
                "call" | "callnz" => {
                    state = None;
                    i += 1;
                }
                _ => {
                    self.before[i] = Some(state.clone());
                    self.transfer(ins, &mut state);
                    i += 1;
                }
            }
        }
        Some((i, state))
    }

    fn transfer(&self, ins: &Instruction, state: &mut Known) {
        let Some(ops) = &ins.operands else { return };
        let Some(dst) = ops.dst else { return };
        if dst.register_type() != Some(RegisterType::Temp) {
            return;
        }
        let m = ins.mnemonic();
        let componentwise = matches!(m, "mov" | "add" | "mul" | "mad" | "min" | "max");
        let plain = |s: &Param| !s.is_relative() && s.source_modifier() == 0;
        let lanes: Vec<usize> = lanes_of(dst.write_mask()).collect();
        let whole: Vec<(usize, bool)> = lanes
            .iter()
            .map(|&l| {
                // x + -frc(x): floor(x).
                let floor = m == "add"
                    && state.as_ref().is_some_and(|k| {
                        [(0, 1), (1, 0)].into_iter().any(|(x, f)| {
                            let (x, f) = (&ops.srcs[x], &ops.srcs[f]);
                            plain(x)
                                && f.source_modifier() == 1
                                && !f.is_relative()
                                && f.register_type() == Some(RegisterType::Temp)
                                && k.frc.get(&(f.number(), swizzled(f, l)))
                                    == Some(&(x.register_type_value(), x.number(), swizzled(x, l)))
                        })
                    });
                let w = dst.shift() == 0
                    && (matches!(m, "slt" | "sge" | "sgn")
                        || floor
                        || componentwise
                            && ops
                                .srcs
                                .iter()
                                .all(|s| reads_whole(self.defs, s, swizzled(s, l), state)));
                (l, w)
            })
            .collect();
        let Some(known) = state else { return };
        let r = dst.number();
        for (l, w) in whole {
            let key = (r, l);
            // What was known of the lane, or of what it held, is no longer so.
            known.frc.remove(&key);
            known.frc.retain(|_, &mut (ty, n, lane)| {
                !(ty == RegisterType::Temp as u8 && n == r && lane == l)
            });
            match w {
                false => {
                    known.not.insert(key);
                }
                // A predicated write may leave the lane as it was.
                true if !ins.predicated() => {
                    known.not.remove(&key);
                }
                true => {}
            }
        }
        if m == "frc" && !ins.predicated() && dst.shift() == 0 && dst.result_modifiers() & 1 == 0 {
            let s = ops.srcs[0];
            for &l in &lanes {
                let from = (s.register_type_value(), s.number(), swizzled(&s, l));
                let overwritten =
                    from.0 == RegisterType::Temp as u8 && from.1 == r && lanes.contains(&from.2);
                if plain(&s) && !overwritten {
                    known.frc.insert((r, l), from);
                }
            }
        }
    }
}

/// Whether source `s` reads a whole number at lane `lane` (after its swizzle), `state`
/// what is known there: a whole `def` literal, or a lane known whole.
fn reads_whole(defs: &BTreeMap<u32, [f32; 4]>, s: &Param, lane: usize, state: &Known) -> bool {
    !s.is_relative()
        && matches!(s.source_modifier(), 0 | 1)
        && match s.register_type() {
            Some(RegisterType::Temp) => state
                .as_ref()
                .is_some_and(|k| !k.not.contains(&(s.number(), lane))),
            Some(RegisterType::Const) => defs
                .get(&s.number())
                .is_some_and(|v| v[lane].is_finite() && v[lane].fract() == 0.0),
            _ => false,
        }
}

/// Before each instruction of `code`: the temporaries' lanes that may not hold a whole
/// number there (`None`: none is known to, or the instruction was not reached).
fn whole_before(code: &[&Instruction], defs: &BTreeMap<u32, [f32; 4]>) -> Vec<Known> {
    let mut w = Whole {
        code,
        defs,
        before: vec![None; code.len()],
        steps: 0,
    };
    let mut at = 0;
    let mut state = Some(State::default());
    while at < code.len() {
        let mut breaks = Vec::new();
        match w.block(at, state, &mut breaks) {
            Some((j, _)) => at = j + 1,
            None => return vec![None; code.len()],
        }
        // Past the main program's end, a subroutine: called from anywhere.
        state = None;
    }
    w.before.into_iter().map(Option::flatten).collect()
}

/// Whether `ins` writes lane `lane` of temporary `r`.
fn writes(ins: &Instruction, r: u32, lane: usize) -> bool {
    ins.operands.as_ref().and_then(|o| o.dst).is_some_and(|d| {
        d.register_type() == Some(RegisterType::Temp)
            && d.number() == r
            && d.write_mask() & (1 << lane) != 0
    })
}

/// How lane `c` of the address instruction `code[at]` is an element index of elements of
/// `registers` registers, if its code shows it.
fn index_of(
    code: &[&Instruction],
    at: usize,
    c: usize,
    registers: u32,
    defs: &BTreeMap<u32, [f32; 4]>,
    whole: &[Known],
) -> Option<Index> {
    let ins = code[at];
    let ops = ins.operands.as_ref()?;
    let src = *ops.srcs.first()?;
    if src.register_type() != Some(RegisterType::Temp)
        || src.source_modifier() != 0
        || src.is_relative()
        || ins.predicated()
    {
        return None;
    }
    let (r, l) = (src.number(), swizzled(&src, c));
    // The product that wrote the lane, in the same straight run of code.
    let m = (0..at)
        .rev()
        .take_while(|&j| !flow(code[j]))
        .find(|&j| writes(code[j], r, l))?;
    let mul = code[m];
    let mops = mul.operands.as_ref()?;
    let dst = mops.dst?;
    if mul.mnemonic() != "mul"
        || mul.predicated()
        || dst.result_modifiers() & 1 != 0
        || dst.shift() != 0
        || mops.srcs.len() != 2
    {
        return None;
    }
    let literal = |p: &Param| {
        (p.register_type() == Some(RegisterType::Const)
            && !p.is_relative()
            && p.source_modifier() == 0)
            .then(|| defs.get(&p.number()).map(|v| v[swizzled(p, l)]))
            .flatten()
    };
    let (k, operand) = match (literal(&mops.srcs[0]), literal(&mops.srcs[1])) {
        (_, Some(k)) => (k, mops.srcs[0]),
        (Some(k), None) => (k, mops.srcs[1]),
        (None, None) => return None,
    };
    if operand.source_modifier() != 0 || operand.is_relative() {
        return None;
    }
    // Whether what the product read is still there when the address is taken (the
    // product wrote over it, or an instruction after it).
    let lane = swizzled(&operand, l);
    let intact = operand.register_type() != Some(RegisterType::Temp)
        || !(m..at).any(|j| writes(code[j], operand.number(), lane));
    let index = |kind| {
        Some(Index {
            mul: mul.clone(),
            operand,
            lane: l,
            kind,
        })
    };
    // The compilers' code of a D3DCOLORtoUBYTE4 index is this product, put in a0 as it
    // is (mova rounds it, vs_1_1's mov floors it, both as the original does).
    let color = COLOR_BYTES * registers as f32;
    if (k - color).abs() <= color * 1e-6 {
        return intact.then(|| index(IndexKind::Color)).flatten();
    }
    // Whether the operand was whole where the product read it.
    let is_whole = reads_whole(defs, &operand, lane, &whole[m]);
    let times = k / registers as f32;
    if !(is_whole && (1.0..=65536.0).contains(&times) && times.fract() == 0.0) {
        return None;
    }
    match intact {
        true => index(IndexKind::Whole(times as u32)),
        // The address's operand, a whole multiple of the registers, divided by them
        // (exact, and rounded to the whole number it is).
        false => Some(Index {
            mul: ins.clone(),
            operand: src,
            lane: c,
            kind: IndexKind::Divided(registers),
        }),
    }
}

/// Which `a0` lanes of `code` the text writes as element indices. `element(n)`: the
/// registers one element takes of the array constant register `n` is in, where that is
/// an array of matrices or structs (`None` for vectors and loose registers, which any
/// address reads).
pub(super) fn elements(
    code: &[&Instruction],
    defs: &BTreeMap<u32, [f32; 4]>,
    element: impl Fn(u32) -> Option<u32>,
) -> Elements {
    // The element sizes read through each lane.
    let mut sizes: [BTreeSet<u32>; 4] = Default::default();
    for ins in code {
        let Some(ops) = &ins.operands else { continue };
        for s in &ops.srcs {
            if s.register_type() != Some(RegisterType::Const) {
                continue;
            }
            if let (Some(c), Some(r)) = (address_lane(s), element(s.number())) {
                sizes[c].insert(r);
            }
        }
    }
    let mut out = Elements::default();
    // What is whole where, followed through the code only for a shader that reads such
    // an array (most read none).
    if sizes.iter().all(|s| s.len() != 1) {
        return out;
    }
    let whole = whole_before(code, defs);
    for (c, sizes) in sizes.iter().enumerate() {
        let [registers] = sizes.iter().copied().collect::<Vec<_>>()[..] else {
            continue;
        };
        // Every write to the lane must show the product.
        let mut found = Vec::new();
        let mut all = true;
        for (at, ins) in code.iter().enumerate() {
            let Some(dst) = ins.operands.as_ref().and_then(|o| o.dst) else {
                continue;
            };
            if dst.register_type() != Some(RegisterType::AddrOrTexture)
                || dst.write_mask() & (1 << c) == 0
            {
                continue;
            }
            match index_of(code, at, c, registers, defs, &whole) {
                Some(i) => found.push((ins.offset, i)),
                None => all = false,
            }
        }
        if !all || found.is_empty() {
            continue;
        }
        out.registers[c] = Some(registers);
        for (offset, i) in found {
            out.writes.entry(offset).or_default().push((c, i));
        }
    }
    out
}
