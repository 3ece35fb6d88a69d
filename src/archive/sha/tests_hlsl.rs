//! HLSL shaders in effects: the views of `compile` statements, compiled as D3DX compiles
//! them, saves of `.hlsl` views, refusals at the `.sha`'s lines, and shader model 1. The
//! effects are `fx-verdicts/own/`'s, which D3DX's effect compiler accepts.

use super::tests::{open, Opened};
use crate::shader::d3d9::bytecode;
use crate::shader::d3d9::ctab::{self, ConstantTable};
use crate::shader::d3d9::decompile::decompile;
use crate::shader::hlsl::behaviour::same_behaviour;
use crate::shader::hlsl::compile::{compile, Options};
use crate::vfs::{Edit, EntryKind, ViewError};

const SM2: &str = include_str!("fx-verdicts/own/hlsl_sm2.sha");
const FULL: &str = include_str!("fx-verdicts/own/hlsl_full.sha");
const POST: &str = include_str!("fx-verdicts/own/hlsl_post.sha");

/// The 1-based line of the first `needle` in `text`.
fn line_of(text: &str, needle: &str) -> usize {
    let at = text.find(needle).unwrap_or_else(|| panic!("no {needle:?}"));
    text[..at].matches('\n').count() + 1
}

fn refused(r: Result<Vec<u8>, ViewError>) -> String {
    match r {
        Err(ViewError::Invalid(m)) => m,
        other => panic!("expected a refusal, got {:?}", other.map(String::from_utf8)),
    }
}

fn json(fx: &Opened) -> serde_json::Value {
    serde_json::from_slice(&fx.read("archive.json").unwrap()).unwrap()
}

fn writable(fx: &Opened, path: &str) -> bool {
    fx.archive
        .entries()
        .into_iter()
        .find_map(|e| match e.kind {
            EntryKind::File { writable, .. } if e.path == path => Some(writable),
            _ => None,
        })
        .unwrap()
}

fn version(code: &[u8]) -> String {
    bytecode::shader_version(code).unwrap().to_string()
}

#[test]
fn hlsl_shaders_mount_with_the_views_of_asm_ones() {
    let fx = open(SM2.as_bytes());
    assert_eq!(
        fx.paths(),
        [
            "archive.json",
            "effect.fx",
            "vertex.asm",
            "vertex.vso",
            "vertex.hlsl",
            "pixel.asm",
            "pixel.pso",
            "pixel.hlsl",
            "pixel.psLit.asm",
            "pixel.psLit.pso",
            "pixel.psLit.hlsl",
            "vertex.vs_main.asm",
            "vertex.vs_main.vso",
            "vertex.vs_main.hlsl",
            "passes",
            "passes/T0",
            "passes/T0/P0.json",
            "passes/T3",
            "passes/T3/P0.json",
        ]
    );
    let json = json(&fx);
    assert_eq!(json["problems"], serde_json::json!([]));
    let pixel = &json["shaders"][1];
    assert_eq!(pixel["stage"], "pixel");
    assert_eq!(pixel["version"], "ps_2_0");
    assert_eq!(pixel["line"], line_of(SM2, "PixelShader = compile"));
    assert!(pixel.get("variable").is_none());
    assert_eq!(
        pixel["hlsl"],
        serde_json::json!({
            "function": "ps_main",
            "profile": "ps_2_0",
            "arguments": ["0.5f", "float4(1.0f, 1.0f, 1.0f, 0.5f)"],
            "line": line_of(SM2, "float4 ps_main("),
            "source": "pixel.hlsl",
        })
    );
    assert_eq!(json["shaders"][2]["variable"], "psLit");
    assert_eq!(json["shaders"][2]["hlsl"]["arguments"][1], "vTint");

    // The bytecode of each profile; the asm is its listing, read-only.
    for (view, profile) in [
        ("vertex.vso", "vs_2_0"),
        ("pixel.pso", "ps_2_0"),
        ("pixel.psLit.pso", "ps_3_0"),
        ("vertex.vs_main.vso", "vs_3_0"),
    ] {
        assert_eq!(version(&fx.read(view).unwrap()), profile, "{view}");
    }
    let listing = fx.text("pixel.asm");
    assert!(listing.contains("\n    ps_2_0\n"), "{listing}");
    // The literal arguments are folded into the code, as D3DX folds them.
    assert!(listing.contains(", 0.5, "), "{listing}");
    assert!(!writable(&fx, "pixel.asm") && writable(&fx, "pixel.hlsl"));
    let key = fx.key("pixel.asm");
    let said = fx
        .archive
        .apply(&Edit::Write {
            key,
            data: listing.as_bytes(),
        })
        .err()
        .unwrap();
    assert!(
        matches!(&said, ViewError::NotPermitted(m) if m.contains("edit pixel.hlsl")),
        "{said}"
    );
    // A global given as an argument stays a constant, under its own name.
    let table = ConstantTable::from_bytecode(&fx.read("pixel.psLit.pso").unwrap())
        .unwrap()
        .unwrap();
    let names: Vec<&str> = table.constants.iter().map(|c| c.name.as_str()).collect();
    assert!(
        names.contains(&"fGlow") && names.contains(&"vTint"),
        "{names:?}"
    );

    // The source is the function's text, and its line's end; both shaders of ps_main
    // show it.
    let start = SM2.find("float4 ps_main(").unwrap();
    let end = start + SM2[start..].find("}\n").unwrap() + 2;
    assert_eq!(fx.text("pixel.hlsl"), &SM2[start..end]);
    assert_eq!(fx.text("pixel.psLit.hlsl"), &SM2[start..end]);
    assert!(fx.text("vertex.hlsl").starts_with("VS_OUT vs_main("));
}

