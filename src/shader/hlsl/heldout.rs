//! The compiler on a held-out set: shaders of our own in the style modders ship (CRT and
//! video post effects, open-world lighting, skinning, post-processing), kept with
//! Microsoft's goldens in `testdata/heldout/` (its README says how they were made). For
//! every source and profile: ours compiles it, with Microsoft's constant table, to code
//! that fits the profile and behaves as Microsoft's on random inputs. Pairs that do not
//! yet are listed in [`NOT_YET`] with the first stage they fail at, and the list is exact:
//! one that gets further must leave it (or move to its new stage). The slot totals,
//! ours against Microsoft's, are printed.

use std::path::{Path, PathBuf};

use super::behaviour::same_behaviour;
use super::compile::{compile, Options};
use super::corpus::{slots, table};
use crate::shader::d3d9::{bytecode, validate};

/// The first check a source fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Ours refuses it.
    Compile,
    /// Ours compiles it to code the profile does not allow (or that needs a capability
    /// beyond the profile's guaranteed minimum).
    Limits,
    /// The constant tables differ.
    Table,
    /// The two shaders write different outputs.
    Behaviour,
}

/// Pairs ours does not handle yet: `source.profile`, the stage it fails at, and why.
const NOT_YET: &[(&str, Stage, &str)] = &[];

const TRIALS: u32 = 24;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/shader/hlsl/testdata/heldout")
}

/// `profiles.txt`: each source with the profiles its goldens were made for.
fn pairs(dir: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir.join("profiles.txt")).unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let source = words.next().unwrap();
        for profile in words {
            out.push((source.to_string(), profile.to_string()));
        }
    }
    out
}

/// The first stage a pair fails at and how, or `None`; and the slots, ours and Microsoft's.
type Checked = (Option<(Stage, String)>, Option<(u32, u32)>);

/// Where ours and Microsoft's part for one pair, or `None` if they agree throughout.
fn check(dir: &Path, source: &str, profile: &str, seed: u64) -> Checked {
    let path = dir.join(format!("{source}.hlsl"));
    let text = std::fs::read_to_string(&path).unwrap();
    let ms = std::fs::read(dir.join(format!("{source}.{profile}.bin"))).unwrap();
    let options = Options {
        profile: profile.into(),
        entry: "main".into(),
        ..Options::default()
    };
    let ours = match compile(&format!("{source}.hlsl"), &text, Some(&path), &options) {
        Ok(c) => c.bytecode,
        Err(f) => return (Some((Stage::Compile, f.render())), None),
    };
    let slot_pair = slots(&ours).zip(slots(&ms));
    let limits = match bytecode::parse(&ours) {
        Err(e) => Some(format!("our bytecode does not parse: {e:?}")),
        Ok(shader) => {
            let mut found: Vec<String> = validate::validate(&shader)
                .into_iter()
                .map(|d| format!("at {}: {}", d.offset, d.message))
                .collect();
            found.extend(validate::notes(&shader));
            (!found.is_empty()).then(|| found.join("\n"))
        }
    };
    if let Some(e) = limits {
        return (Some((Stage::Limits, e)), slot_pair);
    }
    let (mut a, mut b) = (table(&ms), table(&ours));
    for t in [&mut a, &mut b].into_iter().flatten() {
        // As the corpus test: the game binds by names, sets, registers and types.
        t.flags = 0;
        for c in &mut t.constants {
            c.reserved = 0;
        }
    }
    if a != b {
        return (
            Some((Stage::Table, format!("Microsoft's {a:?}\nours {b:?}"))),
            slot_pair,
        );
    }
    if let Err(e) = same_behaviour(&ms, &ours, TRIALS, seed) {
        return (Some((Stage::Behaviour, e)), slot_pair);
    }
    (None, slot_pair)
}

#[test]
fn heldout_shaders_compile_and_behave_as_microsofts() {
    check_set("held-out", &dir(), NOT_YET);
}

/// Sources of our own that hold a gap found on shaders we did not write (the README of
/// `testdata/regressions/` says which): each must compile and behave as Microsoft's.
#[test]
fn regression_shaders_compile_and_behave_as_microsofts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/shader/hlsl/testdata/regressions");
    check_set("regressions", &dir, &[]);
}

/// Every pair of a set of sources with Microsoft's goldens checked, pairs in `not_yet`
/// failing exactly where listed.
fn check_set(set: &str, dir: &Path, not_yet: &[(&str, Stage, &str)]) {
    let pairs = pairs(dir);
    // Every golden kept is in profiles.txt, and every pair there has its golden.
    let mut bins: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".bin").map(str::to_string))
        .collect();
    bins.sort();
    let mut listed: Vec<String> = pairs.iter().map(|(s, p)| format!("{s}.{p}")).collect();
    listed.sort();
    assert_eq!(bins, listed, "the goldens and profiles.txt disagree");
    for (stem, _, _) in not_yet {
        assert!(
            listed.iter().any(|l| l == stem),
            "NOT_YET names {stem}, not a pair"
        );
    }

    let mut problems = Vec::new();
    let (mut compiled, mut fit, mut agree, mut behave) = (0, 0, 0, 0);
    let (mut ours_slots, mut ms_slots) = (0u64, 0u64);
    eprintln!("{:<32} {:>6} {:>6}  result", "shader", "ours", "ms");
    for (k, (source, profile)) in pairs.iter().enumerate() {
        let stem = format!("{source}.{profile}");
        let (failure, slot_pair) = check(dir, source, profile, 0x4E1D ^ k as u64);
        let stage = failure.as_ref().map(|(s, _)| *s);
        // Stages passed, in order.
        let reached = match stage {
            Some(Stage::Compile) => 0,
            Some(Stage::Limits) => 1,
            Some(Stage::Table) => 2,
            Some(Stage::Behaviour) => 3,
            None => 4,
        };
        compiled += usize::from(reached >= 1);
        fit += usize::from(reached >= 2);
        agree += usize::from(reached >= 3);
        behave += usize::from(reached >= 4);
        if let Some((a, b)) = slot_pair {
            ours_slots += u64::from(a);
            ms_slots += u64::from(b);
        }
        let (ours_col, ms_col) = match slot_pair {
            Some((a, b)) => (a.to_string(), b.to_string()),
            None => ("-".into(), "-".into()),
        };
        eprintln!(
            "{stem:<32} {ours_col:>6} {ms_col:>6}  {}",
            stage.map_or("ok".to_string(), |s| format!("{s:?}"))
        );
        let entry = not_yet.iter().find(|(k, _, _)| *k == stem);
        match (&failure, entry) {
            (None, None) => {}
            (None, Some(_)) => problems.push(format!(
                "{stem}: listed in NOT_YET, but agrees throughout: take it off"
            )),
            (Some((s, _)), Some((_, listed, _))) if s == listed => {}
            (Some((s, e)), Some((_, listed, _))) => problems.push(format!(
                "{stem}: listed in NOT_YET as failing at {listed:?}, but fails at {s:?}:\n{e}"
            )),
            (Some((s, e)), None) => problems.push(format!("{stem}: {s:?}:\n{e}")),
        }
    }
    eprintln!(
        "{set}: {} pairs; {compiled} compile, {fit} fit the profile, {agree} constant tables agree, {behave} behave as Microsoft's on {TRIALS} random inputs ({} not yet, listed); slots {ours_slots} against Microsoft's {ms_slots} ({:.3}x)",
        pairs.len(),
        not_yet.len(),
        ours_slots as f64 / ms_slots.max(1) as f64
    );
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}
