//! The module as the reader leaves it: what LLVM 14 holds in memory after reading DXIL's
//! LLVM 3.7 bitcode, reduced to what its textual form shows. Types, values and metadata
//! refer to one another by index, as the bitcode does, so forward references need no
//! placeholders.

/// An index into [`Module::types`].
pub type TypeId = u32;
/// A value number: module values first (globals, functions, module constants), then the
/// current function's (arguments, constants, instruction results), as the bitcode counts.
pub type ValueId = u32;
/// An index into [`Module::metadata`].
pub type MdId = u32;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    Void,
    Half,
    BFloat,
    Float,
    Double,
    X86Fp80,
    Fp128,
    PpcFp128,
    Label,
    Metadata,
    X86Mmx,
    X86Amx,
    Token,
    Int(u32),
    Pointer {
        pointee: TypeId,
        space: u32,
    },
    Function {
        vararg: bool,
        ret: TypeId,
        params: Vec<TypeId>,
    },
    /// A literal (`{ i32 }`) or identified (`%name`, `%0`) structure; `body` is `None`
    /// for an opaque one.
    Struct {
        name: Option<Vec<u8>>,
        literal: bool,
        packed: bool,
        body: Option<Vec<TypeId>>,
    },
    Array {
        len: u64,
        elem: TypeId,
    },
    Vector {
        len: u64,
        elem: TypeId,
    },
}

impl Type {
    pub fn is_float(&self) -> bool {
        matches!(
            self,
            Type::Half
                | Type::BFloat
                | Type::Float
                | Type::Double
                | Type::X86Fp80
                | Type::Fp128
                | Type::PpcFp128
        )
    }
}

/// One attribute (`Attribute` in LLVM): a kind of [`super::codes::ATTR_KINDS`] with its
/// integer or type where it has one, or a string pair.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Attr {
    /// Sorted by LLVM 14's kind order, then the value; strings come after.
    Kind {
        order: u32,
        value: u64,
        ty: Option<TypeId>,
    },
    Str {
        key: Vec<u8>,
        value: Vec<u8>,
    },
}

/// The attributes at one position (function, return, or a parameter), sorted as LLVM
/// keeps them.
pub type AttrSet = Vec<Attr>;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AttrList {
    pub function: AttrSet,
    pub ret: AttrSet,
    pub params: Vec<AttrSet>,
}

