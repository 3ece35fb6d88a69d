//! `shaderfs check` and `shaderfs info`: each archive of a source on its own, so one
//! archive that cannot be opened does not hide what the others hold.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use shaderfs::archive::recognise;
use shaderfs::mount::{Failure, EXIT_MALFORMED, EXIT_UNCHECKED};
use shaderfs::vfs::problem::Reported;
use shaderfs::vfs::{ArchiveFile, FileType, OpenError, Problem, Vfs};

use super::output::{self, stdout_failure, Tally, Verbosity};
use super::tree::{self, Node, Unreadable};

/// One line of `check --json`: a problem and the archive it is in.
#[derive(Serialize)]
struct Record<'a> {
    archive: &'a str,
    #[serde(flatten)]
    problem: &'a Problem,
    /// Something that could not be checked (`"unchecked": true`), not a problem.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    unchecked: bool,
}

/// Where `check` says what it finds.
struct Report {
    json: bool,
    verbosity: Verbosity,
    tally: Tally,
    /// What could not be checked.
    unchecked: usize,
    /// Files shaderfs cannot render yet ([`Vfs::unshown`]): neither problems nor unchecked.
    unshown: usize,
    out: std::io::StdoutLock<'static>,
}

impl Report {
    fn problem(&mut self, archive: &str, problem: &Problem) -> Result<(), Failure> {
        self.tally.problems += 1;
        self.print(archive, problem, false)
    }

    /// Something `check` cannot check yet: said as a problem is, counted apart.
    fn unchecked(&mut self, archive: &str, problem: &Problem) -> Result<(), Failure> {
        self.unchecked += 1;
        self.print(archive, problem, true)
    }

    fn print(&mut self, archive: &str, problem: &Problem, unchecked: bool) -> Result<(), Failure> {
        let line = match self.json {
            true => serde_json::to_string(&Record {
                archive,
                problem,
                unchecked,
            })
            .expect("records serialise"),
            false => problem.located(archive),
        };
        writeln!(self.out, "{line}").map_err(stdout_failure)
    }
}

/// `shaderfs check SOURCE` (its `archives`): every problem, once, one per line; exit status 2 if any;
/// else 4 if something could not be checked (said too, one per line).
pub fn check(
    source: &Path,
    archives: &[ArchiveFile],
    json: bool,
    verbosity: Verbosity,
) -> Result<(), Failure> {
    let mut report = Report {
        json,
        verbosity,
        tally: Tally::start(),
        unchecked: 0,
        unshown: 0,
        out: std::io::stdout().lock(),
    };
    for archive in archives {
        let name = archive.path.display().to_string();
        report.tally.archives += 1;
        match tree::open_one(archive) {
            Ok(vfs) => check_archive(&vfs, &name, &mut report)?,
            // The archive itself cannot be read: that is its problem.
            Err(e) => {
                let (message, offset) = match e {
                    OpenError::Malformed(e) => (e.message, e.offset),
                    other => (other.to_string(), None),
                };
                let message = message
                    .strip_prefix(&format!("{name}: "))
                    .unwrap_or(&message);
                let problem = Problem {
                    offset,
                    ..Problem::whole(message)
                };
                report.problem(&name, &problem)?;
            }
        }
    }
    if verbosity != Verbosity::Quiet {
        let mut verdict = match report.tally.problems {
            0 if report.unchecked == 0 => "ok".to_owned(),
            0 => "no problem found".to_owned(),
            n => output::count(n as u64, "problem"),
        };
        if report.unchecked > 0 {
            verdict.push_str(&format!(", {} not checked", report.unchecked));
        }
        if report.unshown > 0 {
            verdict.push_str(&format!(
                ", {} shaderfs cannot show yet{}",
                output::count(report.unshown as u64, "file"),
                match verbosity {
                    Verbosity::Verbose => "",
                    _ => ", named with -v",
                }
            ));
        }
        // `/data/shaders: 3 problems (2 archives, 1,234 files, 48.2 MB in 1.4 s)`
        eprintln!(
            "{}: {verdict} ({})",
            source.display(),
            report.tally.summary()
        );
    }
    // Said already, one by one and in the summary.
    match (report.tally.problems, report.unchecked) {
        (0, 0) => Ok(()),
        (0, _) => Err(Failure {
            code: EXIT_UNCHECKED,
            message: String::new(),
        }),
        _ => Err(Failure {
            code: EXIT_MALFORMED,
            message: String::new(),
        }),
    }
}

