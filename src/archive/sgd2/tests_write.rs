//! The census against the HLSL sources of the programs the generator placed, and program
//! replacement: byte-identical re-serialisation, a replaced container and nothing else
//! changed, refusals (digest, stage, envelope) and `-o sign`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::generate::{self, Spec};
use super::read::{self, group_dir, STAGES};
use super::{key, Database, View};
use crate::shader::dxbc::hlsl::{self, Source};
use crate::shader::dxbc::{container, decode, digest};
use crate::vfs::{Archive, Edit, OpenContext, ViewError};

fn corpus() -> Option<PathBuf> {
    crate::test_corpus::corpus("dxil")
}

fn open(bytes: &[u8], ctx: OpenContext) -> Database {
    Database::open(
        Path::new("test.awc"),
        crate::vfs::ArchiveBytes::owned(bytes.to_vec()),
    )
    .unwrap()
    .with_context(ctx)
}

const RW: OpenContext = OpenContext {
    writable: true,
    sign: false,
};

fn json(db: &Database, view: View) -> Value {
    serde_json::from_slice(db.read(key(view)).unwrap().as_slice()).unwrap()
}

/// Each corpus container by its bytes.
fn by_bytes(dir: &Path) -> HashMap<Vec<u8>, PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "dxil"))
        .map(|p| (std::fs::read(&p).unwrap(), p))
        .collect()
}

/// What the census should say of a program compiled from `dxil`, from its source: the
/// lists it belongs to. `None` for a container without a source.
fn expected_lists(dxil: &Path, group: usize) -> Option<BTreeSet<&'static str>> {
    let (path, words) = hlsl::source_of(dxil)?;
    let source = Source::read(&path);
    let c = hlsl::compiled(&source, &words);
    let body = source.entry(&c.entry).map_or("", |e| e.1);
    let mut out = BTreeSet::new();
    let stage = STAGES[group];
    if stage == "hull"
        || stage == "domain"
        || (stage == "vertex" && !source.entry_outputs(&c.entry, "SV_Position"))
    {
        out.insert("tessellation_pipeline_programs");
    }
    let indexed = source.registers().into_iter().any(|r| {
        r.class == 's'
            && r.index == 0
            && r.space == 2
            && r.array == Some(None)
            && body.contains(&format!("{}[", r.name))
    });
    if stage == "pixel" && indexed {
        out.insert("unbounded_sampler_array_pixel_programs");
    }
    if body.contains("RayQuery<") {
        out.insert("ray_query_programs");
    }
    if ["QuadReadAcross", "QuadReadLaneAt(", "QuadAny(", "QuadAll("]
        .iter()
        .any(|q| body.contains(q))
    {
        out.insert("quad_op_programs");
    }
    let threads = hlsl::num_threads(&source, &c.entry).unwrap_or([1, 1, 1]);
    if body.contains("WaveGetLaneIndex(") && threads.iter().filter(|&&n| n > 1).count() > 1 {
        out.insert("wave_lane_index_multi_dim_programs");
    }
    Some(out)
}

const LISTS: [&str; 5] = [
    "tessellation_pipeline_programs",
    "unbounded_sampler_array_pixel_programs",
    "ray_query_programs",
    "quad_op_programs",
    "wave_lane_index_multi_dim_programs",
];

