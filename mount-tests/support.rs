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

/// The records of the package on disk at `path` (name, bytecode), in order, read with
/// the project's reader.
pub fn package_records(path: &Path) -> Vec<(String, Vec<u8>)> {
    let bytes = std::fs::read(path).unwrap();
    let index = shaderfs::archive::sdp::read::index(&bytes).expect("the package reads back");
    index
        .records
        .iter()
        .map(|r| {
            let name = String::from_utf8_lossy(&bytes[r.name.clone()]).into_owned();
            (name, bytes[r.data.clone()].to_vec())
        })
        .collect()
}

/// The bytecode of record `name` of the package on disk at `path`.
pub fn package_record(path: &Path, name: &str) -> Vec<u8> {
    package_records(path)
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no record {name}"))
        .1
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

/// `text`, a pixel shader's HLSL as the decompiler writes it, with the colour it writes
/// halved: its `out` parameter of semantic `COLOR0` scaled before the function's last
/// `}`, or else the value it returns. Found in the text, so it follows the decompiler's
/// naming rather than a copy of its output.
pub fn halved(text: &str) -> String {
    let output = text.split("out ").skip(1).find_map(|after| {
        let words: Vec<&str> = after.split_whitespace().take(4).collect();
        match words.as_slice() {
            [_, name, ":", semantic] if semantic.trim_end_matches([')', ',']) == "COLOR0" => {
                Some(*name)
            }
            _ => None,
        }
    });
    let end = text
        .rfind('}')
        .unwrap_or_else(|| panic!("no '}}' in {text}"));
    match output {
        Some(name) => format!(
            "{}    {name} = {name} * 0.5;\n{}",
            &text[..end],
            &text[end..]
        ),
        None => {
            let at = text
                .rfind("return ")
                .unwrap_or_else(|| panic!("no COLOR0 output and no return in {text}"));
            let semi = at + text[at..].find(';').unwrap();
            let value = &text[at + "return ".len()..semi];
            format!("{}return ({value}) * 0.5{}", &text[..at], &text[semi..])
        }
    }
}

/// `(inode, mtime)` of the file at `path`: a commit replaces the file (a new inode), so
/// the same pair before and after a save says nothing was committed.
pub fn identity(path: &Path) -> (u64, std::time::SystemTime) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap();
    (meta.ino(), meta.modified().unwrap())
}

/// A mounted source; unmounts (and waits for the daemon) when dropped.
pub struct Mount {
    pub dir: PathBuf,
    mounted: bool,
}

impl Mount {
    /// `shaderfs mount SOURCE MNT ARGS…`, panicking with its stderr if it fails.
    pub fn new(source: &Path, mountpoint: &Path, args: &[&str]) -> Mount {
        Mount::saying(source, mountpoint, args).0
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

/// The corpus effects D3DX's effect compiler refuses: the two above, and
/// `demo_decalpaint.sha`, which sets `Zbias` (Direct3D 8's name; D3DX9's is DepthBias).
pub const SHA_REFUSED: [&str; 3] = [
    "demo_decalpaint.sha",
    "demo_helloworld.sha",
    "demo_static2x.sha",
];

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

// ---- Crashes ---------------------------------------------------------------------------

/// The process id of the daemon serving `mountpoint`, from the file it leaves for
/// `shaderfs umount`.
pub fn daemon_pid(mountpoint: &Path) -> i32 {
    let canonical = std::fs::canonicalize(mountpoint).unwrap();
    let file = shaderfs::mount::pid_file(&canonical);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    text.trim().parse().unwrap()
}

/// The processes holding a `flock` on `path`'s inode, as the kernel lists them in
/// /proc/locks.
pub fn lock_holders(path: &Path) -> Vec<i32> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap();
    let dev = meta.dev();
    // MAJOR:MINOR:INODE, as the kernel prints them (glibc's encoding of st_dev).
    let (major, minor) = (
        ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff),
        (dev & 0xff) | ((dev >> 12) & !0xff),
    );
    let file = format!("{major:02x}:{minor:02x}:{}", meta.ino());
    shaderfs::mountinfo::read_proc("/proc/locks")
        .unwrap()
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.get(1) == Some(&"FLOCK") && fields.get(5) == Some(&file.as_str()))
                .then(|| fields[4].parse().ok())?
        })
        .collect()
}

/// Whether process `pid` is gone, or is a zombie whose every thread has exited (so its
/// files, the archive's lock and /dev/fuse among them, are closed).
pub fn has_exited(pid: i32) -> bool {
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let Ok(stat) = std::fs::read_to_string(proc_dir.join("stat")) else {
        return true;
    };
    let state = stat
        .rsplit(')')
        .next()
        .and_then(|s| s.split_whitespace().next());
    let threads = std::fs::read_dir(proc_dir.join("task")).map_or(0, |d| d.count());
    state == Some("Z") && threads <= 1
}

/// A mount whose daemon was killed: its mount point answers ENOTCONN until it is
/// detached (`umount -l`), which dropping it does.
pub struct DeadMount {
    pub dir: PathBuf,
    pub pid: i32,
}

impl Mount {
    /// `kill -9` the daemon, as a crash would, and wait until it has died.
    pub fn kill_daemon(mut self) -> DeadMount {
        let pid = daemon_pid(&self.dir);
        // SAFETY: kill sends a signal; pid is the daemon's.
        assert_eq!(
            unsafe { libc::kill(pid, libc::SIGKILL) },
            0,
            "kill -9 {pid}"
        );
        // A killed process goes once each of its threads leaves the kernel: one in an
        // fsync on a disk that other tests keep busy may take seconds.
        let started = Instant::now();
        while !has_exited(pid) {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "daemon {pid} survived kill -9 for 60 s; its threads: {}",
                threads_of(pid)
            );
            if started.elapsed() > Duration::from_secs(5) {
                eprintln!(
                    "daemon {pid} still dying after kill -9: {}",
                    threads_of(pid)
                );
                std::thread::sleep(Duration::from_secs(5));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        self.mounted = false;
        DeadMount {
            dir: self.dir.clone(),
            pid,
        }
    }
}

/// Each thread of process `pid` with its state and where in the kernel it waits.
fn threads_of(pid: i32) -> String {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return "gone".into();
    };
    let read = |path: PathBuf| std::fs::read_to_string(path).unwrap_or_default();
    tasks
        .flatten()
        .map(|task| {
            let stat = read(task.path().join("stat"));
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next();
            let wchan = read(task.path().join("wchan"));
            let name = read(task.path().join("comm"));
            format!("{} {} {}", name.trim(), state.unwrap_or("?"), wchan.trim())
        })
        .collect::<Vec<_>>()
        .join("; ")
}

impl Drop for DeadMount {
    fn drop(&mut self) {
        let out = run(Command::new("umount").arg("-l").arg(&self.dir));
        if !out.status.success() && !std::thread::panicking() {
            panic!(
                "umount -l {}: {}",
                self.dir.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

impl Mount {
    /// [`Mount::new`], also giving what `shaderfs mount` said on stderr.
    pub fn saying(source: &Path, mountpoint: &Path, args: &[&str]) -> (Mount, String) {
        std::fs::create_dir_all(mountpoint).unwrap();
        let out = run(shaderfs()
            .arg("mount")
            .arg(source)
            .arg(mountpoint)
            .args(args));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "mount failed: {err}");
        let mount = Mount {
            dir: mountpoint.to_path_buf(),
            mounted: true,
        };
        (mount, err)
    }
}