/// `compile ps_2_0 f(0.5)` is f with its uniform parameter 0.5: the shader behaves as the
/// same function compiled on its own with the value written in.
#[test]
fn the_arguments_of_a_compile_are_the_uniform_parameters() {
    let effect = "Texture Tex0;\nconst string inputStreamFormat = \"PosprojTex1\";\n\
sampler2D s = sampler_state { Texture = <Tex0>; };\n\
float4 shade(uniform float k, float2 uv : TEXCOORD0, uniform float3 tint = float3(1, 0.5, 0)) : COLOR\n\
{\n    return tex2D(s, uv) * k + float4(tint, 1);\n}\n\
Technique T0 { Pass P0 { VertexShader = null; PixelShader = compile ps_2_0 shade(0.75); } }\n";
    let fx = open(effect.as_bytes());
    let ours = fx.read("pixel.pso").unwrap();
    let alone = "sampler2D s;\nfloat4 main(float2 uv : TEXCOORD0) : COLOR\n\
{\n    return tex2D(s, uv) * 0.75 + float4(float3(1, 0.5, 0), 1);\n}\n";
    let options = Options {
        profile: "ps_2_0".into(),
        ..Options::default()
    };
    let want = compile("alone.hlsl", alone, None, &options)
        .unwrap()
        .bytecode;
    same_behaviour(&want, &ours, 32, 3).unwrap();
    assert_eq!(
        json(&fx)["shaders"][0]["hlsl"]["arguments"],
        serde_json::json!(["0.75"])
    );

    // Too many arguments, too few: refused on the compile statement, as D3DX does.
    for (args, n) in [("shade(0.75, float3(1, 1, 1), 2)", 3), ("shade()", 0)] {
        let bad = effect.replace("shade(0.75)", args);
        let said = refused(fx.save("effect.fx", bad.as_bytes()));
        let line = line_of(&bad, "PixelShader = compile");
        let column = bad.lines().nth(line - 1).unwrap().find(args).unwrap() + 1;
        assert!(
            said.contains(&format!(
                ":{line}:{column}: pixel shader shade (ps_2_0): 'shade': function does not \
                 take {n} parameter"
            )),
            "{said}"
        );
    }
}

