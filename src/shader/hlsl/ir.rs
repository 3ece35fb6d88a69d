//! The code a shader computes, as a graph of vector operations with no control flow left:
//! every value is a [`Node`], every use names the node's components it reads ([`Comp`]s),
//! so a swizzle is free and a vector built from parts is a list of components. Building a
//! node folds constants and reuses an equal node already built, so constant folding and
//! common-subexpression elimination happen as the code is made.
//!
//! A loop the shader keeps as a loop (`rep`) is the one exception to "no control flow":
//! its body is built once, from [`Op::Carried`] nodes standing for the values the body
//! changes as an iteration starts, and the code after it reads [`Op::After`] nodes, the
//! values once the last iteration ended. Which nodes run inside the loop is then a
//! question of what they depend on: a node that reads no carried value is computed once,
//! before the loop.
//!
//! A branch the shader keeps as a branch (`if`/`else`/`endif`) is the other: after it,
//! a variable the two arms left different is an [`Op::Joined`] node of the branch, whose
//! operands are the variable's value at the end of each arm. Which nodes run in an arm is
//! a question of who reads them: a node only the arm's values need runs in the arm.

use std::collections::HashMap;

use crate::shader::d3d9::run::flush;

pub type NodeId = u32;

/// One component of a node's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Comp {
    pub node: NodeId,
    pub lane: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TexKind {
    /// `texld`: implicit level of detail.
    Plain,
    /// `texldp`: coordinates divided by w.
    Proj,
    /// `texldb`: level of detail biased by w.
    Bias,
    /// `texldl`: level of detail w.
    Lod,
    /// `texldd`: gradients given.
    Grad,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// A scalar constant (`f32` bits), one lane.
    Const(u32),
    /// A shader input register (four lanes), an index into [`Program::inputs`].
    Input(u32),
    /// Register `offset` of uniform `var` (four lanes), an index into [`Program::uniforms`].
    Uniform {
        var: u32,
        offset: u32,
    },
    /// Register `offset` of uniform `var` moved by a run-time number of registers, the
    /// one lane of the operand (`c#[a0.x]`, vertex shaders): four lanes.
    Relative {
        var: u32,
        offset: u32,
    },
    /// Register `offset` of uniform `var` moved by the counter of kept loop `lp` (`c#[aL]`,
    /// vertex shaders), which then runs as `loop aL`: four lanes, no operands.
    LoopRelative {
        lp: u32,
        var: u32,
        offset: u32,
    },
    /// The sampler of uniform `var` (one lane, for texture reads only).
    Sampler(u32),
    // Component-wise, as wide as their operands.
    Mov,
    /// A `mov` that must happen (the code generator looks through `Mov`): a constant or
    /// input copied to a temporary so one instruction reads fewer registers of a kind
    /// than the model's read ports allow.
    Copy,
    Add,
    Mul,
    Mad,
    Min,
    Max,
    /// `a >= 0 ? b : c`
    Cmp,
    /// `a < b ? 1 : 0`
    Slt,
    /// `a >= b ? 1 : 0`
    Sge,
    /// `a * (b - c) + c`
    Lrp,
    Frc,
    Abs,
    Neg,
    /// Clamped to [0, 1], NaN to 0: the `_sat` result modifier.
    Sat,
    Dsx,
    Dsy,
    // One lane from one-lane operands.
    Rcp,
    Rsq,
    Exp,
    Log,
    Pow,
    // One lane from wider operands.
    Dp2Add,
    Dp3,
    Dp4,
    /// Three lanes: a normalised three-vector.
    Nrm,
    /// Two lanes: cosine and sine of one lane.
    SinCos,
    /// Four lanes, the `lit` instruction (vertex shaders): of an operand (n·l, n·h, _, m),
    /// (1, n·l > 0 ? n·l : 0, n·l > 0 && n·h > 0 ? pow(n·h, clamp(m, ±128)) : 0, 1).
    Lit,
    /// Four lanes read from a sampler: operands are the coordinates (four lanes) and the
    /// sampler; `Grad` adds the two gradients.
    Tex(TexKind),
    /// Chunk `index` (up to four lanes) of the values loop `lp` carries, as one
    /// iteration of its body starts; no operands.
    Carried {
        lp: u32,
        index: u32,
    },
    /// A value after kept branch `br`: operand 0 as the `if` arm left it, operand 1 as
    /// the `else` arm did, lane by lane.
    Joined {
        br: u32,
    },
    /// Chunk `index` of loop `lp`'s values after it: operands the chunk's start value
    /// and its value at the end of an iteration, then (once the code generator has seen
    /// which chunks are needed) the start and end values of the loop's other chunks, so
    /// that every node of the body comes before anything after the loop.
    After {
        lp: u32,
        index: u32,
    },
}

