//! `d3d9 run SHADER [--set NAME=VALUES]... [--inputs FILE.json]`: one invocation of a
//! shader on the interpreter (`shaderfs::shader::d3d9::run`), its outputs as JSON.
//!
//! The inputs file is a JSON object, every member optional:
//!
//! ```json
//! {"constants": {"c0": [1, 0, 0, 1], "i0": [3, 0, 1, 0], "b0": true, "tint": [1, 0, 0, 1]},
//!  "inputs": {"TEXCOORD0": [0.5, 0.5, 0, 0], "v1": [1, 1, 1, 1]},
//!  "textures": {"s0": {"width": 2, "height": 2, "texels": [[1, 0, 0, 1], …],
//!                      "filter": "point", "address": "wrap"}},
//!  "vpos": [3, 4], "vface": 1}
//! ```
//!
//! `--set` takes the same names, after the file: `c3=1,2,3,4`, `i0=3,0,1,0`, `b0=true`, a
//! constant's CTAB name (`tint=1,0,0,1`; a matrix takes its registers' values one after
//! the other), an input semantic (`TEXCOORD0=…`) or register (`v0=…`), `vPos=x,y`,
//! `vFace=-1`. Missing components are 0.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Map, Value};
use shaderfs::mount::{Failure, EXIT_MALFORMED};
use shaderfs::shader::d3d9::bytecode::shader_version;
use shaderfs::shader::d3d9::ctab::RegisterSet;
use shaderfs::shader::d3d9::run::{Address, Filter, Inputs, Program, Sampler, Semantic, Texture};

use super::output::print;

fn malformed(path: &Path, what: impl std::fmt::Display) -> Failure {
    Failure {
        code: EXIT_MALFORMED,
        message: format!("{}: {what}", path.display()),
    }
}

/// `d3d9 run SHADER [--set NAME=VALUES]... [--inputs FILE]`
pub fn run(shader: &Path, sets: &[String], inputs_file: Option<&Path>) -> Result<(), Failure> {
    let bytes =
        std::fs::read(shader).map_err(|e| Failure::usage(format!("{}: {e}", shader.display())))?;
    let code = if shader_version(&bytes).is_some() {
        bytes
    } else {
        let text = String::from_utf8(bytes).map_err(|_| {
            malformed(
                shader,
                "neither D3D9 bytecode (no version token) nor asm text",
            )
        })?;
        shaderfs::shader::d3d9::asm::assemble(&text).map_err(|e| malformed(shader, e))?
    };
    let program = Program::new(&code).map_err(|e| malformed(shader, e))?;
    let mut inputs = Inputs::default();
    if let Some(file) = inputs_file {
        let text = std::fs::read_to_string(file)
            .map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
        let json: Value = serde_json::from_str(&text).map_err(|e| malformed(file, e))?;
        apply_file(&program, &mut inputs, &json).map_err(|e| malformed(file, e))?;
    }
    for set in sets {
        let (name, values) = set
            .split_once('=')
            .ok_or_else(|| Failure::usage(format!("--set {set}: expected NAME=VALUES")))?;
        let value = parse_values(values);
        set_value(&program, &mut inputs, name, &value)
            .map_err(|e| Failure::usage(format!("--set {set}: {e}")))?;
    }
    inputs.bindings.constants = inputs.bindings.constants.with_ctab_defaults(&program);
    let outputs = program.run(&inputs).map_err(|e| malformed(shader, e))?;
    let mut out = Map::new();
    for (reg, v) in &outputs.values {
        out.insert(reg.to_string(), vector(v));
    }
    let mut semantics = Map::new();
    if program.version().kind == shaderfs::shader::d3d9::bytecode::ShaderKind::Vertex {
        for (_, _, s) in &outputs.semantics {
            if let Some(v) = outputs.by_semantic(*s) {
                semantics.insert(s.to_string(), vector(&v));
            }
        }
    }
    let mut doc = json!({
        "profile": program.version().to_string(),
        "outputs": out,
    });
    if !semantics.is_empty() {
        doc["semantics"] = Value::Object(semantics);
    }
    doc["discarded"] = Value::Bool(outputs.discarded);
    let mut text = serde_json::to_vec_pretty(&doc).expect("JSON values serialise");
    text.push(b'\n');
    print(&text)
}

/// A value as JSON: finite numbers as numbers, the others as `"inf"`, `"-inf"`, `"nan"`.
fn number(x: f32) -> Value {
    if x.is_finite() {
        json!(x as f64)
    } else if x.is_nan() {
        json!("nan")
    } else if x > 0.0 {
        json!("inf")
    } else {
        json!("-inf")
    }
}

