//! vkd3d's `.shader_test` files (Wine's `tests/hlsl/`), read and run as vkd3d's Direct3D 9
//! runner runs them, on bytecode the caller supplies: Microsoft's goldens, or later what our
//! compiler makes of the same HLSL.
//!
//! [`parse`] splits a file into its `[…]` sections. [`run`] walks them in order for one
//! shader model (2 or 3) like `shader_runner.c`: `[require]` decides which sections apply,
//! shader sections are numbered K = 1, 2, … in file order (`[pixel shader …]`, `[vertex
//! shader …]`, `[effect …]`, whether they apply or not, as the corpus names
//! `NAME.sectionK.PROFILE.bin`), `[srv N]`/`[sampler N]`/`[input layout]`/`[vb N]` bind
//! resources, and each `[test]` line sets uniforms, draws and probes. The facts of the D3D9
//! runner this follows: uniforms are one float array written from offset 0 to `c0`… of both
//! shaders (int and uint values as their bits, gaps filled with `0x7f7f7f7f`); `draw quad`
//! is one triangle (−2,−2), (−2,4), (4,−2) over a 640×480 float render target, with a
//! pass-through vertex shader unless a `[vertex shader]` was given; textures are float
//! (`r32-float` reads back as (r, 1, 1, 1), D3D9's R32F); a bound texture without a
//! `[sampler]` has D3D9's default states (wrap, point, no mips), a `[sampler]` starts from
//! point filtering and clamp; `probe` compares within the given ulps (0 by default).
//! `todo(…)` marks only what vkd3d gets wrong: the expected values are Windows' all the same.
//!
//! Render states modelled as D3D9 applies them: `alpha test` (against the reference as a
//! byte), `clip-plane`, `point-size` and `point-sprite`, `clear rtv`; draws are `draw quad`,
//! `draw triangle list|strip N` and `draw point list N` from `[input layout]`/`[vb N]`. A
//! probe after any other state (or an integer render target, a draw whose shader cannot be
//! had) is [`Outcome::Excluded`] with the reason, never guessed.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::run::{
    self, Address, Bindings, Draw, Filter, OutputRegister, Outputs, PointState, Program, Sampler,
    Semantic, Texture, TextureKind, Topology,
};

/// The render target size of vkd3d's runner.
pub const WIDTH: u32 = 640;
pub const HEIGHT: u32 = 480;

/// One `[…]` section: its header (without brackets), the line it starts on, its lines
/// (number, text) without comments (`%`) and blank lines, and for shader sections their
/// number K.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub header: String,
    pub line: usize,
    pub lines: Vec<(usize, String)>,
    pub shader_index: Option<usize>,
}

/// A parsed `.shader_test`.
#[derive(Debug, Clone, PartialEq)]
pub struct ShaderTest {
    pub sections: Vec<Section>,
}

/// Splits `text` into sections. Lines before the first section are ignored, as vkd3d
/// ignores them.
pub fn parse(text: &str) -> ShaderTest {
    let mut sections: Vec<Section> = Vec::new();
    let mut shaders = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if let Some(rest) = raw.strip_prefix('[') {
            let header = rest.trim_end().trim_end_matches(']').to_string();
            let is_shader = ["pixel shader", "vertex shader", "effect"]
                .iter()
                .any(|k| header.starts_with(k));
            let shader_index = is_shader.then(|| {
                shaders += 1;
                shaders
            });
            sections.push(Section {
                header,
                line,
                lines: Vec::new(),
                shader_index,
            });
            continue;
        }
        let Some(s) = sections.last_mut() else {
            continue;
        };
        let is_shader = s.shader_index.is_some();
        if !is_shader && (raw.starts_with('%') || raw.trim().is_empty()) {
            continue;
        }
        s.lines.push((line, raw.to_string()));
    }
    ShaderTest { sections }
}

/// What became of one probe.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Pass,
    /// The first pixel that differs, and its value.
    Fail {
        pixel: (u32, u32),
        actual: [f32; 4],
    },
    /// The probe cannot be checked here, and why.
    Excluded(String),
}

