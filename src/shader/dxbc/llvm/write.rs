//! [`Module`] to LLVM's textual IR, as LLVM 14's `AssemblyWriter` writes it
//! (https://llvm.org/docs/LangRef.html): which named types it lists and in what order
//! (`TypeFinder`), how it numbers unnamed values, metadata and attribute groups
//! (`SlotTracker`), and how each type, constant, instruction and metadata node reads.
//! Nothing recurses deeper than the reader allowed, and metadata graphs are walked with
//! explicit stacks.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::fmt::Write;

use super::codes::{self, ATTR_KINDS};
use super::float::{self, Format};
use super::ir::*;
use super::read::const_operands;

/// What aggregate constants reduce to when LLVM makes them (`ConstantArray::get` and
/// kin): all null is `zeroinitializer`, all undef `undef`, all poison `poison`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Canon {
    Null,
    Undef,
    Poison,
    Other,
}

/// The module's text, or `Err(limit)` where it would be longer than `limit` bytes
/// (constants print inline where they are used, so a few bytes of bitcode can describe
/// an aggregate of astronomical text; LLVM would print it, this writer stops).
pub fn write(m: &Module, module_id: &str, limit: usize) -> Result<String, usize> {
    let mut w = Writer::new(m);
    w.limit = limit;
    w.module(module_id);
    if w.out.len() > limit {
        return Err(limit);
    }
    Ok(w.out)
}

struct Writer<'m> {
    m: &'m Module,
    out: String,
    named_types: Vec<TypeId>,
    numbered: HashMap<TypeId, u32>,
    global_slots: HashMap<ValueId, u32>,
    md_slots: HashMap<MdId, u32>,
    md_order: Vec<MdId>,
    attr_groups: Vec<AttrSet>,
    attr_index: HashMap<AttrSet, u32>,
    /// The function being written: its body, and its unnamed values' and blocks' numbers.
    body: Option<&'m Body>,
    local_slots: Vec<Option<u32>>,
    block_slots: Vec<Option<u32>>,
    canon_module: HashMap<ValueId, Canon>,
    canon_local: HashMap<ValueId, Canon>,
    /// The longest text written: past it, writing stops.
    limit: usize,
}

/// `printEscapedString`: `\` doubled, what is not printable ASCII or is `"` as `\XX`.
fn escaped(out: &mut String, bytes: &[u8]) {
    for &c in bytes {
        if c == b'\\' {
            out.push_str("\\\\");
        } else if (0x20..0x7F).contains(&c) && c != b'"' {
            out.push(c as char);
        } else {
            let _ = write!(out, "\\{c:02X}");
        }
    }
}

/// `PrintLLVMName`: the prefix, then the name as it is where it is made of letters,
/// digits, `-`, `.` and `_` and does not start with a digit, else quoted and escaped.
fn llvm_name(out: &mut String, prefix: &str, name: &[u8]) {
    out.push_str(prefix);
    let plain = !name.is_empty()
        && !name[0].is_ascii_digit()
        && name
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.' || c == b'_');
    if plain {
        out.push_str(std::str::from_utf8(name).expect("ASCII"));
    } else {
        out.push('"');
        escaped(out, name);
        out.push('"');
    }
}

/// `printMetadataIdentifier`: names of named metadata and metadata kinds.
fn md_identifier(out: &mut String, name: &[u8]) {
    if name.is_empty() {
        out.push_str("<empty name> ");
        return;
    }
    for (i, &c) in name.iter().enumerate() {
        let ok = c.is_ascii_alphanumeric() && !(i == 0 && c.is_ascii_digit())
            || matches!(c, b'-' | b'$' | b'.' | b'_');
        if ok {
            out.push(c as char);
        } else {
            let _ = write!(out, "\\{c:02X}");
        }
    }
}

/// Fast-math flags as LLVM 14 reads the bitcode's (`getDecodedFastMathFlags`) and
/// writes them: ` fast` for all seven, else each one.
fn fast_math(out: &mut String, raw: u64) {
    // reassoc nnan ninf nsz arcp contract afn
    let mut f = [false; 7];
    if raw & 1 != 0 {
        f = [true; 7];
    }
    for (bit, i) in [(7, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6)] {
        if raw & (1 << bit) != 0 {
            f[i] = true;
        }
    }
    if f.iter().all(|&x| x) {
        out.push_str(" fast");
        return;
    }
    for (set, name) in f
        .iter()
        .zip(["reassoc", "nnan", "ninf", "nsz", "arcp", "contract", "afn"])
    {
        if *set {
            out.push(' ');
            out.push_str(name);
        }
    }
}

fn attr_text(a: &Attr, in_group: bool, w: &Writer<'_>) -> String {
    match a {
        Attr::Str { key, value } => {
            let mut s = String::from("\"");
            s.push_str(&String::from_utf8_lossy(key));
            s.push('"');
            if !value.is_empty() {
                s.push_str("=\"");
                escaped(&mut s, value);
                s.push('"');
            }
            s
        }
        Attr::Kind { order, value, ty } => {
            let k = ATTR_KINDS
                .iter()
                .find(|k| k.order == *order)
                .expect("a kind of the table");
            match (k.name, k.class) {
                ("align", _) if in_group => format!("align={value}"),
                ("align", _) => format!("align {value}"),
                ("alignstack", _) if in_group => format!("alignstack={value}"),
                ("alignstack", _) => format!("alignstack({value})"),
                ("allocsize", _) => {
                    let elem = value >> 32;
                    let num = value & 0xFFFF_FFFF;
                    if num == 0xFFFF_FFFF {
                        format!("allocsize({elem})")
                    } else {
                        format!("allocsize({elem},{num})")
                    }
                }
                ("vscale_range", _) => {
                    format!("vscale_range({},{})", value >> 32, value & 0xFFFF_FFFF)
                }
                (name, codes::AttrClass::Int) => format!("{name}({value})"),
                (name, codes::AttrClass::Type) => match ty {
                    Some(t) => {
                        let mut s = format!("{name}(");
                        w.ty_into(&mut s, *t);
                        s.push(')');
                        s
                    }
                    None => name.to_string(),
                },
                (name, codes::AttrClass::Enum) => name.to_string(),
            }
        }
    }
}

impl<'m> Writer<'m> {
    fn new(m: &'m Module) -> Writer<'m> {
        let mut w = Writer {
            m,
            out: String::with_capacity(64 << 10),
            named_types: Vec::new(),
            numbered: HashMap::default(),
            global_slots: HashMap::default(),
            md_slots: HashMap::default(),
            md_order: Vec::new(),
            attr_groups: Vec::new(),
            attr_index: HashMap::default(),
            body: None,
            local_slots: Vec::new(),
            block_slots: Vec::new(),
            canon_module: HashMap::default(),
            canon_local: HashMap::default(),
            limit: usize::MAX,
        };
        w.find_types();
        w.module_slots();
        w
    }

    fn functions(&self) -> impl Iterator<Item = &'m Function> + 'm {
        let m = self.m;
        m.function_order
            .iter()
            .map(move |&f| &m.functions[f as usize])
    }

    fn value(&self, id: ValueId) -> &'m Value {
        let module = self.m.values.len();
        let i = id as usize;
        if i < module {
            &self.m.values[i]
        } else {
            &self
                .body
                .expect("a function's value outside a function")
                .values[i - module]
        }
    }

