//! Tests against the shared corpus (`../shared/corpus/d3d9/`, see its README): real
//! shaders from D3DX, fxc, Wine and vkd3d. Skipped with a message when the corpus is
//! absent, but a failure when `CI=true`.

use std::path::{Path, PathBuf};

use super::bytecode;

/// The corpus folder, or `None` (after saying why) when the test should be skipped.
pub(crate) fn corpus_dir() -> Option<PathBuf> {
    crate::test_corpus::corpus("d3d9")
}

/// Files of `sub` ending in `ext`, sorted.
pub(crate) fn files(dir: &Path, sub: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
        .unwrap_or_else(|e| panic!("{sub}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    v.sort();
    v
}

/// Every shader the corpus says is valid bytecode. Of the d3dx9 blobs, those whose token
/// walk the index reports as "ok": three more (`ctab_matrices2`, `ctab_arrays`,
/// `ctab_with_default_values`) are CTAB test data whose comment overruns the shader, which
/// D3DX's CTAB lookup tolerates but a shader parser must not.
pub(crate) fn valid_shaders(dir: &Path) -> Vec<PathBuf> {
    let mut v = files(dir, "compiled", ".bin");
    v.extend(files(dir, "fxc-listings", ".vso"));
    v.extend(files(dir, "fxc-listings", ".pso"));
    v.extend(files(dir, "asm", ".bin"));
    v.extend(files(dir, "wine-tests/asm", ".bin"));
    v.extend(files(dir, "wine-tests/visual", ".bin"));
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("wine-tests/d3dx9/index.json")).unwrap())
            .unwrap();
    for blob in index["blobs"].as_array().unwrap() {
        if blob["token_walk"] == "ok" {
            v.push(
                dir.join("wine-tests/d3dx9")
                    .join(blob["file"].as_str().unwrap()),
            );
        }
    }
    v
}

#[test]
fn corpus_walks_and_round_trips() {
    let Some(dir) = corpus_dir() else { return };
    let shaders = valid_shaders(&dir);
    assert!(shaders.len() > 300, "{}", shaders.len());
    for path in shaders {
        let bytes = std::fs::read(&path).unwrap();
        let shader = bytecode::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(shader.encode(), bytes, "{}", path.display());
        for i in shader.instructions() {
            assert!(i.operands.is_some(), "{}: {:?}", path.display(), i);
        }
    }
}

#[test]
fn corpus_invalid_blobs_are_refused() {
    let Some(dir) = corpus_dir() else { return };
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("wine-tests/d3dx9/index.json")).unwrap())
            .unwrap();
    let mut refused = 0;
    for blob in index["blobs"].as_array().unwrap() {
        if blob["token_walk"] != "ok" {
            let bytes = std::fs::read(
                dir.join("wine-tests/d3dx9")
                    .join(blob["file"].as_str().unwrap()),
            )
            .unwrap();
            assert!(bytecode::parse(&bytes).is_err(), "{}", blob["file"]);
            refused += 1;
        }
    }
    assert!(refused >= 13, "{refused}");
}

#[test]
fn corpus_prefixes_are_refused() {
    let Some(dir) = corpus_dir() else { return };
    for path in files(&dir, "wine-tests/visual", ".bin") {
        let bytes = std::fs::read(&path).unwrap();
        for n in 0..bytes.len() {
            assert!(
                bytecode::parse(&bytes[..n]).is_err(),
                "{} prefix {n}",
                path.display()
            );
        }
    }
}

#[test]
fn corpus_disassembles_without_raw_tokens() {
    let Some(dir) = corpus_dir() else { return };
    let mut raw = Vec::new();
    for path in valid_shaders(&dir) {
        let text = super::disasm::disassemble(&std::fs::read(&path).unwrap()).unwrap();
        if text.contains(super::disasm::RAW_TOKENS) {
            raw.push(path.display().to_string());
        }
    }
    assert!(raw.is_empty(), "raw tokens in {raw:?}");
}

fn read_text(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned()
}

