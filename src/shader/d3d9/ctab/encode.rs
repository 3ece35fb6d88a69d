//! Writing a CTAB payload the way the table's producer lays it out.
//!
//! All producers seen write the same sequence (§10.2, §10.5): the header, the
//! `CONSTANTINFO` array, then for each constant in order its name, its type info (first
//! each member's name and type, then the member array, then the type itself), its default
//! value, and at the end the target and creator strings. They differ in three things,
//! learnt from the corpus; the creator string says which producer a table follows:
//!
//! | | Microsoft (any creator not below) | vkd3d (`"vkd3d-shader …"`) | Wine's tests (`"Wine project"`) |
//! |---|---|---|---|
//! | strings | packed; `0xAB` padding only before a DWORD structure and at the end; a string already written is pointed to again | each padded with `0xAB` to a DWORD | as vkd3d |
//! | shared type infos | non-array, non-object types, separately among top-level constants and among struct members | non-array types except matrices, anywhere | any identical type |
//! | shared member arrays | identical ones | never | never |
//!
//! Microsoft: `wine-tests/d3dx9/registerset_blob_*`, `get_shader_samplers_blob`,
//! `test_get_shader_constant_variables_blob` (fxc 9.29: `sampler s` and `sampler2D s2D` get
//! two type infos, top-level `float f` and member `s.f` two, `s`, `s_2[2]`, `s_3[3]` one
//! member array; member `s.f` points at the constant name `"f"`). The seed
//! `shared/seeds/001_e36ac28d5a5b5f27.txt` describes the same packing for the D3DX9 compiler
//! of Oblivion's time, and the worked example of §10.5 follows it. vkd3d: `compiled/*.bin`
//! (two `float4x4` get two type infos, two `float4` one). Wine's tests: the hand-built
//! `ctab_basic`, `ctab_matrices`, `ctab_samplers`, `shader_with_ctab_constants`.
//!
//! What no rule reproduces, because the decoded table does not record it:
//! - hand-built placements: `shader_with_ctab` points its creator into the header and its
//!   empty ConstantInfo array at offset 0;
//! - tables cut short by their comment, whose payload ends in bytes of no field
//!   (`ctab_arrays`, `ctab_matrices2`, `ctab_with_default_values`);
//! - choices a compiler makes from its own type objects, where the corpus has no example:
//!   vkd3d would give two identical anonymous structs two type infos, and fxc may give an
//!   array of one (`int i[1]`, which the table shows as a plain scalar) its own type info
//!   even among top-level constants (in `test_get_shader_constant_variables_blob` it is the
//!   only top-level `int`, so that table re-encodes exactly).
//!
//! For these [`super::reencode_preserving`] keeps the original bytes while the table is
//! unedited.

use std::collections::HashMap;

use super::{Class, Constant, ConstantTable, RegisterSet, TypeInfo, CTAB_FOURCC};

const HEADER_SIZE: usize = 28;
const CONSTANT_INFO_SIZE: usize = 20;
const PADDING: u8 = 0xAB;

/// Whose layout a table follows, told by its creator string. Microsoft's compilers, one
/// generation after another (`ctab/testdata/`, each source compiled by every D3DX9 DLL of
/// the DirectX redistributable):
///
/// | DLLs | creator | shares type infos | flags | `register()` mark |
/// |---|---|---|---|---|
/// | d3dx9_24 … 31 | `D3DX9 Shader Compiler 9.05` … `9.15` | anywhere, samplers and arrays too | 0x100 | 2 for a float4 |
/// | d3dx9_32 … 34 | `D3DX9 Shader Compiler ` (no version) | anywhere, samplers and arrays too | 0x20000100 | index × 4 + 2 |
/// | d3dx9_35 … 39 | `HLSL Shader Compiler 9.19` … `9.24.949` | anywhere, samplers and arrays too | 0x20000100 | index × 4 + 2 |
/// | d3dx9_40 | `HLSL Shader Compiler 9.24.950` | per scope, samplers and arrays too | 0x20000100 | index × 4 + 2 |
/// | d3dx9_41 | `HLSL Shader Compiler 9.26` | per scope, no samplers or arrays | 0x20000100 | index × 4 + 2 |
/// | d3dx9_42, 43, d3dcompiler_42, 43 | `HLSL Shader Compiler 9.27`, `9.29` | per scope, no samplers or arrays | 0x100 | index × 4 + 2 |
#[derive(Clone, Copy, PartialEq, Eq)]
enum Producer {
    /// fxc and d3dcompiler from 9.26 on, and any creator no other row names.
    Microsoft,
    /// The D3DX9 compilers of d3dx9_24 … d3dx9_40.
    D3dx9(Generation),
    Vkd3d,
    WineTests,
}

