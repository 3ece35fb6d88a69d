//! Indexing an SGD2 database (`sgd2.md` §2, §3 and §5.1; validation rules of §9).
//!
//! Only the framing is read: where each program's name, container, 152-byte table and
//! binding table lie, and where each effect's lists, region before `proplst`, sections and
//! name block lie. Nothing is copied; everything else is decoded when a view asks. Every
//! count is bounded by the bytes left before anything is allocated for it, so a hostile
//! file cannot make the reader allocate more than a small multiple of its own size.

use std::ops::Range;

pub const MAGIC: &[u8; 4] = b"SGD2";
/// Program groups: six stages, then two the seed found empty (`sgd2.md` §2).
pub const GROUPS: usize = 8;
/// The six stages, in group and in effect-list order.
pub const STAGES: [&str; 6] = ["vertex", "pixel", "geometry", "domain", "hull", "compute"];
/// The fixed table after each container: a u64 and 144 opaque bytes (`sgd2.md` §3).
pub const TABLE_LEN: usize = 152;
pub const PROPLST: &[u8; 8] = b"proplst\0";
/// The smallest program record: name length byte, a one-byte name (its NUL), tag,
/// container length, an empty container, the table and the binding-table length.
pub const MIN_PROGRAM: usize = 1 + 1 + 1 + 4 + TABLE_LEN + 4;
/// The smallest effect record: name length, NUL, word, six empty lists, the marker,
/// the section count and a one-byte name block.
pub const MIN_EFFECT: usize = 1 + 1 + 4 + 6 * 4 + 8 + 4 + 4 + 1;

/// The directory a group's programs appear in.
pub fn group_dir(group: usize) -> String {
    match STAGES.get(group) {
        Some(stage) => stage.to_string(),
        None => format!("group{group}"),
    }
}

/// Why a database cannot be opened: the record, the byte offset and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Sgd2Error {
    #[error("offset 0: expected the magic 'SGD2', found {found:02x?}")]
    BadMagic { found: Vec<u8> },
    #[error(
        "{what} at offset {offset:#x}: count {count} cannot fit in the {available} bytes left \
         (each needs at least {each})"
    )]
    CountTooLarge {
        what: String,
        offset: usize,
        count: u64,
        available: usize,
        each: usize,
    },
    #[error("{what} at offset {offset:#x}: {why}")]
    BadName {
        what: String,
        offset: usize,
        why: &'static str,
    },
    #[error("{what} at offset {offset:#x}: needs {needed} bytes, the file has {available} left")]
    Truncated {
        what: String,
        offset: usize,
        needed: u64,
        available: usize,
    },
    #[error(
        "{what} at offset {offset:#x}: program index {index} is out of range, the {stage} \
         group has {count} programs"
    )]
    BadEffectIndex {
        what: String,
        offset: usize,
        stage: &'static str,
        index: u32,
        count: usize,
    },
    #[error("{what} at offset {offset:#x}: {why}")]
    BadEffectFraming {
        what: String,
        offset: usize,
        why: String,
    },
    #[error("{count} bytes after the last effect (offset {offset:#x}), where the file should end")]
    TrailingBytes { count: usize, offset: usize },
}

impl Sgd2Error {
    /// The byte offset the error is about.
    pub fn offset(&self) -> Option<usize> {
        match self {
            Sgd2Error::BadMagic { .. } => Some(0),
            Sgd2Error::CountTooLarge { offset, .. }
            | Sgd2Error::BadName { offset, .. }
            | Sgd2Error::Truncated { offset, .. }
            | Sgd2Error::BadEffectIndex { offset, .. }
            | Sgd2Error::BadEffectFraming { offset, .. }
            | Sgd2Error::TrailingBytes { offset, .. } => Some(*offset),
        }
    }
}

/// One program record as it lies in the file: where it starts and the lengths of its
/// fields (24 bytes a program, where ranges would take 80: a database ten times the
/// game's has 124,050 programs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub offset: usize,
    /// The name field's length: the name and its NUL.
    name_field: u8,
    pub tag: u8,
    container_len: u32,
    bindings_len: u32,
}

impl Program {
    /// The name without its NUL.
    pub fn name(&self) -> Range<usize> {
        let start = self.offset + 1;
        start..start + self.name_field as usize - 1
    }

    /// The DXBC container, bytes as stored (after the tag byte and its length word).
    pub fn container(&self) -> Range<usize> {
        let start = self.offset + 1 + self.name_field as usize + 1 + 4;
        start..start + self.container_len as usize
    }

    /// The 152-byte table.
    pub fn table(&self) -> Range<usize> {
        let start = self.container().end;
        start..start + TABLE_LEN
    }

