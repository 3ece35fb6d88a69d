//! Bitcode to [`Module`]: the module block of LLVM 3.7 bitcode as dxc writes it (and the
//! older and newer record forms LLVM 14's reader accepts where they cost nothing), read
//! with the meanings LLVM 14's `BitcodeReader` gives the records: value numbering,
//! relative operands, forward references, the alignments it fills in.
//!
//! Every count is bounded by the bits left before anything is allocated for it, every
//! reference is checked before it is followed, and an error names the bit offset, the
//! block and the record, so damaged bitcode is an error and never a panic.

mod inst;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::super::bitstream::{signed, Entry, Reader};
use super::codes::{self, *};
use super::ir::*;
use super::layout::Layout;
use super::IrError;

/// Limits on nesting that printing recurses through.
const MAX_TYPE_DEPTH: u32 = 64;
const MAX_CONST_DEPTH: u32 = 256;
/// The longest text one type may print as.
const MAX_TYPE_TEXT: u64 = 1 << 16;

type Result<T> = std::result::Result<T, IrError>;

struct Ctx<'a> {
    r: Reader<'a>,
    m: Module,
    layout: Layout,
    /// Where the record or block being read starts, and which it is.
    at: usize,
    block: u32,
    code: Option<u32>,
    /// `MODULE_CODE_VERSION` ≥ 1: function operands are relative to the value number.
    relative: bool,
    /// Interned structural types (everything but identified structures).
    interned: HashMap<Type, TypeId>,
    struct_names: HashSet<Vec<u8>>,
    struct_unique: u32,
    groups: HashMap<u64, Vec<(u64, AttrSet)>>,
    lists: Vec<std::rc::Rc<AttrList>>,
    sections: Vec<Vec<u8>>,
    gcs: Vec<Vec<u8>>,
    /// Bitcode metadata kind id → context kind id.
    kinds: HashMap<u64, u32>,
    /// Metadata ids of the module level; a function's own follow them.
    module_md: u32,
    /// Where the current function's own metadata start in `Module::metadata`.
    local_md: u32,
    /// Functions with bodies, in the order their blocks come.
    bodies: Vec<u32>,
    next_body: usize,
    /// (value, expected type) pairs to check once the values they name exist.
    pending_types: Vec<(ValueId, TypeId)>,
    md_pending: Vec<MdId>,
    /// Whether debug locations were met (printed only with debug info, which this reader
    /// does not print).
    debug_locs: bool,
    global_names: HashSet<Vec<u8>>,
    global_unique: u32,
    /// How deep each module value nests (0 for what is not a constant).
    module_depth: Vec<u32>,
    /// The operands of the record being read: one buffer for them all.
    buf: Vec<u64>,
}

/// Read `bitcode` (the bytes after the DXIL program header).
pub fn read(bitcode: &[u8]) -> Result<Module> {
    let r = Reader::new(bitcode).map_err(|e| IrError::new(0, "the bitcode".into(), e))?;
    let mut c = Ctx {
        r,
        m: Module {
            types: Vec::new(),
            triple: Vec::new(),
            datalayout: Vec::new(),
            asm: Vec::new(),
            values: Vec::new(),
            globals: Vec::new(),
            functions: Vec::new(),
            function_order: Vec::new(),
            metadata: Vec::new(),
            named: Vec::new(),
            kinds: FIXED_MD_KINDS
                .iter()
                .map(|k| k.as_bytes().to_vec())
                .collect(),
        },
        layout: Layout::default(),
        at: 0,
        block: u32::MAX,
        code: None,
        relative: false,
        interned: HashMap::default(),
        struct_names: HashSet::default(),
        struct_unique: 0,
        groups: HashMap::default(),
        lists: Vec::new(),
        sections: Vec::new(),
        gcs: Vec::new(),
        kinds: HashMap::default(),
        module_md: 0,
        local_md: 0,
        bodies: Vec::new(),
        next_body: 0,
        pending_types: Vec::new(),
        md_pending: Vec::new(),
        debug_locs: false,
        global_names: HashSet::default(),
        global_unique: 0,
        module_depth: Vec::new(),
        buf: Vec::new(),
    };
    let mut seen_module = false;
    loop {
        c.at = c.r.bit();
        match c.entry()? {
            None => break,
            Some(Entry::Enter(MODULE)) if !seen_module => {
                seen_module = true;
                c.module()?;
            }
            Some(Entry::Enter(_)) => c.skip()?,
            Some(Entry::End) => {}
            Some(Entry::Record { .. }) => {}
        }
    }
    if !seen_module {
        return Err(c.fail("the bitcode holds no module block"));
    }
    let dbg = super::upgrade::debug_info_version(&c.m);
    if c.debug_locs && dbg == Some(3) {
        return Err(c.fail("debug locations (debug info is not printed by this reader)"));
    }
    super::upgrade::upgrade(&mut c.m, dbg == Some(3));
    Ok(c.m)
}

fn text(ops: &[u64]) -> Vec<u8> {
    ops.iter().map(|&c| c as u8).collect()
}

