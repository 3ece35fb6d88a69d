//! The `shaderfs` command line. Everything it does lives in the library; this file only
//! parses arguments and maps outcomes to exit codes (0 success, 1 usage, 2 malformed
//! archive, 3 mount failed).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use clap_complete::engine::{ArgValueCompleter, CompletionCandidate};

use shaderfs::mount::{self, Failure, MountOptions, EXIT_MALFORMED, EXIT_USAGE};
use shaderfs::vfs::{FileType, Vfs, VfsOptions};

/// Mount game shader archives as directory trees.
///
/// Bethesda .sdp shader packages (Oblivion, Fallout 3, New Vegas) appear as folders of
/// shaders, disassemblies and constant tables; FlatOut .sha effects as their text, asm
/// blocks, passes and assembled shaders. Edits are checked and written back into the
/// archive, atomically, when the file is closed.
#[derive(Parser)]
#[command(name = "shaderfs", version, about, long_about)]
#[command(
    after_help = "The mount.fuse3 form is also accepted: shaderfs SOURCE MOUNTPOINT [-o OPTIONS]\n\
Exit codes: 0 success, 1 usage error, 2 malformed archive, 3 mount failed."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Mount an archive, or a folder of archives, and return once the mount answers.
    Mount {
        /// An archive file, or a folder: each archive in it becomes a subdirectory.
        source: PathBuf,
        mountpoint: PathBuf,
        /// Stay in the foreground instead of detaching.
        #[arg(short = 'f', long)]
        foreground: bool,
        /// Comma-separated options: ro, rw (default), allow_other, allow_root, uid=N,
        /// gid=N, umask=OCTAL, backup (keep ARCHIVE.bak before the first commit), sign
        /// (write the digest of a DXBC container saved into an SGD2 database),
        /// max_memory=SIZE (what write buffers and scratch files may hold, 512M), nonempty
        /// (mount over a folder with files in it), debug (log every request); and the
        /// generic flags dev, nodev, suid, nosuid, exec, noexec, atime, noatime, sync,
        /// async, dirsync, passed to the kernel.
        #[arg(short = 'o', value_name = "OPTIONS", add = ArgValueCompleter::new(complete_options))]
        options: Vec<String>,
    },
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell): the
    /// shell asks shaderfs itself, so subcommands, flags and `-o` lists complete as
    /// they are defined here. `source <(shaderfs completions bash)`
    Completions {
        #[arg(value_parser = ["bash", "zsh", "fish", "elvish", "powershell"])]
        shell: String,
    },
    /// Unmount; returns once every pending write-back is on disk.
    Umount {
        mountpoint: PathBuf,
        /// Detach the mount at once (lazy); the daemon finishes its write-back and exits
        /// when the last file under it is closed. Without it, umount returns once every
        /// write-back is on disk.
        #[arg(short = 'z', long)]
        lazy: bool,
    },
    /// List the tree (or the directory PATH in it) without mounting.
    Ls {
        source: PathBuf,
        path: Option<String>,
        /// Long listing: type, size and name.
        #[arg(short = 'l')]
        long: bool,
        /// List everything below PATH.
        #[arg(short = 'R')]
        recursive: bool,
    },
    /// Print a file of the tree without mounting.
    Cat { source: PathBuf, path: String },
    /// Write the tree (or PATH in it) to a folder, names escaped as in the mount.
    Extract {
        source: PathBuf,
        path: Option<String>,
        /// Folder to write into (created if missing).
        #[arg(short = 'C', long = "to", default_value = ".")]
        to: PathBuf,
    },
    /// Print archive.json of each archive.
    Info { source: PathBuf },
    /// Read every file of the tree and report every problem; exit 2 if there is one.
    Check { source: PathBuf },
    /// Direct3D 9 shaders on their own, with the code the mount uses.
    #[command(subcommand)]
    D3d9(D3d9Command),
    /// Bethesda shader packages.
    #[command(subcommand)]
    Sdp(SdpCommand),
    /// Tools for shaderfs's own developers.
    #[command(subcommand, hide = true)]
    Dev(DevCommand),
}

