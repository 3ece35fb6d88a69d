//! What LLVM 14 changes in a module of LLVM 3.7 when it reads it, and so what
//! `llvm-dis-14` shows: debug info dropped from a module that does not declare its
//! version, `llvm.lifetime.*` renamed with their mangled pointer type (the upgraded
//! declaration moves to the end of the function list and takes the intrinsic's
//! attributes), attributes that do not fit a parameter's type dropped from functions,
//! and old scalar TBAA tags made struct-path tags.

use rustc_hash::FxHashMap as HashMap;

use super::codes::attr_named;
use super::ir::*;

/// The `Debug Info Version` module flag, where `llvm.module.flags` has one.
pub fn debug_info_version(m: &Module) -> Option<u64> {
    let (_, flags) = m.named.iter().find(|(n, _)| n == b"llvm.module.flags")?;
    for &flag in flags {
        let Some(Metadata::Node { operands, .. }) = m.metadata.get(flag as usize) else {
            continue;
        };
        let [_, Some(key), Some(value)] = operands[..] else {
            continue;
        };
        if m.metadata.get(key as usize) != Some(&Metadata::String(b"Debug Info Version".to_vec())) {
            continue;
        }
        if let Some(Metadata::Value(v)) = m.metadata.get(value as usize) {
            if let Some(ValueKind::Const(Const::Int(n))) =
                m.values.get(*v as usize).map(|v| &v.kind)
            {
                return u64::try_from(*n).ok();
            }
        }
    }
    None
}

pub fn upgrade(m: &mut Module, keep_debug: bool) {
    if !keep_debug {
        strip_debug_info(m);
    }
    intrinsics(m);
    for f in &mut m.functions {
        drop_incompatible(&m.types, f);
    }
    tbaa(m);
}

fn name_of(m: &Module, v: ValueId) -> &[u8] {
    m.values
        .get(v as usize)
        .and_then(|v| v.name.as_deref())
        .unwrap_or(b"")
}

/// `StripDebugInfo`: what a module without a debug-info version loses.
fn strip_debug_info(m: &mut Module) {
    m.named
        .retain(|(n, _)| !n.starts_with(b"llvm.dbg.") && n.as_slice() != b"llvm.gcov");
    let dbg_intrinsics: Vec<ValueId> = m
        .functions
        .iter()
        .filter(|f| {
            matches!(
                name_of(m, f.value),
                b"llvm.dbg.declare" | b"llvm.dbg.value" | b"llvm.dbg.addr" | b"llvm.dbg.label"
            )
        })
        .map(|f| f.value)
        .collect();
    let heapallocsite = m.kinds.iter().position(|k| k == b"heapallocsite");
    for f in &mut m.functions {
        let Some(body) = &mut f.body else { continue };
        for block in &mut body.blocks {
            block.insts.retain(
                |i| !matches!(&i.op, Op::Call { callee, .. } if dbg_intrinsics.contains(callee)),
            );
            for inst in &mut block.insts {
                inst.md
                    .retain(|&(k, _)| k != 0 && Some(k as usize) != heapallocsite);
            }
        }
    }
}

/// The suffix an overloaded intrinsic's name takes for a type (`getMangledTypeStr`),
/// for the types this reader upgrades.
fn mangle(m: &Module, ty: TypeId, depth: u32) -> Option<String> {
    if depth > 16 {
        return None;
    }
    Some(match m.ty(ty) {
        Type::Pointer { pointee, space } => format!("p{space}{}", mangle(m, *pointee, depth + 1)?),
        Type::Int(w) => format!("i{w}"),
        Type::Half => "f16".into(),
        Type::BFloat => "bf16".into(),
        Type::Float => "f32".into(),
        Type::Double => "f64".into(),
        Type::Vector { len, elem } => format!("v{len}{}", mangle(m, *elem, depth + 1)?),
        Type::Array { len, elem } => format!("a{len}{}", mangle(m, *elem, depth + 1)?),
        Type::Struct {
            name: Some(n),
            literal: false,
            ..
        } if !n.is_empty() => format!("s_{}", String::from_utf8_lossy(n)),
        _ => return None,
    })
}

/// The attributes LLVM 14 gives `llvm.lifetime.start` and `llvm.lifetime.end`.
fn lifetime_attributes() -> AttrList {
    let kind = |name: &str| Attr::Kind {
        order: attr_named(name).order,
        value: 0,
        ty: None,
    };
    let mut function: AttrSet = ["argmemonly", "nofree", "nosync", "nounwind", "willreturn"]
        .iter()
        .map(|n| kind(n))
        .collect();
    function.sort();
    AttrList {
        function,
        ret: Vec::new(),
        params: vec![vec![kind("immarg")], vec![kind("nocapture")]],
    }
}

