//! Our compiled code against Microsoft's, by behaviour: for every source of the corpus
//! both compile, the two shaders run through the interpreter (`d3d9::run`) on the same
//! random inputs — constants matched by name, inputs by semantic, the same textures — and
//! must write the same outputs.

use std::collections::BTreeMap;
use std::path::Path;

use super::compile::{compile, Options};
use crate::shader::d3d9::ctab::{Class, ConstantTable, ParamType, RegisterSet};
use crate::shader::d3d9::run::{
    Attributes, Bindings, Inputs, OutputRegister, Outputs, Program, Semantic,
};
use crate::shader::d3d9::run::{Sampler, Texture, TextureKind};

/// A small, seeded generator: the same inputs on every run.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A float in [-range, range], in steps of 1/16 (exact in f32, so both shaders see
    /// the very same values, and zero and integers come up).
    pub fn float(&mut self, range: f32) -> f32 {
        let steps = (range * 16.0) as u64;
        (self.next() % (2 * steps + 1)) as f32 / 16.0 - range
    }
}

/// Values for every constant of `table` (by name), the same for the names both have.
/// Floats are drawn from [-range, range].
fn constants(
    table: &ConstantTable,
    values: &mut BTreeMap<String, Vec<[f32; 4]>>,
    rng: &mut Rng,
    range: f32,
) {
    for c in &table.constants {
        values.entry(c.name.clone()).or_insert_with(|| {
            (0..c.register_count.max(1))
                .map(|_| {
                    let mut v = [0.0; 4];
                    // Integers and booleans in float registers as the source's types
                    // hold them (uint never negative: fxc may rely on it).
                    let kind = c.type_info.param_type;
                    // A scalar or vector fills the first lanes of its register; D3DX
                    // writes 0 to the rest.
                    let lanes = match c.type_info.class {
                        Class::SCALAR | Class::VECTOR if c.register_set == RegisterSet::FLOAT4 => {
                            usize::from(c.type_info.columns.clamp(1, 4))
                        }
                        _ => 4,
                    };
                    for x in &mut v {
                        *x = match (c.register_set, kind) {
                            (RegisterSet::BOOL, _) | (_, ParamType::BOOL) => {
                                (rng.next() % 2) as f32
                            }
                            (RegisterSet::INT4, _) => (rng.next() % 9) as f32 - 4.0,
                            (_, ParamType::INT) => (rng.next() % 5) as f32,
                            _ => rng.float(range),
                        };
                    }
                    // (Drawn all the same, so that every other value stays as it was.)
                    for x in &mut v[lanes..] {
                        *x = 0.0;
                    }
                    v
                })
                .collect()
        });
    }
}

/// A texture of `kind` with random texels: 4 by 4 (by 6 faces, by 4 slices), or 4 by 1
/// where the shader declares a 1D sampler (D3D9's 1D texture is a 2D one of one row).
fn texture(kind: TextureKind, one_row: bool, rng: &mut Rng) -> Sampler {
    let (w, h, d) = (
        4,
        if one_row { 1 } else { 4 },
        match kind {
            TextureKind::TwoD => 1,
            TextureKind::Cube => 6,
            TextureKind::Volume => 4,
        },
    );
    let texels = (0..w * h * d)
        .map(|_| {
            [
                rng.float(1.0).abs(),
                rng.float(1.0).abs(),
                rng.float(1.0).abs(),
                rng.float(1.0).abs(),
            ]
        })
        .collect();
    Sampler::new(Texture {
        kind,
        width: w,
        height: h,
        depth: d,
        levels: vec![texels],
    })
}

/// The bindings of one shader: each named constant at the registers its own table gives.
fn bindings(
    program: &Program,
    table: Option<&ConstantTable>,
    values: &BTreeMap<String, Vec<[f32; 4]>>,
    textures: &BTreeMap<String, Sampler>,
) -> Bindings {
    let mut b = Bindings::default();
    let Some(table) = table else { return b };
    for c in &table.constants {
        let Some(regs) = values.get(&c.name) else {
            continue;
        };
        for (k, v) in regs.iter().enumerate().take(usize::from(c.register_count)) {
            let r = u32::from(c.register_index) + k as u32;
            match c.register_set {
                RegisterSet::FLOAT4 => {
                    b.constants.float.insert(r, *v);
                }
                RegisterSet::INT4 => {
                    b.constants.int.insert(r, v.map(|x| x as i32));
                }
                RegisterSet::BOOL => {
                    b.constants.bool.insert(r, v[0] != 0.0);
                }
                _ => {
                    if let Some(s) = textures.get(&c.name) {
                        b.samplers.insert(r, s.clone());
                    }
                }
            }
        }
    }
    let _ = program;
    b
}