    // ------------------------------------------------------------ TypeFinder

    fn find_types(&mut self) {
        let m = self.m;
        let mut f = Finder {
            m,
            canon_module: HashMap::default(),
            canon_local: HashMap::default(),
            types: vec![false; m.types.len()],
            structs: Vec::new(),
            constants: HashSet::default(),
            local_constants: HashSet::default(),
            metadata: HashSet::default(),
            body: None,
        };
        for g in &m.globals {
            f.ty(m.values[g.value as usize].ty);
            if let Some(init) = g.init {
                f.value(init);
            }
        }
        for func in self.functions().collect::<Vec<_>>() {
            f.ty(m.values[func.value as usize].ty);
            let Some(body) = &func.body else { continue };
            f.body = Some(body);
            f.canon_local.clear();
            f.local_constants.clear();
            // Arguments are not constants: nothing to find in them.
            for block in &body.blocks {
                for inst in &block.insts {
                    f.ty(inst.ty);
                    for op in operands(&inst.op) {
                        match op {
                            Operand::Value(v) => f.value(v),
                            Operand::Metadata(md) => f.md_operand(md),
                        }
                    }
                    for &(_, md) in &inst.md {
                        f.node(md);
                    }
                }
            }
            f.body = None;
        }
        for (_, nodes) in &m.named {
            for &n in nodes {
                f.node(n);
            }
        }
        let structs = std::mem::take(&mut f.structs);
        let mut next = 0;
        for t in structs {
            if let Type::Struct {
                literal: false,
                name,
                ..
            } = m.ty(t)
            {
                match name {
                    Some(n) if !n.is_empty() => self.named_types.push(t),
                    _ => {
                        self.numbered.insert(t, next);
                        next += 1;
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------ SlotTracker

    fn module_slots(&mut self) {
        let m = self.m;
        let mut next = 0;
        for g in &m.globals {
            if m.values[g.value as usize].name.is_none() {
                self.global_slots.insert(g.value, next);
                next += 1;
            }
        }
        for &n in m.named.iter().flat_map(|(_, nodes)| nodes) {
            self.md_slot(n);
        }
        for f in self.functions().collect::<Vec<_>>() {
            if m.values[f.value as usize].name.is_none() {
                self.global_slots.insert(f.value, next);
                next += 1;
            }
            if !f.attrs.function.is_empty() {
                self.attr_slot(&f.attrs.function);
            }
        }
    }

    fn attr_slot(&mut self, set: &AttrSet) -> u32 {
        if let Some(&n) = self.attr_index.get(set) {
            return n;
        }
        let n = self.attr_groups.len() as u32;
        self.attr_groups.push(set.clone());
        self.attr_index.insert(set.clone(), n);
        n
    }

    /// `CreateMetadataSlot`: the node, then the nodes it holds, depth first.
    fn md_slot(&mut self, root: MdId) {
        if !matches!(
            self.m.metadata.get(root as usize),
            Some(Metadata::Node { .. })
        ) {
            return;
        }
        if self.md_slots.contains_key(&root) {
            return;
        }
        self.md_slots.insert(root, self.md_order.len() as u32);
        self.md_order.push(root);
        walk_md(self.m, root, |op, md| {
            let fresh = matches!(md, Metadata::Node { .. }) && !self.md_slots.contains_key(&op);
            if fresh {
                self.md_slots.insert(op, self.md_order.len() as u32);
                self.md_order.push(op);
            }
            fresh
        });
    }

    /// `SlotTracker::processFunction`: metadata first, then unnamed arguments, blocks
    /// and results in order, and call sites' attribute groups.
    fn function_slots(&mut self, f: &'m Function) {
        self.local_slots.clear();
        self.block_slots.clear();
        self.canon_local.clear();
        let Some(body) = &f.body else { return };
        let intrinsic = |callee: ValueId| {
            self.m.values[callee as usize]
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with(b"llvm."))
        };
        let mut mds = Vec::new();
        for block in &body.blocks {
            for inst in &block.insts {
                if let Op::Call { callee, args, .. } = &inst.op {
                    if intrinsic(*callee) {
                        for a in args {
                            if let Operand::Metadata(md) = a {
                                mds.push(*md);
                            }
                        }
                    }
                }
                for (_, md) in sorted_md(&inst.md) {
                    mds.push(md);
                }
            }
        }
        for md in mds {
            self.md_slot(md);
        }
        self.local_slots = vec![None; body.values.len()];
        self.block_slots = vec![None; body.blocks.len()];
        let module = self.m.values.len() as u32;
        let mut next = 0;
        for (i, v) in body.values.iter().enumerate() {
            if matches!(v.kind, ValueKind::Argument) && v.name.is_none() {
                self.local_slots[i] = Some(next);
                next += 1;
            }
        }
        for (bi, block) in body.blocks.iter().enumerate() {
            if block.name.is_none() {
                self.block_slots[bi] = Some(next);
                next += 1;
            }
            for inst in &block.insts {
                if let Some(v) = inst.value {
                    let i = (v - module) as usize;
                    if body.values[i].name.is_none() {
                        self.local_slots[i] = Some(next);
                        next += 1;
                    }
                }
                if let Op::Call { attrs, .. } = &inst.op {
                    if !attrs.function.is_empty() {
                        self.attr_slot(&attrs.function);
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------ types

    fn over(&self) -> bool {
        self.out.len() > self.limit
    }

    fn ty(&mut self, t: TypeId) {
        if self.over() {
            return;
        }
        let mut s = std::mem::take(&mut self.out);
        self.ty_into(&mut s, t);
        self.out = s;
    }

    fn ty_into(&self, out: &mut String, t: TypeId) {
        match self.m.ty(t) {
            Type::Void => out.push_str("void"),
            Type::Half => out.push_str("half"),
            Type::BFloat => out.push_str("bfloat"),
            Type::Float => out.push_str("float"),
            Type::Double => out.push_str("double"),
            Type::X86Fp80 => out.push_str("x86_fp80"),
            Type::Fp128 => out.push_str("fp128"),
            Type::PpcFp128 => out.push_str("ppc_fp128"),
            Type::Label => out.push_str("label"),
            Type::Metadata => out.push_str("metadata"),
            Type::X86Mmx => out.push_str("x86_mmx"),
            Type::X86Amx => out.push_str("x86_amx"),
            Type::Token => out.push_str("token"),
            Type::Int(w) => {
                let _ = write!(out, "i{w}");
            }
            Type::Function {
                vararg,
                ret,
                params,
            } => {
                self.ty_into(out, *ret);
                out.push_str(" (");
                for (i, p) in params.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.ty_into(out, *p);
                }
                if *vararg {
                    if !params.is_empty() {
                        out.push_str(", ");
                    }
                    out.push_str("...");
                }
                out.push(')');
            }
            Type::Struct { literal: true, .. } => self.struct_body(out, t),
            Type::Struct { name, .. } => match name {
                Some(n) if !n.is_empty() => llvm_name(out, "%", n),
                _ => match self.numbered.get(&t) {
                    Some(n) => {
                        let _ = write!(out, "%{n}");
                    }
                    None => {
                        let _ = write!(out, "%\"type {t}\"");
                    }
                },
            },
            Type::Pointer { pointee, space } => {
                self.ty_into(out, *pointee);
                if *space != 0 {
                    let _ = write!(out, " addrspace({space})");
                }
                out.push('*');
            }
            Type::Array { len, elem } => {
                let _ = write!(out, "[{len} x ");
                self.ty_into(out, *elem);
                out.push(']');
            }
            Type::Vector { len, elem } => {
                let _ = write!(out, "<{len} x ");
                self.ty_into(out, *elem);
                out.push('>');
            }
        }
    }

    fn struct_body(&self, out: &mut String, t: TypeId) {
        let Type::Struct { packed, body, .. } = self.m.ty(t) else {
            return;
        };
        let Some(body) = body else {
            out.push_str("opaque");
            return;
        };
        if *packed {
            out.push('<');
        }
        if body.is_empty() {
            out.push_str("{}");
        } else {
            out.push_str("{ ");
            for (i, e) in body.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                self.ty_into(out, *e);
            }
            out.push_str(" }");
        }
        if *packed {
            out.push('>');
        }
    }

    // ------------------------------------------------------------ constants

    fn canon(&mut self, id: ValueId) -> Canon {
        let local = id as usize >= self.m.values.len();
        let memo = if local {
            &mut self.canon_local
        } else {
            &mut self.canon_module
        };
        canon(self.m, self.body, memo, id)
    }

    /// A value written as an operand (`WriteAsOperandInternal`), without its type.
    fn operand(&mut self, id: ValueId) {
        let v = self.value(id);
        match &v.kind {
            ValueKind::Global(_) | ValueKind::Function(_) => match &v.name {
                Some(n) => llvm_name(&mut self.out, "@", n),
                None => {
                    let slot = self.global_slots.get(&id).copied();
                    match slot {
                        Some(s) => {
                            let _ = write!(self.out, "@{s}");
                        }
                        None => self.out.push_str("<badref>"),
                    }
                }
            },
            ValueKind::Argument | ValueKind::Inst | ValueKind::Pending => match &v.name {
                Some(n) => llvm_name(&mut self.out, "%", n),
                None => {
                    let i = id as usize - self.m.values.len();
                    match self.local_slots.get(i).copied().flatten() {
                        Some(s) => {
                            let _ = write!(self.out, "%{s}");
                        }
                        None => self.out.push_str("<badref>"),
                    }
                }
            },
            ValueKind::Const(_) => self.constant(id),
        }
    }

    /// An operand with its type before it.
    fn typed(&mut self, id: ValueId) {
        let t = self.value(id).ty;
        self.ty(t);
        self.out.push(' ');
        self.operand(id);
    }

    fn block_ref(&mut self, b: u32) {
        let body = self.body.expect("in a function");
        match &body.blocks[b as usize].name {
            Some(n) => llvm_name(&mut self.out, "%", n),
            None => {
                let s = self.block_slots[b as usize].expect("numbered");
                let _ = write!(self.out, "%{s}");
            }
        }
    }

    fn int_text(&mut self, ty: TypeId, v: i128) {
        if matches!(self.m.ty(ty), Type::Int(1)) {
            self.out.push_str(if v != 0 { "true" } else { "false" });
        } else {
            let _ = write!(self.out, "{v}");
        }
    }

    fn float_text(&mut self, ty: TypeId, bits: u128) {
        let format = match self.m.ty(ty) {
            Type::Half => Format::Half,
            Type::BFloat => Format::BFloat,
            Type::Float => Format::Single,
            _ => Format::Double,
        };
        self.out.push_str(&float::constant(bits, format));
    }

    /// An element of raw data (`CST_CODE_DATA`, strings) of type `elem`.
    fn data_element(&mut self, elem: TypeId, raw: u64) {
        match *self.m.ty(elem) {
            Type::Int(w) => {
                let v = ((raw as i128) << (128 - w)) >> (128 - w);
                self.int_text(elem, v);
            }
            _ => self.float_text(elem, raw as u128),
        }
    }

    fn constant(&mut self, id: ValueId) {
        if self.over() {
            return;
        }
        let v = self.value(id);
        let ty = v.ty;
        let ValueKind::Const(c) = &v.kind else {
            unreachable!("a constant")
        };
        let t = self.m.ty(ty);
        let aggregate = matches!(
            t,
            Type::Struct { .. } | Type::Array { .. } | Type::Vector { .. }
        );
        if aggregate {
            match self.canon(id) {
                Canon::Null => return self.out.push_str("zeroinitializer"),
                Canon::Undef => return self.out.push_str("undef"),
                Canon::Poison => return self.out.push_str("poison"),
                Canon::Other => {}
            }
        }
        match c {
            Const::Null => match t {
                Type::Int(_) => self.int_text(ty, 0),
                Type::Pointer { .. } => self.out.push_str("null"),
                Type::Token => self.out.push_str("none"),
                t if t.is_float() => self.float_text(ty, 0),
                _ => self.out.push_str("zeroinitializer"),
            },
            Const::Undef => self.out.push_str("undef"),
            Const::Poison => self.out.push_str("poison"),
            Const::Int(n) => self.int_text(ty, *n),
            Const::Float(bits) => self.float_text(ty, *bits),
            Const::Data(data) => {
                let (open, close, elem) = match *t {
                    Type::Array { elem, .. } => ('[', ']', elem),
                    Type::Vector { elem, .. } => ('<', '>', elem),
                    _ => unreachable!("data of arrays and vectors"),
                };
                if open == '[' && matches!(self.m.ty(elem), Type::Int(8)) {
                    let bytes: Vec<u8> = data.iter().map(|&b| b as u8).collect();
                    self.out.push_str("c\"");
                    escaped(&mut self.out, &bytes);
                    self.out.push('"');
                    return;
                }
                self.out.push(open);
                for (i, &d) in data.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.ty(elem);
                    self.out.push(' ');
                    self.data_element(elem, d);
                }
                self.out.push(close);
            }
            Const::Aggregate(elems) => match t.clone() {
                Type::Array { elem, .. } => {
                    // An array of i8 integers is a string (`ConstantDataArray`).
                    if matches!(self.m.ty(elem), Type::Int(8))
                        && elems.iter().all(|&e| {
                            matches!(
                                self.value(e).kind,
                                ValueKind::Const(Const::Int(_) | Const::Null)
                            )
                        })
                    {
                        let bytes: Vec<u8> = elems
                            .iter()
                            .map(|&e| match self.value(e).kind {
                                ValueKind::Const(Const::Int(n)) => n as u8,
                                _ => 0,
                            })
                            .collect();
                        self.out.push_str("c\"");
                        escaped(&mut self.out, &bytes);
                        self.out.push('"');
                        return;
                    }
                    self.elements('[', ']', elems);
                }
                Type::Vector { .. } => self.elements('<', '>', elems),
                Type::Struct { packed, .. } => {
                    if packed {
                        self.out.push('<');
                    }
                    self.out.push('{');
                    if !elems.is_empty() {
                        self.out.push(' ');
                        for (i, &e) in elems.iter().enumerate() {
                            if i > 0 {
                                self.out.push_str(", ");
                            }
                            self.typed(e);
                        }
                        self.out.push(' ');
                    }
                    self.out.push('}');
                    if packed {
                        self.out.push('>');
                    }
                }
                _ => unreachable!("aggregates of arrays, vectors and structures"),
            },
            Const::Expr(e) => self.expr(ty, e),
        }
    }

    fn elements(&mut self, open: char, close: char, elems: &[ValueId]) {
        self.out.push(open);
        for (i, &e) in elems.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.typed(e);
        }
        self.out.push(close);
    }

    fn expr(&mut self, ty: TypeId, e: &Expr) {
        match e {
            Expr::Binary {
                opcode,
                flags,
                lhs,
                rhs,
            } => {
                self.out.push_str(opcode);
                binary_flags(&mut self.out, opcode, *flags, false);
                self.out.push_str(" (");
                self.list(&[*lhs, *rhs]);
                self.out.push(')');
            }
            Expr::Cast { opcode, value } => {
                self.out.push_str(opcode);
                self.out.push_str(" (");
                self.typed(*value);
                self.out.push_str(" to ");
                self.ty(ty);
                self.out.push(')');
            }
            Expr::Gep {
                inbounds,
                source,
                operands,
            } => {
                self.out.push_str("getelementptr");
                if *inbounds {
                    self.out.push_str(" inbounds");
                }
                self.out.push_str(" (");
                self.ty(*source);
                self.out.push_str(", ");
                self.list(operands);
                self.out.push(')');
            }
            Expr::Select { cond, then, other } => {
                self.out.push_str("select (");
                self.list(&[*cond, *then, *other]);
                self.out.push(')');
            }
            Expr::ExtractElement { vector, index } => {
                self.out.push_str("extractelement (");
                self.list(&[*vector, *index]);
                self.out.push(')');
            }
            Expr::InsertElement {
                vector,
                element,
                index,
            } => {
                self.out.push_str("insertelement (");
                self.list(&[*vector, *element, *index]);
                self.out.push(')');
            }
            Expr::Cmp {
                predicate,
                lhs,
                rhs,
            } => {
                let float = self.m.ty(scalar(self.m, self.value(*lhs).ty)).is_float();
                self.out.push_str(if float { "fcmp " } else { "icmp " });
                self.out.push_str(predicate);
                self.out.push_str(" (");
                self.list(&[*lhs, *rhs]);
                self.out.push(')');
            }
        }
    }

    // ------------------------------------------------------------ metadata

    /// A metadata operand: `!N`, `!"text"`, or a value with its type.
    fn md_ref(&mut self, md: MdId) {
        match &self.m.metadata[md as usize] {
            Metadata::Node { .. } => {
                let slot = self.md_slots.get(&md).copied();
                match slot {
                    Some(s) => {
                        let _ = write!(self.out, "!{s}");
                    }
                    None => self.out.push_str("<badref>"),
                }
            }
            Metadata::String(s) => {
                self.out.push_str("!\"");
                escaped(&mut self.out, s);
                self.out.push('"');
            }
            Metadata::Value(v) => self.typed(*v),
            Metadata::Int64Zero => self.out.push_str("i64 0"),
        }
    }

    fn md_node(&mut self, slot: u32, md: MdId) {
        let Metadata::Node { distinct, operands } = &self.m.metadata[md as usize] else {
            return;
        };
        let _ = write!(self.out, "!{slot} = ");
        if *distinct {
            self.out.push_str("distinct ");
        }
        self.out.push_str("!{");
        for (i, op) in operands.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            match op {
                None => self.out.push_str("null"),
                Some(o) => self.md_ref(*o),
            }
        }
        self.out.push_str("}\n");
    }

    fn attachments(&mut self, md: &[(u32, MdId)], separator: &str) {
        for (kind, node) in sorted_md(md) {
            self.out.push_str(separator);
            self.out.push('!');
            match self.m.kinds.get(kind as usize) {
                Some(name) => md_identifier(&mut self.out, name),
                None => {
                    let _ = write!(self.out, "<unknown kind #{kind}>");
                }
            }
            self.out.push(' ');
            self.md_ref(node);
        }
    }

    // ------------------------------------------------------------ the module

    fn module(&mut self, module_id: &str) {
        let m = self.m;
        if !module_id.is_empty() && !module_id.contains('\n') {
            let _ = writeln!(self.out, "; ModuleID = '{module_id}'");
            self.out.push_str("source_filename = \"");
            escaped(&mut self.out, module_id.as_bytes());
            self.out.push_str("\"\n");
        }
        if !m.datalayout.is_empty() {
            self.out.push_str("target datalayout = \"");
            self.out.push_str(&String::from_utf8_lossy(&m.datalayout));
            self.out.push_str("\"\n");
        }
        if !m.triple.is_empty() {
            self.out.push_str("target triple = \"");
            self.out.push_str(&String::from_utf8_lossy(&m.triple));
            self.out.push_str("\"\n");
        }
        if !m.asm.is_empty() {
            self.out.push('\n');
            let mut rest: &[u8] = &m.asm;
            loop {
                let (line, next) = match rest.iter().position(|&c| c == b'\n') {
                    Some(i) => (&rest[..i], Some(&rest[i + 1..])),
                    None => (rest, None),
                };
                self.out.push_str("module asm \"");
                escaped(&mut self.out, line);
                self.out.push_str("\"\n");
                match next {
                    Some(n) if !n.is_empty() => rest = n,
                    _ => break,
                }
            }
        }
        if !self.named_types.is_empty() || !self.numbered.is_empty() {
            self.out.push('\n');
            let mut numbered: Vec<(u32, TypeId)> =
                self.numbered.iter().map(|(&t, &n)| (n, t)).collect();
            numbered.sort_unstable();
            for (n, t) in numbered {
                let _ = write!(self.out, "%{n} = type ");
                let mut s = std::mem::take(&mut self.out);
                self.struct_body(&mut s, t);
                self.out = s;
                self.out.push('\n');
            }
            for t in self.named_types.clone() {
                let Type::Struct { name: Some(n), .. } = m.ty(t) else {
                    continue;
                };
                llvm_name(&mut self.out, "%", n);
                self.out.push_str(" = type ");
                let mut s = std::mem::take(&mut self.out);
                self.struct_body(&mut s, t);
                self.out = s;
                self.out.push('\n');
            }
        }
        if !m.globals.is_empty() {
            self.out.push('\n');
        }
        for g in &m.globals {
            self.global(g);
        }
        for f in self.functions().collect::<Vec<_>>() {
            self.out.push('\n');
            self.function(f);
        }
        if !self.attr_groups.is_empty() {
            self.out.push('\n');
            for (i, set) in self.attr_groups.clone().iter().enumerate() {
                let text: Vec<String> = set.iter().map(|a| attr_text(a, true, self)).collect();
                let _ = writeln!(self.out, "attributes #{i} = {{ {} }}", text.join(" "));
            }
        }
        if !m.named.is_empty() {
            self.out.push('\n');
        }
        for (name, nodes) in &m.named {
            self.out.push('!');
            md_identifier(&mut self.out, name);
            self.out.push_str(" = !{");
            for (i, n) in nodes.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                match self.md_slots.get(n) {
                    Some(s) => {
                        let _ = write!(self.out, "!{s}");
                    }
                    None => self.out.push_str("<badref>"),
                }
            }
            self.out.push_str("}\n");
        }
        if !self.md_order.is_empty() {
            self.out.push('\n');
            for (slot, md) in self.md_order.clone().into_iter().enumerate() {
                self.md_node(slot as u32, md);
            }
        }
    }

    fn common(&mut self, c: &Linkage, implicit_dso: bool) {
        if !c.linkage.is_empty() {
            self.out.push_str(c.linkage);
            self.out.push(' ');
        }
        let _ = implicit_dso;
        match c.visibility {
            1 => self.out.push_str("hidden "),
            2 => self.out.push_str("protected "),
            _ => {}
        }
        match c.dll {
            1 => self.out.push_str("dllimport "),
            2 => self.out.push_str("dllexport "),
            _ => {}
        }
    }

    fn global(&mut self, g: &Global) {
        self.operand(g.value);
        self.out.push_str(" = ");
        if g.init.is_none() && g.common.linkage.is_empty() {
            self.out.push_str("external ");
        }
        self.common(&g.common, true);
        match g.thread_local {
            1 => self.out.push_str("thread_local "),
            2 => self.out.push_str("thread_local(localdynamic) "),
            3 => self.out.push_str("thread_local(initialexec) "),
            4 => self.out.push_str("thread_local(localexec) "),
            _ => {}
        }
        match g.common.unnamed_addr {
            1 => self.out.push_str("unnamed_addr "),
            2 => self.out.push_str("local_unnamed_addr "),
            _ => {}
        }
        if g.space != 0 {
            let _ = write!(self.out, "addrspace({}) ", g.space);
        }
        if g.externally_initialized {
            self.out.push_str("externally_initialized ");
        }
        self.out
            .push_str(if g.constant { "constant " } else { "global " });
        self.ty(g.value_type);
        if let Some(init) = g.init {
            self.out.push(' ');
            self.operand(init);
        }
        if let Some(s) = &g.common.section {
            self.out.push_str(", section \"");
            escaped(&mut self.out, s);
            self.out.push('"');
        }
        if g.common.align != 0 {
            let _ = write!(self.out, ", align {}", g.common.align);
        }
        self.out.push('\n');
    }

    fn attr_list_text(&self, set: &[Attr]) -> String {
        set.iter()
            .map(|a| attr_text(a, false, self))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn function(&mut self, f: &'m Function) {
        let m = self.m;
        let fn_attrs: Vec<String> = f
            .attrs
            .function
            .iter()
            .filter(|a| matches!(a, Attr::Kind { .. }))
            .map(|a| attr_text(a, false, self))
            .collect();
        if !fn_attrs.is_empty() {
            let _ = writeln!(self.out, "; Function Attrs: {}", fn_attrs.join(" "));
        }
        self.body = f.body.as_ref();
        self.function_slots(f);
        self.out.push_str(if f.body.is_some() {
            "define "
        } else {
            "declare "
        });
        self.common(&f.common, false);
        if f.cc != 0 {
            self.out.push_str(&codes::calling_convention(f.cc));
            self.out.push(' ');
        }
        let Type::Function {
            vararg,
            ret,
            params,
        } = m.ty(f.ty)
        else {
            unreachable!("a function type")
        };
        if !f.attrs.ret.is_empty() {
            let t = self.attr_list_text(&f.attrs.ret);
            self.out.push_str(&t);
            self.out.push(' ');
        }
        self.ty(*ret);
        self.out.push(' ');
        self.operand(f.value);
        self.out.push('(');
        let module = m.values.len() as u32;
        for (i, &p) in params.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.ty(p);
            let attrs = f.attrs.param(i);
            if !attrs.is_empty() {
                self.out.push(' ');
                let t = self.attr_list_text(attrs);
                self.out.push_str(&t);
            }
            if f.body.is_some() {
                self.out.push(' ');
                self.operand(module + i as u32);
            }
        }
        if *vararg {
            if !params.is_empty() {
                self.out.push_str(", ");
            }
            self.out.push_str("...");
        }
        self.out.push(')');
        match f.common.unnamed_addr {
            1 => self.out.push_str(" unnamed_addr"),
            2 => self.out.push_str(" local_unnamed_addr"),
            _ => {}
        }
        if !f.attrs.function.is_empty() {
            let n = self.attr_index[&f.attrs.function];
            let _ = write!(self.out, " #{n}");
        }
        if let Some(s) = &f.common.section {
            self.out.push_str(" section \"");
            escaped(&mut self.out, s);
            self.out.push('"');
        }
        if f.common.align != 0 {
            let _ = write!(self.out, " align {}", f.common.align);
        }
        if let Some(gc) = &f.gc {
            let _ = write!(self.out, " gc \"{}\"", String::from_utf8_lossy(gc));
        }
        let Some(body) = &f.body else {
            self.out.push('\n');
            self.body = None;
            return;
        };
        self.out.push_str(" {");
        let preds = predecessors(body);
        for (bi, block) in body.blocks.iter().enumerate() {
            let line_start = self.out.len() + 1;
            let entry = bi == 0;
            if let Some(n) = &block.name {
                self.out.push('\n');
                llvm_name(&mut self.out, "", n);
                self.out.push(':');
            } else if !entry {
                self.out.push('\n');
                let _ = write!(self.out, "{}:", self.block_slots[bi].expect("numbered"));
            }
            if !entry {
                let column = self.out.len() - line_start;
                let pad = 50usize.saturating_sub(column).max(1);
                self.out.extend(std::iter::repeat(' ').take(pad));
                self.out.push(';');
                if preds[bi].is_empty() {
                    self.out.push_str(" No predecessors!");
                } else {
                    self.out.push_str(" preds = ");
                    for (i, &p) in preds[bi].iter().enumerate() {
                        if i > 0 {
                            self.out.push_str(", ");
                        }
                        self.block_ref(p);
                    }
                }
            }
            self.out.push('\n');
            for inst in &block.insts {
                if self.over() {
                    break;
                }
                self.instruction(inst);
            }
        }
        self.out.push_str("}\n");
        self.body = None;
    }

    fn instruction(&mut self, inst: &Inst) {
        self.out.push_str("  ");
        if let Some(v) = inst.value {
            self.operand(v);
            self.out.push_str(" = ");
        }
        match &inst.op {
            Op::Ret(None) => self.out.push_str("ret void"),
            Op::Ret(Some(v)) => {
                self.out.push_str("ret ");
                self.typed(*v);
            }
            Op::Br { then, other: None } => {
                self.out.push_str("br label ");
                self.block_ref(*then);
            }
            Op::Br {
                then,
                other: Some((other, cond)),
            } => {
                self.out.push_str("br ");
                self.typed(*cond);
                self.out.push_str(", label ");
                self.block_ref(*then);
                self.out.push_str(", label ");
                self.block_ref(*other);
            }
            Op::Switch {
                cond,
                default,
                cases,
            } => {
                self.out.push_str("switch ");
                self.typed(*cond);
                self.out.push_str(", label ");
                self.block_ref(*default);
                self.out.push_str(" [");
                for &(v, b) in cases {
                    self.out.push_str("\n    ");
                    self.typed(v);
                    self.out.push_str(", label ");
                    self.block_ref(b);
                }
                self.out.push_str("\n  ]");
            }
            Op::Unreachable => self.out.push_str("unreachable"),
            Op::Binary {
                opcode,
                flags,
                lhs,
                rhs,
            } => {
                self.out.push_str(opcode);
                binary_flags(&mut self.out, opcode, *flags, true);
                self.out.push(' ');
                self.typed(*lhs);
                self.out.push_str(", ");
                self.operand(*rhs);
            }
            Op::Cast { opcode, value } => {
                self.out.push_str(opcode);
                self.out.push(' ');
                self.typed(*value);
                self.out.push_str(" to ");
                self.ty(inst.ty);
            }
            Op::Gep {
                inbounds,
                source,
                operands,
            } => {
                self.out.push_str("getelementptr ");
                if *inbounds {
                    self.out.push_str("inbounds ");
                }
                self.ty(*source);
                self.out.push_str(", ");
                self.list(operands);
            }
            Op::Select { cond, then, other } => {
                self.out.push_str("select ");
                self.list(&[*cond, *then, *other]);
            }
            Op::ExtractElement { vector, index } => {
                self.out.push_str("extractelement ");
                self.list(&[*vector, *index]);
            }
            Op::InsertElement {
                vector,
                element,
                index,
            } => {
                self.out.push_str("insertelement ");
                self.list(&[*vector, *element, *index]);
            }
            Op::ShuffleVector { a, b, mask } => {
                self.out.push_str("shufflevector ");
                self.typed(*a);
                self.out.push_str(", ");
                self.typed(*b);
                self.shuffle_mask(*mask);
            }
            Op::Cmp {
                predicate,
                float,
                fmf,
                lhs,
                rhs,
            } => {
                self.out.push_str(if *float { "fcmp" } else { "icmp" });
                if *float {
                    fast_math(&mut self.out, *fmf);
                }
                self.out.push(' ');
                self.out.push_str(predicate);
                self.out.push(' ');
                self.typed(*lhs);
                self.out.push_str(", ");
                self.operand(*rhs);
            }
            Op::Phi { incoming, fmf } => {
                self.out.push_str("phi");
                if self.m.ty(scalar(self.m, inst.ty)).is_float() {
                    fast_math(&mut self.out, *fmf);
                }
                self.out.push(' ');
                self.ty(inst.ty);
                self.out.push(' ');
                for (i, &(v, b)) in incoming.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.out.push_str("[ ");
                    self.operand(v);
                    self.out.push_str(", ");
                    self.block_ref(b);
                    self.out.push_str(" ]");
                }
            }
            Op::Alloca {
                allocated,
                size,
                align,
                inalloca,
                swifterror,
            } => {
                self.out.push_str("alloca ");
                if *inalloca {
                    self.out.push_str("inalloca ");
                }
                if *swifterror {
                    self.out.push_str("swifterror ");
                }
                self.ty(*allocated);
                let size_v = self.value(*size);
                let one_i32 = matches!(self.m.ty(size_v.ty), Type::Int(32))
                    && matches!(size_v.kind, ValueKind::Const(Const::Int(1)));
                if !one_i32 {
                    self.out.push_str(", ");
                    self.typed(*size);
                }
                let _ = write!(self.out, ", align {align}");
            }
            Op::Load {
                ptr,
                align,
                volatile,
                atomic,
            } => {
                self.out.push_str("load ");
                if atomic.is_some() {
                    self.out.push_str("atomic ");
                }
                if *volatile {
                    self.out.push_str("volatile ");
                }
                self.ty(inst.ty);
                self.out.push_str(", ");
                self.typed(*ptr);
                if let Some(a) = atomic {
                    self.atomic(a);
                }
                let _ = write!(self.out, ", align {align}");
            }
            Op::Store {
                ptr,
                value,
                align,
                volatile,
                atomic,
            } => {
                self.out.push_str("store ");
                if atomic.is_some() {
                    self.out.push_str("atomic ");
                }
                if *volatile {
                    self.out.push_str("volatile ");
                }
                self.typed(*value);
                self.out.push_str(", ");
                self.typed(*ptr);
                if let Some(a) = atomic {
                    self.atomic(a);
                }
                let _ = write!(self.out, ", align {align}");
            }
            Op::ExtractValue { aggregate, indices } => {
                self.out.push_str("extractvalue ");
                self.typed(*aggregate);
                for i in indices {
                    let _ = write!(self.out, ", {i}");
                }
            }
            Op::InsertValue {
                aggregate,
                value,
                indices,
            } => {
                self.out.push_str("insertvalue ");
                self.typed(*aggregate);
                self.out.push_str(", ");
                self.typed(*value);
                for i in indices {
                    let _ = write!(self.out, ", {i}");
                }
            }
            Op::Call {
                attrs,
                cc,
                tail,
                fmf,
                fn_ty,
                callee,
                args,
            } => {
                self.out.push_str(tail);
                self.out.push_str("call");
                fast_math(&mut self.out, *fmf);
                if *cc != 0 {
                    self.out.push(' ');
                    self.out.push_str(&codes::calling_convention(*cc));
                }
                if !attrs.ret.is_empty() {
                    self.out.push(' ');
                    let t = self.attr_list_text(&attrs.ret);
                    self.out.push_str(&t);
                }
                self.out.push(' ');
                let Type::Function { vararg, ret, .. } = self.m.ty(*fn_ty) else {
                    unreachable!("a function type")
                };
                self.ty(if *vararg { *fn_ty } else { *ret });
                self.out.push(' ');
                self.operand(*callee);
                self.out.push('(');
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    let pa = attrs.param(i);
                    match a {
                        Operand::Value(v) => {
                            let t = self.value(*v).ty;
                            self.ty(t);
                            if !pa.is_empty() {
                                self.out.push(' ');
                                let t = self.attr_list_text(pa);
                                self.out.push_str(&t);
                            }
                            self.out.push(' ');
                            self.operand(*v);
                        }
                        Operand::Metadata(md) => {
                            self.out.push_str("metadata");
                            if !pa.is_empty() {
                                self.out.push(' ');
                                let t = self.attr_list_text(pa);
                                self.out.push_str(&t);
                            }
                            self.out.push(' ');
                            self.md_ref(*md);
                        }
                    }
                }
                self.out.push(')');
                if !attrs.function.is_empty() {
                    let n = self.attr_index[&attrs.function];
                    let _ = write!(self.out, " #{n}");
                }
            }
            Op::Fence(a) => {
                self.out.push_str("fence");
                self.atomic(a);
            }
            Op::CmpXchg {
                ptr,
                cmp,
                new,
                volatile,
                weak,
                success,
                failure,
                align,
            } => {
                self.out.push_str("cmpxchg ");
                if *weak {
                    self.out.push_str("weak ");
                }
                if *volatile {
                    self.out.push_str("volatile ");
                }
                self.typed(*ptr);
                self.out.push_str(", ");
                self.typed(*cmp);
                self.out.push_str(", ");
                self.typed(*new);
                self.atomic(success);
                self.out.push(' ');
                self.out.push_str(failure);
                let _ = write!(self.out, ", align {align}");
            }
            Op::AtomicRmw {
                op,
                ptr,
                value,
                volatile,
                atomic,
                align,
            } => {
                self.out.push_str("atomicrmw ");
                if *volatile {
                    self.out.push_str("volatile ");
                }
                self.out.push_str(op);
                self.out.push(' ');
                self.typed(*ptr);
                self.out.push_str(", ");
                self.typed(*value);
                self.atomic(atomic);
                let _ = write!(self.out, ", align {align}");
            }
        }
        self.attachments(&inst.md, ", ");
        self.out.push('\n');
    }

    /// Operands all of one type are written with it once, others each with its own
    /// (`PrintAllTypes`): select, store and kin always each with its own.
    fn list(&mut self, ops: &[ValueId]) {
        for (i, &o) in ops.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.typed(o);
        }
    }

