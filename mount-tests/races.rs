//! Races a tester found (issue 24) between a mount and whatever else touches its archive:
//! another program renaming a new archive over it or rewriting it in place, readers
//! reading a file while saves replace it, `kill -9` in the middle of all that, a file
//! truncated under the mount and put back, and `rsync` copying a tree out and back in.
//!
//! Each stress test races for a bounded time (`SHADERFS_STRESS_SECS`, default 8 s; set
//! it higher to race longer by hand), counts what it saw, prints the counts, and asserts
//! only what must hold in every run: a race that did not happen in a run passes, a wrong
//! result never does. Threads are told to stop and joined when a test ends, even one
//! that fails, and every mount is unmounted.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::IntoRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime};

use shaderfs::archive::sdp::{read, write};
use shaderfs::archive::sgd2;

use crate::support::{
    can_mount, corpus, daemon_pid, gen_sgd2, package_record, package_records, package_setup, run,
    sh, shaderfs, Mount, PackageSetup, Shader,
};

// ---- what every race needs ---------------------------------------------------------

/// How long each stress test races.
fn stress_time() -> Duration {
    let secs = std::env::var("SHADERFS_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(8.0);
    Duration::from_secs_f64(secs)
}

/// How long a mount may take to show what another program did to its archive.
const NOTICE: Duration = Duration::from_secs(5);

/// splitmix64, seeded per test: the same sleeps and kill moments in every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A pause of 0 to `max_ms` milliseconds.
    fn pause(&mut self, max_ms: u64) -> Duration {
        Duration::from_micros(self.next() % (max_ms * 1000 + 1))
    }
}

/// The system call a file operation failed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Call {
    Open,
    Read,
    Write,
    Fstat,
    Close,
}

/// A failed system call and its errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Failed {
    call: Call,
    errno: i32,
}

impl Failed {
    fn of(call: Call, e: &std::io::Error) -> Failed {
        Failed {
            call,
            errno: e.raw_os_error().unwrap_or(0),
        }
    }
}

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let call = format!("{:?}", self.call).to_lowercase();
        write!(f, "{call}() failed with {}", errno_name(self.errno))
    }
}

fn errno_name(errno: i32) -> String {
    let name = match errno {
        libc::ENOENT => "ENOENT",
        libc::EEXIST => "EEXIST",
        libc::EIO => "EIO",
        libc::EINVAL => "EINVAL",
        libc::EPERM => "EPERM",
        libc::EACCES => "EACCES",
        libc::EBADF => "EBADF",
        libc::ESTALE => "ESTALE",
        libc::EBUSY => "EBUSY",
        libc::ENOTCONN => "ENOTCONN",
        libc::EAGAIN => "EAGAIN",
        libc::EINTR => "EINTR",
        libc::ENOSPC => "ENOSPC",
        _ => return format!("errno {errno}"),
    };
    name.to_string()
}

/// Save `data` as an editor or `cp` does: `open(O_WRONLY|O_TRUNC)` of the existing
/// file, `write`, `close()`, whose result is the save's.
fn save(path: &Path, data: &[u8]) -> Result<(), Failed> {
    let mut file = OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| Failed::of(Call::Open, &e))?;
    let written = file
        .write_all(data)
        .map_err(|e| Failed::of(Call::Write, &e));
    // std ignores what close() says; a save's answer is in it.
    let fd = file.into_raw_fd();
    // SAFETY: closing the descriptor we own, once.
    let closed = unsafe { libc::close(fd) };
    written?;
    match closed {
        0 => Ok(()),
        _ => Err(Failed::of(Call::Close, &std::io::Error::last_os_error())),
    }
}

/// Read a file as a reader does: `open`, `read(65536)` until end of file, then what
/// `fstat` says of the open file, then `close`. Returns the bytes and fstat's size.
fn read_whole(path: &Path) -> Result<(Vec<u8>, u64), Failed> {
    let mut file = fs::File::open(path).map_err(|e| Failed::of(Call::Open, &e))?;
    let mut data = Vec::new();
    let mut chunk = vec![0u8; 65536];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => data.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Failed::of(Call::Read, &e)),
        }
    }
    let size = file
        .metadata()
        .map_err(|e| Failed::of(Call::Fstat, &e))?
        .len();
    Ok((data, size))
}

/// Threads racing a mount, told to stop and joined when dropped: none outlives its
/// test, even one that fails.
struct Racers<T> {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<T>>,
}

impl<T: Send + 'static> Racers<T> {
    fn new(stop: &Arc<AtomicBool>) -> Racers<T> {
        Racers {
            stop: stop.clone(),
            threads: Vec::new(),
        }
    }

    /// Start `race`, which runs until the flag it is given is set or its own deadline.
    fn spawn(&mut self, race: impl FnOnce(&AtomicBool) -> T + Send + 'static) {
        let stop = self.stop.clone();
        self.threads.push(thread::spawn(move || race(&stop)));
    }

    /// Stop every thread and gather what each found.
    fn join(mut self) -> Vec<T> {
        self.stop.store(true, Ordering::SeqCst);
        std::mem::take(&mut self.threads)
            .into_iter()
            .map(|t| t.join().expect("a racing thread panicked"))
            .collect()
    }
}

impl<T> Drop for Racers<T> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn running(stop: &AtomicBool, deadline: Instant) -> bool {
    !stop.load(Ordering::SeqCst) && Instant::now() < deadline
}

/// At most the first `n` items, one a line, and how many more there were.
fn first<T: fmt::Display>(items: &[T], n: usize) -> String {
    let mut out: String = items.iter().take(n).map(|i| format!("\n  {i}")).collect();
    if items.len() > n {
        out.push_str(&format!("\n  … and {} more", items.len() - n));
    }
    out
}

fn shader<'a>(s: &'a PackageSetup, name: &str) -> &'a Shader {
    s.shaders
        .iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| panic!("no shader {name} in the corpus"))
}

/// The bytes of a package of `records` (name, bytecode), written with the project's
/// writer.
fn package_bytes(records: &[(String, Vec<u8>)]) -> Vec<u8> {
    let fields: Vec<(write::NameField, &[u8])> = records
        .iter()
        .map(|(n, d)| (write::NameField::new(n).unwrap(), d.as_slice()))
        .collect();
    write::serialise(read::EXPECTED_MAGIC, fields.iter().map(|(n, d)| (n, *d))).unwrap()
}

/// The package `bytes` with record `name`'s bytecode replaced by `data`, everything
/// else (header word, name fields, order) as it was.
fn with_record(bytes: &[u8], name: &str, data: &[u8]) -> Result<Vec<u8>, String> {
    let index = read::index(bytes).map_err(|e| e.to_string())?;
    let fields: Vec<(write::NameField, &[u8])> = index
        .records
        .iter()
        .map(|r| {
            let field = write::NameField::from_raw(&bytes[r.name_field()]);
            let own = &bytes[r.name.clone()] == name.as_bytes();
            (field, if own { data } else { &bytes[r.data.clone()] })
        })
        .collect();
    write::serialise(index.magic, fields.iter().map(|(n, d)| (n, *d)))
}