/// Outputs the two runs must agree on: pixel colours and depth, or vertex outputs by
/// semantic; nothing of a pixel both discarded.
fn compare(ms: &Outputs, ours: &Outputs, pixel: bool) -> Result<(), String> {
    if ms.discarded != ours.discarded {
        return Err(format!(
            "discarded: Microsoft's {}, ours {}",
            ms.discarded, ours.discarded
        ));
    }
    if ms.discarded {
        return Ok(());
    }
    let close = |a: f32, b: f32| {
        (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 2e-4 + 2e-4 * a.abs().max(b.abs())
    };
    if pixel {
        for (reg, v) in &ms.values {
            if !matches!(reg, OutputRegister::Target(_) | OutputRegister::Depth) {
                continue;
            }
            let Some(o) = ours.values.get(reg) else {
                return Err(format!(
                    "{reg}: Microsoft's writes {v:?}, ours does not write it"
                ));
            };
            let n = if *reg == OutputRegister::Depth { 1 } else { 4 };
            if (0..n).any(|i| !close(v[i], o[i])) {
                return Err(format!("{reg}: Microsoft's {v:?}, ours {o:?}"));
            }
        }
        return Ok(());
    }
    for &(_, mask, semantic) in &ms.semantics {
        let Some(v) = ms.by_semantic(semantic) else {
            continue;
        };
        let Some(o) = ours.by_semantic(semantic) else {
            return Err(format!("{semantic}: ours writes no such output"));
        };
        // Fog and point size are one float: the rasterizer reads x alone.
        let mask = match semantic.usage {
            Semantic::FOG | Semantic::PSIZE => mask & 1,
            _ => mask,
        };
        if (0..4).any(|i| mask & (1 << i) != 0 && !close(v[i], o[i])) {
            return Err(format!("{semantic}: Microsoft's {v:?}, ours {o:?}"));
        }
    }
    Ok(())
}

/// Run Microsoft's shader and ours on `trials` random inputs; the first difference.
pub fn same_behaviour(
    ms_bytes: &[u8],
    ours_bytes: &[u8],
    trials: u32,
    seed: u64,
) -> Result<(), String> {
    let ms = Program::new(ms_bytes).map_err(|e| format!("Microsoft's shader does not run: {e}"))?;
    let ours = Program::new(ours_bytes).map_err(|e| format!("ours does not run: {e}"))?;
    let ms_table = ConstantTable::from_bytecode(ms_bytes).ok().flatten();
    let ours_table = ConstantTable::from_bytecode(ours_bytes).ok().flatten();
    let pixel = ms_bytes.get(2..4) == Some(&[0xFF, 0xFF][..]);
    // ps_1_x holds [-1, 1]: values beyond would only be clamped. Against a shader of a
    // later model, that one's colour is clamped as ps_1_x's is.
    let ps1_of = |b: &[u8]| pixel && b.get(1) == Some(&1);
    let (ms_ps1, ours_ps1) = (ps1_of(ms_bytes), ps1_of(ours_bytes));
    let ps1 = ms_ps1 || ours_ps1;
    let (range, attribute_range) = if ps1 { (1.0, 1.0) } else { (3.0, 2.0) };
    let mut rng = Rng::new(seed);
    let mut bump_rng = Rng::new(seed ^ 0xB0B0_B0B0);
    let mut overflowed = 0;
    let ms_wide_defs = ms_ps1
        && ms
            .defs()
            .iter()
            .any(|(_, v)| v.iter().any(|x| x.abs() > 1.0));
    for trial in 0..trials {
        let mut values = BTreeMap::new();
        if let Some(t) = &ms_table {
            constants(t, &mut values, &mut rng, range);
        }
        if let Some(t) = &ours_table {
            constants(t, &mut values, &mut rng, range);
        }
        let mut textures = BTreeMap::new();
        for t in ms_table.iter().chain(ours_table.iter()) {
            for c in &t.constants {
                if c.register_set == RegisterSet::SAMPLER && !textures.contains_key(&c.name) {
                    let kind = ms
                        .sampler_kinds()
                        .get(&u32::from(c.register_index))
                        .copied()
                        .unwrap_or(TextureKind::TwoD);
                    // SAMPLER1D, TEXTURE1D.
                    let one_row = matches!(c.type_info.param_type.0, 6 | 11);
                    textures.insert(c.name.clone(), texture(kind, one_row, &mut rng));
                }
            }
        }
        let mut attributes = Attributes::default();
        for (_, semantic) in ms
            .input_semantics()
            .into_iter()
            .chain(ours.input_semantics())
        {
            attributes.by_semantic.entry(semantic).or_insert_with(|| {
                [
                    rng.float(attribute_range),
                    rng.float(attribute_range),
                    rng.float(attribute_range),
                    rng.float(attribute_range),
                ]
            });
        }
        if ps1 {
            // ps_1_x declares no inputs: its v0–v1 are COLOR0–1 (in [0, 1], as the
            // colour interpolators give them) and its t# TEXCOORD#.
            for (usage, count) in [(Semantic::COLOR, 2), (Semantic::TEXCOORD, 8)] {
                for i in 0..count {
                    let v: [f32; 4] = std::array::from_fn(|_| rng.float(attribute_range));
                    let v = if usage == Semantic::COLOR {
                        v.map(f32::abs)
                    } else {
                        v
                    };
                    attributes
                        .by_semantic
                        .entry(Semantic::new(usage, i))
                        .or_insert(v);
                }
            }
        }
        // Bump-environment state of each stage (texbem, texbeml, bem): matrix, luminance
        // scale and offset.
        // Drawn from a generator of their own, so the other inputs stay as they were.
        let bump: BTreeMap<u32, [f32; 6]> = (0..6)
            .map(|stage| (stage, std::array::from_fn(|_| bump_rng.float(1.0))))
            .collect();
        attributes.vpos = [(rng.next() % 640) as f32, (rng.next() % 480) as f32];
        attributes.vface = if rng.next() % 2 == 0 { 1.0 } else { -1.0 };
        // ps_1_x at the least range a card gives, [-1, 1]; where every component of the
        // colour comes from a value beyond it, again at [-8, 8] (MaxPixelShaderValue of
        // the ps_1_4 cards), where both shaders must agree too, unless the original's
        // `def`s are beyond [-1, 1] themselves (its text reads them as the least card).
        for card in [1.0f32, 8.0] {
            if card > 1.0 && ms_wide_defs {
                overflowed += 1;
                break;
            }
            let run = |p: &Program, t: Option<&ConstantTable>| {
                let mut bindings = bindings(p, t, &values, &textures);
                bindings.bump_env = bump.clone();
                bindings.ps1_range = Some(card);
                p.run(&Inputs {
                    bindings,
                    attributes: attributes.clone(),
                })
            };
            let a = run(&ms, ms_table.as_ref())
                .map_err(|e| format!("Microsoft's shader failed to run: {e}"))?;
            let b =
                run(&ours, ours_table.as_ref()).map_err(|e| format!("ours failed to run: {e}"))?;
            // ps_1_x: a component that comes from an intermediate result beyond the range
            // depends on the card's; two shaders of one meaning may differ there, and the
            // trial says nothing of it. The rest must agree.
            let unsure = a.ps1_range_dependent | b.ps1_range_dependent;
            let (mut a, mut b) = (a, b);
            for (o, its_ps1) in [(&mut a, ms_ps1), (&mut b, ours_ps1)] {
                if ps1 && !its_ps1 {
                    if let Some(v) = o.values.get_mut(&OutputRegister::Target(0)) {
                        *v = v.map(|x| x.clamp(-card, card));
                    }
                }
            }
            if unsure != 0 {
                for o in [&mut a, &mut b] {
                    if let Some(v) = o.values.get_mut(&OutputRegister::Target(0)) {
                        for (c, x) in v.iter_mut().enumerate() {
                            if unsure & (1 << c) != 0 {
                                *x = 0.0;
                            }
                        }
                    }
                }
            }
            compare(&a, &b, pixel).map_err(|e| match card {
                1.0 => format!("trial {trial}: {e}"),
                _ => format!("trial {trial}, ps_1_x range [-{card}, {card}]: {e}"),
            })?;
            if unsure != 0xF {
                break;
            }
            if card > 1.0 {
                overflowed += 1;
            }
        }
    }
    if overflowed == trials && trials > 0 {
        return Err(format!(
            "in every one of the {trials} trials each component of the colour came from a result beyond ps_1_x's range, [-1, 1] and [-8, 8]: nothing was compared"
        ));
    }
    Ok(())
}

/// The compile flags each golden was made with (`index.json`: vkd3d's `options:`
/// requirements as `D3DCOMPILE_*` bits), by `.bin` name.
pub fn golden_flags(dir: &Path) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    let Ok(text) = std::fs::read_to_string(dir.join("index.json")) else {
        return out;
    };
    let Ok(index) = serde_json::from_str::<serde_json::Value>(&text) else {
        return out;
    };
    for file in index["files"].as_array().into_iter().flatten() {
        for section in file["sections"].as_array().into_iter().flatten() {
            for golden in section["goldens"].as_array().into_iter().flatten() {
                let (Some(bin), Some(flags)) = (golden["bin"].as_str(), golden["flags"].as_str())
                else {
                    continue;
                };
                if let Ok(f) = u32::from_str_radix(flags.trim_start_matches("0x"), 16) {
                    out.insert(bin.to_string(), f);
                }
            }
        }
    }
    out
}

