//! The `shaderfs` command line: argument definitions, and outcomes mapped to exit statuses
//! (0 success, 1 usage, 2 malformed input, 3 mount failed). Mounting lives in the
//! library; the other commands in `cli/`.

mod cli;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};
use clap_complete::engine::{ArgValueCompleter, CompletionCandidate};

use cli::output::Verbosity;
use shaderfs::mount::{self, Failure, MountOptions, EXIT_USAGE};
use shaderfs::shader::d3d9::disasm::Style;

/// Mount game shader archives as directory trees.
///
/// Three formats: Bethesda .sdp shader packages (Oblivion, Fallout 3, Fallout: New Vegas)
/// appear as folders of shaders, disassemblies and constant tables; FlatOut 1/2 .sha
/// effects as their text, asm blocks, passes and assembled shaders; GTA V Enhanced SGD2
/// shader databases as DXIL programs and effects with their techniques, passes and
/// states. Edits are checked and written back into the archive, atomically, when the file
/// is closed. Without a mount, ls, cat, extract, info and check read the same tree.
#[derive(Parser)]
#[command(name = "shaderfs", version, about, long_about)]
#[command(
    after_help = "The mount.fuse3 form is also accepted: shaderfs SOURCE MOUNTPOINT [-o OPTIONS]\n\
Exit status: 0 success, 1 usage error, 2 malformed input (an archive, shader or file that \
cannot be read as what it should be), 3 the mount failed, 4 (check) no problem found but something \
could not be checked."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `-q` and `-v` of the commands that go through a whole tree.
#[derive(Args, Clone, Copy)]
struct Talk {
    /// Say only what is wrong: no progress bar, no summary.
    #[arg(short, long, conflicts_with = "verbose")]
    quiet: bool,
    /// Also name every file as it is done.
    #[arg(short, long)]
    verbose: bool,
}

impl Talk {
    fn verbosity(self) -> Verbosity {
        Verbosity::from_flags(self.quiet, self.verbose)
    }
}