/// The bytecode of record `name` of the package `bytes`.
fn record_of(bytes: &[u8], name: &str) -> Result<Vec<u8>, String> {
    let index = read::index(bytes).map_err(|e| e.to_string())?;
    index
        .records
        .iter()
        .find(|r| &bytes[r.name.clone()] == name.as_bytes())
        .map(|r| bytes[r.data.clone()].to_vec())
        .ok_or_else(|| format!("no record {name}"))
}

/// An external writer: another program that, every 0–50 ms, reads the package from
/// disk, changes record `name` to its next version, writes the result to a temporary
/// file in the package's folder, fsyncs it and renames it over the package, as an atomic
/// save does. Before each change it checks that the package still holds the version it
/// wrote last: if not, a save through the mount put an older one back.
///
/// Version `n` of the record is `base` with a comment token holding `n` before its end
/// token: valid bytecode that says which version it is.
struct Renamer {
    package: PathBuf,
    name: String,
    base: Vec<u8>,
    /// The last version written (0: the package as made).
    last: u32,
    /// Versions lost: (the version written, the version found instead).
    lost: Vec<(u32, u32)>,
    /// What went wrong that is not a lost version (an unreadable package, say).
    trouble: Vec<String>,
}

/// The comment token's tag: "EXTW", an external writer's version.
const VERSION_TAG: &[u8; 4] = b"EXTW";

impl Renamer {
    fn new(package: &Path, name: &str, base: &[u8]) -> Renamer {
        assert_eq!(
            &base[base.len() - 4..],
            &0xFFFFu32.to_le_bytes(),
            "end token"
        );
        Renamer {
            package: package.to_path_buf(),
            name: name.to_string(),
            base: base.to_vec(),
            last: 0,
            lost: Vec::new(),
            trouble: Vec::new(),
        }
    }

    fn version(&self, n: u32) -> Vec<u8> {
        let end = self.base.len() - 4;
        let mut v = self.base[..end].to_vec();
        v.extend_from_slice(&(0xFFFEu32 | (2 << 16)).to_le_bytes());
        v.extend_from_slice(VERSION_TAG);
        v.extend_from_slice(&n.to_le_bytes());
        v.extend_from_slice(&self.base[end..]);
        v
    }

    /// Which version the record `data` is, if it is one.
    fn which(&self, data: &[u8]) -> Option<u32> {
        if data == self.base {
            return Some(0);
        }
        let n = u32::from_le_bytes(
            data.get(data.len().checked_sub(8)?..)?[..4]
                .try_into()
                .ok()?,
        );
        (data == self.version(n)).then_some(n)
    }

    /// Every version this writer made, the package's own included.
    fn known(&self) -> Vec<Vec<u8>> {
        (0..=self.last).map(|n| self.version(n)).collect()
    }

    /// Check that the package on disk holds the last version written; note it if not.
    /// Returns the package's bytes.
    fn check(&mut self) -> Option<Vec<u8>> {
        let bytes = match fs::read(&self.package) {
            Ok(b) => b,
            Err(e) => {
                self.trouble.push(format!("reading the package: {e}"));
                return None;
            }
        };
        match record_of(&bytes, &self.name).map(|d| self.which(&d)) {
            Ok(Some(n)) if n == self.last => {}
            Ok(Some(n)) => self.lost.push((self.last, n)),
            Ok(None) => self
                .trouble
                .push(format!("record {} is none of my versions", self.name)),
            Err(e) => self
                .trouble
                .push(format!("the package on disk does not read: {e}")),
        }
        Some(bytes)
    }

    /// One round: check, then write the next version by a rename.
    fn step(&mut self) {
        let Some(bytes) = self.check() else { return };
        let next = self.last + 1;
        let new = match with_record(&bytes, &self.name, &self.version(next)) {
            Ok(b) => b,
            Err(e) => {
                self.trouble.push(format!("rewriting the package: {e}"));
                return;
            }
        };
        let temp = self.package.with_extension("sdp.external-tmp");
        let written = fs::File::create(&temp)
            .and_then(|mut f| f.write_all(&new).and_then(|()| f.sync_all()))
            .and_then(|()| fs::rename(&temp, &self.package));
        match written {
            Ok(()) => self.last = next,
            Err(e) => self.trouble.push(format!("writing version {next}: {e}")),
        }
    }

    /// Race until stopped or `deadline`, then check the package once more.
    fn race(mut self, stop: &AtomicBool, deadline: Instant, seed: u64) -> Renamer {
        let mut rng = Rng(seed);
        while running(stop, deadline) {
            self.step();
            thread::sleep(rng.pause(50));
        }
        self
    }
}

/// What a saver saw: saves made, and the ones that failed (number, how).
#[derive(Default)]
struct Saves {
    made: usize,
    failed: Vec<(usize, Failed)>,
}

impl Saves {
    fn ok(&self) -> usize {
        self.made - self.failed.len()
    }

    /// "N ENOENT at open(), M EIO at close()".
    fn failures(&self) -> String {
        let mut kinds: BTreeMap<Failed, usize> = BTreeMap::new();
        for (_, f) in &self.failed {
            *kinds.entry(*f).or_default() += 1;
        }
        let parts: Vec<String> = kinds.iter().map(|(f, n)| format!("{n}× {f}")).collect();
        match parts.is_empty() {
            true => "none".into(),
            false => parts.join(", "),
        }
    }
}

/// Save `contents` alternately over `path` until stopped, `deadline` or `limit` saves,
/// pausing 0–`pause_ms` ms between saves.
fn saver(
    path: PathBuf,
    contents: [Vec<u8>; 2],
    deadline: Instant,
    limit: usize,
    pause_ms: u64,
    seed: u64,
) -> impl FnOnce(&AtomicBool) -> Saves + Send + 'static {
    move |stop| {
        let mut rng = Rng(seed);
        let mut saves = Saves::default();
        while running(stop, deadline) && saves.made < limit {
            if let Err(f) = save(&path, &contents[saves.made % 2]) {
                saves.failed.push((saves.made, f));
            }
            saves.made += 1;
            if pause_ms > 0 {
                thread::sleep(rng.pause(pause_ms));
            }
        }
        saves
    }
}

fn errors_log(m: &Mount) -> String {
    fs::read_to_string(m.path(".shaderfs/errors")).unwrap_or_else(|e| format!("({e})"))
}

/// The last lines of `.shaderfs/errors`, for a message.
fn errors_tail(m: &Mount) -> String {
    let log = errors_log(m);
    let lines: Vec<&str> = log.lines().collect();
    let from = lines.len().saturating_sub(6);
    let mut tail = match from {
        0 => String::new(),
        n => format!("({n} lines before these)\n"),
    };
    tail.push_str(&lines[from..].join("\n"));
    tail
}

// ---- 1. an external writer renames over the archive while saves land ------------------

