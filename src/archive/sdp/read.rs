//! Indexing a Bethesda shader package (`shared/formats/sdp.md` §2 and §5).
//!
//! Only the framing is read: the 12-byte header and, for each record, where its 256-byte
//! name and its bytecode lie. Nothing is copied; the bytecode is decoded when a view asks.

use std::ops::Range;

/// `magic`: the first header word, 100 in every known package.
pub const EXPECTED_MAGIC: u32 = 100;
pub const HEADER_LEN: usize = 12;
pub const NAME_LEN: usize = 0x100;
/// Name field plus the size word.
pub const RECORD_HEADER_LEN: usize = NAME_LEN + 4;

/// A package that cannot be opened; names the record, the byte offset and what was
/// expected (`sdp.md` §5, the rules that protect memory safety).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SdpError {
    #[error("the file is {len} bytes, shorter than the 12-byte header")]
    TruncatedHeader { len: usize },
    #[error(
        "header at offset 4: {count} records cannot fit in {available} bytes \
         (each needs at least 260)"
    )]
    CountTooLarge { count: u32, available: usize },
    #[error(
        "record {index} at offset {offset:#x}: the file ends before the record's \
         260-byte header (name and size)"
    )]
    TruncatedRecord { index: usize, offset: usize },
    #[error("record {index} at offset {offset:#x}: the 256-byte name has no NUL terminator")]
    UnterminatedName { index: usize, offset: usize },
    #[error("record {index} at offset {offset:#x}: the name is empty")]
    EmptyName { index: usize, offset: usize },
    #[error(
        "record {index} at offset {offset:#x}: size {size} at offset {size_offset:#x} runs \
         past the end of the file ({available} bytes left)"
    )]
    PayloadOverrun {
        index: usize,
        offset: usize,
        size_offset: usize,
        size: u32,
        available: usize,
    },
    #[error(
        "header at offset 8: data size {header} does not match the {actual} bytes the \
         records take"
    )]
    DataSizeMismatch { header: u32, actual: usize },
    #[error("{count} bytes after the last record (offset {offset:#x}), where the file should end")]
    TrailingBytes { count: usize, offset: usize },
}

impl SdpError {
    /// The byte offset the error is about.
    pub fn offset(&self) -> Option<usize> {
        match *self {
            SdpError::TruncatedHeader { .. } => None,
            SdpError::CountTooLarge { .. } => Some(4),
            SdpError::DataSizeMismatch { .. } => Some(8),
            SdpError::TruncatedRecord { offset, .. }
            | SdpError::UnterminatedName { offset, .. }
            | SdpError::EmptyName { offset, .. }
            | SdpError::TrailingBytes { offset, .. } => Some(offset),
            SdpError::PayloadOverrun { size_offset, .. } => Some(size_offset),
        }
    }
}

/// One record as it lies in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Offset of the record (its name field).
    pub offset: usize,
    /// The name up to its NUL.
    pub name: Range<usize>,
    /// The bytecode.
    pub data: Range<usize>,
}

impl Record {
    /// The whole 256-byte name field, padding included.
    pub fn name_field(&self) -> Range<usize> {
        self.offset..self.offset + NAME_LEN
    }
}

/// The framing of a package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    pub magic: u32,
    pub count: u32,
    pub data_size: u32,
    pub records: Vec<Record>,
    /// Oddities the public editors accept (`sdp.md` §5 warnings); shown in archive.json.
    pub warnings: Vec<String>,
}

fn u32_at(bytes: &[u8], offset: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[offset..offset + 4]);
    u32::from_le_bytes(word)
}

/// Index `bytes`. Every read is bounds-checked before it happens; the only allocation is
/// the record list, whose length the file size bounds (rule 3).
pub fn index(bytes: &[u8]) -> Result<Index, SdpError> {
    let len = bytes.len();
    if len < HEADER_LEN {
        return Err(SdpError::TruncatedHeader { len });
    }
    let magic = u32_at(bytes, 0);
    let count = u32_at(bytes, 4);
    let data_size = u32_at(bytes, 8);
    let available = len - HEADER_LEN;
    if count as usize > available / RECORD_HEADER_LEN {
        return Err(SdpError::CountTooLarge { count, available });
    }
    let mut warnings = Vec::new();
    if magic != EXPECTED_MAGIC {
        warnings.push(format!(
            "header word at offset 0 is {magic}, every known package has 100"
        ));
    }
    let mut records = Vec::with_capacity(count as usize);
    let mut offset = HEADER_LEN;
    for index in 0..count as usize {
        if len - offset < RECORD_HEADER_LEN {
            return Err(SdpError::TruncatedRecord { index, offset });
        }
        let field = &bytes[offset..offset + NAME_LEN];
        let name_len = field
            .iter()
            .position(|&b| b == 0)
            .ok_or(SdpError::UnterminatedName { index, offset })?;
        if name_len == 0 {
            return Err(SdpError::EmptyName { index, offset });
        }
        if field[name_len..].iter().any(|&b| b != 0) {
            warnings.push(format!(
                "record {index} at offset {offset:#x}: bytes after the name's NUL are not zero \
                 (kept as they are)"
            ));
        }
        let size_offset = offset + NAME_LEN;
        let size = u32_at(bytes, size_offset);
        let data_start = offset + RECORD_HEADER_LEN;
        if size as usize > len - data_start {
            return Err(SdpError::PayloadOverrun {
                index,
                offset,
                size_offset,
                size,
                available: len - data_start,
            });
        }
        let data = data_start..data_start + size as usize;
        records.push(Record {
            offset,
            name: offset..offset + name_len,
            data: data.clone(),
        });
        offset = data.end;
    }
    let actual = offset - HEADER_LEN;
    if data_size as usize != actual {
        return Err(SdpError::DataSizeMismatch {
            header: data_size,
            actual,
        });
    }
    if offset != len {
        return Err(SdpError::TrailingBytes {
            count: len - offset,
            offset,
        });
    }
    Ok(Index {
        magic,
        count,
        data_size,
        records,
        warnings,
    })
}
