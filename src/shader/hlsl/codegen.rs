//! The code graph to Direct3D 9 asm and a constant table: registers for uniforms as
//! Microsoft's compiler places them, literals packed into `def`s, every value a lane of a
//! temporary register, operands read with the swizzles the model allows (gathered with
//! `mov`s where it allows none), `neg` and `abs` folded into source modifiers.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;

use super::ir::{Comp, Condition, LoopCount, NodeId, Op, Program, Region, TexKind, Uniform};
use super::lower::Profile;
use super::token::Loc;
use super::types::{Base, Dim, Ty};
use crate::shader::d3d9::bytecode::{ShaderKind, Version};
use crate::shader::d3d9::ctab::{
    Class, Constant, ConstantTable, Member, ParamType, RegisterSet, TypeInfo,
};
use crate::shader::d3d9::limits;
use crate::shader::d3d9::registers::RegisterType;

/// What the code generator made: asm text for the assembler and the constant table.
#[derive(Debug, Clone)]
pub struct Generated {
    pub asm: String,
    pub table: ConstantTable,
}

/// A register of the shader as asm spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Reg {
    Temp(u32),
    Const(u32),
    Input(u32),
    Texture(u32),
    Pos,
    Face,
    Sampler(u32),
    /// `c#[a0.x]`: a constant register at the offset a lane of the address register
    /// holds.
    RelConst(u32, u8),
    /// `c#[aL]`: a constant register at the offset the loop counter holds.
    RelLoop(u32),
}

impl Reg {
    fn name(self) -> String {
        match self {
            Reg::Temp(n) => format!("r{n}"),
            Reg::Const(n) => format!("c{n}"),
            Reg::Input(n) => format!("v{n}"),
            Reg::Texture(n) => format!("t{n}"),
            Reg::Pos => "vPos".into(),
            Reg::Face => "vFace".into(),
            Reg::Sampler(n) => format!("s{n}"),
            Reg::RelConst(n, l) => format!("c{n}[a0.{}]", LANES[usize::from(l)]),
            Reg::RelLoop(n) => format!("c{n}[aL]"),
        }
    }
}

/// Where a node's lanes live: lane `i` of the node is lane `lanes[i]` of `reg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Place {
    reg: Reg,
    lanes: [u8; 4],
    /// For a one-lane node written with a wider mask (a `dp4`, an `rcp` replicate their
    /// result): every lane that holds it.
    bcast: u8,
}

/// Where a node should go so that its consumer reads it without a `mov`: a register
/// shared with the other parts of the same value (`group`), at these lanes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hint {
    group: u32,
    lanes: [u8; 4],
    bcast: u8,
}

/// An operand after `neg`/`abs`/`mov` nodes are looked through.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Src {
    pub comps: Vec<Comp>,
    pub neg: bool,
    pub abs: bool,
}

/// A source operand as the instruction reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Operand {
    reg: Reg,
    swz: [u8; 4],
    neg: bool,
    abs: bool,
}

impl Operand {
    /// Temporary `r` read into destination lanes `dst`, each lane where it is read.
    fn in_temp(r: u32, dst: &[u8]) -> Operand {
        let mut swz = [0, 1, 2, 3];
        fill_swizzle(&mut swz, dst);
        Operand {
            reg: Reg::Temp(r),
            swz,
            neg: false,
            abs: false,
        }
    }

    fn text(&self) -> String {
        let swz = if matches!(self.reg, Reg::Sampler(_)) {
            String::new()
        } else {
            swizzle_text(self.swz)
        };
        let abs = if self.abs { "_abs" } else { "" };
        let neg = if self.neg { "-" } else { "" };
        format!("{neg}{}{abs}{swz}", self.reg.name())
    }

    fn file(&self) -> Option<RegisterType> {
        Some(match self.reg {
            Reg::Temp(_) => RegisterType::Temp,
            Reg::Const(_) | Reg::RelConst(..) | Reg::RelLoop(_) => RegisterType::Const,
            Reg::Input(_) => RegisterType::Input,
            Reg::Texture(_) => RegisterType::AddrOrTexture,
            _ => return None,
        })
    }
}

const LANES: [char; 4] = ['x', 'y', 'z', 'w'];

pub(super) fn mask_text(lanes: &[u8]) -> String {
    let mut m: Vec<u8> = lanes.to_vec();
    m.sort();
    m.dedup();
    if m == [0, 1, 2, 3] {
        return String::new();
    }
    let s: String = m.iter().map(|&l| LANES[usize::from(l)]).collect();
    format!(".{s}")
}

fn swizzle_text(swz: [u8; 4]) -> String {
    if swz == [0, 1, 2, 3] {
        return String::new();
    }
    // fxc prints the shortest spelling that reads the same: a replicate as one letter,
    // trailing repeats of the last dropped.
    let mut n = 4;
    while n > 1 && swz[n - 1] == swz[n - 2] {
        n -= 1;
    }
    let s: String = swz[..n].iter().map(|&l| LANES[usize::from(l)]).collect();
    format!(".{s}")
}

/// What the model lets a source swizzle be, given the lanes the instruction reads.
pub(super) fn swizzle_ok(profile: Profile, swz: [u8; 4], read: &[u8]) -> bool {
    if !profile.pixel || profile.major >= 3 || profile.minor > 0 {
        return true;
    }
    let agrees = |allowed: [u8; 4]| {
        read.iter()
            .all(|&l| swz[usize::from(l)] == allowed[usize::from(l)])
    };
    let allowed = [
        [0, 1, 2, 3],
        [1, 2, 0, 3],
        [2, 0, 1, 3],
        [3, 2, 1, 0],
        [0; 4],
        [1; 4],
        [2; 4],
        [3; 4],
    ];
    allowed.into_iter().any(agrees)
}

struct Gen<'p> {
    p: &'p Program,
    profile: Profile,
    places: HashMap<NodeId, Place>,
    /// Lanes of each temporary in use.
    busy: Vec<[bool; 4]>,
    /// Lanes held by more than one value (a loop's carried value in the lanes of the
    /// value it starts from): how many holders more than one; a lane is free once the
    /// last lets it go.
    shared: HashMap<(u32, u8), u32>,
    /// Every node the shader computes, to see what reads a value later.
    needed: Vec<NodeId>,
    /// Uses left of each node, to free its lanes after the last.
    uses_left: HashMap<NodeId, u32>,
    defs: Vec<[Option<f32>; 4]>,
    /// The `def` the literal operands of the instruction being emitted share, so that it
    /// reads one constant register and needs no `mov` for the read ports.
    def_pref: Option<usize>,
    /// The constant registers uniforms take or reserve, in order (see [`Gen::def_reg`]).
    uniform_consts: Vec<u32>,
    /// The constant registers uniforms take for what the shader reads, and literal
    /// arrays, in order: those of a `register()` binding past them are the literals'
    /// where the model has no other room.
    read_consts: Vec<u32>,
    /// The model's float constant registers.
    const_file: u32,
    code: Vec<String>,
    errors: Vec<String>,
    /// The sincos constants of shader model 2, once made.
    sincos_consts: Option<(u32, u32)>,
    hints: HashMap<NodeId, Hint>,
    /// The lanes of each node something reads.
    live: HashMap<NodeId, u8>,
    /// Lanes filled for the instruction being written, free once it is.
    pending_free: Vec<(u32, Vec<u8>)>,
    /// The register each hint group went to.
    group_reg: HashMap<u32, u32>,
    next_group: u32,
    /// The region each node runs in.
    regions: Vec<Region>,
    /// The `b#` register of each `bool` uniform a kept branch tests.
    bool_regs: HashMap<u32, u32>,
    /// The `i#` register of each loop count: an `int` uniform's, or a `defi`'s.
    int_regs: HashMap<u32, u32>,
    /// `defi`s: register, and count, start and step (a `rep`'s start and step are 0).
    defis: Vec<(u32, [u32; 3])>,
    /// The first `i#` register no uniform takes.
    int_base: u32,
    /// The first register of each uniform in use.
    uniform_regs: HashMap<u32, u32>,
    /// What each lane of `a0` holds, if known here.
    a0: [Option<(Comp, bool, bool)>; 4],
}

/// `target` is the profile as the command line named it (`ps_2_b`), the table's target.
pub fn generate(
    program: &Program,
    profile: Profile,
    target: &str,
    flags: u32,
) -> Result<Generated, Vec<(Loc, String)>> {
    let mut fixed = program.clone();
    super::legal::legalize(&mut fixed, profile);
    loop_counters(&mut fixed, profile);
    prepare_loops(&mut fixed);
    super::fuse::constants_outward(&mut fixed);
    super::fuse::mads(&mut fixed);
    super::fuse::doubles(&mut fixed);
    fix_ports(&mut fixed, profile);
    share_gathers(&mut fixed, profile);
    let p = &fixed;
    let (needed, live) = live_nodes(p, profile);
    // Uniforms in use and their registers.
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
            // A run-time index may name any register of the uniform, up to the last
            // its value can reach (a loop's counter: Microsoft's table counts the
            // registers that far, and places the next uniform after them).
            Op::Relative { var, offset } => {
                let all = p.uniforms[var as usize].registers;
                let reach = highest(p, p.node(n).args[0][0], 0)
                    .and_then(|m| offset.checked_add(m)?.checked_add(1))
                    .map_or(all, |r| r.min(all));
                let e = used_offsets.entry(var).or_insert(0);
                *e = (*e).max(reach);
            }
            Op::LoopRelative { var, .. } => {
                let all = p.uniforms[var as usize].registers;
                let e = used_offsets.entry(var).or_insert(0);
                *e = (*e).max(all);
            }
            _ => {}
        }
    }
    // The int uniforms that count loops, and how many of their registers are read.
    let mut counts: Vec<(u32, u32)> = Vec::new();
    for &n in &needed {
        if let Op::After { lp, .. } = p.node(n).op {
            if let LoopCount::Uniform { var, index } = p.loops[lp as usize].count {
                if used_offsets.contains_key(&var) {
                    let u = &p.uniforms[var as usize];
                    return Err(vec![(
                        u.loc,
                        format!(
                            "'{}' counts a loop and is read as a value too: it would need an integer and a float register, and shaderfs gives a constant one",
                            u.name
                        ),
                    )]);
                }
                widen(&mut counts, var, index);
            }
        }
    }
    // The branches kept, and the `bool` uniforms they test.
    let mut kept: Vec<u32> = needed
        .iter()
        .filter_map(|&n| match p.node(n).op {
            Op::Joined { br } => Some(br),
            _ => None,
        })
        .collect();
    kept.sort_unstable();
    kept.dedup();
    let mut bools: Vec<(u32, u32)> = Vec::new();
    for &br in &kept {
        if let Condition::Bool { var, index, .. } = p.branches[br as usize].condition {
            widen(&mut bools, var, index);
        }
    }
    let loop_counts: Vec<u32> = counts.iter().map(|&(var, _)| var).collect();
    let (uniform_regs, mut table_constants, uniform_consts) =
        allocate_uniforms(p, &used_offsets, &loop_counts);
    let (int_regs, int_base) = allocate_set(
        p,
        &counts,
        |u| u.int_bound,
        RegisterSet::INT4,
        &mut table_constants,
    );
    let (bool_regs, _) = allocate_set(
        p,
        &bools,
        |u| u.bool_bound,
        RegisterSet::BOOL,
        &mut table_constants,
    );
    let mut read_consts: Vec<u32> = table_constants
        .iter()
        .filter(|c| c.register_set == RegisterSet::FLOAT4)
        .flat_map(|c| {
            let start = u32::from(c.register_index);
            start..start + u32::from(c.register_count)
        })
        .chain(
            p.uniforms
                .iter()
                .enumerate()
                .filter(|(_, u)| u.literal)
                .filter_map(|(var, u)| {
                    let base = *uniform_regs.get(&(var as u32))?;
                    Some(base..base + u.registers.max(1))
                })
                .flatten(),
        )
        .collect();
    read_consts.sort_unstable();
    read_consts.dedup();
    let const_file = limits::limits(model_version(profile))
        .and_then(|l| l.count(RegisterType::Const))
        .unwrap_or(u32::MAX);
    let mut g = Gen {
        p,
        profile,
        places: HashMap::new(),
        busy: Vec::new(),
        shared: HashMap::new(),
        needed: needed.clone(),
        uses_left: HashMap::new(),
        defs: Vec::new(),
        def_pref: None,
        read_consts,
        const_file,
        uniform_consts,
        code: Vec::new(),
        errors: Vec::new(),
        sincos_consts: None,
        hints: HashMap::new(),
        live: HashMap::new(),
        pending_free: Vec::new(),
        group_reg: HashMap::new(),
        next_group: 0,
        regions: regions(p, profile, &needed),
        bool_regs,
        int_regs,
        defis: Vec::new(),
        int_base,
        uniform_regs: uniform_regs.clone(),
        a0: [None; 4],
    };
    g.live = live;
    // Registers of inputs, uniforms and samplers.
    let mut dcls = Vec::new();
    let input_regs = input_registers(p, profile);
    for &n in &needed {
        let node = p.node(n);
        let place = match node.op {
            Op::Input(i) => Some(input_regs[i as usize]),
            Op::Uniform { var, offset } => Some(Reg::Const(uniform_regs[&var] + offset)),
            Op::Sampler(var) => Some(Reg::Sampler(uniform_regs[&var])),
            _ => None,
        };
        if let Some(reg) = place {
            g.places.insert(
                n,
                Place {
                    reg,
                    lanes: [0, 1, 2, 3],
                    bcast: 0,
                },
            );
        }
    }
    // How often each node is read.
    for &n in &needed {
        for src in g.live_srcs(n).1 {
            for c in src.comps {
                *g.uses_left.entry(c.node).or_default() += 1;
            }
        }
    }
    for o in &p.outputs {
        for c in g.resolve(&o.comps).comps {
            *g.uses_left.entry(c.node).or_default() += 1;
        }
    }
    for k in &p.kills {
        for c in g.resolve(k).comps {
            *g.uses_left.entry(c.node).or_default() += 1;
        }
    }
    let mut kept_loops: Vec<u32> = needed
        .iter()
        .filter_map(|&n| match p.node(n).op {
            Op::After { lp, .. } => Some(lp),
            _ => None,
        })
        .collect();
    kept_loops.sort_unstable();
    kept_loops.dedup();
    let tests = kept
        .iter()
        .flat_map(|&br| condition_comps(p, br))
        .chain(kept_loops.iter().flat_map(|&lp| exit_comps(p, lp)));
    for c in tests {
        for c in g.resolve(&[c]).comps {
            *g.uses_left.entry(c.node).or_default() += 1;
        }
    }
    let needed = outputs_last(p, profile, &g.regions, needed);
    g.hint(&needed);
    g.emit_list(&needed, Region::Top);
    for k in &p.kills {
        g.kill(k);
    }
    let mut outputs: Vec<(String, u32, Vec<Comp>)> = p
        .outputs
        .iter()
        .map(|o| (o.usage.clone(), o.index, o.comps.clone()))
        .collect();
    outputs.sort_by(|a, b| {
        (a.0 != "POSITION", a.0.clone(), a.1).cmp(&(b.0 != "POSITION", b.0.clone(), b.1))
    });
    let mut out_dcls = Vec::new();
    let mut next_o = 0;
    for (usage, index, comps) in &outputs {
        g.output(usage, *index, comps, &mut out_dcls, &mut next_o);
    }
    if !g.errors.is_empty() {
        return Err(g.errors.into_iter().map(|e| (Loc::default(), e)).collect());
    }
    super::peep::copies(&mut g.code, profile);
    // Declarations: inputs read, samplers used.
    let mut used_inputs: BTreeMap<u32, [bool; 4]> = BTreeMap::new();
    for &n in &needed {
        for src in g.live_srcs(n).1 {
            g.note_input_lanes(&src.comps, &mut used_inputs);
        }
    }
    for o in &p.outputs {
        g.note_input_lanes(&o.comps, &mut used_inputs);
    }
    for k in &p.kills {
        g.note_input_lanes(k, &mut used_inputs);
    }
    // What kept branches and loops test.
    for c in kept
        .iter()
        .flat_map(|&br| condition_comps(p, br))
        .chain(kept_loops.iter().flat_map(|&lp| exit_comps(p, lp)))
    {
        g.note_input_lanes(&[c], &mut used_inputs);
    }
    for (&i, lanes) in &used_inputs {
        let input = &p.inputs[i as usize];
        let reg = input_regs[i as usize];
        let lanes: Vec<u8> = (0..4).filter(|&l| lanes[usize::from(l)]).collect();
        // vs_1_1 declares whole registers, as the legacy compiler does.
        let whole = profile.pixel && profile.major < 3 && matches!(reg, Reg::Input(_))
            || profile.is_vs_1_1();
        let mask = if whole {
            String::new()
        } else {
            mask_text(&lanes)
        };
        let line = match reg {
            Reg::Pos => format!("dcl vPos{mask}"),
            Reg::Face => "dcl vFace".to_string(),
            _ if profile.pixel && profile.major < 3 => {
                let c = if input.centroid { "_centroid" } else { "" };
                format!("dcl{c} {}{mask}", reg.name())
            }
            _ => format!(
                "dcl_{}{} {}{mask}",
                usage_name(&input.usage),
                input.index,
                reg.name()
            ),
        };
        dcls.push((reg, line));
    }
    dcls.sort();
    let mut samplers = Vec::new();
    for (var, &base) in &uniform_regs {
        let u = &p.uniforms[*var as usize];
        if u.is_sampler {
            let dim = match &u.ty {
                Ty::Sampler(d) | Ty::Texture(d) => *d,
                Ty::Array(t, _) => match **t {
                    Ty::Sampler(d) => d,
                    _ => Dim::D2,
                },
                _ => Dim::D2,
            };
            let kind = match dim {
                Dim::Cube => "cube",
                Dim::D3 => "volume",
                _ => "2d",
            };
            samplers.push((base, format!("dcl_{kind} s{base}")));
        }
    }
    samplers.sort();
    let version = format!(
        "{}_{}",
        if profile.pixel { "ps" } else { "vs" },
        match (profile.major, profile.minor) {
            (1, _) => "1_1",
            (2, 0) => "2_0",
            (2, _) => "2_x",
            _ => "3_0",
        }
    );
    let mut asm = String::new();
    let _ = writeln!(asm, "{version}");
    for (i, d) in g.defs.iter().enumerate() {
        def_line(&mut asm, g.def_reg(i), d.iter().map(|v| v.unwrap_or(0.0)));
    }
    let mut literals: Vec<(u32, u32)> = uniform_regs
        .iter()
        .filter(|(&var, _)| p.uniforms[var as usize].literal)
        .map(|(&var, &base)| (base, var))
        .collect();
    literals.sort_unstable();
    for (base, var) in literals {
        let u = &p.uniforms[var as usize];
        let values = u.default.as_deref().unwrap_or_default();
        let dwords = default_dwords(&u.ty, false, values, RegisterSet::FLOAT4);
        for (k, reg) in dwords.chunks(4).enumerate() {
            def_line(
                &mut asm,
                base + k as u32,
                reg.iter().map(|&b| f32::from_bits(b)),
            );
        }
    }
    for (r, [count, start, step]) in &g.defis {
        let _ = writeln!(asm, "defi i{r}, {count}, {start}, {step}, 0");
    }
    for (_, d) in &dcls {
        let _ = writeln!(asm, "{d}");
    }
    for d in &out_dcls {
        let _ = writeln!(asm, "{d}");
    }
    for (_, s) in &samplers {
        let _ = writeln!(asm, "{s}");
    }
    for line in &g.code {
        let _ = writeln!(asm, "{line}");
    }
    let table = constant_table(profile, target, flags, table_constants);
    Ok(Generated { asm, table })
}

/// The constant table of a shader compiled for `profile` (`target` as the caller named
/// it), holding `constants`.
pub(super) fn constant_table(
    profile: Profile,
    target: &str,
    flags: u32,
    constants: Vec<Constant>,
) -> ConstantTable {
    let version = crate::shader::d3d9::bytecode::Version {
        kind: if profile.pixel {
            crate::shader::d3d9::bytecode::ShaderKind::Pixel
        } else {
            crate::shader::d3d9::bytecode::ShaderKind::Vertex
        },
        major: profile.major,
        minor: profile.minor,
    };
    ConstantTable {
        creator: format!("shaderfs {} HLSL compiler", env!("CARGO_PKG_VERSION")),
        target: Some(target.to_ascii_lowercase()),
        version: version.token(),
        // fxc records its compile flags, NO_PRESHADER among them.
        flags: 0x100 | flags,
        constants,
    }
}

fn usage_name(usage: &str) -> String {
    match usage {
        "POSITION" => "position".into(),
        "COLOR" => "color".into(),
        "TEXCOORD" => "texcoord".into(),
        "NORMAL" => "normal".into(),
        "TANGENT" => "tangent".into(),
        "BINORMAL" => "binormal".into(),
        "BLENDWEIGHT" => "blendweight".into(),
        "BLENDINDICES" => "blendindices".into(),
        "PSIZE" => "psize".into(),
        "FOG" => "fog".into(),
        "DEPTH" => "depth".into(),
        "SAMPLE" => "sample".into(),
        "TESSFACTOR" => "tessfactor".into(),
        "POSITIONT" => "positiont".into(),
        other => other.to_ascii_lowercase(),
    }
}