#[test]
fn an_external_writer_renaming_over_the_package_never_loses_a_version_to_a_save() {
    let Some(s) = package_setup("shaderpackage024.sdp") else {
        return;
    };
    let x = "H23_PS_MRT_PS_2_0.pso";
    let y = shader(&s, "H24_PS_DEPTH_PS_2_0.pso");
    let contents = [
        shader(&s, "H14_PS_CONST_COLOR_PS_2_0.pso").bytes.clone(),
        shader(&s, "H15_PS_REGISTER_BINDING_PS_2_0.pso")
            .bytes
            .clone(),
    ];
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let x_path = m.path(&format!("shaders/{x}"));
    let time = stress_time();
    let started = Instant::now();
    let deadline = started + time;

    let stop = Arc::new(AtomicBool::new(false));
    let mut savers = Racers::new(&stop);
    savers.spawn(saver(
        x_path.clone(),
        contents.clone(),
        deadline,
        usize::MAX,
        10,
        1,
    ));
    let mut renamers = Racers::new(&stop);
    let renamer = Renamer::new(&s.package, &y.name, &y.bytes);
    renamers.spawn(move |stop| renamer.race(stop, deadline, 2));
    while running(&stop, deadline) {
        thread::sleep(Duration::from_millis(20));
    }
    let saves = savers.join().pop().unwrap();
    let mut renamer = renamers.join().pop().unwrap();
    // The last version must still be there once the saves have stopped too.
    renamer.check();
    eprintln!(
        "external renamer vs saves, {:.1?}: the renamer wrote {} versions of {}, {} of \
         them lost (put back to an older version by a save), {} other troubles; {} saves \
         of {x}: {} returned success, {} failed ({})",
        started.elapsed(),
        renamer.last,
        y.name,
        renamer.lost.len(),
        renamer.trouble.len(),
        saves.made,
        saves.ok(),
        saves.failed.len(),
        saves.failures()
    );
    let lost: Vec<String> = renamer
        .lost
        .iter()
        .map(|(wrote, found)| {
            format!("version {wrote} was written; the package then held version {found}")
        })
        .collect();
    assert!(
        lost.is_empty(),
        "lost {} of {} external versions of {}: a commit of a save through the mount renamed \
         a package made from its older snapshot over the renamer's newer one:{}",
        lost.len(),
        renamer.last,
        y.name,
        first(&lost, 8)
    );
    assert!(
        renamer.trouble.is_empty(),
        "the renamer's own troubles:{}",
        first(&renamer.trouble, 8)
    );
    let odd: Vec<String> = saves
        .failed
        .iter()
        .filter(|(_, f)| f.call != Call::Close || f.errno != libc::EIO)
        .map(|(i, f)| format!("save {i}: {f}"))
        .collect();
    assert!(
        odd.is_empty(),
        "{} of {} saves failed otherwise than by EIO from close() (a save refused because \
         the package changed on disk fails its close()):{}",
        odd.len(),
        saves.made,
        first(&odd, 8)
    );

    // Once the renamer stops, the mount shows its last version, and a save lands on it.
    let want = renamer.version(renamer.last);
    let y_path = m.path(&format!("shaders/{}", y.name));
    let shown = Instant::now() + NOTICE;
    while fs::read(&y_path).ok().as_ref() != Some(&want) && Instant::now() < shown {
        thread::sleep(Duration::from_millis(100));
    }
    assert!(
        fs::read(&y_path).ok() == Some(want.clone()),
        "{NOTICE:?} after the renamer stopped, shaders/{} does not show its version {}",
        y.name,
        renamer.last
    );
    let k = usize::from(package_record(&s.package, x) == contents[0]);
    let last = save(&x_path, &contents[k]);
    assert_eq!(last, Ok(()), "a save after the race: {}", errors_tail(&m));
    assert_eq!(package_record(&s.package, x), contents[k]);
    assert!(
        package_record(&s.package, &y.name) == want,
        "the last save put back an older {}",
        y.name
    );
}

// ---- 2. an external writer rewrites the archive in place ---------------------------------

/// Package `round` of the in-place test: every shader, in an order of the round's own,
/// one of them with another shader's bytecode (another size), so that every record sits
/// at another offset than in the package before.
fn in_place_package(shaders: &[Shader], round: usize) -> Vec<(String, Vec<u8>)> {
    let pixel: Vec<&Shader> = shaders
        .iter()
        .filter(|s| s.name.ends_with(".pso"))
        .collect();
    let changed = pixel[round % pixel.len()];
    let stand_in = pixel
        .iter()
        .cycle()
        .skip(round % pixel.len() + 1)
        .find(|s| s.bytes.len() != changed.bytes.len())
        .unwrap();
    let mut records: Vec<(String, Vec<u8>)> = shaders
        .iter()
        .map(|s| match s.name == changed.name {
            true => (s.name.clone(), stand_in.bytes.clone()),
            false => (s.name.clone(), s.bytes.clone()),
        })
        .collect();
    records.rotate_left((5 + 7 * round) % shaders.len());
    if round % 2 == 1 {
        records.reverse();
    }
    records
}

/// What the mount at `m` serves wrongly for a package of `records` whose views (as
/// `shaderfs extract` writes them) are in `views`: one line each.
fn served_wrongly(m: &Mount, records: &[(String, Vec<u8>)], views: &Path) -> Vec<String> {
    let mut wrong = Vec::new();
    let want: BTreeSet<&str> = records.iter().map(|(n, _)| n.as_str()).collect();
    match fs::read_dir(m.path("shaders")) {
        Ok(dir) => {
            let names: BTreeSet<String> = dir
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            let have: BTreeSet<&str> = names.iter().map(String::as_str).collect();
            for n in want.difference(&have) {
                wrong.push(format!("shaders/ does not list {n}"));
            }
            for n in have.difference(&want) {
                wrong.push(format!(
                    "shaders/ lists {n}, which the package does not have"
                ));
            }
        }
        Err(e) => wrong.push(format!("ls shaders/: {e}")),
    }
    for (name, data) in records {
        match read_whole(&m.path(&format!("shaders/{name}"))) {
            Ok((got, _)) if got == *data => {}
            Ok((got, _)) => wrong.push(format!(
                "shaders/{name}: {} bytes that are not the package's record ({} bytes)",
                got.len(),
                data.len()
            )),
            Err(f) => wrong.push(format!("shaders/{name}: {f}")),
        }
    }
    for folder in ["asm", "ctab"] {
        for entry in fs::read_dir(views.join(folder)).unwrap() {
            let leaf = entry.unwrap().file_name().to_string_lossy().into_owned();
            let rel = format!("{folder}/{leaf}");
            let want = fs::read(views.join(&rel)).unwrap();
            match read_whole(&m.path(&rel)) {
                Ok((got, _)) if got == want => {}
                Ok(_) => wrong.push(format!("{rel}: not the view of the package's record")),
                Err(f) => wrong.push(format!("{rel}: {f}")),
            }
        }
    }
    wrong
}

/// Lines of `.shaderfs/errors` that name the mount's own daemon as the holder of the
/// archive's lock.
fn blames_itself(m: &Mount) -> Vec<String> {
    let pid = daemon_pid(&m.dir);
    errors_log(m)
        .lines()
        .filter(|l| l.contains("holds its lock") && l.contains(&format!("(pid {pid})")))
        .map(String::from)
        .collect()
}

