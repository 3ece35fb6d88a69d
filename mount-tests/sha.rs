//! FlatOut `.sha` effects through a real mount: editing asm with sed, refused saves,
//! a whole folder of effects, grep across them.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{
    can_mount, corpus, run, sh, sha_effects, shaderfs, Mount, SHA_KNOWN_BAD, SHA_REFUSED,
};

struct Setup {
    _tmp: tempfile::TempDir,
    effect: PathBuf,
    mnt: PathBuf,
    original: Vec<u8>,
}

/// A copy of corpus effect `name` in a temporary folder, and a mount point beside it.
fn setup(name: &str) -> Option<Setup> {
    if !can_mount() {
        return None;
    }
    let source = corpus("sha")?.join(name);
    let tmp = tempfile::tempdir().unwrap();
    let effect = tmp.path().join(name);
    fs::copy(&source, &effect).unwrap();
    let original = fs::read(&effect).unwrap();
    let mnt = tmp.path().join("mnt");
    Some(Setup {
        _tmp: tmp,
        effect,
        mnt,
        original,
    })
}

fn p(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn sed_on_pixel_asm_changes_only_that_line() {
    let Some(s) = setup("demo_car_body.sha") else {
        return;
    };
    let m = Mount::new(&s.effect, &s.mnt, &[]);
    let (code, out, err) = sh(&format!("ls {}", p(&s.mnt)));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "archive.json",
            "effect.fx",
            "passes",
            "pixel.asm",
            "pixel.hlsl",
            "pixel.pso",
            "vertex.asm",
            "vertex.decl.json",
            "vertex.hlsl",
            "vertex.vso"
        ]
    );
    assert!(m.path("passes/T0/P0.json").is_file());
    assert_eq!(fs::read(m.path("effect.fx")).unwrap(), s.original);

    let before = s.mnt.parent().unwrap().join("pixel.asm.orig");
    fs::copy(m.path("pixel.asm"), &before).unwrap();
    let (code, _, err) = sh(&format!(
        "sed -i 's/mul\tr0, r0, r1/mul_x2\tr0, r0, r1/' {}",
        p(&m.path("pixel.asm"))
    ));
    assert_eq!(code, 0, "sed -i: {err}");
    let (code, out, _) = sh(&format!("diff {} {}", p(&before), p(&m.path("pixel.asm"))));
    assert_eq!(code, 1);
    let changed: Vec<&str> = out.lines().filter(|l| l.starts_with(['<', '>'])).collect();
    assert_eq!(
        changed,
        ["< \t\tmul\tr0, r0, r1", "> \t\tmul_x2\tr0, r0, r1"],
        "{out}"
    );
    assert!(out.starts_with("11c11\n"), "{out}");
    // The new block assembles, and the effect changed in that line and nowhere else.
    assert!(fs::read(m.path("pixel.pso")).is_ok());
    let (code, out, _) = sh(&format!(
        "diff {} {}",
        p(&s.effect),
        p(&m.path("effect.fx"))
    ));
    assert_eq!(code, 0, "the effect on disk and effect.fx differ: {out}");

    // A pass edited as JSON: only the assignment that changed is rewritten.
    let (code, _, err) = sh(&format!(
        "sed -i 's/<Tex2>/<Tex1>/' {}",
        p(&m.path("passes/T0/P0.json"))
    ));
    assert_eq!(code, 0, "sed -i on the pass: {err}");
    m.unmount();
    let now = String::from_utf8(fs::read(&s.effect).unwrap()).unwrap();
    let want = String::from_utf8(s.original.clone())
        .unwrap()
        .replace("\t\tmul\tr0, r0, r1\n", "\t\tmul_x2\tr0, r0, r1\n")
        .replace("Texture[2] = <Tex2>;", "Texture[2] = <Tex1>;");
    assert_eq!(now, want);
}