/// One probe line, for one shader model.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeResult {
    pub line: usize,
    /// `ps_2_0` or `ps_3_0`: the profile of the pixel shader drawn.
    pub profile: String,
    /// K of the pixel shader section drawn, if any.
    pub section: Option<usize>,
    /// Left, top, right, bottom (exclusive).
    pub rect: [u32; 4],
    pub expected: [f32; 4],
    /// Components compared: 4 for `rgba`, 2 for `rg`, 1 for `r`.
    pub components: usize,
    pub ulps: u32,
    /// Marked `todo` for this model (vkd3d gets it wrong; Windows' value is expected).
    pub todo: bool,
    pub outcome: Outcome,
}

/// Where the bytecode of shader section K comes from for a profile (`ps_3_0`, `vs_2_0`).
/// `Err(reason)` when there is none (Microsoft refused it, it was not compiled).
pub trait BytecodeSource {
    fn bytecode(&self, section: usize, profile: &str) -> Result<Vec<u8>, String>;
}

impl<F: Fn(usize, &str) -> Result<Vec<u8>, String>> BytecodeSource for F {
    fn bytecode(&self, section: usize, profile: &str) -> Result<Vec<u8>, String> {
        self(section, profile)
    }
}

/// Does a qualifier argument list (`sm<4 | msl`, `sm>=4 & sm<6`) hold for shader model
/// `sm` (2 or 3) on the D3D9 runner (no tags: `glsl`, `msl`, `d3d12`, … never hold)?
fn qualifier_holds(args: &str, sm: u32) -> bool {
    args.split('|').any(|conj| {
        conj.split('&').all(|term| match term.trim() {
            "sm>=4" => sm >= 4,
            "sm>=6" => sm >= 6,
            "sm<4" => sm < 4,
            "sm<6" => sm < 6,
            _ => false,
        })
    })
}

/// Strips a leading `word` or `word(args)`: `Some(holds)` (no arguments: true).
fn take_qualified<'a>(line: &'a str, word: &str, sm: u32) -> Option<(bool, &'a str)> {
    let rest = line.strip_prefix(word)?;
    if let Some(args) = rest.strip_prefix('(') {
        let end = args.find(')')?;
        return Some((
            qualifier_holds(&args[..end], sm),
            args[end + 1..].trim_start(),
        ));
    }
    if rest.is_empty() || rest.starts_with(char::is_whitespace) {
        return Some((true, rest.trim_start()));
    }
    None
}

#[derive(Clone)]
struct Stage {
    section: usize,
    program: Result<Arc<Program>, String>,
}

#[derive(Clone, Copy)]
struct Element {
    slot: u32,
    floats: usize,
    semantic: Semantic,
}

/// One draw and what it needs to be shaded again for another pixel.
struct DrawRecord {
    vs: Option<Arc<Program>>,
    ps: Arc<Program>,
    bindings: Bindings,
    vertices: Vec<BTreeMap<Semantic, [f32; 4]>>,
    topology: Topology,
    alpha_test: Option<(String, f32)>,
    clip_planes: Vec<[f32; 4]>,
    points: PointState,
    cache: BTreeMap<(u32, u32), Option<Outputs>>,
}

struct State {
    sm: u32,
    pixel_profile: String,
    applies: bool,
    skip_reason: Option<String>,
    ps: Option<Stage>,
    vs: Option<Stage>,
    uniforms: Vec<u32>,
    textures: BTreeMap<u32, Texture>,
    samplers: BTreeMap<u32, Sampler>,
    layout: Vec<Element>,
    buffers: BTreeMap<u32, Vec<f32>>,
    alpha_test: Option<(String, f32)>,
    clip_planes: BTreeMap<u32, [f32; 4]>,
    points: PointState,
    clear: BTreeMap<u32, [f32; 4]>,
    draws: Vec<DrawRecord>,
    /// Why the last draw could not be made (its probes are excluded).
    draw_failed: Option<String>,
    /// Why probes after the last draw cannot match (a state D3D9 has but this runner
    /// does not model).
    unmodelled: Option<String>,
    results: Vec<ProbeResult>,
}

/// Runs every `[test]` block of `test` for shader model `sm` (2 or 3: profiles `ps_N_0` and
/// `vs_N_0`) with bytecode from `source`, returning each probe that applies (those under a
/// `[require]` that rules the model out are not listed; those after a shader that cannot
/// be had are [`Outcome::Excluded`] with the reason).
pub fn run(test: &ShaderTest, sm: u32, source: &dyn BytecodeSource) -> Vec<ProbeResult> {
    let (ps, vs) = (format!("ps_{sm}_0"), format!("vs_{sm}_0"));
    run_profiles(test, sm, &ps, &vs, source)
}