/// How many times a loop's body runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopCount {
    /// A number known when compiling (`defi` in an integer register).
    Const(u32),
    /// Component `index` of the integer uniform `var` of [`Program::uniforms`], in an
    /// `i#` register: a register a component, in order of elements, members, rows and
    /// columns, as fxc places ints that count loops (`int3 n`: n.z is in the third).
    Uniform { var: u32, index: u32 },
}

/// Where code runs: at the shader's top level, in the body of a kept loop, or in an arm
/// of a kept branch (`true` the `if` arm, `false` the `else` arm). Regions nest: each
/// loop and branch sits in the region it was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Region {
    Top,
    Loop(u32),
    Arm(u32, bool),
}

/// The comparisons of `if_comp`, as the instruction names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compare {
    Gt,
    Eq,
    Ge,
    Lt,
    Ne,
    Le,
}

impl Compare {
    /// The suffix of the instruction: `if_gt`.
    pub fn suffix(self) -> &'static str {
        match self {
            Compare::Gt => "gt",
            Compare::Eq => "eq",
            Compare::Ge => "ge",
            Compare::Lt => "lt",
            Compare::Ne => "ne",
            Compare::Le => "le",
        }
    }

    /// The comparison that holds exactly where this one does not (NaN aside, as the
    /// instructions themselves leave it).
    pub fn negated(self) -> Compare {
        match self {
            Compare::Gt => Compare::Le,
            Compare::Eq => Compare::Ne,
            Compare::Ge => Compare::Lt,
            Compare::Lt => Compare::Ge,
            Compare::Ne => Compare::Eq,
            Compare::Le => Compare::Gt,
        }
    }

    /// The comparison of the operands swapped: `a < b` is `b > a`.
    pub fn swapped(self) -> Compare {
        match self {
            Compare::Gt => Compare::Lt,
            Compare::Ge => Compare::Le,
            Compare::Lt => Compare::Gt,
            Compare::Le => Compare::Ge,
            c => c,
        }
    }
}

/// What decides which arm of a kept branch runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Condition {
    /// `if b#`: component `index` of the `bool` uniform `var` of [`Program::uniforms`]
    /// (static flow control, the same for every vertex or pixel of a draw), a register a
    /// component as fxc places bools (`bool3 b`: b.z is in the third); `negated`, the
    /// `if` arm runs when it is false (`if (!b)`), and the code generator writes the arms
    /// the other way round.
    Bool { var: u32, index: u32, negated: bool },
    /// `if_comp a, b`: two one-lane values compared (dynamic flow control).
    Compare(Compare, Comp, Comp),
}

/// A branch kept as a branch.
#[derive(Debug, Clone, PartialEq)]
pub struct Branch {
    pub condition: Condition,
    /// The region the `if` is written in.
    pub parent: Region,
}

/// A loop kept as a loop.
#[derive(Debug, Clone, PartialEq)]
pub struct Loop {
    pub count: LoopCount,
    /// The region the loop is written in.
    pub parent: Region,
    /// Each carried chunk: its value before the loop, and at the end of an iteration.
    pub carried: Vec<(Vec<Comp>, Vec<Comp>)>,
    /// `After` nodes of each chunk (made when the loop is closed).
    pub after: Vec<NodeId>,
    /// `Carried` nodes of each chunk.
    pub carried_nodes: Vec<NodeId>,
    /// Lanes of each chunk that hold integers whatever the loop does (a variable of an
    /// integer type always does).
    pub integral: Vec<u8>,
    /// Leave the loop as an iteration starts, where this holds (`break_comp` first in the
    /// body): a `while` loop's condition, false. It reads the values as the iteration
    /// starts.
    pub exit_first: Option<Condition>,
    /// Leave the loop once an iteration has ended and its values are in place, where this
    /// holds (`break_comp` last in the body): a `break` ran, or a `do` loop's condition
    /// is false. The values then are those the `break` left.
    pub exit_last: Option<Condition>,
    /// The loop runs as `loop aL` with its counter starting here (the code generator
    /// sets it, where uniform arrays are read at the counter: [`Op::LoopRelative`]).
    pub al_start: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Node {
    pub op: Op,
    pub args: Vec<Vec<Comp>>,
    pub width: u8,
}

/// Where a shader input comes from: a semantic, and for pixel shaders the misc registers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Input {
    /// Upper-case usage without index: `TEXCOORD`, `COLOR`, `POSITION`, `VPOS`, `VFACE`;
    /// or `ASM`, register `index` (`t#` in ps_1_1–1_3, `r#` in ps_1_4) as the shader's
    /// `asm { }` block left it ([`Program::asm`]).
    pub usage: String,
    pub index: u32,
    pub centroid: bool,
}

