//! A program's binding table (`sgd2.md` §4), decoded in both readings.
//!
//! The seed's notes and the public parser agree on most bytes and read a few differently:
//! the header's bytes 2–5 (one u32 constant count, or a u16 cbuffer count and a u16
//! texture count), the register record's bytes 0x05–0x0D (a class byte, a u16 space and
//! six unknown bytes; or a descriptor count, a u8 space, a reserved byte, a constants
//! offset, a name offset and padding) and the constant record's bytes 0x06–0x0F. Both
//! readings are shown side by side; the fields they agree on are shown once.
//!
//! Names are found twice: by joaat of the names stored after the records (the seed's
//! reading; exact case, lower case, or `_` + lower case as the public parser hashes
//! samplers), and by following the name offsets (the public reading). Each record says
//! whether the two agree.

use serde::Serialize;

use super::joaat::{Match, Resolver};
use super::{hex, hex32, text};

pub const HEADER_LEN: usize = 8;
pub const RESOURCE_LEN: usize = 28;
pub const CONSTANT_LEN: usize = 24;

/// Resource type codes (`sgd2.md` §4.3): HLSL type and register class.
const RESOURCE_TYPES: &[(u16, &str, char)] = &[
    (0x0102, "Texture2D", 't'),
    (0x0142, "Texture2DArray", 't'),
    (0x0202, "TextureCube", 't'),
    (0x0302, "Texture3D", 't'),
    (0x0401, "Buffer", 't'),
    (0x0405, "StructuredBuffer", 't'),
    (0x0407, "ByteAddressBuffer", 't'),
    (0x011C, "RWTexture2D", 'u'),
    (0x015C, "RWTexture2DArray", 'u'),
    (0x040E, "AppendStructuredBuffer", 'u'),
    (0x0414, "RWStructuredBuffer", 'u'),
    (0x0416, "ConsumeStructuredBuffer", 'u'),
    (0x0418, "RWByteAddressBuffer", 'u'),
    (0x0423, "SamplerState", 's'),
    (0x0430, "ConstantBuffer", 'b'),
];

/// Constant value types (`sgd2.md` §4.4), by their code.
const VALUE_TYPES: &[&str] = &[
    "Bool", "Uint", "Uint2", "Uint3", "Uint4", "Int", "Int2", "Int3", "Int4", "Float", "Float2",
    "Float3", "Float4", "Float4x3", "Float4x4",
];

/// The HLSL type name and register class of a resource type code.
pub fn resource_type(code: u16) -> (String, char) {
    match RESOURCE_TYPES.iter().find(|t| t.0 == code) {
        Some(&(_, name, class)) => (name.to_string(), class),
        None => (format!("unknown ({code:#06x})"), '?'),
    }
}

