//! The constant table as the decompiled text can declare it.
//!
//! A table Microsoft's compilers wrote names every constant once, with a type HLSL has, on
//! registers of the shader's model. A table from anywhere else may not: a `float6`, a type
//! number no compiler writes, a sampler typed `void`, two constants of one name, a
//! register count past what the type holds, registers past the model's last, constants on
//! the same registers, or a name that is a word of HLSL or one the text gives registers
//! (`r0`, `main`). Declared as they are, such constants make text no compiler takes. Each
//! is either mended in a way that changes no register the shader reads (a count past the
//! type's registers is cut to them; a sampler is declared with the type its `dcl` gives
//! it), or left undeclared, its registers then read by their own names (`c13`); the first
//! comment of the text says which and why.

use std::collections::{BTreeMap, BTreeSet};

use super::super::bytecode::Version;
use super::super::ctab::{
    type_name, Class, Constant, ConstantTable, ParamType, RegisterSet, TypeInfo,
};
use super::super::limits;
use super::super::registers::RegisterType;
use super::{components, identifier, registers};

/// The constants of `table` the text declares by name, mended where that changes nothing
/// the shader reads, and a line for the first comment about each constant not declared as
/// the table has it. `samplers` are the sampler types the shader's `dcl`s give, by
/// register.
pub(super) fn declarable(
    table: ConstantTable,
    version: Version,
    samplers: &BTreeMap<u32, &'static str>,
) -> (ConstantTable, Vec<String>) {
    let model = limits::limits(version);
    let mut notes = Vec::new();
    let mut names: BTreeSet<String> = BTreeSet::new();
    // Registers of each set a kept constant holds.
    let mut held: BTreeMap<u16, Vec<(u32, u32, String)>> = BTreeMap::new();
    let mut kept = Vec::new();
    for mut c in table.constants {
        let name = identifier(&c.name);
        let start = u32::from(c.register_index);
        let problem = type_problem(&c.type_info, c.register_set)
            .or_else(|| {
                // What the compilers take as one value.
                let whole = registers(&c.type_info);
                let most = crate::shader::hlsl::lower::MAX_REGISTERS;
                (whole > most).then(|| {
                    format!("its type takes {whole} registers, more than the {most} a value may take in HLSL")
                })
            })
            .or_else(|| {
                // A constant named as the text names its own first register (a sampler
                // `s3` on s3, as d3dx9_31 names ps_1_x's) is that register by name.
                let own = format!("{}{start}", register_file(c.register_set).0);
                match name == own {
                    true => names.contains(&name).then(|| format!("'{name}' names another constant")),
                    false => name_problem(&name, &names),
                }
            })
            .or_else(|| {
                let (letter, ty) = register_file(c.register_set);
                // ps_1_x names no s# in its code (a stage's t# is its sampler), but
                // its tables place samplers there, a register a stage.
                let stages = match version.minor {
                    4 => 6,
                    _ => 4,
                };
                let ps1_sampler = version.is_ps1() && ty == RegisterType::Sampler;
                let Some(file) = model
                    .and_then(|m| m.count(ty))
                    .or(ps1_sampler.then_some(stages))
                else {
                    return Some(format!("{version} has no {letter}# registers"));
                };
                // What the table places (a compiler leaves out an array's elements
                // past the last one read: `float b[4]` may stand at c5 of c0–c7).
                let size = type_registers(&c.type_info, c.register_set)
                    .min(u32::from(c.register_count).max(1));
                let end = start.saturating_add(size);
                (end > file).then(|| {
                    format!(
                        "its type takes {letter}{start}–{letter}{}, past {version}'s last, {letter}{}",
                        end - 1,
                        file - 1
                    )
                })
            });
        if let Some(why) = problem {
            notes.push(format!(
                "the constant table's '{}' is not declared: {why}; its registers are read by their own names",
                c.name
            ));
            continue;
        }
        let size = type_registers(&c.type_info, c.register_set);
        if u32::from(c.register_count) > size {
            notes.push(format!(
                "the constant table gives '{}' {} registers, more than its type's {size}: the rest are read by their own names",
                c.name, c.register_count
            ));
            c.register_count = size as u16;
        }
        let end = start + u32::from(c.register_count);
        let taken = held.entry(c.register_set.0).or_default();
        if let Some((_, _, other)) = taken.iter().find(|(s, e, _)| start < *e && *s < end) {
            notes.push(format!(
                "the constant table's '{}' is not declared: it shares registers with '{other}'; its registers are read by their own names",
                c.name
            ));
            continue;
        }
        if c.register_set == RegisterSet::SAMPLER {
            mend_sampler(&mut c, samplers, &mut notes);
        }
        taken.push((start, end, c.name.clone()));
        names.insert(name.clone());
        if !c.type_info.members.is_empty() {
            // The struct's type is declared as `NAME_t`.
            names.insert(format!("{name}_t"));
        }
        kept.push(c);
    }
    (
        ConstantTable {
            constants: kept,
            ..table
        },
        notes,
    )
}