/// [`run`] with the profiles named: `sm` (1, 2 or 3) decides `[require]` and `sm<4`-style
/// qualifiers, `pixel` and `vertex` the profiles asked of `source` (`ps_1_4`, `vs_1_1`).
pub fn run_profiles(
    test: &ShaderTest,
    sm: u32,
    pixel_profile: &str,
    vertex_profile: &str,
    source: &dyn BytecodeSource,
) -> Vec<ProbeResult> {
    let mut st = State {
        sm,
        pixel_profile: pixel_profile.to_string(),
        applies: true,
        skip_reason: None,
        ps: None,
        vs: None,
        uniforms: Vec::new(),
        textures: BTreeMap::new(),
        samplers: BTreeMap::new(),
        layout: Vec::new(),
        buffers: BTreeMap::new(),
        alpha_test: None,
        clip_planes: BTreeMap::new(),
        points: PointState::default(),
        clear: BTreeMap::new(),
        draws: Vec::new(),
        draw_failed: None,
        unmodelled: None,
        results: Vec::new(),
    };
    for section in &test.sections {
        let h = section.header.as_str();
        if h == "require" {
            st.applies = true;
            st.skip_reason = None;
            for (_, l) in &section.lines {
                require(&mut st, l.trim());
            }
        } else if let Some(k) = section.shader_index {
            let pixel = h.starts_with("pixel shader");
            let vertex = h.starts_with("vertex shader");
            if !(pixel || vertex) {
                continue;
            }
            let mut expect_fail = false;
            let mut rest = h
                .trim_start_matches("pixel shader")
                .trim_start_matches("vertex shader")
                .trim();
            while !rest.is_empty() {
                let before = rest;
                for word in ["todo", "fail", "notimpl"] {
                    if let Some((holds, r)) = take_qualified(rest, word, sm) {
                        if word != "todo" && holds {
                            expect_fail = true;
                        }
                        rest = r;
                    }
                }
                if rest == before {
                    break;
                }
            }
            if !st.applies {
                continue;
            }
            let profile = if pixel { pixel_profile } else { vertex_profile };
            let program = if expect_fail {
                Err(format!(
                    "section {k} is expected to fail to compile for {profile}"
                ))
            } else {
                source
                    .bytecode(k, profile)
                    .and_then(|b| {
                        Program::new(&b).map_err(|e| format!("section {k} {profile}: {e}"))
                    })
                    .map(Arc::new)
            };
            let stage = Some(Stage {
                section: k,
                program,
            });
            if pixel {
                st.ps = stage;
            } else {
                st.vs = stage;
            }
        } else if let Some(slot) = number_in(h, "srv") {
            if st.applies {
                texture(&mut st, slot, &section.lines);
            }
        } else if let Some(slot) = number_in(h, "sampler") {
            if st.applies {
                sampler(&mut st, slot, &section.lines);
            }
        } else if h == "input layout" {
            st.layout.clear();
            for (_, l) in &section.lines {
                if let Some(e) = element(l) {
                    st.layout.push(e);
                }
            }
        } else if let Some(slot) = number_in(h, "vb") {
            let data = section
                .lines
                .iter()
                .flat_map(|(_, l)| {
                    l.split_whitespace()
                        .filter_map(|w| w.parse::<f32>().ok())
                        .collect::<Vec<_>>()
                })
                .collect();
            st.buffers.insert(slot, data);
        } else if h == "test" {
            if !st.applies {
                continue;
            }
            for (line, text) in &section.lines {
                directive(&mut st, *line, text.trim());
            }
        }
    }
    st.results
}

fn number_in(header: &str, word: &str) -> Option<u32> {
    header.strip_prefix(word)?.trim().parse().ok()
}

fn require(st: &mut State, line: &str) {
    let model = |v: &str| v.trim().parse::<f32>().ok();
    let sm = st.sm as f32;
    if let Some(v) = line.strip_prefix("shader model >=") {
        if model(v).map_or(true, |m| sm < m) {
            st.applies = false;
        }
    } else if let Some(v) = line.strip_prefix("shader model <") {
        if model(v).map_or(true, |m| sm >= m) {
            st.applies = false;
        }
    } else if line.starts_with("options:") {
        // The goldens were compiled with the options (index.json's flags).
    } else if line == "clip-planes" || line == "point-size" {
        // The D3D9 runner has both.
    } else {
        st.applies = false;
        st.skip_reason = Some(format!("requires {line}"));
    }
}