#[test]
fn a_package_rewritten_in_place_is_served_and_saved_as_it_now_is() {
    let Some(s) = package_setup("shaderpackage024.sdp") else {
        return;
    };
    let started = Instant::now();
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let scratch = tempfile::tempdir().unwrap();
    // Rounds 1 and 3 write two packages in place, one right after the other.
    let (mut writes, mut waited) = (0, Duration::ZERO);
    for round in 0..4 {
        let mut records = Vec::new();
        for k in 0..1 + round % 2 {
            records = in_place_package(&s.shaders, 2 * round + k);
            // What `cp new.sdp package.sdp` does: open(O_TRUNC), write, close.
            fs::write(&s.package, package_bytes(&records)).unwrap();
            writes += 1;
        }
        let inode = fs::metadata(&s.package).unwrap().ino();
        let new = scratch.path().join(format!("round{round}.sdp"));
        fs::write(&new, package_bytes(&records)).unwrap();
        let views = scratch.path().join(format!("round{round}"));
        let out = run(shaderfs()
            .arg("extract")
            .arg("-q")
            .arg(&new)
            .arg("-C")
            .arg(&views));
        assert!(out.status.success(), "extract: {out:?}");

        let t = Instant::now();
        let mut wrong = served_wrongly(&m, &records, &views);
        while !wrong.is_empty() && t.elapsed() < NOTICE {
            thread::sleep(Duration::from_millis(100));
            wrong = served_wrongly(&m, &records, &views);
        }
        waited += t.elapsed();
        let blame = blames_itself(&m);
        let mut problems = Vec::new();
        if !wrong.is_empty() {
            problems.push(format!(
                "{NOTICE:?} after the package was rewritten in place ({} time(s) in a row), \
                 {} files of the mount are not the new package's:{}",
                1 + round % 2,
                wrong.len(),
                first(&wrong, 8)
            ));
        }
        if !blame.is_empty() {
            problems.push(format!(
                ".shaderfs/errors blames the mount's own daemon for holding the package's \
                 lock:{}",
                first(&blame, 4)
            ));
        }
        assert!(
            problems.is_empty(),
            "round {round}: {}\n.shaderfs/errors:\n{}",
            problems.join("\n"),
            errors_tail(&m)
        );

        // A save made now lands in the package as it now is: another shader of the
        // same kind over one of its records.
        let (target, was) = &records[round];
        let content = &s
            .shaders
            .iter()
            .find(|x| x.name[x.name.len() - 4..] == target[target.len() - 4..] && x.bytes != *was)
            .unwrap()
            .bytes;
        let saved = save(&m.path(&format!("shaders/{target}")), content);
        assert_eq!(
            saved,
            Ok(()),
            "round {round}: a save of shaders/{target} after the package was rewritten in \
             place failed:\n{}",
            errors_tail(&m)
        );
        let mut want = records.clone();
        want[round].1 = content.clone();
        assert!(
            package_records(&s.package) == want,
            "round {round}: the package on disk is not the rewritten one with the save in it"
        );
        assert_ne!(
            fs::metadata(&s.package).unwrap().ino(),
            inode,
            "the save did not replace the file"
        );
    }
    eprintln!(
        "in place: {writes} rewrites in 4 rounds; the mount showed each round's package \
         after {waited:.1?} in all, and each round's save landed; {:.1?} in all",
        started.elapsed()
    );
}

// ---- 3 and 4. readers during commits ---------------------------------------------------

/// What one run of [`commits_under_readers`] saw.
struct ReadRun {
    what: &'static str,
    target: String,
    sizes: [usize; 2],
    reads: usize,
    /// Reads of each version.
    whole: [usize; 2],
    /// Reads that returned neither version whole: how many, and the first of each
    /// reader's.
    torn: (usize, Vec<String>),
    /// Reads whose fstat() disagreed with what they read.
    stat: (usize, Vec<String>),
    /// Reads that failed.
    failed: (usize, Vec<String>),
    saves: Saves,
    errors: String,
    elapsed: Duration,
}

/// What one reader saw.
#[derive(Default)]
struct Reads {
    count: usize,
    whole: [usize; 2],
    torn: Vec<String>,
    torn_count: usize,
    stat: Vec<String>,
    stat_count: usize,
    failed: Vec<String>,
    failed_count: usize,
}

/// How `data` differs from both `versions`.
fn describe(data: &[u8], versions: &[Vec<u8>; 2]) -> String {
    for v in versions {
        if data.len() > v.len() && data.starts_with(v) {
            let rest = &data[v.len()..];
            return match rest.iter().all(|b| *b == 0) {
                true => format!(
                    "the {}-byte version padded with zeros to {} bytes",
                    v.len(),
                    data.len()
                ),
                false => format!(
                    "the {}-byte version followed by {} other bytes",
                    v.len(),
                    rest.len()
                ),
            };
        }
    }
    for v in versions {
        if data.len() < v.len() && v.starts_with(data) {
            return format!("the {}-byte version cut to {} bytes", v.len(), data.len());
        }
    }
    let (v, same) = versions
        .iter()
        .map(|v| (v, data.iter().zip(v).filter(|(a, b)| a == b).count()))
        .max_by_key(|(_, same)| *same)
        .unwrap();
    format!(
        "{} bytes, {same} of them as in the {}-byte version",
        data.len(),
        v.len()
    )
}

fn reader(
    path: PathBuf,
    versions: [Vec<u8>; 2],
    deadline: Instant,
    ready: Arc<AtomicUsize>,
) -> impl FnOnce(&AtomicBool) -> Reads + Send + 'static {
    const KEEP: usize = 8;
    move |stop| {
        let mut r = Reads::default();
        while running(stop, deadline) {
            match read_whole(&path) {
                Ok((data, size)) => {
                    match versions.iter().position(|v| *v == data) {
                        Some(k) => r.whole[k] += 1,
                        None => {
                            r.torn_count += 1;
                            if r.torn.len() < KEEP {
                                r.torn.push(format!(
                                    "{} (fstat size {size})",
                                    describe(&data, &versions)
                                ));
                            }
                        }
                    }
                    if size != data.len() as u64 {
                        r.stat_count += 1;
                        if r.stat.len() < KEEP {
                            r.stat
                                .push(format!("read {} bytes, fstat said {size}", data.len()));
                        }
                    }
                }
                Err(f) => {
                    r.failed_count += 1;
                    if r.failed.len() < KEEP {
                        r.failed.push(f.to_string());
                    }
                }
            }
            if r.count == 0 {
                ready.fetch_add(1, Ordering::SeqCst);
            }
            r.count += 1;
        }
        r
    }
}

