//! The compiler on the corpus's sources: what Microsoft's compiler compiles, ours
//! compiles, with the same constant table; what it refuses, ours refuses. Sources ours
//! does not handle yet are listed with the reason, and the list must stay true: one that
//! starts to work must leave it. The slot totals against Microsoft's are printed.

use std::collections::BTreeMap;
use std::path::Path;

use super::behaviour::golden_flags;
use super::compile::{compile, Options};
use crate::shader::d3d9::ctab::ConstantTable;
use crate::shader::d3d9::disasm;

/// Sources Microsoft's compiler compiles that ours does not yet, and why.
const NOT_YET: &[(&str, &str)] = &[];

/// Refusals of Microsoft's that ours does not make, and why.
const ACCEPTED: &[(&str, &str)] = &[];

/// Constant tables that differ from Microsoft's, and how.
const TABLES_DIFFER: &[(&str, &str)] = &[];

/// A constant table as the game and D3DX see it: every field but the creator.
pub(super) fn table(bytes: &[u8]) -> Option<ConstantTable> {
    let mut t = ConstantTable::from_bytecode(bytes).ok().flatten()?;
    t.creator.clear();
    for c in &mut t.constants {
        // Which type infos a table shares is layout, not meaning.
        c.own_type = false;
    }
    Some(t)
}

/// [`table`] as the game binds by it: names, sets, registers and types, without the flags
/// and the reserved marks (which the listing tests compare).
pub(super) fn binding_table(bytes: &[u8]) -> Option<ConstantTable> {
    let mut t = table(bytes)?;
    t.flags = 0;
    for c in &mut t.constants {
        c.reserved = 0;
    }
    Some(t)
}

pub(super) fn slots(bytes: &[u8]) -> Option<u32> {
    let text = disasm::disassemble(bytes).ok()?;
    let line = text
        .lines()
        .find(|l| l.contains("instruction slots used"))?;
    line.split_whitespace().find_map(|w| w.parse().ok())
}

#[test]
fn sources_compile_as_microsofts() {
    let Some(dir) = crate::test_corpus::corpus("hlsl") else {
        return;
    };
    let dir = dir.join("vkd3d");
    let flags = golden_flags(&dir);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    let mut problems = Vec::new();
    let (mut compiled, mut goldens, mut refusals, mut refused) = (0, 0, 0, 0);
    let (mut ours_slots, mut ms_slots) = (0u64, 0u64);
    // bench/ asks for the slots of each shader, to show where the total goes.
    let mut slot_rows = String::new();
    let mut tables_agree = 0;
    let mut seen: BTreeMap<&str, bool> = BTreeMap::new();
    for name in &names {
        let (stem, refusal) = match (name.strip_suffix(".bin"), name.strip_suffix(".refused.txt")) {
            (Some(s), _) => (s, false),
            (_, Some(s)) => (s, true),
            _ => continue,
        };
        let Some((source, profile)) = stem.rsplit_once('.') else {
            continue;
        };
        if !matches!(profile, "ps_2_0" | "ps_3_0" | "vs_2_0" | "vs_3_0") {
            continue;
        }
        let path = dir.join(format!("{source}.hlsl"));
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let options = Options {
            profile: profile.into(),
            entry: "main".into(),
            flags: flags.get(name).copied().unwrap_or(0),
            ..Options::default()
        };
        let result = compile(
            &format!("{source}.hlsl"),
            &text,
            Some(Path::new(&path)),
            &options,
        );
        if refusal {
            refusals += 1;
            let listed = ACCEPTED.iter().find(|(k, _)| *k == source);
            match (&result, listed) {
                (Err(f), None) => {
                    refused += 1;
                    let first = f
                        .diagnostics
                        .list
                        .iter()
                        .find(|d| d.severity == super::diag::Severity::Error);
                    assert!(
                        first.is_some_and(|d| d.loc.line > 0),
                        "{stem}: refused without a line"
                    );
                }
                (Err(_), Some(_)) => {
                    problems.push(format!("{stem}: listed as accepted, but refused"))
                }
                (Ok(_), Some(_)) => {
                    seen.insert(source, true);
                }
                (Ok(_), None) => {
                    problems.push(format!("{stem}: Microsoft refuses it, ours compiles it"))
                }
            }
            continue;
        }
        goldens += 1;
        let listed = NOT_YET.iter().find(|(k, _)| *k == stem);
        let ours = match (result, listed) {
            (Ok(c), None) => c,
            (Ok(_), Some(_)) => {
                problems.push(format!(
                    "{stem}: listed as not yet compiled, but compiles: take it off NOT_YET"
                ));
                continue;
            }
            (Err(_), Some(_)) => continue,
            (Err(f), None) => {
                problems.push(format!(
                    "{stem}: Microsoft compiles it, ours does not:\n{}",
                    f.render()
                ));
                continue;
            }
        };
        compiled += 1;
        let ms = std::fs::read(dir.join(name)).unwrap();
        if let (Some(a), Some(b)) = (slots(&ours.bytecode), slots(&ms)) {
            ours_slots += u64::from(a);
            ms_slots += u64::from(b);
            slot_rows.push_str(&format!("{stem}\t{a}\t{b}\n"));
        }
        let (a, b) = (binding_table(&ms), binding_table(&ours.bytecode));
        let listed = TABLES_DIFFER.iter().any(|(k, _)| *k == stem);
        match (a == b, listed) {
            (true, false) => tables_agree += 1,
            (true, true) => problems.push(format!("{stem}: table listed as differing, but agrees")),
            (false, true) => {}
            (false, false) => problems.push(format!(
                "{stem}: constant table differs:\nMicrosoft's {a:?}\nours {b:?}"
            )),
        }
    }
    if let Some(out) = std::env::var_os("SHADERFS_SLOT_TABLE") {
        std::fs::write(&out, &slot_rows).unwrap();
    }
    eprintln!(
        "{compiled} of {goldens} sources Microsoft compiles compile ({} not yet, listed); {tables_agree} constant tables agree; {refused} of {refusals} refusals agree; slots {ours_slots} against Microsoft's {ms_slots} ({:.3}x)",
        NOT_YET.len(),
        ours_slots as f64 / ms_slots.max(1) as f64
    );
    assert_eq!(seen.len(), ACCEPTED.len(), "an ACCEPTED entry was not met");
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