/// A uniform the shader reads: a global or a `uniform` parameter of the entry point.
#[derive(Debug, Clone, PartialEq)]
pub struct Uniform {
    pub name: String,
    pub ty: super::types::Ty,
    /// How many float registers it takes (rows or columns, per element and member).
    pub registers: u32,
    /// `register(cN)` / `register(sN)` from the source, or kept from the shader this one
    /// replaces ([`Uniform::kept`]).
    pub bound: Option<u32>,
    /// `bound` is the register an earlier version of the shader gave this constant, which
    /// the game sets it by; the source itself binds nothing.
    pub kept: bool,
    /// `register(iN)` from the source (or kept): where an `int` that counts a loop goes.
    pub int_bound: Option<u32>,
    /// `register(bN)` from the source (or kept): where a `bool` a kept branch tests goes.
    pub bool_bound: Option<u32>,
    /// Default value (flattened components, as the initializer gave them).
    pub default: Option<Vec<f32>>,
    pub row_major: bool,
    pub is_sampler: bool,
    /// Not the game's: a `static const` array a vertex shader reads at a run-time index,
    /// its values (`default`) in `def`s of registers in a row, read through `a0` as fxc
    /// reads one. No entry of the table.
    pub literal: bool,
    pub loc: super::token::Loc,
}

/// An output and the components written to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    pub usage: String,
    pub index: u32,
    pub comps: Vec<Comp>,
}

#[derive(Debug, Default, Clone)]
pub struct Program {
    pub nodes: Vec<Node>,
    pub inputs: Vec<Input>,
    pub uniforms: Vec<Uniform>,
    pub outputs: Vec<Output>,
    /// Components of which any negative one discards the pixel (`texkill`).
    pub kills: Vec<Vec<Comp>>,
    /// Where each kill is in the source (`discard`, `clip`).
    pub kill_locs: Vec<super::token::Loc>,
    /// The texture stage written as instructions (ps_1_x's `asm { }`), which the code
    /// generator puts first; its results are `ASM` inputs.
    pub asm: Option<super::inline_asm::AsmBlock>,
    /// The whole shader written as instructions (`void main() { asm { … } }`), which the
    /// code generator assembles as it is ([`super::asm_shader`]).
    pub shader_asm: Option<super::asm_shader::ShaderAsm>,
    /// Loops kept as loops, by the number their nodes name.
    pub loops: Vec<Loop>,
    /// Branches kept as branches, by the number their nodes name.
    pub branches: Vec<Branch>,
    /// Values computed whether anything reads them or not: the carried values of a loop
    /// whose body or later code reads them (the code generator fills this in).
    pub roots: Vec<Comp>,
    /// Where in the source each node was made (the expression being lowered), for
    /// messages about code a model cannot run.
    pub locs: Vec<super::token::Loc>,
    /// The place new nodes are made for ([`Program::locs`]).
    pub here: super::token::Loc,
    /// ps_1_x, whose sources swizzle nothing but a replicated lane: lanes that compute
    /// the same thing are made one only where they are all the same, since spreading
    /// two lanes over three would cost a move a lane.
    pub lanes_in_place: bool,
    cse: HashMap<Node, NodeId>,
    /// What [`Program::is_integral`] and [`Program::is_boolean`] found, per component: a
    /// node never changes once made, so neither does the answer.
    facts: std::cell::RefCell<HashMap<(Comp, bool), bool>>,
}

/// How many nodes a program may have: more is refused as too big (a loop unrolled a
/// million times, say) instead of exhausting memory.
pub const MAX_NODES: usize = 1 << 20;

impl Program {
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// The constant a component holds, if it is one.
    pub fn constant(&self, c: Comp) -> Option<f32> {
        match self.node(c.node).op {
            Op::Const(bits) => Some(f32::from_bits(bits)),
            _ => None,
        }
    }

    /// Whether a component is known to hold an integer (or an infinity or NaN an integer
    /// operation could make): integer literals and uniforms, and what floor, sums,
    /// products and choices of them make. `floor`, `trunc` and conversions to int skip it.
    pub fn is_integral(&self, c: Comp) -> bool {
        self.integral_within(c, 24)
    }

    fn integral_within(&self, c: Comp, depth: u32) -> bool {
        if depth == 0 {
            return false;
        }
        if let Some(&known) = self.facts.borrow().get(&(c, true)) {
            return known;
        }
        let answer = self.integral_uncached(c, depth);
        self.facts.borrow_mut().insert((c, true), answer);
        answer
    }

