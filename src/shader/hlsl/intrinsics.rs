//! HLSL's intrinsic functions for shader models 2 and 3, each as the instructions
//! Microsoft's compilers use for it.

use super::ast::BinOp;
use super::ir::{Comp, Op, TexKind};
use super::lower::{Lowering, Val};
use super::token::Loc;
use super::types::{Base, Dim, Ty};

const PI: f32 = std::f32::consts::PI;

pub(super) fn call(l: &mut Lowering, name: &str, args: Vec<Val>, loc: Loc) -> Option<Val> {
    let arity = |n: usize, l: &mut Lowering| -> Option<()> {
        if args.len() == n {
            Some(())
        } else {
            l.err(
                loc,
                format!(
                    "'{name}' takes {n} argument{}; {} given",
                    if n == 1 { "" } else { "s" },
                    args.len()
                ),
            );
            None
        }
    };
    macro_rules! unary {
        ($f:expr) => {{
            arity(1, l)?;
            let v = float(l, args[0].clone(), loc)?;
            let comps = $f(l, &v.comps);
            Some(Val { ty: v.ty, comps })
        }};
    }
    match name {
        "abs" => {
            arity(1, l)?;
            let v = numeric(l, args[0].clone(), loc)?;
            let comps = l.prog().map(Op::Abs, vec![v.comps]);
            Some(Val { ty: v.ty, comps })
        }
        "saturate" => {
            unary!(|l: &mut Lowering, c: &[Comp]| l.prog().map(Op::Sat, vec![c.to_vec()]))
        }
        "frac" => unary!(|l: &mut Lowering, c: &[Comp]| l.prog().map(Op::Frc, vec![c.to_vec()])),
        "floor" => unary!(floor),
        "ceil" => unary!(|l: &mut Lowering, c: &[Comp]| {
            // x + frac(-x), which is -floor(-x) without negating the result.
            if c.iter().all(|&x| l.prog().is_integral(x)) {
                return c.to_vec();
            }
            let n = l.prog().map(Op::Neg, vec![c.to_vec()]);
            let f = l.prog().map(Op::Frc, vec![n]);
            l.prog().map(Op::Add, vec![c.to_vec(), f])
        }),
        "trunc" => unary!(|l: &mut Lowering, c: &[Comp]| l.truncate(c)),
        "D3DCOLORtoUBYTE4" => {
            // A D3DCOLOR's bytes as integers: (int4)(c.zyxw * 255.001953).
            arity(1, l)?;
            let v = float(l, args[0].clone(), loc)?;
            if v.comps.len() != 4 {
                l.err(
                    loc,
                    format!("'D3DCOLORtoUBYTE4' takes a float4; {} given", v.ty),
                );
                return None;
            }
            // fxc takes the product as the integers it stands for (a colour's bytes make
            // whole numbers): it is not truncated, and an index `mova` rounds.
            let zyxw: Vec<Comp> = [2, 1, 0, 3].iter().map(|&i| v.comps[i]).collect();
            let k = l.prog().konst(255.001_95);
            let scaled = l.prog().map(Op::Mul, vec![zyxw, vec![k; 4]]);
            Some(Val {
                ty: Ty::vector(Base::Int, 4),
                comps: scaled,
            })
        }
        "round" => unary!(|l: &mut Lowering, c: &[Comp]| {
            let half = l.prog().konst(0.5);
            let h = l.prog().map(Op::Add, vec![c.to_vec(), vec![half; c.len()]]);
            floor(l, &h)
        }),
        "rcp" => unary!(|l: &mut Lowering, c: &[Comp]| each(l, Op::Rcp, c)),
        "rsqrt" => unary!(|l: &mut Lowering, c: &[Comp]| each(l, Op::Rsq, c)),
        "sqrt" => unary!(|l: &mut Lowering, c: &[Comp]| {
            let r = each(l, Op::Rsq, c);
            each(l, Op::Rcp, &r)
        }),
        "exp2" => unary!(|l: &mut Lowering, c: &[Comp]| each(l, Op::Exp, c)),
        "log2" => unary!(|l: &mut Lowering, c: &[Comp]| each(l, Op::Log, c)),
        "exp" => unary!(|l: &mut Lowering, c: &[Comp]| {
            let k = l.prog().konst(std::f32::consts::LOG2_E);
            let m = l.prog().map(Op::Mul, vec![c.to_vec(), vec![k; c.len()]]);
            each(l, Op::Exp, &m)
        }),
        "log" | "log10" => {
            let k = if name == "log" {
                std::f32::consts::LN_2
            } else {
                std::f32::consts::LOG10_2
            };
            unary!(|l: &mut Lowering, c: &[Comp]| {
                let lg = each(l, Op::Log, c);
                let k = l.prog().konst(k);
                l.prog().map(Op::Mul, vec![lg, vec![k; c.len()]])
            })
        }
        "sin" | "cos" => {
            let lane = if name == "sin" { 1 } else { 0 };
            unary!(|l: &mut Lowering, c: &[Comp]| sin_or_cos(l, c, lane))
        }
        "degrees" | "radians" => {
            let k = if name == "degrees" {
                180.0 / PI
            } else {
                PI / 180.0
            };
            unary!(|l: &mut Lowering, c: &[Comp]| {
                let k = l.prog().konst(k);
                l.prog().map(Op::Mul, vec![c.to_vec(), vec![k; c.len()]])
            })
        }
        "ddx" | "ddy" | "fwidth"
            if !l.is_pixel() || (l.profile().major == 2 && l.profile().minor == 0) =>
        {
            l.err(
                loc,
                format!(
                    "'{name}' needs ps_2_x or ps_3_0: {} has no derivatives",
                    if l.is_pixel() {
                        "ps_2_0"
                    } else {
                        "a vertex shader"
                    }
                ),
            );
            None
        }
        "ddx" | "ddy" => {
            let op = if name == "ddx" { Op::Dsx } else { Op::Dsy };
            unary!(|l: &mut Lowering, c: &[Comp]| l.prog().map(op, vec![c.to_vec()]))
        }
        "fwidth" => unary!(|l: &mut Lowering, c: &[Comp]| {
            let x = l.prog().map(Op::Dsx, vec![c.to_vec()]);
            let y = l.prog().map(Op::Dsy, vec![c.to_vec()]);
            let ax = l.prog().map(Op::Abs, vec![x]);
            let ay = l.prog().map(Op::Abs, vec![y]);
            l.prog().map(Op::Add, vec![ax, ay])
        }),
        "sign" => {
            arity(1, l)?;
            let v = numeric(l, args[0].clone(), loc)?;
            let one = l.prog().konst(1.0);
            let zero = l.prog().konst(0.0);
            let n = v.comps.len();
            let pos = l.cmp_ops(BinOp::Lt, &vec![zero; n], &v.comps);
            let neg = l.cmp_ops(BinOp::Lt, &v.comps, &vec![zero; n]);
            let nn = l.prog().map(Op::Neg, vec![neg]);
            let comps = l.prog().map(Op::Add, vec![pos, nn]);
            let _ = one;
            Some(Val {
                ty: v.ty.with_base(Base::Int),
                comps,
            })
        }
        "min" | "max" => {
            arity(2, l)?;
            let (a, b, ty) = same2(l, &args[0], &args[1], loc)?;
            let comps = l
                .prog()
                .map(if name == "min" { Op::Min } else { Op::Max }, vec![a, b]);
            Some(Val { ty, comps })
        }
        "pow" => {
            arity(2, l)?;
            let (a, b, ty) = same2f(l, &args[0], &args[1], loc)?;
            let comps = pow_each(l, &a, &b);
            Some(Val { ty, comps })
        }
        "step" => {
            arity(2, l)?;
            let (a, b, ty) = same2f(l, &args[0], &args[1], loc)?;
            let comps = l.cmp_ops(BinOp::Ge, &b, &a);
            Some(Val { ty, comps })
        }
        "fmod" => {
            arity(2, l)?;
            let (a, b, ty) = same2f(l, &args[0], &args[1], loc)?;
            let q = l.div(&a, &b);
            let aq = l.prog().map(Op::Abs, vec![q.clone()]);
            let f = l.prog().map(Op::Frc, vec![aq]);
            let nf = l.prog().map(Op::Neg, vec![f.clone()]);
            let s = l.sign_sel(&q, &f, &nf);
            let comps = l.prog().map(Op::Mul, vec![s, b]);
            Some(Val { ty, comps })
        }
        "ldexp" => {
            arity(2, l)?;
            let (a, b, ty) = same2f(l, &args[0], &args[1], loc)?;
            let e = each(l, Op::Exp, &b);
            let comps = l.prog().map(Op::Mul, vec![a, e]);
            Some(Val { ty, comps })
        }
        "clamp" => {
            arity(3, l)?;
            let ty = l
                .common(&args[0].ty, &args[1].ty)
                .and_then(|t| l.common(&t, &args[2].ty));
            let Some(ty) = ty else {
                l.err(loc, "'clamp': the arguments' types do not match".into());
                return None;
            };
            let x = l.conv(args[0].clone(), &ty, loc)?.comps;
            let lo = l.conv(args[1].clone(), &ty, loc)?.comps;
            let hi = l.conv(args[2].clone(), &ty, loc)?.comps;
            let m = l.prog().map(Op::Max, vec![x, lo]);
            let comps = l.prog().map(Op::Min, vec![m, hi]);
            Some(Val { ty, comps })
        }
        "lerp" => {
            arity(3, l)?;
            let ty = float_common(l, &args, loc)?;
            let a = l.conv(args[0].clone(), &ty, loc)?.comps;
            let b = l.conv(args[1].clone(), &ty, loc)?.comps;
            let s = l.conv(args[2].clone(), &ty, loc)?.comps;
            // a + s * (b - a), as fxc writes it (no lrp in vertex shaders before 2.0).
            let na = l.prog().map(Op::Neg, vec![a.clone()]);
            let d = l.prog().map(Op::Add, vec![na, b]);
            let comps = l.prog().map(Op::Mad, vec![s, d, a]);
            Some(Val { ty, comps })
        }
        "mad" => {
            arity(3, l)?;
            let ty = float_common(l, &args, loc)?;
            let a = l.conv(args[0].clone(), &ty, loc)?.comps;
            let b = l.conv(args[1].clone(), &ty, loc)?.comps;
            let c = l.conv(args[2].clone(), &ty, loc)?.comps;
            let comps = l.prog().map(Op::Mad, vec![a, b, c]);
            Some(Val { ty, comps })
        }
        "smoothstep" => {
            arity(3, l)?;
            let ty = float_common(l, &args, loc)?;
            let a = l.conv(args[0].clone(), &ty, loc)?.comps;
            let b = l.conv(args[1].clone(), &ty, loc)?.comps;
            let x = l.conv(args[2].clone(), &ty, loc)?.comps;
            let na = l.prog().map(Op::Neg, vec![a.clone()]);
            let w = l.prog().map(Op::Add, vec![b, na.clone()]);
            let rw = each(l, Op::Rcp, &w);
            let xa = l.prog().map(Op::Add, vec![x, na]);
            let t0 = l.prog().map(Op::Mul, vec![xa, rw]);
            let t = l.prog().map(Op::Sat, vec![t0]);
            let n = t.len();
            let m2 = l.prog().konst(-2.0);
            let three = l.prog().konst(3.0);
            let k = l
                .prog()
                .map(Op::Mad, vec![vec![m2; n], t.clone(), vec![three; n]]);
            let tt = l.prog().map(Op::Mul, vec![t.clone(), t]);
            let comps = l.prog().map(Op::Mul, vec![tt, k]);
            Some(Val { ty, comps })
        }
        "dot" => {
            arity(2, l)?;
            let (a, b, ty) = same2(l, &args[0], &args[1], loc)?;
            let c = dot(l, &a, &b);
            Some(Val {
                ty: Ty::Scalar(ty.base().unwrap_or(Base::Float)),
                comps: vec![c],
            })
        }
        "length" => {
            arity(1, l)?;
            let v = float(l, args[0].clone(), loc)?;
            let d = dot(l, &v.comps, &v.comps);
            let r = l.prog().scalar(Op::Rsq, vec![vec![d]]);
            let c = l.prog().scalar(Op::Rcp, vec![vec![r]]);
            Some(Val {
                ty: Ty::Scalar(v.ty.base().unwrap()),
                comps: vec![c],
            })
        }
        "distance" => {
            arity(2, l)?;
            let (a, b, ty) = same2f(l, &args[0], &args[1], loc)?;
            let nb = l.prog().map(Op::Neg, vec![b]);
            let d = l.prog().map(Op::Add, vec![a, nb]);
            let dd = dot(l, &d, &d);
            let r = l.prog().scalar(Op::Rsq, vec![vec![dd]]);
            let c = l.prog().scalar(Op::Rcp, vec![vec![r]]);
            Some(Val {
                ty: Ty::Scalar(ty.base().unwrap()),
                comps: vec![c],
            })
        }
        "normalize" => {
            arity(1, l)?;
            let v = float(l, args[0].clone(), loc)?;
            let comps = if v.comps.len() == 1 {
                // One component: its sign, as fxc makes it (0 stays 0).
                let zero = l.prog().konst(0.0);
                let pos = l.cmp_ops(BinOp::Lt, &[zero], &v.comps);
                let neg = l.cmp_ops(BinOp::Lt, &v.comps, &[zero]);
                let nn = l.prog().map(Op::Neg, vec![neg]);
                l.prog().map(Op::Add, vec![pos, nn])
            } else if v.comps.len() == 3 {
                l.prog().raw(Op::Nrm, vec![v.comps.clone()], 3)
            } else {
                let d = dot(l, &v.comps, &v.comps);
                let r = l.prog().scalar(Op::Rsq, vec![vec![d]]);
                l.prog()
                    .map(Op::Mul, vec![v.comps.clone(), vec![r; v.comps.len()]])
            };
            Some(Val { ty: v.ty, comps })
        }
        "cross" => {
            arity(2, l)?;
            let a = l
                .conv(args[0].clone(), &Ty::Vector(Base::Float, 3), loc)?
                .comps;
            let b = l
                .conv(args[1].clone(), &Ty::Vector(Base::Float, 3), loc)?
                .comps;
            // a.yzx * b.zxy - a.zxy * b.yzx
            let p = |v: &[Comp], i: [usize; 3]| i.iter().map(|&k| v[k]).collect::<Vec<_>>();
            let m = l
                .prog()
                .map(Op::Mul, vec![p(&a, [2, 0, 1]), p(&b, [1, 2, 0])]);
            let nm = l.prog().map(Op::Neg, vec![m]);
            let comps = l
                .prog()
                .map(Op::Mad, vec![p(&a, [1, 2, 0]), p(&b, [2, 0, 1]), nm]);
            Some(Val {
                ty: Ty::Vector(Base::Float, 3),
                comps,
            })
        }
        "reflect" => {
            arity(2, l)?;
            let (i, n, ty) = same2f(l, &args[0], &args[1], loc)?;
            let d = dot(l, &i, &n);
            let m2 = l.prog().konst(-2.0);
            let k = l.prog().map(Op::Mul, vec![vec![d], vec![m2]])[0];
            let comps = l.prog().map(Op::Mad, vec![vec![k; n.len()], n, i]);
            Some(Val { ty, comps })
        }
        "faceforward" => {
            arity(3, l)?;
            let ty = float_common(l, &args, loc)?;
            let n = l.conv(args[0].clone(), &ty, loc)?.comps;
            let i = l.conv(args[1].clone(), &ty, loc)?.comps;
            let ng = l.conv(args[2].clone(), &ty, loc)?.comps;
            let d = dot(l, &ng, &i);
            let nn = l.prog().map(Op::Neg, vec![n.clone()]);
            // dot < 0 ? n : -n
            let nd = l.prog().map(Op::Neg, vec![vec![d]]);
            let ndv = vec![nd[0]; n.len()];
            let zero = l.prog().konst(0.0);
            let lt = l.cmp_ops(BinOp::Lt, &[d], &[zero])[0];
            let _ = ndv;
            let comps = l.sel(&vec![lt; n.len()], &n, &nn);
            Some(Val { ty, comps })
        }
        "all" | "any" => {
            arity(1, l)?;
            let v = numeric(l, args[0].clone(), loc)?;
            let zero = l.prog().konst(0.0);
            let n = v.comps.len();
            let acc = if n == 1 && l.prog().is_boolean(v.comps[0]) {
                v.comps[0]
            } else if n <= 4 {
                // As fxc: any is a dot product of the vector with itself above zero, all
                // the same of "is zero" per lane at zero.
                let (lanes, test) = if name == "any" {
                    (v.comps.clone(), BinOp::Gt)
                } else if n == 1 {
                    (l.cmp_ops(BinOp::Ne, &v.comps, &[zero]), BinOp::Gt)
                } else {
                    (l.cmp_ops(BinOp::Eq, &v.comps, &vec![zero; n]), BinOp::Le)
                };
                let d = dot(l, &lanes, &lanes);
                l.cmp_ops(test, &[d], &[zero])[0]
            } else {
                let b = l.cmp_ops(BinOp::Ne, &v.comps, &vec![zero; n]);
                let op = if name == "all" { Op::Mul } else { Op::Max };
                let mut acc = b[0];
                for &c in &b[1..] {
                    acc = l.prog().map(op, vec![vec![acc], vec![c]])[0];
                }
                acc
            };
            Some(Val {
                ty: Ty::BOOL,
                comps: vec![acc],
            })
        }
        "clip" => {
            arity(1, l)?;
            if !l.is_pixel() {
                l.err(loc, "'clip' is for pixel shaders only".into());
                return None;
            }
            let v = float(l, args[0].clone(), loc)?;
            l.kill(v.comps);
            Some(Val {
                ty: Ty::Void,
                comps: vec![],
            })
        }
        "mul" => {
            arity(2, l)?;
            mul(l, args[0].clone(), args[1].clone(), loc)
        }
        "transpose" => {
            arity(1, l)?;
            let v = args[0].clone();
            let Some((r, c)) = v.ty.dims() else {
                l.err(loc, "'transpose' takes a matrix".into());
                return None;
            };
            let (r, c) = (usize::from(r), usize::from(c));
            let comps = (0..c)
                .flat_map(|j| (0..r).map(move |i| (i, j)))
                .map(|(i, j)| v.comps[i * c + j])
                .collect();
            let base = v.ty.base().unwrap_or(Base::Float);
            Some(Val {
                ty: Ty::Matrix(base, c as u8, r as u8),
                comps,
            })
        }
        "lit" => {
            arity(3, l)?;
            let f =
                |l: &mut Lowering, v: &Val| l.conv(v.clone(), &Ty::FLOAT, loc).map(|v| v.comps[0]);
            let (nl, nh, m) = (f(l, &args[0])?, f(l, &args[1])?, f(l, &args[2])?);
            // Microsoft's compilers write the instruction for vs_1_1 to vs_2_x only.
            let comps = if l.is_pixel() || l.model() >= 3 {
                lit_formula(l, nl, nh, m)
            } else {
                l.prog().lit(nl, nh, m)
            };
            Some(Val {
                ty: Ty::Vector(Base::Float, 4),
                comps,
            })
        }
        "acos" | "asin" => unary!(|l: &mut Lowering, c: &[Comp]| {
            let a = acos(l, c);
            if name == "acos" {
                a
            } else {
                let half_pi = l.prog().konst(std::f32::consts::FRAC_PI_2);
                let na = l.prog().map(Op::Neg, vec![a]);
                l.prog().map(Op::Add, vec![na, vec![half_pi; c.len()]])
            }
        }),
        "atan" => unary!(|l: &mut Lowering, c: &[Comp]| {
            let one = l.prog().konst(1.0);
            atan2(l, c, &vec![one; c.len()])
        }),
        "atan2" => {
            arity(2, l)?;
            let (y, x, ty) = same2f(l, &args[0], &args[1], loc)?;
            let comps = atan2(l, &y, &x);
            Some(Val { ty, comps })
        }
        "tan" => unary!(|l: &mut Lowering, c: &[Comp]| {
            let s = sin_or_cos(l, c, 1);
            let co = sin_or_cos(l, c, 0);
            l.div(&s, &co)
        }),
        "sinh" | "cosh" | "tanh" => unary!(|l: &mut Lowering, c: &[Comp]| {
            let n = c.len();
            let k = l.prog().konst(std::f32::consts::LOG2_E);
            let m = l.prog().map(Op::Mul, vec![c.to_vec(), vec![k; n]]);
            let e = each(l, Op::Exp, &m);
            let nm = l.prog().map(Op::Neg, vec![m]);
            let ne = each(l, Op::Exp, &nm);
            let half = l.prog().konst(0.5);
            match name {
                "sinh" | "cosh" => {
                    let b = if name == "sinh" {
                        l.prog().map(Op::Neg, vec![ne])
                    } else {
                        ne
                    };
                    let sum = l.prog().map(Op::Add, vec![e, b]);
                    l.prog().map(Op::Mul, vec![sum, vec![half; n]])
                }
                _ => {
                    let nne = l.prog().map(Op::Neg, vec![ne.clone()]);
                    let num = l.prog().map(Op::Add, vec![e.clone(), nne]);
                    let den = l.prog().map(Op::Add, vec![e, ne]);
                    l.div(&num, &den)
                }
            }
        }),
        "refract" => {
            arity(3, l)?;
            let (i, n, ty) = same2f(l, &args[0], &args[1], loc)?;
            let eta = l.conv(args[2].clone(), &Ty::FLOAT, loc)?.comps[0];
            let d = dot(l, &n, &i);
            let one = l.prog().konst(1.0);
            // k = 1 - eta² (1 - d²); k < 0 ? 0 : eta i - (eta d + sqrt k) n
            let nd = l.prog().map(Op::Neg, vec![vec![d]]);
            let omd = l.prog().map(Op::Mad, vec![vec![d], nd, vec![one]]);
            let e2 = l.prog().map(Op::Mul, vec![vec![eta], vec![eta]]);
            let ne2 = l.prog().map(Op::Neg, vec![e2]);
            let k = l.prog().map(Op::Mad, vec![ne2, omd, vec![one]])[0];
            let zero = l.prog().konst(0.0);
            let ok = l.cmp_ops(BinOp::Ge, &[k], &[zero])[0];
            let kk = l.prog().map(Op::Mul, vec![vec![ok], vec![k]])[0];
            let eta_ok = l.prog().map(Op::Mul, vec![vec![ok], vec![eta]])[0];
            let r = l.prog().scalar(Op::Rsq, vec![vec![kk]]);
            let sq = l.prog().scalar(Op::Rcp, vec![vec![r]]);
            let t = l.prog().map(Op::Mad, vec![vec![eta_ok], vec![d], vec![sq]])[0];
            let w = n.len();
            let tn = l.prog().map(Op::Mul, vec![vec![t; w], n]);
            let ntn = l.prog().map(Op::Neg, vec![tn]);
            let comps = l.prog().map(Op::Mad, vec![vec![eta_ok; w], i, ntn]);
            Some(Val { ty, comps })
        }
        "dst" => {
            arity(2, l)?;
            let a = l
                .conv(args[0].clone(), &Ty::Vector(Base::Float, 4), loc)?
                .comps;
            let b = l
                .conv(args[1].clone(), &Ty::Vector(Base::Float, 4), loc)?
                .comps;
            let one = l.prog().konst(1.0);
            let y = l.prog().map(Op::Mul, vec![vec![a[1]], vec![b[1]]])[0];
            Some(Val {
                ty: Ty::Vector(Base::Float, 4),
                comps: vec![one, y, a[2], b[3]],
            })
        }
        "determinant" => {
            arity(1, l)?;
            let v = float(l, args[0].clone(), loc)?;
            let Some((r, c)) =
                v.ty.dims()
                    .filter(|(r, c)| r == c && matches!(v.ty, Ty::Matrix(..) | Ty::Scalar(_)))
            else {
                l.err(loc, "'determinant' takes a square matrix".into());
                return None;
            };
            let _ = c;
            let d = determinant(l, &v.comps, usize::from(r));
            Some(Val {
                ty: Ty::FLOAT,
                comps: vec![d],
            })
        }
        "noise" => {
            l.err(loc, "'noise' is not supported for Direct3D 9 shaders: Microsoft's compiler refuses it outside texture shaders (tx_1_0)".into());
            None
        }
        _ => texture(l, name, args, loc),
    }
}