#[test]
fn compile_errors_are_refused_at_their_place_in_the_sha() {
    let fx = open(SM2.as_bytes());
    let body = line_of(SM2, "return base * tint;");
    let hlsl_line = body - line_of(SM2, "float4 ps_main(") + 1;

    // In the function's text: the line and column in the .sha, and in pixel.hlsl.
    let bad = SM2.replace("return base * tint;", "return base.rgb * tint.rgb;");
    let said = refused(fx.save("effect.fx", bad.as_bytes()));
    assert!(
        said.contains(&format!(
            ".sha:{body}:18: pixel shader ps_main: cannot convert from 'float3' to 'float4' \
             (pixel.hlsl:{hlsl_line}:18)"
        )),
        "{said}"
    );
    assert_eq!(
        said.lines().count(),
        1,
        "said once for both profiles: {said}"
    );

    // An argument of the wrong type: on the compile statement.
    let bad = SM2.replace("vs_main(1.0f)", "vs_main(sBase)");
    let said = refused(fx.save("effect.fx", bad.as_bytes()));
    let line = line_of(SM2, "VertexShader = compile vs_2_0");
    assert!(
        said.contains(&format!(":{line}:33: vertex shader vs_main (vs_2_0): ")),
        "{said}"
    );

    // More than ps_2_0 holds: the limit, and that the game could not create it.
    let bad = SM2.replace(
        "float4 base = tex2D(sBase, uv) * colour;",
        "float4 base = 0;\n\tfor (int i = 0; i < 40; i++)\n\t\tbase += tex2D(sBase, uv + i * 0.01f) * colour;",
    );
    let said = refused(fx.save("effect.fx", bad.as_bytes()));
    assert!(
        said.contains("pixel shader ps_main (ps_2_0): the compiled code does not fit ps_2_0")
            && said.contains("Direct3D 9's shader validator refuses the shader"),
        "{said}"
    );

    // An effect on disk with such an error mounts: the problem is listed, the views of
    // the shader read as EIO with it, the others still read.
    let broken = open(
        SM2.replace("o.colour = colour;", "o.color = colour;")
            .as_bytes(),
    );
    let problems = broken.archive.problems();
    let line = line_of(SM2, "o.colour = colour;");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(
        (problems[0].line, problems[0].column),
        (Some(line), Some(3))
    );
    assert_eq!(problems[0].path.as_deref(), Some("vertex.hlsl"));
    assert!(problems[0].message.contains("'color'"), "{problems:?}");
    for view in ["vertex.vso", "vertex.asm", "vertex.vs_main.vso"] {
        match broken.read(view) {
            Err(ViewError::Corrupt(m)) => assert!(m.contains(&problems[0].message), "{m}"),
            other => panic!("{view}: {other:?}"),
        }
    }
    assert!(broken.read("pixel.pso").is_ok());
    assert!(json(&broken)["problems"][0]
        .as_str()
        .unwrap()
        .contains(&format!(".sha:{line}:3: vertex shader vs_main: ")));
}

#[test]
fn saving_a_function_edits_the_effect_in_place() {
    let fx = open(SM2.as_bytes());
    let source = fx.text("pixel.hlsl");

    // The same text: the same effect, byte for byte.
    assert_eq!(
        fx.save("pixel.hlsl", source.as_bytes()).unwrap(),
        SM2.as_bytes()
    );
    // An edit: only its bytes change, and the effect is checked and compiled again.
    let edited = source.replace("return base * tint;", "return base * tint * 2.0f;");
    let saved = fx.save("pixel.hlsl", edited.as_bytes()).unwrap();
    assert_eq!(
        String::from_utf8(saved.clone()).unwrap(),
        SM2.replace("return base * tint;", "return base * tint * 2.0f;")
    );
    let again = open(&saved);
    assert_eq!(again.text("pixel.hlsl"), edited);
    assert_ne!(
        again.read("pixel.pso").unwrap(),
        fx.read("pixel.pso").unwrap()
    );
    // A helper added before the function stays in the effect; the view shows the function.
    let helped = format!(
        "float4 twice(float4 c)\n{{\n\treturn c * 2;\n}}\n\n{}",
        edited
    );
    let saved = fx.save("pixel.hlsl", helped.as_bytes()).unwrap();
    let again = open(&saved);
    assert_eq!(again.text("pixel.hlsl"), edited);
    assert!(String::from_utf8(saved).unwrap().contains("float4 twice("));

    // Broken: refused with the line and column in the effect and in the view.
    let broken = source.replace("return base * tint;", "return base * ;");
    let said = refused(fx.save("pixel.hlsl", broken.as_bytes()));
    let line = line_of(SM2, "return base * tint;");
    let hlsl_line = line - line_of(SM2, "float4 ps_main(") + 1;
    assert!(said.contains(&format!(".sha:{line}:")), "{said}");
    assert!(
        said.contains(&format!("(pixel.hlsl:{hlsl_line}:")),
        "{said}"
    );
    // A brace too few or too many breaks the effect around the function; a declaration
    // left open would take in what follows it.
    let open_ended = source.trim_end().strip_suffix('}').unwrap();
    let said = refused(fx.save("pixel.hlsl", open_ended.as_bytes()));
    assert!(said.contains("bracket is never closed"), "{said}");
    let said = refused(fx.save("pixel.hlsl", format!("{source}}}\n").as_bytes()));
    assert!(
        said.contains(&format!(":{}:1: ", line + 2)) && said.contains("'}'"),
        "{said}"
    );
    let said = refused(fx.save("pixel.hlsl", format!("{source}float4 k =\n").as_bytes()));
    assert!(said.contains("runs out of what pixel.hlsl holds"), "{said}");
    // The effect compiles ps_main: a save must define it.
    let said = refused(fx.save(
        "pixel.hlsl",
        source.replace("ps_main(", "ps_lit(").as_bytes(),
    ));
    assert!(said.contains("no definition of 'ps_main'"), "{said}");
}