    fn atomic(&mut self, a: &Atomic) {
        if a.single_thread {
            self.out.push_str(" syncscope(\"singlethread\")");
        }
        self.out.push(' ');
        self.out.push_str(a.ordering);
    }

    fn shuffle_mask(&mut self, mask: ValueId) {
        let v = self.value(mask);
        let Type::Vector { len, .. } = *self.m.ty(v.ty) else {
            return;
        };
        let elements: Vec<Option<i128>> = match &v.kind {
            ValueKind::Const(Const::Null) => vec![Some(0); len as usize],
            ValueKind::Const(Const::Undef | Const::Poison) => vec![None; len as usize],
            ValueKind::Const(Const::Data(d)) => {
                d.iter().map(|&x| Some(x as u32 as i32 as i128)).collect()
            }
            ValueKind::Const(Const::Aggregate(e)) => e
                .iter()
                .map(|&x| match self.value(x).kind {
                    ValueKind::Const(Const::Int(n)) => Some(n),
                    ValueKind::Const(Const::Null) => Some(0),
                    _ => None,
                })
                .collect(),
            _ => vec![None; len as usize],
        };
        let _ = write!(self.out, ", <{len} x i32> ");
        if elements.iter().all(|e| *e == Some(0)) {
            self.out.push_str("zeroinitializer");
        } else if elements.iter().all(|e| e.is_none()) {
            self.out.push_str("undef");
        } else {
            self.out.push('<');
            for (i, e) in elements.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                match e {
                    Some(n) => {
                        let _ = write!(self.out, "i32 {n}");
                    }
                    None => self.out.push_str("i32 undef"),
                }
            }
            self.out.push('>');
        }
    }
}

