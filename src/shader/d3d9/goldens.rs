//! Tests against what Microsoft's tools made of small sources written for shaderfs
//! (`testdata/msd3d/`, see its README): the gradient experiments agree with their
//! verdicts, and Microsoft's compiled output re-assembles byte for byte, validated.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{asm, disasm};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/shader/d3d9/testdata/msd3d")
}

fn files(sub: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir().join(sub))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    v.sort();
    v
}

fn stem<'a>(path: &'a Path, ext: &str) -> &'a str {
    let name = path.file_name().unwrap().to_str().unwrap();
    name.strip_suffix(ext).unwrap()
}

/// `name: verdict` lines of a verdict file, `#` comments and blank lines left out.
fn verdicts(file: &str) -> BTreeMap<String, String> {
    std::fs::read_to_string(dir().join(file))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (name, verdict) = l.split_once(": ").unwrap_or_else(|| panic!("{file}: {l}"));
            (name.to_string(), verdict.to_string())
        })
        .collect()
}

/// Every experiment of `gradients/` gets shaderfs's verdict of `expected.txt`; what
/// D3DX's assembler refuses (`msd3d.txt`) we refuse too, and what it accepts we encode
/// as it does (`NAME.bin`, its bytes).
#[test]
fn gradient_experiments_agree_with_their_verdicts() {
    let expected = verdicts("expected.txt");
    let msd3d = verdicts("msd3d.txt");
    let sources = files("gradients", ".asm");
    let names: Vec<String> = sources
        .iter()
        .map(|p| stem(p, ".asm").to_string())
        .collect();
    assert_eq!(expected.keys().collect::<Vec<_>>(), {
        let mut n: Vec<_> = names.iter().collect();
        n.sort();
        n
    });
    assert_eq!(
        expected.keys().collect::<Vec<_>>(),
        msd3d.keys().collect::<Vec<_>>()
    );
    let mut refused = 0;
    for (path, name) in sources.iter().zip(&names) {
        let text = std::fs::read_to_string(path).unwrap();
        let ours = asm::assemble(&text);
        let want = &expected[name];
        match (want.strip_prefix("refused: "), &ours) {
            (None, Ok(_)) => assert_eq!(want, "accepted", "{name}"),
            (Some(needle), Err(e)) => {
                assert!(e.message.contains(needle), "{name}: {e}");
                refused += 1;
            }
            (_, Ok(_)) => panic!("{name}: accepted, expected {want}"),
            (None, Err(e)) => panic!("{name}: refused ({e}), expected {want}"),
        }
        let ms = &msd3d[name];
        if ms.starts_with("refused") {
            assert!(
                ours.is_err(),
                "{name}: D3DX refuses it ({ms}), we accept it"
            );
        } else {
            assert!(ms.starts_with("accepted"), "{name}: {ms}");
            let d3dx = std::fs::read(path.with_extension("bin")).unwrap();
            assert_eq!(
                asm::assemble_unvalidated(&text).unwrap(),
                d3dx,
                "{name}: not D3DX's bytes"
            );
        }
    }
    assert!(refused >= 14, "{refused}");
    eprintln!(
        "{} gradient experiments agree: {refused} refused, {} accepted",
        names.len(),
        names.len() - refused
    );
}

/// What Microsoft's compilers made of `hlsl/*.hlsl` disassembles and assembles back to
/// the same bytes with full validation, the shapes each source was written for included:
/// a texld of an interpolated input inside if_comp (TESReloaded's `ShadowMap.pso` does
/// the same, and its d3dx9_27/d3dx9_31 builds were refused before), oC0 written inside
/// if_comp in ps_3_0, and a ps_1_4 texkill of a register whose .w phase dropped.
#[test]
fn microsoft_outputs_reassemble() {
    let bins = files("hlsl", ".bin");
    for path in &bins {
        let name = stem(path, ".bin");
        let bytes = std::fs::read(path).unwrap();
        let text = disasm::disassemble(&bytes).unwrap();
        match asm::assemble(&text) {
            Ok(b) => assert_eq!(b, bytes, "{name}: different bytes"),
            Err(e) => panic!("{name}: {e}\n{text}"),
        }
        if name.starts_with("shadow_branch.") {
            let inside = text
                .lines()
                .skip_while(|l| !l.trim_start().starts_with("if_"))
                .take_while(|l| l.trim() != "endif")
                .any(|l| l.trim_start().starts_with("texld r") && l.contains(", v1, s0"));
            assert!(inside, "{name}: no texld of v1 inside its if_comp\n{text}");
        }
        if name.starts_with("branch_output.") {
            assert!(text.contains("      texld oC0, v0, s0"), "{name}\n{text}");
        }
    }
    // Every source was compiled or refused (kept as NAME.PROFILE.DLL.refused.txt).
    for src in files("hlsl", ".hlsl") {
        let name = stem(&src, ".hlsl");
        let made = std::fs::read_dir(dir().join("hlsl"))
            .unwrap()
            .filter_map(|e| e.unwrap().file_name().into_string().ok())
            .filter(|f| f.starts_with(&format!("{name}.")) && f != &format!("{name}.hlsl"))
            .count();
        assert!(made > 0, "{name}: nothing made of it (run make-goldens)");
    }
    assert!(bins.len() >= 7, "{}", bins.len());
    eprintln!("{} Microsoft outputs re-assembled", bins.len());
}