impl AttrList {
    pub fn param(&self, i: usize) -> &[Attr] {
        self.params.get(i).map_or(&[], |p| p)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Const {
    /// `zeroinitializer`, `0`, `0.0`, `null` or `none`, as the type has it.
    Null,
    Undef,
    Poison,
    /// Sign-extended from the type's width.
    Int(i128),
    /// The bits of a `half`, `float`, `double`, …
    Float(u128),
    /// An array, structure or vector of other values.
    Aggregate(Vec<ValueId>),
    /// An array or vector of integers or floating-point bits (`CST_CODE_DATA`,
    /// strings).
    Data(Vec<u64>),
    Expr(Expr),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Binary {
        opcode: &'static str,
        flags: u64,
        lhs: ValueId,
        rhs: ValueId,
    },
    Cast {
        opcode: &'static str,
        value: ValueId,
    },
    Gep {
        inbounds: bool,
        source: TypeId,
        operands: Vec<ValueId>,
    },
    Select {
        cond: ValueId,
        then: ValueId,
        other: ValueId,
    },
    ExtractElement {
        vector: ValueId,
        index: ValueId,
    },
    InsertElement {
        vector: ValueId,
        element: ValueId,
        index: ValueId,
    },
    Cmp {
        predicate: &'static str,
        lhs: ValueId,
        rhs: ValueId,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum ValueKind {
    Global(u32),
    Function(u32),
    Const(Const),
    Argument,
    /// An instruction's result.
    Inst,
    /// Named in the bitcode but defined nowhere yet (a forward reference).
    Pending,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    pub ty: TypeId,
    pub kind: ValueKind,
    pub name: Option<Vec<u8>>,
}

/// What a global variable or function shares (`GlobalValue`).
#[derive(Debug, Clone, Default)]
pub struct Linkage {
    pub linkage: &'static str,
    pub visibility: u64,
    pub dll: u64,
    pub unnamed_addr: u64,
    pub section: Option<Vec<u8>>,
    pub align: u64,
}

#[derive(Debug, Clone)]
pub struct Global {
    pub value: ValueId,
    pub value_type: TypeId,
    pub space: u32,
    pub constant: bool,
    pub init: Option<ValueId>,
    pub thread_local: u64,
    pub externally_initialized: bool,
    pub common: Linkage,
}

#[derive(Debug, Clone)]
pub struct Function {
    pub value: ValueId,
    /// The function type.
    pub ty: TypeId,
    pub cc: u64,
    pub attrs: AttrList,
    pub gc: Option<Vec<u8>>,
    pub common: Linkage,
    pub body: Option<Body>,
    /// Left out of the printed module: replaced by an upgraded declaration.
    pub erased: bool,
}

#[derive(Debug, Clone, Default)]
pub struct Body {
    /// The function's own values (arguments, constants, results), numbered from the
    /// module's value count.
    pub values: Vec<Value>,
    pub blocks: Vec<Block>,
}

#[derive(Debug, Clone, Default)]
pub struct Block {
    pub name: Option<Vec<u8>>,
    pub insts: Vec<Inst>,
}

/// An operand: a value, or metadata where the operand's type is `metadata`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    Value(ValueId),
    Metadata(MdId),
}

#[derive(Debug, Clone)]
pub struct Inst {
    pub op: Op,
    /// The result type (`void` for none).
    pub ty: TypeId,
    /// The value it defines, where its type is not `void`.
    pub value: Option<ValueId>,
    /// Attached metadata, by context kind id.
    pub md: Vec<(u32, MdId)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Atomic {
    pub ordering: &'static str,
    pub single_thread: bool,
}

#[derive(Debug, Clone)]
pub enum Op {
    Ret(Option<ValueId>),
    Br {
        then: u32,
        other: Option<(u32, ValueId)>,
    },
    Switch {
        cond: ValueId,
        default: u32,
        cases: Vec<(ValueId, u32)>,
    },
    Unreachable,
    Binary {
        opcode: &'static str,
        flags: u64,
        lhs: ValueId,
        rhs: ValueId,
    },
    Cast {
        opcode: &'static str,
        value: ValueId,
    },
    Gep {
        inbounds: bool,
        source: TypeId,
        operands: Vec<ValueId>,
    },
    Select {
        cond: ValueId,
        then: ValueId,
        other: ValueId,
    },
    ExtractElement {
        vector: ValueId,
        index: ValueId,
    },
    InsertElement {
        vector: ValueId,
        element: ValueId,
        index: ValueId,
    },
    ShuffleVector {
        a: ValueId,
        b: ValueId,
        mask: ValueId,
    },
    Cmp {
        predicate: &'static str,
        float: bool,
        fmf: u64,
        lhs: ValueId,
        rhs: ValueId,
    },
    Phi {
        incoming: Vec<(ValueId, u32)>,
        fmf: u64,
    },
    Alloca {
        allocated: TypeId,
        size: ValueId,
        align: u64,
        inalloca: bool,
        swifterror: bool,
    },
    Load {
        ptr: ValueId,
        align: u64,
        volatile: bool,
        atomic: Option<Atomic>,
    },
    Store {
        ptr: ValueId,
        value: ValueId,
        align: u64,
        volatile: bool,
        atomic: Option<Atomic>,
    },
    ExtractValue {
        aggregate: ValueId,
        indices: Vec<u64>,
    },
    InsertValue {
        aggregate: ValueId,
        value: ValueId,
        indices: Vec<u64>,
    },
    Call {
        /// Shared: most calls of a program carry one of a few lists.
        attrs: std::rc::Rc<AttrList>,
        cc: u64,
        tail: &'static str,
        fmf: u64,
        fn_ty: TypeId,
        callee: ValueId,
        args: Vec<Operand>,
    },
    Fence(Atomic),
    CmpXchg {
        ptr: ValueId,
        cmp: ValueId,
        new: ValueId,
        volatile: bool,
        weak: bool,
        success: Atomic,
        failure: &'static str,
        align: u64,
    },
    AtomicRmw {
        op: &'static str,
        ptr: ValueId,
        value: ValueId,
        volatile: bool,
        atomic: Atomic,
        align: u64,
    },
}

/// One metadata node, string or value.
#[derive(Debug, Clone, PartialEq)]
pub enum Metadata {
    String(Vec<u8>),
    /// A value as metadata: the value number in the numbering where it was read (module
    /// level, or the function's for function-local metadata).
    Value(ValueId),
    Node {
        distinct: bool,
        operands: Vec<Option<MdId>>,
    },
    /// `i64 0`, which an upgraded TBAA tag holds (no value of the bitcode is it).
    Int64Zero,
}

#[derive(Debug, Clone)]
pub struct Module {
    pub types: Vec<Type>,
    pub triple: Vec<u8>,
    pub datalayout: Vec<u8>,
    pub asm: Vec<u8>,
    /// Module values by number: globals and functions in record order, then constants.
    pub values: Vec<Value>,
    pub globals: Vec<Global>,
    pub functions: Vec<Function>,
    /// The order functions print in: record order, upgraded declarations appended.
    pub function_order: Vec<u32>,
    pub metadata: Vec<Metadata>,
    pub named: Vec<(Vec<u8>, Vec<MdId>)>,
    /// Metadata kinds by context id: LLVM 14's fixed ones, then the module's.
    pub kinds: Vec<Vec<u8>>,
}

impl Module {
    /// The types directly inside `ty`, in `Type::subtypes` order.
    pub fn subtypes(&self, ty: TypeId) -> Vec<TypeId> {
        match &self.types[ty as usize] {
            Type::Function { ret, params, .. } => {
                let mut v = Vec::with_capacity(params.len() + 1);
                v.push(*ret);
                v.extend_from_slice(params);
                v
            }
            Type::Pointer { pointee, .. } => vec![*pointee],
            Type::Struct { body: Some(b), .. } => b.clone(),
            Type::Array { elem, .. } | Type::Vector { elem, .. } => vec![*elem],
            _ => Vec::new(),
        }
    }

    pub fn ty(&self, ty: TypeId) -> &Type {
        &self.types[ty as usize]
    }
}
