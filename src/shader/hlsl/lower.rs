//! The syntax tree to the code of one entry point: names resolved, types checked and
//! converted as HLSL converts them, functions inlined, and control flow flattened: an `if`
//! runs both sides with every assignment guarded by its condition, loops are unrolled, a
//! `return`, `break` or `discard` guards what follows. What is left is [`ir::Program`].

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::ast::{self, BinOp, ExprKind, Init, Item, StmtKind, TypeName, UnOp};
use super::diag::Diagnostics;
use super::ir::{
    fold, Branch, Comp, Compare, Condition, Input, Loop, LoopCount, NodeId, Op, Output, Program,
    Region, TexKind, Uniform,
};
use super::token::Loc;
use super::types::{Base, Field, StructTy, Ty};
use crate::shader::d3d9::run::flush;

/// The shader model being compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    pub pixel: bool,
    pub major: u8,
    /// 0, or 1 for the `_x`/`_a`/`_b` profiles.
    pub minor: u8,
}

impl Profile {
    pub fn parse(name: &str) -> Option<Profile> {
        let (pixel, rest) = if let Some(r) = name.strip_prefix("ps_") {
            (true, r)
        } else {
            (false, name.strip_prefix("vs_")?)
        };
        let (major, minor) = match rest {
            "1_1" => (1, 1),
            "1_2" if pixel => (1, 2),
            "1_3" if pixel => (1, 3),
            "1_4" if pixel => (1, 4),
            "2_0" => (2, 0),
            "2_x" | "2_a" => (2, 1),
            "2_b" if pixel => (2, 1),
            "3_0" => (3, 0),
            _ => return None,
        };
        Some(Profile {
            pixel,
            major,
            minor,
        })
    }

    /// The profile's name as a listing spells it (`ps_2_x` for ps_2_a and ps_2_b).
    pub fn name(self) -> String {
        let kind = if self.pixel { "ps" } else { "vs" };
        match (self.major, self.minor) {
            (2, 1) => format!("{kind}_2_x"),
            (major, minor) => format!("{kind}_{major}_{minor}"),
        }
    }

    /// Whether the model has `rep` and integer registers: vertex shaders from 2.0 and
    /// pixel shaders from 3.0 (ps_2_x only where a card says so).
    pub fn has_loops(self) -> bool {
        if self.pixel {
            self.major >= 3
        } else {
            self.major >= 2
        }
    }

    /// vs_1_1: no flow control, `abs`, `lrp`, `pow`, `nrm` or `sincos`; `frc` writes .x
    /// and .y only; `a0` is set by `mov`.
    pub fn is_vs_1_1(self) -> bool {
        !self.pixel && self.major == 1
    }

    /// Whether the model can leave a loop at a run-time condition (`break_comp`): dynamic
    /// flow control, vs_2_x (vs_2_a), vs_3_0 and ps_3_0.
    pub fn has_breaks(self) -> bool {
        self.major >= 3 || (!self.pixel && self.major == 2 && self.minor > 0)
    }
}

/// Loop iterations unrolled at most, as fxc's own bound on unrolling.
const MAX_UNROLL: u32 = 1024;
/// How many iterations an unrolled loop may run after a path left it at a run-time
/// condition (fxc gives up on such loops after a few hundred too).
const MAX_RUN_TIME_ITERATIONS: u32 = 256;
/// The same, for all the loops of one nest together: loops inside loops multiply.
const MAX_NEST_RUN_TIME_ITERATIONS: u32 = 1024;
/// Nested inlined calls at most (HLSL has no recursion; this catches it).
const MAX_CALL_DEPTH: usize = 64;

/// A value: its type and its components, flattened.
#[derive(Debug, Clone)]
pub(super) struct Val {
    pub ty: Ty,
    pub comps: Vec<Comp>,
}

#[derive(Debug, Clone)]
struct Var {
    ty: Ty,
    comps: Vec<Comp>,
    /// Globals that are uniforms cannot be assigned to.
    read_only: bool,
}

/// What an assignment can write: a variable and which of its components.
#[derive(Debug, Clone)]
struct Place {
    scope: usize,
    name: String,
    ty: Ty,
    /// Indices into the variable's components; for a dynamically indexed array, one list
    /// per element with the index that selects it.
    comps: Vec<usize>,
}

/// One inlined call: where its `return`s go.
struct Frame {
    ret_ty: Ty,
    ret: Vec<Comp>,
    /// Set once a `return` ran (a condition, or none yet).
    returned: Option<Comp>,
    /// Every path of the branch being lowered has returned: an `if` both of whose
    /// branches end so leaves nothing to run after it.
    ended: bool,
}

/// The values of variables by scope depth and name, and of the function's return value,
/// at one point of the code; with them, what has returned and what has left the loop.
#[derive(Default)]
struct Values(
    HashMap<(usize, String), Vec<Comp>>,
    Option<Vec<Comp>>,
    Option<(Option<Comp>, bool)>,
    Option<LoopFlags>,
);

/// What a loop body's results are computed from (see [`Lowering::body_reads`]).
#[derive(Default)]
struct BodyReads {
    costly: bool,
    run_time: bool,
}

/// How often a loop runs, its counters, and (for a known count) the variables after it.
type TripCount = (LoopCount, Vec<(usize, String)>, Option<Values>);

/// A kept loop's body lowered once: the loop's number, its carried chunks (variable,
/// first component, value before the loop), each carried variable's value as an
/// iteration starts, and every variable's after the body (before the step).
struct LoopRun {
    lp: u32,
    chunks: Vec<((usize, String), usize, Vec<Comp>)>,
    start: HashMap<(usize, String), Vec<Comp>>,
    after_body: Values,
}

/// One unrolled loop's exits.
#[derive(Default, Clone)]
struct LoopFlags {
    broken: Option<Comp>,
    continued: Option<Comp>,
    /// Every path of the branch being lowered has broken out, or continued.
    ended_break: bool,
    ended_continue: bool,
}

/// The conditions a kept loop tests besides its count: `first` as each iteration starts
/// (a `while` loop's), `last` once its body has run (a `do` loop's). Each leaves the loop
/// where it is false.
#[derive(Clone, Copy, Default)]
struct Exits<'e> {
    first: Option<&'e ast::Expr>,
    last: Option<&'e ast::Expr>,
}

/// How an `if` may stay a branch: what the instruction would test, whether the source
/// asked for a branch (`[branch]`), and where its condition begins.
#[derive(Clone, Copy)]
struct Plan {
    condition: Condition,
    forced: bool,
    loc: Loc,
}

pub struct Lowering<'a> {
    pub program: Program,
    pub diags: &'a mut Diagnostics,
    profile: Profile,
    structs: HashMap<String, Rc<StructTy>>,
    typedefs: HashMap<String, Ty>,
    /// The typedefs of the file's top level, all a called function's body sees of them.
    global_typedefs: HashMap<String, Ty>,
    /// Inputs of semantics the profile has no register for: the node, where and what.
    unreadable_inputs: Vec<(NodeId, Loc, String)>,
    /// The matrix packing each typedef was declared with: a typedef keeps its own.
    typedef_major: HashMap<String, bool>,
    functions: HashMap<String, Vec<&'a ast::Function>>,
    /// `scopes[0]` holds the globals.
    scopes: Vec<HashMap<String, Var>>,
    frames: Vec<Frame>,
    loops: Vec<LoopFlags>,
    /// The region the code being lowered runs in: the top level, a kept loop's body or
    /// a kept branch's arm.
    region: Region,
    /// Functions inlined so far: an arm that calls one is worth a branch to fxc.
    calls: u32,
    /// Iterations the loops of the outermost unrolled loop being lowered have run after
    /// a path left one at a run-time condition, and how many unrolled loops are open.
    nest_run_time: u32,
    unrolling: u32,
    /// Functions found to fall off their end without returning their value.
    unreturning: HashSet<String>,
    /// What each guarded assignment chose between: its result, the guard, the value
    /// assigned. Where the guard holds (on the paths still running a loop, say) the
    /// result is that value ([`Self::rebuild`]).
    chosen: HashMap<Comp, (Comp, Comp)>,
    /// The condition the code being lowered runs under (an enclosing `if`'s), if any.
    pred: Option<Comp>,
    /// The guard under which the variables hold what they are now: an `if` lowers each
    /// branch from the values before it, writing straight through while the guard is
    /// this one, and joins the two with one choice per variable that differs, as fxc
    /// does (`c ? a + 1 : a - 1`, not a choice made of another).
    env_pred: Option<Comp>,
    /// `#pragma pack_matrix` in effect.
    row_major_default: bool,
    /// A `#pragma pack_matrix` was seen: typedefs and struct members take the packing in
    /// effect ("latent majority"); before one, a typedef of a plain matrix has none and
    /// members are column-major.
    pragma_seen: bool,
    /// Registers to keep: a constant of this name the source does not bind goes here.
    keep: HashMap<String, (char, u32)>,
    /// `static const` arrays read at a run-time index, by their values' components: the
    /// literal uniform ([`Uniform::literal`]) that holds them.
    literal_arrays: HashMap<Vec<Comp>, u32>,
}

impl<'a> Lowering<'a> {
    pub fn new(profile: Profile, diags: &'a mut Diagnostics) -> Self {
        let mut program = Program::default();
        program.lanes_in_place = profile.pixel && profile.major == 1;
        Lowering {
            program,
            diags,
            profile,
            structs: HashMap::new(),
            typedefs: HashMap::new(),
            global_typedefs: HashMap::new(),
            unreadable_inputs: Vec::new(),
            typedef_major: HashMap::new(),
            functions: HashMap::new(),
            scopes: vec![HashMap::new()],
            frames: Vec::new(),
            loops: Vec::new(),
            region: Region::Top,
            calls: 0,
            nest_run_time: 0,
            unrolling: 0,
            unreturning: HashSet::new(),
            chosen: HashMap::new(),
            pred: None,
            env_pred: None,
            row_major_default: false,
            pragma_seen: false,
            keep: HashMap::new(),
            literal_arrays: HashMap::new(),
        }
    }

    /// Constants the source leaves unbound that must keep a register (`c`/`s` and its
    /// number): those of the shader a save replaces, which the game sets by register.
    /// Matrices are row-major unless they say otherwise (`-Zpr`).
    pub fn row_major(mut self, row_major: bool) -> Self {
        self.row_major_default = row_major;
        self
    }

    pub fn keep_registers(mut self, keep: HashMap<String, (char, u32)>) -> Self {
        self.keep = keep;
        self
    }

    fn error(&mut self, loc: Loc, msg: impl Into<String>) {
        self.diags.error(loc, msg);
    }

    // ---- types -------------------------------------------------------------------

    fn resolve(&mut self, t: &ast::Type) -> Option<Ty> {
        self.resolve_name(&t.name, t.loc)
    }

    fn resolve_name(&mut self, name: &TypeName, loc: Loc) -> Option<Ty> {
        Some(match name {
            TypeName::Void => Ty::Void,
            TypeName::Scalar(b) => Ty::Scalar(*b),
            TypeName::Vector(b, n) => Ty::Vector(*b, *n),
            TypeName::Matrix(b, r, c) => Ty::Matrix(*b, *r, *c),
            TypeName::Sampler(d) => Ty::Sampler(*d),
            TypeName::Texture(d) => Ty::Texture(*d),
            TypeName::String => Ty::String,
            TypeName::Object(_) => Ty::Object,
            TypeName::Named(n) => {
                if let Some(t) = self.typedefs.get(n) {
                    t.clone()
                } else if let Some(s) = self.structs.get(n) {
                    Ty::Struct(s.clone())
                } else if let Some(b) =
                    super::parse::numeric_type(n).or_else(|| super::parse::object_type(n))
                {
                    // A built-in type whose name a typedef no longer in scope took.
                    return self.resolve_name(&b, loc);
                } else {
                    self.error(loc, format!("undeclared type '{n}'"));
                    return None;
                }
            }
            TypeName::Struct(def) => self.define_struct(def)?,
        })
    }

    fn define_struct(&mut self, def: &ast::StructDef) -> Option<Ty> {
        if def.fields.is_empty() && def.base.is_none() {
            if let Some(s) = def.name.as_ref().and_then(|n| self.structs.get(n)) {
                return Some(Ty::Struct(s.clone()));
            }
        }
        let mut fields = Vec::new();
        let mut inherited = 0;
        let mut base_ty = None;
        if let Some((base, loc)) = &def.base {
            match self.structs.get(base).cloned() {
                Some(b) => {
                    fields.extend(b.fields.iter().cloned());
                    inherited = fields.len();
                    base_ty = Some(b);
                }
                None => self.error(*loc, format!("undeclared struct '{base}'")),
            }
        }
        for f in &def.fields {
            let ty = self.resolve(&f.ty)?;
            let ty = self.array_of(ty, &f.declarator.array, f.declarator.loc)?;
            if fields[inherited..]
                .iter()
                .any(|x: &Field| x.name == f.declarator.name)
            {
                self.error(
                    f.declarator.loc,
                    format!("redefinition of field '{}'", f.declarator.name),
                );
            }
            fields.push(Field {
                name: f.declarator.name.clone(),
                ty,
                semantic: f.declarator.binding.semantic.as_ref().map(|s| s.0.clone()),
                row_major: Some(self.member_majority(&f.ty)),
            });
        }
        let name = def.name.clone().unwrap_or_else(|| "<unnamed>".into());
        let size: u32 = fields.iter().fold(0, |n: u32, f| {
            n.saturating_add(register_count(&f.ty, false))
        });
        if size > MAX_REGISTERS {
            self.error(def.loc, format!("struct '{name}' takes {size} registers, more than the {MAX_REGISTERS} a value may take"));
            return None;
        }
        let s = Rc::new(StructTy {
            name: name.clone(),
            fields,
            base: base_ty,
        });
        if def.name.is_some() {
            self.structs.insert(name, s.clone());
        }
        Some(Ty::Struct(s))
    }

    fn array_of(&mut self, mut ty: Ty, dims: &[Option<ast::Expr>], loc: Loc) -> Option<Ty> {
        for d in dims.iter().rev() {
            let Some(e) = d else {
                self.error(loc, "an array without a size needs an initializer");
                return None;
            };
            let n = self.const_int(e)?;
            if !(1..=65536).contains(&n) {
                self.error(e.loc, format!("array size {n} is not between 1 and 65536"));
                return None;
            }
            ty = Ty::Array(Box::new(ty), n as u32);
            if !self.fits_a_table(&ty, e.loc) {
                return None;
            }
        }
        Some(ty)
    }

    /// Whether a value of `ty` takes no more registers than a value may
    /// ([`MAX_REGISTERS`]): more is refused at `loc`, before a register of it is made.
    fn fits_a_table(&mut self, ty: &Ty, loc: Loc) -> bool {
        let registers = register_count(ty, false);
        if registers > MAX_REGISTERS {
            self.error(loc, format!("'{ty}' takes {registers} registers, more than the {MAX_REGISTERS} a value may take"));
            return false;
        }
        true
    }

    /// An expression that must be a compile-time integer (an array size, a loop bound).
    fn const_int(&mut self, e: &ast::Expr) -> Option<i64> {
        let v = self.expr(e)?;
        if v.comps.len() != 1 {
            self.error(e.loc, "expected a scalar constant");
            return None;
        }
        match self.program.constant(v.comps[0]) {
            Some(k) => Some(k as i64),
            None => {
                self.error(e.loc, "expected a value known at compile time");
                None
            }
        }
    }
}

impl Lowering<'_> {
    /// Whether matrices of a declared type are row-major: as it says, else as the typedef
    /// it names was declared, else as `#pragma pack_matrix` (or `-Zpr`) says here.
    /// The packing a typedef binds, if any: a plain matrix's only once a pragma was seen;
    /// an array's or other type's always (shader model 1: see below).
    fn typedef_majority(&self, t: &ast::Type, resolved: &Ty) -> Option<bool> {
        if let Some(m) = major_of(&t.modifiers) {
            return Some(m);
        }
        if let TypeName::Named(n) = &t.name {
            if let Some(&m) = self.typedef_major.get(n) {
                return Some(m);
            }
        }
        match resolved {
            Ty::Matrix(..) if !self.pragma_seen => None,
            // The legacy compiler (shader model 1): a matrix typedef binds no packing (the
            // pragma where a variable is declared applies); an array typedef binds
            // column-major, whatever the pragma.
            Ty::Matrix(..) if self.profile.major == 1 => None,
            _ if self.profile.major == 1 => Some(false),
            _ => Some(self.member_majority(t)),
        }
    }

    /// A struct member's or array element's packing: as written, else the typedef's,
    /// else the latent one (column-major before any pragma).
    fn member_majority(&self, t: &ast::Type) -> bool {
        major_of(&t.modifiers)
            .or_else(|| match &t.name {
                TypeName::Named(n) => self.typedef_major.get(n).copied(),
                _ => None,
            })
            .unwrap_or(self.pragma_seen && self.row_major_default)
    }

    fn majority(&self, t: &ast::Type) -> bool {
        major_of(&t.modifiers)
            .or_else(|| match &t.name {
                TypeName::Named(n) => self.typedef_major.get(n).copied(),
                _ => None,
            })
            .unwrap_or(self.row_major_default)
    }
}

fn major_of(m: &ast::Modifiers) -> Option<bool> {
    if m.row_major {
        Some(true)
    } else if m.column_major {
        Some(false)
    } else {
        None
    }
}

/// Splits a semantic into its usage and index: `TEXCOORD3` → (`TEXCOORD`, 3), and
/// the SV_ spellings into the Direct3D 9 ones (`SV_Target1` → `COLOR` 1).
pub fn split_semantic(semantic: &str, pixel_input: bool) -> (String, u32, bool) {
    let upper = semantic.to_ascii_uppercase();
    let (upper, centroid) = match upper.strip_suffix("_CENTROID") {
        Some(u) => (u.to_string(), true),
        None => (upper, false),
    };
    let digits = upper.len() - upper.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (name, index) = upper.split_at(upper.len() - digits);
    let index = index.parse().unwrap_or(0);
    let name = match name {
        "SV_TARGET" => "COLOR",
        "SV_POSITION" if pixel_input => "VPOS",
        "SV_POSITION" => "POSITION",
        "SV_DEPTH" => "DEPTH",
        "SV_ISFRONTFACE" => "VFACE",
        n => n,
    };
    (name.to_string(), index, centroid)
}

impl<'a> Lowering<'a> {
    // ---- the program -------------------------------------------------------------

    /// Lower `entry` of `program`; `None` when errors were reported.
    pub fn run(mut self, program: &'a ast::Program, entry: &str) -> Option<Program> {
        for item in &program.items {
            self.global_item(item);
        }
        self.global_typedefs = self.typedefs.clone();
        let Some(candidates) = self.functions.get(entry).cloned() else {
            self.error(Loc::default(), format!("entry point '{entry}' not found"));
            return None;
        };
        let Some(f) = candidates.iter().find(|f| f.body.is_some()).copied() else {
            self.error(
                candidates[0].loc,
                format!("entry point '{entry}' has no body"),
            );
            return None;
        };
        self.entry(f);
        if self.diags.has_errors() {
            return None;
        }
        Some(self.program)
    }

    fn global_item(&mut self, item: &'a Item) {
        match item {
            Item::Struct(def) => {
                self.define_struct(def);
            }
            Item::Typedef(ty, names) => {
                if let Some(t) = self.resolve(ty) {
                    for d in names {
                        if let Some(t) = self.array_of(t.clone(), &d.array, d.loc) {
                            if let Some(major) = self.typedef_majority(ty, &t) {
                                self.typedef_major.insert(d.name.clone(), major);
                            }
                            self.typedefs.insert(d.name.clone(), t);
                        }
                    }
                }
            }
            Item::Function(f) => {
                self.functions.entry(f.name.clone()).or_default().push(f);
            }
            Item::Var(decl) => self.global_var(decl),
            Item::Buffer { vars, .. } => {
                for v in vars {
                    self.global_var(v);
                }
            }
            Item::PackMatrix { row_major, .. } => {
                self.row_major_default = *row_major;
                self.pragma_seen = true;
            }
            Item::Technique(_) => {}
        }
    }

    fn global_var(&mut self, decl: &ast::VarDecl) {
        let Some(base) = self.resolve(&decl.ty) else {
            return;
        };
        let m = decl.ty.modifiers;
        for d in &decl.declarators {
            let Some(ty) = self.sized(base.clone(), d) else {
                continue;
            };
            if m.static_ {
                // A static global: its initializer's value, or zero.
                let comps = match &d.init {
                    Some(init) => match self.initializer(init, &ty) {
                        Some(c) => c,
                        None => continue,
                    },
                    None => {
                        let z = self.program.konst(0.0);
                        vec![z; ty.components()]
                    }
                };
                self.scopes[0].insert(
                    d.name.clone(),
                    Var {
                        ty,
                        comps,
                        read_only: m.const_,
                    },
                );
                continue;
            }
            let row_major = self.majority(&decl.ty);
            let state_block = |i: &Init| match i {
                Init::SamplerState(..) => true,
                Init::List(items, _) => {
                    items.iter().any(|x| matches!(x, Init::SamplerState(..))) || items.is_empty()
                }
                Init::Expr(_) => false,
            };
            let default = match &d.init {
                Some(init) if state_block(init) => None,
                Some(Init::Expr(_) | Init::List(..)) if !ty.is_object() => {
                    let init = d.init.as_ref().unwrap();
                    match self.initializer(init, &ty) {
                        Some(_) if Self::holds_shader(init) => None,
                        Some(c) => {
                            let vals: Option<Vec<f32>> =
                                c.iter().map(|&c| self.program.constant(c)).collect();
                            if vals.is_none() {
                                self.error(
                                    d.loc,
                                    format!("'{}': a uniform's initial value must be known at compile time", d.name),
                                );
                            }
                            vals
                        }
                        None => None,
                    }
                }
                _ => None,
            };
            self.declare_uniform(d.name.clone(), ty, row_major, &d.binding, default, d.loc);
        }
    }