fn texture(l: &mut Lowering, name: &str, args: Vec<Val>, loc: Loc) -> Option<Val> {
    let (dim, rest) = if let Some(r) = name.strip_prefix("tex1D") {
        (Dim::D1, r)
    } else if let Some(r) = name.strip_prefix("tex2D") {
        (Dim::D2, r)
    } else if let Some(r) = name.strip_prefix("tex3D") {
        (Dim::D3, r)
    } else if let Some(r) = name.strip_prefix("texCUBE") {
        (Dim::Cube, r)
    } else {
        l.err(loc, format!("undeclared identifier '{name}'"));
        return None;
    };
    let kind = match rest {
        "" => TexKind::Plain,
        "proj" => TexKind::Proj,
        "bias" => TexKind::Bias,
        "lod" => TexKind::Lod,
        "grad" => TexKind::Grad,
        _ => {
            l.err(loc, format!("undeclared identifier '{name}'"));
            return None;
        }
    };
    let want = if kind == TexKind::Grad { 4 } else { 2 };
    if args.len() != want {
        l.err(
            loc,
            format!("'{name}' takes {want} arguments; {} given", args.len()),
        );
        return None;
    }
    match &args[0].ty {
        Ty::Sampler(d) if *d == dim || *d == Dim::Generic => {}
        t => {
            l.err(
                loc,
                format!(
                    "'{name}': the first argument must be a {} sampler, not {t}",
                    match dim {
                        Dim::D1 => "1D",
                        Dim::D2 => "2D",
                        Dim::D3 => "3D",
                        _ => "cube",
                    }
                ),
            );
            return None;
        }
    }
    sample(l, name, dim, kind, args, loc)
}