/// A float as fxc prints it in a `def`: shortest text that reads back to the same bits,
/// -0 included.
pub(super) fn format_float(v: f32) -> String {
    if !v.is_finite() {
        // An infinity or NaN that constants fold to (`1 / z` with `static const float z
        // = 0`): fxc refuses it ("NaN and infinity literals not allowed", X4579), but the
        // decompiled text of an asm shader that divides by a literal 0 must compile back.
        // No decimal reads back as one; its bits do, which the assembler takes as they are.
        return format!("{:#010x}", v.to_bits());
    }
    if v == 0.0 && v.is_sign_negative() {
        return "-0".into();
    }
    if v == v.trunc() && v.abs() < 1e7 {
        return format!("{}", v as i64);
    }
    let s = format!("{v}");
    if s.parse::<f32>() == Ok(v) {
        s
    } else {
        format!("{v:e}")
    }
}

/// The input registers: ps_2_x's v# for colours and t# for texture coordinates; v# in
/// order of first use otherwise; vPos and vFace.
fn input_registers(p: &Program, profile: Profile) -> Vec<Reg> {
    let mut next = 0;
    p.inputs
        .iter()
        .map(|i| match i.usage.as_str() {
            "VPOS" => Reg::Pos,
            "VFACE" => Reg::Face,
            "COLOR" if profile.pixel && profile.major < 3 => Reg::Input(i.index),
            _ if profile.pixel && profile.major < 3 => Reg::Texture(i.index),
            _ => {
                next += 1;
                Reg::Input(next - 1)
            }
        })
        .collect()
}

/// Registers of the uniforms in use, as Microsoft's compiler gives them: those the source
/// bound by `register()` where it said, the rest in order of declaration in the first
/// registers free; and the table's entries, sorted by name. Returns also the constant
/// registers uniforms take or reserve, in order: the `def`s go in the others.
pub(super) fn allocate_uniforms(
    p: &Program,
    used: &HashMap<u32, u32>,
    counts: &[u32],
) -> (HashMap<u32, u32>, Vec<Constant>, Vec<u32>) {
    let mut regs = HashMap::new();
    let mut taken_c: HashSet<u32> = HashSet::new();
    let mut taken_s: HashSet<u32> = HashSet::new();
    // A register() reserves the whole variable, used or not; but not for an `int` that
    // counts a loop, which lives in an integer register.
    for (var, u) in p.uniforms.iter().enumerate() {
        let Some(b) = u.bound else { continue };
        if counts.contains(&(var as u32)) {
            continue;
        }
        if used.contains_key(&(var as u32)) {
            regs.insert(var as u32, b);
        }
        let set = if u.is_sampler {
            &mut taken_s
        } else {
            &mut taken_c
        };
        for r in b..b + u.registers.max(1) {
            set.insert(r);
        }
    }
    // The rest by size, the largest first, then in order of declaration.
    let mut unbound: Vec<(u32, u32)> = p
        .uniforms
        .iter()
        .enumerate()
        .filter_map(|(var, u)| {
            let var = var as u32;
            let count = *used.get(&var)?;
            (!regs.contains_key(&var) && !u.literal).then_some((
                var,
                if u.is_sampler {
                    u.registers.max(1)
                } else {
                    count
                },
            ))
        })
        .collect();
    unbound.sort_by_key(|&(var, count)| (std::cmp::Reverse(count), var));
    for (var, count) in unbound {
        let u = &p.uniforms[var as usize];
        let set = if u.is_sampler {
            &mut taken_s
        } else {
            &mut taken_c
        };
        let mut base = 0;
        while (base..base + count).any(|r| set.contains(&r)) {
            base += 1;
        }
        for r in base..base + count {
            set.insert(r);
        }
        regs.insert(var, base);
    }
    // Arrays of literals read at a run-time index, after the uniforms, as fxc places
    // them (their `def`s are written with the others).
    for (var, u) in p.uniforms.iter().enumerate() {
        if u.literal && used.contains_key(&(var as u32)) {
            let base = taken_c.iter().max().map_or(0, |m| m + 1);
            taken_c.extend(base..base + u.registers);
            regs.insert(var as u32, base);
        }
    }
    let mut taken_c: Vec<u32> = taken_c.into_iter().collect();
    taken_c.sort_unstable();
    let mut constants: Vec<Constant> = regs
        .iter()
        .filter(|(&var, _)| !p.uniforms[var as usize].literal)
        .map(|(&var, &index)| {
            let u = &p.uniforms[var as usize];
            let count = if u.is_sampler {
                u.registers.max(1)
            } else {
                used[&var]
            };
            let set = if u.is_sampler {
                RegisterSet::SAMPLER
            } else {
                RegisterSet::FLOAT4
            };
            let reserved = u.bound.filter(|_| !u.kept).map_or(0, |b| b * 4 + 2);
            table_entry(u, set, index, count, reserved)
        })
        .collect();
    constants.sort_by(|a, b| a.name.cmp(&b.name));
    (regs, constants, taken_c)
}

/// Registers of one of the integer register sets: of the `int` uniforms that count loops
/// (`i#`), or of the `bool` uniforms kept branches test (`b#`). Those the source bound go
/// where it said, the rest in order of declaration in the first free; each is an entry of
/// the table (kept sorted by name, the `FLOAT4` entry of a uniform before its `BOOL` one,
/// as fxc lists a `bool` both tested and read). Returns the registers
/// and the first one free for `defi`s.
fn allocate_set(
    p: &Program,
    vars: &[(u32, u32)],
    bound: impl Fn(&Uniform) -> Option<u32>,
    set: RegisterSet,
    constants: &mut Vec<Constant>,
) -> (HashMap<u32, u32>, u32) {
    let mut regs = HashMap::new();
    let mut taken: HashSet<u32> = HashSet::new();
    let mut vars = vars.to_vec();
    vars.sort_unstable();
    for &(var, count) in &vars {
        if let Some(b) = bound(&p.uniforms[var as usize]) {
            regs.insert(var, b);
            taken.extend(b..b + count);
        }
    }
    for &(var, count) in &vars {
        if regs.contains_key(&var) {
            continue;
        }
        let r = (0..)
            .find(|r| (*r..r + count).all(|k| !taken.contains(&k)))
            .unwrap_or(0);
        taken.extend(r..r + count);
        regs.insert(var, r);
    }
    for &(var, count) in &vars {
        let r = regs[&var];
        let u = &p.uniforms[var as usize];
        let mut entry = table_entry(u, set, r, count, 0);
        if set == RegisterSet::BOOL {
            entry.reserved = bound(u)
                .filter(|_| !u.kept)
                .map_or(0, |b| (b * 4 + 2) as u16);
        }
        constants.push(entry);
    }
    // fxc lists a uniform's FLOAT4 entry before its BOOL one.
    let key = |c: &Constant| (c.name.clone(), c.register_set != RegisterSet::FLOAT4);
    constants.sort_by_key(key);
    (regs, taken.iter().max().map_or(0, |m| m + 1))
}

/// `def c{reg}, x, y, z, w` of `values`, a line of `asm`.
pub(super) fn def_line(asm: &mut String, reg: u32, values: impl Iterator<Item = f32>) {
    let v: Vec<String> = values.map(format_float).collect();
    let _ = writeln!(asm, "def c{reg}, {}", v.join(", "));
}

/// `vars` with uniform `var` reading at least `index + 1` of its registers (a register
/// a component, as fxc places bools and the ints that count loops).
fn widen(vars: &mut Vec<(u32, u32)>, var: u32, index: u32) {
    match vars.iter_mut().find(|(v, _)| *v == var) {
        Some((_, count)) => *count = (*count).max(index + 1),
        None => vars.push((var, index + 1)),
    }
}

/// A uniform's entry in the constant table: its registers, type and default value.
pub(super) fn table_entry(
    u: &Uniform,
    set: RegisterSet,
    index: u32,
    count: u32,
    reserved: u32,
) -> Constant {
    Constant {
        name: u.name.clone(),
        register_set: set,
        register_index: index as u16,
        register_count: count as u16,
        reserved: reserved as u16,
        type_info: type_info(&u.ty, u.row_major),
        default_value: u.default.as_ref().map(|d| match set {
            // One DWORD per bool, true as all bits set, as fxc writes it.
            RegisterSet::BOOL => d
                .iter()
                .map(|&v| if v != 0.0 { u32::MAX } else { 0 })
                .collect(),
            _ => default_dwords(&u.ty, u.row_major, d, set),
        }),
        own_type: false,
    }
}

fn type_info(ty: &Ty, row_major: bool) -> TypeInfo {
    let param = |b: Base| match b {
        Base::Bool => ParamType::BOOL,
        Base::Int | Base::Uint => ParamType::INT,
        _ => ParamType::FLOAT,
    };
    let simple = |class, param_type, rows, columns| TypeInfo {
        class,
        param_type,
        rows,
        columns,
        elements: 1,
        members: Vec::new(),
    };
    match ty {
        Ty::Scalar(b) => simple(Class::SCALAR, param(*b), 1, 1),
        Ty::Vector(b, n) => simple(Class::VECTOR, param(*b), 1, u16::from(*n)),
        Ty::Matrix(b, r, c) => simple(
            if row_major {
                Class::MATRIX_ROWS
            } else {
                Class::MATRIX_COLUMNS
            },
            param(*b),
            u16::from(*r),
            u16::from(*c),
        ),
        Ty::Array(t, n) => {
            // Arrays of arrays are one array of all their elements to the table.
            let mut inner = type_info(t, row_major);
            inner.elements = inner.elements.saturating_mul(*n as u16);
            inner
        }
        Ty::Struct(s) => {
            // A derived struct's base is its first member, `$super`, as fxc lists it.
            let own = match &s.base {
                Some(b) => b.fields.len(),
                None => 0,
            };
            let mut members: Vec<Member> = Vec::new();
            if let Some(b) = &s.base {
                members.push(Member {
                    name: "$super".into(),
                    type_info: type_info(&Ty::Struct(b.clone()), row_major),
                });
            }
            members.extend(s.fields[own..].iter().map(|f| Member {
                name: f.name.clone(),
                type_info: type_info(&f.ty, f.row_major.unwrap_or(row_major)),
            }));
            TypeInfo {
                class: Class::STRUCT,
                param_type: ParamType::VOID,
                rows: 1,
                columns: s.fields.iter().map(|f| f.ty.components() as u16).sum(),
                elements: 1,
                members,
            }
        }
        Ty::Texture(d) => simple(
            Class::OBJECT,
            ParamType(match d {
                Dim::Generic => 5,
                Dim::D1 => 6,
                Dim::D2 => 7,
                Dim::D3 => 8,
                Dim::Cube => 9,
            }),
            1,
            4,
        ),
        Ty::Sampler(d) => simple(
            Class::OBJECT,
            ParamType(match d {
                Dim::Generic => 10,
                Dim::D1 => 11,
                Dim::D2 => 12,
                Dim::D3 => 13,
                Dim::Cube => 14,
            }),
            1,
            1,
        ),
        _ => simple(Class::OBJECT, ParamType(5), 1, 1),
    }
}

