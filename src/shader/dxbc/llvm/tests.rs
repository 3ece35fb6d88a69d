//! The reader and writer against LLVM itself: every program of the corpus disassembles to
//! the text `llvm-dis-14` prints for its bitcode, line for line (`; ModuleID` and
//! `source_filename` aside); and damaged bitcode is an error, quickly, never a panic.
//!
//! `SHADERFS_DUMP_LL=DIR` writes both texts of every corpus program into `DIR`
//! (`NAME.ours.ll`, `NAME.llvm.ll`), for `diff` when they part.

use std::path::Path;
use std::process::Command;

use super::disassemble;
use crate::shader::dxbc::container::{self, ProgramHeader};

/// The bitcode of a container's `DXIL` part.
pub(crate) fn bitcode(bytes: &[u8]) -> Vec<u8> {
    let c = container::parse(bytes).unwrap();
    let part = c.part(b"DXIL").unwrap();
    let data = &bytes[part.data.clone()];
    let h = ProgramHeader::parse(data).unwrap();
    data[h.bitcode].to_vec()
}

fn corpus() -> Option<Vec<(String, Vec<u8>)>> {
    let dir = crate::test_corpus::corpus("dxil")?;
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "dxil"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, bitcode(&std::fs::read(&p).unwrap()))
        })
        .collect();
    v.sort();
    Some(v)
}

/// `llvm-dis-14`'s text for `bitcode`, or `None` (with a message, or a failure under
/// CI=true) where it is not installed.
pub(super) fn llvm_dis(bitcode: &[u8], dir: &Path) -> Option<String> {
    let file = dir.join("program.bc");
    std::fs::write(&file, bitcode).unwrap();
    let out = match Command::new("llvm-dis-14")
        .arg(&file)
        .arg("-o")
        .arg("-")
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true but llvm-dis-14 cannot run ({e}): scripts/install-deps installs llvm-14"
            );
            eprintln!(
                "skipped: llvm-dis-14 cannot run ({e}); scripts/install-deps installs llvm-14"
            );
            return None;
        }
    };
    assert!(
        out.status.success(),
        "llvm-dis-14 refuses the bitcode: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

/// The lines compared: all but the two that name the file.
pub(super) fn compared(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| !l.starts_with("; ModuleID = ") && !l.starts_with("source_filename = "))
        .collect()
}

