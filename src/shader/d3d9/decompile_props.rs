//! Property test of the decompiler: random shaders, valid by construction for vs_1_1,
//! vs_2_0, vs_3_0, ps_2_0 and ps_3_0 (declared inputs, samplers and outputs, `def` and
//! constant-table constants, temporaries written whole before they are read, then random
//! arithmetic and texture instructions over what is written, with the swizzles, write
//! masks, source and result modifiers each model allows, and the outputs written last),
//! decompiled, compiled back with shaderfs's compiler for the same profile, behave as the
//! original on random inputs (`hlsl::behaviour::same_behaviour`, as the corpus test of
//! `decompile.rs` compares).
//!
//! What each model allows comes from the tables: instructions and their slot costs from
//! the opcode table, register counts, read ports, swizzles and slot budgets from the
//! limits table; the rest (write masks of `crs`, `sincos` and the matrix products,
//! replicate swizzles of the scalar instructions, `texld`'s operands) from the asm
//! reference pages the validator cites. The validator checks every generated shader: a
//! finding there is a bug of this generator.
//!
//! Every body instruction draws from its own seed, so that proptest shrinks a failing
//! shader to the instructions that matter.
//!
//! Besides validity the generator keeps to what the comparison can tell apart: a
//! `sincos` argument in [-pi, pi], no discontinuous or unbounded instruction (`frc`,
//! comparisons, `rcp` …) over a value the two shaders compute a rounding apart, half the
//! slot budget. What it leaves out for a bug of the decompiler or of our compiler says
//! "Narrowed for a bug" and names the bug, to be widened again once it is fixed.

use proptest::prelude::*;

use super::asm::assemble_unvalidated;
use super::bytecode::{self, ShaderKind, Version};
use super::ctab::{replace_ctab, Class, Constant, ConstantTable, ParamType, RegisterSet, TypeInfo};
use super::decompile::decompile;
use super::disasm::format_float;
use super::limits::{limits, ModelLimits, Slots, Swizzles};
use super::opcodes::{by_mnemonic, OpcodeInfo};
use super::registers::{register_name, RegisterType};
use super::syntax::{format_mask, format_swizzle};
use super::validate::{add_slots, validate, SlotUsage};
use crate::shader::hlsl::behaviour::same_behaviour;
use crate::shader::hlsl::compile::{compile, Options};
use crate::shader::hlsl::property::Rng;

const VS: ShaderKind = ShaderKind::Vertex;
const PS: ShaderKind = ShaderKind::Pixel;

/// The profiles generated.
const VERSIONS: [Version; 5] = [
    Version::new(VS, 1, 1),
    Version::new(VS, 2, 0),
    Version::new(VS, 3, 0),
    Version::new(PS, 2, 0),
    Version::new(PS, 3, 0),
];

/// `D3DSINCOSCONST1` and `D3DSINCOSCONST2`, the constants the 2_0 `sincos` reads
/// (`sincos---vs.md`, `sincos---ps.md`).
const SINCOS_CONSTANTS: [[f32; 4]; 2] = [
    [
        -1.550_099_2e-6,
        -2.170_139e-5,
        0.002_604_166_7,
        0.000_260_416_68,
    ],
    [-0.020_833_334, -0.125, 1.0, 0.5],
];

/// How an instruction reads its sources and which write masks it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Whole vectors in, any write mask: the component-wise instructions, and `nrm`,
    /// `dst`.
    Vector,
    /// One component of each source (`rcp`, `rsq`, `exp`, `log`, `pow`, `expp`, `logp`):
    /// replicate swizzles ("src … requires explicit use of replicate swizzle").
    Scalar,
    /// `dp3`, `dp4`: the result in every component written.
    Dot,
    /// `dp2add`: "src2 … requires a replicate swizzle".
    Dp2add,
    /// `crs`: masks within .xyz, and a destination apart from the sources.
    Cross,
    /// `sincos`: masks .x, .y, .xy, a replicate source (and in 2_0 the two constants),
    /// a temporary destination apart from the source.
    Sincos,
    /// `m4x4` … `m3x2`: the second source the first of consecutive constants, without
    /// swizzle or modifier; the mask the rows give; a destination apart from the sources.
    Matrix,
    /// `texld`, `texldp`, `texldb`, `texldl`, `texldd`.
    Sample,
    /// `texkill`.
    Kill,
}

/// An instruction the generator writes: its asm spelling, its opcode-table row's
/// mnemonic, its form.
struct Op {
    asm: &'static str,
    row: &'static str,
    form: Form,
}

const fn op(asm: &'static str, form: Form) -> Op {
    Op {
        asm,
        row: asm,
        form,
    }
}

const OPS: &[Op] = &[
    op("mov", Form::Vector),
    op("add", Form::Vector),
    op("sub", Form::Vector),
    op("mul", Form::Vector),
    op("mad", Form::Vector),
    op("min", Form::Vector),
    op("max", Form::Vector),
    op("slt", Form::Vector),
    op("sge", Form::Vector),
    op("frc", Form::Vector),
    op("abs", Form::Vector),
    op("lrp", Form::Vector),
    op("cmp", Form::Vector),
    op("dsx", Form::Vector),
    op("dsy", Form::Vector),
    op("nrm", Form::Vector),
    op("dst", Form::Vector),
    op("sgn", Form::Vector),
    op("lit", Form::Vector),
    op("rcp", Form::Scalar),
    op("rsq", Form::Scalar),
    op("exp", Form::Scalar),
    op("log", Form::Scalar),
    op("expp", Form::Scalar),
    op("logp", Form::Scalar),
    op("pow", Form::Scalar),
    op("dp3", Form::Dot),
    op("dp4", Form::Dot),
    op("dp2add", Form::Dp2add),
    op("crs", Form::Cross),
    op("sincos", Form::Sincos),
    op("m4x4", Form::Matrix),
    op("m4x3", Form::Matrix),
    op("m3x4", Form::Matrix),
    op("m3x3", Form::Matrix),
    op("m3x2", Form::Matrix),
    op("texld", Form::Sample),
    Op {
        asm: "texldp",
        row: "texld",
        form: Form::Sample,
    },
    Op {
        asm: "texldb",
        row: "texld",
        form: Form::Sample,
    },
    op("texldl", Form::Sample),
    op("texldd", Form::Sample),
    op("texkill", Form::Kill),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Reg {
    ty: RegisterType,
    n: u32,
}

impl Reg {
    fn new(ty: RegisterType, n: u32) -> Reg {
        Reg { ty, n }
    }

    fn is_vpos(self) -> bool {
        self.ty == RegisterType::MiscType
    }
}

/// A source operand: the register, its text, and the lanes in which what it reads
/// depends on the shader's inputs (where the compiler cannot fold it).
struct Source {
    reg: Reg,
    text: String,
    live: u8,
}

/// How a source may be swizzled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Swz {
    /// What the model allows an arithmetic source.
    Any,
    Replicate,
    Identity,
}