/// A default value in register layout: four DWORDs per register, rows (or columns) each
/// in a register, elements and members each starting one.
fn default_dwords(ty: &Ty, row_major: bool, values: &[f32], set: RegisterSet) -> Vec<u32> {
    /// One register of `used` lanes. Ints in integer registers are integers, the lanes
    /// past the value's (., ., 1, 0): a loop's count, start and step as fxc writes them
    /// ({ 8, 0, 1, 0 }).
    fn register(int: bool, used: usize, lane: impl Fn(usize) -> f32) -> [u32; 4] {
        let mut reg = [0u32; 4];
        for (i, r) in reg.iter_mut().enumerate().take(used) {
            *r = if int {
                lane(i) as i32 as u32
            } else {
                lane(i).to_bits()
            };
        }
        if int && used < 3 {
            reg[2] = 1;
        }
        reg
    }
    fn walk(
        ty: &Ty,
        row_major: bool,
        int: bool,
        values: &[f32],
        at: &mut usize,
        out: &mut Vec<u32>,
    ) {
        let value = |k: usize| values.get(k).copied().unwrap_or(0.0);
        let base = *at;
        match ty {
            Ty::Scalar(_) | Ty::Vector(..) => {
                let n = ty.components();
                out.extend_from_slice(&register(int, n, |i| value(base + i)));
                *at += n;
            }
            Ty::Matrix(_, r, c) => {
                let (r, c) = (usize::from(*r), usize::from(*c));
                let (outer, inner) = if row_major { (r, c) } else { (c, r) };
                for o in 0..outer {
                    out.extend_from_slice(&register(int, inner, |i| {
                        let (row, col) = if row_major { (o, i) } else { (i, o) };
                        value(base + row * c + col)
                    }));
                }
                *at += r * c;
            }
            Ty::Array(t, n) => {
                for _ in 0..*n {
                    walk(t, row_major, int, values, at, out);
                }
            }
            Ty::Struct(s) => {
                for f in &s.fields {
                    walk(
                        &f.ty,
                        f.row_major.unwrap_or(row_major),
                        int,
                        values,
                        at,
                        out,
                    );
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(
        ty,
        row_major,
        set == RegisterSet::INT4,
        values,
        &mut 0,
        &mut out,
    );
    out
}

/// Vertex shaders: a kept loop whose counter (a whole number from a constant start, up
/// by 1 each iteration, with no early exit, and no kept loop inside it, as `aL` is the
/// innermost loop's) indexes uniform arrays runs as `loop aL`, and those reads become
/// `c#[aL]` ([`Op::LoopRelative`]; a constant added to the counter moves the register),
/// as fxc writes them. The counter is then carried only where something else reads it.
fn loop_counters(p: &mut Program, profile: Profile) {
    if profile.pixel {
        return;
    }
    for lp in 0..p.loops.len() as u32 {
        let l = &p.loops[lp as usize];
        let nested = p
            .loops
            .iter()
            .any(|o| !o.after.is_empty() && p.within(o.parent, Region::Loop(lp)));
        if l.exit_first.is_some() || l.exit_last.is_some() || l.after.is_empty() || nested {
            continue;
        }
        let counter = (0..l.carried.len()).find_map(|k| {
            let (init, next) = &l.carried[k];
            let start = p.constant(*init.first()?)?;
            if init.len() != 1
                || l.integral[k] & 1 == 0
                || start != start.trunc()
                || !(0.0..=255.0).contains(&start)
            {
                return None;
            }
            let c = Comp {
                node: l.carried_nodes[k],
                lane: 0,
            };
            let step = p.node(next[0].node);
            let lane = usize::from(next[0].lane);
            let up = step.op == Op::Add
                && [(0, 1), (1, 0)].iter().any(|&(a, b)| {
                    step.args[a][lane] == c && p.constant(step.args[b][lane]) == Some(1.0)
                });
            up.then_some((c, start as u32))
        });
        let Some((counter, start)) = counter else {
            continue;
        };
        // A count from an `int` uniform counts from 0 (D3DX sets an int register to
        // (n, 0, 1, 0)).
        if matches!(l.count, LoopCount::Uniform { .. }) && start != 0 {
            continue;
        }
        let mut any = false;
        for n in 0..p.nodes.len() {
            let Op::Relative { var, offset } = p.nodes[n].op else {
                continue;
            };
            let addr = p.nodes[n].args[0][0];
            let moved = if addr == counter {
                Some(0.0)
            } else {
                let a = p.node(addr.node);
                let lane = usize::from(addr.lane);
                (a.op == Op::Add)
                    .then(|| {
                        [(0, 1), (1, 0)].iter().find_map(|&(x, y)| {
                            (a.args[x][lane] == counter)
                                .then(|| p.constant(a.args[y][lane]))
                                .flatten()
                        })
                    })
                    .flatten()
            };
            let Some(m) = moved.filter(|m| *m == m.trunc()) else {
                continue;
            };
            let Ok(offset) = u32::try_from(i64::from(offset) + m as i64) else {
                continue;
            };
            p.nodes[n].op = Op::LoopRelative { lp, var, offset };
            p.nodes[n].args.clear();
            any = true;
        }
        if any {
            p.loops[lp as usize].al_start = Some(start);
        }
    }
}

/// The chunks of kept loops that are needed, made roots: a chunk is needed when code
/// after the loop reads it, or the body does (its [`Op::Carried`] node). Each needed
/// chunk's [`Op::After`] then reads the start and end values of every needed chunk of
/// its loop (start and end of its own first, then the others' in pairs), so that all
/// of them, and the whole body, come before any of the loop's results in dependency
/// order.
fn prepare_loops(p: &mut Program) {
    if p.loops.is_empty() {
        return;
    }
    let mut seen: HashSet<NodeId> = HashSet::new();
    let mut needed_after: Vec<NodeId> = Vec::new();
    let mut stack: Vec<NodeId> = p.root_comps().flatten().map(|c| c.node).collect();
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        let node = p.node(n);
        if let Op::Carried { lp, index } | Op::After { lp, index } = node.op {
            let a = p.loops[lp as usize].after[index as usize];
            if !needed_after.contains(&a) {
                needed_after.push(a);
                stack.push(a);
                stack.extend(exit_comps(p, lp).iter().map(|c| c.node));
            }
        }
        stack.extend(node.args.iter().flatten().map(|c| c.node));
        if let Op::Joined { br } = node.op {
            stack.extend(condition_comps(p, br).iter().map(|c| c.node));
        }
    }
    needed_after.sort_unstable();
    for lp in 0..p.loops.len() {
        let l = &p.loops[lp];
        let live: Vec<usize> = (0..l.after.len())
            .filter(|&k| needed_after.binary_search(&l.after[k]).is_ok())
            .collect();
        for &k in &live {
            let (init, next) = p.loops[lp].carried[k].clone();
            let mut args = vec![init, next];
            for &j in &live {
                if j != k {
                    let (init, next) = p.loops[lp].carried[j].clone();
                    args.push(init);
                    args.push(next);
                }
            }
            let a = p.loops[lp].after[k];
            p.nodes[a as usize].args = args;
        }
    }
    for a in needed_after {
        let w = p.node(a).width;
        p.roots.extend(Program::lanes(a, w));
    }
}

/// Where each needed node runs (the top level for every other), as a global code motion
/// places it: no earlier than the values it reads are made (inside a loop whose carried
/// values it reads, inside an arm whose branch's results it reads), no later than where
/// all its readers are (an arm only its readers in that arm need, the code after a loop
/// or branch for its results), and between the two in as few loops as it can be, as deep
/// in branch arms as its readers let it: a loop's body computes only what depends on the
/// loop, and a branch's arm what only the arm needs. A gradient (`texld`, `dsx`, …) of a
/// computed value stays out of arms that pixels may take apart.
fn regions(p: &Program, profile: Profile, order: &[NodeId]) -> Vec<Region> {
    let mut early = vec![Region::Top; p.nodes.len()];
    let deeper = |a: Region, b: Region| if p.depth(b) > p.depth(a) { b } else { a };
    for &n in order {
        let node = p.node(n);
        early[n as usize] = match node.op {
            Op::Carried { lp, .. } | Op::LoopRelative { lp, .. } => Region::Loop(lp),
            Op::After { lp, .. } => p.loops[lp as usize].parent,
            Op::Joined { br } => p.branches[br as usize].parent,
            _ => node
                .args
                .iter()
                .flat_map(|a| resolve_in(p, profile, a).comps)
                .fold(Region::Top, |r, c| deeper(r, early[c.node as usize])),
        };
    }
    let mut late: Vec<Option<Region>> = vec![None; p.nodes.len()];
    let meet = |late: &mut Vec<Option<Region>>, comps: &[Comp], at: Region| {
        for c in resolve_in(p, profile, comps).comps {
            let l = &mut late[c.node as usize];
            *l = Some(match *l {
                Some(r) => p.common(r, at),
                None => at,
            });
        }
    };
    for comps in p.root_comps() {
        meet(&mut late, comps, Region::Top);
    }
    let mut out = vec![Region::Top; p.nodes.len()];
    for &n in order.iter().rev() {
        let node = p.node(n);
        let place = match node.op {
            Op::Carried { .. } | Op::After { .. } | Op::Joined { .. } | Op::LoopRelative { .. } => {
                early[n as usize]
            }
            _ => {
                let first = early[n as usize];
                let mut best = late[n as usize].unwrap_or(first);
                let mut r = best;
                while r != first {
                    let Some(up) = p.parent(r) else { break };
                    r = up;
                    if p.loop_depth(r) < p.loop_depth(best) {
                        best = r;
                    }
                }
                if gradient_of_temp(p, profile, n) {
                    while best != first && p.in_dynamic_arm(best) {
                        best = p.parent(best).unwrap_or(Region::Top);
                    }
                }
                best
            }
        };
        out[n as usize] = place;
        match node.op {
            Op::After { lp, .. } => {
                let l = &p.loops[lp as usize];
                for (i, a) in node.args.iter().enumerate() {
                    let at = if i % 2 == 0 {
                        l.parent
                    } else {
                        Region::Loop(lp)
                    };
                    meet(&mut late, a, at);
                }
                for c in exit_comps(p, lp) {
                    meet(&mut late, &[c], Region::Loop(lp));
                }
            }
            Op::Joined { br } => {
                meet(&mut late, &node.args[0], Region::Arm(br, true));
                meet(&mut late, &node.args[1], Region::Arm(br, false));
                let b = &p.branches[br as usize];
                if let Condition::Compare(_, x, y) = b.condition {
                    meet(&mut late, &[x], b.parent);
                    meet(&mut late, &[y], b.parent);
                }
            }
            _ => {
                for a in &node.args {
                    meet(&mut late, a, place);
                }
            }
        }
    }
    out
}

/// A gradient instruction (`texld`, `texldp`, `texldb`, `dsx`, `dsy`) whose operand is
/// computed: pixels that skip an arm around it leave its neighbours' gradients undefined.
fn gradient_of_temp(p: &Program, profile: Profile, n: NodeId) -> bool {
    let node = p.node(n);
    if !matches!(
        node.op,
        Op::Tex(TexKind::Plain | TexKind::Proj | TexKind::Bias) | Op::Dsx | Op::Dsy
    ) {
        return false;
    }
    let src = resolve_in(p, profile, &node.args[0]);
    let first = src.comps[0].node;
    let as_is = src.comps.iter().all(|&c| p.constant(c).is_some())
        || src.comps.iter().all(|c| c.node == first)
            && matches!(p.node(first).op, Op::Input(_) | Op::Uniform { .. });
    !as_is
}

/// The values a branch's condition compares (none for a `bool` uniform's).
fn condition_comps(p: &Program, br: u32) -> Vec<Comp> {
    match p.branches[br as usize].condition {
        Condition::Compare(_, x, y) => vec![x, y],
        Condition::Bool { .. } => Vec::new(),
    }
}

/// A `break_comp` made, and what to free and release once it is written.
struct Break {
    line: String,
    free: Vec<(u32, Vec<u8>)>,
    release: Vec<Src>,
}

/// The values a test compares.
fn test_comps(test: Condition) -> Vec<Comp> {
    match test {
        Condition::Compare(_, x, y) => vec![x, y],
        Condition::Bool { .. } => Vec::new(),
    }
}

/// The values a kept loop's exits compare.
fn exit_comps(p: &Program, lp: u32) -> Vec<Comp> {
    let l = &p.loops[lp as usize];
    [l.exit_first, l.exit_last]
        .into_iter()
        .flatten()
        .flat_map(|c| match c {
            Condition::Compare(_, x, y) => vec![x, y],
            Condition::Bool { .. } => Vec::new(),
        })
        .collect()
}

/// Every [`Op::Joined`] node of each branch, by branch.
fn joined_nodes(p: &Program) -> Vec<Vec<NodeId>> {
    let mut out = vec![Vec::new(); p.branches.len()];
    for (n, node) in p.nodes.iter().enumerate() {
        if let Op::Joined { br } = node.op {
            out[br as usize].push(n as NodeId);
        }
    }
    out
}

/// An operand made of several values (`float4(p.xyz, 1)`) that more than one
/// instruction reads is gathered once, by a copy they all read, not by each.
fn share_gathers(p: &mut Program, profile: Profile) {
    let needed = needed_nodes(p, profile);
    let gathered = |p: &Program, comps: &[Comp]| {
        let mut nodes: Vec<NodeId> = comps
            .iter()
            .filter(|&&c| p.constant(c).is_none())
            .map(|c| c.node)
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        let literal = comps.iter().any(|&c| p.constant(c).is_some());
        comps.len() > 1 && (nodes.len() > 1 || nodes.len() == 1 && literal)
    };
    let mut count: HashMap<Vec<Comp>, usize> = HashMap::new();
    for &n in &needed {
        if matches!(
            p.node(n).op,
            Op::After { .. } | Op::Joined { .. } | Op::Copy
        ) {
            continue;
        }
        for a in &p.node(n).args {
            let src = resolve_in(p, profile, a);
            if gathered(p, &src.comps) {
                *count.entry(src.comps).or_default() += 1;
            }
        }
    }
    let mut copies: HashMap<Vec<Comp>, Vec<Comp>> = HashMap::new();
    for &n in &needed {
        if matches!(
            p.node(n).op,
            Op::After { .. } | Op::Joined { .. } | Op::Copy
        ) {
            continue;
        }
        let args = p.node(n).args.clone();
        let mut changed = false;
        let mut new_args = Vec::with_capacity(args.len());
        for a in args {
            let src = resolve_in(p, profile, &a);
            if count.get(&src.comps).copied().unwrap_or(0) < 2 {
                new_args.push(a);
                continue;
            }
            let copy = match copies.get(&src.comps) {
                Some(c) => c.clone(),
                None => {
                    let c = p.raw(Op::Copy, vec![src.comps.clone()], src.comps.len() as u8);
                    copies.insert(src.comps.clone(), c.clone());
                    c
                }
            };
            let mut comps = copy;
            if src.abs {
                comps = p.raw(Op::Abs, vec![comps.clone()], comps.len() as u8);
            }
            if src.neg {
                comps = p.raw(Op::Neg, vec![comps.clone()], comps.len() as u8);
            }
            new_args.push(comps);
            changed = true;
        }
        if changed {
            p.nodes[n as usize].args = new_args;
        }
    }
}

/// The nodes the outputs and kills need, each after the nodes it reads (ids are in that
/// order but for copies the port fix adds later).
fn needed_nodes(p: &Program, profile: Profile) -> Vec<NodeId> {
    live_nodes(p, profile).0
}

/// Component-wise operations: lane i reads lane i of each operand.
fn is_componentwise(op: Op) -> bool {
    matches!(
        op,
        Op::Mov
            | Op::Copy
            | Op::Add
            | Op::Mul
            | Op::Mad
            | Op::Min
            | Op::Max
            | Op::Cmp
            | Op::Slt
            | Op::Sge
            | Op::Lrp
            | Op::Frc
            | Op::Abs
            | Op::Neg
            | Op::Sat
            | Op::Dsx
            | Op::Dsy
            | Op::Joined { .. }
    )
}

/// [`needed_nodes`], and the lanes of each that something reads: a lane no one reads is
/// not computed, and the operands' lanes it would read are not needed for it.
pub(super) fn live_nodes(p: &Program, profile: Profile) -> (Vec<NodeId>, HashMap<NodeId, u8>) {
    let mut state = vec![0u8; p.nodes.len()]; // 0 unseen, 1 open, 2 done
    let mut order = Vec::new();
    let mut roots: Vec<NodeId> = Vec::new();
    for comps in p.root_comps() {
        roots.extend(resolve_in(p, profile, comps).comps.iter().map(|c| c.node));
    }
    roots.sort();
    roots.dedup();
    let joined = joined_nodes(p);
    // A branch's results come after everything either arm computes for any of them,
    // and after its condition: the arms are written out where the first is met.
    let reads_of = |n: NodeId| -> Vec<Vec<Comp>> {
        let node = p.node(n);
        let mut args = node.args.clone();
        if let Op::Joined { br } = node.op {
            for &j in &joined[br as usize] {
                args.extend(p.node(j).args.iter().cloned());
            }
            args.extend(condition_comps(p, br).into_iter().map(|c| vec![c]));
        }
        if let Op::After { lp, .. } = node.op {
            args.extend(exit_comps(p, lp).into_iter().map(|c| vec![c]));
        }
        args
    };
    // Depth-first, post-order, without recursion (graphs can be deep).
    for root in roots {
        let mut stack: Vec<(NodeId, bool)> = vec![(root, false)];
        while let Some((n, expanded)) = stack.pop() {
            if expanded {
                if state[n as usize] != 2 {
                    state[n as usize] = 2;
                    order.push(n);
                }
                continue;
            }
            if state[n as usize] != 0 {
                continue;
            }
            state[n as usize] = 1;
            stack.push((n, true));
            let mut reads: Vec<NodeId> = reads_of(n)
                .iter()
                .flat_map(|a| resolve_in(p, profile, a).comps.into_iter().map(|c| c.node))
                .collect();
            reads.sort();
            reads.dedup();
            for r in reads.into_iter().rev() {
                if state[r as usize] == 0 {
                    stack.push((r, false));
                }
            }
        }
    }
    let mut live: HashMap<NodeId, u8> = HashMap::new();
    for comps in p.root_comps() {
        for c in resolve_in(p, profile, comps).comps {
            *live.entry(c.node).or_default() |= 1 << c.lane;
        }
    }
    for &n in order.iter().rev() {
        let mask = live.get(&n).copied().unwrap_or(0);
        if mask == 0 {
            continue;
        }
        let node = p.node(n);
        let tests = match node.op {
            Op::Joined { br } => condition_comps(p, br),
            Op::After { lp, .. } => exit_comps(p, lp),
            _ => Vec::new(),
        };
        for c in tests {
            let c = resolve_in(p, profile, &[c]).comps[0];
            *live.entry(c.node).or_default() |= 1 << c.lane;
        }
        let cw = is_componentwise(node.op);
        for a in &node.args {
            let src = resolve_in(p, profile, a);
            for (i, c) in src.comps.iter().enumerate() {
                if !cw || mask & (1 << i) != 0 {
                    *live.entry(c.node).or_default() |= 1 << c.lane;
                }
            }
        }
    }
    order.retain(|n| live.get(n).copied().unwrap_or(0) != 0);
    (order, live)
}

impl Gen<'_> {
    /// The operand with `neg`, `abs` (shader model 3) and `mov` nodes looked through.
    fn resolve(&self, comps: &[Comp]) -> Src {
        resolve_in(self.p, self.profile, comps)
    }

    fn note_input_lanes(&self, comps: &[Comp], used: &mut BTreeMap<u32, [bool; 4]>) {
        for c in self.resolve(comps).comps {
            if let Op::Input(i) = self.p.node(c.node).op {
                used.entry(i).or_default()[usize::from(c.lane)] = true;
            }
        }
    }

    fn is_const(&self, c: Comp) -> Option<f32> {
        self.p.constant(c)
    }

    /// The register of `def` number `i`: the `i`-th that no uniform takes or reserves.
    /// Microsoft's compilers fill the lowest free registers with literals, below bound
    /// uniforms too (`float4 u : register(c31)` in ps_2_0 leaves c0–c30 to them), so
    /// they fit the model wherever the source binds its constants.
    /// A `register()` binding reserves its whole variable; where that leaves the model
    /// no room for every literal, the rest take its registers the shader never reads
    /// (their values are seen by nothing), before any past the model's last.
    fn def_reg(&self, i: usize) -> u32 {
        let free = |r: &u32| self.uniform_consts.binary_search(r).is_err();
        let unread = |r: &u32| !free(r) && self.read_consts.binary_search(r).is_err();
        let file = self.const_file;
        (0..file)
            .filter(free)
            .chain((0..file).filter(unread))
            .chain((file..).filter(free))
            .nth(i)
            .unwrap_or(u32::MAX)
    }

    // ---- temporaries -----------------------------------------------------------------

    /// Free lanes `lanes` of a temporary, or the first register that has them.
    fn alloc(&mut self, lanes: &[u8], prefer: Option<u32>) -> u32 {
        let fits = |b: &[bool; 4]| lanes.iter().all(|&l| !b[usize::from(l)]);
        let r = prefer
            .filter(|&r| self.busy.get(r as usize).is_some_and(fits))
            .or_else(|| self.busy.iter().position(fits).map(|r| r as u32))
            .unwrap_or_else(|| {
                self.busy.push([false; 4]);
                self.busy.len() as u32 - 1
            });
        for &l in lanes {
            self.busy[r as usize][usize::from(l)] = true;
        }
        r
    }

    fn free(&mut self, r: u32, lanes: &[u8]) {
        for &l in lanes {
            self.let_go(r, l);
        }
    }

    /// One holder of lane `l` of temporary `r` lets it go: free once none holds it.
    fn let_go(&mut self, r: u32, l: u8) {
        match self.shared.get_mut(&(r, l)) {
            Some(n) if *n > 1 => *n -= 1,
            Some(_) => {
                self.shared.remove(&(r, l));
            }
            None => self.busy[r as usize][usize::from(l)] = false,
        }
    }

    fn free_pending(&mut self) {
        for (r, lanes) in std::mem::take(&mut self.pending_free) {
            self.free(r, &lanes);
        }
    }

    /// The first free lane of the first temporary that has one: where a scalar goes.
    fn first_free_lane(&self) -> u8 {
        self.busy
            .iter()
            .find_map(|b| (0..4u8).find(|&l| !b[usize::from(l)]))
            .unwrap_or(0)
    }

    /// A node's result at `lanes` of a temporary: its hint group's register when those
    /// lanes (and any it broadcasts to) are free there, else the first that has them.
    fn place_at(&mut self, n: NodeId, positions: &[u8], lanes: &[u8]) -> Place {
        let hint = self.hints.get(&n).copied().filter(|h| {
            positions
                .iter()
                .zip(lanes)
                .all(|(&p, &l)| h.lanes[usize::from(p)] == l)
        });
        let bcast = hint.map_or(0, |h| h.bcast);
        let mut all: Vec<u8> = lanes.to_vec();
        for l in 0..4u8 {
            if bcast & (1 << l) != 0 && !all.contains(&l) {
                all.push(l);
            }
        }
        let fits = |b: &[bool; 4]| all.iter().all(|&l| !b[usize::from(l)]);
        let group = hint.and_then(|h| self.group_reg.get(&h.group).copied());
        let r = match group {
            Some(r) if fits(&self.busy[r as usize]) => r,
            _ => {
                let r = self.alloc(&all, None);
                if let Some(h) = hint {
                    self.group_reg.entry(h.group).or_insert(r);
                }
                for &l in &all {
                    self.busy[r as usize][usize::from(l)] = false;
                }
                r
            }
        };
        for &l in &all {
            self.busy[r as usize][usize::from(l)] = true;
        }
        let mut la = [lanes[0]; 4];
        for (&p, &l) in positions.iter().zip(lanes) {
            la[usize::from(p)] = l;
        }
        let place = Place {
            reg: Reg::Temp(r),
            lanes: la,
            bcast: if group.is_some_and(|g| g == r) || hint.is_some() {
                bcast
            } else {
                0
            },
        };
        self.places.insert(n, place);
        place
    }

    /// Hints for every node whose one consumer reads it as part of a wider value: the
    /// outputs, then each hinted node's operands, back from the last instruction.
    fn hint(&mut self, order: &[NodeId]) {
        let p = self.p;
        for o in &p.outputs {
            let src = self.resolve(&o.comps);
            let mut comps = src.comps.clone();
            if self.profile.pixel && o.usage == "COLOR" {
                while comps.len() < 4 {
                    comps.push(*src.comps.last().unwrap());
                }
            }
            let lanes: Vec<u8> = (0..comps.len() as u8).collect();
            let g = self.new_group();
            self.hint_operand(&comps, &lanes, g);
        }
        for &n in order.iter().rev() {
            let node = p.node(n);
            let componentwise = matches!(
                node.op,
                Op::Copy
                    | Op::Add
                    | Op::Mul
                    | Op::Mad
                    | Op::Min
                    | Op::Max
                    | Op::Cmp
                    | Op::Slt
                    | Op::Sge
                    | Op::Lrp
                    | Op::Frc
                    | Op::Abs
                    | Op::Neg
                    | Op::Sat
            );
            let scalar = matches!(node.op, Op::Rcp | Op::Rsq | Op::Exp | Op::Log | Op::Pow);
            if !componentwise && !scalar {
                continue;
            }
            let hint = match self.hints.get(&n) {
                Some(h) => *h,
                None if componentwise
                    && self
                        .live_srcs(n)
                        .1
                        .iter()
                        .any(|a| self.needs_gather(&a.comps)) =>
                {
                    let g = self.new_group();
                    let mut lanes = [0, 1, 2, 3];
                    lanes[..usize::from(node.width)]
                        .copy_from_slice(&[0, 1, 2, 3][..usize::from(node.width)]);
                    let h = Hint {
                        group: g,
                        lanes,
                        bcast: 0,
                    };
                    self.hints.insert(n, h);
                    h
                }
                None => continue,
            };
            let (positions, srcs) = self.live_srcs(n);
            let dst: Vec<u8> = positions
                .iter()
                .map(|&p| hint.lanes[usize::from(p)])
                .collect();
            for src in srcs {
                if src.comps.len() != dst.len() {
                    continue;
                }
                self.hint_operand(&src.comps, &dst, hint.group);
            }
        }
    }

    /// The lanes of node `n` computed (those read) and its operands at those lanes; all
    /// of each operand for instructions that are not component-wise.
    fn live_srcs(&self, n: NodeId) -> (Vec<u8>, Vec<Src>) {
        let node = self.p.node(n);
        let mask = self.live.get(&n).copied().unwrap_or(0);
        let srcs: Vec<Src> = node.args.iter().map(|a| self.resolve(a)).collect();
        if node.op == Op::SinCos && mask & 3 != 0 {
            // `sincos` writes the lanes read, cosine in .x, sine in .y.
            return ((0..2).filter(|&l| mask & (1 << l) != 0).collect(), srcs);
        }
        if !is_componentwise(node.op) {
            return ((0..node.width).collect(), srcs);
        }
        let positions: Vec<u8> = (0..node.width).filter(|&l| mask & (1 << l) != 0).collect();
        let srcs = srcs
            .into_iter()
            .map(|s| Src {
                comps: positions.iter().map(|&p| s.comps[usize::from(p)]).collect(),
                ..s
            })
            .collect();
        (positions, srcs)
    }

    fn new_group(&mut self) -> u32 {
        self.next_group += 1;
        self.next_group
    }

    /// An operand of several nodes (or of nodes and literals) needs a `mov` to gather it.
    fn needs_gather(&self, comps: &[Comp]) -> bool {
        let src = self.resolve(comps);
        let nodes: HashSet<NodeId> = src
            .comps
            .iter()
            .filter(|&&c| self.is_const(c).is_none())
            .map(|c| c.node)
            .collect();
        let consts = src.comps.iter().any(|&c| self.is_const(c).is_some());
        nodes.len() > 1 || (nodes.len() == 1 && consts)
    }

    /// Hint each node of `comps` read nowhere else to the lanes it is read into.
    fn hint_operand(&mut self, comps: &[Comp], dst: &[u8], group: u32) {
        let mut nodes: Vec<NodeId> = comps.iter().map(|c| c.node).collect();
        nodes.sort();
        nodes.dedup();
        for n in nodes {
            let node = self.p.node(n);
            if self.hints.contains_key(&n) || self.is_const(Comp { node: n, lane: 0 }).is_some() {
                continue;
            }
            if matches!(
                node.op,
                Op::Input(_)
                    | Op::Uniform { .. }
                    | Op::Sampler(_)
                    | Op::Const(_)
                    | Op::Tex(_)
                    | Op::Nrm
                    | Op::SinCos
                    | Op::Lit
                    | Op::Mov
                    | Op::Carried { .. }
                    | Op::After { .. }
                    | Op::Relative { .. }
                    | Op::LoopRelative { .. }
            ) {
                continue;
            }
            let reads = comps.iter().filter(|c| c.node == n).count() as u32;
            if self.uses_left.get(&n).copied().unwrap_or(0) != reads {
                continue;
            }
            let mut lanes = [u8::MAX; 4];
            let mut bcast = 0u8;
            let mut ok = true;
            for (i, c) in comps.iter().enumerate().filter(|(_, c)| c.node == n) {
                let l = usize::from(c.lane);
                if lanes[l] == u8::MAX {
                    lanes[l] = dst[i];
                } else if lanes[l] != dst[i] {
                    if node.width == 1 {
                        bcast |= 1 << dst[i];
                    } else {
                        ok = false;
                    }
                }
            }
            let w = usize::from(node.width);
            let live = self.live.get(&n).copied().unwrap_or(0);
            if !ok || (0..w).any(|l| live & (1 << l) != 0 && lanes[l] == u8::MAX) {
                continue;
            }
            let mut distinct: Vec<u8> = (0..w)
                .filter(|&l| live & (1 << l) != 0)
                .map(|l| lanes[l])
                .collect();
            let count = distinct.len();
            distinct.sort();
            distinct.dedup();
            if distinct.len() != count {
                continue;
            }
            // Dead lanes are never written; any lane will do for them.
            for l in 0..w {
                if lanes[l] == u8::MAX {
                    lanes[l] = lanes.iter().copied().find(|&x| x != u8::MAX).unwrap_or(0);
                }
            }
            // Only instructions that write every lane of their mask with the one value
            // may fill lanes beyond their own: those that replicate, and one-lane
            // component-wise ones, whose operands are then read replicated.
            let replicates = matches!(
                node.op,
                Op::Dp3 | Op::Dp4 | Op::Dp2Add | Op::Rcp | Op::Rsq | Op::Exp | Op::Log | Op::Pow
            ) || (is_componentwise(node.op)
                && !(node.op == Op::Sat && !self.profile.pixel && self.profile.major < 3));
            if bcast != 0 && !replicates {
                bcast = 0;
            }
            if bcast != 0 {
                bcast |= 1 << lanes[0];
            }
            for l in lanes.iter_mut().skip(w) {
                *l = 0;
            }
            self.hints.insert(
                n,
                Hint {
                    group,
                    lanes,
                    bcast,
                },
            );
        }
    }

    /// One use of each operand component done; free the lanes of nodes used up.
    fn release(&mut self, comps: &[Comp]) {
        for c in comps {
            let Some(left) = self.uses_left.get_mut(&c.node) else {
                continue;
            };
            *left = left.saturating_sub(1);
            let done = *left == 0;
            if done && matches!(self.p.node(c.node).op, Op::Relative { .. }) {
                // Its offset is read by the `mova`s for it until then.
                let addr = self.resolve(&self.p.node(c.node).args[0]).comps;
                self.release(&addr);
            }
            if done {
                if let Some(Place {
                    reg: Reg::Temp(r),
                    lanes,
                    bcast,
                }) = self.places.get(&c.node).copied()
                {
                    let w = usize::from(self.p.node(c.node).width);
                    let live = self.live.get(&c.node).copied().unwrap_or(0xF);
                    for l in 0..4u8 {
                        if bcast & (1 << l) != 0 {
                            self.let_go(r, l);
                        }
                    }
                    for &l in lanes[..w]
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| live & (1 << i) != 0)
                        .map(|(_, l)| l)
                    {
                        self.let_go(r, l);
                    }
                }
            }
        }
    }

    // ---- operands --------------------------------------------------------------------

    /// Where a constant value is: a lane of a `def` register, added if needed. Values in
    /// `want` (lane → value) are placed so that reading them needs the swizzle `want`
    /// implies; returns the register and the lane of each value.
    fn const_lanes(&mut self, values: &[f32], dst: &[u8]) -> (u32, Vec<u8>) {
        let mut distinct: Vec<f32> = Vec::new();
        for &v in values {
            if !distinct.iter().any(|d| d.to_bits() == v.to_bits()) {
                distinct.push(v);
            }
        }
        let read: Vec<u8> = dst.to_vec();
        if let Some(r) = self.def_pref {
            if let Some(lanes) = self.fit_consts(r, values, &read) {
                return (self.def_reg(r), lanes);
            }
        }
        for r in 0..self.defs.len() {
            if let Some(lanes) = self.fit_consts(r, values, &read) {
                return (self.def_reg(r), lanes);
            }
        }
        self.defs.push([None; 4]);
        let r = self.defs.len() - 1;
        match self.fit_consts(r, values, &read) {
            Some(lanes) => (self.def_reg(r), lanes),
            None => {
                // Values at their destination lanes always fit a fresh register.
                for (i, &v) in values.iter().enumerate() {
                    self.defs[r][usize::from(dst[i])] = Some(v);
                }
                (self.def_reg(r), dst.to_vec())
            }
        }
    }

    /// A `def` (an existing one, else a new one) that can hold the values of all the
    /// literal operands `lits` (values, and the lanes each is read into) at once, for an
    /// instruction that reads more than one: the one that already holds most of them.
    fn shared_def(&mut self, lits: &[(Vec<f32>, Vec<u8>)]) -> Option<usize> {
        let saved = self.defs.clone();
        let mut best: Option<(usize, usize)> = None;
        for r in 0..=saved.len() {
            if r == saved.len() {
                if best.is_some() {
                    break;
                }
                self.defs.push([None; 4]);
            }
            let ok = lits.iter().all(|(v, d)| self.fit_consts(r, v, d).is_some());
            let had = saved.get(r).map_or(0, |d| {
                lits.iter()
                    .flat_map(|(v, _)| v)
                    .filter(|v| d.iter().flatten().any(|x| x.to_bits() == v.to_bits()))
                    .count()
            });
            self.defs.clone_from(&saved);
            if ok && best.map_or(true, |(_, h)| had > h) {
                best = Some((r, had));
            }
        }
        let (r, _) = best?;
        if r == self.defs.len() {
            self.defs.push([None; 4]);
        }
        Some(r)
    }

    fn fit_consts(&mut self, r: usize, values: &[f32], dst: &[u8]) -> Option<Vec<u8>> {
        let mut trial = self.defs[r];
        let mut lanes = Vec::new();
        for (i, &v) in values.iter().enumerate() {
            // Where the register holds it: at the destination lane first, so that a value
            // a register holds twice (`def c0, a, b, c, b` for `a, b, c, b`) reads it as it
            // was placed, with no swizzle a model may lack (else every read of it made a
            // register of its own).
            let holds = |l: u8| trial[usize::from(l)].is_some_and(|x| x.to_bits() == v.to_bits());
            let have = Some(dst[i])
                .filter(|&d| holds(d))
                .or_else(|| (0..4u8).find(|&l| holds(l)));
            let l = match have {
                Some(l) => l,
                None => {
                    // Prefer the destination lane, for models with few swizzles.
                    let d = dst[i];
                    let l = if trial[usize::from(d)].is_none() {
                        Some(d)
                    } else {
                        (0..4u8).find(|&l| trial[usize::from(l)].is_none())
                    };
                    let l = l?;
                    trial[usize::from(l)] = Some(v);
                    l
                }
            };
            lanes.push(l);
        }
        let mut swz = [0u8; 4];
        for (i, &d) in dst.iter().enumerate() {
            swz[usize::from(d)] = lanes[i];
        }
        fill_swizzle(&mut swz, dst);
        if !swizzle_ok(self.profile, swz, dst) {
            return None;
        }
        self.defs[r] = trial;
        Some(lanes)
    }

    /// An operand read into destination lanes `dst` (operand component `i` lands in lane
    /// `dst[i]`), gathered into a temporary first where it is not one register read with
    /// an allowed swizzle. `identity` asks for no swizzle at all.
    fn operand(&mut self, src: &Src, dst: &[u8], identity: bool) -> Operand {
        let plain = Src {
            neg: false,
            abs: false,
            ..src.clone()
        };
        let mut op = self
            .direct(&plain, dst, identity)
            .or_else(|| self.complete(&plain, dst))
            .unwrap_or_else(|| {
                let r = self.gather(&src.comps, dst);
                Operand::in_temp(r, dst)
            });
        op.neg = src.neg;
        op.abs = src.abs;
        if identity {
            // Every way here puts the lanes read where they are read; the others are
            // not read, and an operand that must not swizzle names none.
            op.swz = [0, 1, 2, 3];
        }
        op
    }

    /// [`Self::operand`] for an operand that takes no source modifier (texture
    /// coordinates, gradients, ps_2_x's `oDepth`): a negated or absolute value is
    /// computed into a temporary first, which is free again after this instruction.
    fn unmodified(&mut self, src: &Src, dst: &[u8], identity: bool) -> Operand {
        if !src.neg && !src.abs {
            return self.operand(src, dst, identity);
        }
        let r = self.alloc(dst, None);
        let o = self.operand(src, dst, false).text();
        self.code.push(format!("mov r{r}{}, {o}", mask_text(dst)));
        self.pending_free.push((r, dst.to_vec()));
        let mut op = Operand::in_temp(r, dst);
        if identity {
            op.swz = [0, 1, 2, 3];
        }
        op
    }

    /// An operand most of which already sits in one temporary at the lanes it is read
    /// into (its parts were hinted there): the rest moved in beside them, the register
    /// read as it is. The moved lanes are free again after this instruction.
    fn complete(&mut self, src: &Src, dst: &[u8]) -> Option<Operand> {
        let mut reg = None;
        let mut missing = Vec::new();
        for (i, &c) in src.comps.iter().enumerate() {
            let d = dst[i];
            let here = self.places.get(&c.node).filter(|p| {
                matches!(p.reg, Reg::Temp(_))
                    && (p.lanes[usize::from(c.lane)] == d
                        && (self.p.node(c.node).width > 1
                            || p.bcast == 0
                            || p.bcast & (1 << d) != 0)
                        || p.bcast & (1 << d) != 0)
            });
            match here {
                Some(p) if reg.is_none() || reg == Some(p.reg) => reg = Some(p.reg),
                _ => missing.push(i),
            }
        }
        let Reg::Temp(r) = reg? else { return None };
        if missing.is_empty()
            || missing
                .iter()
                .any(|&i| self.busy[r as usize][usize::from(dst[i])])
        {
            return None;
        }
        // Move the missing parts in, grouped as gather groups them.
        let lanes: Vec<u8> = missing.iter().map(|&i| dst[i]).collect();
        for &l in &lanes {
            self.busy[r as usize][usize::from(l)] = true;
        }
        let comps: Vec<Comp> = missing.iter().map(|&i| src.comps[i]).collect();
        self.fill(r, &comps, &lanes);
        self.pending_free.push((r, lanes));
        let mut swz = [0, 1, 2, 3];
        fill_swizzle(&mut swz, dst);
        Some(Operand {
            reg: Reg::Temp(r),
            swz,
            neg: false,
            abs: false,
        })
    }

    /// An operand as it is, if it is one register read with an allowed swizzle: the lanes
    /// of one node, of nodes that share a register, or constants of one `def`.
    fn direct(&mut self, src: &Src, dst: &[u8], identity: bool) -> Option<Operand> {
        let consts: Option<Vec<f32>> = src.comps.iter().map(|&c| self.is_const(c)).collect();
        if let Some(values) = consts {
            let (r, lanes) = self.const_lanes(&values, dst);
            let mut swz = [0u8; 4];
            for (i, &d) in dst.iter().enumerate() {
                swz[usize::from(d)] = lanes[i];
            }
            fill_swizzle(&mut swz, dst);
            if identity && !dst.iter().all(|&d| swz[usize::from(d)] == d) {
                return None;
            }
            return Some(Operand {
                reg: Reg::Const(r),
                swz: if identity { [0, 1, 2, 3] } else { swz },
                neg: false,
                abs: false,
            });
        }
        let mut reg = None;
        let mut swz = [0u8; 4];
        for (i, c) in src.comps.iter().enumerate() {
            let place = match self.places.get(&c.node) {
                Some(p) => *p,
                None => self.relative_place(c.node)?,
            };
            if reg.is_some_and(|r| r != place.reg) {
                return None;
            }
            reg = Some(place.reg);
            let d = dst[i];
            swz[usize::from(d)] = if place.bcast & (1 << d) != 0 {
                d
            } else {
                place.lanes[usize::from(c.lane)]
            };
        }
        let reg = reg?;
        fill_swizzle(&mut swz, dst);
        if identity && !dst.iter().all(|&d| swz[usize::from(d)] == d) {
            return None;
        }
        if !swizzle_ok(self.profile, swz, dst) {
            return None;
        }
        let swz = if identity { [0, 1, 2, 3] } else { swz };
        Some(Operand {
            reg,
            swz,
            neg: false,
            abs: false,
        })
    }

    /// Keep an instruction within the model's read ports: a second constant (or input)
    /// register is copied to a temporary first.
    fn fit_ports(&mut self, ops: &mut [Operand]) -> Vec<(u32, Vec<u8>)> {
        let Some(lim) = limits::limits(model_version(self.profile)) else {
            return Vec::new();
        };
        let mut temps = Vec::new();
        for file in [
            RegisterType::Const,
            RegisterType::Input,
            RegisterType::AddrOrTexture,
        ] {
            let Some(ports) = lim.register(file).and_then(|r| r.read_ports) else {
                continue;
            };
            loop {
                let mut regs: Vec<Reg> = ops
                    .iter()
                    .filter(|o| o.file() == Some(file))
                    .map(|o| o.reg)
                    .collect();
                regs.sort();
                regs.dedup();
                if regs.len() as u32 <= ports {
                    break;
                }
                // Copy the first register over the limit: every lane an operand reads.
                let victim = regs[ports as usize];
                let mut lanes = [false; 4];
                for o in ops.iter().filter(|o| o.reg == victim) {
                    for &l in &o.swz {
                        lanes[usize::from(l)] = true;
                    }
                }
                let lanes: Vec<u8> = (0..4).filter(|&l| lanes[usize::from(l)]).collect();
                let r = self.alloc(&lanes, None);
                self.code.push(format!(
                    "mov r{r}{}, {}{}",
                    mask_text(&lanes),
                    victim.name(),
                    swizzle_text_for(&lanes)
                ));
                temps.push((r, lanes));
                for o in ops.iter_mut().filter(|o| o.reg == victim) {
                    o.reg = Reg::Temp(r);
                }
            }
        }
        temps
    }

    /// Copy components into a fresh temporary at lanes `dst`, grouping what one `mov`
    /// can move; returns the register.
    fn gather(&mut self, comps: &[Comp], dst: &[u8]) -> u32 {
        let r = self.alloc(dst, None);
        self.fill(r, comps, dst);
        // The gathered register is free again once this instruction has read it (not
        // before: another operand of it may need gathering too).
        self.pending_free.push((r, dst.to_vec()));
        r
    }

    /// `mov`s putting `comps` into lanes `dst` of temporary `r`.
    fn fill(&mut self, r: u32, comps: &[Comp], dst: &[u8]) {
        let mut done = vec![false; comps.len()];
        for i in 0..comps.len() {
            if done[i] {
                continue;
            }
            // Everything from the same node (or every constant) in one mov, if the
            // swizzle is allowed; else one lane at a time.
            let konst = self.is_const(comps[i]).is_some();
            let group: Vec<usize> = (i..comps.len())
                .filter(|&j| {
                    !done[j]
                        && if konst {
                            self.is_const(comps[j]).is_some()
                        } else {
                            comps[j].node == comps[i].node
                        }
                })
                .collect();
            let try_group = |g: &mut Self, group: &[usize]| -> Option<String> {
                let sub = Src {
                    comps: group.iter().map(|&j| comps[j]).collect(),
                    neg: false,
                    abs: false,
                };
                let lanes: Vec<u8> = group.iter().map(|&j| dst[j]).collect();
                g.direct(&sub, &lanes, false)
                    .map(|t| format!("mov r{r}{}, {}", mask_text(&lanes), t.text()))
            };
            if let Some(line) = try_group(self, &group) {
                self.code.push(line);
                for j in group {
                    done[j] = true;
                }
                continue;
            }
            match try_group(self, &[i]) {
                Some(line) => self.code.push(line),
                None => self.errors.push(format!(
                    "internal compiler error: a value (node {}) is read before it is computed",
                    comps[i].node
                )),
            }
            done[i] = true;
        }
    }

    // ---- instructions ----------------------------------------------------------------

    /// The nodes of `list` (in dependency order) that run in `region`, and the loops
    /// inside it, each where the first of its results is needed: by then everything its
    /// body reads from outside has been computed.
    /// The nodes of `list` that run in `region`, in order; a kept loop or branch of the
    /// region is written out where its first result is met.
    fn emit_list(&mut self, list: &[NodeId], region: Region) {
        for &n in list {
            let node = self.p.node(n);
            // A loop's or branch's results have their places once it is written out.
            let done = self.places.contains_key(&n);
            match node.op {
                Op::After { lp, .. } => {
                    if self.p.loops[lp as usize].parent == region && !done {
                        let body = self.inside(list, Region::Loop(lp));
                        self.emit_loop(lp, &body);
                    }
                    continue;
                }
                Op::Joined { br } => {
                    if self.p.branches[br as usize].parent == region && !done {
                        self.emit_branch(br, list);
                    }
                    continue;
                }
                _ => {}
            }
            if self.regions[n as usize] != region {
                continue;
            }
            if !self.places.contains_key(&n) && !matches!(node.op, Op::Const(_)) {
                self.emit_node(n);
            }
        }
    }

    /// The nodes of `list` that `comps` are made of, in order.
    fn needs(&self, list: &[NodeId], comps: &[Comp]) -> Vec<NodeId> {
        let mut want: HashSet<NodeId> = HashSet::new();
        let mut stack: Vec<NodeId> = comps
            .iter()
            .flat_map(|&c| self.resolve(&[c]).comps)
            .map(|c| c.node)
            .collect();
        while let Some(n) = stack.pop() {
            if want.insert(n) {
                for src in self.live_srcs(n).1 {
                    stack.extend(src.comps.iter().map(|c| c.node));
                }
            }
        }
        list.iter().copied().filter(|n| want.contains(n)).collect()
    }

    /// `break_comp` of a loop's exit test, written by [`Self::write_break`] once what
    /// comes between is: the registers it reads stay taken until then. An operand in
    /// lanes of `moved` (a chunk's register, about to take its next value) is copied
    /// aside first, so the test reads the value it names.
    fn break_line(&mut self, test: Condition, moved: &[(u32, u8)]) -> Break {
        let Condition::Compare(op, x, y) = test else {
            return Break {
                line: "break".to_string(),
                free: Vec::new(),
                release: Vec::new(),
            };
        };
        let srcs = [self.resolve(&[x]), self.resolve(&[y])];
        self.prepare_relative(&srcs);
        let mut ops: Vec<Operand> = srcs.iter().map(|s| self.operand(s, &[0], false)).collect();
        let mut aside = Vec::new();
        for o in &mut ops {
            if let Reg::Temp(r) = o.reg {
                if moved.contains(&(r, o.swz[0])) {
                    let t = self.alloc(&[0], None);
                    self.code
                        .push(format!("mov r{t}.x, r{r}.{}", LANES[usize::from(o.swz[0])]));
                    o.reg = Reg::Temp(t);
                    o.swz = [0; 4];
                    aside.push(t);
                }
            }
        }
        let mut free = self.fit_ports(&mut ops);
        free.extend(aside.into_iter().map(|t| (t, vec![0])));
        free.append(&mut self.pending_free);
        Break {
            line: format!("break_{} {}, {}", op.suffix(), ops[0].text(), ops[1].text()),
            free,
            release: srcs.into_iter().collect(),
        }
    }

    fn write_break(&mut self, b: Break) {
        self.code.push(b.line);
        for (r, lanes) in b.free {
            self.free(r, &lanes);
        }
        for src in &b.release {
            self.release(&src.comps);
        }
    }

    /// The nodes of `list` that run in `region` or a region inside it.
    fn inside(&self, list: &[NodeId], region: Region) -> Vec<NodeId> {
        list.iter()
            .copied()
            .filter(|&m| self.p.within(self.regions[m as usize], region))
            .collect()
    }

    /// One kept branch: its results' registers taken, `if`, the first arm and its values
    /// moved into them, `else`, the other arm and its values, `endif`. A register freed
    /// in the first arm may serve the other: what the first arm read last is read by
    /// nothing on the other path.
    fn emit_branch(&mut self, br: u32, list: &[NodeId]) {
        let p = self.p;
        let b = &p.branches[br as usize];
        let joined: Vec<NodeId> = list
            .iter()
            .copied()
            .filter(|&m| p.node(m).op == Op::Joined { br })
            .collect();
        // Registers for the results: one-lane results packed into free lanes.
        let mut homes: Vec<(NodeId, u32, Vec<u8>, Vec<u8>)> = Vec::new();
        for &j in &joined {
            let positions = self.live_srcs(j).0;
            let lanes: Vec<u8> = if positions.len() == 1 {
                vec![self.first_free_lane()]
            } else {
                positions.clone()
            };
            let r = self.alloc(&lanes, None);
            homes.push((j, r, positions, lanes));
        }
        let (first, negated) = match b.condition {
            Condition::Bool {
                var,
                index,
                negated,
            } => {
                self.code
                    .push(format!("if b{}", self.bool_regs[&var] + index));
                (true, negated)
            }
            Condition::Compare(op, x, y) => {
                let srcs = [self.resolve(&[x]), self.resolve(&[y])];
                self.prepare_relative(&srcs);
                let mut ops: Vec<Operand> =
                    srcs.iter().map(|s| self.operand(s, &[0], false)).collect();
                let temps = self.fit_ports(&mut ops);
                self.code.push(format!(
                    "if_{} {}, {}",
                    op.suffix(),
                    ops[0].text(),
                    ops[1].text()
                ));
                for (r, lanes) in temps {
                    self.free(r, &lanes);
                }
                self.free_pending();
                for src in &srcs {
                    self.release(&src.comps);
                }
                (true, false)
            }
        };
        let arms = if negated {
            [!first, first]
        } else {
            [first, !first]
        };
        // What an arm computes is there on its own path only: read after it, or in the
        // other arm, it is computed again.
        let known: HashSet<NodeId> = self.places.keys().copied().collect();
        for (k, arm) in arms.into_iter().enumerate() {
            if k == 1 {
                self.code.push("else".to_string());
            }
            self.a0 = [None; 4];
            let body = self.inside(list, Region::Arm(br, arm));
            self.emit_list(&body, Region::Arm(br, arm));
            let which = usize::from(!arm);
            let mut moves: Vec<(u32, u8, Comp)> = Vec::new();
            for (j, r, positions, lanes) in &homes {
                let value = &p.node(*j).args[which];
                for (&pos, &l) in positions.iter().zip(lanes) {
                    moves.push((*r, l, value[usize::from(pos)]));
                }
            }
            self.moves(&moves, &[]);
            for (j, ..) in &homes {
                let src = self.live_srcs(*j).1[which].clone();
                self.release(&src.comps);
            }
            self.places.retain(|n, _| known.contains(n));
        }
        if self.code.last().is_some_and(|l| l == "else") {
            self.code.pop();
        }
        self.code.push("endif".to_string());
        self.a0 = [None; 4];
        for (j, r, positions, lanes) in homes {
            let mut la = [lanes[0]; 4];
            for (&pos, &l) in positions.iter().zip(&lanes) {
                la[usize::from(pos)] = l;
            }
            self.places.insert(
                j,
                Place {
                    reg: Reg::Temp(r),
                    lanes: la,
                    bcast: 0,
                },
            );
            if self.uses_left.get(&j).copied().unwrap_or(0) == 0 {
                self.free(r, &lanes);
            }
        }
    }

    /// One kept loop: its carried chunks put in registers of their own, `rep`, the body,
    /// the chunks' new values moved into their registers, `endrep`. What the body reads
    /// from outside stays where it is until the loop ends.
    fn emit_loop(&mut self, lp: u32, body: &[NodeId]) {
        let p = self.p;
        let l = &p.loops[lp as usize];
        let chunks: Vec<usize> = (0..l.after.len())
            .filter(|&k| self.live.contains_key(&l.after[k]))
            .collect();
        // Registers for the chunks: a chunk takes over the lanes of the value it starts
        // from where nothing reads that value's lanes the loop changes after the loop
        // starts (no `mov`, no register more); the others registers of their own,
        // one-lane chunks packed into free lanes.
        let starts_of: Vec<Src> = chunks
            .iter()
            .map(|&k| self.live_srcs(l.after[k]).1.swap_remove(0))
            .collect();
        let mut homes: Vec<(usize, u32, Vec<u8>, Place)> = Vec::new();
        let mut taken_over: Vec<usize> = Vec::new();
        for (i, &k) in chunks.iter().enumerate() {
            let w = l.carried[k].0.len();
            let changed: Vec<bool> = (0..w)
                .map(|lane| {
                    l.carried[k].1[lane]
                        != Comp {
                            node: l.carried_nodes[k],
                            lane: lane as u8,
                        }
                })
                .collect();
            let (r, lanes) = match self.start_taken_over(lp, &starts_of, i, &changed) {
                Some((r, lanes)) => {
                    for &d in &lanes {
                        *self.shared.entry((r, d)).or_insert(1) += 1;
                    }
                    taken_over.push(k);
                    (r, lanes)
                }
                None => {
                    let lanes: Vec<u8> = if w == 1 {
                        vec![self.first_free_lane()]
                    } else {
                        (0..w as u8).collect()
                    };
                    (self.alloc(&lanes, None), lanes)
                }
            };
            let mut la = [lanes[0]; 4];
            la[..lanes.len()].copy_from_slice(&lanes);
            let place = Place {
                reg: Reg::Temp(r),
                lanes: la,
                bcast: 0,
            };
            homes.push((k, r, lanes, place));
        }
        // Their start values, one `mov` per register where one can.
        let starts: Vec<(u32, u8, Comp)> = homes
            .iter()
            .filter(|(k, ..)| !taken_over.contains(k))
            .flat_map(|(k, r, lanes, _)| {
                let init = &l.carried[*k].0;
                lanes.iter().zip(init).map(move |(&d, &c)| (*r, d, c))
            })
            .collect();
        self.moves(&starts, &[]);
        for &k in &chunks {
            let srcs = self.live_srcs(l.after[k]).1;
            for src in srcs.iter().step_by(2) {
                self.release(&src.comps);
            }
        }
        // The body reads each chunk where it is, held until the loop ends whatever
        // reads it last.
        for &(k, _, _, place) in &homes {
            let carried = l.carried_nodes[k];
            self.places.insert(carried, place);
            *self.uses_left.entry(carried).or_default() += 1;
        }
        // What the body reads from outside the loop stays until the loop ends: the
        // operands of its instructions and what its branches and exits test.
        let mut outside: Vec<NodeId> = Vec::new();
        let exits: Vec<Src> = exit_comps(p, lp)
            .iter()
            .map(|&c| self.resolve(&[c]))
            .collect();
        for c in exits.iter().flat_map(|s| &s.comps) {
            if !p.within(self.regions[c.node as usize], Region::Loop(lp))
                && !outside.contains(&c.node)
            {
                outside.push(c.node);
            }
        }
        for &m in body {
            let mut srcs = self.live_srcs(m).1;
            if let Op::Joined { br } = p.node(m).op {
                srcs.extend(condition_comps(p, br).iter().map(|&c| self.resolve(&[c])));
            }
            for src in srcs {
                for c in src.comps {
                    if !p.within(self.regions[c.node as usize], Region::Loop(lp))
                        && !outside.contains(&c.node)
                    {
                        outside.push(c.node);
                    }
                }
            }
        }
        for &n in &outside {
            *self.uses_left.entry(n).or_default() += 1;
        }
        let count = match l.count {
            LoopCount::Uniform { var, index } => self.int_regs[&var] + index,
            LoopCount::Const(n) => {
                let want = match l.al_start {
                    Some(start) => [n, start, 1],
                    None => [n, 0, 0],
                };
                match self.defis.iter().find(|d| d.1 == want) {
                    Some(d) => d.0,
                    None => {
                        let r = self.int_base + self.defis.len() as u32;
                        self.defis.push((r, want));
                        r
                    }
                }
            }
        };
        let (open, close) = match l.al_start {
            Some(_) => (format!("loop aL, i{count}"), "endloop"),
            None => (format!("rep i{count}"), "endrep"),
        };
        self.code.push(open);
        self.a0 = [None; 4];
        // What the body computes is not there after a loop that ran no times.
        let known: HashSet<NodeId> = self.places.keys().copied().collect();
        if let Some(test) = l.exit_first {
            // What the first exit compares (made of the values as the iteration starts
            // and of outside values alone), then the exit, then the rest of the body.
            let wanted = self.needs(body, &test_comps(test));
            self.emit_list(&wanted, Region::Loop(lp));
            let b = self.break_line(test, &[]);
            self.write_break(b);
        }
        self.emit_list(body, Region::Loop(lp));
        // The new values into the chunks' registers; a lane that keeps its value is left.
        let mut ends: Vec<(u32, u8, Comp)> = Vec::new();
        let mut carried_regs: Vec<(u32, u8)> = Vec::new();
        for &(k, r, ref lanes, _) in &homes {
            let node = l.carried_nodes[k];
            for (i, (&d, &c)) in lanes.iter().zip(&l.carried[k].1).enumerate() {
                carried_regs.push((r, d));
                if c != (Comp {
                    node,
                    lane: i as u8,
                }) {
                    ends.push((r, d, c));
                }
            }
        }
        // The last exit reads its operands as the body left them, before the chunks'
        // registers take their new values, and leaves once they have them.
        let last = l.exit_last.map(|test| self.break_line(test, &carried_regs));
        self.moves(&ends, &carried_regs);
        if let Some(b) = last {
            self.write_break(b);
        }
        for &k in &chunks {
            let a = l.after[k];
            let srcs = self.live_srcs(a).1;
            for src in srcs.iter().skip(1).step_by(2) {
                self.release(&src.comps);
            }
        }
        self.code.push(close.to_string());
        self.a0 = [None; 4];
        self.places.retain(|n, _| known.contains(n));
        for &n in &outside {
            self.release(&[Comp { node: n, lane: 0 }]);
        }
        // The chunks' registers hold the loop's results now.
        for &(k, r, ref lanes, place) in &homes {
            self.uses_left.insert(l.carried_nodes[k], 0);
            let a = l.after[k];
            self.places.insert(a, place);
            if self.uses_left.get(&a).copied().unwrap_or(0) == 0 {
                self.free(r, lanes);
            }
        }
    }

    /// Where chunk `i`'s start (of `starts`, loop `lp`'s) is, when the chunk can take it
    /// over: lanes of one value in a temporary, distinct and read as they are, that no
    /// other chunk starts from, and whose lanes the loop `changed` nothing reads after
    /// the loop starts. The register and the lanes.
    fn start_taken_over(
        &self,
        lp: u32,
        starts: &[Src],
        i: usize,
        changed: &[bool],
    ) -> Option<(u32, Vec<u8>)> {
        let start = &starts[i];
        let n = start.comps.first()?.node;
        let place = self.places.get(&n)?;
        let Reg::Temp(r) = place.reg else {
            return None;
        };
        if start.neg || start.abs || place.bcast != 0 || start.comps.iter().any(|c| c.node != n) {
            return None;
        }
        let elsewhere = starts
            .iter()
            .enumerate()
            .any(|(j, s)| j != i && s.comps.iter().any(|c| c.node == n));
        if elsewhere {
            return None;
        }
        let lanes = distinct_lanes(place, &start.comps)?;
        let overwritten: Vec<u8> = start
            .comps
            .iter()
            .zip(changed)
            .filter(|(_, &ch)| ch)
            .map(|(c, _)| c.lane)
            .collect();
        if !overwritten.is_empty() && self.read_later(n, &overwritten, lp) {
            return None;
        }
        Some((r, lanes))
    }

    /// Whether anything not computed yet reads lanes `lanes` of `n`, but loop `lp`'s
    /// start values: the code still to come (a loop's body among it), the outputs,
    /// the kills, what branches and loops test.
    fn read_later(&self, n: NodeId, lanes: &[u8], lp: u32) -> bool {
        let p = self.p;
        let reads = |comps: &[Comp]| comps.iter().any(|c| c.node == n && lanes.contains(&c.lane));
        let own_starts = &p.loops[lp as usize].after;
        for &m in &self.needed {
            if self.places.contains_key(&m) || own_starts.contains(&m) {
                continue;
            }
            if self.live_srcs(m).1.iter().any(|s| reads(&s.comps)) {
                return true;
            }
        }
        let tests = (0..p.branches.len() as u32)
            .flat_map(|br| condition_comps(p, br))
            .chain((0..p.loops.len() as u32).flat_map(|l| exit_comps(p, l)));
        for c in tests {
            if reads(&self.resolve(&[c]).comps) {
                return true;
            }
        }
        p.outputs
            .iter()
            .map(|o| &o.comps)
            .chain(&p.kills)
            .any(|comps| reads(&self.resolve(comps).comps))
    }

    /// One component as an operand reads it: where it is, if it was computed (a
    /// negation of a whole operand is computed); else what it negates or takes the
    /// absolute value of, with the modifier.
    fn comp_src(&self, c: Comp) -> Src {
        // Computed, and at this lane: a negation computed for the lanes others read
        // does not hold this one.
        let computed = self.places.contains_key(&c.node)
            && self
                .live
                .get(&c.node)
                .map_or(true, |&m| m & (1 << c.lane) != 0);
        if computed || self.is_const(c).is_some() {
            return Src {
                comps: vec![c],
                neg: false,
                abs: false,
            };
        }
        self.resolve(&[c])
    }

    /// `mov`s of values (each a component) into lanes of temporaries, as few as the
    /// operands allow: the lanes of one register from one source register in one. A
    /// value read from a register in `written` that an earlier move writes is copied
    /// aside first.
    fn moves(&mut self, moves: &[(u32, u8, Comp)], written: &[(u32, u8)]) {
        let comps: Vec<Comp> = moves.iter().map(|m| m.2).collect();
        self.materialise_relative(&comps);
        let mut regs: Vec<u32> = moves.iter().map(|m| m.0).collect();
        regs.sort_unstable();
        regs.dedup();
        // Each register's moves as (lanes, operand text).
        let mut planned: Vec<(u32, Vec<u8>, Operand)> = Vec::new();
        for r in regs {
            let mine: Vec<&(u32, u8, Comp)> = moves.iter().filter(|m| m.0 == r).collect();
            let mut done = vec![false; mine.len()];
            for i in 0..mine.len() {
                if done[i] {
                    continue;
                }
                let src_i = self.comp_src(mine[i].2);
                // Lanes with the same modifiers, from the same register (or literals).
                let key = |g: &Self, s: &Src| {
                    let c = s.comps[0];
                    let reg = match g.is_const(c) {
                        Some(_) => None,
                        None => g.places.get(&c.node).map(|p| p.reg),
                    };
                    (s.neg, s.abs, reg)
                };
                let key_i = key(self, &src_i);
                let group: Vec<usize> = (i..mine.len())
                    .filter(|&j| !done[j] && key(self, &self.comp_src(mine[j].2)) == key_i)
                    .collect();
                let comps: Vec<Comp> = group
                    .iter()
                    .map(|&j| self.comp_src(mine[j].2).comps[0])
                    .collect();
                let lanes: Vec<u8> = group.iter().map(|&j| mine[j].1).collect();
                let plain = Src {
                    comps: comps.clone(),
                    neg: false,
                    abs: false,
                };
                let mut sorted = lanes.clone();
                sorted.sort_unstable();
                let together = sorted == lanes && sorted.windows(2).all(|w| w[0] < w[1]);
                match self.direct(&plain, &lanes, false).filter(|_| together) {
                    Some(mut op) => {
                        op.neg = src_i.neg;
                        op.abs = src_i.abs;
                        planned.push((r, lanes, op));
                        for j in group {
                            done[j] = true;
                        }
                    }
                    None => {
                        let one = Src {
                            comps: vec![src_i.comps[0]],
                            ..src_i
                        };
                        let op = self.operand(&one, &[mine[i].1], false);
                        planned.push((r, vec![mine[i].1], op));
                        done[i] = true;
                    }
                }
            }
        }
        // A move reading what an earlier one writes reads a copy made before them.
        for i in 0..planned.len() {
            let reads = |op: &Operand, lanes: &[u8]| -> Vec<(u32, u8)> {
                match op.reg {
                    Reg::Temp(t) => lanes.iter().map(|&d| (t, op.swz[usize::from(d)])).collect(),
                    _ => Vec::new(),
                }
            };
            let read = reads(&planned[i].2, &planned[i].1);
            let clobbered = planned[..i].iter().any(|(r, lanes, _)| {
                lanes
                    .iter()
                    .any(|&d| read.contains(&(*r, d)) && written.contains(&(*r, d)))
            });
            if clobbered {
                let lanes = planned[i].1.clone();
                let t = self.alloc(&lanes, None);
                let op = planned[i].2;
                self.code
                    .push(format!("mov r{t}{}, {}", mask_text(&lanes), op.text()));
                self.pending_free.push((t, lanes.clone()));
                let mut swz = [0, 1, 2, 3];
                fill_swizzle(&mut swz, &lanes);
                planned[i].2 = Operand {
                    reg: Reg::Temp(t),
                    swz,
                    neg: false,
                    abs: false,
                };
            }
        }
        for (r, lanes, op) in planned {
            self.code
                .push(format!("mov r{r}{}, {}", mask_text(&lanes), op.text()));
        }
        self.free_pending();
    }

    /// Where a relative read is when `a0.x` holds its offset: `c#[a0.x]`.
    fn relative_place(&self, n: NodeId) -> Option<Place> {
        if let Op::LoopRelative { var, offset, .. } = self.p.node(n).op {
            return Some(Place {
                reg: Reg::RelLoop(self.uniform_regs.get(&var).copied().unwrap_or(0) + offset),
                lanes: [0, 1, 2, 3],
                bcast: 0,
            });
        }
        let Op::Relative { var, offset } = self.p.node(n).op else {
            return None;
        };
        let key = Some(self.relative_key(n));
        let lane = self.a0.iter().position(|&k| k == key)?;
        Some(Place {
            reg: Reg::RelConst(
                self.uniform_regs.get(&var).copied().unwrap_or(0) + offset,
                lane as u8,
            ),
            lanes: [0, 1, 2, 3],
            bcast: 0,
        })
    }

    fn relative_key(&self, n: NodeId) -> (Comp, bool, bool) {
        let addr = self.resolve(&self.p.node(n).args[0]);
        (addr.comps[0], addr.neg, addr.abs)
    }

    /// The offset of relative read `n` into `a0`, unless it is there already: with the
    /// other lanes of the value it is a lane of, as one `mova` (four offsets of bones
    /// from one vector, say), where that value is in a register as it is.
    fn set_a0(&mut self, n: NodeId) {
        let key = self.relative_key(n);
        if self.a0.contains(&Some(key)) {
            return;
        }
        let (c, neg, abs) = key;
        let w = self.p.node(c.node).width;
        let live = self.live.get(&c.node).copied().unwrap_or(0);
        // vs_1_1's a0 has .x alone, set by `mov`.
        let vs_1_1 = self.profile.is_vs_1_1();
        if !neg && !abs && w > 1 && !vs_1_1 && self.places.contains_key(&c.node) {
            let lanes: Vec<u8> = (0..w)
                .filter(|&l| live & (1 << l) != 0 || l == c.lane)
                .collect();
            let src = Src {
                comps: lanes
                    .iter()
                    .map(|&lane| Comp { node: c.node, lane })
                    .collect(),
                neg: false,
                abs: false,
            };
            if let Some(op) = self.direct(&src, &lanes, false) {
                self.code
                    .push(format!("mova a0{}, {}", mask_text(&lanes), op.text()));
                for &l in &lanes {
                    self.a0[usize::from(l)] = Some((
                        Comp {
                            node: c.node,
                            lane: l,
                        },
                        false,
                        false,
                    ));
                }
                return;
            }
        }
        let addr = self.resolve(&self.p.node(n).args[0]);
        let op = self.operand(&addr, &[0], false);
        let m = if vs_1_1 { "mov" } else { "mova" };
        self.code.push(format!("{m} a0.x, {}", op.text()));
        self.free_pending();
        self.a0[0] = Some(key);
    }

    /// Before an instruction reads relative registers: all but those of one offset
    /// moved into temporaries first, and `a0.x` set for the rest, which it reads as
    /// they are.
    fn prepare_relative(&mut self, srcs: &[Src]) {
        let mut rel: Vec<NodeId> = srcs
            .iter()
            .flat_map(|s| s.comps.iter().map(|c| c.node))
            .filter(|&n| {
                !self.places.contains_key(&n) && matches!(self.p.node(n).op, Op::Relative { .. })
            })
            .collect();
        rel.dedup();
        let Some(&last) = rel.last() else { return };
        let keep = self.relative_key(last);
        for n in rel {
            if self.relative_key(n) != keep && !self.places.contains_key(&n) {
                if let Op::Relative { var, offset } = self.p.node(n).op {
                    self.emit_relative(n, var, offset);
                }
            }
        }
        self.set_a0(last);
    }

    /// Relative reads among `comps` (as an operand reads them) moved into temporaries:
    /// for code that reads several values without one `a0.x` for all.
    fn materialise_relative(&mut self, comps: &[Comp]) {
        let mut nodes: Vec<NodeId> = self.resolve(comps).comps.iter().map(|c| c.node).collect();
        nodes.extend(comps.iter().map(|c| c.node));
        nodes.dedup();
        for n in nodes {
            if let Op::Relative { var, offset } = self.p.node(n).op {
                if !self.places.contains_key(&n) {
                    self.emit_relative(n, var, offset);
                }
            }
        }
    }

    /// A register of a uniform at a run-time offset moved into a temporary.
    fn emit_relative(&mut self, n: NodeId, var: u32, offset: u32) {
        self.set_a0(n);
        let live = self.live.get(&n).copied().unwrap_or(0xF);
        let lanes: Vec<u8> = (0..4u8).filter(|l| live & (1 << l) != 0).collect();
        let place = self.place_at(n, &lanes, &lanes);
        let base = self.uniform_regs.get(&var).copied().unwrap_or(0) + offset;
        self.code.push(format!(
            "mov {}{}, c{base}[a0.x]{}",
            place.reg.name(),
            mask_text(&lanes),
            swizzle_text_for(&lanes)
        ));
    }

    fn emit_node(&mut self, n: NodeId) {
        let node = self.p.node(n).clone();
        let (positions, srcs) = self.live_srcs(n);
        let w = positions.len() as u8;
        let m = match node.op {
            Op::Mov | Op::Copy => "mov",
            Op::Add => "add",
            Op::Mul => "mul",
            Op::Mad => "mad",
            Op::Min => "min",
            Op::Max => "max",
            Op::Cmp => "cmp",
            Op::Slt => "slt",
            Op::Sge => "sge",
            Op::Lrp => "lrp",
            Op::Frc => "frc",
            Op::Abs => "abs",
            Op::Neg => "mov",
            Op::Sat => "mov_sat",
            Op::Dsx => "dsx",
            Op::Dsy => "dsy",
            Op::Rcp => "rcp",
            Op::Rsq => "rsq",
            Op::Exp => "exp",
            Op::Log => "log",
            Op::Pow => "pow",
            Op::Dp2Add => "dp2add",
            Op::Dp3 => "dp3",
            Op::Dp4 => "dp4",
            Op::Nrm => "nrm",
            Op::SinCos => "sincos",
            Op::Lit => "lit",
            Op::Tex(k) => match k {
                TexKind::Plain => "texld",
                TexKind::Proj => "texldp",
                TexKind::Bias => "texldb",
                TexKind::Lod => "texldl",
                TexKind::Grad => "texldd",
            },
            Op::Const(_)
            | Op::Input(_)
            | Op::Uniform { .. }
            | Op::Sampler(_)
            | Op::Carried { .. }
            | Op::After { .. }
            | Op::Joined { .. } => return,
            // Read where they are, through `a0.x` or `aL`, by the instructions that
            // use them.
            Op::Relative { .. } | Op::LoopRelative { .. } => return,
        };
        let componentwise = matches!(
            node.op,
            Op::Mov
                | Op::Copy
                | Op::Add
                | Op::Mul
                | Op::Mad
                | Op::Min
                | Op::Max
                | Op::Cmp
                | Op::Slt
                | Op::Sge
                | Op::Lrp
                | Op::Frc
                | Op::Abs
                | Op::Neg
                | Op::Sat
                | Op::Dsx
                | Op::Dsy
        );
        if node.op == Op::Sat && !self.profile.pixel && self.profile.major < 3 {
            return self.emit_sat_vs2(n, &srcs);
        }
        if node.op == Op::Copy && !srcs[0].neg && !srcs[0].abs && self.needs_gather(&srcs[0].comps)
        {
            // A shared gather: its parts moved straight into its own register.
            self.materialise_relative(&srcs[0].comps);
            let lanes: Vec<u8> = positions.clone();
            let place = self.place_at(n, &positions, &lanes);
            let Reg::Temp(r) = place.reg else { return };
            let dst: Vec<u8> = positions
                .iter()
                .map(|&p| place.lanes[usize::from(p)])
                .collect();
            self.fill(r, &srcs[0].comps, &dst);
            self.release(&srcs[0].comps);
            return;
        }
        // The lanes the result goes to: a hint's, else where an operand's are, else the
        // first; the register is chosen once the operands are read.
        // vs_1_1's `frc` writes .x and .y only.
        let fixed_lanes = matches!(node.op, Op::SinCos | Op::Nrm | Op::Lit | Op::Tex(_))
            || node.op == Op::Frc && self.profile.is_vs_1_1();
        let dst_lanes: Vec<u8> = if node.op == Op::SinCos {
            positions.clone()
        } else if fixed_lanes {
            (0..w).collect()
        } else if let Some(h) = self.hints.get(&n) {
            positions.iter().map(|&p| h.lanes[usize::from(p)]).collect()
        } else {
            let prefer = if componentwise {
                srcs.iter().find_map(|s| {
                    let nodes: HashSet<NodeId> = s.comps.iter().map(|c| c.node).collect();
                    if nodes.len() != 1 {
                        return None;
                    }
                    let place = self.places.get(nodes.iter().next().unwrap())?;
                    distinct_lanes(place, &s.comps)
                })
            } else {
                None
            };
            match prefer {
                Some(l) => l,
                None if w == 1 => vec![self.first_free_lane()],
                None => (0..w).collect(),
            }
        };
        // Free operand lanes that die here, so the result may reuse them (every source
        // is read before the destination is written), except where the model forbids a
        // destination that is also a source.
        let reuse_ok = !matches!(
            node.op,
            Op::Nrm | Op::SinCos | Op::Lrp | Op::Tex(_) | Op::Dp2Add
        );
        // Literal operands of an instruction that reads more than one go into one `def`.
        let lits: Vec<(Vec<f32>, Vec<u8>)> = srcs
            .iter()
            .filter_map(|s| {
                let v: Option<Vec<f32>> = s.comps.iter().map(|&c| self.is_const(c)).collect();
                let lanes = if componentwise {
                    dst_lanes.clone()
                } else {
                    vec![dst_lanes[0]; s.comps.len()]
                };
                Some((v?, lanes))
            })
            .collect();
        self.def_pref = None;
        if lits.len() > 1 && (componentwise || matches!(node.op, Op::Pow)) {
            self.def_pref = self.shared_def(&lits);
        }
        self.prepare_relative(&srcs);
        let mut ops = Vec::new();
        match node.op {
            Op::Tex(_) => {
                // Coordinates and gradients take no source modifier (fxc computes a
                // negated or absolute one first); ps_2_x reads coordinates whole.
                let coords = &srcs[0];
                let identity = self.profile.major == 2;
                let read: Vec<u8> = (0..coords.comps.len() as u8).collect();
                let mut coord = self.unmodified(coords, &read, identity);
                if identity && !matches!(coord.reg, Reg::Temp(_) | Reg::Texture(_)) {
                    // ps_2_x reads coordinates from t# or r# only.
                    let r = self.gather(&coords.comps, &read);
                    coord = Operand {
                        reg: Reg::Temp(r),
                        swz: [0, 1, 2, 3],
                        neg: false,
                        abs: false,
                    };
                }
                ops.push(coord);
                ops.push(self.operand(&srcs[1], &[0], false));
                for g in &srcs[2..] {
                    let read: Vec<u8> = (0..g.comps.len() as u8).collect();
                    ops.push(self.unmodified(g, &read, false));
                }
            }
            Op::Dp3 | Op::Dp4 | Op::Nrm | Op::Lit => {
                let lanes: Vec<u8> = (0..srcs[0].comps.len() as u8).collect();
                for s in &srcs {
                    ops.push(self.operand(s, &lanes, false));
                }
            }
            Op::Dp2Add => {
                ops.push(self.operand(&srcs[0], &[0, 1], false));
                ops.push(self.operand(&srcs[1], &[0, 1], false));
                ops.push(self.operand(&srcs[2], &dst_lanes, false));
            }
            Op::SinCos => {
                ops.push(self.operand(&srcs[0], &[0], false));
                if self.profile.major < 3 {
                    let (a, b) = self.sincos_constants();
                    ops.push(Operand {
                        reg: Reg::Const(a),
                        swz: [0, 1, 2, 3],
                        neg: false,
                        abs: false,
                    });
                    ops.push(Operand {
                        reg: Reg::Const(b),
                        swz: [0, 1, 2, 3],
                        neg: false,
                        abs: false,
                    });
                }
            }
            _ if componentwise => {
                for s in &srcs {
                    let s = if node.op == Op::Neg {
                        Src {
                            neg: !s.neg,
                            ..s.clone()
                        }
                    } else {
                        s.clone()
                    };
                    ops.push(self.operand(&s, &dst_lanes, false));
                }
            }
            _ => {
                // Scalar instructions read one lane, replicated.
                for s in &srcs {
                    let lanes = vec![dst_lanes[0]; s.comps.len()];
                    ops.push(self.operand(s, &lanes, false));
                }
            }
        }
        self.def_pref = None;
        let temps = if matches!(node.op, Op::SinCos) {
            Vec::new()
        } else {
            self.fit_ports(&mut ops)
        };
        if reuse_ok {
            for s in &srcs {
                self.release(&s.comps);
            }
            for (r, lanes) in std::mem::take(&mut self.pending_free) {
                self.free(r, &lanes);
            }
            for (r, lanes) in &temps {
                self.free(*r, lanes);
            }
        }
        let place = self.place_at(n, &positions, &dst_lanes);
        let dst = format!(
            "{}{}",
            place.reg.name(),
            match node.op {
                Op::Tex(_) => String::new(),
                Op::Nrm => mask_text(&[0, 1, 2]),
                _ if place.bcast != 0 => mask_text(
                    &(0..4u8)
                        .filter(|l| place.bcast & (1 << l) != 0)
                        .collect::<Vec<_>>()
                ),
                _ => mask_text(&dst_lanes),
            }
        );
        let texts: Vec<String> = ops.iter().map(Operand::text).collect();
        self.code.push(format!("{m} {dst}, {}", texts.join(", ")));
        if !reuse_ok {
            for (r, lanes) in temps {
                self.free(r, &lanes);
            }
            for s in &srcs {
                self.release(&s.comps);
            }
            for (r, lanes) in std::mem::take(&mut self.pending_free) {
                self.free(r, &lanes);
            }
        }
        if self.uses_left.get(&n).copied().unwrap_or(0) == 0 {
            self.release(&[]);
        }
    }

    /// saturate in a vertex shader before 3.0, which has no `_sat`: max then min.
    fn emit_sat_vs2(&mut self, n: NodeId, srcs: &[Src]) {
        let w = self.p.node(n).width;
        let (positions, _) = self.live_srcs(n);
        let lanes: Vec<u8> = (0..positions.len() as u8).collect();
        let _ = w;
        let a = self.operand(&srcs[0], &lanes, false).text();
        for s in srcs {
            self.release(&s.comps);
        }
        self.free_pending();
        let place = self.place_at(n, &positions, &lanes);
        let dst = format!("{}{}", place.reg.name(), mask_text(&lanes));
        // A constant register beside the literal 0 is two constants in one instruction,
        // past vs_2_0's one read port: it is copied first (Microsoft copies the 0).
        let a = match a.trim_start_matches('-').strip_prefix('c') {
            Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => {
                self.code.push(format!("mov {dst}, {a}"));
                dst.clone()
            }
            _ => a,
        };
        let (zr, zl) = self.const_lanes(&vec![0.0; lanes.len()], &lanes);
        let (or, ol) = self.const_lanes(&vec![1.0; lanes.len()], &lanes);
        let sw = |l: &[u8], d: &[u8]| {
            let mut s = [0u8; 4];
            for (i, &x) in d.iter().enumerate() {
                s[usize::from(x)] = l[i];
            }
            fill_swizzle(&mut s, d);
            swizzle_text(s)
        };
        self.code
            .push(format!("max {dst}, {a}, c{zr}{}", sw(&zl, &lanes)));
        self.code
            .push(format!("min {dst}, {dst}, c{or}{}", sw(&ol, &lanes)));
    }

    /// Shader model 2's `sincos` constants (D3DSINCOSCONST1/2), in two `def`s.
    fn sincos_constants(&mut self) -> (u32, u32) {
        if let Some(c) = self.sincos_consts {
            return c;
        }
        self.defs.push([
            Some(-1.550_722_3e-6),
            Some(-2.170_787_2e-5),
            Some(0.002_604_167),
            Some(0.000_260_416_7),
        ]);
        self.defs
            .push([Some(-0.020_833_334), Some(-0.125), Some(1.0), Some(0.5)]);
        let c = (
            self.def_reg(self.defs.len() - 2),
            self.def_reg(self.defs.len() - 1),
        );
        self.sincos_consts = Some(c);
        c
    }

    fn kill(&mut self, comps: &[Comp]) {
        self.materialise_relative(comps);
        let src = self.resolve(comps);
        let mut c4 = src.comps.clone();
        while c4.len() < 4 {
            c4.push(*src.comps.last().unwrap());
        }
        let full = Src {
            comps: c4,
            ..src.clone()
        };
        // texkill's operand is its destination: a whole register, without swizzle or
        // modifier, r# or t# in shader model 2, r# or v# in 3 (`texkill---ps.md`). Any
        // other value is moved into a temporary first, as fxc does.
        let sm3 = self.profile.major >= 3;
        let readable = |reg: Reg| match reg {
            Reg::Temp(_) => true,
            Reg::Texture(_) => !sm3,
            Reg::Input(_) => sm3,
            _ => false,
        };
        let plain = Src {
            neg: false,
            abs: false,
            ..full.clone()
        };
        let text = match self.direct(&plain, &[0, 1, 2, 3], true) {
            Some(t) if !full.neg && !full.abs && readable(t.reg) => t.reg.name(),
            _ => {
                let r = self.alloc(&[0, 1, 2, 3], None);
                let o = self.operand(&full, &[0, 1, 2, 3], false).text();
                self.code.push(format!("mov r{r}, {o}"));
                self.free(r, &[0, 1, 2, 3]);
                format!("r{r}")
            }
        };
        self.code.push(format!("texkill {text}"));
        self.release(&src.comps);
        self.free_pending();
    }

    fn output(
        &mut self,
        usage: &str,
        index: u32,
        comps: &[Comp],
        dcls: &mut Vec<String>,
        next_o: &mut u32,
    ) {
        self.materialise_relative(comps);
        let src = self.resolve(comps);
        let n = src.comps.len().min(4);
        let pixel = self.profile.pixel;
        let (reg, full) = match (pixel, usage) {
            (true, "COLOR") => (format!("oC{index}"), true),
            (true, "DEPTH") => ("oDepth".to_string(), false),
            (true, _) => {
                self.errors.push(format!("'{usage}{index}' is not a pixel shader output: write COLOR# (SV_Target#) or DEPTH"));
                return;
            }
            (false, _) if self.profile.major >= 3 => {
                let o = *next_o;
                *next_o += 1;
                let lanes: Vec<u8> = (0..n as u8).collect();
                // A scalar point size is written whole, from one lane, as fxc writes it;
                // a scalar fog is `dcl_fog o#.x`, as any other scalar output.
                let whole = usage == "POSITION" || (n == 1 && usage == "PSIZE");
                dcls.push(format!(
                    "dcl_{}{} o{o}{}",
                    usage_name(usage),
                    index,
                    if whole {
                        String::new()
                    } else {
                        mask_text(&lanes)
                    }
                ));
                (format!("o{o}"), whole && usage != "POSITION")
            }
            (false, "POSITION") => ("oPos".to_string(), false),
            (false, "COLOR") => (format!("oD{index}"), false),
            (false, "TEXCOORD") => (format!("oT{index}"), false),
            (false, "FOG") => ("oFog".to_string(), false),
            (false, "PSIZE") => ("oPts".to_string(), false),
            (false, _) => {
                self.errors.push(format!("'{usage}{index}' is not a vs_2_0 output: write POSITION, COLOR#, TEXCOORD#, FOG or PSIZE"));
                return;
            }
        };
        if usage == "DEPTH"
            || (!pixel && self.profile.major < 3 && matches!(usage, "FOG" | "PSIZE"))
        {
            let s = Src {
                comps: vec![src.comps[0]],
                ..src.clone()
            };
            // ps_2_x writes oDepth from an unmodified source (`…-output-depth.md`): a
            // negation is computed into a temporary first, as fxc does.
            let o = if pixel && self.profile.major < 3 {
                self.unmodified(&s, &[3], false)
            } else {
                self.operand(&s, &[0], false)
            };
            // Scalar registers: fxc writes them whole, from one lane.
            self.code.push(format!("mov {reg}, {}", o.text()));
            self.free_pending();
            return;
        }
        let mut c4 = src.comps.clone();
        if full {
            while c4.len() < 4 {
                c4.push(*src.comps.last().unwrap());
            }
        }
        let lanes: Vec<u8> = (0..c4.len() as u8).collect();
        let s = Src {
            comps: c4,
            ..src.clone()
        };
        let strict = pixel && self.profile.major < 3;
        let o = if strict && (s.neg || s.abs) {
            let r = self.alloc(&lanes, None);
            let o = self.operand(&s, &lanes, false).text();
            self.code.push(format!("mov r{r}, {o}"));
            self.free(r, &lanes);
            format!("r{r}")
        } else {
            self.operand(&s, &lanes, strict).text()
        };
        let mask = if full {
            String::new()
        } else {
            mask_text(&lanes)
        };
        self.code.push(format!("mov {reg}{mask}, {o}"));
        self.free_pending();
    }
}

/// `needed` with what only outputs read, computed from the shader's inputs, constants
/// and one another at the top level, moved to the end: a vertex shader's position computed
/// first in its source holds no register through the loops that follow.
fn outputs_last(
    p: &Program,
    profile: Profile,
    regions: &[Region],
    needed: Vec<NodeId>,
) -> Vec<NodeId> {
    // What each node reads, as its operands read it (through `mov`s, negations).
    let reads = |comps: &[Comp]| -> Vec<NodeId> {
        let mut nodes: Vec<NodeId> = comps.iter().map(|c| c.node).collect();
        for c in comps {
            nodes.extend(resolve_in(p, profile, &[*c]).comps.iter().map(|c| c.node));
        }
        nodes
    };
    let mut readers: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
    for &n in &needed {
        for a in &p.node(n).args {
            for m in reads(a) {
                readers.entry(m).or_default().push(n);
            }
        }
    }
    let mut output_read: HashSet<NodeId> = HashSet::new();
    for o in &p.outputs {
        output_read.extend(reads(&o.comps));
    }
    let tests: Vec<Comp> = p
        .kills
        .iter()
        .flatten()
        .copied()
        .chain((0..p.branches.len() as u32).flat_map(|br| condition_comps(p, br)))
        .chain((0..p.loops.len() as u32).flat_map(|lp| exit_comps(p, lp)))
        .collect();
    let in_tests: HashSet<NodeId> = reads(&tests).into_iter().collect();
    let leaf = |n: NodeId| {
        matches!(
            p.node(n).op,
            Op::Input(_) | Op::Uniform { .. } | Op::Const(_) | Op::Sampler(_)
        )
    };
    // Arithmetic at the top level of the inputs, constants and such arithmetic alone.
    let mut of_leaves: HashSet<NodeId> = HashSet::new();
    for &n in &needed {
        let arithmetic = matches!(
            p.node(n).op,
            Op::Add | Op::Mul | Op::Mad | Op::Dp3 | Op::Dp4
        );
        if arithmetic
            && regions[n as usize] == Region::Top
            && !in_tests.contains(&n)
            && p.node(n)
                .args
                .iter()
                .flat_map(|a| reads(a))
                .all(|m| leaf(m) || of_leaves.contains(&m))
        {
            of_leaves.insert(n);
        }
    }
    // From the last: such a node moves when the outputs read it and every node that
    // reads it moves too.
    let mut moved: HashSet<NodeId> = HashSet::new();
    for &n in needed.iter().rev() {
        if !of_leaves.contains(&n) {
            continue;
        }
        let by = readers.get(&n).map_or(&[][..], Vec::as_slice);
        let ends_in_output = output_read.contains(&n) || !by.is_empty();
        if ends_in_output && by.iter().all(|r| moved.contains(r)) {
            moved.insert(n);
        }
    }
    let (stay, last): (Vec<NodeId>, Vec<NodeId>) =
        needed.into_iter().partition(|n| !moved.contains(n));
    stay.into_iter().chain(last).collect()
}

/// The register lanes `comps` (lanes of the value at `place`) are at, where no two are
/// one.
fn distinct_lanes(place: &Place, comps: &[Comp]) -> Option<Vec<u8>> {
    let lanes: Vec<u8> = comps
        .iter()
        .map(|c| place.lanes[usize::from(c.lane)])
        .collect();
    let mut distinct = lanes.clone();
    distinct.sort_unstable();
    distinct.dedup();
    (distinct.len() == lanes.len()).then_some(lanes)
}

/// The swizzle that reads `lanes` in place (`.xz` for x and z).
fn swizzle_text_for(lanes: &[u8]) -> String {
    let mut swz = [0, 1, 2, 3];
    fill_swizzle(&mut swz, lanes);
    swizzle_text(swz)
}

/// Swizzle lanes the instruction does not read copy the last one it does, as fxc prints
/// them (`r0.xyyy` is `.xy`).
fn fill_swizzle(swz: &mut [u8; 4], read: &[u8]) {
    if read.is_empty() {
        return;
    }
    let mut last = swz[usize::from(*read.iter().min().unwrap())];
    for l in 0..4u8 {
        if read.contains(&l) {
            last = swz[usize::from(l)];
        } else {
            swz[usize::from(l)] = last;
        }
    }
}

/// A register an operand reads, as read ports count them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum PortKey {
    /// A uniform's or an input's register (its node).
    Node(NodeId),
    /// Literal values, from `def`s.
    Def,
}