/// `UpgradeIntrinsicFunction` for what DXIL declares: `llvm.lifetime.start(i64, i8*)`
/// becomes `llvm.lifetime.start.p0i8`, a new declaration at the end of the list.
fn intrinsics(m: &mut Module) {
    let order = m.function_order.clone();
    let mut moved = Vec::new();
    for &fi in &order {
        let f = &m.functions[fi as usize];
        let name = name_of(m, f.value).to_vec();
        let base: &[u8] = if name.starts_with(b"llvm.lifetime.start") {
            b"llvm.lifetime.start"
        } else if name.starts_with(b"llvm.lifetime.end") {
            b"llvm.lifetime.end"
        } else {
            continue;
        };
        let Type::Function { params, ret, .. } = m.ty(f.ty).clone() else {
            continue;
        };
        if params.len() != 2
            || !matches!(m.ty(params[0]), Type::Int(64))
            || !matches!(m.ty(ret), Type::Void)
        {
            continue;
        }
        let Some(suffix) = mangle(m, params[1], 0) else {
            continue;
        };
        if !matches!(m.ty(params[1]), Type::Pointer { .. }) {
            continue;
        }
        let mut wanted = base.to_vec();
        wanted.push(b'.');
        wanted.extend_from_slice(suffix.as_bytes());
        let value = f.value;
        m.functions[fi as usize].attrs = lifetime_attributes();
        if name != wanted {
            m.values[value as usize].name = Some(wanted);
            moved.push(fi);
        }
    }
    m.function_order.retain(|f| !moved.contains(f));
    m.function_order.extend(moved);
}

/// `UpgradeFunctionAttributes`: attributes that cannot apply to a parameter's or the
/// return value's type are dropped (`AttributeFuncs::typeIncompatible`).
fn drop_incompatible(types: &[Type], f: &mut Function) {
    let Some(Type::Function { ret, params, .. }) = types.get(f.ty as usize) else {
        return;
    };
    let keep = |ty: TypeId, set: &mut AttrSet| {
        let t = &types[ty as usize];
        let int = matches!(t, Type::Int(_));
        let ptr = matches!(t, Type::Pointer { .. });
        let ptr_vec = ptr
            || matches!(t, Type::Vector { elem, .. } if matches!(types[*elem as usize], Type::Pointer { .. }));
        set.retain(|a| {
            let Attr::Kind { order, .. } = a else {
                return true;
            };
            let is = |name: &str| attr_named(name).order == *order;
            if !int && (is("signext") || is("zeroext")) {
                return false;
            }
            if !ptr
                && [
                    "nest",
                    "noalias",
                    "nocapture",
                    "nonnull",
                    "readnone",
                    "readonly",
                    "swifterror",
                    "dereferenceable",
                    "dereferenceable_or_null",
                    "preallocated",
                    "inalloca",
                    "byval",
                    "sret",
                    "byref",
                    "elementtype",
                ]
                .iter()
                .any(|n| is(n))
            {
                return false;
            }
            if !ptr_vec && is("align") {
                return false;
            }
            !(matches!(t, Type::Void) && is("noundef"))
        });
    };
    keep(*ret, &mut f.attrs.ret);
    for (i, &p) in params.iter().enumerate() {
        if let Some(set) = f.attrs.params.get_mut(i) {
            keep(p, set);
        }
    }
}