#[derive(Subcommand)]
enum SdpCommand {
    /// Make a package from loose shaders: bytecode (NAME.vso, NAME.pso) or asm text
    /// (NAME.vso.asm, NAME.pso.asm), each with an optional constant table in NAME.vso.json
    /// (the ctab/ view's format) beside it. Records keep the order given.
    Pack {
        out: PathBuf,
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

#[derive(Subcommand)]
enum D3d9Command {
    /// Disassemble bytecode (.vso, .pso, …) to asm text, CTAB listed in the header.
    Disasm {
        file: PathBuf,
        /// Write here instead of standard output.
        #[arg(short = 'o')]
        out: Option<PathBuf>,
    },
    /// Assemble asm text (ps_1_1 … vs_3_0, dotted or underscored) to bytecode.
    Asm {
        file: PathBuf,
        #[arg(short = 'o')]
        out: PathBuf,
        /// Skip the shader-model checks (register ranges, slot limits, …).
        #[arg(long)]
        no_validate: bool,
    },
    /// Print the constant table of a shader as JSON (null when it has none).
    Ctab { file: PathBuf },
}

#[derive(Subcommand)]
enum DevCommand {
    /// Write a game-sized set of .sdp packages around real D3D9 shaders.
    GenSdp {
        out_dir: PathBuf,
        #[arg(long, default_value_t = 19)]
        packages: usize,
        #[arg(long, default_value_t = 6000)]
        shaders: usize,
        /// Folder of compiled shaders (.bin/.vso/.pso) to use.
        #[arg(long, default_value = "../shared/corpus/d3d9/compiled")]
        d3d9: PathBuf,
    },
    /// Write an SGD2 test database around real DXIL containers.
    GenSgd2 {
        out: PathBuf,
        /// Programs in each of the six stages.
        #[arg(long, default_value_t = 4, conflicts_with = "full")]
        programs_per_stage: u32,
        /// Effects (default: twice the programs per stage, at least 12).
        #[arg(long, conflicts_with = "full")]
        effects: Option<u32>,
        /// The game's full size: 12,405 programs, 388 effects.
        #[arg(long)]
        full: bool,
        /// With --full: N times the game's size (the benchmark's growth test uses 10).
        #[arg(long, default_value_t = 1, requires = "full", value_parser = clap::value_parser!(u32).range(1..=100))]
        scale: u32,
        /// Folder of .dxil containers to use as programs.
        #[arg(long, default_value = "../shared/corpus/dxil")]
        dxil: PathBuf,
    },
}

const SUBCOMMANDS: &[&str] = &[
    "mount", "umount", "ls", "cat", "extract", "info", "check", "d3d9", "sdp", "dev", "help",
    "completions",
];

fn main() -> ExitCode {
    // A shell asking for completions (COMPLETE=bash shaderfs -- …) is answered here.
    // The scripts call `shaderfs` from PATH, wherever it was installed.
    clap_complete::CompleteEnv::with_factory(|| Cli::command().bin_name("shaderfs"))
        .completer("shaderfs")
        .complete();
    let mut args: Vec<String> = std::env::args().collect();
    // `-o debug` logs every request (fuser's and ours) without RUST_LOG.
    let debug = args
        .iter()
        .zip(args.iter().skip(1))
        .any(|(a, b)| a == "-o" && b.split(',').any(|o| o == "debug"));
    let level = if debug { "debug" } else { "warn" };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(level)).init();
    // mount.fuse3 calls `shaderfs SOURCE MOUNTPOINT -o OPTIONS`.
    if let Some(first) = args.get(1) {
        if !first.starts_with('-') && !SUBCOMMANDS.contains(&first.as_str()) {
            args.insert(1, "mount".into());
        }
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE as u8 } else { 0 });
        }
    };
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("shaderfs: {}", f.message);
            ExitCode::from(f.code as u8)
        }
    }
}

fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Mount {
            source,
            mountpoint,
            foreground,
            options,
        } => {
            let opts =
                MountOptions::parse(options.iter().map(String::as_str)).map_err(Failure::usage)?;
            if opts.debug {
                // Every request the kernel sends, as libfuse's debug shows them.
                log::set_max_level(log::LevelFilter::Debug);
            }
            mount::mount(&source, &mountpoint, &opts, foreground)
        }
        Command::Umount { mountpoint, lazy } => mount::umount(&mountpoint, lazy),
        Command::Completions { shell } => {
            // The registration script is what the completion engine prints for COMPLETE.
            let me = std::env::current_exe()
                .map_err(|e| Failure::usage(format!("finding this program: {e}")))?;
            let status = std::process::Command::new(me)
                .env("COMPLETE", &shell)
                .status()
                .map_err(|e| Failure::usage(format!("shaderfs completions: {e}")))?;
            match status.success() {
                true => Ok(()),
                false => Err(Failure::usage(format!("no completions for {shell}"))),
            }
        }
        Command::Ls {
            source,
            path,
            long,
            recursive,
        } => {
            let vfs = open_offline(&source)?;
            let ino = resolve(&vfs, path.as_deref().unwrap_or(""))?;
            let mut out = std::io::stdout().lock();
            list(&vfs, ino, "", long, recursive, &mut out).map_err(write_failure)
        }
        Command::Cat { source, path } => {
            let vfs = open_offline(&source)?;
            let ino = resolve(&vfs, &path)?;
            let bytes = read_all(&vfs, ino, &path)?;
            std::io::stdout().write_all(&bytes).map_err(write_failure)
        }
        Command::Extract { source, path, to } => {
            let vfs = open_offline(&source)?;
            let path = path.unwrap_or_default();
            let ino = resolve(&vfs, &path)?;
            extract(&vfs, ino, &path, &to)
        }
        Command::Info { source } => {
            let vfs = open_offline(&source)?;
            let mut out = std::io::stdout().lock();
            for (ino, path) in walk(&vfs, 1, "") {
                if path.ends_with("archive.json") {
                    let bytes = read_all(&vfs, ino, &path)?;
                    out.write_all(&bytes).map_err(write_failure)?;
                }
            }
            Ok(())
        }
        Command::Check { source } => {
            let vfs = open_offline(&source)?;
            let mut problems = 0;
            for (ino, path) in walk(&vfs, 1, "") {
                if path.starts_with(".shaderfs") {
                    continue;
                }
                let unreadable = match vfs.getattr(ino) {
                    Ok(attr) => attr.kind == FileType::File && read_all(&vfs, ino, &path).is_err(),
                    Err(_) => true,
                };
                if unreadable {
                    problems += 1;
                }
            }
            let log = String::from_utf8_lossy(&vfs.errors().render()).into_owned();
            eprint!("{log}");
            for problem in vfs.problems() {
                eprintln!("{problem}");
                problems += 1;
            }
            if problems > 0 {
                return Err(Failure {
                    code: EXIT_MALFORMED,
                    message: format!("{}: {problems} problem(s)", source.display()),
                });
            }
            println!("{}: ok", source.display());
            Ok(())
        }
        Command::D3d9(command) => d3d9(command),
        Command::Sdp(SdpCommand::Pack { out, files }) => pack(&out, &files),
        Command::Dev(DevCommand::GenSdp {
            out_dir,
            packages,
            shaders,
            d3d9,
        }) => {
            use shaderfs::archive::sdp::generate;
            let io = |p: &Path| {
                let p = p.to_path_buf();
                move |e: std::io::Error| Failure::usage(format!("{}: {e}", p.display()))
            };
            let sources = generate::shaders_in(&d3d9).map_err(io(&d3d9))?;
            let files =
                generate::write_set(&out_dir, packages, shaders, &sources).map_err(io(&out_dir))?;
            println!("{}: {} packages", out_dir.display(), files.len());
            Ok(())
        }
        Command::Dev(DevCommand::GenSgd2 {
            out,
            programs_per_stage,
            effects,
            full,
            scale,
            dxil,
        }) => {
            use shaderfs::archive::sgd2::generate;
            let mut spec = if full {
                generate::Spec::full().scaled(scale)
            } else {
                generate::Spec::per_stage(programs_per_stage)
            };
            if let Some(n) = effects {
                spec.effects = n;
            }
            let io = |e: std::io::Error| Failure::usage(format!("{}: {e}", out.display()));
            let containers = generate::corpus_containers(&dxil)
                .map_err(|e| Failure::usage(format!("{}: {e}", dxil.display())))?;
            let summary = generate::write_file(&spec, &containers, &out).map_err(io)?;
            println!("{}: {summary:?}", out.display());
            Ok(())
        }
    }
}