    fn sized(&mut self, ty: Ty, d: &ast::Declarator) -> Option<Ty> {
        // `float a[] = {…}` takes its size from the initializer.
        if d.array.first().is_some_and(Option::is_none) {
            let n = match &d.init {
                Some(Init::List(items, _)) => {
                    let inner = self.array_of(ty.clone(), &d.array[1..], d.loc)?;
                    let per = inner.components().max(1);
                    let total: usize = items.iter().map(|i| self.init_count(i)).sum();
                    total.div_ceil(per)
                }
                // `float4 b[] = a;` for an array `a`: as many elements as it holds.
                Some(Init::Expr(e)) if matches!(self.peek_type(e), Some(Ty::Array(..))) => {
                    let inner = self.array_of(ty.clone(), &d.array[1..], d.loc)?;
                    let per = inner.components().max(1);
                    self.peek_components(e).div_ceil(per)
                }
                _ => {
                    self.error(
                        d.loc,
                        format!(
                            "'{}': an array without a size needs an initializer list",
                            d.name
                        ),
                    );
                    return None;
                }
            };
            let inner = self.array_of(ty, &d.array[1..], d.loc)?;
            return Some(Ty::Array(Box::new(inner), n as u32));
        }
        self.array_of(ty, &d.array, d.loc)
    }

    fn init_count(&mut self, init: &Init) -> usize {
        match init {
            Init::List(items, _) => items.iter().map(|i| self.init_count(i)).sum(),
            Init::Expr(e) => self.peek_components(e),
            Init::SamplerState(..) => 1,
        }
    }

    /// How many components an expression has, without keeping its code.
    fn peek_components(&mut self, e: &ast::Expr) -> usize {
        self.peek(e).map_or(1, |v| v.comps.len())
    }

    /// An expression's type, without keeping its code or its errors.
    fn peek_type(&mut self, e: &ast::Expr) -> Option<Ty> {
        self.peek(e).map(|v| v.ty)
    }

    fn peek(&mut self, e: &ast::Expr) -> Option<Val> {
        let saved = std::mem::take(self.diags);
        let v = self.expr(e);
        *self.diags = saved;
        v
    }

    fn declare_uniform(
        &mut self,
        name: String,
        ty: Ty,
        row_major: bool,
        binding: &ast::Binding,
        default: Option<Vec<f32>>,
        loc: Loc,
    ) {
        let is_sampler = matches!(ty, Ty::Sampler(_) | Ty::Texture(_))
            || matches!(&ty, Ty::Array(t, _) if matches!(**t, Ty::Sampler(_)));
        let want = if is_sampler { 's' } else { 'c' };
        let register = binding.registers.iter().find(|r| {
            r.class == want
                && r.profile.as_deref().map_or(true, |p| {
                    p.starts_with(if self.profile.pixel { "ps" } else { "vs" })
                })
        });
        let bound = match register {
            Some(r) => {
                let offset = match &r.subscript {
                    Some(e) => self.const_int(e).unwrap_or(0),
                    None => 0,
                };
                let index = i64::from(r.index) + offset;
                if index < 0 {
                    self.error(r.loc, format!("register {}{index} does not exist", r.class));
                    None
                } else {
                    Some(index as u32)
                }
            }
            None => None,
        };
        let kept = bound.is_none()
            && self
                .keep
                .get(&name)
                .is_some_and(|&(class, _)| class == want);
        let bound = if kept {
            self.keep.get(&name).map(|&(_, r)| r)
        } else {
            bound
        };
        let set_bound = |class: char| {
            binding
                .registers
                .iter()
                .find(|r| r.class == class && r.subscript.is_none())
                .map(|r| r.index)
                .or_else(|| {
                    self.keep
                        .get(&name)
                        .filter(|&&(c, _)| c == class)
                        .map(|&(_, r)| r)
                })
        };
        let (int_bound, bool_bound) = (set_bound('i'), set_bound('b'));
        let var = self.program.uniforms.len() as u32;
        let registers = register_count(&ty, row_major);
        let comps = self.uniform_comps(var, &ty, row_major, &mut 0);
        self.program.uniforms.push(Uniform {
            name: name.clone(),
            ty: ty.clone(),
            registers,
            bound,
            kept,
            int_bound,
            bool_bound,
            default,
            row_major,
            is_sampler,
            literal: false,
            loc,
        });
        self.scopes[0].insert(
            name,
            Var {
                ty,
                comps,
                read_only: true,
            },
        );
    }

    /// The components of a uniform, each a lane of one of its registers.
    fn uniform_comps(&mut self, var: u32, ty: &Ty, row_major: bool, reg: &mut u32) -> Vec<Comp> {
        match ty {
            Ty::Sampler(_) | Ty::Texture(_) => {
                let c = self.program.raw(Op::Sampler(var), vec![], 1)[0];
                vec![c]
            }
            Ty::Scalar(_) | Ty::Vector(..) => {
                let n = ty.components();
                let r = self.uniform_reg(var, *reg);
                *reg += 1;
                r[..n].to_vec()
            }
            Ty::Matrix(_, rows, cols) => {
                let (rows, cols) = (usize::from(*rows), usize::from(*cols));
                let regs: Vec<Vec<Comp>> = (0..if row_major { rows } else { cols })
                    .map(|i| self.uniform_reg(var, *reg + i as u32))
                    .collect();
                *reg += regs.len() as u32;
                let mut out = Vec::with_capacity(rows * cols);
                for (r, c) in (0..rows).flat_map(|r| (0..cols).map(move |c| (r, c))) {
                    out.push(if row_major { regs[r][c] } else { regs[c][r] });
                }
                out
            }
            Ty::Array(t, n) => {
                let mut out = Vec::new();
                for _ in 0..*n {
                    out.extend(self.uniform_comps(var, t, row_major, reg));
                }
                out
            }
            Ty::Struct(s) => {
                let mut out = Vec::new();
                for f in &s.fields {
                    out.extend(self.uniform_comps(
                        var,
                        &f.ty,
                        f.row_major.unwrap_or(row_major),
                        reg,
                    ));
                }
                out
            }
            _ => Vec::new(),
        }
    }

    fn uniform_reg(&mut self, var: u32, offset: u32) -> Vec<Comp> {
        self.program.raw(Op::Uniform { var, offset }, vec![], 4)
    }
}

/// Float registers a uniform of this type takes.
pub fn register_count(ty: &Ty, row_major: bool) -> u32 {
    match ty {
        Ty::Scalar(_) | Ty::Vector(..) | Ty::Sampler(_) | Ty::Texture(_) => 1,
        Ty::Matrix(_, r, c) => u32::from(if row_major { *r } else { *c }),
        Ty::Array(t, n) => register_count(t, row_major).saturating_mul(*n),
        Ty::Struct(s) => s.fields.iter().fold(0, |n: u32, f| {
            n.saturating_add(register_count(&f.ty, f.row_major.unwrap_or(row_major)))
        }),
        _ => 0,
    }
}

/// The most registers a value may take: as many as the largest array HLSL declares of
/// one-register elements (65536; Microsoft's compilers take one, and with more than that
/// one of them was still compiling after 10 minutes).
pub(crate) const MAX_REGISTERS: u32 = 65536;

impl<'a> Lowering<'a> {
    // ---- the entry point -----------------------------------------------------------

    fn entry(&mut self, f: &'a ast::Function) {
        if let Some(block) = super::asm_shader::of_function(f) {
            self.program.shader_asm = Some(block);
            return;
        }
        let mut outs: Vec<(Ty, Option<String>, String, Loc)> = Vec::new();
        self.scopes.push(HashMap::new());
        for p in &f.params {
            let Some(ty) = self.resolve(&p.ty) else {
                continue;
            };
            let Some(ty) = self.array_of(ty, &p.declarator.array, p.declarator.loc) else {
                continue;
            };
            let m = p.ty.modifiers;
            let semantic = p.declarator.binding.semantic.as_ref().map(|s| s.0.clone());
            let name = p.declarator.name.clone();
            if m.uniform
                || (semantic.is_none()
                    && !m.out
                    && (ty.is_object() || !self.struct_has_semantics(&ty)))
            {
                if !m.uniform && !ty.is_object() {
                    self.error(
                        p.declarator.loc,
                        format!(
                            "'{name}': entry point parameter without a semantic must be uniform"
                        ),
                    );
                    continue;
                }
                let row_major = self.majority(&p.ty);
                self.declare_uniform(
                    format!("${name}"),
                    ty.clone(),
                    row_major,
                    &p.declarator.binding,
                    None,
                    p.declarator.loc,
                );
                let var = self.scopes[0].remove(&format!("${name}")).unwrap();
                self.scopes[1].insert(name, var);
                continue;
            }
            let comps = if m.in_ || !m.out {
                match self.input_comps(
                    &ty,
                    semantic.as_deref(),
                    p.ty.modifiers.centroid,
                    p.declarator.loc,
                ) {
                    Some(c) => c,
                    None => continue,
                }
            } else {
                let z = self.program.konst(0.0);
                vec![z; ty.components()]
            };
            if m.out {
                outs.push((ty.clone(), semantic.clone(), name.clone(), p.declarator.loc));
            }
            self.scopes[1].insert(
                name,
                Var {
                    ty,
                    comps,
                    read_only: false,
                },
            );
        }
        let Some(ret_ty) = self.resolve(&f.ret) else {
            return;
        };
        let z = self.program.konst(0.0);
        self.frames.push(Frame {
            ret: vec![z; ret_ty.components()],
            ret_ty: ret_ty.clone(),
            returned: None,
            ended: false,
        });
        self.check_returns(f, &ret_ty);
        if let Some(body) = &f.body {
            self.stmts(&body.stmts);
        }
        let frame = self.frames.pop().unwrap();
        if ret_ty != Ty::Void {
            let semantic = f.binding.semantic.as_ref().map(|s| s.0.clone());
            self.output(&ret_ty, semantic.as_deref(), &frame.ret, f.loc);
        }
        for (ty, semantic, name, loc) in outs {
            let comps = self.scopes[1][&name].comps.clone();
            self.output(&ty, semantic.as_deref(), &comps, loc);
        }
        self.scopes.pop();
        self.refuse_unreadable_inputs();
        // The rasteriser needs a position from every vertex (fxc's X4541).
        let position = self
            .program
            .outputs
            .iter()
            .filter(|o| o.usage == "POSITION" && o.index == 0)
            .map(|o| o.comps.len())
            .sum::<usize>();
        if !self.profile.pixel && position < 4 && !self.diags.has_errors() {
            self.error(
                f.loc,
                format!(
                    "'{}': a vertex shader must write all four components of POSITION (or SV_Position), and this one {}",
                    f.name,
                    if position == 0 { "writes none".to_string() } else { format!("writes {position}") }
                ),
            );
        }
    }

    /// A function that returns a value must return one on every path through it (fxc's
    /// X3507, said once per function, where its name is).
    fn check_returns(&mut self, f: &ast::Function, ret_ty: &Ty) {
        let Some(body) = &f.body else { return };
        if *ret_ty == Ty::Void
            || body.stmts.iter().any(returns)
            || !self.unreturning.insert(f.name.clone())
        {
            return;
        }
        self.error(
            f.loc,
            format!("'{}': not all control paths return a value", f.name),
        );
    }

    /// An input the profile cannot read is an error where the shader's results read it.
    fn refuse_unreadable_inputs(&mut self) {
        if self.unreadable_inputs.is_empty() {
            return;
        }
        let mut seen = HashSet::new();
        let mut todo: Vec<NodeId> = self
            .program
            .outputs
            .iter()
            .flat_map(|o| &o.comps)
            .chain(self.program.kills.iter().flatten())
            .map(|c| c.node)
            .collect();
        while let Some(n) = todo.pop() {
            if seen.insert(n) {
                todo.extend(self.program.node(n).args.iter().flatten().map(|c| c.node));
            }
        }
        for (node, loc, semantic) in std::mem::take(&mut self.unreadable_inputs) {
            if seen.contains(&node) {
                self.error(loc, format!("invalid ps_2_0 input semantic '{semantic}': ps_2_0 and ps_2_x read COLOR# and TEXCOORD# only"));
            }
        }
    }

    fn struct_has_semantics(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Struct(s) => s
                .fields
                .iter()
                .all(|f| f.semantic.is_some() || self.struct_has_semantics(&f.ty)),
            _ => false,
        }
    }

    /// The components of an entry-point input: a register per semantic, struct fields
    /// each by their own.
    fn input_comps(
        &mut self,
        ty: &Ty,
        semantic: Option<&str>,
        centroid: bool,
        loc: Loc,
    ) -> Option<Vec<Comp>> {
        if let Ty::Struct(s) = ty {
            let mut out = Vec::new();
            for f in &s.fields {
                let sem = f.semantic.as_deref().or(semantic);
                out.extend(self.input_comps(&f.ty, sem, centroid, loc)?);
            }
            return Some(out);
        }
        let Some(semantic) = semantic else {
            self.error(loc, "entry point input without a semantic");
            return None;
        };
        let (usage, index, sem_centroid) = split_semantic(semantic, self.profile.pixel);
        // ps_2_0 has no other inputs; one it does not read is no error, as fxc has it.
        let unreadable = self.profile.pixel
            && self.profile.major < 3
            && !matches!(usage.as_str(), "COLOR" | "TEXCOORD");
        let rows = match ty {
            Ty::Matrix(_, r, _) => usize::from(*r),
            Ty::Array(_, n) => *n as usize,
            _ => 1,
        };
        let per = ty.components() / rows.max(1);
        if per > 4 {
            self.error(
                loc,
                format!("'{semantic}': an input is at most four components"),
            );
            return None;
        }
        let mut out = Vec::new();
        for r in 0..rows {
            let input = Input {
                usage: usage.clone(),
                index: index + r as u32,
                centroid: centroid || sem_centroid,
            };
            let reg = self.input_node(input);
            if unreadable {
                self.unreadable_inputs
                    .push((reg[0].node, loc, semantic.to_string()));
            }
            out.extend_from_slice(&reg[..per]);
        }
        Some(out)
    }

    fn output(&mut self, ty: &Ty, semantic: Option<&str>, comps: &[Comp], loc: Loc) {
        if let Ty::Struct(s) = ty {
            let mut at = 0;
            for f in &s.fields {
                let n = f.ty.components();
                let sem = f.semantic.as_deref().or(semantic);
                self.output(&f.ty, sem, &comps[at..at + n], loc);
                at += n;
            }
            return;
        }
        let Some(semantic) = semantic else {
            self.error(loc, "entry point output without a semantic");
            return;
        };
        let (usage, index, _) = split_semantic(semantic, false);
        if matches!(usage.as_str(), "FOG" | "PSIZE" | "DEPTH")
            && comps.len() > 1
            && (self.profile.pixel || self.profile.major < 3)
        {
            self.error(loc, format!("{usage} must be a scalar"));
            return;
        }
        let rows = match ty {
            Ty::Matrix(_, r, _) => usize::from(*r),
            Ty::Array(_, n) => *n as usize,
            _ => 1,
        };
        let per = comps.len() / rows.max(1);
        for r in 0..rows {
            self.program.outputs.push(Output {
                usage: usage.clone(),
                index: index + r as u32,
                comps: comps[r * per..(r + 1) * per].to_vec(),
            });
        }
    }
}

impl<'a> Lowering<'a> {
    // ---- booleans and guards -------------------------------------------------------

    fn not(&mut self, a: Comp) -> Comp {
        let one = self.program.konst(1.0);
        let na = self.program.map(Op::Neg, vec![vec![a]])[0];
        self.program.map(Op::Add, vec![vec![one], vec![na]])[0]
    }

    fn and(&mut self, a: Option<Comp>, b: Comp) -> Comp {
        match a {
            None => b,
            Some(a) => self.program.map(Op::Mul, vec![vec![a], vec![b]])[0],
        }
    }

    fn or(&mut self, a: Option<Comp>, b: Comp) -> Comp {
        match a {
            None => b,
            Some(a) => self.program.map(Op::Max, vec![vec![a], vec![b]])[0],
        }
    }

    /// `c ? t : f` for a boolean (0 or 1) `c`, component by component.
    fn select(&mut self, c: &[Comp], t: &[Comp], f: &[Comp]) -> Vec<Comp> {
        if c.iter().all(|&c| self.program.constant(c).is_some()) {
            return (0..t.len())
                .map(|i| {
                    if self.program.constant(c[i]) != Some(0.0) {
                        t[i]
                    } else {
                        f[i]
                    }
                })
                .collect();
        }
        // Only the components that differ are selected.
        let diff: Vec<usize> = (0..t.len()).filter(|&i| t[i] != f[i]).collect();
        if diff.is_empty() {
            return t.to_vec();
        }
        let pick = |v: &[Comp]| diff.iter().map(|&i| v[i]).collect::<Vec<_>>();
        let (cs, ts, fs) = (pick(c), pick(t), pick(f));
        if self.profile.pixel {
            if let Some(chosen) = self.decide_by_signs(&cs, &ts, &fs) {
                let mut out = f.to_vec();
                for (k, &i) in diff.iter().enumerate() {
                    out[i] = chosen[k];
                }
                return out;
            }
            // A condition that is itself a choice of 1 and 0 chooses directly:
            // `(a >= 0 ? 1 : 0) ? t : f` is `a >= 0 ? t : f`.
            let direct: Option<Vec<(Comp, bool)>> = cs
                .iter()
                .map(|&c| {
                    let n = self.program.node(c.node);
                    let lane = usize::from(c.lane);
                    if n.op != Op::Cmp {
                        return None;
                    }
                    match (
                        self.program.constant(n.args[1][lane])?,
                        self.program.constant(n.args[2][lane])?,
                    ) {
                        (a, b) if a == 1.0 && b == 0.0 => Some((n.args[0][lane], true)),
                        (a, b) if a == 0.0 && b == 1.0 => Some((n.args[0][lane], false)),
                        _ => None,
                    }
                })
                .collect();
            if let Some(d) = direct {
                if d.iter().all(|x| x.1) || d.iter().all(|x| !x.1) {
                    let conds: Vec<Comp> = d.iter().map(|x| x.0).collect();
                    let chosen = if d[0].1 {
                        self.program.map(Op::Cmp, vec![conds, ts, fs])
                    } else {
                        self.program.map(Op::Cmp, vec![conds, fs, ts])
                    };
                    let mut out = f.to_vec();
                    for (k, &i) in diff.iter().enumerate() {
                        out[i] = chosen[k];
                    }
                    return out;
                }
            }
        }
        let chosen = if self.profile.pixel {
            let nc = self.program.map(Op::Neg, vec![cs]);
            self.program.map(Op::Cmp, vec![nc, fs, ts])
        } else {
            self.program.map(Op::Lrp, vec![cs, ts, fs])
        };
        let mut out = f.to_vec();
        for (k, &i) in diff.iter().enumerate() {
            out[i] = chosen[k];
        }
        out
    }

    /// `g ? t : f` for a condition made of a few sign tests (`s >= 0`, the `cmp`s a
    /// comparison lowers to) through `and`, `or` and `not`, as a tree of `cmp`s on the
    /// tests themselves: each arm is what `g`, `t` and `f` are when the test holds and
    /// when it does not, folded (a counter a `break` stopped is a constant on each path).
    /// That is how fxc chooses, with no booleans computed and combined. None when the
    /// condition is not such, or the tree would cost more than computing it.
    fn decide_by_signs(&mut self, c: &[Comp], t: &[Comp], f: &[Comp]) -> Option<Vec<Comp>> {
        const MAX_TESTS: usize = 6;
        let g = c[0];
        if c.iter().any(|&x| x != g) || !self.program.is_boolean(g) {
            return None;
        }
        let mut tests = Vec::new();
        if !self.sign_tests(g, MAX_TESTS, &mut tests, 32) {
            return None;
        }
        // What computing the condition and one choice would cost.
        let classic = 1 + self.boolean_cost(g, &mut HashSet::new());
        let before = self.program.nodes.len();
        let budget = before + 4 * classic + 16;
        let chosen = self.decide(g, t.to_vec(), f.to_vec(), tests, budget)?;
        let made = self.program.nodes[before..]
            .iter()
            .filter(|n| !matches!(n.op, Op::Const(_)))
            .count();
        (made <= classic).then_some(chosen)
    }

    /// The operands of the sign tests a boolean is made of, at most `max` of them; false
    /// when it is made of anything else.
    fn sign_tests(&self, c: Comp, max: usize, out: &mut Vec<Comp>, depth: u32) -> bool {
        if self.program.constant(c).is_some() {
            return true;
        }
        if depth == 0 {
            return false;
        }
        let n = self.program.node(c.node);
        let arg = |i: usize| n.args[i][usize::from(c.lane)];
        match n.op {
            Op::Cmp => {
                let s = arg(0);
                if !out.contains(&s) {
                    if out.len() == max {
                        return false;
                    }
                    out.push(s);
                }
                self.sign_tests(arg(1), max, out, depth - 1)
                    && self.sign_tests(arg(2), max, out, depth - 1)
            }
            Op::Mul | Op::Max | Op::Min => {
                self.sign_tests(arg(0), max, out, depth - 1)
                    && self.sign_tests(arg(1), max, out, depth - 1)
            }
            Op::Add if self.program.constant(arg(0)) == Some(1.0) => {
                let m = self.program.node(arg(1).node);
                m.op == Op::Neg
                    && self.sign_tests(m.args[0][usize::from(arg(1).lane)], max, out, depth - 1)
            }
            _ => false,
        }
    }

    /// How many operations a boolean's own combination takes (its tests' operands are
    /// counted elsewhere).
    fn boolean_cost(&self, c: Comp, seen: &mut HashSet<NodeId>) -> usize {
        if self.program.constant(c).is_some() || !seen.insert(c.node) {
            return 0;
        }
        let n = self.program.node(c.node);
        let lane = usize::from(c.lane);
        let args: Vec<Comp> = match n.op {
            Op::Cmp => vec![n.args[1][lane], n.args[2][lane]],
            Op::Mul | Op::Max | Op::Min | Op::Add | Op::Neg => {
                n.args.iter().map(|a| a[lane]).collect()
            }
            _ => return 0,
        };
        1 + args
            .into_iter()
            .map(|a| self.boolean_cost(a, seen))
            .sum::<usize>()
    }