#[derive(Subcommand)]
enum Command {
    /// Mount an archive, or a folder of archives, and return once the mount answers.
    Mount {
        /// An archive file (.sdp, .sha, SGD2), or a folder: each archive in it becomes a
        /// subdirectory.
        source: PathBuf,
        /// An empty directory to mount on.
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
    /// Unmount; returns once every pending write-back is on disk.
    Umount {
        /// Where the archive is mounted.
        mountpoint: PathBuf,
        /// Detach the mount at once (lazy); the daemon finishes its write-back and exits
        /// when the last file under it is closed. Without it, umount returns once every
        /// write-back is on disk.
        #[arg(short = 'z', long)]
        lazy: bool,
    },
    /// List the tree (or the directory PATH in it) without mounting.
    Ls {
        /// An archive, or a folder of archives.
        source: PathBuf,
        /// A directory or file of the tree, as the mount would show it (default: the top).
        path: Option<String>,
        /// Long listing: type, size and name.
        #[arg(short = 'l')]
        long: bool,
        /// List everything below PATH.
        #[arg(short = 'R')]
        recursive: bool,
        /// One JSON object per line: path, type, size (and target for links).
        #[arg(long)]
        json: bool,
    },
    /// Print a file of the tree without mounting.
    Cat {
        /// An archive, or a folder of archives.
        source: PathBuf,
        /// The file, as the mount would show it (asm/SKY.vso.asm, programs/pixel/0.json).
        path: String,
    },
    /// Write the tree (or PATH in it) to a folder, names escaped as in the mount.
    Extract {
        /// An archive, or a folder of archives.
        source: PathBuf,
        /// A directory or file of the tree to write (default: all of it).
        path: Option<String>,
        /// Folder to write into (created if missing).
        #[arg(short = 'C', long = "to", default_value = ".")]
        to: PathBuf,
        #[command(flatten)]
        talk: Talk,
    },
    /// Describe each archive: what archive.json holds, as a summary or as JSON.
    Info {
        /// An archive, or a folder of archives.
        source: PathBuf,
        /// Each archive's archive.json on one line (JSON Lines).
        #[arg(long)]
        json: bool,
    },
    /// Read every file of each archive and report every problem once; exit 2 if there is
    /// one, else 4 if something could not be checked (an HLSL shader for a profile shaderfs
    /// does not compile yet), said as a problem is.
    Check {
        /// An archive, or a folder of archives.
        source: PathBuf,
        /// One JSON object per problem and line: archive, path, line, column, offset,
        /// message.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        talk: Talk,
    },
    /// Direct3D 9 shaders on their own, with the code the mount uses.
    #[command(subcommand)]
    D3d9(D3d9Command),
    /// FlatOut effects on their own.
    #[command(subcommand)]
    Sha(ShaCommand),
    /// Bethesda shader packages.
    #[command(subcommand)]
    Sdp(SdpCommand),
    /// DXIL programs (Shader Model 6 DXBC containers) on their own, with the code the
    /// mount uses.
    #[command(subcommand)]
    Dxil(DxilCommand),
    /// Print the shell completion script for SHELL.
    ///
    /// The script asks shaderfs itself for candidates, so subcommands, flags and `-o`
    /// lists complete as they are defined here: `source <(shaderfs completions bash)`,
    /// or install the script where the shell looks (the Debian package does).
    Completions {
        /// The shell to complete for.
        #[arg(value_parser = ["bash", "zsh", "fish", "elvish", "powershell"])]
        shell: String,
    },
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
        /// The package to write (replaced atomically if it exists).
        out: PathBuf,
        /// The shaders, one record each; their file names are the record names.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

#[derive(Subcommand)]
enum ShaCommand {
    /// Report what the game's effect compiler would refuse in an effect, as `check` does
    /// for a mount's tree (whatever the file is called).
    Check {
        /// A FlatOut effect file.
        file: PathBuf,
        /// One JSON object per problem and line: archive, path, line, column, message.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        talk: Talk,
    },
}

#[derive(Subcommand)]
enum D3d9Command {
    /// Disassemble bytecode (.vso, .pso, …) to asm text, CTAB listed in the header.
    Disasm {
        /// Shader bytecode.
        file: PathBuf,
        /// Write here instead of standard output (- is standard output).
        #[arg(short = 'o')]
        out: Option<PathBuf>,
        /// fxc: fxc's /Fc listing, as the asm/ view shows it, which assembles back to the
        /// same bytes. d3ddisassemble: exactly what D3DDisassemble prints (no command-line
        /// block, no default values, no comments but the constant table).
        #[arg(long, value_enum, default_value_t = ListingStyle::Fxc)]
        style: ListingStyle,
    },
    /// Assemble asm text (ps_1_1 … vs_3_0, dotted or underscored) to bytecode.
    Asm {
        /// Asm text.
        file: PathBuf,
        /// Where to write the bytecode (- is standard output).
        #[arg(short = 'o')]
        out: PathBuf,
        /// Skip the shader-model checks (register ranges, slot limits, …).
        #[arg(long, conflicts_with = "d3d8")]
        no_validate: bool,
        /// Check with Direct3D 8's rules: vs_1_1 and ps_1_x only, vertex inputs bound by
        /// the vertex declaration instead of dcl (a Direct3D 8-style vs_1_1).
        #[arg(long)]
        d3d8: bool,
    },
    /// Print the constant table of a shader as JSON (null when it has none).
    Ctab {
        /// Shader bytecode.
        file: PathBuf,
    },
    /// Compile HLSL for a Direct3D 9 profile, as fxc does: the constant table, inputs and
    /// outputs the game binds by, and code that behaves as Microsoft's. Errors are printed
    /// as FILE(LINE,COL): error: message, every one; exit 2 on an error.
    Compile {
        /// The HLSL source.
        file: PathBuf,
        /// The profile: vs_1_1 and ps_1_1 to ps_1_4 (as Microsoft's legacy compiler),
        /// vs_2_0, vs_2_x (vs_2_a), vs_3_0, ps_2_0, ps_2_x (ps_2_a, ps_2_b), ps_3_0.
        #[arg(short = 'T', long = "profile")]
        profile: String,
        /// The entry point.
        #[arg(short = 'E', long = "entry", default_value = "main")]
        entry: String,
        /// Define a macro: NAME or NAME=VALUE.
        #[arg(short = 'D', value_name = "NAME[=VALUE]")]
        defines: Vec<String>,
        /// A folder #include searches after the including file's own.
        #[arg(short = 'I', value_name = "DIR")]
        include_dirs: Vec<PathBuf>,
        /// Where to write the bytecode (- is standard output).
        #[arg(short = 'o')]
        out: Option<PathBuf>,
        /// Also print the asm view of the result (fxc's /Fc listing).
        #[arg(long)]
        listing: bool,
        /// -Zpr: matrices are row-major unless they say otherwise; -Zpc: column-major
        /// (the default).
        #[arg(short = 'Z', value_name = "pr|pc", value_parser = ["pr", "pc"])]
        packing: Vec<String>,
        /// -Gec: enable backwards compatibility (fxc's D3DCOMPILE_ENABLE_BACKWARDS_COMPATIBILITY).
        #[arg(short = 'G', value_name = "ec", value_parser = ["ec"])]
        generation: Vec<String>,
    },
    /// Run a shader once on the CPU interpreter and print its outputs as JSON:
    /// {"profile": "ps_2_0", "outputs": {"oC0": [r, g, b, a]}, "discarded": false}, a vertex
    /// shader's also by semantic ("semantics": {"TEXCOORD0": [...]}); NaN and infinities
    /// are the strings "nan", "inf", "-inf". CTAB default values are loaded, then what the
    /// inputs file and --set give; def/defi/defb win over both. Exit 2 if the shader does
    /// not read or cannot run.
    ///
    /// The inputs file is a JSON object: {"constants": {"c0": [1, 0, 0, 1], "i0": [3, 0, 1,
    /// 0], "b0": true, "tint": [1, 0, 0, 1]}, "inputs": {"TEXCOORD0": [0.5, 0.5, 0, 0], "v1":
    /// [1, 1, 1, 1]}, "textures": {"s0": {"width": 2, "height": 2, "texels": [[r, g, b, a],
    /// ...], "filter": "point"|"linear", "address": "wrap"|"mirror"|"clamp"|"border"|
    /// "mirror_once", "border": [r, g, b, a]}}, "vpos": [x, y], "vface": 1}. Every member is
    /// optional; a sampler without a texture reads (0, 0, 0, 1).
    Run {
        /// Shader bytecode (.pso, .vso, .bin), or asm text, which is assembled first.
        shader: PathBuf,
        /// NAME=VALUES, after the inputs file: a register (c3=1,2,3,4, i0=3,0,1,0, b0=true,
        /// v0=...), a constant's CTAB name (tint=1,0,0,1), an input semantic
        /// (TEXCOORD0=0.5,0.5,0,0), vPos=x,y or vFace=-1. Missing components are 0, but an
        /// int constant's given by name take D3DX's (n, 0, 1, 0): count, start, step.
        #[arg(long = "set", value_name = "NAME=VALUES")]
        set: Vec<String>,
        /// A JSON file of constants, inputs and textures (see above).
        #[arg(long, value_name = "FILE.json")]
        inputs: Option<PathBuf>,
    },
    /// Print a shader as HLSL that compiles back, for its profile and entry `main`, to a
    /// shader that behaves the same and binds the same constant registers: constants named
    /// and typed from the constant table, values folded into the statements that read
    /// them, loops, branches and predicates written out. The first comment names the
    /// profile and anything the text does not say as the shader has it (a vertex shader
    /// without a position writes 0 there, as HLSL needs one). Subroutines are functions.
    /// A ps_1_x shader's texbem/texbeml/bem (their matrix is texture-stage state) keep its
    /// texture stage as an `asm { }` block, which shaderfs's compiler takes. A shader whose
    /// code no HLSL says (vs_3_0 outputs written at aL, inputs read at aL from a register
    /// no dcl declares, a ps_1_1–1_3 texture instruction reading a swizzled register) is
    /// its instructions in an `asm { }` block, the body of `void main()`, the first
    /// comment saying why. Exit 2 when the bytes are no shader.
    Decompile {
        /// Shader bytecode (.pso, .vso, .bin).
        file: PathBuf,
        /// Where to write the HLSL (`-` or none: standard output).
        #[arg(short = 'o', value_name = "OUT")]
        out: Option<PathBuf>,
    },
}

/// Whose listing `d3d9 disasm` prints.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ListingStyle {
    Fxc,
    D3ddisassemble,
}

#[derive(Subcommand)]
enum DxilCommand {
    /// Print a container's program as LLVM IR: the programs/STAGE/N.ll view of a loose
    /// container (the container summed up in `;` lines, then its DXIL bitcode as
    /// llvm-dis-14 prints it). Exit 2 if the container or its bitcode does not read.
    Dis {
        /// A DXBC container holding a DXIL program (a .dxil file, or a database's
        /// programs/STAGE/N.dxil).
        file: PathBuf,
        /// Write here instead of standard output (- is standard output).
        #[arg(short = 'o')]
        out: Option<PathBuf>,
    },
    /// Print what the mount's programs/STAGE/N.json says of a program's container, for a
    /// loose container: size, CRC-32, digest, shader model, signatures, resources, parts,
    /// the dx.op intrinsics it calls, and its problems. Exit 2 if it is not a DXBC
    /// container.
    Info {
        /// A DXBC container holding a DXIL program (a .dxil file, or a database's
        /// programs/STAGE/N.dxil).
        file: PathBuf,
    },
}

#[derive(Subcommand)]
enum DevCommand {
    /// Write a game-sized set of .sdp packages around real D3D9 shaders.
    GenSdp {
        /// Folder to write the packages into.
        out_dir: PathBuf,
        /// How many packages.
        #[arg(long, default_value_t = 19)]
        packages: usize,
        /// How many shaders in all.
        #[arg(long, default_value_t = 6000)]
        shaders: usize,
        /// Folder of compiled shaders (.bin/.vso/.pso) to use.
        #[arg(long, default_value = "../shared/corpus/d3d9/compiled")]
        d3d9: PathBuf,
    },
    /// Write an SGD2 test database around real DXIL containers.
    GenSgd2 {
        /// The database file to write.
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
        /// Folder of .dxil containers (compiled by dxc) to use as programs.
        #[arg(long, default_value = "../shared/corpus/dxil")]
        dxil: PathBuf,
    },
    /// Write a FlatOut effect with many asm blocks: a real effect's shaders and
    /// techniques repeated, renamed `NAME_1`, `NAME_2`, …
    GenSha {
        /// The effect file to write.
        out: PathBuf,
        /// How many asm blocks (shaders) it holds.
        #[arg(long, default_value_t = 4000)]
        blocks: usize,
        /// The effect to repeat.
        #[arg(long, default_value = "../shared/corpus/sha/demo_decalpaint.sha")]
        from: PathBuf,
    },
    /// Time the HLSL compiler in this process: microseconds per compile, the mean of N
    /// compiles after one more, as `msd3d time` times Microsoft's (no process start-up).
    HlslTime {
        /// The HLSL source.
        #[arg(required_unless_present = "list", conflicts_with = "list")]
        src: Option<PathBuf>,
        /// The profile (`ps_2_0`, `vs_3_0` …).
        #[arg(required_unless_present = "list")]
        profile: Option<String>,
        /// The entry point.
        #[arg(default_value = "main")]
        entry: String,
        /// Compiles timed (after one not counted).
        #[arg(short = 'n', long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
        runs: u32,
        /// `D3DCOMPILE_*` flags, as fxc takes them.
        #[arg(long, default_value_t = 0)]
        flags: u32,
        /// Time every compile listed in FILE instead, one a line, tab-separated:
        /// `SRC PROFILE ENTRY [FLAGS [GOLDEN]]`; prints `SRC PROFILE ENTRY MICROS SLOTS
        /// GOLDEN_SLOTS` for each (`refused`, `-` where there is none).
        #[arg(long, value_name = "FILE")]
        list: Option<PathBuf>,
    },
    /// Time the D3D9 decompiler against the disassembler in this process, over every
    /// shader of each package: prints `PACKAGE SHADERS REFUSED DISASM_US DECOMPILE_US` a
    /// line (tab-separated; REFUSED: shaders the decompiler refuses; the times for all of
    /// the package's shaders, the mean of N passes after one more).
    DecompileTime {
        /// `.sdp` packages.
        #[arg(required = true)]
        packages: Vec<PathBuf>,
        /// Passes timed (after one not counted).
        #[arg(short = 'n', long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
        runs: u32,
    },
}

fn main() -> ExitCode {
    // A shell asking for completions (COMPLETE=bash shaderfs -- …) is answered here.
    // The scripts call `shaderfs` from PATH, wherever it was installed.
    clap_complete::CompleteEnv::with_factory(|| Cli::command().bin_name("shaderfs"))
        .completer("shaderfs")
        .complete();
    let mut args: Vec<String> = std::env::args().collect();
    if let Some(first) = args.get(1).filter(|a| !a.starts_with('-')) {
        let cli = Cli::command();
        let known = cli.get_subcommands().any(|c| c.get_name() == first) || first == "help";
        if !known {
            // mount.fuse3 calls `shaderfs SOURCE MOUNTPOINT -o OPTIONS`; anything else that
            // is not a command is a mistake to point out.
            let shown: Vec<&str> = cli
                .get_subcommands()
                .filter(|c| !c.is_hide_set())
                .map(|c| c.get_name())
                .collect();
            match mount_form_or_typo(first, args.len(), &shown) {
                Ok(()) => args.insert(1, "mount".into()),
                Err(message) => {
                    eprintln!("shaderfs: {message}");
                    return ExitCode::from(EXIT_USAGE as u8);
                }
            }
        }
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE as u8 } else { 0 });
        }
    };
    init_log(&cli.command);
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            // An empty message was said already (check's problems, a closed pipe).
            if !f.message.is_empty() {
                eprintln!("shaderfs: {}", f.message);
            }
            ExitCode::from(f.code as u8)
        }
    }
}