fn texture(st: &mut State, slot: u32, lines: &[(usize, String)]) {
    let (mut w, mut h, mut levels, mut r32) = (1u32, 1u32, 1usize, false);
    let mut data = Vec::new();
    for (_, l) in lines {
        let l = l.trim();
        if let Some(s) = l.strip_prefix("size") {
            let nums: Vec<u32> = s
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|x| x.parse().ok())
                .collect();
            if let [_, a, b] | [a, b] = nums[..] {
                (w, h) = (a, b);
            }
        } else if let Some(s) = l.strip_prefix("levels") {
            levels = s.trim().parse().unwrap_or(1);
        } else if let Some(s) = l.strip_prefix("format") {
            r32 = s.trim() == "r32-float";
        } else {
            data.extend(l.split_whitespace().filter_map(|x| x.parse::<f32>().ok()));
        }
    }
    let texels: Vec<[f32; 4]> = if r32 {
        data.iter().map(|&r| [r, 1.0, 1.0, 1.0]).collect()
    } else {
        data.chunks(4)
            .map(|c| std::array::from_fn(|i| c.get(i).copied().unwrap_or(0.0)))
            .collect()
    };
    let mut t = Texture {
        kind: TextureKind::TwoD,
        width: w,
        height: h,
        depth: 1,
        levels: Vec::new(),
    };
    let mut at = 0;
    for level in 0..levels {
        let (lw, lh, _) = t.level_size(level);
        let n = (lw * lh) as usize;
        let mut l = texels
            .get(at..(at + n).min(texels.len()))
            .unwrap_or(&[])
            .to_vec();
        l.resize(n, [0.0; 4]);
        t.levels.push(l);
        at += n;
    }
    st.textures.insert(slot, t);
}

fn sampler(st: &mut State, slot: u32, lines: &[(usize, String)]) {
    let mut s = Sampler::new(Texture::two_d(1, 1, vec![[0.0; 4]]).unwrap_or(Texture {
        kind: TextureKind::TwoD,
        width: 1,
        height: 1,
        depth: 1,
        levels: vec![vec![[0.0; 4]]],
    }));
    s.address = [Address::Clamp; 3];
    s.mip_filter = Some(Filter::Point);
    for (_, l) in lines {
        let words: Vec<&str> = l.split_whitespace().collect();
        match words.first() {
            Some(&"filter") => {
                let f = |w: Option<&&str>| {
                    if w == Some(&"linear") {
                        Filter::Linear
                    } else {
                        Filter::Point
                    }
                };
                s.min_filter = f(words.get(1));
                s.mag_filter = f(words.get(2));
                s.mip_filter = Some(f(words.get(3)));
            }
            Some(&"address") => {
                for i in 0..3 {
                    s.address[i] = match words.get(i + 1).copied() {
                        Some("wrap") => Address::Wrap,
                        Some("mirror") => Address::Mirror,
                        Some("border") => Address::Border,
                        Some("mirror_once") => Address::MirrorOnce,
                        _ => Address::Clamp,
                    };
                }
            }
            _ => {}
        }
    }
    st.samplers.insert(slot, s);
}

fn semantic_of(name: &str, index: u8) -> Option<Semantic> {
    let usage = match name.to_ascii_lowercase().as_str() {
        "position" | "sv_position" => Semantic::POSITION,
        "texcoord" => Semantic::TEXCOORD,
        "color" => Semantic::COLOR,
        "psize" => Semantic::PSIZE,
        _ => return None,
    };
    Some(Semantic::new(usage, index))
}

/// `0 r32g32-float TEXCOORD 2`.
fn element(line: &str) -> Option<Element> {
    let w: Vec<&str> = line.split_whitespace().collect();
    let slot = w.first()?.parse().ok()?;
    let floats = match *w.get(1)? {
        "r32-float" => 1,
        "r32g32-float" => 2,
        "r32g32b32-float" => 3,
        "r32g32b32a32-float" => 4,
        _ => return None,
    };
    let index = w.get(3).and_then(|i| i.parse().ok()).unwrap_or(0);
    Some(Element {
        slot,
        floats,
        semantic: semantic_of(w.get(2)?, index)?,
    })
}

