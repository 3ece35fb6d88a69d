//! The JSON form of a constant table (`ctab/*.json` in the filesystem).
//!
//! ```json
//! {
//!   "creator": "Microsoft (R) HLSL Shader Compiler 9.29.952.3111",
//!   "target": "vs_3_0",
//!   "version": "vs_3_0",
//!   "flags": "0x00000100",
//!   "flag_names": ["NO_PRESHADER"],
//!   "constants": [
//!     {
//!       "name": "sf",
//!       "register_set": "FLOAT4",
//!       "register_index": 0,
//!       "register_count": 2,
//!       "class": "STRUCT",
//!       "type": "VOID",
//!       "rows": 1,
//!       "columns": 4,
//!       "elements": 1,
//!       "struct_members": [
//!         { "name": "f", "class": "SCALAR", "type": "FLOAT", "rows": 1, "columns": 1, "elements": 1 },
//!         { "name": "vf", "class": "VECTOR", "type": "FLOAT", "rows": 1, "columns": 3, "elements": 1 }
//!       ],
//!       "default_value": [[1.1, 0.0, 0.0, 0.0], [2.2, 3.3, 4.4, 0.0]]
//!     }
//!   ]
//! }
//! ```
//!
//! - Keys always in this order; `reserved` (the CONSTANTINFO half-word) only when not 0,
//!   `own_type` (a type info the compiler did not share, `Constant::own_type`) only
//!   when true,
//!   `struct_members` only when there are some, `default_value` only when there is one.
//! - `target` is `null` when the table has no target string (Target offset 0).
//! - `version` is the profile name of the Version field, or `"0x…"` when it names none.
//! - `flags` is the raw value; `flag_names` lists what it means (unnamed bits as `"0x…"`).
//!   On reading, `flag_names` may be left out, but when present it must agree with `flags`.
//! - `register_set`, `class`, `type` are Direct3D names; a class or type value without a
//!   name is written as its number, and numbers are accepted for any of them.
//! - `default_value` lists registers of four values (FLOAT4, INT4, SAMPLER sets) or single
//!   values (BOOL set). FLOAT4 values are JSON numbers that read back to the same `f32`
//!   bits; bits for which no number does (NaN, infinities) are written `"0x7fc00000"`.
//!   The other sets hold signed 32-bit integers (`true` in the BOOL set is `-1`).
//!   A `"0x…"` string is accepted for any value and stands for its bits.
//!
//! Reading checks the table with [`ConstantTable::validate`], so whatever parses encodes to
//! a table that decodes back to it.

