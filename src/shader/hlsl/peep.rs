//! Rewrites of the finished instruction list: a value computed into a temporary only to
//! be copied (or saturated) into another register is computed there itself: into an
//! output, where the model lets arithmetic write outputs (vertex shaders, pixel shader
//! 3.0), or into the other temporary, with the copy's `_sat` on the instruction, as
//! Microsoft's compiler writes it (`dp3_sat r0.x, …`, not `dp3` and `mov_sat`).

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
    // `c4[a0.x]`: the register with its address, then the modifiers and swizzle.
    let (reg, rest) = match text.find(']') {
        Some(end) => (&text[..=end], &text[end + 1..]),
        None => match text.find(['.', '_']) {
            Some(at) => (&text[..at], &text[at..]),
            None => (text, ""),
        },
    };
    let (abs, rest) = match rest.strip_prefix("_abs") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let swz_text = match rest.strip_prefix('.') {
        Some(s) => s,
        None if rest.is_empty() => "xyzw",
        None => return None,
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
            | "mova"
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

/// Compute into the copy's destination directly: `add r0, c0, c1` + `mov oC0, r0` is
/// `add oC0, c0, c1`, and `dp3 r0.x, …` + `mov_sat r1.xy, r0.x` is `dp3_sat r1.xy, …`,
/// when nothing else reads those lanes of `r0`.
pub fn copies(code: &mut Vec<String>, profile: Profile) {
    let Some(list) = code
        .iter()
        .map(|l| parse_line(l))
        .collect::<Option<Vec<Ins>>>()
    else {
        return;
    };
    if !list.iter().all(|ins| known(&ins.op) || is_loop(&ins.op)) {
        return;
    }
    // The `rep` each `endrep` closes.
    let mut starts = vec![usize::MAX; list.len()];
    let mut open = Vec::new();
    for (k, ins) in list.iter().enumerate() {
        match ins.op.as_str() {
            "rep" | "loop" => open.push(k),
            "endrep" | "endloop" => starts[k] = open.pop().unwrap_or(0),
            _ => {}
        }
    }
    let mut list: Vec<Option<Ins>> = list.into_iter().map(Some).collect();
    let mut changed = vec![false; list.len()];
    let mut i = 0;
    while i < list.len() {
        if let Some(new) = retarget(&list, &starts, i, profile) {
            for (j, ins) in new {
                list[j] = Some(ins);
                changed[j] = true;
            }
            list[i] = None;
            code[i].clear();
        }
        i += 1;
    }
    for ((line, ins), changed) in code.iter_mut().zip(&list).zip(changed) {
        if let (Some(ins), true) = (ins, changed) {
            if !line.is_empty() {
                *line = print(ins);
            }
        }
    }
    code.retain(|l| !l.is_empty());
}

/// The start and end of a loop: the code between runs again after its end.
fn is_loop(op: &str) -> bool {
    matches!(op, "rep" | "endrep" | "loop" | "endloop")
}

/// An instruction, or a loop's start or end (with no operands that matter here: its
/// count is an integer register).
fn parse_line(line: &str) -> Option<Ins> {
    let op = line.split(' ').next().unwrap_or(line);
    if is_loop(op) {
        return Some(Ins {
            op: op.to_string(),
            sat: false,
            dst: String::new(),
            mask: [false; 4],
            srcs: Vec::new(),
        });
    }
    parse(line)
}

/// The instructions that become writes of output `list[i]` copies, if they all can.
fn retarget(
    list: &[Option<Ins>],
    starts: &[usize],
    i: usize,
    profile: Profile,
) -> Option<Vec<(usize, Ins)>> {
    let mov = list[i].as_ref()?;
    let src = mov.srcs.first()?;
    let to_temp = mov.dst.starts_with('r');
    if mov.op != "mov"
        || src.neg
        || src.abs
        || !src.reg.starts_with('r')
        || !(to_temp || arithmetic_output(profile, &mov.dst))
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
        // Only writers in the copy's own stretch of straight code.
        if is_loop(&ins.op) {
            break;
        }
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
    // A temporary written earlier than the copy wrote it: nothing in between may read
    // or write the lanes it takes, and only the first of the writers may read them (it
    // reads them before any is written).
    if to_temp {
        let first = *writers.iter().min()?;
        // The copy's lanes each writer would write.
        let lanes_of = |w: &Ins| -> [bool; 4] {
            let mut m = [false; 4];
            for &l in &out_lanes {
                m[l] = w.mask[usize::from(src.swz[l])];
            }
            m
        };
        let mut written = [false; 4];
        for (k, other) in list.iter().enumerate().take(i).skip(first) {
            let Some(other) = other.as_ref() else {
                continue;
            };
            let r = reads(other, &mov.dst);
            let touches = (0..4).any(|l| {
                mov.mask[l]
                    && (r[l] && written[l]
                        || other.dst == mov.dst && other.mask[l] && !writers.contains(&k))
            });
            if touches {
                return None;
            }
            if writers.contains(&k) {
                let m = lanes_of(other);
                (0..4).for_each(|l| written[l] |= m[l]);
            }
        }
    }
    let mut new = Vec::new();
    for &j in &writers {
        let ins = list[j].as_ref()?;
        // Every lane it writes is the copy's alone: no one else reads it, in between or
        // after, and nothing in between writes it again.
        if (0..4).any(|l| ins.mask[l] && !wanted[l]) {
            return None;
        }
        // Its lanes still holding its value as the list goes on. A write inside a
        // loop entered on the way may never run; at the end of a loop around `j`, the
        // loop's code before `j` runs again and must not read them either.
        let mut alive = ins.mask;
        let mut depth = 0usize;
        for (k, other) in list.iter().enumerate().skip(j + 1) {
            let Some(other) = other.as_ref() else {
                continue;
            };
            match other.op.as_str() {
                "rep" | "loop" => {
                    depth += 1;
                    continue;
                }
                "endrep" | "endloop" if depth > 0 => {
                    depth -= 1;
                    continue;
                }
                "endrep" | "endloop" => {
                    if read_before_written(&list[starts[k] + 1..j], &src.reg, alive) {
                        return None;
                    }
                    continue;
                }
                _ => {}
            }
            if k == i {
                if mov.dst == src.reg {
                    // The copy writes over what it read: readers after it read the copy.
                    (0..4).for_each(|l| alive[l] &= !mov.mask[l]);
                }
                continue;
            }
            let r = reads(other, &src.reg);
            if (0..4).any(|l| alive[l] && r[l]) {
                return None;
            }
            if other.dst == src.reg && (0..4).any(|l| alive[l] && other.mask[l]) {
                if k < i {
                    return None;
                }
                if depth > 0 {
                    continue;
                }
                // Written again: what follows reads the new value.
                (0..4).for_each(|l| alive[l] &= !other.mask[l]);
            }
            if alive == [false; 4] {
                break;
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
                let read: Vec<u8> = (0..4).filter(|&l| mask[usize::from(l)]).collect();
                if !super::codegen::swizzle_ok(profile, swz, &read) {
                    return None;
                }
            }
        } else if !replicating(&ins.op) {
            return None;
        }
        // Vertex shaders before 3.0 have no `_sat`: there the copy is `max`/`min`.
        if mov.sat && !ins.sat && !profile.pixel && profile.major < 3 {
            return None;
        }
        rewritten.dst = mov.dst.clone();
        rewritten.mask = mask;
        rewritten.sat |= mov.sat;
        new.push((j, rewritten));
    }
    Some(new)
}

/// Whether straight code (with loops inside it) reads lanes `lanes` of `reg` before it
/// writes them: a write inside a loop may not run, so it does not count.
fn read_before_written(code: &[Option<Ins>], reg: &str, mut lanes: [bool; 4]) -> bool {
    let mut depth = 0usize;
    for ins in code.iter().flatten() {
        match ins.op.as_str() {
            "rep" | "loop" => depth += 1,
            "endrep" | "endloop" => depth = depth.saturating_sub(1),
            _ => {
                let r = reads(ins, reg);
                if (0..4).any(|l| lanes[l] && r[l]) {
                    return true;
                }
                if depth == 0 && ins.dst == reg {
                    (0..4).for_each(|l| lanes[l] &= !ins.mask[l]);
                }
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(code: &[&str], profile: &str) -> Vec<String> {
        let mut code: Vec<String> = code.iter().map(|l| l.to_string()).collect();
        copies(&mut code, Profile::parse(profile).unwrap());
        code
    }

    #[test]
    fn a_saturating_copy_becomes_the_instructions_modifier() {
        let code = [
            "dp3 r1.x, r2, c0",
            "mov_sat r1.xyz, r1.x",
            "mul r0.xyz, r1, c1",
        ];
        assert_eq!(
            run(&code, "ps_2_0"),
            ["dp3_sat r1.xyz, r2, c0", "mul r0.xyz, r1, c1"]
        );
        let code = [
            "mad r2.w, r0.x, c1.x, c2.x",
            "mov_sat r3.w, r2.w",
            "add oC0, r3, c0",
        ];
        assert_eq!(
            run(&code, "ps_3_0"),
            ["mad_sat r3.w, r0.x, c1.x, c2.x", "add oC0, r3, c0"]
        );
    }

    #[test]
    fn a_copy_stays_where_its_destination_is_read_or_written_in_between() {
        // r3.w is read between the computation and the copy: it must keep its old value.
        let code = [
            "add r2.w, r0.x, c0.x",
            "mul r4, r3.w, c1",
            "mov r3.w, r2.w",
            "add r0, r3, r4",
        ];
        assert_eq!(run(&code, "ps_2_x"), code);
        // The computed value is read again after the copy.
        let code = ["add r2.w, r0.x, c0.x", "mov r3.w, r2.w", "add r0, r3, r2.w"];
        assert_eq!(run(&code, "ps_2_x"), code);
        // vs_2_0 has no _sat.
        let code = [
            "dp3 r1.x, r2, c0",
            "mov_sat r1.xyz, r1.x",
            "mul r0.xyz, r1, c1",
        ];
        assert_eq!(run(&code, "vs_2_0"), code);
    }
}