/// The flags of a binary operation: `nuw`/`nsw`, `exact`, or fast-math flags.
fn binary_flags(out: &mut String, opcode: &str, flags: u64, fast_math_allowed: bool) {
    match opcode {
        "add" | "sub" | "mul" | "shl" => {
            if flags & 1 != 0 {
                out.push_str(" nuw");
            }
            if flags & 2 != 0 {
                out.push_str(" nsw");
            }
        }
        "udiv" | "sdiv" | "lshr" | "ashr" if flags & 1 != 0 => out.push_str(" exact"),
        "fadd" | "fsub" | "fmul" | "fdiv" | "frem" if fast_math_allowed => fast_math(out, flags),
        _ => {}
    }
}

fn scalar(m: &Module, ty: TypeId) -> TypeId {
    match m.ty(ty) {
        Type::Vector { elem, .. } => *elem,
        _ => ty,
    }
}

/// Attachments in the order LLVM keeps them: by kind id, `!dbg` first.
fn sorted_md(md: &[(u32, MdId)]) -> Vec<(u32, MdId)> {
    let mut v = md.to_vec();
    v.sort_by_key(|&(k, _)| k);
    v
}

/// An instruction's operands in LLVM's operand order (what `TypeFinder` walks).
fn operands(op: &Op) -> Vec<Operand> {
    let v = |ids: &[ValueId]| ids.iter().map(|&i| Operand::Value(i)).collect::<Vec<_>>();
    match op {
        Op::Ret(None) | Op::Unreachable | Op::Fence(_) | Op::Br { other: None, .. } => Vec::new(),
        Op::Ret(Some(x)) => v(&[*x]),
        Op::Br {
            other: Some((_, c)),
            ..
        } => v(&[*c]),
        Op::Switch { cond, cases, .. } => {
            let mut o = vec![*cond];
            o.extend(cases.iter().map(|c| c.0));
            v(&o)
        }
        Op::Binary { lhs, rhs, .. } | Op::Cmp { lhs, rhs, .. } => v(&[*lhs, *rhs]),
        Op::Cast { value, .. } => v(&[*value]),
        Op::Gep { operands, .. } => v(operands),
        Op::Select { cond, then, other } => v(&[*cond, *then, *other]),
        Op::ExtractElement { vector, index } => v(&[*vector, *index]),
        Op::InsertElement {
            vector,
            element,
            index,
        } => v(&[*vector, *element, *index]),
        Op::ShuffleVector { a, b, .. } => v(&[*a, *b]),
        Op::Phi { incoming, .. } => v(&incoming.iter().map(|i| i.0).collect::<Vec<_>>()),
        Op::Alloca { size, .. } => v(&[*size]),
        Op::Load { ptr, .. } => v(&[*ptr]),
        Op::Store { ptr, value, .. } => v(&[*value, *ptr]),
        Op::ExtractValue { aggregate, .. } => v(&[*aggregate]),
        Op::InsertValue {
            aggregate, value, ..
        } => v(&[*aggregate, *value]),
        Op::Call { callee, args, .. } => {
            let mut o = args.clone();
            o.push(Operand::Value(*callee));
            o
        }
        Op::CmpXchg { ptr, cmp, new, .. } => v(&[*ptr, *cmp, *new]),
        Op::AtomicRmw { ptr, value, .. } => v(&[*ptr, *value]),
    }
}

