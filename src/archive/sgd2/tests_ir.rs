//! The IR views and the name index: every program's `.ll` is its container's listing and
//! the effects' links reach it as they reach the `.dxil`; `index.json` and `by-name/`
//! find every program by its name (escaped, within 255 bytes) and CRC-32; damaged
//! bitcode is an error that says where, and the container JSON keeps one list of
//! problems.

use std::collections::HashMap;

use serde_json::Value;

use super::generate::Spec;
use super::read::{self, STAGES};
use super::tests::{resolve, tree};
use super::Database;
use crate::shader::dxbc::listing;
use crate::vfs::{Archive, EntryKind, ViewError};

fn generated(spec: &Spec) -> Option<Vec<u8>> {
    super::tests::generated(spec).map(|(bytes, _)| bytes)
}

fn open(bytes: &[u8]) -> Database {
    super::tests::open(bytes).unwrap()
}

fn read(db: &Database, t: &HashMap<String, EntryKind>, path: &str) -> Result<Vec<u8>, ViewError> {
    match t.get(path) {
        Some(EntryKind::File { key, .. }) => db.read(*key).map(|b| b.as_slice().to_vec()),
        other => panic!("{path}: not a file but {other:?}"),
    }
}

fn json(db: &Database, t: &HashMap<String, EntryKind>, path: &str) -> Value {
    serde_json::from_slice(&read(db, t, path).unwrap()).unwrap()
}

fn link_target<'t>(t: &'t HashMap<String, EntryKind>, path: &str) -> &'t str {
    match t.get(path) {
        Some(EntryKind::Symlink { target }) => target,
        other => panic!("{path}: not a link but {other:?}"),
    }
}

#[test]
fn every_program_has_its_ir_and_effects_link_to_it() {
    let Some(bytes) = generated(&Spec::per_stage(4)) else {
        return;
    };
    let db = open(&bytes);
    let t = tree(&db);
    let index = read::index(&bytes).unwrap();
    for (g, stage) in STAGES.iter().enumerate() {
        for (i, p) in index.groups[g].programs.iter().enumerate() {
            let path = format!("programs/{stage}/{i}.ll");
            let Some(EntryKind::File {
                source, writable, ..
            }) = t.get(&path)
            else {
                panic!("{path} missing");
            };
            assert_eq!(source.clone(), Some(p.offset..p.bindings().end), "{path}");
            assert!(!writable);
            let text = read(&db, &t, &path).unwrap();
            let want =
                listing::listing(&bytes[p.container()], &format!("programs/{stage}/{i}.dxil"))
                    .unwrap();
            assert_eq!(String::from_utf8(text).unwrap(), want);
            assert!(want.contains("\ntarget triple = \"dxil-ms-dx\"\n"));
        }
    }
    // Every effect's link to a program's container has a twin to its IR.
    let mut twins = 0;
    for (path, kind) in &t {
        let EntryKind::Symlink { target } = kind else {
            continue;
        };
        if !path.starts_with("effects/") {
            continue;
        }
        let Some(stem) = path.strip_suffix(".dxil") else {
            continue;
        };
        let ir = format!("{stem}.ll");
        let to_ir = resolve(&ir, link_target(&t, &ir));
        assert_eq!(to_ir, resolve(path, target).replace(".dxil", ".ll"), "{ir}");
        assert!(
            matches!(t.get(&to_ir), Some(EntryKind::File { .. })),
            "{to_ir}"
        );
        twins += 1;
    }
    assert!(twins > 40, "{twins}");
}