    /// The binding table (without its length word).
    pub fn bindings(&self) -> Range<usize> {
        let start = self.table().end + 4;
        start..start + self.bindings_len as usize
    }
}

/// One group: where its count word lies and its programs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Group {
    pub offset: usize,
    pub programs: Vec<Program>,
}

/// One effect record as it lies in the file (`sgd2.md` §5.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effect {
    pub offset: usize,
    /// The name without its NUL.
    pub name: Range<usize>,
    pub word: u32,
    /// Per stage, the u32 program indices (the count word excluded).
    pub lists: [Range<usize>; 6],
    /// Everything between the lists and the `proplst\0` marker.
    pub region: Range<usize>,
    /// Each proplst section's body (its size word excluded).
    pub sections: Vec<Range<usize>>,
    /// The name block (its size word excluded).
    pub names: Range<usize>,
}

impl Effect {
    /// The program indices of one stage's list.
    pub fn list<'a>(&self, bytes: &'a [u8], stage: usize) -> impl Iterator<Item = u32> + 'a {
        bytes[self.lists[stage].clone()]
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    }

    /// The number of programs in one stage's list.
    pub fn list_len(&self, stage: usize) -> usize {
        self.lists[stage].len() / 4
    }
}

/// The framing of a database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    pub groups: [Group; GROUPS],
    /// Where the effect count lies.
    pub effects_offset: usize,
    pub effects: Vec<Effect>,
    /// Oddities the format allows (`sgd2.md` §9 warnings); shown in archive.json.
    pub warnings: Vec<String>,
}

/// A bounds-checked reader over the file; every failure names what it was reading.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn take(&mut self, n: u64, what: impl FnOnce() -> String) -> Result<Range<usize>, Sgd2Error> {
        if n > self.left() as u64 {
            return Err(Sgd2Error::Truncated {
                what: what(),
                offset: self.at,
                needed: n,
                available: self.left(),
            });
        }
        let range = self.at..self.at + n as usize;
        self.at = range.end;
        Ok(range)
    }

    fn u8(&mut self, what: impl FnOnce() -> String) -> Result<u8, Sgd2Error> {
        let r = self.take(1, what)?;
        Ok(self.bytes[r.start])
    }

    fn u32(&mut self, what: impl FnOnce() -> String) -> Result<u32, Sgd2Error> {
        let r = self.take(4, what)?;
        let b = &self.bytes[r];
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A count word, refused if `count` records of at least `each` bytes cannot fit in
    /// what is left (rule 2).
    fn count(&mut self, each: usize, what: impl Fn() -> String) -> Result<usize, Sgd2Error> {
        let offset = self.at;
        let count = self.u32(&what)?;
        let available = self.left();
        if count as u64 * each as u64 > available as u64 {
            return Err(Sgd2Error::CountTooLarge {
                what: what(),
                offset,
                count: count as u64,
                available,
                each,
            });
        }
        Ok(count as usize)
    }

    /// A length-prefixed, NUL-terminated name (rule 3): returns it without the NUL.
    fn name(&mut self, what: impl Fn() -> String) -> Result<Range<usize>, Sgd2Error> {
        let offset = self.at;
        let len = self.u8(&what)?;
        if len == 0 {
            return Err(Sgd2Error::BadName {
                what: what(),
                offset,
                why: "the name length is 0, it must count at least the NUL",
            });
        }
        let field = self.take(len as u64, &what)?;
        let bytes = &self.bytes[field.clone()];
        if bytes[bytes.len() - 1] != 0 {
            return Err(Sgd2Error::BadName {
                what: what(),
                offset,
                why: "the name's last byte is not its NUL",
            });
        }
        if bytes[..bytes.len() - 1].contains(&0) {
            return Err(Sgd2Error::BadName {
                what: what(),
                offset,
                why: "the name holds a NUL before its end",
            });
        }
        Ok(field.start..field.end - 1)
    }
}

fn program(cur: &mut Cursor<'_>, group: usize, index: usize) -> Result<Program, Sgd2Error> {
    let offset = cur.at;
    let what = || format!("program {index} of group {group} ({})", group_dir(group));
    let name = cur.name(what)?;
    let tag = cur.u8(what)?;
    let len = cur.u32(what)?;
    let container = cur.take(len as u64, || format!("{}: its container", what()))?;
    let table = cur.take(TABLE_LEN as u64, || {
        format!("{}: its 152-byte table", what())
    })?;
    let len = cur.u32(what)?;
    let bindings = cur.take(len as u64, || format!("{}: its binding table", what()))?;
    let program = Program {
        offset,
        // The name field came from one length byte.
        name_field: (name.len() + 1) as u8,
        tag,
        container_len: container.len() as u32,
        bindings_len: bindings.len() as u32,
    };
    debug_assert_eq!(
        (
            program.name(),
            program.container(),
            program.table(),
            program.bindings()
        ),
        (name, container, table, bindings)
    );
    Ok(program)
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| from + i)
}

