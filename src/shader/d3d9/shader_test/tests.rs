use std::collections::BTreeMap;
use std::path::Path;

use super::*;
use crate::shader::d3d9::asm;

/// Probes that cannot match Windows' values for a reason outside the interpreter: file,
/// line of the probe, why. Every other applicable probe must pass.
/// The four here are where the golden (d3dcompiler_43, the June 2010 SDK's) folds constants
/// otherwise than the compiler whose output vkd3d's Windows values come from (its listing
/// shows the constant it stores): the interpreter renders the golden faithfully.
const EXCLUDED: &[(&str, usize, &str)] = &[
    (
        "arithmetic-int",
        51,
        "d3dcompiler_43 folds 42 % 5 and its signed variants to ±1 (def c0, 1, -1, 1, -1)",
    ),
    (
        "initializer-numeric",
        60,
        "d3dcompiler_43 folds -1u to 2^64 (def c0.w = 1.84467441e+019), not 2^32",
    ),
    (
        "majority-pragma",
        370,
        "d3dcompiler_43 lets row-major win over column-major given both, the expected values the opposite",
    ),
    (
        "refract",
        232,
        "d3dcompiler_43 folds the half-typed refract detections to 1 (def c0, 1, 0, 0, 0)",
    ),
];

fn golden_source<'a>(
    dir: &'a Path,
    name: &'a str,
) -> impl Fn(usize, &str) -> Result<Vec<u8>, String> + 'a {
    move |k, profile| {
        let stem = format!("{name}.section{k}.{profile}");
        match std::fs::read(dir.join(format!("{stem}.bin"))) {
            Ok(b) => Ok(b),
            Err(_) if dir.join(format!("{stem}.refused.txt")).exists() => {
                Err(format!("Microsoft refused section {k} for {profile}"))
            }
            Err(_) => Err(format!("no golden for section {k} {profile}")),
        }
    }
}

#[test]
fn vkd3d_probes_pass_on_microsofts_bytecode() {
    let Some(root) = crate::test_corpus::corpus("hlsl") else {
        return;
    };
    let dir = root.join("vkd3d");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus directory")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".shader_test"))
        .collect();
    files.sort();
    let (mut pass, mut fail, mut excluded) = (0, 0, 0);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for file in &files {
        let name = file.trim_end_matches(".shader_test");
        let text = std::fs::read_to_string(dir.join(file)).expect("readable test");
        let test = parse(&text);
        let source = golden_source(&dir, name);
        for sm in [2, 3] {
            for r in run(&test, sm, &source) {
                let listed = EXCLUDED.iter().find(|(f, l, _)| *f == name && *l == r.line);
                match (&r.outcome, listed) {
                    (Outcome::Excluded(why), _) => {
                        excluded += 1;
                        let key = why.to_string();
                        *reasons.entry(key).or_default() += 1;
                    }
                    (_, Some((_, _, why))) => {
                        excluded += 1;
                        *reasons.entry(why.to_string()).or_default() += 1;
                    }
                    (Outcome::Pass, None) => pass += 1,
                    (Outcome::Fail { pixel, actual }, None) => {
                        fail += 1;
                        failures.push(format!(
                            "{file}:{} {} section {:?}: pixel {pixel:?} expected {:?} got {actual:?}",
                            r.line, r.profile, r.section, r.expected
                        ));
                    }
                }
            }
        }
    }
    eprintln!(
        "vkd3d probes on Microsoft's bytecode: {pass} pass, {fail} fail, {excluded} excluded"
    );
    for (why, n) in &reasons {
        eprintln!("  excluded {n}: {why}");
    }
    for f in &failures {
        eprintln!("FAIL {f}");
    }
    assert!(pass > 0, "no probe ran");
    assert!(
        failures.is_empty(),
        "{} probes differ from Windows",
        failures.len()
    );
}

/// Probes of the ps_1_x run whose goldens cannot give Windows' values, with why (each
/// visible in the golden's listing).
const EXCLUDED_PS1: &[(&str, usize, &str)] = &[
    (
        "majority-pragma",
        116,
        "d3dx9_31 ignores #pragma pack_matrix (the listing reads the matrix transposed)",
    ),
    (
        "majority-pragma",
        154,
        "d3dx9_31 ignores #pragma pack_matrix (the listing reads the matrix transposed)",
    ),
    (
        "majority-pragma",
        294,
        "d3dx9_31 ignores #pragma pack_matrix (the listing reads the matrix transposed)",
    ),
    (
        "max-min",
        28,
        "d3dx9_31's ps_1_1/ps_1_3 code selects on r1.w, which no instruction writes",
    ),
    (
        "return",
        142,
        "d3dx9_31 drops the `ret *= 2` before the return in the loop (one mov of c0)",
    ),
    (
        "step",
        13,
        "the uniforms (5.0, -2.6, …) lie outside [-1, 1], which ps_1_x constants cannot hold",
    ),
];

