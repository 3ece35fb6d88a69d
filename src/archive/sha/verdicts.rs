//! `shaderfs check` against Microsoft's effect compiler: every effect of the corpus, a
//! few of our own (`fx-verdicts/own/`) and the mutants of them that
//! `fx-verdicts/mutants.json` describes, each with the verdict of D3DX's effect compiler
//! (`msd3d fx FILE OUT d3dx9_31.dll`) kept in `fx-verdicts/verdicts-d3dx9_31.txt` by
//! `fx-verdicts/make-goldens`. `check` must refuse what D3DX refuses, with a problem on
//! the line D3DX names, and accept what it accepts, except for the deliberate
//! differences listed here by name, whose messages say why the game fails anyway.
//!
//! The mutants are made at test time from the corpus (which is not copied into the
//! repository): each is one edit, the `nth` occurrence of `find` replaced by `replace`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::tests::open;

fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/archive/sha/fx-verdicts")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    /// A corpus file (`demo_car_body.sha`) or one of ours (`own/asm_states.sha`).
    file: String,
    find: Option<String>,
    #[serde(default = "first")]
    nth: usize,
    replace: Option<String>,
}

fn first() -> usize {
    1
}

/// What D3DX said of an effect.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    Accepted,
    /// The line of its first message (0: none), and the message.
    Refused(usize, String),
}

