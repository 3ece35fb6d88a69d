//! Tokens to a syntax tree. HLSL is C's expression grammar with types that are names, so
//! the parser knows which names are types: the built-in ones and every `struct` and
//! `typedef` it has seen. A syntax error is reported at its token and the parser skips to
//! the next `;` or `}`, so every broken statement of a source is reported, not only the first.

use super::ast::*;
use super::diag::Diagnostics;
use super::token::{Loc, Token, TokenKind};
use std::collections::HashSet;

/// How deep expressions and statements may nest: deeper is refused rather than risking the
/// stack on hostile input.
const MAX_DEPTH: u32 = 256;

pub fn parse(tokens: &[Token], diags: &mut Diagnostics) -> Program {
    let mut p = Parser {
        toks: tokens,
        pos: 0,
        diags,
        types: HashSet::new(),
        depth: 0,
        end: tokens.last().map(|t| t.loc).unwrap_or_default(),
    };
    let mut program = Program::default();
    while !p.at_end() {
        let before = p.pos;
        match p.item() {
            Ok(Some(item)) => program.items.push(item),
            Ok(None) => {}
            Err(Failed) => p.recover_top(),
        }
        if p.pos == before {
            // Never loop on a token nothing accepts.
            p.pos += 1;
        }
    }
    program
}

/// A syntax error was reported; the caller recovers.
#[derive(Debug)]
struct Failed;

type PResult<T> = Result<T, Failed>;

struct Parser<'t, 'd> {
    toks: &'t [Token],
    pos: usize,
    diags: &'d mut Diagnostics,
    /// Struct and typedef names seen so far.
    types: HashSet<String>,
    depth: u32,
    end: Loc,
}

/// The type names HLSL has built in, without their vector and matrix suffixes.
const SCALARS: [(&str, Scalar); 11] = [
    ("bool", Scalar::Bool),
    ("int", Scalar::Int),
    ("uint", Scalar::Uint),
    ("dword", Scalar::Uint),
    ("half", Scalar::Half),
    ("float", Scalar::Float),
    ("double", Scalar::Double),
    ("min16float", Scalar::Half),
    ("min10float", Scalar::Half),
    ("min16int", Scalar::Int),
    ("min16uint", Scalar::Uint),
];

/// `float4` → (float, 4, None); `half3x4` → (half, 3, Some(4)); `int` → (int, 0, None).
pub(crate) fn numeric_type(name: &str) -> Option<TypeName> {
    for (prefix, scalar) in SCALARS {
        let Some(rest) = name.strip_prefix(prefix) else {
            continue;
        };
        let digit = |s: &str| match s {
            "1" | "2" | "3" | "4" => s.parse::<u8>().ok(),
            _ => None,
        };
        if rest.is_empty() {
            return Some(TypeName::Scalar(scalar));
        }
        if let Some(n) = digit(rest) {
            return Some(TypeName::Vector(scalar, n));
        }
        if let Some((r, c)) = rest.split_once('x') {
            if let (Some(r), Some(c)) = (digit(r), digit(c)) {
                return Some(TypeName::Matrix(scalar, r, c));
            }
        }
    }
    None
}

pub(crate) fn object_type(name: &str) -> Option<TypeName> {
    Some(match name.to_ascii_lowercase().as_str() {
        "sampler" | "samplerstate" | "sampler_state" => TypeName::Sampler(Dim::Generic),
        "sampler1d" => TypeName::Sampler(Dim::D1),
        "sampler2d" => TypeName::Sampler(Dim::D2),
        "sampler3d" => TypeName::Sampler(Dim::D3),
        "samplercube" => TypeName::Sampler(Dim::Cube),
        "texture" => TypeName::Texture(Dim::Generic),
        "texture1d" => TypeName::Texture(Dim::D1),
        "texture2d" => TypeName::Texture(Dim::D2),
        "texture3d" => TypeName::Texture(Dim::D3),
        "texturecube" => TypeName::Texture(Dim::Cube),
        "string" => TypeName::String,
        "dword" => TypeName::Scalar(Scalar::Uint),
        "vector" if name != "vector" => TypeName::Vector(Scalar::Float, 4),
        "matrix" if name != "matrix" => TypeName::Matrix(Scalar::Float, 4, 4),
        "pixelshader"
        | "vertexshader"
        | "geometryshader"
        | "computeshader"
        | "hullshader"
        | "domainshader"
        | "blendstate"
        | "depthstencilstate"
        | "rasterizerstate"
        | "samplercomparisonstate" => TypeName::Object(name.to_string()),
        _ => return None,
    })
    .filter(|_| {
        // `sampler_state` is a keyword only in an initializer; the lower-case spellings
        // of these are case-insensitive in D3DX's effect language, the rest exact.
        name != "sampler_state"
    })
}

const MODIFIERS: [&str; 21] = [
    "static",
    "const",
    "uniform",
    "extern",
    "shared",
    "volatile",
    "row_major",
    "column_major",
    "in",
    "out",
    "inout",
    "inline",
    "precise",
    "linear",
    "centroid",
    "nointerpolation",
    "noperspective",
    "sample",
    "groupshared",
    "snorm",
    "unorm",
];