impl Ctx<'_> {
    fn fail(&self, message: impl Into<String>) -> IrError {
        let record = match self.code {
            Some(code) => format!(
                "{} in {}",
                codes::record_name(self.block, code),
                codes::block_name(self.block)
            ),
            None => codes::block_name(self.block),
        };
        IrError::new(self.at, record, message.into())
    }

    fn entry(&mut self) -> Result<Option<Entry>> {
        self.at = self.r.bit();
        self.code = None;
        let e = self.r.entry().map_err(|e| self.fail(e))?;
        if let Some(Entry::Record { code }) = e {
            self.code = Some(code);
        }
        Ok(e)
    }

    /// The last record's operands, in the shared buffer (give it back with
    /// [`Ctx::give`]).
    fn take(&mut self) -> Vec<u64> {
        let mut ops = std::mem::take(&mut self.buf);
        ops.clear();
        ops.extend_from_slice(self.r.ops());
        ops
    }

    fn give(&mut self, ops: Vec<u64>) {
        self.buf = ops;
    }

    fn skip(&mut self) -> Result<()> {
        self.r.skip().map_err(|e| self.fail(e))
    }

    /// The code of the next record of the block being read, sub-blocks passed over;
    /// `None` at the block's end. `block` names it when the bitcode ends first.
    fn next_record(&mut self, block: &str) -> Result<Option<u32>> {
        loop {
            match self.entry()? {
                None => return Err(self.fail(format!("{block} has no end"))),
                Some(Entry::End) => return Ok(None),
                Some(Entry::Enter(_)) => self.skip()?,
                Some(Entry::Record { code }) => return Ok(Some(code)),
            }
        }
    }

    /// The records of the block just entered, sub-blocks passed over.
    fn each_record(
        &mut self,
        mut f: impl FnMut(&mut Self, u32, &[u64]) -> Result<()>,
    ) -> Result<()> {
        let outer = self.block;
        self.block = self.r.block();
        while let Some(code) = self.next_record("the block")? {
            let ops = self.take();
            f(self, code, &ops)?;
            self.give(ops);
        }
        self.block = outer;
        self.code = None;
        Ok(())
    }

    fn module(&mut self) -> Result<()> {
        self.block = MODULE;
        loop {
            match self.entry()? {
                None => return Err(self.fail("the module block has no end")),
                Some(Entry::End) => break,
                Some(Entry::Enter(id)) => {
                    match id {
                        PARAMATTR_GROUP => self.attribute_groups()?,
                        PARAMATTR => self.attribute_lists()?,
                        TYPES => self.types()?,
                        CONSTANTS => {
                            self.constants(None)?;
                            self.check_constants(0)?;
                        }
                        METADATA => {
                            self.metadata(None)?;
                            self.module_md = self.m.metadata.len() as u32;
                        }
                        METADATA_KIND => self.metadata_kinds()?,
                        VALUE_SYMTAB => self.module_symbols()?,
                        FUNCTION => self.function_body()?,
                        _ => self.skip()?,
                    }
                    self.block = MODULE;
                }
                Some(Entry::Record { code }) => {
                    let ops = self.take();
                    self.module_record(code, &ops)?;
                    self.give(ops);
                }
            }
        }
        self.resolve_module()?;
        Ok(())
    }

    fn module_record(&mut self, code: u32, ops: &[u64]) -> Result<()> {
        match code {
            1 => {
                let v = *ops.first().ok_or_else(|| self.fail("no version"))?;
                if v > 2 {
                    return Err(self.fail(format!("module version {v}")));
                }
                self.relative = v >= 1;
            }
            2 => self.m.triple = text(ops),
            3 => {
                self.m.datalayout = text(ops);
                self.layout = Layout::parse(&self.m.datalayout);
            }
            4 => self.m.asm = text(ops),
            5 => self.sections.push(text(ops)),
            11 => self.gcs.push(text(ops)),
            7 => self.global_var(ops)?,
            8 => self.function_record(ops)?,
            9 | 14 => return Err(self.fail("aliases are not supported")),
            12 => return Err(self.fail("comdats are not supported")),
            18 => return Err(self.fail("ifuncs are not supported")),
            // DEPLIB, VSTOFFSET, METADATA_VALUES_UNUSED, SOURCE_FILENAME, HASH: nothing
            // the text shows (the source file name is the caller's).
            _ => {}
        }
        Ok(())
    }

    // ---------------------------------------------------------------- attributes

    fn attribute_groups(&mut self) -> Result<()> {
        self.each_record(|c, code, ops| {
            if code != 3 {
                return Ok(());
            }
            if ops.len() < 2 {
                return Err(c.fail("an attribute group without id and index"));
            }
            let (id, index) = (ops[0], ops[1]);
            let mut set: AttrSet = Vec::new();
            let mut i = 2;
            while i < ops.len() {
                let kind = ops[i];
                i += 1;
                match kind {
                    0 | 1 => {
                        let code = *ops
                            .get(i)
                            .ok_or_else(|| c.fail("an attribute without its kind"))?;
                        i += 1;
                        let k = codes::attr_kind(code)
                            .ok_or_else(|| c.fail(format!("attribute kind {code}")))?;
                        let value = if kind == 1 {
                            let v = *ops
                                .get(i)
                                .ok_or_else(|| c.fail("an attribute without its value"))?;
                            i += 1;
                            v
                        } else {
                            0
                        };
                        set.retain(|a| !matches!(a, Attr::Kind { order, .. } if *order == k.order));
                        set.push(Attr::Kind {
                            order: k.order,
                            value,
                            ty: None,
                        });
                    }
                    3 | 4 => {
                        let string = |i: &mut usize| -> Result<Vec<u8>> {
                            let start = *i;
                            while *ops
                                .get(*i)
                                .ok_or_else(|| c.fail("an attribute string without its NUL"))?
                                != 0
                            {
                                *i += 1;
                            }
                            let s = text(&ops[start..*i]);
                            *i += 1;
                            Ok(s)
                        };
                        let key = string(&mut i)?;
                        let value = if kind == 4 {
                            string(&mut i)?
                        } else {
                            Vec::new()
                        };
                        set.retain(|a| !matches!(a, Attr::Str { key: k, .. } if *k == key));
                        set.push(Attr::Str { key, value });
                    }
                    5 | 6 => {
                        return Err(c.fail("type attributes are not supported"));
                    }
                    k => return Err(c.fail(format!("attribute encoding {k}"))),
                }
            }
            set.sort();
            c.groups.entry(id).or_default().push((index, set));
            Ok(())
        })
    }

    fn attribute_lists(&mut self) -> Result<()> {
        self.each_record(|c, code, ops| {
            if code == 1 {
                return Err(c.fail("attribute lists of before LLVM 3.3 are not supported"));
            }
            if code != 2 {
                return Ok(());
            }
            let mut list = AttrList::default();
            for id in ops {
                let groups = c
                    .groups
                    .get(id)
                    .ok_or_else(|| c.fail(format!("attribute group {id} is not defined")))?;
                for (index, set) in groups.clone() {
                    let target = match index {
                        0xFFFF_FFFF => &mut list.function,
                        0 => &mut list.ret,
                        n => {
                            let n = (n - 1) as usize;
                            if n >= ops.len().max(1) * 4096 {
                                return Err(c.fail(format!("attributes for parameter {n}")));
                            }
                            if list.params.len() <= n {
                                list.params.resize(n + 1, Vec::new());
                            }
                            &mut list.params[n]
                        }
                    };
                    merge(target, &set);
                }
            }
            c.lists.push(std::rc::Rc::new(list));
            Ok(())
        })
    }

    /// The attribute list a record names (0: none).
    fn attrs(&self, id: u64) -> Result<std::rc::Rc<AttrList>> {
        if id == 0 {
            return Ok(std::rc::Rc::default());
        }
        self.lists
            .get(id as usize - 1)
            .cloned()
            .ok_or_else(|| self.fail(format!("attribute list {id} is not defined")))
    }

    // ---------------------------------------------------------------- types

    pub fn intern(&mut self, t: Type) -> TypeId {
        if let Some(&id) = self.interned.get(&t) {
            return id;
        }
        let id = self.m.types.len() as TypeId;
        self.m.types.push(t.clone());
        self.interned.insert(t, id);
        id
    }

    fn types(&mut self) -> Result<()> {
        let outer = self.block;
        self.block = TYPES;
        // Entries referenced before they are defined: only identified structures may be.
        let mut forward: HashSet<u64> = HashSet::default();
        let mut slots: Vec<Option<Type>> = Vec::new();
        let mut pending_name: Option<Vec<u8>> = None;
        while let Some(code) = self.next_record("the type table")? {
            let ops = self.take();
            let here = slots.len() as u64;
            let mut refer = |id: u64, c: &Self| -> Result<TypeId> {
                if id > u32::MAX as u64 / 2 {
                    return Err(c.fail(format!("type {id}")));
                }
                if id >= here {
                    forward.insert(id);
                }
                Ok(id as TypeId)
            };
            let need = |n: usize, c: &Self| -> Result<()> {
                if ops.len() < n {
                    Err(c.fail(format!("{} operands, {n} needed", ops.len())))
                } else {
                    Ok(())
                }
            };
            let t = match code {
                1 => {
                    need(1, self)?;
                    if ops[0] > self.r.bits_left() as u64 {
                        return Err(self.fail("more types than bits left"));
                    }
                    slots.reserve(ops[0] as usize);
                    continue;
                }
                2 => Type::Void,
                3 => Type::Float,
                4 => Type::Double,
                5 => Type::Label,
                10 => Type::Half,
                13 => Type::X86Fp80,
                14 => Type::Fp128,
                15 => Type::PpcFp128,
                16 => Type::Metadata,
                17 => Type::X86Mmx,
                22 => Type::Token,
                23 => Type::BFloat,
                24 => Type::X86Amx,
                7 => {
                    need(1, self)?;
                    let w = ops[0];
                    if !(1..(1 << 24)).contains(&w) {
                        return Err(self.fail(format!("an integer of {w} bits")));
                    }
                    Type::Int(w as u32)
                }
                8 => {
                    need(1, self)?;
                    let space = ops.get(1).copied().unwrap_or(0);
                    if space >= 1 << 24 {
                        return Err(self.fail(format!("address space {space}")));
                    }
                    Type::Pointer {
                        pointee: refer(ops[0], self)?,
                        space: space as u32,
                    }
                }
                9 | 21 => {
                    let skip = if code == 9 { 3 } else { 2 };
                    need(skip, self)?;
                    let mut params = Vec::with_capacity(ops.len() - skip);
                    for &p in &ops[skip..] {
                        params.push(refer(p, self)?);
                    }
                    Type::Function {
                        vararg: ops[0] != 0,
                        ret: refer(ops[skip - 1], self)?,
                        params,
                    }
                }
                11 | 12 => {
                    need(2, self)?;
                    let (len, elem) = (ops[0], refer(ops[1], self)?);
                    if code == 11 {
                        Type::Array { len, elem }
                    } else {
                        if len == 0 || len > u32::MAX as u64 {
                            return Err(self.fail(format!("a vector of {len} elements")));
                        }
                        Type::Vector { len, elem }
                    }
                }
                19 => {
                    pending_name = Some(text(&ops));
                    continue;
                }
                6 | 18 | 20 => {
                    let body = if code == 6 {
                        None
                    } else {
                        need(1, self)?;
                        let mut b = Vec::with_capacity(ops.len() - 1);
                        for &e in &ops[1..] {
                            b.push(refer(e, self)?);
                        }
                        Some(b)
                    };
                    let literal = code == 18;
                    let name = if literal {
                        None
                    } else {
                        let n = pending_name.take().unwrap_or_default();
                        Some(self.unique_struct_name(n))
                    };
                    Type::Struct {
                        name,
                        literal,
                        packed: ops.first().is_some_and(|&p| p != 0) && code != 6,
                        body,
                    }
                }
                25 => return Err(self.fail("opaque pointers are not supported")),
                _ => return Err(self.fail("an unknown type")),
            };
            let identified = matches!(t, Type::Struct { literal: false, .. });
            if forward.contains(&here) && !identified {
                return Err(
                    self.fail("only named structures can be referenced before they are defined")
                );
            }
            slots.push(Some(t));
        }
        let n = slots.len() as u64;
        if let Some(bad) = forward.iter().find(|&&id| id >= n) {
            return Err(self.fail(format!("type {bad} is referenced and never defined")));
        }
        self.m.types = slots.into_iter().map(|t| t.expect("defined")).collect();
        for (i, t) in self.m.types.iter().enumerate() {
            if !matches!(t, Type::Struct { literal: false, .. }) {
                self.interned.entry(t.clone()).or_insert(i as TypeId);
            }
        }
        // Nesting: every type a non-identified type holds comes before it or is an
        // identified structure (printed by name), so one pass in order bounds it.
        let mut depth = vec![0u32; self.m.types.len()];
        for i in 0..self.m.types.len() {
            if matches!(self.m.types[i], Type::Struct { literal: false, .. }) {
                continue;
            }
            let d = self
                .m
                .subtypes(i as TypeId)
                .iter()
                .map(|&s| {
                    if (s as usize) < i {
                        depth[s as usize]
                    } else {
                        0
                    }
                })
                .max()
                .unwrap_or(0)
                + 1;
            if d > MAX_TYPE_DEPTH {
                return Err(self.fail(format!("types nested more than {MAX_TYPE_DEPTH} deep")));
            }
            depth[i] = d;
        }
        // Text: a type prints with the types it holds written out (all but identified
        // structures), so a table of a few bytes could describe one of 2^64 characters.
        let mut size = vec![0u64; self.m.types.len()];
        for i in 0..self.m.types.len() {
            let own = match &self.m.types[i] {
                Type::Struct {
                    literal: false,
                    name,
                    ..
                } => {
                    size[i] = name.as_ref().map_or(8, |n| 3 + 4 * n.len() as u64);
                    continue;
                }
                _ => 24,
            };
            let subs: u64 = self
                .m
                .subtypes(i as TypeId)
                .iter()
                .map(|&s| {
                    if (s as usize) < i {
                        size[s as usize]
                    } else {
                        64
                    }
                })
                .fold(0u64, |a, b| a.saturating_add(b.saturating_add(2)));
            size[i] = own + subs;
            if size[i] > MAX_TYPE_TEXT {
                return Err(self.fail(format!(
                    "a type whose text would be over {MAX_TYPE_TEXT} bytes"
                )));
            }
        }
        self.block = outer;
        self.code = None;
        Ok(())
    }

    /// LLVM keeps structure names unique: a second `%S` becomes `%S.0`.
    fn unique_struct_name(&mut self, name: Vec<u8>) -> Vec<u8> {
        if name.is_empty() || self.struct_names.insert(name.clone()) {
            return name;
        }
        loop {
            let mut n = name.clone();
            n.extend_from_slice(format!(".{}", self.struct_unique).as_bytes());
            self.struct_unique += 1;
            if self.struct_names.insert(n.clone()) {
                return n;
            }
        }
    }

    fn ty(&self, id: u64) -> Result<TypeId> {
        if (id as usize) < self.m.types.len() {
            Ok(id as TypeId)
        } else {
            Err(self.fail(format!("type {id} is not defined")))
        }
    }

    fn pointer_to(&mut self, pointee: TypeId, space: u32) -> TypeId {
        self.intern(Type::Pointer { pointee, space })
    }

    /// The pointee of a pointer type.
    fn pointee(&self, ty: TypeId) -> Result<(TypeId, u32)> {
        match self.m.ty(ty) {
            Type::Pointer { pointee, space } => Ok((*pointee, *space)),
            _ => Err(self.fail("a pointer was expected")),
        }
    }

    fn is_first_class(&self, ty: TypeId) -> bool {
        !matches!(
            self.m.ty(ty),
            Type::Void | Type::Function { .. } | Type::Label | Type::Metadata
        )
    }

    // ---------------------------------------------------------------- globals

    fn global_var(&mut self, ops: &[u64]) -> Result<()> {
        if ops.len() < 6 {
            return Err(self.fail("a global variable record of fewer than 6 operands"));
        }
        let mut ty = self.ty(ops[0])?;
        let constant = ops[1] & 1 != 0;
        let space = if ops[1] & 2 != 0 {
            (ops[1] >> 2) as u32
        } else {
            let (p, s) = self.pointee(ty)?;
            ty = p;
            s
        };
        if !self.is_first_class(ty) {
            return Err(self.fail("a global of a type that is not first class"));
        }
        let linkage = codes::linkage(ops[3]);
        let local = matches!(linkage, "internal" | "private");
        let common = Linkage {
            linkage,
            align: self.alignment(ops[4])?,
            section: self.section(ops[5])?,
            visibility: if ops.len() > 6 && !local { ops[6] } else { 0 },
            unnamed_addr: ops.get(8).copied().unwrap_or(0),
            dll: ops.get(10).copied().unwrap_or(0),
        };
        if ops.get(11).is_some_and(|&c| c != 0) {
            return Err(self.fail("comdats are not supported"));
        }
        let pointer = self.pointer_to(ty, space);
        let value = self.m.values.len() as ValueId;
        self.m.values.push(Value {
            ty: pointer,
            kind: ValueKind::Global(self.m.globals.len() as u32),
            name: None,
        });
        let init = match ops[2] {
            0 => None,
            id => {
                let id = (id - 1) as ValueId;
                self.pending_types.push((id, ty));
                Some(id)
            }
        };
        self.m.globals.push(Global {
            value,
            value_type: ty,
            space,
            constant,
            init,
            thread_local: ops.get(7).copied().unwrap_or(0),
            externally_initialized: ops.get(9).is_some_and(|&v| v != 0),
            common,
        });
        Ok(())
    }

    fn alignment(&self, exp: u64) -> Result<u64> {
        if exp > 33 {
            return Err(self.fail(format!("alignment exponent {exp}")));
        }
        Ok(if exp == 0 { 0 } else { 1 << (exp - 1) })
    }

    fn section(&self, id: u64) -> Result<Option<Vec<u8>>> {
        if id == 0 {
            return Ok(None);
        }
        self.sections
            .get(id as usize - 1)
            .cloned()
            .map(Some)
            .ok_or_else(|| self.fail(format!("section {id} is not defined")))
    }

    fn function_record(&mut self, ops: &[u64]) -> Result<()> {
        if ops.len() < 8 {
            return Err(self.fail("a function record of fewer than 8 operands"));
        }
        let mut ty = self.ty(ops[0])?;
        if let Type::Pointer { pointee, .. } = self.m.ty(ty) {
            ty = *pointee;
        }
        let Type::Function { params, .. } = self.m.ty(ty).clone() else {
            return Err(self.fail("a function whose type is not a function type"));
        };
        let cc = ops[1];
        if cc > 1023 {
            return Err(self.fail(format!("calling convention {cc}")));
        }
        let proto = ops[2] != 0;
        let linkage = codes::linkage(ops[3]);
        let local = matches!(linkage, "internal" | "private");
        let mut attrs = AttrList::clone(&*self.attrs(ops[4])?);
        for (set, &param) in attrs.params.iter_mut().zip(&params) {
            for a in set {
                // LLVM 14 gives `byval` and its kind the pointee as their type.
                if let Attr::Kind { order, ty, .. } = a {
                    if is_type_attr(*order) {
                        *ty = self.pointee(param).ok().map(|p| p.0);
                    }
                }
            }
        }
        let gc = match ops.get(8).copied().unwrap_or(0) {
            0 => None,
            id => Some(
                self.gcs
                    .get(id as usize - 1)
                    .cloned()
                    .ok_or_else(|| self.fail(format!("gc name {id} is not defined")))?,
            ),
        };
        if ops.get(10).is_some_and(|&v| v != 0)
            || ops.get(13).is_some_and(|&v| v != 0)
            || ops.get(14).is_some_and(|&v| v != 0)
        {
            return Err(
                self.fail("prologue, prefix data and personality functions are not supported")
            );
        }
        if ops.get(12).is_some_and(|&c| c != 0) {
            return Err(self.fail("comdats are not supported"));
        }
        let common = Linkage {
            linkage,
            align: self.alignment(ops[5])?,
            section: self.section(ops[6])?,
            visibility: if local { 0 } else { ops[7] },
            unnamed_addr: ops.get(9).copied().unwrap_or(0),
            dll: ops.get(11).copied().unwrap_or(0),
        };
        let pointer = self.pointer_to(ty, 0);
        let index = self.m.functions.len() as u32;
        let value = self.m.values.len() as ValueId;
        self.m.values.push(Value {
            ty: pointer,
            kind: ValueKind::Function(index),
            name: None,
        });
        if !proto {
            self.bodies.push(index);
        }
        self.m.functions.push(Function {
            value,
            ty,
            cc,
            attrs,
            gc,
            common,
            body: None,
            erased: false,
        });
        self.m.function_order.push(index);
        Ok(())
    }

    fn module_symbols(&mut self) -> Result<()> {
        self.each_record(|c, code, ops| {
            let skip = match code {
                1 => 1,
                3 => 2,
                _ => return Ok(()),
            };
            if ops.len() < skip {
                return Err(c.fail("a symbol without its value"));
            }
            let id = ops[0] as usize;
            let name = text(&ops[skip..]);
            let Some(v) = c.m.values.get(id) else {
                return Err(c.fail(format!("a name for value {id}, which is not defined")));
            };
            if !matches!(v.kind, ValueKind::Global(_) | ValueKind::Function(_)) {
                return Err(c.fail(format!("a name for value {id}, which is not a global")));
            }
            if name.is_empty() {
                return Ok(());
            }
            let name = c.unique_global_name(name);
            c.m.values[id].name = Some(name);
            Ok(())
        })
    }

    fn unique_global_name(&mut self, name: Vec<u8>) -> Vec<u8> {
        if self.global_names.insert(name.clone()) {
            return name;
        }
        loop {
            self.global_unique += 1;
            let mut n = name.clone();
            n.extend_from_slice(format!(".{}", self.global_unique).as_bytes());
            if self.global_names.insert(n.clone()) {
                return n;
            }
        }
    }

    /// Check what the module level refers to, once it is all read.
    fn resolve_module(&mut self) -> Result<()> {
        self.check_types_of_pending(0)?;
        if self.next_body != self.bodies.len() {
            return Err(self.fail(format!(
                "{} functions are defined, {} bodies found",
                self.bodies.len(),
                self.next_body
            )));
        }
        Ok(())
    }

    fn check_types_of_pending(&mut self, _local: usize) -> Result<()> {
        let pending = std::mem::take(&mut self.pending_types);
        for (id, ty) in pending {
            let v = self
                .m
                .values
                .get(id as usize)
                .ok_or_else(|| self.fail(format!("value {id} is used and never defined")))?;
            if v.ty != ty {
                return Err(self.fail(format!("value {id} does not have the type it is used with")));
            }
        }
        Ok(())
    }

    // ---------------------------------------------------------------- constants

    /// A constants block: at the module level (`body` none) or a function's.
    fn constants(&mut self, mut body: Option<&mut Body>) -> Result<()> {
        let outer = self.block;
        self.block = CONSTANTS;
        let int32 = self.intern(Type::Int(32));
        let mut cur = int32;
        let base = self.m.values.len() as u64;
        while let Some(code) = self.next_record("the constants block")? {
            let ops = self.take();
            if code == 1 {
                let t = self.ty(*ops
                    .first()
                    .ok_or_else(|| self.fail("SETTYPE without a type"))?)?;
                if matches!(
                    self.m.ty(t),
                    Type::Void | Type::Function { .. } | Type::Label | Type::Metadata
                ) {
                    return Err(self.fail("constants of a type that has none"));
                }
                cur = t;
                continue;
            }
            let count = base + body.as_ref().map_or(0, |b| b.values.len() as u64);
            let c = self.constant(code, &ops, cur, count)?;
            let v = Value {
                ty: cur,
                kind: ValueKind::Const(c),
                name: None,
            };
            match body.as_deref_mut() {
                Some(b) => b.values.push(v),
                None => self.m.values.push(v),
            }
            self.give(ops);
        }
        self.block = outer;
        self.code = None;
        Ok(())
    }

    fn constant(&mut self, code: u32, ops: &[u64], ty: TypeId, _count: u64) -> Result<Const> {
        let t = self.m.ty(ty).clone();
        let need = |n: usize, c: &Self| -> Result<()> {
            if ops.len() < n {
                Err(c.fail(format!("{} operands, {n} needed", ops.len())))
            } else {
                Ok(())
            }
        };
        let id = |v: u64, c: &Self| -> Result<ValueId> {
            u32::try_from(v).map_err(|_| c.fail(format!("value {v}")))
        };
        Ok(match code {
            2 => {
                if matches!(
                    t,
                    Type::Label | Type::Void | Type::Function { .. } | Type::Metadata
                ) {
                    return Err(self.fail("a null constant of a type without one"));
                }
                Const::Null
            }
            3 => Const::Undef,
            26 => Const::Poison,
            4 => {
                need(1, self)?;
                let Type::Int(w) = t else {
                    return Err(self.fail("an integer constant of a type that is not an integer"));
                };
                Const::Int(
                    sext(signed(ops[0]) as i128, w)
                        .ok_or_else(|| self.fail(format!("an integer of {w} bits")))?,
                )
            }
            5 => {
                need(1, self)?;
                let Type::Int(w) = t else {
                    return Err(self.fail("an integer constant of a type that is not an integer"));
                };
                if w > 128 || ops.len() > 2 {
                    return Err(self.fail(format!("integers of {w} bits are not supported")));
                }
                let lo = signed(ops[0]) as u64 as u128;
                let hi = ops
                    .get(1)
                    .map_or(if (signed(ops[0])) < 0 { u64::MAX } else { 0 }, |&h| {
                        signed(h) as u64
                    }) as u128;
                Const::Int(sext((hi << 64 | lo) as i128, w).ok_or_else(|| self.fail("an integer"))?)
            }
            6 => {
                need(1, self)?;
                match t {
                    Type::Half | Type::BFloat => Const::Float(ops[0] as u16 as u128),
                    Type::Float => Const::Float(ops[0] as u32 as u128),
                    Type::Double => Const::Float(ops[0] as u128),
                    _ => {
                        return Err(
                            self.fail("floating-point constants of this type are not supported")
                        )
                    }
                }
            }
            7 => {
                let n = self
                    .elements(ty)
                    .ok_or_else(|| self.fail("an aggregate of a type that is not one"))?;
                if n != ops.len() as u64 {
                    return Err(self.fail(format!("{} elements for a type of {n}", ops.len())));
                }
                let mut elems = Vec::with_capacity(ops.len());
                for (i, &v) in ops.iter().enumerate() {
                    let et = self.element_type(ty, i as u64).expect("an aggregate");
                    let v = id(v, self)?;
                    self.pending_types.push((v, et));
                    elems.push(v);
                }
                Const::Aggregate(elems)
            }
            8 | 9 => {
                let Type::Array { len, elem } = t else {
                    return Err(self.fail("a string of a type that is not an array"));
                };
                if !matches!(self.m.ty(elem), Type::Int(8)) {
                    return Err(self.fail("a string of a type that is not an array of i8"));
                }
                let mut data: Vec<u64> = ops.iter().map(|&c| c as u8 as u64).collect();
                if code == 9 {
                    data.push(0);
                }
                if data.len() as u64 != len {
                    return Err(self.fail(format!("{} characters for [{len} x i8]", data.len())));
                }
                Const::Data(data)
            }
            22 => {
                let (len, elem) = match t {
                    Type::Array { len, elem } | Type::Vector { len, elem } => (len, elem),
                    _ => return Err(self.fail("data of a type that is not an array or vector")),
                };
                if len != ops.len() as u64 {
                    return Err(self.fail(format!("{} elements for a type of {len}", ops.len())));
                }
                let mask = match self.m.ty(elem) {
                    Type::Int(8) => 0xFF,
                    Type::Int(16) | Type::Half | Type::BFloat => 0xFFFF,
                    Type::Int(32) | Type::Float => 0xFFFF_FFFF,
                    Type::Int(64) | Type::Double => u64::MAX,
                    _ => return Err(self.fail("data of elements that are not simple numbers")),
                };
                Const::Data(ops.iter().map(|&v| v & mask).collect())
            }
            10 => {
                need(3, self)?;
                let lhs = id(ops[1], self)?;
                let rhs = id(ops[2], self)?;
                self.pending_types.push((lhs, ty));
                self.pending_types.push((rhs, ty));
                let float = self.is_fp(ty);
                let opcode = codes::binary_opcode(ops[0], float)
                    .ok_or_else(|| self.fail(format!("binary opcode {}", ops[0])))?;
                Const::Expr(Expr::Binary {
                    opcode,
                    flags: ops.get(3).copied().unwrap_or(0),
                    lhs,
                    rhs,
                })
            }
            11 => {
                need(3, self)?;
                let opcode = *CASTS
                    .get(ops[0] as usize)
                    .ok_or_else(|| self.fail(format!("cast opcode {}", ops[0])))?;
                let from = self.ty(ops[1])?;
                let value = id(ops[2], self)?;
                self.pending_types.push((value, from));
                Const::Expr(Expr::Cast { opcode, value })
            }
            12 | 20 | 24 => {
                let mut i = 0;
                let source = if code == 24 || ops.len() % 2 == 1 {
                    i += 1;
                    Some(self.ty(*ops.first().ok_or_else(|| self.fail("no type"))?)?)
                } else {
                    None
                };
                let inbounds = if code == 24 {
                    let flags = *ops.get(1).ok_or_else(|| self.fail("no flags"))?;
                    i += 1;
                    if flags >> 1 != 0 {
                        return Err(self.fail("inrange indices are not supported"));
                    }
                    flags & 1 != 0
                } else {
                    code == 20
                };
                if ops.len() < i + 2 || (ops.len() - i) % 2 != 0 {
                    return Err(self.fail("a getelementptr without its operands"));
                }
                let mut operands = Vec::new();
                let mut types = Vec::new();
                while i < ops.len() {
                    let t = self.ty(ops[i])?;
                    let v = id(ops[i + 1], self)?;
                    self.pending_types.push((v, t));
                    operands.push(v);
                    types.push(t);
                    i += 2;
                }
                let (pointee, _) = self.pointee(types[0])?;
                let source = source.unwrap_or(pointee);
                if source != pointee {
                    return Err(self.fail("a getelementptr whose type is not its pointer's"));
                }
                Const::Expr(Expr::Gep {
                    inbounds,
                    source,
                    operands,
                })
            }
            13 => {
                need(3, self)?;
                let cond = id(ops[0], self)?;
                let then = id(ops[1], self)?;
                let other = id(ops[2], self)?;
                self.pending_types.push((then, ty));
                self.pending_types.push((other, ty));
                Const::Expr(Expr::Select { cond, then, other })
            }
            14 => {
                need(3, self)?;
                let vt = self.ty(ops[0])?;
                let vector = id(ops[1], self)?;
                self.pending_types.push((vector, vt));
                let index = if ops.len() >= 4 {
                    let it = self.ty(ops[2])?;
                    let v = id(ops[3], self)?;
                    self.pending_types.push((v, it));
                    v
                } else {
                    id(ops[2], self)?
                };
                Const::Expr(Expr::ExtractElement { vector, index })
            }
            15 => {
                need(3, self)?;
                let vector = id(ops[0], self)?;
                let element = id(ops[1], self)?;
                self.pending_types.push((vector, ty));
                let index = if ops.len() >= 4 {
                    let it = self.ty(ops[2])?;
                    let v = id(ops[3], self)?;
                    self.pending_types.push((v, it));
                    v
                } else {
                    id(ops[2], self)?
                };
                Const::Expr(Expr::InsertElement {
                    vector,
                    element,
                    index,
                })
            }
            17 => {
                need(4, self)?;
                let ot = self.ty(ops[0])?;
                let lhs = id(ops[1], self)?;
                let rhs = id(ops[2], self)?;
                self.pending_types.push((lhs, ot));
                self.pending_types.push((rhs, ot));
                let predicate = codes::predicate(ops[3])
                    .ok_or_else(|| self.fail(format!("predicate {}", ops[3])))?;
                Const::Expr(Expr::Cmp {
                    predicate,
                    lhs,
                    rhs,
                })
            }
            _ => {
                return Err(self.fail("this kind of constant is not supported"));
            }
        })
    }

    fn is_fp(&self, ty: TypeId) -> bool {
        match self.m.ty(ty) {
            Type::Vector { elem, .. } => self.m.ty(*elem).is_float(),
            t => t.is_float(),
        }
    }

    /// How many elements an aggregate of `ty` has.
    fn elements(&self, ty: TypeId) -> Option<u64> {
        match self.m.ty(ty) {
            Type::Array { len, .. } | Type::Vector { len, .. } => Some(*len),
            Type::Struct { body: Some(b), .. } => Some(b.len() as u64),
            _ => None,
        }
    }

    fn element_type(&self, ty: TypeId, i: u64) -> Option<TypeId> {
        match self.m.ty(ty) {
            Type::Array { elem, .. } | Type::Vector { elem, .. } => Some(*elem),
            Type::Struct { body: Some(b), .. } => b.get(i as usize).copied(),
            _ => None,
        }
    }

    /// After a constants block: operands name values of their types, and no constant
    /// holds itself (directly or not) or nests deeper than printing allows.
    fn check_constants(&mut self, _from: usize) -> Result<()> {
        self.check_types_of_pending(0)?;
        self.check_nesting(None)?;
        for id in self.inbounds_inferred(None) {
            if let ValueKind::Const(Const::Expr(Expr::Gep { inbounds, .. })) =
                &mut self.m.values[id].kind
            {
                *inbounds = true;
            }
        }
        Ok(())
    }

    /// The getelementptr constants of the block just read (the module's, or the
    /// function's in `body`) that LLVM 14 makes `inbounds` when it makes them
    /// (`ConstantFoldGetElementPtr`): on a global variable, with constant integer indices
    /// each within its array, the first 0 (or 1 with the rest 0).
    fn inbounds_inferred(&self, body: Option<&Body>) -> Vec<usize> {
        let module = self.m.values.len();
        let get = |id: ValueId| -> Option<&Value> {
            let i = id as usize;
            if i < module {
                self.m.values.get(i)
            } else {
                body.and_then(|b| b.values.get(i - module))
            }
        };
        let int = |id: ValueId| -> Option<i128> {
            let v = get(id)?;
            match (&v.kind, self.m.ty(v.ty)) {
                (ValueKind::Const(Const::Int(n)), Type::Int(_)) => Some(*n),
                (ValueKind::Const(Const::Null), Type::Int(_)) => Some(0),
                _ => None,
            }
        };
        let (first, values): (usize, &[Value]) = match body {
            Some(b) => (module, &b.values),
            None => (0, &self.m.values),
        };
        let mut out = Vec::new();
        for (i, v) in values.iter().enumerate() {
            let ValueKind::Const(Const::Expr(Expr::Gep {
                inbounds: false,
                source,
                operands,
            })) = &v.kind
            else {
                continue;
            };
            let global = match get(operands[0]).map(|b| &b.kind) {
                Some(ValueKind::Global(g)) => &self.m.globals[*g as usize],
                _ => continue,
            };
            if global.common.linkage == "extern_weak" {
                continue;
            }
            let idx: Option<Vec<i128>> = operands[1..].iter().map(|&o| int(o)).collect();
            let Some(idx) = idx else { continue };
            let mut known = true;
            let mut ty = *source;
            for &n in idx.iter().skip(1) {
                match self.m.ty(ty) {
                    Type::Struct { body: Some(b), .. } => {
                        ty = b.get(n as usize).copied().unwrap_or(ty);
                    }
                    Type::Array { len, elem } => {
                        // An index past the end would be factored into the one before;
                        // this reader leaves such constants as they are.
                        if n < 0 || (*len > 0 && n as u128 >= *len as u128) {
                            known = false;
                            break;
                        }
                        ty = *elem;
                    }
                    _ => {
                        known = false;
                        break;
                    }
                }
            }
            let in_bounds = match idx.first() {
                None | Some(0) => true,
                Some(1) => idx[1..].iter().all(|&n| n == 0),
                _ => false,
            };
            if known && in_bounds {
                out.push(first + i);
            }
        }
        out
    }

    fn check_nesting(&mut self, body: Option<&Body>) -> Result<()> {
        let module = self.m.values.len();
        let get = |id: ValueId| -> Option<&Value> {
            let id = id as usize;
            if id < module {
                self.m.values.get(id)
            } else {
                body.and_then(|b| b.values.get(id - module))
            }
        };
        let total = module + body.map_or(0, |b| b.values.len());
        // 0 unvisited, 1 on the stack, 2 done; depth of the done.
        let mut state = vec![0u8; total];
        let mut depth = vec![0u32; total];
        let first = if body.is_some() { module } else { 0 };
        // Module constants were checked with the module: done, at their depth.
        for (i, &d) in self.module_depth.iter().enumerate().take(first) {
            state[i] = 2;
            depth[i] = d;
        }
        for start in first..total {
            if state[start] != 0 {
                continue;
            }
            let operands_of = |v: usize| match get(v as ValueId).map(|v| &v.kind) {
                Some(ValueKind::Const(c)) => const_operands(c),
                _ => Vec::new(),
            };
            let mut stack: Vec<(usize, Vec<ValueId>, usize)> = vec![(start, operands_of(start), 0)];
            state[start] = 1;
            while let Some((v, ops, next)) = stack.last_mut() {
                if let Some(&op) = ops.get(*next) {
                    *next += 1;
                    let op = op as usize;
                    if op >= total {
                        return Err(self.fail(format!("constant operand {op} is not defined")));
                    }
                    match state[op] {
                        0 => {
                            state[op] = 1;
                            stack.push((op, operands_of(op), 0));
                        }
                        1 => return Err(self.fail("a constant that holds itself")),
                        _ => {}
                    }
                } else {
                    let d = ops.iter().map(|&o| depth[o as usize]).max().unwrap_or(0) + 1;
                    if d > MAX_CONST_DEPTH {
                        return Err(
                            self.fail(format!("constants nested more than {MAX_CONST_DEPTH} deep"))
                        );
                    }
                    depth[*v] = d;
                    state[*v] = 2;
                    stack.pop();
                }
            }
        }
        if body.is_none() {
            self.module_depth = depth;
        }
        Ok(())
    }

    // ---------------------------------------------------------------- metadata

    fn metadata_kinds(&mut self) -> Result<()> {
        self.each_record(|c, code, ops| {
            if code == 6 {
                c.kind(ops)?;
            }
            Ok(())
        })
    }

    fn kind(&mut self, ops: &[u64]) -> Result<()> {
        let id = *ops
            .first()
            .ok_or_else(|| self.fail("a kind without its id"))?;
        let name = text(&ops[1..]);
        let context = match self.m.kinds.iter().position(|k| *k == name) {
            Some(i) => i as u32,
            None => {
                self.m.kinds.push(name);
                self.m.kinds.len() as u32 - 1
            }
        };
        self.kinds.insert(id, context);
        Ok(())
    }

    /// A metadata id of the record, in `Module::metadata` (function-local ids follow the
    /// module's).
    fn md_id(&self, id: u64) -> Result<MdId> {
        let id = u32::try_from(id).map_err(|_| self.fail(format!("metadata {id}")))?;
        let mapped = if id < self.module_md {
            id
        } else {
            (id - self.module_md)
                .checked_add(self.local_md)
                .ok_or_else(|| self.fail(format!("metadata {id}")))?
        };
        Ok(mapped)
    }

    /// A metadata block: the module's (`body` none) or a function's.
    fn metadata(&mut self, body: Option<&Body>) -> Result<()> {
        let outer = self.block;
        self.block = METADATA;
        let mut name: Option<Vec<u8>> = None;
        while let Some(code) = self.next_record("the metadata block")? {
            let ops = self.take();
            if code != 10 && name.is_some() {
                return Err(self.fail("METADATA_NAME not followed by METADATA_NAMED_NODE"));
            }
            let md = match code {
                1 => Metadata::String(text(&ops)),
                2 => {
                    if ops.len() != 2 {
                        return Err(self.fail("a value without its type"));
                    }
                    let ty = self.ty(ops[0])?;
                    if matches!(self.m.ty(ty), Type::Void | Type::Metadata) {
                        return Err(self.fail("a value of a type that has none"));
                    }
                    let v = u32::try_from(ops[1]).map_err(|_| self.fail("a value"))?;
                    let module = self.m.values.len();
                    let known = match body {
                        None => self.m.values.get(v as usize).map(|x| x.ty),
                        Some(b) => {
                            if (v as usize) < module {
                                self.m.values.get(v as usize).map(|x| x.ty)
                            } else {
                                b.values.get(v as usize - module).map(|x| x.ty)
                            }
                        }
                    };
                    match known {
                        Some(t) if t != ty => {
                            return Err(self.fail("a value of another type than its record says"))
                        }
                        Some(_) => {}
                        // A function's instruction results come after its metadata.
                        None if body.is_some() => self.pending_types.push((v, ty)),
                        None => return Err(self.fail(format!("value {v} is not defined"))),
                    }
                    Metadata::Value(v)
                }
                3 | 5 => {
                    let mut operands = Vec::with_capacity(ops.len());
                    for &o in &ops {
                        operands.push(match o {
                            0 => None,
                            o => {
                                let id = self.md_id(o - 1)?;
                                self.md_pending.push(id);
                                Some(id)
                            }
                        });
                    }
                    Metadata::Node {
                        distinct: code == 5,
                        operands,
                    }
                }
                4 => {
                    name = Some(text(&ops));
                    continue;
                }
                10 => {
                    let n = name
                        .take()
                        .ok_or_else(|| self.fail("METADATA_NAMED_NODE without its name"))?;
                    let mut nodes = Vec::with_capacity(ops.len());
                    for &o in &ops {
                        let id = self.md_id(o)?;
                        self.md_pending.push(id);
                        nodes.push(id);
                    }
                    self.m.named.push((n, nodes));
                    continue;
                }
                6 => {
                    self.kind(&ops)?;
                    continue;
                }
                8 | 9 => return Err(self.fail("metadata of before LLVM 3.6 is not supported")),
                7 | 12..=34 | 37 | 40..=46 => {
                    return Err(self.fail("debug-info metadata is not printed by this reader"))
                }
                _ => return Err(self.fail("this kind of metadata is not supported")),
            };
            if self.m.metadata.len() >= u32::MAX as usize / 2 {
                return Err(self.fail("too much metadata"));
            }
            self.m.metadata.push(md);
            self.give(ops);
        }
        if name.is_some() {
            return Err(self.fail("METADATA_NAME at the end of the block"));
        }
        self.block = outer;
        self.code = None;
        let len = self.m.metadata.len() as u32;
        let pending = std::mem::take(&mut self.md_pending);
        if body.is_none() {
            if let Some(bad) = pending.iter().find(|&&p| p >= len) {
                return Err(self.fail(format!("metadata {bad} is referenced and never defined")));
            }
        } else {
            self.md_pending = pending;
        }
        Ok(())
    }

    // ---------------------------------------------------------------- functions

    fn function_body(&mut self) -> Result<()> {
        let outer = self.block;
        self.block = FUNCTION;
        let Some(&f) = self.bodies.get(self.next_body) else {
            return Err(self.fail("a function body for no defined function"));
        };
        self.next_body += 1;
        let fty = self.m.functions[f as usize].ty;
        let Type::Function { params, .. } = self.m.ty(fty).clone() else {
            unreachable!("checked when the function was read")
        };
        let module = self.m.values.len() as u64;
        let mut b = Body::default();
        for p in &params {
            b.values.push(Value {
                ty: *p,
                kind: ValueKind::Argument,
                name: None,
            });
        }
        self.local_md = self.m.metadata.len() as u32;
        let mut f_state = FnState {
            module,
            forward: HashMap::default(),
            current: None,
            insts: Vec::new(),
            names: HashSet::default(),
            unique: 0,
        };
        let void = self.intern(Type::Void);
        let mut fn_md: Vec<(u32, MdId)> = Vec::new();
        loop {
            let code = match self.entry()? {
                None => return Err(self.fail("the function block has no end")),
                Some(Entry::End) => break,
                Some(Entry::Enter(id)) => {
                    match id {
                        CONSTANTS => {
                            self.constants(Some(&mut b))?;
                            self.check_types_local(&b, &mut f_state)?;
                            self.check_nesting(Some(&b))?;
                            let module = self.m.values.len();
                            for id in self.inbounds_inferred(Some(&b)) {
                                if let ValueKind::Const(Const::Expr(Expr::Gep {
                                    inbounds, ..
                                })) = &mut b.values[id - module].kind
                                {
                                    *inbounds = true;
                                }
                            }
                        }
                        METADATA => self.metadata(Some(&b))?,
                        METADATA_ATTACHMENT => self.attachments(&mut b, &f_state, &mut fn_md)?,
                        VALUE_SYMTAB => self.local_symbols(&mut b, &mut f_state)?,
                        USELIST => self.uselist()?,
                        METADATA_KIND => self.metadata_kinds()?,
                        _ => self.skip()?,
                    }
                    self.block = FUNCTION;
                    continue;
                }
                Some(Entry::Record { code }) => code,
            };
            let ops = self.take();
            match code {
                1 => {
                    let n = *ops.first().ok_or_else(|| self.fail("no block count"))?;
                    if n == 0 || n > self.r.bits_left() as u64 || !b.blocks.is_empty() {
                        return Err(self.fail(format!("{n} blocks")));
                    }
                    b.blocks = vec![Block::default(); n as usize];
                    f_state.current = Some(0);
                }
                33 => {
                    self.debug_locs = true;
                }
                35 => {
                    self.debug_locs = true;
                }
                _ => {
                    let block = f_state
                        .current
                        .ok_or_else(|| self.fail("an instruction outside any block"))?;
                    let (op, ty) = self.instruction(code, &ops, &mut b, &mut f_state)?;
                    let value = if ty != void {
                        let id = (module + b.values.len() as u64) as ValueId;
                        if let Some(t) = f_state.forward.remove(&id) {
                            if t != ty {
                                return Err(self.fail(format!(
                                    "value {id} is used with another type than it has"
                                )));
                            }
                        }
                        b.values.push(Value {
                            ty,
                            kind: ValueKind::Inst,
                            name: None,
                        });
                        Some(id)
                    } else {
                        None
                    };
                    let terminator = matches!(
                        op,
                        Op::Ret(_) | Op::Br { .. } | Op::Switch { .. } | Op::Unreachable
                    );
                    b.blocks[block].insts.push(Inst {
                        op,
                        ty,
                        value,
                        md: Vec::new(),
                    });
                    f_state
                        .insts
                        .push((block as u32, b.blocks[block].insts.len() as u32 - 1));
                    if terminator {
                        f_state.current = (block + 1 < b.blocks.len()).then_some(block + 1);
                    }
                }
            }
            self.give(ops);
        }
        if b.blocks.is_empty() {
            return Err(self.fail("a function body without blocks"));
        }
        if f_state.current.is_some() {
            return Err(self.fail("a block without a terminator"));
        }
        if let Some((&id, _)) = f_state.forward.iter().min_by_key(|(id, _)| **id) {
            return Err(self.fail(format!("value {id} is used and never defined")));
        }
        let total = module as usize + b.values.len();
        let pending = std::mem::take(&mut self.pending_types);
        for (id, ty) in pending {
            let id = id as usize;
            let t = if id < module as usize {
                self.m.values[id].ty
            } else if id < total {
                b.values[id - module as usize].ty
            } else {
                return Err(self.fail(format!("value {id} is used and never defined")));
            };
            if t != ty {
                return Err(self.fail(format!("value {id} is used with another type than it has")));
            }
        }
        let md_len = self.m.metadata.len() as u32;
        let pending = std::mem::take(&mut self.md_pending);
        if let Some(bad) = pending.iter().find(|&&p| p >= md_len) {
            return Err(self.fail(format!("metadata {bad} is referenced and never defined")));
        }
        let func = &mut self.m.functions[f as usize];
        func.body = Some(b);
        let _ = fn_md;
        self.block = outer;
        self.code = None;
        Ok(())
    }

    fn uselist(&mut self) -> Result<()> {
        self.each_record(|c, code, _| {
            if code == 2 {
                return Err(c.fail("a use-list order for blocks is not supported"));
            }
            Ok(())
        })
    }

    fn check_types_local(&mut self, b: &Body, f: &mut FnState) -> Result<()> {
        let module = self.m.values.len();
        let total = module + b.values.len();
        let pending = std::mem::take(&mut self.pending_types);
        for (id, ty) in pending {
            let i = id as usize;
            let t = if i < module {
                self.m.values[i].ty
            } else if i < total {
                b.values[i - module].ty
            } else {
                // An instruction's result, read later.
                if let Some(t) = f.forward.insert(id, ty) {
                    if t != ty {
                        return Err(self.fail(format!("value {id} is used with two types")));
                    }
                }
                continue;
            };
            if t != ty {
                return Err(self.fail(format!("value {id} is used with another type than it has")));
            }
        }
        Ok(())
    }

    fn local_symbols(&mut self, b: &mut Body, f: &mut FnState) -> Result<()> {
        let module = self.m.values.len();
        self.each_record(|c, code, ops| {
            if code != 1 && code != 2 {
                return Ok(());
            }
            let id = *ops
                .first()
                .ok_or_else(|| c.fail("a symbol without its value"))? as usize;
            let name = text(&ops[1..]);
            if name.is_empty() {
                return Ok(());
            }
            let name = f.unique(name);
            if code == 2 {
                let block = b.blocks.get_mut(id).ok_or_else(|| {
                    c.fail(format!("a name for block {id}, which does not exist"))
                })?;
                block.name = Some(name);
            } else {
                let v = id
                    .checked_sub(module)
                    .and_then(|i| b.values.get_mut(i))
                    .ok_or_else(|| {
                        c.fail(format!(
                            "a name for value {id}, which is not the function's"
                        ))
                    })?;
                if matches!(v.kind, ValueKind::Const(_)) {
                    return Err(c.fail(format!("a name for value {id}, a constant")));
                }
                v.name = Some(name);
            }
            Ok(())
        })
    }

    fn attachments(
        &mut self,
        b: &mut Body,
        f: &FnState,
        fn_md: &mut Vec<(u32, MdId)>,
    ) -> Result<()> {
        self.each_record(|c, code, ops| {
            if code != 11 {
                return Ok(());
            }
            let (target, pairs) = if ops.len() % 2 == 1 {
                let i = ops[0] as usize;
                let &(block, index) = f.insts.get(i).ok_or_else(|| {
                    c.fail(format!(
                        "an attachment to instruction {i}, which does not exist"
                    ))
                })?;
                (Some((block, index)), &ops[1..])
            } else {
                (None, ops)
            };
            let mut list = Vec::new();
            for pair in pairs.chunks(2) {
                let kind = *c
                    .kinds
                    .get(&pair[0])
                    .ok_or_else(|| c.fail(format!("metadata kind {} is not defined", pair[0])))?;
                let md = c.md_id(pair[1])?;
                match c.m.metadata.get(md as usize) {
                    Some(Metadata::Node { .. }) => {}
                    _ => return Err(c.fail("an attachment that is not a metadata node")),
                }
                list.retain(|&(k, _)| k != kind);
                list.push((kind, md));
            }
            match target {
                Some((block, index)) => {
                    b.blocks[block as usize].insts[index as usize].md = list;
                }
                None => {
                    if !list.is_empty() {
                        return Err(c.fail("metadata attached to functions is not supported"));
                    }
                    fn_md.extend(list);
                }
            }
            Ok(())
        })
    }
}