/// Look through `neg`, `abs` (shader model 3) and `mov` nodes.
pub(super) fn resolve_in(p: &Program, profile: Profile, comps: &[Comp]) -> Src {
    let mut src = Src {
        comps: comps.to_vec(),
        neg: false,
        abs: false,
    };
    loop {
        // Looked through only where every component is of one kind.
        let Some(first) = src.comps.first().map(|c| p.node(c.node).op) else {
            return src;
        };
        if src.comps.iter().any(|c| p.node(c.node).op != first) {
            return src;
        }
        match first {
            Op::Neg => {
                if !src.abs {
                    src.neg = !src.neg;
                }
            }
            Op::Abs if profile.major >= 3 => src.abs = true,
            Op::Mov => {}
            _ => return src,
        }
        src.comps = src
            .comps
            .iter()
            .map(|c| p.node(c.node).args[0][usize::from(c.lane)])
            .collect();
    }
}

/// The register file and key of an operand that reads one register as it is.
fn port_key(p: &Program, profile: Profile, src: &Src) -> Option<(RegisterType, PortKey)> {
    if src.comps.iter().all(|&c| p.constant(c).is_some()) {
        return Some((RegisterType::Const, PortKey::Def));
    }
    let n = src.comps[0].node;
    if src.comps.iter().any(|c| c.node != n) {
        return None;
    }
    match p.node(n).op {
        Op::Uniform { .. } => Some((RegisterType::Const, PortKey::Node(n))),
        Op::Input(i) => {
            let input = &p.inputs[i as usize];
            let file = match input.usage.as_str() {
                "VPOS" | "VFACE" => return None,
                "COLOR" if profile.pixel && profile.major < 3 => RegisterType::Input,
                _ if profile.pixel && profile.major < 3 => RegisterType::AddrOrTexture,
                _ => RegisterType::Input,
            };
            Some((file, PortKey::Node(n)))
        }
        _ => None,
    }
}