impl<'t> Parser<'t, '_> {
    fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    fn peek(&self) -> Option<&'t Token> {
        self.toks.get(self.pos)
    }

    fn peek_at(&self, n: usize) -> Option<&'t Token> {
        self.toks.get(self.pos + n)
    }

    fn loc(&self) -> Loc {
        self.peek().map_or(self.end, |t| t.loc)
    }

    fn check(&self, text: &str) -> bool {
        self.peek().is_some_and(|t| t.is(text))
    }

    fn eat(&mut self, text: &str) -> bool {
        if self.check(text) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn error_here(&mut self, expected: &str) -> Failed {
        let loc = self.loc();
        let message = match self.peek() {
            Some(t) => format!("syntax error: unexpected '{}', expected {expected}", t.text),
            None => format!("syntax error: unexpected end of file, expected {expected}"),
        };
        self.diags.error(loc, message);
        Failed
    }

    fn expect(&mut self, text: &str) -> PResult<()> {
        if self.eat(text) {
            Ok(())
        } else {
            Err(self.error_here(&format!("'{text}'")))
        }
    }

    fn ident(&mut self, what: &str) -> PResult<(String, Loc)> {
        match self.peek() {
            Some(t) if t.kind == TokenKind::Ident => {
                self.pos += 1;
                Ok((t.text.clone(), t.loc))
            }
            _ => Err(self.error_here(what)),
        }
    }

    fn deeper(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let loc = self.loc();
            self.diags.error(
                loc,
                format!("this nests more than {MAX_DEPTH} levels deep, which is not supported"),
            );
            return Err(Failed);
        }
        Ok(())
    }

    /// Skip to just after the next `;` at this level, or to a `}` that closes the
    /// top level, after a syntax error.
    fn recover_top(&mut self) {
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            self.pos += 1;
            if t.kind != TokenKind::Punct {
                continue;
            }
            match t.text.as_str() {
                "{" | "(" | "[" => depth += 1,
                ")" | "]" => depth -= 1,
                "}" => {
                    depth -= 1;
                    if depth <= 0 {
                        self.eat(";");
                        return;
                    }
                }
                ";" if depth <= 0 => return,
                _ => {}
            }
        }
    }

    /// Skip the rest of a broken statement inside a block: to after its `;`, or to the
    /// block's own `}` (left for the block to close).
    fn recover_stmt(&mut self) {
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            if t.kind == TokenKind::Punct {
                match t.text.as_str() {
                    "{" | "(" | "[" => depth += 1,
                    ")" | "]" => depth -= 1,
                    "}" => {
                        if depth <= 0 {
                            return;
                        }
                        depth -= 1;
                        if depth == 0 {
                            self.pos += 1;
                            return;
                        }
                    }
                    ";" if depth <= 0 => {
                        self.pos += 1;
                        return;
                    }
                    _ => {}
                }
            }
            self.pos += 1;
        }
    }

    // ---- types -------------------------------------------------------------------

    fn is_modifier(t: &Token) -> bool {
        t.kind == TokenKind::Ident && MODIFIERS.contains(&t.text.as_str())
    }

    /// Whether the token at `n` ahead starts a type (after any modifiers).
    fn starts_type_at(&self, n: usize) -> bool {
        let Some(t) = self.peek_at(n) else {
            return false;
        };
        if t.kind != TokenKind::Ident {
            return false;
        }
        let s = t.text.as_str();
        numeric_type(s).is_some()
            || object_type(s).is_some()
            || matches!(s, "void" | "vector" | "matrix" | "struct" | "string")
            || self.types.contains(s)
    }

    /// A declaration starts here: modifiers, `struct`, a templated type, or a type
    /// followed by a name.
    fn declaration_ahead(&self) -> bool {
        let Some(t) = self.peek() else {
            return false;
        };
        if Self::is_modifier(t) || t.is("struct") {
            return true;
        }
        if !self.starts_type_at(0) {
            return false;
        }
        self.peek_at(1)
            .is_some_and(|n| n.kind == TokenKind::Ident || n.is("<"))
    }

    fn starts_decl(&self) -> bool {
        let mut n = 0;
        while self.peek_at(n).is_some_and(Self::is_modifier) {
            n += 1;
        }
        n > 0 || self.starts_type_at(0)
    }

    fn modifiers(&mut self) -> Modifiers {
        let mut m = Modifiers::default();
        while let Some(t) = self.peek() {
            if !Self::is_modifier(t) {
                break;
            }
            self.pos += 1;
            match t.text.as_str() {
                "static" => m.static_ = true,
                "const" => m.const_ = true,
                "uniform" => m.uniform = true,
                "extern" => m.extern_ = true,
                "shared" => m.shared = true,
                "volatile" => m.volatile = true,
                "row_major" => m.row_major = true,
                "column_major" => m.column_major = true,
                "in" => m.in_ = true,
                "out" => m.out = true,
                "inout" => {
                    m.in_ = true;
                    m.out = true
                }
                "inline" => m.inline = true,
                "precise" => m.precise = true,
                "centroid" => m.centroid = true,
                "nointerpolation" => m.nointerpolation = true,
                _ => {}
            }
        }
        m
    }

    /// `[modifiers] type [modifiers]`
    fn ty(&mut self) -> PResult<Type> {
        let loc = self.loc();
        let mut modifiers = self.modifiers();
        let name = self.type_name()?;
        let after = self.modifiers();
        merge(&mut modifiers, after);
        Ok(Type {
            name,
            modifiers,
            loc,
        })
    }

    fn type_name(&mut self) -> PResult<TypeName> {
        let Some(t) = self.peek() else {
            return Err(self.error_here("a type"));
        };
        if t.kind != TokenKind::Ident {
            return Err(self.error_here("a type"));
        }
        let s = t.text.as_str();
        // A typedef may take a built-in type's name (`typedef float2 float;`, or
        // `texturE`, which would otherwise be `texture`): the lowering knows which is
        // in scope.
        if self.types.contains(s) {
            self.pos += 1;
            return Ok(TypeName::Named(s.to_string()));
        }
        if let Some(n) = numeric_type(s) {
            self.pos += 1;
            return Ok(n);
        }
        if let Some(o) = object_type(s) {
            self.pos += 1;
            // SM4's `Texture2D<float4>`: the element type is accepted and dropped.
            if matches!(o, TypeName::Texture(_)) && self.check("<") && !self.annotation_follows() {
                self.pos += 1;
                self.type_name()?;
                self.expect(">")?;
            }
            return Ok(o);
        }
        match s {
            "void" => {
                self.pos += 1;
                Ok(TypeName::Void)
            }
            "string" => {
                self.pos += 1;
                Ok(TypeName::String)
            }
            "vector" => {
                self.pos += 1;
                if !self.eat("<") {
                    return Ok(TypeName::Vector(Scalar::Float, 4));
                }
                let scalar = self.scalar_arg()?;
                self.expect(",")?;
                let n = self.dimension_arg()?;
                self.expect(">")?;
                Ok(TypeName::Vector(scalar, n))
            }
            "matrix" => {
                self.pos += 1;
                if !self.eat("<") {
                    return Ok(TypeName::Matrix(Scalar::Float, 4, 4));
                }
                let scalar = self.scalar_arg()?;
                self.expect(",")?;
                let r = self.dimension_arg()?;
                self.expect(",")?;
                let c = self.dimension_arg()?;
                self.expect(">")?;
                Ok(TypeName::Matrix(scalar, r, c))
            }
            "struct" => Ok(TypeName::Struct(Box::new(self.struct_def()?))),
            _ if self.types.contains(s) => {
                self.pos += 1;
                Ok(TypeName::Named(s.to_string()))
            }
            _ => Err(self.error_here("a type")),
        }
    }

    /// `<` after `texture` starts an annotation when a type and a name follow.
    fn annotation_follows(&self) -> bool {
        let mut n = 1;
        while self.peek_at(n).is_some_and(Self::is_modifier) {
            n += 1;
        }
        self.starts_type_at(n)
            && self
                .peek_at(n + 1)
                .is_some_and(|t| t.kind == TokenKind::Ident)
    }

    fn scalar_arg(&mut self) -> PResult<Scalar> {
        match self.type_name()? {
            TypeName::Scalar(s) => Ok(s),
            _ => {
                let loc = self.toks[self.pos - 1].loc;
                self.diags.error(
                    loc,
                    "a vector's or matrix's element type must be a scalar type",
                );
                Err(Failed)
            }
        }
    }

    fn dimension_arg(&mut self) -> PResult<u8> {
        match self.peek() {
            Some(t) if t.kind == TokenKind::Int => {
                self.pos += 1;
                match t.text.trim_end_matches(['u', 'U', 'l', 'L']) {
                    d @ ("1" | "2" | "3" | "4") => Ok(d.parse().unwrap_or(4)),
                    _ => {
                        self.diags
                            .error(t.loc, format!("dimension {} is not 1, 2, 3 or 4", t.text));
                        Err(Failed)
                    }
                }
            }
            _ => Err(self.error_here("a dimension 1 to 4")),
        }
    }

    fn struct_def(&mut self) -> PResult<StructDef> {
        let loc = self.loc();
        self.expect("struct")?;
        let name = match self.peek() {
            Some(t) if t.kind == TokenKind::Ident => {
                self.pos += 1;
                self.types.insert(t.text.clone());
                Some(t.text.clone())
            }
            _ => None,
        };
        let base = if self.eat(":") {
            Some(self.ident("the name of the struct this one extends")?)
        } else {
            None
        };
        if !self.check("{") {
            // `struct S s;` names a struct defined earlier.
            return match name {
                Some(n) => Ok(StructDef {
                    name: Some(n),
                    base,
                    fields: Vec::new(),
                    loc,
                }),
                None => Err(self.error_here("a struct's name or '{'")),
            };
        }
        self.expect("{")?;
        let mut fields = Vec::new();
        while !self.check("}") && !self.at_end() {
            match self.fields(&mut fields) {
                Ok(()) => {}
                Err(Failed) => self.recover_stmt(),
            }
        }
        self.expect("}")?;
        Ok(StructDef {
            name,
            base,
            fields,
            loc,
        })
    }

    fn fields(&mut self, out: &mut Vec<StructField>) -> PResult<()> {
        let ty = self.ty()?;
        loop {
            let declarator = self.declarator(false)?;
            out.push(StructField {
                ty: ty.clone(),
                declarator,
            });
            if !self.eat(",") {
                break;
            }
        }
        self.expect(";")
    }

    // ---- declarations ------------------------------------------------------------

    fn attributes(&mut self) -> PResult<Vec<Attribute>> {
        let mut out = Vec::new();
        while self.check("[") {
            let loc = self.loc();
            self.pos += 1;
            let (name, _) = self.ident("an attribute's name")?;
            let mut args = Vec::new();
            if self.eat("(") {
                if !self.check(")") {
                    loop {
                        args.push(self.assignment()?);
                        if !self.eat(",") {
                            break;
                        }
                    }
                }
                self.expect(")")?;
            }
            self.expect("]")?;
            out.push(Attribute { name, args, loc });
        }
        Ok(out)
    }

    fn item(&mut self) -> PResult<Option<Item>> {
        let Some(t) = self.peek() else {
            return Ok(None);
        };
        if t.kind == TokenKind::Pragma {
            self.pos += 1;
            let row_major = match t.text.as_str() {
                "pack_matrix(row_major)" => true,
                "pack_matrix(column_major)" => false,
                _ => return Ok(None),
            };
            return Ok(Some(Item::PackMatrix {
                row_major,
                loc: t.loc,
            }));
        }
        if self.eat(";") {
            return Ok(None);
        }
        let attributes = self.attributes()?;
        let Some(t) = self.peek() else {
            return Err(self.error_here("a declaration"));
        };
        match t.text.as_str() {
            "technique" | "technique9" | "technique10" | "technique11"
                if t.kind == TokenKind::Ident =>
            {
                return Ok(Some(Item::Technique(self.technique()?)));
            }
            "typedef" if t.kind == TokenKind::Ident => {
                self.pos += 1;
                let ty = self.ty()?;
                let mut names = Vec::new();
                loop {
                    let d = self.declarator(false)?;
                    self.types.insert(d.name.clone());
                    names.push(d);
                    if !self.eat(",") {
                        break;
                    }
                }
                self.expect(";")?;
                return Ok(Some(Item::Typedef(ty, names)));
            }
            "cbuffer" | "tbuffer" if t.kind == TokenKind::Ident => {
                self.pos += 1;
                let (name, loc) = self.ident("the buffer's name")?;
                let binding = self.binding()?;
                self.expect("{")?;
                let mut vars = Vec::new();
                while !self.check("}") && !self.at_end() {
                    let ty = self.ty()?;
                    vars.push(self.var_rest(ty)?);
                }
                self.expect("}")?;
                self.eat(";");
                return Ok(Some(Item::Buffer {
                    name,
                    binding,
                    vars,
                    loc,
                }));
            }
            _ => {}
        }
        if !self.starts_decl() {
            return Err(self.error_here("a declaration"));
        }
        let ty = self.ty()?;
        if let TypeName::Struct(def) = &ty.name {
            if self.eat(";") {
                return Ok(Some(Item::Struct((**def).clone())));
            }
        }
        // A function: a name and `(`.
        if self.peek().is_some_and(|t| t.kind == TokenKind::Ident)
            && self.peek_at(1).is_some_and(|t| t.is("("))
        {
            return Ok(Some(Item::Function(self.function(attributes, ty)?)));
        }
        Ok(Some(Item::Var(self.var_rest(ty)?)))
    }

    fn function(&mut self, attributes: Vec<Attribute>, ret: Type) -> PResult<Function> {
        let (name, loc) = self.ident("a function's name")?;
        self.expect("(")?;
        let mut params = Vec::new();
        if self.check("void") && self.peek_at(1).is_some_and(|t| t.is(")")) {
            self.pos += 1;
        }
        if !self.check(")") {
            loop {
                let ty = self.ty()?;
                let declarator = self.declarator(true)?;
                params.push(Param { ty, declarator });
                if !self.eat(",") {
                    break;
                }
            }
        }
        self.expect(")")?;
        let binding = self.binding()?;
        let body = if self.eat(";") {
            None
        } else {
            Some(self.block()?)
        };
        Ok(Function {
            attributes,
            ret,
            name,
            loc,
            params,
            binding,
            body,
        })
    }

    /// The declarators after a declaration's type, and its `;`.
    fn var_rest(&mut self, ty: Type) -> PResult<VarDecl> {
        let mut declarators = Vec::new();
        loop {
            declarators.push(self.declarator(true)?);
            if !self.eat(",") {
                break;
            }
        }
        self.expect(";")?;
        Ok(VarDecl { ty, declarators })
    }

    fn declarator(&mut self, with_init: bool) -> PResult<Declarator> {
        let (name, loc) = self.ident("a name")?;
        let mut array = Vec::new();
        while self.eat("[") {
            if self.eat("]") {
                array.push(None);
            } else {
                array.push(Some(self.expr()?));
                self.expect("]")?;
            }
        }
        let binding = self.binding()?;
        let annotations = self.annotations()?;
        let init = if with_init && self.eat("=") {
            Some(self.init()?)
        } else if with_init && self.check("{") {
            // `sampler s { … };`, D3DX's shorter sampler-state form.
            Some(self.state_block(loc)?)
        } else {
            None
        };
        Ok(Declarator {
            name,
            loc,
            array,
            binding,
            annotations,
            init,
        })
    }

    fn binding(&mut self) -> PResult<Binding> {
        let mut b = Binding::default();
        while self.eat(":") {
            let Some(t) = self.peek() else {
                return Err(self.error_here("a semantic or register()"));
            };
            if t.kind != TokenKind::Ident {
                return Err(self.error_here("a semantic or register()"));
            }
            self.pos += 1;
            match t.text.as_str() {
                "register" => {
                    self.expect("(")?;
                    let (first, first_loc) = self.ident("a register such as c0")?;
                    let (profile, reg, reg_loc) = if self.eat(",") {
                        let (r, l) = self.ident("a register such as c0")?;
                        (Some(first), r, l)
                    } else {
                        (None, first, first_loc)
                    };
                    // As Microsoft reads it: the letter, then the digits that follow it
                    // (none is 0); letters after the digits and a `[…]` after the name
                    // are ignored.
                    let class = reg.chars().next().unwrap_or('?').to_ascii_lowercase();
                    let digits: String = reg[class.len_utf8()..]
                        .chars()
                        .take_while(char::is_ascii_digit)
                        .collect();
                    let index = if digits.is_empty() {
                        0
                    } else {
                        digits.parse::<u32>().map_err(|_| {
                            self.diags
                                .error(reg_loc, format!("'{reg}': register number out of range"));
                            Failed
                        })?
                    };
                    let subscript = if self.eat("[") {
                        let e = self.expr()?;
                        self.expect("]")?;
                        Some(Box::new(e))
                    } else {
                        None
                    };
                    self.expect(")")?;
                    b.registers.push(Register {
                        profile,
                        class,
                        index,
                        subscript,
                        loc: reg_loc,
                    });
                }
                "packoffset" => {
                    self.expect("(")?;
                    let loc = self.loc();
                    let mut text = String::new();
                    while let Some(t) = self.peek() {
                        if t.is(")") {
                            break;
                        }
                        text.push_str(&t.text);
                        self.pos += 1;
                    }
                    self.expect(")")?;
                    b.packoffset = Some((text, loc));
                }
                _ => b.semantic = Some((t.text.clone(), t.loc)),
            }
        }
        Ok(b)
    }

    fn annotations(&mut self) -> PResult<Vec<Annotation>> {
        let mut out = Vec::new();
        if !self.check("<") {
            return Ok(out);
        }
        self.pos += 1;
        while !self.check(">") && !self.at_end() {
            let ty = self.ty()?;
            let (name, _) = self.ident("an annotation's name")?;
            let value = if self.eat("=") {
                Some(if self.check("{") {
                    self.brace_list()?
                } else {
                    self.ternary()?
                })
            } else {
                None
            };
            self.expect(";")?;
            out.push(Annotation { ty, name, value });
        }
        self.expect(">")?;
        Ok(out)
    }

    fn brace_list(&mut self) -> PResult<Expr> {
        let loc = self.loc();
        self.expect("{")?;
        let mut items = Vec::new();
        while !self.check("}") {
            items.push(if self.check("{") {
                self.brace_list()?
            } else {
                self.assignment()?
            });
            if !self.eat(",") {
                break;
            }
        }
        self.expect("}")?;
        Ok(Expr {
            kind: ExprKind::List(items),
            loc,
        })
    }

    fn init(&mut self) -> PResult<Init> {
        let loc = self.loc();
        if self.check("sampler_state") || self.check("SamplerState") {
            self.pos += 1;
            return self.state_block(loc);
        }
        if self.eat("{") {
            self.deeper()?;
            let mut items = Vec::new();
            while !self.check("}") {
                items.push(self.init()?);
                if !self.eat(",") {
                    break;
                }
            }
            self.expect("}")?;
            self.depth -= 1;
            return Ok(Init::List(items, loc));
        }
        Ok(Init::Expr(self.assignment()?))
    }

    fn state_block(&mut self, loc: Loc) -> PResult<Init> {
        self.expect("{")?;
        if self.check("{") {
            // An array of state blocks: `sampler s[2] { { … }, { … } };`
            self.deeper()?;
            let mut blocks = Vec::new();
            while self.check("{") {
                let bloc = self.loc();
                blocks.push(self.state_block(bloc)?);
                if !self.eat(",") {
                    break;
                }
            }
            self.expect("}")?;
            self.depth -= 1;
            return Ok(Init::List(blocks, loc));
        }
        let states = self.states()?;
        self.expect("}")?;
        Ok(Init::SamplerState(states, loc))
    }

    /// `Name[index] = value;` … up to the closing `}` (not consumed).
    fn states(&mut self) -> PResult<Vec<StateAssignment>> {
        let mut out = Vec::new();
        while !self.check("}") && !self.at_end() {
            let (name, loc) = self.ident("a state's name")?;
            if self.check("(") {
                // SM4's function form, `SetPixelShader(…);`: kept as a call.
                const CALLS: [&str; 9] = [
                    "SetBlendState",
                    "SetDepthStencilState",
                    "SetRasterizerState",
                    "SetVertexShader",
                    "SetDomainShader",
                    "SetHullShader",
                    "SetGeometryShader",
                    "SetPixelShader",
                    "SetComputeShader",
                ];
                if !CALLS.contains(&name.as_str()) {
                    self.diags
                        .error(loc, format!("unrecognized FX function call ({name})"));
                }
                let args = self.args()?;
                self.expect(";")?;
                out.push(StateAssignment {
                    name: name.clone(),
                    index: None,
                    value: Expr {
                        kind: ExprKind::Call(name, args),
                        loc,
                    },
                    loc,
                });
                continue;
            }
            let index = if self.eat("[") {
                let i = match self.peek() {
                    Some(t) if t.kind == TokenKind::Int => {
                        self.pos += 1;
                        t.text.parse::<u32>().ok()
                    }
                    _ => None,
                };
                self.expect("]")?;
                i
            } else {
                None
            };
            self.expect("=")?;
            let value = self.state_value()?;
            self.expect(";")?;
            out.push(StateAssignment {
                name,
                index,
                value,
                loc,
            });
        }
        Ok(out)
    }

    fn state_value(&mut self) -> PResult<Expr> {
        let loc = self.loc();
        if self.eat("<") {
            // `Texture = <tex>;`
            let (name, nloc) = self.ident("a texture's name")?;
            self.expect(">")?;
            return Ok(Expr {
                kind: ExprKind::List(vec![Expr {
                    kind: ExprKind::Ident(name),
                    loc: nloc,
                }]),
                loc,
            });
        }
        if self.check("compile") {
            self.pos += 1;
            let (profile, _) = self.ident("a profile such as ps_3_0")?;
            let call = self.postfix()?;
            return Ok(Expr {
                kind: ExprKind::Compile(profile, Box::new(call)),
                loc,
            });
        }
        if self.check("asm") {
            self.pos += 1;
            return self.asm_block(loc);
        }
        if self.check("{") {
            return self.brace_list();
        }
        self.assignment()
    }

    /// `asm { … }`: its tokens joined back into text, one line per source line.
    fn asm_block(&mut self, loc: Loc) -> PResult<Expr> {
        self.expect("{")?;
        let mut text = String::new();
        let mut line = 0;
        while let Some(t) = self.peek() {
            if t.is("}") {
                break;
            }
            if t.loc.line != line && !text.is_empty() {
                text.push('\n');
            } else if !text.is_empty() {
                text.push(' ');
            }
            line = t.loc.line;
            text.push_str(&t.text);
            self.pos += 1;
        }
        self.expect("}")?;
        Ok(Expr {
            kind: ExprKind::Asm(text),
            loc,
        })
    }

    /// The `{ … }` of an `asm` statement: its tokens joined back into text, a line for
    /// each source line, with where each line starts.
    fn asm_lines(&mut self) -> PResult<Vec<(Loc, String)>> {
        self.expect("{")?;
        let mut lines: Vec<(Loc, String)> = Vec::new();
        while let Some(t) = self.peek() {
            if t.is("}") {
                break;
            }
            match lines.last_mut() {
                Some((at, text)) if at.line == t.loc.line && at.file == t.loc.file => {
                    text.push(' ');
                    text.push_str(&t.text);
                }
                _ => lines.push((t.loc, t.text.clone())),
            }
            self.pos += 1;
        }
        self.expect("}")?;
        Ok(lines)
    }

    fn technique(&mut self) -> PResult<Technique> {
        let loc = self.loc();
        self.pos += 1;
        let name = match self.peek() {
            Some(t) if t.kind == TokenKind::Ident => {
                self.pos += 1;
                Some(t.text.clone())
            }
            _ => None,
        };
        let annotations = self.annotations()?;
        self.expect("{")?;
        let mut passes = Vec::new();
        while !self.check("}") && !self.at_end() {
            let ploc = self.loc();
            self.expect("pass")?;
            let name = match self.peek() {
                Some(t) if t.kind == TokenKind::Ident => {
                    self.pos += 1;
                    Some(t.text.clone())
                }
                _ => None,
            };
            let annotations = self.annotations()?;
            self.expect("{")?;
            let states = self.states()?;
            self.expect("}")?;
            passes.push(Pass {
                name,
                annotations,
                states,
                loc: ploc,
            });
        }
        self.expect("}")?;
        self.eat(";");
        Ok(Technique {
            name,
            annotations,
            passes,
            loc,
        })
    }

    // ---- statements --------------------------------------------------------------

    fn block(&mut self) -> PResult<Block> {
        let loc = self.loc();
        self.expect("{")?;
        self.deeper()?;
        let mut stmts = Vec::new();
        while !self.check("}") && !self.at_end() {
            let before = self.pos;
            match self.stmt() {
                Ok(s) => stmts.push(s),
                Err(Failed) => {
                    self.recover_stmt();
                    if self.pos == before {
                        self.pos += 1;
                    }
                }
            }
        }
        self.depth -= 1;
        self.expect("}")?;
        Ok(Block { stmts, loc })
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        let loc = self.loc();
        let attributes = self.attributes()?;
        self.deeper()?;
        let kind = self.stmt_kind()?;
        self.depth -= 1;
        Ok(Stmt {
            attributes,
            kind,
            loc,
        })
    }

    fn stmt_kind(&mut self) -> PResult<StmtKind> {
        let Some(t) = self.peek() else {
            return Err(self.error_here("a statement"));
        };
        if t.kind == TokenKind::Pragma {
            self.pos += 1;
            return Ok(StmtKind::Empty);
        }
        if t.kind == TokenKind::Ident {
            match t.text.as_str() {
                "if" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let cond = self.expr()?;
                    self.expect(")")?;
                    let then = Box::new(self.stmt()?);
                    let other = if self.eat("else") {
                        Some(Box::new(self.stmt()?))
                    } else {
                        None
                    };
                    return Ok(StmtKind::If(cond, then, other));
                }
                "for" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let init = if self.eat(";") {
                        None
                    } else {
                        let iloc = self.loc();
                        let kind = if self.starts_decl() {
                            let ty = self.ty()?;
                            StmtKind::Var(self.var_rest(ty)?)
                        } else {
                            let e = self.expr()?;
                            self.expect(";")?;
                            StmtKind::Expr(e)
                        };
                        Some(Box::new(Stmt {
                            attributes: Vec::new(),
                            kind,
                            loc: iloc,
                        }))
                    };
                    let cond = if self.check(";") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect(";")?;
                    let step = if self.check(")") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect(")")?;
                    let body = Box::new(self.stmt()?);
                    return Ok(StmtKind::For(init, cond, step, body));
                }
                "while" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let cond = self.expr()?;
                    self.expect(")")?;
                    return Ok(StmtKind::While(cond, Box::new(self.stmt()?)));
                }
                "do" => {
                    self.pos += 1;
                    let body = Box::new(self.stmt()?);
                    self.expect("while")?;
                    self.expect("(")?;
                    let cond = self.expr()?;
                    self.expect(")")?;
                    self.expect(";")?;
                    return Ok(StmtKind::Do(body, cond));
                }
                "switch" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let value = self.expr()?;
                    self.expect(")")?;
                    self.expect("{")?;
                    let mut cases: Vec<(Vec<Option<Expr>>, Vec<Stmt>)> = Vec::new();
                    while !self.check("}") && !self.at_end() {
                        let mut labels = Vec::new();
                        loop {
                            if self.eat("case") {
                                labels.push(Some(self.ternary()?));
                                self.expect(":")?;
                            } else if self.eat("default") {
                                labels.push(None);
                                self.expect(":")?;
                            } else {
                                break;
                            }
                        }
                        if labels.is_empty() {
                            return Err(self.error_here("'case' or 'default'"));
                        }
                        let mut body = Vec::new();
                        while !self.check("case")
                            && !self.check("default")
                            && !self.check("}")
                            && !self.at_end()
                        {
                            body.push(self.stmt()?);
                        }
                        cases.push((labels, body));
                    }
                    self.expect("}")?;
                    return Ok(StmtKind::Switch(value, cases));
                }
                "asm" => {
                    self.pos += 1;
                    let lines = self.asm_lines()?;
                    self.eat(";");
                    return Ok(StmtKind::Asm(lines));
                }
                "break" | "continue" | "discard" => {
                    self.pos += 1;
                    self.expect(";")?;
                    return Ok(match t.text.as_str() {
                        "break" => StmtKind::Break,
                        "continue" => StmtKind::Continue,
                        _ => StmtKind::Discard,
                    });
                }
                "return" => {
                    self.pos += 1;
                    if self.eat(";") {
                        return Ok(StmtKind::Return(None));
                    }
                    let e = self.expr()?;
                    self.expect(";")?;
                    return Ok(StmtKind::Return(Some(e)));
                }
                "typedef" => {
                    self.pos += 1;
                    let ty = self.ty()?;
                    let mut names = Vec::new();
                    loop {
                        let d = self.declarator(false)?;
                        self.types.insert(d.name.clone());
                        names.push(d);
                        if !self.eat(",") {
                            break;
                        }
                    }
                    self.expect(";")?;
                    return Ok(StmtKind::Typedef(ty, names));
                }
                _ => {}
            }
        }
        if self.check("{") {
            return Ok(StmtKind::Block(self.block()?));
        }
        if self.eat(";") {
            return Ok(StmtKind::Empty);
        }
        // A declaration, unless a type name starts a constructor call (`float4(…).x;`)
        // or names a variable that shadows it (`s.x = 1;` where `float4 s;` hides
        // `struct s`).
        if self.declaration_ahead() {
            let ty = self.ty()?;
            if let TypeName::Struct(def) = &ty.name {
                if self.eat(";") {
                    return Ok(StmtKind::Struct((**def).clone()));
                }
            }
            return Ok(StmtKind::Var(self.var_rest(ty)?));
        }
        let e = self.expr()?;
        self.expect(";")?;
        Ok(StmtKind::Expr(e))
    }

    // ---- expressions -------------------------------------------------------------

    fn expr(&mut self) -> PResult<Expr> {
        let mut e = self.assignment()?;
        while self.check(",") {
            let loc = self.loc();
            self.pos += 1;
            let r = self.assignment()?;
            e = Expr {
                kind: ExprKind::Comma(Box::new(e), Box::new(r)),
                loc,
            };
        }
        Ok(e)
    }

    fn assignment(&mut self) -> PResult<Expr> {
        self.deeper()?;
        let lhs = self.ternary()?;
        let op = match self.peek() {
            Some(t) if t.kind == TokenKind::Punct => match t.text.as_str() {
                "=" => Some(None),
                "+=" => Some(Some(BinOp::Add)),
                "-=" => Some(Some(BinOp::Sub)),
                "*=" => Some(Some(BinOp::Mul)),
                "/=" => Some(Some(BinOp::Div)),
                "%=" => Some(Some(BinOp::Mod)),
                "<<=" => Some(Some(BinOp::Shl)),
                ">>=" => Some(Some(BinOp::Shr)),
                "&=" => Some(Some(BinOp::BitAnd)),
                "|=" => Some(Some(BinOp::BitOr)),
                "^=" => Some(Some(BinOp::BitXor)),
                _ => None,
            },
            _ => None,
        };
        let result = match op {
            Some(op) => {
                let loc = self.loc();
                self.pos += 1;
                let rhs = self.assignment()?;
                Expr {
                    kind: ExprKind::Assign(op, Box::new(lhs), Box::new(rhs)),
                    loc,
                }
            }
            None => lhs,
        };
        self.depth -= 1;
        Ok(result)
    }

    fn ternary(&mut self) -> PResult<Expr> {
        let cond = self.binary(0)?;
        if !self.check("?") {
            return Ok(cond);
        }
        let loc = self.loc();
        self.pos += 1;
        let a = self.assignment()?;
        self.expect(":")?;
        let b = self.assignment()?;
        Ok(Expr {
            kind: ExprKind::Ternary(Box::new(cond), Box::new(a), Box::new(b)),
            loc,
        })
    }

    fn binop(&self) -> Option<(BinOp, u8)> {
        let t = self.peek()?;
        if t.kind != TokenKind::Punct {
            return None;
        }
        use BinOp::*;
        Some(match t.text.as_str() {
            "||" => (Or, 0),
            "&&" => (And, 1),
            "|" => (BitOr, 2),
            "^" => (BitXor, 3),
            "&" => (BitAnd, 4),
            "==" => (Eq, 5),
            "!=" => (Ne, 5),
            "<" => (Lt, 6),
            ">" => (Gt, 6),
            "<=" => (Le, 6),
            ">=" => (Ge, 6),
            "<<" => (Shl, 7),
            ">>" => (Shr, 7),
            "+" => (Add, 8),
            "-" => (Sub, 8),
            "*" => (Mul, 9),
            "/" => (Div, 9),
            "%" => (Mod, 9),
            _ => return None,
        })
    }

    /// Binary operators by precedence climbing, all left-associative.
    fn binary(&mut self, min: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        while let Some((op, prec)) = self.binop() {
            if prec < min {
                break;
            }
            let loc = self.loc();
            self.pos += 1;
            self.deeper()?;
            let rhs = self.binary(prec + 1)?;
            self.depth -= 1;
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                loc,
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Expr> {
        let loc = self.loc();
        let op = match self.peek() {
            Some(t) if t.kind == TokenKind::Punct => match t.text.as_str() {
                "-" => Some(UnOp::Neg),
                "+" => Some(UnOp::Plus),
                "!" => Some(UnOp::Not),
                "~" => Some(UnOp::BitNot),
                "++" => Some(UnOp::PreInc),
                "--" => Some(UnOp::PreDec),
                _ => None,
            },
            _ => None,
        };
        if let Some(op) = op {
            self.pos += 1;
            self.deeper()?;
            let e = self.unary()?;
            self.depth -= 1;
            return Ok(Expr {
                kind: ExprKind::Unary(op, Box::new(e)),
                loc,
            });
        }
        // A cast: `(type) unary`, where the parenthesis holds only a type.
        if self.check("(") && self.cast_follows() {
            self.pos += 1;
            let mut ty = self.ty()?;
            let mut dims = Vec::new();
            while self.eat("[") {
                dims.push(self.expr()?);
                self.expect("]")?;
            }
            if !dims.is_empty() {
                // `(float[2])x` is not HLSL's; name it.
                self.diags
                    .error(loc, "a cast to an array type is not allowed");
            }
            self.expect(")")?;
            ty.loc = loc;
            self.deeper()?;
            let e = self.unary()?;
            self.depth -= 1;
            return Ok(Expr {
                kind: ExprKind::Cast(ty, Box::new(e)),
                loc,
            });
        }
        self.postfix()
    }

    fn cast_follows(&self) -> bool {
        let mut n = 1;
        while self.peek_at(n).is_some_and(Self::is_modifier) {
            n += 1;
        }
        if !self.starts_type_at(n) {
            return false;
        }
        // `(float4)` or `(vector<float, 4>)`: find the `)` of the parenthesis.
        let mut depth = 0;
        let mut i = n;
        while let Some(t) = self.peek_at(i) {
            match t.text.as_str() {
                "<" | "[" => depth += 1,
                ">" | "]" => depth -= 1,
                ")" if depth == 0 => return true,
                "(" | ";" | "{" => return false,
                _ => {}
            }
            i += 1;
        }
        false
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        loop {
            let loc = self.loc();
            if self.eat(".") {
                let (name, _) = self.ident("a member or swizzle")?;
                if self.check("(") {
                    let args = self.args()?;
                    e = Expr {
                        kind: ExprKind::Method(Box::new(e), name, args),
                        loc,
                    };
                } else {
                    e = Expr {
                        kind: ExprKind::Member(Box::new(e), name),
                        loc,
                    };
                }
            } else if self.eat("[") {
                let i = self.expr()?;
                self.expect("]")?;
                e = Expr {
                    kind: ExprKind::Index(Box::new(e), Box::new(i)),
                    loc,
                };
            } else if self.check("++") || self.check("--") {
                let op = if self.check("++") {
                    UnOp::PostInc
                } else {
                    UnOp::PostDec
                };
                self.pos += 1;
                e = Expr {
                    kind: ExprKind::Unary(op, Box::new(e)),
                    loc,
                };
            } else {
                return Ok(e);
            }
        }
    }

    fn args(&mut self) -> PResult<Vec<Expr>> {
        self.expect("(")?;
        let mut args = Vec::new();
        if !self.check(")") {
            loop {
                args.push(self.assignment()?);
                if !self.eat(",") {
                    break;
                }
            }
        }
        self.expect(")")?;
        Ok(args)
    }

    fn primary(&mut self) -> PResult<Expr> {
        let loc = self.loc();
        let Some(t) = self.peek() else {
            return Err(self.error_here("an expression"));
        };
        let kind = match t.kind {
            TokenKind::Int => {
                self.pos += 1;
                match int_literal(&t.text) {
                    Ok(IntLiteral::Value(value, unsigned)) => ExprKind::Int(value, unsigned),
                    // `compile` takes them out first; a parse without that refuses them.
                    Ok(IntLiteral::LeftOut) => {
                        self.diags.error(
                            loc,
                            format!("integer literal {} does not fit in 32 bits", t.text),
                        );
                        return Err(Failed);
                    }
                    Err(message) => {
                        self.diags.error(loc, message);
                        return Err(Failed);
                    }
                }
            }
            TokenKind::Float => {
                self.pos += 1;
                let (value, suffix) = float_value(&t.text).ok_or_else(|| {
                    self.diags
                        .error(loc, format!("'{}' is not a valid number", t.text));
                    Failed
                })?;
                ExprKind::Float(value, suffix)
            }
            TokenKind::Str => {
                // Adjacent strings are one, as in C.
                let mut text = String::new();
                while let Some(t) = self.peek().filter(|t| t.kind == TokenKind::Str) {
                    self.pos += 1;
                    text.push_str(t.text.trim_matches('"'));
                }
                ExprKind::Str(text)
            }
            TokenKind::Punct if t.text == "(" => {
                self.pos += 1;
                let e = self.expr()?;
                self.expect(")")?;
                return Ok(e);
            }
            TokenKind::Punct if t.text == "{" => return self.brace_list(),
            TokenKind::Ident if t.text == "true" || t.text == "false" => {
                self.pos += 1;
                ExprKind::Bool(t.text == "true")
            }
            TokenKind::Ident
                if self.starts_type_at(0)
                    && t.text != "struct"
                    && self.peek_at(1).is_some_and(|n| n.is("(") || n.is("<")) =>
            {
                let ty = self.ty()?;
                if !self.check("(") {
                    return Err(self.error_here("'(' after a type used as a constructor"));
                }
                let args = self.args()?;
                ExprKind::Construct(ty, args)
            }
            TokenKind::Ident if t.text == "compile" => {
                self.pos += 1;
                let (profile, _) = self.ident("a profile such as ps_3_0")?;
                let call = self.postfix()?;
                ExprKind::Compile(profile, Box::new(call))
            }
            // `CompileShader(ps_2_0, f())`, the function spelling of `compile ps_2_0 f()`;
            // a keyword to fxc, so its first argument is a target, not a name to look up.
            TokenKind::Ident
                if t.text == "CompileShader" && self.peek_at(1).is_some_and(|n| n.is("(")) =>
            {
                self.pos += 2;
                let (profile, _) = self.ident("a compiler target such as ps_2_0")?;
                self.expect(",")?;
                let call = self.postfix()?;
                self.expect(")")?;
                ExprKind::Compile(profile, Box::new(call))
            }
            TokenKind::Ident => {
                self.pos += 1;
                if self.check("(") {
                    let args = self.args()?;
                    ExprKind::Call(t.text.clone(), args)
                } else {
                    ExprKind::Ident(t.text.clone())
                }
            }
            _ => return Err(self.error_here("an expression")),
        };
        Ok(Expr { kind, loc })
    }
}

fn merge(into: &mut Modifiers, m: Modifiers) {
    into.static_ |= m.static_;
    into.const_ |= m.const_;
    into.uniform |= m.uniform;
    into.extern_ |= m.extern_;
    into.shared |= m.shared;
    into.volatile |= m.volatile;
    into.row_major |= m.row_major;
    into.column_major |= m.column_major;
    into.in_ |= m.in_;
    into.out |= m.out;
    into.inline |= m.inline;
    into.precise |= m.precise;
    into.centroid |= m.centroid;
    into.nointerpolation |= m.nointerpolation;
}

/// An integer literal as d3dcompiler_43 reads it (C's bases: `0x` hex, a leading `0`
/// octal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntLiteral {
    /// Its low 32 bits and whether it is unsigned: a `u` suffix makes it so, and so does a
    /// hex or octal value past `int`'s range (`0xFFFFFFFF`, as in C). A suffixed literal
    /// keeps only its low 32 bits (`4294967296u` is 0; `3000000000l` is a negative int).
    Value(u32, bool),
    /// Wider than its type without a suffix (`3000000000`, `0x100000000`): fxc's lexer
    /// leaves such a literal out (see [`leave_out_wide_ints`]).
    LeftOut,
}

