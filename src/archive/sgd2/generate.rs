//! Writes SGD2 test databases of any size, up to the full game database (12,405
//! programs, 388 effects), around real DXIL containers.
//!
//! Programs get containers of their own stage where the corpus has one, names that
//! several programs share (as in the game), every tag byte, and binding tables laid out
//! as the public writer lays them out (`sgd2.md` §4.2) with named resources, samplers in
//! the `_name`/`name` hash form and constants whose names hash in exact and lower case.
//! Effects get program lists, and, except every eighth effect (which stands for the
//! post-processing and lighting effects that have none), technique, pass and state tables
//! laid out as `docs/sgd2-layout.md` states, between opaque bytes so that a reader has to
//! find them by structure. Everything is a function of the spec: the same spec gives the
//! same bytes.

use std::io::{self, Write};
use std::path::Path;

use super::joaat::{joaat, joaat_lower, joaat_underscore};
use super::read::{GROUPS, MAGIC, PROPLST};
use crate::shader::dxbc::container;

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Programs per group: vertex, pixel, geometry, domain, hull, compute, 6, 7.
    pub programs: [u32; GROUPS],
    pub effects: u32,
    /// Add effects whose names collide or are not valid file names.
    pub hostile_names: bool,
    pub seed: u64,
}

impl Spec {
    /// The game's main database: the counts of `sgd2.md` §2.
    pub fn full() -> Spec {
        Spec {
            programs: [3707, 7594, 0, 458, 406, 240, 0, 0],
            effects: 388,
            hostile_names: false,
            seed: 5,
        }
    }

    /// `n` times as many programs and effects (a database that grows past the game's).
    pub fn scaled(mut self, n: u32) -> Spec {
        for count in &mut self.programs {
            *count = count.saturating_mul(n);
        }
        self.effects = self.effects.saturating_mul(n);
        self
    }

    /// `n` programs in each of the six stages and about two effects per program of a
    /// stage, hostile names included.
    pub fn per_stage(n: u32) -> Spec {
        Spec {
            programs: [n, n, n, n, n, n, 0, 0],
            effects: (2 * n).max(12),
            hostile_names: true,
            seed: 5,
        }
    }
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub bytes: u64,
    pub programs: [u32; GROUPS],
    pub effects: u32,
    /// Effects written with technique, pass and state tables.
    pub effects_with_techniques: u32,
}

/// The DXIL program kind (`dxbc.md` §4) each group's containers should have.
const GROUP_KINDS: [Option<u16>; GROUPS] = [
    Some(1),
    Some(0),
    Some(2),
    Some(4),
    Some(3),
    Some(5),
    None,
    None,
];

const PREFIXES: [&str; GROUPS] = ["VS", "PS", "GS", "DS", "HS", "CS", "G6", "G7"];

const PROGRAM_NAMES: &[&str] = &[
    "DeferredTextured",
    "Transform",
    "Blit",
    "Tessellate_PNTri",
    "CascadeShadows",
    "Skinned",
    "Foliage",
    "Water",
    "Vehicle",
    "Ped",
    "Terrain",
    "Emissive",
];

const EFFECT_NAMES: &[&str] = &[
    "default",
    "decal",
    "emissive_additive_alpha",
    "cutout_fence",
    "cloth_default",
    "glass",
    "water_foam",
    "postfx",
    "normal_spec",
    "trees",
    "vehicle_paint",
    "lighting",
    "terrain_cb_4lyr",
    "ped",
    "parallax",
    "weapon",
];

const TECHNIQUE_NAMES: &[&str] = &[
    "draw",
    "deferred",
    "shadow",
    "lightweight0",
    "imposter",
    "wireframe",
];

/// splitmix64: small, deterministic, good enough for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The `*.dxil` files of `dir`, sorted by name.
pub fn corpus_containers(dir: &Path) -> io::Result<Vec<Vec<u8>>> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "dxil"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{}: no .dxil files", dir.display()),
        ));
    }
    paths.iter().map(std::fs::read).collect()
}

/// Write the database `spec` describes to `path` (through a temporary file beside it).
pub fn write_file(spec: &Spec, containers: &[Vec<u8>], path: &Path) -> io::Result<Summary> {
    let tmp = path.with_extension("awc.tmp");
    let file = std::fs::File::create(&tmp)?;
    let mut out = io::BufWriter::with_capacity(1 << 20, file);
    let summary = generate(spec, containers, &mut out)?;
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(summary)
}