/// The archive's own problems, and what it cannot check, then every file of its tree read
/// as a program would read it; a file that cannot be read because of something already
/// reported is not reported again, nor one shaderfs cannot render yet (a shader it does
/// not decompile), which is no fault of the archive: those are counted, and named with
/// `-v`.
fn check_archive(vfs: &Vfs, name: &str, report: &mut Report) -> Result<(), Failure> {
    let mut problems: Vec<Problem> = vfs.problems().into_iter().map(|(_, p)| p).collect();
    for problem in &problems {
        report.problem(name, problem)?;
    }
    for unchecked in vfs.unchecked().into_iter().map(|(_, p)| p) {
        report.unchecked(name, &unchecked)?;
        problems.push(unchecked);
    }
    for unshown in vfs.unshown().into_iter().map(|(_, p)| p) {
        report.unshown += 1;
        if report.verbosity == Verbosity::Verbose {
            eprintln!("{} (shaderfs cannot show it yet)", unshown.located(name));
        }
        problems.push(unshown);
    }
    let reported = Reported::new(&problems);
    let nodes: Vec<Node> = tree::walk(vfs, 1, "")
        .into_iter()
        .filter(|n| !n.path.starts_with(".shaderfs"))
        .collect();
    let files = nodes.iter().filter(|n| n.kind == FileType::File).count();
    let bar = output::progress(files as u64, "checking", report.verbosity);
    bar.set_message(name.to_owned());
    for node in &nodes {
        if node.kind == FileType::File {
            bar.inc(1);
        }
        // `stat` renders a view to know its size: what it says about it counts too.
        let mark = vfs.errors().recorded();
        let unreadable = match vfs.getattr(node.ino) {
            Err(errno) => Some(Unreadable::since(vfs, mark, errno).message()),
            Ok(attr) if attr.kind != FileType::File => None,
            Ok(_) => match tree::read_view(vfs, node.ino, mark) {
                Ok(bytes) => {
                    report.tally.files += 1;
                    report.tally.bytes += bytes.len() as u64;
                    None
                }
                Err(e) => Some(e.message()),
            },
        };
        match unreadable {
            None if report.verbosity == Verbosity::Verbose => {
                bar.suspend(|| eprintln!("{name}: {}", node.path));
            }
            None => {}
            Some(why) if reported.explains(&why) => {}
            Some(why) => {
                let why = why.strip_prefix("cannot read: ").unwrap_or(&why);
                bar.suspend(|| report.problem(name, &Problem::in_file(&node.path, why)))?;
            }
        }
    }
    bar.finish_and_clear();
    Ok(())
}

/// `shaderfs info SOURCE`: each archive's `archive.json`, as one JSON line per archive
/// (`--json`) or as a summary to read.
pub fn info(source: &Path, json: bool) -> Result<(), Failure> {
    let archives = recognise(source).map_err(Failure::from)?;
    let mut out = std::io::stdout().lock();
    let mut failed = 0;
    for archive in &archives {
        let described = tree::open_one(archive)
            .map_err(Failure::from)
            .and_then(|vfs| archive_json(&vfs, archive));
        let value = match described {
            Ok(value) => value,
            Err(f) => {
                eprintln!("shaderfs: {}", f.message);
                failed += 1;
                continue;
            }
        };
        let text = match json {
            true => format!("{value}\n"),
            false => summary(&archive.path.display().to_string(), &value),
        };
        out.write_all(text.as_bytes()).map_err(stdout_failure)?;
    }
    match failed {
        0 => Ok(()),
        n => Err(Failure {
            code: EXIT_MALFORMED,
            message: format!(
                "{}: {} could not be read",
                source.display(),
                output::count(n as u64, "archive")
            ),
        }),
    }
}

fn archive_json(vfs: &Vfs, archive: &ArchiveFile) -> Result<serde_json::Value, Failure> {
    let ino = tree::resolve(vfs, "archive.json")?;
    let bytes = tree::read_all(vfs, ino, "archive.json")?;
    serde_json::from_slice(&bytes).map_err(|e| Failure {
        code: EXIT_MALFORMED,
        message: format!("{}: archive.json: {e}", archive.path.display()),
    })
}

/// `archive.json` to read: a heading, then each field on a line, lists counted (their
/// items are in `--json` and in the mount).
fn summary(name: &str, value: &serde_json::Value) -> String {
    use serde_json::Value;
    let mut out = format!("{name}\n");
    let Value::Object(fields) = value else {
        return out;
    };
    for (key, field) in fields {
        let shown = match field {
            Value::Null => continue,
            Value::Array(items) if items.is_empty() => "none".to_owned(),
            // A few names or messages are listed; records and long lists are counted.
            Value::Array(items) if items.len() <= 8 && items.iter().all(is_scalar) => {
                items.iter().map(scalar).collect::<Vec<_>>().join(", ")
            }
            Value::Array(items) => items.len().to_string(),
            Value::Object(inner) => inner
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| format!("{k} {}", scalar(v)))
                .collect::<Vec<_>>()
                .join(", "),
            other => scalar(other),
        };
        out.push_str(&format!("  {}: {shown}\n", key.replace('_', " ")));
    }
    out
}

fn is_scalar(value: &serde_json::Value) -> bool {
    !value.is_object() && !value.is_array()
}

fn scalar(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