/// A literal's [`IntLiteral`], or what is wrong with its text.
pub fn int_literal(text: &str) -> Result<IntLiteral, String> {
    let digits = text.trim_end_matches(['u', 'U', 'l', 'L']);
    let suffix = &text[digits.len()..];
    let (value, decimal) = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        (u64::from_str_radix(hex, 16), false)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (u64::from_str_radix(&digits[1..], 8), false)
    } else {
        (digits.parse(), true)
    };
    let value = value.map_err(|e| match e.kind() {
        std::num::IntErrorKind::PosOverflow => {
            format!("integer literal {text} does not fit in 64 bits")
        }
        _ => format!("'{text}' is not a valid integer"),
    })?;
    let bits = value as u32;
    Ok(if suffix.contains(['u', 'U']) {
        IntLiteral::Value(bits, true)
    } else if !suffix.is_empty() || value <= i32::MAX as u64 {
        IntLiteral::Value(bits, false)
    } else if !decimal && value <= u64::from(u32::MAX) {
        IntLiteral::Value(bits, true)
    } else {
        IntLiteral::LeftOut
    })
}

/// Takes out the integer literals fxc's lexer leaves out ([`IntLiteral::LeftOut`]), with a
/// warning at each, and returns the warnings' places in `diags`. d3dcompiler_43 reads the
/// source as if such a literal were not there: `{3000000000, 1}` is a syntax error at the
/// comma, `return 3000000000;` returns nothing, and `3000000000 + 1` is `+1`, compiled
/// without a word. Ours reads it the same, so it accepts and refuses what fxc does, and
/// says why: when the compilation fails, [`super::compile::compile_with`] makes these
/// warnings errors, because what fails after a literal left out is the literal's doing.
pub fn leave_out_wide_ints(tokens: &mut Vec<Token>, diags: &mut Diagnostics) -> Vec<usize> {
    let mut at = Vec::new();
    tokens.retain(|t| {
        if t.kind != TokenKind::Int || int_literal(&t.text) != Ok(IntLiteral::LeftOut) {
            return true;
        }
        let t32 = t.text.parse::<u64>().ok().filter(|&v| v <= u64::from(u32::MAX));
        let (what, fix) = if t.text.starts_with('0') {
            ("does not fit in 32 bits (0xFFFFFFFF at most)", String::new())
        } else if t32.is_some() {
            (
                "does not fit in a 32-bit int (2147483647 at most) without a u suffix",
                format!(": write {0}u for an unsigned int, or {0}.0 for a float", t.text),
            )
        } else {
            ("does not fit in 32 bits", format!(": write {}.0 for a float", t.text))
        };
        at.push(diags.list.len());
        diags.warning(
            t.loc,
            format!(
                "integer literal {} {what}, and Microsoft's compiler reads the source as if it were not there, so this one does too{fix}",
                t.text
            ),
        );
        false
    });
    at
}