fn pack(out: &Path, files: &[PathBuf]) -> Result<(), Failure> {
    use shaderfs::archive::sdp::{pack, PackInput};
    let read = |path: &Path| {
        std::fs::read(path).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))
    };
    let mut loaded = Vec::new();
    for file in files {
        let file_name = file
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| Failure::usage(format!("{}: not a file name", file.display())))?;
        let (name, is_asm) = match file_name.strip_suffix(".asm") {
            Some(base) => (base.to_string(), true),
            None => (file_name.to_string(), false),
        };
        let table_path = file.with_file_name(format!("{name}.json"));
        let table = if table_path.exists() {
            Some(read(&table_path)?)
        } else {
            None
        };
        loaded.push((name, read(file)?, is_asm, table));
    }
    let inputs: Vec<PackInput> = loaded
        .iter()
        .map(|(name, content, is_asm, table)| PackInput {
            name,
            content,
            is_asm: *is_asm,
            table: table.as_deref(),
        })
        .collect();
    let bytes = pack(&inputs).map_err(|message| Failure {
        code: EXIT_MALFORMED,
        message,
    })?;
    std::fs::write(out, bytes).map_err(|e| Failure::usage(format!("{}: {e}", out.display())))
}

fn d3d9(command: D3d9Command) -> Result<(), Failure> {
    use shaderfs::shader::d3d9::{asm, ctab::ConstantTable, disasm};
    let read = |path: &Path| {
        std::fs::read(path).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))
    };
    let write = |path: &Path, bytes: &[u8]| {
        std::fs::write(path, bytes).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))
    };
    let malformed = |path: &Path, e: &dyn std::fmt::Display| Failure {
        code: EXIT_MALFORMED,
        message: format!("{}: {e}", path.display()),
    };
    match command {
        D3d9Command::Disasm { file, out } => {
            let text = disasm::disassemble(&read(&file)?).map_err(|e| malformed(&file, &e))?;
            match out {
                Some(out) => write(&out, text.as_bytes()),
                None => std::io::stdout()
                    .write_all(text.as_bytes())
                    .map_err(write_failure),
            }
        }
        D3d9Command::Asm {
            file,
            out,
            no_validate,
        } => {
            let bytes = read(&file)?;
            let text = String::from_utf8(bytes)
                .map_err(|e| malformed(&file, &format!("not UTF-8 text: {e}")))?;
            let code = if no_validate {
                asm::assemble_unvalidated(&text)
            } else {
                asm::assemble(&text)
            }
            .map_err(|e| malformed(&file, &e))?;
            write(&out, &code)
        }
        D3d9Command::Ctab { file } => {
            let table =
                ConstantTable::from_bytecode(&read(&file)?).map_err(|e| malformed(&file, &e))?;
            let mut json = serde_json::to_vec_pretty(&table).expect("tables serialise");
            json.push(b'\n');
            std::io::stdout().write_all(&json).map_err(write_failure)
        }
    }
}