fn vector(v: &[f32; 4]) -> Value {
    Value::Array(v.iter().map(|x| number(*x)).collect())
}

/// One value given in `--set` or the file: numbers or a boolean.
#[derive(Debug, Clone, PartialEq)]
enum Given {
    Numbers(Vec<f64>),
    Bool(bool),
    Bad(String),
}

fn parse_values(text: &str) -> Given {
    match text.trim() {
        "true" => return Given::Bool(true),
        "false" => return Given::Bool(false),
        _ => {}
    }
    let mut v = Vec::new();
    for part in text.split(',') {
        match part.trim().parse::<f64>() {
            Ok(x) => v.push(x),
            Err(_) => return Given::Bad(format!("'{}' is not a number", part.trim())),
        }
    }
    Given::Numbers(v)
}

fn from_json(v: &Value) -> Given {
    match v {
        Value::Bool(b) => Given::Bool(*b),
        Value::Number(n) => Given::Numbers(vec![n.as_f64().unwrap_or(0.0)]),
        Value::Array(a) => {
            let mut out = Vec::new();
            for x in a {
                match x.as_f64() {
                    Some(f) => out.push(f),
                    None => return Given::Bad(format!("{x} is not a number")),
                }
            }
            Given::Numbers(out)
        }
        other => Given::Bad(format!("{other} is neither numbers nor a boolean")),
    }
}

fn four(v: &[f64], at: usize) -> [f32; 4] {
    std::array::from_fn(|i| v.get(at + i).copied().unwrap_or(0.0) as f32)
}