/// A texture read: `args` are the sampler, the coordinates (as many as `kind` takes) and,
/// for `Grad`, the two gradients.
pub(super) fn sample(
    l: &mut Lowering,
    name: &str,
    dim: Dim,
    kind: TexKind,
    args: Vec<Val>,
    loc: Loc,
) -> Option<Val> {
    // A `sampler` of no shape takes the shape it is read with, as fxc's table says.
    if let Some(&c) = args.first().and_then(|a| a.comps.first()) {
        if let Op::Sampler(var) = l.prog().node(c.node).op {
            let u = &mut l.prog().uniforms[var as usize];
            if u.ty == Ty::Sampler(Dim::Generic) {
                u.ty = Ty::Sampler(dim);
            }
        }
    }
    if (kind == TexKind::Lod || kind == TexKind::Grad)
        && l.profile().major < 3
        && !(kind == TexKind::Grad && l.profile().minor > 0)
    {
        {
            l.err(
                loc,
                format!("'{name}' needs shader model 3 (or ps_2_x for gradients)"),
            );
            return None;
        }
    }
    if !(l.is_pixel() || l.profile().major >= 3 && kind == TexKind::Lod) {
        l.err(
            loc,
            format!("'{name}': vertex shaders read textures only with tex2Dlod, in vs_3_0"),
        );
        return None;
    }
    let coords = match dim {
        Dim::D1 => 1,
        Dim::D2 => 2,
        _ => 3,
    };
    let n = if matches!(kind, TexKind::Proj | TexKind::Bias | TexKind::Lod) {
        4
    } else {
        coords
    };
    let c = l
        .conv(args[1].clone(), &Ty::vector(Base::Float, n), loc)?
        .comps;
    // Only the lanes the sampler reads: the register's others are whatever they hold,
    // as fxc leaves them (`texld r1, r1, s0` after writing r1.xy).
    // A 1D sampler is declared 2D, which reads .xy: the one coordinate is both.
    let mut c = c;
    if c.len() == 1 {
        c.push(c[0]);
    }
    let mut ops = vec![c, args[0].comps.clone()];
    if kind == TexKind::Grad {
        for g in &args[2..] {
            let g = l
                .conv(g.clone(), &Ty::vector(Base::Float, coords), loc)?
                .comps;
            ops.push(g);
        }
    }
    let comps = l.prog().raw(Op::Tex(kind), ops, 4);
    Some(Val {
        ty: Ty::Vector(Base::Float, 4),
        comps,
    })
}

