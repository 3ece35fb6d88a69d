//! Rewrites of the finished instruction list: a value computed into a temporary only to
//! be copied to an output register is computed into the output itself, where the model
//! lets arithmetic write outputs (vertex shaders, pixel shader 3.0), as Microsoft's
//! compiler writes it.

use super::lower::Profile;

/// One source operand: `-r0_abs.xyzw`.
#[derive(Debug, Clone, PartialEq)]
struct Source {
    neg: bool,
    reg: String,
    abs: bool,
    swz: [u8; 4],
}

/// One instruction as the code generator writes it: `op[_sat] dst[.mask], src, ...`.
#[derive(Debug, Clone, PartialEq)]
struct Ins {
    op: String,
    sat: bool,
    dst: String,
    mask: [bool; 4],
    srcs: Vec<Source>,
}

const LANES: &[u8; 4] = b"xyzw";

fn lane(c: u8) -> Option<u8> {
    LANES.iter().position(|&l| l == c).map(|l| l as u8)
}

fn parse_source(text: &str) -> Option<Source> {
    let (neg, text) = match text.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, text),
    };
    let (reg, swz_text) = text.split_once('.').unwrap_or((text, "xyzw"));
    let (reg, abs) = match reg.strip_suffix("_abs") {
        Some(r) => (r, true),
        None => (reg, false),
    };
    let letters: Vec<u8> = swz_text.bytes().map(lane).collect::<Option<_>>()?;
    if letters.is_empty() || letters.len() > 4 {
        return None;
    }
    let mut swz = [*letters.last().unwrap(); 4];
    swz[..letters.len()].copy_from_slice(&letters);
    Some(Source {
        neg,
        reg: reg.to_string(),
        abs,
        swz,
    })
}

fn parse(line: &str) -> Option<Ins> {
    let (op, rest) = line.split_once(' ')?;
    if op == "texkill" {
        return Some(Ins {
            op: op.to_string(),
            sat: false,
            dst: String::new(),
            mask: [false; 4],
            srcs: vec![parse_source(rest)?],
        });
    }
    let (op, sat) = match op.strip_suffix("_sat") {
        Some(o) => (o, true),
        None => (op, false),
    };
    let mut parts = rest.split(", ");
    let dst = parts.next()?;
    let (dst, mask) = match dst.split_once('.') {
        Some((reg, m)) => {
            let mut mask = [false; 4];
            for c in m.bytes() {
                mask[usize::from(lane(c)?)] = true;
            }
            (reg, mask)
        }
        None => (dst, [true; 4]),
    };
    let srcs = parts.map(parse_source).collect::<Option<Vec<_>>>()?;
    Some(Ins {
        op: op.to_string(),
        sat,
        dst: dst.to_string(),
        mask,
        srcs,
    })
}

fn swizzle_text(swz: [u8; 4]) -> String {
    let mut n = 4;
    while n > 1 && swz[n - 1] == swz[n - 2] {
        n -= 1;
    }
    if swz == [0, 1, 2, 3] {
        return String::new();
    }
    let s: String = swz[..n]
        .iter()
        .map(|&l| LANES[usize::from(l)] as char)
        .collect();
    format!(".{s}")
}

fn print(ins: &Ins) -> String {
    let mask = if ins.mask == [true; 4] {
        String::new()
    } else {
        let m: String = (0..4)
            .filter(|&l| ins.mask[l])
            .map(|l| LANES[l] as char)
            .collect();
        format!(".{m}")
    };
    let srcs: Vec<String> = ins
        .srcs
        .iter()
        .map(|s| {
            format!(
                "{}{}{}{}",
                if s.neg { "-" } else { "" },
                s.reg,
                if s.abs { "_abs" } else { "" },
                if s.reg.starts_with('s') {
                    String::new()
                } else {
                    swizzle_text(s.swz)
                }
            )
        })
        .collect();
    if ins.dst.is_empty() {
        return format!("{} {}", ins.op, srcs.join(", "));
    }
    format!(
        "{}{} {}{mask}, {}",
        ins.op,
        if ins.sat { "_sat" } else { "" },
        ins.dst,
        srcs.join(", ")
    )
}

/// Lane `l` of the result reads lane `swz[l]` of each source.
fn componentwise(op: &str) -> bool {
    matches!(
        op,
        "mov"
            | "add"
            | "mul"
            | "mad"
            | "min"
            | "max"
            | "cmp"
            | "slt"
            | "sge"
            | "lrp"
            | "frc"
            | "abs"
            | "dsx"
            | "dsy"
    )
}

/// One value, written to every lane of the mask.
fn replicating(op: &str) -> bool {
    matches!(
        op,
        "rcp" | "rsq" | "exp" | "log" | "pow" | "dp3" | "dp4" | "dp2add"
    )
}

/// Instructions of straight-line code whose reads [`reads`] knows.
fn known(op: &str) -> bool {
    componentwise(op)
        || replicating(op)
        || matches!(
            op,
            "texld" | "texldp" | "texldb" | "texldl" | "texldd" | "texkill" | "nrm" | "sincos"
        )
}

