//! `shaderfs dxil dis`: a loose container's program as the `.ll` view shows it, its IR as
//! `llvm-dis-14` prints the bitcode, and a damaged container refused with exit 2 and
//! where. `shaderfs dxil info`: the container as the program's `.json` view shows it.
//! Needs the corpus (skipped without it, a failure under CI=true).

use std::fs;
use std::process::Command;

use shaderfs::archive::sgd2::generate::{self, Spec};
use shaderfs::archive::sgd2::read;
use shaderfs::shader::dxbc::listing;
use shaderfs::test_corpus::corpus;

fn shaderfs(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_shaderfs"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The lines after the two that name the module.
fn body(text: &str) -> Vec<&str> {
    text.lines()
        .skip_while(|l| !l.starts_with("source_filename = "))
        .skip(1)
        .collect()
}

#[test]
fn dis_prints_what_the_view_and_llvm_dis_show() {
    let Some(dir) = corpus("dxil") else { return };
    let file = dir.join("textures.od.dxil");
    let path = file.to_str().unwrap();
    let (code, text, err) = shaderfs(&["dxil", "dis", path]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.starts_with("; ps_6_0 (pixel), shader model 6.0"),
        "{text}"
    );
    assert!(text.contains(&format!("\n; ModuleID = '{path}'\n")));

    // The same text as the database view of the same container, but for its name.
    let containers = generate::corpus_containers(&dir).unwrap();
    let mut db = Vec::new();
    generate::generate(&Spec::per_stage(3), &containers, &mut db).unwrap();
    let index = read::index(&db).unwrap();
    let p = &index.groups[1].programs[0];
    let container = &db[p.container()];
    let tmp = tempfile::tempdir().unwrap();
    let loose = tmp.path().join("p.dxil");
    fs::write(&loose, container).unwrap();
    let awc = tmp.path().join("db.awc");
    fs::write(&awc, &db).unwrap();
    let (_, view, err) = shaderfs(&["cat", awc.to_str().unwrap(), "programs/pixel/0.ll"]);
    assert!(
        view.contains("\n; ModuleID = 'programs/pixel/0.dxil'\n"),
        "{err}"
    );
    let (_, dis, _) = shaderfs(&["dxil", "dis", loose.to_str().unwrap()]);
    let head = |t: &str| -> Vec<String> {
        t.lines()
            .take_while(|l| !l.starts_with("; ModuleID"))
            .map(String::from)
            .collect()
    };
    assert_eq!(head(&view), head(&dis));
    assert_eq!(body(&view), body(&dis));

    // And the IR is llvm-dis-14's, where it is installed.
    let (_, bc) = listing::bitcode(container).unwrap();
    let bc_file = tmp.path().join("p.bc");
    fs::write(&bc_file, bc).unwrap();
    match Command::new("llvm-dis-14")
        .arg(&bc_file)
        .arg("-o")
        .arg("-")
        .output()
    {
        Ok(out) => {
            let reference = String::from_utf8(out.stdout).unwrap();
            assert_eq!(body(&dis), body(&reference));
        }
        Err(e) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "llvm-dis-14: {e}"
            );
            eprintln!("llvm-dis-14 not run: {e}");
        }
    }

    // -o writes the file.
    let out = tmp.path().join("p.ll");
    let (code, _, _) = shaderfs(&[
        "dxil",
        "dis",
        loose.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert_eq!(fs::read_to_string(&out).unwrap(), dis);
}

#[test]
fn a_damaged_container_is_refused_with_where() {
    let Some(dir) = corpus("dxil") else { return };
    let mut bytes = fs::read(dir.join("draw_vs.dxil")).unwrap();
    let (at, len) = {
        let (at, bc) = listing::bitcode(&bytes).unwrap();
        (at, bc.len())
    };
    for b in &mut bytes[at + len / 2..at + len / 2 + 16] {
        *b = 0xFF;
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bad.dxil");
    fs::write(&file, &bytes).unwrap();
    let (code, out, err) = shaderfs(&["dxil", "dis", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(err.contains("bad.dxil: bitcode byte 0x"), "{err}");
    assert!(err.contains("container offset 0x"), "{err}");

    let (code, _, err) = shaderfs(&[
        "dxil",
        "dis",
        tmp.path().join("missing.dxil").to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
}

#[test]
fn info_shows_what_the_program_json_shows() {
    let Some(dir) = corpus("dxil") else { return };
    let containers = generate::corpus_containers(&dir).unwrap();
    let mut db = Vec::new();
    generate::generate(&Spec::per_stage(3), &containers, &mut db).unwrap();
    let index = read::index(&db).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let awc = tmp.path().join("db.awc");
    fs::write(&awc, &db).unwrap();
    for (g, stage) in [(0, "vertex"), (1, "pixel"), (5, "compute")] {
        let p = &index.groups[g].programs[2];
        let loose = tmp.path().join(format!("{stage}.dxil"));
        fs::write(&loose, &db[p.container()]).unwrap();
        let (code, info, err) = shaderfs(&["dxil", "info", loose.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        let info: serde_json::Value = serde_json::from_str(&info).unwrap();
        let (code, view, err) = shaderfs(&[
            "cat",
            awc.to_str().unwrap(),
            &format!("programs/{stage}/2.json"),
        ]);
        assert_eq!(code, 0, "{err}");
        let view: serde_json::Value = serde_json::from_str(&view).unwrap();
        for field in ["container", "intrinsics", "intrinsics_complete"] {
            assert_eq!(info[field], view[field], "{stage}: {field}");
        }
        assert_eq!(info["container"]["program"]["kind"], stage);
        assert!(!info["intrinsics"].as_array().unwrap().is_empty());
    }

    // A container whose digest no longer verifies is shown, with the problem named.
    let mut bytes = fs::read(dir.join("draw_vs.dxil")).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    let bad = tmp.path().join("bad.dxil");
    fs::write(&bad, &bytes).unwrap();
    let (code, info, err) = shaderfs(&["dxil", "info", bad.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let info: serde_json::Value = serde_json::from_str(&info).unwrap();
    assert_eq!(info["container"]["digest"]["status"], "mismatch", "{info}");
    assert!(!info["container"]["problems"].as_array().unwrap().is_empty());

    // A file that is not a container at all exits 2, saying so.
    let (code, out, err) = shaderfs(&["dxil", "info", awc.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.contains("db.awc: not a DXBC container: no 'DXBC' at offset 0"),
        "{err}"
    );
}
