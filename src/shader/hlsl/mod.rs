//! HLSL for Direct3D 9: the language modders write shaders in, compiled to the bytecode of
//! `shader::d3d9` as Microsoft's compilers write it.
//!
//! The pipeline, one module per stage:
//! - [`lex`] turns text into [`token::Token`]s with their place in the source;
//! - [`pp`] is the C preprocessor HLSL has (macros, `#if`, `#include`, `#pragma`);
//! - [`parse`] builds the syntax tree ([`ast`]);
//! - [`lower`] checks it and turns the entry point into a graph of operations ([`ir`]),
//!   functions inlined, control flow flattened;
//! - [`codegen`] gives the graph registers and writes asm and a constant table;
//! - [`compile`] runs them all and assembles the result.

pub mod asm_shader;
pub mod ast;
#[cfg(test)]
pub(crate) mod behaviour;
pub mod codegen;
pub mod compile;
#[cfg(test)]
mod corpus;
pub mod diag;
mod fuse;
#[cfg(test)]
mod heldout;
pub mod inline_asm;
mod intrinsics;
pub mod ir;
#[cfg(test)]
mod legacy;
pub(crate) mod legal;
pub mod lex;
pub mod lower;
pub mod parse;
mod peep;
pub mod pp;
#[cfg(test)]
pub(crate) mod property;
mod ps1;
pub mod token;
pub mod types;

/// Stack for a compilation. The parser and everything after it recurse over the source's
/// nesting, which [`parse`] bounds; this much stack holds the deepest nesting it accepts in
/// a debug build with room to spare.
pub const STACK_BYTES: usize = 64 << 20;

thread_local! {
    /// Whether this thread was started by [`with_stack`], so already has its stack.
    static ON_BIG_STACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f` (a compilation) on a thread with [`STACK_BYTES`] of stack: this one if
/// [`with_stack`] started it, else a new one. A caller that compiles many sources (a
/// benchmark, a check of every shader of an effect) runs its loop inside one `with_stack`,
/// so that each compile does not pay for a thread of its own.
pub fn with_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if ON_BIG_STACK.with(|on| on.get()) {
        return f();
    }
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("hlsl".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(s, || {
                ON_BIG_STACK.with(|on| on.set(true));
                f()
            })
            .map(|h| h.join())
            .unwrap_or_else(|_| Err(Box::new("no thread for the compiler")))
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}

/// HLSL's intrinsic functions (shader models 1-3): the effect grammar knows a call by
/// them, and the decompiler names no global after one.
pub const INTRINSICS: &[&str] = &[
    "abs",
    "acos",
    "all",
    "any",
    "asfloat",
    "asin",
    "asint",
    "asuint",
    "atan",
    "atan2",
    "ceil",
    "clamp",
    "clip",
    "cos",
    "cosh",
    "cross",
    "D3DCOLORtoUBYTE4",
    "ddx",
    "ddy",
    "degrees",
    "determinant",
    "distance",
    "dst",
    "dot",
    "exp",
    "exp2",
    "faceforward",
    "floor",
    "fmod",
    "frac",
    "frexp",
    "fwidth",
    "isfinite",
    "isinf",
    "isnan",
    "ldexp",
    "length",
    "lerp",
    "lit",
    "log",
    "log10",
    "log2",
    "max",
    "min",
    "modf",
    "mul",
    "noise",
    "normalize",
    "pow",
    "radians",
    "reflect",
    "refract",
    "round",
    "rsqrt",
    "saturate",
    "sign",
    "sin",
    "sincos",
    "sinh",
    "smoothstep",
    "sqrt",
    "step",
    "tan",
    "tanh",
    "tex1D",
    "tex1Dbias",
    "tex1Dgrad",
    "tex1Dlod",
    "tex1Dproj",
    "tex2D",
    "tex2Dbias",
    "tex2Dgrad",
    "tex2Dlod",
    "tex2Dproj",
    "tex3D",
    "tex3Dbias",
    "tex3Dgrad",
    "tex3Dlod",
    "tex3Dproj",
    "texCUBE",
    "texCUBEbias",
    "texCUBEgrad",
    "texCUBElod",
    "texCUBEproj",
    "transpose",
    "trunc",
];