/// `UpgradeTBAANode`: a `!tbaa` tag that is an old scalar type node `!{!"name", !parent}`
/// becomes `!{!N, !N, i64 0}` (`!{!S, !S, i64 0, const}` from `!{name, parent, const}`).
fn tbaa(m: &mut Module) {
    let tbaa = 1u32;
    let mut made: HashMap<Vec<Option<MdId>>, MdId> = HashMap::default();
    let mut i64_zero: Option<MdId> = None;
    let mut nodes: Vec<(usize, usize, usize, MdId)> = Vec::new();
    for (fi, f) in m.functions.iter().enumerate() {
        let Some(body) = &f.body else { continue };
        for (bi, block) in body.blocks.iter().enumerate() {
            for (ii, inst) in block.insts.iter().enumerate() {
                for &(k, md) in &inst.md {
                    if k == tbaa {
                        nodes.push((fi, bi, ii, md));
                    }
                }
            }
        }
    }
    for (fi, bi, ii, md) in nodes {
        let Some(Metadata::Node { operands, .. }) = m.metadata.get(md as usize).cloned() else {
            continue;
        };
        let first_is_node = operands
            .first()
            .copied()
            .flatten()
            .is_some_and(|o| matches!(m.metadata.get(o as usize), Some(Metadata::Node { .. })));
        if first_is_node && operands.len() >= 3 {
            continue;
        }
        let zero = *i64_zero.get_or_insert_with(|| {
            m.metadata.push(Metadata::Int64Zero);
            m.metadata.len() as MdId - 1
        });
        let mut get = |ops: Vec<Option<MdId>>, m: &mut Module| -> MdId {
            *made.entry(ops.clone()).or_insert_with(|| {
                m.metadata.push(Metadata::Node {
                    distinct: false,
                    operands: ops,
                });
                m.metadata.len() as MdId - 1
            })
        };
        let new = if operands.len() == 3 {
            let scalar = get(operands[..2].to_vec(), m);
            get(vec![Some(scalar), Some(scalar), Some(zero), operands[2]], m)
        } else {
            get(vec![Some(md), Some(md), Some(zero)], m)
        };
        let inst = &mut m.functions[fi].body.as_mut().expect("a body").blocks[bi].insts[ii];
        for entry in &mut inst.md {
            if entry.0 == tbaa {
                entry.1 = new;
            }
        }
    }
    // LLVM 14 checks every access tag as it reads a function (`TBAAVerifier`) and drops
    // all TBAA from the module at the first it finds wrong.
    let valid = m.functions.iter().filter_map(|f| f.body.as_ref()).all(|b| {
        b.blocks.iter().flat_map(|b| &b.insts).all(|inst| {
            inst.md
                .iter()
                .filter(|(k, _)| *k == tbaa)
                .all(|&(_, tag)| valid_access_tag(m, &inst.op, tag))
        })
    });
    if !valid {
        for f in &mut m.functions {
            for block in f.body.iter_mut().flat_map(|b| &mut b.blocks) {
                for inst in &mut block.insts {
                    inst.md.retain(|&(k, _)| k != tbaa);
                }
            }
        }
    }
}

fn node(m: &Module, id: Option<MdId>) -> Option<&[Option<MdId>]> {
    match m.metadata.get(id? as usize)? {
        Metadata::Node { operands, .. } => Some(operands),
        _ => None,
    }
}

fn is_int(m: &Module, id: Option<MdId>) -> bool {
    match id.and_then(|i| m.metadata.get(i as usize)) {
        Some(Metadata::Int64Zero) => true,
        Some(Metadata::Value(v)) => m.values.get(*v as usize).is_some_and(|v| {
            matches!(v.kind, ValueKind::Const(Const::Int(_) | Const::Null))
                && matches!(m.ty(v.ty), Type::Int(_))
        }),
        _ => false,
    }
}

/// `isValidScalarTBAANode`: a name and a parent that is a root or valid itself.
fn valid_scalar_type(m: &Module, id: Option<MdId>, depth: u32) -> bool {
    let Some(ops) = node(m, id) else { return false };
    if !(2..=3).contains(&ops.len()) || depth > 64 {
        return false;
    }
    if !matches!(
        ops[0].and_then(|o| m.metadata.get(o as usize)),
        Some(Metadata::String(_))
    ) {
        return false;
    }
    match node(m, ops[1]) {
        Some(parent) if parent.len() < 2 => true,
        Some(_) => valid_scalar_type(m, ops[1], depth + 1),
        None => false,
    }
}

/// What `TBAAVerifier::visitTBAAMetadata` checks first of an access tag: an instruction
/// that accesses memory, the struct-path form, its operand count, its base and access
/// types, a constant offset. (The walk down the base type's fields is not repeated.)
fn valid_access_tag(m: &Module, op: &Op, tag: MdId) -> bool {
    let accesses = matches!(
        op,
        Op::Load { .. }
            | Op::Store { .. }
            | Op::Call { .. }
            | Op::AtomicRmw { .. }
            | Op::CmpXchg { .. }
    );
    let Some(ops) = node(m, Some(tag)) else {
        return false;
    };
    if !accesses || ops.len() < 3 || node(m, ops[0]).is_none() {
        return false;
    }
    let access = node(m, ops[1]);
    let new_format = access.is_some_and(|a| a.len() >= 3 && node(m, a[0]).is_some());
    let count_ok = if new_format {
        (4..=5).contains(&ops.len()) && is_int(m, ops[3])
    } else {
        ops.len() < 5
    };
    let flag_at = if new_format { 4 } else { 3 };
    let flag_ok = ops.len() != flag_at + 1 || is_int(m, ops[flag_at]);
    count_ok
        && flag_ok
        && access.is_some()
        && (new_format || valid_scalar_type(m, ops[1], 0))
        && is_int(m, ops[2])
}