/// The lanes of `reg` the instruction reads.
fn reads(ins: &Ins, reg: &str) -> [bool; 4] {
    let mut lanes = [false; 4];
    let cw = componentwise(&ins.op);
    for (i, s) in ins.srcs.iter().enumerate() {
        if s.reg != reg {
            continue;
        }
        let read: Vec<usize> = match ins.op.as_str() {
            _ if cw => (0..4).filter(|&l| ins.mask[l]).collect(),
            "dp3" => vec![0, 1, 2],
            "dp2add" if i < 2 => vec![0, 1],
            "dp4" | "texld" | "texldp" | "texldb" | "texldl" | "texldd" | "texkill" => {
                vec![0, 1, 2, 3]
            }
            "nrm" => vec![0, 1, 2],
            // Scalar operands: the one lane they replicate.
            _ => vec![0],
        };
        for l in read {
            lanes[usize::from(s.swz[l])] = true;
        }
    }
    lanes
}

/// Registers arithmetic may write in this model besides temporaries.
fn arithmetic_output(profile: Profile, reg: &str) -> bool {
    if profile.pixel {
        return profile.major >= 3 && reg.starts_with("oC");
    }
    // Fog and point size of vs_2_x are written whole from one lane, by `mov`.
    reg.starts_with('o') && !matches!(reg, "oFog" | "oPts")
}

/// Compute into outputs directly: `add r0, c0, c1` + `mov oC0, r0` is `add oC0, c0, c1`
/// when nothing else reads those lanes of `r0`.
pub fn outputs(code: &mut Vec<String>, profile: Profile) {
    let Some(list) = code.iter().map(|l| parse(l)).collect::<Option<Vec<Ins>>>() else {
        return;
    };
    // Flow control would make "the last instruction that wrote it" a question of paths.
    if !list.iter().all(|ins| known(&ins.op)) {
        return;
    }
    let mut list: Vec<Option<Ins>> = list.into_iter().map(Some).collect();
    let mut i = 0;
    while i < list.len() {
        if let Some(new) = retarget(&list, i, profile) {
            for (j, ins) in new {
                list[j] = Some(ins);
            }
            list[i] = None;
            code[i].clear();
        }
        i += 1;
    }
    for (line, ins) in code.iter_mut().zip(&list) {
        if let Some(ins) = ins {
            if !line.is_empty() {
                *line = print(ins);
            }
        }
    }
    code.retain(|l| !l.is_empty());
}

/// The instructions that become writes of output `list[i]` copies, if they all can.
fn retarget(list: &[Option<Ins>], i: usize, profile: Profile) -> Option<Vec<(usize, Ins)>> {
    let mov = list[i].as_ref()?;
    let src = mov.srcs.first()?;
    if mov.op != "mov"
        || src.neg
        || src.abs
        || !src.reg.starts_with('r')
        || !arithmetic_output(profile, &mov.dst)
    {
        return None;
    }
    let out_lanes: Vec<usize> = (0..4).filter(|&l| mov.mask[l]).collect();
    let mut wanted = [false; 4];
    for &l in &out_lanes {
        wanted[usize::from(src.swz[l])] = true;
    }
    // Each lane read: the last instruction before the copy that wrote it.
    let mut writers: Vec<usize> = Vec::new();
    let mut found = [false; 4];
    for j in (0..i).rev() {
        let Some(ins) = list[j].as_ref() else {
            continue;
        };
        if ins.dst == src.reg {
            let mut mine = false;
            for l in 0..4 {
                if ins.mask[l] && wanted[l] && !found[l] {
                    found[l] = true;
                    mine = true;
                }
            }
            if mine {
                writers.push(j);
            }
        }
        if found.iter().zip(&wanted).all(|(f, w)| f == w) {
            break;
        }
    }
    if found != wanted {
        return None;
    }
    let mut new = Vec::new();
    for &j in &writers {
        let ins = list[j].as_ref()?;
        // Every lane it writes is the copy's alone: no one else reads it, in between or
        // after, and nothing in between writes it again.
        if (0..4).any(|l| ins.mask[l] && !wanted[l]) {
            return None;
        }
        for (k, other) in list.iter().enumerate().skip(j + 1) {
            let Some(other) = other.as_ref().filter(|_| k != i) else {
                continue;
            };
            let r = reads(other, &src.reg);
            if (0..4).any(|l| ins.mask[l] && r[l]) {
                return None;
            }
            if k < i && other.dst == src.reg && (0..4).any(|l| ins.mask[l] && other.mask[l]) {
                return None;
            }
            if k > i && other.dst == src.reg {
                // Written again: what follows reads the new value.
                if (0..4).all(|l| !ins.mask[l] || other.mask[l]) {
                    break;
                }
            }
        }
        // The output lanes this instruction's lanes go to.
        let mut mask = [false; 4];
        for &l in &out_lanes {
            if ins.mask[usize::from(src.swz[l])] {
                mask[l] = true;
            }
        }
        let mut rewritten = ins.clone();
        if componentwise(&ins.op) {
            for s in &mut rewritten.srcs {
                let old = s.swz;
                let mut swz = [0u8; 4];
                let mut last = None;
                for l in 0..4 {
                    if mask[l] {
                        swz[l] = old[usize::from(src.swz[l])];
                        last.get_or_insert(swz[l]);
                    }
                }
                // Lanes not written repeat the one before, as fxc prints them.
                let mut fill = last.unwrap_or(0);
                for l in 0..4 {
                    if mask[l] {
                        fill = swz[l];
                    } else {
                        swz[l] = fill;
                    }
                }
                s.swz = swz;
            }
        } else if !replicating(&ins.op) {
            return None;
        }
        rewritten.dst = mov.dst.clone();
        rewritten.mask = mask;
        rewritten.sat |= mov.sat;
        new.push((j, rewritten));
    }
    Some(new)
}