/// A sampler whose `dcl` gives it another kind of texture than the table (a cube, a
/// volume, a flat one): declared with the `dcl`'s, which is what the hardware samples.
fn mend_sampler(c: &mut Constant, samplers: &BTreeMap<u32, &'static str>, notes: &mut Vec<String>) {
    let Some(&dcl) = samplers.get(&u32::from(c.register_index)) else {
        return;
    };
    let table = super::sampler_type(c.type_info.param_type);
    // D3D9 has no 1D textures: a sampler1D is sampled through a 2D `dcl`.
    let flat = |t: &str| matches!(t, "sampler1D" | "sampler2D");
    if table == dcl || (flat(table) && flat(dcl)) || c.type_info.elements > 1 {
        return;
    }
    c.type_info.param_type = match dcl {
        "sampler1D" => ParamType(11),
        "sampler3D" => ParamType(13),
        "samplerCUBE" => ParamType(14),
        _ => ParamType::SAMPLER2D,
    };
    notes.push(format!(
        "the constant table types '{}' {table}; its dcl samples it as a {dcl}, as it is declared here",
        c.name
    ));
}

/// The letter of a register set's registers and their register type.
fn register_file(set: RegisterSet) -> (char, RegisterType) {
    match set {
        RegisterSet::BOOL => ('b', RegisterType::ConstBool),
        RegisterSet::INT4 => ('i', RegisterType::ConstInt),
        RegisterSet::SAMPLER => ('s', RegisterType::Sampler),
        _ => ('c', RegisterType::Const),
    }
}

/// Registers of `set` a value of type `ti` takes: a float or int register a row (or
/// column) of each element, a bool register each component, a sampler register each
/// element.
fn type_registers(ti: &TypeInfo, set: RegisterSet) -> u32 {
    let elements = u32::from(ti.elements.max(1));
    match set {
        RegisterSet::BOOL => components(ti),
        // fxc gives an int that counts loops a register a component.
        RegisterSet::INT4 => registers(ti).max(components(ti)),
        RegisterSet::SAMPLER => elements,
        _ => registers(ti),
    }
}

