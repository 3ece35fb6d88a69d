//! Which `dx.op` functions a DXIL program declares and calls, with the DXIL opcodes of
//! the calls (`dxbc.md` §10): the module's global values and their names from the value
//! symbol table, then every call in every function body, its callee and its first
//! argument resolved to an integer constant.
//!
//! Value numbering follows LLVM 3.7's reader: global variables, functions and aliases in
//! record order, then module constants; in a function, its arguments, its constants and
//! each instruction that yields a value. A call yields one unless its callee returns
//! `void`, which the type table tells. Where a body holds a record this reader does not
//! know, that body's calls are left out and the result says the opcodes are incomplete.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use super::bitstream::{signed, Entry, Reader};

const MODULE: u32 = 8;
const CONSTANTS: u32 = 11;
const FUNCTION: u32 = 12;
const VALUE_SYMTAB: u32 = 14;
const TYPES: u32 = 17;

pub const PREFIX: &str = "dx.op.";

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Intrinsic {
    pub name: String,
    /// Calls to it in the program's function bodies.
    pub calls: u32,
    /// The DXIL opcodes of those calls (their first argument).
    pub opcodes: Vec<u32>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Usage {
    pub intrinsics: Vec<Intrinsic>,
    /// Whether every function body was read to the end (so `calls` and `opcodes` are
    /// complete); otherwise the declarations are still listed.
    pub complete: bool,
}

impl Usage {
    /// Whether the program calls the DXIL operation `opcode` (or, where the bodies could
    /// not all be read, declares the function `name` that serves it).
    pub fn uses(&self, opcode: u32, name: &str) -> bool {
        self.intrinsics.iter().any(|i| {
            i.opcodes.contains(&opcode)
                || (!self.complete && (i.name == name || i.name.starts_with(&format!("{name}."))))
        })
    }
}

#[derive(Debug, Clone, Copy)]
enum Type {
    Void,
    Pointer(u64),
    Function { ret: u64, params: u32 },
    Other,
}

#[derive(Debug, Clone, Copy)]
struct Function {
    value: u32,
    ty: u64,
}

#[derive(Default)]
struct Module {
    types: Vec<Type>,
    /// Module-level values: globals, functions, aliases, then constants.
    values: u32,
    functions: Vec<Function>,
    /// Function value id → its index in `functions`.
    by_value: HashMap<u32, usize>,
    /// The functions with bodies, in order: their bodies come in this order.
    bodies: Vec<usize>,
    /// Module-level integer constants by value id.
    ints: HashMap<u32, i64>,
    names: HashMap<u32, String>,
    /// Per callee value id: calls and opcodes.
    calls: BTreeMap<u32, (u32, BTreeSet<u32>)>,
    complete: bool,
}

impl Module {
    /// The function type behind a function record's type (3.7 writes the function type,
    /// earlier writers a pointer to it).
    fn function_type(&self, ty: u64) -> Option<(bool, u32)> {
        let mut t = self.types.get(ty as usize)?;
        if let Type::Pointer(inner) = t {
            t = self.types.get(*inner as usize)?;
        }
        match *t {
            Type::Function { ret, params } => Some((
                matches!(self.types.get(ret as usize), Some(Type::Void)),
                params,
            )),
            _ => None,
        }
    }

    fn read_types(&mut self, r: &mut Reader<'_>) -> Result<(), String> {
        r.records("the type table", |code, ops| {
            let ty = match code {
                // NUMENTRY and STRUCT_NAME make no type.
                1 | 19 => return Ok(()),
                2 => Type::Void,
                8 => Type::Pointer(ops.first().copied().unwrap_or(u64::MAX)),
                21 => Type::Function {
                    ret: ops.get(1).copied().unwrap_or(u64::MAX),
                    params: ops.len().saturating_sub(2) as u32,
                },
                9 => Type::Function {
                    ret: ops.get(2).copied().unwrap_or(u64::MAX),
                    params: ops.len().saturating_sub(3) as u32,
                },
                _ => Type::Other,
            };
            self.types.push(ty);
            Ok(())
        })
    }

    /// A constants block: every record but SETTYPE makes a value; integers are kept.
    fn read_constants(
        r: &mut Reader<'_>,
        next: &mut u32,
        ints: &mut HashMap<u32, i64>,
    ) -> Result<(), String> {
        r.records("a constants block", |code, ops| {
            if code == 1 {
                return Ok(());
            }
            if let (4, Some(&v)) = (code, ops.first()) {
                ints.insert(*next, signed(v));
            }
            *next = next.checked_add(1).ok_or("too many values")?;
            Ok(())
        })
    }

    fn read_symtab(&mut self, r: &mut Reader<'_>) -> Result<(), String> {
        r.records("a value symbol table", |code, ops| {
            // ENTRY [id, chars…]; FNENTRY [id, offset, chars…].
            let skip = match code {
                1 => 1,
                3 => 2,
                _ => return Ok(()),
            };
            if let (Some(&id), Some(chars)) = (ops.first(), ops.get(skip..)) {
                let name: String = chars.iter().map(|&c| (c as u8) as char).collect();
                self.names.insert(id as u32, name);
            }
            Ok(())
        })
    }

    /// One function body: the `index`th function with a body.
    fn read_body(&mut self, r: &mut Reader<'_>, index: usize) -> Result<(), String> {
        let params = self
            .bodies
            .get(index)
            .and_then(|&f| self.function_type(self.functions[f].ty))
            .map(|(_, params)| params);
        let Some(params) = params else {
            self.complete = false;
            return r.skip();
        };
        let mut next = self.values.saturating_add(params);
        let mut ints: HashMap<u32, i64> = HashMap::new();
        let mut tracking = true;
        while let Some(entry) = r.entry()? {
            match entry {
                Entry::End => {
                    if !tracking {
                        self.complete = false;
                    }
                    return Ok(());
                }
                Entry::Enter(CONSTANTS) => Self::read_constants(r, &mut next, &mut ints)?,
                Entry::Enter(_) => r.skip()?,
                Entry::Record { code } if tracking => {
                    match code {
                        34 => {
                            let yields = self.call(r.ops(), next, &ints);
                            match yields {
                                Some(true) => next += 1,
                                Some(false) => {}
                                None => tracking = false,
                            }
                        }
                        // No value: DECLAREBLOCKS, RET, BR, SWITCH, INDIRECTBR,
                        // UNREACHABLE, STORE(_OLD), FENCE, RESUME, STOREATOMIC(_OLD),
                        // DEBUG_LOC(_AGAIN).
                        1 | 10 | 11 | 12 | 15 | 24 | 31 | 33 | 35 | 36 | 39 | 42 | 44 | 45 => {}
                        // A value: BINOP, CAST, GEP, SELECT, vector and aggregate ops,
                        // CMP, PHI, ALLOCA, LOAD, VAARG, CMPXCHG, ATOMICRMW, LANDINGPAD.
                        2..=9 | 16 | 19 | 20 | 23 | 26..=30 | 37 | 38 | 40 | 41 | 43 | 46 | 47 => {
                            next += 1
                        }
                        _ => tracking = false,
                    }
                }
                Entry::Record { .. } => {}
            }
        }
        Err("a function body has no end".into())
    }

    /// Record a call `[paramattrs, cc, (fnty), callee, args…]` made when `next` values
    /// exist; returns whether it yields a value (`None`: cannot tell).
    fn call(&mut self, ops: &[u64], next: u32, ints: &HashMap<u32, i64>) -> Option<bool> {
        let cc = *ops.get(1)?;
        let mut at = 2;
        if cc & (1 << 17) != 0 {
            at += 1; // fast-math flags
        }
        let explicit = cc & (1 << 15) != 0;
        let fnty = if explicit {
            at += 1;
            Some(*ops.get(at - 1)?)
        } else {
            None
        };
        let callee = next.wrapping_sub(*ops.get(at)? as u32);
        let function = self.by_value.get(&callee).map(|&f| self.functions[f]);
        let ty = match fnty {
            Some(t) => t,
            None => function?.ty,
        };
        let (void, _) = self.function_type(ty)?;
        if function.is_some() {
            let entry = self.calls.entry(callee).or_default();
            entry.0 += 1;
            if let Some(arg) = ops.get(at + 1) {
                let id = next.wrapping_sub(*arg as u32);
                let value = ints.get(&id).or_else(|| self.ints.get(&id));
                if let Some(&op) = value {
                    if let Ok(op) = u32::try_from(op) {
                        entry.1.insert(op);
                    }
                }
            }
        }
        Some(!void)
    }
}

/// The `dx.op` functions of the bitcode `bytes` (the `DXIL` part after its header).
pub fn usage(bytes: &[u8]) -> Result<Usage, String> {
    let mut r = Reader::new(bytes)?;
    let mut m = Module {
        complete: true,
        ..Module::default()
    };
    let mut in_module = false;
    let mut bodies = 0;
    while let Some(entry) = r.entry()? {
        match entry {
            Entry::Enter(MODULE) if !in_module => in_module = true,
            Entry::Enter(TYPES) if in_module => m.read_types(&mut r)?,
            Entry::Enter(CONSTANTS) if in_module => {
                let mut next = m.values;
                let mut ints = std::mem::take(&mut m.ints);
                Module::read_constants(&mut r, &mut next, &mut ints)?;
                m.ints = ints;
                m.values = next;
            }
            Entry::Enter(VALUE_SYMTAB) if in_module => m.read_symtab(&mut r)?,
            Entry::Enter(FUNCTION) if in_module => {
                m.read_body(&mut r, bodies)?;
                bodies += 1;
            }
            Entry::Enter(_) => r.skip()?,
            Entry::End => {
                if r.block() == u32::MAX {
                    break;
                }
            }
            Entry::Record { code } if in_module && r.block() == MODULE => match code {
                // GLOBALVAR, ALIAS_OLD, ALIAS
                7 | 9 | 14 => m.values = m.values.checked_add(1).ok_or("too many values")?,
                8 => {
                    let ops = r.ops();
                    let proto = ops.get(2).copied().unwrap_or(0) != 0;
                    if !proto {
                        m.bodies.push(m.functions.len());
                    }
                    m.by_value.insert(m.values, m.functions.len());
                    m.functions.push(Function {
                        value: m.values,
                        ty: ops.first().copied().unwrap_or(u64::MAX),
                    });
                    m.values = m.values.checked_add(1).ok_or("too many values")?;
                }
                _ => {}
            },
            Entry::Record { .. } => {}
        }
    }
    if !in_module {
        return Err("the bitcode holds no module block".into());
    }
    let mut intrinsics: Vec<Intrinsic> = m
        .functions
        .iter()
        .filter_map(|f| {
            let name = m.names.get(&f.value)?;
            if !name.starts_with(PREFIX) {
                return None;
            }
            let (calls, opcodes) = m.calls.get(&f.value).cloned().unwrap_or_default();
            Some(Intrinsic {
                name: name.clone(),
                calls,
                opcodes: opcodes.into_iter().collect(),
            })
        })
        .collect();
    intrinsics.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Usage {
        intrinsics,
        complete: m.complete,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_vbr() {
        assert_eq!(signed(0), 0);
        assert_eq!(signed(222), 111);
        assert_eq!(signed(3), -1);
    }

    #[test]
    fn hostile_bitcode_is_an_error() {
        assert!(usage(b"").is_err());
        assert!(usage(b"BC\xC0\xDE").is_err());
        let mut b = b"BC\xC0\xDE".to_vec();
        b.extend_from_slice(&[0xFF; 64]);
        assert!(usage(&b).is_err());
    }
}