/// Completes a `-o` list: what was typed before the last comma stays, the option after
/// it is completed.
fn complete_options(current: &std::ffi::OsStr) -> Vec<CompletionCandidate> {
    let Some(current) = current.to_str() else {
        return Vec::new();
    };
    let (done, partial) = match current.rfind(',') {
        Some(i) => current.split_at(i + 1),
        None => ("", current),
    };
    mount::OPTIONS
        .iter()
        .chain(mount::KERNEL_FLAGS)
        .filter(|o| o.starts_with(partial))
        .map(|o| CompletionCandidate::new(format!("{done}{o}")))
        .collect()
}

fn write_failure(e: std::io::Error) -> Failure {
    Failure::usage(format!("writing output: {e}"))
}

fn open_offline(source: &Path) -> Result<Vfs, Failure> {
    Ok(shaderfs::archive::open(source, VfsOptions::read_only())?)
}

fn resolve(vfs: &Vfs, path: &str) -> Result<u64, Failure> {
    vfs.resolve(path)
        .map_err(|_| Failure::usage(format!("{path}: no such file in the tree")))
}

fn read_all(vfs: &Vfs, ino: u64, path: &str) -> Result<Vec<u8>, Failure> {
    let fail = |e: i32| {
        let detail = String::from_utf8_lossy(&vfs.errors().render()).into_owned();
        Failure {
            code: if e == libc::EIO {
                EXIT_MALFORMED
            } else {
                EXIT_USAGE
            },
            message: format!(
                "{path}: {}{}",
                std::io::Error::from_raw_os_error(e),
                if detail.is_empty() {
                    String::new()
                } else {
                    format!("\n{}", detail.trim_end())
                }
            ),
        }
    };
    let opened = vfs.open(ino, libc::O_RDONLY).map_err(fail)?;
    let result = vfs.read(ino, opened.fh, 0, u32::MAX).map_err(fail);
    vfs.release(ino, opened.fh);
    result
}

/// A directory's entries sorted by name, as `ls` shows them.
fn sorted_entries(vfs: &Vfs, ino: u64) -> Result<Vec<(u64, std::sync::Arc<str>, FileType)>, i32> {
    let mut entries = vfs.readdir(ino, 2, usize::MAX)?;
    entries.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(entries)
}

/// Every node below `ino`, depth first, with its path from the root of the tree.
fn walk(vfs: &Vfs, ino: u64, prefix: &str) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    for (child, name, kind) in sorted_entries(vfs, ino).unwrap_or_default() {
        let path = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}/{name}")
        };
        out.push((child, path.clone()));
        if kind == FileType::Dir {
            out.extend(walk(vfs, child, &path));
        }
    }
    out
}

fn list(
    vfs: &Vfs,
    ino: u64,
    prefix: &str,
    long: bool,
    recursive: bool,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let entries = match sorted_entries(vfs, ino) {
        Ok(entries) => entries,
        Err(_) => {
            // A file: list just it.
            let attr = vfs
                .getattr(ino)
                .map_err(std::io::Error::from_raw_os_error)?;
            return writeln!(out, "{}", attr.size);
        }
    };
    for (child, name, kind) in entries {
        let path = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}/{name}")
        };
        if long {
            let size = vfs.getattr(child).map(|a| a.size).unwrap_or(0);
            let tag = match kind {
                FileType::Dir => 'd',
                FileType::File => '-',
                FileType::Symlink => 'l',
            };
            let target = match kind {
                FileType::Symlink => format!(" -> {}", vfs.readlink(child).unwrap_or_default()),
                _ => String::new(),
            };
            writeln!(out, "{tag} {size:>10} {path}{target}")?;
        } else {
            writeln!(out, "{path}")?;
        }
        if recursive && kind == FileType::Dir {
            list(vfs, child, &path, long, recursive, out)?;
        }
    }
    Ok(())
}