/// Registers one instruction reads, by type, against the model's read ports.
#[derive(Default)]
struct Ports(Vec<(RegisterType, Vec<u32>)>);

impl Ports {
    fn allows(&self, lim: &ModelLimits, r: Reg) -> bool {
        let Some(ports) = lim.register(r.ty).and_then(|f| f.read_ports) else {
            return true;
        };
        match self.0.iter().find(|(t, _)| *t == r.ty) {
            Some((_, regs)) => regs.contains(&r.n) || (regs.len() as u32) < ports,
            None => ports > 0,
        }
    }

    fn read(&mut self, r: Reg) {
        match self.0.iter_mut().find(|(t, _)| *t == r.ty) {
            Some((_, regs)) if !regs.contains(&r.n) => regs.push(r.n),
            Some(_) => {}
            None => self.0.push((r.ty, vec![r.n])),
        }
    }
}

/// A temporary written whole: its number; the order of the dependent texture reads it
/// holds (`texld---ps-2-0.md`; per register, at least the validator's per component);
/// whether it may hold an inexact value (one the
/// decompiled shader computes a rounding apart: its `sin` and `cos` reduce their argument
/// to [-pi, pi] first, which the original's `sincos` takes as it is); and the components
/// that depend on the shader's inputs (the others the compiler may fold); whether it
/// holds a product by a literal, whose literal a product of it may move (`(x * a) * b`
/// is `x * (a * b)`, as fxc folds it; `(k * x) * y` is `k * (x * y)`), a rounding apart;
/// whether it holds a reciprocal, whose reciprocal both compilers fold to its operand
/// (`1 / (1 / x)` is `x`), a rounding apart.
#[derive(Debug, Clone, Copy)]
struct Temp {
    n: u32,
    level: u32,
    inexact: bool,
    live: u8,
    scaled: bool,
    reciprocal: bool,
}

/// One instruction made, not yet committed: its line, the temporary it writes as it
/// will be, whether that is written whole for the first time, and its opcode row.
struct Made {
    line: String,
    temp: Option<Temp>,
    fresh: bool,
    row: &'static OpcodeInfo,
}

/// A random shader of one model, built line by line.
struct Generator {
    v: Version,
    lim: &'static ModelLimits,
    rng: Rng,
    lines: Vec<String>,
    /// Inputs and float constants the body may read.
    readable: Vec<Reg>,
    /// The float constants given by `def`.
    defs: Vec<u32>,
    /// The first of four consecutive float constants the matrix products read.
    rows: Option<u32>,
    /// The two constants of the 2_0 `sincos`.
    sincos: Option<(u32, u32)>,
    samplers: Vec<u32>,
    temps: Vec<Temp>,
    /// Outputs to write last, with the components each may be written.
    outputs: Vec<(Reg, u8)>,
    /// The constant table: uniforms, matrix rows, samplers.
    table: Vec<Constant>,
    /// Instruction slots used so far.
    used: SlotUsage,
}

/// A table entry for `elements` float4 registers from `c{index}` (an array when more
/// than one).
fn vector_constant(name: String, index: u32, elements: u16) -> Constant {
    constant(
        name,
        RegisterSet::FLOAT4,
        index,
        elements,
        Class::VECTOR,
        ParamType::FLOAT,
    )
}

/// A table entry for sampler `s{index}` of type `ty` (`SAMPLER2D` …).
fn sampler_constant(name: String, index: u32, ty: ParamType) -> Constant {
    constant(name, RegisterSet::SAMPLER, index, 1, Class::OBJECT, ty)
}

fn constant(
    name: String,
    set: RegisterSet,
    index: u32,
    elements: u16,
    class: Class,
    param_type: ParamType,
) -> Constant {
    Constant {
        name,
        register_set: set,
        register_index: index as u16,
        register_count: elements,
        reserved: 0,
        type_info: TypeInfo {
            class,
            param_type,
            rows: 1,
            columns: if class == Class::VECTOR { 4 } else { 1 },
            elements,
            members: vec![],
        },
        default_value: None,
        own_type: false,
    }
}

impl Generator {
    fn new(v: Version, seed: u64) -> Generator {
        let mut g = Generator {
            v,
            lim: limits(v).unwrap(),
            rng: Rng::new(seed),
            lines: vec![v.to_string()],
            readable: Vec::new(),
            defs: Vec::new(),
            rows: None,
            sincos: None,
            samplers: Vec::new(),
            temps: Vec::new(),
            outputs: Vec::new(),
            table: Vec::new(),
            used: SlotUsage::default(),
        };
        g.declare_inputs();
        g.define_constants();
        g.declare_samplers();
        g.declare_outputs();
        g
    }

    fn pixel(&self) -> bool {
        self.v.kind == PS
    }

    fn name(&self, r: Reg) -> String {
        register_name(r.ty, r.n, self.v).unwrap()
    }

    /// `count` different numbers below `n`, in random order.
    fn distinct(&mut self, n: u32, count: usize) -> Vec<u32> {
        let mut all: Vec<u32> = (0..n).collect();
        self.shuffle(&mut all);
        all.truncate(count);
        all
    }