/// Whether `first`, which is no command, starts the mount.fuse3 form (an existing source
/// and a mount point); otherwise what to tell the user.
fn mount_form_or_typo(first: &str, words: usize, commands: &[&str]) -> Result<(), String> {
    if Path::new(first).exists() {
        return Ok(());
    }
    let nearest = commands
        .iter()
        .map(|c| (edit_distance(first, c), c))
        .filter(|(d, c)| *d <= 2 && *d < c.len())
        .min();
    match nearest {
        Some((_, command)) => Err(format!("unknown command '{first}', did you mean '{command}'?")),
        // `shaderfs missing.sdp /mnt`: mount says the source is missing.
        None if words >= 3 => Ok(()),
        None => Err(format!(
            "unknown command '{first}', and no file of that name (commands: {}; see shaderfs --help)",
            commands.join(", ")
        )),
    }
}

/// Levenshtein distance, for suggesting the command meant.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The daemon logs warnings (and every request with `-o debug`, no RUST_LOG needed); the
/// offline commands say what went wrong themselves, so they log nothing unless RUST_LOG
/// asks.
fn init_log(command: &Command) {
    let level = match command {
        Command::Mount { options, .. } => {
            let debug =
                MountOptions::parse(options.iter().map(String::as_str)).is_ok_and(|o| o.debug);
            // fuser logs a reply it could not write as an error: the kernel writes back
            // ENOENT for a request it no longer waits on (interrupted, or its mount
            // going), which at an unmount under load says nothing to act on (`-o debug`
            // shows them).
            if debug {
                "debug"
            } else {
                "warn,fuser::reply=off"
            }
        }
        Command::Umount { .. } => "warn",
        _ => "off",
    };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(level)).init();
}