fn mul(l: &mut Lowering, a: Val, b: Val, loc: Loc) -> Option<Val> {
    let (Some((ar, ac)), Some((br, bc))) = (a.ty.dims(), b.ty.dims()) else {
        l.err(loc, "'mul' takes numeric arguments".into());
        return None;
    };
    let base = if a.ty.base() == Some(Base::Float) || b.ty.base() == Some(Base::Float) {
        Base::Float
    } else {
        a.ty.base().unwrap()
    };
    let (ar, ac, br, bc) = (
        usize::from(ar),
        usize::from(ac),
        usize::from(br),
        usize::from(bc),
    );
    // A scalar scales the other (a float1 is a vector of one).
    if matches!(a.ty, Ty::Scalar(_)) || matches!(b.ty, Ty::Scalar(_)) {
        let (s, v) = if matches!(a.ty, Ty::Scalar(_)) {
            (a, b)
        } else {
            (b, a)
        };
        let comps = l.prog().map(
            Op::Mul,
            vec![vec![s.comps[0]; v.comps.len()], v.comps.clone()],
        );
        return Some(Val {
            ty: v.ty.with_base(base),
            comps,
        });
    }
    // A vector is a row on the left and a column on the right.
    let (ar, ac) = if matches!(a.ty, Ty::Vector(..)) {
        (1, ac)
    } else {
        (ar, ac)
    };
    let (br, bc) = if matches!(b.ty, Ty::Vector(..)) {
        (bc, 1)
    } else {
        (br, bc)
    };
    let inner = ac.min(br);
    if ac != br {
        l.warn(loc, "implicit truncation of vector type".into());
    }
    let row = |m: &Val, cols: usize, i: usize, n: usize| {
        (0..n).map(|k| m.comps[i * cols + k]).collect::<Vec<_>>()
    };
    let col = |m: &Val, cols: usize, j: usize, n: usize| {
        (0..n).map(|k| m.comps[k * cols + j]).collect::<Vec<_>>()
    };
    let mut comps = vec![a.comps[0]; ar * bc];
    // Each element a dot product of a row of `a` and a column of `b`, unless the rows of
    // `a` are spread over registers (a column-major matrix on the left) or the columns of
    // `b` are (a row-major one on the right), and the other way round reads whole
    // registers: then, as fxc does, each column of the result is a sum of `a`'s columns
    // scaled by components of `b` (or each row one of `b`'s rows scaled by `a`'s), a
    // `mul` and `mad`s that read every register once and gather nothing.
    let gathers =
        |vs: &mut dyn Iterator<Item = Vec<Comp>>| -> usize { vs.map(|v| spread(&v)).sum() };
    let dot_cost = ar * bc
        + gathers(&mut (0..ar).map(|i| row(&a, ac, i, inner)))
        + gathers(&mut (0..bc).map(|j| col(&b, bc, j, inner)));
    let by_columns = bc * inner + gathers(&mut (0..inner).map(|k| col(&a, ac, k, ar)));
    let by_rows = ar * inner + gathers(&mut (0..inner).map(|k| row(&b, bc, k, bc)));
    if by_columns < dot_cost && by_columns <= by_rows {
        for j in 0..bc {
            let term = |k: usize| (col(&a, ac, k, ar), b.comps[k * bc + j]);
            let sum = combine(l, term(0), (1..inner).map(term).collect());
            for (i, c) in sum.into_iter().enumerate() {
                comps[i * bc + j] = c;
            }
        }
    } else if by_rows < dot_cost {
        for i in 0..ar {
            let term = |k: usize| (row(&b, bc, k, bc), a.comps[i * ac + k]);
            let sum = combine(l, term(0), (1..inner).map(term).collect());
            for (j, c) in sum.into_iter().enumerate() {
                comps[i * bc + j] = c;
            }
        }
    } else {
        for i in 0..ar {
            for j in 0..bc {
                comps[i * bc + j] = dot(l, &row(&a, ac, i, inner), &col(&b, bc, j, inner));
            }
        }
    }
    let ty = match (
        matches!(a.ty, Ty::Vector(..)),
        matches!(b.ty, Ty::Vector(..)),
    ) {
        (true, true) => Ty::Scalar(base),
        (true, false) => Ty::Vector(base, bc as u8),
        (false, true) => Ty::Vector(base, ar as u8),
        (false, false) => Ty::Matrix(base, ar as u8, bc as u8),
    };
    Some(Val { ty, comps })
}

