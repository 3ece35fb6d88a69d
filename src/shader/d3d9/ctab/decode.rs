//! Reading a CTAB payload (§10.2) with the checks of §10.4.
//!
//! Every read is bounds-checked against the payload, so a comment shorter than the table it
//! claims to hold is read up to its end and no further. Two leniencies follow Microsoft's
//! D3DX, which accepts such tables: a string may end at the end of the payload without its
//! NUL (Wine's `ctab_arrays` test shader cuts its creator so), and a Target offset of 0
//! means "no target" (vkd3d writes it). Shared type infos are expanded into separate trees;
//! the expansion, the nesting and the bytes of strings and defaults are all capped.

use super::{
    Class, Constant, ConstantTable, CtabError, Member, ParamType, RegisterSet, TypeInfo,
    CTAB_FOURCC, MAX_NESTING_DEPTH, MAX_TYPE_NODES,
};

const HEADER_SIZE: u64 = 28;
const CONSTANT_INFO_SIZE: u64 = 20;
const TYPE_INFO_SIZE: u64 = 16;
const MEMBER_INFO_SIZE: u64 = 8;

/// Bytes of strings and default values one table may decode to. Type infos and strings can
/// be shared, so this, not the payload size, bounds what a decode allocates; a table that
/// fits one comment (128 KiB) and shares nothing stays far below it.
const MAX_DECODED_BYTES: usize = 4 << 20;

pub(super) fn decode(payload: &[u8], shader_version: u32) -> Result<ConstantTable, CtabError> {
    let Some(fourcc) = payload.get(..4) else {
        return Err(CtabError::BadPayloadLength {
            len: payload.len(),
            expected: "at least 4 bytes: the 'CTAB' FourCC",
        });
    };
    let found = u32::from_le_bytes([fourcc[0], fourcc[1], fourcc[2], fourcc[3]]);
    if found != CTAB_FOURCC {
        return Err(CtabError::MissingFourcc { found });
    }
    let mut reader = Reader {
        bytes: &payload[4..],
        nodes: 0,
        decoded_bytes: 0,
    };
    let table = reader.table(shader_version)?;
    Ok(with_own_types(table, payload))
}

/// `table` with [`Constant::own_type`] set where the compiler wrote a constant's type info
/// apart from an earlier constant's equal one (`uint u` beside `int i`,
/// `hlsl/vkd3d/cast-to-float`), when that is what makes the table encode to its bytes again.
fn with_own_types(table: ConstantTable, payload: &[u8]) -> ConstantTable {
    let bytes = &payload[4..];
    let word = |at: usize| {
        let b = bytes.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let Some(array) = word(16) else { return table };
    let offsets: Vec<Option<u32>> = (0..table.constants.len())
        .map(|i| word((array as usize).checked_add(i * CONSTANT_INFO_SIZE as usize + 12)?))
        .collect();
    let c = &table.constants;
    let apart = |i: usize| {
        let first = (0..i).find(|&j| c[j].type_info == c[i].type_info);
        first.is_some_and(|j| offsets[j] != offsets[i])
    };
    let own: Vec<bool> = (0..c.len()).map(apart).collect();
    if !own.contains(&true) || table.encode() == payload {
        return table;
    }
    let mut marked = table.clone();
    for (constant, own) in marked.constants.iter_mut().zip(own) {
        constant.own_type = own;
    }
    if marked.encode() == payload {
        marked
    } else {
        table
    }
}

struct Reader<'a> {
    /// The table proper: offsets count from its first byte.
    bytes: &'a [u8],
    nodes: usize,
    decoded_bytes: usize,
}