fn verdicts(dll: &str) -> BTreeMap<String, Verdict> {
    let path = here().join(format!("verdicts-{dll}.txt"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let fields: Vec<&str> = line.split('\t').collect();
        let verdict = match fields.as_slice() {
            [_, "ok"] => Verdict::Accepted,
            [_, "refused", at, message] => {
                Verdict::Refused(at.parse().unwrap(), message.to_string())
            }
            _ => panic!("{}: bad line {line:?}", path.display()),
        };
        assert!(
            out.insert(fields[0].to_string(), verdict).is_none(),
            "{}: {} twice",
            path.display(),
            fields[0]
        );
    }
    out
}

fn entries() -> Vec<Entry> {
    let path = here().join("mutants.json");
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// The entry's effect text, or `None` when it is made from the corpus and there is none.
fn effect_text(entry: &Entry, corpus: Option<&Path>) -> Option<Vec<u8>> {
    let path = match entry.file.strip_prefix("own/") {
        Some(own) => here().join("own").join(own),
        None => corpus?.join(&entry.file),
    };
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let Some(find) = &entry.find else {
        return Some(text);
    };
    let replace = entry.replace.as_deref().unwrap_or("");
    let find = find.as_bytes();
    let mut at = None;
    let mut from = 0;
    for _ in 0..entry.nth {
        let found = text[from..]
            .windows(find.len())
            .position(|w| w == find)
            .map(|p| from + p)
            .unwrap_or_else(|| {
                panic!(
                    "{}: {:?} is not in {} (the file changed?)",
                    entry.id,
                    String::from_utf8_lossy(find),
                    entry.file
                )
            });
        at = Some(found);
        from = found + 1;
    }
    let at = at.unwrap();
    let mut out = text[..at].to_vec();
    out.extend_from_slice(replace.as_bytes());
    out.extend_from_slice(&text[at + find.len()..]);
    Some(out)
}

/// What the message of a block D3DX's assembler takes but Direct3D's validator refuses
/// says (`check::VALIDATOR`).
const VALIDATOR: &str = "Direct3D 9's shader validator refuses the shader";

/// Where D3DX accepts and `check` refuses, on purpose, and what the message says of why
/// the game fails anyway. msd3d runs D3DX under Wine, whose d3d9.dll has a shader
/// validator that accepts every shader (`msd3d asm` assembles `mov r0.xy, t0` in ps_1_3,
/// which Microsoft's validator refuses): D3DX's own assembler takes these blocks, and
/// Direct3D 9 refuses them when the game creates the shader (on Windows, D3DX's own
/// validation already does). Each is a rule of `validate.rs`.
const DELIBERATE: &[(&str, &str)] = &[
    // vs_1_1 reads v2 (the mutant swaps a source of the vertex shader) without a dcl.
    ("car_tire/ps-input-v2", VALIDATOR),
    ("pro_shear_dynamic/ps-input-v2", VALIDATOR),
    ("pro_skin/vs-dcl-dropped", VALIDATOR),
    ("own/sm2_sm3/vs-dcl-dropped", VALIDATOR),
    ("own/sm2_sm3/ps2-no-dcl-sampler", VALIDATOR),
    // A temporary read before anything writes it.
    ("car_tire/vs-temp-r11", VALIDATOR),
    ("car_lights/vs-temp-r11", VALIDATOR),
    ("car_tire/vs-read-unwritten", VALIDATOR),
    ("car_lights/vs-read-unwritten", VALIDATOR),
    ("post_copy/ps-read-r1-unwritten", VALIDATOR),
    ("pro_shear_dynamic/ps-no-r0-write", VALIDATOR),
    // ps_1_4: a phase leaves the alpha of what texld wrote before it undefined.
    ("own/sm2_sm3/ps14-phase", VALIDATOR),
    // The outputs a model must write.
    ("pro_sunflare/vs-no-opos", VALIDATOR),
    ("own/asm_states/vs-no-opos", VALIDATOR),
    ("vertexcolor/ps-no-r0-write", VALIDATOR),
    ("own/sm2_sm3/ps2-oc0-dropped", VALIDATOR),
    // ps_1_x co-issue, write masks, instruction order and slots.
    ("own/asm_states/ps-coissue-rgb", VALIDATOR),
    ("car_lights/ps-coissue-rgb", VALIDATOR),
    ("post_box4/ps-mask-xy", VALIDATOR),
    ("post_copy/ps-tex-after-arith", VALIDATOR),
    ("post_copy/ps-too-many-arith", VALIDATOR),
    // HLSL: d3dx9_31's compiler unrolls a loop of 40 samples into a ps_2_0 of 41 texture
    // instructions (32 fit), which D3DX's effect compiler takes.
    ("own/hlsl_sm2/ps2-tex-in-loop", VALIDATOR),
];

/// Where D3DX refuses an HLSL shader that shaderfs's HLSL compiler takes: gaps of the
/// compiler (`src/shader/hlsl/`), each with what D3DX says. The test fails once the
/// compiler refuses one, so that it leaves this list.
const COMPILER_GAPS: &[(&str, &str)] = &[];

/// Where `check` refuses on another line than D3DX's first message, and why.
const OTHER_LINE: &[(&str, &str)] = &[
    (
        "own/hlsl_sm2/ps-returns-nothing",
        "a function that does not return its value on every path: D3DX's first line is the \
         pass that compiles it (73: 'There was an error compiling HLL shader parameter'), \
         check names the function's own (51:8: not all control paths return a value, fxc's \
         X3507, which d3dcompiler_43 places there too)",
    ),
    (
        "helloworld",
        "`mov r0, ` lacks its source on line 35; D3DX's assembler reads on past the line's \
         end and stops at the end of the block (line 37: 'unexpected end of file'); check \
         names the instruction's line",
    ),
    (
        "post_copy/ps-operand-dropped",
        "as helloworld: the operand missing on line 21, D3DX stops at the block's end",
    ),
];

#[test]
fn check_agrees_with_d3dx_on_every_effect_and_mutant() {
    let corpus = super::tests::corpus();
    let verdicts = verdicts("d3dx9_31");
    let entries = entries();
    let mut disagree = Vec::new();
    let (mut compared, mut skipped) = (0, 0);
    for entry in &entries {
        let Some(text) = effect_text(entry, corpus.as_deref()) else {
            skipped += 1;
            continue;
        };
        let want = verdicts
            .get(&entry.id)
            .unwrap_or_else(|| panic!("{}: no verdict (run make-goldens)", entry.id));
        compared += 1;
        let fx = open(&text);
        let problems = fx.archive.problems();
        let ours: Vec<String> = problems
            .iter()
            .map(|p| {
                format!(
                    "{}:{}: {}",
                    p.line.unwrap_or(0),
                    p.column.unwrap_or(0),
                    p.message
                )
            })
            .collect();
        let deliberate = DELIBERATE.iter().find(|(id, _)| *id == entry.id);
        let gap = COMPILER_GAPS.iter().any(|(id, _)| *id == entry.id);
        // An HLSL shader shaderfs cannot compile yet: neither refused nor passed.
        let unchecked = !fx.archive.unchecked().is_empty();
        match (want, problems.is_empty()) {
            (Verdict::Accepted, true) => {
                if deliberate.is_some() {
                    disagree.push(format!("{}: listed as deliberate but accepted", entry.id));
                }
            }
            (Verdict::Accepted, false) => match deliberate {
                Some((_, why)) if ours.iter().any(|m| m.contains(why)) => {}
                Some((_, why)) => disagree.push(format!(
                    "{}: deliberate, but no message says '{why}': {ours:?}",
                    entry.id
                )),
                None => disagree.push(format!(
                    "{}: D3DX accepts, check refuses: {ours:?}",
                    entry.id
                )),
            },
            (Verdict::Refused(..), true) if gap || unchecked => {}
            (Verdict::Refused(line, message), true) => disagree.push(format!(
                "{}: D3DX refuses ({line}: {message}), check accepts",
                entry.id
            )),
            (Verdict::Refused(..), false) if gap => disagree.push(format!(
                "{}: listed as a compiler gap, but check refuses it now: {ours:?}",
                entry.id
            )),
            (Verdict::Refused(line, message), false) => {
                let on_line = *line == 0 || problems.iter().any(|p| p.line == Some(*line));
                let excused = OTHER_LINE.iter().any(|(id, _)| *id == entry.id);
                if !on_line && !excused {
                    disagree.push(format!(
                        "{}: D3DX refuses at line {line} ({message}), check elsewhere: {ours:?}",
                        entry.id
                    ));
                }
            }
        }
    }
    for (id, _) in DELIBERATE.iter().chain(OTHER_LINE).chain(COMPILER_GAPS) {
        assert!(
            entries.iter().any(|e| e.id == *id),
            "{id} is listed but is no entry of mutants.json"
        );
    }
    let refused = verdicts
        .values()
        .filter(|v| matches!(v, Verdict::Refused(..)))
        .count();
    eprintln!(
        "{compared} effects compared with D3DX ({refused} of {} refused by it), {skipped} skipped \
         without the corpus, {} disagree",
        verdicts.len(),
        disagree.len()
    );
    assert!(
        disagree.is_empty(),
        "{} of {compared} disagree with D3DX:\n{}",
        disagree.len(),
        disagree.join("\n")
    );
}

/// Where another D3DX9 decides otherwise than d3dx9_31 on the entries it was run on
/// (`make-goldens DLL`: the originals, the bias family and every 8th), and why. `check`
/// follows d3dx9_31, the DLL Zack's validator asks for
/// (`D3DXSHADER_USE_LEGACY_D3DX9_31_DLL`).
const VERSIONS: &[(&str, &str, &str)] = &[
    (
        "d3dx9_43",
        "own/hlsl_full",
        "d3dx9_43 has no ps_1_x HLSL compiler (X3539); the effect compiles `ps_1_1 ps_simple()`",
    ),
    (
        "d3dx9_43",
        "own/hlsl_full/sampler-state-maxanisotropy-float",
        "as own/hlsl_full",
    ),
    (
        "d3dx9_43",
        "car_lights/vs-bare-name",
        "d3dx9_43 takes `VertexShader = vSdr;`, a shader variable without <>",
    ),
    (
        "d3dx9_43",
        "car_tire/vsconst-expression",
        "d3dx9_43 takes an expression, `float4(…) * 2`, as a state's value",
    ),
    (
        "d3dx9_43",
        "own/defines/null-vs-as-zero",
        "d3dx9_43 refuses 0 for a shader (`VertexShader = 0;`: \"Error in type checking\")",
    ),
    (
        "d3dx9_43",
        "own/asm_states/fallback-ps-zero",
        "as own/defines/null-vs-as-zero",
    ),
];

#[test]
fn other_d3dx9_versions_decide_as_d3dx9_31_but_where_listed() {
    let base = verdicts("d3dx9_31");
    for dll in ["d3dx9_24", "d3dx9_27", "d3dx9_43"] {
        let other = verdicts(dll);
        assert!(other.len() >= 90, "{dll}: only {} verdicts", other.len());
        // Every D3DX9 refuses the Zbias Zack's compiler writes.
        assert!(
            matches!(&other["decalpaint"], Verdict::Refused(64, m) if m.contains("Unrecognized state 'Zbias'")),
            "{dll}: {:?}",
            other["decalpaint"]
        );
        let mut differ: Vec<&str> = other
            .iter()
            .filter(|(id, v)| {
                let b = &base[id.as_str()];
                matches!(b, Verdict::Accepted) != matches!(v, Verdict::Accepted)
            })
            .map(|(id, _)| id.as_str())
            .collect();
        differ.sort();
        let mut listed: Vec<&str> = VERSIONS
            .iter()
            .filter(|(d, _, _)| *d == dll)
            .map(|(_, id, _)| *id)
            .collect();
        listed.sort();
        assert_eq!(differ, listed, "{dll} against d3dx9_31");
    }
}

/// Each HLSL shader of our effects, read from its bytecode view, against what D3DX's
/// effect compiler (d3dx9_31) made of it (`fx-verdicts/compiled/`, kept by
/// `make-compiled`): both run through the interpreter on the same random inputs and write
/// the same outputs. Every one must compile, shader model 1's too.
#[test]
fn compiled_views_behave_as_d3dxs() {
    let mut compared = Vec::new();
    for name in ["hlsl_full", "hlsl_post", "hlsl_sm2"] {
        let text = std::fs::read(here().join(format!("own/{name}.sha"))).unwrap();
        let fx = open(&text);
        let json: serde_json::Value =
            serde_json::from_slice(&fx.read("archive.json").unwrap()).unwrap();
        for shader in json["shaders"].as_array().unwrap() {
            let Some(hlsl) = shader.get("hlsl") else {
                continue;
            };
            let profile = hlsl["profile"].as_str().unwrap();
            let view = shader["bytecode"].as_str().unwrap();
            let ext = &view[view.len() - 3..];
            let golden = here().join(format!("compiled/{name}.{profile}.{ext}"));
            let golden = std::fs::read(&golden)
                .unwrap_or_else(|e| panic!("{}: {e} (run make-compiled)", golden.display()));
            let which = format!("{name}.sha {view} ({profile})");
            if let Some(why) = hlsl.get("not_compiled") {
                panic!("{which}: not compiled: {why}");
            }
            let ours = fx
                .read(view)
                .unwrap_or_else(|e| panic!("{which}: does not compile: {e}"));
            crate::shader::hlsl::behaviour::same_behaviour(&golden, &ours, 64, 7)
                .unwrap_or_else(|e| panic!("{which}: behaves otherwise than D3DX's: {e}"));
            compared.push(which);
        }
    }
    eprintln!("{} HLSL shaders behave as D3DX's", compared.len());
    assert!(compared.len() >= 7, "{compared:?}");
}