    /// The tree of [`Self::decide_by_signs`]: split on the first test still open, fold
    /// each side (tests made of others fold with them). None past `budget` nodes.
    fn decide(
        &mut self,
        g: Comp,
        t: Vec<Comp>,
        f: Vec<Comp>,
        mut tests: Vec<Comp>,
        budget: usize,
    ) -> Option<Vec<Comp>> {
        if let Some(k) = self.program.constant(g) {
            return Some(if k != 0.0 { t } else { f });
        }
        if t == f {
            return Some(t);
        }
        if self.program.nodes.len() > budget {
            return None;
        }
        tests.retain(|&s| self.program.constant(s).is_none());
        let w = t.len();
        if tests.is_empty() {
            let ng = self.program.map(Op::Neg, vec![vec![g; w]]);
            return Some(self.program.map(Op::Cmp, vec![ng, f, t]));
        }
        let s = tests.remove(0);
        let mut arms = Vec::with_capacity(2);
        for holds in [true, false] {
            let facts = HashMap::new();
            let signs = HashMap::from([(s, holds)]);
            let mut memo = HashMap::new();
            let mut side = |l: &mut Self, v: &[Comp]| -> Vec<Comp> {
                v.iter()
                    .map(|&x| l.rebuild(x, &facts, &signs, &mut memo))
                    .collect()
            };
            let g1 = side(self, &[g])[0];
            let (t1, f1, rest) = (side(self, &t), side(self, &f), side(self, &tests));
            arms.push(self.decide(g1, t1, f1, rest, budget)?);
        }
        let no = arms.pop().unwrap();
        let yes = arms.pop().unwrap();
        Some(self.program.map(Op::Cmp, vec![vec![s; w], yes, no]))
    }

    /// The condition the current statement runs under: the enclosing `if`s, not after a
    /// `return`, `break` or `continue` that ran.
    fn guard(&mut self) -> Option<Comp> {
        let mut g = self.pred;
        let mut stops = Vec::new();
        if let Some(r) = self.frames.last().and_then(|f| f.returned) {
            stops.push(r);
        }
        if let Some(l) = self.loops.last() {
            stops.extend(l.broken);
            stops.extend(l.continued);
        }
        for s in stops {
            let n = self.not(s);
            g = Some(self.and(g, n));
        }
        g
    }

    /// `c` as it is where the current statement runs: only there is it read, so what the
    /// guard implies may fold it (a counter a `break` stopped counting is, on the paths
    /// still running, the count). None when no path runs here.
    fn on_path(&mut self, c: Comp) -> Option<Comp> {
        let Some(g) = self.guard() else {
            return Some(c);
        };
        if self.program.constant(c).is_some() {
            return Some(c);
        }
        let (mut facts, mut signs) = (HashMap::new(), HashMap::new());
        if !self.assume(g, 1.0, &mut facts, &mut signs) {
            return None;
        }
        // A test the guard made of values chosen by earlier tests is the test of those
        // values on this path, as the values read here were chosen ([`Self::decide`]).
        let mut memo = HashMap::new();
        let tests: Vec<(Comp, bool)> = signs.iter().map(|(&k, &v)| (k, v)).collect();
        for (k, v) in tests {
            let on_path = self.rebuild(k, &facts, &signs, &mut memo);
            signs.entry(on_path).or_insert(v);
        }
        Some(self.rebuild(c, &facts, &signs, &mut HashMap::new()))
    }