/// Valid-bytecode corpus shaders that break a documented rule of their model, with the
/// refusal each gets. Validation must refuse these; unvalidated they still round-trip.
/// - vkd3d-shader 1.6 output (README of `compiled/`: "immature"): temporaries beyond r11
///   in vs_1_1/vs_2_0, 77 arithmetic slots in a ps_2_0 (limit 64; `h18`, whose `.xyzx`
///   swizzle breaks the next rule as well), arbitrary source swizzles in ps_2_0, which has
///   only `.xyzw`, the replicates, `.yzxw`, `.zxyw`, `.wzyx` ("Source Register
///   Swizzling"; arbitrary swizzles are a ps_2_x feature), `mov oDepth.x` (oDepth takes
///   no write mask, `…-ps-registers-output-depth.md`), and a vs_2_0 that never writes oPos
///   ("This value must be written by the vertex shader", `…-vs-registers-position.md`).
/// - Wine's assembly of the hand-written sources of `asm/` (see [`ASM_SYNTAX_ONLY`]).
/// - `shader_empty`, the empty vs_2_0 Wine's D3DX tests read a constant table from.
const OVER_LIMITS: &[(&str, &str)] = &[
    ("h24_ps_depth.ps_3_0.bin", "writes oDepth with a write mask"),
    ("h29_unused_and_static.vs_2_0.bin", "must write oPos"),
    ("shader_empty.bin", "must write oPos"),
    ("ps20_mrt_pp.bin", "reads 2 different c# registers (c1, c2)"),
    (
        "vs11_misc_ops.bin",
        "reads r1.w, which no earlier instruction writes",
    ),
    (
        "vs20_mova_sincos.bin",
        "reads r2.zw, which no earlier instruction writes",
    ),
    (
        "vs20_sat_crs_abs.bin",
        "reads 2 different v# registers (v1, v2)",
    ),
    ("h06_vs_row_col_major.vs_2_0.bin", "out of range"),
    ("h09_vs_outputs.vs_1_1.bin", "out of range"),
    ("h09_vs_outputs.vs_2_0.bin", "out of range"),
    ("h18_ps_matrix.ps_2_0.bin", "too many"),
    ("h32_vs_dynamic_index.vs_2_0.bin", "out of range"),
    ("h40_vs_mul_order.vs_1_1.bin", "out of range"),
    ("h40_vs_mul_order.vs_2_0.bin", "out of range"),
    (
        "h17_ps_struct.ps_2_0.bin",
        "swizzle .yxxx of r0 is not allowed in ps_2_0",
    ),
    (
        "h24_ps_depth.ps_2_0.bin",
        "swizzle .zxxx of r0 is not allowed in ps_2_0",
    ),
    (
        "h37_ps_sm4_sample_ctab.ps_2_0.bin",
        "swizzle .xyxx of t0 is not allowed in ps_2_0",
    ),
    (
        "ps20_inputs_color.bin",
        "swizzle .xxyz of v1 is not allowed in ps_2_0",
    ),
];