    fn shuffle(&mut self, items: &mut [u32]) {
        for i in (1..items.len()).rev() {
            let j = self.rng.below(i + 1);
            items.swap(i, j);
        }
    }

    fn declare_inputs(&mut self) {
        let count = self.rng.range(1, 4);
        let (kind, major) = (self.v.kind, self.v.major);
        if kind == PS && major == 2 {
            // v0–v1 (colours) and t0–t7 (texture coordinates), declared without usage.
            let regs: Vec<Reg> = (0..2)
                .map(|n| Reg::new(RegisterType::Input, n))
                .chain((0..8).map(|n| Reg::new(RegisterType::AddrOrTexture, n)))
                .collect();
            for k in self.distinct(regs.len() as u32, count) {
                let r = regs[k as usize];
                self.lines.push(format!("dcl {}", self.name(r)));
                self.readable.push(r);
            }
            return;
        }
        let usages: &[(&str, u32)] = if kind == VS {
            &[
                ("position", 0),
                ("normal", 0),
                ("texcoord", 0),
                ("texcoord", 1),
                ("color", 0),
                ("color", 1),
                ("tangent", 0),
                ("blendweight", 0),
            ]
        } else {
            &[
                ("texcoord", 0),
                ("texcoord", 1),
                ("texcoord", 2),
                ("color", 0),
                ("color", 1),
            ]
        };
        let inputs = self.lim.count(RegisterType::Input).unwrap();
        let numbers = self.distinct(inputs, count);
        let picked = self.distinct(usages.len() as u32, count);
        for (n, u) in numbers.into_iter().zip(picked) {
            let (usage, index) = usages[u as usize];
            self.lines.push(format!("dcl_{usage}{index} v{n}"));
            self.readable.push(Reg::new(RegisterType::Input, n));
        }
        if kind == PS && self.rng.chance(0.25) {
            self.lines.push("dcl vPos.xy".into());
            self.readable.push(Reg::new(RegisterType::MiscType, 0));
        }
    }

    /// `def` constants, uniforms of the constant table, maybe four matrix rows (an array
    /// of the table or four `def`s), and in the 2_0 models the `sincos` constants.
    fn define_constants(&mut self) {
        let in_table = self.rng.chance(0.5);
        let rows = self.rng.chance(0.5).then(|| self.rng.below(29) as u32);
        // Every model generated has c0–c31.
        let mut free: Vec<u32> = (0..32)
            .filter(|n| rows.is_none_or(|s| !(s..s + 4).contains(n)))
            .collect();
        self.shuffle(&mut free);
        if let Some(start) = rows {
            if in_table {
                self.table.push(vector_constant("rows".into(), start, 4));
            } else {
                for n in start..start + 4 {
                    self.def(n);
                }
            }
            self.readable
                .extend((start..start + 4).map(|n| Reg::new(RegisterType::Const, n)));
            self.rows = rows;
        }
        for k in 0..self.rng.range(0, 2) {
            let n = free.remove(0);
            self.table.push(vector_constant(format!("u{k}"), n, 1));
            self.readable.push(Reg::new(RegisterType::Const, n));
        }
        if self.v.major == 2 {
            let (a, b) = (free.pop().unwrap(), free.pop().unwrap());
            for (n, v) in [(a, SINCOS_CONSTANTS[0]), (b, SINCOS_CONSTANTS[1])] {
                let v: Vec<String> = v.iter().map(|x| format_float(x.to_bits())).collect();
                self.lines.push(format!("def c{n}, {}", v.join(", ")));
            }
            self.sincos = Some((a, b));
        }
        for _ in 0..self.rng.range(1, 3) {
            let n = free.pop().unwrap();
            self.def(n);
            self.readable.push(Reg::new(RegisterType::Const, n));
        }
    }

    fn def(&mut self, n: u32) {
        let v: Vec<String> = (0..4)
            .map(|_| format_float(self.rng.value().to_bits()))
            .collect();
        self.lines.push(format!("def c{n}, {}", v.join(", ")));
        self.defs.push(n);
    }

    /// ps: up to three samplers of any shape; vs_3_0: up to two 2D ones (read by
    /// `texldl`).
    fn declare_samplers(&mut self) {
        let Some(count) = self.lim.count(RegisterType::Sampler) else {
            return;
        };
        let n = self.rng.range(0, if self.pixel() { 3 } else { 2 });
        for s in self.distinct(count, n) {
            let (dcl, ty) = if self.pixel() {
                self.rng.pick(&[("2d", 12), ("cube", 14), ("volume", 13)])
            } else {
                ("2d", 12)
            };
            let ty = ParamType(ty);
            self.lines.push(format!("dcl_{dcl} s{s}"));
            self.table
                .push(sampler_constant(format!("sampler{s}"), s, ty));
            self.samplers.push(s);
        }
    }

    fn declare_outputs(&mut self) {
        use RegisterType::*;
        match (self.v.kind, self.v.major) {
            (PS, _) => {
                self.outputs.push((Reg::new(ColorOut, 0), 0xF));
                if self.rng.chance(0.25) {
                    self.outputs.push((Reg::new(ColorOut, 1), 0xF));
                }
                if self.rng.chance(0.2) {
                    self.outputs.push((Reg::new(DepthOut, 0), 0xF));
                }
            }
            (_, 3) => {
                let count = self.rng.range(1, 4);
                let numbers = self.distinct(self.lim.count(Output).unwrap(), count);
                let usages = ["texcoord0", "texcoord1", "color0", "color1", "fog", "psize"];
                let picked = self.distinct(usages.len() as u32, count - 1);
                for (k, &n) in numbers.iter().enumerate() {
                    let (usage, mask) = match k {
                        0 => ("position0", 0xF),
                        _ => match usages[picked[k - 1] as usize] {
                            u @ ("fog" | "psize") => (u, 1),
                            // Any mask: `dcl_texcoord1 o0.w` as well as the .x, .xy,
                            // .xyz and .xyzw the compilers write.
                            u => (u, self.rng.pick(&(1..16).collect::<Vec<u8>>())),
                        },
                    };
                    self.lines
                        .push(format!("dcl_{usage} o{n}{}", format_mask(mask)));
                    self.outputs.push((Reg::new(Output, n), mask));
                }
            }
            _ => {
                self.outputs.push((Reg::new(RastOut, 0), 0xF));
                let others = [
                    (Reg::new(AttrOut, 0), 0xF),
                    (Reg::new(AttrOut, 1), 0xF),
                    (Reg::new(Output, 0), 0xF),
                    (Reg::new(Output, 1), 0xF),
                    (Reg::new(Output, 5), 0xF),
                    (Reg::new(RastOut, 1), 1),
                    (Reg::new(RastOut, 2), 1),
                ];
                for o in others {
                    if self.rng.chance(0.3) {
                        self.outputs.push(o);
                    }
                }
            }
        }
    }