/// A writer that counts what passes through it.
struct Counted<'a, W: Write> {
    inner: &'a mut W,
    bytes: u64,
}

impl<W: Write> Counted<'_, W> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.bytes += bytes.len() as u64;
        self.inner.write_all(bytes)
    }

    fn u32(&mut self, v: u32) -> io::Result<()> {
        self.put(&v.to_le_bytes())
    }
}

/// Write the database `spec` describes, using `containers` as the programs' bytes.
pub fn generate(spec: &Spec, containers: &[Vec<u8>], out: &mut impl Write) -> io::Result<Summary> {
    if containers.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no DXIL containers to build programs from",
        ));
    }
    let pools = pools_by_group(containers);
    let mut w = Counted {
        inner: out,
        bytes: 0,
    };
    w.put(MAGIC)?;
    for (g, pool) in pools.iter().enumerate() {
        w.u32(spec.programs[g])?;
        for i in 0..spec.programs[g] as usize {
            let bytes = &containers[pool[(i * 7 + spec.seed as usize) % pool.len()]];
            write_program(&mut w, spec, g, i, bytes)?;
        }
    }
    let names = effect_names(spec);
    w.u32(names.len() as u32)?;
    let mut with_techniques = 0;
    for (e, name) in names.iter().enumerate() {
        if write_effect(&mut w, spec, e, name)? {
            with_techniques += 1;
        }
    }
    w.inner.flush()?;
    Ok(Summary {
        bytes: w.bytes,
        programs: spec.programs,
        effects: names.len() as u32,
        effects_with_techniques: with_techniques,
    })
}

/// Per group, the containers whose program kind fits it (all of them where none does).
fn pools_by_group(containers: &[Vec<u8>]) -> Vec<Vec<usize>> {
    let kinds: Vec<Option<u16>> = containers
        .iter()
        .map(|c| {
            container::parse(c)
                .ok()
                .and_then(|p| p.program_version(c))
                .map(|v| v.kind)
        })
        .collect();
    GROUP_KINDS
        .iter()
        .map(|want| {
            let fitting: Vec<usize> = (0..containers.len())
                .filter(|&i| want.is_some() && kinds[i] == *want)
                .collect();
            if fitting.is_empty() {
                (0..containers.len()).collect()
            } else {
                fitting
            }
        })
        .collect()
}

fn program_name(spec: &Spec, g: usize, i: usize) -> String {
    // Three programs in a row share a name, as programs of different effects do.
    let share = i / 3;
    // Pixel programs 3–5 and 6–8 of a database with hostile names have names that are
    // not file names as they are: a path, and the longest a record holds (254 bytes),
    // which escapes to more than 255.
    if spec.hostile_names && g == 1 {
        match share {
            1 => return "PS_../Wet/Foliage\n".into(),
            2 => return "/".repeat(254),
            _ => {}
        }
    }
    let base = PROGRAM_NAMES[(share + g) % PROGRAM_NAMES.len()];
    let tag = joaat(format!("{g}/{share}/{}", spec.seed).as_bytes());
    format!("{}_{base}_{tag:08x}_Wrapped", PREFIXES[g])
}

fn write_program<W: Write>(
    w: &mut Counted<'_, W>,
    spec: &Spec,
    g: usize,
    i: usize,
    bytes: &[u8],
) -> io::Result<()> {
    let name = program_name(spec, g, i);
    w.put(&[(name.len() + 1) as u8])?;
    w.put(name.as_bytes())?;
    w.put(&[0])?;
    let tag = match (g, i % 3) {
        (5, _) => 0x32,
        (_, 0) => 0x41,
        (_, 1) => 0x42,
        _ => 0x32,
    };
    w.put(&[tag])?;
    w.u32(bytes.len() as u32)?;
    w.put(bytes)?;
    let mut rng = Rng(spec.seed ^ (g as u64) << 40 ^ i as u64);
    let mut table = [0u8; 152];
    for chunk in table.chunks_mut(8) {
        chunk.copy_from_slice(&rng.next().to_le_bytes());
    }
    w.put(&table)?;
    let bindings = binding_table(g, i, &mut rng);
    w.u32(bindings.len() as u32)?;
    w.put(&bindings)
}

/// A resource a generated binding table declares.
struct Res {
    name: String,
    code: u16,
    slot: u16,
    space: u8,
    descriptors: u8,
    constants: Vec<(String, u8)>,
}

/// Value types and their sizes (`sgd2.md` §4.4).
const VALUE_SIZES: [u32; 15] = [4, 4, 8, 12, 16, 4, 8, 12, 16, 4, 8, 12, 16, 48, 64];

