//! `shaderfs dev …`: test data for the project's tests and benchmarks, built around real
//! compiled shaders, the HLSL compiler's time per compile, and the D3D9 decompiler's
//! against the disassembler's, for the benchmark.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use shaderfs::archive::{sdp, sgd2, sha};
use shaderfs::mount::{Failure, EXIT_MALFORMED};
use shaderfs::shader::d3d9::{decompile, disasm};
use shaderfs::shader::hlsl::compile::{compile, Options};

use super::output::{count, print, size, thousands};

/// Where the shaders a generator builds around come from, and what to do when they are
/// not there: the project makes neither D3D9 bytecode in bulk nor DXIL bitcode itself.
fn sources_missing(dir: &Path, what: &str, flag: &str, e: &std::io::Error) -> Failure {
    Failure::usage(format!(
        "{}: {e}\n  the generator builds its archives around {what}; pass {flag} DIR with a \
         folder of them (the project's checkout has them in ../shared/corpus)",
        dir.display()
    ))
}

/// `dev gen-sdp OUT_DIR`
pub fn gen_sdp(
    out_dir: &Path,
    packages: usize,
    shaders: usize,
    d3d9: &Path,
) -> Result<(), Failure> {
    let sources = sdp::generate::shaders_in(d3d9).map_err(|e| {
        sources_missing(
            d3d9,
            "compiled Direct3D 9 shaders (.bin, .vso, .pso)",
            "--d3d9",
            &e,
        )
    })?;
    let files = sdp::generate::write_set(out_dir, packages, shaders, &sources)
        .map_err(|e| Failure::usage(format!("{}: {e}", out_dir.display())))?;
    let bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let said = format!(
        "{}: {}, {} in all, {} ({} distinct shaders from {})\n",
        out_dir.display(),
        count(files.len() as u64, "package"),
        count(shaders as u64, "shader"),
        size(bytes),
        thousands(sources.len() as u64),
        d3d9.display()
    );
    print(said.as_bytes())
}

/// `dev gen-sgd2 OUT`
pub fn gen_sgd2(out: &Path, spec: &sgd2::generate::Spec, dxil: &Path) -> Result<(), Failure> {
    let containers = sgd2::generate::corpus_containers(dxil).map_err(|e| {
        sources_missing(
            dxil,
            "DXIL containers compiled by dxc (.dxil)",
            "--dxil",
            &e,
        )
    })?;
    let summary = sgd2::generate::write_file(spec, &containers, out)
        .map_err(|e| Failure::usage(format!("{}: {e}", out.display())))?;
    let stages: Vec<String> = summary
        .programs
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(g, n)| format!("{} {}", thousands(u64::from(*n)), sgd2::read::group_dir(g)))
        .collect();
    let programs: u64 = summary.programs.iter().map(|n| u64::from(*n)).sum();
    let said = format!(
        "{}: {}, {} ({}), {} ({} with techniques and passes), built around {} from {}\n",
        out.display(),
        size(summary.bytes),
        count(programs, "program"),
        stages.join(", "),
        count(u64::from(summary.effects), "effect"),
        thousands(u64::from(summary.effects_with_techniques)),
        count(containers.len() as u64, "container"),
        dxil.display()
    );
    print(said.as_bytes())
}

/// `dev gen-sha OUT --blocks N --from EFFECT`
pub fn gen_sha(out: &Path, blocks: usize, from: &Path) -> Result<(), Failure> {
    let text = std::fs::read(from).map_err(|e| {
        Failure::usage(format!(
            "{}: {e}\n  the generator repeats a FlatOut effect's shaders and techniques; pass \
             --from FILE with one (the project's checkout has them in ../shared/corpus/sha)",
            from.display()
        ))
    })?;
    let effect = sha::generate::repeat_blocks(&text, blocks)
        .map_err(|e| Failure::usage(format!("{}: {e}", from.display())))?;
    std::fs::write(out, &effect).map_err(|e| Failure::usage(format!("{}: {e}", out.display())))?;
    let said = format!(
        "{}: {}, {}, repeated from {}\n",
        out.display(),
        count(blocks as u64, "asm block"),
        size(effect.len() as u64),
        from.display()
    );
    print(said.as_bytes())
}