#[test]
fn an_asm_vertex_shader_beside_an_hlsl_pixel_shader() {
    let fx = open(POST.as_bytes());
    assert!(writable(&fx, "vertex.asm") && !writable(&fx, "pixel.asm"));
    // The asm shader's HLSL is its block decompiled.
    let vso = fx.read("vertex.vso").unwrap();
    assert_eq!(fx.text("vertex.hlsl"), decompile(&vso).unwrap());
    assert!(writable(&fx, "vertex.hlsl"));
    assert_eq!(version(&fx.read("vertex.vso").unwrap()), "vs_1_1");
    assert_eq!(version(&fx.read("pixel.pso").unwrap()), "ps_2_0");
    let json = json(&fx);
    assert!(json["shaders"][0].get("hlsl").is_none());
    assert_eq!(json["shaders"][1]["hlsl"]["function"], "shade");
    // A save of the asm block still checks the HLSL shader, and keeps it.
    let saved = fx
        .save("vertex.asm", fx.text("vertex.asm").as_bytes())
        .unwrap();
    assert_eq!(saved, POST.as_bytes());
    let bad = POST.replace("* vDiff;", "* vDif;");
    let said = refused(fx.save("effect.fx", bad.as_bytes()));
    assert!(said.contains("vDif"), "{said}");
}

/// Shader model 1: the effect's vs_1_1 and ps_1_1 shaders compile like the others. No
/// shader is left unchecked, and the ps_1_1 shader's views hold its code, which behaves
/// as D3DX's (`compiled_views_behave_as_d3dxs` compares them on random inputs); the
/// vs_1_1 shader's source is edited and saved.
#[test]
fn shader_model_1_shaders_compile() {
    let fx = open(FULL.as_bytes());
    let json = json(&fx);
    for s in json["shaders"].as_array().unwrap() {
        assert!(s["hlsl"].get("not_compiled").is_none(), "{s}");
    }
    assert_eq!(json["problems"], serde_json::json!([]));
    assert!(fx.archive.problems().is_empty());
    assert!(fx.archive.unchecked().is_empty());
    let simple = fx.read("pixel.ps_simple.pso").unwrap();
    assert_eq!(version(&simple), "ps_1_1");
    let golden = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/archive/sha/fx-verdicts/compiled/hlsl_full.ps_1_1.pso"),
    )
    .unwrap();
    same_behaviour(&golden, &simple, 32, 11).unwrap();
    assert!(fx.text("pixel.ps_simple.asm").contains("tex t0"));
    // The vs_1_1 and ps_2_0 shaders of the same effect compile.
    assert_eq!(version(&fx.read("vertex.vso").unwrap()), "vs_1_1");
    assert!(fx.text("vertex.asm").contains("vs_1_1"));
    assert_eq!(version(&fx.read("pixel.pso").unwrap()), "ps_2_0");
    // The source reads, a save compiles it, and one that does not compile is refused.
    let source = fx.text("vertex.hlsl");
    assert!(source.starts_with("VS_OUT vs_main("));
    let edited = source.replace("o.uv = uv * kScale[2];", "o.uv = uv * kScale[1];");
    assert!(fx.save("vertex.hlsl", edited.as_bytes()).is_ok());
    let said = refused(
        fx.save(
            "vertex.hlsl",
            source
                .replace("mul(pos, mWorld)", "mul(pos, mWrld)")
                .as_bytes(),
        ),
    );
    assert!(said.contains("mWrld"), "{said}");
}