    /// The opcode-table row of `op` in this model, if it has the instruction.
    fn row(&self, op: &Op) -> Option<&'static OpcodeInfo> {
        by_mnemonic(op.row).find(|r| r.available(self.v))
    }

    /// Whether `row` fits the slot budget; for the `body`, half of it. The rest is kept
    /// for the output writes, and for what the code compiled back takes more than the
    /// original: HLSL's `sin` and `cos` reduce their argument first (3 slots more than
    /// `sincos`), the decompiled text starts its registers at 0, and ps_2_0 has but 64
    /// arithmetic slots.
    fn fits(&self, row: &OpcodeInfo, body: bool) -> bool {
        let share = |n: u32| if body { n / 2 } else { n };
        let mut u = self.used;
        add_slots(&mut u, row, self.v);
        match self.lim.slots {
            Slots::Total(n, cap) => {
                u.texture + u.arithmetic <= share(cap.map_or(n, |c| c.guaranteed))
            }
            Slots::Split {
                texture,
                arithmetic,
            }
            | Slots::PerPhase {
                texture,
                arithmetic,
            } => u.arithmetic <= share(arithmetic) && u.texture <= share(texture),
        }
    }

    fn commit(&mut self, made: Made) {
        add_slots(&mut self.used, made.row, self.v);
        if let Some(t) = made.temp {
            match self.temps.iter_mut().find(|x| x.n == t.n) {
                Some(x) => *x = t,
                None if made.fresh => self.temps.push(t),
                None => unreachable!("r{} written in part before it is written whole", t.n),
            }
        }
        self.lines.push(made.line);
    }

    /// What is known of register `r`, if it is a temporary written whole.
    fn temp(&self, r: Reg) -> Option<Temp> {
        if r.ty != RegisterType::Temp {
            return None;
        }
        self.temps.iter().find(|t| t.n == r.n).copied()
    }

    fn level(&self, n: u32) -> u32 {
        self.temps.iter().find(|t| t.n == n).map_or(0, |t| t.level)
    }

    /// The order of dependent reads the model allows.
    fn dependent_limit(&self) -> u32 {
        match self.lim.dependent_reads {
            Some((limit, None)) => limit,
            _ => u32::MAX,
        }
    }

    fn swizzle(&mut self, how: Swz, r: Reg) -> u8 {
        // vPos is declared .xy: only those components are read.
        let lanes = if r.is_vpos() { 2 } else { 4 };
        let replicate = |rng: &mut Rng| rng.below(lanes) as u8 * 0x55;
        match how {
            Swz::Identity => 0xE4,
            Swz::Replicate => replicate(&mut self.rng),
            Swz::Any => match self.lim.swizzles {
                Swizzles::Ps20 => self
                    .rng
                    .pick(&[0xE4, 0xC9, 0xD2, 0x1B, 0x00, 0x55, 0xAA, 0xFF]),
                Swizzles::Ps14 => self.rng.pick(&[0xE4, 0x00, 0x55, 0xAA, 0xFF]),
                Swizzles::Ps11 => 0xE4,
                Swizzles::Any if r.is_vpos() || self.rng.chance(0.5) => {
                    (0..4).fold(0, |s, i| s | (self.rng.below(lanes) as u8) << (2 * i))
                }
                Swizzles::Any if self.rng.chance(0.5) => replicate(&mut self.rng),
                Swizzles::Any => 0xE4,
            },
        }
    }

    /// A source: a temporary written whole (that `keep` keeps) or an input or constant
    /// the read ports still allow, swizzled as `how` says, with a random modifier when
    /// `modifiers`.
    fn source(
        &mut self,
        ports: &mut Ports,
        how: Swz,
        modifiers: bool,
        keep: impl Fn(&Temp) -> bool,
    ) -> Option<Source> {
        let temps: Vec<Reg> = self
            .temps
            .iter()
            .filter(|t| keep(t))
            .map(|t| Reg::new(RegisterType::Temp, t.n))
            .filter(|&r| ports.allows(self.lim, r))
            .collect();
        let others: Vec<Reg> = self
            .readable
            .iter()
            .copied()
            .filter(|&r| ports.allows(self.lim, r) && !(r.is_vpos() && how == Swz::Identity))
            .collect();
        let r = if !temps.is_empty() && (others.is_empty() || self.rng.chance(0.6)) {
            self.rng.pick(&temps)
        } else if !others.is_empty() {
            self.rng.pick(&others)
        } else {
            return None;
        };
        ports.read(r);
        let swizzle = self.swizzle(how, r);
        Some(self.operand(r, swizzle, modifiers))
    }

    fn operand(&mut self, reg: Reg, swizzle: u8, modifiers: bool) -> Source {
        let components = match reg.ty {
            RegisterType::Const if self.defs.contains(&reg.n) => 0,
            RegisterType::Temp => self.temps.iter().find(|t| t.n == reg.n).unwrap().live,
            _ => 0xF,
        };
        let live = (0..4).fold(0, |m, lane| {
            let c = (swizzle >> (2 * lane)) & 3;
            m | ((components >> c) & 1) << lane
        });
        let negate = modifiers && self.rng.chance(0.25);
        // _abs is a source modifier of the 3_0 models only.
        let abs = modifiers && self.v.major == 3 && self.rng.chance(0.15);
        Source {
            reg,
            live,
            text: format!(
                "{}{}{}{}",
                if negate { "-" } else { "" },
                self.name(reg),
                if abs { "_abs" } else { "" },
                format_swizzle(swizzle)
            ),
        }
    }

    /// `_sat` (pixel shaders and vs_3_0) and `_pp` (pixel shaders of SM 2+) at random.
    fn result_modifiers(&mut self) -> String {
        let mut s = String::new();
        if (self.pixel() || self.v.major == 3) && self.rng.chance(0.2) {
            s.push_str("_sat");
        }
        if self.pixel() && self.rng.chance(0.1) {
            s.push_str("_pp");
        }
        s
    }

    /// The write masks `op` takes.
    fn masks(&self, op: &Op) -> Vec<u8> {
        let any: Vec<u8> = (1..16).collect();
        match (op.form, op.asm) {
            (Form::Vector, "frc") if self.v == VERSIONS[0] => vec![1, 2, 3],
            // Narrowed for what HLSL cannot say: vs_1_1's logp written .z and .w. Its
            // exponent and mantissa at 0 are -inf and 1, which no HLSL gives there
            // (floor is x - frac(x), NaN at -inf; vs_1_1 selects by arithmetic); the
            // text's first comment says so.
            (Form::Scalar, "logp") if self.v == VERSIONS[0] => vec![4, 8, 12],
            // Likewise vs_1_1's expp written without .x: 2^floor(x) of an infinity.
            (Form::Scalar, "expp") if self.v == VERSIONS[0] => vec![2, 4, 6, 8, 10, 12, 14],
            (Form::Cross, _) => (1..8).collect(),
            (Form::Sincos, _) => vec![1, 2, 3],
            (Form::Matrix, "m3x2") => vec![3],
            (Form::Matrix, "m3x3" | "m4x3") => vec![7],
            (Form::Matrix, _) => vec![0xF],
            (Form::Sample, _) if self.pixel() && self.v.major == 2 => vec![0xF],
            _ => any,
        }
    }

    /// A body instruction: one of those the model has, that fits, with a temporary
    /// destination (none once the body's share of the slots is spent).
    fn body(&mut self) {
        for _ in 0..8 {
            let candidates: Vec<&Op> = OPS
                .iter()
                .filter(|op| self.row(op).is_some_and(|r| self.fits(r, true)))
                .collect();
            if candidates.is_empty() {
                return;
            }
            let op = candidates[self.rng.below(candidates.len())];
            if let Some(made) = self.make(op, None) {
                self.commit(made);
                return;
            }
        }
    }

    /// `op` writing `out` (an output and the components it may write), or a temporary
    /// when `out` is `None`. `None` when the state does not allow it (no samplers, no
    /// matrix rows, a dependent read too deep, no component left to write).
    fn make(&mut self, op: &Op, out: Option<(Reg, u8)>) -> Option<Made> {
        // sgn's one-source form (vs_3_0; the 2_x form's two scratch temporaries are left
        // undefined, which a comparison of every register cannot allow).
        if op.asm == "sgn" && self.v.major < 3 {
            return None;
        }
        let row = self.row(op)?;
        let mut ports = Ports::default();
        let masks: Vec<u8> = match out {
            Some((_, allowed)) => self
                .masks(op)
                .into_iter()
                .filter(|m| m & !allowed == 0)
                .collect(),
            None => self.masks(op),
        };
        if masks.is_empty() {
            return None;
        }
        // The destination: an output, a temporary written whole for the first time, or
        // part of one written before.
        let fresh = (0..self.lim.count(RegisterType::Temp).unwrap())
            .find(|n| self.temps.iter().all(|t| t.n != *n));
        let (dst, mask, is_fresh) = match out {
            Some((r, _)) => (r, self.rng.pick(&masks), false),
            None if masks.contains(&0xF)
                && fresh.is_some()
                && (self.temps.is_empty() || self.rng.chance(0.35)) =>
            {
                (Reg::new(RegisterType::Temp, fresh.unwrap()), 0xF, true)
            }
            None if !self.temps.is_empty() => {
                let t = self.rng.pick(&self.temps);
                (
                    Reg::new(RegisterType::Temp, t.n),
                    self.rng.pick(&masks),
                    false,
                )
            }
            None => return None,
        };
        let temp_dst = (dst.ty == RegisterType::Temp).then_some(dst.n);
        // "The dst register should be a temporary register, and should not be the same
        // register as src1" (`pow---vs.md`); crs, sincos and the matrix products likewise
        // write apart from their sources.
        if op.asm == "pow" && temp_dst.is_none() {
            return None;
        }
        let apart = match op.form {
            Form::Cross | Form::Sincos | Form::Matrix => temp_dst,
            _ => None,
        };
        // What is discontinuous (frc, the comparisons, lit, texkill) or unbounded
        // (reciprocals, roots, logarithms, powers, normalisations) near some value reads no
        // inexact temporary: one rounding apart there comes out far apart.
        let exact = matches!(
            op.asm,
            "frc" | "slt" | "sge" | "cmp" | "rcp" | "rsq" | "log" | "logp" | "pow" | "nrm" | "lit"
        );
        let keep = |t: &Temp| Some(t.n) != apart && !(exact && t.inexact);
        let mut srcs = Vec::new();
        // Registers read, for the order of dependent reads.
        let mut reads: Vec<Reg> = Vec::new();
        let mut level = 0;
        // The lanes of the result that depend on the shader's inputs.
        let mut live = 0xF;
        let mut suffix = self.result_modifiers();
        match op.form {
            Form::Vector | Form::Dot | Form::Scalar | Form::Dp2add | Form::Cross => {
                let how = match op.form {
                    Form::Scalar => Swz::Replicate,
                    // `crs` reads whole vectors: no swizzle.
                    Form::Cross => Swz::Identity,
                    _ => Swz::Any,
                };
                let mut sources = Vec::new();
                for i in 0..row.src {
                    let how = if op.form == Form::Dp2add && i == 2 {
                        Swz::Replicate
                    } else {
                        how
                    };
                    let src = self.source(&mut ports, how, true, keep)?;
                    reads.push(src.reg);
                    sources.push(src);
                }
                // The components each source reads.
                let read = |i: usize| match (op.asm, i) {
                    ("dp3" | "crs" | "nrm", _) => 7,
                    ("dp2add", 0 | 1) => 3,
                    _ => 0xF,
                };
                let any = (0..sources.len()).fold(0, |m, i| m | (sources[i].live & read(i)));
                live = match (op.form, op.asm) {
                    // A choice the compiler may fold: by the condition when it knows
                    // that, to either value when they are equal.
                    (_, "cmp" | "lrp") => {
                        let (c, a, b) = (sources[0].live, sources[1].live, sources[2].live);
                        (c & (a | b)) | (!c & a & b)
                    }
                    (Form::Vector, "nrm") if any != 0 => 0xF,
                    // dst: 1, a.y * b.y, a.z, b.w.
                    (Form::Vector, "dst") => {
                        let (a, b) = (sources[0].live, sources[1].live);
                        ((a | b) & 2) | (a & 4) | (b & 8)
                    }
                    (Form::Vector, _) => any,
                    _ if any != 0 => 0xF,
                    _ => 0,
                };
                srcs.extend(sources.into_iter().map(|s| s.text));
            }
            Form::Sincos => {
                // The argument is in [-pi, pi] (`sincos---vs.md`, `sincos---ps.md`): an
                // input or a uniform of the table, which the behaviour test draws from
                // [-2, 2] and [-3, 3].
                let args: Vec<Reg> = self
                    .readable
                    .iter()
                    .copied()
                    .filter(|r| match r.ty {
                        RegisterType::Input | RegisterType::AddrOrTexture => true,
                        RegisterType::Const => !self.defs.contains(&r.n),
                        _ => false,
                    })
                    .filter(|&r| ports.allows(self.lim, r))
                    .collect();
                if args.is_empty() {
                    return None;
                }
                let r = self.rng.pick(&args);
                ports.read(r);
                let swizzle = self.swizzle(Swz::Replicate, r);
                let src = self.operand(r, swizzle, true);
                reads.push(src.reg);
                srcs.push(src.text);
                if row.src == 3 {
                    let (a, b) = self.sincos?;
                    srcs.push(format!("c{a}"));
                    srcs.push(format!("c{b}"));
                }
            }
            Form::Matrix => {
                let start = self.rows?;
                ports.read(Reg::new(RegisterType::Const, start));
                reads.extend((start..start + 4).map(|n| Reg::new(RegisterType::Const, n)));
                let src = self.source(&mut ports, Swz::Any, true, keep)?;
                let columns = if op.asm.starts_with("m3") { 7 } else { 0xF };
                if src.live & columns == 0 && self.defs.contains(&start) {
                    live = 0;
                }
                reads.push(src.reg);
                srcs.push(src.text);
                srcs.push(format!("c{start}"));
            }
            Form::Sample => {
                if self.samplers.is_empty() {
                    return None;
                }
                suffix.clear();
                let limit = self.dependent_limit();
                // A texld into a temporary written before is a dependent read (of the
                // first order at least).
                let mut order = if is_fresh || temp_dst.is_none() {
                    0
                } else {
                    self.level(dst.n).max(1)
                };
                let ps2 = self.pixel() && self.v.major == 2;
                // Point sampling is discontinuous: coordinates are not inexact.
                let coords: Vec<Reg> = self
                    .temps
                    .iter()
                    .filter(|t| t.level.max(1).max(order) <= limit && !t.inexact)
                    .map(|t| Reg::new(RegisterType::Temp, t.n))
                    .chain(self.readable.iter().copied().filter(|r| match r.ty {
                        RegisterType::AddrOrTexture => true,
                        RegisterType::Input => !ps2,
                        _ => false,
                    }))
                    .collect();
                if coords.is_empty() || order > limit {
                    return None;
                }
                let c = self.rng.pick(&coords);
                if c.ty == RegisterType::Temp {
                    order = order.max(self.level(c.n).max(1));
                }
                ports.read(c);
                let swizzle = if ps2 { 0xE4 } else { self.swizzle(Swz::Any, c) };
                srcs.push(self.operand(c, swizzle, false).text);
                srcs.push(format!("s{}", self.rng.pick(&self.samplers)));
                if op.asm == "texldd" {
                    for _ in 0..2 {
                        let g = self.source(&mut ports, Swz::Any, false, |_| true)?;
                        if g.reg.ty == RegisterType::Temp {
                            order = order.max(self.level(g.reg.n));
                        }
                        srcs.push(g.text);
                    }
                }
                if order > limit {
                    return None;
                }
                level = order + 1;
            }
            Form::Kill => {
                suffix.clear();
                // texkill reads its "destination": r# or t# in ps_2_0, r# or v# in
                // ps_3_0 (`texkill---ps.md`).
                let input = if self.v.major == 3 {
                    RegisterType::Input
                } else {
                    RegisterType::AddrOrTexture
                };
                let regs: Vec<Reg> = self
                    .temps
                    .iter()
                    .filter(|t| !t.inexact)
                    .map(|t| Reg::new(RegisterType::Temp, t.n))
                    .chain(self.readable.iter().copied().filter(|r| r.ty == input))
                    .collect();
                if regs.is_empty() {
                    return None;
                }
                let r = self.rng.pick(&regs);
                // Killed on the lanes of the mask.
                let mask = self.rng.pick(&(1..16).collect::<Vec<u8>>());
                return Some(Made {
                    line: format!("texkill {}{}", self.name(r), format_mask(mask)),
                    temp: None,
                    fresh: false,
                    row,
                });
            }
        }
        let live = match temp_dst {
            Some(n) if !is_fresh => {
                let old = self.temps.iter().find(|t| t.n == n).unwrap().live;
                (old & !mask) | (live & mask)
            }
            _ => live,
        };
        // The temporaries read, and what the destination keeps of its old value where
        // this writes part of it.
        let read: Vec<Temp> = reads.iter().filter_map(|&r| self.temp(r)).collect();
        let kept = temp_dst
            .filter(|_| !is_fresh && mask != 0xF)
            .and_then(|n| self.temp(Reg::new(RegisterType::Temp, n)));
        // A product by a literal ([`Temp::scaled`]); a product of one is a rounding apart
        // wherever the compiler moves the literal out (`(k * x) * y` as `k * (x * y)`).
        let product = matches!(op.asm, "mul" | "mad");
        let scaled = product
            && reads
                .iter()
                .any(|r| r.ty == RegisterType::Const && self.defs.contains(&r.n));
        let reciprocal = op.asm == "rcp";
        // vs_3_0's lit compiles back to a `pow` of its own rounding; a `pow` by a literal
        // exponent to products (`pow(x, -4)`: x², x⁴, its reciprocal), as fxc's does.
        let inexact = op.form == Form::Sincos
            || (product && read.iter().any(|t| t.scaled))
            || (reciprocal && read.iter().any(|t| t.reciprocal))
            || (op.asm == "lit" && self.v.major >= 3)
            || op.asm == "pow"
            // A zero vector normalised is NaN, which lit's clamp of its power takes
            // otherwise than the `pow` it compiles back to.
            || op.asm == "nrm"
            || read.iter().chain(&kept).any(|t| t.inexact);
        if op.form != Form::Sample {
            // A temporary's order is the highest its sources hold.
            level = read.iter().chain(&kept).fold(level, |l, t| l.max(t.level));
        }
        let line = format!(
            "{}{suffix} {}{}, {}",
            op.asm,
            self.name(dst),
            format_mask(mask),
            srcs.join(", ")
        );
        Some(Made {
            line,
            temp: temp_dst.map(|n| Temp {
                n,
                level,
                inexact,
                live,
                scaled: scaled || kept.is_some_and(|t| t.scaled),
                reciprocal: reciprocal || kept.is_some_and(|t| t.reciprocal),
            }),
            fresh: is_fresh,
            row,
        })
    }

    /// The outputs, each written once. ps_2_0 writes oC# and oDepth with a plain `mov`
    /// (`…-ps-registers-output-color.md`, `…-output-depth.md`); oDepth takes replicate
    /// sources and no mask in every model.
    fn write_outputs(&mut self) {
        let outputs = std::mem::take(&mut self.outputs);
        let ps2 = self.pixel() && self.v.major == 2;
        let mov = &OPS[0];
        for (out, allowed) in outputs {
            let depth = out.ty == RegisterType::DepthOut;
            if ps2 || depth {
                let how = if depth { Swz::Replicate } else { Swz::Identity };
                let mut ports = Ports::default();
                let src = self.source(&mut ports, how, !ps2, |_| true).unwrap().text;
                let row = self.row(mov).unwrap();
                let line = format!("mov {}, {src}", self.name(out));
                self.commit(Made {
                    line,
                    temp: None,
                    fresh: false,
                    row,
                });
                continue;
            }
            let made = loop {
                let candidates: Vec<&Op> = OPS
                    .iter()
                    .filter(|op| matches!(op.form, Form::Vector | Form::Scalar | Form::Dot))
                    .filter(|op| self.row(op).is_some_and(|r| self.fits(r, false)))
                    .collect();
                let op = candidates[self.rng.below(candidates.len())];
                if let Some(made) = self.make(op, Some((out, allowed))) {
                    break made;
                }
            };
            self.commit(made);
        }
    }

    fn constant_table(&self) -> Option<ConstantTable> {
        (!self.table.is_empty()).then(|| ConstantTable {
            creator: "shaderfs decompile_props".into(),
            target: Some(self.v.to_string()),
            version: self.v.token(),
            flags: 0,
            constants: self.table.clone(),
        })
    }
}

