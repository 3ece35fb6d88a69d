//! A whole container decoded: the envelope, the digest checked, every part it knows
//! decoded (unknown parts listed with their FourCC and size), and the `dx.op`
//! intrinsics its bitcode uses. What the program JSON of an archive shows, and what a
//! census asks of a program.

use serde::Serialize;

use super::container::{self, Container, ContainerError, ProgramHeader};
use super::digest::{self, Signature};
use super::hex;
use super::intrinsics::{self, Usage};
use super::parts::{self, CompilerVersion, DebugName, Features, ShaderHash};
use super::psv::{self, Psv};
use super::rts::{self, RootSignature};

#[derive(Debug, Clone, Serialize)]
pub struct DigestJson {
    pub stored: String,
    /// The retail digest of the container as it is.
    pub computed: String,
    pub status: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProgramJson {
    pub kind: String,
    pub profile: String,
    pub shader_model: String,
    pub dxil_version: String,
    pub size_in_uint32: u32,
    /// Offset and size of the bitcode inside the part's data.
    pub bitcode_offset: usize,
    pub bitcode_size: usize,
}

impl ProgramJson {
    fn of(h: &ProgramHeader) -> ProgramJson {
        ProgramJson {
            kind: container::kind_name(h.version.kind),
            profile: h.version.profile(),
            shader_model: format!("{}.{}", h.version.major, h.version.minor),
            dxil_version: format!("{}.{}", h.dxil_major, h.dxil_minor),
            size_in_uint32: h.size_in_uint32,
            bitcode_offset: h.bitcode.start,
            bitcode_size: h.bitcode.len(),
        }
    }
}

/// A part's content, as far as it is known.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Decoded {
    Program(ProgramJson),
    Features(Features),
    Signature(parts::Signature),
    Psv(Box<Psv>),
    RootSignature(RootSignature),
    Hash(ShaderHash),
    DebugName(DebugName),
    Version(CompilerVersion),
}

#[derive(Debug, Clone, Serialize)]
pub struct PartJson {
    pub fourcc: String,
    pub offset: usize,
    pub size: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decoded: Option<Decoded>,
    /// Why a part this reader knows could not be decoded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Program {
    pub size: u32,
    pub version: String,
    pub digest: DigestJson,
    /// The `DXIL` part's header, where there is one that reads.
    pub program: Option<ProgramJson>,
    pub parts: Vec<PartJson>,
    /// The `dx.op` functions the program declares, with their calls and opcodes.
    pub intrinsics: Vec<intrinsics::Intrinsic>,
    /// Whether the calls and opcodes above are complete (every function body read).
    pub intrinsics_complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intrinsics_error: Option<String>,
    #[serde(skip)]
    pub facts: Facts,
}

/// A container as a program's JSON shows it (`programs/<stage>/<n>.json` of a mount,
/// `shaderfs dxil info` of a loose file): what it is, whatever it holds.
#[derive(Debug, Clone, Serialize)]
pub struct ContainerView {
    pub container: ContainerJson,
    /// The `dx.op` functions the program declares, with their calls and opcodes.
    pub intrinsics: Vec<intrinsics::Intrinsic>,
    /// Whether every function body was read (so calls and opcodes are complete).
    pub intrinsics_complete: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ContainerJson {
    pub size: usize,
    /// zlib CRC-32 of the whole container: the key shader-replacement mods use.
    pub crc32: String,
    pub version: Option<String>,
    pub digest: Option<DigestJson>,
    pub program: Option<ProgramJson>,
    pub parts: Vec<PartJson>,
    /// What D3D12 or the game would refuse (a digest that does not verify, a part that
    /// does not decode, …); for a container that is not valid (`dxbc.md` §2) why, the
    /// bytes being served as stored.
    pub problems: Vec<String>,
}

impl ContainerView {
    /// `bytes` decoded; a container that does not parse is one whose `problems` say why.
    pub fn of(bytes: &[u8]) -> ContainerView {
        let mut c = ContainerJson {
            size: bytes.len(),
            crc32: super::crc32_key(bytes),
            version: None,
            digest: None,
            program: None,
            parts: Vec::new(),
            problems: Vec::new(),
        };
        let (mut intrinsics, mut intrinsics_complete) = (Vec::new(), false);
        match decode(bytes) {
            Ok(program) => {
                c.problems = program.problems();
                c.version = Some(program.version);
                c.digest = Some(program.digest);
                c.program = program.program;
                c.parts = program.parts;
                intrinsics = program.intrinsics;
                intrinsics_complete = program.intrinsics_complete;
            }
            Err(e) => c.problems.push(e.to_string()),
        }
        ContainerView {
            container: c,
            intrinsics,
            intrinsics_complete,
        }
    }
}

/// What a census asks of a program, kept typed.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub kind: Option<u16>,
    pub signature: Option<Signature>,
    pub outputs: Option<parts::Signature>,
    pub psv: Option<Psv>,
    pub usage: Option<Usage>,
    pub feature_flags: Option<u64>,
}

impl Program {
    /// What the game (or D3D12) would refuse, each with the place.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.facts.signature == Some(Signature::Mismatch) {
            out.push(format!(
                "container digest {} does not match the computed {} (a D3D12 runtime refuses \
                 it; mount with -o sign to re-sign on save)",
                self.digest.stored, self.digest.computed
            ));
        }
        for p in &self.parts {
            if let Some(e) = &p.error {
                out.push(format!("part {} at offset {:#x}: {e}", p.fourcc, p.offset));
            }
            if let Some(Decoded::Hash(h)) = &p.decoded {
                if h.matches_bitcode == Some(false) {
                    out.push(format!(
                        "part HASH at offset {:#x}: {} is not the MD5 of the bitcode",
                        p.offset, h.digest
                    ));
                }
            }
        }
        if self.program.is_none() {
            out.push("no DXIL part with a readable program header".into());
        }
        if let Some(e) = &self.intrinsics_error {
            out.push(format!("the bitcode: {e}"));
        }
        out
    }
}