/// A float literal's value and its suffix letter, lower-cased.
pub fn float_value(text: &str) -> Option<(f64, Option<char>)> {
    let last = text.chars().last()?;
    let (digits, suffix) = if matches!(last, 'f' | 'F' | 'h' | 'H' | 'l' | 'L') {
        (&text[..text.len() - 1], Some(last.to_ascii_lowercase()))
    } else {
        (text, None)
    };
    let digits = digits.strip_suffix('.').unwrap_or(digits);
    Some((digits.parse().ok()?, suffix))
}

#[cfg(test)]
mod tests {
    use super::super::lex::lex;
    use super::super::token::FileId;
    use super::*;

    fn program(src: &str) -> (Program, Diagnostics) {
        let mut d = Diagnostics::default();
        let toks: Vec<Token> = lex(src, FileId(0), &mut d)
            .into_iter()
            .map(|l| l.token)
            .collect();
        let p = super::super::with_stack(|| parse(&toks, &mut d));
        (p, d)
    }

    fn ok(src: &str) -> Program {
        let (p, d) = program(src);
        assert!(!d.has_errors(), "{src}: {:?}", d.list);
        p
    }

    fn body_expr(p: &Program) -> &Expr {
        let Item::Function(f) = &p.items[0] else {
            panic!("not a function")
        };
        match &f.body.as_ref().unwrap().stmts[0].kind {
            StmtKind::Return(Some(e)) => e,
            other => panic!("{other:?}"),
        }
    }