#[test]
fn every_corpus_program_reads_as_llvm_dis_14_prints_it() {
    let Some(programs) = corpus() else { return };
    assert_eq!(programs.len(), 129);
    let tmp = tempfile::tempdir().unwrap();
    let mut differ = Vec::new();
    for (name, bc) in &programs {
        let Some(expected) = llvm_dis(bc, tmp.path()) else {
            return;
        };
        let got = match disassemble(bc, name) {
            Ok(text) => text,
            Err(e) => {
                differ.push(format!("{name}: {e}"));
                continue;
            }
        };
        if let Ok(dir) = std::env::var("SHADERFS_DUMP_LL") {
            std::fs::write(Path::new(&dir).join(format!("{name}.ours.ll")), &got).unwrap();
            std::fs::write(Path::new(&dir).join(format!("{name}.llvm.ll")), &expected).unwrap();
        }
        let (want, have) = (compared(&expected), compared(&got));
        if want != have {
            let at = want
                .iter()
                .zip(&have)
                .position(|(a, b)| a != b)
                .unwrap_or(want.len().min(have.len()));
            differ.push(format!(
                "{name} line {}:\n  llvm-dis: {}\n  ours:     {}",
                at + 3,
                want.get(at).unwrap_or(&"(end)"),
                have.get(at).unwrap_or(&"(end)")
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} programs differ:\n{}",
        differ.len(),
        programs.len(),
        differ.join("\n")
    );
}

mod damaged {
    use std::sync::OnceLock;
    use std::time::{Duration, Instant};

    use proptest::prelude::*;

    use super::{corpus, disassemble};

    fn programs() -> &'static [(String, Vec<u8>)] {
        static P: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
        P.get_or_init(|| corpus().unwrap_or_default())
    }

    /// Read `bc` damaged; it must give text or an error, and soon.
    fn reads_or_fails_quickly(bc: &[u8]) -> Result<(), TestCaseError> {
        let started = Instant::now();
        let result = disassemble(bc, "damaged");
        let took = started.elapsed();
        prop_assert!(
            took < Duration::from_secs(2),
            "{took:?} for {} bytes",
            bc.len()
        );
        if let Err(e) = result {
            prop_assert!(e.bit <= bc.len() * 8 + 64, "{e}");
            prop_assert!(!e.record.is_empty() && !e.message.is_empty());
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// Bytes changed (single bits, whole bytes, whole words where counts and ids
        /// lie) anywhere in a corpus program.
        #[test]
        fn changed_bitcode_reads_or_fails_quickly(
            pick in any::<usize>(),
            edits in proptest::collection::vec((any::<usize>(), any::<u32>(), 0u8..3), 1..6),
        ) {
            let all = programs();
            if all.is_empty() {
                return Ok(());
            }
            let mut bc = all[pick % all.len()].1.clone();
            for (at, v, how) in edits {
                let at = 4 + at % (bc.len() - 4);
                match how {
                    0 => bc[at] ^= 1 << (v % 8),
                    1 => bc[at] = v as u8,
                    _ => {
                        let end = (at + 4).min(bc.len());
                        bc[at..end].copy_from_slice(&v.to_le_bytes()[..end - at]);
                    }
                }
            }
            reads_or_fails_quickly(&bc)?;
        }

        /// Every program cut short anywhere.
        #[test]
        fn cut_bitcode_reads_or_fails_quickly(pick in any::<usize>(), cut in any::<usize>()) {
            let all = programs();
            if all.is_empty() {
                return Ok(());
            }
            let bc = &all[pick % all.len()].1;
            reads_or_fails_quickly(&bc[..cut % bc.len()])?;
        }
    }

    /// A few bytes of bitcode can describe constants whose text is astronomical: an
    /// array of two copies of an array of two copies of … The writer stops at its limit.
    #[test]
    fn exponential_text_is_refused() {
        use crate::shader::dxbc::llvm::ir::*;
        use crate::shader::dxbc::llvm::write::write;
        let mut types = vec![Type::Int(32)];
        let mut values = vec![Value {
            ty: 0,
            kind: ValueKind::Const(Const::Int(7)),
            name: None,
        }];
        for level in 1..60u32 {
            types.push(Type::Array {
                len: 2,
                elem: level - 1,
            });
            values.push(Value {
                ty: level,
                kind: ValueKind::Const(Const::Aggregate(vec![level - 1, level - 1])),
                name: None,
            });
        }
        let top = types.len() as u32 - 1;
        types.push(Type::Pointer {
            pointee: top,
            space: 0,
        });
        values.insert(
            0,
            Value {
                ty: top + 1,
                kind: ValueKind::Global(0),
                name: Some(b"g".to_vec()),
            },
        );
        // The global is value 0: shift the constants' operands by one.
        for v in &mut values[1..] {
            if let ValueKind::Const(Const::Aggregate(e)) = &mut v.kind {
                for x in e {
                    *x += 1;
                }
            }
        }
        let m = Module {
            types,
            triple: Vec::new(),
            datalayout: Vec::new(),
            asm: Vec::new(),
            values,
            globals: vec![Global {
                value: 0,
                value_type: top,
                space: 0,
                constant: true,
                init: Some(top + 1),
                thread_local: 0,
                externally_initialized: false,
                common: Linkage::default(),
            }],
            functions: Vec::new(),
            function_order: Vec::new(),
            metadata: Vec::new(),
            named: Vec::new(),
            kinds: Vec::new(),
        };
        let started = Instant::now();
        assert_eq!(write(&m, "", 1 << 20), Err(1 << 20));
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