/// The [`Facts`] of the container at the start of `bytes`, as [`decode`] finds them but
/// for the digest (`signature` is `None`): what a census needs, without hashing the
/// container twice or decoding parts for their JSON.
pub fn facts(bytes: &[u8]) -> Result<Facts, ContainerError> {
    let c: Container = container::parse(bytes)?;
    let data = |p: &container::Part| &bytes[p.data.clone()];
    let first = |fourcc: &'static [u8; 4]| c.parts.iter().filter(move |p| &p.fourcc == fourcc);
    let header = c
        .part(b"DXIL")
        .and_then(|p| ProgramHeader::parse(data(p)).ok());
    let kind = header.as_ref().map(|h| h.version.kind);
    let bitcode = c
        .part(b"DXIL")
        .zip(header.as_ref())
        .map(|(p, h)| &data(p)[h.bitcode.clone()]);
    Ok(Facts {
        kind,
        signature: None,
        outputs: first(b"OSG1")
            .find_map(|p| parts::signature(data(p), parts::Direction::Output).ok()),
        psv: first(b"PSV0").find_map(|p| psv::decode(data(p), kind).ok()),
        usage: bitcode.and_then(|b| intrinsics::usage(b).ok()),
        feature_flags: first(b"SFI0").find_map(|p| parts::features(data(p)).ok().map(|f| f.0)),
    })
}

/// Decode the container at the start of `bytes`.
pub fn decode(bytes: &[u8]) -> Result<Program, ContainerError> {
    decode_with(bytes, true)
}

/// [`decode`], but for the `dx.op` intrinsics, which are left empty (and
/// `intrinsics_complete` false): what a reader that walks the bitcode itself needs (the
/// `.ll` listing's summary), without a second walk.
pub fn decode_without_intrinsics(bytes: &[u8]) -> Result<Program, ContainerError> {
    decode_with(bytes, false)
}

fn decode_with(bytes: &[u8], intrinsics: bool) -> Result<Program, ContainerError> {
    let c: Container = container::parse(bytes)?;
    let computed = digest::container_digest(bytes, c.size as usize);
    let status = digest::check(&c.digest, &computed);
    let mut facts = Facts {
        signature: Some(status),
        ..Facts::default()
    };
    let header = c
        .part(b"DXIL")
        .and_then(|p| ProgramHeader::parse(&bytes[p.data.clone()]).ok());
    let bitcode = c.part(b"DXIL").zip(header.as_ref()).map(|(p, h)| {
        let data = &bytes[p.data.clone()];
        &data[h.bitcode.clone()]
    });
    facts.kind = header.as_ref().map(|h| h.version.kind);
    let mut parts = Vec::with_capacity(c.parts.len());
    for part in &c.parts {
        let data = &bytes[part.data.clone()];
        let decoded: Option<Result<Decoded, String>> = match &part.fourcc {
            b"DXIL" | b"STAT" | b"ILDB" => {
                Some(ProgramHeader::parse(data).map(|h| Decoded::Program(ProgramJson::of(&h))))
            }
            b"SFI0" => Some(parts::features(data).map(|(flags, f)| {
                facts.feature_flags.get_or_insert(flags);
                Decoded::Features(f)
            })),
            b"ISG1" | b"OSG1" | b"PSG1" => {
                let direction = parts::Direction::of_part(&part.fourcc, facts.kind);
                Some(parts::signature(data, direction).map(|s| {
                    if &part.fourcc == b"OSG1" && facts.outputs.is_none() {
                        facts.outputs = Some(s.clone());
                    }
                    Decoded::Signature(s)
                }))
            }
            b"PSV0" => Some(psv::decode(data, facts.kind).map(|p| {
                facts.psv.get_or_insert_with(|| p.clone());
                Decoded::Psv(Box::new(p))
            })),
            b"RTS0" => Some(rts::decode(data).map(Decoded::RootSignature)),
            b"HASH" => Some(parts::hash(data, bitcode).map(Decoded::Hash)),
            b"ILDN" => Some(parts::debug_name(data).map(Decoded::DebugName)),
            b"VERS" => Some(parts::compiler_version(data).map(Decoded::Version)),
            _ => None,
        };
        let (decoded, error) = match decoded {
            Some(Ok(d)) => (Some(d), None),
            Some(Err(e)) => (None, Some(e)),
            None => (None, None),
        };
        parts.push(PartJson {
            fourcc: part.name(),
            offset: part.offset,
            size: part.data.len(),
            decoded,
            error,
        });
    }
    let (usage, intrinsics_error) = match bitcode.filter(|_| intrinsics).map(intrinsics::usage) {
        Some(Ok(u)) => (Some(u), None),
        Some(Err(e)) => (None, Some(e)),
        None => (None, None),
    };
    let (list, complete) = match &usage {
        Some(u) => (u.intrinsics.clone(), u.complete),
        None => (Vec::new(), false),
    };
    facts.usage = usage;
    Ok(Program {
        size: c.size,
        version: format!("{}.{}", c.major, c.minor),
        digest: DigestJson {
            stored: hex(&c.digest),
            computed: hex(&computed),
            status: status.as_str(),
        },
        program: header.as_ref().map(ProgramJson::of),
        parts,
        intrinsics: list,
        intrinsics_complete: complete,
        intrinsics_error,
        facts,
    })
}