impl Reader<'_> {
    fn size(&self) -> usize {
        self.bytes.len()
    }

    fn need(&self, field: &str, offset: u64, len: u64) -> Result<usize, CtabError> {
        if offset.saturating_add(len) <= self.size() as u64 {
            Ok(offset as usize)
        } else {
            Err(CtabError::Truncated {
                field: field.to_string(),
                offset,
                needed: len,
                size: self.size(),
            })
        }
    }

    fn u32(&self, field: &str, offset: u64) -> Result<u32, CtabError> {
        let at = self.need(field, offset, 4)?;
        let b = &self.bytes[at..at + 4];
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u16(&self, field: &str, offset: u64) -> Result<u16, CtabError> {
        let at = self.need(field, offset, 2)?;
        Ok(u16::from_le_bytes([self.bytes[at], self.bytes[at + 1]]))
    }

    fn charge(&mut self, field: &str, at: usize, bytes: usize) -> Result<(), CtabError> {
        self.decoded_bytes = self.decoded_bytes.saturating_add(bytes);
        if self.decoded_bytes > MAX_DECODED_BYTES {
            return Err(CtabError::BadTypeInfo {
                field: field.to_string(),
                at,
                reason: format!(
                    "strings and default values shared this often decode to more than {MAX_DECODED_BYTES} bytes"
                ),
            });
        }
        Ok(())
    }

    /// The string at `offset`, named by the field at `at` that points to it: one char per
    /// byte, up to its NUL or the end of the table.
    fn string(&mut self, field: &str, at: usize, offset: u32) -> Result<String, CtabError> {
        let Some(tail) = self.bytes.get(offset as usize..).filter(|t| !t.is_empty()) else {
            return Err(CtabError::OffsetOutOfRange {
                field: field.to_string(),
                at,
                offset,
                size: self.size(),
            });
        };
        let len = tail.iter().position(|b| *b == 0).unwrap_or(tail.len());
        let text: String = tail[..len].iter().map(|b| char::from(*b)).collect();
        self.charge(field, at, len + 1)?;
        Ok(text)
    }

    fn table(&mut self, shader_version: u32) -> Result<ConstantTable, CtabError> {
        self.need("header", 0, HEADER_SIZE)?;
        let size = self.u32("header Size", 0)?;
        if u64::from(size) != HEADER_SIZE {
            return Err(CtabError::BadHeaderSize { found: size });
        }
        let creator_offset = self.u32("header Creator", 4)?;
        let version = self.u32("header Version", 8)?;
        let count = self.u32("header Constants", 12)?;
        let array = self.u32("header ConstantInfo", 16)?;
        let flags = self.u32("header Flags", 20)?;
        let target_offset = self.u32("header Target", 24)?;
        if version != shader_version {
            return Err(CtabError::VersionMismatch {
                table: version,
                shader: shader_version,
            });
        }
        let creator = self.string("header Creator", 4, creator_offset)?;
        let target = match target_offset {
            0 => None,
            offset => Some(self.string("header Target", 24, offset)?),
        };
        if array as usize >= self.size() {
            return Err(CtabError::OffsetOutOfRange {
                field: "header ConstantInfo".into(),
                at: 16,
                offset: array,
                size: self.size(),
            });
        }
        let fits = (self.size() as u64 - u64::from(array)) / CONSTANT_INFO_SIZE;
        if u64::from(count) > fits {
            return Err(CtabError::TooManyConstants {
                count,
                fits,
                array,
                size: self.size(),
            });
        }
        let constants = (0..u64::from(count))
            .map(|i| self.constant(i, u64::from(array) + i * CONSTANT_INFO_SIZE))
            .collect::<Result<_, _>>()?;
        Ok(ConstantTable {
            creator,
            target,
            version,
            flags,
            constants,
        })
    }

    fn constant(&mut self, index: u64, at: u64) -> Result<Constant, CtabError> {
        let entry = format!("constants[{index}]");
        let field = |name: &str| format!("{entry}.{name}");
        let name_offset = self.u32(&field("Name"), at)?;
        let set = self.u16(&field("RegisterSet"), at + 4)?;
        let register_index = self.u16(&field("RegisterIndex"), at + 6)?;
        let register_count = self.u16(&field("RegisterCount"), at + 8)?;
        let reserved = self.u16(&field("Reserved"), at + 10)?;
        let type_offset = self.u32(&field("TypeInfo"), at + 12)?;
        let default_offset = self.u32(&field("DefaultValue"), at + 16)?;
        let at = at as usize;
        let name = self.string(&field("Name"), at, name_offset)?;
        let entry = format!("{entry} {name:?}");
        let register_set = RegisterSet(set);
        if register_set.name().is_none() {
            return Err(CtabError::BadRegisterSet {
                field: format!("{entry}.RegisterSet"),
                at: at + 4,
                value: set,
            });
        }
        let type_info = self.type_info(&entry, at + 12, type_offset, 0)?;
        let default_value = match default_offset {
            0 => None,
            offset => {
                Some(self.default_value(&entry, at + 16, offset, &type_info, register_set)?)
            }
        };
        Ok(Constant {
            name,
            register_set,
            register_index,
            register_count,
            reserved,
            type_info,
            default_value,
            own_type: false,
        })
    }

    fn default_value(
        &mut self,
        entry: &str,
        at: usize,
        offset: u32,
        type_info: &TypeInfo,
        set: RegisterSet,
    ) -> Result<Vec<u32>, CtabError> {
        let field = format!("{entry}.DefaultValue");
        let needed = type_info.default_dwords(set).saturating_mul(4);
        if u64::from(offset).saturating_add(needed) > self.size() as u64 {
            return Err(CtabError::BadDefault {
                field,
                at,
                offset,
                needed,
                size: self.size(),
            });
        }
        self.charge(&field, at, needed as usize)?;
        let start = offset as usize;
        Ok(self.bytes[start..start + needed as usize]
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// The type info at `offset`, which the field at `at` of `owner` points to.
    fn type_info(
        &mut self,
        owner: &str,
        at: usize,
        offset: u32,
        depth: usize,
    ) -> Result<TypeInfo, CtabError> {
        let field = format!("{owner}.TypeInfo");
        let bad = |reason: String| CtabError::BadTypeInfo {
            field: field.clone(),
            at,
            reason,
        };
        if depth > MAX_NESTING_DEPTH {
            return Err(bad(format!(
                "struct members nest deeper than {MAX_NESTING_DEPTH} levels (a cycle?)"
            )));
        }
        self.nodes += 1;
        if self.nodes > MAX_TYPE_NODES {
            return Err(bad(format!(
                "more than {MAX_TYPE_NODES} type infos counting every use of a shared one"
            )));
        }
        let start = u64::from(offset);
        if start + TYPE_INFO_SIZE > self.size() as u64 {
            return Err(bad(format!(
                "points to {offset:#x}, expected 16 bytes of TYPEINFO inside the {}-byte table",
                self.size()
            )));
        }
        let class = Class(self.u16(&field, start)?);
        let param_type = ParamType(self.u16(&field, start + 2)?);
        let rows = self.u16(&field, start + 4)?;
        let columns = self.u16(&field, start + 6)?;
        let elements = self.u16(&field, start + 8)?;
        let member_count = self.u16(&field, start + 10)?;
        let members_offset = self.u32(&field, start + 12)?;
        let array = u64::from(members_offset);
        if member_count > 0
            && array + u64::from(member_count) * MEMBER_INFO_SIZE > self.size() as u64
        {
            return Err(CtabError::BadTypeInfo {
                field: format!("{owner}.StructMemberInfo"),
                at: offset as usize + 12,
                reason: format!(
                    "points to {members_offset:#x}, expected {member_count} 8-byte STRUCTMEMBERINFO inside the {}-byte table",
                    self.size()
                ),
            });
        }
        // Grown one member at a time: the node budget, not the claimed count, bounds it.
        let mut members = Vec::new();
        for i in 0..u64::from(member_count) {
            let record = array + i * MEMBER_INFO_SIZE;
            let name_offset = self.u32(&format!("{owner}.members[{i}].Name"), record)?;
            let type_offset = self.u32(&format!("{owner}.members[{i}].TypeInfo"), record + 4)?;
            let name = self.string(
                &format!("{owner}.members[{i}].Name"),
                record as usize,
                name_offset,
            )?;
            let member = format!("{owner}.members[{i}] {name:?}");
            let type_info = self.type_info(&member, record as usize + 4, type_offset, depth + 1)?;
            members.push(Member { name, type_info });
        }
        Ok(TypeInfo {
            class,
            param_type,
            rows,
            columns,
            elements,
            members,
        })
    }
}