/// One compile `dev hlsl-time` times: a source, its profile, entry and `D3DCOMPILE_*`
/// flags, and Microsoft's bytecode for it if there is one (its slots are printed beside
/// ours).
pub struct TimedCompile {
    pub src: PathBuf,
    pub profile: String,
    pub entry: String,
    pub flags: u32,
    pub golden: Option<PathBuf>,
}

/// What timing one compile found: microseconds per compile and the instruction slots of
/// the bytecode, or ours refusing the source (with its messages).
enum Timing {
    Compiled { micros: f64, slots: Option<u32> },
    Refused(String),
}

/// Times `runs` compiles of `job` in this process, after one compile not counted (which
/// also says whether ours compiles it at all): the source is read before, as `msd3d time`
/// reads it before timing D3DCompile, and `#include`s are read at each compile, as there.
fn time_compile(job: &TimedCompile, runs: u32) -> Result<Timing, Failure> {
    // Every compile on one thread, as `msd3d time` calls D3DCompile on one: no thread
    // started per compile in the figure.
    shaderfs::shader::hlsl::with_stack(|| time_compile_here(job, runs))
}

fn time_compile_here(job: &TimedCompile, runs: u32) -> Result<Timing, Failure> {
    let bytes = std::fs::read(&job.src)
        .map_err(|e| Failure::usage(format!("{}: {e}", job.src.display())))?;
    let text = String::from_utf8(bytes).map_err(|e| Failure {
        code: EXIT_MALFORMED,
        message: format!("{}: not UTF-8 text: {e}", job.src.display()),
    })?;
    let options = Options {
        profile: job.profile.clone(),
        entry: job.entry.clone(),
        flags: job.flags,
        ..Options::default()
    };
    let name = job.src.display().to_string();
    let once = || compile(&name, &text, Some(&job.src), &options);
    let bytecode = match once() {
        Ok(compiled) => compiled.bytecode,
        Err(failed) => return Ok(Timing::Refused(failed.render())),
    };
    let start = Instant::now();
    for _ in 0..runs {
        // The result is used, as fxc's blob is released, so no compile is left out.
        let _ = std::hint::black_box(once());
    }
    let micros = start.elapsed().as_secs_f64() * 1e6 / f64::from(runs.max(1));
    Ok(Timing::Compiled {
        micros,
        slots: slots(&bytecode),
    })
}

/// The instruction slots of a shader as its listing's footer gives them, as fxc's does:
/// `approximately N instruction slots used`, or `1 instruction slot used`.
fn slots(bytecode: &[u8]) -> Option<u32> {
    let text = disasm::disassemble(bytecode).ok()?;
    let line = text
        .lines()
        .find(|l| l.starts_with("// approximately ") && l.contains(" instruction slot"))?;
    line.split_whitespace().find_map(|w| w.parse().ok())
}

/// `dev hlsl-time SRC PROFILE [ENTRY] -n N`: microseconds per compile, the mean of N
/// compiles in this process after one more, printed as `msd3d time` prints Microsoft's.
pub fn hlsl_time(job: &TimedCompile, runs: u32) -> Result<(), Failure> {
    match time_compile(job, runs)? {
        Timing::Compiled { micros, .. } => print(format!("{micros:.1}\n").as_bytes()),
        Timing::Refused(messages) => {
            eprint!("{messages}");
            Err(Failure {
                code: EXIT_MALFORMED,
                message: format!("{}: compilation failed", job.src.display()),
            })
        }
    }
}

