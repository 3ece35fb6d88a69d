//! What every mount test needs: the corpus, packages built from it, and a mount that
//! unmounts itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use shaderfs::archive::sdp::write::{self, NameField};

pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

pub use shaderfs::test_corpus::corpus;

/// Whether this machine can mount FUSE file systems. Under CI=true it must.
pub fn can_mount() -> bool {
    let ok = Path::new("/dev/fuse").exists()
        // SAFETY: geteuid cannot fail.
        && (unsafe { libc::geteuid() } == 0 || which("fusermount3"));
    if !ok {
        assert!(
            !in_ci(),
            "CI=true but this machine cannot mount (no /dev/fuse, or neither root nor fusermount3)"
        );
        eprintln!("skipped: no /dev/fuse here, or neither root nor fusermount3");
    }
    ok
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|p| p.join(program).is_file()))
        .unwrap_or(false)
}

pub fn shaderfs() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shaderfs"))
}

pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("running a command")
}

/// Run a shell command line; returns (status code, stdout, stderr).
pub fn sh(script: &str) -> (i32, String, String) {
    let out = run(Command::new("sh").arg("-c").arg(script));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A shader of the corpus with the record name a package gives it: the file's stem in
/// capitals, with .vso or .pso by its profile.
pub struct Shader {
    pub name: String,
    pub source: PathBuf,
    pub bytes: Vec<u8>,
}

/// The HLSL-compiled shaders of `corpus/d3d9/compiled` (each has a CTAB).
pub fn compiled_shaders() -> Option<Vec<Shader>> {
    let dir = corpus("d3d9/compiled")?;
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    paths.sort();
    Some(
        paths
            .into_iter()
            .map(|p| {
                let file = p.file_name().unwrap().to_string_lossy().into_owned();
                let mut parts = file.split('.');
                let (stem, profile) = (parts.next().unwrap(), parts.next().unwrap());
                let ext = if profile.starts_with("vs") {
                    "vso"
                } else {
                    "pso"
                };
                let name = format!("{}_{}.{ext}", stem.to_uppercase(), profile.to_uppercase());
                Shader {
                    name,
                    bytes: std::fs::read(&p).unwrap(),
                    source: p,
                }
            })
            .collect(),
    )
}

/// Write a package of `shaders` with the project's own writer.
pub fn write_package(path: &Path, shaders: &[&Shader]) {
    let fields: Vec<(NameField, &[u8])> = shaders
        .iter()
        .map(|s| (NameField::new(&s.name).unwrap(), s.bytes.as_slice()))
        .collect();
    let bytes = write::serialise(100, fields.iter().map(|(n, d)| (n, *d))).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A mounted source; unmounts (and waits for the daemon) when dropped.
pub struct Mount {
    pub dir: PathBuf,
    mounted: bool,
}

impl Mount {
    /// `shaderfs mount SOURCE MNT ARGS…`, panicking with its stderr if it fails.
    pub fn new(source: &Path, mountpoint: &Path, args: &[&str]) -> Mount {
        std::fs::create_dir_all(mountpoint).unwrap();
        let out = run(shaderfs()
            .arg("mount")
            .arg(source)
            .arg(mountpoint)
            .args(args));
        assert!(
            out.status.success(),
            "mount failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Mount {
            dir: mountpoint.to_path_buf(),
            mounted: true,
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    pub fn unmount(mut self) {
        self.do_unmount();
    }

    fn do_unmount(&mut self) {
        if !self.mounted {
            return;
        }
        self.mounted = false;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let out = run(shaderfs().arg("umount").arg(&self.dir));
            if out.status.success() {
                return;
            }
            // A reader of a test may still be closing its files.
            if Instant::now() > deadline {
                let _ = run(Command::new("umount").arg("-l").arg(&self.dir));
                panic!("umount failed: {}", String::from_utf8_lossy(&out.stderr));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if std::thread::panicking() {
            if self.mounted {
                let _ = run(Command::new("umount").arg("-l").arg(&self.dir));
            }
        } else {
            self.do_unmount();
        }
    }
}

/// A package of every compiled corpus shader (written with the project's writer) and a
/// mount point beside it, in a folder of its own.
pub struct PackageSetup {
    _tmp: tempfile::TempDir,
    pub package: PathBuf,
    pub mnt: PathBuf,
    pub shaders: Vec<Shader>,
}

/// `None` (with the reason printed) where the machine cannot mount or the corpus is
/// missing; both are failures under CI=true.
pub fn package_setup(file_name: &str) -> Option<PackageSetup> {
    if !can_mount() {
        return None;
    }
    let shaders = compiled_shaders()?;
    let tmp = tempfile::tempdir().unwrap();
    let package = tmp.path().join(file_name);
    write_package(&package, &shaders.iter().collect::<Vec<_>>());
    let mnt = tmp.path().join("mnt");
    Some(PackageSetup {
        _tmp: tmp,
        package,
        mnt,
        shaders,
    })
}

// ---- FlatOut .sha effects ------------------------------------------------------------

/// The effects of `corpus/sha`, sorted, or `None` (with the reason printed) without the
/// corpus.
pub fn sha_effects() -> Option<Vec<PathBuf>> {
    let dir = corpus("sha")?;
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sha"))
        .collect();
    paths.sort();
    Some(paths)
}

/// The corpus README's two effects a correct validator refuses.
pub const SHA_KNOWN_BAD: [&str; 2] = ["demo_helloworld.sha", "demo_static2x.sha"];

// ---- GTA V SGD2 databases --------------------------------------------------------------

/// Write a test database with `shaderfs dev gen-sgd2 OUT ARGS…` from the corpus's DXIL
/// programs; `None` (with the reason printed) without the corpus.
pub fn gen_sgd2(out: &Path, args: &[&str]) -> Option<()> {
    let dxil = corpus("dxil")?;
    let result = run(shaderfs()
        .args(["dev", "gen-sgd2"])
        .arg(out)
        .arg("--dxil")
        .arg(&dxil)
        .args(args));
    assert!(
        result.status.success(),
        "gen-sgd2 failed: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    Some(())
}
