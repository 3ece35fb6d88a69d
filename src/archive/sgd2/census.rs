//! `census.json`: the whole database counted the way `sgd2.md` §8 counts the game's,
//! from what each container says of itself (`dxbc.md` §5, §6, §10). Computed on first
//! read, never at mount.
//!
//! - `programs_per_stage`: programs in each group.
//! - `tessellation_pipeline_programs`: every hull and domain program, and every vertex
//!   program whose output signature (`OSG1`) has no `SV_Position`.
//! - `unbounded_sampler_array_pixel_programs`: pixel programs whose `PSV0` binds an
//!   unbounded sampler array at `s0, space2`.
//! - `ray_query_programs`: programs that call `AllocateRayQuery` (178).
//! - `quad_op_programs`: programs that call `QuadReadLaneAt` (122), `QuadOp` (123) or
//!   `QuadVote` (222).
//! - `wave_lane_index_multi_dim_programs`: programs that call `WaveGetLaneIndex` (111)
//!   with a `PSV0` thread group of more than one dimension.
//!
//! Each but the first is `{"count": N, "programs": ["programs/<stage>/<n>.dxil", …]}`.
//! Where the bitcode's function bodies could not all be read, a declared intrinsic
//! counts as called. Programs whose container does not decode are listed apart.

use serde::Serialize;
use serde_json::{Map, Value};

use super::read::{group_dir, Index, STAGES};
use crate::shader::dxbc::decode::{self, Facts};

#[derive(Default, Serialize)]
pub struct List {
    pub count: usize,
    pub programs: Vec<String>,
}

impl List {
    fn push(&mut self, path: String) {
        self.count += 1;
        self.programs.push(path);
    }
}

#[derive(Serialize)]
pub struct Census {
    pub programs_per_stage: Map<String, Value>,
    pub tessellation_pipeline_programs: List,
    pub unbounded_sampler_array_pixel_programs: List,
    pub ray_query_programs: List,
    pub quad_op_programs: List,
    pub wave_lane_index_multi_dim_programs: List,
    /// Programs whose container could not be decoded; they count in no list above.
    pub undecoded_programs: List,
}

const VERTEX: usize = 0;
const PIXEL: usize = 1;
const DOMAIN: usize = 3;
const HULL: usize = 4;

fn writes_position(f: &Facts) -> bool {
    f.outputs
        .as_ref()
        .is_some_and(|s| s.elements.iter().any(|e| e.system_value == "Position"))
}

fn unbounded_sampler_s0_space2(f: &Facts) -> bool {
    f.psv.as_ref().is_some_and(|p| {
        p.resources.iter().any(|r| {
            r.class == Some('s') && r.space == 2 && r.lower_bound == 0 && r.upper_bound.is_none()
        })
    })
}

fn calls(f: &Facts, ops: &[(u32, &str)]) -> bool {
    f.usage
        .as_ref()
        .is_some_and(|u| ops.iter().any(|&(op, name)| u.uses(op, name)))
}

fn multi_dimensional(f: &Facts) -> bool {
    f.psv
        .as_ref()
        .and_then(|p| p.num_threads)
        .is_some_and(|t| t.iter().filter(|&&n| n > 1).count() > 1)
}

/// What the census asks of one program.
#[derive(Default, Clone, Copy)]
struct Flags {
    tessellation: bool,
    unbounded_samplers: bool,
    ray_query: bool,
    quad_op: bool,
    wave_lane_multi_dim: bool,
}

fn classify(group: usize, f: &Facts) -> Flags {
    let quad = [
        (122, "dx.op.quadReadLaneAt"),
        (123, "dx.op.quadOp"),
        (222, "dx.op.quadVote"),
    ];
    Flags {
        tessellation: group == HULL || group == DOMAIN || (group == VERTEX && !writes_position(f)),
        unbounded_samplers: group == PIXEL && unbounded_sampler_s0_space2(f),
        ray_query: calls(f, &[(178, "dx.op.allocateRayQuery")]),
        quad_op: calls(f, &quad),
        wave_lane_multi_dim: calls(f, &[(111, "dx.op.waveGetLaneIndex")]) && multi_dimensional(f),
    }
}

/// Count the database `bytes` indexed as `index`. Every program's bitcode is walked, so
/// the programs are shared out among the cores.
pub fn census(bytes: &[u8], index: &Index) -> Census {
    let mut per_stage = Map::new();
    let mut programs = Vec::new();
    for (g, group) in index.groups.iter().enumerate() {
        if g >= STAGES.len() && group.programs.is_empty() {
            continue;
        }
        per_stage.insert(group_dir(g), group.programs.len().into());
        programs.extend(group.programs.iter().enumerate().map(|(i, p)| (g, i, p)));
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 8));
    let share = programs.len().div_ceil(threads).max(1);
    let flags: Vec<Option<Flags>> = std::thread::scope(|scope| {
        let workers: Vec<_> = programs
            .chunks(share)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|&(g, _, p)| {
                            decode::facts(&bytes[p.container()])
                                .ok()
                                .map(|f| classify(g, &f))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut c = Census {
        programs_per_stage: per_stage,
        tessellation_pipeline_programs: List::default(),
        unbounded_sampler_array_pixel_programs: List::default(),
        ray_query_programs: List::default(),
        quad_op_programs: List::default(),
        wave_lane_index_multi_dim_programs: List::default(),
        undecoded_programs: List::default(),
    };
    for (&(g, i, _), flags) in programs.iter().zip(flags) {
        let path = format!("programs/{}/{i}.dxil", group_dir(g));
        let Some(f) = flags else {
            c.undecoded_programs.push(path);
            continue;
        };
        for (yes, list) in [
            (f.tessellation, &mut c.tessellation_pipeline_programs),
            (
                f.unbounded_samplers,
                &mut c.unbounded_sampler_array_pixel_programs,
            ),
            (f.ray_query, &mut c.ray_query_programs),
            (f.quad_op, &mut c.quad_op_programs),
            (
                f.wave_lane_multi_dim,
                &mut c.wave_lane_index_multi_dim_programs,
            ),
        ] {
            if yes {
                list.push(path.clone());
            }
        }
    }
    c
}
