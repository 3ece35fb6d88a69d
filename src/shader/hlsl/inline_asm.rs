//! `asm { … }` in a function body: the texture stage of a ps_1_x shader written as the
//! instructions themselves, for what no HLSL says (a block that is a whole shader, in any
//! model, is [`super::asm_shader`]'s). `texbem`, `texbeml` and `bem` sample at
//! coordinates moved by a matrix (and `texbeml` scale its result by a luminance) that is
//! texture-stage state (`D3DTSS_BUMPENVMAT00`–`11`, `BUMPENVLSCALE`, `BUMPENVLOFFSET`), not
//! a constant: no HLSL expression compiles to them, and the decompiler keeps a shader that
//! uses them as HLSL with its texture stage in a block. This is shaderfs's own: Microsoft's
//! compilers take `asm { }` only as an effect's shader object (inside a function they
//! refuse it, X3064 "object literals are not allowed inside functions").
//!
//! The rules (each broken one is an error at its line):
//! - ps_1_1–ps_1_4 only, at the top level of the entry function, once a shader;
//! - ps_1_1–1_3: texture instructions only (`tex`, `texcoord`, `texbem`, `texreg2ar`,
//!   `texm3x3tex`, `texkill` …); the arithmetic is HLSL's;
//! - ps_1_4: texture instructions (`texld`, `texcrd`, `texkill`, `texdepth`), and
//!   arithmetic (`bem` among it) only in a first phase the block ends with `phase` and
//!   the second phase's texture instructions: the block is then the whole texture stage;
//! - registers are the hardware's: the block reads texture coordinates (`t#`), constants
//!   (`c#`, a uniform `register(c#)` binds there) and what it wrote itself, samples the
//!   sampler of each stage it reads (`s#`, a sampler `register(s#)` binds there), and
//!   after it a local variable named as a register it wrote (`float4 t1;`, `r2`) holds
//!   that register's value;
//! - a `def` gives a constant the block reads its value (the code generator writes it
//!   with its own `def`s); elsewhere a literal is HLSL's.

use super::token::Loc;
use crate::shader::d3d9::asm::assemble_unvalidated;
use crate::shader::d3d9::bytecode::{self, ShaderKind, Version};
use crate::shader::d3d9::disasm::instruction_text;
use crate::shader::d3d9::registers::RegisterType;

/// A block read for its profile.
#[derive(Debug, Clone, PartialEq)]
pub struct AsmBlock {
    /// The instructions, as the disassembler writes them.
    pub lines: Vec<String>,
    pub loc: Loc,
    /// Registers written, by number: `t#` in ps_1_1–1_3, `r#` in ps_1_4.
    pub writes: Vec<u32>,
    /// Texture stages whose registers or coordinate sets the block takes (ps_1_1–1_3), or
    /// whose samplers it reads (ps_1_4).
    pub stages: Vec<u32>,
    /// Stages whose sampler the block samples.
    pub samples: Vec<u32>,
    /// Constant registers read or defined.
    pub constants: Vec<u32>,
    /// `def`s: register and value (`f32` bits) by lane.
    pub defs: Vec<(u32, [u32; 4])>,
    /// ps_1_4: the block holds `phase`.
    pub phase: bool,
}

/// ps_1_1–1_3's texture instructions, and whether each samples its stage's texture.
pub(crate) const TEXTURE_1: &[(&str, bool)] = &[
    ("tex", true),
    ("texcoord", false),
    ("texbem", true),
    ("texbeml", true),
    ("texreg2ar", true),
    ("texreg2gb", true),
    ("texreg2rgb", true),
    ("texm3x2pad", false),
    ("texm3x2tex", true),
    ("texm3x2depth", false),
    ("texm3x3pad", false),
    ("texm3x3", false),
    ("texm3x3tex", true),
    ("texm3x3spec", true),
    ("texm3x3vspec", true),
    ("texdp3", false),
    ("texdp3tex", true),
    ("texkill", false),
];

