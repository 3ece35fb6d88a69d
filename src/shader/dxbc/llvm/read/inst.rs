//! Instruction records (`FUNC_CODE_INST_*`) as LLVM 14 reads them: operands relative to
//! the next value number, a type after an operand that is not defined yet, the result
//! type each instruction has, and the alignments and orderings old records leave out.

use super::super::super::bitstream::signed;
use super::super::codes::{self, CASTS, RMW};
use super::super::ir::*;
use super::{Ctx, FnState, Result};

impl Ctx<'_> {
    fn next(&self, b: &Body, f: &FnState) -> u64 {
        f.module + b.values.len() as u64
    }

    /// The type of value `id` as far as it is known (a forward reference: the type it
    /// was used with).
    fn type_of(&self, b: &Body, f: &FnState, id: ValueId) -> Option<TypeId> {
        let i = id as u64;
        if i < f.module {
            self.m.values.get(i as usize).map(|v| v.ty)
        } else if i < self.next(b, f) {
            b.values.get((i - f.module) as usize).map(|v| v.ty)
        } else {
            f.forward.get(&id).copied()
        }
    }

    fn operand_id(&self, raw: u64, b: &Body, f: &FnState) -> ValueId {
        if self.relative {
            (self.next(b, f) as u32).wrapping_sub(raw as u32)
        } else {
            raw as u32
        }
    }

    fn forward(&self, f: &mut FnState, id: ValueId, ty: TypeId) -> Result<()> {
        match f.forward.insert(id, ty) {
            Some(t) if t != ty => Err(self.fail(format!("value {id} is used with two types"))),
            _ => Ok(()),
        }
    }

    /// A value and, where it is not defined yet, its type (`getValueTypePair`).
    fn pair(&self, ops: &[u64], i: &mut usize, b: &Body, f: &mut FnState) -> Result<ValueId> {
        let raw = *ops
            .get(*i)
            .ok_or_else(|| self.fail("an operand is missing"))?;
        *i += 1;
        let id = self.operand_id(raw, b, f);
        if (id as u64) < self.next(b, f) {
            return Ok(id);
        }
        let ty = *ops
            .get(*i)
            .ok_or_else(|| self.fail("a forward reference without its type"))?;
        *i += 1;
        let ty = self.ty(ty)?;
        self.forward(f, id, ty)?;
        Ok(id)
    }

    /// A value of type `ty` (`getValue`).
    fn typed(
        &self,
        ops: &[u64],
        i: &mut usize,
        ty: TypeId,
        b: &Body,
        f: &mut FnState,
    ) -> Result<ValueId> {
        let raw = *ops
            .get(*i)
            .ok_or_else(|| self.fail("an operand is missing"))?;
        *i += 1;
        let id = self.operand_id(raw, b, f);
        self.expect(id, ty, b, f)?;
        Ok(id)
    }

    /// A value of type `ty` whose relative number is signed (`getValueSigned`, phis).
    fn signed_typed(&self, raw: u64, ty: TypeId, b: &Body, f: &mut FnState) -> Result<ValueId> {
        let id = if self.relative {
            (self.next(b, f) as i64).wrapping_sub(signed(raw)) as u32
        } else {
            raw as u32
        };
        self.expect(id, ty, b, f)?;
        Ok(id)
    }

    fn expect(&self, id: ValueId, ty: TypeId, b: &Body, f: &mut FnState) -> Result<()> {
        if (id as u64) < self.next(b, f) {
            let t = self.type_of(b, f, id).expect("defined");
            if t != ty {
                return Err(self.fail(format!("value {id} is used with another type than it has")));
            }
            Ok(())
        } else {
            if matches!(self.m.ty(ty), Type::Void | Type::Label | Type::Metadata) {
                return Err(self.fail("a forward reference of a type no value has"));
            }
            self.forward(f, id, ty)
        }
    }

    fn vt(&self, b: &Body, f: &FnState, id: ValueId) -> TypeId {
        self.type_of(b, f, id).expect("an operand just read")
    }

    fn block_id(&self, b: &Body, id: u64) -> Result<u32> {
        if (id as usize) < b.blocks.len() {
            Ok(id as u32)
        } else {
            Err(self.fail(format!("block {id} does not exist")))
        }
    }

    /// The integer a constant index holds, where it is a constant integer.
    fn const_int(&self, b: &Body, f: &FnState, id: ValueId) -> Option<i128> {
        let i = id as u64;
        let v = if i < f.module {
            self.m.values.get(i as usize)
        } else {
            b.values.get((i - f.module) as usize)
        }?;
        match v.kind {
            ValueKind::Const(Const::Int(n)) => Some(n),
            ValueKind::Const(Const::Null) => Some(0),
            _ => None,
        }
    }

    fn scalar_of(&self, ty: TypeId) -> TypeId {
        match self.m.ty(ty) {
            Type::Vector { elem, .. } => *elem,
            _ => ty,
        }
    }

    fn atomic(&self, ordering: u64, scope: u64) -> Result<Atomic> {
        let ordering =
            codes::ordering(ordering).ok_or_else(|| self.fail(format!("ordering {ordering}")))?;
        if scope > 1 {
            return Err(self.fail(format!("synchronisation scope {scope}")));
        }
        Ok(Atomic {
            ordering,
            single_thread: scope == 0,
        })
    }

    /// Where a load, store or alloca has no alignment, the one LLVM 14 gives it.
    fn align_or(&self, exp: u64, ty: TypeId, abi: bool) -> Result<u64> {
        let a = self.alignment(exp)?;
        if a != 0 {
            return Ok(a);
        }
        self.layout
            .align(&self.m, ty, abi, 0)
            .ok_or_else(|| self.fail("an access of a type without a size"))
    }

    /// Read one instruction record; its operation and result type.
    pub(super) fn instruction(
        &mut self,
        code: u32,
        ops: &[u64],
        b: &mut Body,
        f: &mut FnState,
    ) -> Result<(Op, TypeId)> {
        let void = self.intern(Type::Void);
        let mut i = 0usize;
        let rest = |i: usize, n: usize, c: &Self| -> Result<()> {
            if ops.len() < i + n {
                Err(c.fail(format!("{} operands, {} needed", ops.len(), i + n)))
            } else {
                Ok(())
            }
        };
        Ok(match code {
            // BINOP: [opval, ty, opval, opcode(, flags)]
            2 => {
                let lhs = self.pair(ops, &mut i, b, f)?;
                let ty = self.vt(b, f, lhs);
                let rhs = self.typed(ops, &mut i, ty, b, f)?;
                rest(i, 1, self)?;
                let float = self.m.ty(self.scalar_of(ty)).is_float();
                let opcode = codes::binary_opcode(ops[i], float)
                    .ok_or_else(|| self.fail(format!("binary opcode {} for this type", ops[i])))?;
                if !float && !matches!(self.m.ty(self.scalar_of(ty)), Type::Int(_)) {
                    return Err(self.fail("a binary operation on values that are not numbers"));
                }
                let flags = ops.get(i + 1).copied().unwrap_or(0);
                (
                    Op::Binary {
                        opcode,
                        flags,
                        lhs,
                        rhs,
                    },
                    ty,
                )
            }
            // CAST: [opval, opty, destty, castopc]
            3 => {
                let value = self.pair(ops, &mut i, b, f)?;
                rest(i, 2, self)?;
                if ops.len() != i + 2 {
                    return Err(self.fail("a cast of more operands than three"));
                }
                let ty = self.ty(ops[i])?;
                let opcode = *CASTS
                    .get(ops[i + 1] as usize)
                    .ok_or_else(|| self.fail(format!("cast opcode {}", ops[i + 1])))?;
                if !self.is_first_class(ty) {
                    return Err(self.fail("a cast to a type no value has"));
                }
                (Op::Cast { opcode, value }, ty)
            }
            // GEP: [inbounds, ty, n x operands]; the old forms without the type.
            4 | 30 | 43 => {
                let (inbounds, explicit) = if code == 43 {
                    rest(0, 2, self)?;
                    i = 2;
                    (ops[0] != 0, Some(self.ty(ops[1])?))
                } else {
                    (code == 30, None)
                };
                let mut operands = Vec::new();
                while i < ops.len() {
                    operands.push(self.pair(ops, &mut i, b, f)?);
                }
                let Some(&base) = operands.first() else {
                    return Err(self.fail("a getelementptr without its pointer"));
                };
                let (pointee, space) = self.pointee(self.vt(b, f, base)).map_err(|_| {
                    self.fail("a getelementptr of a value that is not a pointer (vectors of pointers are not supported)")
                })?;
                let source = explicit.unwrap_or(pointee);
                if source != pointee {
                    return Err(self.fail("a getelementptr whose type is not its pointer's"));
                }
                let mut t = source;
                for &idx in &operands[1..] {
                    let it = self.vt(b, f, idx);
                    if !matches!(self.m.ty(it), Type::Int(_)) {
                        return Err(self.fail("a getelementptr index that is not an integer"));
                    }
                }
                for &idx in operands.iter().skip(2) {
                    t = match self.m.ty(t).clone() {
                        Type::Struct {
                            body: Some(body), ..
                        } => {
                            let n = self.const_int(b, f, idx).ok_or_else(|| {
                                self.fail("a structure index that is not a constant")
                            })?;
                            *usize::try_from(n)
                                .ok()
                                .and_then(|n| body.get(n))
                                .ok_or_else(|| self.fail(format!("structure index {n}")))?
                        }
                        Type::Array { elem, .. } | Type::Vector { elem, .. } => elem,
                        _ => {
                            return Err(
                                self.fail("a getelementptr index into a type without elements")
                            )
                        }
                    };
                }
                let ty = self.pointer_to(t, space);
                (
                    Op::Gep {
                        inbounds,
                        source,
                        operands,
                    },
                    ty,
                )
            }
            // SELECT: [ty, opval, opval, opval]; VSELECT: [ty, opval, opval, predty, pred]
            5 | 29 => {
                let then = self.pair(ops, &mut i, b, f)?;
                let ty = self.vt(b, f, then);
                let other = self.typed(ops, &mut i, ty, b, f)?;
                let cond = if code == 29 {
                    self.pair(ops, &mut i, b, f)?
                } else {
                    let i1 = self.intern(Type::Int(1));
                    self.typed(ops, &mut i, i1, b, f)?
                };
                let ct = self.vt(b, f, cond);
                if !matches!(self.m.ty(self.scalar_of(ct)), Type::Int(1)) {
                    return Err(self.fail("a select whose condition is not i1"));
                }
                (Op::Select { cond, then, other }, ty)
            }
            // EXTRACTELT: [opty, opval, opval]
            6 => {
                let vector = self.pair(ops, &mut i, b, f)?;
                let index = self.pair(ops, &mut i, b, f)?;
                let Type::Vector { elem, .. } = *self.m.ty(self.vt(b, f, vector)) else {
                    return Err(self.fail("extractelement of a value that is not a vector"));
                };
                (Op::ExtractElement { vector, index }, elem)
            }
            // INSERTELT: [ty, opval, opval, opval]
            7 => {
                let vector = self.pair(ops, &mut i, b, f)?;
                let vt = self.vt(b, f, vector);
                let Type::Vector { elem, .. } = *self.m.ty(vt) else {
                    return Err(self.fail("insertelement into a value that is not a vector"));
                };
                let element = self.typed(ops, &mut i, elem, b, f)?;
                let index = self.pair(ops, &mut i, b, f)?;
                (
                    Op::InsertElement {
                        vector,
                        element,
                        index,
                    },
                    vt,
                )
            }
            // SHUFFLEVEC: [ty, opval, opval, opval]
            8 => {
                let a = self.pair(ops, &mut i, b, f)?;
                let at = self.vt(b, f, a);
                let bb = self.typed(ops, &mut i, at, b, f)?;
                let mask = self.pair(ops, &mut i, b, f)?;
                let (Type::Vector { elem, .. }, Type::Vector { len, .. }) = (
                    self.m.ty(at).clone(),
                    self.m.ty(self.vt(b, f, mask)).clone(),
                ) else {
                    return Err(self.fail("shufflevector of values that are not vectors"));
                };
                let ty = self.intern(Type::Vector { len, elem });
                (Op::ShuffleVector { a, b: bb, mask }, ty)
            }
            // CMP, CMP2: [opty, opval, opval, pred(, fmf)]
            9 | 28 => {
                let lhs = self.pair(ops, &mut i, b, f)?;
                let ty = self.vt(b, f, lhs);
                let rhs = self.typed(ops, &mut i, ty, b, f)?;
                rest(i, 1, self)?;
                let float = self.m.ty(self.scalar_of(ty)).is_float();
                let p = ops[i];
                let fmf = if float {
                    ops.get(i + 1).copied().unwrap_or(0)
                } else {
                    0
                };
                if ops.len() > i + 1 + float as usize {
                    return Err(self.fail("a comparison of more operands than it has"));
                }
                if float != (p <= 15) {
                    return Err(self.fail(format!("predicate {p} for these operands")));
                }
                let predicate =
                    codes::predicate(p).ok_or_else(|| self.fail(format!("predicate {p}")))?;
                let i1 = self.intern(Type::Int(1));
                let result = match *self.m.ty(ty) {
                    Type::Vector { len, .. } => self.intern(Type::Vector { len, elem: i1 }),
                    _ => i1,
                };
                (
                    Op::Cmp {
                        predicate,
                        float,
                        fmf,
                        lhs,
                        rhs,
                    },
                    result,
                )
            }
            // RET: [opty, opval]
            10 => {
                if ops.is_empty() {
                    return Ok((Op::Ret(None), void));
                }
                let v = self.pair(ops, &mut i, b, f)?;
                if i != ops.len() {
                    return Err(self.fail("a return of several values is not supported"));
                }
                (Op::Ret(Some(v)), void)
            }
            // BR: [bb#, bb#, cond] or [bb#]
            11 => {
                rest(0, 1, self)?;
                let then = self.block_id(b, ops[0])?;
                let other = if ops.len() == 1 {
                    None
                } else if ops.len() == 3 {
                    let other = self.block_id(b, ops[1])?;
                    let i1 = self.intern(Type::Int(1));
                    i = 2;
                    let cond = self.typed(ops, &mut i, i1, b, f)?;
                    Some((other, cond))
                } else {
                    return Err(self.fail("a branch of two operands"));
                };
                (Op::Br { then, other }, void)
            }
            // SWITCH: [opty, op0, op1, ...]
            12 => {
                rest(0, 3, self)?;
                if ops[0] >> 16 == 0x4B5 {
                    return Err(self.fail("switches with case ranges are not supported"));
                }
                if ops.len() % 2 == 0 {
                    return Err(self.fail("a switch with a case without its block"));
                }
                let ty = self.ty(ops[0])?;
                if !matches!(self.m.ty(ty), Type::Int(_)) {
                    return Err(self.fail("a switch on a value that is not an integer"));
                }
                i = 1;
                let cond = self.typed(ops, &mut i, ty, b, f)?;
                let default = self.block_id(b, ops[2])?;
                let mut cases = Vec::with_capacity((ops.len() - 3) / 2);
                for pair in ops[3..].chunks(2) {
                    let v = u32::try_from(pair[0]).map_err(|_| self.fail("a case value"))?;
                    if self.const_int(b, f, v).is_none() || self.type_of(b, f, v) != Some(ty) {
                        return Err(
                            self.fail("a case value that is not a constant of the switch's type")
                        );
                    }
                    cases.push((v, self.block_id(b, pair[1])?));
                }
                (
                    Op::Switch {
                        cond,
                        default,
                        cases,
                    },
                    void,
                )
            }
            15 => (Op::Unreachable, void),
            // PHI: [ty, val0, bb0, ...(, fmf)]
            16 => {
                rest(0, 1, self)?;
                let ty = self.ty(ops[0])?;
                if !self.is_first_class(ty) {
                    return Err(self.fail("a phi of a type no value has"));
                }
                let float = self.m.ty(self.scalar_of(ty)).is_float();
                let n = ops.len() - 1;
                if n % 2 == 1 && !float {
                    return Err(self.fail("a phi with an odd number of operands"));
                }
                let mut incoming = Vec::with_capacity(n / 2);
                for pair in ops[1..1 + n / 2 * 2].chunks(2) {
                    let v = self.signed_typed(pair[0], ty, b, f)?;
                    incoming.push((v, self.block_id(b, pair[1])?));
                }
                let fmf = if n % 2 == 1 { ops[ops.len() - 1] } else { 0 };
                (Op::Phi { incoming, fmf }, ty)
            }
            // ALLOCA: [instty, opty, op, align]
            19 => {
                if ops.len() != 4 {
                    return Err(self.fail("an alloca of other than four operands"));
                }
                let rec = ops[3];
                let mut allocated = self.ty(ops[0])?;
                if rec & (1 << 6) == 0 {
                    allocated = self.pointee(allocated)?.0;
                }
                let size_ty = self.ty(ops[1])?;
                let size = u32::try_from(ops[2]).map_err(|_| self.fail("the alloca size"))?;
                if self.type_of(b, f, size) != Some(size_ty) {
                    return Err(self.fail("an alloca size that is not a value of its type"));
                }
                let exp = (rec & 0x1F) | (((rec >> 8) & 0x7) << 5);
                let align = self.align_or(exp, allocated, false)?;
                let ty = self.pointer_to(allocated, 0);
                (
                    Op::Alloca {
                        allocated,
                        size,
                        align,
                        inalloca: rec & (1 << 5) != 0,
                        swifterror: rec & (1 << 7) != 0,
                    },
                    ty,
                )
            }
            // LOAD: [op, opty(, ty), align, vol]; LOADATOMIC: (…, ordering, ssid)
            20 | 41 => {
                let ptr = self.pair(ops, &mut i, b, f)?;
                let (pointee, _) = self.pointee(self.vt(b, f, ptr))?;
                let tail = if code == 41 { 4 } else { 2 };
                let ty = if ops.len() == i + tail + 1 {
                    let t = self.ty(ops[i])?;
                    i += 1;
                    if t != pointee {
                        return Err(self.fail("a load whose type is not its pointer's"));
                    }
                    t
                } else {
                    pointee
                };
                if ops.len() != i + tail {
                    return Err(self.fail("a load of the wrong number of operands"));
                }
                if !self.is_first_class(ty) {
                    return Err(self.fail("a load of a type no value has"));
                }
                let atomic = if code == 41 {
                    let a = self.atomic(ops[i + 2], ops[i + 3])?;
                    if matches!(a.ordering, "release" | "acq_rel") || ops[i] == 0 {
                        return Err(self
                            .fail("an atomic load without alignment or with a release ordering"));
                    }
                    Some(a)
                } else {
                    None
                };
                let align = self.align_or(ops[i], ty, true)?;
                (
                    Op::Load {
                        ptr,
                        align,
                        volatile: ops[i + 1] != 0,
                        atomic,
                    },
                    ty,
                )
            }
            // STORE: [ptrty, ptr, val(ty), align, vol]; STORE_OLD with a typed value;
            // STOREATOMIC: (…, ordering, ssid)
            24 | 44 | 42 | 45 => {
                let ptr = self.pair(ops, &mut i, b, f)?;
                let (pointee, _) = self.pointee(self.vt(b, f, ptr))?;
                let value = if code == 44 || code == 45 {
                    self.pair(ops, &mut i, b, f)?
                } else {
                    self.typed(ops, &mut i, pointee, b, f)?
                };
                let vty = self.vt(b, f, value);
                if vty != pointee {
                    return Err(self.fail("a store of a value of another type than its pointer's"));
                }
                let atomic_rec = code == 42 || code == 45;
                let tail = if atomic_rec { 4 } else { 2 };
                if ops.len() != i + tail {
                    return Err(self.fail("a store of the wrong number of operands"));
                }
                let atomic = if atomic_rec {
                    let a = self.atomic(ops[i + 2], ops[i + 3])?;
                    if matches!(a.ordering, "acquire" | "acq_rel") || ops[i] == 0 {
                        return Err(self.fail(
                            "an atomic store without alignment or with an acquire ordering",
                        ));
                    }
                    Some(a)
                } else {
                    None
                };
                let align = self.align_or(ops[i], vty, true)?;
                (
                    Op::Store {
                        ptr,
                        value,
                        align,
                        volatile: ops[i + 1] != 0,
                        atomic,
                    },
                    void,
                )
            }
            // EXTRACTVAL: [opty, opval, idx...]; INSERTVAL: [opty, opval, opty, opval, idx...]
            26 | 27 => {
                let aggregate = self.pair(ops, &mut i, b, f)?;
                let at = self.vt(b, f, aggregate);
                let value = if code == 27 {
                    Some(self.pair(ops, &mut i, b, f)?)
                } else {
                    None
                };
                let indices: Vec<u64> = ops[i..].to_vec();
                if indices.is_empty() {
                    return Err(self.fail("an aggregate operation without indices"));
                }
                let mut t = at;
                for &k in &indices {
                    t = match self.m.ty(t) {
                        Type::Struct {
                            body: Some(body), ..
                        } => *body
                            .get(k as usize)
                            .ok_or_else(|| self.fail(format!("structure index {k}")))?,
                        Type::Array { len, elem } if k < *len => *elem,
                        _ => return Err(self.fail(format!("index {k} into this type"))),
                    };
                }
                match value {
                    None => (Op::ExtractValue { aggregate, indices }, t),
                    Some(v) => {
                        if self.vt(b, f, v) != t {
                            return Err(self
                                .fail("insertvalue of a value of another type than the element"));
                        }
                        (
                            Op::InsertValue {
                                aggregate,
                                value: v,
                                indices,
                            },
                            at,
                        )
                    }
                }
            }
            // CALL: [paramattrs, cc, fmf?, fnty?, fnid, args...]
            34 => {
                rest(0, 2, self)?;
                let attrs = self.attrs(ops[0])?;
                let cc_info = ops[1];
                i = 2;
                let fmf = if cc_info >> 17 & 1 != 0 {
                    rest(i, 1, self)?;
                    i += 1;
                    ops[i - 1]
                } else {
                    0
                };
                let explicit = if cc_info >> 15 & 1 != 0 {
                    rest(i, 1, self)?;
                    i += 1;
                    Some(self.ty(ops[i - 1])?)
                } else {
                    None
                };
                let callee = self.pair(ops, &mut i, b, f)?;
                let (pointee, _) = self
                    .pointee(self.vt(b, f, callee))
                    .map_err(|_| self.fail("a callee that is not a pointer"))?;
                let fn_ty = explicit.unwrap_or(pointee);
                if fn_ty != pointee {
                    return Err(self.fail("a call whose type is not its callee's"));
                }
                let Type::Function {
                    vararg,
                    ret,
                    params,
                } = self.m.ty(fn_ty)
                else {
                    return Err(self.fail("a callee that is not a function"));
                };
                let (vararg, ret) = (*vararg, *ret);
                let mut args = Vec::with_capacity(params.len());
                let mut mds = Vec::new();
                for &p in params {
                    match self.m.ty(p) {
                        Type::Metadata => {
                            let raw = *ops
                                .get(i)
                                .ok_or_else(|| self.fail("an argument is missing"))?;
                            i += 1;
                            let id = self.operand_id(raw, b, f);
                            let md = self.md_id(id as u64)?;
                            mds.push(md);
                            args.push(Operand::Metadata(md));
                        }
                        Type::Label => return Err(self.fail("label arguments are not supported")),
                        _ => args.push(Operand::Value(self.typed(ops, &mut i, p, b, f)?)),
                    }
                }
                self.md_pending.extend(mds);
                if vararg {
                    while i < ops.len() {
                        args.push(Operand::Value(self.pair(ops, &mut i, b, f)?));
                    }
                } else if i != ops.len() {
                    return Err(self.fail("a call of more arguments than its function takes"));
                }
                let tail = if cc_info & (1 << 16) != 0 {
                    "notail "
                } else if cc_info & (1 << 14) != 0 {
                    "musttail "
                } else if cc_info & 1 != 0 {
                    "tail "
                } else {
                    ""
                };
                if fmf != 0 && !self.m.ty(self.scalar_of(ret)).is_float() {
                    return Err(
                        self.fail("fast-math flags on a call that does not return floating point")
                    );
                }
                (
                    Op::Call {
                        attrs,
                        cc: (cc_info & 0x7FF) >> 1,
                        tail,
                        fmf,
                        fn_ty,
                        callee,
                        args,
                    },
                    ret,
                )
            }
            // FENCE: [ordering, ssid]
            36 => {
                rest(0, 2, self)?;
                (Op::Fence(self.atomic(ops[0], ops[1])?), void)
            }
            // CMPXCHG_OLD: [ptrty, ptr, cmp, new, vol, success, ssid(, failure, weak)];
            // CMPXCHG: [ptrty, ptr, cmpty, cmp, new, vol, success, ssid, failure, weak(, align)]
            37 | 46 => {
                let ptr = self.pair(ops, &mut i, b, f)?;
                let (pointee, _) = self.pointee(self.vt(b, f, ptr))?;
                let cmp = if code == 46 {
                    self.pair(ops, &mut i, b, f)?
                } else {
                    self.typed(ops, &mut i, pointee, b, f)?
                };
                let ct = self.vt(b, f, cmp);
                let new = self.typed(ops, &mut i, ct, b, f)?;
                rest(i, 3, self)?;
                if ops.len() < i + 5 {
                    return Err(self.fail("cmpxchg of before LLVM 3.5 is not supported"));
                }
                let success = self.atomic(ops[i + 1], ops[i + 2])?;
                let failure = codes::ordering(ops[i + 3])
                    .ok_or_else(|| self.fail(format!("ordering {}", ops[i + 3])))?;
                let align = match ops.get(i + 5) {
                    Some(&e) if e != 0 => self.alignment(e)?,
                    _ => self
                        .layout
                        .store_size(&self.m, ct)
                        .ok_or_else(|| self.fail("cmpxchg of a type without a size"))?,
                };
                let i1 = self.intern(Type::Int(1));
                let ty = self.intern(Type::Struct {
                    name: None,
                    literal: true,
                    packed: false,
                    body: Some(vec![ct, i1]),
                });
                (
                    Op::CmpXchg {
                        ptr,
                        cmp,
                        new,
                        volatile: ops[i] != 0,
                        weak: ops[i + 4] != 0,
                        success,
                        failure,
                        align,
                    },
                    ty,
                )
            }
            // ATOMICRMW_OLD: [ptrty, ptr, val, op, vol, ordering, ssid(, align)];
            // ATOMICRMW: [ptrty, ptr, valty, val, op, vol, ordering, ssid, align]
            38 | 59 => {
                let ptr = self.pair(ops, &mut i, b, f)?;
                let (pointee, _) = self.pointee(self.vt(b, f, ptr))?;
                let value = if code == 59 {
                    self.pair(ops, &mut i, b, f)?
                } else {
                    self.typed(ops, &mut i, pointee, b, f)?
                };
                let vt = self.vt(b, f, value);
                rest(i, 4, self)?;
                let op = *RMW
                    .get(ops[i] as usize)
                    .ok_or_else(|| self.fail(format!("atomicrmw operation {}", ops[i])))?;
                let atomic = self.atomic(ops[i + 2], ops[i + 3])?;
                let align = match ops.get(i + 4) {
                    Some(&e) if e != 0 => self.alignment(e)?,
                    _ => self
                        .layout
                        .store_size(&self.m, vt)
                        .ok_or_else(|| self.fail("atomicrmw of a type without a size"))?,
                };
                (
                    Op::AtomicRmw {
                        op,
                        ptr,
                        value,
                        volatile: ops[i + 1] != 0,
                        atomic,
                        align,
                    },
                    vt,
                )
            }
            _ => return Err(self.fail("this instruction is not supported")),
        })
    }
}