    fn integral_uncached(&self, c: Comp, depth: u32) -> bool {
        let node = self.node(c.node);
        let arg = |i: usize| node.args[i][usize::from(c.lane)];
        let int = |i: usize| self.integral_within(arg(i), depth - 1);
        match node.op {
            Op::Const(bits) => {
                let v = f32::from_bits(bits);
                v == v.trunc()
            }
            Op::Uniform { var, .. } | Op::Relative { var, .. } | Op::LoopRelative { var, .. } => {
                matches!(
                    self.uniforms[var as usize].ty.base(),
                    Some(
                        super::types::Base::Int
                            | super::types::Base::Uint
                            | super::types::Base::Bool
                    )
                )
            }
            // x - frac(x), which floor makes, and x + frac(-x), which ceil makes.
            Op::Add
                if self.minus_frac_of(arg(0), arg(1))
                    || self.minus_frac_of(arg(1), arg(0))
                    || self.frac_of_minus(arg(0), arg(1))
                    || self.frac_of_minus(arg(1), arg(0)) =>
            {
                true
            }
            Op::Add | Op::Mul | Op::Min | Op::Max | Op::Slt | Op::Sge => int(0) && int(1),
            Op::Mad => int(0) && int(1) && int(2),
            Op::Neg | Op::Abs | Op::Mov | Op::Copy | Op::Sat => int(0),
            Op::Cmp | Op::Lrp => int(1) && int(2),
            Op::Joined { .. } => int(0) && int(1),
            Op::Carried { lp, index } | Op::After { lp, index } => {
                self.loops[lp as usize].integral[index as usize] & (1 << c.lane) != 0
            }
            _ => false,
        }
    }

    /// Every component the shader's results need: outputs, kills and [`Program::roots`].
    pub fn root_comps(&self) -> impl Iterator<Item = &Vec<Comp>> {
        self.outputs
            .iter()
            .map(|o| &o.comps)
            .chain(self.kills.iter())
            .chain(std::iter::once(&self.roots))
    }

    /// The region a region sits in; none for the top level.
    pub fn parent(&self, r: Region) -> Option<Region> {
        match r {
            Region::Top => None,
            Region::Loop(lp) => Some(self.loops[lp as usize].parent),
            Region::Arm(br, _) => Some(self.branches[br as usize].parent),
        }
    }

    /// How many regions a region is inside of (0 for the top level).
    pub fn depth(&self, mut r: Region) -> usize {
        let mut d = 0;
        while let Some(up) = self.parent(r) {
            d += 1;
            r = up;
        }
        d
    }

    /// How many loops a region is inside of, itself included.
    pub fn loop_depth(&self, mut r: Region) -> usize {
        let mut d = usize::from(matches!(r, Region::Loop(_)));
        while let Some(up) = self.parent(r) {
            d += usize::from(matches!(up, Region::Loop(_)));
            r = up;
        }
        d
    }

    /// Whether region `r` is `outer` or inside it.
    pub fn within(&self, mut r: Region, outer: Region) -> bool {
        loop {
            if r == outer {
                return true;
            }
            match self.parent(r) {
                Some(up) => r = up,
                None => return false,
            }
        }
    }

    /// The innermost region both `a` and `b` are within.
    pub fn common(&self, mut a: Region, mut b: Region) -> Region {
        let (mut da, mut db) = (self.depth(a), self.depth(b));
        while da > db {
            a = self.parent(a).unwrap_or(Region::Top);
            da -= 1;
        }
        while db > da {
            b = self.parent(b).unwrap_or(Region::Top);
            db -= 1;
        }
        while a != b {
            a = self.parent(a).unwrap_or(Region::Top);
            b = self.parent(b).unwrap_or(Region::Top);
        }
        a
    }

    /// Whether region `r` is in an arm of a branch taken by a comparison, which pixels
    /// of one draw may take apart (so that screen gradients there are undefined).
    pub fn in_dynamic_arm(&self, mut r: Region) -> bool {
        loop {
            if let Region::Arm(br, _) = r {
                if matches!(self.branches[br as usize].condition, Condition::Compare(..)) {
                    return true;
                }
            }
            match self.parent(r) {
                Some(up) => r = up,
                None => return false,
            }
        }
    }

