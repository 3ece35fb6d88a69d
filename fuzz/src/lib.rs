//! The fuzz targets, one function each, over shaderfs's public API: every parser and
//! decoder an archive or a saved file reaches. `fuzz_targets/*.rs` hand libFuzzer's
//! input to these; `tests/fuzz_regressions.rs` (of the main crate, which includes this
//! file) replays the inputs kept in `fuzz/regressions/TARGET/` through the same ones.
//!
//! Archives are opened as a mount opens them (through their [`Format`], over bytes in
//! memory), every file of the tree read and the tree checked against what
//! [`shaderfs::vfs`] expects of a format; saves go into small valid archives. A target
//! panics only where shaderfs does: every assertion here is a contract shaderfs documents
//! (`vfs::Entry`, `EntryKind::File::size`, `Rewrite`, `ConstantTable::encode`), so a
//! crash is a bug in shaderfs, never in the harness.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use shaderfs::archive::sdp::{read as sdp_read, SdpFormat};
use shaderfs::archive::sgd2::generate::{generate, Spec};
use shaderfs::archive::sgd2::{binding, Sgd2Format};
use shaderfs::archive::sha::ShaFormat;
use shaderfs::shader::d3d9::ctab::ConstantTable;
use shaderfs::shader::d3d9::{asm, disasm};
use shaderfs::shader::dxbc::bitstream::{self, Reader};
use shaderfs::shader::dxbc::{decode, intrinsics, listing, llvm};
use shaderfs::vfs::{Archive, ArchiveBytes, Edit, EntryKind, FileKey, Format, OpenContext};

/// A target: what it does with one input.
pub type Target = fn(&[u8]);

/// Every target by name (the names of `fuzz_targets/*.rs` and `fuzz/regressions/*/`).
pub const TARGETS: &[(&str, Target)] = &[
    ("sdp_index", sdp_index),
    ("sdp_open", sdp_open),
    ("sdp_save", sdp_save),
    ("sha_open", sha_open),
    ("sha_save", sha_save),
    ("sgd2_open", sgd2_open),
    ("sgd2_bindings", sgd2_bindings),
    ("sgd2_save", sgd2_save),
    ("dxbc_decode", dxbc_decode),
    ("dxil_bitcode", dxil_bitcode),
    ("d3d9_disasm", d3d9_disasm),
    ("d3d9_decompile", d3d9_decompile),
    ("d3d9_asm", d3d9_asm),
    ("d3d9_ctab", d3d9_ctab),
    ("ctab_json", ctab_json),
    ("hlsl_compile", hlsl_compile),
];

/// The `.sdp` package index (`archive::sdp::read::index`): the header, the record
/// framing, and the ranges it hands the views, which must lie inside the file.
pub fn sdp_index(data: &[u8]) {
    if let Ok(index) = sdp_read::index(data) {
        for r in &index.records {
            let _ = &data[r.name_field()];
            let _ = &data[r.name.clone()];
            let _ = &data[r.data.clone()];
        }
    }
}

/// A `.sdp` package opened as a writable mount opens it (`SdpFormat`), and every file of
/// its tree read: archive.json, `shaders/` (the records), `asm/` (the bytecode parser and
/// the disassembler), `ctab/` (the CTAB decoder and its JSON).
pub fn sdp_open(data: &[u8]) {
    if let Some(archive) = open(&SdpFormat, "fuzz.sdp", data, WRITABLE) {
        read_all(&*archive);
    }
}