fn resources(g: usize, i: usize, rng: &mut Rng) -> Vec<Res> {
    let mut out = Vec::new();
    if i % 5 != 4 {
        let pool: [(&str, u8); 6] = [
            ("gWorldViewProj", 14),
            ("specularFresnel", 9),
            ("diffuseColour", 12),
            ("bumpiness", 9),
            ("gLightCount", 1),
            ("gBoneTransforms", 13),
        ];
        let n = 1 + rng.below(4);
        let start = rng.below(pool.len());
        let constants = (0..n)
            .map(|k| {
                let (name, ty) = pool[(start + k) % pool.len()];
                (name.to_string(), ty)
            })
            .collect();
        out.push(Res {
            name: ["PerDraw", "rage_matrices", "MaterialLocals"][i % 3].into(),
            code: 0x0430,
            slot: 0,
            space: 0,
            descriptors: 1,
            constants,
        });
    }
    match g {
        1 => {
            out.push(Res {
                name: "DiffuseSampler".into(),
                code: 0x0102,
                slot: 0,
                space: 0,
                descriptors: 1,
                constants: Vec::new(),
            });
            out.push(Res {
                name: "DiffuseSampler".into(),
                code: 0x0423,
                slot: 0,
                space: 0,
                descriptors: 1,
                constants: Vec::new(),
            });
            if i % 4 == 0 {
                // The unbounded sampler array of `sgd2.md` §8: s0, space 2.
                out.push(Res {
                    name: "gSamplers".into(),
                    code: 0x0423,
                    slot: 0,
                    space: 2,
                    descriptors: 32,
                    constants: Vec::new(),
                });
            }
        }
        5 => {
            out.push(Res {
                name: "gOutput".into(),
                code: 0x011C,
                slot: 0,
                space: 0,
                descriptors: 1,
                constants: Vec::new(),
            });
            out.push(Res {
                name: "gCounters".into(),
                code: 0x0414,
                slot: 1,
                space: 0,
                descriptors: 1,
                constants: Vec::new(),
            });
        }
        _ => {
            if i % 2 == 1 {
                out.push(Res {
                    name: "HeightMap".into(),
                    code: 0x0102,
                    slot: 1,
                    space: 0,
                    descriptors: 1,
                    constants: Vec::new(),
                });
            }
        }
    }
    out
}