/// Wine's assembler tests assemble with `D3DCOMPILE_SKIP_VALIDATION` (`asm.c`,
/// `exec_tests`): they test syntax, and these break a rule of full validation, named here.
/// They must give Wine's bytes at [`Level::Syntax`](super::validate::Level::Syntax) and be
/// refused with this message at full validation.
const WINE_SYNTAX_ONLY: &[(&str, &str)] = &[
    // cnd---ps.md: "For versions 1_1 to 1_3, src0 must be r0.a".
    ("ps_1_3_8", "cnd compares r0.a in ps_1_3"),
    // texld---ps-1-4.md: coordinates are t# in phase 1, t# or r# in phase 2.
    ("ps_1_4_10", "texld reads r0 before 'phase'"),
    ("ps_1_4_11", "reads its coordinates from c0"),
    ("ps_1_4_12", "texld reads r2 before 'phase'"),
    // dcl---ps.md, dcl-usage-input-register---vs.md: inputs, t# and s# are declared.
    ("ps_2_0_10", "uses t1 without a dcl"),
    ("ps_2_0_4", "uses t0 without a dcl"),
    ("ps_2_0_5", "uses t1 without a dcl"),
    ("ps_2_0_6", "uses t0 without a dcl"),
    ("ps_2_0_9", "uses t1 without a dcl"),
    ("ps_2_x_4", "uses v1 without a dcl"),
    ("ps_3_0_10", "uses v0 without a dcl"),
    ("ps_3_0_6", "uses v0 without a dcl"),
    ("vs_1_1_12", "uses v0 without a dcl"),
    ("vs_1_1_24", "uses v0 without a dcl"),
    ("vs_1_1_25", "uses v0 without a dcl"),
    ("vs_2_0_1", "uses v0 without a dcl"),
    ("vs_2_0_2", "uses v0 without a dcl"),
    ("vs_3_0_4", "uses v0 without a dcl"),
    // label---ps.md, label---vs.md: l0–l15 in ps_2_x, vs_2_0 and vs_2_x.
    (
        "ps_2_x_16",
        "label l2047 is out of range: ps_2_x has l0 to l15",
    ),
    (
        "vs_2_0_29",
        "label l2047 is out of range: vs_2_0 has l0 to l15",
    ),
    // loop---vs.md: aL is the counter of the enclosing loop block.
    ("ps_3_0_4", "uses aL outside a loop"),
    ("vs_3_0_14", "uses aL outside a loop"),
    ("vs_3_0_15", "uses aL outside a loop"),
    ("vs_3_0_5", "uses aL outside a loop"),
    // texldd---ps.md: the second source is the sampler.
    ("ps_3_0_9", "samples through r2"),
];

/// `asm/` sources that break a documented rule (see [`OVER_LIMITS`]): an arbitrary
/// swizzle in ps_2_0; two constants in one ps_2_0 instruction and two inputs in one
/// vs_2_0 instruction (one read port each: "# Read ports" of `…-ps-registers-ps-2-0.md`,
/// `…-vs-registers-vs-2-0.md`); `dst r5, r1, r1` reading `r1.w` and `add oPos, v0, r2`
/// reading `r2.zw` that nothing wrote (`…-vs-registers-temporary.md`).
const ASM_SYNTAX_ONLY: &[(&str, &str)] = &[
    (
        "ps20_inputs_color.asm",
        "swizzle .xxyz of v1 is not allowed in ps_2_0",
    ),
    ("ps20_mrt_pp.asm", "reads 2 different c# registers"),
    (
        "vs11_misc_ops.asm",
        "reads r1.w, which no earlier instruction writes",
    ),
    (
        "vs20_mova_sincos.asm",
        "reads r2.zw, which no earlier instruction writes",
    ),
    ("vs20_sat_crs_abs.asm", "reads 2 different v# registers"),
];

/// The rules about a whole program: every temporary is written before it is read, and the
/// outputs the model requires are written (oPos; oC0 in ps_2_0/ps_2_x; r0 in ps_1_x).
/// Most of Wine's assembler tests (`wine-tests/asm`) are fragments of a few instructions,
/// assembled with `D3DCOMPILE_SKIP_VALIDATION` to test syntax, and break these; full
/// validation may refuse a fragment with one of these, and only these, unless it is named
/// in [`WINE_SYNTAX_ONLY`].
const WHOLE_PROGRAM_RULES: &[&str] = &[
    "which no earlier instruction writes",
    "must write oPos",
    "must write oC0",
    "is the pixel colour",
];

fn is_fragment(path: &Path) -> bool {
    path.parent().is_some_and(|p| p.ends_with("wine-tests/asm"))
}