/// How many registers besides the first a vector's components come from: what gathering
/// it into one register for an instruction to read costs, roughly, in `mov`s.
fn spread(v: &[Comp]) -> usize {
    let mut nodes: Vec<_> = v.iter().map(|c| c.node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes.len() - 1
}

/// The sum of vectors each scaled by a component, `v0 * s0 + v1 * s1 + …`, as a `mul`
/// and `mad`s; a scale known to be 1 adds (a term scaled by 0 stays: 0 * inf is NaN).
fn combine(l: &mut Lowering, first: (Vec<Comp>, Comp), rest: Vec<(Vec<Comp>, Comp)>) -> Vec<Comp> {
    let splat = |v: &Vec<Comp>, s: Comp| vec![s; v.len()];
    let mut acc = l
        .prog()
        .map(Op::Mul, vec![splat(&first.0, first.1), first.0]);
    for (v, s) in rest {
        acc = match l.prog().constant(s) {
            Some(1.0) => l.prog().map(Op::Add, vec![v, acc]),
            _ => l.prog().map(Op::Mad, vec![splat(&v, s), v, acc]),
        };
    }
    acc
}

/// `dot(a, b)` as one instruction where one does it.
pub(super) fn dot(l: &mut Lowering, a: &[Comp], b: &[Comp]) -> Comp {
    match a.len() {
        1 => l.prog().map(Op::Mul, vec![a.to_vec(), b.to_vec()])[0],
        // dp2add from ps_2_0; ps_1_x multiplies and adds.
        2 if l.is_pixel() && l.model() >= 2 => {
            // Plus +0, as Microsoft's compilers write it: a -0 dot is +0 (its 1 / x is
            // +inf), as the text a decompiled `dp2add …, r0.y` of a +0 r0.y says.
            let zero = l.prog().konst(0.0);
            l.prog()
                .scalar(Op::Dp2Add, vec![a.to_vec(), b.to_vec(), vec![zero]])
        }
        2 => {
            let m = l.prog().map(Op::Mul, vec![vec![a[0]], vec![b[0]]]);
            l.prog().map(Op::Mad, vec![vec![a[1]], vec![b[1]], m])[0]
        }
        3 => l.prog().scalar(Op::Dp3, vec![a.to_vec(), b.to_vec()]),
        _ => l
            .prog()
            .scalar(Op::Dp4, vec![a[..4].to_vec(), b[..4].to_vec()]),
    }
}

fn each(l: &mut Lowering, op: Op, c: &[Comp]) -> Vec<Comp> {
    c.iter()
        .map(|&x| l.prog().scalar(op, vec![vec![x]]))
        .collect()
}

fn floor(l: &mut Lowering, c: &[Comp]) -> Vec<Comp> {
    if c.iter().all(|&x| l.prog().is_integral(x)) {
        return c.to_vec();
    }
    let f = l.prog().map(Op::Frc, vec![c.to_vec()]);
    let nf = l.prog().map(Op::Neg, vec![f]);
    l.prog().map(Op::Add, vec![c.to_vec(), nf])
}

/// `lit` without the `lit` instruction (pixel shaders, which have none, and vs_3_0, where
/// fxc does not use it), as fxc builds it:
/// (1, (n·l > 0) · n·l, pow(n·h, m) · (n·l > 0 && n·h > 0), 1). Unlike the instruction,
/// m is not clamped, and a zero factor leaves an infinite or NaN `pow` NaN.
fn lit_formula(l: &mut Lowering, nl: Comp, nh: Comp, m: Comp) -> Vec<Comp> {
    let one = l.prog().konst(1.0);
    let zero = l.prog().konst(0.0);
    let diffuse_on = l.cmp_ops(BinOp::Gt, &[nl], &[zero])[0];
    let specular_on = l.cmp_ops(BinOp::Gt, &[nh], &[zero])[0];
    let both = l.sel(&[specular_on], &[diffuse_on], &[zero])[0];
    let diffuse = l.prog().map(Op::Mul, vec![vec![diffuse_on], vec![nl]])[0];
    let specular = if l.prog().constant(both) == Some(0.0) {
        // fxc drops the product with a zero it knows of.
        zero
    } else {
        // The `pow` instruction, not `pow()`'s logarithm and exponential (pow(0, 0) is 1),
        // but for a small whole power.
        let p = pow_whole(l, nh, m)
            .unwrap_or_else(|| l.prog().scalar(Op::Pow, vec![vec![nh], vec![m]]));
        l.prog().map(Op::Mul, vec![vec![p], vec![both]])[0]
    };
    vec![one, diffuse, specular, one]
}

/// `pow` of each lane: the logarithms and exponentials one lane at a time, as the
/// models have them, the product between them one vector instruction, as fxc makes it.
fn pow_each(l: &mut Lowering, a: &[Comp], b: &[Comp]) -> Vec<Comp> {
    let mut out: Vec<Option<Comp>> = (0..a.len()).map(|i| pow_whole(l, a[i], b[i])).collect();
    let rest: Vec<usize> = (0..a.len()).filter(|&i| out[i].is_none()).collect();
    if rest.is_empty() {
        return out.into_iter().flatten().collect();
    }
    let logs: Vec<Comp> = rest
        .iter()
        .map(|&i| l.prog().scalar(Op::Log, vec![vec![a[i]]]))
        .collect();
    let exps: Vec<Comp> = rest.iter().map(|&i| b[i]).collect();
    let m = l.prog().map(Op::Mul, vec![logs, exps]);
    for (k, &i) in rest.iter().enumerate() {
        out[i] = Some(l.prog().scalar(Op::Exp, vec![vec![m[k]]]));
    }
    out.into_iter().flatten().collect()
}

/// `pow` with a small whole exponent known here: multiplications, as fxc does (a
/// negative base keeps its sign).
fn pow_whole(l: &mut Lowering, a: Comp, b: Comp) -> Option<Comp> {
    let e = l
        .prog()
        .constant(b)
        .filter(|e| *e == e.trunc() && e.abs() >= 1.0 && e.abs() <= 4.0)?;
    let mut acc = a;
    for _ in 1..e.abs() as u32 {
        acc = l.prog().map(Op::Mul, vec![vec![acc], vec![a]])[0];
    }
    Some(if e < 0.0 {
        l.prog().scalar(Op::Rcp, vec![vec![acc]])
    } else {
        acc
    })
}

/// sin (lane 1) or cos (lane 0) of each component as fxc computes the intrinsic: of
/// a scalar by `sincos`, of a vector (and in vs_1_1, which has no `sincos`) by the
/// cosine's series in every lane at once.
fn sin_or_cos(l: &mut Lowering, c: &[Comp], lane: u8) -> Vec<Comp> {
    let series = c.len() > 1 || l.profile().is_vs_1_1();
    reduced_sin_or_cos(l, c, lane, series)
}

/// Sine and cosine of each component, as `sincos(x, out s, out c)` computes them: one
/// `sincos` a component (where the model has it), each giving both.
pub(super) fn sin_and_cos(l: &mut Lowering, c: &[Comp]) -> (Vec<Comp>, Vec<Comp>) {
    let series = l.profile().is_vs_1_1();
    (
        reduced_sin_or_cos(l, c, 1, series),
        reduced_sin_or_cos(l, c, 0, series),
    )
}

/// sin (lane 1) or cos (lane 0) of each component, its argument first brought into
/// [-π, π]: then either `sincos` of each, or the cosine's series (the sine a quarter
/// turn on), as Microsoft's compilers compute it.
fn reduced_sin_or_cos(l: &mut Lowering, c: &[Comp], lane: u8, series: bool) -> Vec<Comp> {
    let n = c.len();
    let inv = l.prog().konst(1.0 / (2.0 * PI));
    let half = l.prog().konst(if series && lane == 1 { 0.25 } else { 0.5 });
    let t = l
        .prog()
        .map(Op::Mad, vec![c.to_vec(), vec![inv; n], vec![half; n]]);
    let f = l.prog().map(Op::Frc, vec![t]);
    let two_pi = l.prog().konst(2.0 * PI);
    let neg_pi = l.prog().konst(-PI);
    let r = l
        .prog()
        .map(Op::Mad, vec![f, vec![two_pi; n], vec![neg_pi; n]]);
    if series {
        return super::legal::cos_in_range(l.prog(), r);
    }
    r.iter()
        .map(|&x| {
            let sc = l.prog().raw(Op::SinCos, vec![vec![x]], 2);
            sc[usize::from(lane)]
        })
        .collect()
}

/// acos of each component, as Microsoft's compilers evaluate it: a cubic in |x| times
/// sqrt(1 - |x|), reflected for negative x.
fn acos(l: &mut Lowering, c: &[Comp]) -> Vec<Comp> {
    let n = c.len();
    let k = |l: &mut Lowering, v: f32| vec![l.prog().konst(v); n];
    let a = l.prog().map(Op::Abs, vec![c.to_vec()]);
    let (k1, k2) = (k(l, -0.018_729_3), k(l, 0.074_261_0));
    let p = l.prog().map(Op::Mad, vec![a.clone(), k1, k2]);
    let k3 = k(l, -0.212_114_4);
    let p = l.prog().map(Op::Mad, vec![p, a.clone(), k3]);
    let k4 = k(l, 1.570_728_8);
    let p = l.prog().map(Op::Mad, vec![p, a.clone(), k4]);
    let one = k(l, 1.0);
    let na = l.prog().map(Op::Neg, vec![a]);
    let om = l.prog().map(Op::Add, vec![na, one]);
    let r = each(l, Op::Rsq, &om);
    let sq = each(l, Op::Rcp, &r);
    let root = l.prog().map(Op::Mul, vec![sq, p]);
    // x < 0: π - r
    let (m2, pi) = (k(l, -2.0), k(l, PI));
    let flipped = l.prog().map(Op::Mad, vec![root.clone(), m2, pi]);
    let zero = k(l, 0.0);
    let neg = l.cmp_ops(BinOp::Lt, c, &zero);
    l.prog().map(Op::Mad, vec![flipped, neg, root])
}

/// atan2(y, x) of each component: a polynomial in min(|x|,|y|) / max(|x|,|y|), moved to
/// its octant, as Microsoft's compilers evaluate it.
fn atan2(l: &mut Lowering, y: &[Comp], x: &[Comp]) -> Vec<Comp> {
    let n = y.len();
    let k = |l: &mut Lowering, v: f32| vec![l.prog().konst(v); n];
    let ax = l.prog().map(Op::Abs, vec![x.to_vec()]);
    let ay = l.prog().map(Op::Abs, vec![y.to_vec()]);
    let lo = l.prog().map(Op::Min, vec![ax.clone(), ay.clone()]);
    let hi = l.prog().map(Op::Max, vec![ax.clone(), ay.clone()]);
    let t = l.div(&lo, &hi);
    let s = l.prog().map(Op::Mul, vec![t.clone(), t.clone()]);
    let mut p = k(l, 0.020_835_1);
    for c in [-0.085_133, 0.180_141, -0.330_299_5, 0.999_866] {
        let kc = k(l, c);
        p = l.prog().map(Op::Mad, vec![p, s.clone(), kc]);
    }
    let mut r = l.prog().map(Op::Mul, vec![p, t]);
    // |y| > |x|: π/2 - r
    let steep = l.cmp_ops(BinOp::Lt, &ax, &ay);
    let (m2, hp) = (k(l, -2.0), k(l, std::f32::consts::FRAC_PI_2));
    let d = l.prog().map(Op::Mad, vec![r.clone(), m2.clone(), hp]);
    r = l.prog().map(Op::Mad, vec![d, steep, r]);
    // x < 0: π - r
    let zero = k(l, 0.0);
    let left = l.cmp_ops(BinOp::Lt, x, &zero);
    let pi = k(l, PI);
    let d = l.prog().map(Op::Mad, vec![r.clone(), m2, pi]);
    r = l.prog().map(Op::Mad, vec![d, left, r]);
    // y < 0: -r
    let down = l.cmp_ops(BinOp::Lt, y, &zero);
    let nr = l.prog().map(Op::Neg, vec![r.clone()]);
    l.sel(&down, &nr, &r)
}

/// The determinant of an n×n matrix (row-major components) by cofactors.
fn determinant(l: &mut Lowering, m: &[Comp], n: usize) -> Comp {
    if n == 1 {
        return m[0];
    }
    if n == 2 {
        let ad = l.prog().map(Op::Mul, vec![vec![m[0]], vec![m[3]]]);
        let nc = l.prog().map(Op::Neg, vec![vec![m[2]]]);
        return l.prog().map(Op::Mad, vec![vec![m[1]], nc, ad])[0];
    }
    let mut acc: Option<Comp> = None;
    for j in 0..n {
        let minor: Vec<Comp> = (1..n)
            .flat_map(|r| (0..n).filter(move |&c| c != j).map(move |c| (r, c)))
            .map(|(r, c)| m[r * n + c])
            .collect();
        let d = determinant(l, &minor, n - 1);
        let term = if j % 2 == 0 {
            vec![m[j]]
        } else {
            l.prog().map(Op::Neg, vec![vec![m[j]]])
        };
        acc = Some(match acc {
            None => l.prog().map(Op::Mul, vec![term, vec![d]])[0],
            Some(a) => l.prog().map(Op::Mad, vec![term, vec![d], vec![a]])[0],
        });
    }
    acc.unwrap()
}

fn numeric(l: &mut Lowering, v: Val, loc: Loc) -> Option<Val> {
    if v.ty.is_numeric() {
        Some(v)
    } else {
        l.err(
            loc,
            format!("a numeric argument was expected, not {}", v.ty),
        );
        None
    }
}

/// The argument as a float of its shape.
fn float(l: &mut Lowering, v: Val, loc: Loc) -> Option<Val> {
    let v = numeric(l, v, loc)?;
    let base = v.ty.base().unwrap();
    if matches!(base, Base::Float | Base::Double) {
        return Some(v);
    }
    // half is float on Direct3D 9: intrinsics of halves return floats, as fxc types them.
    let to = v.ty.with_base(Base::Float);
    l.conv(v, &to, loc)
}

fn same2(l: &mut Lowering, a: &Val, b: &Val, loc: Loc) -> Option<(Vec<Comp>, Vec<Comp>, Ty)> {
    let Some(ty) = l.common(&a.ty, &b.ty) else {
        l.err(
            loc,
            format!("the arguments' types {} and {} do not match", a.ty, b.ty),
        );
        return None;
    };
    let x = l.conv(a.clone(), &ty, loc)?.comps;
    let y = l.conv(b.clone(), &ty, loc)?.comps;
    Some((x, y, ty))
}

fn same2f(l: &mut Lowering, a: &Val, b: &Val, loc: Loc) -> Option<(Vec<Comp>, Vec<Comp>, Ty)> {
    let (x, y, ty) = same2(l, a, b, loc)?;
    let ty = if matches!(ty.base(), Some(Base::Float | Base::Double)) {
        ty
    } else {
        ty.with_base(Base::Float)
    };
    Some((x, y, ty))
}

fn float_common(l: &mut Lowering, args: &[Val], loc: Loc) -> Option<Ty> {
    let mut ty = args[0].ty.clone();
    for a in &args[1..] {
        match l.common(&ty, &a.ty) {
            Some(t) => ty = t,
            None => {
                l.err(
                    loc,
                    format!("the arguments' types {} and {} do not match", ty, a.ty),
                );
                return None;
            }
        }
    }
    Some(if matches!(ty.base(), Some(Base::Float | Base::Double)) {
        ty
    } else {
        ty.with_base(Base::Float)
    })
}
