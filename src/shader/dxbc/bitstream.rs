//! A reader of the LLVM bitstream container (https://llvm.org/docs/BitCodeFormat.html):
//! blocks, abbreviations (local and from `BLOCKINFO`) and records. Only what DXIL's
//! LLVM 3.7 bitcode uses. Bounded: every read is checked against the input, arrays are
//! bounded by the bits left, blocks nest at most [`MAX_DEPTH`] deep, so hostile bytes
//! give an error, never a panic or an allocation larger than a small multiple of the
//! input.

use std::collections::HashMap;
use std::rc::Rc;

pub const MAX_DEPTH: usize = 64;
const BLOCKINFO: u32 = 0;

/// One operand of an abbreviation.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    Literal(u64),
    Fixed(u32),
    Vbr(u32),
    /// An array; its element is the next operand.
    Array,
    Char6,
    Blob,
}

type Abbrev = Rc<Vec<Op>>;

/// What the reader met next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A sub-block starts; read it with further `entry` calls or pass it with `skip`.
    Enter(u32),
    /// The current block ended.
    End,
    /// A record; its operands are [`Reader::ops`] until the next call to `entry`.
    Record { code: u32 },
}

struct Scope {
    id: u32,
    width: u32,
    abbrevs: Vec<Abbrev>,
    /// Where the block ends, in bits (the whole input for the top level).
    end: usize,
}

pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    scopes: Vec<Scope>,
    blockinfo: HashMap<u32, Vec<Abbrev>>,
    /// The last record's code and operands (`ops[ops_from..]`): one buffer for every
    /// record, as a function body has thousands.
    ops: Vec<u64>,
    ops_from: usize,
}

/// A signed VBR value as LLVM stores signed numbers (integer constants, relative
/// operands): the sign in bit 0.
pub fn signed(v: u64) -> i64 {
    if v & 1 == 0 {
        (v >> 1) as i64
    } else if v == 1 {
        i64::MIN
    } else {
        -((v >> 1) as i64)
    }
}

fn char6(v: u64) -> u64 {
    (match v {
        0..=25 => b'a' + v as u8,
        26..=51 => b'A' + (v - 26) as u8,
        52..=61 => b'0' + (v - 52) as u8,
        62 => b'.',
        _ => b'_',
    }) as u64
}

impl<'a> Reader<'a> {
    /// A reader positioned after the magic (`BC C0 DE`).
    pub fn new(bytes: &'a [u8]) -> Result<Reader<'a>, String> {
        if !bytes.starts_with(&[0x42, 0x43, 0xC0, 0xDE]) {
            return Err("the bitcode does not start with 'BC' 0xC0DE".into());
        }
        Ok(Reader {
            bytes,
            pos: 32,
            scopes: vec![Scope {
                id: u32::MAX,
                width: 2,
                abbrevs: Vec::new(),
                end: bytes.len() * 8,
            }],
            blockinfo: HashMap::new(),
            ops: Vec::new(),
            ops_from: 0,
        })
    }

    /// Where the reader stands, in bits from the start of the input.
    pub fn bit(&self) -> usize {
        self.pos
    }

    /// Bits left before the end of the input.
    pub fn bits_left(&self) -> usize {
        self.left()
    }

    /// Bits left before the end of the input.
    fn left(&self) -> usize {
        (self.bytes.len() * 8).saturating_sub(self.pos)
    }

    fn err(&self, what: &str) -> String {
        format!("bitcode at bit {}: {what}", self.pos)
    }

    fn fixed(&mut self, width: u32) -> Result<u64, String> {
        if width > 64 {
            return Err(self.err(&format!("a fixed field of {width} bits")));
        }
        if width as usize > self.left() {
            return Err(self.err("unexpected end of the bitcode"));
        }
        if width == 0 {
            return Ok(0);
        }
        // One little-endian load of the eight bytes from the current one holds at least
        // 57 of the bits wanted; a wider field takes the rest from the ninth byte.
        let (at, shift) = (self.pos / 8, (self.pos % 8) as u32);
        let word = match self.bytes.get(at..at + 8) {
            Some(eight) => u64::from_le_bytes(eight.try_into().unwrap_or_default()),
            None => {
                let mut eight = [0u8; 8];
                let tail = &self.bytes[at..];
                eight[..tail.len()].copy_from_slice(tail);
                u64::from_le_bytes(eight)
            }
        };
        let mut v = word >> shift;
        if width + shift > 64 {
            // Only when at least 65 bits are left from `at`, so the ninth byte is there.
            v |= (self.bytes[at + 8] as u64) << (64 - shift);
        }
        if width < 64 {
            v &= (1u64 << width) - 1;
        }
        self.pos += width as usize;
        Ok(v)
    }

    fn vbr(&mut self, width: u32) -> Result<u64, String> {
        if !(2..=32).contains(&width) {
            return Err(self.err(&format!("a VBR field of {width} bits")));
        }
        let data = width - 1;
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let chunk = self.fixed(width)?;
            if shift < 64 {
                v |= (chunk & ((1 << data) - 1)) << shift;
            }
            if chunk & (1 << data) == 0 {
                return Ok(v);
            }
            shift += data;
            if shift >= 64 + data {
                return Err(self.err("a VBR value of more than 64 bits"));
            }
        }
    }