/// `dev hlsl-time --list FILE -n N`: the same for every compile listed in FILE, one a line,
/// fields separated by tabs: `SRC PROFILE ENTRY [FLAGS [GOLDEN]]` (FLAGS in hex with `0x`
/// or decimal; GOLDEN: Microsoft's bytecode for the same). Prints a line for each:
/// `SRC PROFILE ENTRY MICROS SLOTS GOLDEN_SLOTS`, with `refused` for MICROS where ours
/// refuses the source and `-` for slots not known. One process for the whole list: no
/// process start-up in any figure.
pub fn hlsl_time_list(list: &Path, runs: u32) -> Result<(), Failure> {
    let text = std::fs::read_to_string(list)
        .map_err(|e| Failure::usage(format!("{}: {e}", list.display())))?;
    let mut out = String::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let job = parse_line(line).ok_or_else(|| {
            Failure::usage(format!(
                "{}:{}: {line:?}: want SRC\tPROFILE\tENTRY[\tFLAGS[\tGOLDEN]]",
                list.display(),
                n + 1
            ))
        })?;
        let golden_slots = match &job.golden {
            Some(path) => {
                let bytes = std::fs::read(path)
                    .map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?;
                slots(&bytes)
            }
            None => None,
        };
        let show = |s: Option<u32>| s.map_or("-".to_string(), |s| s.to_string());
        let (micros, ours) = match time_compile(&job, runs)? {
            Timing::Compiled { micros, slots } => (format!("{micros:.1}"), show(slots)),
            Timing::Refused(_) => ("refused".to_string(), "-".to_string()),
        };
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{micros}\t{ours}\t{}",
            job.src.display(),
            job.profile,
            job.entry,
            show(golden_slots)
        );
    }
    print(out.as_bytes())
}

fn parse_line(line: &str) -> Option<TimedCompile> {
    let mut fields = line.split('\t');
    let (src, profile, entry) = (fields.next()?, fields.next()?, fields.next()?);
    let flags = match fields.next() {
        None | Some("") => 0,
        Some(f) => match f.strip_prefix("0x") {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => f.parse().ok()?,
        },
    };
    let golden = fields.next().filter(|g| !g.is_empty()).map(PathBuf::from);
    (fields.next().is_none() && !src.is_empty() && !profile.is_empty()).then(|| TimedCompile {
        src: PathBuf::from(src),
        profile: profile.to_string(),
        entry: if entry.is_empty() { "main" } else { entry }.to_string(),
        flags,
        golden,
    })
}

/// `dev decompile-time PACKAGE… -n N`: for each `.sdp` package, every shader disassembled
/// (`disasm::disassemble`, what the `asm/` view shows) and decompiled
/// (`decompile::decompile`), in this process: the microseconds each takes for all of the
/// package's shaders, the mean of N passes after one not counted (which also counts the
/// shaders the decompiler refuses; their time is in the figure, as a view of them would
/// pay it). Passes alternate between the two, so that neither has the caches to itself.
pub fn decompile_time(packages: &[PathBuf], runs: u32) -> Result<(), Failure> {
    let mut out = String::new();
    for path in packages {
        let bytes =
            std::fs::read(path).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?;
        let index = sdp::read::index(&bytes).map_err(|e| Failure {
            code: EXIT_MALFORMED,
            message: format!("{}: {e}", path.display()),
        })?;
        let shaders: Vec<&[u8]> = index
            .records
            .iter()
            .map(|r| &bytes[r.data.clone()])
            .collect();
        let refused = shaders
            .iter()
            .filter(|s| decompile::decompile(s).is_err())
            .count();
        for s in &shaders {
            let _ = std::hint::black_box(disasm::disassemble(s));
        }
        let (mut listing, mut decompiling) = (0.0, 0.0);
        for _ in 0..runs {
            let start = Instant::now();
            for s in &shaders {
                let _ = std::hint::black_box(disasm::disassemble(s));
            }
            listing += start.elapsed().as_secs_f64();
            let start = Instant::now();
            for s in &shaders {
                let _ = std::hint::black_box(decompile::decompile(s));
            }
            decompiling += start.elapsed().as_secs_f64();
        }
        let per_pass = |total: f64| total * 1e6 / f64::from(runs);
        let _ = writeln!(
            out,
            "{}\t{}\t{refused}\t{:.1}\t{:.1}",
            path.display(),
            shaders.len(),
            per_pass(listing),
            per_pass(decompiling)
        );
    }
    print(out.as_bytes())
}
