//! A whole shader written as its instructions: `void main() { asm { … } }`, the form the
//! decompiler writes for a shader whose code no HLSL compiles to (vs_3_0 outputs written
//! at `aL`, inputs read at `aL` from a register no `dcl` declares …). The block is the
//! shader: its lines (after the version, `vs_3_0`, if the block names it as an effect's
//! does: it must be the profile's) are assembled for the profile and checked by the
//! profile's rules as any assembled shader is, and nothing else in the function may
//! stand beside it (no parameters: the block's `dcl`s say what comes in and goes out).
//!
//! The globals are the constant table. The block reads registers by number, so each
//! global says where it is (`register(c#)`, `s#`, `i#`, `b#`); a float constant's entry
//! counts its registers up to the highest one the block reads, as fxc's table counts them,
//! and the whole variable where the block reads it at a relative address or not at all
//! (the game may still set it there).
//!
//! This is shaderfs's own, as the ps_1_x texture stage is ([`super::inline_asm`]):
//! Microsoft's compilers refuse asm inside a function (X3064).

use std::collections::BTreeSet;

use super::ast::{self, StmtKind, TypeName};
use super::codegen::{constant_table, table_entry, Generated};
use super::ir::Program;
use super::lower::Profile;
use super::token::Loc;
use crate::shader::d3d9::asm::{assemble_dropping_comments, parse_version};
use crate::shader::d3d9::bytecode::{self, ShaderKind, Version};
use crate::shader::d3d9::ctab::RegisterSet;
use crate::shader::d3d9::registers::RegisterType;

/// The block of a shader written as asm, a line of source a line.
#[derive(Debug, Clone, PartialEq)]
pub struct ShaderAsm {
    pub lines: Vec<(Loc, String)>,
    pub loc: Loc,
}

/// The block of `f` where `f` is a shader written as asm: no parameters, returns
/// nothing, and its body is one `asm { }` block.
pub fn of_function(f: &ast::Function) -> Option<ShaderAsm> {
    let body = f.body.as_ref()?;
    let [stmt] = &body.stmts[..] else {
        return None;
    };
    match &stmt.kind {
        StmtKind::Asm(lines) if f.params.is_empty() && f.ret.name == TypeName::Void => {
            Some(ShaderAsm {
                lines: lines.clone(),
                loc: stmt.loc,
            })
        }
        _ => None,
    }
}

/// What a float constant register is read as, by number.
#[derive(Default)]
struct Reads {
    /// Registers read where they are.
    direct: BTreeSet<u32>,
    /// Registers a relative read starts at (`c[a0.x + n]`).
    relative: BTreeSet<u32>,
}

