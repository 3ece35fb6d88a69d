//! criterion benchmarks for the inner loops a mount spends its time in: indexing an SGD2
//! database's framing, reading a DXBC container's part table, its digest and its whole
//! decode, its listing as LLVM IR (the `.ll` view), and disassembling and assembling D3D9
//! shaders, and checking a FlatOut effect of thousands of asm blocks as the game's
//! compiler would. Run with `cargo bench`; a regression shows up in numbers.
//!
//! The data: the example package's shaders (in the repository) and, where
//! `../shared/corpus` is present, its DXIL containers and compiled D3D9 shaders.

use std::path::Path;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

use shaderfs::archive::sgd2::{generate, read};
use shaderfs::archive::sha;
use shaderfs::shader::d3d9::{asm, disasm};
use shaderfs::shader::dxbc::{container, decode, digest, listing};
use shaderfs::test_corpus::corpus;

/// D3D9 shaders: the example package's, and the corpus's compiled ones when present.
fn d3d9_shaders() -> Vec<Vec<u8>> {
    let mut shaders = Vec::new();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sdp");
    for entry in std::fs::read_dir(example).expect("examples/sdp") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "asm") {
            let text = std::fs::read_to_string(&path).expect("example text");
            shaders.push(asm::assemble(&text).expect("the examples assemble"));
        }
    }
    if let Some(dir) = corpus("d3d9/compiled") {
        shaders.extend(shaderfs::archive::sdp::generate::shaders_in(&dir).expect("corpus shaders"));
    }
    shaders
}

fn d3d9(c: &mut Criterion) {
    let shaders = d3d9_shaders();
    let texts: Vec<String> = shaders
        .iter()
        .map(|s| disasm::disassemble(s).expect("disassembles"))
        .collect();
    let bytes: usize = shaders.iter().map(Vec::len).sum();
    let mut group = c.benchmark_group("d3d9");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function(format!("disassemble {} shaders", shaders.len()), |b| {
        b.iter(|| {
            for s in &shaders {
                black_box(disasm::disassemble(black_box(s)).expect("disassembles"));
            }
        })
    });
    group.bench_function(format!("assemble {} shaders", texts.len()), |b| {
        b.iter(|| {
            for t in &texts {
                black_box(asm::assemble_unvalidated(black_box(t)).expect("assembles"));
            }
        })
    });
    group.finish();
}

fn dxbc_and_sgd2(c: &mut Criterion) {
    let Some(dir) = corpus("dxil") else { return };
    let containers = generate::corpus_containers(&dir).expect("containers");
    let bytes: usize = containers.iter().map(Vec::len).sum();
    let mut group = c.benchmark_group("dxbc");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function(
        format!("part table of {} containers", containers.len()),
        |b| {
            b.iter(|| {
                for con in &containers {
                    black_box(container::parse(black_box(con)).expect("parses"));
                }
            })
        },
    );
    group.bench_function(
        format!("retail digest of {} containers", containers.len()),
        |b| {
            b.iter(|| {
                for con in &containers {
                    black_box(digest::retail(black_box(con)));
                }
            })
        },
    );
    group.bench_function(
        format!(
            "whole decode of {} containers (a program's JSON)",
            containers.len()
        ),
        |b| {
            b.iter(|| {
                for con in &containers {
                    black_box(decode::decode(black_box(con)).expect("decodes"));
                }
            })
        },
    );
    group.bench_function(
        format!(
            "listing and IR of {} containers (a program's .ll)",
            containers.len()
        ),
        |b| {
            b.iter(|| {
                for con in &containers {
                    black_box(listing::listing(black_box(con), "p").expect("lists"));
                }
            })
        },
    );
    group.finish();

    let spec = generate::Spec::per_stage(500);
    let mut db = Vec::new();
    generate::generate(&spec, &containers, &mut db).expect("generates");
    let mut group = c.benchmark_group("sgd2");
    group.throughput(Throughput::Bytes(db.len() as u64));
    group.bench_function("framing index, 3,000 programs", |b| {
        b.iter(|| black_box(read::index(black_box(&db)).expect("indexes")))
    });
    group.finish();
}

/// `check` of an effect of 4,000 asm blocks, half of which the game refuses (the corpus's
/// `demo_helloworld.sha` repeated): every block assembled, every name and reference
/// resolved, and the refused blocks' problems matched against their views' reasons.
fn sha_check(c: &mut Criterion) {
    let Some(dir) = corpus("sha") else { return };
    let text = std::fs::read(dir.join("demo_helloworld.sha")).expect("corpus effect");
    let big = sha::generate::repeat_blocks(&text, 4000).expect("repeats");
    let effect = sha::effect::parse(&big).expect("parses");
    let mut group = c.benchmark_group("sha");
    group.throughput(Throughput::Bytes(big.len() as u64));
    group.bench_function("check of a 4,000-block effect", |b| {
        b.iter(|| black_box(sha::check::check(black_box(&big), &effect)))
    });
    let findings = sha::check::check(&big, &effect);
    let problems: Vec<shaderfs::vfs::Problem> = findings
        .iter()
        .map(|f| shaderfs::vfs::Problem::whole(f.message.clone()))
        .collect();
    let reasons: Vec<String> = findings
        .iter()
        .map(|f| format!("big.sha:1:1: {}", f.message))
        .collect();
    group.bench_function(
        format!(
            "{} reasons against {} problems",
            reasons.len(),
            problems.len()
        ),
        |b| {
            b.iter(|| {
                let reported = shaderfs::vfs::problem::Reported::new(&problems);
                black_box(reasons.iter().filter(|r| reported.explains(r)).count())
            })
        },
    );
    group.finish();
}

criterion_group!(benches, d3d9, dxbc_and_sgd2, sha_check);
criterion_main!(benches);
