//! The small parts: `SFI0` feature flags (`dxbc.md` §7.1), the `ISG1`/`OSG1`/`PSG1`
//! signatures (§5), `HASH` (§7.2), `ILDN` and `VERS` (§7.3).

use serde::Serialize;

use super::bytes::{c_string, fits, mask, slice, u16_at, u32_at, u64_at, u8_at};
use super::tables::{feature_names, COMPONENT_TYPE, MIN_PRECISION, SYSTEM_VALUE};

#[derive(Debug, Clone, Serialize)]
pub struct Features {
    pub flags: String,
    pub features: Vec<String>,
}

pub fn features(data: &[u8]) -> Result<(u64, Features), String> {
    let flags = u64_at(data, 0, "the feature flags")?;
    Ok((
        flags,
        Features {
            flags: format!("{flags:#x}"),
            features: feature_names(flags),
        },
    ))
}

/// One signature element (one row: `dxbc.md` §5).
#[derive(Debug, Clone, Serialize)]
pub struct Element {
    pub stream: u32,
    pub semantic: String,
    pub semantic_index: u32,
    pub system_value: String,
    pub component_type: String,
    /// `None` when the element has no register (e.g. `SV_Barycentrics`).
    pub register: Option<u32>,
    pub mask: String,
    /// What dxc's listing shows as "Used": for an input the components the program always
    /// reads, for an output the components of `mask` it writes.
    pub used: String,
    /// An input's `AlwaysReads_Mask` (byte 0x19 of the element, `dxbc.md` §5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub always_reads: Option<String>,
    /// An output's `NeverWrites_Mask` (the same byte): dxc sets the bits of the
    /// components the program never writes, those outside `mask` included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub never_writes: Option<String>,
    pub min_precision: String,
}

/// Whether a signature describes what a stage reads or what it writes: the byte at 0x19
/// of its elements means one or the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Input,
    Output,
}

