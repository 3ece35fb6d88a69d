//! Inputs that fuzzing found crashing, hanging or exhausting memory (kept by `fuzz/run` in
//! `fuzz/regressions/TARGET/`), replayed through the very functions the fuzz targets call
//! (`fuzz/src/lib.rs`, included here). Each input must be answered, Ok or Err, without a
//! panic, within 10 seconds and 2 GiB: it runs in a child process of this test binary
//! with those limits, so a hang or a runaway allocation fails this test rather than the
//! machine.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../fuzz/src/lib.rs"]
mod shaderfs_fuzz;

/// Set for the child: `TARGET\nPATH` of the one input it replays.
const REPLAY: &str = "SHADERFS_FUZZ_REPLAY";
const TIME_LIMIT: Duration = Duration::from_secs(10);
const MEMORY_LIMIT: u64 = 2 << 30;

fn inputs() -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut out = Vec::new();
    for target in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = target.file_name().to_string_lossy().into_owned();
        assert!(
            shaderfs_fuzz::TARGETS.iter().any(|(t, _)| *t == name),
            "{}: no fuzz target is named {name}",
            target.path().display()
        );
        for file in std::fs::read_dir(target.path()).unwrap().flatten() {
            out.push((name.clone(), file.path()));
        }
    }
    out.sort();
    out
}

#[test]
fn fuzz_regressions_are_answered_without_a_crash() {
    let mut failures = Vec::new();
    let inputs = inputs();
    for (target, path) in &inputs {
        let log = tempfile::tempfile().unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "replay_one_input",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(REPLAY, format!("{target}\n{}", path.display()))
            .stdout(Stdio::null())
            .stderr(log.try_clone().unwrap())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let outcome = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break (!status.success()).then(|| format!("{status}"));
            }
            if start.elapsed() > TIME_LIMIT {
                child.kill().unwrap();
                child.wait().unwrap();
                break Some(format!("still running after {TIME_LIMIT:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        if let Some(why) = outcome {
            let mut stderr = String::new();
            let mut log = log;
            std::io::Seek::rewind(&mut log).unwrap();
            log.read_to_string(&mut stderr).unwrap();
            let panic: Vec<&str> = stderr
                .lines()
                .filter(|l| l.contains("panicked") || l.contains("memory allocation"))
                .collect();
            failures.push(format!(
                "{target} {}: {why} {}",
                path.display(),
                panic.join(" ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fuzz regressions fail:\n{}",
        failures.len(),
        inputs.len(),
        failures.join("\n")
    );
}

/// The child's side: replays the input `SHADERFS_FUZZ_REPLAY` names, under the memory
/// limit; without it (the ordinary test run) there is nothing to do.
#[test]
fn replay_one_input() {
    let Ok(replay) = std::env::var(REPLAY) else {
        return;
    };
    let (target, path) = replay.split_once('\n').unwrap();
    let limit = libc::rlimit {
        rlim_cur: MEMORY_LIMIT,
        rlim_max: MEMORY_LIMIT,
    };
    // SAFETY: setrlimit reads the struct it is given and nothing else.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }, 0);
    let run = shaderfs_fuzz::TARGETS
        .iter()
        .find(|(t, _)| *t == target)
        .map(|(_, run)| run)
        .unwrap();
    run(&std::fs::read(path).unwrap());
}
