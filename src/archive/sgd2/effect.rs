//! What an effect record holds beyond its framing: the technique, pass and state tables
//! inside the region before `proplst`, the proplst sections and the name block
//! (`sgd2.md` §5.2–§5.5).
//!
//! The seed's notes give the pass record and the state records but not where they sit.
//! They are found by structure, with the layout `docs/sgd2-layout.md` states: a
//! technique table whose name offsets land on names of the name block, a count-prefixed
//! list of 24-byte passes whose program positions fall inside the effect's lists, and four
//! count-prefixed state tables holding every state index a pass names. Only a region in
//! which exactly one such structure validates is decoded; any other is shown raw and
//! called undecoded.

use std::ops::Range;

use serde_json::{json, Map, Value};

use super::binding::resource_type;
use super::joaat::{self, Match, Resolver};
use super::{hex, hex32, text};
use crate::shader::d3d12;

pub const PASS_LEN: usize = 24;
pub const RASTERIZER_LEN: usize = 16;
pub const DEPTH_STENCIL_LEN: usize = 24;
pub const BLEND_LEN: usize = 68;
pub const SAMPLER_LEN: usize = 36;
/// The four state tables, in the order the layout puts them.
pub const STATE_LENS: [usize; 4] = [RASTERIZER_LEN, DEPTH_STENCIL_LEN, BLEND_LEN, SAMPLER_LEN];
pub const STATE_NAMES: [&str; 4] = ["rasterizer", "depth_stencil", "blend", "sampler"];

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let w = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Where each name of a name block starts and ends: a name starts right after a NUL, is
/// not empty and ends at the next NUL inside the block. Found once per block, so checking
/// an offset is a lookup.
pub struct NameStarts(Vec<(u32, u32)>);

impl NameStarts {
    pub fn new(block: &[u8]) -> NameStarts {
        let mut out = Vec::new();
        let mut start = None;
        for (i, &b) in block.iter().enumerate() {
            match (b, start) {
                (0, Some(s)) => {
                    out.push((s as u32, i as u32));
                    start = None;
                }
                (0, None) => {}
                (_, None) if i > 0 && block[i - 1] == 0 => start = Some(i),
                _ => {}
            }
        }
        NameStarts(out)
    }

    /// The range of the name starting at `offset`, if one does.
    pub fn at(&self, offset: u32) -> Option<Range<usize>> {
        let i = self.0.binary_search_by_key(&offset, |n| n.0).ok()?;
        let (start, end) = self.0[i];
        Some(start as usize..end as usize)
    }
}

/// The names of a name block, in order (its empty strings dropped, as the public parser
/// does).
pub fn names(block: &[u8]) -> Vec<&[u8]> {
    block.split(|&b| b == 0).filter(|s| !s.is_empty()).collect()
}

/// One technique: its name and the passes it owns (indices into [`Layout::passes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Technique {
    pub name_offset: u32,
    pub name: Vec<u8>,
    pub passes: Range<usize>,
}

/// A 24-byte pass record (seed, `sgd2.md` §5.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pass {
    /// Offset of the record inside the region.
    pub at: usize,
    /// Per stage, the 1-based position in the effect's list; 0 = none.
    pub programs: [u8; 6],
    pub rasterizer: u8,
    pub depth_stencil: u8,
    pub blend: u8,
}

/// The technique, pass and state tables of one effect, as found in its region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Offset of the technique count inside the region.
    pub at: usize,
    /// Offset just past the sampler table.
    pub end: usize,
    pub techniques: Vec<Technique>,
    pub passes: Vec<Pass>,
    /// Per state kind, where its records lie inside the region.
    pub states: [Range<usize>; 4],
}

impl Layout {
    /// Record `i` of state table `kind` (0 rasterizer … 3 sampler).
    pub fn state<'a>(&self, region: &'a [u8], kind: usize, i: usize) -> &'a [u8] {
        let len = STATE_LENS[kind];
        let start = self.states[kind].start + i * len;
        &region[start..start + len]
    }

    pub fn state_count(&self, kind: usize) -> usize {
        self.states[kind].len() / STATE_LENS[kind]
    }
}

/// The outcome of looking for the layout in a region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    Found(Layout),
    Undecoded(String),
}

/// A small cursor over the region for one candidate; `None` as soon as a rule fails.
struct Probe<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Steps left for the whole search (see [`find`]).
    budget: &'a mut usize,
}