/// A binding table in the public writer's order (`sgd2.md` §4.2): header, resource
/// records, constant records by owner, resource names, constant names, an even length.
fn binding_table(g: usize, i: usize, rng: &mut Rng) -> Vec<u8> {
    use super::binding::{CONSTANT_LEN, HEADER_LEN, RESOURCE_LEN};
    let res = resources(g, i, rng);
    let constant_count: usize = res.iter().map(|r| r.constants.len()).sum();
    let records_end = HEADER_LEN + res.len() * RESOURCE_LEN + constant_count * CONSTANT_LEN;
    // Where each name will lie.
    let mut names: Vec<u8> = Vec::new();
    let mut res_name_at = Vec::new();
    for r in &res {
        res_name_at.push(records_end + names.len());
        names.extend_from_slice(r.name.as_bytes());
        names.push(0);
    }
    let mut const_name_at = Vec::new();
    for (name, _) in res.iter().flat_map(|r| &r.constants) {
        const_name_at.push(records_end + names.len());
        names.extend_from_slice(name.as_bytes());
        names.push(0);
    }
    // The material name the seed's second hash links `specularFresnel` to.
    names.extend_from_slice(b"Fresnel\0");
    let mut len = records_end + names.len();
    if len % 2 == 1 {
        len += 1;
    }
    let mut t = Vec::with_capacity(len);
    t.extend_from_slice(&(res.len() as u16).to_le_bytes());
    t.extend_from_slice(&(constant_count as u16).to_le_bytes());
    t.extend_from_slice(&0u16.to_le_bytes());
    t.extend_from_slice(&(len as u16).to_le_bytes());
    let mut first_constant = HEADER_LEN + res.len() * RESOURCE_LEN;
    for (r, res_rec) in res.iter().enumerate() {
        let at = t.len();
        let size: u32 = res_rec
            .constants
            .iter()
            .map(|c| VALUE_SIZES[c.1 as usize])
            .sum::<u32>()
            .div_ceil(16)
            * 16;
        let (h1, h2) = if res_rec.code == 0x0423 {
            (
                joaat_underscore(res_rec.name.as_bytes()),
                joaat_lower(res_rec.name.as_bytes()),
            )
        } else {
            let h = joaat_lower(res_rec.name.as_bytes());
            (h, h)
        };
        let cb_offset = if res_rec.constants.is_empty() {
            0
        } else {
            first_constant - at
        };
        t.extend_from_slice(&res_rec.code.to_le_bytes());
        t.extend_from_slice(&res_rec.slot.to_le_bytes());
        t.push(res_rec.constants.len() as u8);
        t.push(res_rec.descriptors);
        t.push(res_rec.space);
        t.push(0);
        t.extend_from_slice(&(cb_offset as u16).to_le_bytes());
        t.extend_from_slice(&((res_name_at[r] - at) as u16).to_le_bytes());
        t.extend_from_slice(&0u16.to_le_bytes());
        t.extend_from_slice(&size.to_le_bytes());
        t.extend_from_slice(&0u16.to_le_bytes());
        t.extend_from_slice(&h1.to_le_bytes());
        t.extend_from_slice(&h2.to_le_bytes());
        first_constant += res_rec.constants.len() * CONSTANT_LEN;
    }
    let mut c = 0;
    for r in &res {
        let mut offset = 0u32;
        for (name, ty) in &r.constants {
            let at = t.len();
            let h1 = if (i + c) % 2 == 0 {
                joaat(name.as_bytes())
            } else {
                joaat_lower(name.as_bytes())
            };
            let h2 = match (name.as_str(), c % 3) {
                ("specularFresnel", _) => joaat_lower(b"Fresnel"),
                (_, 0) => 0,
                _ => h1,
            };
            t.extend_from_slice(&(*ty as u16).to_le_bytes());
            t.extend_from_slice(&1u16.to_le_bytes());
            t.extend_from_slice(&(offset as u16).to_le_bytes());
            t.extend_from_slice(&((const_name_at[c] - at) as u32).to_le_bytes());
            t.extend_from_slice(&[0; 6]);
            t.extend_from_slice(&h1.to_le_bytes());
            t.extend_from_slice(&h2.to_le_bytes());
            offset += VALUE_SIZES[*ty as usize].max(16);
            c += 1;
        }
    }
    t.extend_from_slice(&names);
    t.resize(len, 0);
    t
}

/// The effects' names: realistic ones first, then numbered, and where asked a few that
/// collide or are not valid file names.
fn effect_names(spec: &Spec) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = (0..spec.effects as usize)
        .map(|e| {
            let base = EFFECT_NAMES[e % EFFECT_NAMES.len()];
            if e < EFFECT_NAMES.len() {
                base.as_bytes().to_vec()
            } else {
                format!("{base}_{}", e / EFFECT_NAMES.len()).into_bytes()
            }
        })
        .collect();
    if spec.hostile_names {
        let hostile: [&[u8]; 5] = [b"default", b"../../escape", b"a/b", b"tab\there", b".."];
        for (slot, name) in out.iter_mut().rev().zip(hostile) {
            *slot = name.to_vec();
        }
        if let Some(long) = out
            .get_mut(EFFECT_NAMES.len())
            .filter(|_| spec.effects > 20)
        {
            // The longest name a record holds, every byte of it escaped.
            *long = vec![b'/'; 254];
        }
    }
    out
}

/// What kind of effect the `e`th is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Draw,
    Tessellated,
    Geometry,
    Compute,
    /// Without technique tables, like the post-processing and lighting effects.
    Bare,
}

fn kind(spec: &Spec, e: usize) -> Kind {
    let has = |g: usize| spec.programs[g] > 0;
    match e % 8 {
        7 => Kind::Bare,
        6 if has(5) => Kind::Compute,
        5 if has(3) && has(4) && has(0) => Kind::Tessellated,
        4 if has(2) && has(0) => Kind::Geometry,
        _ if has(0) || has(1) => Kind::Draw,
        _ if has(5) => Kind::Compute,
        _ => Kind::Bare,
    }
}

/// The effect's program lists, per stage.
fn lists(spec: &Spec, e: usize, kind: Kind) -> [Vec<u32>; 6] {
    let pick = |g: usize, n: usize| -> Vec<u32> {
        let count = spec.programs[g] as usize;
        if count == 0 {
            return Vec::new();
        }
        (0..n.min(count))
            .map(|k| ((e * 37 + k * 101 + g * 13) % count) as u32)
            .collect()
    };
    let mut out: [Vec<u32>; 6] = Default::default();
    match kind {
        Kind::Compute => out[5] = pick(5, 1 + e % 3),
        Kind::Bare if e % 16 == 15 && spec.programs[5] > 0 => out[5] = pick(5, 1),
        _ => {
            out[0] = pick(0, 1 + e % 3);
            out[1] = pick(1, 1 + e % 4);
            if kind == Kind::Tessellated {
                out[3] = pick(3, 1);
                out[4] = pick(4, 1);
            }
            if kind == Kind::Geometry {
                out[2] = pick(2, 1);
            }
        }
    }
    out
}

