//! The SGD2 reader and tree: a generated database exhaustively, the full-size one for
//! counts and spot checks, the public parser's database field by field, every prefix and
//! random corruption.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use super::effect::{self, Decoded};
use super::generate::{self, Spec, Summary};
use super::read::{self, Sgd2Error};
use super::Database;
use crate::vfs::{Archive, EntryKind};

fn corpus(sub: &str) -> Option<PathBuf> {
    crate::test_corpus::corpus(sub)
}

fn containers() -> Option<&'static [Vec<u8>]> {
    static CONTAINERS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    let dir = corpus("dxil")?;
    Some(CONTAINERS.get_or_init(|| generate::corpus_containers(&dir).unwrap()))
}

pub(super) fn generated(spec: &Spec) -> Option<(Vec<u8>, Summary)> {
    let mut bytes = Vec::new();
    let summary = generate::generate(spec, containers()?, &mut bytes).unwrap();
    assert_eq!(summary.bytes, bytes.len() as u64);
    Some((bytes, summary))
}

pub(super) fn open(bytes: &[u8]) -> Result<Database, Sgd2Error> {
    Database::open(
        Path::new("test.awc"),
        crate::vfs::ArchiveBytes::owned(bytes.to_vec()),
    )
}

/// The tree as path → entry kind.
pub(super) fn tree(db: &Database) -> HashMap<String, EntryKind> {
    let mut out = HashMap::new();
    for e in db.entries() {
        let parent = e.path.rsplit_once('/').map(|p| p.0.to_string());
        if let Some(parent) = parent {
            assert!(
                matches!(out.get(&parent), Some(EntryKind::Dir)),
                "{} listed before its directory",
                e.path
            );
        }
        assert!(
            out.insert(e.path.clone(), e.kind).is_none(),
            "{} listed twice",
            e.path
        );
    }
    out
}

fn read(db: &Database, tree: &HashMap<String, EntryKind>, path: &str) -> Vec<u8> {
    match tree.get(path) {
        Some(EntryKind::File { key, .. }) => db
            .read(*key)
            .unwrap_or_else(|e| panic!("{path}: {e}"))
            .as_slice()
            .to_vec(),
        other => panic!("{path}: not a file but {other:?}"),
    }
}

