//! Rewrites of the finished graph that make fewer instructions of the same values, run
//! before registers are given: a product that only a sum reads becomes a `mad`, and a
//! doubling that is left an `add` of the value to itself.

use std::collections::{HashMap, HashSet};

use super::ir::{Comp, Node, NodeId, Op, Program};

/// Every node the outputs and kills read, directly or not.
fn reachable(p: &Program) -> Vec<NodeId> {
    let mut seen: HashSet<NodeId> = HashSet::new();
    let mut stack: Vec<NodeId> = p.root_comps().flatten().map(|c| c.node).collect();
    while let Some(n) = stack.pop() {
        if seen.insert(n) {
            stack.extend(p.node(n).args.iter().flatten().map(|c| c.node));
        }
    }
    let mut order: Vec<NodeId> = seen.into_iter().collect();
    order.sort_unstable();
    order
}

/// How many readers each node has: nodes, outputs and kills, each counted once however
/// many of its lanes it reads.
fn readers(p: &Program, order: &[NodeId]) -> HashMap<NodeId, u32> {
    let mut count: HashMap<NodeId, u32> = HashMap::new();
    let mut note = |comps: &mut dyn Iterator<Item = &Comp>| {
        let nodes: HashSet<NodeId> = comps.map(|c| c.node).collect();
        for n in nodes {
            *count.entry(n).or_default() += 1;
        }
    };
    for &n in order {
        note(&mut p.node(n).args.iter().flatten());
    }
    for comps in p.root_comps() {
        note(&mut comps.iter());
    }
    count
}

/// `(k * x) * y` as `k * (x * y)`, constants `k`, values `x` and `y`, where only this
/// product reads `k * x`: where the same values recur under other constants (a kernel's
/// taps, `Disc[i] * PixelSize * coc * DOFParams.z`), their product is made once and each
/// tap is one product by its constants, which a sum then takes as a `mad`, as
/// Microsoft's compilers reassociate it. Never more instructions: `k * x` goes. Run on the
/// SM2/3 and vs_1_1 graph (ps_1_x clamps every product, and has its own code generator).
pub fn constants_outward(p: &mut Program) {
    let order = reachable(p);
    let count = readers(p, &order);
    for &n in &order {
        if p.node(n).op != Op::Mul {
            continue;
        }
        for side in 0..2 {
            let node = p.node(n);
            let (a, y) = (&node.args[side], &node.args[1 - side]);
            if y.iter().any(|&c| p.constant(c).is_some()) {
                continue;
            }
            let parts: Option<Vec<(Comp, Comp)>> = a
                .iter()
                .map(|&c| {
                    (count.get(&c.node).copied() == Some(1))
                        .then(|| p.scaled_lane(c))
                        .flatten()
                })
                .collect();
            let Some(parts) = parts else {
                continue;
            };
            let y = y.clone();
            let (ks, xs): (Vec<Comp>, Vec<Comp>) = parts.into_iter().unzip();
            let xy = p.map(Op::Mul, vec![xs, y]);
            p.nodes[n as usize].args = vec![ks, xy];
            break;
        }
    }
}

/// Products that only sums read (directly or through a negation only a sum reads), each
/// of which can take it as a `mad`: folded into every one, the product is not computed
/// at all (`d * k - a` and `d * k - b` are two `mad`s, not a `mul` and two `add`s, as
/// Microsoft's compilers write them).
fn read_by_sums(p: &Program, order: &[NodeId], readers: &HashMap<NodeId, u32>) -> HashSet<NodeId> {
    let mut by: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
    for &n in order {
        let read: HashSet<NodeId> = p.node(n).args.iter().flatten().map(|c| c.node).collect();
        for m in read {
            by.entry(m).or_default().push(n);
        }
    }
    let rooted: HashSet<NodeId> = p.root_comps().flatten().map(|c| c.node).collect();
    let sum_reads = |n: NodeId| match p.node(n).op {
        Op::Add => true,
        Op::Neg => {
            readers.get(&n).copied() == Some(1)
                && !rooted.contains(&n)
                && by
                    .get(&n)
                    .is_some_and(|r| r.iter().all(|&s| p.node(s).op == Op::Add))
        }
        _ => false,
    };
    order
        .iter()
        .copied()
        .filter(|&n| p.node(n).op == Op::Mul && !rooted.contains(&n))
        .filter(|n| {
            by.get(n)
                .is_some_and(|r| r.len() > 1 && r.iter().all(|&s| sum_reads(s)))
        })
        .collect()
}

