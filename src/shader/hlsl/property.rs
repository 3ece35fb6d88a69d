//! Property test of the compiler: random well-typed HLSL programs (uniforms, texture
//! coordinates, locals, component writes, `if`/`else`, constant-bound `for` loops, user
//! functions with early returns, `?:`, casts of comparisons, the arithmetic intrinsics,
//! matrix products) compiled for vs_2_0, vs_3_0, ps_2_0 and ps_3_0, run through the
//! interpreter (`d3d9::run`) on random inputs, and compared with the same program
//! evaluated here, in `f64`, over the generated tree.
//!
//! The evaluator carries with every value a bound on how far an `f32` computation of it
//! may be off ([`V`]): nothing for exact operations on exact values (the inputs are `f32`
//! values, many on a 1/16 grid, so sums and products often are exact and comparisons
//! of them, `==` included, must come out exactly), an ulp per rounding, and a wider
//! precision class for the operations hardware approximates (`rcp`, `rsq`, `exp`, `log`,
//! `sincos`). Inputs that make the program ill-conditioned where it matters — a
//! comparison, `frac`, `floor`, `sign` or `step` too close to its step to call, a
//! division by nearly 0, `log`, `pow`, `sqrt` or `rsqrt` of small or negative values,
//! values past [`MAX`] — are rejected and others drawn. Both sides of an `if` and of
//! `?:` are evaluated, as the flattened code computes them; only the taken side must be
//! well-conditioned, but in a vertex shader (which selects arithmetically, having no
//! `cmp`) the untaken side must be finite too, and the value chosen carries the rounding
//! of `c · (a − b) + b` (see `Eval::choose`), as in Microsoft's code.
//!
//! A failure prints the profile and case number (rerun just that case with
//! `PROPERTY_CASE=ps_2_0:123`), the source (and a shrunk one), the inputs, and ours
//! against the expected values with their error bounds. `PROPERTY_CASES=N` runs N
//! programs per profile instead of the usual number.

use std::fmt::Write as _;

use super::compile::{compile, Options};
use crate::shader::d3d9::ctab::{Class, ConstantTable, RegisterSet};
use crate::shader::d3d9::run::{Attributes, Bindings, Inputs, OutputRegister, Program, Semantic};
use crate::shader::d3d9::{bytecode, validate};

// ---------------------------------------------------------------------------------------
// Generator of random numbers: splitmix64, seeded per case.

pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// In `0..n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// In `lo..=hi`.
    pub(crate) fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub(crate) fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64) < p * (1u64 << 53) as f64
    }

    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// A value for an input or literal: mostly k/16 in [-4, 4] (exact, with zero and
    /// integers coming up, so exact sums, products and ties happen), sometimes any `f32`
    /// in that range.
    pub(crate) fn value(&mut self) -> f32 {
        if self.chance(0.8) {
            (self.below(129) as f32 - 64.0) / 16.0
        } else {
            (self.next() >> 40) as f32 / (1u32 << 24) as f32 * 8.0 - 4.0
        }
    }

    /// What a register holds in the components the program must not read.
    fn garbage(&mut self) -> f32 {
        1000.0 + self.below(1000) as f32
    }
}

// ---------------------------------------------------------------------------------------
// The programs.

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// `u#`, a float..float4 uniform.
    Uniform,
    /// `t#`, an input with semantic `TEXCOORD#`.
    Input,
    /// `l#`, a local of the function it is in.
    Local,
    /// `p#`, a parameter of the function it is in.
    Param,
    /// `i#`, an int loop counter (read as `(float)i#`).
    Loop,
}

#[derive(Debug, Clone, Copy)]
struct Var {
    kind: Kind,
    index: usize,
    width: u8,
}