/// Each block's predecessors as `pred_begin` lists them: the uses of the block, latest
/// first (LLVM adds a use at the head of the list); a branch sets its false target before
/// its true one, a switch its default before its cases.
fn predecessors(body: &Body) -> Vec<Vec<u32>> {
    let mut uses: Vec<Vec<u32>> = vec![Vec::new(); body.blocks.len()];
    for (bi, block) in body.blocks.iter().enumerate() {
        let Some(last) = block.insts.last() else {
            continue;
        };
        let from = bi as u32;
        match &last.op {
            Op::Br { then, other: None } => uses[*then as usize].push(from),
            Op::Br {
                then,
                other: Some((other, _)),
            } => {
                uses[*other as usize].push(from);
                uses[*then as usize].push(from);
            }
            Op::Switch { default, cases, .. } => {
                uses[*default as usize].push(from);
                for &(_, b) in cases {
                    uses[b as usize].push(from);
                }
            }
            _ => {}
        }
    }
    for u in &mut uses {
        u.reverse();
    }
    uses
}

/// What constant `id` reduces to, memoised in `memo` (module and function values apart).
fn canon(
    m: &Module,
    body: Option<&Body>,
    memo: &mut HashMap<ValueId, Canon>,
    id: ValueId,
) -> Canon {
    if let Some(&c) = memo.get(&id) {
        return c;
    }
    let module = m.values.len();
    let v = if (id as usize) < module {
        m.values.get(id as usize)
    } else {
        body.and_then(|b| b.values.get(id as usize - module))
    };
    let c = match v.map(|v| &v.kind) {
        Some(ValueKind::Const(c)) => match c {
            Const::Null | Const::Int(0) | Const::Float(0) => Canon::Null,
            Const::Undef => Canon::Undef,
            Const::Poison => Canon::Poison,
            Const::Data(d) if d.iter().all(|&x| x == 0) => Canon::Null,
            Const::Aggregate(elems) => {
                let kinds: Vec<Canon> = elems.iter().map(|&e| canon(m, body, memo, e)).collect();
                if kinds.iter().all(|&k| k == Canon::Null) {
                    Canon::Null
                } else if kinds.iter().all(|&k| k == Canon::Poison) {
                    Canon::Poison
                } else if kinds.iter().all(|&k| k == Canon::Undef) {
                    Canon::Undef
                } else {
                    Canon::Other
                }
            }
            _ => Canon::Other,
        },
        _ => Canon::Other,
    };
    memo.insert(id, c);
    c
}