/// The D3DX9 compilers before fxc 9.26, as far as their tables differ.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Generation {
    /// d3dx9_24 … d3dx9_31, `D3DX9 Shader Compiler 9.05` … `9.15`.
    Legacy,
    /// d3dx9_32 … d3dx9_34, whose creator has no version.
    Unversioned,
    /// d3dx9_35 … d3dx9_40, `HLSL Shader Compiler 9.19` … `9.24`: minor version, build.
    Hlsl(u32, u32),
}

impl Producer {
    /// The producer whose layout a table gets, by its creator string; Microsoft's unless
    /// another producer is named.
    fn of(creator: &str) -> Producer {
        if creator.starts_with("vkd3d-shader") {
            Producer::Vkd3d
        } else if creator == "Wine project" {
            Producer::WineTests
        } else if creator == D3DX9_COMPILER {
            Producer::D3dx9(Generation::Unversioned)
        } else if creator.starts_with(D3DX9_COMPILER) {
            Producer::D3dx9(Generation::Legacy)
        } else {
            match hlsl_compiler_version(creator) {
                Some((minor @ 19..=25, build)) => Producer::D3dx9(Generation::Hlsl(minor, build)),
                _ => Producer::Microsoft,
            }
        }
    }

    /// Microsoft's compilers pack strings and share repeated strings and member arrays.
    fn packs(self) -> bool {
        matches!(self, Producer::Microsoft | Producer::D3dx9(_))
    }
}

/// `(N, B)` of a creator `Microsoft (R) HLSL Shader Compiler 9.N.B.…`.
fn hlsl_compiler_version(creator: &str) -> Option<(u32, u32)> {
    let version = creator.strip_prefix(HLSL_COMPILER)?;
    let mut parts = version.split('.');
    (parts.next()? == "9").then_some(())?;
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// Where a type info is used: Microsoft's compiler shares types only within one of these.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Scope {
    TopLevel,
    Member,
    Anywhere,
    /// A constant's type the source spelled apart from equal ones ([`Constant::own_type`]):
    /// shared only with types spelled so too.
    Own,
}

struct Writer<'t> {
    producer: Producer,
    /// The table proper; offsets count from its first byte.
    out: Vec<u8>,
    strings: HashMap<&'t str, u32>,
    types: HashMap<(Scope, &'t TypeInfo), u32>,
    member_arrays: HashMap<Vec<(u32, u32)>, u32>,
}

pub(super) fn encode(table: &ConstantTable) -> Vec<u8> {
    let mut w = Writer {
        producer: Producer::of(&table.creator),
        out: vec![0; HEADER_SIZE + CONSTANT_INFO_SIZE * table.constants.len()],
        strings: HashMap::new(),
        types: HashMap::new(),
        member_arrays: HashMap::new(),
    };
    for (i, constant) in table.constants.iter().enumerate() {
        let name = w.string(&constant.name);
        let scope = match constant.own_type {
            true => Scope::Own,
            false => Scope::TopLevel,
        };
        let type_info = w.type_info(&constant.type_info, scope);
        let default = match &constant.default_value {
            Some(words) => {
                w.align();
                let at = w.offset();
                for word in words {
                    w.u32(*word);
                }
                at
            }
            None => 0,
        };
        let entry = HEADER_SIZE + CONSTANT_INFO_SIZE * i;
        w.set_u32(entry, name);
        w.set_u16(entry + 4, constant.register_set.0);
        w.set_u16(entry + 6, constant.register_index);
        w.set_u16(entry + 8, constant.register_count);
        w.set_u16(entry + 10, constant.reserved);
        w.set_u32(entry + 12, type_info);
        w.set_u32(entry + 16, default);
    }
    let target = table.target.as_deref().map_or(0, |t| w.string(t));
    let creator = w.string(&table.creator);
    w.align();
    // fxc points an empty ConstantInfo array at offset 0 (`fxc-listings/im2d_PS.pso`).
    let constant_info = if table.constants.is_empty() && w.producer.packs() {
        0
    } else {
        HEADER_SIZE as u32
    };
    let header = [
        HEADER_SIZE as u32,
        creator,
        table.version,
        table.constants.len() as u32,
        constant_info,
        table.flags,
        target,
    ];
    for (i, value) in header.into_iter().enumerate() {
        w.set_u32(4 * i, value);
    }
    let mut payload = Vec::with_capacity(4 + w.out.len());
    payload.extend_from_slice(&CTAB_FOURCC.to_le_bytes());
    payload.extend_from_slice(&w.out);
    payload
}