impl Probe<'_> {
    /// Spend one step; `None` once the search's budget is gone.
    fn step(&mut self) -> Option<()> {
        *self.budget = self.budget.checked_sub(1)?;
        Some(())
    }

    fn u32(&mut self) -> Option<u32> {
        self.step()?;
        let v = u32_at(self.bytes, self.at)?;
        self.at += 4;
        Some(v)
    }

    /// A count of records of `each` bytes that all fit in what is left.
    fn count(&mut self, each: usize) -> Option<usize> {
        let n = self.u32()? as usize;
        (n <= (self.bytes.len() - self.at) / each).then_some(n)
    }

    fn table(&mut self, each: usize) -> Option<Range<usize>> {
        let n = self.count(each)?;
        let range = self.at..self.at + n * each;
        self.at = range.end;
        Some(range)
    }
}

/// The layout starting at `at`, if every rule holds there.
fn probe(
    region: &[u8],
    at: usize,
    lists: [usize; 6],
    block: &[u8],
    names: &NameStarts,
    budget: &mut usize,
) -> Option<Layout> {
    let mut p = Probe {
        bytes: region,
        at,
        budget,
    };
    let count = p.count(8)?;
    if count == 0 {
        return None;
    }
    let mut techniques = Vec::with_capacity(count);
    let mut total = 0usize;
    for _ in 0..count {
        let name_offset = p.u32()?;
        let passes = p.u32()? as usize;
        let name = names.at(name_offset)?;
        if passes == 0 || passes > region.len() / PASS_LEN {
            return None;
        }
        techniques.push(Technique {
            name_offset,
            name: block[name].to_vec(),
            passes: total..total + passes,
        });
        total += passes;
    }
    let pass_count = p.count(PASS_LEN)?;
    if pass_count != total {
        return None;
    }
    let mut passes = Vec::with_capacity(pass_count);
    for _ in 0..pass_count {
        p.step()?;
        let rec = &region[p.at..p.at + PASS_LEN];
        let mut programs = [0u8; 6];
        programs.copy_from_slice(&rec[..6]);
        if programs.iter().all(|&x| x == 0)
            || programs
                .iter()
                .zip(lists)
                .any(|(&pos, len)| pos as usize > len)
        {
            return None;
        }
        passes.push(Pass {
            at: p.at,
            programs,
            rasterizer: rec[8],
            depth_stencil: rec[9],
            blend: rec[10],
        });
        p.at += PASS_LEN;
    }
    let mut states: [Range<usize>; 4] = Default::default();
    for (kind, table) in states.iter_mut().enumerate() {
        *table = p.table(STATE_LENS[kind])?;
    }
    let count_of = |kind: usize| states[kind].len() / STATE_LENS[kind];
    if passes.iter().any(|pass| {
        pass.rasterizer as usize >= count_of(0)
            || pass.depth_stencil as usize >= count_of(1)
            || pass.blend as usize >= count_of(2)
    }) {
        return None;
    }
    Some(Layout {
        at,
        end: p.at,
        techniques,
        passes,
        states,
    })
}

/// Steps the search may take per byte of region: a real region costs a few per offset,
/// a region built so that every offset reads deep into a table cannot make the search
/// quadratic.
const STEPS_PER_BYTE: usize = 32;

/// Look for the layout at every offset of the region; decode it only where exactly one
/// offset validates.
pub fn find(region: &[u8], lists: [usize; 6], block: &[u8]) -> Decoded {
    let names = NameStarts::new(block);
    let mut budget = STEPS_PER_BYTE * region.len() + 4096;
    let mut found: Vec<Layout> = Vec::new();
    let mut others = 0usize;
    for at in 0..region.len().saturating_sub(3) {
        if budget == 0 {
            return Decoded::Undecoded(format!(
                "the search for the technique table stopped at region offset {at:#x}: it \
                 took more than {STEPS_PER_BYTE} steps per byte"
            ));
        }
        if let Some(layout) = probe(region, at, lists, block, &names, &mut budget) {
            if found.is_empty() {
                found.push(layout);
            } else {
                others += 1;
                if found.len() < 4 {
                    found.push(layout);
                }
            }
        }
    }
    match found.len() {
        0 => Decoded::Undecoded(
            "no technique/pass/state structure validates in the region before proplst \
             (see docs/sgd2-layout.md)"
                .into(),
        ),
        1 => Decoded::Found(found.pop().expect("one")),
        _ => {
            let at: Vec<String> = found.iter().map(|l| format!("{:#x}", l.at)).collect();
            Decoded::Undecoded(format!(
                "{} structures validate (at region offsets {}{}); ambiguous, so none is shown",
                others + 1,
                at.join(", "),
                if others + 1 > found.len() {
                    ", …"
                } else {
                    ""
                }
            ))
        }
    }
}

