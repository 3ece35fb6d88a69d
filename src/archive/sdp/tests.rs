//! Reader and writer of `.sdp` packages against the worked example of `sdp.md` §2.3,
//! round trips, every prefix, and random corruption.

use proptest::prelude::*;

use super::read::{self, SdpError};
use super::write::{self, NameField};

/// `vs_1_1`: `dcl_position v0` / `mov oPos, v0` (sdp.md §2.3).
const TEST_VSO: [u32; 8] = [
    0xFFFE0101, 0x0000001F, 0x80000000, 0x900F0000, 0x00000001, 0xC00F0000, 0x90E40000, 0x0000FFFF,
];

fn bytes_of(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn package(records: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let fields: Vec<(NameField, &[u8])> = records
        .iter()
        .map(|(n, d)| (NameField::new(n).unwrap(), d.as_slice()))
        .collect();
    write::serialise(100, fields.iter().map(|(n, d)| (n, *d))).unwrap()
}

#[test]
fn worked_example_matches_the_reference() {
    let bytes = package(&[("TEST.vso", bytes_of(&TEST_VSO))]);
    assert_eq!(bytes.len(), 304);
    assert_eq!(crc32fast::hash(&bytes), 0x8f8bc148, "sdp.md §2.3 CRC-32");
    assert_eq!(crc32fast::hash(&bytes_of(&TEST_VSO)), 0xd83688eb);
    let index = read::index(&bytes).unwrap();
    assert_eq!((index.magic, index.count, index.data_size), (100, 1, 0x124));
    let r = &index.records[0];
    assert_eq!(&bytes[r.name.clone()], b"TEST.vso");
    assert_eq!(r.data, 0x110..0x130);
    assert!(index.warnings.is_empty());
}

#[test]
fn unchanged_package_reserialises_identically() {
    let mut bytes = package(&[
        ("A.vso", bytes_of(&TEST_VSO)),
        ("B.pso", vec![1, 2, 3, 4, 5, 6, 7, 8]),
    ]);
    // Odd padding after a name and an odd header word must survive.
    bytes[12 + 10] = 0x55;
    bytes[0] = 99;
    let index = read::index(&bytes).unwrap();
    assert_eq!(index.warnings.len(), 2, "{:?}", index.warnings);
    let fields: Vec<(NameField, &[u8])> = index
        .records
        .iter()
        .map(|r| {
            (
                NameField::from_raw(&bytes[r.name_field()]),
                &bytes[r.data.clone()],
            )
        })
        .collect();
    let again = write::serialise(index.magic, fields.iter().map(|(n, d)| (n, *d))).unwrap();
    assert_eq!(again, bytes);
}

#[test]
fn every_prefix_is_refused() {
    let bytes = package(&[
        ("A.vso", bytes_of(&TEST_VSO)),
        ("B.vso", bytes_of(&TEST_VSO)),
    ]);
    for len in 0..bytes.len() {
        let err = read::index(&bytes[..len]).expect_err(&format!("prefix of {len} bytes"));
        assert!(!err.to_string().is_empty());
    }
}

#[test]
fn malformed_headers_name_the_place() {
    let good = package(&[("A.vso", bytes_of(&TEST_VSO))]);

    let mut bad = good.clone();
    bad[4..8].copy_from_slice(&1_000_000u32.to_le_bytes());
    assert!(matches!(
        read::index(&bad),
        Err(SdpError::CountTooLarge {
            count: 1_000_000,
            ..
        })
    ));

    let mut bad = good.clone();
    bad[8..12].copy_from_slice(&5u32.to_le_bytes());
    let err = read::index(&bad).unwrap_err();
    assert!(matches!(err, SdpError::DataSizeMismatch { header: 5, .. }));
    assert!(err.to_string().contains("offset 8"), "{err}");

    let mut bad = good.clone();
    bad[12..12 + 256].fill(b'x');
    let err = read::index(&bad).unwrap_err();
    assert_eq!(
        err,
        SdpError::UnterminatedName {
            index: 0,
            offset: 12
        }
    );
    assert!(err.to_string().contains("0xc"), "{err}");

    let mut bad = good.clone();
    bad[12 + 256..12 + 260].copy_from_slice(&4000u32.to_le_bytes());
    assert!(matches!(
        read::index(&bad),
        Err(SdpError::PayloadOverrun {
            index: 0,
            size: 4000,
            ..
        })
    ));

    let mut bad = good.clone();
    bad.extend_from_slice(&[0, 0, 0, 0]);
    assert!(matches!(
        read::index(&bad),
        Err(SdpError::TrailingBytes {
            count: 4,
            offset: 0x130
        })
    ));

    let mut bad = good;
    bad[12] = 0;
    assert!(matches!(read::index(&bad), Err(SdpError::EmptyName { .. })));
}

#[test]
fn names_that_do_not_fit_are_refused() {
    assert!(NameField::new(&"x".repeat(255)).is_some());
    assert!(NameField::new(&"x".repeat(256)).is_none());
    assert!(NameField::new("").is_none());
    assert!(NameField::new("a\0b").is_none());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Random corruption is refused or indexed, never a panic, and an indexed package
    /// stays inside its bytes.
    #[test]
    fn random_mutations_never_panic(
        flips in proptest::collection::vec((0usize..600, any::<u8>()), 1..8),
        cut in 0usize..600,
    ) {
        let mut bytes = package(&[
            ("A.vso", bytes_of(&TEST_VSO)),
            ("B.pso", bytes_of(&TEST_VSO)),
        ]);
        for (at, value) in flips {
            let at = at % bytes.len();
            bytes[at] = value;
        }
        bytes.truncate(cut.max(1).min(bytes.len()));
        if let Ok(index) = read::index(&bytes) {
            for r in &index.records {
                prop_assert!(r.data.end <= bytes.len());
                prop_assert!(r.name.end <= r.offset + 256);
            }
        }
    }

    /// Whatever records go in come back out.
    #[test]
    fn round_trip(records in proptest::collection::vec(
        ("[A-Z]{1,12}\\.(vso|pso)", proptest::collection::vec(any::<u8>(), 0..64)),
        0..6,
    )) {
        let refs: Vec<(&str, Vec<u8>)> = records.iter().map(|(n, d)| (n.as_str(), d.clone())).collect();
        let bytes = package(&refs);
        let index = read::index(&bytes).unwrap();
        prop_assert_eq!(index.records.len(), records.len());
        for (r, (name, data)) in index.records.iter().zip(&records) {
            prop_assert_eq!(&bytes[r.name.clone()], name.as_bytes());
            prop_assert_eq!(&bytes[r.data.clone()], data.as_slice());
        }
    }
}

/// A package truncated by another program while four threads render its views: every
/// read gives the view's true text or EIO, never zeros taken for the archive, and nothing
/// rendered from the vanished pages is kept: once the package is whole again, every view
/// reads right.
#[test]
fn a_package_truncated_while_four_threads_render_gives_true_text_or_eio() {
    use crate::shader::d3d9::{asm, disasm};
    use crate::vfs::VfsOptions;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;

    let shaders: Vec<(String, Vec<u8>)> = (0..400)
        .map(|i| {
            let text =
                format!("vs_2_0\ndef c0, {i}, 1, 2, 3\nmov r0, c0\nadd r0, r0, c0\nmov oPos, r0\n");
            (format!("S{i:03}.vso"), asm::assemble(&text).unwrap())
        })
        .collect();
    let records: Vec<(&str, Vec<u8>)> = shaders
        .iter()
        .map(|(n, b)| (n.as_str(), b.clone()))
        .collect();
    let bytes = package(&records);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.sdp");
    std::fs::write(&path, &bytes).unwrap();
    // No view cache: every read renders from the mapped package.
    let opts = VfsOptions {
        cache_bytes: 0,
        ..VfsOptions::read_only()
    };
    let vfs = Arc::new(crate::archive::open(&path, opts).unwrap());
    let views: Arc<Vec<(u64, Vec<u8>)>> = Arc::new(
        shaders
            .iter()
            .map(|(name, code)| {
                let ino = vfs.resolve(&format!("asm/{name}.asm")).unwrap();
                (ino, disasm::disassemble(code).unwrap().into_bytes())
            })
            .collect(),
    );
    let read = |vfs: &crate::vfs::Vfs, ino: u64| {
        let opened = vfs.open(ino, libc::O_RDONLY)?;
        let got = vfs.read(ino, opened.fh, 0, u32::MAX);
        vfs.release(ino, opened.fh);
        got
    };
    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (vfs, views, done, reads) =
                (vfs.clone(), views.clone(), done.clone(), reads.clone());
            std::thread::spawn(move || {
                let (mut good, mut failed) = (0usize, 0usize);
                while !done.load(Ordering::SeqCst) {
                    for (ino, want) in views.iter().skip(t * 37) {
                        match read(&vfs, *ino) {
                            Ok(got) => {
                                assert_eq!(&got, want, "a read gave other bytes than the view");
                                good += 1;
                            }
                            Err(e) => {
                                assert_eq!(e, libc::EIO);
                                failed += 1;
                            }
                        }
                        reads.fetch_add(1, Ordering::SeqCst);
                    }
                }
                (good, failed)
            })
        })
        .collect();
    while reads.load(Ordering::SeqCst) < 2000 {
        std::thread::yield_now();
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(4096)
        .unwrap();
    let at_cut = reads.load(Ordering::SeqCst);
    while reads.load(Ordering::SeqCst) < at_cut + 4000 {
        std::thread::yield_now();
    }
    done.store(true, Ordering::SeqCst);
    let (good, failed) = threads
        .into_iter()
        .map(|t| t.join().unwrap())
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    assert!(good > 0 && failed > 0, "{good} good reads, {failed} EIO");
    let log = String::from_utf8(vfs.errors().render()).unwrap();
    assert!(log.contains("truncated by another program"), "{log}");

    // Whole again: every view reads right; nothing of the vanished pages was kept.
    std::fs::write(&path, &bytes).unwrap();
    vfs.check_archives();
    for (ino, want) in views.iter() {
        assert_eq!(&read(&vfs, *ino).unwrap(), want);
    }
}
