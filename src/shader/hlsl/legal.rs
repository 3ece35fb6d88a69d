//! The operations a shader model lacks, built from those it has, as Microsoft's legacy
//! compiler (d3dx9_31) builds them: vs_1_1 has no `abs`, `lrp`, `pow`, `nrm` or
//! `sincos`, and its `frc` writes .x and .y only.
//!
//! A node replaced keeps its number and becomes a `mov` of its replacement, which the
//! code generator looks through, so that whatever read it reads the replacement.

use super::ir::{Comp, Op, Program};
use super::lower::Profile;

/// 1/(2π), 2π and π (the legacy compiler's `def`s hold the nearest floats).
const INV_TWO_PI: f32 = 1.0 / (2.0 * std::f32::consts::PI);
const TWO_PI: f32 = 2.0 * std::f32::consts::PI;
const PI: f32 = std::f32::consts::PI;

/// The even Taylor coefficients of cosine past the first two, highest first, as the
/// legacy compiler's `def` holds them (a minimax fit, close to -1/10!, 1/8!, -1/6!, 1/4!).
const COS_SERIES: [f32; 4] = [-2.523_985e-7, 2.476_09e-5, -1.388_839_7e-3, 4.166_664e-2];

pub fn legalize(p: &mut Program, profile: Profile) {
    if !profile.is_vs_1_1() {
        return;
    }
    for id in 0..p.nodes.len() {
        let node = p.nodes[id].clone();
        let arg = |i: usize| node.args[i].clone();
        let replacement = match node.op {
            // max(x, -x)
            Op::Abs => {
                let x = arg(0);
                let n = p.map(Op::Neg, vec![x.clone()]);
                Some(p.map(Op::Max, vec![n, x]))
            }
            // a * (b - c) + c
            Op::Lrp => {
                let nc = p.map(Op::Neg, vec![arg(2)]);
                let d = p.map(Op::Add, vec![arg(1), nc]);
                Some(p.map(Op::Mad, vec![arg(0), d, arg(2)]))
            }
            // exp(y · log x), lane by lane.
            Op::Pow => {
                let l = p.scalar(Op::Log, vec![arg(0)]);
                let m = p.map(Op::Mul, vec![vec![l], arg(1)]);
                Some(vec![p.scalar(Op::Exp, vec![m])])
            }
            // x · rsq(x · x)
            Op::Nrm => {
                let x = arg(0);
                let d = p.scalar(Op::Dp3, vec![x.clone(), x.clone()]);
                let r = p.scalar(Op::Rsq, vec![vec![d]]);
                Some(p.map(Op::Mul, vec![x, vec![r; 3]]))
            }
            Op::SinCos => Some(sincos(p, node.args[0][0])),
            Op::Frc if node.width > 2 => {
                let x = arg(0);
                let mut out = p.map(Op::Frc, vec![x[..2].to_vec()]);
                out.extend(p.map(Op::Frc, vec![x[2..].to_vec()]));
                Some(out)
            }
            _ => None,
        };
        if let Some(r) = replacement {
            p.replace_with(id, r);
        }
    }
}

/// Cosine and sine of `x` (the two lanes of `sincos`): each the cosine of
/// t = 2π·frac(x/2π + k) − π, k = 1/2 for the cosine and 1/4 for the sine.
fn sincos(p: &mut Program, x: Comp) -> Vec<Comp> {
    let scale = vec![p.konst(INV_TWO_PI); 2];
    let offset = vec![p.konst(0.5), p.konst(0.25)];
    let u = p.map(Op::Mad, vec![vec![x, x], scale, offset]);
    let f = p.map(Op::Frc, vec![u]);
    let (two_pi, minus_pi) = (vec![p.konst(TWO_PI); 2], vec![p.konst(-PI); 2]);
    let t = p.map(Op::Mad, vec![f, two_pi, minus_pi]);
    cos_in_range(p, t)
}

/// The cosine of each of `t`, in [−π, π], by its series in t², as the legacy compiler
/// computes it (sin(x) is the cosine of 2π·frac(x/2π + 1/4) − π).
pub fn cos_in_range(p: &mut Program, t: Vec<Comp>) -> Vec<Comp> {
    let n = t.len();
    let t2 = p.map(Op::Mul, vec![t.clone(), t]);
    let (a, b) = (
        vec![p.konst(COS_SERIES[0]); n],
        vec![p.konst(COS_SERIES[1]); n],
    );
    let mut q = p.map(Op::Mad, vec![t2.clone(), a, b]);
    for c in [COS_SERIES[2], COS_SERIES[3], -0.5, 1.0] {
        let c = vec![p.konst(c); n];
        q = p.map(Op::Mad, vec![t2.clone(), q, c]);
    }
    q
}
