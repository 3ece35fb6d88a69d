//! The module's data layout string, for the alignments LLVM 14's reader fills in where
//! old bitcode leaves them out: a load or store without one gets its type's ABI
//! alignment, an alloca its preferred alignment, an atomic its store size
//! (https://llvm.org/docs/LangRef.html#data-layout, defaults as there).

use super::ir::{Module, Type, TypeId};

/// Nesting deeper than this is refused when computing sizes (a hostile type table).
const MAX_DEPTH: u32 = 64;

#[derive(Debug, Clone)]
pub struct Layout {
    /// (bit width, ABI alignment, preferred alignment), alignments in bits.
    ints: Vec<(u32, u32, u32)>,
    floats: Vec<(u32, u32, u32)>,
    vectors: Vec<(u32, u32, u32)>,
    /// (address space, size, ABI alignment, preferred alignment).
    pointers: Vec<(u32, u32, u32, u32)>,
    aggregate: (u32, u32),
}

impl Default for Layout {
    fn default() -> Layout {
        Layout {
            ints: vec![
                (1, 8, 8),
                (8, 8, 8),
                (16, 16, 16),
                (32, 32, 32),
                (64, 32, 64),
            ],
            floats: vec![(16, 16, 16), (32, 32, 32), (64, 64, 64), (128, 128, 128)],
            vectors: vec![(64, 64, 64), (128, 128, 128)],
            pointers: vec![(0, 64, 64, 64)],
            aggregate: (0, 64),
        }
    }
}

fn set(list: &mut Vec<(u32, u32, u32)>, width: u32, abi: u32, pref: u32) {
    match list.iter_mut().find(|e| e.0 == width) {
        Some(e) => *e = (width, abi, pref),
        None => {
            list.push((width, abi, pref));
            list.sort_unstable();
        }
    }
}

impl Layout {
    /// Read a layout string; specifications it does not know are passed over (the
    /// string is printed as it is, and only alignments are asked of it).
    pub fn parse(text: &[u8]) -> Layout {
        let mut l = Layout::default();
        let text = String::from_utf8_lossy(text);
        for spec in text.split('-') {
            let (head, rest) = match spec.char_indices().nth(1) {
                Some((i, _)) => spec.split_at(i),
                None => (spec, ""),
            };
            let nums: Vec<u32> = rest.split(':').map(|n| n.parse().unwrap_or(0)).collect();
            let num = |i: usize| nums.get(i).copied();
            match head {
                "i" | "f" | "v" => {
                    let (Some(w), Some(abi)) = (num(0), num(1)) else {
                        continue;
                    };
                    let pref = num(2).unwrap_or(abi);
                    let list = match head {
                        "i" => &mut l.ints,
                        "f" => &mut l.floats,
                        _ => &mut l.vectors,
                    };
                    set(list, w, abi, pref);
                }
                "p" => {
                    // `p[n]:size:abi[:pref]`: the address space is written before the
                    // first colon.
                    let mut parts = rest.split(':');
                    let space = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
                    let v: Vec<u32> = parts.map(|n| n.parse().unwrap_or(0)).collect();
                    if let (Some(&size), Some(&abi)) = (v.first(), v.get(1)) {
                        let pref = v.get(2).copied().unwrap_or(abi);
                        l.pointers.retain(|p| p.0 != space);
                        l.pointers.push((space, size, abi, pref));
                    }
                }
                "a" => {
                    // `a:abi[:pref]`
                    let v: Vec<u32> = rest
                        .trim_start_matches(':')
                        .split(':')
                        .map(|n| n.parse().unwrap_or(0))
                        .collect();
                    if let Some(&abi) = v.first() {
                        l.aggregate = (abi, v.get(1).copied().unwrap_or(abi));
                    }
                }
                _ => {}
            }
        }
        l
    }

    fn pointer(&self, space: u32) -> (u32, u32, u32) {
        let p = self
            .pointers
            .iter()
            .find(|p| p.0 == space)
            .or_else(|| self.pointers.iter().find(|p| p.0 == 0))
            .copied()
            .unwrap_or((0, 64, 64, 64));
        (p.1, p.2, p.3)
    }

    /// An integer's alignment: its width's entry, else the next wider one, else the
    /// widest.
    fn int(&self, width: u32, abi: bool) -> u64 {
        let e = self
            .ints
            .iter()
            .find(|e| e.0 >= width)
            .or(self.ints.last())
            .copied()
            .unwrap_or((width, 8, 8));
        bytes(if abi { e.1 } else { e.2 })
    }