/// `TypeFinder` over the module: the structures in the order it meets them.
/// Depth first over the nodes below metadata node `root`, as LLVM's slot tracker and
/// type finder walk them: each operand of a node goes to `visit` in order, and the walk
/// goes into it where `visit` says so (a node met for the first time).
fn walk_md(m: &Module, root: MdId, mut visit: impl FnMut(MdId, &Metadata) -> bool) {
    let mut stack: Vec<(MdId, usize)> = vec![(root, 0)];
    while let Some(&mut (n, ref mut next)) = stack.last_mut() {
        let Some(Metadata::Node { operands, .. }) = m.metadata.get(n as usize) else {
            stack.pop();
            continue;
        };
        let Some(&op) = operands.get(*next) else {
            stack.pop();
            continue;
        };
        *next += 1;
        let Some(op) = op else { continue };
        if let Some(md) = m.metadata.get(op as usize) {
            if visit(op, md) {
                stack.push((op, 0));
            }
        }
    }
}

struct Finder<'m> {
    m: &'m Module,
    canon_module: HashMap<ValueId, Canon>,
    canon_local: HashMap<ValueId, Canon>,
    types: Vec<bool>,
    structs: Vec<TypeId>,
    constants: HashSet<ValueId>,
    /// The current function's constants met (numbered per function).
    local_constants: HashSet<ValueId>,
    metadata: HashSet<MdId>,
    body: Option<&'m Body>,
}