/// Why a value of type `ti` in registers of `set` cannot be declared in HLSL, if it
/// cannot.
fn type_problem(ti: &TypeInfo, set: RegisterSet) -> Option<String> {
    if set == RegisterSet::SAMPLER {
        let sampler = ti.class == Class::OBJECT && (5..=14).contains(&ti.param_type.0);
        return (!sampler).then(|| {
            format!(
                "a {} is in the sampler registers, where HLSL has only samplers",
                type_name(ti)
            )
        });
    }
    if !matches!(
        set,
        RegisterSet::BOOL | RegisterSet::INT4 | RegisterSet::FLOAT4
    ) {
        return Some(format!("register set {} is none of D3D9's", set.0));
    }
    if ti.class == Class::STRUCT {
        if ti.members.is_empty() {
            return Some("a struct of no members".into());
        }
        let mut names = BTreeSet::new();
        for m in &ti.members {
            let name = identifier(&m.name);
            if names.contains(&name) || KEYWORDS.contains(&name.as_str()) {
                return Some(format!("its member's name '{name}' is taken"));
            }
            if let Some(why) = type_problem(&m.type_info, set) {
                return Some(format!("its member '{}': {why}", m.name));
            }
            names.insert(name);
        }
        return None;
    }
    let numeric = matches!(
        ti.param_type,
        ParamType::BOOL | ParamType::INT | ParamType::FLOAT
    );
    let shaped = match ti.class {
        // One lane: a type info of more rows or columns says lanes HLSL's `float` has not.
        Class::SCALAR => ti.rows <= 1 && ti.columns <= 1,
        Class::VECTOR => (1..=4).contains(&ti.columns),
        Class::MATRIX_ROWS | Class::MATRIX_COLUMNS => {
            (1..=4).contains(&ti.rows) && (1..=4).contains(&ti.columns)
        }
        _ => false,
    };
    (!(numeric && shaped && ti.members.is_empty()))
        .then(|| format!("its type ({}) is none HLSL has", type_name(ti)))
}

/// Why `name` cannot name a global of the text, if it cannot: a word of HLSL, a name the
/// text gives registers, or one of `taken`.
fn name_problem(name: &str, taken: &BTreeSet<String>) -> Option<String> {
    if taken.contains(name) {
        return Some(format!("'{name}' names another constant"));
    }
    if KEYWORDS.contains(&name)
        || crate::shader::hlsl::INTRINSICS.contains(&name)
        || crate::shader::hlsl::parse::numeric_type(name).is_some()
        || crate::shader::hlsl::parse::object_type(name).is_some()
    {
        return Some(format!("'{name}' is a word of HLSL"));
    }
    if REGISTER_NAMES.contains(&name) || register_like(name) {
        return Some(format!("the text names registers '{name}'"));
    }
    None
}

/// A name of the shape the text gives registers, loops and their counters: a prefix
/// and a number (`r0`, `c41`, `oT3`, `aL0`, `k1`).
fn register_like(name: &str) -> bool {
    let digits = name.trim_end_matches(|c: char| c.is_ascii_digit());
    digits.len() < name.len()
        && matches!(
            digits,
            "r" | "v"
                | "t"
                | "tc"
                | "o"
                | "oC"
                | "oD"
                | "oT"
                | "c"
                | "i"
                | "b"
                | "s"
                | "p"
                | "a"
                | "aL"
                | "k"
        )
}

/// Names the text gives without a number.
const REGISTER_NAMES: &[&str] = &["main", "oPos", "oFog", "oPts", "oDepth", "vpos", "vface"];

/// HLSL's keywords and reserved words.
const KEYWORDS: &[&str] = &[
    "asm",
    "asm_fragment",
    "auto",
    "bool",
    "break",
    "case",
    "catch",
    "cbuffer",
    "centroid",
    "char",
    "class",
    "column_major",
    "compile",
    "compile_fragment",
    "const",
    "const_cast",
    "continue",
    "default",
    "delete",
    "discard",
    "do",
    "double",
    "dword",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "half",
    "if",
    "in",
    "inline",
    "inout",
    "int",
    "interface",
    "linear",
    "long",
    "matrix",
    "mutable",
    "namespace",
    "new",
    "nointerpolation",
    "noperspective",
    "operator",
    "out",
    "packoffset",
    "pass",
    "pixelfragment",
    "pixelshader",
    "precise",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "return",
    "row_major",
    "sample",
    "sampler",
    "sampler_state",
    "shared",
    "short",
    "signed",
    "sizeof",
    "snorm",
    "static",
    "static_cast",
    "string",
    "struct",
    "switch",
    "tbuffer",
    "technique",
    "template",
    "texture",
    "this",
    "throw",
    "true",
    "try",
    "typedef",
    "typename",
    "uint",
    "uniform",
    "union",
    "unorm",
    "unsigned",
    "using",
    "vector",
    "vertexfragment",
    "vertexshader",
    "virtual",
    "void",
    "volatile",
    "while",
];
