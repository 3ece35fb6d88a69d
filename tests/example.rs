//! The bundled example package is what `shaderfs sdp pack` makes of its sources.

use std::path::Path;
use std::process::Command;

#[test]
fn the_example_package_is_rebuilt_identically() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("rebuilt.sdp");
    let status = Command::new(env!("CARGO_BIN_EXE_shaderfs"))
        .args(["sdp", "pack"])
        .arg(&out)
        .args(
            [
                "SLS1000.vso.asm",
                "SLS1000.pso.asm",
                "WATER000.pso.asm",
                "SKY.vso.asm",
            ]
            .iter()
            .map(|f| root.join("sdp").join(f)),
        )
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(root.join("shaderpackage-example.sdp")).unwrap(),
        "examples/shaderpackage-example.sdp is stale: rebuild it with the command in examples/README.md"
    );
    let check = Command::new(env!("CARGO_BIN_EXE_shaderfs"))
        .arg("check")
        .arg(root.join("shaderpackage-example.sdp"))
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn pack_refuses_what_a_save_would_refuse() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("BAD.pso.asm");
    std::fs::write(&bad, "ps_2_0\ntexld r0, t0, s0\nmov oC0, r99\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_shaderfs"))
        .args(["sdp", "pack"])
        .arg(tmp.path().join("x.sdp"))
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("BAD.pso.asm: 3:"), "{err}");
    assert!(!tmp.path().join("x.sdp").exists());
}