#[test]
fn programs_are_found_by_name() {
    let Some(bytes) = generated(&Spec::per_stage(9)) else {
        return;
    };
    let db = open(&bytes);
    let t = tree(&db);
    let index = read::index(&bytes).unwrap();
    let pixel = &index.groups[1].programs;
    let j = json(&db, &t, "programs/pixel/index.json");
    assert_eq!(j["stage"], "pixel");
    assert_eq!(j["programs"].as_array().unwrap().len(), 9);
    for (i, p) in pixel.iter().enumerate() {
        let entry = &j["programs"][i];
        let name = String::from_utf8_lossy(&bytes[p.name()]).into_owned();
        let crc = format!("{:#010x}", crc32fast::hash(&bytes[p.container()]));
        assert_eq!(entry["name"], name.as_str());
        assert_eq!(entry["crc32"], crc.as_str());
        // One jq answers which programs share the name, and which the container.
        let same_name: Vec<usize> = (0..9)
            .filter(|&k| bytes[pixel[k].name()] == bytes[p.name()])
            .collect();
        assert_eq!(j["by_name"][&name], serde_json::json!(same_name));
        assert!(j["by_crc32"][&crc].as_array().unwrap().contains(&i.into()));
        // And `ls by-name/NAME/` lists them, each link leading to the program.
        let dir = format!("programs/pixel/{}", entry["by_name"].as_str().unwrap());
        assert!(matches!(t.get(&dir), Some(EntryKind::Dir)), "{dir}");
        let leaf = dir.rsplit('/').next().unwrap();
        assert!(leaf.len() <= 255 && !leaf.contains('/'), "{leaf}");
        let link = format!("{dir}/{i}.dxil");
        assert_eq!(
            resolve(&link, link_target(&t, &link)),
            format!("programs/pixel/{i}.dxil")
        );
    }
    // Names that are not file names as they are: escaped, the longest cut to 255 bytes
    // with the CRC-32 of the whole name.
    let dirs: Vec<&str> = t
        .keys()
        .filter_map(|p| p.strip_prefix("programs/pixel/by-name/"))
        .filter(|p| !p.contains('/'))
        .collect();
    assert_eq!(dirs.len(), 3, "{dirs:?}");
    assert!(dirs.contains(&"PS_..%2FWet%2FFoliage%0A"), "{dirs:?}");
    let long = format!("~{:08x}", crc32fast::hash("/".repeat(254).as_bytes()));
    let cut = dirs
        .iter()
        .find(|d| d.ends_with(&long))
        .expect("the long name");
    assert_eq!(cut.len(), 255);
    assert!(t.keys().all(|p| p.split('/').all(|c| c.len() <= 255)));
}

/// The offset of byte `at` of program `i` of group `g`'s bitcode in the file.
fn bitcode_at(bytes: &[u8], g: usize, i: usize) -> (usize, usize) {
    let index = read::index(bytes).unwrap();
    let c = index.groups[g].programs[i].container();
    let (at, bc) = listing::bitcode(&bytes[c.clone()]).unwrap();
    (c.start + at, bc.len())
}

#[test]
fn damaged_bitcode_is_an_error_that_says_where() {
    let Some(mut bytes) = generated(&Spec::per_stage(3)) else {
        return;
    };
    let (start, len) = bitcode_at(&bytes, 1, 0);
    for b in &mut bytes[start + len / 2..start + len / 2 + 16] {
        *b = 0xFF;
    }
    let db = open(&bytes);
    let t = tree(&db);
    let Err(ViewError::Corrupt(why)) = read(&db, &t, "programs/pixel/0.ll") else {
        panic!("damaged bitcode read");
    };
    let offset = why
        .strip_prefix("file offset 0x")
        .and_then(|r| r.split(':').next())
        .and_then(|h| usize::from_str_radix(h, 16).ok())
        .unwrap_or_else(|| panic!("{why}"));
    assert!((start..start + len).contains(&offset), "{why}");
    assert!(why.contains("_BLOCK"), "names the block or record: {why}");
    // The container is served as it is, and its JSON says what is wrong with it.
    let index = read::index(&bytes).unwrap();
    let p = &index.groups[1].programs[0];
    assert_eq!(
        read(&db, &t, "programs/pixel/0.dxil").unwrap(),
        &bytes[p.container()]
    );
    let j = json(&db, &t, "programs/pixel/0.json");
    let problems = j["container"]["problems"].as_array().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p.as_str().unwrap().contains("digest")),
        "{problems:?}"
    );
    // The other programs are untouched.
    assert!(read(&db, &t, "programs/pixel/1.ll").is_ok());
}

#[test]
fn a_container_that_is_not_one_has_its_problem_in_the_one_list() {
    let Some(mut bytes) = generated(&Spec::per_stage(3)) else {
        return;
    };
    let index = read::index(&bytes).unwrap();
    let c = index.groups[1].programs[2].container().start;
    bytes[c + 3] = b'X';
    let db = open(&bytes);
    let t = tree(&db);
    let j = json(&db, &t, "programs/pixel/2.json");
    let container = j["container"].as_object().unwrap();
    assert!(!container.contains_key("problem"), "one field for problems");
    let problems = container["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0]
            .as_str()
            .unwrap()
            .contains("not a DXBC container"),
        "{problems:?}"
    );
    let Err(ViewError::Corrupt(why)) = read(&db, &t, "programs/pixel/2.ll") else {
        panic!("a listing of no container");
    };
    assert!(why.contains("not a DXBC container"), "{why}");
}