fn directive(st: &mut State, line: usize, text: &str) {
    let mut rest = text;
    let mut todo = false;
    loop {
        if let Some((holds, r)) = take_qualified(rest, "todo", st.sm) {
            todo |= holds;
            rest = r;
        } else if let Some((_, r)) = take_qualified(rest, "bug", st.sm) {
            rest = r;
        } else if let Some((holds, r)) = take_qualified(rest, "if", st.sm) {
            if !holds {
                return;
            }
            rest = r;
        } else {
            break;
        }
    }
    let words: Vec<&str> = rest.split_whitespace().collect();
    match words.as_slice() {
        ["uniform", offset, ty, values @ ..] => {
            let Ok(offset) = offset.parse::<usize>() else {
                return;
            };
            let bits: Vec<u32> = match *ty {
                "float4" | "float" => values
                    .iter()
                    .filter_map(|v| v.parse::<f32>().ok())
                    .map(f32::to_bits)
                    .collect(),
                "int4" | "int" => values
                    .iter()
                    .filter_map(|v| v.parse::<i32>().ok())
                    .map(|i| i as u32)
                    .collect(),
                "uint4" | "uint" => values
                    .iter()
                    .filter_map(|v| v.parse::<u32>().ok())
                    .collect(),
                _ => {
                    st.unmodelled = Some(format!("uniform type {ty}"));
                    return;
                }
            };
            let want = if ty.ends_with('4') { 4 } else { 1 };
            let bits = &bits[..bits.len().min(want)];
            let end = (offset + bits.len()).div_ceil(4) * 4;
            if st.uniforms.len() < end {
                st.uniforms.resize(end, 0x7f7f_7f7f);
            }
            st.uniforms[offset..offset + bits.len()].copy_from_slice(bits);
        }
        ["draw", "quad", ..] => {
            st.layout = vec![Element {
                slot: 0,
                floats: 2,
                semantic: Semantic::new(Semantic::POSITION, 0),
            }];
            st.buffers.insert(0, vec![-2.0, -2.0, -2.0, 4.0, 4.0, -2.0]);
            make_draw(st, Topology::TriangleList, 3);
        }
        ["draw", "point", "list", count, ..] => {
            make_draw(st, Topology::PointList, count.parse().unwrap_or(0));
        }
        ["point-size", size, rest @ ..] => {
            let v: Vec<f32> = rest.iter().filter_map(|x| x.parse().ok()).collect();
            st.points.size = size.parse().unwrap_or(1.0);
            if let [min, max] = v[..] {
                st.points.min = min;
                st.points.max = max;
            }
        }
        ["point-sprite", on] => st.points.sprite = *on == "on",
        ["draw", "triangle", kind, count, ..] => {
            let topology = if *kind == "strip" {
                Topology::TriangleStrip
            } else {
                Topology::TriangleList
            };
            make_draw(st, topology, count.parse().unwrap_or(0));
        }
        ["draw", ..] => {
            st.draw_failed = Some(format!("'{rest}' is not modelled"));
        }
        ["clear", "rtv", slot, v @ ..] => {
            let v: Vec<f32> = v.iter().filter_map(|x| x.parse().ok()).collect();
            if let (Ok(slot), &[r, g, b, a]) = (slot.parse(), &v[..]) {
                st.clear.insert(slot, [r, g, b, a]);
                st.draws.clear();
            }
        }
        ["alpha", "test", func @ ..] => {
            let func = func.join(" ");
            let (name, reference) = match func.rsplit_once(' ') {
                Some((n, r)) if r.parse::<f32>().is_ok() => {
                    (n.to_string(), r.parse().unwrap_or(0.0))
                }
                _ => (func.clone(), 0.0),
            };
            st.alpha_test = (name != "always").then_some((name, reference));
        }
        _ if rest.starts_with("probe") => probe(st, line, rest, todo),
        ["clip-plane", n, rest @ ..] => {
            let Ok(n) = n.parse::<u32>() else { return };
            let v: Vec<f32> = rest.iter().filter_map(|x| x.parse().ok()).collect();
            match v[..] {
                [a, b, c, d] => {
                    st.clip_planes.insert(n, [a, b, c, d]);
                }
                _ => {
                    st.clip_planes.remove(&n);
                }
            }
        }
        [word, ..] => {
            st.unmodelled = Some(format!("'{word}' state is not modelled"));
        }
        [] => {}
    }
}

