//! Drawing triangles and points with a vertex and a pixel shader, as Direct3D 9 rasterises them, for
//! the pixels a caller asks about (a test probes a few pixels; shading 640×480 of them to
//! read one would be waste).
//!
//! D3D9's rules: the viewport maps clip space to `((x/w + 1)·W/2, (1 − y/w)·H/2)` and a
//! pixel is sampled at its integer coordinates (D3D10 moved centres to `+0.5`), so `vPos`
//! holds integers. Attributes are interpolated perspective-correctly; vs_1_1–vs_2_x colour
//! outputs `oD#` are clamped to [0, 1] on the way, as D3D9 clamps them, and a ps_2_x
//! colour input the vertex shader does not write reads white (1, 1, 1, 1), what Windows
//! gives (vkd3d's `uninitialized-varyings` test); other unwritten inputs read 0. A pixel covered by
//! several triangles gets the last one (no depth test). Pixels run in their 2×2 quad, the
//! lanes outside the triangle running as helpers, so derivatives see the plane of the
//! triangle.

use std::collections::BTreeMap;

use super::{Attributes, Bindings, OutputRegister, Outputs, Program, RunError, Semantic};
use crate::shader::d3d9::bytecode::ShaderKind;

/// How vertices make primitives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology {
    TriangleList,
    TriangleStrip,
    /// Each vertex a square of the point size centred on it (D3D9's points: the vertex
    /// shader's `PSIZE` output, else [`PointState::size`], clamped to min and max).
    PointList,
}

/// The render states of points (`D3DRS_POINTSIZE`, `_MIN`, `_MAX`,
/// `D3DRS_POINTSPRITEENABLE`). With sprites on, every texture coordinate the pixel shader
/// reads runs from (0, 0) at the square's top left to (1, 1) at its bottom right.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointState {
    pub size: f32,
    pub min: f32,
    pub max: f32,
    pub sprite: bool,
}

impl Default for PointState {
    /// Size 1, clamped to [1, f32::MAX], no sprites: vkd3d's runner's defaults.
    fn default() -> Self {
        PointState {
            size: 1.0,
            min: 1.0,
            max: f32::MAX,
            sprite: false,
        }
    }
}

/// What covers a pixel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Primitive {
    Triangle(usize),
    Point(usize),
}

/// One draw call.
#[derive(Debug, Clone)]
pub struct Draw<'a> {
    /// `None`: the position attribute (`POSITION0`) is the clip-space position and nothing
    /// else is output, the vertex shader vkd3d's runner uses for `draw quad`.
    pub vertex_shader: Option<&'a Program>,
    pub pixel_shader: &'a Program,
    pub vertex_bindings: &'a Bindings,
    pub pixel_bindings: &'a Bindings,
    /// Vertex attributes by semantic, one map per vertex.
    pub vertices: &'a [BTreeMap<Semantic, [f32; 4]>],
    pub topology: Topology,
    /// User clip planes (`SetClipPlane`, enabled ones only), in clip space: a pixel whose
    /// interpolated position `p` has `plane · p < 0` for one of them is not drawn.
    pub clip_planes: &'a [[f32; 4]],
    pub points: PointState,
    pub width: u32,
    pub height: u32,
}

struct Vertex {
    screen: [f32; 2],
    inv_w: f32,
    outputs: Outputs,
}