/// The name of a constant's value type (the low byte of its first word).
pub fn value_type(code: u8) -> String {
    VALUE_TYPES
        .get(code as usize)
        .map(|s| s.to_string())
        .unwrap_or_else(|| format!("unknown ({code})"))
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[derive(Debug, Serialize)]
pub struct Bindings {
    pub length: usize,
    pub header: Header,
    pub resources: Vec<Resource>,
    pub constants: Vec<Constant>,
    /// The names stored after the records, in order.
    pub names: Vec<String>,
    /// Where the table disagrees with itself or a reading (`sgd2.md` §9 rules 7 and 8).
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Header {
    pub seed: SeedHeader,
    pub public_parser: PublicHeader,
}

#[derive(Debug, Serialize)]
pub struct SeedHeader {
    pub resource_count: u16,
    /// Bytes 2–5 as one u32.
    pub constant_count: u32,
    pub unnamed_u16: u16,
}

#[derive(Debug, Serialize)]
pub struct PublicHeader {
    pub reg_count: u16,
    pub cbuffer_count: u16,
    pub tex_count: u16,
    pub block_size_copy: u16,
}

/// A name found by its hash.
#[derive(Debug, Clone, Serialize)]
pub struct ByHash {
    pub name: String,
    #[serde(rename = "match")]
    pub how: Match,
}

/// What the second hash of a record stands for.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Second {
    Note(&'static str),
    Name(ByHash),
}

#[derive(Debug, Serialize)]
pub struct Resource {
    pub index: usize,
    /// Offset of the record inside the table.
    pub offset: usize,
    #[serde(rename = "type")]
    pub kind: String,
    pub type_code: String,
    pub register: String,
    pub slot: u16,
    pub space: u16,
    /// Byte 0x05 read as the public parser does (descriptors; 32 = "bindless").
    pub count: u8,
    /// Bytes 0x0E–0x11 as a u32 (the seed; the public u16 agrees below 65,536).
    pub buffer_size: u32,
    pub owned_constants: u8,
    pub name: Option<String>,
    pub name_hash: String,
    pub name_by_hash: Option<ByHash>,
    pub name_by_offset: Option<String>,
    pub names_agree: bool,
    pub second_hash: String,
    pub second_hash_resolves_to: Second,
    pub bytes_05_0d: ResourceReadings,
    pub unknown_12: String,
}

#[derive(Debug, Serialize)]
pub struct ResourceReadings {
    pub seed: SeedResource,
    pub public_parser: PublicResource,
}

#[derive(Debug, Serialize)]
pub struct SeedResource {
    pub class_byte: u8,
    pub space_u16: u16,
    pub unknown_08_0d: String,
}

#[derive(Debug, Serialize)]
pub struct PublicResource {
    pub num_descriptors: u8,
    pub space_u8: u8,
    pub reserved: u8,
    pub constants_offset: u16,
    pub name_offset: u16,
    pub padding: u16,
}

#[derive(Debug, Serialize)]
pub struct Constant {
    pub index: usize,
    pub offset_in_table: usize,
    #[serde(rename = "type")]
    pub kind: String,
    pub type_word: String,
    /// Bits 16–31 of the first word (the public parser's array size).
    pub array_size: u16,
    /// Byte offset in the owning buffer.
    pub offset: u16,
    /// The owning resource by the ownership counts, in register order (the seed).
    pub owner: Option<String>,
    /// The owning resource by the resources' constants offsets (the public parser).
    pub owner_by_offset: Option<String>,
    pub name: Option<String>,
    pub name_hash: String,
    pub name_by_hash: Option<ByHash>,
    pub name_by_offset: Option<String>,
    pub names_agree: bool,
    pub second_hash: String,
    pub second_hash_resolves_to: Second,
    pub bytes_06_0f: ConstantReadings,
}

#[derive(Debug, Serialize)]
pub struct ConstantReadings {
    pub seed: SeedConstant,
    pub public_parser: PublicConstant,
}

#[derive(Debug, Serialize)]
pub struct SeedConstant {
    pub id_u16: u16,
    pub unknown_08_0f: String,
}

#[derive(Debug, Serialize)]
pub struct PublicConstant {
    pub name_offset_u32: u32,
    pub padding_0a_0f: String,
}

/// The NUL-terminated string at `at` in `table`, if it lies inside it.
fn string_at(table: &[u8], at: usize) -> Option<&[u8]> {
    let rest = table.get(at..)?;
    let end = rest.iter().position(|&b| b == 0)?;
    Some(&rest[..end])
}

fn by_hash(hash: u32, pool: &Resolver<'_>) -> Option<ByHash> {
    pool.resolve(hash).map(|(name, how)| ByHash {
        name: text(name),
        how,
    })
}

fn second(first: u32, second: u32, pool: &Resolver<'_>) -> Second {
    if second == 0 {
        Second::Note("zero")
    } else if second == first {
        Second::Note("the first hash")
    } else {
        match by_hash(second, pool) {
            Some(found) => Second::Name(found),
            None => Second::Note("no name in this table"),
        }
    }
}

/// Whether a record's two names agree; a record with only one of them agrees with itself.
fn agree(by_hash: &Option<ByHash>, by_offset: &Option<String>) -> bool {
    match (by_hash, by_offset) {
        (Some(h), Some(o)) => &h.name == o,
        (None, None) => false,
        _ => true,
    }
}

/// A record's name both ways (rule 7): by its name offset and by its first hash,
/// with a warning for each reading that fails or disagrees. `what` names the record
/// (`resource 3`).
struct Names {
    name: Option<String>,
    by_hash: Option<ByHash>,
    by_offset: Option<String>,
    agree: bool,
}

fn resolve_names(
    what: &str,
    table: &[u8],
    at: usize,
    name_offset: usize,
    hash: u32,
    pool: &Resolver<'_>,
    warnings: &mut Vec<String>,
) -> Names {
    let by_offset = string_at(table, at.saturating_add(name_offset)).map(text);
    if by_offset.is_none() {
        warnings.push(format!(
            "{what}: its name offset {name_offset} does not reach a NUL-terminated name \
             inside the table (rule 7)"
        ));
    }
    let by_hash = by_hash(hash, pool);
    let agree = agree(&by_hash, &by_offset);
    if !agree {
        warnings.push(format!(
            "{what}: the name by hash and the name by offset differ"
        ));
    }
    Names {
        name: by_offset
            .clone()
            .or_else(|| by_hash.as_ref().map(|h| h.name.clone())),
        by_hash,
        by_offset,
        agree,
    }
}

/// Decode a binding table. Fails only when the records themselves do not fit (rule 7);
/// everything else that is off is a warning, and the program stays usable.
pub fn decode(table: &[u8]) -> Result<Bindings, String> {
    let len = table.len();
    if len < HEADER_LEN {
        return Err(format!("{len} bytes, shorter than the 8-byte header"));
    }
    let header = Header {
        seed: SeedHeader {
            resource_count: u16_at(table, 0),
            constant_count: u32_at(table, 2),
            unnamed_u16: u16_at(table, 6),
        },
        public_parser: PublicHeader {
            reg_count: u16_at(table, 0),
            cbuffer_count: u16_at(table, 2),
            tex_count: u16_at(table, 4),
            block_size_copy: u16_at(table, 6),
        },
    };
    let count = u16_at(table, 0) as usize;
    let constants_start = HEADER_LEN + count * RESOURCE_LEN;
    if constants_start > len {
        return Err(format!(
            "{count} resource records of 28 bytes do not fit in the {len}-byte table"
        ));
    }
    let owned: Vec<usize> = (0..count)
        .map(|r| table[HEADER_LEN + r * RESOURCE_LEN + 4] as usize)
        .collect();
    let constant_count: usize = owned.iter().sum();
    let names_start = constants_start + constant_count * CONSTANT_LEN;
    if names_start > len {
        return Err(format!(
            "the resources own {constant_count} constants of 24 bytes, which do not fit in \
             the {len}-byte table after the resource records"
        ));
    }
    let pool: Vec<&[u8]> = table[names_start..]
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .collect();
    let names = pool;
    let pool = Resolver::new(&names);
    let mut warnings = Vec::new();
    if header.public_parser.block_size_copy as usize != len {
        warnings.push(format!(
            "header bytes 6-7 say {}, the table is {len} bytes (rule 8)",
            header.public_parser.block_size_copy
        ));
    }
    if header.seed.constant_count as usize != constant_count {
        warnings.push(format!(
            "the seed's constant count (bytes 2-5 as a u32) is {}, the ownership counts add to \
             {constant_count} (rule 8)",
            header.seed.constant_count
        ));
    }
    if header.public_parser.cbuffer_count as usize != constant_count {
        warnings.push(format!(
            "the public parser's cbuffer count (bytes 2-3) is {}, the ownership counts add to \
             {constant_count}",
            header.public_parser.cbuffer_count
        ));
    }

    // Owners, both ways: by ownership counts in register order, and by offsets.
    let mut owner_by_count = vec![None; constant_count];
    let mut owner_by_offset = vec![None; constant_count];
    let mut next = 0;
    for (r, &n) in owned.iter().enumerate() {
        for slot in owner_by_count.iter_mut().skip(next).take(n) {
            *slot = Some(r);
        }
        next += n;
        let at = HEADER_LEN + r * RESOURCE_LEN;
        let cb_offset = u16_at(table, at + 8) as usize;
        if cb_offset != 0 && n > 0 {
            let first = at + cb_offset;
            if first >= constants_start && (first - constants_start) % CONSTANT_LEN == 0 {
                let k = (first - constants_start) / CONSTANT_LEN;
                for slot in owner_by_offset.iter_mut().skip(k).take(n) {
                    *slot = Some(r);
                }
            } else {
                warnings.push(format!(
                    "resource {r}: its constants offset {cb_offset} does not point at a \
                     constant record"
                ));
            }
        }
    }

    let mut resources = Vec::with_capacity(count);
    for r in 0..count {
        let at = HEADER_LEN + r * RESOURCE_LEN;
        let rec = &table[at..at + RESOURCE_LEN];
        let code = u16_at(rec, 0);
        let (kind, class) = resource_type(code);
        let slot = u16_at(rec, 2);
        let h1 = u32_at(rec, 0x14);
        let h2 = u32_at(rec, 0x18);
        let name_offset = u16_at(rec, 0x0A);
        let n = resolve_names(
            &format!("resource {r}"),
            table,
            at,
            name_offset as usize,
            h1,
            &pool,
            &mut warnings,
        );
        resources.push(Resource {
            index: r,
            offset: at,
            kind,
            type_code: format!("{code:#06x}"),
            register: format!("{class}{slot}"),
            slot,
            space: u16_at(rec, 6),
            count: rec[5],
            buffer_size: u32_at(rec, 0x0E),
            owned_constants: rec[4],
            name: n.name,
            name_hash: hex32(h1),
            name_by_hash: n.by_hash,
            name_by_offset: n.by_offset,
            names_agree: n.agree,
            second_hash: hex32(h2),
            second_hash_resolves_to: second(h1, h2, &pool),
            bytes_05_0d: ResourceReadings {
                seed: SeedResource {
                    class_byte: rec[5],
                    space_u16: u16_at(rec, 6),
                    unknown_08_0d: hex(&rec[8..0x0E]),
                },
                public_parser: PublicResource {
                    num_descriptors: rec[5],
                    space_u8: rec[6],
                    reserved: rec[7],
                    constants_offset: u16_at(rec, 8),
                    name_offset,
                    padding: u16_at(rec, 0x0C),
                },
            },
            unknown_12: format!("{:#06x}", u16_at(rec, 0x12)),
        });
    }

    let resource_name = |r: Option<usize>| {
        r.map(|r| {
            resources[r]
                .name
                .clone()
                .unwrap_or_else(|| format!("resource {r}"))
        })
    };
    let mut constants = Vec::with_capacity(constant_count);
    for c in 0..constant_count {
        let at = constants_start + c * CONSTANT_LEN;
        let rec = &table[at..at + CONSTANT_LEN];
        let word = u32_at(rec, 0);
        let h1 = u32_at(rec, 0x10);
        let h2 = u32_at(rec, 0x14);
        let name_offset = u32_at(rec, 6);
        let n = resolve_names(
            &format!("constant {c}"),
            table,
            at,
            name_offset as usize,
            h1,
            &pool,
            &mut warnings,
        );
        if owner_by_count[c] != owner_by_offset[c] {
            warnings.push(format!(
                "constant {c}: the ownership counts and the constants offsets name different \
                 owners"
            ));
        }
        constants.push(Constant {
            index: c,
            offset_in_table: at,
            kind: value_type(rec[0]),
            type_word: hex32(word),
            array_size: (word >> 16) as u16,
            offset: u16_at(rec, 4),
            owner: resource_name(owner_by_count[c]),
            owner_by_offset: resource_name(owner_by_offset[c]),
            name: n.name,
            name_hash: hex32(h1),
            name_by_hash: n.by_hash,
            name_by_offset: n.by_offset,
            names_agree: n.agree,
            second_hash: hex32(h2),
            second_hash_resolves_to: second(h1, h2, &pool),
            bytes_06_0f: ConstantReadings {
                seed: SeedConstant {
                    id_u16: u16_at(rec, 6),
                    unknown_08_0f: hex(&rec[8..0x10]),
                },
                public_parser: PublicConstant {
                    name_offset_u32: name_offset,
                    padding_0a_0f: hex(&rec[0x0A..0x10]),
                },
            },
        });
    }
    Ok(Bindings {
        length: len,
        header,
        resources,
        constants,
        names: names.iter().map(|n| text(n)).collect(),
        warnings,
    })
}
