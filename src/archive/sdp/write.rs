//! Serialising a package (`shared/formats/sdp.md` §6): the header word as read, records in
//! their order with new ones at the end, unchanged name fields byte for byte, `count` and
//! `data_size` recomputed.

use super::read::{HEADER_LEN, NAME_LEN, RECORD_HEADER_LEN};

/// The 256 bytes a record's name is stored in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameField(pub [u8; NAME_LEN]);

impl NameField {
    /// A fresh field: the name, one NUL, zero padding. `None` when the name does not fit
    /// (255 bytes at most) or holds a NUL.
    pub fn new(name: &str) -> Option<NameField> {
        let bytes = name.as_bytes();
        if bytes.is_empty() || bytes.len() >= NAME_LEN || bytes.contains(&0) {
            return None;
        }
        let mut field = [0u8; NAME_LEN];
        field[..bytes.len()].copy_from_slice(bytes);
        Some(NameField(field))
    }

    /// A field exactly as it was read (padding included).
    pub fn from_raw(raw: &[u8]) -> NameField {
        let mut field = [0u8; NAME_LEN];
        let n = raw.len().min(NAME_LEN);
        field[..n].copy_from_slice(&raw[..n]);
        NameField(field)
    }
}

/// Serialise a package. Sizes are checked against the format's 32-bit fields.
pub fn serialise<'a>(
    magic: u32,
    records: impl IntoIterator<Item = (&'a NameField, &'a [u8])>,
) -> Result<Vec<u8>, String> {
    let records: Vec<(&NameField, &[u8])> = records.into_iter().collect();
    let data_size: usize = records
        .iter()
        .map(|(_, data)| RECORD_HEADER_LEN + data.len())
        .sum();
    let count = u32::try_from(records.len()).map_err(|_| "too many records for a package")?;
    let data_size_word =
        u32::try_from(data_size).map_err(|_| "the package would exceed 4 GiB".to_string())?;
    let mut out = Vec::with_capacity(HEADER_LEN + data_size);
    out.extend_from_slice(&magic.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&data_size_word.to_le_bytes());
    for (name, data) in records {
        out.extend_from_slice(&name.0);
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(data);
    }
    Ok(out)
}