    /// The size in bits of a value of `ty` (`getTypeSizeInBits`).
    fn bits(&self, m: &Module, ty: TypeId, depth: u32) -> Option<u64> {
        if depth > MAX_DEPTH {
            return None;
        }
        Some(match m.types.get(ty as usize)? {
            Type::Int(w) => *w as u64,
            Type::Half | Type::BFloat => 16,
            Type::Float => 32,
            Type::Double | Type::X86Mmx => 64,
            Type::X86Fp80 => 80,
            Type::Fp128 | Type::PpcFp128 => 128,
            Type::Pointer { space, .. } => self.pointer(*space).0 as u64,
            Type::Array { len, elem } => {
                len.checked_mul(self.alloc_size(m, *elem, depth + 1)?)? * 8
            }
            Type::Vector { len, elem } => len.checked_mul(self.bits(m, *elem, depth + 1)?)?,
            Type::Struct {
                body: Some(b),
                packed,
                ..
            } => {
                let mut size = 0u64;
                let mut align = 1u64;
                for &e in b {
                    let a = if *packed {
                        1
                    } else {
                        self.align(m, e, true, depth + 1)?
                    };
                    size = size.div_ceil(a) * a;
                    size = size.checked_add(self.alloc_size(m, e, depth + 1)?)?;
                    align = align.max(a);
                }
                size.div_ceil(align) * align * 8
            }
            _ => return None,
        })
    }

    /// `getTypeStoreSize`: the bytes a store of `ty` writes.
    pub fn store_size(&self, m: &Module, ty: TypeId) -> Option<u64> {
        Some(self.bits(m, ty, 0)?.div_ceil(8))
    }

    /// `getTypeAllocSize`: the store size rounded up to the ABI alignment.
    fn alloc_size(&self, m: &Module, ty: TypeId, depth: u32) -> Option<u64> {
        let store = self.bits(m, ty, depth)?.div_ceil(8);
        let align = self.align(m, ty, true, depth)?;
        Some(store.div_ceil(align) * align)
    }

    /// The ABI (`abi`) or preferred alignment of `ty`, in bytes.
    pub fn align(&self, m: &Module, ty: TypeId, abi: bool, depth: u32) -> Option<u64> {
        if depth > MAX_DEPTH {
            return None;
        }
        let pick = |e: (u32, u32, u32)| bytes(if abi { e.1 } else { e.2 });
        Some(match m.types.get(ty as usize)? {
            Type::Int(w) => self.int(*w, abi),
            Type::Pointer { space, .. } => {
                let p = self.pointer(*space);
                bytes(if abi { p.1 } else { p.2 })
            }
            t @ (Type::Half
            | Type::BFloat
            | Type::Float
            | Type::Double
            | Type::X86Fp80
            | Type::Fp128
            | Type::PpcFp128) => {
                let w = match t {
                    Type::Half | Type::BFloat => 16,
                    Type::Float => 32,
                    Type::Double => 64,
                    Type::X86Fp80 => 80,
                    _ => 128,
                };
                match self.floats.iter().find(|e| e.0 == w) {
                    Some(&e) => pick(e),
                    None => (w as u64 / 8).next_power_of_two(),
                }
            }
            Type::X86Mmx => 8,
            Type::Array { elem, .. } => self.align(m, *elem, abi, depth + 1)?,
            Type::Vector { .. } => {
                let w = self.bits(m, ty, depth)?;
                match self.vectors.iter().find(|e| e.0 as u64 == w) {
                    Some(&e) => pick(e),
                    None => self
                        .alloc_size(m, ty_elem(m, ty)?, depth + 1)?
                        .checked_mul(vector_len(m, ty)?)?
                        .next_power_of_two()
                        .max(1),
                }
            }
            Type::Struct {
                body: Some(b),
                packed,
                ..
            } => {
                let base = bytes(if abi {
                    self.aggregate.0
                } else {
                    self.aggregate.1
                });
                if *packed && abi {
                    base.max(1)
                } else {
                    let mut a = base.max(1);
                    for &e in b {
                        a = a.max(self.align(m, e, true, depth + 1)?);
                    }
                    a
                }
            }
            _ => return None,
        })
    }
}

fn ty_elem(m: &Module, ty: TypeId) -> Option<TypeId> {
    match m.types.get(ty as usize)? {
        Type::Vector { elem, .. } => Some(*elem),
        _ => None,
    }
}

fn vector_len(m: &Module, ty: TypeId) -> Option<u64> {
    match m.types.get(ty as usize)? {
        Type::Vector { len, .. } => Some(*len),
        _ => None,
    }
}

/// Bits to bytes, an alignment of 0 meaning 1.
fn bytes(bits: u32) -> u64 {
    ((bits / 8) as u64).max(1)
}
