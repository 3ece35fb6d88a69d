//! Tests against the shared corpus (`../shared/corpus/d3d9/`, see its README): real
//! shaders from D3DX, fxc, Wine and vkd3d. Skipped with a message when the corpus is
//! absent, but a failure when `CI=true`.

use std::path::{Path, PathBuf};

use super::bytecode;

/// The corpus folder, or `None` (after saying why) when the test should be skipped.
pub(crate) fn corpus_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/d3d9");
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("corpus {} is missing and CI=true", dir.display());
    }
    eprintln!(
        "skipped: corpus {} is missing (tests read it from beside the crate)",
        dir.display()
    );
    None
}

/// Files of `sub` ending in `ext`, sorted.
pub(crate) fn files(dir: &Path, sub: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
        .unwrap_or_else(|e| panic!("{sub}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    v.sort();
    v
}

/// Every shader the corpus says is valid bytecode. Of the d3dx9 blobs, those whose token
/// walk the index reports as "ok": three more (`ctab_matrices2`, `ctab_arrays`,
/// `ctab_with_default_values`) are CTAB test data whose comment overruns the shader, which
/// D3DX's CTAB lookup tolerates but a shader parser must not.
pub(crate) fn valid_shaders(dir: &Path) -> Vec<PathBuf> {
    let mut v = files(dir, "compiled", ".bin");
    v.extend(files(dir, "asm", ".bin"));
    v.extend(files(dir, "wine-tests/asm", ".bin"));
    v.extend(files(dir, "wine-tests/visual", ".bin"));
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("wine-tests/d3dx9/index.json")).unwrap())
            .unwrap();
    for blob in index["blobs"].as_array().unwrap() {
        if blob["token_walk"] == "ok" {
            v.push(
                dir.join("wine-tests/d3dx9")
                    .join(blob["file"].as_str().unwrap()),
            );
        }
    }
    v
}

#[test]
fn corpus_walks_and_round_trips() {
    let Some(dir) = corpus_dir() else { return };
    let shaders = valid_shaders(&dir);
    assert!(shaders.len() > 300, "{}", shaders.len());
    for path in shaders {
        let bytes = std::fs::read(&path).unwrap();
        let shader = bytecode::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(shader.encode(), bytes, "{}", path.display());
        for i in shader.instructions() {
            assert!(i.operands.is_some(), "{}: {:?}", path.display(), i);
        }
    }
}

#[test]
fn corpus_invalid_blobs_are_refused() {
    let Some(dir) = corpus_dir() else { return };
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("wine-tests/d3dx9/index.json")).unwrap())
            .unwrap();
    let mut refused = 0;
    for blob in index["blobs"].as_array().unwrap() {
        if blob["token_walk"] != "ok" {
            let bytes = std::fs::read(
                dir.join("wine-tests/d3dx9")
                    .join(blob["file"].as_str().unwrap()),
            )
            .unwrap();
            assert!(bytecode::parse(&bytes).is_err(), "{}", blob["file"]);
            refused += 1;
        }
    }
    assert!(refused >= 13, "{refused}");
}

#[test]
fn corpus_prefixes_are_refused() {
    let Some(dir) = corpus_dir() else { return };
    for path in files(&dir, "wine-tests/visual", ".bin") {
        let bytes = std::fs::read(&path).unwrap();
        for n in 0..bytes.len() {
            assert!(
                bytecode::parse(&bytes[..n]).is_err(),
                "{} prefix {n}",
                path.display()
            );
        }
    }
}

#[test]
fn corpus_disassembles_without_raw_tokens() {
    let Some(dir) = corpus_dir() else { return };
    let mut raw = Vec::new();
    for path in valid_shaders(&dir) {
        let text = super::disasm::disassemble(&std::fs::read(&path).unwrap()).unwrap();
        if text.contains(super::disasm::RAW_TOKENS) {
            raw.push(path.display().to_string());
        }
    }
    assert!(raw.is_empty(), "raw tokens in {raw:?}");
}