fn flag(b: u8) -> Value {
    match b {
        0 => Value::Bool(false),
        1 => Value::Bool(true),
        n => json!(n),
    }
}

fn float(v: f32) -> Value {
    serde_json::Number::from_f64(v as f64)
        .map(Value::Number)
        .unwrap_or_else(|| Value::String(format!("{v}")))
}

/// A rasterizer record (16 bytes, `sgd2.md` §5.4).
pub fn rasterizer_json(index: usize, r: &[u8]) -> Value {
    json!({
        "index": index,
        "fill_mode": d3d12::FILL_MODE.name(r[0] as u32),
        "cull_mode": d3d12::CULL_MODE.name(r[1] as u32),
        "front_counter_clockwise": flag(r[2]),
        "unknown_03_07": hex(&r[3..8]),
        "polygon_offset": float(f32_at(r, 8)),
        "unknown_0c_0f": hex(&r[12..16]),
    })
}

fn stencil_face(f: &[u8]) -> Value {
    json!({
        "fail_op": d3d12::STENCIL_OP.name(f[0] as u32),
        "depth_fail_op": d3d12::STENCIL_OP.name(f[1] as u32),
        "pass_op": d3d12::STENCIL_OP.name(f[2] as u32),
        "func": d3d12::COMPARISON_FUNC.name(f[3] as u32),
    })
}

/// A depth-stencil record (24 bytes).
pub fn depth_stencil_json(index: usize, d: &[u8]) -> Value {
    json!({
        "index": index,
        "depth_enable": flag(d[0]),
        "depth_write_mask": d3d12::DEPTH_WRITE_MASK.name(d[1] as u32),
        "depth_func": d3d12::COMPARISON_FUNC.name(d[2] as u32),
        "stencil_enable": flag(d[3]),
        "stencil_read_mask": format!("{:#04x}", d[4]),
        "stencil_write_mask": format!("{:#04x}", d[5]),
        "front_face": stencil_face(&d[6..10]),
        "back_face": stencil_face(&d[10..14]),
        "unknown_0e_17": hex(&d[14..24]),
    })
}

/// A blend record (68 bytes: four unknown bytes, eight render-target blends).
pub fn blend_json(index: usize, b: &[u8]) -> Value {
    let targets: Vec<Value> = b[4..68]
        .chunks_exact(8)
        .map(|t| {
            json!({
                "blend_enable": flag(t[0]),
                "src_blend": d3d12::BLEND.name(t[1] as u32),
                "dest_blend": d3d12::BLEND.name(t[2] as u32),
                "blend_op": d3d12::BLEND_OP.name(t[3] as u32),
                "src_blend_alpha": d3d12::BLEND.name(t[4] as u32),
                "dest_blend_alpha": d3d12::BLEND.name(t[5] as u32),
                "blend_op_alpha": d3d12::BLEND_OP.name(t[6] as u32),
                "render_target_write_mask": d3d12::color_write_mask(t[7]),
            })
        })
        .collect();
    json!({
        "index": index,
        "unknown_00_03": hex(&b[..4]),
        "render_targets": targets,
    })
}

/// A sampler record (36 bytes).
pub fn sampler_json(index: usize, s: &[u8]) -> Value {
    json!({
        "index": index,
        "filter": d3d12::FILTER.name(s[0] as u32),
        "address_u": d3d12::TEXTURE_ADDRESS_MODE.name(s[1] as u32),
        "address_v": d3d12::TEXTURE_ADDRESS_MODE.name(s[2] as u32),
        "address_w": d3d12::TEXTURE_ADDRESS_MODE.name(s[3] as u32),
        "mip_lod_bias": float(f32_at(s, 4)),
        "max_anisotropy": s[8],
        "comparison_func": d3d12::COMPARISON_FUNC.name(s[9] as u32),
        "retained_0a_1f": hex(&s[10..32]),
        "max_lod": float(f32_at(s, 32)),
    })
}

/// Whether `name` looks like a pass name to the public parser: `p` or `P`, digits, and
/// optionally `_` and word characters.
fn is_pass_name(name: &[u8]) -> bool {
    let Some((&first, rest)) = name.split_first() else {
        return false;
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let tail = &rest[digits..];
    (first == b'p' || first == b'P')
        && digits > 0
        && (tail.is_empty()
            || (tail[0] == b'_'
                && tail.len() > 1
                && tail[1..]
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'_')))
}