/// `a * b + c` as one `mad` where nothing else reads the product; then where only sums
/// read it ([`read_by_sums`]), those that did not take another product first. A negated
/// product (`c - a * b`) folds too, the negation moved onto `a`.
pub fn mads(p: &mut Program) {
    let order = reachable(p);
    let count = readers(p, &order);
    let single = |n: NodeId| count.get(&n).copied() == Some(1);
    fold_products(p, &order, &single, &single);
    let order = reachable(p);
    let count = readers(p, &order);
    let single = |n: NodeId| count.get(&n).copied() == Some(1);
    let shared = read_by_sums(p, &order, &count);
    fold_products(p, &order, &single, &|n| shared.contains(&n));
}

/// Each sum of `order` one of whose operands is products `fusable` says may fold (through
/// negations `single` says only it reads) made a `mad` of them.
fn fold_products(
    p: &mut Program,
    order: &[NodeId],
    single: &dyn Fn(NodeId) -> bool,
    fusable: &dyn Fn(NodeId) -> bool,
) {
    for &n in order {
        if p.node(n).op != Op::Add {
            continue;
        }
        for side in 0..2 {
            let node = p.node(n);
            let (arg, other) = (&node.args[side], &node.args[1 - side]);
            // Each lane: the product it reads, and whether negated.
            let mut lanes: Vec<(Comp, bool)> = Vec::with_capacity(arg.len());
            let mut products: HashSet<NodeId> = HashSet::new();
            let mut negs: HashSet<NodeId> = HashSet::new();
            for &c in arg {
                let mut at = c;
                let mut negated = false;
                if p.node(at.node).op == Op::Neg && single(at.node) {
                    negs.insert(at.node);
                    at = p.node(at.node).args[0][usize::from(at.lane)];
                    negated = true;
                }
                if p.node(at.node).op != Op::Mul || !fusable(at.node) {
                    break;
                }
                products.insert(at.node);
                lanes.push((at, negated));
            }
            // Every lane a product, and no product or negation read by the other operand.
            if lanes.len() != arg.len()
                || other
                    .iter()
                    .any(|c| products.contains(&c.node) || negs.contains(&c.node))
            {
                continue;
            }
            let other = other.clone();
            let factor = |p: &Program, (c, _): &(Comp, bool), i: usize| {
                p.node(c.node).args[i][usize::from(c.lane)]
            };
            let mut a: Vec<Comp> = lanes.iter().map(|l| factor(p, l, 0)).collect();
            let b: Vec<Comp> = lanes.iter().map(|l| factor(p, l, 1)).collect();
            let negated: Vec<usize> = (0..lanes.len()).filter(|&i| lanes[i].1).collect();
            if !negated.is_empty() {
                let part: Vec<Comp> = negated.iter().map(|&i| a[i]).collect();
                let neg = p.map(Op::Neg, vec![part]);
                for (&i, c) in negated.iter().zip(neg) {
                    a[i] = c;
                }
            }
            let node = &mut p.nodes[n as usize];
            node.op = Op::Mad;
            node.args = vec![a, b, other];
            break;
        }
    }
}

/// `x * 2` as `x + x` (and `x * -2` as `-(x + x)`), which needs no literal: after
/// [`mads`], which would rather have the product.
pub fn doubles(p: &mut Program) {
    for n in reachable(p) {
        let node = p.node(n);
        if node.op != Op::Mul {
            continue;
        }
        let every = |a: &[Comp], v: f32| a.iter().all(|&c| p.constant(c) == Some(v));
        let Some((x, negate)) = (0..2).find_map(|side| {
            let (k, x) = (&node.args[side], &node.args[1 - side]);
            match () {
                _ if every(k, 2.0) => Some((x.clone(), false)),
                _ if every(k, -2.0) => Some((x.clone(), true)),
                _ => None,
            }
        }) else {
            continue;
        };
        let node = if negate {
            let sum = p.map(Op::Add, vec![x.clone(), x]);
            Node {
                op: Op::Neg,
                width: sum.len() as u8,
                args: vec![sum],
            }
        } else {
            Node {
                op: Op::Add,
                width: x.len() as u8,
                args: vec![x.clone(), x],
            }
        };
        p.nodes[n as usize] = node;
    }
}