fn make_draw(st: &mut State, topology: Topology, count: usize) {
    st.draw_failed = None;
    let ps = match &st.ps {
        None => {
            st.draw_failed = Some("no pixel shader".into());
            return;
        }
        Some(Stage {
            program: Err(e), ..
        }) => {
            st.draw_failed = Some(e.clone());
            return;
        }
        Some(Stage { program: Ok(p), .. }) => p.clone(),
    };
    let vs = match &st.vs {
        None => None,
        Some(Stage {
            program: Err(e), ..
        }) => {
            st.draw_failed = Some(e.clone());
            return;
        }
        Some(Stage { program: Ok(p), .. }) => Some(p.clone()),
    };
    let mut bindings = Bindings::default();
    for (i, c) in st.uniforms.chunks(4).enumerate() {
        bindings
            .constants
            .float
            .insert(i as u32, std::array::from_fn(|j| f32::from_bits(c[j])));
    }
    for (slot, t) in &st.textures {
        let mut s = st
            .samplers
            .get(slot)
            .cloned()
            .unwrap_or_else(|| Sampler::new(t.clone()));
        s.texture = Arc::new(t.clone());
        if !st.samplers.contains_key(slot) {
            s.mip_filter = None;
        }
        bindings.samplers.insert(*slot, s);
    }
    let mut vertices = Vec::new();
    for v in 0..count {
        let mut attrs = BTreeMap::new();
        let mut offsets: BTreeMap<u32, usize> = BTreeMap::new();
        for e in &st.layout {
            let stride: usize = st
                .layout
                .iter()
                .filter(|x| x.slot == e.slot)
                .map(|x| x.floats)
                .sum();
            let off = offsets.entry(e.slot).or_insert(0);
            let base = v * stride + *off;
            *off += e.floats;
            let data = st.buffers.get(&e.slot).map(Vec::as_slice).unwrap_or(&[]);
            let mut value = [0.0, 0.0, 0.0, 1.0];
            for (c, slot) in value.iter_mut().enumerate().take(e.floats) {
                *slot = data.get(base + c).copied().unwrap_or(0.0);
            }
            attrs.insert(e.semantic, value);
        }
        vertices.push(attrs);
    }
    st.draws.push(DrawRecord {
        vs,
        ps,
        bindings,
        vertices,
        topology,
        alpha_test: st.alpha_test.clone(),
        clip_planes: st.clip_planes.values().copied().collect(),
        points: st.points,
        cache: BTreeMap::new(),
    });
}

fn probe(st: &mut State, line: usize, text: &str, todo: bool) {
    let rest = text.trim_start_matches("probe").trim_start();
    let (target, rest) = match rest.strip_prefix("rtv") {
        Some(r) => {
            let r = r.trim_start();
            let n: String = r.chars().take_while(char::is_ascii_digit).collect();
            (n.parse::<u8>().unwrap_or(0), r[n.len()..].trim_start())
        }
        None => (0, rest),
    };
    let numbers = |s: &str| -> Vec<f32> {
        s.split(|c: char| c == ',' || c.is_whitespace())
            .filter_map(|x| x.parse::<f32>().ok())
            .collect()
    };
    let Some(close) = rest.find(')') else { return };
    let coords = numbers(rest.get(1..close).unwrap_or(""));
    let rect = match coords[..] {
        [x, y] => [x as u32, y as u32, x as u32 + 1, y as u32 + 1],
        [l, t, r, b] => [l as u32, t as u32, r as u32, b as u32],
        [x] => [x as u32, 0, x as u32 + 1, 1],
        _ => return,
    };
    let after = rest[close + 1..].trim_start();
    let (components, after) = if let Some(a) = after.strip_prefix("rgba") {
        (4, a)
    } else if let Some(a) = after.strip_prefix("rg") {
        (2, a)
    } else if let Some(a) = after.strip_prefix("r") {
        (1, a)
    } else {
        (0, after)
    };
    let (expected, ulps) = match after
        .trim_start()
        .strip_prefix('(')
        .and_then(|a| a.split_once(')'))
    {
        Some((vals, tail)) => {
            let v = numbers(vals);
            let mut e = [0.0; 4];
            for (i, x) in v.iter().take(4).enumerate() {
                e[i] = *x;
            }
            (e, tail.trim().parse().unwrap_or(0))
        }
        None => ([0.0; 4], 0),
    };
    let ps_section = st.ps.as_ref().map(|s| s.section);
    let mut result = ProbeResult {
        line,
        profile: st.pixel_profile.clone(),
        section: ps_section,
        rect,
        expected,
        components,
        ulps,
        todo,
        outcome: Outcome::Pass,
    };
    let excluded = if components == 0 || after.starts_with('i') || after.starts_with("ui") {
        Some("an integer render target (D3D9 has none)".to_string())
    } else if let Some(e) = &st.draw_failed {
        Some(format!("the draw could not be made: {e}"))
    } else {
        st.unmodelled.clone()
    };
    if let Some(reason) = excluded {
        result.outcome = Outcome::Excluded(reason);
        st.results.push(result);
        return;
    }
    let pixels: Vec<(u32, u32)> = (rect[1]..rect[3].min(HEIGHT))
        .flat_map(|y| (rect[0]..rect[2].min(WIDTH)).map(move |x| (x, y)))
        .collect();
    match shade(st, &pixels, target) {
        Err(e) => result.outcome = Outcome::Excluded(format!("the interpreter refused: {e}")),
        Ok(values) => {
            for (p, v) in pixels.iter().zip(values) {
                if !(0..components).all(|c| compare(v[c], expected[c], ulps)) {
                    result.outcome = Outcome::Fail {
                        pixel: *p,
                        actual: v,
                    };
                    break;
                }
            }
        }
    }
    st.results.push(result);
}