fn run(command: Command) -> Result<(), Failure> {
    use cli::{check, dev, extract, loose, tree};
    match command {
        Command::Mount {
            source,
            mountpoint,
            foreground,
            options,
        } => {
            let opts =
                MountOptions::parse(options.iter().map(String::as_str)).map_err(Failure::usage)?;
            mount::mount(&source, &mountpoint, &opts, foreground)
        }
        Command::Umount { mountpoint, lazy } => mount::umount(&mountpoint, lazy),
        Command::Completions { shell } => completions(&shell),
        Command::Ls {
            source,
            path,
            long,
            recursive,
            json,
        } => {
            let how = tree::Listing {
                long,
                recursive,
                json,
            };
            tree::ls(&tree::open(&source)?, path.as_deref().unwrap_or(""), how)
        }
        Command::Cat { source, path } => {
            let vfs = tree::open(&source)?;
            let ino = tree::resolve(&vfs, &path)?;
            cli::output::print(&tree::read_all(&vfs, ino, &path)?)
        }
        Command::Extract {
            source,
            path,
            to,
            talk,
        } => extract::extract(
            &tree::open_as_mounted(&source)?,
            path.as_deref().unwrap_or(""),
            &to,
            source.is_dir(),
            talk.verbosity(),
        ),
        Command::Info { source, json } => check::info(&source, json),
        Command::Check { source, json, talk } => {
            let archives = shaderfs::archive::recognise(&source)?;
            check::check(&source, &archives, json, talk.verbosity())
        }
        Command::Sha(ShaCommand::Check { file, json, talk }) => {
            let archive = shaderfs::vfs::ArchiveFile {
                path: file.clone(),
                dir_name: String::new(),
                format: &shaderfs::archive::sha::ShaFormat,
            };
            check::check(&file, &[archive], json, talk.verbosity())
        }
        Command::D3d9(D3d9Command::Disasm { file, out, style }) => {
            let style = match style {
                ListingStyle::Fxc => Style::Fxc,
                ListingStyle::D3ddisassemble => Style::D3DDisassemble,
            };
            loose::disasm(&file, out.as_deref(), style)
        }
        Command::D3d9(D3d9Command::Asm {
            file,
            out,
            no_validate,
            d3d8,
        }) => loose::asm(
            &file,
            &out,
            match (no_validate, d3d8) {
                (true, _) => loose::Rules::None,
                (_, true) => loose::Rules::Direct3D8,
                _ => loose::Rules::Direct3D9,
            },
        ),
        Command::D3d9(D3d9Command::Ctab { file }) => loose::ctab(&file),
        Command::D3d9(D3d9Command::Decompile { file, out }) => {
            loose::decompile(&file, out.as_deref())
        }
        Command::D3d9(D3d9Command::Compile {
            file,
            profile,
            entry,
            defines,
            include_dirs,
            out,
            listing,
            packing,
            generation,
        }) => {
            use shaderfs::shader::hlsl::compile as hc;
            let mut flags = 0;
            for p in &packing {
                flags |= if p == "pr" {
                    hc::PACK_ROW_MAJOR
                } else {
                    hc::PACK_COLUMN_MAJOR
                };
            }
            if !generation.is_empty() {
                flags |= hc::BACKWARDS_COMPATIBILITY;
            }
            cli::compile::compile(
                &file,
                &profile,
                Some(&entry),
                &defines,
                &include_dirs,
                out.as_deref(),
                listing,
                flags,
            )
        }
        Command::D3d9(D3d9Command::Run {
            shader,
            set,
            inputs,
        }) => cli::run::run(&shader, &set, inputs.as_deref()),
        Command::Sdp(SdpCommand::Pack { out, files }) => loose::pack(&out, &files),
        Command::Dxil(DxilCommand::Dis { file, out }) => loose::dxil_dis(&file, out.as_deref()),
        Command::Dxil(DxilCommand::Info { file }) => loose::dxil_info(&file),
        Command::Dev(DevCommand::GenSdp {
            out_dir,
            packages,
            shaders,
            d3d9,
        }) => dev::gen_sdp(&out_dir, packages, shaders, &d3d9),
        Command::Dev(DevCommand::GenSgd2 {
            out,
            programs_per_stage,
            effects,
            full,
            scale,
            dxil,
        }) => {
            use shaderfs::archive::sgd2::generate::Spec;
            let mut spec = match full {
                true => Spec::full().scaled(scale),
                false => Spec::per_stage(programs_per_stage),
            };
            if let Some(n) = effects {
                spec.effects = n;
            }
            dev::gen_sgd2(&out, &spec, &dxil)
        }
        Command::Dev(DevCommand::GenSha { out, blocks, from }) => dev::gen_sha(&out, blocks, &from),
        Command::Dev(DevCommand::HlslTime {
            src,
            profile,
            entry,
            runs,
            flags,
            list,
        }) => match (list, src, profile) {
            (Some(list), _, _) => dev::hlsl_time_list(&list, runs),
            (None, Some(src), Some(profile)) => dev::hlsl_time(
                &dev::TimedCompile {
                    src,
                    profile,
                    entry,
                    flags,
                    golden: None,
                },
                runs,
            ),
            _ => Err(Failure::usage(
                "dev hlsl-time: SRC and PROFILE, or --list FILE",
            )),
        },
        Command::Dev(DevCommand::DecompileTime { packages, runs }) => {
            dev::decompile_time(&packages, runs)
        }
    }
}

/// `shaderfs completions SHELL`: the registration script is what the completion engine
/// prints when asked with COMPLETE=SHELL.
fn completions(shell: &str) -> Result<(), Failure> {
    let me = std::env::current_exe()
        .map_err(|e| Failure::usage(format!("finding this program: {e}")))?;
    let status = std::process::Command::new(me)
        .env("COMPLETE", shell)
        .status()
        .map_err(|e| Failure::usage(format!("shaderfs completions: {e}")))?;
    match status.success() {
        true => Ok(()),
        false => Err(Failure::usage(format!("no completions for {shell}"))),
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
