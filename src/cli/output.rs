//! How the offline commands talk: results on standard output, where a closed pipe ends
//! the command quietly (`shaderfs ls … | head -1` exits 0, as `ls` does); progress and
//! the closing summary on standard error, drawn only on a terminal.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use shaderfs::mount::Failure;

/// `-q` / `-v`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    /// Problems only: no progress bar, no summary.
    Quiet,
    Normal,
    /// Also every file as it is done.
    Verbose,
}

impl Verbosity {
    pub fn from_flags(quiet: bool, verbose: bool) -> Verbosity {
        match (quiet, verbose) {
            (true, _) => Verbosity::Quiet,
            (false, true) => Verbosity::Verbose,
            (false, false) => Verbosity::Normal,
        }
    }
}

/// The outcome that ends a command quietly with status 0: its reader has gone.
pub fn closed_pipe() -> Failure {
    Failure {
        code: 0,
        message: String::new(),
    }
}

/// A failed write to standard output: a closed pipe ends the command quietly.
pub fn stdout_failure(e: std::io::Error) -> Failure {
    match e.kind() {
        std::io::ErrorKind::BrokenPipe => closed_pipe(),
        _ => Failure::usage(format!("writing to standard output: {e}")),
    }
}

/// Write `bytes` to standard output.
pub fn print(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(stdout_failure)
}

/// A progress bar over `len` files on standard error, drawn only when standard error is
/// a terminal and the command is not quiet (otherwise every call on it is free).
pub fn progress(len: u64, verb: &str, verbosity: Verbosity) -> ProgressBar {
    let target = match verbosity != Verbosity::Quiet && std::io::stderr().is_terminal() {
        true => ProgressDrawTarget::stderr(),
        false => ProgressDrawTarget::hidden(),
    };
    let bar = ProgressBar::with_draw_target(Some(len), target);
    let template = format!("{verb} {{wide_bar}} {{pos}}/{{len}} files, {{msg}} {{eta}}");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// What a command did, for its closing line.
pub struct Tally {
    started: Instant,
    pub archives: usize,
    pub files: u64,
    pub bytes: u64,
    /// Problems found, or files that failed.
    pub problems: usize,
}

impl Tally {
    pub fn start() -> Tally {
        Tally {
            started: Instant::now(),
            archives: 0,
            files: 0,
            bytes: 0,
            problems: 0,
        }
    }

    /// `2 archives, 1,234 files, 48.2 MB in 1.4 s`
    pub fn summary(&self) -> String {
        let archives = match self.archives {
            0 | 1 => String::new(),
            n => format!("{}, ", count(n as u64, "archive")),
        };
        format!(
            "{archives}{}, {} in {}",
            count(self.files, "file"),
            size(self.bytes),
            seconds(self.started.elapsed())
        )
    }
}

/// `1 problem`, `3 problems`.
pub fn count(n: u64, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        _ => format!("{} {noun}s", thousands(n)),
    }
}

/// `12,405`
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `908 bytes`, `48.2 MB` (decimal units, as `ls -lh --si` and file managers show them).
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return count(bytes, "byte");
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_as_people_write_them() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(12_405), "12,405");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(size(1), "1 byte");
        assert_eq!(size(908), "908 bytes");
        assert_eq!(size(62_266_596), "62.3 MB");
        assert_eq!(count(1, "problem"), "1 problem");
        assert_eq!(count(2, "problem"), "2 problems");
    }
}