/// What a function's reading keeps besides its body.
struct FnState {
    module: u64,
    /// Values used before they are defined, with the type they are used as.
    forward: HashMap<ValueId, TypeId>,
    /// The block instructions go to (`None` after the last terminator).
    current: Option<usize>,
    /// Every instruction, void or not, in order: what attachments count.
    insts: Vec<(u32, u32)>,
    names: HashSet<Vec<u8>>,
    unique: u32,
}

impl FnState {
    /// A function's names are unique: a second `x` becomes `x1` (`ValueSymbolTable`).
    fn unique(&mut self, name: Vec<u8>) -> Vec<u8> {
        if self.names.insert(name.clone()) {
            return name;
        }
        loop {
            self.unique += 1;
            let mut n = name.clone();
            n.extend_from_slice(self.unique.to_string().as_bytes());
            if self.names.insert(n.clone()) {
                return n;
            }
        }
    }
}

/// Union of attribute sets, `add` winning for a kind both hold.
fn merge(into: &mut AttrSet, add: &AttrSet) {
    for a in add {
        into.retain(|b| match (a, b) {
            (Attr::Kind { order: x, .. }, Attr::Kind { order: y, .. }) => x != y,
            (Attr::Str { key: x, .. }, Attr::Str { key: y, .. }) => x != y,
            _ => true,
        });
        into.push(a.clone());
    }
    into.sort();
}

fn is_type_attr(order: u32) -> bool {
    (67..=72).contains(&order)
}

/// `v` truncated to `w` bits and sign-extended back (`None` past 128 bits).
fn sext(v: i128, w: u32) -> Option<i128> {
    if w > 128 {
        return None;
    }
    if w == 128 {
        return Some(v);
    }
    let shift = 128 - w;
    Some((v << shift) >> shift)
}

/// The values a constant refers to.
pub fn const_operands(c: &Const) -> Vec<ValueId> {
    match c {
        Const::Aggregate(v) => v.clone(),
        Const::Expr(e) => match e {
            Expr::Binary { lhs, rhs, .. } | Expr::Cmp { lhs, rhs, .. } => vec![*lhs, *rhs],
            Expr::Cast { value, .. } => vec![*value],
            Expr::Gep { operands, .. } => operands.clone(),
            Expr::Select { cond, then, other } => vec![*cond, *then, *other],
            Expr::ExtractElement { vector, index } => vec![*vector, *index],
            Expr::InsertElement {
                vector,
                element,
                index,
            } => vec![*vector, *element, *index],
        },
        _ => Vec::new(),
    }
}