#[test]
fn the_census_agrees_with_the_sources_of_the_programs_placed() {
    let Some(dir) = corpus() else { return };
    let containers = generate::corpus_containers(&dir).unwrap();
    let spec = Spec {
        programs: [90, 90, 30, 30, 30, 90, 0, 0],
        effects: 24,
        hostile_names: false,
        seed: 5,
    };
    let mut bytes = Vec::new();
    generate::generate(&spec, &containers, &mut bytes).unwrap();
    let db = open(&bytes, OpenContext::default());
    let census = json(&db, View::Census);
    let index = read::index(&bytes).unwrap();
    let known = by_bytes(&dir);

    let mut expected: HashMap<&str, Vec<String>> = HashMap::new();
    let mut sourceless = BTreeSet::new();
    for (g, group) in index.groups.iter().enumerate().take(STAGES.len()) {
        assert_eq!(
            census["programs_per_stage"][STAGES[g]],
            group.programs.len()
        );
        for (i, p) in group.programs.iter().enumerate() {
            let path = format!("programs/{}/{i}.dxil", group_dir(g));
            let file = &known[&bytes[p.container()]];
            match expected_lists(file, g) {
                Some(lists) => {
                    for list in lists {
                        expected.entry(list).or_default().push(path.clone());
                    }
                }
                None => {
                    sourceless.insert(path);
                }
            }
        }
    }
    for list in LISTS {
        let got: Vec<String> = census[list]["programs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .filter(|p| !sourceless.contains(p))
            .collect();
        let want = expected.remove(list).unwrap_or_default();
        assert_eq!(got, want, "{list}");
        assert!(!want.is_empty(), "{list}: the database should hold some");
        assert_eq!(
            census[list]["count"],
            census[list]["programs"].as_array().unwrap().len()
        );
    }
    assert_eq!(census["undecoded_programs"]["count"], 0);
    eprintln!(
        "census checked; {} programs have no source to compare with",
        sourceless.len()
    );
}

fn small() -> Option<(Vec<u8>, Vec<Vec<u8>>, PathBuf)> {
    let dir = corpus()?;
    let containers = generate::corpus_containers(&dir).unwrap();
    let mut bytes = Vec::new();
    generate::generate(&Spec::per_stage(4), &containers, &mut bytes).unwrap();
    Some((bytes, containers, dir))
}

#[test]
fn an_unchanged_database_serialises_byte_identically() {
    let Some((bytes, _, dir)) = small() else {
        return;
    };
    assert_eq!(open(&bytes, RW).serialise(), bytes);
    let public = std::fs::read(dir.join("../sgd2/awclib-small.awc")).unwrap();
    assert_eq!(open(&public, RW).serialise(), public);
}

/// Replace pixel program 1 with `new`.
fn replace(db: &Database, new: &[u8]) -> Result<Vec<u8>, ViewError> {
    let rewrite = db.apply(&Edit::Write {
        key: key(View::ProgramDxil { group: 1, index: 1 }),
        data: new,
    })?;
    Ok(rewrite.to_vec(&db.map))
}

#[test]
fn a_replaced_program_changes_nothing_else() {
    let Some((bytes, _, dir)) = small() else {
        return;
    };
    let db = open(&bytes, RW);
    let new = std::fs::read(dir.join("resource_arrays.66.dxil")).unwrap();
    let before = read::index(&bytes).unwrap();
    assert_ne!(&bytes[before.groups[1].programs[1].container()], &new[..]);
    let out = replace(&db, &new).unwrap();
    let after = read::index(&out).unwrap();

    for (g, (a, b)) in before.groups.iter().zip(&after.groups).enumerate() {
        assert_eq!(a.programs.len(), b.programs.len());
        for (i, (p, q)) in a.programs.iter().zip(&b.programs).enumerate() {
            let fields = |bytes: &[u8], p: &read::Program| {
                (
                    bytes[p.name()].to_vec(),
                    p.tag,
                    bytes[p.table()].to_vec(),
                    bytes[p.bindings()].to_vec(),
                )
            };
            assert_eq!(fields(&bytes, p), fields(&out, q), "{g}/{i}");
            let container = &out[q.container()];
            if (g, i) == (1, 1) {
                assert_eq!(container, &new[..]);
            } else {
                assert_eq!(container, &bytes[p.container()], "{g}/{i}");
            }
        }
    }
    // Effects, and so the indices they address programs by, are as they were.
    let tail = |bytes: &[u8], index: &read::Index| bytes[index.effects_offset..].to_vec();
    assert_eq!(tail(&bytes, &before), tail(&out, &after));
    // Exactly the container and its length word differ.
    let at = before.groups[1].programs[1].container().start;
    assert_eq!(out[..at - 4], bytes[..at - 4]);
    assert_eq!(
        out[at + new.len()..],
        bytes[at + before.groups[1].programs[1].container().len()..]
    );

    // The new database's views follow.
    let db2 = open(&out, RW);
    let j = json(&db2, View::ProgramJson { group: 1, index: 1 });
    assert_eq!(
        j["container"]["crc32"],
        format!("{:#010x}", crc32fast::hash(&new))
    );
    assert_eq!(j["container"]["program"]["shader_model"], "6.6");
    assert_eq!(j["container"]["digest"]["status"], "valid");
    let census = json(&db2, View::Census);
    let unbounded = &census["unbounded_sampler_array_pixel_programs"]["programs"];
    assert!(unbounded
        .as_array()
        .unwrap()
        .contains(&"programs/pixel/1.dxil".into()));
    // Writing it again is no change at all.
    assert_eq!(replace(&db2, &new).unwrap(), out);
}

#[test]
fn wrong_containers_are_refused_and_sign_signs() {
    let Some((bytes, containers, dir)) = small() else {
        return;
    };
    let db = open(&bytes, RW);
    let good = std::fs::read(dir.join("resource_arrays.dxil")).unwrap();
    let invalid = |r: Result<Vec<u8>, ViewError>| match r {
        Err(ViewError::Invalid(m)) => m,
        other => panic!("expected a refusal, got {:?}", other.map(|b| b.len())),
    };

    let mut tampered = good.clone();
    let last = tampered.len() - 1;
    tampered[last] ^= 0x5A;
    let m = invalid(replace(&db, &tampered));
    assert!(m.contains("digest") && m.contains("-o sign"), "{m}");

    let vertex = std::fs::read(dir.join("vertex.dxil")).unwrap();
    assert!(invalid(replace(&db, &vertex)).contains("a vertex program"));
    assert!(invalid(replace(&db, b"not a container")).contains("not a DXBC container"));
    let mut trailing = good.clone();
    trailing.push(0);
    assert!(invalid(replace(&db, &trailing)).contains("after the container's end"));
    let json_key = key(View::ProgramJson { group: 1, index: 1 });
    let edit = Edit::Write {
        key: json_key,
        data: b"{}",
    };
    assert!(matches!(db.apply(&edit), Err(ViewError::NotPermitted(_))));

    // With -o sign the digest is written (and the HASH part, whose bitcode changed):
    // only those bytes differ from what was written.
    let signing = open(
        &bytes,
        OpenContext {
            writable: true,
            sign: true,
        },
    );
    let out = replace(&signing, &tampered).unwrap();
    let index = read::index(&out).unwrap();
    let stored = &out[index.groups[1].programs[1].container()];
    let hash = container::parse(stored)
        .unwrap()
        .part(b"HASH")
        .unwrap()
        .data
        .clone();
    let differ: Vec<usize> = (0..stored.len())
        .filter(|&i| stored[i] != tampered[i])
        .collect();
    assert!(
        differ
            .iter()
            .all(|&i| (4..20).contains(&i) || (hash.start + 4..hash.end).contains(&i)),
        "{differ:?}"
    );
    let p = decode::decode(stored).unwrap();
    assert_eq!(p.digest.status, "valid");
    assert_eq!(p.problems(), Vec::<String>::new());
    assert_eq!(
        stored[4..20],
        digest::container_digest(stored, stored.len())
    );
    // A container that was right to begin with is stored as it is.
    assert_eq!(
        replace(&signing, &good).unwrap(),
        replace(&db, &good).unwrap()
    );
    assert!(!containers.is_empty());
}