use serde::de::{Deserializer, Error as _};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use super::{
    flag_names, flags_from_names, parse_hex_u32, version_from_name, version_name, Class, Constant,
    ConstantTable, Member, ParamType, RegisterSet, TypeInfo,
};

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TableJson {
    creator: String,
    target: Option<String>,
    version: String,
    flags: String,
    #[serde(default)]
    flag_names: Option<Vec<String>>,
    constants: Vec<Constant>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ConstantJson {
    name: String,
    register_set: RegisterSet,
    register_index: u16,
    register_count: u16,
    #[serde(default, skip_serializing_if = "is_zero")]
    reserved: u16,
    #[serde(default, skip_serializing_if = "is_false")]
    own_type: bool,
    class: Class,
    #[serde(rename = "type")]
    param_type: ParamType,
    rows: u16,
    columns: u16,
    elements: u16,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    struct_members: Vec<Member>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    default_value: Option<Value>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MemberJson {
    name: String,
    class: Class,
    #[serde(rename = "type")]
    param_type: ParamType,
    rows: u16,
    columns: u16,
    elements: u16,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    struct_members: Vec<Member>,
}

fn is_zero(value: &u16) -> bool {
    *value == 0
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl From<ConstantTable> for TableJson {
    fn from(table: ConstantTable) -> TableJson {
        TableJson {
            creator: table.creator,
            target: table.target,
            version: version_name(table.version).unwrap_or_else(|| hex(table.version)),
            flags: hex(table.flags),
            flag_names: Some(flag_names(table.flags)),
            constants: table.constants,
        }
    }
}

impl TryFrom<TableJson> for ConstantTable {
    type Error = String;

    fn try_from(json: TableJson) -> Result<ConstantTable, String> {
        let version = version_from_name(&json.version)
            .or_else(|| parse_hex_u32(&json.version))
            .ok_or_else(|| {
                format!(
                    "version {:?}: expected a profile name like \"vs_3_0\" or a \"0x…\" token",
                    json.version
                )
            })?;
        let flags = parse_hex_u32(&json.flags)
            .ok_or_else(|| format!("flags {:?}: expected \"0x…\"", json.flags))?;
        if let Some(names) = &json.flag_names {
            let named = flags_from_names(names).map_err(|e| format!("flag_names: {e}"))?;
            if named != flags {
                return Err(format!(
                    "flag_names {names:?} stand for {}, but flags is {}: expected {:?}",
                    hex(named),
                    hex(flags),
                    flag_names(flags)
                ));
            }
        }
        let table = ConstantTable {
            creator: json.creator,
            target: json.target,
            version,
            flags,
            constants: json.constants,
        };
        table.validate().map_err(|e| e.to_string())?;
        Ok(table)
    }
}

impl From<Constant> for ConstantJson {
    fn from(c: Constant) -> ConstantJson {
        let default_value = c
            .default_value
            .as_deref()
            .map(|words| default_to_json(c.register_set, words));
        ConstantJson {
            name: c.name,
            register_set: c.register_set,
            register_index: c.register_index,
            register_count: c.register_count,
            reserved: c.reserved,
            own_type: c.own_type,
            class: c.type_info.class,
            param_type: c.type_info.param_type,
            rows: c.type_info.rows,
            columns: c.type_info.columns,
            elements: c.type_info.elements,
            struct_members: c.type_info.members,
            default_value,
        }
    }
}

impl TryFrom<ConstantJson> for Constant {
    type Error = String;

    fn try_from(json: ConstantJson) -> Result<Constant, String> {
        let default_value = json
            .default_value
            .as_ref()
            .map(|value| default_from_json(json.register_set, value))
            .transpose()
            .map_err(|e| format!("constant {:?} default_value: {e}", json.name))?;
        Ok(Constant {
            name: json.name,
            register_set: json.register_set,
            register_index: json.register_index,
            register_count: json.register_count,
            reserved: json.reserved,
            type_info: TypeInfo {
                class: json.class,
                param_type: json.param_type,
                rows: json.rows,
                columns: json.columns,
                elements: json.elements,
                members: json.struct_members,
            },
            default_value,
            own_type: json.own_type,
        })
    }
}

impl Serialize for Member {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        MemberJson {
            name: self.name.clone(),
            class: self.type_info.class,
            param_type: self.type_info.param_type,
            rows: self.type_info.rows,
            columns: self.type_info.columns,
            elements: self.type_info.elements,
            struct_members: self.type_info.members.clone(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Member, D::Error> {
        let json = MemberJson::deserialize(deserializer)?;
        Ok(Member {
            name: json.name,
            type_info: TypeInfo {
                class: json.class,
                param_type: json.param_type,
                rows: json.rows,
                columns: json.columns,
                elements: json.elements,
                members: json.struct_members,
            },
        })
    }
}

fn hex(value: u32) -> String {
    format!("{value:#010x}")
}

/// A Direct3D enum value: its name when it has one, else its number.
fn serialize_enum<S: Serializer>(value: u16, name: Option<&str>, s: S) -> Result<S::Ok, S::Error> {
    match name {
        Some(name) => s.serialize_str(name),
        None => s.serialize_u16(value),
    }
}

/// A Direct3D enum value given by name (per `from_name`) or by number.
fn deserialize_enum<'de, D: Deserializer<'de>>(
    d: D,
    what: &str,
    from_name: fn(&str) -> Option<u16>,
) -> Result<u16, D::Error> {
    match Value::deserialize(d)? {
        Value::String(name) => {
            from_name(&name).ok_or_else(|| D::Error::custom(format!("unknown {what} {name:?}")))
        }
        Value::Number(n) => n
            .as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .ok_or_else(|| D::Error::custom(format!("{what} {n} is not a 16-bit value"))),
        other => Err(D::Error::custom(format!(
            "{what}: expected a name or a number, found {other}"
        ))),
    }
}

impl Serialize for RegisterSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_enum(self.0, self.name(), s)
    }
}

impl<'de> Deserialize<'de> for RegisterSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RegisterSet, D::Error> {
        let value = deserialize_enum(d, "register set", |n| {
            RegisterSet::from_name(n).map(|r| r.0)
        })?;
        match RegisterSet(value).name() {
            Some(_) => Ok(RegisterSet(value)),
            None => Err(D::Error::custom(format!(
                "register set {value}: expected BOOL, INT4, FLOAT4 or SAMPLER"
            ))),
        }
    }
}

impl Serialize for Class {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_enum(self.0, self.name(), s)
    }
}

impl<'de> Deserialize<'de> for Class {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Class, D::Error> {
        deserialize_enum(d, "class", |n| Class::from_name(n).map(|c| c.0)).map(Class)
    }
}

impl Serialize for ParamType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_enum(self.0, self.name(), s)
    }
}