/// What a table's producer writes that a listing does not show, as a header read back
/// ([`ConstantTable::from_listing`](super::ConstantTable::from_listing)) takes it unless
/// the header says otherwise (see `listing.rs`: its `Flags:`, `Target:` and `Bound by
/// register():` lines).
pub(super) struct Implied {
    pub flags: u32,
    pub target: Option<String>,
    binding: BindingMark,
    /// The columns of a `Texture1D` … `TextureCube` type (its element's: a float4, but 1 in
    /// the older compilers).
    pub texture_columns: u16,
}

/// How a producer records, in a constant's `Reserved` half-word, that the source placed
/// it with `register()`. Learnt from Microsoft's compilers run on sources that place some
/// constants and not others (`testdata/bound_*.hlsl`, `../shared/corpus/hlsl/versions/`
/// `register-reservations-numeric`, `fxc-listings/`): a constant the compiler placed has 0.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BindingMark {
    /// fxc 9.29 and d3dcompiler (`Microsoft (R) HLSL Shader Compiler …`), in every
    /// register set: RegisterIndex × 4 + 2 (`c15` has 62, `b2` 10, `s3` 14).
    IndexTimesFourPlusTwo,
    /// The D3DX9 compilers of d3dx9_24 … d3dx9_31 (`Microsoft (R) D3DX9 Shader Compiler
    /// 9.05 … 9.15`): 2 for a FLOAT4 constant; a bool, int or sampler placed by hand gets
    /// 0, like any other.
    TwoForFloat4,
    /// vkd3d records nothing (§10.4: Reserved 0).
    Nothing,
}

impl Implied {
    /// fxc 9.29 and every D3DX9 compiler write `D3DXSHADER_NO_PRESHADER` (0x100) and the
    /// profile name in every table of the corpus made without special flags
    /// (`fxc-listings/`, `hlsl/`, `wine-tests/d3dx9/registerset_blob_*`); vkd3d writes
    /// flags 0 and no target (§10.4, `compiled/`).
    pub(super) fn of(creator: &str, version: u32) -> Implied {
        let target = super::version_name(version);
        match Producer::of(creator) {
            Producer::Vkd3d => Implied {
                flags: 0,
                target: None,
                binding: BindingMark::Nothing,
                texture_columns: 4,
            },
            Producer::D3dx9(Generation::Legacy) => Implied {
                flags: 0x100,
                target,
                binding: BindingMark::TwoForFloat4,
                texture_columns: 1,
            },
            Producer::D3dx9(generation) => Implied {
                flags: 0x2000_0100,
                target,
                binding: BindingMark::IndexTimesFourPlusTwo,
                // `Texture2D` (`sam+tex`): 1 column from 9.19 (d3dx9_35, 36), 4 from 9.22.
                texture_columns: match generation {
                    Generation::Hlsl(minor, _) if minor >= 22 => 4,
                    _ => 1,
                },
            },
            Producer::Microsoft | Producer::WineTests => Implied {
                flags: match hlsl_compiler_version(creator) {
                    Some((26, _)) => 0x2000_0100,
                    _ => 0x100,
                },
                target,
                binding: BindingMark::IndexTimesFourPlusTwo,
                texture_columns: 4,
            },
        }
    }

    /// The `Reserved` half-word of a constant in `set`: `placed` is
    /// `None` when the compiler placed it, else the register its `register()` mark names.
    /// fxc's mark names the first register the shader uses of the constant, which is past
    /// RegisterIndex when the shader reads only the later elements of an array
    /// (`float4 offsets[3] : register(c9)` read only at `[2]` has 46, c11).
    pub(super) fn reserved(&self, set: RegisterSet, placed: Option<u16>) -> u16 {
        match (placed, self.binding) {
            (None, _) | (Some(_), BindingMark::Nothing) => 0,
            (Some(at), BindingMark::IndexTimesFourPlusTwo) => at.wrapping_mul(4).wrapping_add(2),
            (Some(_), BindingMark::TwoForFloat4) if set == RegisterSet::FLOAT4 => 2,
            (Some(_), BindingMark::TwoForFloat4) => 0,
        }
    }

    /// What the producer's mark says of `c`: `Some(None)` that the compiler placed it,
    /// `Some(Some(at))` that `register()` did, marking register `at`; `None` when its
    /// `Reserved` is no mark the producer writes (a hand-made table).
    pub(super) fn placement(&self, c: &Constant) -> Option<Option<u16>> {
        if c.reserved == 0 {
            return Some(None);
        }
        let at = match self.binding {
            BindingMark::IndexTimesFourPlusTwo if c.reserved % 4 == 2 => c.reserved / 4,
            _ => c.register_index,
        };
        (self.reserved(c.register_set, Some(at)) == c.reserved).then_some(Some(at))
    }
}

