//! Pixel shader model 1 (ps_1_1 to ps_1_4) from the code graph, as Microsoft's legacy
//! compiler (d3dx9_31) writes it.
//!
//! The model is small and its rules are many (`…-ps-1-x` pages of the D3D9 reference, and
//! `shader::d3d9::rules`, which checks them):
//! - registers: r0 and r1, and the four texture registers t0–t3 once their texture
//!   instructions are done (ps_1_1–1_3), or r0–r5 (ps_1_4); eight constants c0–c7, whose
//!   values, like every result, are clamped to [−1, 1]; r0 is the colour written;
//! - a source reads its register as it is, or one lane in all four: `.w` anywhere, `.z`
//!   only into the alpha lane (ps_1_1–1_3); any one lane (ps_1_4); so a value whose lanes
//!   come from elsewhere is gathered: with `dp3` against a basis vector (the lane in all
//!   four) and `lrp` against a mask (ps_1_1–1_3), or with a `mov` per lane (ps_1_4);
//! - a result is written to .rgb, .a or all four (ps_1_1–1_3), or to any lanes (ps_1_4);
//! - textures are read at an interpolated coordinate set (`tex tN`, `texld rN, tN`: the
//!   sampler is the register's number) before any arithmetic, and a coordinate set read as
//!   a value goes through `texcoord` (clamped to [0, 1]) or `texcrd`;
//! - no `rcp`, `rsq`, `exp`, `log`, `frc`, `min`, `max` or derivatives: what needs them is
//!   refused, as d3dx9_31 refuses it ("cannot map expression to pixel shader instruction
//!   set"); a choice is `cmp` (ps_1_2 and later), or in ps_1_1 `cnd` on r0.a, which
//!   chooses all lanes alike ("unable to emulate vector conditionals").
//!
//! Each node is computed into a register of its own, its lanes where they are in the
//! node (lane i in lane i); a one-lane node, in every lane its instruction writes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use super::codegen::{
    allocate_uniforms, constant_table, def_line, live_nodes, mask_text,
    resolve_in as resolve_uniform, Generated, Src,
};
use super::ir::{Comp, NodeId, Op, Program, TexKind};
use super::lower::Profile;
use super::token::Loc;
use crate::shader::d3d9::ctab::RegisterSet;

/// A register of ps_1_x.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Reg {
    Temp(u32),
    Texture(u32),
    Const(u32),
    Color(u32),
}

impl Reg {
    fn name(self) -> String {
        match self {
            Reg::Temp(n) => format!("r{n}"),
            Reg::Texture(n) => format!("t{n}"),
            Reg::Const(n) => format!("c{n}"),
            Reg::Color(n) => format!("v{n}"),
        }
    }
}

/// Where a node's value is: lane `i` of the node in lane `lanes[i]` of `reg`; `all`, every
/// lane of the register holds lane 0 (a one-lane result replicated).
#[derive(Debug, Clone, Copy)]
struct Home {
    reg: Reg,
    lanes: [u8; 4],
    all: bool,
}

/// Where lanes gathered into a register come from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Source {
    /// The lanes where they are in this register.
    InPlace(Reg),
    /// One lane of this register, into each lane.
    Splat(Reg, u8),
}

/// A source operand as an instruction reads it.
#[derive(Debug, Clone)]
struct Operand {
    reg: Reg,
    swz: [u8; 4],
    neg: bool,
    modifier: Modifier,
}

/// ps_1_x's source modifiers, a value computed on its way into an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Modifier {
    None,
    /// `x_bx2`: `2 * x - 1`.
    Bx2,
    /// `x_bias`: `x - 0.5`.
    Bias,
    /// `1-x`.
    Invert,
    /// `x_x2`: `2 * x` (ps_1_4).
    X2,
}

impl Operand {
    fn text(&self) -> String {
        let swz = swizzle_text(self.swz);
        let (before, after) = match self.modifier {
            Modifier::None => ("", ""),
            Modifier::Bx2 => ("", "_bx2"),
            Modifier::Bias => ("", "_bias"),
            Modifier::Invert => ("1-", ""),
            Modifier::X2 => ("", "_x2"),
        };
        format!(
            "{}{before}{}{after}{swz}",
            if self.neg { "-" } else { "" },
            self.reg.name()
        )
    }
}

const LANES: [char; 4] = ['x', 'y', 'z', 'w'];

fn swizzle_text(swz: [u8; 4]) -> String {
    if swz == [0, 1, 2, 3] {
        return String::new();
    }
    if swz.iter().all(|&l| l == swz[0]) {
        return format!(".{}", LANES[usize::from(swz[0])]);
    }
    let s: String = swz.iter().map(|&l| LANES[usize::from(l)]).collect();
    format!(".{s}")
}

struct Gen<'p> {
    p: &'p Program,
    profile: Profile,
    homes: HashMap<NodeId, Home>,
    /// Uses left of each node, to free its register after the last.
    uses_left: HashMap<NodeId, u32>,
    /// Temporaries (and texture registers free for arithmetic) and whether each is taken.
    pool: Vec<(Reg, bool)>,
    /// `def` registers: values by lane.
    defs: Vec<[Option<f32>; 4]>,
    /// The constant registers no uniform takes, in order: the `def`s go there.
    free_c: Vec<u32>,
    code: Vec<String>,
    /// The first error, where and what.
    error: Option<(Loc, String)>,
    /// The node being emitted (for the place of a message).
    at: NodeId,
    /// Nodes read only by the colour, each computed straight into r0 at the lanes the
    /// colour reads it in (when r0 is free then).
    plan: HashMap<NodeId, Planned>,
    /// r0 holds lanes of the colour: it is no longer free for anything else.
    r0_kept: bool,
    /// The lanes of r0 that hold the colour's value.
    placed: [bool; 4],
    /// The node being computed into r0, and the lanes of the colour it computes.
    claimed: Option<NodeId>,
    claimed_lanes: Vec<u8>,
    /// Temporaries gathered for the operands of the instruction being formed.
    scratch: Vec<Reg>,
    /// The node the last instruction wrote, and its line.
    last_written: Option<(NodeId, usize)>,
    /// Each node's readers: the operands (their components) that name it.
    readers: HashMap<NodeId, Vec<Vec<Comp>>>,
    /// Values read only by a saturation of them, lane for lane: the saturation.
    sat_of: HashMap<NodeId, NodeId>,
    /// Values every reader takes through a source modifier of another value, not
    /// computed: what each lane is the modifier of, and which modifier.
    modified: HashMap<NodeId, (Vec<Comp>, Modifier)>,
    /// ps_1_4: dot products that are a lane of the coordinates of a read in the second
    /// phase, computed straight into that lane of one register: the read's group and
    /// the lane. The register of each group, once its first lane is written.
    coord_plan: HashMap<NodeId, (usize, u8)>,
    coord_regs: Vec<Option<Reg>>,
}

/// Node kinds that name a register rather than compute one.
fn is_leaf(op: Op) -> bool {
    matches!(
        op,
        Op::Const(_) | Op::Input(_) | Op::Uniform { .. } | Op::Sampler(_)
    )
}

