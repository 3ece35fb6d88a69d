//! Every container of `../shared/corpus/dxil/` decodes, and what it decodes to agrees
//! with the HLSL beside it: the stage and shader model its command line and entry-point
//! attributes state, the semantics its signatures name, the registers its resources
//! are declared at, its thread-group size, and the wave, quad and ray-query intrinsics
//! its entry calls. Skipped with a message without the corpus; a failure under CI=true.

use std::path::{Path, PathBuf};

use super::decode::{decode, Decoded, Program};
use super::hlsl::{self, Source};
use super::parts::Signature;

pub(crate) fn corpus_dir() -> Option<PathBuf> {
    crate::test_corpus::corpus("dxil")
}

pub(crate) fn containers(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "dxil"))
        .collect();
    v.sort();
    v
}

fn signatures(p: &Program) -> Vec<(&str, &Signature)> {
    p.parts
        .iter()
        .filter_map(|part| match &part.decoded {
            Some(Decoded::Signature(s)) => Some((part.fourcc.as_str(), s)),
            _ => None,
        })
        .collect()
}

/// HLSL calls and the DXIL opcodes they compile to (`dxbc.md` §10).
const CALLS: [(&[&str], &[u32]); 3] = [
    (&["WaveGetLaneIndex("], &[111]),
    (&["RayQuery<"], &[178]),
    (
        &[
            "QuadReadAcrossX(",
            "QuadReadAcrossY(",
            "QuadReadAcrossDiagonal(",
            "QuadReadLaneAt(",
            "QuadAny(",
            "QuadAll(",
        ],
        &[122, 123, 222],
    ),
];

/// Check one container against its source; returns what was checked.
fn check(path: &Path, p: &Program, source: &Source, words: &[String]) -> Vec<&'static str> {
    let name = path.file_name().unwrap().to_string_lossy();
    let mut checked = Vec::new();
    let c = hlsl::compiled(source, words);
    let header = p.program.as_ref().expect("a program header");
    assert_eq!(header.kind, c.stage, "{name}: stage (entry {})", c.entry);
    checked.push("stage");
    let model = (
        header.shader_model[..1].parse::<u8>().unwrap(),
        header.shader_model[2..].parse::<u8>().unwrap(),
    );
    if !c.models.is_empty() {
        assert!(
            c.models.contains(&model),
            "{name}: model {model:?}, source says {:?}",
            c.models
        );
        assert_eq!(header.dxil_version, format!("1.{}", model.1), "{name}");
        checked.push("model");
    }
    if let Some(stage) = hlsl::stage_by_attributes(source, &c.entry) {
        assert_eq!(header.kind, stage, "{name}: the attributes of {}", c.entry);
        checked.push("attributes");
    }

    let semantics = source.semantics();
    for (fourcc, sig) in signatures(p) {
        for e in &sig.elements {
            let upper = e.semantic.to_ascii_uppercase();
            assert!(
                semantics.contains(&upper),
                "{name}: {fourcc} names {}, the source does not",
                e.semantic
            );
            assert_eq!(
                upper.starts_with("SV_"),
                e.system_value != "Undefined",
                "{name}: {} is {}",
                e.semantic,
                e.system_value
            );
            checked.push("semantics");
        }
    }
    let outputs = signatures(p)
        .into_iter()
        .find(|s| s.0 == "OSG1")
        .map(|s| s.1.elements.clone());
    let writes = |sv: &str| outputs.iter().flatten().any(|e| e.system_value == sv);
    match c.stage {
        "vertex" => {
            assert_eq!(
                writes("Position"),
                source.entry_outputs(&c.entry, "SV_Position"),
                "{name}: SV_Position"
            );
            checked.push("position");
        }
        "pixel" => {
            assert_eq!(
                writes("Target"),
                source.entry_outputs(&c.entry, "SV_Target"),
                "{name}: SV_Target"
            );
            checked.push("targets");
        }
        _ => {}
    }

    let registers = source.registers();
    if let Some(psv) = &p.facts.psv {
        for r in &psv.resources {
            let class = r.class.expect("a resource class");
            let decl = registers
                .iter()
                .find(|d| d.class == class && d.index == r.lower_bound && d.space == r.space)
                .unwrap_or_else(|| {
                    panic!(
                        "{name}: {class}{} space{} is declared nowhere in {}",
                        r.lower_bound,
                        r.space,
                        source.path.display()
                    )
                });
            let upper = match decl.array {
                None => Some(r.lower_bound),
                Some(None) => None,
                Some(Some(n)) => Some(r.lower_bound + n - 1),
            };
            assert_eq!(r.upper_bound, upper, "{name}: the bounds of {}", decl.name);
            checked.push("registers");
        }
        if let (Some(threads), Some(declared)) =
            (psv.num_threads, hlsl::num_threads(source, &c.entry))
        {
            assert_eq!(threads, declared, "{name}: numthreads");
            checked.push("numthreads");
        }
    }

    let usage = p.facts.usage.as_ref().expect("the intrinsics");
    assert!(usage.complete, "{name}: every body read");
    let body = source.entry(&c.entry).map_or("", |e| e.1);
    for (calls, opcodes) in CALLS {
        let uses = opcodes.iter().any(|&op| usage.uses(op, ""));
        if calls.iter().any(|call| body.contains(call)) {
            assert!(uses, "{name}: {} calls {calls:?}", c.entry);
            checked.push("intrinsics");
        } else if !calls.iter().any(|call| source.code.contains(call)) {
            assert!(
                !uses,
                "{name}: uses {opcodes:?}, the source never calls {calls:?}"
            );
            checked.push("intrinsics");
        }
    }
    checked
}