    fn align32(&mut self) -> Result<(), String> {
        let aligned = self.pos.div_ceil(32) * 32;
        if aligned > self.bytes.len() * 8 {
            return Err(self.err("unexpected end of the bitcode"));
        }
        self.pos = aligned;
        Ok(())
    }

    fn scope(&self) -> &Scope {
        self.scopes.last().expect("the top level is never left")
    }

    /// The operands of the record [`Reader::entry`] returned last.
    pub fn ops(&self) -> &[u64] {
        self.ops.get(self.ops_from..).unwrap_or(&[])
    }

    /// The id of the block being read (`u32::MAX` at the top level).
    pub fn block(&self) -> u32 {
        self.scope().id
    }

    /// The next entry of the current block, or `None` at the end of the input.
    pub fn entry(&mut self) -> Result<Option<Entry>, String> {
        loop {
            let scope = self.scope();
            let top = self.scopes.len() == 1;
            // The bitcode is padded to a word with zeros after its last block.
            if top && self.bytes[self.pos / 8..].iter().all(|&b| b == 0) {
                return Ok(None);
            }
            if self.pos >= scope.end {
                return Err(self.err("a block runs past its stated length"));
            }
            let width = scope.width;
            let id = self.fixed(width)? as usize;
            match id {
                0 => {
                    if self.scopes.len() == 1 {
                        return Err(self.err("END_BLOCK at the top level"));
                    }
                    self.align32()?;
                    self.scopes.pop();
                    return Ok(Some(Entry::End));
                }
                1 => {
                    let block = self.vbr(8)?;
                    let width = self.vbr(4)? as u32;
                    self.align32()?;
                    let words = self.fixed(32)? as usize;
                    let end = self.pos.saturating_add(words.saturating_mul(32));
                    if end > self.scope().end || width == 0 || width > 32 {
                        return Err(self.err(&format!("block {block} of {words} words")));
                    }
                    if self.scopes.len() > MAX_DEPTH {
                        return Err(self.err("blocks nested too deeply"));
                    }
                    let block = u32::try_from(block).map_err(|_| self.err("a block id"))?;
                    let abbrevs = self.blockinfo.get(&block).cloned().unwrap_or_default();
                    self.scopes.push(Scope {
                        id: block,
                        width,
                        abbrevs,
                        end,
                    });
                    if block == BLOCKINFO {
                        self.read_blockinfo()?;
                        continue;
                    }
                    return Ok(Some(Entry::Enter(block)));
                }
                2 => {
                    let abbrev = self.define_abbrev()?;
                    self.scopes
                        .last_mut()
                        .expect("a scope")
                        .abbrevs
                        .push(abbrev);
                }
                3 => {
                    let code = self.vbr(6)?;
                    let n = self.vbr(6)?;
                    if n > self.left() as u64 {
                        return Err(self.err("a record with more operands than bits left"));
                    }
                    let mut ops = std::mem::take(&mut self.ops);
                    ops.clear();
                    let read = (0..n).try_for_each(|_| {
                        ops.push(self.vbr(6)?);
                        Ok::<_, String>(())
                    });
                    self.ops = ops;
                    self.ops_from = 0;
                    read?;
                    return Ok(Some(Entry::Record { code: code as u32 }));
                }
                n => {
                    let abbrev = self
                        .scope()
                        .abbrevs
                        .get(n - 4)
                        .cloned()
                        .ok_or_else(|| self.err(&format!("abbreviation {n} is not defined")))?;
                    let mut ops = std::mem::take(&mut self.ops);
                    ops.clear();
                    let read = self.abbreviated(&abbrev, &mut ops);
                    self.ops = ops;
                    read?;
                    // The first operand is the record's code.
                    let Some(&code) = self.ops.first() else {
                        return Err(self.err("an abbreviated record without a code"));
                    };
                    self.ops_from = 1;
                    return Ok(Some(Entry::Record { code: code as u32 }));
                }
            }
        }
    }