/// Goldens whose behaviour ours does not copy, on purpose: where d3dcompiler_43 folds a
/// constant otherwise than Windows renders it (vkd3d's probe, the value a newer compiler
/// gives), ours gives what the probe says.
const KNOWN: &[(&str, &str)] = &[
    (
        "arithmetic-int.section4.ps_2_0",
        "d3dcompiler_43 folds 42 % 5 to 1; Windows renders 2 (vkd3d's probe), as ours",
    ),
    ("arithmetic-int.section4.ps_3_0", "as for ps_2_0"),
    (
        "initializer-numeric.section5.ps_2_0",
        "d3dcompiler_43 folds -1u as 64 bits (1.8e19); Windows renders 4294967296 (vkd3d's probe), as ours",
    ),
    ("initializer-numeric.section5.ps_3_0", "as for ps_2_0"),
];

#[test]
fn compiled_shaders_behave_as_microsofts() {
    let Some(dir) = crate::test_corpus::corpus("hlsl") else {
        return;
    };
    let dir = dir.join("vkd3d");
    let flags = golden_flags(&dir);
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    let (mut agree, mut compared, mut known_seen) = (0, 0, 0);
    let mut differ = Vec::new();
    for bin in names {
        let name = bin.file_name().unwrap().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".bin") else {
            continue;
        };
        let Some((source, profile)) = stem.rsplit_once('.') else {
            continue;
        };
        if !matches!(profile, "ps_2_0" | "ps_3_0" | "vs_2_0" | "vs_3_0") {
            continue;
        }
        let src_path = dir.join(format!("{source}.hlsl"));
        let Ok(text) = std::fs::read_to_string(&src_path) else {
            continue;
        };
        let options = Options {
            profile: profile.into(),
            entry: "main".into(),
            flags: flags.get(&name).copied().unwrap_or(0),
            ..Options::default()
        };
        let Ok(ours) = compile(
            &format!("{source}.hlsl"),
            &text,
            Some(Path::new(&src_path)),
            &options,
        ) else {
            continue;
        };
        compared += 1;
        let ms = std::fs::read(&bin).unwrap();
        match same_behaviour(&ms, &ours.bytecode, 24, 0x5EED ^ compared as u64) {
            Err(e) if KNOWN.iter().any(|(k, _)| *k == stem) => {
                eprintln!("differs on purpose: {stem}: {e}");
                known_seen += 1;
            }
            Ok(()) if KNOWN.iter().any(|(k, _)| *k == stem) => {
                differ.push(format!(
                    "{stem}: listed as differing on purpose, but agrees"
                ));
            }
            Ok(()) => agree += 1,
            Err(e) => differ.push(format!("{stem}: {e}")),
        }
    }
    eprintln!(
        "{agree} of {compared} compiled shaders behave as Microsoft's on 24 random inputs each"
    );
    assert_eq!(
        known_seen,
        KNOWN.len(),
        "a golden KNOWN names was not compared"
    );
    assert!(
        differ.is_empty(),
        "{} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

/// vkd3d's probes on our own compiled code: every `draw quad`/`probe` of the SM2/3 tests
/// run through the interpreter with shaders ours compiled, against the values Windows
/// rendered. Probes whose section ours does not compile yet (the corpus test lists them)
/// are counted apart; every other probe must pass, but for those listed here.
#[test]
fn vkd3d_probes_pass_on_our_bytecode() {
    use crate::shader::d3d9::shader_test::{parse, run, Outcome};
    let Some(root) = crate::test_corpus::corpus("hlsl") else {
        return;
    };
    let dir = root.join("vkd3d");
    let flags = golden_flags(&dir);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".shader_test"))
        .collect();
    files.sort();
    let (mut pass, mut excluded) = (0, 0);
    let mut failures = Vec::new();
    for file in &files {
        let name = file.trim_end_matches(".shader_test").to_string();
        let test = parse(&std::fs::read_to_string(dir.join(file)).unwrap());
        let source = |k: usize, profile: &str| -> Result<Vec<u8>, String> {
            let path = dir.join(format!("{name}.section{k}.hlsl"));
            let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
            let options = Options {
                profile: profile.into(),
                entry: "main".into(),
                flags: flags
                    .get(&format!("{name}.section{k}.{profile}.bin"))
                    .copied()
                    .unwrap_or(0),
                ..Options::default()
            };
            compile(
                &format!("{name}.section{k}.hlsl"),
                &text,
                Some(&path),
                &options,
            )
            .map(|c| c.bytecode)
            .map_err(|f| f.render())
        };
        for sm in [2, 3] {
            for r in run(&test, sm, &source) {
                let known = PROBES_DIFFER
                    .iter()
                    .any(|(f, l, _)| *f == name && *l == r.line);
                match (&r.outcome, known) {
                    (Outcome::Pass, false) => pass += 1,
                    (Outcome::Pass, true) => {
                        failures.push(format!("{file}:{}: listed as failing, but passes", r.line))
                    }
                    (Outcome::Excluded(_), _) | (_, true) => excluded += 1,
                    (Outcome::Fail { pixel, actual }, false) => failures.push(format!(
                        "{file}:{} {}: pixel {pixel:?} expected {:?} got {actual:?}",
                        r.line, r.profile, r.expected
                    )),
                }
            }
        }
    }
    eprintln!(
        "vkd3d probes on our bytecode: {pass} pass, {} fail, {excluded} excluded",
        failures.len()
    );
    assert!(pass > 0, "no probe ran");
    assert!(
        failures.is_empty(),
        "{} probes differ from Windows:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Probes our code does not pass, and why.
const PROBES_DIFFER: &[(&str, usize, &str)] = &[
    (
        "initializer-numeric",
        73,
        "an int literal past 2^31 does not wrap to a negative int yet (nor do ints convert to uint modulo 2^32)",
    ),
    (
        "majority-pragma",
        370,
        "given -Zpr and -Zpc, row-major wins, as in d3dcompiler_43's golden (a newer compiler, Windows' values, lets column-major win)",
    ),
    (
        "refract",
        232,
        "refract of halves returns float, as d3dcompiler_43 types it (its golden gives 1 too; a newer compiler picks the half overload)",
    ),
];

/// ps_1_x: a trial whose colour comes wholly from values beyond [-1, 1] compares nothing
/// at the least card's range; it is run again at [-8, 8], where two shaders that agree
/// only by their clamping are told apart (2 · 0.25 against 3 · 0.25), and one that is
/// the same passes.
#[test]
fn ps1_trials_beyond_the_least_range_are_run_again_at_a_wider_one() {
    let asm = |body: &str| {
        crate::shader::d3d9::asm::assemble(&format!(
            "ps_1_1\ndef c1, 1, 1, 1, 1\ndef c2, 0.25, 0.25, 0.25, 0.25\n{body}"
        ))
        .unwrap()
    };
    let twice = asm("add r1, c1, c1\nmul r0, r1, c2\n");
    let thrice = asm("add r1, c1, c1\nadd r1, r1, c1\nmul r0, r1, c2\n");
    let e = same_behaviour(&twice, &thrice, 4, 1).unwrap_err();
    assert!(e.contains("range [-8, 8]"), "{e}");
    same_behaviour(&twice, &twice, 4, 1).unwrap();
    // Beyond [-8, 8] as well: nothing is compared, and the test says so.
    let far =
        asm("add r1, c1, c1\nadd r1, r1, r1\nadd r1, r1, r1\nadd r1, r1, r1\nmul r0, r1, c2\n");
    let e = same_behaviour(&far, &far, 4, 1).unwrap_err();
    assert!(e.contains("nothing was compared"), "{e}");
}