const ASM: &str = include_str!("fx-verdicts/own/sm2_sm3.sha");
/// `ASM` with `PS` written to `pixel.hlsl`, as shaderfs writes it (D3DX accepts it:
/// `own/written_hlsl` in the verdicts).
const WRITTEN: &str = include_str!("fx-verdicts/own/written_hlsl.sha");
const PS: &str = "sampler2D s0 : register(s0);\nfloat4 tint : register(c3);\n\n\
float4 main(float2 uv : TEXCOORD0) : COLOR\n{\n    return tex2D(s0, uv) * tint * 2;\n}\n";

impl Opened {
    /// Writes a file as a new one, as `mv` from another file system does once it has
    /// removed the one there.
    fn create(&self, name: &str, data: &[u8]) -> Result<Vec<u8>, ViewError> {
        self.archive
            .new_member("", name)
            .map_err(ViewError::NotPermitted)?;
        let rewrite = self.archive.apply(&Edit::Create {
            dir: "",
            name,
            data,
            position: None,
        })?;
        Ok(rewrite.to_vec(&self.text))
    }
}

#[test]
fn hlsl_written_to_an_asm_shader_is_compiled_into_its_block_and_kept() {
    let fx = open(ASM.as_bytes());
    // Before: the block decompiled, which saved as it reads changes nothing.
    let decompiled = decompile(&fx.read("pixel.pso").unwrap()).unwrap();
    assert_eq!(fx.text("pixel.hlsl"), decompiled);
    assert_eq!(
        fx.save("pixel.hlsl", decompiled.as_bytes()).unwrap(),
        ASM.as_bytes()
    );
    let saved = fx.save("pixel.hlsl", PS.as_bytes()).unwrap();
    assert_eq!(String::from_utf8(saved.clone()).unwrap(), WRITTEN);
    // Written as a new file, the same.
    assert_eq!(fx.create("pixel.hlsl", PS.as_bytes()).unwrap(), saved);
    // Only the block and the lines above its variable changed.
    let before = ASM.find("pixelshader ps2").unwrap();
    assert_eq!(&WRITTEN[..before], &ASM[..before]);
    let after = ASM.find("pixelshader ps14").unwrap();
    assert_eq!(
        &WRITTEN[WRITTEN.len() - (ASM.len() - after)..],
        &ASM[after..]
    );

    // The next mount reads the source back, and the block is its code.
    let fx = open(&saved);
    assert_eq!(fx.text("pixel.hlsl"), PS);
    assert!(writable(&fx, "pixel.hlsl") && writable(&fx, "pixel.asm"));
    assert_eq!(json(&fx)["shaders"][1]["kept_hlsl"], "pixel.hlsl");
    let options = Options {
        profile: "ps_2_0".into(),
        ..Options::default()
    };
    let alone = compile("ps.hlsl", PS, None, &options).unwrap().bytecode;
    // An asm block has no constant table (D3DX's assembler writes none; the game sets
    // registers): ours gets the one the source compiled to, to be run by its names.
    let table = ctab::find_ctab(&alone).unwrap().unwrap().payload;
    let ours = ctab::replace_ctab(&fx.read("pixel.pso").unwrap(), &alone[table]).unwrap();
    same_behaviour(&alone, &ours, 32, 5).unwrap();
    // The same source again: no change. Another: the comment and block replaced.
    assert_eq!(fx.save("pixel.hlsl", PS.as_bytes()).unwrap(), saved);
    let brighter = PS.replace("* 2;", "* 4;");
    let again = open(&fx.save("pixel.hlsl", brighter.as_bytes()).unwrap());
    assert_eq!(again.text("pixel.hlsl"), brighter);
    assert_eq!(
        again
            .text("effect.fx")
            .matches("// shaderfs hlsl end")
            .count(),
        1
    );

    // An edit of the block's comments keeps the source; one of its code drops it.
    let asm = fx.text("pixel.asm");
    let commented = asm.replace("\t\tps_2_0\n", "\t\tps_2_0\n\t\t// tuned\n");
    let kept = open(&fx.save("pixel.asm", commented.as_bytes()).unwrap());
    assert_eq!(kept.text("pixel.hlsl"), PS);
    let recoded = asm.replace("add r0, r0, r0", "mul r0, r0, r0");
    assert_ne!(recoded, asm);
    let dropped = fx.save("pixel.asm", recoded.as_bytes()).unwrap();
    let comment =
        WRITTEN.find("// shaderfs hlsl:").unwrap()..WRITTEN.find("pixelshader ps2").unwrap();
    let mut want = WRITTEN.replace("add r0, r0, r0", "mul r0, r0, r0");
    want.replace_range(comment, "");
    assert_eq!(String::from_utf8(dropped).unwrap(), want);
    // Removing pixel.hlsl removes the source and leaves the code, decompiled.
    let removed = fx
        .archive
        .apply(&Edit::Remove {
            key: fx.key("pixel.hlsl"),
        })
        .unwrap()
        .to_vec(&saved);
    let removed = open(&removed);
    assert_eq!(removed.text("pixel.asm"), asm);
    let code = removed.read("pixel.pso").unwrap();
    assert_eq!(removed.text("pixel.hlsl"), decompile(&code).unwrap());
}