/// Saves into the example package (`examples/shaderpackage-example.sdp`), as close()
/// hands them to the format: the first byte picks the view and the kind of shader
/// (`byte % 6`: 0 `shaders/*.vso`, 1 `shaders/*.pso`, 2 `asm/*.vso.asm`, 3
/// `asm/*.pso.asm`, 4 `ctab/*.vso.json`, 5 `ctab/*.pso.json`) and which of the package's
/// two of that kind (`byte / 6 % 2`); the rest is the new content. That drives the
/// bytecode check, the assembler and its validation, the CTAB JSON reader, encoder and
/// splice, and the package writer.
pub fn sdp_save(input: &[u8]) {
    static TARGET: OnceLock<SaveTarget> = OnceLock::new();
    TARGET
        .get_or_init(|| {
            SaveTarget::new(
                &SdpFormat,
                "shaderpackage-example.sdp",
                include_bytes!("../../examples/shaderpackage-example.sdp").to_vec(),
                WRITABLE,
                &[
                    |p| p.starts_with("shaders/") && p.ends_with(".vso"),
                    |p| p.starts_with("shaders/") && p.ends_with(".pso"),
                    |p| p.starts_with("asm/") && p.ends_with(".vso.asm"),
                    |p| p.starts_with("asm/") && p.ends_with(".pso.asm"),
                    |p| p.starts_with("ctab/") && p.ends_with(".vso.json"),
                    |p| p.starts_with("ctab/") && p.ends_with(".pso.json"),
                ],
                2,
            )
        })
        .run(input);
}

/// A FlatOut `.sha` effect opened as a writable mount opens it (`ShaFormat`: the effect
/// parser), every file of its tree read (archive.json with the game's checks, the asm
/// blocks, decl and pass JSON, the blocks assembled to bytecode), its problems listed.
pub fn sha_open(data: &[u8]) {
    if let Some(archive) = open(&ShaFormat, "fuzz.sha", data, WRITABLE) {
        read_all(&*archive);
    }
}

/// Saves into a small valid effect (`fuzz/base/effect.sha`), as close() hands them to the
/// format: the first byte picks the view (`byte % 4`: 0 `effect.fx`, 1 `vertex.asm`,
/// 2 `pixel.asm`, 3 `passes/T0/P0.json`); the rest is the new content. That drives the
/// effect parser, the splice of a block or a pass, the pass JSON reader and every check
/// the game's effect compiler makes.
pub fn sha_save(input: &[u8]) {
    static TARGET: OnceLock<SaveTarget> = OnceLock::new();
    TARGET
        .get_or_init(|| {
            SaveTarget::new(
                &ShaFormat,
                "effect.sha",
                include_bytes!("../base/effect.sha").to_vec(),
                WRITABLE,
                &[
                    |p| p == "effect.fx",
                    |p| p == "vertex.asm",
                    |p| p == "pixel.asm",
                    |p| p.starts_with("passes/"),
                ],
                1,
            )
        })
        .run(input);
}

/// A GTA V SGD2 database opened as a writable mount opens it (`Sgd2Format`: the framing,
/// each effect's technique search), and every file of its tree read: archive.json,
/// census.json (every program decoded), each program's JSON (its container, bindings and
/// intrinsics), each effect's JSON and pass states.
pub fn sgd2_open(data: &[u8]) {
    if let Some(archive) = open(&Sgd2Format, "fuzz.awc", data, WRITABLE) {
        read_all(&*archive);
    }
}

/// An SGD2 program's binding table (`archive::sgd2::binding::decode`) on its own: in a
/// database it lies after the container, where mutating it through `sgd2_open` rarely
/// keeps the framing whole.
pub fn sgd2_bindings(data: &[u8]) {
    if let Ok(bindings) = binding::decode(data) {
        let _ = serde_json::to_vec(&bindings);
    }
}

/// Programs replaced in a small SGD2 database, as close() of `programs/STAGE/0.dxil`
/// hands them to the format, on a `-o sign` mount (so that a mutated container is not
/// refused for its digest alone): the first byte picks the stage (`byte % 6`: vertex,
/// pixel, geometry, domain, hull, compute); the rest is the new container. That drives
/// the container check (envelope, program header, stage, signing) and the database
/// writer. The database is the project's generator's (`archive::sgd2::generate`) around
/// a placeholder container, so it needs no corpus: only the saved containers are real.
pub fn sgd2_save(input: &[u8]) {
    static TARGET: OnceLock<SaveTarget> = OnceLock::new();
    TARGET
        .get_or_init(|| {
            let spec = Spec {
                programs: [1, 1, 1, 1, 1, 1, 0, 0],
                effects: 2,
                hostile_names: false,
                seed: 1,
            };
            let mut bytes = Vec::new();
            generate(&spec, &[b"DXBC, a placeholder".to_vec()], &mut bytes)
                .expect("the generator writes to memory");
            SaveTarget::new(
                &Sgd2Format,
                "fuzz.awc",
                bytes,
                OpenContext {
                    writable: true,
                    sign: true,
                },
                &[
                    |p| p == "programs/vertex/0.dxil",
                    |p| p == "programs/pixel/0.dxil",
                    |p| p == "programs/geometry/0.dxil",
                    |p| p == "programs/domain/0.dxil",
                    |p| p == "programs/hull/0.dxil",
                    |p| p == "programs/compute/0.dxil",
                ],
                1,
            )
        })
        .run(input);
}