fn effect(cur: &mut Cursor<'_>, index: usize, groups: &[Group]) -> Result<Effect, Sgd2Error> {
    let offset = cur.at;
    let name = cur.name(|| format!("effect {index}"))?;
    let label = format!(
        "effect {index} ({:?})",
        String::from_utf8_lossy(&cur.bytes[name.clone()])
    );
    let what = || label.clone();
    let word = cur.u32(what)?;
    let mut lists: [Range<usize>; 6] = Default::default();
    for (stage, list) in lists.iter_mut().enumerate() {
        let count = cur.count(4, || format!("{label}: the {} list", STAGES[stage]))?;
        let range = cur.take(count as u64 * 4, what)?;
        let programs = groups[stage].programs.len();
        for (i, word) in cur.bytes[range.clone()].chunks_exact(4).enumerate() {
            let value = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
            if value as usize >= programs {
                return Err(Sgd2Error::BadEffectIndex {
                    what: format!("{label}: {} list entry {i}", STAGES[stage]),
                    offset: range.start + 4 * i,
                    stage: STAGES[stage],
                    index: value,
                    count: programs,
                });
            }
        }
        *list = range;
    }
    let marker = find(cur.bytes, cur.at, PROPLST).ok_or_else(|| Sgd2Error::BadEffectFraming {
        what: what(),
        offset: cur.at,
        why: "no 'proplst\\0' marker between the program lists and the end of the file".into(),
    })?;
    let region = cur.at..marker;
    cur.at = marker + PROPLST.len();
    let count = cur.count(4, || format!("{label}: the proplst section count"))?;
    let mut sections = Vec::with_capacity(count);
    for i in 0..count {
        let size = cur.u32(|| format!("{label}: proplst section {i}"))?;
        sections.push(cur.take(size as u64, || format!("{label}: proplst section {i}"))?);
    }
    let size_at = cur.at;
    let size = cur.u32(|| format!("{label}: the name block's size"))?;
    let names = cur.take(size as u64, || format!("{label}: the name block"))?;
    let block = &cur.bytes[names.clone()];
    if block.first() != Some(&0) || block.last() != Some(&0) {
        return Err(Sgd2Error::BadEffectFraming {
            what: what(),
            offset: size_at,
            why: format!("the name block ({size} bytes) must start and end with a NUL (rule 11)"),
        });
    }
    Ok(Effect {
        offset,
        name,
        word,
        lists,
        region,
        sections,
        names,
    })
}

/// Index `bytes`, to the final byte.
pub fn index(bytes: &[u8]) -> Result<Index, Sgd2Error> {
    if bytes.get(..4) != Some(&MAGIC[..]) {
        return Err(Sgd2Error::BadMagic {
            found: bytes[..bytes.len().min(4)].to_vec(),
        });
    }
    let mut cur = Cursor { bytes, at: 4 };
    let mut warnings = Vec::new();
    let mut groups: [Group; GROUPS] = Default::default();
    for (g, group) in groups.iter_mut().enumerate() {
        group.offset = cur.at;
        let count = cur.count(MIN_PROGRAM, || {
            format!("group {g} ({}) program count", group_dir(g))
        })?;
        group.programs.reserve_exact(count);
        for i in 0..count {
            group.programs.push(program(&mut cur, g, i)?);
        }
        if g >= STAGES.len() && count > 0 {
            warnings.push(format!(
                "group {g} at offset {:#x} holds {count} programs; both known databases leave \
                 it empty and its stage is unknown (rule 9); its records are read like the \
                 others",
                group.offset
            ));
        }
    }
    let mut tags = [0usize; 256];
    for p in groups.iter().flat_map(|g| &g.programs) {
        tags[p.tag as usize] += 1;
    }
    for (tag, &n) in tags.iter().enumerate() {
        if n > 0 && ![0x32, 0x41, 0x42].contains(&tag) {
            warnings.push(format!(
                "{n} programs have the tag byte {tag:#04x}; known databases hold only 0x32, 0x41 \
                 and 0x42 (rule 6)"
            ));
        }
    }
    let effects_offset = cur.at;
    let count = cur.count(MIN_EFFECT, || "the effect count".to_string())?;
    let mut effects = Vec::with_capacity(count);
    for i in 0..count {
        effects.push(effect(&mut cur, i, &groups)?);
    }
    if cur.left() > 0 {
        return Err(Sgd2Error::TrailingBytes {
            count: cur.left(),
            offset: cur.at,
        });
    }
    Ok(Index {
        groups,
        effects_offset,
        effects,
        warnings,
    })
}
