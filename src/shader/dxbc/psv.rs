//! `PSV0`, pipeline state validation (`dxbc.md` §6): the runtime info of every version
//! (v0–v4, told by its size), the resource bindings and the signature elements. The
//! ViewID masks and input/output dependency tables after them are counted, not decoded.

use serde::Serialize;
use serde_json::{json, Value};

use super::bytes::{c_string, fits, slice, u16_at, u32_at, u8_at};
use super::tables::{
    input_primitive, register_class, COMPONENT_TYPE, INTERPOLATION_MODE, MESH_OUTPUT_TOPOLOGY,
    PRIMITIVE_TOPOLOGY, RESOURCE_KIND, RESOURCE_TYPE, SEMANTIC_KIND, TESSELLATOR_DOMAIN,
    TESSELLATOR_OUTPUT_PRIMITIVE,
};

/// Runtime info sizes by version (`dxbc.md` §6.2).
const VERSION_SIZES: [usize; 5] = [24, 36, 48, 52, 56];

#[derive(Debug, Clone, Serialize)]
pub struct Resource {
    #[serde(rename = "type")]
    pub res_type: String,
    /// The HLSL register class (`t`, `s`, `u`, `b`).
    pub class: Option<char>,
    pub space: u32,
    pub lower_bound: u32,
    /// `None` for an unbounded array.
    pub upper_bound: Option<u32>,
    pub kind: Option<String>,
    pub flags: Option<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Element {
    pub semantic: String,
    pub semantic_indexes: Vec<u32>,
    pub rows: u8,
    pub start_row: u8,
    pub cols: u8,
    pub start_col: u8,
    pub allocated: bool,
    pub kind: String,
    pub component_type: String,
    pub interpolation: String,
    pub dynamic_index_mask: u8,
    pub stream: u8,
}

#[derive(Debug, Clone, Serialize)]
pub struct Signatures {
    pub input: Vec<Element>,
    pub output: Vec<Element>,
    pub patch_constant_or_primitive: Vec<Element>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Psv {
    /// 0–4, from the runtime info's size; `None` for a size no version has (read as the
    /// largest version it covers).
    pub version: Option<u8>,
    pub runtime_info_size: u32,
    /// The stage-specific fields (`dxbc.md` §6.3).
    pub stage_info: Value,
    pub min_wave_lane_count: u32,
    /// `None` when unused (`0xFFFFFFFF`).
    pub max_wave_lane_count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shader_stage: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uses_view_id: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature_vectors: Option<Value>,
    /// Threads per group (v2+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_threads: Option<[u32; 3]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_function: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_shared_bytes: Option<u32>,
    pub resources: Vec<Resource>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<Signatures>,
    /// Bytes of ViewID masks and dependency tables after the signature elements.
    pub dependency_table_bytes: usize,
}

/// The stage union (16 bytes at the start of the runtime info) read for `stage`, a
/// `ShaderKind` (`dxbc.md` §4).
fn stage_info(u: &[u8], stage: Option<u32>) -> Result<Value, String> {
    let w = |at: usize| u32_at(u, at, "the stage info");
    let b = |at: usize| u8_at(u, at, "the stage info");
    Ok(match stage {
        Some(1) => json!({ "output_position_present": b(0)? != 0 }),
        Some(3) => json!({
            "input_control_points": w(0)?,
            "output_control_points": w(4)?,
            "tessellator_domain": TESSELLATOR_DOMAIN.name(w(8)?),
            "tessellator_output_primitive": TESSELLATOR_OUTPUT_PRIMITIVE.name(w(12)?),
        }),
        Some(4) => json!({
            "input_control_points": w(0)?,
            "output_position_present": b(4)? != 0,
            "tessellator_domain": TESSELLATOR_DOMAIN.name(w(8)?),
        }),
        Some(2) => json!({
            "input_primitive": input_primitive(w(0)?),
            "output_topology": PRIMITIVE_TOPOLOGY.name(w(4)?),
            "output_stream_mask": w(8)?,
            "output_position_present": b(12)? != 0,
        }),
        Some(0) => json!({ "depth_output": b(0)? != 0, "sample_frequency": b(1)? != 0 }),
        Some(13) => json!({
            "group_shared_bytes_used": w(0)?,
            "group_shared_bytes_dependent_on_view_id": w(4)?,
            "payload_size_in_bytes": w(8)?,
            "max_output_vertices": u16_at(u, 12, "the stage info")?,
            "max_output_primitives": u16_at(u, 14, "the stage info")?,
        }),
        Some(14) => json!({ "payload_size_in_bytes": w(0)? }),
        _ => json!({}),
    })
}

/// Decode a `PSV0` part. `kind` is the program's `ShaderKind`, which v0 does not store.
pub fn decode(data: &[u8], kind: Option<u16>) -> Result<Psv, String> {
    let info_size = u32_at(data, 0, "the runtime info size")?;
    let info = slice(data, 4, info_size as usize, "the runtime info")?;
    if info.len() < VERSION_SIZES[0] {
        return Err(format!(
            "runtime info of {info_size} bytes, the smallest version has 24"
        ));
    }
    let version = VERSION_SIZES.iter().position(|&s| s == info.len());
    let covers = VERSION_SIZES.iter().filter(|&&s| s <= info.len()).count() - 1;
    let what = "the runtime info";
    let stage = if covers >= 1 {
        Some(u8_at(info, 24, what)? as u32)
    } else {
        kind.map(u32::from)
    };
    let max_wave = u32_at(info, 20, what)?;
    let mut psv = Psv {
        version: version.map(|v| v as u8),
        runtime_info_size: info_size,
        stage_info: stage_info(&info[..16], stage)?,
        min_wave_lane_count: u32_at(info, 16, what)?,
        max_wave_lane_count: (max_wave != u32::MAX).then_some(max_wave),
        shader_stage: None,
        uses_view_id: None,
        signature_vectors: None,
        num_threads: None,
        entry_function: None,
        group_shared_bytes: None,
        resources: Vec::new(),
        signature: None,
        dependency_table_bytes: 0,
    };
    let mut counts = [0u32; 3];
    if covers >= 1 {
        psv.shader_stage = stage.map(|s| super::container::kind_name(s as u16));
        psv.uses_view_id = Some(u8_at(info, 25, what)? != 0);
        counts = [
            u8_at(info, 28, what)? as u32,
            u8_at(info, 29, what)? as u32,
            u8_at(info, 30, what)? as u32,
        ];
        let union16 = u16_at(info, 26, what)?;
        let extra = match stage {
            Some(2) => json!({ "max_vertex_count": union16 }),
            Some(3) | Some(4) => json!({ "patch_constant_vectors": union16 & 0xFF }),
            Some(13) => json!({
                "primitive_vectors": union16 & 0xFF,
                "mesh_output_topology": MESH_OUTPUT_TOPOLOGY.name((union16 >> 8) as u32),
            }),
            _ => json!({}),
        };
        psv.signature_vectors = Some(json!({
            "input_elements": counts[0],
            "output_elements": counts[1],
            "patch_constant_or_primitive_elements": counts[2],
            "input_vectors": u8_at(info, 31, what)?,
            "output_vectors": slice(info, 32, 4, what)?,
            "stage": extra,
        }));
    }
    if covers >= 2 {
        psv.num_threads = Some([
            u32_at(info, 36, what)?,
            u32_at(info, 40, what)?,
            u32_at(info, 44, what)?,
        ]);
    }
    if covers >= 4 {
        psv.group_shared_bytes = Some(u32_at(info, 52, what)?);
    }

    let mut at = 4 + info.len();
    let count = u32_at(data, at, "the resource count")?;
    at += 4;
    if count > 0 {
        let each = u32_at(data, at, "the resource record size")? as usize;
        at += 4;
        if each < 16 {
            return Err(format!(
                "resource records of {each} bytes, at least 16 expected"
            ));
        }
        fits(data, at, count, each, "resource records")?;
        for i in 0..count as usize {
            let r = &data[at + i * each..at + (i + 1) * each];
            let what = format!("resource {i}");
            let res_type = u32_at(r, 0, &what)?;
            let upper = u32_at(r, 12, &what)?;
            psv.resources.push(Resource {
                res_type: RESOURCE_TYPE.name(res_type),
                class: register_class(res_type),
                space: u32_at(r, 4, &what)?,
                lower_bound: u32_at(r, 8, &what)?,
                upper_bound: (upper != u32::MAX).then_some(upper),
                kind: (each >= 20)
                    .then(|| u32_at(r, 16, &what).map(|k| RESOURCE_KIND.name(k)))
                    .transpose()?,
                flags: (each >= 24).then(|| u32_at(r, 20, &what)).transpose()?,
            });
        }
        at += count as usize * each;
    }
    if covers >= 1 {
        let table_size = u32_at(data, at, "the string table size")? as usize;
        let strings = slice(data, at + 4, table_size, "the string table")?;
        at += 4 + table_size;
        let entries = u32_at(data, at, "the semantic index table size")?;
        fits(data, at + 4, entries, 4, "semantic indexes")?;
        let indexes: Vec<u32> = data[at + 4..at + 4 + entries as usize * 4]
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        at += 4 + entries as usize * 4;
        let total: u32 = counts.iter().sum();
        if total > 0 {
            let each = u32_at(data, at, "the signature element size")? as usize;
            at += 4;
            if each < 16 {
                return Err(format!(
                    "signature elements of {each} bytes, at least 16 expected"
                ));
            }
            fits(data, at, total, each, "signature elements")?;
            let mut lists: [Vec<Element>; 3] = Default::default();
            let mut k = 0;
            for (list, &n) in lists.iter_mut().zip(&counts) {
                for _ in 0..n {
                    let e = &data[at + k * each..at + (k + 1) * each];
                    list.push(element(e, strings, &indexes, k)?);
                    k += 1;
                }
            }
            at += total as usize * each;
            let [input, output, patch_constant_or_primitive] = lists;
            psv.signature = Some(Signatures {
                input,
                output,
                patch_constant_or_primitive,
            });
        }
        if covers >= 3 {
            let name_at = u32_at(info, 48, "the runtime info")? as usize;
            psv.entry_function = Some(c_string(strings, name_at, "the entry function's name")?);
        }
    }
    psv.dependency_table_bytes = data.len().saturating_sub(at);
    Ok(psv)
}

fn element(e: &[u8], strings: &[u8], indexes: &[u32], k: usize) -> Result<Element, String> {
    let what = format!("signature element {k}");
    let name_at = u32_at(e, 0, &what)? as usize;
    let first = u32_at(e, 4, &what)? as usize;
    let rows = u8_at(e, 8, &what)?;
    let cols = u8_at(e, 10, &what)?;
    let semantic_indexes = indexes
        .get(first..first + rows as usize)
        .ok_or_else(|| format!("{what}: semantic indexes {first}+{rows} past the table"))?
        .to_vec();
    let dyn_stream = u8_at(e, 14, &what)?;
    Ok(Element {
        semantic: c_string(strings, name_at, &format!("{what}'s semantic name"))?,
        semantic_indexes,
        rows,
        start_row: u8_at(e, 9, &what)?,
        cols: cols & 0xF,
        start_col: (cols >> 4) & 3,
        allocated: cols & 0x40 != 0,
        kind: SEMANTIC_KIND.name(u8_at(e, 11, &what)? as u32),
        component_type: COMPONENT_TYPE.name(u8_at(e, 12, &what)? as u32),
        interpolation: INTERPOLATION_MODE.name(u8_at(e, 13, &what)? as u32),
        dynamic_index_mask: dyn_stream & 0xF,
        stream: (dyn_stream >> 4) & 3,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[u32]) -> Vec<u8> {
        w.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// A compute program's PSV0 at runtime-info version `v`: one structured UAV, no
    /// signature elements, the entry name `main` from v3 on.
    fn compute(v: usize) -> Vec<u8> {
        let size = VERSION_SIZES[v];
        let mut info = vec![0u8; size];
        info[16..20].copy_from_slice(&32u32.to_le_bytes());
        info[20..24].copy_from_slice(&64u32.to_le_bytes());
        if v >= 1 {
            info[24] = 5;
        }
        if v >= 2 {
            info[36..48].copy_from_slice(&words(&[8, 4, 2]));
        }
        if v >= 3 {
            info[48..52].copy_from_slice(&0u32.to_le_bytes());
        }
        if v >= 4 {
            info[52..56].copy_from_slice(&1024u32.to_le_bytes());
        }
        let mut out = words(&[size as u32]);
        out.extend(info);
        let record = if v >= 2 { 24 } else { 16 };
        out.extend(words(&[1, record]));
        out.extend(words(&[8, 0, 1, 1]));
        if v >= 2 {
            out.extend(words(&[12, 0]));
        }
        if v >= 1 {
            out.extend(words(&[8]));
            out.extend(b"main\0\0\0\0");
            out.extend(words(&[0]));
        }
        out
    }

    #[test]
    fn every_runtime_info_version() {
        for v in 0..5 {
            let p = decode(&compute(v), Some(5)).unwrap_or_else(|e| panic!("v{v}: {e}"));
            assert_eq!(p.version, Some(v as u8));
            assert_eq!(
                (p.min_wave_lane_count, p.max_wave_lane_count),
                (32, Some(64))
            );
            let r = &p.resources[0];
            assert_eq!(
                (r.res_type.as_str(), r.class, r.lower_bound),
                ("UAVStructured", Some('u'), 1)
            );
            assert_eq!(r.kind.as_deref(), (v >= 2).then_some("StructuredBuffer"));
            assert_eq!(p.shader_stage.as_deref(), (v >= 1).then_some("compute"));
            assert_eq!(p.num_threads, (v >= 2).then_some([8, 4, 2]));
            assert_eq!(p.entry_function.as_deref(), (v >= 3).then_some("main"));
            assert_eq!(p.group_shared_bytes, (v >= 4).then_some(1024));
            assert_eq!(p.dependency_table_bytes, 0);
            let bytes = compute(v);
            for n in 0..bytes.len() {
                assert!(decode(&bytes[..n], Some(5)).is_err(), "v{v}, prefix {n}");
            }
        }
    }
}