pub fn generate(
    program: &Program,
    profile: Profile,
    target: &str,
    flags: u32,
) -> Result<Generated, Vec<(Loc, String)>> {
    let mut fixed = program.clone();
    select_lanes(&mut fixed);
    if profile.minor < 4 {
        clamped_coordinates(&mut fixed);
    }
    legalize(&mut fixed);
    fuse(&mut fixed);
    let (_, live) = live_nodes(&fixed, profile);
    align_lanes(&mut fixed, &live);
    let p = &fixed;
    let (needed, live) = live_nodes(p, profile);
    let name = profile.name();
    // What the model has no instruction for.
    for &n in &needed {
        let op = p.node(n).op;
        let ok = matches!(
            op,
            Op::Const(_)
                | Op::Input(_)
                | Op::Uniform { .. }
                | Op::Sampler(_)
                | Op::Mov
                | Op::Copy
                | Op::Add
                | Op::Mul
                | Op::Mad
                | Op::Lrp
                | Op::Neg
                | Op::Sat
                | Op::Dp3
                | Op::Dp4
                | Op::Cmp
                | Op::Tex(TexKind::Plain)
        );
        if !ok {
            return Err(vec![(
                p.loc(n),
                format!("cannot map expression to pixel shader instruction set: {name} has no {} (the legacy compiler's X4532)", what(op)),
            )]);
        }
    }
    if p.outputs.iter().any(|o| o.usage != "COLOR" || o.index != 0) {
        let o = p
            .outputs
            .iter()
            .find(|o| o.usage != "COLOR" || o.index != 0)
            .unwrap();
        return Err(vec![(
            Loc::default(),
            format!(
                "invalid output semantic '{}{}': {name} writes one colour, COLOR0 (r0)",
                o.usage, o.index
            ),
        )]);
    }
    // Uniforms and their registers.
    let mut used_offsets: HashMap<u32, u32> = HashMap::new();
    for &n in &needed {
        match p.node(n).op {
            Op::Uniform { var, offset } => {
                let e = used_offsets.entry(var).or_insert(0);
                *e = (*e).max(offset + 1);
            }
            Op::Sampler(var) => {
                used_offsets.entry(var).or_insert(1);
            }
            _ => {}
        }
    }
    // What an asm block samples and reads by register: the uniforms bound there are in
    // use, as if HLSL read them.
    let block = p.asm.as_ref();
    if let Some(b) = block {
        for (var, u) in p.uniforms.iter().enumerate() {
            let Some(r) = u.bound else { continue };
            let read = match u.is_sampler {
                true => b.samples.contains(&r),
                false => b.constants.iter().any(|c| (r..r + u.registers).contains(c)),
            };
            if read {
                let e = used_offsets.entry(var as u32).or_insert(0);
                *e = (*e).max(u.registers.max(1));
            }
        }
    }
    let (uniform_regs, table_constants, _) = allocate_uniforms(p, &used_offsets, &[]);
    if let Some(b) = block {
        for (&var, &r) in &uniform_regs {
            let u = &p.uniforms[var as usize];
            if u.bound.is_some() {
                continue;
            }
            let (file, hit) = match u.is_sampler {
                true => ('s', b.samples.iter().find(|&&s| s == r)),
                false => (
                    'c',
                    b.constants
                        .iter()
                        .find(|c| (r..r + u.registers).contains(c)),
                ),
            };
            if let Some(n) = hit {
                return Err(vec![(
                    u.loc,
                    format!("'{}' is placed in {file}{n}, which the asm block reads as its own: bind it elsewhere with register(), or there if the block reads it", u.name),
                )]);
            }
        }
    }
    // The literals take the constant registers the uniforms leave, the holes first (as
    // the legacy compiler places them).
    let occupied: Vec<(u32, u32)> = table_constants
        .iter()
        .filter(|c| c.register_set == RegisterSet::FLOAT4)
        .map(|c| (u32::from(c.register_index), u32::from(c.register_count)))
        .collect();
    let free_c: Vec<u32> = (0..256)
        .filter(|r| !occupied.iter().any(|&(i, n)| (i..i + n).contains(r)))
        .filter(|r| !block.is_some_and(|b| b.constants.contains(r)))
        .collect();
    let uniform_top = occupied.iter().map(|&(i, n)| i + n).max().unwrap_or(0);
    let v14 = profile.minor == 4;
    let mut g = Gen {
        p,
        profile,
        homes: HashMap::new(),
        uses_left: HashMap::new(),
        pool: Vec::new(),
        defs: Vec::new(),
        free_c,
        code: Vec::new(),
        error: None,
        at: 0,
        plan: HashMap::new(),
        r0_kept: false,
        placed: [false; 4],
        claimed: None,
        claimed_lanes: Vec::new(),
        scratch: Vec::new(),
        last_written: None,
        readers: HashMap::new(),
        sat_of: HashMap::new(),
        modified: HashMap::new(),
        coord_plan: HashMap::new(),
        coord_regs: Vec::new(),
    };
    // Readers look through `mov` and negation nodes: those read nothing themselves.
    for &n in &needed {
        if matches!(p.node(n).op, Op::Mov | Op::Neg) {
            continue;
        }
        for a in &p.node(n).args {
            for c in resolve_in(p, profile, a).comps {
                *g.uses_left.entry(c.node).or_default() += 1;
            }
        }
    }
    for o in &p.outputs {
        for c in resolve_in(p, profile, &o.comps).comps {
            *g.uses_left.entry(c.node).or_default() += 1;
        }
    }
    for k in &p.kills {
        for c in resolve_in(p, profile, k).comps {
            *g.uses_left.entry(c.node).or_default() += 1;
        }
    }
    // Leaves: uniforms in their registers, colours in v#.
    for &n in &needed {
        let home = match p.node(n).op {
            Op::Uniform { var, offset } => Some(Reg::Const(uniform_regs[&var] + offset)),
            Op::Input(i) => {
                let input = &p.inputs[i as usize];
                match input.usage.as_str() {
                    "COLOR" if input.index < 2 => Some(Reg::Color(input.index)),
                    "ASM" if v14 => Some(Reg::Temp(input.index)),
                    "ASM" => Some(Reg::Texture(input.index)),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(reg) = home {
            g.homes.insert(
                n,
                Home {
                    reg,
                    lanes: [0, 1, 2, 3],
                    all: false,
                },
            );
        }
    }
    // Texture stages: samples and coordinate sets read as values, before any arithmetic.
    let stages = if v14 { 6 } else { 4 };
    let mut stage_used: BTreeMap<u32, NodeId> = BTreeMap::new();
    // The stages an asm block takes are its own (no node samples them).
    for &t in block.map_or(&[][..], |b| &b.stages[..]) {
        stage_used.insert(t, NodeId::MAX);
    }
    let mut coords_read: Vec<(NodeId, u32)> = Vec::new();
    // ps_1_4's samples at computed coordinates: node and stage.
    let mut dependent: Vec<(NodeId, u32)> = Vec::new();
    // Inputs read other than as the coordinates of a sample.
    let mut coordinate_uses: HashMap<NodeId, u32> = HashMap::new();
    // ps_1_1–1_3's samples at coordinates computed from another sample: what computes
    // those coordinates is the addressing instruction's, not the arithmetic's.
    let mut addressed: HashMap<NodeId, Addressing> = HashMap::new();
    for &n in &needed {
        if let Op::Tex(_) = p.node(n).op {
            let coords = resolve_in(p, profile, &p.node(n).args[0]);
            if texcoord_set(p, &coords.comps).is_some() {
                for c in coords.comps {
                    *coordinate_uses.entry(c.node).or_default() += 1;
                }
            } else if let Some(a) = addressing(p, profile, &coords).filter(|_| !v14) {
                g.unuse(&coords.comps);
                addressed.insert(n, a);
            }
        }
    }
    // A discard by a coordinate set as it comes in is its `texkill tN`, no read of it as
    // a value.
    for k in &p.kills {
        let src = resolve_in(p, profile, k);
        if !src.neg && src.comps.len() >= 3 && texcoord_set(p, &src.comps[..3]).is_some() {
            for c in src.comps {
                *coordinate_uses.entry(c.node).or_default() += 1;
            }
        }
    }
    let texture_code = g.code.len();
    if let Some(b) = block {
        g.code.extend(b.lines.iter().cloned());
    }
    let uses = g.uses_left.clone();
    let read_as_value = |n: NodeId| {
        uses.get(&n).copied().unwrap_or(0) > coordinate_uses.get(&n).copied().unwrap_or(0)
    };
    for &n in &needed {
        let node = p.node(n);
        match node.op {
            Op::Tex(_) => {
                let coords = resolve_in(p, profile, &node.args[0]);
                let sampler = resolve_in(p, profile, &node.args[1]).comps[0];
                let Op::Sampler(var) = p.node(sampler.node).op else {
                    continue;
                };
                let s = uniform_regs[&var];
                let set = texcoord_set(p, &coords.comps);
                if block.is_some_and(|b| b.stages.contains(&s) || v14 && b.writes.contains(&s)) {
                    return Err(vec![(
                        p.loc(n),
                        format!("stage {s} is the asm block's: this samples s{s} in HLSL too"),
                    )]);
                }
                if let Some(a) = addressed.get(&n) {
                    let double = match a {
                        Addressing::Reg2 { from, .. } => addressed.contains_key(from),
                        Addressing::Matrix { vector, .. } => addressed.contains_key(vector),
                    };
                    if double {
                        return Err(vec![(
                            p.loc(n),
                            format!("cannot perform double dependent texture read in ps_1_x: {name}'s addressing instructions read a texture sampled at its own coordinates"),
                        )]);
                    }
                    if let Err(e) = g.address(n, s, a, &mut stage_used) {
                        return Err(vec![e]);
                    }
                    continue;
                }
                if v14 && set.is_none() {
                    // Coordinates computed: read in the second phase.
                    if s >= stages || stage_used.insert(s, n).is_some() {
                        return Err(vec![(
                            p.loc(n),
                            format!("{name} samples each of its {stages} texture stages once; this samples s{s}"),
                        )]);
                    }
                    dependent.push((n, s));
                    continue;
                }
                if let Some(&m) = set
                    .filter(|&t| !v14 && t != s)
                    .and_then(|t| stage_used.get(&t))
                {
                    // Another sampler reads these coordinates as they come in: named at
                    // the first read, as d3dx9_31 names it (X4516).
                    return Err(vec![(
                        p.loc(m),
                        format!("cannot read from same texcoord: in {name}, each sampler must have a unique TEXCOORD (s{s} reads TEXCOORD{} too, and stage {s} reads set {s})", set.unwrap_or(0)),
                    )]);
                }
                let Some(set) = set.filter(|&t| v14 || t == s) else {
                    return Err(vec![(
                        p.loc(n),
                        format!("cannot map this dependent texture read to {name}: its coordinates must be TEXCOORD{s} as the shader receives it (sampler s{s} reads texture coordinate set {s})"),
                    )]);
                };
                if s >= stages || set >= stages {
                    return Err(vec![(
                        p.loc(n),
                        format!("{name} has {stages} texture stages; this reads s{s}"),
                    )]);
                }
                if stage_used.insert(s, n).is_some() {
                    return Err(vec![(
                        p.loc(n),
                        format!("{name} samples each texture stage once; this samples s{s} again"),
                    )]);
                }
                g.homes.insert(
                    n,
                    Home {
                        reg: if v14 { Reg::Temp(s) } else { Reg::Texture(s) },
                        lanes: [0, 1, 2, 3],
                        all: false,
                    },
                );
                g.code.push(if v14 {
                    format!("texld r{s}, t{set}")
                } else {
                    format!("tex t{s}")
                });
            }
            Op::Input(i) if !g.homes.contains_key(&n) && read_as_value(n) => {
                let input = &p.inputs[i as usize];
                let lanes = live.get(&n).copied().unwrap_or(0);
                if input.usage != "TEXCOORD" {
                    return Err(vec![(
                        input_loc(p, n),
                        format!("invalid input semantic '{}{}' for {name}: it reads COLOR0, COLOR1 and TEXCOORD0–{}", input.usage, input.index, stages - 1),
                    )]);
                }
                if lanes & 0b1000 != 0 {
                    return Err(vec![(
                        input_loc(p, n),
                        format!("cannot access texture coordinate w-component in a general way in {name}: TEXCOORD{} reads .xyz", input.index),
                    )]);
                }
                coords_read.push((n, input.index));
            }
            _ => {}
        }
    }
    for (n, set) in coords_read {
        if set >= stages {
            return Err(vec![(
                input_loc(p, n),
                format!("{name} has {stages} texture coordinate sets; this reads TEXCOORD{set}"),
            )]);
        }
        if !v14 && block.is_some_and(|b| b.stages.contains(&set)) {
            return Err(vec![(
                input_loc(p, n),
                format!("t{set} is the asm block's: HLSL reads TEXCOORD{set} as a value, which takes the same register (texcoord t{set})"),
            )]);
        }
        if !v14 && stage_used.contains_key(&set) {
            return Err(vec![(
                input_loc(p, n),
                format!("{name} reads texture coordinate set {set} either as a texture's coordinates or as a value, not both"),
            )]);
        }
        stage_used.entry(set).or_insert(n);
        let reg = if v14 {
            // texcrd into a free temporary: after the samples (which take r#s).
            let free = (0..6).find(|r| {
                !g.homes.values().any(|h| h.reg == Reg::Temp(*r))
                    && !block.is_some_and(|b| b.writes.contains(r))
            });
            let Some(r) = free else {
                return Err(vec![(
                    input_loc(p, n),
                    format!("{name} has 6 temporary registers; this needs more"),
                )]);
            };
            g.code.push(format!("texcrd r{r}.xyz, t{set}"));
            Reg::Temp(r)
        } else {
            g.code.push(format!("texcoord t{set}"));
            Reg::Texture(set)
        };
        g.homes.insert(
            n,
            Home {
                reg,
                lanes: [0, 1, 2, 3],
                all: false,
            },
        );
    }
    // Discards: texkill of a texture coordinate set as it comes in (x, y and z), or in
    // ps_1_4, of a value computed before the phase.
    let mut late_kills: Vec<Src> = Vec::new();
    for (i, k) in p.kills.iter().enumerate() {
        let at = p.kill_locs.get(i).copied().unwrap_or_default();
        let src = resolve_in(p, profile, k);
        if src.comps.len() == 4 && !src.comps[..3].contains(&src.comps[3]) {
            return Err(vec![(
                at,
                format!("Clip must be from a 3 vector in {name}: its texkill tests x, y and z, so a float4's w would go untested"),
            )]);
        }
        let set = (!src.neg && src.comps.len() >= 3)
            .then(|| texcoord_set(p, &src.comps[..3]))
            .flatten();
        match set {
            Some(set) if set < stages && (v14 || !stage_used.contains_key(&set)) => {
                g.code.push(format!("texkill t{set}"));
                g.release(&src.comps);
            }
            _ if v14 => late_kills.push(src),
            _ => {
                return Err(vec![(
                    at,
                    format!("cannot map expression to pixel shader instruction set: {name} discards only by the x, y and z of a texture coordinate set as it comes in (texkill tN; 'Clip must be from a 3 vector'), and then samples no texture by that set"),
                )]);
            }
        }
    }
    if !v14 {
        // Texture instructions, texkill among them, in the order of their stages (an
        // addressing instruction reads a lower stage than its own).
        let stage = |line: &String| {
            let t = line.split_whitespace().nth(1).unwrap_or("");
            t.trim_start_matches('t')
                .trim_end_matches(',')
                .parse::<u32>()
                .unwrap_or(0)
        };
        g.code[texture_code..].sort_by_key(stage);
    }
    // The registers arithmetic may write: r#, and t# no texture instruction took.
    // r0 last, so that it is free for the colour's lanes more often.
    if v14 {
        for r in (1..6).chain([0]) {
            let taken = g.homes.values().any(|h| h.reg == Reg::Temp(r));
            g.pool.push((Reg::Temp(r), taken));
        }
    } else {
        g.pool.push((Reg::Temp(1), false));
        for t in 0..4 {
            if !stage_used.contains_key(&t) {
                g.pool.push((Reg::Texture(t), false));
            }
        }
        g.pool.push((Reg::Temp(0), false));
    }
    g.source_modifiers(&needed);
    g.plan = colour_plan(p, profile, &g.uses_left);
    // Saturations that can be their operand's `_sat`.
    for &s in &needed {
        if p.node(s).op != Op::Sat {
            continue;
        }
        let a = resolve_in(p, profile, &p.node(s).args[0]);
        let Some(x) = a.comps.first().map(|c| c.node) else {
            continue;
        };
        let in_place = !a.neg
            && a.comps
                .iter()
                .enumerate()
                .all(|(i, c)| c.node == x && usize::from(c.lane) == i)
            && usize::from(p.node(x).width) == a.comps.len();
        let fusable = matches!(
            p.node(x).op,
            Op::Add | Op::Mul | Op::Mad | Op::Lrp | Op::Dp3
        );
        if in_place
            && fusable
            && !g.modified.contains_key(&x)
            && g.uses_left.get(&x).copied() == Some(a.comps.len() as u32)
        {
            g.sat_of.insert(x, s);
        }
    }
    // Who reads each node, operand by operand.
    for &n in &needed {
        if matches!(p.node(n).op, Op::Mov | Op::Neg) || g.uses_left.get(&n) == Some(&0) {
            continue;
        }
        for a in &p.node(n).args {
            g.note_reader(resolve_in(p, profile, a).comps);
        }
    }
    for comps in p.outputs.iter().map(|o| &o.comps).chain(&p.kills) {
        g.note_reader(resolve_in(p, profile, comps).comps);
    }
    if v14 {
        // Vectors of dot products read by arithmetic: each built once, in place.
        for &n in &needed {
            let node = p.node(n);
            if matches!(node.op, Op::Mov | Op::Neg | Op::Tex(_)) {
                continue;
            }
            for a in &node.args {
                let src = resolve_in(p, profile, a);
                g.plan_vector(&src.comps, false);
            }
        }
    }
    if (!dependent.is_empty() || !late_kills.is_empty()) && block.is_some_and(|b| b.phase) {
        let at = dependent.first().map_or_else(
            || block.map_or_else(Loc::default, |b| b.loc),
            |&(n, _)| p.loc(n),
        );
        return Err(vec![(
            at,
            format!("the asm block holds {name}'s 'phase': a read at computed coordinates or a discard of a computed value needs a phase of its own, which the block has taken"),
        )]);
    }
    if !dependent.is_empty() || !late_kills.is_empty() {
        if let Err(e) = g.second_phase(&needed, &live, &dependent, &late_kills) {
            return Err(vec![e]);
        }
    }
    for &n in &needed {
        if g.error.is_some() {
            break;
        }
        g.compute(n, &live);
    }
    if g.error.is_none() {
        g.output();
    }
    if let Some(e) = g.error {
        return Err(vec![e]);
    }
    let top = (0..g.defs.len())
        .map(|i| g.def_reg(i) + 1)
        .chain([uniform_top])
        .max()
        .unwrap_or(0);
    if top > 8 {
        return Err(vec![(
            Loc::default(),
            format!(
                "maximum constant register index exceeded: {name} has c0–c7, and this needs c0–c{} ({} registers of uniforms and {} of literals)",
                top - 1,
                occupied.iter().map(|&(_, n)| n).sum::<u32>(),
                g.defs.len()
            ),
        )]);
    }
    let mut asm = String::new();
    let _ = writeln!(asm, "ps_1_{}", profile.minor);
    for (i, d) in g.defs.iter().enumerate() {
        def_line(&mut asm, g.def_reg(i), d.iter().map(|v| v.unwrap_or(0.0)));
    }
    for (n, bits) in block.map_or(&[][..], |b| &b.defs[..]) {
        def_line(&mut asm, *n, bits.iter().map(|&b| f32::from_bits(b)));
    }
    let mut code = coissue(&g.code);
    if v14 && !code.iter().any(|l| l == "phase") {
        code = phases(code);
    }
    for line in code {
        let _ = writeln!(asm, "{line}");
    }
    let constants = table_constants
        .into_iter()
        .filter(|c| c.register_set != RegisterSet::INT4)
        .collect();
    let table = constant_table(profile, target, flags, constants);
    Ok(Generated { asm, table })
}

/// One instruction line taken apart: mnemonic, destination register and mask, and the
/// registers read.
struct Line<'a> {
    op: &'a str,
    dst: &'a str,
    mask: &'a str,
    reads: Vec<&'a str>,
}

fn take_apart(line: &str) -> Option<Line<'_>> {
    let (op, rest) = line.split_once(' ')?;
    let mut parts = rest.split(", ");
    let (dst, mask) = parts
        .next()?
        .split_once('.')
        .unwrap_or((rest.split(", ").next()?, ""));
    let reads = parts
        .map(|s| s.trim_start_matches('-').split('.').next().unwrap_or(s))
        .collect();
    Some(Line {
        op,
        dst,
        mask,
        reads,
    })
}

/// Co-issue: an instruction writing only .rgb and the next writing only .a, neither
/// where the second reads nothing the first writes, run as one pair (`+` on the second),
/// in one slot.
/// Either order in the code becomes colour first.
fn coissue(code: &[String]) -> Vec<String> {
    let colour_ops = [
        "mov", "add", "sub", "mul", "mad", "lrp", "dp3", "cnd", "cmp",
    ];
    let alpha_ops = ["mov", "add", "sub", "mul", "mad", "lrp", "cnd", "cmp"];
    let base = |op: &str| op.split('_').next().unwrap_or(op).to_string();
    let mut out: Vec<String> = Vec::with_capacity(code.len());
    let mut i = 0;
    while i < code.len() {
        let pair = code.get(i + 1).and_then(|next| {
            let (a, b) = (take_apart(&code[i])?, take_apart(next)?);
            // The pair reads before either writes: the second must not read what the
            // first writes.
            if b.reads.contains(&a.dst) {
                return None;
            }
            let ok = |c: &Line, al: &Line| {
                c.mask == "xyz"
                    && al.mask == "w"
                    && colour_ops.contains(&base(c.op).as_str())
                    && alpha_ops.contains(&base(al.op).as_str())
            };
            if ok(&a, &b) {
                Some((code[i].clone(), next.clone()))
            } else if ok(&b, &a) {
                Some((next.clone(), code[i].clone()))
            } else {
                None
            }
        });
        match pair {
            Some((colour, alpha)) => {
                out.push(colour);
                out.push(format!("+ {alpha}"));
                i += 2;
            }
            None => {
                out.push(code[i].clone());
                i += 1;
            }
        }
    }
    out
}

/// ps_1_4 runs eight arithmetic instructions, or eight before a `phase` and eight after:
/// longer code is split where the first part reads no colour register (v# exist only
/// after the phase) and nothing after reads a register whose alpha lane the first part
/// wrote (alpha lanes do not outlive the phase).
fn phases(code: Vec<String>) -> Vec<String> {
    const PER_PHASE: usize = 8;
    // Units: an instruction and the one co-issued with it.
    let mut units: Vec<Vec<String>> = Vec::new();
    for line in code {
        match units.last_mut() {
            Some(u) if line.starts_with("+ ") => u.push(line),
            _ => units.push(vec![line]),
        }
    }
    let texture = |u: &Vec<String>| u[0].starts_with("tex");
    let first_arith = units
        .iter()
        .position(|u| !texture(u))
        .unwrap_or(units.len());
    let arith = units.len() - first_arith;
    if arith <= PER_PHASE || arith > 2 * PER_PHASE {
        return units.into_iter().flatten().collect();
    }
    fn parts(u: &[String]) -> Vec<Line<'_>> {
        u.iter()
            .filter_map(|l| take_apart(l.trim_start_matches("+ ")))
            .collect()
    }
    let valid = |k: usize| {
        let (one, two) = units[first_arith..].split_at(k);
        let reads_colour = one
            .iter()
            .flat_map(|u| parts(u))
            .any(|l| l.reads.iter().any(|r| r.starts_with('v')));
        let alpha_written: Vec<String> = one
            .iter()
            .flat_map(|u| parts(u))
            .filter(|l| l.mask.is_empty() || l.mask.contains('w'))
            .map(|l| l.dst.to_string())
            .collect();
        let alpha_read = two
            .iter()
            .flat_map(|u| parts(u))
            .any(|l| l.reads.iter().any(|r| alpha_written.iter().any(|w| w == r)));
        !reads_colour && !alpha_read
    };
    let Some(k) = (arith - PER_PHASE..=PER_PHASE).rev().find(|&k| valid(k)) else {
        return units.into_iter().flatten().collect();
    };
    let mut out: Vec<String> = Vec::new();
    for (i, u) in units.into_iter().enumerate() {
        if i == first_arith + k {
            out.push("phase".into());
        }
        out.extend(u);
    }
    out
}

/// An operand's components: through negation and `mov` nodes where all its components
/// go through alike (as the other models' generator reads them), then each through the
/// `mov` nodes left where a lacking operation was replaced.
fn resolve_in(p: &Program, profile: Profile, comps: &[Comp]) -> Src {
    let mut src = resolve_uniform(p, profile, comps);
    for c in &mut src.comps {
        *c = through_moves(p, *c);
    }
    src
}

/// The component a `mov` node's lane is, through every `mov` (a node replaced by lanes
/// of others).
fn through_moves(p: &Program, mut c: Comp) -> Comp {
    while p.node(c.node).op == Op::Mov {
        c = p.node(c.node).args[0][usize::from(c.lane)];
    }
    c
}

/// What an operation is, for a message.
fn what(op: Op) -> &'static str {
    match op {
        Op::Rcp => "reciprocal (division, rcp)",
        Op::Rsq => "reciprocal square root (sqrt, normalize, length)",
        Op::Exp | Op::Pow => "exponential (exp, exp2, pow)",
        Op::Log => "logarithm (log, log2, pow)",
        Op::Frc => "fraction (frac, floor, ceil, fmod, round, trunc, an int conversion)",
        Op::Min | Op::Max => "min or max (min, max, clamp, abs) in ps_1_1",
        Op::Abs => "absolute value",
        Op::Dsx | Op::Dsy => "derivatives (ddx, ddy, fwidth)",
        Op::Nrm => "normalize",
        Op::SinCos => "sine or cosine",
        Op::Slt | Op::Sge => "comparison",
        Op::Tex(_) => "texture read of this kind (projected, biased, at a level or with gradients)",
        Op::Relative { .. } | Op::LoopRelative { .. } => "run-time index into a uniform array",
        _ => "instruction for this",
    }
}

/// Whether node `m` is `x_bx2` (`x * 2 - 1`), `x_bias` (`x - 0.5`), `1-x` or (ps_1_4)
/// `x_x2` (`x * 2`) of a value `x` that is no constant: the components of `x`, lane for
/// lane, and the modifier.
fn modifier_of(p: &Program, profile: Profile, m: NodeId) -> Option<(Vec<Comp>, Modifier)> {
    let node = p.node(m);
    let width = usize::from(node.width);
    let args: Vec<Src> = node
        .args
        .iter()
        .map(|a| resolve_in(p, profile, a))
        .collect();
    let literal = |s: &Src, v: f32| {
        !s.abs
            && !s.comps.is_empty()
            && s.comps.iter().all(|&c| {
                p.constant(c)
                    .is_some_and(|k| (if s.neg { -k } else { k }).to_bits() == v.to_bits())
            })
    };
    let value = |s: &Src| {
        !s.abs
            && s.comps.len() == width
            && s.comps.iter().all(|&c| {
                p.constant(c).is_none()
                    && !matches!(p.node(c.node).op, Op::Uniform { .. } | Op::Sampler(_))
            })
    };
    match (node.op, args.as_slice()) {
        (Op::Mad, [a, b, c]) if literal(c, -1.0) => [(a, b), (b, a)]
            .into_iter()
            .find(|(x, k)| !x.neg && value(x) && literal(k, 2.0))
            .map(|(x, _)| (x.comps.clone(), Modifier::Bx2)),
        (Op::Mul, [a, b]) if profile.minor == 4 => [(a, b), (b, a)]
            .into_iter()
            .find(|(x, k)| !x.neg && value(x) && literal(k, 2.0))
            .map(|(x, _)| (x.comps.clone(), Modifier::X2)),
        (Op::Add, [a, b]) => [(a, b), (b, a)].into_iter().find_map(|(x, k)| {
            if !value(x) {
                None
            } else if !x.neg && literal(k, -0.5) {
                Some((x.comps.clone(), Modifier::Bias))
            } else if x.neg && literal(k, 1.0) {
                Some((x.comps.clone(), Modifier::Invert))
            } else {
                None
            }
        }),
        _ => None,
    }
}