/// A DXBC container decoded as a program's JSON shows it (`shader::dxbc::decode::decode`:
/// envelope, digest, every part, the `dx.op` intrinsics), its problems listed, and the
/// census's reading of it (`decode::facts`), and its listing and IR as the `.ll` view
/// shows them (`shader::dxbc::listing::listing`).
pub fn dxbc_decode(data: &[u8]) {
    if let Ok(program) = decode::decode(data) {
        let _ = program.problems();
        let _ = serde_json::to_vec(&program);
    }
    let _ = decode::facts(data);
    let _ = listing::listing(data, "program");
}

/// The LLVM bitstream reader and the `dx.op` intrinsics reader on bitcode alone (the
/// `DXIL` part after its program header, which `fuzz/seed` cuts out of the corpus's
/// containers): `shader::dxbc::intrinsics::usage`, every entry of the bitstream walked
/// with `bitstream::Reader`, and the module read and written as LLVM IR text
/// (`shader::dxbc::llvm::disassemble`, the body of the `.ll` view).
pub fn dxil_bitcode(data: &[u8]) {
    let _ = llvm::disassemble(data, "program");
    if let Ok(usage) = intrinsics::usage(data) {
        let _ = serde_json::to_vec(&usage.intrinsics);
    }
    let Ok(mut reader) = Reader::new(data) else {
        return;
    };
    // Every entry takes some bits, so the walk ends; the bound keeps a long input from
    // taking all the time.
    for _ in 0..1 << 16 {
        match reader.entry() {
            Ok(Some(bitstream::Entry::Record { .. })) => {
                let _ = reader.ops();
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
}

/// D3D9 bytecode parsed and disassembled as the `asm/` view shows it
/// (`shader::d3d9::disasm::disassemble`), and the listing assembled again without the
/// per-model checks, as saving the view unchanged does; and decompiled to HLSL
/// (`shader::d3d9::decompile`).
pub fn d3d9_disasm(data: &[u8]) {
    if let Ok(text) = disasm::disassemble(data) {
        let _ = asm::assemble_unvalidated(&text);
    }
    let _ = shaderfs::shader::d3d9::decompile::decompile(data);
}

/// D3D9 bytecode decompiled to HLSL (`shader::d3d9::decompile`) and the text compiled
/// back with shaderfs's compiler for the shader's profile, entry `main`
/// (`hlsl::compile`), as the decompiler promises it compiles. Neither may panic; the
/// compile must succeed for a shader the validator accepts (`validate::validate`: what
/// breaks its model's rules, more slots or registers than it has, cannot compile back
/// for it), ps_1_1–1_3 as every other model.
pub fn d3d9_decompile(data: &[u8]) {
    use shaderfs::shader::d3d9::{bytecode, decompile, validate};
    use shaderfs::shader::hlsl::compile::{compile, Options};
    let Ok(text) = decompile::decompile(data) else {
        return;
    };
    let shader = bytecode::parse(data).expect("what decompiles parses");
    let v = shader.version;
    let options = Options {
        profile: v.to_string(),
        entry: "main".into(),
        ..Options::default()
    };
    let compiled = compile("decompiled.hlsl", &text, None, &options);
    if let Err(failed) = compiled {
        assert!(
            !validate::validate(&shader).is_empty(),
            "a valid {v} shader decompiles to HLSL that does not compile back:\n{}\n{text}",
            failed.render()
        );
    }
}

/// D3D9 assembly text, any UTF-8 (`shader::d3d9::asm`): assembled with the per-model
/// validation (`assemble`, what a saved `asm/` file gets), with D3DX's skip-validation
/// checks, and with none (`assemble_unvalidated`); what assembles is disassembled again.
pub fn d3d9_asm(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for assemble in [
        asm::assemble,
        asm::assemble_skip_validation,
        asm::assemble_unvalidated,
    ] {
        if let Ok(code) = assemble(text) {
            let _ = disasm::disassemble(&code);
        }
    }
}

/// The HLSL compiler (`hlsl::compile::compile_with`): the input's first byte picks the
/// profile, the rest is the source (lossy UTF-8), compiled with an `#include "x"` that
/// finds one small file in memory; what compiles must run on the interpreter, and a
/// source that does not compile must say where.
pub fn hlsl_compile(data: &[u8]) {
    use shaderfs::shader::hlsl::compile::{compile_with, Options};
    use shaderfs::shader::hlsl::pp::MemoryLoader;
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    const PROFILES: [&str; 6] = ["ps_2_0", "ps_2_a", "ps_3_0", "vs_2_0", "vs_2_a", "vs_3_0"];
    let profile = PROFILES[usize::from(pick) % PROFILES.len()];
    let text = String::from_utf8_lossy(rest);
    let mut loader = MemoryLoader::default();
    loader.add("x", "#define X 1\nfloat4 x_value;\n");
    let options = Options {
        profile: profile.into(),
        entry: "main".into(),
        ..Options::default()
    };
    match compile_with("fuzz.hlsl", &text, None, &options, &loader) {
        Ok(compiled) => {
            let program = shaderfs::shader::d3d9::run::Program::new(&compiled.bytecode)
                .expect("what the compiler writes, the interpreter reads");
            let _ = program.run(&Default::default());
        }
        Err(failed) => assert!(
            failed.diagnostics.has_errors(),
            "a failed compilation says why"
        ),
    }
}

/// The CTAB constant table of D3D9 bytecode (`ConstantTable::from_bytecode`: the comment
/// found, the table decoded with every check), shown as the `ctab/` view and the
/// disassembly's header show it (JSON, listing), and encoded again.
pub fn d3d9_ctab(data: &[u8]) {
    if let Ok(Some(table)) = ConstantTable::from_bytecode(data) {
        let _ = serde_json::to_vec_pretty(&table);
        let _ = table.listing();
        ctab_round_trip(&table);
    }
}

/// The JSON of the `ctab/` view as a user saves it: parsed into an optional
/// `ConstantTable` (`serde_json::from_slice`, as the save does), listed, encoded and
/// decoded again.
pub fn ctab_json(data: &[u8]) {
    if let Ok(Some(table)) = serde_json::from_slice::<Option<ConstantTable>>(data) {
        let _ = table.listing();
        ctab_round_trip(&table);
    }
}

/// `ConstantTable::encode`'s contract: a table that passes `validate` (every table the
/// `ctab/` view accepts does) decodes from its encoding to itself.
fn ctab_round_trip(table: &ConstantTable) {
    if table.validate().is_err() {
        return;
    }
    let payload = table.encode();
    let decoded = ConstantTable::decode(&payload, table.version)
        .unwrap_or_else(|e| panic!("a valid table's encoding does not decode: {e}"));
    assert_eq!(
        &decoded, table,
        "a valid table decodes from its encoding to another"
    );
}

/// A writable mount without `-o sign`: every view that can be saved is there.
const WRITABLE: OpenContext = OpenContext {
    writable: true,
    sign: false,
};

/// `data` opened by `format` as the file `name` (the name matters to formats that
/// recognise by extension and to their messages), or `None` where the format refuses it.
fn open(
    format: &dyn Format,
    name: &str,
    data: &[u8],
    ctx: OpenContext,
) -> Option<Arc<dyn Archive>> {
    format
        .open(Path::new(name), ArchiveBytes::owned(data.to_vec()), ctx)
        .ok()
}

/// Read every file of `archive`'s tree and list its problems, as `shaderfs check` does;
/// check the tree as the vfs takes it (`vfs::Entry`: parents first, each path once, every
/// component a file name; a file's known size is the size it reads).
fn read_all(archive: &dyn Archive) {
    let entries = archive.entries();
    let mut dirs: HashSet<&str> = HashSet::from([""]);
    let mut paths: HashSet<&str> = HashSet::new();
    for e in &entries {
        for c in e.path.split('/') {
            assert!(
                !c.is_empty() && c != "." && c != ".." && c.len() <= 255 && !c.contains('\0'),
                "{:?}: {c:?} is not a file name",
                e.path
            );
        }
        assert!(paths.insert(&e.path), "{:?} listed twice", e.path);
        let parent = e.path.rsplit_once('/').map_or("", |(p, _)| p);
        assert!(
            dirs.contains(parent),
            "{:?} listed before its folder",
            e.path
        );
        match &e.kind {
            EntryKind::Dir => {
                dirs.insert(&e.path);
            }
            EntryKind::File { key, size, .. } => {
                if let (Ok(blob), Some(size)) = (archive.read(*key), size) {
                    assert_eq!(
                        blob.len() as u64,
                        *size,
                        "{:?}: read gives another size than the tree says",
                        e.path
                    );
                }
            }
            EntryKind::Symlink { .. } => {}
        }
    }
    let _ = archive.problems();
}

/// A small valid archive that a save target writes into, and its writable files by kind.
struct SaveTarget {
    format: &'static dyn Format,
    name: &'static str,
    bytes: Vec<u8>,
    ctx: OpenContext,
    archive: Arc<dyn Archive>,
    /// Per kind, the writable files whose paths it accepts, in tree order.
    files: Vec<Vec<FileKey>>,
}

impl SaveTarget {
    /// `bytes` opened as the file `name`; `kinds[k]` accepts the paths of kind `k`, of
    /// which the archive must have `per_kind` each.
    fn new(
        format: &'static dyn Format,
        name: &'static str,
        bytes: Vec<u8>,
        ctx: OpenContext,
        kinds: &[fn(&str) -> bool],
        per_kind: usize,
    ) -> SaveTarget {
        let archive = open(format, name, &bytes, ctx)
            .unwrap_or_else(|| panic!("the save target's archive {name} does not open"));
        let mut files = vec![Vec::new(); kinds.len()];
        let mut paths = vec![Vec::new(); kinds.len()];
        for e in archive.entries() {
            if let EntryKind::File {
                key,
                writable: true,
                ..
            } = e.kind
            {
                if let Some(k) = kinds.iter().position(|accepts| accepts(&e.path)) {
                    files[k].push(key);
                    paths[k].push(e.path);
                }
            }
        }
        assert!(
            paths.iter().all(|p| p.len() == per_kind),
            "{name}: expected {per_kind} writable files of each kind, found {paths:?}"
        );
        SaveTarget {
            format,
            name,
            bytes,
            ctx,
            archive,
            files,
        }
    }

    /// Save the input: its first byte picks a kind (`byte % kinds`) and a file of that
    /// kind (`byte / kinds % per_kind`); the rest is the new content, written as a
    /// close() hands it to the format, which validates and serialises it. An accepted
    /// save is opened again, as a commit parses the new file before the rename, and
    /// every view of it read.
    fn run(&self, input: &[u8]) {
        let Some((&selector, data)) = input.split_first() else {
            return;
        };
        let selector = usize::from(selector);
        let of_kind = &self.files[selector % self.files.len()];
        let key = of_kind[(selector / self.files.len()) % of_kind.len()];
        let Ok(rewrite) = self.archive.apply(&Edit::Write { key, data }) else {
            return;
        };
        let new = rewrite.to_vec(&self.bytes);
        assert_eq!(
            new.len(),
            rewrite.len(),
            "a rewrite's length is its pieces'"
        );
        if let Some(reopened) = open(self.format, self.name, &new, self.ctx) {
            read_all(&*reopened);
        }
    }
}