/// A random shader of `v`: its listing, and its bytecode with the constant table.
fn generate(v: Version, setup: u64, steps: &[u64]) -> (String, Vec<u8>) {
    let mut g = Generator::new(v, setup);
    // The first temporary, written whole from an input or a constant.
    let first = g.make(&OPS[0], None).unwrap();
    g.commit(first);
    for &seed in steps {
        g.rng = Rng::new(seed);
        g.body();
    }
    g.rng = Rng::new(setup ^ 0x0075_7075);
    g.write_outputs();
    let text: String = g.lines.iter().map(|l| format!("{l}\n")).collect();
    let bytes = assemble_unvalidated(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let bytes = match g.constant_table() {
        Some(t) => replace_ctab(&bytes, &t.encode()).unwrap(),
        None => bytes,
    };
    (text, bytes)
}

/// The generated shader is valid, and decompiled and compiled back it behaves as itself.
fn check(v: Version, setup: u64, steps: &[u64]) -> Result<(), TestCaseError> {
    let (text, bytes) = generate(v, setup, steps);
    let findings = validate(&bytecode::parse(&bytes).unwrap());
    prop_assert!(
        findings.is_empty(),
        "the generator wrote an invalid {v} shader: {findings:?}\n{text}"
    );
    let hlsl = decompile(&bytes)
        .map_err(|e| TestCaseError::fail(format!("{v}: does not decompile: {e}\n{text}")))?;
    let options = Options {
        profile: v.to_string(),
        ..Options::default()
    };
    let ours = compile("decompiled.hlsl", &hlsl, None, &options).map_err(|f| {
        TestCaseError::fail(format!(
            "{v}: the decompiled text does not compile:\n{}\n{text}\n{hlsl}",
            f.render()
        ))
    })?;
    same_behaviour(&bytes, &ours.bytecode, 8, setup).map_err(|e| {
        TestCaseError::fail(format!(
            "{v}: compiled back, it behaves otherwise: {e}\n{text}\n{hlsl}"
        ))
    })?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn generated_shaders_decompile_and_compile_back_to_the_same_behaviour(
        version in 0..VERSIONS.len(),
        setup in any::<u64>(),
        steps in prop::collection::vec(any::<u64>(), 0..20),
    ) {
        check(VERSIONS[version], setup, &steps)?;
    }
}

/// A random ps_1_x shader that maps bumps: a texture stage of `tex`, `texcoord`,
/// `texbem` and `texbeml` (ps_1_1–1_3; each bump read of a stage sampled before it), or
/// ps_1_4's `texld`, `texcrd` and `bem` with `phase` and a read at the moved coordinates;
/// then one to four instructions of arithmetic over what the stage wrote, the colours
/// and two constants of the table, the last into r0. Its listing and bytecode.
fn bump_shader(seed: u64) -> (String, Vec<u8>) {
    let mut rng = Rng::new(seed);
    let minor = rng.pick(&[1u8, 2, 3, 4]);
    let mut lines = vec![format!("ps_1_{minor}")];
    let mut table = Vec::new();
    // The registers the arithmetic may read.
    let mut values: Vec<String> = vec!["v0".into(), "v1".into(), "c0".into(), "c1".into()];
    let temp = if minor == 4 { 'r' } else { 't' };
    if minor < 4 {
        // Stage 0 is sampled, so a later stage has a sample to bump by.
        let mut sampled = vec![0u32];
        lines.push("tex t0".into());
        values.push("t0".into());
        let mut bumped = false;
        for t in 1..4u32 {
            let last = t == 3 && !bumped;
            let form = if last { 2 } else { rng.below(5) };
            let line = match form {
                0 => continue,
                1 => format!("tex t{t}"),
                2 | 3 => {
                    bumped = true;
                    let by = rng.pick(&sampled);
                    let op = if form == 2 { "texbem" } else { "texbeml" };
                    format!("{op} t{t}, t{by}")
                }
                _ => format!("texcoord t{t}"),
            };
            if !line.starts_with("texcoord") {
                sampled.push(t);
            }
            lines.push(line);
            values.push(format!("t{t}"));
        }
        for &s in &sampled {
            table.push(sampler_constant(format!("Map{s}"), s, ParamType::SAMPLER2D));
        }
    } else {
        let bem_src0 = rng.pick(&["r1", "c0"]);
        lines.extend([
            "texld r0, t0".to_string(),
            "texcrd r1.rgb, t1".to_string(),
            format!("bem r2.rg, {bem_src0}, r0"),
            "phase".to_string(),
            "texld r2, r2".to_string(),
        ]);
        // r0 of the first phase loses its alpha at the phase: only r2 on.
        values.push("r2".to_string());
        if rng.chance(0.5) {
            lines.push("texld r3, t3".into());
            values.push("r3".into());
            table.push(sampler_constant("Map3".into(), 3, ParamType::SAMPLER2D));
        }
        table.push(sampler_constant("Map0".into(), 0, ParamType::SAMPLER2D));
        table.push(sampler_constant("Map2".into(), 2, ParamType::SAMPLER2D));
    }
    table.push(vector_constant("Tint".into(), 0, 1));
    table.push(vector_constant("Glow".into(), 1, 1));
    let count = rng.range(1, 4);
    for k in 0..count {
        let dst = match (k + 1 == count, minor) {
            (true, _) => "r0".to_string(),
            (false, 4) => format!("r{}", k % 2 + 4),
            (false, _) => "r1".to_string(),
        };
        let form = rng.below(4);
        // Two registers of a kind an instruction at most (the read ports).
        let mut read: Vec<String> = Vec::new();
        let mut src = || {
            let v = loop {
                let v = values[rng.below(values.len())].clone();
                let kind = &v[..1];
                let others = read.iter().filter(|r| r.starts_with(kind) && **r != v);
                if read.contains(&v) || others.count() < 2 {
                    read.push(v.clone());
                    break v;
                }
            };
            match rng.below(4) {
                0 if v.starts_with(temp) || v.starts_with('v') => format!("{v}_bx2"),
                1 => format!("-{v}"),
                _ => v,
            }
        };
        let line = match form {
            0 => format!("mul {dst}, {}, {}", src(), src()),
            1 => format!("add {dst}, {}, {}", src(), src()),
            2 => format!("mad {dst}, {}, {}, {}", src(), src(), src()),
            _ => format!("mov {dst}, {}", src()),
        };
        lines.push(line);
        if minor == 4 || k + 1 < count {
            values.push(dst);
        }
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let bytes = assemble_unvalidated(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let table = ConstantTable {
        creator: "shaderfs decompile_props".into(),
        target: Some(format!("ps_1_{minor}")),
        version: bytecode::shader_version(&bytes).unwrap().token(),
        flags: 0,
        constants: table,
    };
    (text, replace_ctab(&bytes, &table.encode()).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Bump mapping decompiles with its texture stage as `asm { }`, which compiles back
    /// to a shader that behaves as the original, the stages' matrices drawn at random.
    #[test]
    fn bump_mapping_shaders_decompile_and_compile_back_to_the_same_behaviour(seed in any::<u64>()) {
        let (text, bytes) = bump_shader(seed);
        let findings = validate(&bytecode::parse(&bytes).unwrap());
        prop_assert!(findings.is_empty(), "the generator wrote an invalid shader: {findings:?}\n{text}");
        let v = bytecode::shader_version(&bytes).unwrap();
        let hlsl = decompile(&bytes)
            .map_err(|e| TestCaseError::fail(format!("does not decompile: {e}\n{text}")))?;
        prop_assert!(hlsl.contains("    asm\n    {\n"), "{hlsl}");
        let options = Options { profile: v.to_string(), ..Options::default() };
        let ours = compile("decompiled.hlsl", &hlsl, None, &options).map_err(|f| {
            TestCaseError::fail(format!("the decompiled text does not compile:\n{}\n{text}\n{hlsl}", f.render()))
        })?;
        // A shader whose every colour lane runs past ps_1_x's [-1, 1] in every trial
        // tells nothing (the card decides those lanes): drawn again.
        match same_behaviour(&bytes, &ours.bytecode, 8, seed) {
            Err(e) if e.contains("nothing was compared") => {
                return Err(TestCaseError::reject("every trial overflows"))
            }
            Err(e) => {
                return Err(TestCaseError::fail(format!(
                    "compiled back, it behaves otherwise: {e}\n{text}\n{hlsl}"
                )))
            }
            Ok(()) => {}
        }
    }
}