/// Eight readers read `target` of the read-write mount of `archive` over and over
/// (open, read(65536) until end of file, fstat, close) while this thread saves
/// `versions` over it alternately, as fast as it can, for the stress time or up to 125
/// saves a second of it (1,000 in the default 8 s), whichever comes first.
fn commits_under_readers(
    what: &'static str,
    archive: &Path,
    mnt: &Path,
    target: &str,
    versions: [Vec<u8>; 2],
) -> ReadRun {
    assert_ne!(versions[0].len(), versions[1].len(), "versions of one size");
    let m = Mount::new(archive, mnt, &[]);
    let path = m.path(target);
    assert_eq!(save(&path, &versions[0]), Ok(()), "the first save");
    let started = Instant::now();
    let time = stress_time();
    let deadline = started + time;
    let limit = (time.as_secs_f64() * 125.0).ceil() as usize;
    let stop = Arc::new(AtomicBool::new(false));
    let ready = Arc::new(AtomicUsize::new(0));
    let mut readers = Racers::new(&stop);
    for _ in 0..8 {
        readers.spawn(reader(
            path.clone(),
            versions.clone(),
            deadline + Duration::from_secs(60),
            ready.clone(),
        ));
    }
    // Every reader has read once before the first commit.
    let wait = Instant::now() + Duration::from_secs(30);
    while ready.load(Ordering::SeqCst) < 8 && Instant::now() < wait {
        thread::sleep(Duration::from_millis(5));
    }
    let saves = saver(
        path,
        [versions[1].clone(), versions[0].clone()],
        deadline,
        limit,
        0,
        3,
    )(&AtomicBool::new(false));
    let all = readers.join();
    let mut run = ReadRun {
        what,
        target: target.to_string(),
        sizes: [versions[0].len(), versions[1].len()],
        reads: 0,
        whole: [0, 0],
        torn: (0, Vec::new()),
        stat: (0, Vec::new()),
        failed: (0, Vec::new()),
        saves,
        errors: errors_log(&m),
        elapsed: started.elapsed(),
    };
    for (i, r) in all.into_iter().enumerate() {
        run.reads += r.count;
        run.whole[0] += r.whole[0];
        run.whole[1] += r.whole[1];
        let label = |list: Vec<String>| list.into_iter().map(move |t| format!("reader {i}: {t}"));
        run.torn.0 += r.torn_count;
        run.torn.1.extend(label(r.torn));
        run.stat.0 += r.stat_count;
        run.stat.1.extend(label(r.stat));
        run.failed.0 += r.failed_count;
        run.failed.1.extend(label(r.failed));
    }
    m.unmount();
    eprintln!(
        "{what}: 8 readers read {target} {} times while {} saves alternated {} and {} \
         bytes ({} failed: {}), {:.1?}: {} reads of the {}-byte version, {} of the \
         {}-byte one, {} torn, {} with fstat disagreeing, {} failed; \
         .shaderfs/errors has {} lines",
        run.reads,
        run.saves.made,
        run.sizes[1],
        run.sizes[0],
        run.saves.failed.len(),
        run.saves.failures(),
        run.elapsed,
        run.whole[0],
        run.sizes[0],
        run.whole[1],
        run.sizes[1],
        run.torn.0,
        run.stat.0,
        run.failed.0,
        run.errors.lines().count()
    );
    for sample in run.stat.1.iter().take(3) {
        eprintln!("{what}: fstat disagreeing: {sample}");
    }
    run
}

/// The package run of [`commits_under_readers`], made once for the tests that look at
/// it: target H23_PS_MRT_PS_2_0.pso, versions of 148 and 288 bytes (the tester's sizes).
fn package_run() -> Option<&'static ReadRun> {
    static RUN: OnceLock<Option<ReadRun>> = OnceLock::new();
    RUN.get_or_init(|| {
        let s = package_setup("shaderpackage024.sdp")?;
        let versions = [
            shader(&s, "H14_PS_CONST_COLOR_PS_2_0.pso").bytes.clone(),
            shader(&s, "H15_PS_REGISTER_BINDING_PS_2_0.pso")
                .bytes
                .clone(),
        ];
        Some(commits_under_readers(
            "package",
            &s.package,
            &s.mnt,
            "shaders/H23_PS_MRT_PS_2_0.pso",
            versions,
        ))
    })
    .as_ref()
}

/// The database run of [`commits_under_readers`]: programs/pixel/2.dxil replaced by
/// pixel programs 0 and 1 of the database itself (of different sizes).
fn database_run() -> Option<&'static ReadRun> {
    static RUN: OnceLock<Option<ReadRun>> = OnceLock::new();
    RUN.get_or_init(|| {
        if !can_mount() {
            return None;
        }
        corpus("dxil")?;
        let tmp = tempfile::tempdir().unwrap();
        let awc = tmp.path().join("sga_win32_60_final.awc");
        gen_sgd2(&awc, &["--programs-per-stage", "6"])?;
        let bytes = fs::read(&awc).unwrap();
        let index = sgd2::read::index(&bytes).unwrap();
        assert_eq!(sgd2::read::group_dir(1), "pixel");
        let program = |i: usize| bytes[index.groups[1].programs[i].container()].to_vec();
        let run = commits_under_readers(
            "database",
            &awc,
            &tmp.path().join("mnt"),
            "programs/pixel/2.dxil",
            [program(0), program(1)],
        );
        Some(run)
    })
    .as_ref()
}

fn assert_reads_whole(run: &ReadRun) {
    let (what, target) = (run.what, &run.target);
    assert!(
        run.torn.0 == 0,
        "{what}: {} of {} reads of {target} returned neither the {}-byte nor the {}-byte \
         version whole; the first of each reader:{}",
        run.torn.0,
        run.reads,
        run.sizes[0],
        run.sizes[1],
        first(&run.torn.1, 12)
    );
    // fstat() goes by the one size the kernel keeps for an inode: a reader that opens a
    // file while another process writes it shares the writer's inode, and so its size,
    // while it reads what was committed (its reads are whole, checked above). Counted and
    // printed, not asserted: no FUSE daemon can give two openers of one inode two sizes.
    if run.stat.0 > 0 {
        eprintln!(
            "{what}: {} of {} reads of {target} read another size than fstat() of the open \
             file said (readers that opened while a save was being written)",
            run.stat.0, run.reads
        );
    }
    assert!(
        run.failed.0 == 0,
        "{what}: {} of {} reads of {target} failed; the first of each reader:{}",
        run.failed.0,
        run.reads,
        first(&run.failed.1, 12)
    );
}

#[test]
fn eight_readers_of_a_shader_read_one_version_whole_while_saves_land() {
    if let Some(run) = package_run() {
        assert_reads_whole(run);
    }
}

#[test]
fn eight_readers_of_a_program_read_one_version_whole_while_saves_land() {
    if let Some(run) = database_run() {
        assert_reads_whole(run);
    }
}