#[test]
fn a_refused_save_leaves_the_effect_byte_identical() {
    let Some(s) = setup("demo_post_box4.sha") else {
        return;
    };
    let m = Mount::new(&s.effect, &s.mnt, &[]);
    let pixel = m.path("pixel.asm");
    let cases = [
        format!("sed -i 's/add\tr0, r0, t3/frob\tr0, r0, t3/' {}", p(&pixel)),
        format!(
            "sed -i 's/mul\tr0, r0, c3.a/mul\tr5, r0, c3.a/' {}",
            p(&pixel)
        ),
        // (cp reports what close() says; a shell's `>` does not.)
        format!(
            "printf 'vs.1.1\\nmov oPos, v0\\n' > {0}/vs && cp {0}/vs {1}",
            p(s.mnt.parent().unwrap()),
            p(&pixel)
        ),
        format!(
            "sed -i 's/PosprojTex4/PosprojTex3/' {}",
            p(&m.path("effect.fx"))
        ),
        format!(
            "sed -i 's/Tex0>/Tex9>/' {}",
            p(&m.path("passes/T0/P0.json"))
        ),
        format!(
            "sed -i 's/\"T0\"/\"T1\"/' {}",
            p(&m.path("passes/T0/P0.json"))
        ),
    ];
    for script in &cases {
        let (code, _, err) = sh(script);
        assert_ne!(code, 0, "{script} succeeded");
        assert!(err.contains("Invalid argument"), "{script}: {err}");
        assert_eq!(
            fs::read(&s.effect).unwrap(),
            s.original,
            "{script} changed the effect"
        );
    }
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    assert!(
        log.contains("demo_post_box4.sha:30:3: pixel shader pSdr: unknown instruction 'frob'"),
        "{log}"
    );
    assert!(log.contains("(pixel.asm:12:3)"), "{log}");
    assert!(
        log.contains("sha:31:3: pixel shader pSdr: register r5 is out of range"),
        "{log}"
    );
    assert!(
        log.contains("demo_post_box4.sha:15:35: inputStreamFormat \"PosprojTex3\""),
        "{log}"
    );
    assert!(log.contains("<Tex9> is not declared"), "{log}");
    assert!(log.contains("names are changed in effect.fx"), "{log}");
    // The mount still serves the old text; an unchanged save keeps it byte for byte.
    assert_eq!(fs::read(m.path("effect.fx")).unwrap(), s.original);
    let (code, _, err) = sh(&format!(
        "cat {0} > {1}/copy && cat {1}/copy > {0}",
        p(&pixel),
        p(s.mnt.parent().unwrap())
    ));
    assert_eq!(code, 0, "{err}");
    m.unmount();
    assert_eq!(fs::read(&s.effect).unwrap(), s.original);
}

#[test]
fn a_folder_mount_shows_every_corpus_effect() {
    if !can_mount() {
        return;
    }
    let Some(effects) = sha_effects() else { return };
    let dir = corpus("sha").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // The corpus is shared and read-only: mount it read-only.
    let m = Mount::new(&dir, &tmp.path().join("mnt"), &["-o", "ro"]);
    let (_, out, _) = sh(&format!("ls {}", p(&m.dir)));
    let names: Vec<String> = effects
        .iter()
        .map(|e| e.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), names);
    for (effect, name) in effects.iter().zip(&names) {
        let (code, _, err) = sh(&format!(
            "cmp {} {}",
            p(&m.path(&format!("{name}/effect.fx"))),
            p(effect)
        ));
        assert_eq!(code, 0, "{name}: effect.fx differs: {err}");
        let (code, _, err) = sh(&format!(
            "cat {0}/archive.json {0}/passes/T0/P0.json >/dev/null",
            p(&m.path(name))
        ));
        assert_eq!(code, 0, "{name}: {err}");
        let (code, _, err) = sh(&format!("cat {}/*.?so > /dev/null", p(&m.path(name))));
        let bad = SHA_KNOWN_BAD.contains(&name.as_str());
        assert_eq!(code != 0, bad, "{name}: reading the bytecode: {err}");
        if bad {
            assert!(err.contains("Input/output error"), "{name}: {err}");
        }
    }
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    assert!(
        log.contains("demo_helloworld.sha/pixel.pso: cannot read: demo_helloworld.sha:35:"),
        "{log}"
    );
    assert!(
        log.contains("demo_static2x.sha/vertex.vso: cannot read: demo_static2x.sha:32:"),
        "{log}"
    );
    m.unmount();
}