impl Direction {
    /// The direction of a signature part in a program of `ShaderKind` `kind`: `ISG1` is
    /// read and `OSG1` written; `PSG1` is written by a hull or mesh shader (patch
    /// constants, per-primitive outputs) and read by a domain shader.
    pub fn of_part(fourcc: &[u8; 4], kind: Option<u16>) -> Direction {
        match (fourcc, kind) {
            (b"OSG1", _) | (b"PSG1", Some(3 | 13)) => Direction::Output,
            _ => Direction::Input,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Signature {
    pub direction: Direction,
    pub elements: Vec<Element>,
}

const ELEMENT_LEN: usize = 32;

pub fn signature(data: &[u8], direction: Direction) -> Result<Signature, String> {
    let count = u32_at(data, 0, "the element count")?;
    let first = u32_at(data, 4, "the element offset")? as usize;
    fits(data, first, count, ELEMENT_LEN, "signature elements")?;
    let mut elements = Vec::with_capacity(count as usize);
    for i in 0..count as usize {
        let at = first + i * ELEMENT_LEN;
        let what = format!("element {i}");
        let name_at = u32_at(data, at + 4, &what)? as usize;
        let register = u32_at(data, at + 20, &what)?;
        let bits = u8_at(data, at + 24, &what)?;
        let rw = u8_at(data, at + 25, &what)?;
        let (used, always_reads, never_writes) = match direction {
            Direction::Input => (rw, Some(mask(rw)), None),
            Direction::Output => (bits & !rw, None, Some(mask(rw))),
        };
        elements.push(Element {
            stream: u32_at(data, at, &what)?,
            semantic: c_string(data, name_at, &format!("{what}'s semantic name"))?,
            semantic_index: u32_at(data, at + 8, &what)?,
            system_value: SYSTEM_VALUE.name(u32_at(data, at + 12, &what)?),
            component_type: COMPONENT_TYPE.name(u32_at(data, at + 16, &what)?),
            register: (register != u32::MAX).then_some(register),
            mask: mask(bits),
            used: mask(used),
            always_reads,
            never_writes,
            min_precision: MIN_PRECISION.name(u32_at(data, at + 28, &what)?),
        });
    }
    Ok(Signature {
        direction,
        elements,
    })
}

#[derive(Debug, Clone, Serialize)]
pub struct ShaderHash {
    pub flags: &'static str,
    pub digest: String,
    /// Whether the digest is the MD5 of the program's bitcode; `None` where it covers
    /// the debug module's instead (`IncludesSource`), which a stripped container lacks.
    pub matches_bitcode: Option<bool>,
}

/// `HASH`, checked against the MD5 of `bitcode` (`dxbc.md` §7.2).
pub fn hash(data: &[u8], bitcode: Option<&[u8]>) -> Result<ShaderHash, String> {
    let flags = u32_at(data, 0, "the hash flags")?;
    let digest = slice(data, 4, 16, "the hash digest")?;
    let flags_name = match flags {
        0 => "None",
        1 => "IncludesSource",
        _ => "unknown",
    };
    let matches_bitcode = match (flags, bitcode) {
        (0, Some(bitcode)) => Some(super::digest::md5(bitcode) == digest),
        _ => None,
    };
    Ok(ShaderHash {
        flags: flags_name,
        digest: super::hex(digest),
        matches_bitcode,
    })
}

#[derive(Debug, Clone, Serialize)]
pub struct DebugName {
    pub flags: u16,
    pub name: String,
}

pub fn debug_name(data: &[u8]) -> Result<DebugName, String> {
    let flags = u16_at(data, 0, "the debug name's flags")?;
    let len = u16_at(data, 2, "the debug name's length")? as usize;
    let name = slice(data, 4, len, "the debug name")?;
    if data.len() != (4 + len + 1).div_ceil(4) * 4 || data.get(4 + len) != Some(&0) {
        return Err(format!(
            "a {len}-byte name needs a NUL and a part of {} bytes, the part has {}",
            (4 + len + 1).div_ceil(4) * 4,
            data.len()
        ));
    }
    Ok(DebugName {
        flags,
        name: String::from_utf8_lossy(name).into_owned(),
    })
}

#[derive(Debug, Clone, Serialize)]
pub struct CompilerVersion {
    pub version: String,
    pub flags: String,
    pub commit_count: u32,
    /// The commit and the custom version string, where present.
    pub strings: Vec<String>,
}

pub fn compiler_version(data: &[u8]) -> Result<CompilerVersion, String> {
    let major = u16_at(data, 0, "the version")?;
    let minor = u16_at(data, 2, "the version")?;
    let flags = u32_at(data, 4, "the version flags")?;
    let commit_count = u32_at(data, 8, "the commit count")?;
    let size = u32_at(data, 12, "the version strings' size")? as usize;
    let list = slice(data, 16, size, "the version strings")?;
    let strings = list
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .take(2)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    Ok(CompilerVersion {
        version: format!("{major}.{minor}"),
        flags: format!("{flags:#x}"),
        commit_count,
        strings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncated_parts_are_refused_not_panicked() {
        let mut sig = Vec::new();
        sig.extend_from_slice(&1u32.to_le_bytes());
        sig.extend_from_slice(&8u32.to_le_bytes());
        sig.extend_from_slice(&[0; 32]);
        sig[12..16].copy_from_slice(&40u32.to_le_bytes());
        sig.extend_from_slice(b"SV_Target\0");
        sig[20..24].copy_from_slice(&64u32.to_le_bytes());
        let s = signature(&sig, Direction::Output).unwrap();
        assert_eq!(s.elements[0].semantic, "SV_Target");
        assert_eq!(s.elements[0].system_value, "Target");
        for n in 0..sig.len() - 1 {
            assert!(
                signature(&sig[..n], Direction::Input).is_err(),
                "prefix {n}"
            );
        }
        let mut huge = sig.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(signature(&huge, Direction::Input).is_err());
        assert!(features(&[0; 7]).is_err());
        assert!(debug_name(&[0, 0, 9, 0, b'a']).is_err());
    }

    #[test]
    fn debug_name_and_version() {
        let mut ildn = vec![0, 0, 10, 0];
        ildn.extend_from_slice(b"shader.pdb\0\0");
        assert_eq!(debug_name(&ildn).unwrap().name, "shader.pdb");
        let mut vers = vec![1, 0, 8, 0, 0, 0, 0, 0, 42, 0, 0, 0, 12, 0, 0, 0];
        vers.extend_from_slice(b"abc1234\0dev\0");
        let v = compiler_version(&vers).unwrap();
        assert_eq!((v.version.as_str(), v.commit_count), ("1.8", 42));
        assert_eq!(v.strings, ["abc1234", "dev"]);
    }
}
