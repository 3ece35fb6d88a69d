//! The scripts a new user runs: on a machine whose Rust is older than the build needs,
//! `scripts/install-deps` says so and takes a toolchain that works, instead of letting the
//! build fail half-way.

use std::path::Path;
use std::process::Command;

#[test]
fn install_deps_replaces_a_rust_older_than_the_build_needs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fake = tempfile::tempdir().unwrap();
    let rustc = fake.path().join("rustc");
    std::fs::write(
        &rustc,
        "#!/bin/sh\necho 'rustc 1.63.0 (4b91a6ea7 2022-08-08)'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&rustc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        fake.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(root.join("scripts/install-deps"))
        .arg("--dry-run")
        .env("PATH", &path)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("Rust 1.63.0 is older than the 1.80") && said.contains("rustup"),
        "{said}"
    );
    // With the machine's own toolchain, nothing to say about Rust.
    let out = Command::new(root.join("scripts/install-deps"))
        .arg("--dry-run")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("rustup"));
}