fn state_tables(name: &[u8], e: usize, rng: &mut Rng) -> [Vec<Vec<u8>>; 4] {
    let counts = [1 + e % 3, 1 + (e + 1) % 3, 1 + (e + 2) % 3, e % 4];
    let mut rasterizers = Vec::new();
    for k in 0..counts[0] {
        let mut r = vec![0u8; 16];
        r[0] = if k == 2 { 2 } else { 3 };
        r[1] = [3, 1, 2][k % 3];
        r[2] = (k == 1) as u8;
        let offset: f32 = if name.starts_with(b"water_foam") {
            -0.0005
        } else {
            0.0
        };
        r[8..12].copy_from_slice(&offset.to_le_bytes());
        rasterizers.push(r);
    }
    let mut depth = Vec::new();
    for k in 0..counts[1] {
        let mut d = vec![0u8; 24];
        d[0] = 1;
        d[1] = (k == 0) as u8;
        // Reversed Z: `default` compares GREATER (`sgd2.md` §5.4).
        d[2] = if name == b"default" {
            5
        } else {
            [5, 7, 8][k % 3]
        };
        d[3] = (k == 2) as u8;
        d[4] = 0xFF;
        d[5] = if k == 2 { 0x0F } else { 0xFF };
        d[6..10].copy_from_slice(&[1, 1, if k == 2 { 3 } else { 1 }, 8]);
        d[10..14].copy_from_slice(&[1, 1, 1, 8]);
        depth.push(d);
    }
    let mut blends = Vec::new();
    for k in 0..counts[2] {
        let mut b = vec![0u8; 68];
        for rt in 0..8 {
            b[4 + rt * 8..12 + rt * 8].copy_from_slice(&[0, 2, 1, 1, 2, 1, 1, 15]);
        }
        let first: Option<[u8; 8]> = match (name, k) {
            (b"decal", 0) => Some([1, 5, 6, 1, 2, 6, 1, 15]),
            (b"emissive_additive_alpha", 0) => Some([1, 5, 2, 1, 5, 2, 1, 15]),
            (_, 1) => Some([1, 5, 6, 1, 1, 1, 1, 7]),
            (_, 2) => Some([1, 2, 2, 1, 2, 2, 1, 15]),
            _ => None,
        };
        if let Some(rt0) = first {
            b[4..12].copy_from_slice(&rt0);
        }
        blends.push(b);
    }
    let mut samplers = Vec::new();
    for k in 0..counts[3] {
        let mut s = vec![0u8; 36];
        s[0] = [0x15, 0x55, 0x14, 0x95][(k + rng.below(4)) % 4];
        s[1..4].copy_from_slice(&[[1, 1, 1], [3, 3, 3], [2, 1, 3]][k % 3]);
        let bias: f32 = if k == 1 { -0.5 } else { 0.0 };
        s[4..8].copy_from_slice(&bias.to_le_bytes());
        s[8] = if s[0] == 0x55 { 16 } else { 1 };
        s[9] = if s[0] == 0x95 { 5 } else { 0 };
        s[32..36].copy_from_slice(&f32::MAX.to_le_bytes());
        samplers.push(s);
    }
    [rasterizers, depth, blends, samplers]
}