fn register(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    (!rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        .then(|| rest.parse().ok())
        .flatten()
}

/// Sets register, semantic or constant `name` to `value`.
fn set_value(
    program: &Program,
    inputs: &mut Inputs,
    name: &str,
    value: &Given,
) -> Result<(), String> {
    let c = &mut inputs.bindings.constants;
    let numbers = |v: &Given| -> Result<Vec<f64>, String> {
        match v {
            Given::Numbers(n) => Ok(n.clone()),
            Given::Bool(b) => Ok(vec![*b as u8 as f64]),
            Given::Bad(why) => Err(why.clone()),
        }
    };
    let truth = |v: &Given| -> Result<bool, String> {
        match v {
            Given::Bool(b) => Ok(*b),
            Given::Numbers(n) if n.len() == 1 => Ok(n[0] != 0.0),
            Given::Numbers(_) => Err("a bool register takes one value".into()),
            Given::Bad(why) => Err(why.clone()),
        }
    };
    if let Some(n) = register(name, "c") {
        c.float.insert(n, four(&numbers(value)?, 0));
    } else if let Some(n) = register(name, "i") {
        let v = numbers(value)?;
        c.int.insert(
            n,
            std::array::from_fn(|i| v.get(i).copied().unwrap_or(0.0) as i32),
        );
    } else if let Some(n) = register(name, "b") {
        c.bool.insert(n, truth(value)?);
    } else if let Some(n) = register(name, "v") {
        inputs
            .attributes
            .by_register
            .insert(n, four(&numbers(value)?, 0));
    } else if name.eq_ignore_ascii_case("vpos") {
        let v = numbers(value)?;
        inputs.attributes.vpos = [
            v.first().copied().unwrap_or(0.0) as f32,
            v.get(1).copied().unwrap_or(0.0) as f32,
        ];
    } else if name.eq_ignore_ascii_case("vface") {
        inputs.attributes.vface = numbers(value)?.first().copied().unwrap_or(0.0) as f32;
    } else if let Some((set, index, count)) = program.constant(name) {
        let v = numbers(value)?;
        for r in 0..count.max(1) {
            let at = r as usize * 4;
            if r > 0 && at >= v.len() {
                break;
            }
            match set {
                RegisterSet::FLOAT4 => {
                    c.float.insert(index + r, four(&v, at));
                }
                RegisterSet::INT4 => {
                    // As D3DX's constant table sets an int: the lanes not given are
                    // (…, 0, 1, 0), a loop counter's start and step (Wine's d3dx9
                    // `set`, D3DXRS_INT4).
                    let unset = [0, 0, 1, 0];
                    c.int.insert(
                        index + r,
                        std::array::from_fn(|i| v.get(at + i).map_or(unset[i], |&x| x as i32)),
                    );
                }
                RegisterSet::BOOL => {
                    c.bool
                        .insert(index + r, v.get(r as usize).copied().unwrap_or(0.0) != 0.0);
                }
                _ => {
                    return Err(format!(
                        "'{name}' is a sampler; give it a texture in --inputs"
                    ))
                }
            }
        }
    } else if let Some(s) = Semantic::parse(name) {
        inputs
            .attributes
            .by_semantic
            .insert(s, four(&numbers(value)?, 0));
    } else {
        return Err(format!(
            "'{name}' is no register (c#, i#, b#, v#, vPos, vFace), semantic or constant of the shader"
        ));
    }
    Ok(())
}

fn apply_file(program: &Program, inputs: &mut Inputs, json: &Value) -> Result<(), String> {
    let Value::Object(top) = json else {
        return Err("expected a JSON object".into());
    };
    for (key, value) in top {
        match key.as_str() {
            "constants" | "inputs" => {
                let Value::Object(m) = value else {
                    return Err(format!("'{key}' must be an object"));
                };
                for (name, v) in m {
                    set_value(program, inputs, name, &from_json(v))
                        .map_err(|e| format!("{key}.{name}: {e}"))?;
                }
            }
            "vpos" | "vface" => set_value(program, inputs, key, &from_json(value))
                .map_err(|e| format!("{key}: {e}"))?,
            "textures" => {
                let Value::Object(m) = value else {
                    return Err("'textures' must be an object".into());
                };
                for (name, t) in m {
                    let stage = register(name, "s")
                        .or_else(|| {
                            program
                                .constant(name)
                                .filter(|c| c.0 == RegisterSet::SAMPLER)
                                .map(|c| c.1)
                        })
                        .ok_or_else(|| {
                            format!("textures.{name}: not a sampler register (s#) or sampler name")
                        })?;
                    let sampler = texture(t).map_err(|e| format!("textures.{name}: {e}"))?;
                    inputs.bindings.samplers.insert(stage, sampler);
                }
            }
            other => {
                return Err(format!(
                    "unknown member '{other}' (constants, inputs, textures, vpos, vface)"
                ))
            }
        }
    }
    Ok(())
}

fn texture(t: &Value) -> Result<Sampler, String> {
    let get = |k: &str| {
        t.get(k)
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("'{k}' must be a number"))
    };
    let (w, h) = (get("width")? as u32, get("height")? as u32);
    let texels: Vec<[f32; 4]> = t
        .get("texels")
        .and_then(Value::as_array)
        .ok_or("'texels' must be an array of [r, g, b, a]")?
        .iter()
        .map(|x| match from_json(x) {
            Given::Numbers(n) => Ok(four(&n, 0)),
            _ => Err(format!("texel {x} is not [r, g, b, a]")),
        })
        .collect::<Result<_, _>>()?;
    let n = texels.len();
    let texture = Texture::two_d(w, h, texels).ok_or_else(|| format!("{n} texels for {w}×{h}"))?;
    let mut s = Sampler::new(texture);
    let mut modes = BTreeMap::new();
    modes.insert("wrap", Address::Wrap);
    modes.insert("mirror", Address::Mirror);
    modes.insert("clamp", Address::Clamp);
    modes.insert("border", Address::Border);
    modes.insert("mirror_once", Address::MirrorOnce);
    if let Some(a) = t.get("address") {
        let a = a
            .as_str()
            .and_then(|a| modes.get(a))
            .ok_or("'address' is wrap, mirror, clamp, border or mirror_once")?;
        s.address = [*a; 3];
    }
    if let Some(f) = t.get("filter") {
        let f = match f.as_str() {
            Some("point") => Filter::Point,
            Some("linear") => Filter::Linear,
            _ => return Err("'filter' is point or linear".into()),
        };
        s.min_filter = f;
        s.mag_filter = f;
    }
    if let Some(b) = t.get("border") {
        match from_json(b) {
            Given::Numbers(n) => s.border = four(&n, 0),
            _ => return Err("'border' must be [r, g, b, a]".into()),
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_numbers_or_booleans() {
        assert_eq!(
            parse_values("1, 2.5,-3"),
            Given::Numbers(vec![1.0, 2.5, -3.0])
        );
        assert_eq!(parse_values("true"), Given::Bool(true));
        assert!(matches!(parse_values("1,x"), Given::Bad(_)));
        assert_eq!(register("c12", "c"), Some(12));
        assert_eq!(register("color", "c"), None);
    }
}