/// How ps_1_1–1_3 read a texture at coordinates computed from an earlier sample: by
/// their texture-addressing instructions, as d3dx9_31 chooses them.
#[derive(Debug, PartialEq)]
enum Addressing {
    /// `texreg2ar`, `texreg2gb`, `texreg2rgb`: the sample `from`'s (a, r), (g, b) or
    /// (r, g, b) are the coordinates.
    Reg2 { op: &'static str, from: NodeId },
    /// `texm3x2pad`/`texm3x2tex` (two rows) or `texm3x3pad` ×2/`texm3x3tex` (three): each
    /// coordinate is the dot product of a texture coordinate set (the stages before the
    /// sample's and its own, in order) with the rgb of sample `vector`, or with its
    /// `rgb * 2 - 1` (`_bx2`).
    Matrix {
        vector: NodeId,
        bx2: bool,
        sets: Vec<u32>,
    },
}

/// The addressing instruction that reads a texture at `coords` (the sample's coordinates,
/// as many as the sampler has dimensions), if there is one.
fn addressing(p: &Program, profile: Profile, coords: &Src) -> Option<Addressing> {
    if coords.neg || coords.abs {
        return None;
    }
    let c = &coords.comps;
    let from = c.first()?.node;
    let sample = |n: NodeId| matches!(p.node(n).op, Op::Tex(TexKind::Plain));
    if sample(from) && c.iter().all(|x| x.node == from) {
        let lanes: Vec<u8> = c.iter().map(|x| x.lane).collect();
        let op = match lanes.as_slice() {
            [3, 0] => "texreg2ar",
            [1, 2] => "texreg2gb",
            [0, 1, 2] => "texreg2rgb",
            _ => return None,
        };
        return Some(Addressing::Reg2 { op, from });
    }
    if !(2..=3).contains(&c.len()) {
        return None;
    }
    // The vector of a row: a sample's rgb, or its rgb * 2 - 1 (what `_bx2` reads).
    let rgb_of = |comps: &[Comp]| {
        let n = comps.first()?.node;
        let in_place = comps
            .iter()
            .enumerate()
            .all(|(i, x)| x.node == n && usize::from(x.lane) == i);
        (comps.len() == 3 && in_place).then_some(n)
    };
    let vector = |src: &Src| -> Option<(NodeId, bool)> {
        if src.neg || src.abs {
            return None;
        }
        let n = rgb_of(&src.comps)?;
        if sample(n) {
            return Some((n, false));
        }
        match modifier_of(p, profile, n)? {
            (x, Modifier::Bx2) => rgb_of(&x[..x.len().min(3)])
                .filter(|&t| sample(t))
                .map(|t| (t, true)),
            _ => None,
        }
    };
    let mut rows = Vec::new();
    for x in c {
        let dot = p.node(x.node);
        if dot.op != Op::Dp3 {
            return None;
        }
        let a = resolve_in(p, profile, &dot.args[0]);
        let b = resolve_in(p, profile, &dot.args[1]);
        let row = |t: &Src, v: &Src| {
            let set = (!t.neg && !t.abs && t.comps.len() == 3)
                .then(|| texcoord_set(p, &t.comps))
                .flatten()?;
            Some((set, vector(v)?))
        };
        rows.push(row(&a, &b).or_else(|| row(&b, &a))?);
    }
    let (_, first) = rows[0];
    if rows.iter().any(|(_, v)| *v != first) {
        return None;
    }
    Some(Addressing::Matrix {
        vector: first.0,
        bx2: first.1,
        sets: rows.iter().map(|&(s, _)| s).collect(),
    })
}

/// The place of an input: where it is first read.
fn input_loc(p: &Program, n: NodeId) -> Loc {
    p.loc(n)
}

/// The texture coordinate set a sample's coordinates are, read as they come in (x, y
/// and for a volume or cube z, in place).
fn texcoord_set(p: &Program, comps: &[Comp]) -> Option<u32> {
    let first = comps.first()?.node;
    let Op::Input(i) = p.node(first).op else {
        return None;
    };
    let input = &p.inputs[i as usize];
    if input.usage != "TEXCOORD" {
        return None;
    }
    let in_place = comps.iter().enumerate().all(|(k, c)| {
        c.node == first && usize::from(c.lane) == k.min(2)
            || k == 1 && comps.len() == 2 && c.node == first && c.lane == 1
    });
    in_place.then_some(input.index)
}

/// The nodes the colour alone reads, each with the lanes of r0 it may be computed into:
/// the lanes the colour reads it in, when an instruction can write just those (any lanes
/// in ps_1_4; .rgb, .a or all four before, or .rgb for a part of them) and read its
/// operands there (a one-lane node in every lane it writes, a wider one lane for lane).
fn colour_plan(
    p: &Program,
    profile: Profile,
    uses_left: &HashMap<NodeId, u32>,
) -> HashMap<NodeId, Planned> {
    let mut plan = HashMap::new();
    let Some(o) = p.outputs.first() else {
        return plan;
    };
    let src = resolve_in(p, profile, &o.comps);
    if src.neg || src.abs || src.comps.is_empty() {
        return plan;
    }
    let mut comps = src.comps.clone();
    while comps.len() < 4 {
        comps.push(*comps.last().unwrap());
    }
    let v14 = profile.minor == 4;
    let mut nodes: Vec<NodeId> = comps.iter().map(|c| c.node).collect();
    nodes.sort();
    nodes.dedup();
    for n in nodes {
        let node = p.node(n);
        if is_leaf(node.op) || matches!(node.op, Op::Tex(_)) {
            continue;
        }
        let lanes: Vec<u8> = (0..4u8)
            .filter(|&k| comps[usize::from(k)].node == n)
            .collect();
        // cnd's condition goes through r0.a in ps_1_1: the choice may write r0's colour.
        if node.op == Op::Cmp && profile.minor < 2 && lanes.contains(&3) {
            continue;
        }
        if uses_left.get(&n).copied().unwrap_or(0) != lanes.len() as u32 {
            continue;
        }
        let in_place = node.width == 1 || lanes.iter().all(|&k| comps[usize::from(k)].lane == k);
        let exact = v14 || matches!(lanes.as_slice(), [0, 1, 2] | [3] | [0, 1, 2, 3]);
        let colour_only = lanes.iter().all(|&k| k < 3);
        let dot = matches!(node.op, Op::Dp3 | Op::Dp4);
        if in_place && (exact || colour_only) && (!dot || node.width == 1) {
            let mask = if exact { lanes.clone() } else { vec![0, 1, 2] };
            plan.insert(n, Planned { mask, lanes });
        }
    }
    // Before ps_1_4 a node of some of the colour lanes writes all three: only if no other
    // node goes there (the rest are merged in after).
    let in_colour = plan
        .values()
        .filter(|p| p.lanes.iter().any(|&k| k < 3))
        .count();
    plan.retain(|_, p| p.mask == p.lanes || in_colour == 1);
    plan
}

/// A node computed into r0: the lanes its instruction writes, and those of them that
/// hold the colour.
#[derive(Debug, Clone)]
struct Planned {
    mask: Vec<u8>,
    lanes: Vec<u8>,
}

/// Instructions ps_1_x has for what the front end spells in parts: `lerp`'s
/// `a + s * (b - a)` as `lrp s, b, a`, and a product read only by a sum as `mad`.
fn fuse(p: &mut Program) {
    // How many nodes (and outputs, kills) read each node.
    let mut readers = vec![0u32; p.nodes.len()];
    for node in &p.nodes {
        let mut seen: Vec<NodeId> = node.args.iter().flatten().map(|c| c.node).collect();
        seen.sort_unstable();
        seen.dedup();
        for n in seen {
            readers[n as usize] += 1;
        }
    }
    for c in p
        .outputs
        .iter()
        .flat_map(|o| &o.comps)
        .chain(p.kills.iter().flatten())
    {
        readers[c.node as usize] += 1;
    }
    // The node all of `comps` are lanes of, lane for lane.
    let whole = |p: &Program, comps: &[Comp]| -> Option<NodeId> {
        let n = comps.first()?.node;
        comps
            .iter()
            .enumerate()
            .all(|(i, c)| {
                c.node == n && usize::from(c.lane) == i && p.node(n).width as usize == comps.len()
            })
            .then_some(n)
    };
    for id in 0..p.nodes.len() {
        let node = p.nodes[id].clone();
        let replacement = match node.op {
            Op::Mad => {
                let [s, d, a] = &node.args[..] else { continue };
                let Some(dn) = whole(p, d) else { continue };
                let dnode = p.node(dn).clone();
                if dnode.op != Op::Add || readers[dn as usize] != 1 {
                    continue;
                }
                // s * (b - a) + a, the difference either way round.
                let [d0, d1] = &dnode.args[..] else { continue };
                let b = match (negation(p, d0, a), negation(p, d1, a)) {
                    (true, _) => d1,
                    (false, true) => d0,
                    _ => continue,
                };
                Some(p.map(Op::Lrp, vec![s.clone(), b.clone(), a.clone()]))
            }
            Op::Add => {
                let product = |arg: &[Comp]| {
                    whole(p, arg).filter(|&m| p.node(m).op == Op::Mul && readers[m as usize] == 1)
                };
                // `c - a * b` too, as `a * -b + c`.
                let negated = |arg: &[Comp]| {
                    whole(p, arg)
                        .filter(|&g| p.node(g).op == Op::Neg && readers[g as usize] == 1)
                        .and_then(|g| product(&p.node(g).args[0]))
                };
                let (m, c, neg) = match (product(&node.args[0]), product(&node.args[1])) {
                    (Some(m), _) => (m, node.args[1].clone(), false),
                    (None, Some(m)) => (m, node.args[0].clone(), false),
                    _ => match (negated(&node.args[0]), negated(&node.args[1])) {
                        (Some(m), _) => (m, node.args[1].clone(), true),
                        (None, Some(m)) => (m, node.args[0].clone(), true),
                        _ => continue,
                    },
                };
                let mnode = p.node(m).clone();
                // A product by a literal beyond [-1, 1] and a computed sum stay apart: as
                // `legalize` split them, for the generator to scale the product (`mul_x4`).
                let big = |a: &[Comp]| {
                    a.iter()
                        .any(|&c| p.constant(c).is_some_and(|v| v.abs() > 1.0))
                };
                if mnode.args.iter().any(|a| big(a)) && c.iter().any(|&k| p.constant(k).is_none()) {
                    continue;
                }
                let b = if neg {
                    p.map(Op::Neg, vec![mnode.args[1].clone()])
                } else {
                    mnode.args[1].clone()
                };
                Some(p.map(Op::Mad, vec![mnode.args[0].clone(), b, c]))
            }
            _ => None,
        };
        // The node made may be one replaced before (by `legalize`, which split a product
        // by a literal beyond [-1, 1] out of its `mad`): then it stays as it is.
        if let Some(r) = replacement.filter(|r| {
            r.iter()
                .all(|c| c.node as usize != id && p.node(c.node).op != Op::Mov)
        }) {
            p.replace_with(id, r);
        }
    }
}

/// Whether `x` is `-a`, lane by lane: a negation of `a`, what `a` negates, or literals of
/// the other sign (a literal's negation is folded: `lerp(k, x, t)` reads `x + -k`).
fn negation(p: &Program, x: &[Comp], a: &[Comp]) -> bool {
    let negated = |n: Comp, of: Comp| {
        let node = p.node(n.node);
        node.op == Op::Neg && node.args[0].get(usize::from(n.lane)) == Some(&of)
    };
    x.len() == a.len()
        && x.iter().zip(a).all(|(&x, &a)| {
            negated(x, a)
                || negated(a, x)
                || matches!((p.constant(x), p.constant(a)), (Some(u), Some(v)) if u == -v)
        })
}

/// Lane by lane operations computed where their operands are: a lane whose operands all
/// sit in lane t of their registers is computed in lane t (`ret.zw += k` in .zw), since
/// ps_1_x has no swizzle to bring them elsewhere. The node becomes a `mov` of the lanes of
/// the one computed so.
fn align_lanes(p: &mut Program, live: &HashMap<NodeId, u8>) {
    fn register_lane(p: &Program, mut c: Comp) -> Option<u8> {
        // A negation is read as its operand's register, negated.
        c = through_moves(p, c);
        while p.node(c.node).op == Op::Neg {
            c = through_moves(p, p.node(c.node).args[0][usize::from(c.lane)]);
        }
        let node = p.node(c.node);
        match node.op {
            Op::Const(_) | Op::Sampler(_) => None,
            Op::Uniform { .. } | Op::Input(_) | Op::Tex(_) => Some(c.lane),
            _ if node.width == 1 => None,
            _ => Some(c.lane),
        }
    }
    for id in 0..p.nodes.len() {
        let node = p.nodes[id].clone();
        let w = usize::from(node.width);
        if w < 2
            || !matches!(
                node.op,
                Op::Add | Op::Mul | Op::Mad | Op::Lrp | Op::Cmp | Op::Sat | Op::Neg
            )
            || node.args.iter().any(|a| a.len() != w)
        {
            continue;
        }
        let live = live.get(&(id as NodeId)).copied().unwrap_or(0);
        if live == 0 {
            continue;
        }
        // Where each live lane goes.
        let mut targets: Vec<Option<u8>> = Vec::with_capacity(w);
        let mut agree = true;
        for i in 0..w {
            if live & (1 << i) == 0 {
                targets.push(None);
                continue;
            }
            let mut t = None;
            for a in &node.args {
                if let Some(l) = register_lane(p, a[i]) {
                    agree &= t.is_none_or_eq(l);
                    t = Some(l);
                }
            }
            targets.push(Some(t.unwrap_or(i as u8)));
        }
        let identity = targets
            .iter()
            .enumerate()
            .all(|(i, &t)| t.is_none_or_eq(i as u8));
        let distinct = (0..w).all(|i| targets[i].is_none() || !targets[..i].contains(&targets[i]));
        if !agree || identity || !distinct {
            continue;
        }
        // As wide as the registers read, so that parts of one operation (the rows of a
        // matrix sum) become one node again.
        let whole = node.args.iter().all(|a| {
            a.iter().all(|&c| {
                p.constant(c).is_some()
                    || matches!(
                        p.node(c.node).op,
                        Op::Uniform { .. } | Op::Input(_) | Op::Tex(_)
                    ) && p.node(c.node).width == 4
            })
        });
        let width = if whole {
            4
        } else {
            usize::from(targets.iter().flatten().max().copied().unwrap_or(0)) + 1
        };
        // The lanes no value goes to read their register's own lane, or zero (repeated
        // lanes would fold back into the narrow node).
        let zero = p.konst(0.0);
        let args: Vec<Vec<Comp>> = node
            .args
            .iter()
            .map(|a| {
                let reg = a
                    .iter()
                    .find(|&&c| p.constant(c).is_none())
                    .map(|&c| through_moves(p, c).node);
                (0..width)
                    .map(|t| match targets.iter().position(|&x| x == Some(t as u8)) {
                        Some(from) => a[from],
                        None => match reg {
                            Some(m) if usize::from(p.node(m).width) > t => Comp {
                                node: m,
                                lane: t as u8,
                            },
                            _ => zero,
                        },
                    })
                    .collect()
            })
            .collect();
        let wide = p.map(node.op, args);
        // Dead lanes read anything.
        let lanes: Vec<Comp> = targets
            .iter()
            .map(|&t| wide[usize::from(t.unwrap_or(0))])
            .collect();
        // Lanes alike may give the very node again, or one replaced before.
        if lanes
            .iter()
            .any(|c| c.node as usize == id || p.node(c.node).op == Op::Mov)
        {
            continue;
        }
        p.replace_with(id, lanes);
    }
}

/// Whether an optional lane is unset or this one.
trait NoneOrEq {
    fn is_none_or_eq(&self, l: u8) -> bool;
}

impl NoneOrEq for Option<u8> {
    fn is_none_or_eq(&self, l: u8) -> bool {
        self.map_or(true, |x| x == l)
    }
}

/// `lerp(a, b, s)` with every lane of `s` a literal 0 or 1 is a choice of lanes, not
/// arithmetic: lane i is a's where s is 0 and b's where it is 1 (ps_1_x's values are
/// finite, so `0 * (b - a)` is 0 and `(b - a) + a` is b). The front end spells it
/// `s * (b - a) + a`, whose parts may be lanes of several nodes or one lane read in
/// several (`lerp(u.yyy, u.zzz, float3(0, 1, 0))`), which no `lrp` reads as they are. As
/// d3dx9_31 does, the lanes are gathered (a `dp3` against a basis vector for a lane read
/// elsewhere, an `lrp` against a mask per group): the node becomes a `mov` of the lanes
/// chosen. Where each of them is in its own lane already, one `lrp` against the mask
/// does it.
fn select_lanes(p: &mut Program) {
    // `x` is `-a`: a negation of it, or the literal of opposite sign.
    let negation_of = |p: &Program, x: Comp, a: Comp| {
        let n = p.node(x.node);
        n.op == Op::Neg && through_moves(p, n.args[0][usize::from(x.lane)]) == a
            || matches!((p.constant(x), p.constant(a)), (Some(x), Some(a)) if x == -a)
    };
    // b where `d` is `b - a`.
    let minuend = |p: &mut Program, d: Comp, a: Comp| -> Option<Comp> {
        if let (Some(dv), Some(av)) = (p.constant(d), p.constant(a)) {
            return Some(p.konst(dv + av));
        }
        let n = p.node(d.node).clone();
        let lane = usize::from(d.lane);
        match n.op {
            Op::Neg if through_moves(p, n.args[0][lane]) == a => Some(p.konst(0.0)),
            Op::Add => {
                let (x, y) = (
                    through_moves(p, n.args[0][lane]),
                    through_moves(p, n.args[1][lane]),
                );
                if negation_of(p, x, a) {
                    Some(y)
                } else if negation_of(p, y, a) {
                    Some(x)
                } else {
                    None
                }
            }
            _ => None,
        }
    };
    for id in 0..p.nodes.len() {
        let node = p.nodes[id].clone();
        if !matches!(node.op, Op::Mad | Op::Lrp) {
            continue;
        }
        let Some(mask) = node.args[0]
            .iter()
            .map(|&c| p.constant(c).filter(|&v| v == 0.0 || v == 1.0))
            .collect::<Option<Vec<f32>>>()
        else {
            continue;
        };
        let mut a = Vec::new();
        let mut b = Vec::new();
        for i in 0..usize::from(node.width) {
            let (ai, bi) = if node.op == Op::Lrp {
                (
                    through_moves(p, node.args[2][i]),
                    Some(through_moves(p, node.args[1][i])),
                )
            } else {
                let ai = through_moves(p, node.args[2][i]);
                let di = through_moves(p, node.args[1][i]);
                (ai, minuend(p, di, ai))
            };
            a.push(ai);
            b.push(bi);
        }
        // A lane where s is 0 reads a alone: b there may be anything.
        let chosen: Option<Vec<Comp>> = (0..a.len())
            .map(|i| if mask[i] == 0.0 { Some(a[i]) } else { b[i] })
            .collect();
        let Some(chosen) = chosen else {
            continue;
        };
        // One `lrp` against the mask where each operand, at the lanes it gives, reads as
        // it is (the other lanes filled to match): literals, lanes of one register where
        // they are, or one computed lane (which fills its register).
        let width = chosen.len();
        let direct = |p: &mut Program, given: &[Option<Comp>]| -> Option<Vec<Comp>> {
            let read: Vec<Comp> = given.iter().flatten().copied().collect();
            if read.iter().all(|&c| p.constant(c).is_some()) {
                let zero = p.konst(0.0);
                return Some(given.iter().map(|c| c.unwrap_or(zero)).collect());
            }
            let n = read[0].node;
            let node = p.node(n);
            if node.width == 1 && !is_leaf(node.op) && !matches!(node.op, Op::Tex(_)) {
                return read
                    .iter()
                    .all(|&c| c == read[0])
                    .then(|| vec![read[0]; width]);
            }
            let in_place = given
                .iter()
                .enumerate()
                .all(|(i, c)| c.map_or(true, |c| c.node == n && usize::from(c.lane) == i));
            (in_place && usize::from(node.width) >= width).then(|| {
                (0..width as u8)
                    .map(|lane| Comp { node: n, lane })
                    .collect()
            })
        };
        let a_read: Vec<Option<Comp>> = (0..width)
            .map(|i| (mask[i] == 0.0).then_some(a[i]))
            .collect();
        let b_read: Vec<Option<Comp>> = (0..width)
            .map(|i| if mask[i] == 1.0 { b[i] } else { None })
            .collect();
        let one_lrp = if mask.iter().all(|&v| v == mask[0]) {
            None
        } else {
            direct(p, &a_read).zip(direct(p, &b_read))
        };
        let replacement = match one_lrp {
            Some((a, b)) => p.map(Op::Lrp, vec![node.args[0].clone(), b, a]),
            None => chosen,
        };
        if replacement.iter().any(|c| c.node as usize == id) {
            continue;
        }
        p.replace_with(id, replacement);
    }
}

/// ps_1_1–1_3 read a texture coordinate set as a value by `texcoord tN`, which clamps it
/// to [0, 1]: a saturation of such lanes is the lanes as read (the decompiler writes
/// `saturate(tc0)` for what `texcoord t0` gives). Not where the saturation is a sample's
/// coordinates, which `tex tN` would read unclamped.
fn clamped_coordinates(p: &mut Program) {
    let coordinates: HashSet<NodeId> = p
        .nodes
        .iter()
        .filter(|n| matches!(n.op, Op::Tex(_)))
        .flat_map(|n| n.args[0].iter().map(|c| c.node))
        .collect();
    for id in 0..p.nodes.len() {
        let node = &p.nodes[id];
        if node.op != Op::Sat || coordinates.contains(&(id as NodeId)) {
            continue;
        }
        let lanes = node.args[0].clone();
        let coordinate_set = lanes.iter().all(|c| {
            matches!(p.node(c.node).op, Op::Input(i) if p.inputs[i as usize].usage == "TEXCOORD")
        });
        if coordinate_set {
            p.replace_with(id, lanes);
        }
    }
}

/// Operations ps_1_x lacks, built from those it has: `abs` as a choice, `min` and `max`
/// as choices on the difference (ps_1_2 and later, where `cmp` chooses per lane).
fn legalize(p: &mut Program) {
    for id in 0..p.nodes.len() {
        let node = p.nodes[id].clone();
        let big = |p: &Program, a: &[Comp]| {
            a.iter().all(|&c| p.constant(c).is_some())
                && a.iter()
                    .any(|&c| p.constant(c).is_some_and(|v| v.abs() > 1.0))
        };
        let negative_splat = |p: &Program, a: &[Comp]| {
            let v: Option<Vec<f32>> = a.iter().map(|&c| p.constant(c)).collect();
            v.filter(|v| v.iter().all(|&x| x < 0.0 && x == v[0]))
                .map(|v| v[0])
        };
        let replacement = match node.op {
            // x * -k as -(x * k): the negation goes to whatever reads it, the product may
            // become a modifier of x's instruction.
            Op::Mul
                if negative_splat(p, &node.args[1]).is_some()
                    && negative_splat(p, &node.args[0]).is_none() =>
            {
                let k = -negative_splat(p, &node.args[1]).unwrap();
                let kk = p.konst(k);
                let m = p.map(
                    Op::Mul,
                    vec![node.args[0].clone(), vec![kk; node.args[1].len()]],
                );
                Some(p.map(Op::Neg, vec![m]))
            }
            Op::Mul
                if negative_splat(p, &node.args[0]).is_some()
                    && negative_splat(p, &node.args[1]).is_none() =>
            {
                let k = -negative_splat(p, &node.args[0]).unwrap();
                let kk = p.konst(k);
                let m = p.map(
                    Op::Mul,
                    vec![vec![kk; node.args[0].len()], node.args[1].clone()],
                );
                Some(p.map(Op::Neg, vec![m]))
            }
            // a * k + c with k beyond [-1, 1] and c computed: the product alone, which
            // the generator scales (`mul_x4`), then the sum.
            Op::Mad
                if (big(p, &node.args[0]) || big(p, &node.args[1]))
                    && !node.args[2].iter().all(|&c| p.constant(c).is_some()) =>
            {
                let m = p.map(Op::Mul, vec![node.args[0].clone(), node.args[1].clone()]);
                Some(p.map(Op::Add, vec![m, node.args[2].clone()]))
            }
            // abs, min and max as choices: per lane with cmp (ps_1_2 and later); in
            // ps_1_1 with cnd, for one value alone.
            Op::Abs => {
                let x = node.args[0].clone();
                let n = p.map(Op::Neg, vec![x.clone()]);
                Some(p.map(Op::Cmp, vec![x.clone(), x, n]))
            }
            Op::Min | Op::Max => {
                let (a, b) = (node.args[0].clone(), node.args[1].clone());
                let nb = p.map(Op::Neg, vec![b.clone()]);
                let d = p.map(Op::Add, vec![a.clone(), nb]);
                Some(if node.op == Op::Max {
                    p.map(Op::Cmp, vec![d, a, b])
                } else {
                    p.map(Op::Cmp, vec![d, b, a])
                })
            }
            _ => None,
        };
        if let Some(r) = replacement {
            p.replace_with(id, r);
        }
    }
}

impl Gen<'_> {
    /// ps_1_4's dependent reads and discards of computed values: what they read computed
    /// first (the first phase, which reads no colour register), moved into registers
    /// with its lanes in place, then `phase`, then `texld rS, rC` and `texkill rK`.
    fn second_phase(
        &mut self,
        needed: &[NodeId],
        live: &HashMap<NodeId, u8>,
        dependent: &[(NodeId, u32)],
        kills: &[Src],
    ) -> Result<(), (Loc, String)> {
        let p = self.p;
        let name = self.profile.name();
        let coords: Vec<Src> = dependent
            .iter()
            .map(|&(n, _)| self.resolve(&p.node(n).args[0]))
            .collect();
        // What they read, transitively.
        let mut first: HashSet<NodeId> = HashSet::new();
        let mut stack: Vec<NodeId> = coords
            .iter()
            .chain(kills)
            .flat_map(|s| s.comps.iter().map(|c| c.node))
            .collect();
        while let Some(n) = stack.pop() {
            if !first.insert(n) {
                continue;
            }
            if dependent.iter().any(|&(d, _)| d == n) {
                return Err((
                    p.loc(n),
                    format!("cannot map this dependent texture read to {name}: its coordinates come from another read at computed coordinates, and ps_1_4 has one such level (two phases)"),
                ));
            }
            for a in &p.node(n).args {
                stack.extend(self.resolve(a).comps.iter().map(|c| c.node));
            }
        }
        // Coordinates that are dot products, each read there alone: each computed into its
        // lane of one register, which the read then reads as it is (other lanes join
        // them there below).
        let groups: Vec<Option<usize>> = coords
            .iter()
            .map(|src| {
                let comps = &src.comps[..src.comps.len().min(3)];
                (!src.neg).then(|| self.plan_vector(comps, true)).flatten()
            })
            .collect();
        for &n in needed {
            if self.error.is_some() {
                break;
            }
            if first.contains(&n) {
                self.compute(n, live);
            }
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        // The registers the second phase reads: the lanes in place, no swizzle.
        let mut reads: Vec<(Reg, Vec<Comp>, bool)> = Vec::new();
        let full = [0u8, 1, 2];
        for (i, src) in coords.iter().chain(kills).enumerate() {
            let mut s = src.clone();
            s.comps.truncate(3);
            if i >= coords.len() {
                // texkill tests x, y and z: each holds the value.
                while s.comps.len() < 3 {
                    let last = *s.comps.last().unwrap();
                    s.comps.push(last);
                }
            }
            // Lanes computed in place already: the rest joins them there.
            let group = groups.get(i).copied().flatten();
            if let Some(r) = group.and_then(|g| self.coord_regs[g]) {
                let (lanes, comps): (Vec<u8>, Vec<Comp>) = (0..s.comps.len() as u8)
                    .zip(s.comps.iter().copied())
                    .filter(|(_, c)| !self.coord_plan.contains_key(&c.node))
                    .unzip();
                if !s.neg && !lanes.is_empty() {
                    self.gather_into(r, &comps, &lanes, true)
                        .ok_or_else(|| (self.p.loc(self.at), self.temps_message()))?;
                }
                if !s.neg {
                    reads.push((r, src.comps.clone(), true));
                    continue;
                }
            }
            // The lanes the coordinates have, where they are (a 2D read's z is not read).
            let lanes: Vec<u8> = (0..s.comps.len() as u8).collect();
            let direct = self.direct(&s, &lanes, &lanes).filter(|o| {
                !o.neg
                    && lanes.iter().all(|&l| o.swz[usize::from(l)] == l)
                    && matches!(o.reg, Reg::Temp(_))
            });
            while s.comps.len() < 3 {
                let last = *s.comps.last().unwrap();
                s.comps.push(last);
            }
            let (reg, gathered) = match direct {
                Some(o) => (o.reg, false),
                None => {
                    let Some(t) = self.alloc() else {
                        return Err((self.p.loc(self.at), self.temps_message()));
                    };
                    if s.neg {
                        let o = self
                            .operand(&s, &full, &full)
                            .ok_or_else(|| (self.p.loc(self.at), self.temps_message()))?;
                        self.code
                            .push(format!("mov {}.xyz, {}", t.name(), o.text()));
                    } else {
                        self.gather_into(t, &s.comps, &full, false)
                            .ok_or_else(|| (self.p.loc(self.at), self.temps_message()))?;
                    }
                    (t, true)
                }
            };
            reads.push((reg, src.comps.clone(), gathered));
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        // Samples at coordinates as they come in that the first phase does not read are
        // taken in the second, where their alpha lasts (the phase ends the first's).
        let late: Vec<String> = self
            .homes
            .iter()
            .filter(|(&n, _)| matches!(p.node(n).op, Op::Tex(_)) && !first.contains(&n))
            .map(|(_, h)| format!("texld {}, t", h.reg.name()))
            .collect();
        let mut moved = Vec::new();
        self.code.retain(|line| {
            let keep = !late.iter().any(|l| line.starts_with(l.as_str()));
            if !keep {
                moved.push(line.clone());
            }
            keep
        });
        // The phase ends the alpha of the first's registers: an alpha read after it is
        // kept in another register's x over the phase.
        let mut kept: Vec<(NodeId, Reg)> = self
            .homes
            .iter()
            .filter(|(&n, h)| {
                // (texcrd's inputs have no alpha.)
                matches!(h.reg, Reg::Temp(_))
                    && !h.all
                    && !is_leaf(p.node(n).op)
                    && (!matches!(p.node(n).op, Op::Tex(_)) || first.contains(&n))
                    && self.uses_left.get(&n).copied().unwrap_or(0)
                        > coords
                            .iter()
                            .chain(kills)
                            .flat_map(|s| &s.comps)
                            .filter(|c| c.node == n)
                            .count() as u32
                    && (0..usize::from(p.node(n).width).min(4)).any(|k| h.lanes[k] == 3)
            })
            .map(|(&n, h)| (n, h.reg))
            .collect();
        kept.sort_by_key(|&(n, _)| n);
        let mut restore = Vec::new();
        for (_, reg) in kept {
            if restore.iter().any(|&(_, r)| r == reg) {
                continue;
            }
            let Some(t) = self.alloc() else {
                return Err((self.p.loc(self.at), self.temps_message()));
            };
            self.code
                .push(format!("mov {}.x, {}.w", t.name(), reg.name()));
            restore.push((t, reg));
        }
        self.code.push("phase".into());
        self.code.extend(moved);
        let (tex_reads, kill_reads) = reads.split_at(coords.len());
        for (&(n, s), (reg, comps, gathered)) in dependent.iter().zip(tex_reads) {
            let dst = Reg::Temp(s);
            // The stage's register must be free, or hold only what this reads.
            let busy = self.homes.iter().any(|(&m, h)| {
                h.reg == dst
                    && !is_leaf(p.node(m).op)
                    && self.uses_left.get(&m).copied().unwrap_or(0) > 0
                    && !comps.iter().any(|c| c.node == m)
            });
            if busy {
                return Err((
                    p.loc(n),
                    format!("{name} samples stage {s} into r{s}, which holds another value then; this needs more temporary registers"),
                ));
            }
            self.code
                .push(format!("texld {}, {}", dst.name(), reg.name()));
            self.release(comps);
            if *gathered {
                self.release_reg(*reg);
            }
            if let Some(slot) = self.pool.iter_mut().find(|(r, _)| *r == dst) {
                slot.1 = true;
            }
            self.homes.insert(
                n,
                Home {
                    reg: dst,
                    lanes: [0, 1, 2, 3],
                    all: false,
                },
            );
        }
        for (reg, comps, gathered) in kill_reads {
            self.code.push(format!("texkill {}", reg.name()));
            self.release(comps);
            if *gathered {
                self.release_reg(*reg);
            }
        }
        for (t, reg) in restore {
            self.code
                .push(format!("mov {}.w, {}.x", reg.name(), t.name()));
            self.release_reg(t);
        }
        Ok(())
    }

    /// ps_1_4: a vector of dot products (`float3(dot(a, n), dot(b, n), dot(c, n))`), each
    /// read nowhere else, is computed lane by lane into one register that its readers then
    /// read as it is, not gathered for each. With `partial`, lanes of other values may be
    /// among them (put there by the caller). The group, if planned.
    fn plan_vector(&mut self, comps: &[Comp], partial: bool) -> Option<usize> {
        let p = self.p;
        let dot = |c: &Comp| matches!(p.node(c.node).op, Op::Dp3 | Op::Dp4) && c.lane == 0;
        let planned: Vec<(usize, Comp)> = comps
            .iter()
            .enumerate()
            .filter(|(_, c)| dot(c))
            .map(|(k, c)| (k, *c))
            .collect();
        let alone = |c: &Comp| {
            !self.coord_plan.contains_key(&c.node)
                && comps.iter().filter(|x| x.node == c.node).count() == 1
                && self
                    .readers
                    .get(&c.node)
                    .is_some_and(|lists| lists.iter().all(|l| l.as_slice() == comps))
        };
        let enough = if partial {
            !planned.is_empty()
        } else {
            planned.len() == comps.len() && comps.len() >= 2
        };
        if !enough || !planned.iter().all(|(_, c)| alone(c)) {
            return None;
        }
        let g = self.coord_regs.len();
        self.coord_regs.push(None);
        for (k, c) in planned {
            self.coord_plan.insert(c.node, (g, k as u8));
        }
        Some(g)
    }

    /// Node `n` computed, unless it names a register, is placed already, or nothing reads
    /// it (readers look through a `mov` of another node).
    fn compute(&mut self, n: NodeId, live: &HashMap<NodeId, u8>) {
        let op = self.p.node(n).op;
        if is_leaf(op)
            || matches!(op, Op::Tex(_))
            || self.homes.contains_key(&n)
            || self.modified.contains_key(&n)
            || self.uses_left.get(&n).copied().unwrap_or(0) == 0
        {
            return;
        }
        self.at = n;
        self.emit(n, live.get(&n).copied().unwrap_or(0xF));
    }

    /// One read of each of `comps` taken back (an addressing instruction computes it): a
    /// node no longer read is not computed, and reads its operands no more. Samples are
    /// kept, read or not.
    fn unuse(&mut self, comps: &[Comp]) {
        for c in comps {
            let Some(left) = self.uses_left.get_mut(&c.node) else {
                continue;
            };
            *left = left.saturating_sub(1);
            let op = self.p.node(c.node).op;
            if *left > 0 || is_leaf(op) || matches!(op, Op::Tex(_) | Op::Mov | Op::Neg) {
                continue;
            }
            for a in &self.p.node(c.node).args {
                let src = resolve_in(self.p, self.profile, a);
                self.unuse(&src.comps);
            }
        }
    }

    /// The texture-addressing instructions of sample `n` at stage `s`.
    fn address(
        &mut self,
        n: NodeId,
        s: u32,
        a: &Addressing,
        stage_used: &mut BTreeMap<u32, NodeId>,
    ) -> Result<(), (Loc, String)> {
        let p = self.p;
        let name = self.profile.name();
        let at = p.loc(n);
        let source = |home: Option<&Home>, below: u32| {
            match home.map(|h| h.reg) {
            Some(Reg::Texture(k)) if k < below => Ok(k),
            _ => Err((
                at,
                format!("cannot map this dependent texture read to {name}: its coordinates come from a sample of a later stage than the reads they address (t# of a lower stage is read)"),
            )),
        }
        };
        let mut stages = Vec::new();
        let mut lines = Vec::new();
        match a {
            Addressing::Reg2 { op, from } => {
                if *op == "texreg2rgb" && self.profile.minor < 2 {
                    return Err((
                        at,
                        format!("cannot map this dependent texture read to {name}: coordinates that are a sample's r, g and b are texreg2rgb's, which {name} does not have (ps_1_2 and up)"),
                    ));
                }
                let k = source(self.homes.get(from), s)?;
                stages.push(s);
                lines.push(format!("{op} t{s}, t{k}"));
            }
            Addressing::Matrix {
                vector, bx2, sets, ..
            } => {
                let rows = sets.len() as u32;
                let (pad, last) = if rows == 2 {
                    ("texm3x2pad", "texm3x2tex")
                } else {
                    ("texm3x3pad", "texm3x3tex")
                };
                let want: Vec<u32> = (0..rows).map(|i| (s + 1 + i).wrapping_sub(rows)).collect();
                if s + 1 < rows || *sets != want {
                    return Err((
                        at,
                        format!("cannot bind sampler to user specified stage: {last} samples the stage of its last row, whose texture coordinates are TEXCOORD{}, so the sampler must be bound to s{} (rows TEXCOORD{} in order), not s{s}", sets[sets.len() - 1], sets[sets.len() - 1], sets.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")),
                    ));
                }
                let k = source(self.homes.get(vector), sets[0])?;
                let v = if *bx2 {
                    format!("t{k}_bx2")
                } else {
                    format!("t{k}")
                };
                for &t in &sets[..sets.len() - 1] {
                    stages.push(t);
                    lines.push(format!("{pad} t{t}, {v}"));
                }
                stages.push(s);
                lines.push(format!("{last} t{s}, {v}"));
            }
        }
        for t in stages {
            if t >= 4 {
                return Err((at, format!("{name} has 4 texture stages; this reads s{t}")));
            }
            if stage_used.insert(t, n).is_some() {
                return Err((
                    at,
                    format!("{name} uses each texture stage once; this needs stage {t} again"),
                ));
            }
        }
        self.code.extend(lines);
        self.homes.insert(
            n,
            Home {
                reg: Reg::Texture(s),
                lanes: [0, 1, 2, 3],
                all: false,
            },
        );
        Ok(())
    }

    fn fail(&mut self, msg: String) {
        if self.error.is_none() {
            self.error = Some((self.p.loc(self.at), msg));
        }
    }

    fn v14(&self) -> bool {
        self.profile.minor == 4
    }

    fn resolve(&self, comps: &[Comp]) -> Src {
        resolve_in(self.p, self.profile, comps)
    }

    /// The node whose place in r0 `n` takes: a value saturated on its way is placed as
    /// its saturation is.
    fn plan_key(&self, n: NodeId) -> NodeId {
        self.sat_of.get(&n).copied().unwrap_or(n)
    }

    /// Whether `n` is computed straight into r0, at the lanes the colour reads it in; if
    /// so, r0 is kept for the colour from here on. A wider node's lanes must be where it
    /// computes them (`positions`). r0 must be free, or hold only values `n` reads for the
    /// last time.
    fn claim_r0(&mut self, n: NodeId, positions: &[u8]) -> Option<Vec<u8>> {
        let key = self.plan_key(n);
        let Planned { mask, lanes } = self.plan.get(&key)?.clone();
        if self.p.node(n).width > 1 && positions != lanes.as_slice() {
            return None;
        }
        if !self.r0_kept {
            let args: Vec<Comp> = self
                .p
                .node(n)
                .args
                .iter()
                .flat_map(|a| self.resolve(a).comps)
                .map(|c| self.through_modifier(c))
                .collect();
            // What the colour reads of a value in r0 where it is, at lanes `n` leaves as
            // they are (a texture's alpha read into r0, beside colour lanes computed).
            let colour = self.colour();
            let kept = |m: NodeId, h: &Home| {
                colour
                    .iter()
                    .zip(0u8..)
                    .filter(|&(c, k)| {
                        c.node == m
                            && !mask.contains(&k)
                            && (h.all || h.lanes[usize::from(c.lane)] == k)
                    })
                    .count() as u32
            };
            // (ps_1_4's texcrd puts an input in r0 too.)
            let busy = self.homes.iter().any(|(&m, h)| {
                h.reg == Reg::Temp(0)
                    && self.uses_left.get(&m).is_some_and(|&left| {
                        let read = args.iter().filter(|c| c.node == m).count() as u32;
                        left > 0 && left != read && left != read + kept(m, h)
                    })
            });
            let held = self
                .pool
                .iter()
                .any(|&(r, taken)| r == Reg::Temp(0) && taken);
            if busy || (held && !self.homes.values().any(|h| h.reg == Reg::Temp(0))) {
                return None;
            }
            self.r0_kept = true;
            if let Some(slot) = self.pool.iter_mut().find(|(r, _)| *r == Reg::Temp(0)) {
                slot.1 = true;
            }
        }
        self.claimed = Some(key);
        self.claimed_lanes = lanes;
        Some(mask)
    }

    /// The colour's four lanes as the output reads them (fewer repeat the last); none for a
    /// shader that writes no colour, or writes it negated.
    fn colour(&self) -> Vec<Comp> {
        let Some(o) = self.p.outputs.first() else {
            return Vec::new();
        };
        let src = self.resolve(&o.comps);
        let mut comps = src.comps;
        if src.neg || comps.is_empty() {
            return Vec::new();
        }
        while comps.len() < 4 {
            comps.push(*comps.last().unwrap());
        }
        comps
    }

    /// The register a result goes to: r0 for the node claimed for it, else a free one.
    fn result_reg(&mut self, n: NodeId) -> Option<Reg> {
        if self.claimed == Some(n) {
            return Some(Reg::Temp(0));
        }
        if let Some(&(g, _)) = self.coord_plan.get(&n) {
            if let Some(r) = self.coord_regs[g] {
                return Some(r);
            }
            let r = self.alloc()?;
            self.coord_regs[g] = Some(r);
            return Some(r);
        }
        self.alloc()
    }

    /// `n` is in r0 at the lanes where the colour reads it.
    fn placed_in_r0(&mut self, n: NodeId) {
        for k in std::mem::take(&mut self.claimed_lanes) {
            self.placed[usize::from(k)] = true;
        }
        self.claimed = None;
        self.homes.insert(
            n,
            Home {
                reg: Reg::Temp(0),
                lanes: [0, 1, 2, 3],
                all: false,
            },
        );
    }

    /// The operands of an instruction are all in place: the temporaries gathered for
    /// them are free for its result.
    fn operands_done(&mut self) {
        for r in std::mem::take(&mut self.scratch) {
            self.release_reg(r);
        }
    }

    /// An instruction reads at most so many registers of a kind (two constants, two
    /// colours, …): operands beyond are moved into temporaries first. Whether it could.
    fn read_ports(&mut self, operands: &mut [Operand]) -> bool {
        let ports = |r: Reg, v14: bool| match r {
            Reg::Temp(_) if v14 => 3,
            Reg::Texture(_) if v14 => 1,
            _ => 2,
        };
        let kind = |r: Reg| std::mem::discriminant(&r);
        let v14 = self.v14();
        for i in 0..operands.len() {
            let reg = operands[i].reg;
            let mut seen: Vec<Reg> = Vec::new();
            for o in &operands[..i] {
                if kind(o.reg) == kind(reg) && !seen.contains(&o.reg) {
                    seen.push(o.reg);
                }
            }
            if seen.contains(&reg) || (seen.len() as u32) < ports(reg, v14) {
                continue;
            }
            let Some(t) = self.alloc() else {
                let m = self.temps_message();
                self.fail(m);
                return false;
            };
            self.code.push(format!("mov {}, {}", t.name(), reg.name()));
            self.scratch.push(t);
            for o in operands[i..].iter_mut().filter(|o| o.reg == reg) {
                o.reg = t;
            }
        }
        true
    }

    fn note_reader(&mut self, comps: Vec<Comp>) {
        let mut nodes: Vec<NodeId> = comps.iter().map(|c| c.node).collect();
        nodes.sort_unstable();
        nodes.dedup();
        for n in nodes {
            self.readers.entry(n).or_default().push(comps.clone());
        }
    }

    /// A register `n` may be written into at `mask` over another value `m` there: where
    /// everything that reads `n` reads it beside `m`'s other lanes, in place, and nothing
    /// else reads `m` (`l.rgb = f(l.rgb); return c * l;` updates `l` where it is).
    fn merge_target(&self, n: NodeId, mask: &[u8]) -> Option<Reg> {
        if self.claimed == Some(n) || self.coord_plan.contains_key(&n) {
            return None;
        }
        let lists = self.readers.get(&n)?;
        let mut other = None;
        for list in lists {
            if list.len() != 4 {
                return None;
            }
            for (k, c) in list.iter().enumerate() {
                if mask.contains(&(k as u8)) {
                    if *c
                        != (Comp {
                            node: n,
                            lane: k as u8,
                        })
                    {
                        return None;
                    }
                } else if c.node == n || c.lane != k as u8 || other.is_some_and(|m| m != c.node) {
                    return None;
                } else {
                    other = Some(c.node);
                }
            }
        }
        let m = other?;
        let home = self.homes.get(&m)?;
        if home.all
            || home.lanes != [0, 1, 2, 3]
            || !matches!(home.reg, Reg::Temp(_) | Reg::Texture(_))
            || home.reg == Reg::Temp(0) && self.r0_kept
        {
            return None;
        }
        let read_there: u32 = lists
            .iter()
            .map(|l| l.iter().filter(|c| c.node == m).count() as u32)
            .sum();
        (self.uses_left.get(&m).copied() == Some(read_there)).then_some(home.reg)
    }

    /// The register of the `i`th `def`.
    fn def_reg(&self, i: usize) -> u32 {
        self.free_c.get(i).copied().unwrap_or(256 + i as u32)
    }

    /// A register free for a result.
    fn alloc(&mut self) -> Option<Reg> {
        let slot = self.pool.iter_mut().find(|(_, taken)| !*taken)?;
        slot.1 = true;
        Some(slot.0)
    }

    fn release_reg(&mut self, reg: Reg) {
        if reg == Reg::Temp(0) && self.r0_kept {
            return;
        }
        if let Some(slot) = self.pool.iter_mut().find(|(r, _)| *r == reg) {
            slot.1 = false;
        }
    }

    fn temps_message(&self) -> String {
        let name = self.profile.name();
        if self.v14() {
            format!("{name} has 6 temporary registers (r0–r5, the texture samples' among them); this needs more")
        } else {
            format!("{name} has 2 temporary registers (r0, r1) and the texture registers no texture instruction takes; this needs more")
        }
    }

    /// One read of each component done: a node read for the last time frees its
    /// register.
    fn release(&mut self, comps: &[Comp]) {
        for c in comps {
            // A read of a modified value is a read of what it modifies.
            let read = self.through_modifier(*c);
            if read != *c {
                self.release(&[read]);
            }
            let Some(left) = self.uses_left.get_mut(&c.node) else {
                continue;
            };
            *left = left.saturating_sub(1);
            if *left == 0 {
                if let Some(h) = self.homes.get(&c.node).copied() {
                    // An input ps_1_4's texcrd put in a temporary frees it too.
                    if !is_leaf(self.p.node(c.node).op) || matches!(h.reg, Reg::Temp(_)) {
                        self.release_reg(h.reg);
                    }
                }
            }
        }
    }

    /// One value read into every lane (`values` all alike), from one lane of a `def`
    /// register by a replicate swizzle: any lane in ps_1_4, `.w` before (`.z` into the
    /// alpha lane). The lane holding it already, or a free one.
    fn konst_splat(&mut self, values: &[f32], read: &[u8], mask: &[u8]) -> Option<(Reg, u8)> {
        let v = *values.first()?;
        if values.iter().any(|x| x.to_bits() != v.to_bits()) || read.len() < 2 && !self.v14() {
            return None;
        }
        let lanes: Vec<u8> = if self.v14() {
            vec![0, 1, 2, 3]
        } else if mask == [3] {
            vec![3, 2]
        } else {
            vec![3]
        };
        let holds =
            |d: &[Option<f32>; 4], l: u8| d[usize::from(l)].map(f32::to_bits) == Some(v.to_bits());
        for (i, d) in self.defs.iter().enumerate() {
            if let Some(&l) = lanes.iter().find(|&&l| holds(d, l)) {
                return Some((Reg::Const(self.def_reg(i)), l));
            }
        }
        for i in 0..self.defs.len() {
            if let Some(&l) = lanes
                .iter()
                .find(|&&l| self.defs[i][usize::from(l)].is_none())
            {
                self.defs[i][usize::from(l)] = Some(v);
                return Some((Reg::Const(self.def_reg(i)), l));
            }
        }
        self.defs.push([None; 4]);
        let l = lanes[0];
        self.defs.last_mut().unwrap()[usize::from(l)] = Some(v);
        Some((Reg::Const(self.def_reg(self.defs.len() - 1)), l))
    }

    /// A `def` register holding `values` at `lanes`: one that holds them there, or has
    /// those lanes free.
    fn konst(&mut self, values: &[f32], lanes: &[u8]) -> Reg {
        let fits = |d: &[Option<f32>; 4]| {
            values
                .iter()
                .zip(lanes)
                .all(|(v, &l)| match d[usize::from(l)] {
                    Some(x) => x.to_bits() == v.to_bits(),
                    None => true,
                })
        };
        let i = match self.defs.iter().position(fits) {
            Some(i) => i,
            None => {
                self.defs.push([None; 4]);
                self.defs.len() - 1
            }
        };
        for (&v, &l) in values.iter().zip(lanes) {
            self.defs[i][usize::from(l)] = Some(v);
        }
        Reg::Const(self.def_reg(i))
    }

    /// Where lane `c.lane` of a placed node is in its register.
    fn lane_of(&self, c: Comp) -> Option<(Reg, u8, bool)> {
        let h = self.homes.get(&c.node)?;
        let lane = if h.all {
            0
        } else {
            h.lanes[usize::from(c.lane)]
        };
        Some((h.reg, lane, h.all))
    }

    /// Whether a source swizzle is one the model reads, for an instruction writing
    /// `mask` and reading lanes `read`.
    fn swizzle_ok(&self, swz: [u8; 4], read: &[u8], mask: &[u8]) -> bool {
        let agrees = |want: [u8; 4]| {
            read.iter()
                .all(|&l| swz[usize::from(l)] == want[usize::from(l)])
        };
        if agrees([0, 1, 2, 3]) {
            return true;
        }
        if self.v14() {
            return (0..4).any(|k| agrees([k; 4]));
        }
        agrees([3; 4]) || (agrees([2; 4]) && mask == [3])
    }

    /// The operand that reads `src` into lanes `dst` of an instruction writing `mask`:
    /// as it is where its register holds it so, else gathered into a temporary.
    fn operand(&mut self, src: &Src, dst: &[u8], mask: &[u8]) -> Option<Operand> {
        if let Some(o) = self.modified_operand(src, dst, mask) {
            return o;
        }
        let consts: Option<Vec<f32>> = src.comps.iter().map(|&c| self.p.constant(c)).collect();
        if let Some(values) = consts {
            if let Some((reg, lane)) = self.konst_splat(&values, dst, mask) {
                return Some(Operand {
                    reg,
                    swz: [lane; 4],
                    neg: src.neg,
                    modifier: Modifier::None,
                });
            }
            // The values at the lanes read: the identity, which every model reads.
            let reg = self.konst(&values, dst);
            return Some(Operand {
                reg,
                swz: [0, 1, 2, 3],
                neg: src.neg,
                modifier: Modifier::None,
            });
        }
        if let Some(op) = self.direct(src, dst, mask) {
            return Some(op);
        }
        let reg = self.gather(&src.comps, dst)?;
        Some(Operand {
            reg,
            swz: [0, 1, 2, 3],
            neg: src.neg,
            modifier: Modifier::None,
        })
    }

    /// What a read of `c` reads: the component it modifies when `c` is a value taken
    /// through a source modifier, else `c`.
    fn through_modifier(&self, c: Comp) -> Comp {
        self.modified
            .get(&c.node)
            .map_or(c, |(x, _)| x[usize::from(c.lane)])
    }

    /// `src` when it reads a value taken through a source modifier: what it modifies,
    /// read as it is or gathered, with the modifier. `None`: not such a value.
    #[allow(clippy::option_option)]
    fn modified_operand(&mut self, src: &Src, dst: &[u8], mask: &[u8]) -> Option<Option<Operand>> {
        let m = src.comps.first()?.node;
        let modifier = self.modified.get(&m)?.1;
        if src.comps.iter().any(|c| c.node != m) {
            return None;
        }
        let inner = Src {
            comps: src
                .comps
                .iter()
                .map(|&c| self.through_modifier(c))
                .collect(),
            neg: false,
            abs: false,
        };
        let read = match self.direct(&inner, dst, mask) {
            Some(o) => Some(o),
            None => self.gather(&inner.comps, dst).map(|reg| Operand {
                reg,
                swz: [0, 1, 2, 3],
                neg: false,
                modifier: Modifier::None,
            }),
        };
        Some(read.map(|o| Operand {
            neg: src.neg,
            modifier,
            ..o
        }))
    }

    /// Values that each of their readers can take through a source modifier (`_bx2`,
    /// `_bias`, `1-`) of a value in a register, as d3dx9_31 reads them: not computed.
    /// Readers are arithmetic instructions and the colour, each reading the value alone
    /// in its operand (and `1-x` not negated); constants are not modified (d3dx9_31
    /// computes those).
    fn source_modifiers(&mut self, needed: &[NodeId]) {
        let p = self.p;
        for &m in needed {
            if self.uses_left.get(&m).copied().unwrap_or(0) == 0 {
                continue;
            }
            let Some((x, modifier)) = modifier_of(p, self.profile, m) else {
                continue;
            };
            // A modifier reads a register: not a value itself read through one
            // (`2 * (2 * x - 1) - 1` computes the inner value).
            if x.iter().any(|c| self.modified.contains_key(&c.node)) {
                continue;
            }
            // The lanes of `m` its readers read.
            let mut lanes: Vec<u8> = Vec::new();
            let mut ok = true;
            let mut take = |src: &Src, reader_ok: bool| {
                if !src.comps.iter().any(|c| c.node == m) {
                    return;
                }
                if !reader_ok
                    || src.comps.iter().any(|c| c.node != m)
                    || src.abs
                    || src.neg && modifier == Modifier::Invert
                {
                    ok = false;
                }
                lanes.extend(src.comps.iter().map(|c| c.lane));
            };
            for &n in needed {
                let node = p.node(n);
                if matches!(node.op, Op::Mov | Op::Neg)
                    || self.uses_left.get(&n) == Some(&0) && !matches!(node.op, Op::Tex(_))
                {
                    continue;
                }
                for a in &node.args {
                    // A sample's coordinates take no modifier. (A choice's condition
                    // does: `cmp` reads it as any operand, and ps_1_1's `cnd` reads r0.a,
                    // which an instruction reading the condition computes.)
                    // A value read through a modifier is no instruction to read it.
                    let reader_ok =
                        !matches!(node.op, Op::Tex(_)) && !self.modified.contains_key(&n);
                    take(&resolve_in(p, self.profile, a), reader_ok);
                }
            }
            for o in &p.outputs {
                take(&resolve_in(p, self.profile, &o.comps), true);
            }
            for k in &p.kills {
                take(&resolve_in(p, self.profile, k), false);
            }
            if !ok || lanes.is_empty() {
                continue;
            }
            // Its readers read what it modifies instead; it reads nothing.
            for &l in &lanes {
                *self.uses_left.entry(x[usize::from(l)].node).or_default() += 1;
            }
            for a in &p.node(m).args {
                for c in resolve_in(p, self.profile, a).comps {
                    if let Some(left) = self.uses_left.get_mut(&c.node) {
                        *left = left.saturating_sub(1);
                    }
                }
            }
            self.modified.insert(m, (x, modifier));
        }
    }

    /// `src` read as it is: the lanes of one register at the lanes read, or one lane of
    /// one register in all of them, as the model's swizzles allow.
    fn direct(&self, src: &Src, dst: &[u8], mask: &[u8]) -> Option<Operand> {
        let mut reg = None;
        let mut swz = [0u8; 4];
        let mut all_any = true;
        for (k, &c) in src.comps.iter().enumerate() {
            let (r, lane, all) = self.lane_of(c)?;
            if reg.is_some_and(|x| x != r) {
                return None;
            }
            reg = Some(r);
            all_any &= all;
            swz[usize::from(dst[k])] = if all { dst[k] } else { lane };
        }
        let reg = reg?;
        fill(&mut swz, dst);
        if all_any {
            // Every lane holds the value: read in place.
            return Some(Operand {
                reg,
                swz: [0, 1, 2, 3],
                neg: src.neg,
                modifier: Modifier::None,
            });
        }
        if !self.swizzle_ok(swz, dst, mask) {
            return None;
        }
        // The lanes not read as the lanes read: the swizzle the model has.
        let agrees = |want: [u8; 4]| {
            dst.iter()
                .all(|&l| swz[usize::from(l)] == want[usize::from(l)])
        };
        if agrees([0, 1, 2, 3]) {
            swz = [0, 1, 2, 3];
        } else if let Some(k) = (0..4).find(|&k| agrees([k; 4])) {
            swz = [k; 4];
        }
        Some(Operand {
            reg,
            swz,
            neg: src.neg,
            modifier: Modifier::None,
        })
    }

    /// Components moved into lanes `dst` of a fresh temporary.
    fn gather(&mut self, comps: &[Comp], dst: &[u8]) -> Option<Reg> {
        let Some(t) = self.alloc() else {
            let m = self.temps_message();
            self.fail(m);
            return None;
        };
        self.gather_into(t, comps, dst, false)?;
        // Free again once the instruction reading it has its operands: its result may
        // take it.
        self.scratch.push(t);
        Some(t)
    }

    /// Where each of `comps` comes from, grouped so that one instruction moves a group:
    /// lanes read in place from one register, or one lane of a register into several.
    /// Constants go into a `def` register at their lanes.
    fn groups(&mut self, comps: &[Comp], dst: &[u8]) -> Option<Vec<(Source, Vec<u8>)>> {
        let mut groups: Vec<(Source, Vec<u8>)> = Vec::new();
        let mut consts: Vec<(u8, f32)> = Vec::new();
        for (k, &c) in comps.iter().enumerate() {
            let l = dst[k];
            let key = match self.p.constant(c) {
                Some(v) => {
                    consts.push((l, v));
                    continue;
                }
                None => match self.lane_of(c)? {
                    (r, _, true) => Source::InPlace(r),
                    (r, lane, false) if lane == l => Source::InPlace(r),
                    (r, lane, false) => Source::Splat(r, lane),
                },
            };
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => g.1.push(l),
                None => groups.push((key, vec![l])),
            }
        }
        if !consts.is_empty() {
            let values: Vec<f32> = consts.iter().map(|x| x.1).collect();
            let lanes: Vec<u8> = consts.iter().map(|x| x.0).collect();
            let r = self.konst(&values, &lanes);
            groups.push((Source::InPlace(r), lanes));
        }
        // Lanes in place that a spread of the same lane covers as well join it.
        let mut i = 0;
        while i < groups.len() {
            if let Source::InPlace(r) = groups[i].0 {
                let absorbable = groups[i]
                    .1
                    .iter()
                    .all(|&l| groups.iter().any(|g| g.0 == Source::Splat(r, l)));
                if absorbable {
                    let lanes = groups.remove(i).1;
                    for l in lanes {
                        let g = groups
                            .iter_mut()
                            .find(|g| g.0 == Source::Splat(r, l))
                            .unwrap();
                        g.1.push(l);
                    }
                    continue;
                }
            }
            i += 1;
        }
        Some(groups)
    }

    /// Components moved into lanes `dst` of `t`; with `keep`, the other lanes of `t` hold
    /// values and stay as they are.
    fn gather_into(&mut self, t: Reg, comps: &[Comp], dst: &[u8], keep: bool) -> Option<()> {
        let groups = self.groups(comps, dst)?;
        if self.v14() {
            // A `mov` per group: in place, or one lane replicated.
            for (source, lanes) in groups {
                let text = match source {
                    Source::InPlace(r) if r == t => continue,
                    Source::InPlace(r) => r.name(),
                    Source::Splat(r, lane) => format!("{}.{}", r.name(), LANES[usize::from(lane)]),
                };
                self.code
                    .push(format!("mov {}{}, {text}", t.name(), mask_text(&lanes)));
            }
            return Some(());
        }
        // ps_1_1–1_3: the colour lanes group by group, the first moved (or spread with
        // a `dp3` against a basis vector, which fills every lane), the rest merged with
        // `lrp` against a mask of their lanes; the alpha lane by `mov`, `.z` and `.w`
        // read into it as they are.
        let alpha = dst.iter().position(|&l| l == 3).map(|k| comps[k]);
        let mut rgb: Vec<(Source, Vec<u8>)> = groups
            .into_iter()
            .filter_map(|(s, lanes)| {
                let lanes: Vec<u8> = lanes.into_iter().filter(|&l| l < 3).collect();
                (!lanes.is_empty()).then_some((s, lanes))
            })
            .collect();
        // Spreads that need a `dp3` first: the first of them goes straight into `t`.
        rgb.sort_by_key(|(s, _)| !matches!(s, Source::Splat(_, l) if *l < 3));
        let mut alpha_done = alpha.is_none();
        // The first group is moved, not merged, where no colour lane of `t` is kept (and
        // none is read).
        let reads_t = rgb
            .iter()
            .any(|(s, _)| matches!(s, Source::InPlace(r) | Source::Splat(r, _) if *r == t));
        let mut first = !keep || (0..3).all(|l| dst.contains(&l)) && !reads_t;
        // A `dp3` writes the alpha lane too, unless it is kept: not gathered, or already
        // in place in `t`.
        let alpha_in_t = alpha.is_some_and(|a| {
            self.p.constant(a).is_none()
                && self
                    .lane_of(a)
                    .is_some_and(|(r, lane, all)| r == t && (all || lane == 3))
        });
        let spread_mask = if keep && (!dst.contains(&3) || alpha_in_t) {
            ".xyz"
        } else {
            ""
        };
        for (source, lanes) in rgb {
            let text = match source {
                Source::InPlace(r) if r == t => continue,
                Source::InPlace(r) => r.name(),
                Source::Splat(r, 3) => format!("{}.w", r.name()),
                Source::Splat(r, lane) => {
                    let mut basis = [0.0f32; 3];
                    basis[usize::from(lane)] = 1.0;
                    let e = self.konst(&basis, &[0, 1, 2]);
                    if first {
                        // Every lane of `t`: the alpha lane too, if it is the same.
                        self.code.push(format!(
                            "dp3 {}{spread_mask}, {}, {}",
                            t.name(),
                            e.name(),
                            r.name()
                        ));
                        first = false;
                        if let (Some(a), "") = (alpha, spread_mask) {
                            alpha_done |= self.p.constant(a).is_none()
                                && self
                                    .lane_of(a)
                                    .is_some_and(|(ar, al, all)| ar == r && (al == lane || all));
                        }
                        continue;
                    }
                    let Some(s) = self.alloc() else {
                        let m = self.temps_message();
                        self.fail(m);
                        return None;
                    };
                    self.code
                        .push(format!("dp3 {}, {}, {}", s.name(), e.name(), r.name()));
                    self.release_reg(s);
                    s.name()
                }
            };
            if first {
                self.code.push(format!("mov {}.xyz, {text}", t.name()));
                first = false;
            } else {
                let mut mask = [0.0f32; 3];
                for &l in &lanes {
                    mask[usize::from(l)] = 1.0;
                }
                let m = self.konst(&mask, &[0, 1, 2]);
                self.code.push(format!(
                    "lrp {}.xyz, {}, {text}, {}",
                    t.name(),
                    m.name(),
                    t.name()
                ));
            }
        }
        if alpha_done {
            return Some(());
        }
        let c = alpha.unwrap();
        let source = match self.p.constant(c) {
            Some(v) => format!("{}.w", self.konst(&[v], &[3]).name()),
            None => {
                let (r, lane, all) = self.lane_of(c)?;
                match (all, lane) {
                    (true, _) | (false, 3) if r == t => return Some(()),
                    (true, _) => r.name(),
                    (false, 2) => format!("{}.z", r.name()),
                    (false, 3) => format!("{}.w", r.name()),
                    (false, lane) => {
                        let mut basis = [0.0f32; 3];
                        basis[usize::from(lane)] = 1.0;
                        let e = self.konst(&basis, &[0, 1, 2]);
                        let Some(s) = self.alloc() else {
                            let m = self.temps_message();
                            self.fail(m);
                            return None;
                        };
                        self.code
                            .push(format!("dp3 {}, {}, {}", s.name(), e.name(), r.name()));
                        self.release_reg(s);
                        format!("{}.w", s.name())
                    }
                }
            }
        };
        self.code.push(format!("mov {}.w, {source}", t.name()));
        Some(())
    }

    fn emit(&mut self, n: NodeId, live: u8) {
        let p = self.p;
        let node = p.node(n).clone();
        let mut positions: Vec<u8> = (0..node.width).filter(|&l| live & (1 << l) != 0).collect();
        if positions.is_empty() {
            return;
        }
        let mut srcs: Vec<Src> = node.args.iter().map(|a| self.resolve(a)).collect();
        // One-lane results fill every lane their instruction writes. Before ps_1_4, a
        // wider node of which one lane is read is computed so too: a lane elsewhere
        // than where it is read would need a swizzle the model has not.
        let mut scalar = node.width == 1;
        if !self.v14()
            && !scalar
            && positions.len() == 1
            && !matches!(node.op, Op::Dp3 | Op::Dp4)
            && !self.reads_in_place(&srcs, positions[0])
        {
            let l = usize::from(positions[0]);
            for s in &mut srcs {
                if s.comps.len() > 1 {
                    s.comps = vec![s.comps[l]];
                }
            }
            scalar = true;
            positions = vec![0];
        }
        let mut mask: Vec<u8> = if scalar && self.v14() {
            // One lane, read by replicating it: the alpha lanes stay free (they do not
            // outlive a phase).
            vec![0]
        } else if scalar {
            vec![0, 1, 2, 3]
        } else if self.v14() {
            positions.clone()
        } else {
            let rgb = positions.iter().any(|&l| l < 3);
            let a = positions.contains(&3);
            match (rgb, a) {
                (true, true) => vec![0, 1, 2, 3],
                (true, false) => vec![0, 1, 2],
                _ => vec![3],
            }
        };
        // The lanes each operand is read into: a one-lane result reads its one-lane
        // operands in every lane.
        let mut reads: Vec<u8> = if scalar {
            mask.clone()
        } else {
            positions.clone()
        };
        if let Some(d) = self.claim_r0(n, &positions) {
            // Operands matter at the lanes of the colour only.
            reads = if scalar {
                self.claimed_lanes.clone()
            } else {
                positions.clone()
            };
            mask = d;
        }
        let spread = |s: &Src, reads: &[u8]| -> Src {
            if s.comps.len() == 1 && reads.len() > 1 {
                Src {
                    comps: vec![s.comps[0]; reads.len()],
                    ..s.clone()
                }
            } else if s.comps.len() > reads.len() && !scalar {
                Src {
                    comps: reads.iter().map(|&l| s.comps[usize::from(l)]).collect(),
                    ..s.clone()
                }
            } else {
                s.clone()
            }
        };
        if node.op == Op::Mul && !self.plan.contains_key(&n) && self.as_modifier(n, &srcs) {
            return;
        }
        if matches!(node.op, Op::Mul | Op::Add | Op::Mad) {
            let ops: Vec<Src> = srcs.iter().map(|s| spread(s, &reads)).collect();
            if self.scaled(n, node.op, &ops, &srcs, &reads, &mask, scalar) {
                return;
            }
        }
        let (m, ops): (&str, Vec<Src>) = match node.op {
            Op::Mov | Op::Copy => ("mov", vec![spread(&srcs[0], &reads)]),
            Op::Neg => {
                let mut s = spread(&srcs[0], &reads);
                s.neg = !s.neg;
                ("mov", vec![s])
            }
            Op::Sat => ("mov_sat", vec![spread(&srcs[0], &reads)]),
            Op::Add => ("add", srcs.iter().map(|s| spread(s, &reads)).collect()),
            Op::Mul => ("mul", srcs.iter().map(|s| spread(s, &reads)).collect()),
            Op::Mad => ("mad", srcs.iter().map(|s| spread(s, &reads)).collect()),
            Op::Lrp => ("lrp", srcs.iter().map(|s| spread(s, &reads)).collect()),
            Op::Cmp => return self.choice(n, &srcs, &reads, &mask, scalar),
            Op::Dp3 | Op::Dp4 => return self.dot(n, &srcs),
            _ => {
                self.fail(format!(
                    "cannot map expression to pixel shader instruction set: {} has no {}",
                    self.profile.name(),
                    what(node.op)
                ));
                return;
            }
        };
        let mut operands = Vec::new();
        for s in &ops {
            let Some(o) = self.operand(s, &reads, &mask) else {
                return;
            };
            operands.push(o);
        }
        // One read of each component as the node reads it (a one-lane value spread over
        // the lanes is one read).
        for s in &srcs {
            self.release(&s.comps);
        }
        self.write(n, m, &mask, &operands, scalar);
    }

    /// `x * k` with k a power of two the model scales results by (2, 4, ½; in ps_1_4 8,
    /// ¼, ⅛) and x the value the last instruction wrote, read nowhere else: the scale
    /// becomes that instruction's modifier (`mad_x2`), and the product is where x was.
    /// Whether it did.
    fn as_modifier(&mut self, n: NodeId, srcs: &[Src]) -> bool {
        let Some((x, line)) = self.last_written else {
            return false;
        };
        let [a, b] = srcs else { return false };
        let (k, v) = match (self.values(a), self.values(b)) {
            (Some(k), None) => (k, b),
            (None, Some(k)) => (k, a),
            _ => return false,
        };
        if v.neg || k.iter().any(|&y| y != k[0]) || v.comps.iter().any(|c| c.node != x) {
            return false;
        }
        let modifier = match k[0] {
            2.0 => "_x2",
            4.0 => "_x4",
            0.5 => "_d2",
            8.0 if self.v14() => "_x8",
            0.25 if self.v14() => "_d4",
            0.125 if self.v14() => "_d8",
            _ => return false,
        };
        let reads_here = v.comps.len() as u32;
        if self.uses_left.get(&x).copied() != Some(reads_here) || line + 1 != self.code.len() {
            return false;
        }
        let text = &self.code[line];
        let Some((op, rest)) = text.split_once(' ') else {
            return false;
        };
        if op.contains('_')
            || ![
                "mov", "add", "sub", "mul", "mad", "lrp", "dp3", "dp4", "cnd", "cmp",
            ]
            .contains(&op)
        {
            return false;
        }
        // Lane for lane as x holds them, or x is one value in every lane.
        let home = self.homes[&x];
        let in_place = home.all
            || v.comps
                .iter()
                .enumerate()
                .all(|(i, c)| usize::from(c.lane) == i || v.comps.len() == 1);
        if !in_place {
            return false;
        }
        self.code[line] = format!("{op}{modifier} {rest}");
        self.uses_left.insert(x, 0);
        self.homes.insert(n, home);
        self.last_written = Some((n, line));
        true
    }

    /// Whether every operand has its lane `l` in lane `l` of a register, or is constant:
    /// then a value of lane `l` alone is computed there as it is.
    fn reads_in_place(&self, srcs: &[Src], l: u8) -> bool {
        srcs.iter().all(|s| {
            let c = if s.comps.len() == 1 {
                s.comps[0]
            } else {
                s.comps[usize::from(l)]
            };
            self.p.constant(c).is_some()
                || self
                    .lane_of(c)
                    .is_some_and(|(_, lane, all)| all || lane == l && s.comps.len() > 1)
        })
    }

    /// The values of `src` if it is all constants.
    fn values(&self, src: &Src) -> Option<Vec<f32>> {
        let v: Option<Vec<f32>> = src.comps.iter().map(|&c| self.p.constant(c)).collect();
        v.map(|v| {
            v.into_iter()
                .map(|x| if src.neg { -x } else { x })
                .collect()
        })
    }

    /// A constant operand of `values` read into lanes `read`.
    fn const_operand(&mut self, values: &[f32], read: &[u8], mask: &[u8]) -> Operand {
        if let Some((reg, lane)) = self.konst_splat(values, read, mask) {
            return Operand {
                reg,
                swz: [lane; 4],
                neg: false,
                modifier: Modifier::None,
            };
        }
        Operand {
            reg: self.konst(values, read),
            swz: [0, 1, 2, 3],
            neg: false,
            modifier: Modifier::None,
        }
    }

    /// Products and sums with a literal beyond [-1, 1], which no ps_1_x register holds:
    /// `2 * x` as `x + x`; otherwise the literal scaled into range and the result scaled
    /// back by the instruction's modifier (`_x2`, `_x4`, in ps_1_4 `_x8`): `k * x` as
    /// `mul_x4 x, k/4`, `x + k` as `mad_x2 x, 0.5, k/2`, `a * k + c` with both literal
    /// as `mad_x2 a, k/2, c/2`. Whether it wrote the node.
    #[allow(clippy::too_many_arguments)]
    fn scaled(
        &mut self,
        n: NodeId,
        op: Op,
        ops: &[Src],
        originals: &[Src],
        reads: &[u8],
        mask: &[u8],
        scalar: bool,
    ) -> bool {
        let values: Vec<Option<Vec<f32>>> = ops.iter().map(|s| self.values(s)).collect();
        let big =
            |v: &Option<Vec<f32>>| v.as_ref().is_some_and(|v| v.iter().any(|x| x.abs() > 1.0));
        if !values.iter().any(big) {
            return false;
        }
        let largest = values
            .iter()
            .flatten()
            .flatten()
            .fold(0.0f32, |m, x| m.max(x.abs()));
        let scales: &[u32] = if self.v14() { &[2, 4, 8] } else { &[2, 4] };
        let Some(&scale) = scales.iter().find(|&&s| largest <= s as f32) else {
            return false;
        };
        let f = scale as f32;
        let (m, plan): (String, Vec<Result<Vec<f32>, usize>>) = match (op, &values[..]) {
            // k * x, x * k
            (Op::Mul, [Some(k), None]) | (Op::Mul, [None, Some(k)]) => {
                let x = if values[0].is_none() { 0 } else { 1 };
                if k.iter().all(|&v| v == 2.0 || v == -2.0) && k.iter().all(|&v| v == k[0]) {
                    // x + x (negated for -2).
                    let mut src = ops[x].clone();
                    src.neg ^= k[0] < 0.0;
                    let Some(o) = self.operand(&src, reads, mask) else {
                        return true;
                    };
                    self.release(&originals[x].comps);
                    self.write(n, "add", mask, &[o.clone(), o], scalar);
                    return true;
                }
                (
                    format!("mul_x{scale}"),
                    vec![Err(x), Ok(k.iter().map(|v| v / f).collect())],
                )
            }
            // x + k, k + x
            (Op::Add, [Some(k), None]) | (Op::Add, [None, Some(k)]) => {
                let x = if values[0].is_none() { 0 } else { 1 };
                (
                    format!("mad_x{scale}"),
                    vec![
                        Err(x),
                        Ok(vec![1.0 / f; k.len()]),
                        Ok(k.iter().map(|v| v / f).collect()),
                    ],
                )
            }
            // a * k + c, k * a + c, both literals
            (Op::Mad, [None, Some(k), Some(c)]) | (Op::Mad, [Some(k), None, Some(c)]) => {
                let a = if values[0].is_none() { 0 } else { 1 };
                if k.iter().all(|&v| v == f) {
                    // a * 2 + c as add_x2 a, c/2: one literal read, not two.
                    return self.write_planned(
                        n,
                        &format!("add_x{scale}"),
                        ops,
                        originals,
                        &[Err(a), Ok(c.iter().map(|v| v / f).collect())],
                        reads,
                        mask,
                        scalar,
                    );
                }
                (
                    format!("mad_x{scale}"),
                    vec![
                        Err(a),
                        Ok(k.iter().map(|v| v / f).collect()),
                        Ok(c.iter().map(|v| v / f).collect()),
                    ],
                )
            }
            _ => return false,
        };
        self.write_planned(n, &m, ops, originals, &plan, reads, mask, scalar)
    }

    /// `m` of `plan`'s operands (`Err(i)`: operand `i` of `ops`; `Ok`: literals) into
    /// node `n`. Always true: the node is written, or the failure recorded.
    #[allow(clippy::too_many_arguments)]
    fn write_planned(
        &mut self,
        n: NodeId,
        m: &str,
        ops: &[Src],
        originals: &[Src],
        plan: &[Result<Vec<f32>, usize>],
        reads: &[u8],
        mask: &[u8],
        scalar: bool,
    ) -> bool {
        let mut operands = Vec::new();
        for p in plan {
            match p {
                Err(i) => {
                    let Some(o) = self.operand(&ops[*i], reads, mask) else {
                        return true;
                    };
                    operands.push(o);
                }
                Ok(v) => operands.push(self.const_operand(v, reads, mask)),
            }
        }
        for p in plan {
            if let Err(i) = p {
                self.release(&originals[*i].comps);
            }
        }
        self.write(n, m, mask, &operands, scalar);
        true
    }

    /// The result of `n` into a fresh register: `m dst.mask, operands`.
    fn write(&mut self, n: NodeId, m: &str, mask: &[u8], operands: &[Operand], scalar: bool) {
        let mut operands = operands.to_vec();
        if !self.read_ports(&mut operands) {
            return;
        }
        let operands = &operands[..];
        self.operands_done();
        // Saturated on its way: the instruction's _sat, and the saturation is its value.
        let sat = self.sat_of.get(&n).copied();
        let key = sat.unwrap_or(n);
        let m = match sat {
            Some(_) => format!("{m}_sat"),
            None => m.to_string(),
        };
        let reg = match self.merge_target(key, mask) {
            Some(r) => Some(r),
            None => self.result_reg(key),
        };
        let Some(reg) = reg else {
            let msg = self.temps_message();
            self.fail(msg);
            return;
        };
        let mask_text = if mask.len() == 4 {
            String::new()
        } else {
            mask_text(mask)
        };
        let ops: Vec<String> = operands.iter().map(Operand::text).collect();
        self.code
            .push(format!("{m} {}{mask_text}, {}", reg.name(), ops.join(", ")));
        self.last_written = Some((key, self.code.len() - 1));
        if sat.is_some() {
            // The value itself is read by its saturation alone, which is never computed.
            self.uses_left.insert(n, 0);
            self.homes.insert(
                n,
                Home {
                    reg,
                    lanes: [0, 1, 2, 3],
                    all: false,
                },
            );
        }
        if self.claimed == Some(key) {
            return self.placed_in_r0(key);
        }
        self.homes.insert(
            key,
            Home {
                reg,
                lanes: [0, 1, 2, 3],
                all: scalar && mask.len() == 4,
            },
        );
        if self.uses_left.get(&key).copied().unwrap_or(0) == 0 {
            self.release_reg(reg);
        }
    }

    /// A choice per lane, `s >= 0 ? a : b`: `cmp` (ps_1_2 and later); in ps_1_1, `cnd`
    /// on r0.a, which holds 0.5 − s, the same for every lane.
    fn choice(&mut self, n: NodeId, srcs: &[Src], reads: &[u8], mask: &[u8], scalar: bool) {
        let reads = reads.to_vec();
        let pick = |s: &Src| -> Src {
            if s.comps.len() == 1 {
                return Src {
                    comps: vec![s.comps[0]; reads.len()],
                    ..s.clone()
                };
            }
            Src {
                comps: reads.iter().map(|&l| s.comps[usize::from(l)]).collect(),
                ..s.clone()
            }
        };
        let (s, a, b) = (pick(&srcs[0]), pick(&srcs[1]), pick(&srcs[2]));
        let uniform = s.comps.iter().all(|&c| c == s.comps[0]);
        let r0_free = if self.claimed == Some(n) {
            // The choice goes to r0's colour lanes; its alpha lane is free until the
            // colour's alpha is written.
            !self.placed[3]
        } else {
            !(self.homes.values().any(|h| h.reg == Reg::Temp(0))
                && self
                    .pool
                    .iter()
                    .any(|&(r, taken)| r == Reg::Temp(0) && taken))
        };
        // ps_1_2 and later: `cmp`. In ps_1_2–1_3, where it takes two slots, a choice by
        // one condition for every lane is `cnd` on r0.a where r0 is free (one slot, and
        // the instruction that puts the condition there), as d3dx9_31 chooses.
        let by_cnd = self.profile.minor < 4 && uniform && r0_free;
        if self.profile.minor >= 2 && !by_cnd {
            let mut operands = Vec::new();
            for x in [&s, &a, &b] {
                let Some(o) = self.operand(x, &reads, mask) else {
                    return;
                };
                operands.push(o);
            }
            for x in srcs {
                self.release(&x.comps);
            }
            return self.write(n, "cmp", mask, &operands, scalar);
        }
        // ps_1_1: one condition for every lane.
        if !uniform {
            let name = self.profile.name();
            self.fail(format!("unable to emulate vector conditionals in {name}: its cnd chooses every lane by one value (r0.a)"));
            return;
        }
        if !r0_free {
            let msg = self.temps_message();
            self.fail(msg);
            return;
        }
        // r0.a = 0.5 - s: more than 0.5 where s < 0.
        let one = Src {
            comps: vec![s.comps[0]],
            neg: !s.neg,
            abs: false,
        };
        let biased = !one.neg
            && self
                .modified
                .get(&one.comps[0].node)
                .is_some_and(|(_, m)| *m == Modifier::Bias);
        if biased {
            // 0.5 + (x - 0.5) is x itself: computed straight into r0.a where it was
            // computed last and nothing else reads it, else moved there.
            let x = self.through_modifier(one.comps[0]);
            let here = srcs[0]
                .comps
                .iter()
                .filter(|&&c| self.through_modifier(c).node == x.node)
                .count() as u32;
            if !self.compute_in_r0_alpha(x, here) {
                let src = Src {
                    comps: vec![x],
                    neg: false,
                    abs: false,
                };
                let Some(xo) = self.operand(&src, &[3], &[3]) else {
                    return;
                };
                self.code.push(format!("mov r0.w, {}", xo.text()));
            }
        } else {
            let Some(so) = self.operand(&one, &[3], &[3]) else {
                return;
            };
            let half = self.konst(&[0.5], &[3]);
            self.code
                .push(format!("add r0.w, {}, {}.w", so.text(), half.name()));
        }
        self.operands_done();
        self.release(&srcs[0].comps);
        // r0 holds the condition until `cnd` reads it.
        let r0_slot = self.pool.iter().position(|&(r, _)| r == Reg::Temp(0));
        let r0_was = r0_slot.map(|i| std::mem::replace(&mut self.pool[i].1, true));
        let mut operands = vec![Operand {
            reg: Reg::Temp(0),
            swz: [3; 4],
            neg: false,
            modifier: Modifier::None,
        }];
        for x in [&b, &a] {
            let Some(o) = self.operand(x, &reads, mask) else {
                return;
            };
            operands.push(o);
        }
        for x in &srcs[1..] {
            self.release(&x.comps);
        }
        if let (Some(i), Some(was)) = (r0_slot, r0_was) {
            self.pool[i].1 = was;
        }
        self.write(n, "cnd", mask, &operands, scalar);
    }

    /// The instruction that computed `x` last, written to r0.a instead, when nothing but
    /// the `reads` of this choice take `x` and its alpha lane holds it (ps_1_1's `cnd`
    /// condition). Whether it was.
    fn compute_in_r0_alpha(&mut self, x: Comp, reads: u32) -> bool {
        let Some((n, line)) = self.last_written else {
            return false;
        };
        if n != x.node || line + 1 != self.code.len() || self.uses_left.get(&n) != Some(&reads) {
            return false;
        }
        if !self
            .lane_of(x)
            .is_some_and(|(_, lane, all)| all || lane == 3)
        {
            return false;
        }
        let text = self.code[line].clone();
        let Some((op, rest)) = text.split_once(' ') else {
            return false;
        };
        let Some((_, operands)) = rest.split_once(", ") else {
            return false;
        };
        let base = op.split('_').next().unwrap_or(op);
        if !["mov", "add", "sub", "mul", "mad", "lrp", "cnd"].contains(&base) {
            return false;
        }
        self.code[line] = format!("{op} r0.w, {operands}");
        true
    }

    /// `dp3`/`dp4` of two vectors, in every lane; ps_1_1 has no `dp4`: `dp3` and a
    /// `mad` of the w lanes.
    fn dot(&mut self, n: NodeId, srcs: &[Src]) {
        let op = self.p.node(n).op;
        let lanes: Vec<u8> = if op == Op::Dp3 {
            vec![0, 1, 2]
        } else {
            vec![0, 1, 2, 3]
        };
        let full = [0u8, 1, 2, 3];
        let one = if self.v14() { vec![0] } else { full.to_vec() };
        let planned = self.coord_plan.get(&n).map(|&(_, lane)| lane);
        // Before ps_1_4 a dot product runs in the colour pipe: it writes r0's colour
        // lanes, so it is not placed in r0's alpha alone.
        let alpha_only = !self.v14()
            && self
                .plan
                .get(&self.plan_key(n))
                .is_some_and(|p| !p.mask.iter().any(|&l| l < 3));
        let mask = match planned {
            Some(lane) => vec![lane],
            None if alpha_only => one,
            None => self.claim_r0(n, &[0]).unwrap_or(one),
        };
        let srcs_read: Vec<Src> = srcs
            .iter()
            .map(|s| Src {
                comps: s.comps[..lanes.len()].to_vec(),
                ..s.clone()
            })
            .collect();
        // A literal beyond [-1, 1], which no ps_1_x register holds, scaled into range
        // and the product scaled back: dot(x, k) as `dp3_x2 x, k/2`.
        let two_steps = op == Op::Dp4 && self.profile.minor < 2;
        let scale = match self.dot_scale(&srcs_read) {
            Some(f) if f > 1 && !two_steps => f,
            _ => 1,
        };
        let mut operands = Vec::new();
        for s in &srcs_read {
            let o = match self.values(s) {
                Some(v) if scale > 1 => {
                    let v: Vec<f32> = v.iter().map(|x| x / scale as f32).collect();
                    self.const_operand(&v, &lanes, &full)
                }
                _ => match self.operand(s, &lanes, &full) {
                    Some(o) => o,
                    None => return,
                },
            };
            operands.push(o);
        }
        for s in srcs {
            self.release(&s.comps);
        }
        if two_steps {
            self.operands_done();
            let Some(reg) = self.result_reg(n) else {
                let m = self.temps_message();
                self.fail(m);
                return;
            };
            let (a, b) = (&operands[0], &operands[1]);
            let dst = format!("{}{}", reg.name(), mask_text(&mask));
            self.code
                .push(format!("dp3 {dst}, {}, {}", a.text(), b.text()));
            let w = |o: &Operand| Operand {
                swz: [3; 4],
                ..o.clone()
            };
            self.code.push(format!(
                "mad {dst}, {}, {}, {}",
                w(a).text(),
                w(b).text(),
                reg.name()
            ));
            if self.claimed == Some(n) {
                return self.placed_in_r0(n);
            }
            self.homes.insert(
                n,
                Home {
                    reg,
                    lanes: full,
                    all: true,
                },
            );
            if self.uses_left.get(&n).copied().unwrap_or(0) == 0 {
                self.release_reg(reg);
            }
            return;
        }
        let m = if op == Op::Dp3 { "dp3" } else { "dp4" };
        let m = match scale {
            1 => m.to_string(),
            f => format!("{m}_x{f}"),
        };
        self.write(n, &m, &mask, &operands, true);
        if let (Some(lane), Some(home)) = (planned, self.homes.get_mut(&n)) {
            home.lanes = [lane; 4];
            home.all = false;
        }
    }

    /// The scale a dot product's literal operands need to fit [-1, 1] (1 if they do),
    /// or `None` if the model's result modifiers cannot make it up.
    fn dot_scale(&self, srcs: &[Src]) -> Option<u32> {
        let largest = srcs
            .iter()
            .filter_map(|s| self.values(s))
            .flatten()
            .fold(0.0f32, |m, x| m.max(x.abs()));
        let scales: &[u32] = if self.v14() {
            &[1, 2, 4, 8]
        } else {
            &[1, 2, 4]
        };
        scales.iter().copied().find(|&s| largest <= s as f32)
    }

    /// The colour into r0, all four lanes: what is not there yet.
    fn output(&mut self) {
        let Some(o) = self.p.outputs.first() else {
            return;
        };
        let mut src = self.resolve(&o.comps);
        while src.comps.len() < 4 {
            let last = *src.comps.last().unwrap();
            src.comps.push(last);
        }
        let full = [0u8, 1, 2, 3];
        if let Some(op) = self.modified_operand(&src, &full, &full) {
            match op {
                Some(op) => self.code.push(format!("mov r0, {}", op.text())),
                None if self.error.is_none() => {
                    self.fail(
                        "cannot read the pixel colour into r0 through its source modifier".into(),
                    );
                }
                None => {}
            }
            return;
        }
        if self.placed.iter().any(|&p| p) {
            let (lanes, comps): (Vec<u8>, Vec<Comp>) = full
                .iter()
                .filter(|&&k| !self.placed[usize::from(k)])
                .map(|&k| (k, src.comps[usize::from(k)]))
                .unzip();
            if !lanes.is_empty() {
                let _ = self.gather_into(Reg::Temp(0), &comps, &lanes, true);
            }
            return;
        }
        if let Some(op) = self.direct(&src, &full, &full) {
            if op.reg == Reg::Temp(0) && op.swz == full && !src.neg {
                return;
            }
            self.code.push(format!("mov r0, {}", op.text()));
            return;
        }
        // Gathered straight into r0, unless r0 holds one of the values gathered
        // elsewhere than at its lane of the colour: what r0 holds in place stays (the
        // alpha of a texture read into r0 beside colour lanes computed elsewhere).
        let in_r0 = |c: Comp| {
            self.lane_of(c)
                .filter(|&(r, _, _)| r == Reg::Temp(0))
                .map(|(_, lane, all)| (lane, all))
        };
        let reads_r0 = src.comps.iter().any(|&c| in_r0(c).is_some());
        let in_place = src
            .comps
            .iter()
            .zip(0u8..)
            .all(|(&c, k)| in_r0(c).map_or(true, |(lane, all)| all || lane == k));
        if !src.neg && in_place {
            let _ = self.gather_into(Reg::Temp(0), &src.comps, &full, reads_r0);
            return;
        }
        let Some(op) = self.operand(&src, &full, &full) else {
            return;
        };
        self.code.push(format!("mov r0, {}", op.text()));
    }
}

/// Lanes a swizzle does not read repeat the last one it does.
fn fill(swz: &mut [u8; 4], read: &[u8]) {
    let mut last = None;
    for l in 0..4u8 {
        if read.contains(&l) {
            last = Some(swz[usize::from(l)]);
        } else if let Some(v) = last {
            swz[usize::from(l)] = v;
        }
    }
    if let Some(&f) = read.first() {
        let v = swz[usize::from(f)];
        for l in 0..f {
            swz[usize::from(l)] = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::behaviour::same_behaviour;
    use super::super::compile::{compile, Options};

    /// `source` compiled for `profile`: it fits the model (the assembler checks), and
    /// behaves as our ps_2_0 code of it. The instructions, one a line.
    fn fits(source: &str, profile: &str) -> String {
        let options = |profile: &str| Options {
            profile: profile.into(),
            ..Options::default()
        };
        let ours = compile("t.hlsl", source, None, &options(profile))
            .map_err(|f| f.render())
            .unwrap();
        let sm2 = compile("t.hlsl", source, None, &options("ps_2_0"))
            .map_err(|f| f.render())
            .unwrap();
        same_behaviour(&sm2.bytecode, &ours.bytecode, 32, 0x5E1).unwrap();
        ours.asm
    }

    /// Arithmetic instructions of a listing (a co-issued pair is one).
    fn slots(asm: &str) -> usize {
        asm.lines()
            .filter(|l| !l.starts_with("ps_") && !l.starts_with("def ") && !l.starts_with("tex"))
            .filter(|l| !l.starts_with('+'))
            .count()
    }

    #[test]
    fn lerp_by_a_mask_of_zeros_and_ones_gathers_lanes() {
        // Lanes of one uniform spread and reordered, as the decompiler writes a swizzle
        // ps_1_x has not: dp3 against a basis vector and lrp against a mask, as d3dx9_31.
        let spread = "float4 u;\nfloat4 main() : COLOR\n{\n    float4 r = 0;\n    \
                      r.xyz = lerp(u.yyy, u.zzz, float3(0.0, 1.0, 0.0));\n    \
                      r.xyz = lerp(r.xyz, u.xxx, float3(0.0, 0.0, 1.0));\n    \
                      r.w = u.w;\n    return r;\n}\n";
        for profile in ["ps_1_1", "ps_1_3"] {
            let asm = fits(spread, profile);
            assert!(slots(&asm) <= 5, "{asm}");
        }
        // Lanes where they are already: one lrp.
        let in_place = "float4 main(float4 a : COLOR0, float4 b : COLOR1) : COLOR\n{\n    \
                        return lerp(a, b, float4(1.0, 0.0, 1.0, 0.0));\n}\n";
        let asm = fits(in_place, "ps_1_1");
        assert_eq!(slots(&asm), 1, "{asm}");
        // A lane of b that is a literal (the mask's 1 over a zero).
        let literal = "float4 a;\nfloat4 main() : COLOR\n{\n    \
                       return lerp(a.yyyy, float4(0.0, 0.0, 0.0, 0.0), float4(0.0, 0.0, 1.0, 0.0));\n}\n";
        fits(literal, "ps_1_1");
    }

    #[test]
    fn a_choice_of_lanes_is_computed_in_the_lanes_it_is_read_at() {
        // What the decompiler writes for `cnd r0.xyw, r1, c0, c1`: the condition's
        // negation and the choice compute .xyw where the sample and the constants have
        // them, one `cmp`, not three lanes at .xyz each moved to its place (12 slots).
        let source = "float4 c0 : register(c0);\nfloat4 c1 : register(c1);\n\
                      sampler2D s1 : register(s1);\n\
                      float4 main(float4 tc1 : TEXCOORD1) : COLOR0\n{\n    \
                      float4 r0 = 0;\n    \
                      r0.xyw = (tex2D(s1, tc1.xy).xyw > 0.5 ? c0.xyw : c1.xyw);\n    \
                      return r0;\n}\n";
        let asm = fits(source, "ps_1_4");
        assert!(slots(&asm) <= 3, "{asm}");
        assert!(asm.contains("cmp r0.xyw,"), "{asm}");
    }

    #[test]
    fn a_discard_by_a_coordinate_set_is_texkill_beside_samples_of_other_sets() {
        let source = "sampler2D s1 : register(s1);\n\
                      float4 main(float4 tc0 : TEXCOORD0, float4 tc1 : TEXCOORD1) : COLOR0\n\
                      {\n    clip(tc0.xyz);\n    return tex2D(s1, tc1.xy);\n}\n";
        for profile in ["ps_1_1", "ps_1_3"] {
            let asm = fits(source, profile);
            // In the order of the stages, as d3dx9_31 writes them.
            assert!(asm.contains("texkill t0\ntex t1\n"), "{asm}");
        }
    }

    #[test]
    fn colour_lanes_computed_beside_a_texture_alpha_in_r0_go_straight_into_r0() {
        // The decompiled text of `texld r0, t0 … lrp r0.xyz, … lrp_sat r0.y, …` (the
        // d3d9_decompile fuzz target's find): r0's alpha is the texture's, which only the
        // colour reads from here; the lerps are computed into r0 beside it, as in the
        // original (3 slots), not elsewhere and moved lane by lane (7).
        let source = "float4 c1 : register(c1);\nsampler2D s0 : register(s0);\n\
                      sampler2D s1 : register(s1);\n\
                      float4 main(float4 tc0 : TEXCOORD0, float4 tc1 : TEXCOORD1) : COLOR0\n\
                      {\n    float4 r0 = tex2D(s0, tc0.xy);\n    float4 r1 = tex2D(s1, tc1.xy);\n    \
                      float4 r2 = ((2 * r0) >= 0 ? r1 : float4(1.0, 0.0, 0.0, 1.0));\n    \
                      r0.xyz = lerp(float3(1.0, 0.0, 0.0), r2.xyz, c1.xyz);\n    \
                      r0.y = saturate(lerp(-r1.y, r2.w, c1.y));\n    return r0;\n}\n";
        let asm = fits(source, "ps_1_4");
        assert_eq!(slots(&asm), 3, "{asm}");
        assert!(
            asm.contains("lrp r0.xz,") && asm.contains("lrp_sat r0.y,"),
            "{asm}"
        );
        // Colour lanes of several values gathered around an alpha computed into r0
        // where it is: the alpha stays, the colour moved and merged beside it.
        let around = "float4 u;\nfloat4 main(float4 a : COLOR0, float4 b : COLOR1) : COLOR\n\
                      {\n    float4 m = a * b;\n    float4 r;\n    r.xyz = u.yyy + m.xyz;\n    \
                      r.w = m.w;\n    r.y = m.x * u.x;\n    return r;\n}\n";
        for profile in ["ps_1_1", "ps_1_3", "ps_1_4"] {
            fits(around, profile);
        }
    }

    #[test]
    fn colour_lanes_gathered_beside_a_placed_alpha_are_moved_not_merged() {
        // r0.a is computed in place; the colour lanes then come whole from t0: a `mov`,
        // co-issued, not an `lrp` over r0.rgb, which nothing wrote.
        let source = "sampler2D s0 : register(s0);\nsampler2D s1 : register(s1);\n\
                      float4 main(float4 tc0 : TEXCOORD0, float4 tc1 : TEXCOORD1) : COLOR0\n\
                      {\n    float4 r0 = 0;\n    r0.xyz = tex2D(s0, tc0.xy).xyz;\n    \
                      r0.w = tex2D(s0, tc0.xy).w * tex2D(s1, tc1.xy).w;\n    return r0;\n}\n";
        for profile in ["ps_1_1", "ps_1_3"] {
            let asm = fits(source, profile);
            assert_eq!(slots(&asm), 1, "{asm}");
        }
    }

    #[test]
    fn a_condition_against_one_half_reads_its_value_biased() {
        // `e > 0.5` tests e - 0.5, which is e_bias: not computed apart. cnd (one condition
        // for every lane) tests r0.a > 0.5, so e itself is computed into r0.a; cmp reads
        // e_bias.
        let source = "float4 a;\nfloat4 main(float4 c : COLOR0) : COLOR\n{\n    \
                      return (c.w * a.w + 0.5 > 0.5) ? c : a;\n}\n";
        for profile in ["ps_1_1", "ps_1_3"] {
            let asm = fits(source, profile);
            assert!(asm.contains("mad r0.w, v0.w, c0.w, "), "{asm}");
            assert!(asm.contains("cnd "), "{asm}");
            assert!(slots(&asm) <= 3, "{asm}");
        }
        // A condition per lane: cmp (ps_1_2 and later), reading e_bias.
        let per_lane = "float4 a;\nfloat4 main(float4 c : COLOR0) : COLOR\n{\n    \
                        return (c * a + 0.5 > 0.5) ? c : a;\n}\n";
        let asm = fits(per_lane, "ps_1_3");
        assert!(asm.contains("cmp r0, -r1_bias, "), "{asm}");
        assert_eq!(slots(&asm), 2, "{asm}");
        // Where e is read elsewhere too, it is moved there.
        let shared = "float4 a;\nfloat4 main(float4 c : COLOR0) : COLOR\n{\n    \
                      float e = c.w * a.w + 0.5;\n    return ((e > 0.5) ? c : a) * e;\n}\n";
        fits(shared, "ps_1_1");
    }

    #[test]
    fn a_saturated_coordinate_set_is_what_texcoord_reads() {
        // texcoord clamps to [0, 1]: no mov_sat after it.
        let source = "float4 main(float4 tc0 : TEXCOORD0, float4 c : COLOR0) : COLOR\n{\n    \
                      return float4(saturate(tc0.xyz), 1) * c;\n}\n";
        for profile in ["ps_1_1", "ps_1_3"] {
            let asm = fits(source, profile);
            assert!(!asm.contains("_sat"), "{asm}");
            assert!(slots(&asm) <= 2, "{asm}");
        }
    }

    #[test]
    fn a_lerp_from_a_literal_or_a_negation_is_one_lrp() {
        // lerp(a, b, t) is t * (b + -a) + a: with a literal, -a is a literal of its own;
        // with a = -y, -a is y. Each was an `add` and a `mad` (the d3d9_decompile fuzz
        // target's text of `lrp r0.xyz, c1, r2, c0` and `lrp_sat r0.y, c1, r2, -r1` took 9
        // slots of ps_1_4's 8).
        let source = "sampler2D s0 : register(s0);\nsampler2D s1 : register(s1);\n\
                      float4 k : register(c1);\n\
                      float4 main(float2 a : TEXCOORD0, float2 b : TEXCOORD1) : COLOR\n{\n    \
                      float4 x = tex2D(s0, a);\n    float4 y = tex2D(s1, b);\n    \
                      float4 r = x;\n    r.xyz = lerp(float3(1.0, 0.0, 0.0), x.xyz, k.xyz);\n    \
                      r.w = saturate(lerp(-y.w, x.w, k.w));\n    return r;\n}\n";
        for profile in ["ps_1_1", "ps_1_4"] {
            let asm = fits(source, profile);
            let arithmetic: Vec<&str> = asm
                .lines()
                .map(|l| l.trim_start_matches("+ "))
                .filter(|l| !l.starts_with("def") && !l.starts_with("tex") && !l.starts_with("ps_"))
                .collect();
            assert_eq!(
                arithmetic.iter().filter(|l| l.starts_with("lrp")).count(),
                2,
                "{profile}\n{asm}"
            );
            assert!(arithmetic.len() <= 3, "{profile}\n{asm}");
        }
    }

    #[test]
    fn a_doubled_value_beside_a_computed_sum_is_doubled_not_clamped() {
        // A `def` of 2 reads as 1 in ps_1_x: `2 * col + t * k` was `mad r, c0.x, v0, r`
        // with c0.x = 2 (the decompiled text of d3dx9_31's `v0_x2` compiled so).
        let source = "sampler2D s0 : register(s0);\nfloat4 k : register(c1);\n\
                      float4 main(float2 uv : TEXCOORD0, float4 col : COLOR0) : COLOR\n{\n    \
                      float4 t = tex2D(s0, uv);\n    return 2 * col + t * k - 1;\n}\n";
        for profile in ["ps_1_1", "ps_1_3", "ps_1_4"] {
            let asm = fits(source, profile);
            let wide = asm
                .lines()
                .filter(|l| l.trim_start().starts_with("def "))
                .flat_map(|l| l.split(", ").skip(1))
                .any(|v| v.trim().parse::<f32>().is_ok_and(|v| v.abs() > 1.0));
            assert!(!wide, "{profile}: a literal the card reads clamped\n{asm}");
            if profile == "ps_1_4" {
                assert!(asm.contains("v0_x2"), "{asm}");
            }
        }
    }

    #[test]
    fn a_modifier_of_a_modified_value_computes_the_inner_one() {
        // 2 * (2 * x - 1) - 1: the outer _bx2 reads a register, so the inner one is
        // computed (it was read through a modifier too, and the colour was left unwritten).
        let source = "sampler2D s2 : register(s2);\n\
                      float4 main(float4 t : TEXCOORD2) : COLOR0\n{\n    \
                      float4 x = tex2D(s2, t.xy);\n    \
                      return x * (2 * (2 * x - 1) - 1);\n}\n";
        for profile in ["ps_1_1", "ps_1_3", "ps_1_4"] {
            let asm = fits(source, profile);
            assert!(asm.contains("_bx2"), "{asm}");
            assert!(slots(&asm) <= 3, "{asm}");
        }
        let colour = "sampler2D s0 : register(s0);\n\
                      float4 main(float4 t : TEXCOORD0) : COLOR0\n{\n    \
                      return 2 * (2 * tex2D(s0, t.xy) - 1) - 1;\n}\n";
        for profile in ["ps_1_1", "ps_1_4"] {
            fits(colour, profile);
        }
    }
}
