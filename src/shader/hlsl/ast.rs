//! The syntax tree the parser builds: what the source says, with every name and type still
//! as written. The type checker gives it meaning.

use super::token::Loc;

/// A scalar type as the source spells it; `half`, `double` and the `min16` types are
/// `float` on Direct3D 9 but the table and messages keep the spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    Int,
    Uint,
    Half,
    Float,
    Double,
}

/// Sampler and texture shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dim {
    /// `sampler`, `texture`: any shape.
    Generic,
    D1,
    D2,
    D3,
    Cube,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TypeName {
    Void,
    Scalar(Scalar),
    Vector(Scalar, u8),
    Matrix(Scalar, u8, u8),
    Sampler(Dim),
    Texture(Dim),
    String,
    /// An effect's object type: `PixelShader`, `BlendState`, … (as written).
    Object(String),
    /// A struct or typedef name, resolved by the checker.
    Named(String),
    /// `struct [NAME] { … }` written in place.
    Struct(Box<StructDef>),
}

/// Modifiers written before a type or a declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Modifiers {
    pub static_: bool,
    pub const_: bool,
    pub uniform: bool,
    pub extern_: bool,
    pub shared: bool,
    pub volatile: bool,
    pub row_major: bool,
    pub column_major: bool,
    pub in_: bool,
    pub out: bool,
    pub inline: bool,
    pub precise: bool,
    /// Interpolation modifiers (`linear`, `centroid`, `nointerpolation`, …), kept for
    /// messages: SM2/3 know only `_centroid` on the semantic.
    pub centroid: bool,
    pub nointerpolation: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Type {
    pub name: TypeName,
    pub modifiers: Modifiers,
    pub loc: Loc,
}

/// `register(c4)`, `register(ps_3_0, s1)`: the register class letter and number.
#[derive(Debug, Clone, PartialEq)]
pub struct Register {
    /// The profile named before the register, if any (`ps_3_0`).
    pub profile: Option<String>,
    /// `c`, `b`, `i`, `s`, `t` … as written, lower-cased.
    pub class: char,
    pub index: u32,
    /// `register(c2[-1])`: an offset added to the index.
    pub subscript: Option<Box<Expr>>,
    pub loc: Loc,
}

/// What follows `:` after a declarator: a semantic or a `register()`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Binding {
    pub semantic: Option<(String, Loc)>,
    pub registers: Vec<Register>,
    /// `packoffset(c1.y)`, SM4's, accepted inside `cbuffer`s and kept as text.
    pub packoffset: Option<(String, Loc)>,
}

/// One `< type name = value; … >` annotation, carried and not interpreted.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    pub ty: Type,
    pub name: String,
    pub value: Option<Expr>,
}

/// A `sampler_state { Name = value; … }` block, or a pass's state assignments.
#[derive(Debug, Clone, PartialEq)]
pub struct StateAssignment {
    pub name: String,
    pub index: Option<u32>,
    pub value: Expr,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    Expr(Expr),
    /// `{ a, b, { c, d } }`
    List(Vec<Init>, Loc),
    /// `sampler_state { … }`
    SamplerState(Vec<StateAssignment>, Loc),
}

/// One name of a declaration: `x[4] : TEXCOORD0 = …`.
#[derive(Debug, Clone, PartialEq)]
pub struct Declarator {
    pub name: String,
    pub loc: Loc,
    /// Array sizes, outermost first; `None` for `[]` (sized by the initializer).
    pub array: Vec<Option<Expr>>,
    pub binding: Binding,
    pub annotations: Vec<Annotation>,
    pub init: Option<Init>,
}

