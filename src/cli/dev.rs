//! `shaderfs dev …`: test data for the project's tests and benchmarks, built around real
//! compiled shaders.

use std::path::Path;

use shaderfs::archive::{sdp, sgd2, sha};
use shaderfs::mount::Failure;

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