    /// Every record of the block just entered, to its end, passing its sub-blocks: `each`
    /// gets a record's code and operands. `what` names the block in the error when the
    /// input ends first.
    pub fn records(
        &mut self,
        what: &str,
        mut each: impl FnMut(u32, &[u64]) -> Result<(), String>,
    ) -> Result<(), String> {
        while let Some(entry) = self.entry()? {
            match entry {
                Entry::End => return Ok(()),
                Entry::Enter(_) => self.skip()?,
                Entry::Record { code } => each(code, self.ops())?,
            }
        }
        Err(format!("{what} has no end"))
    }

    /// Pass the rest of the block just entered.
    pub fn skip(&mut self) -> Result<(), String> {
        if self.scopes.len() == 1 {
            return Err(self.err("skip at the top level"));
        }
        let scope = self.scopes.pop().expect("a scope");
        self.pos = scope.end;
        Ok(())
    }

    fn define_abbrev(&mut self) -> Result<Abbrev, String> {
        let n = self.vbr(5)?;
        if n > self.left() as u64 {
            return Err(self.err("an abbreviation with more operands than bits left"));
        }
        let mut ops = Vec::with_capacity(n as usize);
        for _ in 0..n {
            if self.fixed(1)? == 1 {
                ops.push(Op::Literal(self.vbr(8)?));
                continue;
            }
            let op = match self.fixed(3)? {
                // A field of width 0 is the value 0, as LLVM reads it.
                1 => match self.vbr(5)? as u32 {
                    0 => Op::Literal(0),
                    w => Op::Fixed(w),
                },
                2 => match self.vbr(5)? as u32 {
                    0 => Op::Literal(0),
                    w => Op::Vbr(w),
                },
                3 => Op::Array,
                4 => Op::Char6,
                5 => Op::Blob,
                e => return Err(self.err(&format!("abbreviation operand encoding {e}"))),
            };
            ops.push(op);
        }
        Ok(Rc::new(ops))
    }

