//! HLSL for Direct3D 9: the language modders write shaders in, compiled to the bytecode of
//! `shader::d3d9` as Microsoft's compilers write it.
//!
//! The pipeline, one module per stage:
//! - [`lex`] turns text into [`token::Token`]s with their place in the source;
//! - [`pp`] is the C preprocessor HLSL has (macros, `#if`, `#include`, `#pragma`);
//! - the parser, the type checker and the code generator follow.

pub mod diag;
pub mod lex;
pub mod pp;
pub mod token;