/// Where the trailing run of pass names of a name block starts (the public parser's
/// reading: the pass names every technique shares).
pub fn pass_run(names: &[&[u8]]) -> usize {
    names.len() - names.iter().rev().take_while(|n| is_pass_name(n)).count()
}

/// The public parser's reading of techniques from the name block alone: a leading run of
/// names that the proplst bindings reference, a trailing run of pass names shared by every
/// technique, the technique names between (`sgd2.md` §5.3).
pub fn public_techniques(names: &[&[u8]], referenced: &[u32]) -> Map<String, Value> {
    let pass_start = pass_run(names);
    let passes: Vec<String> = names[pass_start..].iter().map(|n| text(n)).collect();
    let globals = names[..pass_start]
        .iter()
        .take_while(|n| referenced.contains(&joaat::joaat_lower(n)))
        .count();
    let techniques = &names[globals..pass_start];
    let mut out = Map::new();
    if techniques.is_empty() {
        return out;
    }
    if !passes.is_empty() {
        for t in techniques {
            out.insert(text(t), json!(passes));
        }
    } else if techniques.len() >= 2 {
        let rest: Vec<String> = techniques[1..].iter().map(|n| text(n)).collect();
        out.insert(text(techniques[0]), json!(rest));
    } else {
        out.insert(text(techniques[0]), json!(["p0"]));
    }
    out
}

/// A proplst section (`sgd2.md` §5.5). Where its bindings start is read from its size
/// and binding count (the public decoder reads them at 0x18, its encoder writes them at
/// 0x20); a section that fits neither is shown raw.
pub fn section_json(index: usize, body: &[u8], names: &Resolver<'_>) -> Value {
    let mut out = Map::new();
    out.insert("index".into(), json!(index));
    out.insert("size".into(), json!(body.len()));
    if body.len() < 24 {
        out.insert(
            "undecoded".into(),
            json!("shorter than the 24-byte section header"),
        );
        out.insert("hex".into(), json!(hex(body)));
        return Value::Object(out);
    }
    let hash = u64::from_le_bytes(body[..8].try_into().expect("8 bytes"));
    let word = u32_at(body, 8).unwrap_or(0);
    let count = (word & 0xFF) as usize;
    out.insert("entry_hash".into(), json!(format!("{hash:#018x}")));
    out.insert("binding_count".into(), json!(count));
    out.insert("flags1".into(), json!(format!("{:#08x}", word >> 8)));
    out.insert("flags2".into(), json!(hex32(u32_at(body, 12).unwrap_or(0))));
    let at = [0x18usize, 0x20]
        .into_iter()
        .find(|&at| body.len() == at + 8 * count);
    match at {
        Some(at) => {
            out.insert("bindings_at".into(), json!(format!("{at:#x}")));
            let bindings: Vec<Value> = body[at..]
                .chunks_exact(8)
                .map(|b| {
                    let h = u32_at(b, 0).unwrap_or(0);
                    let tag = u32_at(b, 4).unwrap_or(0);
                    let name = if h == joaat::joaat(b"proplst") {
                        Some(("proplst".to_string(), Match::Lowercase))
                    } else {
                        names.resolve(h).map(|(n, how)| (text(n), how))
                    };
                    json!({
                        "name_hash": hex32(h),
                        "name": name.as_ref().map(|n| n.0.clone()),
                        "match": name.map(|n| n.1),
                        "type": resource_type(tag as u16).0,
                        "type_code": format!("{:#06x}", tag & 0xFFFF),
                        "slot": (tag >> 16) & 0xFF,
                        "flags": format!("{:#04x}", tag >> 24),
                    })
                })
                .collect();
            out.insert("bindings".into(), json!(bindings));
        }
        None => {
            out.insert(
                "undecoded".into(),
                json!(format!(
                    "{count} bindings fit neither at 0x18 nor at 0x20 in {} bytes",
                    body.len()
                )),
            );
        }
    }
    out.insert("hex".into(), json!(hex(body)));
    Value::Object(out)
}

/// The name hashes the proplst sections bind (what the public parser calls referenced).
pub fn referenced_hashes(sections: &[&[u8]]) -> Vec<u32> {
    let mut out = Vec::new();
    for body in sections {
        if body.len() < 24 {
            continue;
        }
        let count = body[8] as usize;
        if let Some(at) = [0x18usize, 0x20]
            .into_iter()
            .find(|&at| body.len() == at + 8 * count)
        {
            out.extend(body[at..].chunks_exact(8).filter_map(|b| u32_at(b, 0)));
        }
    }
    out
}
