//! The container header and part table (`dxbc.md` §2) and the `DXIL` program header (§4).
//!
//! Reading follows DXC's `IsValidDxilContainer` rule by rule, so a container this accepts
//! is one DXC would accept; each refusal names the rule's byte offset.

use std::ops::Range;

pub const HEADER_LEN: usize = 32;
pub const MAGIC: &[u8; 4] = b"DXBC";
/// `ContainerSizeInBytes` may not exceed this (`dxbc.md` §2 rule 3).
const MAX_CONTAINER: usize = 0x8000_0000;

/// Why bytes are not a valid container (`dxbc.md` §2, the rule numbers in brackets).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContainerError {
    #[error("not a DXBC container: {}", match .len {
        len if *len < HEADER_LEN => format!("{len} bytes, shorter than its {HEADER_LEN}-byte header [rule 1]"),
        _ => "no 'DXBC' at offset 0 [rule 1]".to_string(),
    })]
    NotDxbc { len: usize },
    #[error("major version {major} at offset 0x14, expected 1 [rule 2]")]
    UnsupportedVersion { major: u16 },
    #[error("container size {size} at offset 0x18 exceeds the {len} bytes stored [rule 3]")]
    SizeOutOfRange { size: u32, len: usize },
    #[error("{count} part offsets at offset 0x20 run past the container's {size} bytes [rule 4]")]
    PartTableOverrun { count: u32, size: u32 },
    #[error("part {index}: offset {offset:#x} or its size runs past the container's end [rule 5]")]
    PartOutOfRange { index: usize, offset: u32 },
    #[error("part {index} starts at {offset:#x}, expected {expected:#x} (parts are contiguous) [rule 6]")]
    PartGap {
        index: usize,
        offset: u32,
        expected: usize,
    },
    #[error("the last part ends at {end:#x}, the container's size is {size:#x} [rule 7]")]
    SizeMismatch { end: usize, size: u32 },
}

/// One part: its FourCC and where its data lies inside the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub fourcc: [u8; 4],
    /// Offset of the part header (FourCC and size).
    pub offset: usize,
    /// The part's data, after its 8-byte header.
    pub data: Range<usize>,
}

impl Part {
    /// The FourCC as text; bytes that are not printable ASCII shown as `\xNN`.
    pub fn name(&self) -> String {
        self.fourcc
            .iter()
            .map(|&b| {
                if b.is_ascii_graphic() || b == b' ' {
                    (b as char).to_string()
                } else {
                    format!("\\x{b:02x}")
                }
            })
            .collect()
    }
}

/// A container's envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    pub digest: [u8; 16],
    pub major: u16,
    pub minor: u16,
    pub size: u32,
    pub parts: Vec<Part>,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Read the envelope of `bytes`. The part list's length is bounded by the container's
/// size before anything is allocated.
pub fn parse(bytes: &[u8]) -> Result<Container, ContainerError> {
    let len = bytes.len();
    if len < HEADER_LEN || &bytes[..4] != MAGIC {
        return Err(ContainerError::NotDxbc { len });
    }
    let mut digest = [0u8; 16];
    digest.copy_from_slice(&bytes[4..20]);
    let major = u16_at(bytes, 20);
    let minor = u16_at(bytes, 22);
    if major != 1 {
        return Err(ContainerError::UnsupportedVersion { major });
    }
    let size = u32_at(bytes, 24);
    if size as usize > len || size as usize > MAX_CONTAINER {
        return Err(ContainerError::SizeOutOfRange { size, len });
    }
    let count = u32_at(bytes, 28);
    let table_end = (count as u64) * 4 + HEADER_LEN as u64;
    if table_end > size as u64 {
        return Err(ContainerError::PartTableOverrun { count, size });
    }
    let size_us = size as usize;
    let mut parts = Vec::with_capacity(count as usize);
    let mut expected = table_end as usize;
    for index in 0..count as usize {
        let offset = u32_at(bytes, HEADER_LEN + 4 * index);
        let at = offset as usize;
        if size_us < 8 || at > size_us - 8 {
            return Err(ContainerError::PartOutOfRange { index, offset });
        }
        let part_size = u32_at(bytes, at + 4) as usize;
        if part_size > size_us - 8 - at {
            return Err(ContainerError::PartOutOfRange { index, offset });
        }
        if at != expected {
            return Err(ContainerError::PartGap {
                index,
                offset,
                expected,
            });
        }
        let mut fourcc = [0u8; 4];
        fourcc.copy_from_slice(&bytes[at..at + 4]);
        let data = at + 8..at + 8 + part_size;
        expected = data.end;
        parts.push(Part {
            fourcc,
            offset: at,
            data,
        });
    }
    if expected != size_us {
        return Err(ContainerError::SizeMismatch {
            end: expected,
            size,
        });
    }
    Ok(Container {
        digest,
        major,
        minor,
        size,
        parts,
    })
}