    /// `(x * a) * b` as `x * (a * b)`, lane by lane, when every lane is one.
    fn scaled_twice(&mut self, args: &[Vec<Comp>]) -> Option<Vec<Comp>> {
        let w = args[0].len();
        let mut xs = Vec::with_capacity(w);
        let mut ks = Vec::with_capacity(w);
        for (&p, &q) in args[0].iter().zip(&args[1]) {
            let (inner, b) = match (self.constant(p), self.constant(q)) {
                (None, Some(b)) => (p, b),
                (Some(b), None) => (q, b),
                _ => return None,
            };
            let (a, x) = self.scaled_lane(inner)?;
            xs.push(x);
            ks.push(self.constant(a)? * b);
        }
        let ks: Vec<Comp> = ks.into_iter().map(|v| self.konst(v)).collect();
        Some(self.map(Op::Mul, vec![xs, ks]))
    }

    /// `c` as a lane of a product of a constant and a value: (the constant, the value).
    pub fn scaled_lane(&self, c: Comp) -> Option<(Comp, Comp)> {
        let n = self.node(c.node);
        if n.op != Op::Mul {
            return None;
        }
        let lane = usize::from(c.lane);
        let (u, v) = (n.args[0][lane], n.args[1][lane]);
        match (self.constant(u), self.constant(v)) {
            (Some(_), None) => Some((u, v)),
            (None, Some(_)) => Some((v, u)),
            _ => None,
        }
    }

    /// Whether `m` is `-frac(x)`.
    fn minus_frac_of(&self, x: Comp, m: Comp) -> bool {
        let n = self.node(m.node);
        if n.op != Op::Neg {
            return false;
        }
        let f = n.args[0][usize::from(m.lane)];
        let fnode = self.node(f.node);
        fnode.op == Op::Frc && fnode.args[0][usize::from(f.lane)] == x
    }

    /// Whether `m` is `frac(-x)`.
    fn frac_of_minus(&self, x: Comp, m: Comp) -> bool {
        let n = self.node(m.node);
        if n.op != Op::Frc {
            return false;
        }
        let g = n.args[0][usize::from(m.lane)];
        let gnode = self.node(g.node);
        gnode.op == Op::Neg && gnode.args[0][usize::from(g.lane)] == x
    }

    pub fn too_big(&self) -> bool {
        self.nodes.len() >= MAX_NODES
    }

    /// A node, or the one equal to it already made.
    pub fn add(&mut self, node: Node) -> NodeId {
        if let Some(&id) = self.cse.get(&node) {
            return id;
        }
        let id = self.nodes.len() as NodeId;
        self.nodes.push(node.clone());
        self.locs.push(self.here);
        self.cse.insert(node, id);
        id
    }

    /// Where node `n` was made.
    /// Node `id` becomes a `mov` of `comps` (as wide as it), which readers look through:
    /// how an operation a model lacks is replaced by what it has, keeping its number.
    pub fn replace_with(&mut self, id: usize, comps: Vec<Comp>) {
        let width = self.nodes[id].width;
        self.nodes[id] = Node {
            op: Op::Mov,
            args: vec![comps],
            width,
        };
    }

    pub fn loc(&self, n: NodeId) -> super::token::Loc {
        self.locs.get(n as usize).copied().unwrap_or_default()
    }

    pub fn konst(&mut self, v: f32) -> Comp {
        // Every value keeps its bits, -0 and NaN too: a `def` holds them, and 1 / -0 is
        // not 1 / 0.
        let node = self.add(Node {
            op: Op::Const(v.to_bits()),
            args: Vec::new(),
            width: 1,
        });
        Comp { node, lane: 0 }
    }

    pub fn lanes(node: NodeId, width: u8) -> Vec<Comp> {
        (0..width).map(|lane| Comp { node, lane }).collect()
    }

