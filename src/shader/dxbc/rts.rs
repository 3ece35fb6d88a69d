//! `RTS0`, a serialized root signature, versions 1.0 and 1.1 (`dxbc.md` §8), shown with
//! the Direct3D 12 names of its enumerations. Other versions (1.2's layout is
//! unconfirmed) are refused with the reason; the part's bytes stay as they are.

use serde::Serialize;

use super::bytes::{f32_at, fits, u32_at};
use crate::shader::d3d12::{
    COMPARISON_FUNC, DESCRIPTOR_RANGE_FLAGS, DESCRIPTOR_RANGE_TYPE, FILTER, ROOT_DESCRIPTOR_FLAGS,
    ROOT_PARAMETER_TYPE, ROOT_SIGNATURE_FLAGS, SHADER_VISIBILITY, STATIC_BORDER_COLOR,
    TEXTURE_ADDRESS_MODE,
};

#[derive(Debug, Clone, Serialize)]
pub struct RootSignature {
    pub version: &'static str,
    pub flags: Vec<String>,
    pub parameters: Vec<Parameter>,
    pub static_samplers: Vec<StaticSampler>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Parameter {
    #[serde(rename = "type")]
    pub param_type: String,
    pub visibility: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranges: Option<Vec<Range>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constants: Option<Constants>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub descriptor: Option<Descriptor>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Range {
    #[serde(rename = "type")]
    pub range_type: String,
    /// `None` for an unbounded range.
    pub num_descriptors: Option<u32>,
    pub base_register: u32,
    pub space: u32,
    /// `None` for `D3D12_DESCRIPTOR_RANGE_OFFSET_APPEND`.
    pub offset_in_table: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Constants {
    pub register: u32,
    pub space: u32,
    pub num_32bit_values: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Descriptor {
    pub register: u32,
    pub space: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StaticSampler {
    pub filter: String,
    pub address_u: String,
    pub address_v: String,
    pub address_w: String,
    pub mip_lod_bias: f32,
    pub max_anisotropy: u32,
    pub comparison_func: String,
    pub border_color: String,
    pub min_lod: f32,
    pub max_lod: f32,
    pub register: u32,
    pub space: u32,
    pub visibility: String,
}

const HEADER_LEN: usize = 24;
const PARAMETER_LEN: usize = 12;
const SAMPLER_LEN: usize = 52;

pub fn decode(data: &[u8]) -> Result<RootSignature, String> {
    let version = u32_at(data, 0, "the version")?;
    let v11 = match version {
        1 => false,
        2 => true,
        _ => {
            return Err(format!(
                "root signature version {version} (1 = 1.0 and 2 = 1.1 are known; the layout of \
                 1.2 is unconfirmed)"
            ))
        }
    };
    if data.len() < HEADER_LEN {
        return Err(format!("a {}-byte part, the header needs 24", data.len()));
    }
    let count = u32_at(data, 4, "the parameter count")?;
    let params_at = u32_at(data, 8, "the parameter offset")? as usize;
    let samplers = u32_at(data, 12, "the static sampler count")?;
    let samplers_at = u32_at(data, 16, "the static sampler offset")? as usize;
    let flags = u32_at(data, 20, "the flags")?;
    fits(data, params_at, count, PARAMETER_LEN, "root parameters")?;
    fits(data, samplers_at, samplers, SAMPLER_LEN, "static samplers")?;
    let mut parameters = Vec::with_capacity(count as usize);
    for i in 0..count as usize {
        parameters.push(parameter(data, params_at + i * PARAMETER_LEN, i, v11)?);
    }
    let mut static_samplers = Vec::with_capacity(samplers as usize);
    for i in 0..samplers as usize {
        static_samplers.push(sampler(data, samplers_at + i * SAMPLER_LEN, i)?);
    }
    Ok(RootSignature {
        version: if v11 { "1.1" } else { "1.0" },
        flags: ROOT_SIGNATURE_FLAGS.names(flags),
        parameters,
        static_samplers,
    })
}

fn parameter(data: &[u8], at: usize, i: usize, v11: bool) -> Result<Parameter, String> {
    let what = format!("root parameter {i}");
    let kind = u32_at(data, at, &what)?;
    let payload = u32_at(data, at + 8, &what)? as usize;
    let mut p = Parameter {
        param_type: ROOT_PARAMETER_TYPE.name(kind),
        visibility: SHADER_VISIBILITY.name(u32_at(data, at + 4, &what)?),
        ranges: None,
        constants: None,
        descriptor: None,
    };
    match kind {
        0 => {
            let n = u32_at(data, payload, &what)?;
            let ranges_at = u32_at(data, payload + 4, &what)? as usize;
            let each = if v11 { 24 } else { 20 };
            fits(data, ranges_at, n, each, "descriptor ranges")?;
            let mut ranges = Vec::with_capacity(n as usize);
            for r in 0..n as usize {
                let at = ranges_at + r * each;
                let what = format!("{what}, range {r}");
                let word = |k: usize| u32_at(data, at + 4 * k, &what);
                let count = word(1)?;
                let offset = word(if v11 { 5 } else { 4 })?;
                ranges.push(Range {
                    range_type: DESCRIPTOR_RANGE_TYPE.name(word(0)?),
                    num_descriptors: (count != u32::MAX).then_some(count),
                    base_register: word(2)?,
                    space: word(3)?,
                    offset_in_table: (offset != u32::MAX).then_some(offset),
                    flags: v11
                        .then(|| word(4).map(|f| DESCRIPTOR_RANGE_FLAGS.names(f)))
                        .transpose()?,
                });
            }
            p.ranges = Some(ranges);
        }
        1 => {
            p.constants = Some(Constants {
                register: u32_at(data, payload, &what)?,
                space: u32_at(data, payload + 4, &what)?,
                num_32bit_values: u32_at(data, payload + 8, &what)?,
            });
        }
        2..=4 => {
            p.descriptor = Some(Descriptor {
                register: u32_at(data, payload, &what)?,
                space: u32_at(data, payload + 4, &what)?,
                flags: v11
                    .then(|| {
                        u32_at(data, payload + 8, &what).map(|f| ROOT_DESCRIPTOR_FLAGS.names(f))
                    })
                    .transpose()?,
            });
        }
        _ => {}
    }
    Ok(p)
}

fn sampler(data: &[u8], at: usize, i: usize) -> Result<StaticSampler, String> {
    let what = format!("static sampler {i}");
    let word = |k: usize| u32_at(data, at + 4 * k, &what);
    let float = |k: usize| f32_at(data, at + 4 * k, &what);
    Ok(StaticSampler {
        filter: FILTER.name(word(0)?),
        address_u: TEXTURE_ADDRESS_MODE.name(word(1)?),
        address_v: TEXTURE_ADDRESS_MODE.name(word(2)?),
        address_w: TEXTURE_ADDRESS_MODE.name(word(3)?),
        mip_lod_bias: float(4)?,
        max_anisotropy: word(5)?,
        comparison_func: COMPARISON_FUNC.name(word(6)?),
        border_color: STATIC_BORDER_COLOR.name(word(7)?),
        min_lod: float(8)?,
        max_lod: float(9)?,
        register: word(10)?,
        space: word(11)?,
        visibility: SHADER_VISIBILITY.name(word(12)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[u32]) -> Vec<u8> {
        w.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// A 1.1 root signature laid out as DXC serialises it: header, parameters, payloads
    /// (a table and its ranges, root constants, a root CBV), static samplers.
    fn sample(version: u32) -> Vec<u8> {
        let v11 = version == 2;
        let range = if v11 { 24 } else { 20 };
        let params_at = 24;
        let table_at = params_at + 3 * 12;
        let ranges_at = table_at + 8;
        let consts_at = ranges_at + 2 * range;
        let cbv_at = consts_at + 12;
        let samplers_at = cbv_at + if v11 { 12 } else { 8 };
        let mut out = words(&[version, 3, params_at, 1, samplers_at, 0x801]);
        out.extend(words(&[0, 5, table_at, 1, 0, consts_at, 2, 1, cbv_at]));
        out.extend(words(&[2, ranges_at]));
        for (kind, n, base, space, flags, offset) in
            [(0, 4, 0, 1, 0x8, 0), (3, u32::MAX, 0, 2, 0x1, u32::MAX)]
        {
            if v11 {
                out.extend(words(&[kind, n, base, space, flags, offset]));
            } else {
                out.extend(words(&[kind, n, base, space, offset]));
            }
        }
        out.extend(words(&[3, 0, 16]));
        out.extend(words(&[1, 0]));
        if v11 {
            out.extend(words(&[0x2]));
        }
        out.extend(words(&[0x15, 1, 3, 1]));
        out.extend(words(&[
            0.5f32.to_bits(),
            16,
            5,
            2,
            0f32.to_bits(),
            f32::MAX.to_bits(),
            7,
            0,
            5,
        ]));
        assert_eq!(out.len(), samplers_at as usize + 52);
        out
    }

    #[test]
    fn both_versions_decode() {
        for version in [1, 2] {
            let rs = decode(&sample(version)).unwrap();
            assert_eq!(rs.version, if version == 2 { "1.1" } else { "1.0" });
            assert_eq!(
                rs.flags,
                [
                    "D3D12_ROOT_SIGNATURE_FLAG_ALLOW_INPUT_ASSEMBLER_INPUT_LAYOUT",
                    "D3D12_ROOT_SIGNATURE_FLAG_SAMPLER_HEAP_DIRECTLY_INDEXED"
                ]
            );
            let ranges = rs.parameters[0].ranges.as_ref().unwrap();
            assert_eq!(ranges[1].range_type, "D3D12_DESCRIPTOR_RANGE_TYPE_SAMPLER");
            assert_eq!((ranges[1].num_descriptors, ranges[1].space), (None, 2));
            assert_eq!(ranges[1].offset_in_table, None);
            assert_eq!(rs.parameters[0].visibility, "D3D12_SHADER_VISIBILITY_PIXEL");
            assert_eq!(
                rs.parameters[1]
                    .constants
                    .as_ref()
                    .unwrap()
                    .num_32bit_values,
                16
            );
            assert_eq!(rs.parameters[2].param_type, "D3D12_ROOT_PARAMETER_TYPE_CBV");
            let s = &rs.static_samplers[0];
            assert_eq!(s.filter, "D3D12_FILTER_MIN_MAG_MIP_LINEAR");
            assert_eq!(s.address_v, "D3D12_TEXTURE_ADDRESS_MODE_CLAMP");
            assert_eq!(s.comparison_func, "D3D12_COMPARISON_FUNC_GREATER");
            assert_eq!(s.border_color, "D3D12_STATIC_BORDER_COLOR_OPAQUE_WHITE");
            assert_eq!((s.register, s.mip_lod_bias), (7, 0.5));
            if version == 2 {
                assert_eq!(
                    ranges[0].flags.as_deref().unwrap(),
                    ["D3D12_DESCRIPTOR_RANGE_FLAG_DATA_STATIC"]
                );
            }
        }
    }

    #[test]
    fn bad_input_is_refused() {
        let good = sample(2);
        for n in 0..good.len() {
            assert!(decode(&good[..n]).is_err(), "prefix {n}");
        }
        let mut v3 = good.clone();
        v3[0] = 3;
        assert!(decode(&v3).unwrap_err().contains("unconfirmed"));
        let mut huge = good;
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&huge).is_err());
    }
}