/// `DXIL::ShaderKind` (`dxbc.md` §4), in value order.
const SHADER_KINDS: &[(&str, &str)] = &[
    ("pixel", "ps"),
    ("vertex", "vs"),
    ("geometry", "gs"),
    ("hull", "hs"),
    ("domain", "ds"),
    ("compute", "cs"),
    ("library", "lib"),
    ("ray generation", "lib"),
    ("intersection", "lib"),
    ("any hit", "lib"),
    ("closest hit", "lib"),
    ("miss", "lib"),
    ("callable", "lib"),
    ("mesh", "ms"),
    ("amplification", "as"),
    ("node", "lib"),
];

/// The stage of a `ShaderKind` as a word, or `kind N` for one no table holds.
pub fn kind_name(kind: u16) -> String {
    match SHADER_KINDS.get(kind as usize) {
        Some(k) => k.0.to_string(),
        None => format!("kind {kind}"),
    }
}

/// The program header of a `DXIL` part (`dxbc.md` §4): what kind of shader, which model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgramVersion {
    pub kind: u16,
    pub major: u8,
    pub minor: u8,
}

impl ProgramVersion {
    /// The stage as a word (`pixel`, `compute`, …), or `None` for an unknown kind.
    pub fn kind_name(&self) -> Option<&'static str> {
        SHADER_KINDS.get(self.kind as usize).map(|k| k.0)
    }

    /// The HLSL profile, e.g. `ps_6_0`.
    pub fn profile(&self) -> String {
        let prefix = SHADER_KINDS
            .get(self.kind as usize)
            .map(|k| k.1)
            .unwrap_or("unknown");
        format!("{prefix}_{}_{}", self.major, self.minor)
    }
}

/// A `DXIL` (or `STAT`, `ILDB`) part's 24-byte header, checked as DXC's
/// `IsValidDxilProgramHeader` checks it (`dxbc.md` §4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramHeader {
    pub version: ProgramVersion,
    pub size_in_uint32: u32,
    pub dxil_major: u8,
    pub dxil_minor: u8,
    /// The bitcode, relative to the part's data.
    pub bitcode: Range<usize>,
}

impl ProgramHeader {
    pub fn parse(data: &[u8]) -> Result<ProgramHeader, String> {
        if data.len() < 24 {
            return Err(format!(
                "a program part of {} bytes, its header needs 24",
                data.len()
            ));
        }
        let size = u32_at(data, 4);
        if (size as u64) * 4 > data.len() as u64 {
            return Err(format!(
                "SizeInUint32 at offset 4 says {size} words, the part has {} bytes",
                data.len()
            ));
        }
        if &data[8..12] != b"DXIL" {
            return Err(format!(
                "no 'DXIL' magic at offset 8, found {:02x?}",
                &data[8..12]
            ));
        }
        let dxil = u32_at(data, 12);
        let offset = u32_at(data, 16) as u64;
        let len = u32_at(data, 20) as u64;
        if offset + len > data.len() as u64 - 8 {
            return Err(format!(
                "the bitcode ({len} bytes at offset {offset} from the magic) runs past the part's {} bytes",
                data.len()
            ));
        }
        let v = u32_at(data, 0);
        let start = 8 + offset as usize;
        Ok(ProgramHeader {
            version: ProgramVersion {
                kind: (v >> 16) as u16,
                major: ((v >> 4) & 0xF) as u8,
                minor: (v & 0xF) as u8,
            },
            size_in_uint32: size,
            dxil_major: (dxil >> 8) as u8,
            dxil_minor: dxil as u8,
            bitcode: start..start + len as usize,
        })
    }
}