    /// A component-wise operation on equally wide operands, folded when every operand is
    /// constant; its components.
    pub fn map(&mut self, op: Op, args: Vec<Vec<Comp>>) -> Vec<Comp> {
        let width = args.first().map_or(0, Vec::len);
        if width > 4 {
            // Wider than a register (a matrix, an array): four lanes at a time.
            let mut out = Vec::with_capacity(width);
            for start in (0..width).step_by(4) {
                let end = (start + 4).min(width);
                let part = args.iter().map(|a| a[start..end].to_vec()).collect();
                out.extend(self.map(op, part));
            }
            return out;
        }
        debug_assert!(args.iter().all(|a| a.len() == width));
        // Lanes of constants fold, each on its own (`float4(x.xyz, 1) - 0.5` computes
        // three lanes, as fxc's does); the others are computed together.
        let folded: Vec<Option<Comp>> = (0..width)
            .map(|i| {
                let vals: Option<Vec<f32>> = args.iter().map(|a| self.constant(a[i])).collect();
                fold(op, &vals?).map(|v| self.konst(v))
            })
            .collect();
        if folded.iter().all(Option::is_some) {
            return folded.into_iter().flatten().collect();
        }
        if folded.iter().any(Option::is_some) {
            let rest: Vec<usize> = (0..width).filter(|&i| folded[i].is_none()).collect();
            let part = args
                .iter()
                .map(|a| rest.iter().map(|&i| a[i]).collect())
                .collect();
            let mut done = self.map(op, part).into_iter();
            return folded
                .into_iter()
                .map(|f| f.unwrap_or_else(|| done.next().unwrap()))
                .collect();
        }
        if let Some(simple) = self.simplify(op, &args) {
            return simple;
        }
        // Lanes that compute the same thing are computed once (`f(float3(y, y, y))` is
        // one lane of work, read three times, as fxc makes it).
        if width > 1 {
            let mut unique: Vec<usize> = Vec::new();
            let mut which = Vec::with_capacity(width);
            for i in 0..width {
                match unique
                    .iter()
                    .position(|&u| args.iter().all(|a| a[u] == a[i]))
                {
                    Some(k) => which.push(k),
                    None => {
                        which.push(unique.len());
                        unique.push(i);
                    }
                }
            }
            // In ps_1_x, only a value of one lane (which a replicate swizzle reads).
            if unique.len() < width && (unique.len() == 1 || !self.lanes_in_place) {
                let part = args
                    .iter()
                    .map(|a| unique.iter().map(|&u| a[u]).collect())
                    .collect();
                let done = self.map(op, part);
                return which.into_iter().map(|k| done[k]).collect();
            }
        }
        // Wider than one and made of lanes of different nodes is still one instruction:
        // the code generator gathers each operand into one register first.
        let id = self.add(Node {
            op,
            args,
            width: width as u8,
        });
        Self::lanes(id, width as u8)
    }

    /// Algebra that holds for every input, NaN and infinity included (x + 0 is x but for
    /// the sign of a -0 x, as fxc folds it; x + -0 is x).
    fn simplify(&mut self, op: Op, args: &[Vec<Comp>]) -> Option<Vec<Comp>> {
        let all = |p: &Program, a: &Vec<Comp>, v: f32| {
            a.iter().all(|&c| p.constant(c).is_some_and(|k| k == v))
        };
        match op {
            Op::Mov => Some(args[0].clone()),
            Op::Add if all(self, &args[1], 0.0) => Some(args[0].clone()),
            Op::Add if all(self, &args[0], 0.0) => Some(args[1].clone()),
            Op::Mul if all(self, &args[1], 1.0) => Some(args[0].clone()),
            Op::Mul if all(self, &args[0], 1.0) => Some(args[1].clone()),
            Op::Neg => {
                // --x is x.
                let inner: Option<Vec<Comp>> = args[0]
                    .iter()
                    .map(|c| {
                        let n = self.node(c.node);
                        (n.op == Op::Neg).then(|| n.args[0][usize::from(c.lane)])
                    })
                    .collect();
                inner.or_else(|| self.fold_into_choice(op, args))
            }
            // b * b is b for a boolean; max(x, x) and min(x, x) are x.
            Op::Mul if args[0] == args[1] && args[0].iter().all(|&c| self.is_boolean(c)) => {
                Some(args[0].clone())
            }
            Op::Max | Op::Min if args[0] == args[1] => Some(args[0].clone()),
            // (x * a) * b is x * (a * b) for constants a and b, as fxc folds it.
            Op::Mul if self.scaled_twice(args).is_some() => self.scaled_twice(args),
            Op::Add | Op::Mul | Op::Max | Op::Min => self.fold_into_choice(op, args),
            // A choice between two equal values is that value, whatever chooses.
            Op::Cmp if args[1] == args[2] => Some(args[1].clone()),
            Op::Cmp => self.same_choice(args),
            _ => None,
        }
    }

    /// Whether a component is known to be 0 or 1 (a comparison's result, a boolean
    /// constant, `and`s and `or`s of them).
    pub fn is_boolean(&self, c: Comp) -> bool {
        self.boolean_within(c, 16)
    }

    fn boolean_within(&self, c: Comp, depth: u32) -> bool {
        if depth == 0 {
            return false;
        }
        if let Some(&known) = self.facts.borrow().get(&(c, false)) {
            return known;
        }
        let answer = self.boolean_uncached(c, depth);
        self.facts.borrow_mut().insert((c, false), answer);
        answer
    }