    fn abbreviated(&mut self, abbrev: &[Op], ops: &mut Vec<u64>) -> Result<(), String> {
        let mut i = 0;
        while i < abbrev.len() {
            match &abbrev[i] {
                Op::Array => {
                    let element = abbrev
                        .get(i + 1)
                        .ok_or_else(|| self.err("an array without an element type"))?;
                    let len = self.vbr(6)?;
                    if matches!(element, Op::Literal(_) | Op::Array | Op::Blob)
                        || len > self.left() as u64
                    {
                        return Err(self.err("an array longer than the bits left"));
                    }
                    for _ in 0..len {
                        let v = self.scalar(element)?;
                        ops.push(v);
                    }
                    i += 2;
                    continue;
                }
                Op::Blob => {
                    let len = self.vbr(6)? as usize;
                    self.align32()?;
                    if len.saturating_mul(8) > self.left() {
                        return Err(self.err("a blob longer than the bits left"));
                    }
                    let start = self.pos / 8;
                    ops.extend(self.bytes[start..start + len].iter().map(|&b| b as u64));
                    self.pos += len * 8;
                    self.align32()?;
                }
                op => {
                    let v = self.scalar(op)?;
                    ops.push(v);
                }
            }
            i += 1;
        }
        Ok(())
    }

    fn scalar(&mut self, op: &Op) -> Result<u64, String> {
        match *op {
            Op::Literal(v) => Ok(v),
            Op::Fixed(w) => self.fixed(w),
            Op::Vbr(w) => self.vbr(w),
            Op::Char6 => Ok(char6(self.fixed(6)?)),
            Op::Array | Op::Blob => Err(self.err("an array or blob inside an array")),
        }
    }

    /// `BLOCKINFO`: `SETBID` chooses a block id, the abbreviations defined after it are
    /// that block's for every block of the id.
    fn read_blockinfo(&mut self) -> Result<(), String> {
        let mut current: Option<u32> = None;
        loop {
            if self.pos >= self.scope().end {
                return Err(self.err("BLOCKINFO runs past its stated length"));
            }
            let width = self.scope().width;
            match self.fixed(width)? {
                0 => {
                    self.align32()?;
                    self.scopes.pop();
                    return Ok(());
                }
                1 => {
                    return Err(self.err("a block inside BLOCKINFO"));
                }
                2 => {
                    let abbrev = self.define_abbrev()?;
                    let bid = current.ok_or_else(|| self.err("an abbreviation before SETBID"))?;
                    self.blockinfo.entry(bid).or_default().push(abbrev);
                }
                3 => {
                    let code = self.vbr(6)?;
                    let n = self.vbr(6)?;
                    let mut first = None;
                    for k in 0..n {
                        let v = self.vbr(6)?;
                        if k == 0 {
                            first = Some(v);
                        }
                    }
                    if code == 1 {
                        current = first.and_then(|v| u32::try_from(v).ok());
                    }
                }
                _ => return Err(self.err("an abbreviated record inside BLOCKINFO")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The bit-at-a-time reading the format describes (LSB first within each byte).
    fn reference(bytes: &[u8], pos: usize, width: u32) -> Option<u64> {
        if pos + width as usize > bytes.len() * 8 {
            return None;
        }
        Some((0..width as usize).fold(0u64, |v, i| {
            let bit = (bytes[(pos + i) / 8] >> ((pos + i) % 8)) & 1;
            v | (bit as u64) << i
        }))
    }

    proptest! {
        /// Fields of every width at every bit position, up to the last bit of the input.
        #[test]
        fn fixed_fields_read_as_the_bits_say(
            bytes in proptest::collection::vec(any::<u8>(), 4..40),
            pos in 0usize..320,
            width in 0u32..=64,
        ) {
            // The reader never stands past the end of its input (a position drawn past it
            // wraps, rather than being thrown away: at thousands of cases, proptest gives
            // up on a test that rejects a third of what it draws).
            let pos = pos % (bytes.len() * 8 + 1);
            let mut reader = Reader::new(&[0x42, 0x43, 0xC0, 0xDE]).unwrap();
            reader.bytes = &bytes;
            reader.pos = pos;
            let got = reader.fixed(width).ok();
            prop_assert_eq!(got, reference(&bytes, pos, width));
            if got.is_some() {
                prop_assert_eq!(reader.pos, pos + width as usize);
            }
        }
    }
}
