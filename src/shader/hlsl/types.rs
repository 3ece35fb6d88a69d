//! Types as the checker knows them: every name resolved, every size known.

use std::fmt;
use std::rc::Rc;

pub use super::ast::{Dim, Scalar as Base};

#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    Void,
    Scalar(Base),
    Vector(Base, u8),
    /// Rows, columns.
    Matrix(Base, u8, u8),
    Array(Box<Ty>, u32),
    Struct(Rc<StructTy>),
    Sampler(Dim),
    Texture(Dim),
    String,
    /// An effect object (`PixelShader`, `BlendState`): declared, never computed with.
    Object,
}

#[derive(Debug, PartialEq)]
pub struct StructTy {
    pub name: String,
    /// Every field, the base's first (`struct B : A`).
    pub fields: Vec<Field>,
    /// The struct this one extends; its fields are the first of `fields`.
    pub base: Option<Rc<StructTy>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub ty: Ty,
    pub semantic: Option<String>,
    /// `row_major` written on the field.
    pub row_major: Option<bool>,
}

impl Ty {
    pub const FLOAT: Ty = Ty::Scalar(Base::Float);
    pub const BOOL: Ty = Ty::Scalar(Base::Bool);
    pub const INT: Ty = Ty::Scalar(Base::Int);

    /// How many scalar components a value of this type has, flattened.
    pub fn components(&self) -> usize {
        match self {
            Ty::Void | Ty::String | Ty::Object => 0,
            Ty::Scalar(_) | Ty::Sampler(_) | Ty::Texture(_) => 1,
            Ty::Vector(_, n) => usize::from(*n),
            Ty::Matrix(_, r, c) => usize::from(*r) * usize::from(*c),
            Ty::Array(t, n) => t.components() * *n as usize,
            Ty::Struct(s) => s.fields.iter().map(|f| f.ty.components()).sum(),
        }
    }

    /// The scalar type of a numeric type.
    pub fn base(&self) -> Option<Base> {
        match self {
            Ty::Scalar(b) | Ty::Vector(b, _) | Ty::Matrix(b, _, _) => Some(*b),
            _ => None,
        }
    }

    pub fn is_numeric(&self) -> bool {
        self.base().is_some()
    }

    /// Scalar, vector or matrix of `base` with this one's shape.
    pub fn with_base(&self, base: Base) -> Ty {
        match self {
            Ty::Scalar(_) => Ty::Scalar(base),
            Ty::Vector(_, n) => Ty::Vector(base, *n),
            Ty::Matrix(_, r, c) => Ty::Matrix(base, *r, *c),
            other => other.clone(),
        }
    }

    /// The numeric type of `n` components of `base`: a scalar for 1.
    pub fn vector(base: Base, n: usize) -> Ty {
        if n == 1 {
            Ty::Scalar(base)
        } else {
            Ty::Vector(base, n as u8)
        }
    }

    /// Rows and columns of a numeric type: a scalar is 1×1, a vector 1×n.
    pub fn dims(&self) -> Option<(u8, u8)> {
        match self {
            Ty::Scalar(_) => Some((1, 1)),
            Ty::Vector(_, n) => Some((1, *n)),
            Ty::Matrix(_, r, c) => Some((*r, *c)),
            _ => None,
        }
    }

    pub fn is_object(&self) -> bool {
        matches!(
            self,
            Ty::Sampler(_) | Ty::Texture(_) | Ty::String | Ty::Object
        )
    }
}

pub fn base_name(b: Base) -> &'static str {
    match b {
        Base::Bool => "bool",
        Base::Int => "int",
        Base::Uint => "uint",
        Base::Half => "half",
        Base::Float => "float",
        Base::Double => "double",
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Ty::Void => write!(f, "void"),
            Ty::Scalar(b) => write!(f, "{}", base_name(*b)),
            Ty::Vector(b, n) => write!(f, "{}{n}", base_name(*b)),
            Ty::Matrix(b, r, c) => write!(f, "{}{r}x{c}", base_name(*b)),
            Ty::Array(t, n) => write!(f, "{t}[{n}]"),
            Ty::Struct(s) => write!(f, "struct {}", s.name),
            Ty::Sampler(d) => write!(f, "{}", sampler_name(*d)),
            Ty::Texture(_) => write!(f, "texture"),
            Ty::String => write!(f, "string"),
            Ty::Object => write!(f, "object"),
        }
    }
}

pub fn sampler_name(d: Dim) -> &'static str {
    match d {
        Dim::Generic => "sampler",
        Dim::D1 => "sampler1D",
        Dim::D2 => "sampler2D",
        Dim::D3 => "sampler3D",
        Dim::Cube => "samplerCUBE",
    }
}