/// The render target `target` at `pixels` after every draw since the last clear.
fn shade(
    st: &mut State,
    pixels: &[(u32, u32)],
    target: u8,
) -> Result<Vec<[f32; 4]>, run::RunError> {
    let clear = st.clear.get(&(target as u32)).copied().unwrap_or([0.0; 4]);
    let mut values = vec![clear; pixels.len()];
    for d in &mut st.draws {
        let missing: Vec<(u32, u32)> = pixels
            .iter()
            .copied()
            .filter(|p| !d.cache.contains_key(p))
            .collect();
        if !missing.is_empty() {
            let draw = Draw {
                vertex_shader: d.vs.as_deref(),
                pixel_shader: &d.ps,
                vertex_bindings: &d.bindings,
                pixel_bindings: &d.bindings,
                vertices: &d.vertices,
                topology: d.topology,
                clip_planes: &d.clip_planes,
                points: d.points,
                width: WIDTH,
                height: HEIGHT,
            };
            let mut shaded = run::draw(&draw, &missing)?;
            for p in missing {
                d.cache.insert(p, shaded.remove(&p));
            }
        }
        for (p, v) in pixels.iter().zip(values.iter_mut()) {
            let Some(Some(o)) = d.cache.get(p) else {
                continue;
            };
            if o.discarded {
                continue;
            }
            let Some(color) = o.values.get(&OutputRegister::Target(target)) else {
                continue;
            };
            let alpha = o
                .values
                .get(&OutputRegister::Target(0))
                .map_or(0.0, |c| c[3]);
            if let Some((func, reference)) = &d.alpha_test {
                if !alpha_passes(func, alpha, *reference) {
                    continue;
                }
            }
            *v = *color;
        }
    }
    Ok(values)
}

/// D3D9's alpha test: the reference is a byte (`ALPHAREF = ref × 255`), compared with the
/// shader's alpha.
fn alpha_passes(func: &str, alpha: f32, reference: f32) -> bool {
    let r = (reference * 255.0).trunc() / 255.0;
    match func {
        "never" => false,
        "less" => alpha < r,
        "equal" => alpha == r,
        "less equal" => alpha <= r,
        "greater" => alpha > r,
        "not equal" => alpha != r,
        "greater equal" => alpha >= r,
        _ => true,
    }
}

/// vkd3d's `compare_float`: the distance in units in the last place, signs folded so that
/// −0 and +0 are 0 apart.
pub fn compare(actual: f32, expected: f32, ulps: u32) -> bool {
    let fold = |f: f32| {
        let i = f.to_bits() as i32;
        if i < 0 {
            i32::MIN.wrapping_sub(i)
        } else {
            i
        }
    };
    (fold(actual) as i64 - fold(expected) as i64).unsigned_abs() <= ulps as u64
}

#[cfg(test)]
mod tests;