    fn boolean_uncached(&self, c: Comp, depth: u32) -> bool {
        let n = self.node(c.node);
        let lane = usize::from(c.lane);
        match n.op {
            Op::Const(bits) => {
                let v = f32::from_bits(bits);
                v == 0.0 || v == 1.0
            }
            Op::Slt | Op::Sge => true,
            // A `bool` uniform in float registers: D3DX sets it 0 or 1, and Microsoft's
            // code tests it so (`cmp …, -c4.x, …`: true above 0), not against 0.
            Op::Uniform { var, .. } => {
                self.uniforms[var as usize].ty.base() == Some(super::types::Base::Bool)
            }
            Op::Cmp | Op::Lrp => (1..3).all(|k| self.boolean_within(n.args[k][lane], depth - 1)),
            Op::Joined { .. } => (0..2).all(|k| self.boolean_within(n.args[k][lane], depth - 1)),
            Op::Mul | Op::Max | Op::Min => {
                (0..2).all(|k| self.boolean_within(n.args[k][lane], depth - 1))
            }
            // 1 - b, the `not` of a boolean.
            Op::Add if self.constant(n.args[0][lane]) == Some(1.0) => {
                let m = self.node(n.args[1][lane].node);
                m.op == Op::Neg
                    && self.boolean_within(m.args[0][usize::from(n.args[1][lane].lane)], depth - 1)
            }
            _ => false,
        }
    }

    /// The choice a lane of `cmp` makes with constant arms: its condition and the two
    /// constants.
    fn constant_choice(&self, c: Comp) -> Option<(Comp, f32, f32)> {
        let n = self.node(c.node);
        if n.op != Op::Cmp {
            return None;
        }
        let lane = usize::from(c.lane);
        Some((
            n.args[0][lane],
            self.constant(n.args[1][lane])?,
            self.constant(n.args[2][lane])?,
        ))
    }

    /// Arithmetic of constants and choices between constants made by one test is a
    /// choice between the results: `10 * (a >= 0 ? 1 : 0)` is `a >= 0 ? 10 : 0`,
    /// `(a >= 0 ? 2 : 1) + (a >= 0 ? 5 : 3)` is `a >= 0 ? 7 : 4`.
    fn fold_into_choice(&mut self, op: Op, args: &[Vec<Comp>]) -> Option<Vec<Comp>> {
        let w = args[0].len();
        let mut conds = Vec::with_capacity(w);
        let mut yes = Vec::with_capacity(w);
        let mut no = Vec::with_capacity(w);
        for i in 0..w {
            let lane: Vec<Comp> = args.iter().map(|a| a[i]).collect();
            let cond = lane
                .iter()
                .find_map(|&c| self.constant_choice(c))
                .map(|(cond, _, _)| cond)?;
            let mut va = Vec::with_capacity(lane.len());
            let mut vb = Vec::with_capacity(lane.len());
            for &c in &lane {
                match (self.constant(c), self.constant_choice(c)) {
                    (Some(v), _) => {
                        va.push(v);
                        vb.push(v);
                    }
                    (None, Some((k, a, b))) if k == cond => {
                        va.push(a);
                        vb.push(b);
                    }
                    _ => return None,
                }
            }
            conds.push(cond);
            yes.push(fold(op, &va)?);
            no.push(fold(op, &vb)?);
        }
        let yes: Vec<Comp> = yes.into_iter().map(|v| self.konst(v)).collect();
        let no: Vec<Comp> = no.into_iter().map(|v| self.konst(v)).collect();
        Some(self.map(Op::Cmp, vec![conds, yes, no]))
    }

    /// `a >= 0 ? t : (a >= 0 ? x : y)` is `a >= 0 ? t : y`, and alike in the other arm.
    fn same_choice(&mut self, args: &[Vec<Comp>]) -> Option<Vec<Comp>> {
        let w = args[0].len();
        let mut changed = false;
        let mut t = args[1].clone();
        let mut f = args[2].clone();
        for i in 0..w {
            for (arm, pick) in [(&mut t, 1usize), (&mut f, 2usize)] {
                let n = self.node(arm[i].node);
                let lane = usize::from(arm[i].lane);
                if n.op == Op::Cmp && n.args[0][lane] == args[0][i] {
                    arm[i] = n.args[pick][lane];
                    changed = true;
                }
            }
        }
        changed.then(|| self.map(Op::Cmp, vec![args[0].clone(), t, f]))
    }

    /// A one-lane result from whole operands (`dp3`, `rcp` of one lane …).
    pub fn scalar(&mut self, op: Op, args: Vec<Vec<Comp>>) -> Comp {
        let vals: Option<Vec<Vec<f32>>> = args
            .iter()
            .map(|a| a.iter().map(|&c| self.constant(c)).collect())
            .collect();
        if let Some(v) = vals.and_then(|v| fold_reduce(op, &v)) {
            return self.konst(v);
        }
        // 1 / (1 / x) is x but for the last bit of a finite x, which `rcp` does not
        // promise anyway; fxc folds it the same (x / length(v) is x * rsq(v . v)).
        if op == Op::Rcp {
            let inner = self.node(args[0][0].node);
            if inner.op == Op::Rcp {
                return inner.args[0][0];
            }
        }
        let id = self.add(Node { op, args, width: 1 });
        Comp { node: id, lane: 0 }
    }