    /// `f` (a loop's condition) on the values variables hold on the paths still running
    /// here: an assignment guarded by what the current guard implies (a counter's step,
    /// on the paths no `break` left) reads as the value assigned, before anything built
    /// on it folds the choice into others.
    fn on_running_values<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let Some(g) = self.guard() else {
            return f(self);
        };
        let (mut facts, mut signs) = (HashMap::new(), HashMap::new());
        if !self.assume(g, 1.0, &mut facts, &mut signs) {
            return f(self);
        }
        let saved = self.values();
        let mut running = Values::default();
        for (key, comps) in &saved.0 {
            let mut changed = false;
            let now: Vec<Comp> = comps
                .iter()
                .map(|&c| {
                    let mut c = c;
                    // A few levels: a value assigned under a guard, itself so assigned.
                    for _ in 0..8 {
                        match self.chosen.get(&c) {
                            Some(&(cg, v)) if self.known(cg, &facts, &signs, 8) == Some(1.0) => {
                                c = v;
                                changed = true;
                            }
                            _ => break,
                        }
                    }
                    c
                })
                .collect();
            if changed {
                running.0.insert(key.clone(), now);
            }
        }
        if running.0.is_empty() {
            return f(self);
        }
        self.restore(&running);
        let out = f(self);
        let back = Values(saved.0, None, None, None);
        self.restore(&back);
        out
    }

    /// Whether code here can run at all (a constant false guard means it never does).
    fn reachable(&mut self) -> bool {
        match self.guard() {
            Some(g) => {
                let (mut facts, mut signs) = (HashMap::new(), HashMap::new());
                self.assume(g, 1.0, &mut facts, &mut signs)
            }
            None => true,
        }
    }

    // ---- statements ----------------------------------------------------------------

    fn block(&mut self, stmts: &'a [ast::Stmt]) {
        self.scopes.push(HashMap::new());
        let typedefs = self.typedefs.clone();
        self.stmts(stmts);
        self.typedefs = typedefs;
        self.scopes.pop();
    }

    /// Statements in the current scope. After an `if` one branch of which always leaves
    /// (returns, breaks or continues) and the other does not, the rest of the list runs
    /// only in the other: it is lowered there, as fxc does, and not after the `if` under
    /// a flag saying nothing left.
    fn stmts(&mut self, list: &'a [ast::Stmt]) {
        for (i, s) in list.iter().enumerate() {
            let rest = &list[i + 1..];
            if let StmtKind::If(cond, then, other) = &s.kind {
                let (t_ends, e_ends) = (ends(then), other.as_deref().is_some_and(ends));
                if t_ends != e_ends && !rest.is_empty() {
                    let Some((c, plan)) = self.if_condition(s, cond) else {
                        return;
                    };
                    match self.program.constant(c) {
                        Some(k) if k != 0.0 => self.stmt(then),
                        Some(_) => {
                            if let Some(o) = other {
                                self.stmt(o);
                            }
                        }
                        None => self.branches(
                            c,
                            plan,
                            |l| {
                                l.stmt(then);
                                if !t_ends {
                                    l.stmts(rest);
                                }
                            },
                            Some(|l: &mut Self| {
                                if let Some(o) = other {
                                    l.stmt(o);
                                }
                                if !e_ends {
                                    l.stmts(rest);
                                }
                            }),
                        ),
                    }
                    if self.program.constant(c).is_none() {
                        return;
                    }
                    continue;
                }
            }
            self.stmt(s);
        }
    }

    /// The condition of an `if` statement, and how the `if` may stay a branch.
    fn if_condition(&mut self, s: &ast::Stmt, cond: &ast::Expr) -> Option<(Comp, Option<Plan>)> {
        let c = self.condition(cond)?;
        if self.program.constant(c).is_some() {
            return Some((c, None));
        }
        Some((c, self.branch_plan(s, cond, c)))
    }

    /// Whether an `if` whose condition is known only at run time may be kept as a
    /// branch, and with what test, as fxc keeps one: never under `[flatten]`; `if b#` for
    /// a `bool` uniform (vs_2_0 and later, ps_3_0), `if_comp` for anything else (vs_2_x,
    /// vs_3_0, ps_3_0). ps_2_0 and ps_2_x have no flow control in fxc's hands, nor does
    /// vs_2_0 for anything but a `bool` uniform: there `[branch]` is refused, as fxc
    /// refuses it (X3528). Whether the branch is then kept is decided once its arms are
    /// lowered ([`Self::branches`]).
    fn branch_plan(&mut self, s: &ast::Stmt, cond: &ast::Expr, c: Comp) -> Option<Plan> {
        let attr = |n: &str| s.attributes.iter().any(|a| a.name.eq_ignore_ascii_case(n));
        if attr("flatten") {
            return None;
        }
        let forced = attr("branch");
        let p = self.profile;
        let statik = p.major >= 3 || (!p.pixel && p.major == 2);
        let dynamic = p.major >= 3 || (!p.pixel && p.major == 2 && p.minor > 0);
        let condition = match self.bool_uniform(cond) {
            Some((var, index, negated)) if statik => Some(Condition::Bool {
                var,
                index,
                negated,
            }),
            _ if dynamic => Some(self.comparison(c)),
            _ => None,
        };
        match condition {
            Some(condition) => Some(Plan {
                condition,
                forced,
                loc: cond.start(),
            }),
            None => {
                if forced {
                    let what = if p.pixel {
                        format!("{} has no flow control", p.name())
                    } else {
                        format!("{} branches on a bool uniform only", p.name())
                    };
                    self.error(
                        cond.start(),
                        format!("can't use flow control on this profile: [branch] needs a condition known at compile time ({what})"),
                    );
                }
                None
            }
        }
    }

    /// The component of a `bool` uniform a condition reads as it is (`b`, `!b`,
    /// `!!v.z`, `s[1].m._32`), and whether it is negated.
    fn bool_uniform(&mut self, mut e: &ast::Expr) -> Option<(u32, u32, bool)> {
        let mut negated = false;
        while let ExprKind::Unary(UnOp::Not, inner) = &e.kind {
            negated = !negated;
            e = inner;
        }
        let (var, index) = self.uniform_component(e, &[Base::Bool])?;
        Some((var, index, negated))
    }

    /// The uniform and the component of it that `e` reads, where `e` names one
    /// component of one of `bases` of a uniform by names, literal indices and a swizzle
    /// (`n`, `v.z`, `a[1]._32`, `s.m.y`). The component counts in order of elements,
    /// members, rows and columns: the place of its register where fxc gives each a
    /// register of its own (bools; ints that count loops).
    fn uniform_component(&mut self, e: &ast::Expr, bases: &[Base]) -> Option<(u32, u32)> {
        // The name at the root, reached through members and literal indices only, so
        // that lowering `e` again has no effect.
        let mut root = e;
        loop {
            root = match &root.kind {
                ExprKind::Member(inner, _) => inner,
                ExprKind::Index(inner, i) if matches!(i.kind, ExprKind::Int(..)) => inner,
                ExprKind::Ident(_) => break,
                _ => return None,
            };
        }
        let ExprKind::Ident(name) = &root.kind else {
            return None;
        };
        let (depth, whole) = self.lookup(name)?;
        if depth != 0 || !whole.read_only {
            return None;
        }
        let all = whole.comps.clone();
        let v = self.expr(e)?;
        let ([c], Ty::Scalar(base)) = (&v.comps[..], &v.ty) else {
            return None;
        };
        if !bases.contains(base) {
            return None;
        }
        let Op::Uniform { var, .. } = self.program.node(c.node).op else {
            return None;
        };
        let index = all.iter().position(|x| x == c)?;
        Some((var, index as u32))
    }

    /// The test under which code leaves, for a boolean condition under which it goes on
    /// (`while (x < k)` leaves where `x >= k`).
    fn leave_unless(&mut self, c: Comp) -> Condition {
        match self.comparison(c) {
            Condition::Compare(op, x, y) => Condition::Compare(op.negated(), x, y),
            other => other,
        }
    }

    /// The test `if_comp` makes of a boolean (0 or 1) condition: the comparison it was
    /// lowered from where it can be read back (`x - y >= 0` is `x >= y`, `x + 0.5 >= 0`
    /// is `x >= -0.5`, `d >= 0` is `d >= -d`), else `c != -c`, true where `c` is not 0,
    /// as fxc tests a boolean.
    fn comparison(&mut self, c: Comp) -> Condition {
        let found = self.compared(c);
        let (op, x, y) = match found {
            Some(f) => f,
            None => (Compare::Ne, c, None),
        };
        let y = match y {
            Some(y) => y,
            None => self.program.map(Op::Neg, vec![vec![x]])[0],
        };
        Condition::Compare(op, x, y)
    }

    /// What a boolean compares, if it is a comparison: the operands, the second none
    /// where it is a test against 0.
    fn compared(&mut self, c: Comp) -> Option<(Compare, Comp, Option<Comp>)> {
        let node = self.program.node(c.node).clone();
        let lane = usize::from(c.lane);
        let arg = |i: usize| node.args[i][lane];
        match node.op {
            Op::Slt => return Some((Compare::Lt, arg(0), Some(arg(1)))),
            Op::Sge => return Some((Compare::Ge, arg(0), Some(arg(1)))),
            Op::Cmp => {}
            _ => return None,
        }
        let ge = match (
            self.program.constant(arg(1))?,
            self.program.constant(arg(2))?,
        ) {
            (a, b) if a == 1.0 && b == 0.0 => true,
            (a, b) if a == 0.0 && b == 1.0 => false,
            _ => return None,
        };
        let s = arg(0);
        let inner = |p: &Program, c: Comp, op: Op| {
            let n = p.node(c.node);
            (n.op == op).then(|| n.args[0][usize::from(c.lane)])
        };
        // -|d| >= 0 (or -d·d >= 0) holds where d is 0.
        let zero_test = inner(&self.program, s, Op::Neg).and_then(|m| {
            let mn = self.program.node(m.node);
            let ml = usize::from(m.lane);
            match mn.op {
                Op::Abs => Some(mn.args[0][ml]),
                Op::Mul if mn.args[0][ml] == mn.args[1][ml] => Some(mn.args[0][ml]),
                _ => None,
            }
        });
        let (op, d) = match zero_test {
            Some(d) => (if ge { Compare::Eq } else { Compare::Ne }, d),
            None => {
                let op = if ge { Compare::Ge } else { Compare::Lt };
                // s >= 0, where s may be -d: d <= 0.
                match inner(&self.program, s, Op::Neg) {
                    Some(d) => (op.swapped(), d),
                    None => (op, s),
                }
            }
        };
        // d as x - y where it is one: a difference, or a sum with a literal.
        let dn = self.program.node(d.node).clone();
        if dn.op == Op::Add {
            let l = usize::from(d.lane);
            for (a, b) in [(0, 1), (1, 0)] {
                let (x, other) = (dn.args[a][l], dn.args[b][l]);
                if let Some(y) = inner(&self.program, other, Op::Neg) {
                    return Some((op, x, Some(y)));
                }
                if let Some(k) = self.program.constant(other) {
                    let y = self.program.konst(-k);
                    return Some((op, x, Some(y)));
                }
            }
        }
        Some((op, d, None))
    }

    fn stmt(&mut self, s: &'a ast::Stmt) {
        if self.program.too_big() {
            self.error(s.loc, "the shader is too big: more than a million operations after unrolling and inlining");
            return;
        }
        match &s.kind {
            StmtKind::Empty => {}
            StmtKind::Expr(e) => {
                self.expr(e);
            }
            StmtKind::Var(decl) => self.local_var(decl),
            StmtKind::Struct(def) => {
                self.define_struct(def);
            }
            StmtKind::Typedef(ty, names) => {
                if let Some(t) = self.resolve(ty) {
                    for d in names {
                        if let Some(t) = self.array_of(t.clone(), &d.array, d.loc) {
                            if let Some(major) = self.typedef_majority(ty, &t) {
                                self.typedef_major.insert(d.name.clone(), major);
                            }
                            self.typedefs.insert(d.name.clone(), t);
                        }
                    }
                }
            }
            StmtKind::Block(b) => self.block(&b.stmts),
            StmtKind::If(cond, then, other) => {
                let Some((c, plan)) = self.if_condition(s, cond) else {
                    return;
                };
                match self.program.constant(c) {
                    Some(k) if k != 0.0 => self.stmt(then),
                    Some(_) => {
                        if let Some(o) = other {
                            self.stmt(o);
                        }
                    }
                    None => {
                        let other = other.as_deref().map(|o| move |l: &mut Self| l.stmt(o));
                        self.branches(c, plan, |l| l.stmt(then), other);
                    }
                }
            }
            StmtKind::For(init, cond, step, body) => {
                self.scopes.push(HashMap::new());
                if let Some(i) = init {
                    self.stmt(i);
                }
                if !self.real_loop(s, cond.as_ref(), step.as_ref(), body) {
                    self.unroll_or_keep(s, cond.as_ref(), step.as_ref(), body, false);
                }
                // What the initializer declares stays visible after the loop, as fxc
                // scopes it for shader models 2 and 3 (`for (int i …) …; return i;`); a
                // later loop's own `int i` is its own until that loop ends.
                let declared = self.scopes.pop().unwrap_or_default();
                let mut names: Vec<&String> = declared.keys().collect();
                names.sort();
                for name in names {
                    if self.scopes.last().is_some_and(|o| o.contains_key(name)) {
                        self.warn(s.loc, format!("'{name}': loop control variable conflicts with a previous declaration in the outer scope; most recent declaration will be used"));
                    }
                }
                if let Some(outer) = self.scopes.last_mut() {
                    outer.extend(declared);
                }
            }
            StmtKind::While(cond, body) => self.unroll_or_keep(s, Some(cond), None, body, false),
            StmtKind::Do(body, cond) => self.unroll_or_keep(s, Some(cond), None, body, true),
            StmtKind::Switch(value, cases) => self.switch(value, cases),
            StmtKind::Break | StmtKind::Continue => {
                let Some(g) = (if self.loops.is_empty() {
                    None
                } else {
                    Some(self.guard())
                }) else {
                    self.error(s.loc, "'break' or 'continue' outside a loop or switch");
                    return;
                };
                let ends = g == self.env_pred;
                let one = self.program.konst(1.0);
                let g = g.unwrap_or(one);
                let l = self.loops.last().unwrap().clone();
                let flags = if matches!(s.kind, StmtKind::Break) {
                    let b = self.or(l.broken, g);
                    LoopFlags {
                        broken: Some(b),
                        ended_break: l.ended_break || ends,
                        ..l
                    }
                } else {
                    let c = self.or(l.continued, g);
                    LoopFlags {
                        continued: Some(c),
                        ended_continue: l.ended_continue || ends,
                        ..l
                    }
                };
                *self.loops.last_mut().unwrap() = flags;
            }
            StmtKind::Asm(lines) => self.inline_asm(lines, s.loc),
            StmtKind::Discard => {
                if !self.profile.pixel {
                    self.error(s.loc, "'discard' is for pixel shaders only");
                    return;
                }
                let kill = match self.guard() {
                    None => self.program.konst(-1.0),
                    Some(g) => self.program.map(Op::Neg, vec![vec![g]])[0],
                };
                if self.program.constant(kill) != Some(0.0) {
                    self.program.kills.push(vec![kill]);
                    self.program.kill_locs.push(s.loc);
                }
            }
            StmtKind::Return(value) => {
                let Some(frame) = self.frames.last() else {
                    return;
                };
                let ret_ty = frame.ret_ty.clone();
                let v = match value {
                    Some(e) => {
                        let Some(v) = self.expr(e) else { return };
                        if ret_ty == Ty::Void {
                            self.error(e.loc, "a void function cannot return a value");
                            return;
                        }
                        match self.convert(v, &ret_ty, e.loc, true) {
                            Some(v) => v.comps,
                            None => return,
                        }
                    }
                    None => {
                        if ret_ty != Ty::Void {
                            self.error(
                                s.loc,
                                format!("a function returning {ret_ty} must return a value"),
                            );
                        }
                        Vec::new()
                    }
                };
                let g = self.guard();
                let frame = self.frames.last().unwrap();
                let old = frame.ret.clone();
                let returned = frame.returned;
                let new = match g {
                    g if g == self.env_pred => v,
                    None => v,
                    Some(g) => self.select(&vec![g; v.len()], &v, &old),
                };
                let ends = g == self.env_pred;
                let one = self.program.konst(1.0);
                let r = self.or(returned, g.unwrap_or(one));
                let frame = self.frames.last_mut().unwrap();
                if !new.is_empty() {
                    frame.ret = new;
                }
                frame.returned = Some(r);
                frame.ended |= ends;
            }
        }
    }

    fn condition(&mut self, e: &ast::Expr) -> Option<Comp> {
        let v = self.expr(e)?;
        if v.comps.len() != 1 {
            // HLSL takes the first component of a vector condition, with a warning.
            if v.comps.is_empty() {
                self.error(e.loc, "a condition must be a scalar");
                return None;
            }
            self.diags
                .warning(e.loc, "implicit truncation of vector type");
        }
        let b = self.as_bool(&[v.comps[0]]);
        Some(b[0])
    }

    fn local_var(&mut self, decl: &'a ast::VarDecl) {
        let Some(base) = self.resolve(&decl.ty) else {
            return;
        };
        for d in &decl.declarators {
            let Some(ty) = self.sized(base.clone(), d) else {
                continue;
            };
            let comps = match &d.init {
                Some(init) => match self.initializer(init, &ty) {
                    Some(c) => c,
                    None => continue,
                },
                None => {
                    let z = self.program.konst(0.0);
                    vec![z; ty.components()]
                }
            };
            let scope = self.scopes.last_mut().unwrap();
            scope.insert(
                d.name.clone(),
                Var {
                    ty,
                    comps,
                    read_only: decl.ty.modifiers.const_,
                },
            );
        }
    }

    /// `= e` or `= { … }`: the initializer's components for a `ty`.
    fn initializer(&mut self, init: &Init, ty: &Ty) -> Option<Vec<Comp>> {
        match init {
            Init::Expr(e) => {
                let v = self.expr(e)?;
                if v.comps.len() == 1 && ty.components() > 1 && !v.ty.is_object() {
                    // `float4 v = 1;` broadcasts; so does a single value to a struct.
                    return Some(vec![
                        self.convert_comp(v.comps[0], v.ty.base(), ty.base());
                        ty.components()
                    ]);
                }
                let shaped = matches!(ty, Ty::Array(..) | Ty::Struct(_))
                    || v.ty.components() > ty.components();
                if shaped
                    && v.comps.len() != ty.components()
                    && !(v.comps.len() > ty.components() && ty.is_numeric())
                {
                    self.error(e.loc, format!("cannot initialize {} with {}", ty, v.ty));
                    return None;
                }
                Some(self.convert(v, ty, e.loc, true)?.comps)
            }
            Init::List(items, loc) => {
                let mut comps = Vec::new();
                let mut flat = Vec::new();
                self.flatten_init(items, &mut flat);
                for e in flat {
                    if let ExprKind::Compile(target, call) = &e.kind {
                        // One component, zero to a static; a uniform holding one has no
                        // default value (see `holds_shader`).
                        self.shader_object(target, call, e.loc)?;
                        comps.push((self.program.konst(0.0), Some(Base::Float)));
                        continue;
                    }
                    let v = self.expr(e)?;
                    comps.extend(v.comps.iter().map(|&c| (c, v.ty.base())));
                }
                if comps.len() != ty.components() {
                    self.error(
                        *loc,
                        format!(
                            "{} initial values given for {} ({} components)",
                            comps.len(),
                            ty,
                            ty.components()
                        ),
                    );
                    return None;
                }
                let targets = component_bases(ty);
                let (comps, from): (Vec<Comp>, Vec<Option<Base>>) = comps.into_iter().unzip();
                Some(self.convert_all(comps, &from, &targets))
            }
            Init::SamplerState(..) => None,
        }
    }

    /// `CompileShader(target, f(args))` as an item of a global's initializer list, where
    /// fxc accepts it as one component it never writes (a zero to a static). It checks that
    /// the target is one it knows and that `f` is declared above with as many `uniform`
    /// parameters as `args`, and no more: `f` is not compiled, so its body may use what
    /// the target lacks.
    fn shader_object(&mut self, target: &str, call: &ast::Expr, loc: Loc) -> Option<()> {
        /// The targets `CompileShader(target, f())` and `compile target f()` name that
        /// d3dcompiler_43 accepts outside an effect (found by trying each: no `_2_x`, no
        /// `level_9_2`, but `vs_1_0` and the shader model 4 and 5 stages).
        const COMPILE_TARGETS: &str = "vs_1_0 vs_1_1 vs_2_0 vs_2_a vs_2_sw vs_3_0 vs_3_sw \
            vs_4_0 vs_4_1 vs_5_0 vs_4_0_level_9_1 vs_4_0_level_9_3 ps_1_0 ps_1_1 ps_1_2 ps_1_3 \
            ps_1_4 ps_2_0 ps_2_a ps_2_b ps_2_sw ps_3_0 ps_3_sw ps_4_0 ps_4_1 ps_5_0 \
            ps_4_0_level_9_1 ps_4_0_level_9_3 gs_4_0 gs_4_1 gs_5_0 hs_5_0 ds_5_0 cs_4_0 cs_4_1 \
            cs_5_0";
        if !self.frames.is_empty() {
            self.error(
                loc,
                "a compiled shader cannot stand inside a function: only a global's initializer list or an effect's pass may hold one",
            );
            return None;
        }
        if !COMPILE_TARGETS.split_whitespace().any(|t| t == target) {
            self.error(
                loc,
                format!("unsupported compiler target '{target}': expected a profile such as ps_2_0, vs_3_0 or ps_4_0"),
            );
            return None;
        }
        let ExprKind::Call(name, args) = &call.kind else {
            self.error(
                call.loc,
                "expected a call of the shader's function after the target, such as main()",
            );
            return None;
        };
        let Some(fs) = self.functions.get(name.as_str()) else {
            self.error(loc, format!("undeclared identifier '{name}'"));
            return None;
        };
        let uniforms =
            |f: &&ast::Function| f.params.iter().filter(|p| p.ty.modifiers.uniform).count();
        if !fs.iter().any(|f| uniforms(f) == args.len()) {
            let s = if args.len() == 1 { "" } else { "s" };
            self.error(
                loc,
                format!(
                    "'{name}': no overload has {} uniform parameter{s}: a compiled shader's arguments fill its uniform parameters, not its inputs",
                    args.len()
                ),
            );
            return None;
        }
        Some(())
    }

    /// Whether an initializer holds a compiled shader (`{5, CompileShader(ps_2_0, f())}`).
    /// fxc then writes no default value for the uniform at all, not even for its numbers.
    fn holds_shader(init: &Init) -> bool {
        match init {
            Init::Expr(e) => matches!(e.kind, ExprKind::Compile(..)),
            Init::List(items, _) => items.iter().any(Self::holds_shader),
            Init::SamplerState(..) => false,
        }
    }

    fn flatten_init<'i>(&self, items: &'i [Init], out: &mut Vec<&'i ast::Expr>) {
        for i in items {
            match i {
                Init::Expr(e) => out.push(e),
                Init::List(inner, _) => self.flatten_init(inner, out),
                Init::SamplerState(..) => {}
            }
        }
    }

    /// A loop unrolled; one that does not end within the bound unrolling sees is kept as
    /// a loop instead where the profile can leave one at run time
    /// ([`Self::unbounded_loop`]), and refused elsewhere.
    fn unroll_or_keep(
        &mut self,
        stmt: &'a ast::Stmt,
        cond: Option<&'a ast::Expr>,
        step: Option<&'a ast::Expr>,
        body: &'a ast::Stmt,
        body_first: bool,
    ) {
        let keepable = self.profile.has_breaks()
            && !leaves(body)
            && !stmt.attributes.iter().any(|a| a.name == "unroll");
        if !keepable {
            let mark = self.diags.list.len();
            let endless = self.unroll(stmt, cond, step, body, body_first);
            if endless && self.profile.has_loops() && !self.profile.has_breaks() {
                // Said before the refusal it explains, as fxc says it (X3552).
                self.warn(
                    stmt.loc,
                    format!("cannot map loop to shader target: {} does not support breaks (no dynamic flow control), so the loop was to unroll", self.profile.name()),
                );
                self.diags.list[mark..].rotate_right(1);
            }
            return;
        }
        let saved = self.values();
        let mark = self.diags.list.len();
        let kills = self.program.kills.len();
        if self.unroll(stmt, cond, step, body, body_first) {
            self.restore(&saved);
            self.diags.list.truncate(mark);
            self.program.kills.truncate(kills);
            self.program.kill_locs.truncate(kills);
            if !self.unbounded_loop(cond, step, body, body_first) {
                self.unroll(stmt, cond, step, body, body_first);
            }
        }
    }

    /// Whether it stopped for not ending within a bound (the error said).
    fn unroll(
        &mut self,
        stmt: &'a ast::Stmt,
        cond: Option<&'a ast::Expr>,
        step: Option<&'a ast::Expr>,
        body: &'a ast::Stmt,
        body_first: bool,
    ) -> bool {
        let loc = stmt.loc;
        let mut endless = false;
        // `[unroll(n)]` allows n iterations; otherwise fxc's own limit.
        let given = stmt
            .attributes
            .iter()
            .find(|a| a.name == "unroll")
            .and_then(|a| a.args.first())
            .and_then(|e| match e.kind {
                ExprKind::Int(n, _) => Some(n),
                _ => None,
            });
        let limit = given.map_or(MAX_UNROLL, |n| n.clamp(1, 1 << 16));
        // A `for` loop whose condition and step read only counters the body leaves alone
        // runs a number of times known from them alone: until then its condition holds
        // on every path still running, however the body left the others.
        let mut counted: Option<(u32, Vec<(usize, String)>)> = match (cond, step, body_first) {
            (Some(c), Some(s), false) => {
                let saved = self.values();
                let mark = self.diags.list.len();
                let trial = self.trip_count(c, s);
                self.restore(&saved);
                self.diags.list.truncate(mark);
                match trial {
                    Some((LoopCount::Const(n), counters, _)) => Some((n, counters)),
                    _ => None,
                }
            }
            _ => None,
        };
        if self.unrolling == 0 {
            self.nest_run_time = 0;
        }
        self.unrolling += 1;
        self.loops.push(LoopFlags::default());
        let errors_before = self.diags.errors();
        let mut iterations = 0;
        let mut run_time = 0;
        let mut first = body_first;
        loop {
            // Paths that left at run-time conditions make every later iteration dearer to
            // fold; past a bound the loop is refused as fxc refuses one it cannot see end.
            if self.loops.last().unwrap().broken.is_some() {
                run_time += 1;
                self.nest_run_time += 1;
                if run_time > MAX_RUN_TIME_ITERATIONS {
                    self.error(loc, format!("unable to unroll loop, loop does not appear to terminate in a timely manner ({MAX_RUN_TIME_ITERATIONS} iterations after one left at a run-time condition)"));
                    endless = true;
                    break;
                }
                if self.nest_run_time > MAX_NEST_RUN_TIME_ITERATIONS {
                    self.error(loc, format!("unable to unroll loop, loop does not appear to terminate in a timely manner ({MAX_NEST_RUN_TIME_ITERATIONS} iterations of the loops around it and inside it after one left at a run-time condition)"));
                    endless = true;
                    break;
                }
            }
            if let (false, Some((n, _))) = (first, &counted) {
                if iterations >= *n {
                    break;
                }
            } else if !first {
                if let Some(c) = cond {
                    let Some(c) = self.on_running_values(|l| l.condition(c)) else {
                        break;
                    };
                    // Only paths still running matter: where the guard holds, a counter
                    // a `break` stopped counting is not read.
                    let Some(c) = self.on_path(c) else {
                        // No path is still running.
                        break;
                    };
                    match self.program.constant(c) {
                        Some(0.0) => break,
                        Some(_) => {}
                        None => {
                            // Leaving here on a condition known only at run time: a break
                            // under the guard.
                            let g = self.guard();
                            let nc = self.not(c);
                            let leave = self.and(g, nc);
                            let l = self.loops.last().unwrap().clone();
                            let b = self.or(l.broken, leave);
                            self.loops.last_mut().unwrap().broken = Some(b);
                        }
                    }
                }
            }
            first = false;
            if !self.reachable() {
                break;
            }
            iterations += 1;
            if iterations > limit && given.is_some() {
                // `[unroll(n)]` runs the body n times and no more, as fxc compiles it
                // (the rest of the loop is dropped, where it would not have ended).
                self.warn(
                    loc,
                    format!("the loop does not end within the {limit} iterations [unroll({limit})] allows; it runs {limit} times, as fxc compiles it"),
                );
                break;
            }
            if iterations > limit {
                self.error(
                    loc,
                    format!("unable to unroll loop: it does not end within {limit} iterations"),
                );
                break;
            }
            // An error in the body (an inner loop refused) is said once, not per iteration.
            if self.program.too_big() || self.diags.errors() > errors_before {
                break;
            }
            let counters_before: Option<Vec<Option<Vec<Comp>>>> = counted
                .as_ref()
                .map(|(_, ks)| ks.iter().map(|k| self.var_comps(k).cloned()).collect());
            self.stmt(body);
            if let (Some(before), Some((_, ks))) = (&counters_before, &counted) {
                if ks
                    .iter()
                    .zip(before)
                    .any(|(k, b)| self.var_comps(k) != b.as_ref())
                {
                    counted = None;
                }
            }
            let flags = self.loops.last_mut().unwrap();
            flags.continued = None;
            flags.ended_continue = false;
            if let Some(s) = step {
                if !self.reachable() {
                    break;
                }
                self.expr(s);
            }
        }
        self.loops.pop();
        self.unrolling -= 1;
        endless
    }

    /// A `for` loop kept as a loop (`rep`), where the profile has one and fxc keeps it:
    /// one marked `[loop]`, or one whose count is known only at run time (`i < n` for an
    /// `int` uniform `n`, `i` counting from 0 by 1). The count comes from the condition
    /// and the step alone, so the body may not change the counter, nor leave early; the
    /// body is lowered once. Whether it was: if not, nothing has changed and the caller
    /// unrolls the loop.
    fn real_loop(
        &mut self,
        stmt: &'a ast::Stmt,
        cond: Option<&'a ast::Expr>,
        step: Option<&'a ast::Expr>,
        body: &'a ast::Stmt,
    ) -> bool {
        let (Some(cond), Some(step)) = (cond, step) else {
            return false;
        };
        if !self.profile.has_loops() || stmt.attributes.iter().any(|a| a.name == "unroll") {
            return false;
        }
        let wanted = stmt.attributes.iter().any(|a| a.name == "loop");
        if jumps(body) && !self.profile.has_breaks() || leaves(body) {
            return false;
        }
        let saved = self.values();
        let mark = self.diags.list.len();
        let kills = self.program.kills.len();
        let trial = self.trip_count(cond, step);
        self.restore(&saved);
        self.diags.list.truncate(mark);
        let Some((count, counters, finals)) = trial else {
            return false;
        };
        if matches!(count, LoopCount::Const(n) if n < 2) {
            return false;
        }
        // Which variables the body changes: found by lowering it with every variable
        // carried, then thrown away.
        let mut all: Vec<(usize, String)> = saved.0.keys().cloned().collect();
        all.sort();
        let first_node = self.program.nodes.len() as u32;
        let first = self.loop_body(count, &all, body, Some(step), Exits::default());
        let changed: Vec<(usize, String)> = all
            .iter()
            .filter(|k| self.var_comps(k) != first.start.get(*k))
            .cloned()
            .collect();
        // fxc keeps a loop of known count that it is not told to unroll when its body
        // samples a texture, takes an `exp` or `log` (`pow` with an exponent that is not
        // a small integer) or a sine or cosine: those it does not unroll by itself. One
        // whose results unrolling would fold to constants it unrolls, `[loop]` or not.
        let ends: Vec<Comp> = changed
            .iter()
            .filter(|k| !counters.contains(k))
            .filter_map(|k| self.var_comps(k))
            .flatten()
            .copied()
            .collect();
        // A variable the body does not change stands for its value before the loop,
        // which the trial lowering carried all the same.
        let outside: HashSet<u32> = all
            .iter()
            .filter(|k| !changed.contains(k))
            .filter(|k| {
                saved
                    .0
                    .get(*k)
                    .is_some_and(|v| v.iter().any(|&c| self.program.constant(c).is_none()))
            })
            .filter_map(|k| first.start.get(k))
            .flatten()
            .map(|c| c.node)
            .collect();
        let reads = self.body_reads(&ends, first_node, &outside);
        let wanted = matches!(count, LoopCount::Uniform { .. })
            || reads.run_time && (wanted || reads.costly);
        let fits = wanted && self.program.kills.len() == kills && {
            // The counters change by the step only, and the condition reads nothing else
            // the body changes.
            let counters_kept = counters
                .iter()
                .all(|k| first.after_body.0.get(k) == first.start.get(k));
            let others: Vec<Comp> = changed
                .iter()
                .filter(|k| !counters.contains(k))
                .filter_map(|k| first.start.get(k))
                .flatten()
                .copied()
                .collect();
            // The condition as an iteration starts (after the step, a counter a `break`
            // stopped reads the break's test).
            let start = Values(first.start.clone(), None, None, None);
            self.restore(&start);
            counters_kept
                && match self.condition(cond) {
                    Some(c) => !self.depends_on(c, &others),
                    None => false,
                }
        };
        self.restore(&saved);
        self.diags.list.truncate(mark);
        self.program.kills.truncate(kills);
        self.program.kill_locs.truncate(kills);
        if !fits {
            return false;
        }
        let run = self.loop_body(count, &changed, body, Some(step), Exits::default());
        // Unchanged as the trial found, but for a denormal literal that an operation of
        // the body folds to 0 (`x * 1.0` of a constant x: the trial's `x` was a value,
        // which `* 1.0` leaves as it is; the hardware writes a denormal result as 0).
        let same = |p: &Program, now: Option<&Vec<Comp>>, was: Option<&Vec<Comp>>| match (now, was)
        {
            (Some(a), Some(b)) => {
                a.len() == b.len()
                    && a.iter().zip(b).all(|(&x, &y)| {
                        x == y
                            || matches!((p.constant(x), p.constant(y)),
                                (Some(u), Some(v)) if flush(u).to_bits() == flush(v).to_bits())
                    })
            }
            (a, b) => a == b,
        };
        let unchanged = all
            .iter()
            .filter(|k| !changed.contains(k))
            .all(|k| same(&self.program, self.var_comps(k), saved.0.get(k)));
        if !unchanged || self.program.kills.len() != kills {
            self.restore(&saved);
            self.program.kills.truncate(kills);
            self.program.kill_locs.truncate(kills);
            return false;
        }
        // A counter of a loop run a known number of times ends where the trial run of its
        // condition and step left it, unless a `break` may stop it sooner.
        let finals = finals.filter(|_| self.program.loops[run.lp as usize].exit_last.is_none());
        self.close_loop(run, &saved, finals.as_ref(), &counters);
        true
    }

    /// A lowered loop closed: each chunk's value after the loop is an [`Op::After`] node,
    /// the variables hold them; `finals` are the values of `counters` where known.
    fn close_loop(
        &mut self,
        run: LoopRun,
        saved: &Values,
        finals: Option<&Values>,
        counters: &[(usize, String)],
    ) {
        let mut carried = Vec::new();
        let mut after = Vec::new();
        let mut out: HashMap<(usize, String), Vec<Comp>> = HashMap::new();
        for (index, (key, start, init)) in run.chunks.iter().enumerate() {
            let now = self.var_comps(key).cloned().unwrap_or_default();
            let next = now[*start..*start + init.len()].to_vec();
            let a = self.program.raw(
                Op::After {
                    lp: run.lp,
                    index: index as u32,
                },
                vec![init.clone(), next.clone()],
                init.len() as u8,
            );
            after.push(a[0].node);
            carried.push((init.clone(), next));
            let v = out
                .entry(key.clone())
                .or_insert_with(|| saved.0.get(key).cloned().unwrap_or_default());
            v[*start..*start + init.len()].copy_from_slice(&a);
        }
        let lp = &mut self.program.loops[run.lp as usize];
        lp.carried = carried;
        lp.after = after;
        self.restore(saved);
        for (key, comps) in out {
            let comps = match finals {
                Some(f) if counters.contains(&key) => f.0.get(&key).cloned().unwrap_or(comps),
                _ => comps,
            };
            if let Some(var) = self.scopes.get_mut(key.0).and_then(|s| s.get_mut(&key.1)) {
                var.comps = comps;
            }
        }
    }

    /// A loop that does not end within a bound unrolling can see (its condition reads what
    /// the body computes at run time), kept as fxc keeps one where the profile can leave
    /// a loop at a run-time condition: `rep` 255 times at most, leaving where the
    /// condition fails (as an iteration starts, or for a `do` loop once it ends) or a
    /// `break` runs. Whether it was: if not, nothing has changed.
    fn unbounded_loop(
        &mut self,
        cond: Option<&'a ast::Expr>,
        step: Option<&'a ast::Expr>,
        body: &'a ast::Stmt,
        body_first: bool,
    ) -> bool {
        if !self.profile.has_breaks() || leaves(body) {
            return false;
        }
        let exits = if body_first {
            Exits {
                first: None,
                last: cond,
            }
        } else {
            Exits {
                first: cond,
                last: None,
            }
        };
        let saved = self.values();
        let mark = self.diags.list.len();
        let kills = self.program.kills.len();
        let errors = self.diags.errors();
        // Which variables the body changes: found by lowering it with every variable
        // carried, then thrown away.
        let mut all: Vec<(usize, String)> = saved.0.keys().cloned().collect();
        all.sort();
        let first = self.loop_body(LoopCount::Const(255), &all, body, step, exits);
        let changed: Vec<(usize, String)> = all
            .iter()
            .filter(|k| self.var_comps(k) != first.start.get(*k))
            .cloned()
            .collect();
        let fits = self.diags.errors() == errors && self.program.kills.len() == kills;
        self.restore(&saved);
        self.diags.list.truncate(mark);
        self.program.kills.truncate(kills);
        self.program.kill_locs.truncate(kills);
        if !fits {
            return false;
        }
        let run = self.loop_body(LoopCount::Const(255), &changed, body, step, exits);
        let unchanged = all
            .iter()
            .filter(|k| !changed.contains(k))
            .all(|k| self.var_comps(k) == saved.0.get(k));
        if !unchanged || self.program.kills.len() != kills || self.diags.errors() != errors {
            self.restore(&saved);
            self.diags.list.truncate(mark);
            self.program.kills.truncate(kills);
            self.program.kill_locs.truncate(kills);
            return false;
        }
        self.close_loop(run, &saved, None, &[]);
        true
    }

    fn var_comps(&self, key: &(usize, String)) -> Option<&Vec<Comp>> {
        self.scopes.get(key.0)?.get(&key.1).map(|v| &v.comps)
    }

    /// How many times a loop runs, from its condition and step alone, and which
    /// variables are its counters (those the step changes); for a known count, also the
    /// values once it ends. Changes the variables: the caller restores them.
    fn trip_count(&mut self, cond: &'a ast::Expr, step: &'a ast::Expr) -> Option<TripCount> {
        let start = self.values();
        self.expr(step)?;
        let stepped = self.values();
        let mut counters: Vec<(usize, String)> = start
            .0
            .iter()
            .filter(|(k, v)| stepped.0.get(*k) != Some(*v))
            .map(|(k, _)| k.clone())
            .collect();
        counters.sort();
        self.restore(&start);
        if counters.is_empty() {
            return None;
        }
        let mut n = 0u32;
        loop {
            let c = self.condition(cond)?;
            match self.program.constant(c) {
                Some(0.0) => break,
                Some(_) => {}
                None if n == 0 => {
                    let count = self.uniform_count(cond, &counters, step)?;
                    return Some((count, counters, None));
                }
                None => return None,
            }
            n += 1;
            // What one `rep` can count to.
            if n > 255 {
                return None;
            }
            self.expr(step)?;
        }
        Some((LoopCount::Const(n), counters, Some(self.values())))
    }

    /// `i < n` for an `int` uniform `n`, with `i` from 0 by 1: `n` is the count.
    fn uniform_count(
        &mut self,
        cond: &'a ast::Expr,
        counters: &[(usize, String)],
        step: &'a ast::Expr,
    ) -> Option<LoopCount> {
        let ExprKind::Binary(BinOp::Lt, i, n) = &cond.kind else {
            return None;
        };
        let (ExprKind::Ident(name), [counter]) = (&i.kind, counters) else {
            return None;
        };
        if &counter.1 != name {
            return None;
        }
        for expect in [0.0, 1.0, 2.0] {
            let now = self.var_comps(counter)?;
            if now.len() != 1 || self.program.constant(now[0]) != Some(expect) {
                return None;
            }
            self.expr(step)?;
        }
        let (var, index) = self.uniform_component(n, &[Base::Int, Base::Uint])?;
        Some(LoopCount::Uniform { var, index })
    }

    /// What the values `of` read through the nodes made since `first` (a loop body's):
    /// whether a texture sample, an `exp`, a `log`, a `pow` or a `sincos`, and whether
    /// anything known only at run time (a node made before that is not a literal, an
    /// input, a uniform, or one of `outside`).
    fn body_reads(&self, of: &[Comp], first: u32, outside: &HashSet<u32>) -> BodyReads {
        let mut reads = BodyReads::default();
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<u32> = of.iter().map(|c| c.node).collect();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            let node = self.program.node(n);
            if n < first || outside.contains(&n) {
                reads.run_time |= !matches!(node.op, Op::Const(_));
                continue;
            }
            match node.op {
                Op::Tex(_) | Op::Exp | Op::Log | Op::Pow | Op::SinCos | Op::Lit => {
                    reads.costly = true
                }
                Op::Input(_)
                | Op::Uniform { .. }
                | Op::Sampler(_)
                | Op::Relative { .. }
                | Op::LoopRelative { .. } => reads.run_time = true,
                _ => {}
            }
            if reads.costly && reads.run_time {
                break;
            }
            stack.extend(node.args.iter().flatten().map(|c| c.node));
        }
        reads
    }

    /// Whether `c` reads any of `of`, looking back through at most a bounded number of
    /// nodes (past that it is taken to).
    fn depends_on(&self, c: Comp, of: &[Comp]) -> bool {
        let targets: std::collections::HashSet<u32> = of.iter().map(|c| c.node).collect();
        if targets.is_empty() {
            return false;
        }
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![c.node];
        while let Some(n) = stack.pop() {
            if targets.contains(&n) || seen.len() > 100_000 {
                return true;
            }
            if seen.insert(n) {
                stack.extend(self.program.node(n).args.iter().flatten().map(|c| c.node));
            }
        }
        false
    }

    /// The body and step of a kept loop, lowered once with the variables `vars` carried:
    /// each, four components at a time, a [`Op::Carried`] chunk of a new loop.
    fn loop_body(
        &mut self,
        count: LoopCount,
        vars: &[(usize, String)],
        body: &'a ast::Stmt,
        step: Option<&'a ast::Expr>,
        exits: Exits<'a>,
    ) -> LoopRun {
        let lp = self.program.loops.len() as u32;
        self.program.loops.push(Loop {
            count,
            parent: self.region,
            carried: Vec::new(),
            after: Vec::new(),
            carried_nodes: Vec::new(),
            integral: Vec::new(),
            exit_first: None,
            exit_last: None,
            al_start: None,
        });
        let mut chunks = Vec::new();
        let mut start = HashMap::new();
        for key in vars {
            let Some(var) = self.scopes.get(key.0).and_then(|s| s.get(&key.1)) else {
                continue;
            };
            let old = var.comps.clone();
            let bases = component_bases(&var.ty);
            let mut comps = old.clone();
            for at in (0..old.len()).step_by(4) {
                let w = (old.len() - at).min(4);
                let integral = (0..w).fold(0u8, |m, l| {
                    let int = matches!(
                        bases.get(at + l).copied().flatten(),
                        Some(Base::Int | Base::Uint | Base::Bool)
                    );
                    m | (u8::from(int) << l)
                });
                self.program.loops[lp as usize].integral.push(integral);
                let index = chunks.len() as u32;
                let c = self
                    .program
                    .raw(Op::Carried { lp, index }, Vec::new(), w as u8);
                comps[at..at + w].copy_from_slice(&c);
                self.program.loops[lp as usize]
                    .carried_nodes
                    .push(c[0].node);
                chunks.push((key.clone(), at, old[at..at + w].to_vec()));
            }
            if let Some(var) = self.scopes.get_mut(key.0).and_then(|s| s.get_mut(&key.1)) {
                var.comps = comps.clone();
            }
            start.insert(key.clone(), comps);
        }
        let outer = std::mem::replace(&mut self.region, Region::Loop(lp));
        // The condition tested as an iteration starts: leave where it is false.
        if let Some(c) = exits.first.and_then(|c| self.condition(c)) {
            if self.program.constant(c).is_none() {
                let test = self.leave_unless(c);
                self.program.loops[lp as usize].exit_first = Some(test);
            }
        }
        // A `break` leaves with the values it left; a `continue` skips the rest of the
        // body, not the step.
        self.loops.push(LoopFlags::default());
        self.stmt(body);
        let flags = self.loops.pop().unwrap_or_default();
        let after_body = self.values();
        self.loops.push(LoopFlags {
            broken: flags.broken,
            ..LoopFlags::default()
        });
        if let Some(step) = step {
            self.expr(step);
        }
        let mut leave = flags.broken;
        if let Some(c) = exits.last.and_then(|c| self.condition(c)) {
            let g = self.guard();
            let nc = self.not(c);
            let stop = self.and(g, nc);
            leave = Some(self.or(leave, stop));
        }
        self.loops.pop();
        if let Some(b) = leave.filter(|&b| self.program.constant(b) != Some(0.0)) {
            let test = self.comparison(b);
            self.program.loops[lp as usize].exit_last = Some(test);
        }
        self.region = outer;
        LoopRun {
            lp,
            chunks,
            start,
            after_body,
        }
    }

    /// How many facts [`Self::assume`] learns at most: a guard longer than that (a loop
    /// left at run-time conditions in hundreds of iterations) keeps the rest unknown,
    /// so that every statement's check costs a bounded time.
    const MAX_FACTS: usize = 256;

    /// What `c == value` implies of the booleans it is made of (0 or 1 each): `a * b` is 1
    /// when both are, `max(a, b)` 0 when both are, `1 - a` the other of `a`.
    /// `signs` learns which comparisons that implies: `(a >= 0 ? 1 : 0) == 1` says `a >= 0`.
    /// False when what it implies contradicts itself (`c` can never be `value`).
    fn assume(
        &self,
        c: Comp,
        value: f32,
        facts: &mut HashMap<Comp, f32>,
        signs: &mut HashMap<Comp, bool>,
    ) -> bool {
        if let Some(k) = self.program.constant(c) {
            return k == value;
        }
        if facts.len() > Self::MAX_FACTS {
            return true;
        }
        if let Some(old) = facts.insert(c, value) {
            return old == value;
        }
        let node = self.program.node(c.node);
        let arg = |i: usize| node.args[i][usize::from(c.lane)];
        match (node.op, value) {
            (Op::Mul, 1.0) => {
                self.assume(arg(0), 1.0, facts, signs) && self.assume(arg(1), 1.0, facts, signs)
            }
            (Op::Max, 0.0) => {
                self.assume(arg(0), 0.0, facts, signs) && self.assume(arg(1), 0.0, facts, signs)
            }
            // `a and b` is false, `a or b` true: the other is so when one is known not.
            (Op::Mul, 0.0) | (Op::Max, 1.0) => {
                let other = 1.0 - value;
                match (
                    self.known(arg(0), facts, signs, 4),
                    self.known(arg(1), facts, signs, 4),
                ) {
                    (Some(a), Some(b)) => fold(node.op, &[a, b]) == Some(value),
                    (Some(a), None) if a == other => self.assume(arg(1), value, facts, signs),
                    (None, Some(b)) if b == other => self.assume(arg(0), value, facts, signs),
                    _ => true,
                }
            }
            (Op::Add, v) if self.program.constant(arg(0)) == Some(1.0) => {
                let n = arg(1);
                let nn = self.program.node(n.node);
                nn.op != Op::Neg
                    || self.assume(nn.args[0][usize::from(n.lane)], 1.0 - v, facts, signs)
            }
            (Op::Cmp, v) => {
                let (Some(yes), Some(no)) =
                    (self.program.constant(arg(1)), self.program.constant(arg(2)))
                else {
                    return true;
                };
                let sign = if v == yes && v != no {
                    true
                } else if v == no && v != yes {
                    false
                } else {
                    return v == yes || v == no;
                };
                signs.insert(arg(0), sign) != Some(!sign)
            }
            _ => true,
        }
    }

    /// The value `c` has where `facts` and `signs` hold, if they decide it (looked at
    /// `depth` operations deep).
    fn known(
        &self,
        c: Comp,
        facts: &HashMap<Comp, f32>,
        signs: &HashMap<Comp, bool>,
        depth: u32,
    ) -> Option<f32> {
        self.known_within(c, facts, signs, depth, &mut HashMap::new())
    }

    fn known_within(
        &self,
        c: Comp,
        facts: &HashMap<Comp, f32>,
        signs: &HashMap<Comp, bool>,
        depth: u32,
        memo: &mut HashMap<Comp, Option<f32>>,
    ) -> Option<f32> {
        if let Some(k) = self.program.constant(c).or_else(|| facts.get(&c).copied()) {
            return Some(k);
        }
        if depth == 0 {
            return None;
        }
        if let Some(&m) = memo.get(&c) {
            return m;
        }
        let node = self.program.node(c.node);
        let lane = usize::from(c.lane);
        let arg = |i: usize, memo: &mut HashMap<Comp, Option<f32>>| {
            self.known_within(node.args[i][lane], facts, signs, depth - 1, memo)
        };
        let out = match node.op {
            Op::Cmp => {
                let ge = match signs.get(&node.args[0][lane]) {
                    Some(&ge) => Some(ge),
                    None => arg(0, memo).map(|v| v >= 0.0),
                };
                ge.and_then(|ge| arg(if ge { 1 } else { 2 }, memo))
            }
            Op::Add | Op::Mul | Op::Max | Op::Min | Op::Neg => {
                let vals: Vec<Option<f32>> = (0..node.args.len()).map(|i| arg(i, memo)).collect();
                // `and` with a known false (a product of booleans).
                let and_false = node.op == Op::Mul
                    && vals.contains(&Some(0.0))
                    && (0..2).all(|i| self.program.is_boolean(node.args[i][lane]));
                if and_false {
                    Some(0.0)
                } else {
                    vals.into_iter()
                        .collect::<Option<Vec<f32>>>()
                        .and_then(|v| fold(node.op, &v))
                }
            }
            _ => None,
        };
        memo.insert(c, out);
        out
    }

    /// `c` with the components `facts` knows replaced by their values, folded again.
    fn rebuild(
        &mut self,
        c: Comp,
        facts: &HashMap<Comp, f32>,
        signs: &HashMap<Comp, bool>,
        memo: &mut HashMap<Comp, Comp>,
    ) -> Comp {
        if let Some(&v) = facts.get(&c) {
            return self.program.konst(v);
        }
        if let Some(&m) = memo.get(&c) {
            return m;
        }
        // A guarded assignment where its guard holds: the value assigned.
        if let Some(&(g, v)) = self.chosen.get(&c) {
            if self.known(g, facts, signs, 8) == Some(1.0) {
                let out = self.rebuild(v, facts, signs, memo);
                memo.insert(c, out);
                return out;
            }
        }
        // Bounded: a condition whose history is long is left as it is (the loop then
        // takes its run-time exit), rather than costing time with every iteration.
        if memo.len() > 2048 {
            return c;
        }
        let node = self.program.node(c.node).clone();
        if node.op == Op::Cmp {
            // A choice whose condition is known takes its arm.
            let lane = usize::from(c.lane);
            if let Some(&ge) = signs.get(&node.args[0][lane]) {
                let arm = node.args[if ge { 1 } else { 2 }][lane];
                let out = self.rebuild(arm, facts, signs, memo);
                memo.insert(c, out);
                return out;
            }
        }
        let componentwise = matches!(
            node.op,
            Op::Mov
                | Op::Add
                | Op::Mul
                | Op::Mad
                | Op::Min
                | Op::Max
                | Op::Cmp
                | Op::Slt
                | Op::Sge
                | Op::Lrp
                | Op::Frc
                | Op::Abs
                | Op::Neg
                | Op::Sat
        );
        let out = if componentwise {
            let lane = usize::from(c.lane);
            let args: Vec<Vec<Comp>> = node
                .args
                .iter()
                .map(|a| vec![self.rebuild(a[lane], facts, signs, memo)])
                .collect();
            if args.iter().zip(&node.args).all(|(n, o)| n[0] == o[lane]) {
                c
            } else {
                self.program.map(node.op, args)[0]
            }
        } else {
            c
        };
        memo.insert(c, out);
        out
    }

    /// `if (c) then else other` with a condition known only at run time: each branch
    /// from the values before the `if`, then one choice per variable they leave
    /// different.
    fn branches(
        &mut self,
        c: Comp,
        plan: Option<Plan>,
        then: impl FnOnce(&mut Self),
        other: Option<impl FnOnce(&mut Self)>,
    ) {
        let outer_env = self.env_pred;
        let before_guard = self.guard();
        let saved = self.pred;
        let before = self.values();
        // Where the variables matter (the outer guard), a path took one branch or the
        // other, unless a `break` or `return` had stopped it before the `if`: then the
        // choice is the condition's.
        let simple = before_guard == outer_env;

        // A branch that may be kept gets its number now, so that the loops and branches
        // its arms keep sit in them.
        let kept = plan.filter(|_| simple).map(|plan| {
            let br = self.program.branches.len() as u32;
            self.program.branches.push(Branch {
                condition: plan.condition,
                parent: self.region,
            });
            (br, plan)
        });
        let outer_region = self.region;
        let regions_before = (self.program.loops.len(), self.program.branches.len());
        let (calls0, nodes0) = (self.calls, self.program.nodes.len() as NodeId);

        let p = self.and(saved, c);
        self.pred = Some(p);
        let then_guard = self.guard();
        self.env_pred = then_guard;
        if let Some((br, _)) = kept {
            self.region = Region::Arm(br, true);
        }
        then(self);
        self.region = outer_region;
        let (calls1, nodes1) = (self.calls, self.program.nodes.len() as NodeId);
        let after_then = self.values();
        self.restore(&before);
        let has_else = other.is_some();
        let else_guard = match other {
            Some(o) => {
                let nc = self.not(c);
                let p = self.and(saved, nc);
                self.pred = Some(p);
                let g = self.guard();
                self.env_pred = g;
                if let Some((br, _)) = kept {
                    self.region = Region::Arm(br, false);
                }
                o(self);
                self.region = outer_region;
                g
            }
            None => None,
        };
        self.pred = saved;
        self.env_pred = outer_env;
        let (calls2, nodes2) = (self.calls, self.program.nodes.len() as NodeId);
        let arms = [
            (nodes0..nodes1, calls1 - calls0),
            (nodes1..nodes2, calls2 - calls1),
        ];
        let keep = kept.and_then(|(br, plan)| self.keep_branch(&plan, &arms).then_some(br));
        if let (Some((br, _)), None) = (kept, keep) {
            // Flattened after all: what its arms keep sits where the `if` is.
            let (loops, branches) = regions_before;
            for l in &mut self.program.loops[loops..] {
                if matches!(l.parent, Region::Arm(b, _) if b == br) {
                    l.parent = outer_region;
                }
            }
            for b in &mut self.program.branches[branches..] {
                if matches!(b.parent, Region::Arm(x, _) if x == br) {
                    b.parent = outer_region;
                }
            }
        }

        // Each variable the arms left different: the kept branch's value after it, or
        // the condition's choice; where a `break` or `return` had stopped a path before
        // the `if`, each branch's values hold where its guard does, and the old ones
        // elsewhere.
        let join = |l: &mut Self, t: &[Comp], e: &[Comp], old: &[Comp]| -> Vec<Comp> {
            if t == e {
                return t.to_vec();
            }
            if let Some(br) = keep {
                return l.joined(br, t, e);
            }
            if simple {
                return l.select(&vec![c; t.len()], t, e);
            }
            let e = match else_guard.filter(|_| has_else) {
                Some(g) => l.select(&vec![g; e.len()], e, old),
                None => e.to_vec(),
            };
            match then_guard {
                Some(g) => l.select(&vec![g; t.len()], t, &e),
                None => t.to_vec(),
            }
        };
        let now = self.values();
        let mut joined = Values::default();
        for (key, t) in &after_then.0 {
            let (Some(e), Some(old)) = (now.0.get(key), before.0.get(key)) else {
                continue;
            };
            if t != e {
                joined.0.insert(key.clone(), join(self, t, e, old));
            }
        }
        joined.1 = match (&after_then.1, &now.1, &before.1) {
            (Some(t), Some(e), Some(old)) if t != e && t.len() == e.len() => {
                Some(join(self, t, e, old))
            }
            _ => None,
        };
        // A flag (returned, broken, continued) holds after the `if` where it held after
        // either branch, the branches running on paths apart; where both branches ended
        // on it, on every path that reached the `if`.
        let flag = |l: &mut Self, t: Option<Comp>, e: Option<Comp>, old, both: bool| {
            if both {
                let all = before_guard.unwrap_or_else(|| l.program.konst(1.0));
                Some(l.or(old, all))
            } else if t == e || e == old {
                t
            } else if t == old {
                e
            } else {
                match (t, e) {
                    (Some(t), e) => Some(l.or(e, t)),
                    (None, e) => e,
                }
            }
        };
        joined.2 = match (after_then.2, now.2, before.2) {
            (Some((t, te)), Some((e, ee)), Some((old, oe))) => {
                let both = te && ee && has_else;
                Some((flag(self, t, e, old, both), oe || both))
            }
            _ => None,
        };
        joined.3 = match (after_then.3, now.3, before.3) {
            (Some(t), Some(e), Some(old)) => {
                let both_break = t.ended_break && e.ended_break && has_else;
                let both_continue = t.ended_continue && e.ended_continue && has_else;
                Some(LoopFlags {
                    broken: flag(self, t.broken, e.broken, old.broken, both_break),
                    continued: flag(self, t.continued, e.continued, old.continued, both_continue),
                    ended_break: old.ended_break || both_break,
                    ended_continue: old.ended_continue || both_continue,
                })
            }
            _ => None,
        };
        self.restore(&joined);
    }

    /// Whether a branch that may be kept is, now that its arms are lowered (the nodes
    /// each made, and how many functions each inlined): as fxc keeps one, when the source
    /// says `[branch]`, when an arm samples a texture, or when both arms of a test of a
    /// `bool` uniform call a function. An arm taken by a comparison may compute screen
    /// gradients (texld, texldb, texldp, dsx, dsy) of inputs and constants only: of
    /// anything else fxc flattens the `if`, or refuses the `[branch]` (X3528).
    fn keep_branch(&mut self, plan: &Plan, arms: &[(std::ops::Range<NodeId>, u32); 2]) -> bool {
        let made = |r: &std::ops::Range<NodeId>| r.clone().map(|n| &self.program.nodes[n as usize]);
        let samples = arms
            .iter()
            .any(|(r, _)| made(r).any(|n| matches!(n.op, Op::Tex(_))));
        let calls_both = arms.iter().all(|(_, calls)| *calls > 0);
        let is_bool = matches!(plan.condition, Condition::Bool { .. });
        // A bool uniform placed in a bool register by `register(b#)` is tested there: fxc
        // keeps the branch (`if b3`) rather than reading it as a float.
        let in_bool_register = match plan.condition {
            Condition::Bool { var, .. } => self.program.uniforms[var as usize].bool_bound.is_some(),
            Condition::Compare(..) => false,
        };
        if !(plan.forced || samples || is_bool && (calls_both || in_bool_register)) {
            return false;
        }
        if is_bool {
            return true;
        }
        let gradient_of_temp = arms.iter().any(|(r, _)| {
            made(r).any(|n| {
                let gradient = matches!(
                    n.op,
                    Op::Tex(TexKind::Plain | TexKind::Proj | TexKind::Bias) | Op::Dsx | Op::Dsy
                );
                gradient && !self.read_as_is(&n.args[0])
            })
        });
        if gradient_of_temp {
            if plan.forced {
                self.error(
                    plan.loc,
                    "can't force branch with gradients on non-inputs: an arm takes screen gradients (tex2D, ddx, ...) of a computed value, which pixels that skip the arm do not compute; sample before the if, or use tex2Dlod or tex2Dgrad",
                );
            }
            return false;
        }
        true
    }

    /// Whether an operand is read from a register as it is: literals, or lanes of one
    /// input or one uniform register.
    fn read_as_is(&self, comps: &[Comp]) -> bool {
        let p = &self.program;
        if comps.iter().all(|&c| p.constant(c).is_some()) {
            return true;
        }
        let first = comps[0].node;
        comps.iter().all(|c| c.node == first)
            && matches!(p.node(first).op, Op::Input(_) | Op::Uniform { .. })
    }

    /// The values after kept branch `br` of a variable its arms left `t` and `e`: lanes
    /// the two agree on as they are, the others joined.
    fn joined(&mut self, br: u32, t: &[Comp], e: &[Comp]) -> Vec<Comp> {
        let diff: Vec<usize> = (0..t.len()).filter(|&i| t[i] != e[i]).collect();
        let pick = |v: &[Comp]| diff.iter().map(|&i| v[i]).collect::<Vec<_>>();
        let j = self.program.map(Op::Joined { br }, vec![pick(t), pick(e)]);
        let mut out = t.to_vec();
        for (k, &i) in diff.iter().enumerate() {
            out[i] = j[k];
        }
        out
    }

    /// What every variable in scope and the current function's return value hold.
    fn values(&self) -> Values {
        let mut v = Values::default();
        for (depth, scope) in self.scopes.iter().enumerate() {
            for (name, var) in scope {
                if !var.read_only {
                    v.0.insert((depth, name.clone()), var.comps.clone());
                }
            }
        }
        v.1 = self.frames.last().map(|f| f.ret.clone());
        v.2 = self.frames.last().map(|f| (f.returned, f.ended));
        v.3 = self.loops.last().cloned();
        v
    }

    /// Set the variables and the return value [`Self::values`] named back; others (a
    /// uniform declared since, say) stay.
    fn restore(&mut self, v: &Values) {
        for ((depth, name), comps) in &v.0 {
            if let Some(var) = self.scopes.get_mut(*depth).and_then(|s| s.get_mut(name)) {
                var.comps.clone_from(comps);
            }
        }
        if let (Some(ret), Some(f)) = (&v.1, self.frames.last_mut()) {
            f.ret.clone_from(ret);
        }
        if let (Some((returned, ended)), Some(f)) = (v.2, self.frames.last_mut()) {
            f.returned = returned;
            f.ended = ended;
        }
        if let (Some(flags), Some(l)) = (&v.3, self.loops.last_mut()) {
            l.clone_from(flags);
        }
    }

    /// A `switch` whose cases each end in a `break` (or fall into one that does, or off
    /// the end) and jump nowhere else, lowered as the `if`/`else if` chain it is: each
    /// case runs its own statements and those it falls into, and `default` is the last
    /// `else`. Whether it was (a case that breaks halfway is left to the general way).
    fn switch_as_chain(
        &mut self,
        v: &Val,
        cases: &'a [(Vec<Option<ast::Expr>>, Vec<ast::Stmt>)],
    ) -> bool {
        let ends_in_break =
            |body: &[ast::Stmt]| matches!(body.last().map(|s| &s.kind), Some(StmtKind::Break));
        // A case that ends in a `return` does not fall through either: it is run as it is.
        let ends = |body: &[ast::Stmt]| ends_in_break(body) || body.last().is_some_and(ends);
        let simple = cases.iter().all(|(_, body)| {
            let n = body.len() - usize::from(ends_in_break(body));
            !body[..n].iter().any(jumps)
        });
        if !simple {
            return false;
        }
        // Each case: its labels' condition (None for the default's group) and the
        // statement lists it runs.
        let mut arms: Vec<(Option<Comp>, Vec<&'a [ast::Stmt]>)> = Vec::new();
        let mut default = None;
        for (i, (labels, _)) in cases.iter().enumerate() {
            let mut run = Vec::new();
            for (_, body) in &cases[i..] {
                if ends(body) {
                    let n = body.len() - usize::from(ends_in_break(body));
                    run.push(&body[..n]);
                    break;
                }
                run.push(&body[..]);
            }
            if labels.iter().any(Option::is_none) {
                default = Some(run);
                continue;
            }
            let mut c: Option<Comp> = None;
            for l in labels.iter().flatten() {
                let Some(lv) = self.expr(l) else { return true };
                let Some(lv) = self.convert(lv, &Ty::INT, l.loc, false) else {
                    return true;
                };
                let eq = self.compare(BinOp::Eq, &v.comps, &lv.comps)[0];
                c = Some(self.or(c, eq));
            }
            arms.push((c, run));
        }
        self.loops.push(LoopFlags::default());
        self.scopes.push(HashMap::new());
        self.case_chain(&arms, default.as_deref());
        self.scopes.pop();
        self.loops.pop();
        true
    }

    fn case_chain(
        &mut self,
        arms: &[(Option<Comp>, Vec<&'a [ast::Stmt]>)],
        default: Option<&[&'a [ast::Stmt]]>,
    ) {
        let run = |l: &mut Self, lists: &[&'a [ast::Stmt]]| {
            for s in lists.iter().flat_map(|list| list.iter()) {
                l.stmt(s);
            }
        };
        let Some(((c, lists), rest)) = arms.split_first() else {
            if let Some(d) = default {
                run(self, d);
            }
            return;
        };
        let Some(c) = *c else {
            return self.case_chain(rest, default);
        };
        match self.program.constant(c) {
            Some(0.0) => self.case_chain(rest, default),
            Some(_) => run(self, lists),
            None => {
                let more = !rest.is_empty() || default.is_some();
                let other = more.then_some(|l: &mut Self| l.case_chain(rest, default));
                self.branches(c, None, |l| run(l, lists), other);
            }
        }
    }

    fn switch(
        &mut self,
        value: &'a ast::Expr,
        cases: &'a [(Vec<Option<ast::Expr>>, Vec<ast::Stmt>)],
    ) {
        let Some(v) = self.expr(value) else { return };
        let Some(v) = self.convert(v, &Ty::INT, value.loc, true) else {
            return;
        };
        if self.switch_as_chain(&v, cases) {
            return;
        }
        // Each case's condition: one of its labels equals the value; default: none of
        // all the labels does.
        let mut conds = Vec::new();
        let mut any_label: Option<Comp> = None;
        for (labels, _) in cases {
            let mut c: Option<Comp> = None;
            for l in labels.iter().flatten() {
                let Some(lv) = self.expr(l) else { return };
                // Labels are integers: `case 2.1f` is case 2.
                let Some(lv) = self.convert(lv, &Ty::INT, l.loc, false) else {
                    return;
                };
                let eq = self.compare(BinOp::Eq, &v.comps, &lv.comps)[0];
                c = Some(self.or(c, eq));
                any_label = Some(self.or(any_label, eq));
            }
            conds.push((c, labels.iter().any(Option::is_none)));
        }
        self.loops.push(LoopFlags::default());
        let saved = self.pred;
        let mut entered: Option<Comp> = None;
        for (i, (c, is_default)) in conds.iter().enumerate() {
            let mut here = *c;
            if *is_default {
                let none = match any_label {
                    Some(a) => self.not(a),
                    None => self.program.konst(1.0),
                };
                here = Some(self.or(here, none));
            }
            let Some(here) = here else { continue };
            // Falling through from the case before.
            let e = self.or(entered, here);
            entered = Some(e);
            let p = self.and(saved, e);
            self.pred = Some(p);
            self.block(&cases[i].1);
        }
        self.pred = saved;
        self.loops.pop();
    }
}

/// Whether a statement can `break` or `continue` out of the statement around it: a
/// loop's own jumps stay inside it, and a switch's breaks.
fn jumps(s: &ast::Stmt) -> bool {
    match &s.kind {
        StmtKind::Break | StmtKind::Continue => true,
        StmtKind::Block(b) => b.stmts.iter().any(jumps),
        StmtKind::If(_, t, e) => jumps(t) || e.as_deref().is_some_and(jumps),
        StmtKind::Switch(_, cases) => cases.iter().any(|(_, body)| body.iter().any(continues)),
        _ => false,
    }
}

/// Whether a statement can return or discard, at any depth.
fn leaves(s: &ast::Stmt) -> bool {
    match &s.kind {
        StmtKind::Return(_) | StmtKind::Discard => true,
        StmtKind::Block(b) => b.stmts.iter().any(leaves),
        StmtKind::If(_, t, e) => leaves(t) || e.as_deref().is_some_and(leaves),
        StmtKind::For(_, _, _, b) | StmtKind::While(_, b) | StmtKind::Do(b, _) => leaves(b),
        StmtKind::Switch(_, cases) => cases.iter().any(|(_, body)| body.iter().any(leaves)),
        _ => false,
    }
}

/// Whether a statement returns on every path through it, as fxc counts paths: loops
/// may run no times, so a `return` in one does not count.
fn returns(s: &ast::Stmt) -> bool {
    match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::Block(b) => b.stmts.iter().any(returns),
        StmtKind::If(_, t, Some(e)) => returns(t) && returns(e),
        // With a default, every case returns or falls into one that does.
        StmtKind::Switch(_, cases) => {
            cases
                .iter()
                .any(|(labels, _)| labels.iter().any(Option::is_none))
                && cases.iter().enumerate().all(|(i, (_, body))| {
                    let breaks = body.iter().any(|s| matches!(s.kind, StmtKind::Break));
                    !breaks && (body.iter().any(returns) || body.is_empty() && i + 1 < cases.len())
                })
        }
        _ => false,
    }
}

/// Whether a statement always leaves (returns, breaks or continues): the statements
/// after it in its list never run.
fn ends(s: &ast::Stmt) -> bool {
    match &s.kind {
        StmtKind::Return(_) | StmtKind::Break | StmtKind::Continue => true,
        StmtKind::Block(b) => b.stmts.iter().any(ends),
        StmtKind::If(_, t, Some(e)) => ends(t) && ends(e),
        _ => false,
    }
}

/// Whether a statement can `continue` the loop around it.
fn continues(s: &ast::Stmt) -> bool {
    match &s.kind {
        StmtKind::Continue => true,
        StmtKind::Block(b) => b.stmts.iter().any(continues),
        StmtKind::If(_, t, e) => continues(t) || e.as_deref().is_some_and(continues),
        StmtKind::Switch(_, cases) => cases.iter().any(|(_, body)| body.iter().any(continues)),
        _ => false,
    }
}

/// A field of a struct and the index of its first component; a field of a derived struct
/// hides its base's of the same name.
fn field_at<'s>(s: &'s StructTy, name: &str) -> Option<(usize, &'s Field)> {
    let mut at = 0;
    let mut found = None;
    for f in &s.fields {
        if f.name == name {
            found = Some((at, f));
        }
        at += f.ty.components();
    }
    found
}

/// The scalar type of each component of `ty`, flattened.
fn component_bases(ty: &Ty) -> Vec<Option<Base>> {
    match ty {
        Ty::Array(t, n) => {
            let one = component_bases(t);
            (0..*n).flat_map(|_| one.clone()).collect()
        }
        Ty::Struct(s) => s
            .fields
            .iter()
            .flat_map(|f| component_bases(&f.ty))
            .collect(),
        t => vec![t.base(); t.components()],
    }
}

/// The type two operands of an arithmetic operator are converted to: the wider scalar
/// type, and the smaller shape (a scalar widens to the other's).
fn common_type(a: &Ty, b: &Ty) -> Option<Ty> {
    let (ba, bb) = (a.base()?, b.base()?);
    let rank = |b: Base| match b {
        Base::Bool => 0,
        Base::Int => 1,
        Base::Uint => 2,
        Base::Half => 3,
        Base::Float => 4,
        Base::Double => 5,
    };
    let base = if rank(ba) >= rank(bb) { ba } else { bb };
    let shape = match (a, b) {
        (Ty::Scalar(_) | Ty::Vector(_, 1), t) | (t, Ty::Scalar(_) | Ty::Vector(_, 1)) => t.clone(),
        (Ty::Vector(_, n), Ty::Vector(_, m)) => Ty::Vector(base, (*n).min(*m)),
        (Ty::Matrix(_, r, c), Ty::Matrix(_, r2, c2)) => {
            Ty::Matrix(base, (*r).min(*r2), (*c).min(*c2))
        }
        (Ty::Vector(_, n), Ty::Matrix(_, r, c)) | (Ty::Matrix(_, r, c), Ty::Vector(_, n))
            if usize::from(*n) == usize::from(*r) * usize::from(*c) || (*r == 1 || *c == 1) =>
        {
            Ty::Vector(base, (*n).min(r * c))
        }
        _ => return None,
    };
    Some(shape.with_base(base))
}

fn is_float(b: Option<Base>) -> bool {
    matches!(b, Some(Base::Half | Base::Float | Base::Double))
}

impl<'a> Lowering<'a> {
    // ---- conversions -----------------------------------------------------------------

    fn convert_comp(&mut self, c: Comp, from: Option<Base>, to: Option<Base>) -> Comp {
        match (from, to) {
            (Some(f), Some(Base::Int | Base::Uint)) if is_float(Some(f)) => self.trunc(&[c])[0],
            (Some(f), Some(Base::Bool)) if f != Base::Bool => self.as_bool(&[c])[0],
            _ => c,
        }
    }

    /// Convert each component from its scalar type to its target's, runs of components
    /// converted alike at once, so a vector converts in one instruction, not four.
    fn convert_all(
        &mut self,
        comps: Vec<Comp>,
        from: &[Option<Base>],
        to: &[Option<Base>],
    ) -> Vec<Comp> {
        #[derive(PartialEq, Clone, Copy)]
        enum How {
            Keep,
            Trunc,
            Bool,
        }
        let how = |f: Option<Base>, t: Option<Base>| match (f, t) {
            (Some(f), Some(Base::Int | Base::Uint)) if is_float(Some(f)) => How::Trunc,
            (Some(f), Some(Base::Bool)) if f != Base::Bool => How::Bool,
            _ => How::Keep,
        };
        let kinds: Vec<How> = (0..comps.len())
            .map(|i| {
                let f = if from.len() == 1 {
                    from[0]
                } else {
                    from.get(i).copied().flatten()
                };
                how(f, to.get(i).copied().flatten())
            })
            .collect();
        let mut out = Vec::with_capacity(comps.len());
        let mut i = 0;
        while i < comps.len() {
            let k = kinds[i];
            let mut j = i + 1;
            while j < comps.len() && kinds[j] == k && j - i < 4 {
                j += 1;
            }
            let run = &comps[i..j];
            out.extend(match k {
                How::Keep => run.to_vec(),
                How::Trunc => self.trunc(run),
                How::Bool => self.as_bool(run),
            });
            i = j;
        }
        out
    }

    /// `x` toward zero.
    fn trunc(&mut self, x: &[Comp]) -> Vec<Comp> {
        if x.iter().all(|&c| self.program.is_integral(c)) {
            return x.to_vec();
        }
        let f = self.program.map(Op::Frc, vec![x.to_vec()]);
        let nf = self.program.map(Op::Neg, vec![f.clone()]);
        let floor = self.program.map(Op::Add, vec![x.to_vec(), nf.clone()]);
        // A negative x with a fraction rounds up: floor + (f > 0).
        let n = x.len();
        let one = self.program.konst(1.0);
        let zero = self.program.konst(0.0);
        if self.profile.pixel {
            let frac_up = self
                .program
                .map(Op::Cmp, vec![nf, vec![zero; n], vec![one; n]]);
            let up = self.program.map(Op::Add, vec![floor.clone(), frac_up]);
            self.program.map(Op::Cmp, vec![x.to_vec(), floor, up])
        } else {
            let zeros = vec![zero; n];
            let neg = self.program.map(Op::Slt, vec![x.to_vec(), zeros.clone()]);
            let has = self.program.map(Op::Slt, vec![zeros, f]);
            let up = self.program.map(Op::Mul, vec![neg, has]);
            self.program.map(Op::Add, vec![floor, up])
        }
    }

    /// Booleans (0 or 1) of `x != 0`.
    fn as_bool(&mut self, x: &[Comp]) -> Vec<Comp> {
        if x.iter().all(|&c| self.program.is_boolean(c)) {
            return x.to_vec();
        }
        let zero = self.program.konst(0.0);
        let zeros = vec![zero; x.len()];
        self.compare(BinOp::Ne, x, &zeros)
    }

    /// `v` as a `to`, converted as HLSL converts: scalars broadcast, vectors truncate (with
    /// a warning when `implicit`), floats truncate to integers.
    fn convert(&mut self, v: Val, to: &Ty, loc: Loc, implicit: bool) -> Option<Val> {
        if v.ty == *to {
            return Some(v);
        }
        let n = to.components();
        let comps = if v.ty.is_object() || to.is_object() {
            if std::mem::discriminant(&v.ty) == std::mem::discriminant(to) {
                return Some(Val {
                    ty: to.clone(),
                    comps: v.comps,
                });
            }
            self.error(loc, format!("cannot convert from '{}' to '{}'", v.ty, to));
            return None;
        } else if v.comps.len() == 1 {
            vec![v.comps[0]; n]
        } else if v.comps.len() == n {
            v.comps.clone()
        } else if v.comps.len() > n && to.is_numeric() && v.ty.is_numeric() {
            if implicit {
                self.diags
                    .warning(loc, "implicit truncation of vector type");
            }
            match (&v.ty, to) {
                (Ty::Matrix(_, _, c), Ty::Matrix(_, r2, c2)) => {
                    let mut out = Vec::new();
                    for r in 0..usize::from(*r2) {
                        for k in 0..usize::from(*c2) {
                            out.push(v.comps[r * usize::from(*c) + k]);
                        }
                    }
                    out
                }
                _ => v.comps[..n].to_vec(),
            }
        } else {
            self.error(loc, format!("cannot convert from '{}' to '{}'", v.ty, to));
            return None;
        };
        let from = component_bases(&v.ty);
        let targets = component_bases(to);
        let comps = self.convert_all(comps, &from, &targets);
        Some(Val {
            ty: to.clone(),
            comps,
        })
    }

    // ---- expressions -------------------------------------------------------------------

    fn scalar_val(&mut self, ty: Ty, v: f32) -> Val {
        let c = self.program.konst(v);
        Val { ty, comps: vec![c] }
    }

    /// `asm { … }`: ps_1_x's texture stage as instructions ([`super::inline_asm`]). The
    /// locals named as registers it writes take their values.
    fn inline_asm(&mut self, lines: &[(Loc, String)], loc: Loc) {
        let name = self.profile.name();
        if !(self.profile.pixel && self.profile.major == 1) {
            self.error(loc, format!("in {name} an asm block is the whole shader, `void main() {{ asm {{ … }} }}` with nothing beside it (in ps_1_1–ps_1_4 it may also be the texture stage, before HLSL's arithmetic)"));
            return;
        }
        if self.frames.len() > 1
            || !self.loops.is_empty()
            || self.pred.is_some()
            || self.region != Region::Top
        {
            self.error(loc, "an asm block stands at the top level of the entry function, not in a branch, a loop or a called function");
            return;
        }
        if self.program.asm.is_some() {
            self.error(
                loc,
                format!("a second asm block: {name}'s texture stage is one block"),
            );
            return;
        }
        let block = match super::inline_asm::read(lines, self.profile.minor, loc) {
            Ok(b) => b,
            Err((at, message)) => {
                self.error(at, message);
                return;
            }
        };
        let file = if self.profile.minor == 4 { 'r' } else { 't' };
        for &n in &block.writes {
            let reg = format!("{file}{n}");
            let Some((scope, var)) = self.lookup(&reg) else {
                continue;
            };
            if scope == 0 {
                continue;
            }
            let width = var.comps.len();
            let float = matches!(var.ty, Ty::Scalar(_) | Ty::Vector(..))
                && matches!(var.ty.base(), Some(Base::Float | Base::Half));
            if !(1..=4).contains(&width) || !float {
                self.error(loc, format!("'{reg}' takes the value the asm block leaves in {reg}: declare it a float vector (float4 {reg};)"));
                continue;
            }
            let input = Input {
                usage: "ASM".into(),
                index: n,
                centroid: false,
            };
            let value = self.input_node(input);
            if let Some(var) = self.scopes.get_mut(scope).and_then(|s| s.get_mut(&reg)) {
                var.comps = value[..width].to_vec();
            }
        }
        self.program.asm = Some(block);
    }

    /// The node of shader input `input` (four lanes), one per input.
    fn input_node(&mut self, input: Input) -> Vec<Comp> {
        let id = match self.program.inputs.iter().position(|i| *i == input) {
            Some(i) => i,
            None => {
                self.program.inputs.push(input);
                self.program.inputs.len() - 1
            }
        } as u32;
        self.program.raw(Op::Input(id), vec![], 4)
    }

    fn lookup(&self, name: &str) -> Option<(usize, &Var)> {
        self.scopes
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, s)| s.get(name).map(|v| (i, v)))
    }

    fn expr(&mut self, e: &ast::Expr) -> Option<Val> {
        // Nodes made for this expression are made here (its operands', where theirs are).
        let outer = std::mem::replace(&mut self.program.here, e.loc);
        let v = self.expr_here(e);
        self.program.here = outer;
        v
    }

    fn expr_here(&mut self, e: &ast::Expr) -> Option<Val> {
        match &e.kind {
            ExprKind::Int(v, unsigned) => Some(if *unsigned {
                self.scalar_val(Ty::Scalar(Base::Uint), *v as f32)
            } else {
                self.scalar_val(Ty::INT, *v as i32 as f32)
            }),
            ExprKind::Float(v, suffix) => {
                let ty = if *suffix == Some('h') {
                    Ty::Scalar(Base::Half)
                } else {
                    Ty::FLOAT
                };
                Some(self.scalar_val(ty, *v as f32))
            }
            ExprKind::Bool(b) => Some(self.scalar_val(Ty::BOOL, f32::from(u8::from(*b)))),
            ExprKind::Str(_) => Some(Val {
                ty: Ty::String,
                comps: vec![],
            }),
            ExprKind::Ident(name) => match self.lookup(name) {
                Some((_, v)) => Some(Val {
                    ty: v.ty.clone(),
                    comps: v.comps.clone(),
                }),
                None => {
                    self.error(e.loc, format!("undeclared identifier '{name}'"));
                    None
                }
            },
            ExprKind::Unary(op, inner) => self.unary(*op, inner, e.loc),
            ExprKind::Binary(op, a, b) => {
                let a = self.expr(a)?;
                let b = self.expr(b)?;
                self.binary(*op, a, b, e.loc)
            }
            ExprKind::Assign(op, lhs, rhs) => {
                let place = self.place(lhs)?;
                let r = self.expr(rhs)?;
                let value = match op {
                    None => r,
                    Some(op) => {
                        let old = self.read_place(&place);
                        self.binary(*op, old, r, e.loc)?
                    }
                };
                let value = self.convert(value, &place.ty, e.loc, true)?;
                self.write_place(&place, &value.comps);
                Some(value)
            }
            ExprKind::Ternary(c, a, b) => {
                let c = self.expr(c)?;
                let a = self.expr(a)?;
                let b = self.expr(b)?;
                let mut ty = if a.ty == b.ty {
                    a.ty.clone()
                } else {
                    common_type(&a.ty, &b.ty).unwrap_or(a.ty.clone())
                };
                // A vector condition chooses each of its components between values of one
                // component (`float4(cond ? a.x : b.x)`): they stand for vectors as wide.
                let one = |t: &Ty| t.is_numeric() && t.components() == 1;
                if c.comps.len() > 1 && one(&a.ty) && one(&b.ty) {
                    if let Some(base) = ty.base() {
                        ty = Ty::Vector(base, c.comps.len() as u8);
                    }
                }
                let a = self.convert(a, &ty, e.loc, true)?;
                let b = self.convert(b, &ty, e.loc, true)?;
                let cb = self.as_bool(&c.comps);
                let cs = if cb.len() == 1 {
                    vec![cb[0]; a.comps.len()]
                } else {
                    cb
                };
                if cs.len() != a.comps.len() {
                    self.error(
                        e.loc,
                        "the condition of '?:' must be a scalar or as wide as its values",
                    );
                    return None;
                }
                let comps = self.select(&cs, &a.comps, &b.comps);
                Some(Val { ty, comps })
            }
            ExprKind::Comma(a, b) => {
                self.expr(a)?;
                self.expr(b)
            }
            ExprKind::Construct(t, args) => {
                let ty = self.resolve(t)?;
                let mut comps = Vec::new();
                for a in args {
                    let v = self.expr(a)?;
                    if v.ty.is_object()
                        || !(v.ty.is_numeric()) && !matches!(v.ty, Ty::Struct(_) | Ty::Array(..))
                    {
                        self.error(a.loc, format!("cannot use {} in a constructor", v.ty));
                        return None;
                    }
                    let bases = component_bases(&v.ty);
                    for (i, c) in v.comps.iter().enumerate() {
                        comps.push((*c, bases.get(i).copied().flatten()));
                    }
                }
                let n = ty.components();
                if comps.len() != n && !(comps.len() == 1 && ty.is_numeric()) {
                    self.error(
                        e.loc,
                        format!("{ty} takes {n} components; {} given", comps.len()),
                    );
                    return None;
                }
                let targets = component_bases(&ty);
                let comps = if comps.len() == 1 {
                    vec![comps[0]; n]
                } else {
                    comps
                };
                let (comps, from): (Vec<Comp>, Vec<Option<Base>>) = comps.into_iter().unzip();
                let comps = self.convert_all(comps, &from, &targets);
                Some(Val { ty, comps })
            }
            ExprKind::Cast(t, inner) => {
                let ty = self.resolve(t)?;
                let v = self.expr(inner)?;
                if matches!(ty, Ty::Struct(_) | Ty::Array(..)) && v.comps.len() == 1 {
                    let bases = component_bases(&ty);
                    let comps = bases
                        .into_iter()
                        .map(|b| self.convert_comp(v.comps[0], v.ty.base(), b))
                        .collect();
                    return Some(Val { ty, comps });
                }
                if v.comps.len() > ty.components()
                    || v.comps.len() == ty.components()
                    || v.comps.len() == 1
                {
                    if v.comps.len() == ty.components() && v.ty.components() == ty.components() {
                        let from = component_bases(&v.ty);
                        let to = component_bases(&ty);
                        let comps = self.convert_all(v.comps, &from, &to);
                        return Some(Val { ty, comps });
                    }
                    return self.convert(v, &ty, e.loc, false);
                }
                self.error(e.loc, format!("cannot convert from '{}' to '{}'", v.ty, ty));
                None
            }
            ExprKind::Member(inner, name) => {
                let v = self.expr(inner)?;
                self.member(v, name, e.loc)
            }
            ExprKind::Index(inner, index) => {
                let v = self.expr(inner)?;
                let i = self.expr(index)?;
                self.index(v, i, e.loc)
            }
            ExprKind::Call(name, args) => self.call(name, args, e.loc),
            ExprKind::Method(object, name, args) => self.method(object, name, args, e.loc),
            ExprKind::Compile(..) => {
                self.error(
                    e.loc,
                    "a compiled shader is an object, not a value: it may stand only in an effect's pass or as an item of a global's initializer list",
                );
                None
            }
            ExprKind::Asm(_) | ExprKind::List(_) => {
                self.error(
                    e.loc,
                    "this is allowed only in an effect's state assignment",
                );
                None
            }
        }
    }

    /// `t.Sample(s, uv)` and its kin, shader model 4's spelling, which fxc compiles for
    /// Direct3D 9 with sampler `s` and texture `t` as one sampler named `s+t`.
    fn method(
        &mut self,
        object: &ast::Expr,
        name: &str,
        args: &[ast::Expr],
        loc: Loc,
    ) -> Option<Val> {
        let tex = self.expr(object)?;
        let Ty::Texture(dim) = tex.ty else {
            self.error(
                loc,
                format!(
                    "'.{name}()' is a method of texture objects, not of {}",
                    tex.ty
                ),
            );
            return None;
        };
        let kind = match name {
            "Sample" => TexKind::Plain,
            "SampleBias" => TexKind::Bias,
            "SampleLevel" => TexKind::Lod,
            "SampleGrad" => TexKind::Grad,
            _ => {
                self.error(loc, format!("'.{name}()' is not available for Direct3D 9 profiles: Sample, SampleBias, SampleLevel and SampleGrad are"));
                return None;
            }
        };
        let want = match kind {
            TexKind::Plain => 2,
            TexKind::Grad => 4,
            _ => 3,
        };
        if args.len() != want {
            self.error(
                loc,
                format!("'.{name}()' takes {want} arguments; {} given", args.len()),
            );
            return None;
        }
        let (ExprKind::Ident(t), ExprKind::Ident(s)) = (&object.kind, &args[0].kind) else {
            self.error(
                loc,
                format!("'.{name}()': the texture and the sampler must be named variables"),
            );
            return None;
        };
        let sampler = self.expr(&args[0])?;
        if !matches!(sampler.ty, Ty::Sampler(_)) {
            self.error(
                args[0].loc,
                format!("'.{name}()' takes a sampler first, not {}", sampler.ty),
            );
            return None;
        }
        let dim = if dim == ast::Dim::Generic {
            ast::Dim::D2
        } else {
            dim
        };
        // The table types it as the texture it reads (TEXTURE2D, float4 texels).
        let combined = format!("{s}+{t}");
        if self.lookup(&combined).is_none() {
            self.declare_uniform(
                combined.clone(),
                Ty::Texture(dim),
                false,
                &ast::Binding::default(),
                None,
                loc,
            );
        }
        let var = self.scopes[0][&combined].clone();
        let sampler = Val {
            ty: var.ty,
            comps: var.comps,
        };
        let coords = self.expr(&args[1])?;
        let mut rest = vec![sampler];
        match kind {
            TexKind::Bias | TexKind::Lod => {
                // The level (or bias) goes in w, as tex2Dlod takes it.
                let n = match dim {
                    ast::Dim::D1 => 1,
                    ast::Dim::D2 => 2,
                    _ => 3,
                };
                let c = self.convert(coords, &Ty::vector(Base::Float, n), args[1].loc, true)?;
                let lod = self.expr(&args[2])?;
                let lod = self.convert(lod, &Ty::FLOAT, args[2].loc, true)?;
                let zero = self.program.konst(0.0);
                let mut comps = c.comps;
                while comps.len() < 3 {
                    comps.push(zero);
                }
                comps.push(lod.comps[0]);
                rest.push(Val {
                    ty: Ty::Vector(Base::Float, 4),
                    comps,
                });
            }
            _ => {
                rest.push(coords);
                for a in &args[2..] {
                    rest.push(self.expr(a)?);
                }
            }
        }
        super::intrinsics::sample(self, name, dim, kind, rest, loc)
    }

    fn unary(&mut self, op: UnOp, inner: &ast::Expr, loc: Loc) -> Option<Val> {
        match op {
            UnOp::Plus => self.expr(inner),
            UnOp::Neg => {
                let v = self.expr(inner)?;
                self.numeric(&v, loc)?;
                let ty = if v.ty.base() == Some(Base::Bool) {
                    v.ty.with_base(Base::Int)
                } else {
                    v.ty.clone()
                };
                if ty.base() == Some(Base::Uint) {
                    // A uint known here wraps as 32 bits do: -1u is 4294967295.
                    let wrapped: Option<Vec<Comp>> = v
                        .comps
                        .iter()
                        .map(|&c| {
                            let k = self.program.constant(c)?;
                            let w = (k as i64).wrapping_neg().rem_euclid(1 << 32);
                            Some(self.program.konst(w as f32))
                        })
                        .collect();
                    if let Some(comps) = wrapped {
                        return Some(Val { ty, comps });
                    }
                }
                let comps = self.program.map(Op::Neg, vec![v.comps]);
                Some(Val { ty, comps })
            }
            UnOp::Not => {
                let v = self.expr(inner)?;
                self.numeric(&v, loc)?;
                let b = self.as_bool(&v.comps);
                let comps = b.iter().map(|&c| self.not(c)).collect();
                Some(Val {
                    ty: v.ty.with_base(Base::Bool),
                    comps,
                })
            }
            UnOp::BitNot => {
                self.error(loc, "bitwise operations need shader model 4");
                None
            }
            UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec => {
                let place = self.place(inner)?;
                let old = self.read_place(&place);
                let one = self.scalar_val(Ty::INT, 1.0);
                let bop = if matches!(op, UnOp::PreInc | UnOp::PostInc) {
                    BinOp::Add
                } else {
                    BinOp::Sub
                };
                let new = self.binary(bop, old.clone(), one, loc)?;
                let new = self.convert(new, &place.ty, loc, false)?;
                self.write_place(&place, &new.comps);
                Some(if matches!(op, UnOp::PreInc | UnOp::PreDec) {
                    new
                } else {
                    old
                })
            }
        }
    }

    fn numeric(&mut self, v: &Val, loc: Loc) -> Option<()> {
        if v.ty.is_numeric() {
            Some(())
        } else {
            self.error(loc, format!("a numeric value was expected, not {}", v.ty));
            None
        }
    }
}