/// The shader of `block` and its constant table from the globals of `p`.
pub fn generate(
    p: &Program,
    block: &ShaderAsm,
    profile: Profile,
    target: &str,
    flags: u32,
) -> Result<Generated, Vec<(Loc, String)>> {
    let name = profile.name();
    // The block may name its version first, as an effect's does (`vs_3_0`): the
    // profile's.
    let mut lines = &block.lines[..];
    if let Some((at, first)) = lines.first() {
        let word: String = first.split_whitespace().collect();
        if let Ok(v) = parse_version(&word, 1, 1) {
            let kind = match profile.pixel {
                true => ShaderKind::Pixel,
                false => ShaderKind::Vertex,
            };
            if v != Version::new(kind, profile.major, profile.minor) {
                return Err(vec![(
                    *at,
                    format!("asm block: the block is {v}, and the shader is compiled for {name}"),
                )]);
            }
            lines = &lines[1..];
        }
    }
    let mut asm = format!("{name}\n");
    for (_, line) in lines {
        asm.push_str(line);
        asm.push('\n');
    }
    // An error's line is the text's: the version, then the block's lines.
    let at = |line: usize| {
        line.checked_sub(2)
            .and_then(|i| lines.get(i))
            .map_or(block.loc, |l| l.0)
    };
    let bytes = assemble_dropping_comments(&asm)
        .map_err(|e| vec![(at(e.line), format!("asm block: {}", e.message))])?;
    let shader =
        bytecode::parse(&bytes).map_err(|e| vec![(block.loc, format!("asm block: {e:?}"))])?;
    let mut reads = Reads::default();
    for ins in shader.instructions() {
        let Some(ops) = &ins.operands else { continue };
        // `m4x3 r0, v0, c4` reads the matrix's rows, c4 to c6.
        let rows = match ins.mnemonic() {
            "m4x4" | "m3x4" => 4,
            "m4x3" | "m3x3" => 3,
            "m3x2" => 2,
            _ => 1,
        };
        for (i, src) in ops.srcs.iter().enumerate() {
            if src.register_type() == Some(RegisterType::Const) {
                let set = match src.is_relative() {
                    true => &mut reads.relative,
                    false => &mut reads.direct,
                };
                let n = src.number();
                let last = if i == 1 { n + rows - 1 } else { n };
                set.extend(n..=last);
            }
        }
    }
    let mut constants = Vec::new();
    let mut errors = Vec::new();
    for u in p.uniforms.iter().filter(|u| !u.literal) {
        let whole = u.registers.max(1);
        let entry = if u.is_sampler {
            u.bound.map(|b| (RegisterSet::SAMPLER, b, whole))
        } else if let Some(b) = u.int_bound {
            Some((RegisterSet::INT4, b, whole))
        } else if let Some(b) = u.bool_bound {
            Some((RegisterSet::BOOL, b, whole))
        } else {
            u.bound
                .map(|b| (RegisterSet::FLOAT4, b, float_count(&reads, b, whole)))
        };
        let Some((set, index, count)) = entry else {
            let class = if u.is_sampler { 's' } else { 'c' };
            errors.push((
                u.loc,
                format!(
                    "'{}' has no register(): an asm shader reads its constants by register, so each global says where it is (register({class}#))",
                    u.name
                ),
            ));
            continue;
        };
        constants.push(table_entry(u, set, index, count, 0));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    constants.sort_by(|a, b| (&a.name, a.register_set.0).cmp(&(&b.name, b.register_set.0)));
    Ok(Generated {
        asm,
        table: constant_table(profile, target, flags, constants),
    })
}

/// How many registers of a float constant at `base` the table counts: up to the highest
/// the block reads, or all `whole` where it reads none, or reads at a relative address
/// from a register at or below the last (the index may land on any of them).
fn float_count(reads: &Reads, base: u32, whole: u32) -> u32 {
    let end = base + whole;
    if reads.relative.iter().any(|&r| r < end) {
        return whole;
    }
    reads
        .direct
        .range(base..end)
        .next_back()
        .map_or(whole, |&top| top - base + 1)
}

#[cfg(test)]
mod tests {
    use crate::shader::d3d9::ctab::{ConstantTable, RegisterSet};
    use crate::shader::hlsl::compile::{compile, Options};

    fn compiled(source: &str, profile: &str) -> Result<Vec<u8>, String> {
        let options = Options {
            profile: profile.into(),
            ..Options::default()
        };
        compile("shader.hlsl", source, None, &options)
            .map(|c| c.bytecode)
            .map_err(|f| f.render())
    }

    /// The block is the shader, assembled for the profile (which its first line may
    /// name, as an effect's block does); each global is an entry of the
    /// table on its register, a float constant counting the registers the block reads
    /// of it (a matrix's rows by `m4x4`), or all where it reads it at a relative
    /// address or not at all.
    #[test]
    fn a_block_is_the_shader_and_the_globals_its_table() {
        let source = "float4x4 WorldViewProj : register(c0);
float4 Lights[4] : register(c4);
float4 Spare[2] : register(c8);
float4 Scale : register(c12);
sampler2D Base : register(s0);
int Count : register(i0);
void main()
{
    asm {
        vs_3_0
        dcl_position v0
        dcl_position o0
        dcl_texcoord o1
        m4x4 o0, v0, c0
        mov r0, c12
        loop aL, i0
            add r0, r0, c4[aL]
        endloop
        mov o1, r0
    }
}
";
        let bytes = compiled(source, "vs_3_0").unwrap();
        let listing = crate::shader::d3d9::disasm::disassemble(&bytes).unwrap();
        assert!(
            listing.contains("    loop aL, i0\n      add r0, r0, c4[aL]\n"),
            "{listing}"
        );
        let table = ConstantTable::from_bytecode(&bytes).unwrap().unwrap();
        let entry = |name: &str| {
            let c = table.constants.iter().find(|c| c.name == name).unwrap();
            (c.register_set, c.register_index, c.register_count)
        };
        assert_eq!(entry("WorldViewProj"), (RegisterSet::FLOAT4, 0, 4));
        assert_eq!(entry("Lights"), (RegisterSet::FLOAT4, 4, 4));
        assert_eq!(entry("Spare"), (RegisterSet::FLOAT4, 8, 2));
        assert_eq!(entry("Scale"), (RegisterSet::FLOAT4, 12, 1));
        assert_eq!(entry("Base"), (RegisterSet::SAMPLER, 0, 1));
        assert_eq!(entry("Count"), (RegisterSet::INT4, 0, 1));
    }

    /// What is wrong is said where it is: an instruction the profile does not take at its
    /// line, a global without a register at its declaration, a block beside HLSL.
    #[test]
    fn a_broken_block_is_refused_at_its_line() {
        let source = "float4 Tint : register(c0);
void main()
{
    asm {
        dcl_position v0
        dcl_position o0
        texld r0, v0, s0
        mov o0, v0
    }
}
";
        let said = compiled(source, "vs_3_0").unwrap_err();
        assert!(said.starts_with("shader.hlsl(7,"), "{said}");
        assert!(said.contains("asm block:"), "{said}");

        let unbound = "float4 Tint;\nvoid main()\n{\n    asm {\n        dcl_position v0\n        \
                       dcl_position o0\n        mul o0, v0, c0\n    }\n}\n";
        let said = compiled(unbound, "vs_3_0").unwrap_err();
        assert!(
            said.starts_with("shader.hlsl(1,8): error: 'Tint' has no register()"),
            "{said}"
        );

        let other = source.replace("    asm {\n", "    asm {\n        vs.2.0\n");
        let said = compiled(&other, "vs_3_0").unwrap_err();
        assert!(
            said.contains("shader.hlsl(5,9): error: asm block: the block is vs_2_0, and the shader is compiled for vs_3_0"),
            "{said}"
        );

        let beside = "float4 main(float4 p : POSITION) : POSITION\n{\n    asm {\n        \
                      mov oPos, v0\n    }\n    return p;\n}\n";
        let said = compiled(beside, "vs_2_0").unwrap_err();
        assert!(said.contains("an asm block is the whole shader"), "{said}");
    }
}