/// ps_1_4's texture instructions.
pub(crate) const TEXTURE_4: &[&str] = &["texld", "texcrd", "texkill", "texdepth"];

/// The block of `lines` (each with where it is) for ps_1_`minor`.
pub fn read(lines: &[(Loc, String)], minor: u8, loc: Loc) -> Result<AsmBlock, (Loc, String)> {
    let profile = format!("ps_1_{minor}");
    let version = Version {
        kind: ShaderKind::Pixel,
        major: 1,
        minor,
    };
    let v14 = minor == 4;
    let mut block = AsmBlock {
        lines: Vec::new(),
        loc,
        writes: Vec::new(),
        stages: Vec::new(),
        samples: Vec::new(),
        constants: Vec::new(),
        defs: Vec::new(),
        phase: false,
    };
    // ps_1_4: arithmetic seen in the phase being read.
    let mut arithmetic = false;
    for (at, text) in lines {
        let err = |message: String| Err((*at, format!("asm block: {message}")));
        let bytes = match assemble_unvalidated(&format!("{profile}\n{text}\n")) {
            Ok(b) => b,
            Err(e) => return err(format!("'{}': {}", text.trim(), e.message)),
        };
        let shader = match bytecode::parse(&bytes) {
            Ok(s) => s,
            Err(e) => return err(format!("'{}': {e:?}", text.trim())),
        };
        for ins in shader.instructions() {
            let m = ins.mnemonic();
            let Some(ops) = &ins.operands else {
                return err(format!("'{m}': operands that do not fit it"));
            };
            if m == "dcl" {
                return err(format!("'dcl': {profile} declares nothing"));
            }
            if m == "def" {
                let (Some(dst), Ok(v)) = (ops.dst, <[u32; 4]>::try_from(&ops.immediates[..]))
                else {
                    return err("'def' without its register and four values".into());
                };
                let n = dst.number();
                if block.defs.iter().any(|d| d.0 == n) {
                    return err(format!("c{n} is defined twice"));
                }
                block.defs.push((n, v));
                if !block.constants.contains(&n) {
                    block.constants.push(n);
                }
                continue;
            }
            let texture = if v14 {
                TEXTURE_4.contains(&m)
            } else {
                TEXTURE_1.iter().any(|&(t, _)| t == m)
            };
            if !v14 && !texture {
                return err(format!(
                    "'{m}' is arithmetic; in {profile} an asm block holds the texture stage only (tex, texcoord, texbem, texbeml, texreg2ar …), and HLSL writes the arithmetic"
                ));
            }
            if m == "phase" {
                if block.phase {
                    return err(format!("{profile} has one 'phase'; this is a second"));
                }
                block.phase = true;
                arithmetic = false;
            } else if texture && arithmetic {
                return err(format!(
                    "'{m}' follows arithmetic: in {profile} a phase's texture instructions come before its arithmetic"
                ));
            } else if v14 && !texture {
                if block.phase {
                    return err(format!(
                        "'{m}' is arithmetic of the second phase: HLSL writes that, after the block"
                    ));
                }
                arithmetic = true;
            }
            // Registers read: what the block wrote, texture coordinates, constants.
            for src in &ops.srcs {
                let n = src.number();
                match src.register_type() {
                    Some(RegisterType::Const) if !block.constants.contains(&n) => {
                        block.constants.push(n);
                    }
                    Some(RegisterType::Temp) if !block.writes.contains(&n) => {
                        return err(format!(
                            "'{m}' reads r{n}, which the block has not written: it reads the hardware's registers, not HLSL's values"
                        ));
                    }
                    Some(RegisterType::AddrOrTexture) if !v14 && !block.writes.contains(&n) => {
                        return err(format!(
                            "'{m}' reads t{n}, which no texture instruction of the block has written"
                        ));
                    }
                    _ => {}
                }
            }
            if let Some(dst) = ops.dst {
                let n = dst.number();
                let sampled = if v14 {
                    m == "texld"
                } else {
                    TEXTURE_1.iter().any(|&(t, s)| t == m && s)
                };
                if sampled && !block.samples.contains(&n) {
                    block.samples.push(n);
                }
                if (sampled || !v14) && !block.stages.contains(&n) {
                    block.stages.push(n);
                }
                let written = match dst.register_type() {
                    Some(RegisterType::Temp) => v14,
                    Some(RegisterType::AddrOrTexture) => !v14 && m != "texkill",
                    _ => false,
                };
                if written && !block.writes.contains(&n) {
                    block.writes.push(n);
                }
            }
            let Some(line) = instruction_text(ins, version) else {
                return err(format!("'{m}': an instruction with no text"));
            };
            block.lines.push(line);
        }
    }
    if v14 && arithmetic && !block.phase {
        return Err((
            loc,
            "asm block: in ps_1_4 a block's arithmetic is the first phase's, and the block ends it with 'phase' (then the second phase's texture instructions)".into(),
        ));
    }
    if block.lines.is_empty() {
        return Err((loc, "asm block: no instructions".into()));
    }
    Ok(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<(Loc, String)> {
        text.lines()
            .enumerate()
            .map(|(i, l)| {
                (
                    Loc {
                        line: i as u32 + 1,
                        ..Loc::default()
                    },
                    l.to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn a_texture_stage_is_read_with_what_it_takes() {
        let b = read(
            &lines("tex t0\ntexbem t1 , t0\ntexbeml t2, t0"),
            1,
            Loc::default(),
        )
        .unwrap();
        assert_eq!(b.lines, ["tex t0", "texbem t1, t0", "texbeml t2, t0"]);
        assert_eq!(b.writes, [0, 1, 2]);
        assert_eq!(b.samples, [0, 1, 2]);
        let b = read(
            &lines("texld r0, t0\ntexcrd r1.rgb, t1\nbem r2.rg, r1, r0\nphase\ntexld r2, r2"),
            4,
            Loc::default(),
        )
        .unwrap();
        assert_eq!(b.writes, [0, 1, 2]);
        assert_eq!(b.samples, [0, 2]);
        assert!(b.phase);
    }

    fn compiled_both(
        source: &str,
        profile: &str,
    ) -> Result<crate::shader::hlsl::compile::Compiled, String> {
        use crate::shader::hlsl::compile::{compile, Options};
        let options = Options {
            profile: profile.into(),
            ..Options::default()
        };
        compile("bump.hlsl", source, None, &options).map_err(|f| f.render())
    }

    fn compiled(source: &str, profile: &str) -> Result<String, String> {
        compiled_both(source, profile).map(|c| c.asm)
    }

    /// The block is the texture stage; the locals named as its registers take their
    /// values; the samplers and constants it reads by register are the table's.
    #[test]
    fn a_block_compiles_as_the_texture_stage_of_its_shader() {
        let source = "sampler2D Base : register(s0);
sampler2D Bumped : register(s1);
sampler2D Lit : register(s2);
float4 tint : register(c1);
float4 spare;

float4 main(float4 v0 : COLOR0) : COLOR
{
    float4 t1, t2;
    asm {
        tex t0
        texbem t1, t0
        texbeml t2, t0
    }
    return t1 * t2 * tint + v0 * spare;
}
";
        let asm = compiled(source, "ps_1_1").unwrap();
        let code: Vec<&str> = asm.lines().collect();
        assert_eq!(
            &code[..4],
            ["ps_1_1", "tex t0", "texbem t1, t0", "texbeml t2, t0"],
            "{asm}"
        );
        assert!(code[4..].iter().all(|l| !l.starts_with("tex")), "{asm}");
        // `spare` goes to a register the block does not read.
        let bytes = compiled_both(source, "ps_1_1").unwrap().bytecode;
        let table = crate::shader::d3d9::ctab::ConstantTable::from_bytecode(&bytes)
            .unwrap()
            .unwrap();
        let mut names: Vec<(String, u16)> = table
            .constants
            .iter()
            .map(|c| (c.name.clone(), c.register_index))
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                ("Base".to_string(), 0),
                ("Bumped".to_string(), 1),
                ("Lit".to_string(), 2),
                ("spare".to_string(), 0),
                ("tint".to_string(), 1)
            ]
        );
        // ps_1_4: the block holds the first phase and the second's texture reads.
        let asm = compiled(
            "float4 main() : COLOR
{
    float4 r2;
    asm {
        texld r0, t0
        texcrd r1.rgb, t1
        bem r2.rg, r1, r0
        phase
        texld r2, r2
    }
    return r2 * 0.5;
}
",
            "ps_1_4",
        )
        .unwrap();
        assert!(
            asm.contains("bem r2.xy, r1, r0\nphase\ntexld r2, r2\n"),
            "{asm}"
        );
    }

    /// What cannot be compiled with a block is an error at the place, saying why.
    #[test]
    fn a_block_where_it_cannot_be_is_refused_saying_why() {
        let main = |body: &str| {
            format!("sampler2D s1 : register(s1);\nfloat4 k;\nfloat4 main(float4 tc1 : TEXCOORD1) : COLOR\n{{\n    float4 t1;\n{body}\n}}\n")
        };
        let block = "    asm { tex t0 texbem t1, t0 }";
        let block = block.replace(" texbem", "\n texbem");
        for (source, profile, says) in [
            (
                main(&format!("{block}\n    return t1;")),
                "ps_2_0",
                "bump.hlsl(6,5): error: in ps_2_0 an asm block is the whole shader",
            ),
            (
                main(&format!("{block}\n{block}\n    return t1;")),
                "ps_1_1",
                "a second asm block",
            ),
            (
                main(&format!("{block}\n    return t1 + tex2D(s1, tc1.xy);")),
                "ps_1_1",
                "stage 1 is the asm block's: this samples s1 in HLSL too",
            ),
            (
                main(&format!("{block}\n    return t1 * tc1.xyzz;")),
                "ps_1_1",
                "t1 is the asm block's",
            ),
            (
                main("    asm { tex t0\n texm3x3spec t1, t0, c0 }\n    return t1 * k;"),
                "ps_1_1",
                "'k' is placed in c0, which the asm block reads",
            ),
            (
                main("    asm { tex t0\n mul r0, t0, t0 }\n    return t1;"),
                "ps_1_1",
                "bump.hlsl(7,2): error: asm block: 'mul' is arithmetic",
            ),
            (
                format!(
                    "void f() {{ {block} }}\n{}",
                    main("    f();\n    return t1;")
                ),
                "ps_1_1",
                "not in a branch, a loop or a called function",
            ),
        ] {
            let e = compiled(&source, profile).unwrap_err();
            assert!(e.contains(says), "{says}:\n{e}\n{source}");
        }
    }

    #[test]
    fn what_a_block_cannot_hold_is_named_at_its_line() {
        let e = read(&lines("tex t0\nmul r0, t0, t0"), 1, Loc::default()).unwrap_err();
        assert_eq!(e.0.line, 2);
        assert!(e.1.contains("'mul' is arithmetic"), "{}", e.1);
        let e = read(&lines("texbem t1, t0"), 1, Loc::default()).unwrap_err();
        assert!(e.1.contains("reads t0"), "{}", e.1);
        let e = read(&lines("texld r0, t0\nbem r1.rg, c0, r0"), 4, Loc::default()).unwrap_err();
        assert!(e.1.contains("ends it with 'phase'"), "{}", e.1);
        let e = read(
            &lines("def c0, 1, 1, 1, 1\ndef c0, 0, 0, 0, 0"),
            1,
            Loc::default(),
        )
        .unwrap_err();
        assert!(e.1.contains("c0 is defined twice"), "{}", e.1);
        let e = read(&lines("tex t0 t0"), 1, Loc::default()).unwrap_err();
        assert!(e.1.starts_with("asm block: 'tex t0 t0'"), "{}", e.1);
    }
}