/// The member of a derived struct that holds its base (`struct b : a`).
const SUPER: &str = "$super";

/// How the D3DX9 compilers of d3dx9_24 … d3dx9_34 name themselves in the creator string.
const D3DX9_COMPILER: &str = "Microsoft (R) D3DX9 Shader Compiler ";
/// How fxc, d3dcompiler and the D3DX9 compilers from d3dx9_35 on name themselves.
const HLSL_COMPILER: &str = "Microsoft (R) HLSL Shader Compiler ";

impl<'t> Writer<'t> {
    fn offset(&self) -> u32 {
        self.out.len() as u32
    }

    fn align(&mut self) {
        while self.out.len() % 4 != 0 {
            self.out.push(PADDING);
        }
    }

    fn u32(&mut self, value: u32) {
        self.out.extend_from_slice(&value.to_le_bytes());
    }

    fn set_u32(&mut self, at: usize, value: u32) {
        self.out[at..at + 4].copy_from_slice(&value.to_le_bytes());
    }

    fn set_u16(&mut self, at: usize, value: u16) {
        self.out[at..at + 2].copy_from_slice(&value.to_le_bytes());
    }

    /// Writes a string (one byte per char, as decoded) and its NUL; returns its offset.
    fn string(&mut self, text: &'t str) -> u32 {
        if self.producer.packs() {
            if let Some(at) = self.strings.get(text) {
                return *at;
            }
        } else {
            self.align();
        }
        let at = self.offset();
        self.out.extend(text.chars().map(|c| c as u32 as u8));
        self.out.push(0);
        if self.producer.packs() {
            self.strings.insert(text, at);
        } else {
            self.align();
        }
        at
    }

    /// The key under which a type info may be shared, if its producer shares it.
    fn share_key(&self, type_info: &'t TypeInfo, scope: Scope) -> Option<(Scope, &'t TypeInfo)> {
        let single = type_info.elements == 1;
        let key = match self.producer {
            Producer::Microsoft => {
                (single && type_info.class != Class::OBJECT).then_some((scope, type_info))
            }
            // d3dx9_24 … d3dx9_31 share samplers and arrays too (`testdata/bound_mixed`:
            // both sampler2Ds share one; `legacy/sm1-const-allocation.section10`: two
            // float[4]).
            Producer::D3dx9(Generation::Hlsl(24, build)) if build >= 950 => {
                Some((scope, type_info))
            }
            Producer::D3dx9(_) => Some((Scope::Anywhere, type_info)),
            Producer::Vkd3d => {
                (single && !type_info.class.is_matrix()).then_some((Scope::Anywhere, type_info))
            }
            Producer::WineTests => Some((Scope::Anywhere, type_info)),
        };
        key.map(|(shared, t)| (if scope == Scope::Own { scope } else { shared }, t))
    }

    fn type_info(&mut self, type_info: &'t TypeInfo, scope: Scope) -> u32 {
        let key = self.share_key(type_info, scope);
        if let Some(at) = key.and_then(|key| self.types.get(&key)) {
            return *at;
        }
        let records: Vec<(u32, u32)> = type_info
            .members
            .iter()
            .map(|m| {
                // Microsoft writes a member's name before its type, but for the base of a
                // derived struct, `$super`, which follows the base's type
                // (`hlsl/vkd3d/struct-inheritance`; a struct member `s` comes before its
                // type in `wine-tests/d3dx9/registerset_blob_struct_struct`).
                if self.producer.packs() && m.name == SUPER {
                    let type_info = self.type_info(&m.type_info, Scope::Member);
                    (self.string(&m.name), type_info)
                } else {
                    let name = self.string(&m.name);
                    (name, self.type_info(&m.type_info, Scope::Member))
                }
            })
            .collect();
        let members = self.member_array(records);
        self.align();
        let at = self.offset();
        for pair in [
            (type_info.class.0, type_info.param_type.0),
            (type_info.rows, type_info.columns),
            (type_info.elements, type_info.members.len() as u16),
        ] {
            self.u32(u32::from(pair.0) | u32::from(pair.1) << 16);
        }
        self.u32(members);
        if let Some(key) = key {
            self.types.insert(key, at);
        }
        at
    }

    fn member_array(&mut self, records: Vec<(u32, u32)>) -> u32 {
        if records.is_empty() {
            return 0;
        }
        let shared = self.producer.packs();
        if let Some(at) = self.member_arrays.get(&records).filter(|_| shared) {
            return *at;
        }
        self.align();
        let at = self.offset();
        for (name, type_info) in &records {
            self.u32(*name);
            self.u32(*type_info);
        }
        if shared {
            self.member_arrays.insert(records, at);
        }
        at
    }
}