/// A matrix uniform `m#`.
#[derive(Debug, Clone, Copy)]
struct Mat {
    rows: u8,
    cols: u8,
    row_major: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Bin {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum F1 {
    Abs,
    Frac,
    Floor,
    Ceil,
    Round,
    Trunc,
    Sign,
    Saturate,
    Sqrt,
    Rsqrt,
    Exp,
    Exp2,
    Log,
    Log2,
    Sin,
    Cos,
}

const F1S: [F1; 16] = [
    F1::Abs,
    F1::Frac,
    F1::Floor,
    F1::Ceil,
    F1::Round,
    F1::Trunc,
    F1::Sign,
    F1::Saturate,
    F1::Sqrt,
    F1::Rsqrt,
    F1::Exp,
    F1::Exp2,
    F1::Log,
    F1::Log2,
    F1::Sin,
    F1::Cos,
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum F2 {
    Min,
    Max,
    Pow,
    Step,
    Fmod,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum F3 {
    Lerp,
    Clamp,
    Mad,
    Smoothstep,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Rel {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Debug, Clone)]
enum Expr {
    Lit(Vec<f32>),
    Var(Var),
    Swz(Box<Expr>, Vec<u8>),
    /// `floatN(parts…)`.
    Make(Vec<Expr>),
    Neg(Box<Expr>),
    /// Operands of the same width, or one of them scalar.
    Bin(Bin, Box<Expr>, Box<Expr>),
    F1(F1, Box<Expr>),
    F2(F2, Box<Expr>, Box<Expr>),
    /// `lerp`'s third operand may be scalar; the others have one width.
    F3(F3, Box<Expr>, Box<Expr>, Box<Expr>),
    Dot(Box<Expr>, Box<Expr>),
    Length(Box<Expr>),
    Distance(Box<Expr>, Box<Expr>),
    Normalize(Box<Expr>),
    Cross(Box<Expr>, Box<Expr>),
    /// `mul(v, m#)`: as wide as the matrix's columns.
    MulVM(Box<Expr>, usize, u8),
    /// `mul(m#, v)`: as wide as the matrix's rows.
    MulMV(usize, Box<Expr>, u8),
    /// `(floatN)(cond)`.
    Cast(Box<Cond>),
    /// `cond ? a : b`, the condition scalar or as wide as the operands.
    Select(Box<Cond>, Box<Expr>, Box<Expr>),
    /// `f#(args…)`, with the function's return width.
    Call(usize, Vec<Expr>, u8),
}

#[derive(Debug, Clone)]
enum Cond {
    Rel(Rel, Expr, Expr),
    Not(Box<Cond>),
    /// Scalar only.
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum AssignOp {
    Set,
    Add,
    Sub,
    Mul,
}

#[derive(Debug, Clone)]
enum Stmt {
    /// `floatN l# = init;`
    Decl(usize, u8, Expr),
    /// `l#.lanes op= value;` (all lanes when `None`).
    Assign {
        local: usize,
        lanes: Option<Vec<u8>>,
        op: AssignOp,
        value: Expr,
    },
    If(Cond, Vec<Stmt>, Vec<Stmt>),
    /// `for (int i# = 0; i# < count; i#++)`.
    For(usize, u32, Vec<Stmt>),
    /// Only in functions, inside an `if`.
    Return(Expr),
    /// Only in loops, inside an `if`.
    Break,
    Continue,
}

#[derive(Debug, Clone)]
struct Func {
    params: Vec<u8>,
    ret: u8,
    locals: usize,
    body: Vec<Stmt>,
    result: Expr,
}

#[derive(Debug, Clone)]
struct Output {
    semantic: Semantic,
    width: u8,
    value: Expr,
}

#[derive(Debug, Clone)]
struct Prog {
    vertex: bool,
    /// vs_1_1: sine and cosine are the legacy compiler's series (within 9.4e-5 of the
    /// function over a period), not `sincos`, as a vector's are in every profile.
    series_trig: bool,
    uniforms: Vec<u8>,
    mats: Vec<Mat>,
    inputs: Vec<u8>,
    funcs: Vec<Func>,
    locals: usize,
    body: Vec<Stmt>,
    outputs: Vec<Output>,
}

impl Expr {
    fn width(&self) -> u8 {
        match self {
            Expr::Lit(v) => v.len() as u8,
            Expr::Var(v) => v.width,
            Expr::Swz(_, s) => s.len() as u8,
            Expr::Make(parts) => parts.iter().map(Expr::width).sum(),
            Expr::Neg(a) | Expr::F1(_, a) | Expr::Normalize(a) => a.width(),
            Expr::Bin(_, a, b) | Expr::F2(_, a, b) => a.width().max(b.width()),
            Expr::F3(_, a, b, c) => a.width().max(b.width()).max(c.width()),
            Expr::Dot(..) | Expr::Length(_) | Expr::Distance(..) => 1,
            Expr::Cross(..) => 3,
            Expr::MulVM(_, _, w) | Expr::MulMV(_, _, w) | Expr::Call(_, _, w) => *w,
            Expr::Cast(c) => c.width(),
            Expr::Select(_, a, b) => a.width().max(b.width()),
        }
    }

    /// The expressions directly inside (those of conditions too), for shrinking.
    fn children_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Expr::Lit(_) | Expr::Var(_) => vec![],
            Expr::Swz(a, _)
            | Expr::Neg(a)
            | Expr::F1(_, a)
            | Expr::Normalize(a)
            | Expr::Length(a)
            | Expr::MulVM(a, ..)
            | Expr::MulMV(_, a, _) => vec![&mut **a],
            Expr::Make(parts) | Expr::Call(_, parts, _) => parts.iter_mut().collect(),
            Expr::Bin(_, a, b)
            | Expr::F2(_, a, b)
            | Expr::Dot(a, b)
            | Expr::Distance(a, b)
            | Expr::Cross(a, b) => vec![&mut **a, &mut **b],
            Expr::F3(_, a, b, c) => vec![&mut **a, &mut **b, &mut **c],
            Expr::Cast(c) => c.exprs_mut(),
            Expr::Select(c, a, b) => {
                let mut v = c.exprs_mut();
                v.push(&mut **a);
                v.push(&mut **b);
                v
            }
        }
    }
}

impl Cond {
    fn width(&self) -> u8 {
        match self {
            Cond::Rel(_, a, b) => a.width().max(b.width()),
            Cond::Not(c) => c.width(),
            Cond::And(..) | Cond::Or(..) => 1,
        }
    }

    fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Cond::Rel(_, a, b) => vec![a, b],
            Cond::Not(c) => c.exprs_mut(),
            Cond::And(a, b) | Cond::Or(a, b) => {
                let mut v = a.exprs_mut();
                v.extend(b.exprs_mut());
                v
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Generation.

/// Whose scope an expression is generated in.
struct Scope {
    vars: Vec<Var>,
    /// Functions that may be called (none inside functions).
    funcs: usize,
    locals: usize,
    loops: usize,
}

struct Gen<'a> {
    rng: &'a mut Rng,
    prog: Prog,
    scope: Scope,
    /// Operations left to generate: keeps programs within the profile's limits.
    budget: u32,
    /// A loop's body is being generated: an `if` in it may `break` or `continue`.
    in_loop: bool,
}

impl Gen<'_> {
    fn lit(&mut self, w: u8) -> Expr {
        Expr::Lit((0..w).map(|_| self.rng.value()).collect())
    }

    fn lanes(&mut self, w: u8, from: u8) -> Vec<u8> {
        (0..w)
            .map(|_| self.rng.below(usize::from(from)) as u8)
            .collect()
    }

    fn leaf(&mut self, w: u8) -> Expr {
        if self.scope.vars.is_empty() || self.rng.chance(0.15) {
            return self.lit(w);
        }
        // Locals are read more often than the rest: they carry the statements' work.
        let mut weighted = Vec::new();
        for v in &self.scope.vars {
            let n = if v.kind == Kind::Local { 3 } else { 1 };
            weighted.extend(std::iter::repeat(*v).take(n));
        }
        let same: Vec<Var> = weighted.iter().copied().filter(|v| v.width == w).collect();
        if !same.is_empty() && self.rng.chance(0.6) {
            return Expr::Var(self.rng.pick(&same));
        }
        let v = self.rng.pick(&weighted);
        let lanes = self.lanes(w, v.width);
        Expr::Swz(Box::new(Expr::Var(v)), lanes)
    }

    /// An operand for a function defined on positive values only (or a denominator):
    /// mostly `(abs(e) + c)`, so that few inputs are rejected; sometimes `e` itself.
    fn positive(&mut self, w: u8, depth: u32) -> Expr {
        let e = self.expr(w, depth);
        if self.rng.chance(0.2) {
            return e;
        }
        let c = self.rng.pick(&[0.25, 0.5, 1.0]);
        Expr::Bin(
            Bin::Add,
            Box::new(Expr::F1(F1::Abs, Box::new(e))),
            Box::new(Expr::Lit(vec![c])),
        )
    }

    fn expr(&mut self, w: u8, depth: u32) -> Expr {
        if depth == 0 || self.budget == 0 || self.rng.chance(0.2) {
            return self.leaf(w);
        }
        self.budget -= 1;
        let d = depth - 1;
        loop {
            let e = match self.rng.below(21) {
                0..=3 => {
                    let op = self
                        .rng
                        .pick(&[Bin::Add, Bin::Sub, Bin::Mul, Bin::Add, Bin::Div]);
                    let a = self.expr(w, d);
                    let bw = if w > 1 && self.rng.chance(0.3) { 1 } else { w };
                    let b = if op == Bin::Div {
                        self.positive(bw, d)
                    } else {
                        self.expr(bw, d)
                    };
                    if self.rng.chance(0.5) && op != Bin::Div {
                        Expr::Bin(op, Box::new(b), Box::new(a))
                    } else {
                        Expr::Bin(op, Box::new(a), Box::new(b))
                    }
                }
                4 => Expr::Neg(Box::new(self.expr(w, d))),
                5..=7 => {
                    let f = self.rng.pick(&F1S);
                    let a = if matches!(f, F1::Sqrt | F1::Rsqrt | F1::Log | F1::Log2) {
                        self.positive(w, d)
                    } else {
                        self.expr(w, d)
                    };
                    Expr::F1(f, Box::new(a))
                }
                8..=9 => {
                    let f = self
                        .rng
                        .pick(&[F2::Min, F2::Max, F2::Pow, F2::Step, F2::Fmod]);
                    let (a, b) = match f {
                        F2::Pow => (self.positive(w, d), self.expr(w, d)),
                        F2::Fmod => (self.expr(w, d), self.positive(w, d)),
                        _ => (self.expr(w, d), self.expr(w, d)),
                    };
                    Expr::F2(f, Box::new(a), Box::new(b))
                }
                10 => {
                    let f = self
                        .rng
                        .pick(&[F3::Lerp, F3::Clamp, F3::Mad, F3::Smoothstep]);
                    let tw = if f == F3::Lerp && self.rng.chance(0.5) {
                        1
                    } else {
                        w
                    };
                    if f == F3::Clamp && self.rng.chance(0.7) {
                        // Bounds in order, mostly: crossed ones are rejected.
                        let (mut lo, mut hi) = (self.lit(w), self.lit(w));
                        if let (Expr::Lit(a), Expr::Lit(b)) = (&mut lo, &mut hi) {
                            for i in 0..a.len() {
                                if a[i] > b[i] {
                                    std::mem::swap(&mut a[i], &mut b[i]);
                                }
                            }
                        }
                        let x = self.expr(w, d);
                        return Expr::F3(f, Box::new(x), Box::new(lo), Box::new(hi));
                    }
                    Expr::F3(
                        f,
                        Box::new(self.expr(w, d)),
                        Box::new(self.expr(w, d)),
                        Box::new(self.expr(tw, d)),
                    )
                }
                11 if w == 1 => {
                    let k = self.rng.range(1, 4) as u8;
                    Expr::Dot(Box::new(self.expr(k, d)), Box::new(self.expr(k, d)))
                }
                11 => Expr::Normalize(Box::new(self.expr(w, d))),
                12 if w == 1 => {
                    let k = self.rng.range(1, 4) as u8;
                    if self.rng.chance(0.5) {
                        Expr::Length(Box::new(self.expr(k, d)))
                    } else {
                        Expr::Distance(Box::new(self.expr(k, d)), Box::new(self.expr(k, d)))
                    }
                }
                12 if w == 3 => Expr::Cross(Box::new(self.expr(3, d)), Box::new(self.expr(3, d))),
                13 => {
                    let fits: Vec<(usize, bool)> = (0..self.prog.mats.len())
                        .flat_map(|m| [(m, true), (m, false)])
                        .filter(|&(m, vm)| {
                            let mat = self.prog.mats[m];
                            w == if vm { mat.cols } else { mat.rows }
                        })
                        .collect();
                    if fits.is_empty() {
                        continue;
                    }
                    let (m, vm) = self.rng.pick(&fits);
                    let mat = self.prog.mats[m];
                    if vm {
                        Expr::MulVM(Box::new(self.expr(mat.rows, d)), m, w)
                    } else {
                        Expr::MulMV(m, Box::new(self.expr(mat.cols, d)), w)
                    }
                }
                14 => {
                    let k = self.rng.range(1, 4) as u8;
                    let inner = self.expr(k, d);
                    let lanes = self.lanes(w, k);
                    Expr::Swz(Box::new(inner), lanes)
                }
                15 if w > 1 => {
                    let mut parts = Vec::new();
                    let mut left = w;
                    while left > 0 {
                        let k = self.rng.range(1, usize::from(left)) as u8;
                        parts.push(self.expr(k, d));
                        left -= k;
                    }
                    Expr::Make(parts)
                }
                16 => Expr::Cast(Box::new(self.cond(w, d))),
                17..=18 => {
                    let cw = if self.rng.chance(0.5) { 1 } else { w };
                    Expr::Select(
                        Box::new(self.cond(cw, d)),
                        Box::new(self.expr(w, d)),
                        Box::new(self.expr(w, d)),
                    )
                }
                19..=20 => {
                    let fits: Vec<usize> = (0..self.scope.funcs)
                        .filter(|&f| self.prog.funcs[f].ret == w)
                        .collect();
                    if fits.is_empty() {
                        continue;
                    }
                    let f = self.rng.pick(&fits);
                    let params = self.prog.funcs[f].params.clone();
                    let args = params.iter().map(|&p| self.expr(p, d)).collect();
                    Expr::Call(f, args, w)
                }
                _ => continue,
            };
            return e;
        }
    }

    fn cond(&mut self, w: u8, depth: u32) -> Cond {
        let d = depth.min(2);
        match self.rng.below(8) {
            6 if d > 0 => Cond::Not(Box::new(self.cond(w, d - 1))),
            7 if w == 1 && d > 0 => {
                let (a, b) = (self.cond(1, d - 1), self.cond(1, d - 1));
                if self.rng.chance(0.5) {
                    Cond::And(Box::new(a), Box::new(b))
                } else {
                    Cond::Or(Box::new(a), Box::new(b))
                }
            }
            _ => {
                let rel = self
                    .rng
                    .pick(&[Rel::Lt, Rel::Le, Rel::Gt, Rel::Ge, Rel::Eq, Rel::Ne]);
                Cond::Rel(rel, self.expr(w, d), self.expr(w, d))
            }
        }
    }

    fn width(&mut self) -> u8 {
        self.rng.range(1, 4) as u8
    }

    fn decl(&mut self) -> Stmt {
        let w = self.width();
        let init = self.expr(w, 3);
        let l = self.scope.locals;
        self.scope.locals += 1;
        self.scope.vars.push(Var {
            kind: Kind::Local,
            index: l,
            width: w,
        });
        Stmt::Decl(l, w, init)
    }

    fn assign(&mut self) -> Option<Stmt> {
        let locals: Vec<Var> = self
            .scope
            .vars
            .iter()
            .copied()
            .filter(|v| v.kind == Kind::Local)
            .collect();
        if locals.is_empty() {
            return None;
        }
        let v = self.rng.pick(&locals);
        let lanes = if v.width > 1 && self.rng.chance(0.5) {
            // Distinct lanes in a random order: `l0.zx`.
            let mut all: Vec<u8> = (0..v.width).collect();
            for i in (1..all.len()).rev() {
                all.swap(i, self.rng.below(i + 1));
            }
            all.truncate(self.rng.range(1, usize::from(v.width)));
            Some(all)
        } else {
            None
        };
        let w = lanes.as_ref().map_or(v.width, |l| l.len() as u8);
        let op = self.rng.pick(&[
            AssignOp::Set,
            AssignOp::Set,
            AssignOp::Add,
            AssignOp::Sub,
            AssignOp::Mul,
        ]);
        let value = self.expr(w, 2);
        Some(Stmt::Assign {
            local: v.index,
            lanes,
            op,
            value,
        })
    }

    /// Statements inside an `if` or a loop: assignments, and (above `nest` 0) another
    /// `if`; an early return where `ret` gives the function's return width.
    fn block(&mut self, nest: u32, ret: Option<u8>) -> Vec<Stmt> {
        let mut out = Vec::new();
        for _ in 0..self.rng.range(1, 2) {
            if nest > 0 && self.rng.chance(0.2) {
                out.push(self.if_stmt(nest - 1, ret));
            } else if let Some(s) = self.assign() {
                out.push(s);
            }
        }
        if let Some(w) = ret {
            if self.rng.chance(0.5) {
                out.push(Stmt::Return(self.expr(w, 2)));
            }
        }
        out
    }

    fn if_stmt(&mut self, nest: u32, ret: Option<u8>) -> Stmt {
        let c = self.cond(1, 2);
        let mut then = self.block(nest, ret);
        if self.in_loop && self.rng.chance(0.35) {
            then.push(if self.rng.chance(0.6) {
                Stmt::Break
            } else {
                Stmt::Continue
            });
        }
        let els = if self.rng.chance(0.5) {
            self.block(nest, ret)
        } else {
            Vec::new()
        };
        Stmt::If(c, then, els)
    }

    fn for_stmt(&mut self) -> Stmt {
        let i = self.scope.loops;
        self.scope.loops += 1;
        let count = self.rng.range(1, 4) as u32;
        self.scope.vars.push(Var {
            kind: Kind::Loop,
            index: i,
            width: 1,
        });
        self.in_loop = true;
        let body = self.block(1, None);
        self.in_loop = false;
        self.scope.vars.pop();
        Stmt::For(i, count, body)
    }

    fn func(&mut self) -> Func {
        let params: Vec<u8> = (0..self.rng.range(1, 3)).map(|_| self.width()).collect();
        let ret = self.width();
        let mut vars: Vec<Var> = (0..self.prog.uniforms.len())
            .map(|i| Var {
                kind: Kind::Uniform,
                index: i,
                width: self.prog.uniforms[i],
            })
            .collect();
        vars.extend(params.iter().enumerate().map(|(i, &w)| Var {
            kind: Kind::Param,
            index: i,
            width: w,
        }));
        self.scope = Scope {
            vars,
            funcs: 0,
            locals: 0,
            loops: 0,
        };
        let mut body = Vec::new();
        if self.rng.chance(0.6) {
            body.push(self.decl());
        }
        if self.rng.chance(0.4) {
            body.push(self.if_stmt(0, Some(ret)));
        }
        let result = self.expr(ret, 2);
        Func {
            params,
            ret,
            locals: self.scope.locals,
            body,
            result,
        }
    }
}

/// A random program for a vertex or pixel shader; `small` for ps_2_0's 64 slots.
fn generate(rng: &mut Rng, vertex: bool, small: bool) -> Prog {
    let uniforms: Vec<u8> = (0..rng.range(2, 4))
        .map(|_| rng.range(1, 4) as u8)
        .collect();
    let mats: Vec<Mat> = (0..rng.range(0, 2))
        .map(|_| Mat {
            rows: rng.range(2, 4) as u8,
            cols: rng.range(2, 4) as u8,
            row_major: rng.chance(0.3),
        })
        .collect();
    let inputs: Vec<u8> = (0..rng.range(1, 3))
        .map(|_| rng.range(1, 4) as u8)
        .collect();
    let prog = Prog {
        vertex,
        series_trig: false,
        uniforms,
        mats,
        inputs,
        funcs: Vec::new(),
        locals: 0,
        body: Vec::new(),
        outputs: Vec::new(),
    };
    let mut g = Gen {
        rng,
        prog,
        scope: Scope {
            vars: Vec::new(),
            funcs: 0,
            locals: 0,
            loops: 0,
        },
        budget: if small { 22 } else { 45 },
        in_loop: false,
    };
    for _ in 0..g.rng.range(0, 2) {
        let f = g.func();
        g.prog.funcs.push(f);
    }
    let mut vars: Vec<Var> = (0..g.prog.uniforms.len())
        .map(|i| Var {
            kind: Kind::Uniform,
            index: i,
            width: g.prog.uniforms[i],
        })
        .collect();
    vars.extend((0..g.prog.inputs.len()).map(|i| Var {
        kind: Kind::Input,
        index: i,
        width: g.prog.inputs[i],
    }));
    g.scope = Scope {
        vars,
        funcs: g.prog.funcs.len(),
        locals: 0,
        loops: 0,
    };
    let mut body = Vec::new();
    for _ in 0..g.rng.range(1, 3) {
        body.push(g.decl());
    }
    for _ in 0..g.rng.range(0, 3) {
        let s = match g.rng.below(3) {
            0 => g.assign(),
            1 => Some(g.if_stmt(1, None)),
            _ => Some(g.for_stmt()),
        };
        body.extend(s);
    }
    if g.rng.chance(0.3) {
        body.push(g.decl());
    }
    let mut outputs = Vec::new();
    if vertex {
        outputs.push((Semantic::new(Semantic::POSITION, 0), 4));
        for k in 0..g.rng.range(1, 2) {
            let w = g.width();
            outputs.push((Semantic::new(Semantic::TEXCOORD, k as u8), w));
        }
    } else {
        outputs.push((Semantic::new(Semantic::COLOR, 0), 4));
    }
    g.prog.outputs = outputs
        .into_iter()
        .map(|(semantic, width)| Output {
            semantic,
            width,
            value: g.expr(width, 3),
        })
        .collect();
    g.prog.locals = g.scope.locals;
    g.prog.body = body;
    g.prog
}

// ---------------------------------------------------------------------------------------
// HLSL text.

fn float(x: f32) -> String {
    let s = format!("{x:?}");
    if x < 0.0 {
        format!("({s})")
    } else {
        s
    }
}

fn type_name(w: u8) -> String {
    if w == 1 {
        "float".into()
    } else {
        format!("float{w}")
    }
}

fn lanes_text(lanes: &[u8]) -> String {
    lanes
        .iter()
        .map(|&l| ['x', 'y', 'z', 'w'][usize::from(l)])
        .collect()
}

fn var_name(v: &Var) -> String {
    match v.kind {
        Kind::Uniform => format!("u{}", v.index),
        Kind::Input => format!("t{}", v.index),
        Kind::Local => format!("l{}", v.index),
        Kind::Param => format!("p{}", v.index),
        Kind::Loop => format!("((float)i{})", v.index),
    }
}

fn expr_text(e: &Expr) -> String {
    let list = |es: &[&Expr]| {
        es.iter()
            .map(|e| expr_text(e))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match e {
        Expr::Lit(v) if v.len() == 1 => float(v[0]),
        Expr::Lit(v) => format!(
            "{}({})",
            type_name(v.len() as u8),
            v.iter()
                .map(|&x| format!("{x:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Expr::Var(v) => var_name(v),
        Expr::Swz(a, lanes) => match &**a {
            Expr::Var(v) if v.kind != Kind::Loop => {
                format!("{}.{}", var_name(v), lanes_text(lanes))
            }
            _ => format!("({}).{}", expr_text(a), lanes_text(lanes)),
        },
        Expr::Make(parts) => format!(
            "{}({})",
            type_name(e.width()),
            list(&parts.iter().collect::<Vec<_>>())
        ),
        Expr::Neg(a) => format!("(-{})", expr_text(a)),
        Expr::Bin(op, a, b) => {
            let o = match op {
                Bin::Add => "+",
                Bin::Sub => "-",
                Bin::Mul => "*",
                Bin::Div => "/",
            };
            format!("({} {o} {})", expr_text(a), expr_text(b))
        }
        // `sign` returns an int type: cast, or two of them would divide as integers.
        Expr::F1(F1::Sign, a) => format!("(({})sign({}))", type_name(a.width()), expr_text(a)),
        Expr::F1(f, a) => format!("{}({})", format!("{f:?}").to_lowercase(), expr_text(a)),
        Expr::F2(f, a, b) => format!("{}({})", format!("{f:?}").to_lowercase(), list(&[a, b])),
        Expr::F3(f, a, b, c) => {
            format!("{}({})", format!("{f:?}").to_lowercase(), list(&[a, b, c]))
        }
        Expr::Dot(a, b) => format!("dot({})", list(&[a, b])),
        Expr::Length(a) => format!("length({})", expr_text(a)),
        Expr::Distance(a, b) => format!("distance({})", list(&[a, b])),
        Expr::Normalize(a) => format!("normalize({})", expr_text(a)),
        Expr::Cross(a, b) => format!("cross({})", list(&[a, b])),
        Expr::MulVM(a, m, _) => format!("mul({}, m{m})", expr_text(a)),
        Expr::MulMV(m, a, _) => format!("mul(m{m}, {})", expr_text(a)),
        Expr::Cast(c) => format!("(({})({}))", type_name(c.width()), cond_text(c)),
        Expr::Select(c, a, b) => {
            format!("({} ? {} : {})", cond_text(c), expr_text(a), expr_text(b))
        }
        Expr::Call(f, args, _) => format!("f{f}({})", list(&args.iter().collect::<Vec<_>>())),
    }
}

fn cond_text(c: &Cond) -> String {
    match c {
        Cond::Rel(r, a, b) => {
            let o = match r {
                Rel::Lt => "<",
                Rel::Le => "<=",
                Rel::Gt => ">",
                Rel::Ge => ">=",
                Rel::Eq => "==",
                Rel::Ne => "!=",
            };
            format!("({} {o} {})", expr_text(a), expr_text(b))
        }
        Cond::Not(c) => format!("(!{})", cond_text(c)),
        Cond::And(a, b) => format!("({} && {})", cond_text(a), cond_text(b)),
        Cond::Or(a, b) => format!("({} || {})", cond_text(a), cond_text(b)),
    }
}

fn stmts_text(out: &mut String, stmts: &[Stmt], indent: usize) {
    let pad = "    ".repeat(indent);
    for s in stmts {
        match s {
            Stmt::Decl(l, w, e) => {
                let _ = writeln!(out, "{pad}{} l{l} = {};", type_name(*w), expr_text(e));
            }
            Stmt::Assign {
                local,
                lanes,
                op,
                value,
                ..
            } => {
                let target = match lanes {
                    Some(l) => format!("l{local}.{}", lanes_text(l)),
                    None => format!("l{local}"),
                };
                let o = match op {
                    AssignOp::Set => "=",
                    AssignOp::Add => "+=",
                    AssignOp::Sub => "-=",
                    AssignOp::Mul => "*=",
                };
                let _ = writeln!(out, "{pad}{target} {o} {};", expr_text(value));
            }
            Stmt::If(c, then, els) => {
                // Every other `if` asks to stay a branch: `if_comp` where the profile has
                // it (BRANCH is `[branch]` there, see [`options`]).
                let branch = if (then.len() + els.len()) % 2 == 0 {
                    "BRANCH "
                } else {
                    ""
                };
                let _ = writeln!(out, "{pad}{branch}if {} {{", cond_text(c));
                stmts_text(out, then, indent + 1);
                if !els.is_empty() {
                    let _ = writeln!(out, "{pad}}} else {{");
                    stmts_text(out, els, indent + 1);
                }
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::For(i, n, body) => {
                // Every other loop asks to stay a loop: `rep` where the profile has it.
                if (i + *n as usize) % 2 == 0 {
                    let _ = writeln!(out, "{pad}[loop]");
                }
                let _ = writeln!(out, "{pad}for (int i{i} = 0; i{i} < {n}; i{i}++) {{");
                stmts_text(out, body, indent + 1);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Return(e) => {
                let _ = writeln!(out, "{pad}return {};", expr_text(e));
            }
            Stmt::Break => {
                let _ = writeln!(out, "{pad}break;");
            }
            Stmt::Continue => {
                let _ = writeln!(out, "{pad}continue;");
            }
        }
    }
}

fn source(p: &Prog) -> String {
    let mut out = String::new();
    for (i, &w) in p.uniforms.iter().enumerate() {
        let _ = writeln!(out, "{} u{i};", type_name(w));
    }
    for (i, m) in p.mats.iter().enumerate() {
        let major = if m.row_major { "row_major " } else { "" };
        let _ = writeln!(out, "{major}float{}x{} m{i};", m.rows, m.cols);
    }
    for (i, f) in p.funcs.iter().enumerate() {
        let params: Vec<String> = f
            .params
            .iter()
            .enumerate()
            .map(|(k, &w)| format!("{} p{k}", type_name(w)))
            .collect();
        let _ = writeln!(
            out,
            "\n{} f{i}({})\n{{",
            type_name(f.ret),
            params.join(", ")
        );
        stmts_text(&mut out, &f.body, 1);
        let _ = writeln!(out, "    return {};\n}}", expr_text(&f.result));
    }
    let mut params: Vec<String> = p
        .inputs
        .iter()
        .enumerate()
        .map(|(i, &w)| format!("{} t{i} : TEXCOORD{i}", type_name(w)))
        .collect();
    for (k, o) in p.outputs.iter().enumerate() {
        params.push(format!("out {} o{k} : {}", type_name(o.width), o.semantic));
    }
    let _ = writeln!(out, "\nvoid main({})\n{{", params.join(", "));
    stmts_text(&mut out, &p.body, 1);
    for (k, o) in p.outputs.iter().enumerate() {
        let _ = writeln!(out, "    o{k} = {};", expr_text(&o.value));
    }
    out.push_str("}\n");
    out
}

// ---------------------------------------------------------------------------------------
// The reference evaluator.

/// One ulp, relative: the most one `f32` rounding is off by.
const U: f64 = 1.0 / (1u64 << 23) as f64;
/// The precision class of what hardware approximates (`rcp`, `rsq`, `exp`, `log`,
/// `sincos`): 21 bits.
const APPROX: f64 = 1.0 / (1u64 << 21) as f64;
/// Values beyond this in the taken path are rejected as growing too fast.
const MAX: f64 = 1e5;
/// An error term for denormals flushed to zero.
const TINY: f64 = 1e-37;

/// A value and a bound on how far an `f32` computation of it may be off; `e == 0`
/// when it is exactly an `f32` the hardware must compute exactly.
#[derive(Debug, Clone, Copy)]
struct V {
    v: f64,
    e: f64,
}

fn exact_f32(v: f64) -> bool {
    (v as f32) as f64 == v && (v == 0.0 || v.abs() >= f32::MIN_POSITIVE as f64)
}

fn exact(v: f64) -> V {
    V { v, e: 0.0 }
}

/// The result of one rounded operation whose operands are off by `e` in total.
fn rounded(v: f64, e: f64) -> V {
    if e == 0.0 && exact_f32(v) {
        exact(v)
    } else {
        V {
            v,
            e: e + U * v.abs() + TINY,
        }
    }
}

/// The value of the lowest bit set in `x` (a normal `f32`).
fn lowest_bit(x: f32) -> f64 {
    let bits = x.to_bits();
    let exponent = ((bits >> 23) & 0xff) as i32;
    let mantissa = (bits & 0x7f_ffff) | 0x80_0000;
    2f64.powi(exponent - 150 + mantissa.trailing_zeros() as i32)
}

/// Whether every partial sum of `terms`, in any order, is exact in `f32`: they are `f32`
/// values, all multiples of the smallest lowest bit among them, adding up (in magnitude)
/// to less than 2^24 of it.
fn exact_sum(terms: &[f64]) -> bool {
    let mut q = f64::INFINITY;
    let mut total = 0.0;
    for &t in terms {
        if !exact_f32(t) {
            return false;
        }
        if t != 0.0 {
            q = q.min(lowest_bit(t as f32));
            total += t.abs();
        }
    }
    total == 0.0 || total < q * 16_777_216.0
}

/// `Σ a·b` over `pairs` (a dot product, a matrix row, a cross-product term).
fn sum_of_products(pairs: &[(V, V, f64)]) -> V {
    let products: Vec<f64> = pairs.iter().map(|(a, b, s)| s * a.v * b.v).collect();
    let v: f64 = products.iter().sum();
    let e: f64 = pairs
        .iter()
        .map(|(a, b, _)| a.v.abs() * b.e + b.v.abs() * a.e + a.e * b.e)
        .sum();
    if e == 0.0 && exact_sum(&products) {
        return exact(v);
    }
    let magnitude: f64 = products.iter().map(|p| p.abs()).sum();
    V {
        v,
        e: e + pairs.len() as f64 * U * magnitude + TINY,
    }
}

/// The inputs of one run: uniform registers, matrix entries (`[row][column]`) and texture
/// coordinates; components beyond a variable's size hold garbage.
#[derive(Debug, Clone)]
struct Data {
    uniforms: Vec<[f32; 4]>,
    mats: Vec<[[f32; 4]; 4]>,
    inputs: Vec<[f32; 4]>,
}

fn random_data(p: &Prog, rng: &mut Rng) -> Data {
    let vec4 = |w: u8, rng: &mut Rng| -> [f32; 4] {
        std::array::from_fn(|i| {
            if i < usize::from(w) {
                rng.value()
            } else {
                rng.garbage()
            }
        })
    };
    Data {
        uniforms: p.uniforms.iter().map(|&w| vec4(w, rng)).collect(),
        mats: p
            .mats
            .iter()
            .map(|m| {
                std::array::from_fn(|r| {
                    if r < usize::from(m.rows) {
                        vec4(m.cols, rng)
                    } else {
                        [rng.garbage(); 4]
                    }
                })
            })
            .collect(),
        inputs: p.inputs.iter().map(|&w| vec4(w, rng)).collect(),
    }
}

#[derive(Debug, Clone, Default)]
struct Frame {
    locals: Vec<Vec<V>>,
    params: Vec<Vec<V>>,
    loops: Vec<f64>,
    /// Set by a `return` that ran.
    ret: Option<Vec<V>>,
    /// The value of a `return` on an untaken path: the flattened code chooses between it
    /// and what the function returns.
    untaken_ret: Option<Vec<V>>,
    /// The locals as a `break` or `continue` that ran left them, and which it was (true
    /// for `break`): the rest of the iteration runs flattened, not live.
    jump: Option<(bool, Vec<Vec<V>>)>,
}

struct Eval<'a> {
    prog: &'a Prog,
    data: &'a Data,
    frames: Vec<Frame>,
    /// Whether what is evaluated now decides the outputs (not the untaken side of an `if`
    /// or `?:`, nor code after a `return` that ran).
    live: bool,
    /// Why these inputs are rejected, if they are.
    reject: Option<String>,
    /// An untaken side computed something infinite, NaN or huge.
    untaken_wild: bool,
}

impl Eval<'_> {
    fn ill(&mut self, why: &str) {
        if self.live && self.reject.is_none() {
            self.reject = Some(why.to_string());
        }
    }

    fn frame(&mut self) -> &mut Frame {
        self.frames.last_mut().unwrap()
    }

    /// `d`, the distance of a computed value to a step of a step function, must be
    /// clearly more than the error `e`; an exact value is decided exactly.
    fn clear_of_step(&mut self, d: f64, e: f64, what: &str) {
        if e > 0.0 && d.abs() <= 4.0 * e + TINY {
            self.ill(what);
        }
    }

    fn rel(&mut self, r: Rel, a: V, b: V) -> bool {
        self.clear_of_step(a.v - b.v, a.e + b.e, "a comparison too close to call");
        match r {
            Rel::Lt => a.v < b.v,
            Rel::Le => a.v <= b.v,
            Rel::Gt => a.v > b.v,
            Rel::Ge => a.v >= b.v,
            Rel::Eq => a.v == b.v,
            Rel::Ne => a.v != b.v,
        }
    }

    fn cond(&mut self, c: &Cond) -> Vec<bool> {
        match c {
            Cond::Rel(r, a, b) => {
                let (a, b) = (self.expr(a), self.expr(b));
                let n = a.len().max(b.len());
                (0..n)
                    .map(|i| self.rel(*r, a[i.min(a.len() - 1)], b[i.min(b.len() - 1)]))
                    .collect()
            }
            Cond::Not(c) => self.cond(c).into_iter().map(|x| !x).collect(),
            Cond::And(a, b) => {
                let (a, b) = (self.cond(a), self.cond(b));
                vec![a[0] && b[0]]
            }
            Cond::Or(a, b) => {
                let (a, b) = (self.cond(a), self.cond(b));
                vec![a[0] || b[0]]
            }
        }
    }

    /// The value `taken` where the other side of a choice is `other`. A pixel shader picks
    /// one with `cmp`, exactly; a vertex shader has no `cmp` and computes
    /// `c · (a − b) + b` (fxc's `mad` of a difference, our `lrp`), which rounds twice when
    /// the sides differ.
    fn choose(&self, taken: V, other: V) -> V {
        // (An untaken side that is not finite is rejected by `evaluate`; its own error
        // bound, which may be NaN where the untaken side is ill-conditioned, does not
        // reach the result beyond the rounding of the difference.)
        if !self.prog.vertex || taken.v == other.v || !other.v.is_finite() {
            return taken;
        }
        V {
            v: taken.v,
            e: taken.e + 2.0 * U * (taken.v.abs() + other.v.abs()),
        }
    }

    /// Evaluates `e` with `live` narrowed to `live`.
    fn expr_if(&mut self, live: bool, e: &Expr) -> Vec<V> {
        let was = self.live;
        self.live = was && live;
        let v = self.expr(e);
        self.live = was;
        v
    }

    fn expr(&mut self, e: &Expr) -> Vec<V> {
        let v = self.expr_unchecked(e);
        for x in &v {
            if !x.v.is_finite() || x.v.abs() > MAX {
                if self.live {
                    self.ill("a value too large");
                } else if !x.v.is_finite() || x.v.abs() > 1e30 {
                    self.untaken_wild = true;
                }
            }
        }
        v
    }

    fn var(&mut self, v: &Var) -> Vec<V> {
        let w = usize::from(v.width);
        let f32s = |x: &[f32; 4]| x[..w].iter().map(|&x| exact(x as f64)).collect();
        match v.kind {
            Kind::Uniform => f32s(&self.data.uniforms[v.index]),
            Kind::Input => f32s(&self.data.inputs[v.index]),
            Kind::Local => self.frame().locals[v.index].clone(),
            Kind::Param => self.frame().params[v.index].clone(),
            Kind::Loop => vec![exact(self.frame().loops[v.index])],
        }
    }

    fn expr_unchecked(&mut self, e: &Expr) -> Vec<V> {
        match e {
            Expr::Lit(v) => v.iter().map(|&x| exact(x as f64)).collect(),
            Expr::Var(v) => self.var(v),
            Expr::Swz(a, lanes) => {
                let a = self.expr(a);
                lanes.iter().map(|&l| a[usize::from(l)]).collect()
            }
            Expr::Make(parts) => parts.iter().flat_map(|p| self.expr(p)).collect(),
            Expr::Neg(a) => self
                .expr(a)
                .into_iter()
                .map(|x| V { v: -x.v, e: x.e })
                .collect(),
            Expr::Bin(op, a, b) => {
                let (a, b) = (self.expr(a), self.expr(b));
                let n = a.len().max(b.len());
                (0..n)
                    .map(|i| self.bin(*op, a[i.min(a.len() - 1)], b[i.min(b.len() - 1)]))
                    .collect()
            }
            Expr::F1(f, a) => {
                let xs = self.expr(a);
                let vector = xs.len() > 1;
                xs.into_iter().map(|x| self.f1(*f, x, vector)).collect()
            }
            Expr::F2(f, a, b) => {
                let (a, b) = (self.expr(a), self.expr(b));
                (0..a.len()).map(|i| self.f2(*f, a[i], b[i])).collect()
            }
            Expr::F3(f, a, b, c) => {
                let (a, b, c) = (self.expr(a), self.expr(b), self.expr(c));
                (0..a.len())
                    .map(|i| self.f3(*f, a[i], b[i], c[i.min(c.len() - 1)]))
                    .collect()
            }
            Expr::Dot(a, b) => {
                let (a, b) = (self.expr(a), self.expr(b));
                let pairs: Vec<_> = (0..a.len()).map(|i| (a[i], b[i], 1.0)).collect();
                vec![sum_of_products(&pairs)]
            }
            Expr::Length(a) => {
                let a = self.expr(a);
                vec![self.length(&a, false)]
            }
            Expr::Distance(a, b) => {
                let (a, b) = (self.expr(a), self.expr(b));
                let d: Vec<V> = (0..a.len())
                    .map(|i| self.bin(Bin::Sub, a[i], b[i]))
                    .collect();
                vec![self.length(&d, false)]
            }
            Expr::Normalize(a) => {
                let a = self.expr(a);
                let l = self.length(&a, true);
                a.iter()
                    .map(|x| {
                        let r = x.v / l.v;
                        V {
                            v: r,
                            e: (x.e + r.abs() * l.e) / (l.v - l.e).max(TINY)
                                + 3.0 * APPROX * r.abs()
                                + TINY,
                        }
                    })
                    .collect()
            }
            Expr::Cross(a, b) => {
                let (a, b) = (self.expr(a), self.expr(b));
                (0..3)
                    .map(|i| {
                        let (j, k) = ((i + 1) % 3, (i + 2) % 3);
                        sum_of_products(&[(a[j], b[k], 1.0), (a[k], b[j], -1.0)])
                    })
                    .collect()
            }
            Expr::MulVM(a, m, _) => {
                let a = self.expr(a);
                let mat = self.prog.mats[*m];
                let entries = self.data.mats[*m];
                (0..usize::from(mat.cols))
                    .map(|j| {
                        let pairs: Vec<_> = (0..usize::from(mat.rows))
                            .map(|i| (a[i], exact(entries[i][j] as f64), 1.0))
                            .collect();
                        sum_of_products(&pairs)
                    })
                    .collect()
            }
            Expr::MulMV(m, a, _) => {
                let a = self.expr(a);
                let mat = self.prog.mats[*m];
                let entries = self.data.mats[*m];
                (0..usize::from(mat.rows))
                    .map(|i| {
                        let pairs: Vec<_> = (0..usize::from(mat.cols))
                            .map(|j| (exact(entries[i][j] as f64), a[j], 1.0))
                            .collect();
                        sum_of_products(&pairs)
                    })
                    .collect()
            }
            Expr::Cast(c) => self
                .cond(c)
                .into_iter()
                .map(|b| exact(f64::from(u8::from(b))))
                .collect(),
            Expr::Select(c, a, b) => {
                let c = self.cond(c);
                let a = self.expr_if(c.iter().any(|&x| x), a);
                let b = self.expr_if(c.iter().any(|&x| !x), b);
                (0..a.len())
                    .map(|i| {
                        let (taken, other) = if c[i.min(c.len() - 1)] {
                            (a[i], b[i])
                        } else {
                            (b[i], a[i])
                        };
                        self.choose(taken, other)
                    })
                    .collect()
            }
            Expr::Call(f, args, _) => {
                let params: Vec<Vec<V>> = args.iter().map(|a| self.expr(a)).collect();
                let func = &self.prog.funcs[*f];
                self.frames.push(Frame {
                    locals: vec![Vec::new(); func.locals],
                    params,
                    ..Frame::default()
                });
                self.stmts(&func.body);
                let was = self.live;
                self.live = was && self.frame().ret.is_none();
                let result = self.expr(&func.result);
                self.live = was;
                let frame = self.frames.pop().unwrap();
                // The value returned is a choice between the `return`s' and the
                // function's last value, with a vertex shader's rounding.
                let (taken, other) = match (frame.ret, frame.untaken_ret) {
                    (Some(r), _) => (r, Some(result)),
                    (None, u) => (result, u),
                };
                match other {
                    Some(o) if o.len() == taken.len() => taken
                        .iter()
                        .zip(&o)
                        .map(|(&t, &x)| self.choose(t, x))
                        .collect(),
                    _ => taken,
                }
            }
        }
    }

    /// `length(a)`; zero only for an exact zero vector, and not for `normalize`.
    fn length(&mut self, a: &[V], normalizing: bool) -> V {
        let sum = sum_of_products(&a.iter().map(|&x| (x, x, 1.0)).collect::<Vec<_>>());
        if !normalizing && sum.v == 0.0 && sum.e == 0.0 {
            return exact(0.0);
        }
        let l = sum.v.sqrt();
        if l < 0.25 || sum.v <= 4.0 * sum.e {
            self.ill("the length of a vector near zero");
        }
        V {
            v: l,
            e: sum.e / (2.0 * (sum.v - sum.e).max(TINY).sqrt()) + 3.0 * APPROX * l + TINY,
        }
    }

    fn bin(&mut self, op: Bin, a: V, b: V) -> V {
        match op {
            Bin::Add => rounded(a.v + b.v, a.e + b.e),
            Bin::Sub => rounded(a.v - b.v, a.e + b.e),
            Bin::Mul => rounded(a.v * b.v, a.v.abs() * b.e + b.v.abs() * a.e + a.e * b.e),
            Bin::Div => {
                if b.v.abs() < 0.25 || b.v.abs() <= 4.0 * b.e {
                    self.ill("a division by a value near zero");
                }
                let r = a.v / b.v;
                V {
                    v: r,
                    e: (a.e + r.abs() * b.e) / (b.v.abs() - b.e).max(TINY)
                        + (APPROX + U) * r.abs()
                        + TINY,
                }
            }
        }
    }

    /// `floor`, `ceil`, `trunc`, `round` of `x`, `y` the value: exact when `x` is exact
    /// and so is its fraction (the code computes `x - frac(x)`), else within an ulp or two.
    fn whole(&mut self, x: V, y: f64, step_at: f64, what: &str) -> V {
        let frac = x.v - x.v.floor();
        self.clear_of_step(frac - step_at, x.e, what);
        self.clear_of_step(frac - step_at - 1.0, x.e, what);
        if x.e == 0.0 && exact_f32(frac) && exact_f32(x.v + 0.5) {
            exact(y)
        } else {
            V {
                v: y,
                e: 2.0 * U * (x.v.abs() + 1.0) + TINY,
            }
        }
    }

    /// `f` of one component `x` of an argument, a vector's if `vector`.
    fn f1(&mut self, f: F1, x: V, vector: bool) -> V {
        match f {
            F1::Abs => V {
                v: x.v.abs(),
                e: x.e,
            },
            F1::Saturate => V {
                v: x.v.clamp(0.0, 1.0),
                e: x.e,
            },
            F1::Frac => {
                let fr = x.v - x.v.floor();
                self.clear_of_step(fr, x.e, "frac too near a whole number");
                self.clear_of_step(fr - 1.0, x.e, "frac too near a whole number");
                rounded(fr, x.e)
            }
            F1::Floor => self.whole(x, x.v.floor(), 0.0, "floor too near a whole number"),
            F1::Ceil => self.whole(x, x.v.ceil(), 0.0, "ceil too near a whole number"),
            F1::Trunc => self.whole(x, x.v.trunc(), 0.0, "trunc too near a whole number"),
            F1::Round => {
                // Halves go either way (to even, away from zero, up): never asked.
                let fr = x.v - x.v.floor();
                if (fr - 0.5).abs() <= 4.0 * x.e + 1e-6 {
                    self.ill("round of a half");
                }
                self.whole(x, x.v.round(), 0.5, "round too near a half")
            }
            F1::Sign => {
                self.clear_of_step(x.v, x.e, "sign too near zero");
                exact(if x.v > 0.0 {
                    1.0
                } else if x.v < 0.0 {
                    -1.0
                } else {
                    0.0
                })
            }
            F1::Sqrt => {
                if x.v == 0.0 && x.e == 0.0 {
                    return exact(0.0);
                }
                if x.v < 0.0625 || x.v <= 4.0 * x.e {
                    self.ill("sqrt of a small or negative value");
                }
                let r = x.v.sqrt();
                V {
                    v: r,
                    e: x.e / (2.0 * (x.v - x.e).max(TINY).sqrt()) + 2.0 * APPROX * r + TINY,
                }
            }
            F1::Rsqrt => {
                if x.v < 0.0625 || x.v <= 4.0 * x.e {
                    self.ill("rsqrt of a small or negative value");
                }
                let r = 1.0 / x.v.sqrt();
                V {
                    v: r,
                    e: r * x.e / (2.0 * (x.v - x.e).max(TINY)) + 2.0 * APPROX * r + TINY,
                }
            }
            F1::Exp | F1::Exp2 => {
                // exp(x) is exp2(x·log2(e)): one more rounding of the argument.
                let (k, r) = if f == F1::Exp {
                    (1.0, x.v.exp())
                } else {
                    (std::f64::consts::LN_2, x.v.exp2())
                };
                if x.v > 12.0 {
                    self.ill("exp of a large value");
                }
                V {
                    v: r,
                    e: r * (1.01 * k * x.e + 2.0 * U * x.v.abs()) + 2.0 * APPROX * r + TINY,
                }
            }
            F1::Log | F1::Log2 => {
                if x.v < 0.125 || x.v <= 4.0 * x.e {
                    self.ill("log of a small or negative value");
                }
                let (k, r) = if f == F1::Log {
                    (1.0, x.v.ln())
                } else {
                    (std::f64::consts::LOG2_E, x.v.log2())
                };
                V {
                    v: r,
                    e: k * x.e / (x.v - x.e).max(TINY) + APPROX * (r.abs() + 1.0) + TINY,
                }
            }
            F1::Sin | F1::Cos => {
                if x.v.abs() > 64.0 {
                    self.ill("sin or cos of a large value");
                }
                // The range reduction to [-π, π] rounds the argument a few times.
                let r = if f == F1::Sin { x.v.sin() } else { x.v.cos() };
                let method = if self.prog.series_trig || vector {
                    // The series' own error, and the rounding of its ten terms (a
                    // vector's sine and cosine are the series in every profile, as fxc
                    // computes them).
                    9.4e-5 + 64.0 * U
                } else {
                    APPROX
                };
                V {
                    v: r,
                    e: x.e + 8.0 * U * (x.v.abs() + 1.0) + method,
                }
            }
        }
    }

    fn f2(&mut self, f: F2, a: V, b: V) -> V {
        match f {
            F2::Min => V {
                v: a.v.min(b.v),
                e: a.e.max(b.e),
            },
            F2::Max => V {
                v: a.v.max(b.v),
                e: a.e.max(b.e),
            },
            F2::Step => exact(f64::from(u8::from(self.rel(Rel::Ge, b, a)))),
            F2::Pow => {
                // exp2(b·log2(a)).
                if a.v < 0.125 || a.v <= 4.0 * a.e {
                    self.ill("pow of a small or negative base");
                    // The hardware's log of 0 is -inf: pow(0, 0) is NaN there, which a
                    // vertex shader's arithmetic choice spreads from an untaken side.
                    if !self.live && a.v <= 0.0 {
                        self.untaken_wild = true;
                    }
                }
                let l = a.v.log2();
                let el = std::f64::consts::LOG2_E * a.e / (a.v - a.e).max(TINY)
                    + APPROX * (l.abs() + 1.0);
                let p = b.v * l;
                if p.abs() > 16.0 {
                    self.ill("pow growing too fast");
                }
                let ep = b.v.abs() * el + l.abs() * b.e + U * p.abs();
                let r = a.v.powf(b.v);
                V {
                    v: r,
                    e: r * 1.01 * std::f64::consts::LN_2 * ep + 2.0 * APPROX * r + TINY,
                }
            }
            F2::Fmod => {
                // (b · ±frac(|a / b|)), the sign of a / b.
                let q = self.bin(Bin::Div, a, b);
                let fr = q.v.abs() - q.v.abs().floor();
                self.clear_of_step(fr, q.e, "fmod too near a multiple");
                self.clear_of_step(fr - 1.0, q.e, "fmod too near a multiple");
                let r = a.v % b.v;
                V {
                    v: r,
                    e: b.v.abs() * (q.e + U * q.v.abs()) + b.e * fr + 2.0 * U * r.abs() + TINY,
                }
            }
        }
    }

    fn f3(&mut self, f: F3, a: V, b: V, c: V) -> V {
        match f {
            F3::Mad => {
                let m = self.bin(Bin::Mul, a, b);
                self.bin(Bin::Add, m, c)
            }
            F3::Lerp => {
                // a + c·(b − a), as `lrp` computes it: three roundings.
                let r = a.v + c.v * (b.v - a.v);
                let e = (1.0 - c.v).abs() * a.e
                    + c.v.abs() * b.e
                    + (b.v - a.v).abs() * c.e
                    + (a.e + b.e) * c.e;
                V {
                    v: r,
                    e: e + 2.0 * U * (a.v.abs() + b.v.abs()) * (1.0 + c.v.abs())
                        + U * r.abs()
                        + TINY,
                }
            }
            F3::Clamp => {
                // min(max(a, b), c): differs from max(min(a, c), b) when b > c.
                if b.v - c.v > 4.0 * (b.e + c.e) {
                    self.ill("clamp with its bounds crossed");
                }
                V {
                    v: a.v.max(b.v).min(c.v),
                    e: a.e.max(b.e).max(c.e),
                }
            }
            F3::Smoothstep => {
                // t = saturate((c − a) / (b − a)); t·t·(3 − 2t).
                let span = self.bin(Bin::Sub, b, a);
                let off = self.bin(Bin::Sub, c, a);
                let t = self.bin(Bin::Div, off, span);
                let t = self.f1(F1::Saturate, t, false);
                V {
                    v: t.v * t.v * (3.0 - 2.0 * t.v),
                    e: 1.5 * t.e + 6.0 * U + TINY,
                }
            }
        }
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            // Code after a `return`, `break` or `continue` that ran still runs,
            // flattened: evaluated, not live.
            let was = self.live;
            if self.frame().ret.is_some() || self.frame().jump.is_some() {
                self.live = false;
            }
            self.stmt(s);
            self.live = was;
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Decl(l, _, e) => {
                let v = self.expr(e);
                self.frame().locals[*l] = v;
            }
            Stmt::Assign {
                local,
                lanes,
                op,
                value,
                ..
            } => {
                let v = self.expr(value);
                let old = self.frame().locals[*local].clone();
                let lanes: Vec<usize> = match lanes {
                    Some(l) => l.iter().map(|&x| usize::from(x)).collect(),
                    None => (0..old.len()).collect(),
                };
                let mut new = old.clone();
                for (k, &lane) in lanes.iter().enumerate() {
                    new[lane] = match op {
                        AssignOp::Set => v[k],
                        AssignOp::Add => self.bin(Bin::Add, old[lane], v[k]),
                        AssignOp::Sub => self.bin(Bin::Sub, old[lane], v[k]),
                        AssignOp::Mul => self.bin(Bin::Mul, old[lane], v[k]),
                    };
                    if !new[lane].v.is_finite() || new[lane].v.abs() > MAX {
                        self.ill("a value too large");
                    }
                }
                self.frame().locals[*local] = new;
            }
            Stmt::If(c, then, els) => {
                let c = self.cond(c)[0];
                let before = self.frame().clone();
                let was = self.live;
                self.live = was && c;
                self.stmts(then);
                let after_then = std::mem::replace(self.frame(), before);
                self.live = was && !c;
                self.stmts(els);
                self.live = was;
                let after_else = std::mem::take(self.frame());
                let (taken, other) = if c {
                    (after_then, after_else)
                } else {
                    (after_else, after_then)
                };
                let mut joined = taken.clone();
                for (l, values) in joined.locals.iter_mut().enumerate() {
                    for (k, v) in values.iter_mut().enumerate() {
                        if let Some(&o) = other.locals.get(l).and_then(|x| x.get(k)) {
                            if o.v != v.v || o.e != v.e {
                                *v = self.choose(*v, o);
                            }
                        }
                    }
                }
                *self.frame() = joined;
            }
            Stmt::For(i, n, body) => {
                let i = *i;
                if self.frame().loops.len() <= i {
                    self.frame().loops.resize(i + 1, 0.0);
                }
                // After a `break` ran, the rest of the loop runs flattened, not live,
                // and the locals are what the `break` left.
                let was = self.live;
                let mut left: Option<Vec<Vec<V>>> = None;
                for k in 0..*n {
                    self.frame().loops[i] = f64::from(k);
                    self.live = was && left.is_none();
                    self.stmts(body);
                    if let Some((brk, at)) = self.frame().jump.take() {
                        self.settle(&at);
                        if brk {
                            left = Some(at);
                        }
                    }
                    if let Some(at) = &left {
                        self.settle(at);
                    }
                }
                self.live = was;
            }
            Stmt::Return(e) => {
                let v = self.expr(e);
                if !self.live {
                    if self.frame().untaken_ret.is_none() {
                        self.frame().untaken_ret = Some(v);
                    }
                } else if self.frame().ret.is_none() {
                    self.frame().ret = Some(v);
                }
            }
            Stmt::Break | Stmt::Continue => {
                if self.live && self.frame().jump.is_none() {
                    let at = self.frame().locals.clone();
                    self.frame().jump = Some((matches!(s, Stmt::Break), at));
                }
            }
        }
    }

    /// The locals back to what a `break` or `continue` left (`at`): flattened code after
    /// it chose them over what it computed.
    fn settle(&mut self, at: &[Vec<V>]) {
        let now = std::mem::take(&mut self.frame().locals);
        let settled = at
            .iter()
            .zip(&now)
            .map(|(a, b)| {
                if a.len() != b.len() {
                    // Declared since: nothing was left.
                    return b.clone();
                }
                a.iter()
                    .zip(b)
                    .map(|(&x, &y)| {
                        if x.v == y.v && x.e == y.e {
                            x
                        } else {
                            self.choose(x, y)
                        }
                    })
                    .collect()
            })
            .chain(now.iter().skip(at.len()).cloned())
            .collect();
        self.frame().locals = settled;
    }
}

/// The outputs `p` computes from `data`, or why the inputs are rejected.
fn evaluate(p: &Prog, data: &Data) -> Result<Vec<Vec<V>>, String> {
    let mut ev = Eval {
        prog: p,
        data,
        frames: vec![Frame {
            locals: vec![Vec::new(); p.locals],
            ..Frame::default()
        }],
        live: true,
        reject: None,
        untaken_wild: false,
    };
    ev.stmts(&p.body);
    let outs: Vec<Vec<V>> = p.outputs.iter().map(|o| ev.expr(&o.value)).collect();
    if let Some(why) = ev.reject {
        return Err(why);
    }
    if p.vertex && ev.untaken_wild {
        return Err(
            "an untaken side is infinite or huge (a vertex shader selects arithmetically)".into(),
        );
    }
    Ok(outs)
}

// ---------------------------------------------------------------------------------------
// Compiling and running.

/// What one program does on one profile.
enum Outcome {
    Pass,
    /// Not a test of anything: the inputs were all rejected, or the program does not fit
    /// the profile.
    Skip,
    Fail(String),
}

/// How the programs are compiled for `profile`: `BRANCH` is `[branch]` where the
/// profile branches on comparisons (`if_comp`), and nothing where `[branch]` would be
/// refused.
fn options(profile: &str) -> Options {
    let branch = matches!(profile, "ps_3_0" | "vs_3_0").then(|| "[branch]".to_string());
    Options {
        profile: profile.into(),
        entry: "main".into(),
        defines: vec![("BRANCH".into(), Some(branch.unwrap_or_default()))],
        ..Options::default()
    }
}

/// Our compilation of `p`: `Ok(None)` when it does not fit the profile.
fn compile_prog(p: &Prog, profile: &str) -> Result<Option<Vec<u8>>, String> {
    let text = source(p);
    let options = options(profile);
    let compiled = match compile("property.hlsl", &text, None, &options) {
        Ok(c) => c,
        Err(f) => {
            let msg = f.render();
            if is_limit(&msg) {
                return Ok(None);
            }
            return Err(format!("ours does not compile it:\n{msg}"));
        }
    };
    let shader = bytecode::parse(&compiled.bytecode)
        .map_err(|e| format!("our bytecode does not parse: {e:?}"))?;
    let invalid = validate::validate(&shader);
    if !invalid.is_empty() {
        let list: Vec<String> = invalid
            .iter()
            .map(|d| format!("at {}: {}", d.offset, d.message))
            .collect();
        return Err(format!(
            "our bytecode breaks the profile's rules:\n{}\n{}",
            list.join("\n"),
            compiled.asm
        ));
    }
    Ok(Some(compiled.bytecode))
}

/// A refusal for the profile's limits (slots, temporaries, constants), not a bug.
fn is_limit(msg: &str) -> bool {
    [
        "does not fit",
        "temporar",
        "slots",
        "constant registers",
        "too many",
    ]
    .iter()
    .any(|w| msg.contains(w))
}

/// The bindings of `data` by the constant table's names.
fn bindings(p: &Prog, bytes: &[u8], data: &Data) -> Result<Bindings, String> {
    let mut b = Bindings::default();
    let Some(table) = ConstantTable::from_bytecode(bytes).ok().flatten() else {
        return Ok(b);
    };
    for c in &table.constants {
        if c.register_set != RegisterSet::FLOAT4 {
            return Err(format!("{} is not in float registers", c.name));
        }
        let base = u32::from(c.register_index);
        let index: Option<usize> = c.name[1..].parse().ok();
        match (c.name.as_bytes()[0], index) {
            (b'u', Some(i)) if i < data.uniforms.len() => {
                b.constants.float.insert(base, data.uniforms[i]);
            }
            (b'm', Some(i)) if i < data.mats.len() => {
                let rows = p.mats[i].row_major;
                let class = if rows {
                    Class::MATRIX_ROWS
                } else {
                    Class::MATRIX_COLUMNS
                };
                if c.type_info.class != class {
                    return Err(format!("{} has class {:?}", c.name, c.type_info.class));
                }
                let m = &data.mats[i];
                // A row-major matrix takes a register per row, a column-major one per column.
                let registers = (0..4).map(|k| {
                    if rows {
                        m[k]
                    } else {
                        std::array::from_fn(|r| m[r][k])
                    }
                });
                for (k, reg) in registers.take(usize::from(c.register_count)).enumerate() {
                    b.constants.float.insert(base + k as u32, reg);
                }
            }
            _ => return Err(format!("unexpected constant {}", c.name)),
        }
    }
    Ok(b)
}

fn run(p: &Prog, bytes: &[u8], data: &Data) -> Result<Vec<[f32; 4]>, String> {
    let program = Program::new(bytes).map_err(|e| format!("ours does not run: {e}"))?;
    let mut attributes = Attributes::default();
    for (i, v) in data.inputs.iter().enumerate() {
        attributes
            .by_semantic
            .insert(Semantic::new(Semantic::TEXCOORD, i as u8), *v);
    }
    let out = program
        .run(&Inputs {
            bindings: bindings(p, bytes, data)?,
            attributes,
        })
        .map_err(|e| format!("ours fails to run: {e}"))?;
    p.outputs
        .iter()
        .map(|o| {
            let got = if p.vertex {
                out.by_semantic(o.semantic)
            } else {
                out.values
                    .get(&OutputRegister::Target(o.semantic.index))
                    .copied()
            };
            got.ok_or_else(|| format!("ours does not write {}", o.semantic))
        })
        .collect()
}

fn close(got: f32, want: V) -> bool {
    let d = (got as f64 - want.v).abs();
    got.is_finite() && d <= 2.0 * want.e + want.v.abs() / (1u64 << 22) as f64 + TINY
}

/// Ours against the evaluator on `data`: `None` if they agree.
fn mismatch(p: &Prog, got: &[[f32; 4]], want: &[Vec<V>]) -> Option<String> {
    let mut bad = false;
    let mut text = String::new();
    for (k, o) in p.outputs.iter().enumerate() {
        let _ = writeln!(text, "  o{k} ({}):", o.semantic);
        for (i, w) in want[k].iter().enumerate() {
            let ok = close(got[k][i], *w);
            bad |= !ok;
            let _ = writeln!(
                text,
                "    .{}: ours {:e}, expected {:e} ± {:.1e}{}",
                lanes_text(&[i as u8]),
                got[k][i],
                w.v,
                w.e,
                if ok { "" } else { "   <-- differs" }
            );
        }
    }
    bad.then_some(text)
}

fn data_text(p: &Prog, d: &Data) -> String {
    let mut out = String::new();
    let show = |v: &[f32]| {
        v.iter()
            .map(|x| format!("{x:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (i, &w) in p.uniforms.iter().enumerate() {
        let _ = writeln!(out, "  u{i} = [{}]", show(&d.uniforms[i][..usize::from(w)]));
    }
    for (i, m) in p.mats.iter().enumerate() {
        let rows: Vec<String> = (0..usize::from(m.rows))
            .map(|r| format!("[{}]", show(&d.mats[i][r][..usize::from(m.cols)])))
            .collect();
        let _ = writeln!(out, "  m{i} = [{}]", rows.join(", "));
    }
    for (i, &w) in p.inputs.iter().enumerate() {
        let _ = writeln!(out, "  t{i} = [{}]", show(&d.inputs[i][..usize::from(w)]));
    }
    out
}

/// Compiles `p` for `profile` and runs it on `data`, which the evaluator accepts.
fn check(p: &Prog, profile: &str, data: &Data, want: &[Vec<V>]) -> Outcome {
    let bytes = match compile_prog(p, profile) {
        Ok(Some(b)) => b,
        Ok(None) => return Outcome::Skip,
        Err(e) => return Outcome::Fail(e),
    };
    match run(p, &bytes, data) {
        Err(e) => Outcome::Fail(e),
        Ok(got) => match mismatch(p, &got, want) {
            None => Outcome::Pass,
            Some(m) => Outcome::Fail(m),
        },
    }
}

// ---------------------------------------------------------------------------------------
// Shrinking: smaller programs that still fail the same way on the same inputs.

/// The `n`th expression of `e` in pre-order, counting down `n`.
fn nth_expr<'a>(e: &'a mut Expr, n: &mut usize) -> Option<&'a mut Expr> {
    if *n == 0 {
        return Some(e);
    }
    *n -= 1;
    for c in e.children_mut() {
        if let Some(x) = nth_expr(c, n) {
            return Some(x);
        }
    }
    None
}

/// The `r`th root expression (a statement's or condition's) of `stmts`, counting down `r`.
fn stmt_root<'a>(stmts: &'a mut [Stmt], r: &mut usize) -> Option<&'a mut Expr> {
    for s in stmts.iter_mut() {
        match s {
            Stmt::Break | Stmt::Continue => {}
            Stmt::Decl(_, _, e) | Stmt::Assign { value: e, .. } | Stmt::Return(e) => {
                if *r == 0 {
                    return Some(e);
                }
                *r -= 1;
            }
            Stmt::If(c, a, b) => {
                for e in c.exprs_mut() {
                    if *r == 0 {
                        return Some(e);
                    }
                    *r -= 1;
                }
                if let Some(e) = stmt_root(a, r) {
                    return Some(e);
                }
                if let Some(e) = stmt_root(b, r) {
                    return Some(e);
                }
            }
            Stmt::For(_, _, body) => {
                if let Some(e) = stmt_root(body, r) {
                    return Some(e);
                }
            }
        }
    }
    None
}

/// The `r`th root expression of the whole program.
fn root(p: &mut Prog, mut r: usize) -> Option<&mut Expr> {
    for f in &mut p.funcs {
        if let Some(e) = stmt_root(&mut f.body, &mut r) {
            return Some(e);
        }
        if r == 0 {
            return Some(&mut f.result);
        }
        r -= 1;
    }
    if let Some(e) = stmt_root(&mut p.body, &mut r) {
        return Some(e);
    }
    p.outputs.get_mut(r).map(|o| &mut o.value)
}

/// Programs one step smaller than `p`: a statement dropped, an `if` replaced by one of
/// its sides, a loop cut to one round, or an expression replaced by a same-width operand or by zeros.
fn smaller(p: &Prog) -> Vec<Prog> {
    let mut out = Vec::new();
    // Statements of main (not declarations: later code reads them).
    for i in 0..p.body.len() {
        match &p.body[i] {
            Stmt::Decl(..) => {}
            Stmt::If(_, a, b) => {
                for side in [a, b] {
                    let mut q = p.clone();
                    q.body.splice(i..=i, side.iter().cloned());
                    out.push(q);
                }
            }
            // The body reads the counter: one round instead.
            Stmt::For(l, n, body) if *n > 1 => {
                let mut q = p.clone();
                q.body[i] = Stmt::For(*l, 1, body.clone());
                out.push(q);
            }
            _ => {
                let mut q = p.clone();
                q.body.remove(i);
                out.push(q);
            }
        }
    }
    for r in 0.. {
        if root(&mut p.clone(), r).is_none() {
            break;
        }
        for n in 0.. {
            let mut q = p.clone();
            let mut k = n;
            let Some(e) = nth_expr(root(&mut q, r).unwrap(), &mut k) else {
                break;
            };
            if matches!(e, Expr::Lit(_) | Expr::Var(_)) {
                continue;
            }
            let w = e.width();
            let mut replacements: Vec<Expr> = e
                .children_mut()
                .into_iter()
                .filter(|c| c.width() == w)
                .map(|c| c.clone())
                .collect();
            replacements.push(Expr::Lit(vec![0.0; usize::from(w)]));
            for rep in replacements {
                let mut q = p.clone();
                let mut k = n;
                *nth_expr(root(&mut q, r).unwrap(), &mut k).unwrap() = rep;
                out.push(q);
            }
        }
    }
    out
}

/// Shrinks failing `p` on `data`: the smallest failing program found greedily.
fn shrink(p: &Prog, profile: &str, data: &Data) -> Prog {
    let mut best = p.clone();
    let mut tries = 0;
    'outer: loop {
        for q in smaller(&best) {
            tries += 1;
            if tries > 2000 {
                break 'outer;
            }
            let Ok(want) = evaluate(&q, data) else {
                continue;
            };
            if let Outcome::Fail(_) = check(&q, profile, data, &want) {
                best = q;
                continue 'outer;
            }
        }
        break;
    }
    best
}

// ---------------------------------------------------------------------------------------
// The tests.

const PROFILES: [&str; 5] = ["vs_2_0", "vs_3_0", "ps_2_0", "ps_3_0", "vs_1_1"];

/// Programs per profile: fewer in a debug build, where the compiler is much slower.
fn cases() -> u64 {
    // A longer run by hand: PROPERTY_CASES=20000.
    if let Some(n) = std::env::var("PROPERTY_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return n;
    }
    if cfg!(debug_assertions) {
        300
    } else {
        1000
    }
}

/// Input sets tried per program, and how many of them must be accepted to be run.
const DRAWS: usize = 48;
const RUNS: usize = 3;

fn case_seed(profile: usize, case: u64) -> u64 {
    Rng::new(0x5E_ED0F_C0DE ^ ((profile as u64) << 40) ^ case).next()
}

#[derive(Default)]
struct Stats {
    passed: u32,
    runs: u32,
    too_long: u32,
    ill: u32,
    /// Why input sets were rejected, and how often.
    reasons: std::collections::BTreeMap<String, u32>,
}

/// One case: `Err` with the full report when it fails.
fn run_case(pi: usize, case: u64, stats: &mut Stats, verbose: bool) -> Result<(), String> {
    let profile = PROFILES[pi];
    let seed = case_seed(pi, case);
    let mut rng = Rng::new(seed);
    let small = matches!(profile, "ps_2_0" | "vs_1_1");
    let mut prog = generate(&mut rng, profile.starts_with("vs"), small);
    prog.series_trig = profile == "vs_1_1";
    if verbose {
        let text = source(&prog);
        eprintln!("{text}");
        match compile("property.hlsl", &text, None, &options(profile)) {
            Ok(c) => eprintln!("{}", c.asm),
            Err(f) => eprintln!("{}", f.render()),
        }
    }
    let mut accepted = Vec::new();
    for _ in 0..DRAWS {
        let data = random_data(&prog, &mut rng);
        match evaluate(&prog, &data) {
            Ok(want) => accepted.push((data, want)),
            Err(why) => {
                if verbose {
                    eprintln!("inputs rejected: {why}");
                }
                *stats.reasons.entry(why).or_default() += 1;
            }
        }
        if accepted.len() == RUNS {
            break;
        }
    }
    if accepted.is_empty() {
        stats.ill += 1;
        return Ok(());
    }
    let bytes = match compile_prog(&prog, profile) {
        Ok(Some(b)) => b,
        Ok(None) => {
            stats.too_long += 1;
            return Ok(());
        }
        Err(e) => {
            let small = shrink(&prog, profile, &accepted[0].0);
            return Err(report(profile, case, &prog, &small, &accepted[0].0, &e));
        }
    };
    for (data, want) in &accepted {
        stats.runs += 1;
        let failure = match run(&prog, &bytes, data) {
            Err(e) => Some(e),
            Ok(got) => mismatch(&prog, &got, want),
        };
        if let Some(e) = failure {
            let small = shrink(&prog, profile, data);
            let mut e = e;
            if let Ok(want) = evaluate(&small, data) {
                if let Outcome::Fail(s) = check(&small, profile, data, &want) {
                    e = format!("{e}\nthe shrunk program gives:\n{s}");
                }
            }
            return Err(report(profile, case, &prog, &small, data, &e));
        }
    }
    stats.passed += 1;
    Ok(())
}

fn report(profile: &str, case: u64, p: &Prog, small: &Prog, data: &Data, e: &str) -> String {
    format!(
        "{profile} case {case} (seed {:#x}; rerun with PROPERTY_CASE={profile}:{case}):\n\
         --- source\n{}--- shrunk\n{}--- inputs\n{}--- ours against expected\n{e}",
        case_seed(PROFILES.iter().position(|&x| x == profile).unwrap(), case),
        source(p),
        source(small),
        data_text(p, data)
    )
}

#[test]
fn random_programs_compute_what_they_say() {
    // `PROPERTY_CASE=ps_2_0:123` runs that case alone, printing its source.
    if let Ok(one) = std::env::var("PROPERTY_CASE") {
        let (profile, case) = one.split_once(':').expect("PROPERTY_CASE=profile:case");
        let pi = PROFILES
            .iter()
            .position(|&p| p == profile)
            .expect("a profile");
        let mut stats = Stats::default();
        if let Err(e) = run_case(pi, case.parse().unwrap(), &mut stats, true) {
            panic!("{e}");
        }
        return;
    }
    let mut failures = Vec::new();
    let mut too_few = Vec::new();
    for (pi, profile) in PROFILES.iter().enumerate() {
        let mut stats = Stats::default();
        let mut failed = 0;
        for case in 0..cases() {
            if let Err(e) = run_case(pi, case, &mut stats, false) {
                failed += 1;
                if failures.len() < 3 {
                    failures.push(e);
                }
            }
        }
        eprintln!(
            "{}: {} programs pass ({} runs), {failed} fail, {} skipped for the profile's limits, {} for ill-conditioned inputs",
            profile, stats.passed, stats.runs, stats.too_long, stats.ill
        );
        eprintln!("  input sets rejected: {:?}", stats.reasons);
        // The generator must mostly make programs that test something: most of the rest
        // are programs every input of which is rejected as ill-conditioned.
        if u64::from(stats.passed) + failed < cases() * 6 / 10 {
            too_few.push(*profile);
        }
    }
    assert!(
        failures.is_empty(),
        "random programs differ from the evaluator (first {}):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(too_few.is_empty(), "too few programs ran for {too_few:?}");
}