/// Write the tree below `ino` into `to`. A file that cannot be read or written is
/// reported and the rest still extracted; then the exit code is 2. Nothing is written
/// through a symlink that was in `to` before (a hostile archive's names cannot make it
/// write outside `to`, and neither can a link someone left there).
fn extract(vfs: &Vfs, ino: u64, path: &str, to: &Path) -> Result<(), Failure> {
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |e: std::io::Error| Failure::usage(format!("{}: {e}", p.display()))
    };
    std::fs::create_dir_all(to).map_err(io(to))?;
    let attr = vfs
        .getattr(ino)
        .map_err(|e| Failure::usage(format!("{path}: {}", std::io::Error::from_raw_os_error(e))))?;
    let mut out = Extraction {
        to: to.to_path_buf(),
        made: std::collections::HashSet::new(),
        failed: Vec::new(),
    };
    if attr.kind == FileType::File {
        let name = path.rsplit('/').next().unwrap_or(path);
        out.file(vfs, ino, path, name);
    } else {
        for (child, rel) in walk(vfs, ino, "") {
            // The mount's own diagnostics are not part of any archive.
            if path.is_empty() && rel.starts_with(".shaderfs") {
                continue;
            }
            let full = if path.is_empty() {
                rel.clone()
            } else {
                format!("{path}/{rel}")
            };
            match vfs.getattr(child).map(|a| a.kind) {
                Ok(FileType::Dir) => out.dir(&rel),
                Ok(FileType::File) => out.file(vfs, child, &full, &rel),
                Ok(FileType::Symlink) => out.link(&vfs.readlink(child).unwrap_or_default(), &rel),
                Err(e) => out
                    .failed
                    .push(format!("{full}: {}", std::io::Error::from_raw_os_error(e))),
            }
        }
    }
    if out.failed.is_empty() {
        return Ok(());
    }
    for message in &out.failed {
        eprintln!("shaderfs extract: {message}");
    }
    Err(Failure {
        code: EXIT_MALFORMED,
        message: format!("{} file(s) could not be extracted", out.failed.len()),
    })
}

/// Where `extract` writes, what it made there, and what failed.
struct Extraction {
    to: PathBuf,
    /// The symlinks this run made (the archive's own links).
    made: std::collections::HashSet<PathBuf>,
    failed: Vec<String>,
}

impl Extraction {
    /// `rel` below `to`, unless a symlink this run did not make stands on the way there
    /// (`leaf`: the last component too).
    fn target(&mut self, rel: &str, leaf: bool) -> Option<PathBuf> {
        let mut at = self.to.clone();
        let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
        for (i, part) in parts.iter().enumerate() {
            at.push(part);
            let last = i + 1 == parts.len();
            let link = std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink());
            if link && (!last || leaf) && !self.made.contains(&at) {
                self.failed.push(format!(
                    "{}: a symlink that was there before; extract writes nothing through it",
                    at.display()
                ));
                return None;
            }
        }
        Some(at)
    }

    fn dir(&mut self, rel: &str) {
        let Some(target) = self.target(rel, true) else {
            return;
        };
        if let Err(e) = std::fs::create_dir_all(&target) {
            self.failed.push(format!("{}: {e}", target.display()));
        }
    }

    fn file(&mut self, vfs: &Vfs, ino: u64, full: &str, rel: &str) {
        use std::os::unix::fs::OpenOptionsExt;
        let bytes = match read_all(vfs, ino, full) {
            Ok(bytes) => bytes,
            Err(f) => return self.failed.push(f.message),
        };
        let Some(target) = self.target(rel, true) else {
            return;
        };
        // O_NOFOLLOW: a link put there after the check is not followed either.
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&target)
            .and_then(|mut f| f.write_all(&bytes));
        if let Err(e) = written {
            self.failed.push(format!("{}: {e}", target.display()));
        }
    }

    fn link(&mut self, link: &str, rel: &str) {
        let Some(target) = self.target(rel, true) else {
            return;
        };
        let made = std::fs::remove_file(&target)
            .or_else(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Ok(()),
                _ => Err(e),
            })
            .and_then(|()| std::os::unix::fs::symlink(link, &target));
        match made {
            Ok(()) => {
                self.made.insert(target);
            }
            Err(e) => self.failed.push(format!("{}: {e}", target.display())),
        }
    }
}