impl<'de> Deserialize<'de> for ParamType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ParamType, D::Error> {
        deserialize_enum(d, "type", |n| ParamType::from_name(n).map(|t| t.0)).map(ParamType)
    }
}

fn default_to_json(set: RegisterSet, words: &[u32]) -> Value {
    let value = |word: &u32| {
        if set == RegisterSet::FLOAT4 {
            float_to_json(*word)
        } else {
            Value::from(*word as i32)
        }
    };
    if set == RegisterSet::BOOL {
        Value::Array(words.iter().map(value).collect())
    } else {
        let registers = words
            .chunks(4)
            .map(|r| Value::Array(r.iter().map(value).collect()));
        Value::Array(registers.collect())
    }
}

/// The shortest JSON number that reads back to exactly these `f32` bits, or `"0x…"` when
/// none does (NaN, infinities). The reading is checked, not assumed.
fn float_to_json(bits: u32) -> Value {
    let value = f32::from_bits(bits);
    let number = format!("{value}")
        .parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .filter(|n| {
            let text = n.to_string();
            serde_json::from_str::<f64>(&text).is_ok_and(|back| (back as f32).to_bits() == bits)
        });
    match number {
        Some(n) => Value::Number(n),
        None => Value::String(hex(bits)),
    }
}

fn default_from_json(set: RegisterSet, value: &Value) -> Result<Vec<u32>, String> {
    let Value::Array(items) = value else {
        return Err(format!("expected a list, found {value}"));
    };
    let mut words = Vec::new();
    for item in items {
        match (item, set == RegisterSet::BOOL) {
            (Value::Array(register), false) if register.len() <= 4 => {
                for v in register {
                    words.push(word_from_json(set, v)?);
                }
            }
            (item, true) => words.push(word_from_json(set, item)?),
            (item, false) => {
                return Err(format!(
                    "expected registers of up to four values, found {item}"
                ))
            }
        }
    }
    Ok(words)
}

fn word_from_json(set: RegisterSet, value: &Value) -> Result<u32, String> {
    let float = set == RegisterSet::FLOAT4;
    match value {
        Value::String(text) => parse_hex_u32(text)
            .ok_or_else(|| format!("{text:?}: expected a number or \"0x…\" bits")),
        Value::Number(n) if float => n
            .as_f64()
            .map(|f| f as f32)
            .filter(|f| f.is_finite())
            .map(f32::to_bits)
            .ok_or_else(|| format!("{n} is outside the range of a 32-bit float")),
        Value::Number(n) => n
            .as_i64()
            .and_then(|i| {
                i32::try_from(i)
                    .map(|i| i as u32)
                    .ok()
                    .or_else(|| u32::try_from(i).ok())
            })
            .ok_or_else(|| {
                format!(
                    "{n}: expected a 32-bit integer in the {} set",
                    set.name().unwrap_or("?")
                )
            }),
        other => Err(format!("expected a number, found {other}")),
    }
}