    /// The `lit` instruction of (n·l, n·h, m), its four lanes; folded as the instruction
    /// computes where n·l decides it or every operand is known. The operand is
    /// (n·l, n·h, m, m), as fxc reads it (`c0.xyzz`).
    pub fn lit(&mut self, nl: Comp, nh: Comp, m: Comp) -> Vec<Comp> {
        let known = [nl, nh, m].map(|c| self.constant(c));
        let folded = match known {
            [Some(a), Some(b), Some(c)] => Some(crate::shader::d3d9::run::lit([a, b, c, c])),
            // n·l not above 0 (or NaN) leaves (1, 0, 0, 1) whatever the rest.
            [Some(a), _, _] if a.is_nan() || a <= 0.0 => Some([1.0, 0.0, 0.0, 1.0]),
            _ => None,
        };
        if let Some(v) = folded {
            return v.iter().map(|&x| self.konst(x)).collect();
        }
        self.raw(Op::Lit, vec![vec![nl, nh, m, m]], 4)
    }

    /// A node of any width whose operands need not be constant-folded (inputs, samples).
    pub fn raw(&mut self, op: Op, args: Vec<Vec<Comp>>, width: u8) -> Vec<Comp> {
        let id = self.add(Node { op, args, width });
        Self::lanes(id, width)
    }
}

/// Component-wise operations on constants, as the hardware computes them in `f32`.
/// A denormal result is 0 (of its sign), as the hardware writes one: a value folded when
/// compiling is what the instruction would have left.
pub fn fold(op: Op, v: &[f32]) -> Option<f32> {
    fold_exact(op, v).map(flush)
}

fn fold_exact(op: Op, v: &[f32]) -> Option<f32> {
    Some(match op {
        Op::Mov => v[0],
        Op::Copy => return None,
        Op::Add => v[0] + v[1],
        Op::Mul => v[0] * v[1],
        Op::Mad => v[0] * v[1] + v[2],
        Op::Min => {
            if v[0] < v[1] {
                v[0]
            } else {
                v[1]
            }
        }
        Op::Max => {
            if v[0] >= v[1] {
                v[0]
            } else {
                v[1]
            }
        }
        Op::Cmp => {
            if v[0] >= 0.0 {
                v[1]
            } else {
                v[2]
            }
        }
        Op::Slt => f32::from(u8::from(v[0] < v[1])),
        Op::Sge => f32::from(u8::from(v[0] >= v[1])),
        Op::Lrp => v[0] * (v[1] - v[2]) + v[2],
        Op::Frc => v[0] - v[0].floor(),
        // `_sat` as `d3d9::run` executes it: a clamp to [0, 1] that keeps a -0, a NaN
        // taken to 0 (as Microsoft's compilers fold it).
        Op::Sat => {
            if v[0].is_nan() {
                0.0
            } else {
                v[0].clamp(0.0, 1.0)
            }
        }
        Op::Abs => v[0].abs(),
        Op::Neg => -v[0],
        Op::Dsx | Op::Dsy => 0.0,
        Op::Rcp => 1.0 / v[0],
        Op::Rsq => 1.0 / v[0].abs().sqrt(),
        Op::Exp => v[0].exp2(),
        Op::Log => v[0].abs().log2(),
        Op::Pow => v[0].abs().powf(v[1]),
        _ => return None,
    })
}

fn fold_reduce(op: Op, v: &[Vec<f32>]) -> Option<f32> {
    fold_reduce_exact(op, v).map(flush)
}

fn fold_reduce_exact(op: Op, v: &[Vec<f32>]) -> Option<f32> {
    Some(match op {
        Op::Dp3 => (0..3).map(|i| v[0][i] * v[1][i]).sum(),
        Op::Dp4 => (0..4).map(|i| v[0][i] * v[1][i]).sum(),
        Op::Dp2Add => v[0][0] * v[1][0] + v[0][1] * v[1][1] + v[2][0],
        Op::Rcp | Op::Rsq | Op::Exp | Op::Log | Op::Frc | Op::Abs => fold(op, &[v[0][0]])?,
        Op::Pow => fold(op, &[v[0][0], v[1][0]])?,
        _ => return None,
    })
}