fn json(db: &Database, tree: &HashMap<String, EntryKind>, path: &str) -> Value {
    let bytes = read(db, tree, path);
    assert!(bytes.ends_with(b"}\n") || bytes.ends_with(b"]\n"), "{path}");
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Resolve a relative symlink target from the directory of `link`.
pub(super) fn resolve(link: &str, target: &str) -> String {
    let mut parts: Vec<&str> = link.split('/').collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

#[test]
fn a_small_database_reads_exhaustively() {
    let spec = Spec::per_stage(3);
    let Some((bytes, summary)) = generated(&spec) else {
        return;
    };
    let db = open(&bytes).unwrap();
    let t = tree(&db);
    let index = read::index(&bytes).unwrap();
    assert!(index.warnings.is_empty(), "{:?}", index.warnings);
    let corpus_crcs: Vec<u32> = containers()
        .unwrap()
        .iter()
        .map(|c| crc32fast::hash(c))
        .collect();

    let archive = json(&db, &t, "archive.json");
    assert_eq!(archive["file_size"], bytes.len());
    assert_eq!(archive["program_count"], 18);
    assert_eq!(archive["effect_count"], summary.effects);
    assert_eq!(
        archive["effects_with_techniques"],
        summary.effects_with_techniques
    );
    assert!(!t.contains_key("programs/group6") && !t.contains_key("programs/group7"));

    // Every program: bytes as stored, JSON that agrees with them, bindings in agreement.
    let mut names = HashMap::new();
    for (g, stage) in read::STAGES.iter().enumerate() {
        for i in 0..3 {
            let dxil = read(&db, &t, &format!("programs/{stage}/{i}.dxil"));
            let p = &index.groups[g].programs[i];
            assert_eq!(dxil, &bytes[p.container()]);
            assert!(corpus_crcs.contains(&crc32fast::hash(&dxil)));
            let j = json(&db, &t, &format!("programs/{stage}/{i}.json"));
            assert_eq!(j["stage"], *stage);
            assert_eq!(
                j["container"]["crc32"],
                format!("{:#010x}", crc32fast::hash(&dxil))
            );
            assert!(j["container"]["parts"].as_array().unwrap().len() >= 3);
            assert_eq!(
                &j["container"]["program"]["profile"].as_str().unwrap()[..2],
                ["vs", "ps", "gs", "ds", "hs", "cs"][g]
            );
            assert_eq!(j["table"]["bytes_144"].as_str().unwrap().len(), 288);
            let b = &j["bindings"];
            assert_eq!(b["warnings"], Value::Array(vec![]), "{stage}/{i}");
            let header = &b["header"];
            assert_eq!(
                header["seed"]["constant_count"],
                header["public_parser"]["cbuffer_count"]
            );
            for r in b["resources"].as_array().unwrap() {
                assert_eq!(r["names_agree"], true);
                assert!(r["name"].is_string());
            }
            for c in b["constants"].as_array().unwrap() {
                assert_eq!(c["names_agree"], true);
                assert_eq!(c["owner"], c["owner_by_offset"]);
                if c["name"] == "specularFresnel" {
                    assert_eq!(c["second_hash_resolves_to"]["name"], "Fresnel");
                }
            }
            *names
                .entry(j["name"].as_str().unwrap().to_string())
                .or_insert(0) += 1;
        }
    }
    assert!(names.values().any(|&n| n > 1), "programs share names");

    // Every effect: lists, symlinks into programs/, passes and states.
    let mut decoded = 0;
    for (i, e) in index.effects.iter().enumerate() {
        let tree_e = &db.effects[i];
        let base = format!("effects/{}", tree_e.dir);
        let j = json(&db, &t, &format!("{base}/effect.json"));
        assert_eq!(j["index"], i);
        assert_eq!(
            read(&db, &t, &format!("{base}/pre_proplst.bin")),
            &bytes[e.region.clone()]
        );
        for (s, stage) in read::STAGES.iter().enumerate() {
            for (k, program) in e.list(&bytes, s).enumerate() {
                let link = format!("{base}/programs/{stage}/{k}.dxil");
                let Some(EntryKind::Symlink { target }) = t.get(&link) else {
                    panic!("{link} is not a symlink");
                };
                assert_eq!(
                    resolve(&link, target),
                    format!("programs/{stage}/{program}.dxil")
                );
            }
        }
        match &tree_e.layout {
            Decoded::Found(layout) => {
                decoded += 1;
                for (tn, tdir) in layout.techniques.iter().zip(&tree_e.technique_dirs) {
                    for (k, p) in tn.passes.clone().enumerate() {
                        let dir = format!("{base}/passes/{tdir}/{k}");
                        let state = json(&db, &t, &format!("{dir}/state.json"));
                        assert_eq!(state["pass"], k);
                        assert_eq!(state["name"], format!("p{k}"));
                        let pass = &layout.passes[p];
                        for (s, &pos) in pass.programs.iter().enumerate() {
                            let link = format!("{dir}/{}.dxil", read::STAGES[s]);
                            if pos == 0 {
                                assert!(!t.contains_key(&link));
                                continue;
                            }
                            let program = e.list(&bytes, s).nth(pos as usize - 1).unwrap();
                            let Some(EntryKind::Symlink { target }) = t.get(&link) else {
                                panic!("{link} is not a symlink");
                            };
                            assert_eq!(
                                resolve(&link, target),
                                format!("programs/{}/{program}.dxil", read::STAGES[s])
                            );
                        }
                    }
                }
                assert_ne!(j["techniques"], "undecoded");
            }
            Decoded::Undecoded(_) => assert_eq!(j["techniques"], "undecoded"),
        }
    }
    assert_eq!(decoded, summary.effects_with_techniques);

    // Known-effect controls (`sgd2.md` §5.4).
    let state = json(&db, &t, "effects/default/passes/draw/0/state.json");
    assert_eq!(
        state["depth_stencil"]["depth_func"],
        "D3D12_COMPARISON_FUNC_GREATER"
    );
    let decal = json(&db, &t, "effects/decal/passes/deferred/0/state.json");
    let rt0 = &decal["blend"]["render_targets"][0];
    assert_eq!(rt0["src_blend"], "D3D12_BLEND_SRC_ALPHA");
    assert_eq!(rt0["dest_blend"], "D3D12_BLEND_INV_SRC_ALPHA");
    let additive = json(
        &db,
        &t,
        "effects/emissive_additive_alpha/passes/shadow/0/state.json",
    );
    let rt0 = &additive["blend"]["render_targets"][0];
    assert_eq!(rt0["src_blend"], "D3D12_BLEND_SRC_ALPHA");
    assert_eq!(rt0["dest_blend"], "D3D12_BLEND_ONE");

    // Names that collide or are not file names are escaped, never merged.
    for name in [
        "default",
        "default~1",
        "..%2F..%2Fescape",
        "a%2Fb",
        "tab%09here",
        "%2E%2E",
    ] {
        assert!(
            matches!(t.get(&format!("effects/{name}")), Some(EntryKind::Dir)),
            "effects/{name}"
        );
    }

    // Read-only.
    let refused = db.new_member("programs/pixel", "9.dxil").unwrap_err();
    assert!(refused.contains("past the end"), "{refused}");
    assert!(db.new_member("programs", "notes.txt").is_err());
    let edit = crate::vfs::Edit::Remove { key: 0 };
    assert!(db
        .apply(&edit)
        .unwrap_err()
        .to_string()
        .contains("only programs/"));
}

#[test]
fn the_full_size_database_has_the_game_counts() {
    let Some((bytes, summary)) = generated(&Spec::full()) else {
        return;
    };
    let db = open(&bytes).unwrap();
    let counts: Vec<usize> = db.index.groups.iter().map(|g| g.programs.len()).collect();
    assert_eq!(counts, [3707, 7594, 0, 458, 406, 240, 0, 0]);
    assert_eq!(counts.iter().sum::<usize>(), 12_405);
    assert_eq!(db.index.effects.len(), 388);
    let decoded = db
        .effects
        .iter()
        .filter(|e| matches!(e.layout, Decoded::Found(_)))
        .count();
    assert_eq!(decoded as u32, summary.effects_with_techniques);
    assert!(decoded > 300);
    let t = tree(&db);
    let pixel = t
        .keys()
        .filter_map(|p| p.strip_prefix("programs/pixel/"))
        .filter(|p| p.starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(pixel, 3 * 7594, "N.dxil, N.json, N.ll");
    let by_name = t
        .keys()
        .filter(|p| p.starts_with("programs/pixel/by-name/") && p.ends_with(".dxil"))
        .count();
    assert_eq!(by_name, 7594);
    for (path, stage, g) in [
        ("programs/pixel/7593", "pixel", 1),
        ("programs/vertex/0", "vertex", 0),
        ("programs/compute/239", "compute", 5),
        ("programs/hull/405", "hull", 4),
    ] {
        let j = json(&db, &t, &format!("{path}.json"));
        let i: usize = path.rsplit('/').next().unwrap().parse().unwrap();
        let p = &db.index.groups[g].programs[i];
        assert_eq!(j["stage"], stage);
        // Offsets are the index's, not the program's: a program that moves is unchanged.
        assert_eq!(j.get("offset"), None);
        let index = json(&db, &t, &format!("programs/{stage}/index.json"));
        assert_eq!(index["programs"][i]["offset"], p.offset);
        assert_eq!(
            index["programs"][i]["container"]["offset"],
            p.container().start
        );
        assert_eq!(
            read(&db, &t, &format!("{path}.dxil")),
            &bytes[p.container()]
        );
    }
    let last = json(&db, &t, "effects/weapon_23/effect.json");
    assert_eq!(last["index"], 383);
    assert_eq!(last.get("offset"), None);
    assert_eq!(last["region"].get("offset"), None);
    let archive = json(&db, &t, "archive.json");
    let e = &db.index.effects[383];
    assert_eq!(archive["effects"][383]["directory"], "effects/weapon_23");
    assert_eq!(archive["effects"][383]["offset"], e.offset);
    assert_eq!(archive["effects"][383]["region"]["offset"], e.region.start);
}

/// `md5sum` of `bytes`, where the tool exists.
fn md5(bytes: &[u8]) -> Option<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("md5sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(bytes).ok()?;
    let out = child.wait_with_output().ok()?;
    Some(
        String::from_utf8_lossy(&out.stdout)
            .split(' ')
            .next()?
            .to_string(),
    )
}

#[test]
fn the_public_parsers_database_agrees_field_by_field() {
    let Some(dir) = corpus("sgd2") else { return };
    let bytes = std::fs::read(dir.join("awclib-small.awc")).unwrap();
    let expected: Value =
        serde_json::from_slice(&std::fs::read(dir.join("awclib-small.expected.json")).unwrap())
            .unwrap();
    let db = open(&bytes).unwrap();
    let t = tree(&db);
    let archive = json(&db, &t, "archive.json");
    assert_eq!(archive["file_size"], expected["size"]);
    assert_eq!(&bytes[..4], expected["magic"].as_str().unwrap().as_bytes());
    for (g, short) in ["VS", "PS", "GS", "DS", "HS", "CS"].iter().enumerate() {
        let want = &expected["stages"][short];
        let stage = read::STAGES[g];
        assert_eq!(archive["groups"][g]["programs"], want["count"], "{short}");
        for p in want["programs"].as_array().unwrap() {
            let i = p["index"].as_u64().unwrap();
            let path = format!("programs/{stage}/{i}");
            let j = json(&db, &t, &format!("{path}.json"));
            let dxil = read(&db, &t, &format!("{path}.dxil"));
            assert_eq!(j["name"], p["name"], "{path}");
            let tag = u64::from_str_radix(j["tag"].as_str().unwrap().trim_start_matches("0x"), 16);
            assert_eq!(tag.unwrap(), p["wave"].as_u64().unwrap(), "{path}");
            assert_eq!(j["container"]["size"], p["blob_len"], "{path}");
            assert_eq!(dxil.len() as u64, p["blob_len"].as_u64().unwrap());
            assert_eq!(&dxil[..4], p["blob_magic"].as_str().unwrap().as_bytes());
            match md5(&dxil) {
                Some(sum) => assert_eq!(sum, p["blob_md5"].as_str().unwrap(), "{path}"),
                None => eprintln!("md5sum is not here: blob_md5 of {path} not compared"),
            }
            assert_eq!(
                j["table"]["hash_u64"],
                format!("0x{}", p["hash"].as_str().unwrap())
            );
            let b = &j["bindings"];
            assert_eq!(b["length"], p["binding_table_len"], "{path}");
            let header = &b["header"]["public_parser"];
            assert_eq!(header["reg_count"], p["reg_count"], "{path}");
            assert_eq!(header["cbuffer_count"], p["cbuffer_count"], "{path}");
            assert_eq!(header["tex_count"], p["tex_count"], "{path}");
            let ours = b["resources"].as_array().unwrap();
            let theirs = p["registers"].as_array().unwrap();
            assert_eq!(ours.len(), theirs.len(), "{path}");
            for (r, want) in ours.iter().zip(theirs) {
                assert_eq!(r["name_by_offset"], want["name"], "{path}");
                assert_eq!(r["names_agree"], true, "{path}");
                assert_eq!(r["type"], want["type"], "{path}");
                assert_eq!(r["register"], want["reg"], "{path}");
                assert_eq!(r["space"], want["space"], "{path}");
                assert_eq!(r["count"], want["ndesc"], "{path}");
                assert_eq!(
                    r["bytes_05_0d"]["public_parser"]["num_descriptors"],
                    want["ndesc"]
                );
                let vars: Vec<String> = b["constants"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|c| c["owner_by_offset"] == r["name"])
                    .map(|c| {
                        format!(
                            "{} {} @{:#x}",
                            c["type"].as_str().unwrap(),
                            c["name"].as_str().unwrap(),
                            c["offset"].as_u64().unwrap()
                        )
                    })
                    .collect();
                assert_eq!(serde_json::json!(vars), want["vars"], "{path}");
            }
        }
    }
    // "trailer_header_hex": groups 6 and 7 (zero) and the effect count.
    let trailer = expected["trailer_header_hex"].as_str().unwrap();
    let at = archive["groups"][6]["offset"].as_u64().unwrap() as usize;
    let ours: String = bytes[at..at + 12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(ours, trailer);
    assert_eq!(expected["trailer_unparsed_tail_len"], 0);

    let effects = expected["effects"]["effects"].as_array().unwrap();
    assert_eq!(archive["effect_count"], expected["effects"]["count"]);
    for (i, want) in effects.iter().enumerate() {
        let name = want["name"].as_str().unwrap();
        let j = json(&db, &t, &format!("effects/{name}/effect.json"));
        assert_eq!(j["index"], i);
        assert_eq!(j["name"], want["name"]);
        assert_eq!(j["word"], want["data_buffer_size"], "{name}");
        for (s, short) in ["VS", "PS", "GS", "DS", "HS", "CS"].iter().enumerate() {
            assert_eq!(
                j["programs"][read::STAGES[s]],
                want[short],
                "{name} {short}"
            );
        }
        assert_eq!(
            j["proplst"].as_array().unwrap().len() as u64,
            want["prop_entries"].as_u64().unwrap()
        );
        assert_eq!(j["name_block"], want["strings"], "{name}");
        assert_eq!(j["public_parser_techniques"], want["techniques"], "{name}");
        // This writer stores no technique table the seed describes: shown raw.
        assert_eq!(j["techniques"], "undecoded", "{name}");
        assert!(t.contains_key(&format!("effects/{name}/pre_proplst.bin")));
    }
}

#[test]
fn every_prefix_is_refused() {
    let mut files = Vec::new();
    if let Some(dir) = corpus("sgd2") {
        files.push(std::fs::read(dir.join("awclib-small.awc")).unwrap());
    }
    if let Some((bytes, _)) = generated(&Spec {
        programs: [1, 1, 0, 0, 0, 1, 0, 0],
        effects: 4,
        hostile_names: false,
        seed: 1,
    }) {
        files.push(bytes);
    }
    for bytes in files {
        read::index(&bytes).unwrap();
        for n in 0..bytes.len() {
            assert!(read::index(&bytes[..n]).is_err(), "prefix of {n} bytes");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(
            read::index(&longer),
            Err(Sgd2Error::TrailingBytes { count: 1, .. })
        ));
    }
}

fn set_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn counts_are_bounded_and_errors_name_the_offset() {
    let Some((bytes, _)) = generated(&Spec::per_stage(1)) else {
        return;
    };
    let index = read::index(&bytes).unwrap();

    let mut b = bytes.clone();
    b[0] = b'X';
    assert!(read::index(&b).unwrap_err().to_string().contains("magic"));

    let mut b = bytes.clone();
    set_u32(&mut b, 4, u32::MAX);
    let e = read::index(&b).unwrap_err();
    assert!(
        matches!(e, Sgd2Error::CountTooLarge { offset: 4, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("offset 0x4"), "{e}");

    let mut b = bytes.clone();
    set_u32(&mut b, index.effects_offset, u32::MAX);
    assert!(matches!(
        read::index(&b),
        Err(Sgd2Error::CountTooLarge { .. })
    ));

    // A program's container length past the end of the file.
    let p = &index.groups[1].programs[0];
    let mut b = bytes.clone();
    set_u32(&mut b, p.container().start - 4, u32::MAX);
    let e = read::index(&b).unwrap_err();
    assert!(
        e.to_string().contains("program 0 of group 1 (pixel)"),
        "{e}"
    );

    // An effect's program index out of range.
    let e0 = &index.effects[0];
    let mut b = bytes.clone();
    set_u32(&mut b, e0.lists[0].start, 1000);
    let e = read::index(&b).unwrap_err();
    assert!(
        matches!(e, Sgd2Error::BadEffectIndex { index: 1000, .. }),
        "{e}"
    );

    // The marker gone.
    let mut b = bytes.clone();
    let marker = e0.region.end;
    b[marker] = b'P';
    assert!(read::index(&b).is_err());

    // A name without its NUL.
    let mut b = bytes.clone();
    b[p.name().end] = b'x';
    assert!(matches!(read::index(&b), Err(Sgd2Error::BadName { .. })));
}

#[test]
fn random_corruptions_are_refused_or_read_without_panic() {
    let Some((bytes, _)) = generated(&Spec {
        programs: [2, 2, 0, 1, 1, 1, 0, 0],
        effects: 8,
        hostile_names: true,
        seed: 9,
    }) else {
        return;
    };
    let index = read::index(&bytes).unwrap();
    // Bytes worth hitting: every framing field and each effect's region and tables.
    let mut hot: Vec<usize> = Vec::new();
    for p in index.groups.iter().flat_map(|g| &g.programs) {
        hot.extend(p.offset..p.container().start + 40);
        hot.extend(p.table().start..p.bindings().end);
    }
    for e in &index.effects {
        hot.extend(e.offset..e.names.end);
    }
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut opened, mut refused) = (0, 0);
    for _ in 0..300 {
        let mut b = bytes.clone();
        for _ in 0..1 + next() % 4 {
            let at = hot[(next() % hot.len() as u64) as usize];
            b[at] = match next() % 4 {
                0 => 0,
                1 => 0xFF,
                2 => b[at].wrapping_add(1),
                _ => next() as u8,
            };
        }
        match open(&b) {
            Ok(db) => {
                opened += 1;
                for e in db.entries() {
                    if let EntryKind::File { key, .. } = e.kind {
                        let _ = db.read(key);
                    }
                }
            }
            Err(e) => {
                refused += 1;
                assert!(e.to_string().contains("offset"), "{e}");
            }
        }
    }
    assert!(
        opened > 0 && refused > 0,
        "{opened} opened, {refused} refused"
    );
}

#[test]
fn a_region_without_one_structure_stays_undecoded() {
    let block = b"\0draw\0p0\0";
    let mut region = Vec::new();
    region.extend_from_slice(&1u32.to_le_bytes()); // one technique
    region.extend_from_slice(&1u32.to_le_bytes()); // named at offset 1: "draw"
    region.extend_from_slice(&1u32.to_le_bytes()); // one pass
    region.extend_from_slice(&1u32.to_le_bytes()); // one pass record
    let mut pass = [0u8; 24];
    pass[0] = 1;
    pass[1] = 1;
    region.extend_from_slice(&pass);
    for (n, len) in [(1u32, 16), (1, 24), (1, 68), (0, 36)] {
        region.extend_from_slice(&n.to_le_bytes());
        region.extend(std::iter::repeat_n(3u8, n as usize * len));
    }
    let lists = [1, 1, 0, 0, 0, 0];
    let Decoded::Found(layout) = effect::find(&region, lists, block) else {
        panic!("the structure validates");
    };
    assert_eq!(
        (layout.at, layout.techniques.len(), layout.passes.len()),
        (0, 1, 1)
    );

    // A program position past the effect's list.
    assert!(matches!(
        effect::find(&region, [1, 0, 0, 0, 0, 0], block),
        Decoded::Undecoded(_)
    ));
    // A state index past its table.
    let mut bad = region.clone();
    bad[16 + 8] = 1;
    assert!(matches!(
        effect::find(&bad, lists, block),
        Decoded::Undecoded(_)
    ));
    // A name offset that does not start a name.
    let mut bad = region.clone();
    bad[4] = 2;
    assert!(matches!(
        effect::find(&bad, lists, block),
        Decoded::Undecoded(_)
    ));
    // Two copies: ambiguous, so neither is shown.
    let mut twice = region.clone();
    twice.extend_from_slice(&region);
    match effect::find(&twice, lists, block) {
        Decoded::Undecoded(why) => assert!(why.contains("ambiguous"), "{why}"),
        Decoded::Found(_) => panic!("two structures must not decode"),
    }
}

#[test]
fn a_region_built_to_be_slow_to_search_is_given_up() {
    // Every aligned word reads as a technique count of 1000 whose entries all name a
    // valid name: without a budget, each offset would read 1000 entries.
    let mut block = vec![0u8; 1000];
    block.extend_from_slice(b"x\0");
    let region: Vec<u8> = std::iter::repeat_n(1000u32.to_le_bytes(), 16 * 1024)
        .flatten()
        .collect();
    let started = std::time::Instant::now();
    match effect::find(&region, [1; 6], &block) {
        Decoded::Undecoded(why) => assert!(why.contains("stopped"), "{why}"),
        Decoded::Found(_) => panic!("nothing here is a technique table"),
    }
    assert!(started.elapsed().as_secs() < 5);
}

#[test]
fn groups_six_and_seven_appear_only_when_not_empty() {
    let Some((bytes, _)) = generated(&Spec {
        programs: [1, 1, 0, 0, 0, 0, 2, 0],
        effects: 2,
        hostile_names: false,
        seed: 3,
    }) else {
        return;
    };
    let db = open(&bytes).unwrap();
    let t = tree(&db);
    assert!(t.contains_key("programs/group6/1.dxil"));
    assert!(t.contains_key("programs/geometry"));
    assert!(!t.contains_key("programs/group7"));
    let archive = json(&db, &t, "archive.json");
    let warnings = archive["warnings"].as_array().unwrap();
    assert!(
        warnings[0].as_str().unwrap().contains("group 6"),
        "{warnings:?}"
    );
    let j = json(&db, &t, "programs/group6/0.json");
    assert_eq!(j["stage"], "group6");
}