/// Every save of an existing file succeeds while readers read it: no ENOENT or EEXIST
/// from its open(), nothing from its close().
#[test]
fn saves_under_readers_never_fail() {
    let runs: Vec<&ReadRun> = [package_run(), database_run()]
        .into_iter()
        .flatten()
        .collect();
    let mut problems = Vec::new();
    for run in &runs {
        if run.saves.failed.is_empty() {
            continue;
        }
        let listed: Vec<String> = run
            .saves
            .failed
            .iter()
            .map(|(i, f)| format!("save {i}: {f}"))
            .collect();
        problems.push(format!(
            "{}: {} of {} saves of {} (open(O_WRONLY|O_TRUNC), write, close) failed while \
             8 readers read it: {}; .shaderfs/errors has {} lines{}",
            run.what,
            run.saves.failed.len(),
            run.saves.made,
            run.target,
            run.saves.failures(),
            run.errors.lines().count(),
            first(&listed, 8)
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---- 5. kill -9 amid readers, saves and an external renamer -------------------------------

#[test]
fn a_daemon_killed_amid_readers_saves_and_a_renamer_leaves_a_valid_package() {
    let Some(s) = package_setup("shaderpackage024.sdp") else {
        return;
    };
    let x = "H23_PS_MRT_PS_2_0.pso";
    let y = shader(&s, "H24_PS_DEPTH_PS_2_0.pso");
    let contents = [
        shader(&s, "H14_PS_CONST_COLOR_PS_2_0.pso").bytes.clone(),
        shader(&s, "H15_PS_REGISTER_BINDING_PS_2_0.pso")
            .bytes
            .clone(),
    ];
    let original: Vec<(String, Vec<u8>)> = package_records(&s.package);
    let started = Instant::now();
    let round_time = stress_time() / 3;
    let mut rng = Rng(5);
    let mut renamer = Renamer::new(&s.package, &y.name, &y.bytes);
    let (mut reads, mut saves, mut saved) = (0, 0, 0);
    for round in 0..3 {
        let m = Mount::new(&s.package, &s.mnt, &[]);
        let x_path = m.path(&format!("shaders/{x}"));
        let deadline = Instant::now() + round_time + Duration::from_secs(30);
        let stop = Arc::new(AtomicBool::new(false));
        let ready = Arc::new(AtomicUsize::new(0));
        let mut readers = Racers::new(&stop);
        for _ in 0..4 {
            readers.spawn(reader(
                x_path.clone(),
                contents.clone(),
                deadline,
                ready.clone(),
            ));
        }
        let mut savers = Racers::new(&stop);
        savers.spawn(saver(
            x_path,
            contents.clone(),
            deadline,
            usize::MAX,
            10,
            6 + round,
        ));
        let mut renamers = Racers::new(&stop);
        renamers.spawn(move |stop| renamer.race(stop, deadline, 9 + round));
        // The kill comes half-way to all the way through the round.
        let half = round_time.as_micros() as u64 / 2;
        thread::sleep(Duration::from_micros(half + rng.next() % (half + 1)));
        let dead = m.kill_daemon();
        let r = readers.join();
        let w = savers.join().pop().unwrap();
        renamer = renamers.join().pop().unwrap();
        drop(dead);
        reads += r.iter().map(|r| r.count).sum::<usize>();
        saves += w.made;
        saved += w.ok();

        // The package on disk: every record as it was, but X (one of its versions) and
        // Y (one of the renamer's).
        let on_disk = package_records(&s.package);
        let names = |r: &[(String, Vec<u8>)]| r.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(&on_disk),
            names(&original),
            "round {round}: the records"
        );
        let known_y = renamer.known();
        let wrong: Vec<String> = on_disk
            .iter()
            .zip(&original)
            .filter(|((name, data), (_, was))| match name.as_str() {
                n if n == x => !(data == was || contents.contains(data)),
                n if n == y.name => !known_y.contains(data),
                _ => data != was,
            })
            .map(|((name, data), _)| format!("{name}: {} bytes of no known version", data.len()))
            .collect();
        assert!(
            wrong.is_empty(),
            "round {round}: after kill -9 the package holds records of no known version:{}",
            first(&wrong, 8)
        );
        let (code, out, err) = sh(&format!(
            "{} check {}",
            env!("CARGO_BIN_EXE_shaderfs"),
            s.package.display()
        ));
        assert_eq!(code, 0, "round {round}: shaderfs check: {out}{err}");

        // A new mount serves what is on disk.
        let m = Mount::new(&s.package, &s.mnt, &[]);
        let wrong: Vec<String> = on_disk
            .iter()
            .filter(|(name, data)| {
                fs::read(m.path(&format!("shaders/{name}"))).ok().as_ref() != Some(data)
            })
            .map(|(name, _)| format!("shaders/{name}"))
            .collect();
        assert!(
            wrong.is_empty(),
            "round {round}: a new mount does not serve the package on disk:{}",
            first(&wrong, 8)
        );
        m.unmount();
    }
    eprintln!(
        "kill -9 amid the races: 3 rounds, each killed after {:.1?}–{round_time:.1?}; \
         {reads} reads, {saves} saves ({saved} succeeded), {} external versions; each \
         time the package was valid, of known versions, and served by a new mount; \
         {:.1?} in all",
        round_time / 2,
        renamer.last,
        started.elapsed()
    );
}

// ---- 6. views of zero pages: the database truncated under the mount and put back ---------

/// A node of a tree read through a mount.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    File(Result<Vec<u8>, i32>),
    Link(Result<PathBuf, i32>),
    Dir(Result<(), i32>),
}

fn errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(0)
}

/// Every path of the tree under `root` (but `.shaderfs/`): each file read, each
/// symlink's target, each folder listed.
fn walk(root: &Path) -> BTreeMap<String, Seen> {
    fn go(root: &Path, rel: &str, out: &mut BTreeMap<String, Seen>) {
        let entries = match fs::read_dir(root.join(rel)) {
            Ok(d) => d,
            Err(e) => {
                out.insert(rel.to_string(), Seen::Dir(Err(errno(&e))));
                return;
            }
        };
        out.insert(rel.to_string(), Seen::Dir(Ok(())));
        let mut names: Vec<(String, Option<fs::FileType>)> = Vec::new();
        for e in entries {
            match e {
                Ok(e) => names.push((
                    e.file_name().to_string_lossy().into_owned(),
                    e.file_type().ok(),
                )),
                Err(e) => {
                    out.insert(format!("{rel}/(readdir)"), Seen::Dir(Err(errno(&e))));
                }
            }
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, kind) in names {
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if path == ".shaderfs" {
                continue;
            }
            match kind {
                Some(k) if k.is_dir() => go(root, &path, out),
                Some(k) if k.is_symlink() => {
                    let t = fs::read_link(root.join(&path)).map_err(|e| errno(&e));
                    out.insert(path, Seen::Link(t));
                }
                _ => {
                    let d = fs::read(root.join(&path)).map_err(|e| errno(&e));
                    out.insert(path, Seen::File(d));
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    go(root, "", &mut out);
    out
}

fn kind(s: &Seen) -> &'static str {
    match s {
        Seen::File(_) => "file",
        Seen::Link(_) => "symlink",
        Seen::Dir(_) => "folder",
    }
}

/// What `now` shows that `reference` (an unbroken mount of the same database) does not:
/// a failed read is no wrong answer, but another content, another link target, or a path
/// the database does not have is. With `exact`, failures and missing paths count too.
fn differences(
    reference: &BTreeMap<String, Seen>,
    now: &BTreeMap<String, Seen>,
    exact: bool,
) -> Vec<String> {
    let mut wrong = Vec::new();
    let failed = |s: &Seen| {
        matches!(
            s,
            Seen::File(Err(_)) | Seen::Link(Err(_)) | Seen::Dir(Err(_))
        )
    };
    for (path, seen) in now {
        let shown = format!("/{path}");
        match (reference.get(path), seen) {
            (_, s) if failed(s) => {
                if exact {
                    let e = match s {
                        Seen::File(Err(e)) | Seen::Link(Err(e)) | Seen::Dir(Err(e)) => *e,
                        _ => 0,
                    };
                    wrong.push(format!("{shown}: {}", errno_name(e)));
                }
            }
            (Some(r), s) if r == s => {}
            (None, _) => wrong.push(format!("{shown}: not in the database")),
            (Some(Seen::Link(Ok(was))), Seen::Link(Ok(is))) => wrong.push(format!(
                "{shown} -> {}, was -> {}",
                is.display(),
                was.display()
            )),
            (Some(Seen::File(Ok(was))), Seen::File(Ok(is))) => wrong.push(format!(
                "{shown}: {} bytes that are not its {} bytes",
                is.len(),
                was.len()
            )),
            (Some(r), s) => wrong.push(format!("{shown}: a {}, was a {}", kind(s), kind(r))),
        }
    }
    if exact {
        for path in reference.keys().filter(|p| !now.contains_key(*p)) {
            wrong.push(format!("/{path}: missing"));
        }
    }
    wrong
}

/// Truncate the database under a mount (`how`: "rw" or "ro") to 99% of its length, in
/// place, read the whole tree twice, then write the original bytes back into the same
/// file and wait for the tree to read as before.
fn truncated_and_put_back(how: &str) {
    if !can_mount() || corpus("dxil").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let awc = tmp.path().join("sga_win32_60_final.awc");
    gen_sgd2(&awc, &["--programs-per-stage", "6"]).unwrap();
    let original = fs::read(&awc).unwrap();
    let mnt = tmp.path().join("mnt");
    let started = Instant::now();
    // The reference: what an unbroken mount serves, read by a mount of its own so that
    // the mount under test starts with nothing cached.
    let m = Mount::new(&awc, &mnt, &["-o", how]);
    let reference = walk(&m.dir);
    m.unmount();
    let files = reference
        .values()
        .filter(|s| matches!(s, Seen::File(_)))
        .count();
    let links = reference
        .values()
        .filter(|s| matches!(s, Seen::Link(_)))
        .count();
    assert!(files > 100 && links > 100, "{files} files, {links} links");
    assert!(
        reference.values().all(|s| !matches!(
            s,
            Seen::File(Err(_)) | Seen::Link(Err(_)) | Seen::Dir(Err(_))
        )),
        "the unbroken mount failed a read"
    );

    let m = Mount::new(&awc, &mnt, &["-o", how]);
    let inode = fs::metadata(&awc).unwrap().ino();
    let file = OpenOptions::new().write(true).open(&awc).unwrap();
    file.set_len(original.len() as u64 * 99 / 100).unwrap();
    let mut truncated = Vec::new();
    let mut failed = 0;
    for _ in 0..2 {
        let now = walk(&m.dir);
        failed += now
            .values()
            .filter(|s| {
                matches!(
                    s,
                    Seen::File(Err(_)) | Seen::Link(Err(_)) | Seen::Dir(Err(_))
                )
            })
            .count();
        for d in differences(&reference, &now, false) {
            if !truncated.contains(&d) {
                truncated.push(d);
            }
        }
    }
    // The original bytes back, into the same file.
    (&file).write_all(&original).unwrap();
    drop(file);
    assert_eq!(fs::metadata(&awc).unwrap().ino(), inode);
    assert!(fs::read(&awc).unwrap() == original);
    let t = Instant::now();
    let mut restored = differences(&reference, &walk(&m.dir), true);
    while !restored.is_empty() && t.elapsed() < NOTICE {
        thread::sleep(Duration::from_millis(200));
        restored = differences(&reference, &walk(&m.dir), true);
    }
    let errors = errors_tail(&m);
    m.unmount();
    eprintln!(
        "{how} mount of a database ({files} files, {links} links) truncated in place to \
         99%: two reads of the tree gave {failed} errors and {} wrong answers; with the \
         bytes back, {} paths still read otherwise than before after {:.1?}; {:.1?} in \
         all",
        truncated.len(),
        restored.len(),
        t.elapsed(),
        started.elapsed()
    );
    let mut problems = Vec::new();
    if !truncated.is_empty() {
        problems.push(format!(
            "while the database was truncated, {} reads through the {how} mount returned \
             what the database never had instead of failing:{}",
            truncated.len(),
            first(&truncated, 10)
        ));
    }
    if !restored.is_empty() {
        problems.push(format!(
            "{NOTICE:?} after the original bytes were put back in place, {} paths of the \
             {how} mount still read otherwise than before:{}",
            restored.len(),
            first(&restored, 10)
        ));
    }
    assert!(
        problems.is_empty(),
        "{}\n.shaderfs/errors:\n{errors}",
        problems.join("\n")
    );
}

#[test]
fn a_database_truncated_under_a_read_write_mount_fails_reads_and_comes_back() {
    truncated_and_put_back("rw");
}

#[test]
fn a_database_truncated_under_a_read_only_mount_fails_reads_and_comes_back() {
    truncated_and_put_back("ro");
}

// ---- 7. a copy of the tree, edited, synced back ------------------------------------------

/// The shader the copies edit, and its one `mov oC0`.
const EDITED: &str = "H14_PS_CONST_COLOR_PS_2_0.pso";

/// A package as a game ships it (its file years old, so the mount's files are too) and
/// a read-write mount of it.
struct Synced {
    // Dropped first: unmounted before the package's folder goes.
    m: Mount,
    s: PackageSetup,
    copy: PathBuf,
    scratch: tempfile::TempDir,
}

fn synced() -> Option<Synced> {
    let s = package_setup("shaderpackage024.sdp")?;
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_225_195_200); // 2008-10-28
    OpenOptions::new()
        .write(true)
        .open(&s.package)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let m = Mount::new(&s.package, &s.mnt, &[]);
    let scratch = tempfile::tempdir().unwrap();
    let copy = scratch.path().join("copy");
    Some(Synced {
        m,
        s,
        copy,
        scratch,
    })
}

/// `rsync -ai FROM/ TO/`, leaving out the mount's own `.shaderfs/` log: (exit code, what
/// it listed, what it said on stderr).
fn rsync(from: &Path, to: &Path) -> (i32, String, String) {
    sh(&format!(
        "rsync -ai --exclude=/.shaderfs {}/ {}/",
        from.display(),
        to.display()
    ))
}

/// What `rsync -i` says it sent: how many files, and which of them are the edited
/// shader's views or archive.json.
fn sent(itemized: &str) -> String {
    let files: Vec<&str> = itemized.lines().filter(|l| l.starts_with('>')).collect();
    let named: Vec<&str> = files
        .iter()
        .filter(|l| l.contains(EDITED) || l.ends_with(" archive.json"))
        .copied()
        .collect();
    format!("{} files, among them {named:?}", files.len())
}

impl Synced {
    fn copy_out(&self) {
        let (code, _, err) = rsync(&self.m.dir, &self.copy);
        assert_eq!(code, 0, "rsync of the mount to a copy: {err}");
    }

    /// Change the shader's `mov oC0` into `mov_sat oC0` in the copy's asm view.
    fn edit_asm(&self) {
        self.edit(&format!("asm/{EDITED}.asm"), "mov oC0", "mov_sat oC0");
    }

    /// Rename the constant `color` to `tint` in the copy's ctab view.
    fn edit_ctab(&self) {
        let (from, to) = ("\"name\": \"color\"", "\"name\": \"tint\"");
        self.edit(&format!("ctab/{EDITED}.json"), from, to);
    }

    /// `sed -i 's/FROM/TO/'` on `file` of the copy, which holds FROM once.
    fn edit(&self, file: &str, from: &str, to: &str) {
        let path = self.copy.join(file);
        let before = fs::read_to_string(&path).unwrap();
        assert_eq!(before.matches(from).count(), 1, "{before}");
        let (code, _, err) = sh(&format!("sed -i 's/{from}/{to}/' {}", path.display()));
        assert_eq!(code, 0, "{err}");
    }

    /// The bytecode the copy's edited views make, as `shaderfs sdp pack` assembles them
    /// (the asm view, with the ctab view beside it when `with_ctab`).
    fn expected(&self, with_ctab: bool) -> Vec<u8> {
        let dir = self.scratch.path().join("expected");
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir(&dir).unwrap();
        let asm = dir.join(format!("{EDITED}.asm"));
        fs::copy(self.copy.join(format!("asm/{EDITED}.asm")), &asm).unwrap();
        if with_ctab {
            fs::copy(
                self.copy.join(format!("ctab/{EDITED}.json")),
                dir.join(format!("{EDITED}.json")),
            )
            .unwrap();
        }
        let package = dir.join("expected.sdp");
        let out = run(shaderfs().args(["sdp", "pack"]).arg(&package).arg(&asm));
        assert!(out.status.success(), "sdp pack: {out:?}");
        let bytes = package_record(&package, EDITED);
        assert_ne!(
            bytes,
            shader(&self.s, EDITED).bytes,
            "the edit changes nothing"
        );
        bytes
    }

    /// `rsync -a copy/ mnt/` three times; after each, the package on disk must hold
    /// `want` and rsync must have exited 0. Returns what went wrong, a line for each run
    /// that went wrong.
    fn sync_back_three_times(&self, want: &[u8], edit: &str) -> Vec<String> {
        let mut wrong = Vec::new();
        for run in 1..=3 {
            let (code, listed, err) = rsync(&self.copy, &self.m.dir);
            let listed = sent(&listed);
            let now = package_record(&self.s.package, EDITED);
            eprintln!("rsync {run} of the copy to the mount: exit {code}, sent {listed}");
            let mut this = Vec::new();
            if now != want {
                let what = match now == shader(&self.s, EDITED).bytes {
                    true => "the original shader",
                    false => "neither the original nor the edit",
                };
                this.push(format!(
                    "{EDITED} in the package is {what}, not {edit} (rsync sent {listed})"
                ));
            }
            if code != 0 {
                this.push(format!(
                    "rsync exited {code}: {}",
                    err.trim().replace('\n', " | ")
                ));
            }
            if !this.is_empty() {
                wrong.push(format!(
                    "rsync {run} of the copy to the mount: {}",
                    this.join("; ")
                ));
            }
        }
        wrong
    }
}

#[test]
fn rsync_out_edit_the_asm_and_rsync_back_keeps_the_edit() {
    let Some(t) = synced() else { return };
    t.copy_out();
    t.edit_asm();
    let want = t.expected(false);
    let wrong = t.sync_back_three_times(&want, "the edited asm (mov_sat oC0)");
    assert!(
        wrong.is_empty(),
        "{} of 3 syncs went wrong:{}",
        wrong.len(),
        first(&wrong, 8)
    );
}

#[test]
fn extract_edit_the_asm_and_rsync_to_the_mount_keeps_the_edit() {
    let Some(t) = synced() else { return };
    let out = run(shaderfs()
        .arg("extract")
        .arg("-q")
        .arg(&t.s.package)
        .arg("-C")
        .arg(&t.copy));
    assert!(out.status.success(), "extract: {out:?}");
    t.edit_asm();
    let want = t.expected(false);
    let wrong = t.sync_back_three_times(&want, "the edited asm (mov_sat oC0)");
    assert!(
        wrong.is_empty(),
        "{} of 3 syncs went wrong:{}",
        wrong.len(),
        first(&wrong, 8)
    );
}

#[test]
fn rsync_out_edit_two_views_of_a_shader_and_rsync_back_keeps_both_edits() {
    let Some(t) = synced() else { return };
    t.copy_out();
    t.edit_asm();
    t.edit_ctab();
    let want = t.expected(true);
    let wrong = t.sync_back_three_times(&want, "both edits (mov_sat oC0, constant tint)");
    assert!(
        wrong.is_empty(),
        "{} of 3 syncs went wrong:{}",
        wrong.len(),
        first(&wrong, 8)
    );
}

#[test]
fn rsync_out_edit_the_asm_and_cp_a_back_keeps_the_edit() {
    let Some(t) = synced() else { return };
    t.copy_out();
    t.edit_asm();
    let want = t.expected(false);
    // Twice: the second finds the views the first saved, and their stale copies.
    for round in 1..=2 {
        let (code, _, err) = sh(&format!(
            "cp -a {}/. {}/",
            t.copy.display(),
            t.m.dir.display()
        ));
        let now = package_record(&t.s.package, EDITED);
        assert!(
            now == want,
            "after cp -a {round} of the copy to the mount, {EDITED} in the package is {} \
             (cp exit {code}: {})",
            match now == shader(&t.s, EDITED).bytes {
                true => "the original shader, not the edited asm",
                false => "neither the original nor the edited asm",
            },
            err.trim()
        );
        // archive.json and the other read-only views take back their copies.
        assert_eq!(
            code,
            0,
            "cp -a {round} of the copy to the mount: {}",
            err.trim()
        );
    }
    // Anything else written into a read-only view fails at the write, which even a
    // shell's `>` reports, and leaves it as it was.
    let json = t.m.path("archive.json");
    let before = fs::read(&json).unwrap();
    let (code, _, err) = sh(&format!("echo '{{}}' > {}", json.display()));
    // (dash's echo says "I/O error" of any failed write; the write's errno is EPERM.)
    assert_ne!(
        code, 0,
        "a write of other content into archive.json succeeded: {err}"
    );
    assert_eq!(fs::read(&json).unwrap(), before);
    let errors = fs::read_to_string(t.m.path(".shaderfs/errors")).unwrap();
    assert!(errors.contains("archive.json: not saved"), "{errors}");
}