#[test]
fn every_container_agrees_with_its_source() {
    let Some(dir) = corpus_dir() else { return };
    let mut without_source = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    let all = containers(&dir);
    assert_eq!(all.len(), 129);
    for path in &all {
        let bytes = std::fs::read(path).unwrap();
        let p = decode(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(p.problems(), Vec::<String>::new(), "{}", path.display());
        assert_eq!(p.digest.status, "valid", "{}", path.display());
        let Some((source, words)) = hlsl::source_of(path) else {
            without_source.push(path.file_name().unwrap().to_string_lossy().into_owned());
            continue;
        };
        for what in check(path, &p, &Source::read(&source), &words) {
            *counts.entry(what).or_insert(0) += 1;
        }
    }
    // The corpus README says each container has its source beside it; two do not.
    assert_eq!(
        without_source,
        ["structured_layout.dxil", "structured_tail.dxil"]
    );
    eprintln!("checked against the sources: {counts:?}");
    assert_eq!(counts["stage"], 127);
    assert!(counts["model"] >= 100, "{counts:?}");
    assert!(counts["registers"] >= 150, "{counts:?}");
    assert!(counts["semantics"] >= 150, "{counts:?}");
}

/// The census's short way to a container's facts finds what the whole decode finds.
#[test]
fn facts_alone_agree_with_the_whole_decode() {
    let Some(dir) = corpus_dir() else { return };
    for path in containers(&dir) {
        let bytes = std::fs::read(&path).unwrap();
        let mut whole = decode(&bytes).unwrap().facts;
        whole.signature = None;
        let alone = super::decode::facts(&bytes).unwrap();
        assert_eq!(
            format!("{alone:?}"),
            format!("{whole:?}"),
            "{}",
            path.display()
        );
    }
}

/// Hostile bytes: corpus containers with bytes changed (the bitcode above all, where
/// the reader is most involved) and cut short decode to a result, never a panic.
#[test]
fn damaged_containers_never_panic() {
    let Some(dir) = corpus_dir() else { return };
    let mut state = 0x5EED_u64;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for path in containers(&dir).iter().step_by(9) {
        let good = std::fs::read(path).unwrap();
        let dxil = super::container::parse(&good)
            .unwrap()
            .part(b"DXIL")
            .unwrap()
            .data
            .clone();
        for round in 0..300 {
            let mut bad = good.clone();
            for _ in 0..1 + round % 4 {
                let at = if round % 3 == 0 {
                    next() as usize % bad.len()
                } else {
                    dxil.start + 24 + next() as usize % (dxil.len() - 24)
                };
                bad[at] = next() as u8;
            }
            let _ = decode(&bad);
            let cut = next() as usize % bad.len();
            let _ = decode(&bad[..cut]);
            // The digest says nothing about the parts: decode them even when it is wrong.
            let _ = super::intrinsics::usage(&bad[dxil.start + 24..dxil.end]);
        }
    }
}

/// The mask byte after an element's component mask reads as dxc's "Used" column: for
/// inputs the components the program always reads, for outputs the components it
/// writes (the byte holds those it never writes). Checked against `draw.hlsl`:
/// `ps_derivatives` reads `col.x`, `col.y`, `uv.x`, `uv.y`, `pos.z`, `pos.w` and not `id`;
/// `vs_main` writes all of `pos`, `col`, `uv` (a `float2`) and `id`.
#[test]
fn signature_usage_reads_as_the_source_says() {
    let Some(dir) = corpus_dir() else { return };
    let used = |file: &str, fourcc: &str| -> Vec<(String, String, Option<String>)> {
        let p = decode(&std::fs::read(dir.join(file)).unwrap()).unwrap();
        let (_, sig) = signatures(&p).into_iter().find(|s| s.0 == fourcc).unwrap();
        sig.elements
            .iter()
            .map(|e| {
                let name = format!("{}{}", e.semantic, e.semantic_index);
                (name, e.used.clone(), e.never_writes.clone())
            })
            .collect()
    };
    let s = |a: &str, b: &str, c: Option<&str>| (a.to_string(), b.to_string(), c.map(String::from));
    assert_eq!(
        used("draw_derivatives.dxil", "ISG1"),
        [
            s("SV_Position0", "zw", None),
            s("COLOR0", "xy", None),
            s("TEXCOORD0", "xy", None),
            s("TEXCOORD1", "-", None),
        ]
    );
    assert_eq!(
        used("draw_vs.dxil", "OSG1"),
        [
            s("SV_Position0", "xyzw", Some("-")),
            s("COLOR0", "xyzw", Some("-")),
            s("TEXCOORD0", "xy", Some("zw")),
            s("TEXCOORD1", "xyzw", Some("-")),
        ]
    );
}