#[test]
fn hlsl_an_asm_shader_cannot_take_is_refused() {
    let fx = open(ASM.as_bytes());
    let said = refused(fx.create(
        "pixel.hlsl",
        b"float4 main() : COLOR\n{\n    return 1 + ;\n}\n",
    ));
    assert!(said.starts_with("pixel.hlsl(3,"), "{said}");
    let said = refused(fx.create(
        "pixel.hlsl",
        b"float4 a() : COLOR { return 0; }\nfloat4 b() : COLOR { return 1; }\n",
    ));
    assert!(said.contains("name the entry point main"), "{said}");
    // Zack's names are entry points too.
    assert!(fx
        .create(
            "pixel.hlsl",
            b"float4 f() { return 0.5; }\nfloat4 psMain() : COLOR { return f(); }\n"
        )
        .is_ok());
    // A name that is no shader's, or a shader that keeps a source already.
    assert!(fx.archive.new_member("", "pixel.ps9.hlsl").is_err());
    let written = open(WRITTEN.as_bytes());
    assert!(written.archive.new_member("", "pixel.hlsl").is_err());
    // Shader model 1: the save compiles into the ps.1.4 block as the ps_2_0 one above
    // does, the source kept above it.
    let saved = fx
        .create(
            "pixel.ps14.hlsl",
            b"float4 main() : COLOR { return 0.5; }\n",
        )
        .unwrap();
    let saved = String::from_utf8(saved).unwrap();
    assert!(
        saved.contains("// shaderfs hlsl: the source of the asm block below (ps_1_4, main)"),
        "{saved}"
    );
    let reopened = open(saved.as_bytes());
    assert_eq!(
        reopened.text("pixel.ps14.hlsl"),
        "float4 main() : COLOR { return 0.5; }\n"
    );
    let code = reopened.read("pixel.ps14.pso").unwrap();
    assert_eq!(version(&code), "ps_1_4");
    let ran = crate::shader::d3d9::run::Program::new(&code)
        .unwrap()
        .run(&crate::shader::d3d9::run::Inputs::default())
        .unwrap();
    assert_eq!(
        ran.values[&crate::shader::d3d9::run::OutputRegister::Target(0)],
        [0.5; 4]
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

    /// Random damage to an HLSL effect: every view reads or fails with a reason, the
    /// problems and what is not checked are listed, a save of the function is judged;
    /// nothing panics.
    #[test]
    fn damaged_hlsl_effects_never_panic(
        flips in proptest::collection::vec((0usize..4096, proptest::prelude::any::<u8>()), 1..8),
        cut in 0usize..4096,
    ) {
        let mut text = SM2.as_bytes().to_vec();
        for (at, value) in flips {
            let at = at % text.len();
            text[at] = value;
        }
        text.truncate(cut.min(text.len()));
        let fx = open(&text);
        let _ = fx.archive.problems();
        let _ = fx.archive.unchecked();
        let _ = fx.archive.unshown();
        for p in fx.paths() {
            if p.contains('.') {
                let _ = fx.read(&p);
            }
        }
        if fx.paths().contains(&"pixel.hlsl".to_string()) {
            if let Ok(source) = fx.read("pixel.hlsl") {
                let _ = fx.save("pixel.hlsl", &source);
            }
        }
    }
}

/// An effect of many `compile`s of a large text is compiled as far as the budget goes;
/// the shaders past it are listed as not checked, not compiled at the daemon's expense.
#[test]
fn a_hostile_number_of_compiles_is_bounded() {
    let mut text = String::from("float4 f(uniform float k) : COLOR { return k; }\n// padding\n");
    // Each shader compiles the whole text: make it large.
    let pad = super::hlsl::BUDGET / 40;
    text.push_str(&format!("/*{}*/\n", " ".repeat(pad)));
    for i in 0..60 {
        text.push_str(&format!(
            "technique T{i} {{ pass P0 {{ PixelShader = compile ps_2_0 f({i}); }} }}\n"
        ));
    }
    let fx = open(text.as_bytes());
    let unchecked = fx.archive.unchecked();
    assert!((20..=22).contains(&unchecked.len()), "{}", unchecked.len());
    assert!(
        unchecked[0]
            .message
            .contains("shaderfs compiles the first 39 HLSL shaders"),
        "{}",
        unchecked[0].message
    );
    assert!(fx.archive.problems().is_empty());
}

/// A compile whose function or profile is a `#define`d name (D3DX expands it) is not
/// followed yet: not checked, never refused for it.
#[test]
fn a_compile_through_a_macro_is_not_checked() {
    let text = "#define SHADE shade\n#define PROFILE ps_2_0\nTexture Tex0;\n\
const string inputStreamFormat = \"PosprojTex1\";\n\
sampler2D s = sampler_state { Texture = <Tex0>; };\n\
float4 shade(float2 uv : TEXCOORD0) : COLOR { return tex2D(s, uv); }\n\
Technique T0 { Pass P0 { VertexShader = null; PixelShader = compile ps_2_0 SHADE(); } }\n\
Technique T1 { Pass P0 { VertexShader = null; PixelShader = compile PROFILE shade(); } }\n";
    let fx = open(text.as_bytes());
    assert!(fx.archive.problems().is_empty());
    let unchecked: Vec<String> = fx
        .archive
        .unchecked()
        .into_iter()
        .map(|p| p.message)
        .collect();
    assert_eq!(unchecked.len(), 2, "{unchecked:?}");
    assert!(unchecked[0].contains("'SHADE' is a macro"), "{unchecked:?}");
    assert!(
        unchecked[1].contains("'PROFILE' is a macro"),
        "{unchecked:?}"
    );
}

/// A bump-mapping block (`bem`, whose matrix is texture-stage state) shows as HLSL with
/// its texture stage in `asm { }`; saved as it reads it changes nothing; an edit of the
/// arithmetic compiles into the block with the texture stage as it was.
#[test]
fn a_bump_mapping_block_decompiles_with_its_texture_stage_as_asm_and_saves() {
    let bumped = ASM.replace(
        "ps.1.4\n\t\ttexld\tr0, t0\n\t\tmul\tr0, r0, c3\n",
        "ps.1.4\n\t\ttexld\tr0, t0\n\t\ttexcrd\tr1.rgb, t1\n\t\tbem\tr2.rg, r1, r0\n\t\tphase\n\t\ttexld\tr2, r2\n\t\tmul\tr0, r2, c3\n",
    );
    assert_ne!(bumped, ASM);
    let fx = open(bumped.as_bytes());
    let shown = fx.text("pixel.ps14.hlsl");
    assert_eq!(
        shown,
        decompile(&fx.read("pixel.ps14.pso").unwrap()).unwrap()
    );
    assert!(
        shown.contains("bem r2.xy, r1, r0\n        phase\n"),
        "{shown}"
    );
    assert_eq!(
        fx.save("pixel.ps14.hlsl", shown.as_bytes()).unwrap(),
        bumped.as_bytes()
    );
    let brighter = shown.replace("oC0 = r2 * c3;", "oC0 = r2 * c3 * 2;");
    assert_ne!(brighter, shown);
    let saved = open(&fx.save("pixel.ps14.hlsl", brighter.as_bytes()).unwrap());
    assert_eq!(saved.text("pixel.ps14.hlsl"), brighter);
    let block = saved.text("pixel.ps14.asm");
    let code: Vec<&str> = block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with("def"))
        .collect();
    assert_eq!(
        &code[..6],
        [
            "ps_1_4",
            "texld r0, t0",
            "texcrd r1.xyz, t1",
            "bem r2.xy, r1, r0",
            "phase",
            "texld r2, r2"
        ],
        "{block}"
    );
}