/// The highest whole number a relative address `c` can hold, where the code says: a
/// literal, sums and products by literals of such, and a loop's counter that starts at
/// one and steps up by a literal for a known count of iterations (`for (int i = 0; i < 3;
/// i++)`). `depth` bounds the search through nested loops' values.
fn highest(p: &Program, c: Comp, depth: u32) -> Option<u32> {
    if depth > 16 {
        return None;
    }
    let whole = |v: f32| (v >= 0.0 && v.fract() == 0.0 && v <= 65536.0).then_some(v as u32);
    let node = p.node(c.node);
    let arg = |i: usize| {
        node.args
            .get(i)
            .map(|a| a[usize::from(c.lane).min(a.len() - 1)])
    };
    match node.op {
        Op::Const(_) => whole(p.constant(c)?),
        Op::Mov => highest(p, arg(0)?, depth + 1),
        Op::Add => highest(p, arg(0)?, depth + 1)?.checked_add(highest(p, arg(1)?, depth + 1)?),
        Op::Mul => highest(p, arg(0)?, depth + 1)?.checked_mul(highest(p, arg(1)?, depth + 1)?),
        Op::Carried { lp, index } => {
            let l = &p.loops[lp as usize];
            let LoopCount::Const(count) = l.count else {
                return None;
            };
            let (start, end) = l.carried.get(index as usize)?;
            let lane = usize::from(c.lane);
            let (start, end) = (*start.get(lane)?, *end.get(lane)?);
            // The end of an iteration is the counter plus a step.
            let stepped = p.node(end.node);
            if stepped.op != Op::Add {
                return None;
            }
            let at =
                |k: usize| stepped.args[k][usize::from(end.lane).min(stepped.args[k].len() - 1)];
            let step = [(0, 1), (1, 0)].into_iter().find_map(|(x, k)| {
                (at(x) == c)
                    .then(|| p.constant(at(k)).and_then(whole))
                    .flatten()
            })?;
            let first = highest(p, start, depth + 1)?;
            first.checked_add(step.checked_mul(count.checked_sub(1)?)?)
        }
        _ => None,
    }
}