/// The same probes on what the legacy D3DX9 compiler (d3dx9_31) made of the sections for
/// ps_1_1, ps_1_3 and ps_1_4 (`legacy/`), with vs_1_1 where a test has a vertex shader.
/// Windows' values come from SM2 and later, so only probes that expect values ps_1_x can
/// hold at all, every component in [0, 1], are compared; every one of those must pass.
#[test]
fn vkd3d_probes_pass_on_legacy_ps1_bytecode() {
    let Some(root) = crate::test_corpus::corpus("hlsl") else {
        return;
    };
    let (dir, legacy) = (root.join("vkd3d"), root.join("legacy"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus directory")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".shader_test"))
        .collect();
    files.sort();
    let (mut pass, mut out_of_range, mut excluded) = (0, 0, 0);
    let mut failures = Vec::new();
    for file in &files {
        let name = file.trim_end_matches(".shader_test");
        let text = std::fs::read_to_string(dir.join(file)).expect("readable test");
        let test = parse(&text);
        let source = |k: usize, profile: &str| {
            let stem = format!("{name}.section{k}.{profile}.d3dx9_31");
            std::fs::read(legacy.join(format!("{stem}.bin")))
                .map_err(|_| format!("no d3dx9_31 golden for section {k} {profile}"))
        };
        for profile in ["ps_1_1", "ps_1_3", "ps_1_4"] {
            for r in run_profiles(&test, 1, profile, "vs_1_1", &source) {
                let in_range = r.expected[..r.components]
                    .iter()
                    .all(|x| (0.0..=1.0).contains(x));
                let listed = EXCLUDED_PS1
                    .iter()
                    .any(|(f, l, _)| *f == name && *l == r.line);
                match &r.outcome {
                    Outcome::Excluded(_) => excluded += 1,
                    _ if listed => excluded += 1,
                    _ if !in_range => out_of_range += 1,
                    Outcome::Pass => pass += 1,
                    Outcome::Fail { pixel, actual } => failures.push(format!(
                        "{file}:{} {profile} section {:?}: pixel {pixel:?} expected {:?} got {actual:?}",
                        r.line, r.section, r.expected
                    )),
                }
            }
        }
    }
    eprintln!(
        "vkd3d probes on d3dx9_31's ps_1_x: {pass} pass, {} fail, {out_of_range} outside [0, 1], \
         {excluded} without bytecode or excluded",
        failures.len()
    );
    for f in &failures {
        eprintln!("FAIL {f}");
    }
    assert!(pass > 0, "no probe ran");
    assert!(
        failures.is_empty(),
        "{} probes differ from Windows",
        failures.len()
    );
}

#[test]
fn sections_are_numbered_in_file_order() {
    let t = parse(
        "[require]\nshader model >= 3.0\n\n[pixel shader fail]\nx\n[test]\n% comment\ndraw quad\n\
         [vertex shader]\ny\n[effect]\nz\n[pixel shader]\nw\n",
    );
    let idx: Vec<_> = t
        .sections
        .iter()
        .map(|s| (s.header.as_str(), s.shader_index))
        .collect();
    assert_eq!(
        idx,
        [
            ("require", None),
            ("pixel shader fail", Some(1)),
            ("test", None),
            ("vertex shader", Some(2)),
            ("effect", Some(3)),
            ("pixel shader", Some(4)),
        ]
    );
    assert_eq!(t.sections[2].lines, [(8, "draw quad".to_string())]);
}

#[test]
fn qualifiers_follow_the_shader_model() {
    assert!(qualifier_holds("sm<4", 2));
    assert!(!qualifier_holds("sm>=4", 3));
    assert!(qualifier_holds("sm<4 | msl", 3));
    assert!(!qualifier_holds("glsl | msl", 3));
    assert!(!qualifier_holds("sm>=4 & sm<6", 3));
}

#[test]
fn ulps_compare_as_vkd3d_does() {
    assert!(compare(1.0, 1.0, 0));
    assert!(compare(0.0, -0.0, 0));
    assert!(!compare(1.0, f32::from_bits(1.0f32.to_bits() + 1), 0));
    assert!(compare(1.0, f32::from_bits(1.0f32.to_bits() + 1), 1));
    assert!(!compare(-1.0, 1.0, 1000));
}

/// A whole test run on assembled bytecode: uniforms reach `c#`, probes compare, a wrong
/// expectation fails, a shader that is expected to fail drops its probes' draw.
#[test]
fn runs_a_small_test_on_given_bytecode() {
    let ps = asm::assemble("ps_2_0\nmov r1, c1\nadd r0, c0, r1\nmov oC0, r0\n").unwrap();
    let text = "[pixel shader]\nfloat4 main() : sv_target { ... }\n\n[test]\n\
                uniform 0 float4 0.25 0.5 0 1\nuniform 4 float4 0.25 0 1 0\ndraw quad\n\
                probe (0, 0) rgba (0.5, 0.5, 1, 1)\nif(sm>=4) probe (0, 0) rgba (9, 9, 9, 9)\n\
                probe (5, 5, 10, 10) rgba (0.5, 0.5, 1, 2)\n";
    let test = parse(text);
    let source = |k: usize, profile: &str| {
        assert_eq!(k, 1);
        if profile == "ps_2_0" {
            Ok(ps.clone())
        } else {
            Err("none".to_string())
        }
    };
    let r = run(&test, 2, &source);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].outcome, Outcome::Pass);
    assert!(matches!(r[1].outcome, Outcome::Fail { pixel: (5, 5), .. }));
    let r = run(&test, 3, &source);
    assert!(matches!(&r[0].outcome, Outcome::Excluded(why) if why.contains("none")));
}