/// `static const float3 a = …, b;`
#[derive(Debug, Clone, PartialEq)]
pub struct VarDecl {
    pub ty: Type,
    pub declarators: Vec<Declarator>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StructField {
    pub ty: Type,
    pub declarator: Declarator,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StructDef {
    pub name: Option<String>,
    /// `struct B : A`: B starts with A's fields.
    pub base: Option<(String, Loc)>,
    pub fields: Vec<StructField>,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub ty: Type,
    pub declarator: Declarator,
}

/// `[branch]`, `[unroll(4)]`, `[numthreads(1, 1, 1)]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    pub name: String,
    pub args: Vec<Expr>,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub attributes: Vec<Attribute>,
    pub ret: Type,
    pub name: String,
    pub loc: Loc,
    pub params: Vec<Param>,
    pub binding: Binding,
    /// `None` for a prototype.
    pub body: Option<Block>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Pass {
    pub name: Option<String>,
    pub annotations: Vec<Annotation>,
    pub states: Vec<StateAssignment>,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Technique {
    pub name: Option<String>,
    pub annotations: Vec<Annotation>,
    pub passes: Vec<Pass>,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Var(VarDecl),
    Struct(StructDef),
    Typedef(Type, Vec<Declarator>),
    Function(Function),
    Technique(Technique),
    /// `cbuffer NAME : register(b0) { … }`: its variables are globals on Direct3D 9.
    Buffer {
        name: String,
        binding: Binding,
        vars: Vec<VarDecl>,
        loc: Loc,
    },
    /// `#pragma pack_matrix(…)` from here on.
    PackMatrix {
        row_major: bool,
        loc: Loc,
    },
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    pub items: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub attributes: Vec<Attribute>,
    pub kind: StmtKind,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    Empty,
    Expr(Expr),
    Var(VarDecl),
    Struct(StructDef),
    Typedef(Type, Vec<Declarator>),
    Block(Block),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    /// `for (init; cond; step) body`
    For(Option<Box<Stmt>>, Option<Expr>, Option<Expr>, Box<Stmt>),
    While(Expr, Box<Stmt>),
    Do(Box<Stmt>, Expr),
    Switch(Expr, Vec<(Vec<Option<Expr>>, Vec<Stmt>)>),
    Break,
    Continue,
    Discard,
    Return(Option<Expr>),
    /// `asm { … }` in a function body (shaderfs's own, [`super::inline_asm`]): its lines,
    /// each the text of one source line and where that line is.
    Asm(Vec<(Loc, String)>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitOr,
    BitXor,
    And,
    Or,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Mod => "%",
            Shl => "<<",
            Shr => ">>",
            Lt => "<",
            Gt => ">",
            Le => "<=",
            Ge => ">=",
            Eq => "==",
            Ne => "!=",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            And => "&&",
            Or => "||",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Plus,
    Not,
    BitNot,
    PreInc,
    PreDec,
    PostInc,
    PostDec,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub loc: Loc,
}

impl Expr {
    /// Where the expression's text begins: its leftmost operand's place (an expression's
    /// own place is its operator's), where fxc places messages about a whole expression.
    pub fn start(&self) -> super::token::Loc {
        match &self.kind {
            ExprKind::Binary(_, a, _)
            | ExprKind::Assign(_, a, _)
            | ExprKind::Ternary(a, _, _)
            | ExprKind::Comma(a, _)
            | ExprKind::Member(a, _)
            | ExprKind::Method(a, _, _)
            | ExprKind::Index(a, _) => a.start().min(self.loc),
            ExprKind::Unary(UnOp::PostInc | UnOp::PostDec, a) => a.start().min(self.loc),
            _ => self.loc,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// An integer literal's 32 bits and whether it is unsigned ([`super::parse::IntLiteral`]).
    Int(u32, bool),
    /// A float literal's value and its suffix (`h`, `f`, `l` or none).
    Float(f64, Option<char>),
    Bool(bool),
    Str(String),
    Ident(String),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `a = b`, `a += b` (the operator of a compound assignment).
    Assign(Option<BinOp>, Box<Expr>, Box<Expr>),
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    Comma(Box<Expr>, Box<Expr>),
    /// `f(a, b)`: a function or intrinsic.
    Call(String, Vec<Expr>),
    /// `float4(a, b)`, `vector<float, 2>(…)`: a type used as a constructor.
    Construct(Type, Vec<Expr>),
    /// `(float3)x`
    Cast(Type, Box<Expr>),
    /// `x.yzw`, `s.field`
    Member(Box<Expr>, String),
    /// `x.Sample(s, uv)`
    Method(Box<Expr>, String, Vec<Expr>),
    Index(Box<Expr>, Box<Expr>),
    /// `compile ps_3_0 main(args)` or `CompileShader(ps_3_0, main(args))`: in an effect's
    /// pass, or an item of a global's initializer list, where fxc lets it stand.
    Compile(String, Box<Expr>),
    /// `asm { … }` in an effect, kept as text.
    Asm(String),
    /// `{ a, b }` where an expression stands (in state assignments), or `<name>` in a
    /// sampler state (`Texture = <tex>;`).
    List(Vec<Expr>),
}