impl Container {
    /// The first part with this FourCC.
    pub fn part(&self, fourcc: &[u8; 4]) -> Option<&Part> {
        self.parts.iter().find(|p| &p.fourcc == fourcc)
    }

    /// The program version of the `DXIL` part, if there is one with a readable header.
    pub fn program_version(&self, bytes: &[u8]) -> Option<ProgramVersion> {
        let part = self.part(b"DXIL")?;
        let data = bytes.get(part.data.clone())?;
        ProgramHeader::parse(data).ok().map(|h| h.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A container of the given parts laid out as DXC lays them out.
    fn build(parts: &[(&[u8; 4], &[u8])]) -> Vec<u8> {
        let table = HEADER_LEN + 4 * parts.len();
        let size = table + parts.iter().map(|p| 8 + p.1.len()).sum::<usize>();
        let mut out = Vec::with_capacity(size);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&[0u8; 16]);
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&(size as u32).to_le_bytes());
        out.extend_from_slice(&(parts.len() as u32).to_le_bytes());
        let mut at = table;
        for p in parts {
            out.extend_from_slice(&(at as u32).to_le_bytes());
            at += 8 + p.1.len();
        }
        for (fourcc, data) in parts {
            out.extend_from_slice(*fourcc);
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(data);
        }
        out
    }

    #[test]
    fn parts_are_listed_in_order() {
        let mut dxil = vec![0u8; 24];
        dxil[..4].copy_from_slice(&0x0001_0060u32.to_le_bytes());
        dxil[8..12].copy_from_slice(b"DXIL");
        let bytes = build(&[(b"SFI0", &[0; 8]), (b"DXIL", &dxil)]);
        let c = parse(&bytes).unwrap();
        let names: Vec<String> = c.parts.iter().map(Part::name).collect();
        assert_eq!(names, ["SFI0", "DXIL"]);
        assert_eq!(c.parts[0].data, 48..56);
        let v = c.program_version(&bytes).unwrap();
        assert_eq!(
            (v.kind_name(), v.profile()),
            (Some("vertex"), "vs_6_0".to_string())
        );
    }

    #[test]
    fn every_prefix_and_bad_table_is_refused() {
        let bytes = build(&[(b"SFI0", &[0; 8]), (b"PRIV", &[1, 2, 3])]);
        for n in 0..bytes.len() {
            assert!(parse(&bytes[..n]).is_err(), "prefix {n}");
        }
        let mut huge = bytes.clone();
        huge[28..32].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            parse(&huge),
            Err(ContainerError::PartTableOverrun { .. })
        ));
        let mut gap = bytes.clone();
        gap[32..36].copy_from_slice(&44u32.to_le_bytes());
        assert!(parse(&gap).is_err());
    }

    #[test]
    fn corpus_containers_are_valid() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/dxil");
        if !dir.is_dir() {
            assert!(
                std::env::var("CI").map_or(true, |v| v != "true"),
                "corpus missing under CI"
            );
            eprintln!("skipped: {} is not here", dir.display());
            return;
        }
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "dxil") {
                let bytes = std::fs::read(&path).unwrap();
                let c = parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(c.part(b"DXIL").is_some(), "{}", path.display());
                assert!(c.program_version(&bytes).is_some(), "{}", path.display());
                seen += 1;
            }
        }
        assert_eq!(seen, 129);
    }
}