/// Every asm shader has its `.hlsl` view before it keeps a source: its block assembled
/// and decompiled, rendered when read. Saved as it reads it changes nothing; a block that
/// does not assemble, or does not decompile, is a view that cannot be read, with the
/// reason, and nothing else of the effect is; a block no HLSL says shows as asm.
#[test]
fn asm_shaders_show_their_blocks_decompiled() {
    let fx = open(ASM.as_bytes());
    for stem in ["vertex", "pixel", "pixel.ps14", "vertex.vs3", "pixel.ps3"] {
        let (view, ext) = (format!("{stem}.hlsl"), &stem[..1]);
        let code = fx.read(&format!("{stem}.{ext}so")).unwrap();
        let entry = fx.archive.entries().into_iter().find(|e| e.path == view);
        assert!(
            matches!(
                entry.unwrap().kind,
                EntryKind::File {
                    size: None,
                    writable: true,
                    ..
                }
            ),
            "{view}: rendered when read, and writable"
        );
        let shown = decompile(&code).unwrap_or_else(|e| panic!("{view}: {e}"));
        assert_eq!(fx.text(&view), shown, "{view}");
        assert_eq!(
            fx.save(&view, shown.as_bytes()).unwrap(),
            ASM.as_bytes(),
            "{view}"
        );
    }
    assert!(fx.archive.unshown().is_empty());

    // A block that does not assemble: its .hlsl fails as its .pso does.
    let broken = ASM.replace("mul\tr0, r0, c3\n\t\tmov", "mul\tr0, r0, c99\n\t\tmov");
    assert_ne!(broken, ASM);
    let fx = open(broken.as_bytes());
    let pso = fx.read("pixel.pso").unwrap_err().to_string();
    let hlsl = fx.read("pixel.hlsl").unwrap_err();
    assert!(matches!(hlsl, ViewError::Corrupt(_)), "{hlsl}");
    assert_eq!(hlsl.to_string(), pso);
    assert!(fx.read("vertex.hlsl").is_ok());
    assert!(fx.archive.unshown().is_empty(), "a problem, not a limit");

    // A block no HLSL says (inputs read at aL from a register no dcl declares): its
    // view is the block's instructions in an asm block, which saves as it reads with no
    // change, and an edit of it is the new block.
    let looped = ASM.replace(
        "m4x4\to0, v0, c0\n",
        "mov\tr0, c0\n\t\tloop\taL, i0\n\t\tadd\tr0, r0, v5[aL]\n\t\tendloop\n\t\tmov\to0, r0\n",
    );
    assert_ne!(looped, ASM);
    let fx = open(looped.as_bytes());
    let shown = fx.text("vertex.vs3.hlsl");
    assert!(
        shown.contains("from v5, which no dcl declares")
            && shown.contains("            add r0, r0, v5[aL]\n"),
        "{shown}"
    );
    assert_eq!(
        fx.save("vertex.vs3.hlsl", shown.as_bytes()).unwrap(),
        looped.as_bytes()
    );
    let doubled = shown.replace("        mov o0, r0\n", "        add o0, r0, r0\n");
    assert_ne!(doubled, shown);
    let saved = open(&fx.save("vertex.vs3.hlsl", doubled.as_bytes()).unwrap());
    assert_eq!(saved.text("vertex.vs3.hlsl"), doubled);
    assert!(
        saved.text("vertex.vs3.asm").contains("add o0, r0, r0"),
        "{}",
        saved.text("vertex.vs3.asm")
    );
    assert!(fx.archive.unshown().is_empty());
    assert!(fx.archive.problems().is_empty());
}