const SWIZZLE_SETS: [&str; 2] = ["xyzw", "rgba"];

impl<'a> Lowering<'a> {
    fn binary(&mut self, op: BinOp, a: Val, b: Val, loc: Loc) -> Option<Val> {
        if matches!(
            op,
            BinOp::Shl | BinOp::Shr | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor
        ) {
            self.error(
                loc,
                format!("'{}': bitwise operations need shader model 4", op.symbol()),
            );
            return None;
        }
        self.numeric(&a, loc)?;
        self.numeric(&b, loc)?;
        let Some(ty) = common_type(&a.ty, &b.ty) else {
            self.error(
                loc,
                format!(
                    "'{}': types {} and {} do not match",
                    op.symbol(),
                    a.ty,
                    b.ty
                ),
            );
            return None;
        };
        if a.ty.components() > ty.components() && a.ty.components() > 1
            || b.ty.components() > ty.components() && b.ty.components() > 1
        {
            self.diags
                .warning(loc, "implicit truncation of vector type");
        }
        let a = self.convert(a, &ty, loc, false)?;
        let b = self.convert(b, &ty, loc, false)?;
        let (x, y) = (a.comps, b.comps);
        let integer = matches!(ty.base(), Some(Base::Int | Base::Uint | Base::Bool));
        let arith_ty = if ty.base() == Some(Base::Bool) {
            ty.with_base(Base::Int)
        } else {
            ty.clone()
        };
        let comps = match op {
            BinOp::Add => self.program.map(Op::Add, vec![x, y]),
            BinOp::Sub => {
                let ny = self.program.map(Op::Neg, vec![y]);
                self.program.map(Op::Add, vec![x, ny])
            }
            BinOp::Mul => self.program.map(Op::Mul, vec![x, y]),
            BinOp::Div | BinOp::Mod
                if integer
                    && x.iter()
                        .chain(&y)
                        .all(|&c| self.program.constant(c).is_some()) =>
            {
                // Integers known here divide exactly, toward zero, as C does; a division
                // by zero is left to the hardware's arithmetic.
                let exact: Option<Vec<Comp>> = x
                    .iter()
                    .zip(&y)
                    .map(|(&a, &b)| {
                        let (a, b) = (
                            self.program.constant(a)? as i64,
                            self.program.constant(b)? as i64,
                        );
                        (b != 0).then(|| {
                            let v = if op == BinOp::Div { a / b } else { a % b };
                            self.program.konst(v as f32)
                        })
                    })
                    .collect();
                match exact {
                    Some(c) => c,
                    None if op == BinOp::Div => {
                        let q = self.divide(&x, &y);
                        self.trunc(&q)
                    }
                    None => self.modulo(&x, &y, true),
                }
            }
            BinOp::Div => {
                let q = self.divide(&x, &y);
                if integer {
                    self.trunc(&q)
                } else {
                    q
                }
            }
            BinOp::Mod => self.modulo(&x, &y, integer),
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
                let c = self.compare(op, &x, &y);
                return Some(Val {
                    ty: ty.with_base(Base::Bool),
                    comps: c,
                });
            }
            BinOp::And | BinOp::Or => {
                let bx = self.as_bool(&x);
                let by = self.as_bool(&y);
                let o = if op == BinOp::And { Op::Mul } else { Op::Max };
                let c = self.program.map(o, vec![bx, by]);
                return Some(Val {
                    ty: ty.with_base(Base::Bool),
                    comps: c,
                });
            }
            _ => unreachable!("bitwise operators are refused above"),
        };
        Some(Val {
            ty: arith_ty,
            comps,
        })
    }

    /// `x / y` component by component: `x * rcp(y)`, as Microsoft's compilers do it.
    fn divide(&mut self, x: &[Comp], y: &[Comp]) -> Vec<Comp> {
        let r: Vec<Comp> = y
            .iter()
            .map(|&c| self.program.scalar(Op::Rcp, vec![vec![c]]))
            .collect();
        self.program.map(Op::Mul, vec![x.to_vec(), r])
    }

    /// `x % y` with the sign of `x`, as C's `fmod`.
    fn modulo(&mut self, x: &[Comp], y: &[Comp], integer: bool) -> Vec<Comp> {
        if integer {
            // x - y * trunc(x / y): whole numbers stay whole.
            let q = self.divide(x, y);
            let t = self.trunc(&q);
            let ny = self.program.map(Op::Neg, vec![y.to_vec()]);
            return self.program.map(Op::Mad, vec![ny, t, x.to_vec()]);
        }
        let q = self.divide(x, y);
        let aq = self.program.map(Op::Abs, vec![q.clone()]);
        let f = self.program.map(Op::Frc, vec![aq]);
        let nf = self.program.map(Op::Neg, vec![f.clone()]);
        let signed = self.select_sign(&q, &f, &nf);
        self.program.map(Op::Mul, vec![signed, y.to_vec()])
    }

    /// `s >= 0 ? a : b` per component.
    fn select_sign(&mut self, s: &[Comp], a: &[Comp], b: &[Comp]) -> Vec<Comp> {
        if self.profile.pixel {
            self.program
                .map(Op::Cmp, vec![s.to_vec(), a.to_vec(), b.to_vec()])
        } else {
            let zero = self.program.konst(0.0);
            let ge = self
                .program
                .map(Op::Sge, vec![s.to_vec(), vec![zero; s.len()]]);
            self.program.map(Op::Lrp, vec![ge, a.to_vec(), b.to_vec()])
        }
    }

    /// Booleans of `x op y`.
    fn compare(&mut self, op: BinOp, x: &[Comp], y: &[Comp]) -> Vec<Comp> {
        let n = x.len();
        let one = vec![self.program.konst(1.0); n];
        let zero = vec![self.program.konst(0.0); n];
        if self.profile.is_vs_1_1() && matches!(op, BinOp::Eq | BinOp::Ne) {
            // The legacy compiler's test: d·d > 0 where x and y differ (d = x − y).
            let ny = self.program.map(Op::Neg, vec![y.to_vec()]);
            let d = self.program.map(Op::Add, vec![x.to_vec(), ny]);
            let d2 = self.program.map(Op::Mul, vec![d.clone(), d]);
            let nd2 = self.program.map(Op::Neg, vec![d2.clone()]);
            let m = if op == BinOp::Eq { Op::Sge } else { Op::Slt };
            return self.program.map(m, vec![nd2, d2]);
        }
        if !self.profile.pixel {
            return match op {
                BinOp::Lt => self.program.map(Op::Slt, vec![x.to_vec(), y.to_vec()]),
                BinOp::Gt => self.program.map(Op::Slt, vec![y.to_vec(), x.to_vec()]),
                BinOp::Ge => self.program.map(Op::Sge, vec![x.to_vec(), y.to_vec()]),
                BinOp::Le => self.program.map(Op::Sge, vec![y.to_vec(), x.to_vec()]),
                BinOp::Eq | BinOp::Ne => {
                    let a = self.program.map(Op::Sge, vec![x.to_vec(), y.to_vec()]);
                    let b = self.program.map(Op::Sge, vec![y.to_vec(), x.to_vec()]);
                    let eq = self.program.map(Op::Mul, vec![a, b]);
                    if op == BinOp::Eq {
                        eq
                    } else {
                        eq.iter().map(|&c| self.not(c)).collect()
                    }
                }
                _ => unreachable!(),
            };
        }
        // Pixel shaders have only cmp: d = x - y, d >= 0 ? … : ….
        let ny = self.program.map(Op::Neg, vec![y.to_vec()]);
        let d = self.program.map(Op::Add, vec![x.to_vec(), ny]);
        match op {
            BinOp::Ge => self.program.map(Op::Cmp, vec![d, one, zero]),
            BinOp::Lt => self.program.map(Op::Cmp, vec![d, zero, one]),
            BinOp::Le | BinOp::Gt => {
                let nd = self.program.map(Op::Neg, vec![d]);
                if op == BinOp::Le {
                    self.program.map(Op::Cmp, vec![nd, one, zero])
                } else {
                    self.program.map(Op::Cmp, vec![nd, zero, one])
                }
            }
            BinOp::Eq | BinOp::Ne => {
                // -|d| >= 0 only where d is 0; shader model 2 has no abs modifier, and
                // Microsoft's compiler squares d instead.
                let ad = if self.profile.major >= 3 {
                    self.program.map(Op::Abs, vec![d])
                } else {
                    self.program.map(Op::Mul, vec![d.clone(), d])
                };
                let nad = self.program.map(Op::Neg, vec![ad]);
                if op == BinOp::Eq {
                    self.program.map(Op::Cmp, vec![nad, one, zero])
                } else {
                    self.program.map(Op::Cmp, vec![nad, zero, one])
                }
            }
            _ => unreachable!(),
        }
    }

    fn member(&mut self, v: Val, name: &str, loc: Loc) -> Option<Val> {
        if let Ty::Struct(s) = &v.ty {
            if let Some((at, f)) = field_at(s, name) {
                let n = f.ty.components();
                return Some(Val {
                    ty: f.ty.clone(),
                    comps: v.comps[at..at + n].to_vec(),
                });
            }
            self.error(loc, format!("'{name}' is not a field of struct {}", s.name));
            return None;
        }
        let picks = self.swizzle_indices(&v.ty, name, loc)?;
        let base = v.ty.base()?;
        Some(Val {
            ty: Ty::vector(base, picks.len()),
            comps: picks.iter().map(|&i| v.comps[i]).collect(),
        })
    }

    /// Which components a swizzle (`xyz`, `rgba`) or matrix swizzle (`_m01_m10`, `_11`)
    /// names.
    fn swizzle_indices(&mut self, ty: &Ty, name: &str, loc: Loc) -> Option<Vec<usize>> {
        let (rows, cols) = match ty.dims() {
            Some(d) => d,
            None => {
                self.error(loc, format!("'.{name}' on a value of type {ty}"));
                return None;
            }
        };
        let mut out = Vec::new();
        if matches!(ty, Ty::Matrix(..)) {
            let mut rest = name;
            while !rest.is_empty() {
                let (zero, r) = if let Some(r) = rest.strip_prefix("_m") {
                    (true, r)
                } else if let Some(r) = rest.strip_prefix('_') {
                    (false, r)
                } else {
                    self.error(loc, format!("invalid matrix swizzle '{name}'"));
                    return None;
                };
                let d: Vec<u32> = r.chars().take(2).filter_map(|c| c.to_digit(10)).collect();
                if d.len() != 2 {
                    self.error(loc, format!("invalid matrix swizzle '{name}'"));
                    return None;
                }
                let (i, j) = if zero {
                    (d[0], d[1])
                } else {
                    (d[0].wrapping_sub(1), d[1].wrapping_sub(1))
                };
                if i >= u32::from(rows) || j >= u32::from(cols) {
                    self.error(
                        loc,
                        format!("matrix swizzle '{name}' is out of the matrix's bounds"),
                    );
                    return None;
                }
                out.push((i * u32::from(cols) + j) as usize);
                rest = &r[2..];
            }
        } else {
            let set = SWIZZLE_SETS
                .iter()
                .find(|s| name.chars().all(|c| s.contains(c)));
            let Some(set) = set else {
                self.error(loc, format!("invalid swizzle '{name}'"));
                return None;
            };
            for c in name.chars() {
                let i = set.find(c).unwrap();
                if i >= usize::from(cols) {
                    self.error(
                        loc,
                        format!("invalid subscript '{name}': {ty} has {cols} components"),
                    );
                    return None;
                }
                out.push(i);
            }
        }
        if out.is_empty() || out.len() > 4 {
            self.error(loc, format!("invalid swizzle '{name}'"));
            return None;
        }
        Some(out)
    }

    fn index(&mut self, v: Val, i: Val, loc: Loc) -> Option<Val> {
        let (elem, n) = match &v.ty {
            Ty::Array(t, n) => ((**t).clone(), *n as usize),
            Ty::Vector(b, n) => (Ty::Scalar(*b), usize::from(*n)),
            // A row of one column is still a vector (`float1`), which may be indexed.
            Ty::Matrix(b, r, c) => (Ty::Vector(*b, *c), usize::from(*r)),
            t => {
                self.error(loc, format!("a value of type {t} cannot be indexed"));
                return None;
            }
        };
        let per = elem.components();
        if i.comps.len() != 1 {
            self.error(loc, "an index must be a scalar");
            return None;
        }
        // Read only where the statement runs, and that may fix it.
        let i = match self.on_path(i.comps[0]) {
            Some(k) => Val {
                comps: vec![k],
                ..i
            },
            None => i,
        };
        if let Some(k) = self.program.constant(i.comps[0]) {
            let k = k as i64;
            if k < 0 || k as usize >= n {
                self.error(loc, format!("index {k} is out of bounds [0, {n})"));
                return None;
            }
            let k = k as usize;
            return Some(Val {
                ty: elem,
                comps: v.comps[k * per..(k + 1) * per].to_vec(),
            });
        }
        // A run-time index: a choice among the elements, as fxc makes it: the index
        // floored, zero where it names no element. Its distances to four elements at a
        // time are one vector, and their zero tests another; elements that are scalars
        // of one register (or constants, one `def`) are then one dot product with the
        // tests, others a chain of choices.
        let idx = if self.program.is_integral(i.comps[0]) {
            i.comps[0]
        } else {
            let f = self.program.map(Op::Frc, vec![i.comps.clone()]);
            let nf = self.program.map(Op::Neg, vec![f]);
            self.program.map(Op::Add, vec![i.comps.clone(), nf])[0]
        };
        // An integer index goes to `mova` as it is, as fxc sends it.
        let integer = matches!(i.ty.base(), Some(Base::Int | Base::Uint | Base::Bool));
        let addr = if integer { i.comps[0] } else { idx };
        if let Some(comps) = self.relative_element(&v, n, per, addr) {
            return Some(Val { ty: elem, comps });
        }
        if let Some(held) = self.literal_array(&v, &elem, n) {
            if let Some(comps) = self.relative_element(&held, n, per, addr) {
                return Some(Val { ty: elem, comps });
            }
        }
        let zero = self.program.konst(0.0);
        let mut out = vec![zero; per];
        let mut sum: Option<Comp> = None;
        for start in (0..n).step_by(4) {
            let end = (start + 4).min(n);
            let ks: Vec<Comp> = (start..end).map(|k| self.program.konst(k as f32)).collect();
            let eqs = self.compare(BinOp::Eq, &vec![idx; ks.len()], &ks);
            let values = &v.comps[start * per..end * per];
            let one_register = {
                let mut nodes: Vec<_> = values
                    .iter()
                    .filter(|&&c| self.program.constant(c).is_none())
                    .map(|c| c.node)
                    .collect();
                nodes.dedup();
                nodes.len() <= 1
            };
            if per == 1 && one_register && ks.len() > 1 {
                let d = super::intrinsics::dot(self, values, &eqs);
                sum = Some(match sum {
                    None => d,
                    Some(s) => self.program.map(Op::Add, vec![vec![s], vec![d]])[0],
                });
                continue;
            }
            for (j, k) in (start..end).enumerate() {
                let elem_k = v.comps[k * per..(k + 1) * per].to_vec();
                out = self.select(&vec![eqs[j]; per], &elem_k, &out);
            }
        }
        if let Some(s) = sum {
            out = self.program.map(Op::Add, vec![out, vec![s]]);
        }
        Some(Val {
            ty: elem,
            comps: out,
        })
    }

    /// An array of literals (`static const float4 t[7] = { … }`) as a vertex shader
    /// reads it at a run-time index, as fxc does: its elements in `def`s of registers in
    /// a row (a literal uniform, made once an array), read through `a0`. `None` where
    /// an element is not a literal or takes more than a register.
    fn literal_array(&mut self, v: &Val, elem: &Ty, n: usize) -> Option<Val> {
        let one_register = matches!(elem, Ty::Scalar(_) | Ty::Vector(..));
        if self.profile.pixel || n < 2 || !one_register {
            return None;
        }
        let ty = Ty::Array(Box::new(elem.clone()), n as u32);
        let var = match self.literal_arrays.get(&v.comps) {
            Some(&var) => var,
            None => {
                let values: Vec<f32> = v
                    .comps
                    .iter()
                    .map(|&c| self.program.constant(c))
                    .collect::<Option<_>>()?;
                let var = self.program.uniforms.len() as u32;
                self.program.uniforms.push(Uniform {
                    name: format!("(literals {var})"),
                    ty: ty.clone(),
                    registers: n as u32,
                    bound: None,
                    kept: false,
                    int_bound: None,
                    bool_bound: None,
                    default: Some(values),
                    row_major: false,
                    is_sampler: false,
                    literal: true,
                    loc: self.program.here,
                });
                self.literal_arrays.insert(v.comps.clone(), var);
                var
            }
        };
        let comps = self.uniform_comps(var, &ty, false, &mut 0);
        Some(Val { ty, comps })
    }

    /// `x + k` for a whole number `k` a register index may take away from the address:
    /// `x` and `k` (`i` and 0 for anything else). `x` is then as whole as `i`.
    fn index_and_step(&self, i: Comp) -> (Comp, i32) {
        let node = self.program.node(i.node);
        if node.op != Op::Add {
            return (i, 0);
        }
        let lane = usize::from(i.lane);
        let (a, b) = (node.args[0][lane], node.args[1][lane]);
        let whole = |c: Comp| {
            self.program
                .constant(c)
                .filter(|k| k.fract() == 0.0 && k.abs() <= 255.0)
                .map(|k| k as i32)
        };
        match (whole(a), whole(b)) {
            (_, Some(k)) if k >= 0 => (a, k),
            (Some(k), _) if k >= 0 => (b, k),
            _ => (i, 0),
        }
    }

    /// An element of a uniform array at a run-time index, read through the address
    /// register as vertex shaders can (`mova a0.x`, `c#[a0.x]`): when every element is
    /// laid out as the first, a whole number of registers further on. The index is
    /// whole already (`mova` would round it to the nearest).
    fn relative_element(&mut self, v: &Val, n: usize, per: usize, i: Comp) -> Option<Vec<Comp>> {
        if self.profile.pixel || n < 2 || per == 0 {
            return None;
        }
        let at = |p: &Program, c: Comp| match p.node(c.node).op {
            Op::Uniform { var, offset } => Some((var, offset, c.lane)),
            _ => None,
        };
        let first: Vec<(u32, u32, u8)> = v.comps[..per]
            .iter()
            .map(|&c| at(&self.program, c))
            .collect::<Option<_>>()?;
        let var = first[0].0;
        let (_, base, _) = first[0];
        let (v1, next, _) = at(&self.program, v.comps[per])?;
        if v1 != var || next <= base {
            return None;
        }
        let stride = next - base;
        for k in 0..n {
            for (j, &(fv, off, lane)) in first.iter().enumerate() {
                let want = (fv, off + k as u32 * stride, lane);
                if fv != var || at(&self.program, v.comps[k * per + j]) != Some(want) {
                    return None;
                }
            }
        }
        // A whole number added to the index moves the registers read instead, as fxc
        // reads `t[i + 3]` (`c11[a0.x]`).
        let (i, moved) = self.index_and_step(i);
        let first: Vec<(u32, u32, u8)> = first
            .into_iter()
            .map(|(fv, off, lane)| (fv, off.saturating_add_signed(moved * stride as i32), lane))
            .collect();
        let addr = if stride == 1 {
            i
        } else {
            // Every lane of the index's value scaled at once: indices taken from one
            // vector (four bones') are then one vector of offsets, for one `mova`.
            let w = self.program.node(i.node).width;
            let whole = Program::lanes(i.node, w);
            let s = self.program.konst(stride as f32);
            self.program
                .map(Op::Mul, vec![whole, vec![s; usize::from(w)]])[usize::from(i.lane)]
        };
        let mut out = Vec::with_capacity(per);
        for &(_, offset, lane) in &first {
            let r = self
                .program
                .raw(Op::Relative { var, offset }, vec![vec![addr]], 4);
            out.push(r[usize::from(lane)]);
        }
        Some(out)
    }

    // ---- places ------------------------------------------------------------------------

    /// The variable an `out` argument writes, and the types it is cast to on the way
    /// (`func((float4)x)`, outermost first): the value comes back through them.
    fn out_place(&mut self, mut e: &ast::Expr) -> Option<(Place, Vec<Ty>)> {
        let mut casts = Vec::new();
        while let ExprKind::Cast(t, inner) = &e.kind {
            casts.push(self.resolve(t)?);
            e = inner;
        }
        Some((self.place(e)?, casts))
    }

    fn place(&mut self, e: &ast::Expr) -> Option<Place> {
        match &e.kind {
            ExprKind::Ident(name) => {
                let Some((scope, var)) = self.lookup(name) else {
                    self.error(e.loc, format!("undeclared identifier '{name}'"));
                    return None;
                };
                if var.read_only {
                    let what = if scope == 0
                        && !var.comps.is_empty()
                        && self.program.constant(var.comps[0]).is_none()
                    {
                        "a uniform"
                    } else {
                        "a const variable"
                    };
                    self.error(
                        e.loc,
                        format!("'{name}' is {what} and cannot be assigned to"),
                    );
                    return None;
                }
                let ty = var.ty.clone();
                Some(Place {
                    scope,
                    name: name.clone(),
                    comps: (0..ty.components()).collect(),
                    ty,
                })
            }
            ExprKind::Member(inner, field) => {
                let p = self.place(inner)?;
                if let Ty::Struct(s) = &p.ty {
                    if let Some((at, f)) = field_at(s, field) {
                        let n = f.ty.components();
                        return Some(Place {
                            ty: f.ty.clone(),
                            comps: p.comps[at..at + n].to_vec(),
                            ..p
                        });
                    }
                    self.error(
                        e.loc,
                        format!("'{field}' is not a field of struct {}", s.name),
                    );
                    return None;
                }
                let picks = self.swizzle_indices(&p.ty, field, e.loc)?;
                let mut seen = picks.clone();
                seen.sort();
                seen.dedup();
                if seen.len() != picks.len() {
                    self.error(e.loc, format!("'{field}': a component is written twice"));
                    return None;
                }
                let base = p.ty.base()?;
                Some(Place {
                    ty: Ty::vector(base, picks.len()),
                    comps: picks.iter().map(|&i| p.comps[i]).collect(),
                    ..p
                })
            }
            ExprKind::Index(inner, index) => {
                let p = self.place(inner)?;
                let i = self.expr(index)?;
                let (elem, n) = match &p.ty {
                    Ty::Array(t, n) => ((**t).clone(), *n as usize),
                    Ty::Vector(b, n) => (Ty::Scalar(*b), usize::from(*n)),
                    Ty::Matrix(b, _, c) => (Ty::Vector(*b, *c), p.ty.dims().unwrap().0 as usize),
                    t => {
                        self.error(e.loc, format!("a value of type {t} cannot be indexed"));
                        return None;
                    }
                };
                let per = elem.components();
                match i.comps.first().and_then(|&c| self.program.constant(c)) {
                    Some(k) if k >= 0.0 && (k as usize) < n => {
                        let k = k as usize;
                        Some(Place {
                            ty: elem,
                            comps: p.comps[k * per..(k + 1) * per].to_vec(),
                            ..p
                        })
                    }
                    Some(k) => {
                        self.error(e.loc, format!("index {k} is out of bounds [0, {n})"));
                        None
                    }
                    None => {
                        self.error(e.loc, "writing through an index known only at run time is not supported for Direct3D 9 profiles yet");
                        None
                    }
                }
            }
            _ => {
                self.error(e.loc, "this cannot be assigned to");
                None
            }
        }
    }

    fn read_place(&self, p: &Place) -> Val {
        let var = &self.scopes[p.scope][&p.name];
        Val {
            ty: p.ty.clone(),
            comps: p.comps.iter().map(|&i| var.comps[i]).collect(),
        }
    }

    /// Store `value` in the place, under the current guard.
    fn write_place(&mut self, p: &Place, value: &[Comp]) {
        let old: Vec<Comp> = {
            let var = &self.scopes[p.scope][&p.name];
            p.comps.iter().map(|&i| var.comps[i]).collect()
        };
        let new = match self.guard() {
            g if g == self.env_pred => value.to_vec(),
            None => value.to_vec(),
            Some(g) => {
                let new = self.select(&vec![g; value.len()], value, &old);
                for ((&n, &v), &o) in new.iter().zip(value).zip(&old) {
                    if n != v && n != o {
                        self.chosen.entry(n).or_insert((g, v));
                    }
                }
                new
            }
        };
        let var = self.scopes[p.scope].get_mut(&p.name).unwrap();
        for (k, &i) in p.comps.iter().enumerate() {
            var.comps[i] = new[k];
        }
    }
}