/// assemble(disassemble(bytes)) == bytes for every valid corpus shader, comments and
/// CTABs included, with validation on (except [`OVER_LIMITS`]).
#[test]
fn corpus_round_trips_through_text() {
    let Some(dir) = corpus_dir() else { return };
    let mut failures = Vec::new();
    let shaders = valid_shaders(&dir);
    let mut validated = 0;
    let mut fragments = 0;
    for path in &shaders {
        let bytes = std::fs::read(path).unwrap();
        let text = super::disasm::disassemble(&bytes).unwrap();
        let name = path.file_name().unwrap().to_string_lossy();
        let stem = name.trim_end_matches(".bin");
        let over = OVER_LIMITS
            .iter()
            .chain(WINE_SYNTAX_ONLY)
            .find(|(n, _)| *n == name.as_ref() || *n == stem);
        match (super::asm::assemble(&text), over) {
            (Ok(b), None) if b == bytes => validated += 1,
            (Ok(_), None) => failures.push(format!("{}: different bytes", path.display())),
            (Err(e), None)
                if is_fragment(path)
                    && WHOLE_PROGRAM_RULES.iter().any(|r| e.message.contains(r)) =>
            {
                fragments += 1;
                assert_eq!(
                    super::asm::assemble_unvalidated(&text).unwrap(),
                    bytes,
                    "{name}"
                );
            }
            (Err(e), None) => failures.push(format!("{}: {e}", path.display())),
            (Ok(_), Some(_)) => failures.push(format!("{}: accepted", path.display())),
            (Err(e), Some((_, why))) => {
                assert!(e.message.contains(why), "{name}: {e}");
                assert_eq!(
                    super::asm::assemble_unvalidated(&text).unwrap(),
                    bytes,
                    "{name}"
                );
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {}:\n{}",
        failures.len(),
        shaders.len(),
        failures.join("\n")
    );
    let listed = OVER_LIMITS.len() + WINE_SYNTAX_ONLY.len();
    assert_eq!(shaders.len(), validated + listed + fragments);
    eprintln!(
        "{validated} validated, {listed} refused by name, {fragments} Wine fragments refused \
         as incomplete programs"
    );
}

/// Legacy-compiler shaders of `../shared/corpus/hlsl/legacy/` over their model's limit, by
/// the source section they were compiled from (for ps_1_1 and ps_1_3, by d3dx9_27 and
/// d3dx9_31): more arithmetic instructions than the 8 slots of ps_1_1 to ps_1_3
/// (`dx9-graphics-reference-asm-ps-differences.md`). The corpus was compiled under
/// Wine, whose `Direct3DShaderValidatorCreate9` (the d3d9.dll validator D3DX and
/// d3dcompiler hand their output to) is a stub that accepts everything: on Windows the
/// same compile fails with the validator's error X5608, "Compiled shader code uses too
/// many arithmetic instruction slots". So these are not shaders Microsoft lets through.
const HLSL_OVER_LIMITS: &[&str] = &[
    "cross.section1",
    "cross.section2",
    "max-min.section2",
    "max-min.section6",
    "normalize.section4",
    "normalize.section5",
    "sign.section1",
    "sign.section4",
    "ternary.section2",
];

/// Every shader Microsoft's compilers made of the compiler corpus
/// (`../shared/corpus/hlsl/`: `vkd3d/` by d3dcompiler_43, `versions/` by d3dx9_24 to
/// d3dx9_31 and d3dx9_43, `legacy/` by d3dx9_27 and d3dx9_31) disassembles and assembles
/// back to its bytes with full validation, except [`HLSL_OVER_LIMITS`], refused for their
/// slot count (and still round-tripping unvalidated).
#[test]
fn hlsl_corpus_reassembles_validated() {
    let Some(dir) = crate::test_corpus::corpus("hlsl") else {
        return;
    };
    let mut failures = Vec::new();
    let (mut validated, mut over) = (0, 0);
    for sub in ["vkd3d", "versions", "legacy"] {
        let shaders = files(&dir, sub, ".bin");
        assert!(!shaders.is_empty(), "{sub}");
        for path in shaders {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap();
            let text = match super::disasm::disassemble(&bytes) {
                Ok(t) => t,
                Err(e) => {
                    failures.push(format!("{sub}/{name}: disassembly: {e}"));
                    continue;
                }
            };
            let listed = sub == "legacy"
                && HLSL_OVER_LIMITS.iter().any(|s| {
                    ["ps_1_1", "ps_1_3"]
                        .iter()
                        .any(|p| name.starts_with(&format!("{s}.{p}.")))
                });
            match (super::asm::assemble(&text), listed) {
                (Ok(b), false) if b == bytes => validated += 1,
                (Ok(_), false) => failures.push(format!("{sub}/{name}: different bytes")),
                (Err(e), false) => failures.push(format!("{sub}/{name}: {e}")),
                (Ok(_), true) => failures.push(format!("{sub}/{name}: accepted")),
                (Err(e), true) => {
                    assert!(
                        e.message.contains("allows 8 arithmetic instruction slots"),
                        "{name}: {e}"
                    );
                    assert_eq!(
                        super::asm::assemble_unvalidated(&text).unwrap(),
                        bytes,
                        "{name}"
                    );
                    over += 1;
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} refused or changed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(over, HLSL_OVER_LIMITS.len() * 4);
    assert!(validated > 2800, "{validated}");
    eprintln!("{validated} Microsoft shaders re-assembled validated, {over} over their limits");
}

/// Wine's assembler tests: our bytes equal the expected bytes of every pair with the
/// checks Wine's tests ask for (`D3DCOMPILE_SKIP_VALIDATION`), and with full validation
/// too except for [`WINE_SYNTAX_ONLY`], refused with the named rule.
#[test]
fn corpus_wine_asm_pairs() {
    let Some(dir) = corpus_dir() else { return };
    let mut failures = Vec::new();
    let sources: Vec<PathBuf> = files(&dir, "wine-tests/asm", ".asm")
        .into_iter()
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("fail_")
        })
        .collect();
    assert_eq!(sources.len(), 184);
    let mut refused = 0;
    let mut fragments = 0;
    for path in &sources {
        let expected = std::fs::read(path.with_extension("bin")).unwrap();
        let text = read_text(path);
        match super::asm::assemble_skip_validation(&text).map(|b| without_user_comments(&b)) {
            Ok(b) if b == expected => {}
            Ok(b) => failures.push(format!(
                "{}: got {} expected {}",
                path.display(),
                hex(&b),
                hex(&expected)
            )),
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
        let stem = path.file_stem().unwrap().to_string_lossy();
        let why = WINE_SYNTAX_ONLY.iter().find(|(n, _)| *n == stem.as_ref());
        match (super::asm::assemble(&text), why) {
            (Ok(b), None) if without_user_comments(&b) == expected => {
                let dropped = super::asm::assemble_dropping_comments(&text);
                if dropped.as_ref() != Ok(&expected) {
                    failures.push(format!("{stem}: dropping comments gave {dropped:?}"));
                }
            }
            (Err(e), Some((_, why))) if e.message.contains(why) => refused += 1,
            (Err(e), None) if WHOLE_PROGRAM_RULES.iter().any(|r| e.message.contains(r)) => {
                fragments += 1
            }
            (r, _) => failures.push(format!("{stem}: full validation gave {r:?}")),
        }
    }
    assert_eq!(refused, WINE_SYNTAX_ONLY.len());
    eprintln!(
        "184 pairs: {} as Wine's bytes under full validation, {refused} refused by name, \
         {fragments} fragments refused as incomplete programs",
        184 - refused - fragments
    );
    assert!(
        failures.is_empty(),
        "{} of 184:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Wine's `fail_` sources are refused, with a message, even with only the checks of
/// `D3DCOMPILE_SKIP_VALIDATION` (the flag Wine's test passes).
#[test]
fn corpus_wine_asm_failures() {
    let Some(dir) = corpus_dir() else { return };
    let mut accepted = Vec::new();
    let sources: Vec<PathBuf> = files(&dir, "wine-tests/asm", ".asm")
        .into_iter()
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("fail_")
        })
        .collect();
    assert_eq!(sources.len(), 48);
    for path in &sources {
        match super::asm::assemble_skip_validation(&read_text(path)) {
            Ok(b) => accepted.push(format!("{}: {}", path.display(), hex(&b))),
            Err(e) => assert!(!e.message.is_empty()),
        }
    }
    assert!(
        accepted.is_empty(),
        "{} of 48 accepted:\n{}",
        accepted.len(),
        accepted.join("\n")
    );
}

/// `bytes` without the comment blocks that hold comments of the asm text: Wine's assembler
/// drops comments (`preproc_0.asm` has three), ours keeps them ([`super::asm`], Comments).
fn without_user_comments(bytes: &[u8]) -> Vec<u8> {
    let mut shader = bytecode::parse(bytes).unwrap();
    shader
        .items
        .retain(|item| !matches!(item, bytecode::Item::Comment(c) if c.user_comment().is_some()));
    shader.encode()
}

fn hex(b: &[u8]) -> String {
    b.chunks(4)
        .map(|c| format!("{:08x}", u32::from_le_bytes(c.try_into().unwrap())))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Moves declarations into the order Wine's assembler writes them (README of `asm/`):
/// dcl of inputs, dcl of outputs, def, defb, defi, dcl of samplers, then the rest. For
/// ps_2_0/ps_2_x, Wine's bytes (`ps20_inputs_color`, `ps20_math`) show the samplers
/// right after the inputs, before the constants, so that is done there.
fn wine_order(bytes: &[u8]) -> Vec<u8> {
    use super::bytecode::Item;
    use super::registers::RegisterType;
    let mut shader = bytecode::parse(bytes).unwrap();
    let ps2 =
        shader.version.kind == super::bytecode::ShaderKind::Pixel && shader.version.major == 2;
    let rank = |item: &Item| -> u8 {
        let Item::Instruction(i) = item else { return 6 };
        let ty = i
            .operands
            .as_ref()
            .and_then(|o| o.dst.as_ref())
            .and_then(|d| d.register_type());
        match i.opcode() {
            0x1F if ty == Some(RegisterType::Sampler) => {
                if ps2 {
                    1
                } else {
                    5
                }
            }
            0x1F if ty == Some(RegisterType::Output) => 1,
            0x1F => 0,
            0x51 => 2,
            0x2F => 3,
            0x30 => 4,
            _ => 6,
        }
    };
    shader.items.sort_by_key(|i| rank(i));
    shader.encode()
}

/// Our assembler on `asm/`: Wine's bytes after moving declarations into Wine's order.
#[test]
fn corpus_asm_sources_match_wine() {
    let Some(dir) = corpus_dir() else { return };
    let mut failures = Vec::new();
    let sources = files(&dir, "asm", ".asm");
    assert_eq!(sources.len(), 30);
    for path in &sources {
        let expected = std::fs::read(path.with_extension("bin")).unwrap();
        let text = read_text(path);
        let name = path.file_name().unwrap().to_string_lossy();
        if let Some((_, why)) = ASM_SYNTAX_ONLY.iter().find(|(n, _)| *n == name.as_ref()) {
            let e = super::asm::assemble(&text).unwrap_err();
            assert!(e.message.contains(why), "{name}: {e}");
        }
        let result = if ASM_SYNTAX_ONLY.iter().any(|(n, _)| *n == name.as_ref()) {
            super::asm::assemble_skip_validation(&text)
        } else {
            super::asm::assemble(&text)
        };
        match result {
            Ok(b) if wine_order(&b) == expected => {}
            Ok(b) => failures.push(format!(
                "{}: got {} expected {}",
                path.display(),
                hex(&wine_order(&b)),
                hex(&expected)
            )),
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 30:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `asm-wine-refuses/`: the two Wine rightly refuses are refused; the four it wrongly
/// refuses (for their syntax) are accepted. Two of those read what nothing wrote
/// (`sincos r5.xy, r0.x, …` with no r0; `add oPos, v0, r2` after `sincos r2.xy`), which
/// Microsoft's assembler also refuses when it validates (`…-ps-registers-ps-1-x.md`:
/// "D3DXAssembleShader will fail similarly, assuming validation is enabled"): they pass
/// the checks of `D3DCOMPILE_SKIP_VALIDATION`, and full validation refuses them for that
/// alone.
#[test]
fn corpus_asm_wine_refuses() {
    let Some(dir) = corpus_dir() else { return };
    for path in files(&dir, "asm-wine-refuses", ".asm") {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = read_text(&path);
        let should_refuse = matches!(
            name.as_str(),
            "xfail_ps20_abs_modifier.asm" | "xfail_vs20_break.asm"
        );
        if should_refuse {
            assert!(
                super::asm::assemble_skip_validation(&text).is_err(),
                "{name} accepted"
            );
            continue;
        }
        assert!(
            super::asm::assemble_skip_validation(&text).is_ok(),
            "{name} refused"
        );
        match (name.as_str(), super::asm::assemble(&text)) {
            (_, Ok(_)) => {}
            ("xfail_ps20_sincos_3src.asm", Err(e)) => {
                assert!(e.message.contains("reads r0.x, which no earlier"), "{e}")
            }
            ("xfail_vs20_sincos_scinot.asm", Err(e)) => {
                assert!(e.message.contains("reads r2.zw, which no earlier"), "{e}")
            }
            (_, Err(e)) => panic!("{name}: {e}"),
        }
    }
}

/// The lines of fxc's command line in one of its listings: `//   fxc …` and the lines it
/// wraps onto (`//    default_VS.hlsl`). The bytes do not keep it, so no listing made
/// from them can show it.
fn is_command_line(line: &str, previous_was: bool) -> bool {
    line.strip_prefix("//")
        .is_some_and(|t| super::ctab::is_command_line(t, previous_was))
}

/// The lines of a listing but for those of the command line (see [`is_command_line`]), and
/// how many those were.
fn without_command_line(text: &str) -> (Vec<&str>, usize) {
    let mut command = false;
    let (mut kept, mut removed) = (Vec::new(), 0);
    for line in text.lines() {
        command = is_command_line(line, command);
        match command {
            true => removed += 1,
            false => kept.push(line),
        }
    }
    (kept, removed)
}

/// `fxc-listings/`: the disassembly of each shader is what fxc printed for it, line for
/// line, but for the lines of fxc's command line; and both texts, ours and fxc's, assemble
/// with full validation to the shader's bytes, constant table included.
#[test]
fn corpus_fxc_listings_line_by_line() {
    let Some(dir) = corpus_dir() else { return };
    let mut shaders = files(&dir, "fxc-listings", ".vso");
    shaders.extend(files(&dir, "fxc-listings", ".pso"));
    assert_eq!(shaders.len(), 14);
    for path in &shaders {
        let name = path.file_name().unwrap().to_string_lossy();
        let bytes = std::fs::read(path).unwrap();
        let ours = super::disasm::disassemble(&bytes).unwrap();
        let fxc = read_text(&path.with_file_name(format!("{name}.fxc.txt")));
        let (theirs, removed) = without_command_line(&fxc);
        assert!(
            (1..=2).contains(&removed),
            "{name}: {removed} command-line lines"
        );
        // Ours prints, in that place, which constants the source placed with register():
        // fxc's listing cannot say, and its table's marks are in the bytes.
        let (ours_lines, _) = without_command_line(&ours);
        for (i, (a, b)) in ours_lines.iter().zip(&theirs).enumerate() {
            assert_eq!(a, b, "{name}: line {} of ours differs from fxc's", i + 1);
        }
        assert_eq!(ours_lines.len(), theirs.len(), "{name}:\n{ours}");
        assert!(!ours.contains(super::disasm::COMMENT_BLOCK), "{name}");
        let back = super::asm::assemble(&ours).unwrap_or_else(|e| panic!("{name}, ours: {e}"));
        assert_eq!(back, bytes, "{name}: our listing assembles to other bytes");
        // fxc's own text is the same shader and table, but for the marks of register().
        let back = super::asm::assemble(&fxc).unwrap_or_else(|e| panic!("{name}, fxc's: {e}"));
        let unmarked = |b: &[u8]| {
            let mut t = super::ctab::ConstantTable::from_bytecode(b)
                .unwrap()
                .unwrap();
            t.constants.iter_mut().for_each(|c| c.reserved = 0);
            t
        };
        assert_eq!(unmarked(&back), unmarked(&bytes), "{name}: fxc's listing");
        let code = super::microsoft::code;
        assert_eq!(back.len(), bytes.len(), "{name}: fxc's listing");
        assert_eq!(code(&back), code(&bytes), "{name}: fxc's listing");
        eprintln!("{name}: diff shows only fxc's command line ({removed} lines)");
    }
}
