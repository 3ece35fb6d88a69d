//! Bounds-checked little-endian reads over a part's data. Every failure says what was
//! being read and where, as an offset from the start of the part's data.

/// A read past the end of a part.
pub fn short(what: &str, at: usize, need: usize, len: usize) -> String {
    format!("{what} at offset {at:#x}: needs {need} bytes, the part has {len}")
}

pub fn slice<'a>(data: &'a [u8], at: usize, n: usize, what: &str) -> Result<&'a [u8], String> {
    at.checked_add(n)
        .and_then(|end| data.get(at..end))
        .ok_or_else(|| short(what, at, n, data.len()))
}

pub fn u8_at(data: &[u8], at: usize, what: &str) -> Result<u8, String> {
    Ok(slice(data, at, 1, what)?[0])
}

pub fn u16_at(data: &[u8], at: usize, what: &str) -> Result<u16, String> {
    let b = slice(data, at, 2, what)?;
    Ok(u16::from_le_bytes([b[0], b[1]]))
}

pub fn u32_at(data: &[u8], at: usize, what: &str) -> Result<u32, String> {
    let b = slice(data, at, 4, what)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

pub fn u64_at(data: &[u8], at: usize, what: &str) -> Result<u64, String> {
    let b = slice(data, at, 8, what)?;
    Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
}

pub fn f32_at(data: &[u8], at: usize, what: &str) -> Result<f32, String> {
    Ok(f32::from_bits(u32_at(data, at, what)?))
}

/// Refuse `count` records of `each` bytes at `at` unless they fit: checked before any
/// allocation, so a hostile count cannot make the reader allocate.
pub fn fits(data: &[u8], at: usize, count: u32, each: usize, what: &str) -> Result<(), String> {
    let need = count as u64 * each as u64;
    if at as u64 + need > data.len() as u64 {
        return Err(format!(
            "{count} {what} of {each} bytes at offset {at:#x} run past the part's {} bytes",
            data.len()
        ));
    }
    Ok(())
}

/// The NUL-terminated string at `at`, invalid UTF-8 replaced.
pub fn c_string(data: &[u8], at: usize, what: &str) -> Result<String, String> {
    let rest = data.get(at..).ok_or_else(|| {
        format!(
            "{what}: offset {at:#x} is past the part's {} bytes",
            data.len()
        )
    })?;
    let end = rest
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| format!("{what} at offset {at:#x}: no terminating NUL"))?;
    Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
}

/// Component mask bits as letters: `xyzw` for all four, `-` for none.
pub fn mask(bits: u8) -> String {
    let s: String = "xyzw"
        .chars()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, c)| c)
        .collect();
    if s.is_empty() {
        "-".into()
    } else {
        s
    }
}