/// Shades `pixels` (x, y) of the draw; a pixel no triangle covers is absent from the
/// result.
pub fn draw(d: &Draw, pixels: &[(u32, u32)]) -> Result<BTreeMap<(u32, u32), Outputs>, RunError> {
    let mut verts = Vec::with_capacity(d.vertices.len());
    for attrs in d.vertices {
        let outputs = match d.vertex_shader {
            None => {
                let pos = attrs
                    .get(&Semantic::new(Semantic::POSITION, 0))
                    .copied()
                    .unwrap_or([0.0; 4]);
                let mut o = Outputs::default();
                o.values.insert(OutputRegister::Position, pos);
                o.semantics.push((
                    OutputRegister::Position,
                    0xF,
                    Semantic::new(Semantic::POSITION, 0),
                ));
                o
            }
            Some(vs) => {
                if vs.version().kind != ShaderKind::Vertex {
                    return Err(RunError::Draw(format!(
                        "{} is not a vertex shader",
                        vs.version()
                    )));
                }
                let inputs = super::Inputs {
                    bindings: d.vertex_bindings.clone(),
                    attributes: Attributes {
                        by_semantic: attrs.clone(),
                        ..Attributes::default()
                    },
                };
                let mut o = vs.run(&inputs)?;
                if vs.version().major < 3 {
                    for (reg, v) in o.values.iter_mut() {
                        if matches!(reg, OutputRegister::Color(_)) {
                            *v = v.map(|x| x.clamp(0.0, 1.0));
                        }
                    }
                }
                o
            }
        };
        let pos = outputs
            .by_semantic(Semantic::new(Semantic::POSITION, 0))
            .unwrap_or([0.0, 0.0, 0.0, 1.0]);
        let inv_w = 1.0 / pos[3];
        verts.push(Vertex {
            screen: [
                (pos[0] * inv_w + 1.0) * d.width as f32 / 2.0,
                (1.0 - pos[1] * inv_w) * d.height as f32 / 2.0,
            ],
            inv_w,
            outputs,
        });
    }
    let triangles: Vec<[usize; 3]> = match d.topology {
        Topology::TriangleList => (0..verts.len() / 3)
            .map(|i| [3 * i, 3 * i + 1, 3 * i + 2])
            .collect(),
        Topology::TriangleStrip => (0..verts.len().saturating_sub(2))
            .map(|i| {
                if i % 2 == 0 {
                    [i, i + 1, i + 2]
                } else {
                    [i + 1, i, i + 2]
                }
            })
            .collect(),
        Topology::PointList => Vec::new(),
    };
    // Each point's square: left, top, size.
    let squares: Vec<[f32; 3]> = match d.topology {
        Topology::PointList => verts
            .iter()
            .map(|v| {
                let size = v
                    .outputs
                    .by_semantic(Semantic::new(Semantic::PSIZE, 0))
                    .map_or(d.points.size, |p| p[0])
                    .clamp(d.points.min, d.points.max.max(d.points.min));
                [v.screen[0] - size / 2.0, v.screen[1] - size / 2.0, size]
            })
            .collect(),
        _ => Vec::new(),
    };
    let in_square = |q: &[f32; 3], p: [f32; 2]| {
        q[0] <= p[0] && p[0] < q[0] + q[2] && q[1] <= p[1] && p[1] < q[1] + q[2]
    };
    let semantics: Vec<Semantic> = {
        let mut s: Vec<Semantic> = verts
            .iter()
            .flat_map(|v| v.outputs.semantics.iter().map(|(_, _, s)| *s))
            .collect();
        s.sort();
        s.dedup();
        s
    };
    // What each asked pixel belongs to; then each (quad, primitive) runs once.
    let mut jobs: BTreeMap<(u32, u32, Primitive), Vec<(u32, u32)>> = BTreeMap::new();
    for &(x, y) in pixels {
        let p = [x as f32, y as f32];
        let covering = match d.topology {
            Topology::PointList => squares
                .iter()
                .rposition(|q| in_square(q, p))
                .map(Primitive::Point),
            _ => triangles
                .iter()
                .rposition(|t| {
                    barycentric(&verts, t, p).is_some_and(|b| b.iter().all(|&l| l >= 0.0))
                })
                .map(Primitive::Triangle),
        };
        if let Some(prim) = covering {
            jobs.entry((x & !1, y & !1, prim)).or_default().push((x, y));
        }
    }
    let mut result = BTreeMap::new();
    for ((qx, qy, prim), wanted) in jobs {
        let lanes: [Attributes; 4] = std::array::from_fn(|i| {
            let (x, y) = (qx + (i as u32 & 1), qy + (i as u32 >> 1));
            let mut by_semantic = BTreeMap::new();
            let mut front = true;
            match prim {
                Primitive::Triangle(t) => {
                    let tri = &triangles[t];
                    front = area(&verts, tri) > 0.0;
                    let b =
                        barycentric(&verts, tri, [x as f32, y as f32]).unwrap_or([1.0 / 3.0; 3]);
                    let weights: [f32; 3] = std::array::from_fn(|k| b[k] * verts[tri[k]].inv_w);
                    let total: f32 = weights.iter().sum();
                    for s in &semantics {
                        let mut v = [0.0f32; 4];
                        for (k, weight) in weights.iter().enumerate() {
                            let a = verts[tri[k]].outputs.by_semantic(*s).unwrap_or([0.0; 4]);
                            for (vc, ac) in v.iter_mut().zip(a) {
                                *vc += ac * weight / total;
                            }
                        }
                        by_semantic.insert(*s, v);
                    }
                }
                Primitive::Point(n) => {
                    for s in &semantics {
                        let v = verts[n].outputs.by_semantic(*s).unwrap_or([0.0; 4]);
                        by_semantic.insert(*s, v);
                    }
                    if d.points.sprite {
                        let q = squares[n];
                        let uv = [(x as f32 - q[0]) / q[2], (y as f32 - q[1]) / q[2], 0.0, 1.0];
                        for i in 0..8 {
                            by_semantic.insert(Semantic::new(Semantic::TEXCOORD, i), uv);
                        }
                    }
                }
            }
            if d.pixel_shader.version().major < 3 {
                for i in 0..2 {
                    by_semantic
                        .entry(Semantic::new(Semantic::COLOR, i))
                        .or_insert([1.0; 4]);
                }
            }
            Attributes {
                by_semantic,
                by_register: BTreeMap::new(),
                vpos: [x as f32, y as f32],
                vface: if front { 1.0 } else { -1.0 },
            }
        });
        let outs = d.pixel_shader.run_quad(d.pixel_bindings, &lanes)?;
        for (x, y) in wanted {
            let i = ((y - qy) * 2 + (x - qx)) as usize;
            let pos = lanes[i]
                .by_semantic
                .get(&Semantic::new(Semantic::POSITION, 0))
                .copied()
                .unwrap_or([0.0; 4]);
            if d.clip_planes
                .iter()
                .any(|p| p.iter().zip(pos).map(|(a, b)| a * b).sum::<f32>() < 0.0)
            {
                continue;
            }
            result.insert((x, y), outs[i].clone());
        }
    }
    Ok(result)
}

/// Twice the signed screen area of a triangle; positive when it runs clockwise on screen
/// (y down), D3D9's front face.
fn area(v: &[Vertex], t: &[usize; 3]) -> f32 {
    let [a, b, c] = [v[t[0]].screen, v[t[1]].screen, v[t[2]].screen];
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

/// Screen-space barycentric coordinates of `p`; `None` for a degenerate triangle.
fn barycentric(v: &[Vertex], t: &[usize; 3], p: [f32; 2]) -> Option<[f32; 3]> {
    let [a, b, c] = [v[t[0]].screen, v[t[1]].screen, v[t[2]].screen];
    let total = area(v, t);
    if total == 0.0 || !total.is_finite() {
        return None;
    }
    let edge = |p0: [f32; 2], p1: [f32; 2]| {
        (p1[0] - p0[0]) * (p[1] - p0[1]) - (p1[1] - p0[1]) * (p[0] - p0[0])
    };
    Some([edge(b, c) / total, edge(c, a) / total, edge(a, b) / total])
}