/// The version whose limits a profile's code must fit (ps_2_x's and vs_2_x's, 2_1).
fn model_version(profile: Profile) -> Version {
    Version {
        kind: if profile.pixel {
            ShaderKind::Pixel
        } else {
            ShaderKind::Vertex
        },
        major: profile.major,
        minor: if profile.minor > 0 { 1 } else { 0 },
    }
}

/// Instructions that would read more registers of a kind than the model's read ports
/// allow get one of them through a copy to a temporary, as Microsoft's compiler does:
/// the register the most such instructions read, copied once for all of them; literals
/// copied together, four to a register.
fn fix_ports(p: &mut Program, profile: Profile) {
    let Some(lim) = limits::limits(model_version(profile)) else {
        return;
    };
    let ports = |file: RegisterType| {
        lim.register(file)
            .and_then(|r| r.read_ports)
            .unwrap_or(u32::MAX) as usize
    };
    let needed = needed_nodes(p, profile);
    // Each instruction's reads per file, for those over a limit.
    let mut over: Vec<(NodeId, RegisterType, Vec<PortKey>)> = Vec::new();
    let mut count: HashMap<PortKey, usize> = HashMap::new();
    for &n in &needed {
        let node = p.node(n);
        if matches!(
            node.op,
            Op::Const(_)
                | Op::Input(_)
                | Op::Uniform { .. }
                | Op::Sampler(_)
                | Op::Copy
                | Op::Mov
                | Op::Neg
                | Op::SinCos
                | Op::After { .. }
                | Op::Joined { .. }
        ) {
            continue;
        }
        let mut files: BTreeMap<u8, Vec<PortKey>> = BTreeMap::new();
        for a in &node.args {
            let src = resolve_in(p, profile, a);
            if let Some((file, key)) = port_key(p, profile, &src) {
                let keys = files.entry(file as u8).or_default();
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
        for (file, keys) in files {
            let file = RegisterType::from_u8(file).unwrap_or(RegisterType::Const);
            if keys.len() > ports(file) {
                for k in &keys {
                    *count.entry(*k).or_default() += 1;
                }
                over.push((n, file, keys));
            }
        }
    }
    if over.is_empty() {
        return;
    }
    // Which register each instruction copies.
    // A register another instruction already copies is copied again by none.
    let mut victims: Vec<(NodeId, PortKey)> = Vec::new();
    let mut copied: HashSet<PortKey> = HashSet::new();
    for (n, file, mut keys) in over {
        while keys.len() > ports(file) {
            let (i, _) = keys
                .iter()
                .enumerate()
                .max_by_key(|(i, k)| (copied.contains(k), count[k], std::cmp::Reverse(*i)))
                .unwrap();
            let key = keys.remove(i);
            copied.insert(key);
            victims.push((n, key));
        }
    }
    // Literals copied by some instruction, in a pool of copies four lanes wide.
    let mut pool_values: Vec<f32> = Vec::new();
    for &(n, key) in &victims {
        if key != PortKey::Def {
            continue;
        }
        for a in &p.node(n).args {
            let src = resolve_in(p, profile, a);
            if src.comps.iter().all(|&c| p.constant(c).is_some()) {
                for &c in &src.comps {
                    let v = p.constant(c).unwrap();
                    if !pool_values.iter().any(|x| x.to_bits() == v.to_bits()) {
                        pool_values.push(v);
                    }
                }
            }
        }
    }
    let mut pool: HashMap<u32, Comp> = HashMap::new();
    for chunk in pool_values.chunks(4) {
        let comps: Vec<Comp> = chunk.iter().map(|&v| p.konst(v)).collect();
        let copy = p.raw(Op::Copy, vec![comps], chunk.len() as u8);
        for (i, &v) in chunk.iter().enumerate() {
            pool.insert(v.to_bits(), copy[i]);
        }
    }
    let mut copies: HashMap<NodeId, Vec<Comp>> = HashMap::new();
    for (n, key) in victims {
        let args = p.node(n).args.clone();
        let mut new_args = Vec::with_capacity(args.len());
        for a in args {
            let src = resolve_in(p, profile, &a);
            let replaced: Option<Vec<Comp>> = match key {
                PortKey::Def if src.comps.iter().all(|&c| p.constant(c).is_some()) => Some(
                    src.comps
                        .iter()
                        .map(|&c| pool[&p.constant(c).unwrap().to_bits()])
                        .collect(),
                ),
                PortKey::Node(v) if src.comps.iter().all(|c| c.node == v) => {
                    let copy = match copies.get(&v) {
                        Some(c) => c.clone(),
                        None => {
                            let width = p.node(v).width;
                            let c = p.raw(Op::Copy, vec![Program::lanes(v, width)], width);
                            copies.insert(v, c.clone());
                            c
                        }
                    };
                    Some(
                        src.comps
                            .iter()
                            .map(|c| copy[usize::from(c.lane)])
                            .collect(),
                    )
                }
                _ => None,
            };
            new_args.push(match replaced {
                Some(mut comps) => {
                    if src.abs {
                        comps = p.raw(Op::Abs, vec![comps.clone()], comps.len() as u8);
                    }
                    if src.neg {
                        comps = p.raw(Op::Neg, vec![comps.clone()], comps.len() as u8);
                    }
                    comps
                }
                None => a,
            });
        }
        p.nodes[n as usize].args = new_args;
    }
}

#[cfg(test)]
mod tests {
    use crate::shader::d3d9::run::{
        Bindings, Inputs, OutputRegister, Outputs, Program, Sampler, Semantic, Texture,
    };
    use crate::shader::d3d9::{bytecode, validate};
    use crate::shader::hlsl::compile::{compile, Compiled, Options};

    /// `source` compiled for `profile`, as `d3d9 compile` would: it must compile, and the
    /// validator must pass what comes out.
    fn compiled_code(source: &str, profile: &str) -> Compiled {
        let options = Options {
            profile: profile.into(),
            ..Options::default()
        };
        let c = compile("test.hlsl", source, None, &options)
            .unwrap_or_else(|f| panic!("{profile}: {}", f.render()));
        let found = validate::validate(&bytecode::parse(&c.bytecode).unwrap());
        assert!(found.is_empty(), "{profile}: {found:?}\n{}", c.asm);
        c
    }

    /// [`compiled_code`], ready to run.
    fn compiled(source: &str, profile: &str) -> Program {
        Program::new(&compiled_code(source, profile).bytecode).unwrap()
    }

    /// A loop on a count the game sets is kept (`rep i0`) when a value it leaves as it is
    /// starts at a denormal literal: `r0.w * 1.0` of the literal folds to 0, as the
    /// hardware writes a denormal result, where the trial lowering (the value carried)
    /// left `r0.w` as it was; vs_2_0 cannot unroll such a loop, and the text the
    /// d3d9_decompile fuzz target made of a shader of three such loops did not compile.
    #[test]
    fn a_loop_keeps_a_denormal_it_leaves_alone() {
        let source = "int i0 : register(i0);\nfloat4 c15 : register(c15);\n\
                      float4 c16[20] : register(c16);\n\
                      float4 main(float4 v0 : POSITION0) : POSITION\n{\n    \
                      float4 r0 = 0;\n    float4 r4 = 0;\n    int4 a0 = 0;\n    \
                      r0.w = 2.2959e-41;\n    for (int k0 = 0; k0 < i0; k0++)\n    {\n        \
                      a0.x = (int)floor((r0.w + c15.x) * 3.0 + 0.5);\n        \
                      r4.xyz = v0.xyz * c16[a0.x].xyz + r4.xyz;\n        \
                      r0.w = r0.w * 1.0;\n    }\n    return r4;\n}\n";
        let c = compiled_code(source, "vs_2_0");
        assert!(c.asm.contains("rep i0"), "{}", c.asm);
    }

    /// A `bool` uniform in a float register is tested as Microsoft's code tests it, true
    /// above 0 (`cmp_sat oC0.xyz, -c4.x, …` of the held-out `lumasharpen`'s ShowSharpen):
    /// D3DX sets it 0 or 1, and a game's -1.5 there takes the false branch, as on
    /// Microsoft's code (ours read `-c4_abs.x`, true for any value but 0).
    #[test]
    fn a_bool_uniform_is_true_above_zero_as_microsofts_code_tests_it() {
        let source = "bool b;\nfloat4 u;\nfloat4 main() : COLOR\n{\n    float4 r = u;\n    \
                      if (b)\n        r = -u;\n    return r;\n}\n";
        for profile in ["ps_2_0", "ps_3_0"] {
            let p = compiled(source, profile);
            let u = [0.25, -0.5, 1.0, 2.0];
            for (b, want) in [(1.0, [-0.25, 0.5, -1.0, -2.0]), (0.0, u), (-1.5, u)] {
                let out = run(&p, [0.0; 4], &[("b", [b, 0.0, 0.0, 0.0]), ("u", u)], None);
                assert_eq!(colour(&out), want, "{profile}: b = {b}");
            }
        }
    }

    /// A literal of a value twice (`(a, b, c, b)`) read again and again in ps_2_0, whose
    /// swizzles cannot say `.xyzy`: one `def`, read as placed (each read made a register
    /// of its own, c32 and past after 20 reads, and 23,104 reads of an unrolled loop took
    /// the code generator 13 s: the d3d9_decompile fuzz target's timeout).
    #[test]
    fn a_literal_holding_a_value_twice_is_one_def_however_often_read() {
        let source = "float4 u;\nfloat4 main() : COLOR\n{\n    float4 r = u;\n    \
                      for (int i = 0; i < 12; i++)\n        r = r + float4(0.5, 3.0, 0.25, 3.0);\n    \
                      return r;\n}\n";
        let c = compiled_code(source, "ps_2_0");
        let defs = c.asm.lines().filter(|l| l.starts_with("def ")).count();
        assert_eq!(defs, 1, "{}", c.asm);
        let out = run(
            &compiled(source, "ps_2_0"),
            [0.0; 4],
            &[("u", [1.0, 2.0, 3.0, 4.0])],
            None,
        );
        assert_eq!(colour(&out), [7.0, 38.0, 6.0, 40.0]);
    }

    /// Taps of a kernel, `uv + k * P * s` for literal offsets `k`: the values' product
    /// `P * s` is made once and each tap is one `mad` by its literals (4 instructions
    /// where d3dcompiler_43 writes 7, the held-out `dof`'s eight taps alike).
    #[test]
    fn the_taps_of_a_kernel_share_the_product_of_their_values() {
        let source = "float2 P;\nfloat s;\nfloat4 main(float2 uv : TEXCOORD0) : COLOR\n{\n    \
                      float2 a = uv + float2(1, 0.5) * P * s;\n    \
                      float2 b = uv + float2(-1, 0.25) * P * s;\n    return float4(a, b);\n}\n";
        let c = compiled_code(source, "ps_3_0");
        let count = |m: &str| c.asm.lines().filter(|l| l.starts_with(m)).count();
        assert_eq!((count("mul "), count("mad ")), (1, 2), "{}", c.asm);
        let (uv, p, s) = ([0.25f32, -0.5, 0.0, 0.0], [0.125f32, 2.0, 0.0, 0.0], 3.0f32);
        let out = run(
            &compiled(source, "ps_3_0"),
            uv,
            &[("P", p), ("s", [s, 0.0, 0.0, 0.0])],
            None,
        );
        let tap = |k: [f32; 2]| [uv[0] + k[0] * p[0] * s, uv[1] + k[1] * p[1] * s];
        let (a, b) = (tap([1.0, 0.5]), tap([-1.0, 0.25]));
        assert_eq!(colour(&out), [a[0], a[1], b[0], b[1]]);
    }

    /// A product only sums read is folded into each as a `mad`, as Microsoft's compilers
    /// write `d * k - a` and `d * k - b` (the held-out `dof`'s depth against the focus
    /// and against the centre's); where a sum takes a product of its own first, the
    /// shared one is computed once.
    #[test]
    fn a_product_only_sums_read_is_a_mad_in_each() {
        let both = "float4 k;\nfloat4 main(float4 a : TEXCOORD0) : COLOR\n\
                    { float d = a.x * k.w; return float4(d - k.x, d - a.y, 0, 1); }\n";
        let c = compiled_code(both, "ps_2_0");
        let count = |m: &str, asm: &str| asm.lines().filter(|l| l.starts_with(m)).count();
        assert_eq!(
            (count("mad ", &c.asm), count("mul ", &c.asm)),
            (2, 0),
            "{}",
            c.asm
        );
        let (a, k) = ([0.25f32, 0.5, 2.0, 1.0], [0.5f32, -1.0, 0.0, 3.0]);
        let out = run(&compiled(both, "ps_2_0"), a, &[("k", k)], None);
        let d = a[0] * k[3];
        assert_eq!(colour(&out), [d - k[0], d - a[1], 0.0, 1.0]);
        // Each sum of the shared product and one of its own: the own one folds, the shared
        // one is one `mul` (3 instructions, not a `mul` and a `mad` per sum).
        let own = "float4 k;\nfloat4 main(float4 a : TEXCOORD0) : COLOR\n\
                   { float d = a.x * k.w; return float4(d + a.y * k.x, d - a.z * k.y, 0, 1); }\n";
        let c = compiled_code(own, "ps_2_0");
        assert_eq!(
            (count("mad ", &c.asm), count("mul ", &c.asm)),
            (2, 1),
            "{}",
            c.asm
        );
    }

    /// vs_3_0 declares a scalar fog output's one lane (`dcl_fog o#.x`) and a point size
    /// whole (`dcl_psize o#`), as d3dcompiler_43 does (checked through msd3d; ours wrote
    /// the fog whole, found running the held-out `fog_vs` beside Microsoft's code).
    #[test]
    fn a_scalar_fog_is_one_lane_and_a_point_size_whole() {
        let source = "struct O { float4 p : POSITION; float s : PSIZE; float f : FOG; };\n\
                      O main(float4 p : POSITION) { O o; o.p = p; o.s = p.x * 2; o.f = p.y; return o; }\n";
        let c = compiled_code(source, "vs_3_0");
        let dcl = |usage: &str| {
            c.asm
                .lines()
                .find(|l| l.starts_with(usage))
                .and_then(|l| l.split_whitespace().nth(1))
                .unwrap_or_default()
                .to_string()
        };
        assert!(!dcl("dcl_psize").contains('.'), "{}", c.asm);
        assert!(dcl("dcl_fog").ends_with(".x"), "{}", c.asm);
    }

    /// vs_2_0 saturates by `max` with 0 and `min` with 1, literals in constant registers:
    /// a uniform saturated is copied first, as one instruction reads one constant
    /// register (the text the d3d9_decompile fuzz target made of `mov_sat r6.xyw, c11`
    /// did not compile back).
    #[test]
    fn a_saturated_uniform_fits_vs_2_0s_read_ports() {
        let source = "float4 w : register(c11);\n\
                      float4 main(float4 p : POSITION) : POSITION\n{\n    \
                      float4 r = 12;\n    r.xyw = saturate(w.xyw);\n    return p * r;\n}\n";
        let sm2 = compiled_code(source, "vs_2_0");
        let sm3 = compiled_code(source, "vs_3_0");
        crate::shader::hlsl::behaviour::same_behaviour(&sm3.bytecode, &sm2.bytecode, 16, 0x5A7)
            .unwrap();
    }

    /// A loop's carried value takes over the lanes of the value it starts from where
    /// nothing after the loop starts reads the lanes the loop changes: two loops in a row
    /// move nothing between them (`testdata/regressions/loop_chain.hlsl`, which the
    /// held-out test runs against Microsoft's code; theirs moves eight times).
    #[test]
    fn a_loop_carries_its_values_in_the_registers_they_start_in() {
        let source = include_str!("testdata/regressions/loop_chain.hlsl");
        for profile in ["vs_2_0", "vs_3_0"] {
            let c = compiled_code(source, profile);
            let code: Vec<&str> = c
                .asm
                .lines()
                .filter(|l| !l.starts_with("def") && !l.starts_with("dcl"))
                .collect();
            assert!(
                !code.iter().any(|l| l.starts_with("mov")),
                "{profile}:\n{}",
                c.asm
            );
            assert!(
                !c.asm.contains("r2") && code.len() == 12,
                "{profile}:\n{}",
                c.asm
            );
        }
    }

    /// A type of more registers than a value may take (65536, the largest array of
    /// one-register elements) is refused where it is declared, before a register of it is made (it took 54 s
    /// and 2 GB, past the fuzz target's 10 s, whose replay of the input holds it): a
    /// struct of 32,771 registers in an array of 1,281 (what the d3d9_decompile fuzz
    /// target found in a table; Microsoft's compiler was still at it after 10 minutes), a
    /// struct of such arrays.
    #[test]
    fn a_type_past_what_a_table_places_is_refused_at_once() {
        let options = Options {
            profile: "ps_3_0".into(),
            ..Options::default()
        };
        let arrays = "struct S { float4 t; float p[32769]; };
S m[1281] : register(c3);
                      float4 main() : COLOR { return m[0].t; }
";
        let said = compile("big.hlsl", arrays, None, &options)
            .unwrap_err()
            .render();
        assert!(
            said.starts_with("big.hlsl(2,5): error: 'struct S[1281]' takes 41978370 registers, more than the 65536 a value may take"),
            "{said}"
        );
        let fields = "struct S { float4 a[40000]; float4 b[40000]; };
S s;
                      float4 main() : COLOR { return s.a[0]; }
";
        let said = compile("big.hlsl", fields, None, &options)
            .unwrap_err()
            .render();
        assert!(
            said.starts_with("big.hlsl(1,1): error: struct 'S' takes 80000 registers"),
            "{said}"
        );
    }

    /// fxc's register-set probes (Wine's `registerset_blob_*`, compiled by fxc for vs_3_0):
    /// bools that branch and ints that count loops take a register a component, in order
    /// of elements, members, rows and columns (`if (cab[1]._32)` is `if b11`), and the
    /// table gives each as many as are read. Ours compiles each source to the same
    /// registers, the same table entries and the same int defaults (`{ 8, 0, 1, 0 }`).
    #[test]
    fn bools_and_loop_counts_take_a_register_a_component_as_fxc_places_them() {
        let Some(dir) = crate::test_corpus::corpus("d3d9/wine-tests/d3dx9") else {
            return;
        };
        // The lines that place them: the table's rows and defaults of b# and i#, and the
        // instructions that read them.
        let placed = |bytes: &[u8]| -> Vec<String> {
            let text = crate::shader::d3d9::disasm::disassemble(bytes).unwrap();
            let mut out = Vec::new();
            for line in text.lines() {
                let words: Vec<&str> = line.split_whitespace().collect();
                let row = words.len() == 4 && words[0] == "//";
                let register = |w: &str| {
                    (w.starts_with('b') || w.starts_with('i'))
                        && w[1..].chars().all(|c| c.is_ascii_digit())
                };
                if row && register(words[2]) {
                    out.push(words[1..].join(" "));
                }
                // Default values of the int registers: `// i0 = { 8, 0, 1, 0 };`.
                let default = words.len() > 2 && words[0] == "//" && words[2] == "=";
                let int_default = default && words[1].starts_with('i') && register(words[1]);
                if int_default || words.first().is_some_and(|w| *w == "if" || *w == "rep") {
                    out.push(words.join(" "));
                }
            }
            out
        };
        let mut checked = 0;
        let mut probes: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        probes.sort();
        for json in probes {
            let name = json.file_name().unwrap().to_string_lossy().into_owned();
            if !(name.starts_with("registerset_blob_") && name.ends_with(".expected.json")) {
                continue;
            }
            let meta: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
            let Some(source) = meta["hlsl_source"].as_str() else {
                continue;
            };
            let fxc = std::fs::read(dir.join(meta["file"].as_str().unwrap())).unwrap();
            if !placed(&fxc)
                .iter()
                .any(|l| l.starts_with("if ") || l.starts_with("rep "))
            {
                continue;
            }
            // fxc keeps these branches; ours flattens a bool's branch without [branch].
            let source = source.replace("if (", "[branch] if (");
            let options = Options {
                profile: "vs_3_0".into(),
                ..Options::default()
            };
            let ours = compile(&name, &source, None, &options)
                .unwrap_or_else(|f| panic!("{name}: {}", f.render()));
            assert_eq!(placed(&ours.bytecode), placed(&fxc), "{name}:\n{source}");
            checked += 1;
        }
        assert!(
            checked >= 10,
            "only {checked} of fxc's register-set probes were found"
        );
    }

    /// One run with `TEXCOORD0` = `t`, the named uniforms and sampler `s` set.
    fn run(
        p: &Program,
        t: [f32; 4],
        uniforms: &[(&str, [f32; 4])],
        s: Option<&Sampler>,
    ) -> Outputs {
        let mut inputs = Inputs::default();
        inputs
            .attributes
            .by_semantic
            .insert(Semantic::new(Semantic::TEXCOORD, 0), t);
        let b: &mut Bindings = &mut inputs.bindings;
        for (name, v) in uniforms {
            let (_, r, _) = p.constant(name).unwrap_or_else(|| panic!("no {name}"));
            b.constants.float.insert(r, *v);
        }
        if let Some(s) = s {
            let (_, r, _) = p.constant("s").expect("no sampler s");
            b.samplers.insert(r, s.clone());
        }
        p.run(&inputs).unwrap()
    }

    fn colour(o: &Outputs) -> [f32; 4] {
        o.values[&OutputRegister::Target(0)]
    }

    /// A 4×4 texture whose texels all differ, read with D3D9's default states (wrap,
    /// point filtering).
    fn texture() -> Sampler {
        let texels = (0..16)
            .map(|i| {
                let f = i as f32 / 16.0;
                [f, 1.0 - f, f * f, 1.0]
            })
            .collect();
        Sampler::new(Texture::two_d(4, 4, texels).unwrap())
    }

    /// `clip` of a swizzled value kills the pixel on the components it names, in any
    /// order, whether the value is an input or computed.
    #[test]
    fn clip_of_a_swizzled_value_kills_on_the_components_it_names() {
        let source = "float4 u;\n\
            float4 main(float4 t : TEXCOORD0) : COLOR {\n\
                clip(t.zyyx);\n\
                clip((t * u).wzyx);\n\
                return t;\n\
            }";
        for profile in ["ps_2_0", "ps_3_0"] {
            let p = compiled(source, profile);
            for (t, u, killed) in [
                ([1.0, 1.0, 1.0, -1.0], [1.0, 1.0, 1.0, -1.0], false),
                ([1.0, 1.0, -1.0, 1.0], [1.0, 1.0, -1.0, 1.0], true),
                ([1.0, 1.0, 1.0, 1.0], [1.0, -1.0, 1.0, 1.0], true),
                ([-1.0, 2.0, 1.0, 1.0], [-1.0, 1.0, 1.0, 1.0], true),
                ([0.5, 2.0, 1.0, 3.0], [1.0; 4], false),
            ] {
                let o = run(&p, t, &[("u", u)], None);
                assert_eq!(o.discarded, killed, "{profile}: t = {t:?}, u = {u:?}");
            }
        }
    }

    /// A negated value written to `oDepth`: ps_2_0 takes no source modifier there.
    #[test]
    fn a_negated_depth_is_written_in_every_pixel_model() {
        let source = "float4 u;\n\
            float4 main(float4 t : TEXCOORD0, out float d : DEPTH) : COLOR {\n\
                d = -u.y;\n\
                return t;\n\
            }";
        for profile in ["ps_2_0", "ps_2_x", "ps_3_0"] {
            let p = compiled(source, profile);
            let o = run(&p, [0.0; 4], &[("u", [1.0, 0.25, 3.0, 4.0])], None);
            assert_eq!(o.values[&OutputRegister::Depth][0], -0.25, "{profile}");
        }
    }

    /// Infinities and NaNs that constants fold to are literals like any other.
    #[test]
    fn folded_infinities_and_nans_are_literals() {
        let source = "static const float z = 0;\n\
            float4 main(float4 t : TEXCOORD0) : COLOR {\n\
                return float4(1 / z, -1 / z, 0 / z, 1) * t.x;\n\
            }";
        for profile in ["ps_2_0", "ps_3_0"] {
            let p = compiled(source, profile);
            let [a, b, c, d] = colour(&run(&p, [2.0; 4], &[], None));
            assert_eq!(
                (a, b, d),
                (f32::INFINITY, f32::NEG_INFINITY, 2.0),
                "{profile}"
            );
            assert!(c.is_nan(), "{profile}: {c}");
        }
    }

    /// Literals need registers the uniforms leave free: below a uniform bound at the top
    /// of the model's constants, never over a bound one.
    #[test]
    fn literals_go_to_registers_the_uniforms_leave_free() {
        let source = "float4 a : register(c0);\n\
            float4 u : register(c31);\n\
            float4 main(float4 t : TEXCOORD0) : COLOR {\n\
                return t * u + a * float4(0.5, 0.25, 2, 3);\n\
            }";
        for profile in ["ps_2_0", "ps_3_0"] {
            let p = compiled(source, profile);
            let o = run(
                &p,
                [1.0, 2.0, 3.0, 4.0],
                &[("u", [2.0; 4]), ("a", [4.0; 4])],
                None,
            );
            assert_eq!(colour(&o), [4.0, 5.0, 14.0, 20.0], "{profile}");
        }
    }

    /// Texture coordinates take no source modifier: a negated one is read negated all
    /// the same, whether written so or come out of folding (`max(-x, -x)` is `-x`).
    #[test]
    fn negated_texture_coordinates_are_read_negated() {
        let s = texture();
        let t = [0.125, 0.375, 0.0, 0.0];
        let want = s.sample([-0.125, -0.375, 0.0, 0.0], 0.0);
        assert_ne!(want, s.sample(t, 0.0));
        let plain = "sampler2D s;\n\
            float4 main(float4 t : TEXCOORD0) : COLOR { return tex2D(s, -t.xy); }";
        let folded = "float4 u;\n\
            sampler2D s;\n\
            float4 main(float4 t : TEXCOORD0) : COLOR { return tex2D(s, max(-u.xy, -u.xy)); }";
        let lod = "sampler2D s;\n\
            float4 main(float4 t : TEXCOORD0) : POSITION { return tex2Dlod(s, -t); }";
        for (profile, source) in [
            ("ps_2_0", plain),
            ("ps_3_0", plain),
            ("ps_2_0", folded),
            ("ps_3_0", folded),
            ("vs_3_0", lod),
        ] {
            let p = compiled(source, profile);
            let o = run(
                &p,
                t,
                &[("u", t)][..usize::from(source == folded)],
                Some(&s),
            );
            let got = if profile.starts_with("vs") {
                o.by_semantic(Semantic::new(Semantic::POSITION, 0)).unwrap()
            } else {
                colour(&o)
            };
            assert_eq!(got, want, "{profile}: {source}");
        }
    }

    /// Folding keeps the sign of a zero: 1 / -0 is -infinity, a -0 literal is -0 where
    /// the shader computes with it, and saturate keeps a -0 as `_sat` does. A dot
    /// product of two components is `dp2add` plus +0, as Microsoft's compilers write it
    /// (`dp2add r0.w, v0.wzyx, r0, c1.x` of a 0 c1.x): -0 where its products are is +0
    /// (the decompiled text of a `dp2add` of a +0 register, the addend folded, behaved
    /// otherwise; found by the decompiler's property test).
    #[test]
    fn a_folded_negative_zero_keeps_its_sign() {
        let source = "float4 main(float4 t : TEXCOORD0) : COLOR {\n\
                float z = 0;\n\
                return float4(saturate(1 / -z), saturate(1 / (-z * t.y)),\n\
                              saturate(1 / saturate(-z)), saturate(1 / dot(t.xw, -t.xw)));\n\
            }";
        for profile in ["ps_2_0", "ps_3_0"] {
            let p = compiled(source, profile);
            let o = run(&p, [0.0, 2.0, -2.0, 0.0], &[], None);
            assert_eq!(colour(&o), [0.0, 0.0, 0.0, 1.0], "{profile}");
        }
    }

    /// `lit` in a vertex shader before 3.0 is the instruction, as fxc writes it, whose
    /// values differ from HLSL's documented formula where n·l or n·h is 0 and where |m|
    /// is past 128 (it clamps m), whether its operands are lanes of one register or
    /// gathered from three.
    #[test]
    fn lit_in_a_vertex_shader_is_the_instruction() {
        let source = "float4 u; float4 v;\n\
            struct O { float4 p : POSITION; float4 a : TEXCOORD0; float4 b : TEXCOORD1; };\n\
            O main(float4 t : TEXCOORD0) {\n\
                O o;\n\
                o.p = t;\n\
                o.a = lit(u.x, u.y, u.z);\n\
                o.b = lit(t.x, v.y, u.w);\n\
                return o;\n\
            }";
        // (n·l, n·h, m) and what the instruction makes of them.
        let cases = [
            ([0.0, 0.5, 2.0], [1.0, 0.0, 0.0, 1.0]),
            ([-0.5, 0.5, 2.0], [1.0, 0.0, 0.0, 1.0]),
            ([0.5, 0.0, 0.0], [1.0, 0.5, 0.0, 1.0]),
            ([0.5, -0.5, 2.0], [1.0, 0.5, 0.0, 1.0]),
            ([0.25, 0.5, 3.0], [1.0, 0.25, 0.125, 1.0]),
            ([0.25, 0.5, 0.0], [1.0, 0.25, 1.0, 1.0]),
            ([0.25, 0.75, 200.0], [1.0, 0.25, 0.75f32.powf(128.0), 1.0]),
            ([0.25, 1.5, -200.0], [1.0, 0.25, 1.5f32.powf(-128.0), 1.0]),
        ];
        for profile in ["vs_1_1", "vs_2_0", "vs_2_x"] {
            let c = compiled_code(source, profile);
            let lits = c
                .asm
                .lines()
                .filter(|l| l.trim().starts_with("lit "))
                .count();
            assert_eq!(lits, 2, "{profile}:\n{}", c.asm);
            let p = Program::new(&c.bytecode).unwrap();
            for ([nl, nh, m], want) in cases {
                let mut inputs = Inputs::default();
                inputs
                    .attributes
                    .by_semantic
                    .insert(Semantic::new(Semantic::TEXCOORD, 0), [nl, 0.0, 0.0, 1.0]);
                for (name, value) in [("u", [nl, nh, m, m]), ("v", [0.0, nh, 0.0, 0.0])] {
                    let (_, r, _) = p.constant(name).unwrap();
                    inputs.bindings.constants.float.insert(r, value);
                }
                let o = p.run(&inputs).unwrap();
                for i in 0..2 {
                    let got = o.by_semantic(Semantic::new(Semantic::TEXCOORD, i)).unwrap();
                    assert_eq!(got, want, "{profile}: lit({nl}, {nh}, {m}), output {i}");
                }
            }
        }
    }

    /// A `static const` array a vertex shader reads at a run-time index is, as fxc makes
    /// it (d3dcompiler_43 on this source: 7 `def`s from c8, `mova a0.x`, `c11[a0.x]`),
    /// `def`s in a row after the uniforms read through `a0`, a whole number added to the
    /// index moving the register read, not a chain of choices; and each index reads its
    /// row.
    #[test]
    fn a_literal_array_at_a_run_time_index_is_defs_read_through_a0() {
        let source = "float4 k : register(c7);\n\
            static const float4 rows[7] = {\n\
                float4(1, 0, 0, 1), float4(1, 1, 0, 1), float4(0, 1, 0, 1), float4(0, 1, 1, 1),\n\
                float4(0, 0, 1, 1), float4(1, 0, 1, 1), float4(1, 1, 1, 1) };\n\
            void main(float4 p : POSITION, out float4 oPos : POSITION, out float4 oD0 : COLOR0) {\n\
                int a = (int)floor(k.x + 0.5);\n\
                oD0 = rows[3 + a] * rows[a + 3].w;\n\
                oPos = p;\n\
            }";
        let rows = [
            [1.0, 0.0, 0.0, 1.0],
            [1.0, 1.0, 0.0, 1.0],
            [0.0, 1.0, 0.0, 1.0],
            [0.0, 1.0, 1.0, 1.0],
            [0.0, 0.0, 1.0, 1.0],
            [1.0, 0.0, 1.0, 1.0],
            [1.0, 1.0, 1.0, 1.0],
        ];
        for profile in ["vs_1_1", "vs_2_0", "vs_3_0"] {
            let c = compiled_code(source, profile);
            let lines: Vec<&str> = c.asm.lines().map(str::trim).collect();
            for (i, row) in rows.iter().enumerate() {
                let def = format!("def c{}, {}", 8 + i, row.map(|x| x.to_string()).join(", "));
                assert!(
                    lines.contains(&def.as_str()),
                    "{profile}: no '{def}':\n{}",
                    c.asm
                );
            }
            assert!(c.asm.contains("c11[a0.x]"), "{profile}:\n{}", c.asm);
            assert!(
                !c.asm.contains("sge") && !c.asm.contains("lrp"),
                "{profile}:\n{}",
                c.asm
            );
            let p = Program::new(&c.bytecode).unwrap();
            for a in -3i32..=3 {
                let mut inputs = Inputs::default();
                inputs
                    .attributes
                    .by_semantic
                    .insert(Semantic::new(Semantic::POSITION, 0), [0.0; 4]);
                let (_, r, _) = p.constant("k").unwrap();
                inputs
                    .bindings
                    .constants
                    .float
                    .insert(r, [a as f32, 0.0, 0.0, 0.0]);
                let o = p.run(&inputs).unwrap();
                let got = o.by_semantic(Semantic::new(Semantic::COLOR, 0)).unwrap();
                assert_eq!(got, rows[(a + 3) as usize], "{profile}: index {a}");
            }
        }
    }

    /// A lane of constants folds on its own: in `float4(t.xyz, 1) - float4(0.5, 0.5,
    /// 0.5, 0)` the w lane is 1 when compiling, so a choice on it is made then, and the
    /// shader fits ps_1_1's two temporaries (Wine's `cnd_test` 11_coissue as decompiled).
    #[test]
    fn a_lane_of_constants_folds_when_the_others_do_not() {
        let source = "float4 a : register(c1);\n\
            float4 b : register(c2);\n\
            float4 main(float4 t : TEXCOORD0) : COLOR {\n\
                float4 r = float4(saturate(t.xyz), 1) - float4(0.5, 0.5, 0.5, 0);\n\
                float d = dot(r.xyz, float3(2, 0, 0));\n\
                return float4(r.w > 0.5 ? a.xyz : b.xyz, d);\n\
            }";
        for profile in ["ps_1_1", "ps_2_0", "ps_3_0"] {
            let c = compiled_code(source, profile);
            assert!(
                !c.asm.contains("cnd") && !c.asm.contains("cmp"),
                "{profile}: the choice is made when compiling:\n{}",
                c.asm
            );
            let p = Program::new(&c.bytecode).unwrap();
            // b is not read at all.
            assert!(p.constant("b").is_none(), "{profile}:\n{}", c.asm);
            let a = [0.25, 0.5, 0.75, 1.0];
            let o = run(&p, [0.75, 0.1, 0.9, 1.0], &[("a", a)], None);
            assert_eq!(colour(&o), [0.25, 0.5, 0.75, 0.5], "{profile}:\n{}", c.asm);
        }
    }

    /// In ps_1_x, whose sources swizzle nothing but a replicated lane, lanes that
    /// compute the same thing are made one only where all do: `float3(1, 1, 0) * x`
    /// computed as two lanes would cost a move a lane to spread over three, and Wine's
    /// `test_signed_formats` alpha shader, as decompiled, would not fit ps_1_1.
    #[test]
    fn ps_1_x_keeps_lanes_in_place_where_spreading_them_costs_moves() {
        let source = "float4 main(float4 t : TEXCOORD0) : COLOR {\n\
                float4 r;\n\
                r.w = t.z > 0.5 ? 1 : 0;\n\
                r.xyz = r.www * float3(0, 0, 1) + float3(1, 1, 0) * (t.yyy * 0.5 + 0.25);\n\
                return r;\n\
            }";
        for profile in ["ps_1_1", "ps_1_3", "ps_1_4", "ps_2_0"] {
            let p = compiled(source, profile);
            for (t, want) in [
                ([0.1, 0.6, 0.8, 1.0], [0.55, 0.55, 1.0, 1.0]),
                ([0.1, 0.6, 0.3, 1.0], [0.55, 0.55, 0.0, 0.0]),
            ] {
                let got = colour(&run(&p, t, &[], None));
                let near = got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-3);
                assert!(near, "{profile}: t = {t:?}: {got:?}, not {want:?}");
            }
        }
    }

    /// A `register()` binding reserves its whole variable; one that runs past the model's
    /// last register leaves the literals no room after it, so they take registers of it
    /// the shader never reads (Microsoft's compiler puts this one's 0.5 in c0, a[0]).
    #[test]
    fn literals_take_unread_registers_of_a_binding_that_fills_the_model() {
        let source = "float4 a[40] : register(c0);\n\
            float4 main(float4 t : TEXCOORD0) : COLOR { return a[1] * t + 0.5; }";
        let c = compiled_code(source, "ps_2_0");
        let def = c
            .asm
            .lines()
            .find_map(|l| l.trim().strip_prefix("def c"))
            .unwrap_or_else(|| panic!("no def:\n{}", c.asm));
        assert!(
            !def.starts_with("1,"),
            "the def takes c1, which a[1] is:\n{}",
            c.asm
        );
        let p = Program::new(&c.bytecode).unwrap();
        // a's table entry covers a[0] and a[1]; a[1] is read.
        let (_, r, _) = p.constant("a").unwrap();
        let mut inputs = Inputs::default();
        inputs
            .attributes
            .by_semantic
            .insert(Semantic::new(Semantic::TEXCOORD, 0), [1.0, 2.0, 0.5, 0.0]);
        inputs
            .bindings
            .constants
            .float
            .insert(r + 1, [0.25, 0.5, 1.0, 2.0]);
        assert_eq!(
            colour(&p.run(&inputs).unwrap()),
            [0.75, 1.5, 1.0, 0.5],
            "{}",
            c.asm
        );
    }

    /// `lit` in a pixel shader, which has no such instruction, and in vs_3_0, where fxc
    /// does not use it, is fxc's formula:
    /// (1, (n·l > 0) · n·l, pow(n·h, m) · (n·l > 0 && n·h > 0), 1), m not clamped.
    #[test]
    fn lit_without_the_instruction_is_fxcs_formula() {
        let ps = "float4 u;\n\
            float4 main(float4 t : TEXCOORD0) : COLOR { return lit(u.x, u.y, u.z); }";
        let vs = "float4 u;\n\
            struct O { float4 p : POSITION; float4 a : TEXCOORD0; };\n\
            O main(float4 t : TEXCOORD0) { O o; o.p = t; o.a = lit(u.x, u.y, u.z); return o; }";
        let cases = [
            ([0.0, 0.5, 2.0], [1.0, 0.0, 0.0, 1.0]),
            ([-0.5, 0.5, 2.0], [1.0, -0.0, 0.0, 1.0]),
            ([0.5, 0.0, 2.0], [1.0, 0.5, 0.0, 1.0]),
            ([0.25, 0.5, 3.0], [1.0, 0.25, 0.125, 1.0]),
            ([0.25, 0.5, 200.0], [1.0, 0.25, 0.0, 1.0]),
            ([0.25, 2.0, -200.0], [1.0, 0.25, 0.0, 1.0]),
        ];
        for (profile, source) in [("ps_2_0", ps), ("ps_3_0", ps), ("vs_3_0", vs)] {
            let p = compiled(source, profile);
            for ([nl, nh, m], want) in cases {
                let o = run(&p, [0.0; 4], &[("u", [nl, nh, m, 0.0])], None);
                let got = match profile {
                    "vs_3_0" => o.by_semantic(Semantic::new(Semantic::TEXCOORD, 0)).unwrap(),
                    _ => colour(&o),
                };
                let same = got
                    .iter()
                    .zip(want)
                    .all(|(a, b): (&f32, f32)| a.to_bits() == b.to_bits());
                assert!(
                    same,
                    "{profile}: lit({nl}, {nh}, {m}) is {got:?}, not {want:?}"
                );
            }
        }
    }
}
