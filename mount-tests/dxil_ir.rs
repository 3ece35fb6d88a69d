//! DXIL programs as text through a real mount (issue 15): `cat programs/pixel/N.ll` is
//! what `shaderfs dxil dis` prints for the container and, but for the two lines that name
//! the module, what `llvm-dis-14` prints for its bitcode; the effects' links reach the
//! `.ll` as they reach the `.dxil`; `ls by-name/…` and one `jq` find a program by its
//! name or CRC-32; damaged bitcode reads as EIO, with the file offset and the record in
//! `.shaderfs/errors`.

use std::fs;
use std::path::Path;
use std::process::Command;

use shaderfs::archive::sgd2::read;
use shaderfs::shader::dxbc::listing;

use crate::support::{gen_sgd2, in_ci, run, sh, shaderfs, Mount};

/// The lines after `source_filename`: the module, without the lines that name it.
fn module(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("source_filename = "))
        .skip(1)
        .map(String::from)
        .collect()
}

fn which(program: &str) -> bool {
    sh(&format!("command -v {program}")).0 == 0
}

#[test]
fn programs_read_as_ir_and_are_found_by_name() {
    if !crate::support::can_mount() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let awc = tmp.path().join("sga_win32_60_final.awc");
    if gen_sgd2(&awc, &["--programs-per-stage", "9"]).is_none() {
        return;
    }
    let m = Mount::new(&awc, &tmp.path().join("mnt"), &["-o", "ro"]);
    let root = m.dir.display().to_string();

    // The view is the listing `shaderfs dxil dis` prints for the container.
    let ir = fs::read_to_string(m.path("programs/pixel/4.ll")).unwrap();
    assert!(ir.starts_with("; ps_6_"), "{}", &ir[..200.min(ir.len())]);
    let loose = tmp.path().join("4.dxil");
    fs::copy(m.path("programs/pixel/4.dxil"), &loose).unwrap();
    let out = run(shaderfs().args(["dxil", "dis"]).arg(&loose));
    assert!(out.status.success());
    let dis = String::from_utf8(out.stdout).unwrap();
    assert_eq!(module(&ir), module(&dis));
    assert!(ir.contains("\n; ModuleID = 'programs/pixel/4.dxil'\n"));

    // And its module is llvm-dis-14's text for the bitcode.
    if which("llvm-dis-14") {
        let bytes = fs::read(&loose).unwrap();
        let (_, bc) = listing::bitcode(&bytes).unwrap();
        let bc_path = tmp.path().join("4.bc");
        fs::write(&bc_path, bc).unwrap();
        let out = run(Command::new("llvm-dis-14").arg(&bc_path).arg("-o").arg("-"));
        assert!(out.status.success());
        assert_eq!(module(&ir), module(&String::from_utf8(out.stdout).unwrap()));
    } else {
        assert!(
            !in_ci(),
            "CI=true but llvm-dis-14 is missing (scripts/install-deps --test)"
        );
        eprintln!("llvm-dis-14 not here: the IR is compared with `shaderfs dxil dis` only");
    }

    // grep works across programs: which pixel programs sample a texture.
    let (code, out, err) = sh(&format!(
        "cd {root}/programs/pixel && grep -l '@dx.op.sample' *.ll"
    ));
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().all(|l| l.ends_with(".ll")) && !out.is_empty());

    // Every effect link to a program's IR resolves inside the mount to the same program
    // as its .dxil twin, and reads as that program's IR.
    let (code, out, err) = sh(&format!(
        "cd {root} && find effects -name '*.ll' -type l | while read l; do \
           t=$(readlink -f \"$l\") && d=$(readlink -f \"${{l%.ll}}.dxil\") && \
           [ \"${{t%.ll}}\" = \"${{d%.dxil}}\" ] && cmp \"$l\" \"$t\" && echo \"${{t#$PWD/}}\"; done"
    ));
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().count() > 20, "{out}");
    assert!(
        out.lines()
            .all(|l| l.starts_with("programs/") && l.ends_with(".ll")),
        "{out}"
    );

    // ls by-name: each name a directory of links to its programs, hostile names escaped.
    let (code, out, err) = sh(&format!("cd {root}/programs/pixel/by-name && ls PS_*"));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("PS_..%2FWet%2FFoliage%0A:\n3.dxil\n4.dxil\n5.dxil\n"),
        "{out}"
    );
    let (_, names, _) = sh(&format!("ls {root}/programs/pixel/by-name"));
    assert!(names.lines().all(|n| n.len() <= 255), "{names}");
    let (code, _, err) = sh(&format!(
        "cmp {root}/programs/pixel/by-name/PS_..%2FWet%2FFoliage%0A/4.dxil {root}/programs/pixel/4.dxil"
    ));
    assert_eq!(code, 0, "{err}");

    // One jq: which programs have this name, and which this CRC-32 (a mod's key).
    if which("jq") {
        let (code, out, err) = sh(&format!(
            "jq -c '.by_name[\"PS_../Wet/Foliage\\n\"]' {root}/programs/pixel/index.json"
        ));
        assert_eq!(code, 0, "{err}");
        assert_eq!(out.trim(), "[3,4,5]");
        let bytes = fs::read(&awc).unwrap();
        let index = read::index(&bytes).unwrap();
        let crc = crc32fast::hash(&bytes[index.groups[1].programs[4].container()]);
        let (code, out, err) = sh(&format!(
            "jq -c '.by_crc32[\"{crc:#010x}\"]' {root}/programs/pixel/index.json"
        ));
        assert_eq!(code, 0, "{err}");
        assert!(out.contains('4'), "{out}");
    } else {
        eprintln!("jq not here: index.json not queried");
    }
}

#[test]
fn damaged_bitcode_reads_as_eio_saying_where() {
    if !crate::support::can_mount() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let awc = tmp.path().join("db.awc");
    if gen_sgd2(&awc, &["--programs-per-stage", "3"]).is_none() {
        return;
    }
    let mut bytes = fs::read(&awc).unwrap();
    let index = read::index(&bytes).unwrap();
    let c = index.groups[1].programs[0].container();
    let (at, len) = {
        let (at, bc) = listing::bitcode(&bytes[c.clone()]).unwrap();
        (c.start + at, bc.len())
    };
    for b in &mut bytes[at + len / 2..at + len / 2 + 16] {
        *b = 0xFF;
    }
    fs::write(&awc, &bytes).unwrap();
    let m = Mount::new(&awc, &tmp.path().join("mnt"), &["-o", "ro"]);
    let ll = m.path("programs/pixel/0.ll");
    let (code, _, err) = sh(&format!("cat {} > /dev/null", ll.display()));
    assert_ne!(code, 0);
    assert!(err.contains("Input/output error"), "{err}");
    let log = fs::read_to_string(m.path(".shaderfs/errors")).unwrap();
    let line = log
        .lines()
        .find(|l| l.contains("programs/pixel/0.ll"))
        .unwrap_or_else(|| panic!("no line for the view in:\n{log}"));
    let offset = line
        .split("file offset 0x")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|h| usize::from_str_radix(h, 16).ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!((at..at + len).contains(&offset), "{line}");
    // The container reads as stored, the other programs as IR.
    assert_eq!(
        fs::read(m.path("programs/pixel/0.dxil")).unwrap(),
        &bytes[c]
    );
    assert!(fs::read_to_string(m.path("programs/pixel/1.ll")).is_ok());
    assert!(Path::new(&m.path("programs/pixel/0.json")).exists());
}