#[test]
fn grep_finds_a_register_across_every_effect() {
    if !can_mount() {
        return;
    }
    let Some(effects) = sha_effects() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("shaders");
    fs::create_dir(&folder).unwrap();
    for e in &effects {
        fs::copy(e, folder.join(e.file_name().unwrap())).unwrap();
    }
    let m = Mount::new(&folder, &tmp.path().join("mnt"), &[]);
    // The ambient constants c17-c19 are read by the lit vertex shaders.
    let (code, out, err) = sh(&format!(
        "cd {} && grep -rlw c17 --include='*.asm' . | sort",
        p(&m.dir)
    ));
    assert_eq!(code, 0, "{err}");
    let mut want: Vec<String> = effects
        .iter()
        .filter(|e| {
            fs::read_to_string(e)
                .unwrap()
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| w == "c17")
        })
        .map(|e| format!("./{}/vertex.asm", e.file_name().unwrap().to_string_lossy()))
        .collect();
    want.sort();
    assert!(!want.is_empty());
    assert_eq!(out.lines().collect::<Vec<_>>(), want);
    // And the post-process effects, which have no vertex shader, say so in their pass.
    let (_, out, _) = sh(&format!(
        "cd {} && grep -l '\"value\": \"null\"' */passes/T0/P0.json | sort",
        p(&m.dir)
    ));
    for line in out.lines() {
        assert!(line.starts_with("demo_post_"), "{line}");
        assert!(!m
            .path(line.split('/').next().unwrap())
            .join("vertex.asm")
            .exists());
    }
    assert!(out.lines().count() >= 7, "{out}");
    m.unmount();
}

/// demo_decalpaint.sha sets `Zbias`, which every D3DX9 refuses: a save that keeps it is
/// refused with the name D3DX knows, one that writes DepthBias instead is saved.
#[test]
fn a_save_keeping_zbias_is_refused_and_one_with_depthbias_saved() {
    let Some(s) = setup("demo_decalpaint.sha") else {
        return;
    };
    let m = Mount::new(&s.effect, &s.mnt, &[]);
    let fx = p(&m.path("effect.fx"));
    let (code, _, err) = sh(&format!("sed -i 's/mul\tr0, t0, t1/mul\tr0, t1, t0/' {fx}"));
    assert_ne!(code, 0, "a save keeping Zbias succeeded");
    assert!(err.contains("Invalid argument"), "{err}");
    assert_eq!(fs::read(&s.effect).unwrap(), s.original);
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    assert!(
        log.contains("demo_decalpaint.sha:64:3: 'Zbias' is not a state D3DX knows"),
        "{log}"
    );
    assert!(log.contains("write DepthBias"), "{log}");
    // The pass's JSON is checked the same way.
    let pass = p(&m.path("passes/T0/P0.json"));
    let (code, _, _) = sh(&format!("sed -i 's/\"Zbias\"/\"ZBIAS\"/' {pass}"));
    assert_ne!(code, 0, "a pass keeping ZBIAS was saved");
    let (code, _, err) = sh(&format!(
        "sed -i 's/\"Zbias\"/\"DepthBias\"/; s/\"value\": \"2\"/\"value\": \"-0.00002f\"/' {pass}"
    ));
    assert_eq!(code, 0, "{err}");
    m.unmount();
    let now = String::from_utf8(fs::read(&s.effect).unwrap()).unwrap();
    assert!(
        now.contains("\t\tDepthBias = -0.00002f;\n") && !now.contains("Zbias"),
        "{now}"
    );
    let out = run(shaderfs().arg("check").arg(&s.effect));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn check_reports_exactly_the_corpus_effects_d3dx_refuses() {
    let Some(dir) = corpus("sha") else { return };
    let out = run(shaderfs().arg("check").arg("--json").arg(&dir));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let named: std::collections::BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|r| {
            let archive = std::path::PathBuf::from(r["archive"].as_str().unwrap());
            archive.file_name().unwrap().to_string_lossy().into_owned()
        })
        .collect();
    assert_eq!(named.into_iter().collect::<Vec<_>>(), SHA_REFUSED, "{err}");
    let out = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.contains("'Zbias' is not a state D3DX knows") && out.contains("write DepthBias"),
        "{out}"
    );
    for good in sha_effects().unwrap() {
        let name = good.file_name().unwrap().to_string_lossy().into_owned();
        if SHA_REFUSED.contains(&name.as_str()) {
            continue;
        }
        let out = run(shaderfs().arg("check").arg(&good));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