impl<'a> Lowering<'a> {
    // ---- calls -------------------------------------------------------------------------

    fn call(&mut self, name: &str, args: &[ast::Expr], loc: Loc) -> Option<Val> {
        if let Some(fs) = self.functions.get(name).cloned() {
            let candidates: Vec<&'a ast::Function> = fs
                .iter()
                .rev()
                .filter(|f| {
                    f.body.is_some()
                        && f.params.len() >= args.len()
                        && f.params[args.len()..]
                            .iter()
                            .all(|p| p.declarator.init.is_some())
                })
                .copied()
                .collect();
            let f = if candidates.len() > 1 {
                self.best_overload(&candidates, args)
            } else {
                candidates.first().copied()
            };
            let Some(f) = f else {
                self.error(
                    loc,
                    format!("'{name}': no overload takes {} arguments", args.len()),
                );
                return None;
            };
            return self.inline(f, args, loc);
        }
        // Intrinsics with out parameters.
        if matches!(name, "modf" | "sincos") {
            return self.out_intrinsic(name, args, loc);
        }
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.expr(a)?);
        }
        super::intrinsics::call(self, name, vals, loc)
    }

    /// `modf(x, out ip)` (the fraction, the integer part written to `ip`, both with the
    /// sign of x) and `sincos(x, out s, out c)`.
    fn out_intrinsic(&mut self, name: &str, args: &[ast::Expr], loc: Loc) -> Option<Val> {
        let want = if name == "modf" { 2 } else { 3 };
        if args.len() != want {
            self.error(
                loc,
                format!("'{name}' takes {want} arguments; {} given", args.len()),
            );
            return None;
        }
        let x = self.expr(&args[0])?;
        let ty = x.ty.with_base(
            if matches!(x.ty.base(), Some(Base::Half | Base::Float | Base::Double)) {
                x.ty.base().unwrap()
            } else {
                Base::Float
            },
        );
        let x = self.convert(x, &ty, args[0].loc, true)?;
        if name == "modf" {
            let ip = self.trunc(&x.comps);
            let nip = self.program.map(Op::Neg, vec![ip.clone()]);
            let frac = self.program.map(Op::Add, vec![x.comps.clone(), nip]);
            let place = self.place(&args[1])?;
            let v = self.convert(
                Val {
                    ty: ty.clone(),
                    comps: ip,
                },
                &place.ty,
                args[1].loc,
                true,
            )?;
            self.write_place(&place, &v.comps);
            return Some(Val { ty, comps: frac });
        }
        let (sin, cos) = super::intrinsics::sin_and_cos(self, &x.comps);
        for (arg, comps) in [(&args[1], sin), (&args[2], cos)] {
            let v = Val {
                ty: ty.clone(),
                comps,
            };
            let place = self.place(arg)?;
            let v = self.convert(v, &place.ty, arg.loc, true)?;
            self.write_place(&place, &v.comps);
        }
        Some(Val {
            ty: Ty::Void,
            comps: vec![],
        })
    }

    /// The overload whose parameters the arguments fit best: exact types first, then the
    /// fewest conversions of scalar type, then of shape (the rules fxc applies, as far as
    /// SM2/3 sources need them).
    fn best_overload(
        &mut self,
        candidates: &[&'a ast::Function],
        args: &[ast::Expr],
    ) -> Option<&'a ast::Function> {
        let mut types = Vec::new();
        for a in args {
            let mut scratch = Diagnostics::default();
            let saved = std::mem::replace(self.diags, std::mem::take(&mut scratch));
            let t = self.expr(a).map(|v| v.ty);
            *self.diags = saved;
            types.push(t?);
        }
        let cost = |l: &mut Self, f: &ast::Function| -> Option<u32> {
            let mut total = 0;
            for (p, at) in f.params.iter().zip(&types) {
                let pt = l.resolve(&p.ty)?;
                if pt == *at {
                    continue;
                }
                if pt.components() != at.components() && at.components() != 1 {
                    total += 100;
                }
                total += match (pt.base(), at.base()) {
                    (Some(a), Some(b)) if a == b => 1,
                    (Some(a), Some(b)) if is_float(Some(a)) == is_float(Some(b)) => 5,
                    (Some(_), Some(_)) => 10,
                    _ if std::mem::discriminant(&pt) == std::mem::discriminant(at) => 1,
                    _ => 1000,
                };
            }
            Some(total)
        };
        let mut best: Option<(u32, &'a ast::Function)> = None;
        for &f in candidates {
            let Some(c) = cost(self, f) else { continue };
            if best.is_none() || best.is_some_and(|(b, _)| c < b) {
                best = Some((c, f));
            }
        }
        best.map(|(_, f)| f)
    }

    fn inline(&mut self, f: &'a ast::Function, args: &[ast::Expr], loc: Loc) -> Option<Val> {
        if self.frames.len() > MAX_CALL_DEPTH {
            self.error(
                loc,
                format!(
                    "'{}': calls nest more than {MAX_CALL_DEPTH} deep (recursion is not allowed)",
                    f.name
                ),
            );
            return None;
        }
        self.calls += 1;
        let mut scope = HashMap::new();
        let mut outs = Vec::new();
        for (i, p) in f.params.iter().enumerate() {
            let ty = self.resolve(&p.ty)?;
            let ty = self.array_of(ty, &p.declarator.array, p.declarator.loc)?;
            let m = p.ty.modifiers;
            let Some(a) = args.get(i) else {
                // A parameter left out takes its default value.
                let Some(init) = &p.declarator.init else {
                    return None;
                };
                let comps = self.initializer(init, &ty)?;
                scope.insert(
                    p.declarator.name.clone(),
                    Var {
                        ty,
                        comps,
                        read_only: m.const_,
                    },
                );
                continue;
            };
            let comps = if m.out && !m.in_ {
                let place = self.out_place(a)?;
                outs.push((p.declarator.name.clone(), place));
                let z = self.program.konst(0.0);
                vec![z; ty.components()]
            } else {
                if m.out {
                    let place = self.out_place(a)?;
                    outs.push((p.declarator.name.clone(), place));
                }
                let v = self.expr(a)?;
                self.convert(v, &ty, a.loc, true)?.comps
            };
            scope.insert(
                p.declarator.name.clone(),
                Var {
                    ty,
                    comps,
                    read_only: m.const_,
                },
            );
        }
        let ret_ty = self.resolve(&f.ret)?;
        self.check_returns(f, &ret_ty);
        let z = self.program.konst(0.0);
        // The callee sees globals and its own parameters only, and runs under the
        // caller's guard; its returns end only its own code.
        let saved_scopes = self.scopes.split_off(1);
        let saved_loops = std::mem::take(&mut self.loops);
        let saved_pred = self.pred;
        let caller_guard = self.guard_with(&saved_loops);
        self.pred = caller_guard;
        self.scopes.push(scope);
        self.frames.push(Frame {
            ret: vec![z; ret_ty.components()],
            ret_ty: ret_ty.clone(),
            returned: None,
            ended: false,
        });
        let caller_typedefs = std::mem::replace(&mut self.typedefs, self.global_typedefs.clone());
        self.stmts(&f.body.as_ref().unwrap().stmts);
        self.typedefs = caller_typedefs;
        let frame = self.frames.pop().unwrap();
        self.pred = None;
        let callee = self.scopes.pop().unwrap();
        let outs: Vec<(Val, (Place, Vec<Ty>))> = outs
            .into_iter()
            .map(|(n, place)| {
                let v = &callee[&n];
                (
                    Val {
                        ty: v.ty.clone(),
                        comps: v.comps.clone(),
                    },
                    place,
                )
            })
            .collect();
        self.scopes.extend(saved_scopes);
        self.loops = saved_loops;
        self.pred = saved_pred;
        for (mut v, (place, casts)) in outs {
            // The parameter's value converted to the argument's type (a float4 out into
            // an int4 truncates), through each type the argument was cast to.
            for t in &casts {
                v = self.convert(v, t, loc, false)?;
            }
            let v = self.convert(v, &place.ty, loc, true)?;
            self.write_place(&place, &v.comps);
        }
        Some(Val {
            ty: ret_ty,
            comps: frame.ret,
        })
    }

    /// The guard as [`Self::guard`] computes it, with these loops' flags.
    fn guard_with(&mut self, loops: &[LoopFlags]) -> Option<Comp> {
        let saved = std::mem::replace(&mut self.loops, loops.to_vec());
        let g = self.guard();
        self.loops = saved;
        g
    }

    // What the intrinsics need of the lowering.

    pub(super) fn prog(&mut self) -> &mut Program {
        &mut self.program
    }

    pub(super) fn is_pixel(&self) -> bool {
        self.profile.pixel
    }

    /// The shader model's major number.
    pub(super) fn model(&self) -> u8 {
        self.profile.major
    }

    pub(super) fn profile(&self) -> Profile {
        self.profile
    }

    pub(super) fn err(&mut self, loc: Loc, msg: String) {
        self.error(loc, msg);
    }

    pub(super) fn warn(&mut self, loc: Loc, msg: String) {
        self.diags.warning(loc, msg);
    }

    pub(super) fn conv(&mut self, v: Val, to: &Ty, loc: Loc) -> Option<Val> {
        self.convert(v, to, loc, true)
    }

    pub(super) fn cmp_ops(&mut self, op: BinOp, x: &[Comp], y: &[Comp]) -> Vec<Comp> {
        self.compare(op, x, y)
    }

    pub(super) fn sel(&mut self, c: &[Comp], t: &[Comp], f: &[Comp]) -> Vec<Comp> {
        self.select(c, t, f)
    }

    pub(super) fn sign_sel(&mut self, s: &[Comp], a: &[Comp], b: &[Comp]) -> Vec<Comp> {
        self.select_sign(s, a, b)
    }

    pub(super) fn truncate(&mut self, x: &[Comp]) -> Vec<Comp> {
        self.trunc(x)
    }

    pub(super) fn div(&mut self, x: &[Comp], y: &[Comp]) -> Vec<Comp> {
        self.divide(x, y)
    }

    pub(super) fn kill(&mut self, comps: Vec<Comp>) {
        let g = self.guard();
        let comps = match g {
            None => comps,
            Some(g) => {
                let zero = self.program.konst(0.0);
                self.select(&vec![g; comps.len()], &comps, &vec![zero; comps.len()])
            }
        };
        self.program.kills.push(comps);
        let here = self.program.here;
        self.program.kill_locs.push(here);
    }

    pub(super) fn common(&self, a: &Ty, b: &Ty) -> Option<Ty> {
        common_type(a, b)
    }
}