/// Write one effect; returns whether it has technique tables.
fn write_effect<W: Write>(
    w: &mut Counted<'_, W>,
    spec: &Spec,
    e: usize,
    name: &[u8],
) -> io::Result<bool> {
    let mut rng = Rng(spec.seed.wrapping_mul(31) ^ (e as u64) << 20);
    let kind = kind(spec, e);
    let lists = lists(spec, e, kind);
    w.put(&[(name.len() + 1) as u8])?;
    w.put(name)?;
    w.put(&[0])?;

    // The name block: bound globals, technique names, then the pass names.
    let globals: Vec<&str> = match kind {
        Kind::Compute => vec!["PerDispatch", "gOutput"],
        _ => vec!["PerDraw", "DiffuseSampler"][..1 + e % 2].to_vec(),
    };
    let techniques: Vec<&str> = if kind == Kind::Bare {
        Vec::new()
    } else {
        (0..1 + e % 3)
            .map(|t| TECHNIQUE_NAMES[(e + t) % TECHNIQUE_NAMES.len()])
            .collect()
    };
    let pass_counts: Vec<usize> = (0..techniques.len()).map(|t| 1 + (e + t) % 2).collect();
    let max_passes = pass_counts.iter().copied().max().unwrap_or(0);
    let mut block = vec![0u8];
    for g in &globals {
        block.extend_from_slice(g.as_bytes());
        block.push(0);
    }
    let mut technique_at = Vec::new();
    for t in &techniques {
        technique_at.push(block.len() as u32);
        block.extend_from_slice(t.as_bytes());
        block.push(0);
    }
    for p in 0..max_passes {
        block.extend_from_slice(format!("p{p}\0").as_bytes());
    }

    w.u32(16 * (1 + e as u32 % 4))?;
    for list in &lists {
        w.u32(list.len() as u32)?;
        for &i in list {
            w.u32(i)?;
        }
    }

    // The region: 8 zero bytes and opaque words, the tables, an opaque tail.
    let mut region = vec![0u8; 8];
    for word in [0x0000_1002u32, 0x1100_0011, 0xEEEE_EEEE, 0xEEEE_EEEE] {
        region.extend_from_slice(&word.to_le_bytes());
    }
    if !techniques.is_empty() {
        let states = state_tables(name, e, &mut rng);
        region.extend_from_slice(&(techniques.len() as u32).to_le_bytes());
        for (at, n) in technique_at.iter().zip(&pass_counts) {
            region.extend_from_slice(&at.to_le_bytes());
            region.extend_from_slice(&(*n as u32).to_le_bytes());
        }
        let total: usize = pass_counts.iter().sum();
        region.extend_from_slice(&(total as u32).to_le_bytes());
        for p in 0..total {
            let mut rec = [0u8; 24];
            for (s, list) in lists.iter().enumerate() {
                if !list.is_empty() {
                    rec[s] = 1 + (p % list.len()) as u8;
                }
            }
            rec[8] = (p % states[0].len()) as u8;
            rec[9] = (p % states[1].len()) as u8;
            rec[10] = (p % states[2].len()) as u8;
            rec[11] = 0xFF;
            region.extend_from_slice(&rec);
        }
        for table in &states {
            region.extend_from_slice(&(table.len() as u32).to_le_bytes());
            for rec in table {
                region.extend_from_slice(rec);
            }
        }
    }
    // A constant-buffer record bound to `proplst` and the one-byte trailer, as the
    // public decomposition ends the region (`sgd2.md` §5.2).
    let proplst = joaat(b"proplst");
    let mut tail = [0u8; 28];
    tail[..2].copy_from_slice(&0x0430u16.to_le_bytes());
    tail[20..24].copy_from_slice(&proplst.to_le_bytes());
    tail[24..28].copy_from_slice(&proplst.to_le_bytes());
    region.extend_from_slice(&tail);
    region.push(0);
    w.put(&region)?;

    w.put(PROPLST)?;
    w.u32(globals.len() as u32 + 1)?;
    for (k, g) in globals.iter().enumerate() {
        let code: u32 = if g.ends_with("Sampler") {
            0x0102
        } else {
            0x0430
        };
        let mut body = Vec::with_capacity(32);
        body.extend_from_slice(&(0x1000u64 + k as u64).to_le_bytes());
        body.extend_from_slice(&1u32.to_le_bytes());
        body.extend_from_slice(&[0; 12]);
        body.extend_from_slice(&joaat_lower(g.as_bytes()).to_le_bytes());
        body.extend_from_slice(&(code | (k as u32) << 16).to_le_bytes());
        w.u32(body.len() as u32)?;
        w.put(&body)?;
    }
    let mut last = Vec::with_capacity(32);
    last.extend_from_slice(&0xFFFFu64.to_le_bytes());
    last.extend_from_slice(&1u32.to_le_bytes());
    last.extend_from_slice(&1u32.to_le_bytes());
    last.extend_from_slice(&[0; 8]);
    last.extend_from_slice(&proplst.to_le_bytes());
    last.extend_from_slice(&0x0430u32.to_le_bytes());
    w.u32(last.len() as u32)?;
    w.put(&last)?;

    w.u32(block.len() as u32)?;
    w.put(&block)?;
    Ok(!techniques.is_empty())
}