    /// The expression back as text with every operation parenthesised.
    fn show(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Int(v, _) => v.to_string(),
            ExprKind::Float(v, _) => format!("{v}"),
            ExprKind::Ident(n) => n.clone(),
            ExprKind::Binary(op, a, b) => format!("({} {} {})", show(a), op.symbol(), show(b)),
            ExprKind::Unary(op, a) => format!("({op:?} {})", show(a)),
            ExprKind::Ternary(c, a, b) => format!("({} ? {} : {})", show(c), show(a), show(b)),
            ExprKind::Cast(t, a) => format!("(({:?}) {})", t.name, show(a)),
            ExprKind::Member(a, m) => format!("{}.{m}", show(a)),
            ExprKind::Index(a, i) => format!("{}[{}]", show(a), show(i)),
            ExprKind::Call(f, args) => {
                format!(
                    "{f}({})",
                    args.iter().map(show).collect::<Vec<_>>().join(", ")
                )
            }
            ExprKind::Construct(t, args) => format!(
                "{:?}({})",
                t.name,
                args.iter().map(show).collect::<Vec<_>>().join(", ")
            ),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn precedence_is_cs() {
        let p = ok("float4 main() : COLOR { return a + b * c < d && e | f ^ g & h == i ? -j.x : (float)k[2] % 3; }");
        assert_eq!(
            show(body_expr(&p)),
            "((((a + (b * c)) < d) && (e | (f ^ (g & (h == i))))) ? (Neg j.x) : ((Scalar(Float)) k[2]) % 3)"
                .replace(" : ((Scalar(Float)) k[2]) % 3)", " : (((Scalar(Float)) k[2]) % 3))")
        );
    }

    #[test]
    fn types_constructors_and_casts() {
        let p = ok("float4 main() : SV_Target { return float4(1, 2.5, 3.h, (float2)0x10).xxyy + mul(m, (float4x3)n); }");
        assert_eq!(
            show(body_expr(&p)),
            "(Vector(Float, 4)(1, 2.5, 3, ((Vector(Float, 2)) 16)).xxyy + mul(m, ((Matrix(Float, 4, 3)) n)))"
        );
    }

    #[test]
    fn declarations_of_a_real_shader() {
        let p = ok(r#"
            #pragma pack_matrix(row_major)
            struct VS_OUT { float4 pos : POSITION; float2 uv[2] : TEXCOORD0; };
            typedef float3 colour;
            row_major float4x4 wvp : register(c0);
            static const colour tint = {1, 0.5, 0.25};
            uniform sampler2D diffuse : register(s0) = sampler_state { MinFilter = LINEAR; Texture = <tex>; };
            texture tex < string name = "a.dds"; >;
            matrix<float, 4, 3> bones[20];
            VS_OUT main(in float4 p : POSITION, inout colour c : COLOR0, uniform float k) {
                VS_OUT o = (VS_OUT)0;
                [unroll(4)] for (int i = 0; i < 4; ++i) { o.pos += p * k; if (i == 2) break; }
                o.uv[1] = c.xy;
                return o;
            }
            technique T { pass P0 { VertexShader = compile vs_3_0 main(2.0); ZEnable = true; } }
        "#.replace("#pragma pack_matrix(row_major)\n", "").as_str());
        let kinds: Vec<&str> = p
            .items
            .iter()
            .map(|i| match i {
                Item::Struct(_) => "struct",
                Item::Typedef(..) => "typedef",
                Item::Var(_) => "var",
                Item::Function(_) => "function",
                Item::Technique(_) => "technique",
                _ => "other",
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "struct",
                "typedef",
                "var",
                "var",
                "var",
                "var",
                "var",
                "function",
                "technique"
            ]
        );
        let Item::Var(wvp) = &p.items[2] else {
            panic!()
        };
        assert!(wvp.ty.modifiers.row_major);
        assert_eq!(wvp.declarators[0].binding.registers[0].class, 'c');
        let Item::Var(s) = &p.items[4] else { panic!() };
        assert!(
            matches!(s.declarators[0].init, Some(Init::SamplerState(ref v, _)) if v.len() == 2)
        );
        let Item::Var(b) = &p.items[6] else { panic!() };
        assert_eq!(b.ty.name, TypeName::Matrix(Scalar::Float, 4, 3));
        let Item::Function(f) = &p.items[7] else {
            panic!()
        };
        assert_eq!(f.params.len(), 3);
        assert!(f.params[1].ty.modifiers.in_ && f.params[1].ty.modifiers.out);
        let body = &f.body.as_ref().unwrap().stmts;
        assert_eq!(body[1].attributes[0].name, "unroll");
        assert!(matches!(
            body[1].kind,
            StmtKind::For(Some(_), Some(_), Some(_), _)
        ));
    }

    #[test]
    fn every_broken_statement_is_reported() {
        let (p, d) = program(
            "float4 main() : COLOR {\n  float a = ;\n  float b = 2\n  b = 3;\n  a = * 2;\n}\nfloat4 other() { return 1; }",
        );
        let places: Vec<_> = d.list.iter().map(|d| (d.loc.line, d.loc.col)).collect();
        assert_eq!(places, [(2, 13), (4, 3), (5, 7)], "{:?}", d.list);
        assert!(
            d.list[0].message.contains("unexpected ';'"),
            "{}",
            d.list[0].message
        );
        // The function after the broken one is still read.
        assert_eq!(p.items.len(), 2);
    }

    #[test]
    fn hostile_nesting_is_refused_not_overflowed() {
        let src = format!(
            "float f() {{ return {}1{}; }}",
            "(".repeat(100_000),
            ")".repeat(100_000)
        );
        let (_, d) = program(&src);
        assert!(d.list.iter().any(|d| d.message.contains("nests more than")));
        let src = format!("float f() {{ return {}1; }}", "-".repeat(100_000));
        let (_, d) = program(&src);
        assert!(d.has_errors());
    }

    #[test]
    fn literals() {
        assert_eq!(int_literal("0x1Fu"), Ok(IntLiteral::Value(31, true)));
        assert_eq!(int_literal("017"), Ok(IntLiteral::Value(15, false)));
        assert_eq!(int_literal("0"), Ok(IntLiteral::Value(0, false)));
        assert_eq!(float_value("2.h"), Some((2.0, Some('h'))));
        assert_eq!(float_value(".5"), Some((0.5, None)));
        assert_eq!(float_value("1e-3f"), Some((0.001, Some('f'))));
    }
}

#[cfg(test)]
mod corpus_tests {
    use super::super::lex::lex;
    use super::super::token::FileId;
    use super::*;

    /// Every corpus source Microsoft compiled for some profile, and has no preprocessor
    /// directive, parses without a syntax error.
    #[test]
    fn sources_microsoft_compiled_parse() {
        let Some(dir) = crate::test_corpus::corpus("hlsl") else {
            return;
        };
        let mut failures = Vec::new();
        let mut parsed = 0;
        for sub in ["vkd3d", "legacy", "versions"] {
            let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
                continue;
            };
            let mut names: Vec<_> = entries.flatten().map(|e| e.path()).collect();
            names.sort();
            for path in names {
                if path.extension().and_then(|e| e.to_str()) != Some("hlsl") {
                    continue;
                }
                let stem = path.file_stem().unwrap().to_string_lossy().to_string();
                let compiled = std::fs::read_dir(dir.join(sub))
                    .unwrap()
                    .flatten()
                    .any(|e| {
                        let n = e.file_name().to_string_lossy().to_string();
                        n.starts_with(&format!("{stem}.")) && n.ends_with(".bin")
                    });
                let text = std::fs::read_to_string(&path).unwrap();
                if !compiled || text.contains('#') {
                    continue;
                }
                let mut d = Diagnostics::default();
                let toks: Vec<Token> = lex(&text, FileId(0), &mut d)
                    .into_iter()
                    .map(|l| l.token)
                    .collect();
                super::super::with_stack(|| parse(&toks, &mut d));
                parsed += 1;
                if d.has_errors() {
                    failures.push(format!("{}: {:?}", path.display(), d.list[0]));
                }
            }
        }
        eprintln!("{parsed} sources parsed, {} failed", failures.len());
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
