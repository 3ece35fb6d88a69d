//! Test sets of shader packages the size of a game's (`shaderfs dev gen-sdp`): Oblivion
//! ships 19 packages (`sdp.md` §1) with some 6,000 shaders between them.
//!
//! The shaders are real bytecode handed in (the corpus's compiled shaders, or the example
//! package's); each package gets its share under Bethesda-style names (`SLS2003.pso`,
//! numbered per package, `.vso` or `.pso` by the shader's kind), so names repeat across
//! packages as they do in the game.

use std::io;
use std::path::Path;

use super::read::EXPECTED_MAGIC;
use super::write::{self, NameField};
use crate::shader::d3d9::bytecode::{self, ShaderKind};

/// Families of Oblivion shader names the generated records cycle through.
const FAMILIES: [&str; 8] = ["SLS", "STB", "HDR", "SKIN", "PAR", "WATER", "GRASS", "SM3"];

/// Write `packages` packages holding `shaders` records in all, drawn in turn from
/// `sources`, as `shaderpackage001.sdp`… in `dir`. Returns the files written.
pub fn write_set(
    dir: &Path,
    packages: usize,
    shaders: usize,
    sources: &[Vec<u8>],
) -> io::Result<Vec<std::path::PathBuf>> {
    if sources.is_empty() || packages == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "need at least one shader and one package",
        ));
    }
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for p in 0..packages {
        let count = shaders / packages + usize::from(p < shaders % packages);
        let mut records = Vec::with_capacity(count);
        for i in 0..count {
            let code = &sources[(p * 7 + i) % sources.len()];
            let ext = match bytecode::shader_version(code).map(|v| v.kind) {
                Some(ShaderKind::Vertex) => "vso",
                _ => "pso",
            };
            let family = FAMILIES[i % FAMILIES.len()];
            let name = format!("{family}{:04}.{ext}", 1000 + i / FAMILIES.len());
            let field = NameField::new(&name).expect("generated names fit");
            records.push((field, code.as_slice()));
        }
        let bytes = write::serialise(EXPECTED_MAGIC, records.iter().map(|(n, d)| (n, *d)))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let path = dir.join(format!("shaderpackage{:03}.sdp", p + 1));
        std::fs::write(&path, bytes)?;
        written.push(path);
    }
    Ok(written)
}

/// Every D3D9 shader (`*.bin`, `*.vso`, `*.pso`) in `dir` that parses.
pub fn shaders_in(dir: &Path) -> io::Result<Vec<Vec<u8>>> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "bin" || e == "vso" || e == "pso")
        })
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let bytes = std::fs::read(&path)?;
        if bytecode::parse(&bytes).is_ok() {
            out.push(bytes);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::sdp::read;

    #[test]
    fn a_set_splits_the_shaders_between_packages() {
        let vs: Vec<u8> = [0xFFFE0101u32, 0x0000FFFF]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let ps: Vec<u8> = [0xFFFF0200u32, 0x0000FFFF]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let files = write_set(dir.path(), 3, 20, &[vs, ps]).unwrap();
        assert_eq!(files.len(), 3);
        let mut total = 0;
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let index = read::index(&bytes).unwrap();
            let names: std::collections::HashSet<_> = index
                .records
                .iter()
                .map(|r| &bytes[r.name.clone()])
                .collect();
            assert_eq!(names.len(), index.records.len(), "names unique per package");
            total += index.records.len();
        }
        assert_eq!(total, 20);
    }
}