impl<'m> Finder<'m> {
    fn ty(&mut self, t: TypeId) {
        if self.types[t as usize] {
            return;
        }
        self.types[t as usize] = true;
        let mut work = vec![t];
        while let Some(t) = work.pop() {
            if matches!(self.m.ty(t), Type::Struct { .. }) {
                self.structs.push(t);
            }
            for s in self.m.subtypes(t).into_iter().rev() {
                if !self.types[s as usize] {
                    self.types[s as usize] = true;
                    work.push(s);
                }
            }
        }
    }

    fn get(&self, id: ValueId) -> Option<&'m Value> {
        let module = self.m.values.len();
        let i = id as usize;
        if i < module {
            self.m.values.get(i)
        } else {
            self.body.and_then(|b| b.values.get(i - module))
        }
    }

    fn value(&mut self, id: ValueId) {
        let Some(v) = self.get(id) else { return };
        let ValueKind::Const(c) = &v.kind else { return };
        let seen = if id as usize >= self.m.values.len() {
            &mut self.local_constants
        } else {
            &mut self.constants
        };
        if !seen.insert(id) {
            return;
        }
        self.ty(v.ty);
        if let Const::Expr(Expr::Gep { source, .. }) = c {
            self.ty(*source);
        }
        // A constant LLVM reduces to zeroinitializer, undef or poison holds nothing.
        if matches!(c, Const::Aggregate(_)) {
            let local = id as usize >= self.m.values.len();
            let memo = if local {
                &mut self.canon_local
            } else {
                &mut self.canon_module
            };
            if canon(self.m, self.body, memo, id) != Canon::Other {
                return;
            }
        }
        for o in const_operands(c) {
            self.value(o);
        }
    }

    fn md_operand(&mut self, md: MdId) {
        match self.m.metadata.get(md as usize) {
            Some(Metadata::Node { .. }) => self.node(md),
            Some(Metadata::Value(v)) => self.value(*v),
            _ => {}
        }
    }

    /// `incorporateMDNode`, depth first with a stack.
    fn node(&mut self, root: MdId) {
        if !self.metadata.insert(root) {
            return;
        }
        walk_md(self.m, root, |op, md| match md {
            Metadata::Node { .. } => self.metadata.insert(op),
            Metadata::Value(v) => {
                // Only constants (`ConstantAsMetadata`) hold types worth finding.
                let module_level = (*v as usize) < self.m.values.len();
                if module_level || self.body.is_some() {
                    self.value(*v);
                }
                false
            }
            _ => false,
        });
    }
}
