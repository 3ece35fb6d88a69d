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
            "texld"
                | "texldp"
                | "texldb"
                | "texldl"
                | "texldd"
                | "texkill"
                | "nrm"
                | "sincos"
                | "lit"
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
            // `lit` uses .x, .y and .w; its .z is taken as read, as fxc fills it.
            "dp4" | "texld" | "texldp" | "texldb" | "texldl" | "texldd" | "texkill" | "lit" => {
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
/// when nothing else reads those lanes of `r0`. A copy after an `endif` of what both arms
/// computed last is computed by each arm (`texld oC0, …` / `mov oC0, c0`, as fxc writes a
/// branch's result).
pub fn copies(code: &mut Vec<String>, profile: Profile) {
    // A rewrite can make another possible (a copy into an arm, then the arm's own), a
    // few times over at most.
    for _ in 0..4 {
        if !copies_once(code, profile) {
            break;
        }
    }
}

fn copies_once(code: &mut Vec<String>, profile: Profile) -> bool {
    let Some(list) = code
        .iter()
        .map(|l| parse_line(l))
        .collect::<Option<Vec<Ins>>>()
    else {
        return false;
    };
    if !list.iter().all(|ins| known(&ins.op) || is_flow(&ins.op)) {
        return false;
    }
    // The `rep` each `endrep` closes, and the `if` and `else` of each `endif`.
    let mut starts = vec![usize::MAX; list.len()];
    let mut elses = vec![usize::MAX; list.len()];
    let mut open = Vec::new();
    let mut open_else: Vec<usize> = Vec::new();
    for (k, ins) in list.iter().enumerate() {
        match ins.op.as_str() {
            "rep" | "loop" => open.push(k),
            op if is_if(op) => {
                open.push(k);
                open_else.push(usize::MAX);
            }
            "else" => {
                if let Some(e) = open_else.last_mut() {
                    *e = k;
                }
            }
            "endrep" | "endloop" => starts[k] = open.pop().unwrap_or(0),
            "endif" => {
                starts[k] = open.pop().unwrap_or(0);
                elses[k] = open_else.pop().unwrap_or(usize::MAX);
            }
            _ => {}
        }
    }
    let flow = Flow {
        starts: &starts,
        elses: &elses,
    };
    // A copy of lanes onto themselves does nothing.
    let mut any = false;
    for (line, ins) in code.iter_mut().zip(&list) {
        let idle = ins.op == "mov"
            && !ins.sat
            && ins.srcs.first().is_some_and(|s| {
                !s.neg
                    && !s.abs
                    && s.reg == ins.dst
                    && (0..4).all(|l| !ins.mask[l] || usize::from(s.swz[l]) == l)
            });
        if idle {
            line.clear();
            any = true;
        }
    }
    if any {
        code.retain(|l| !l.is_empty());
        return true;
    }
    let mut list: Vec<Option<Ins>> = list.into_iter().map(Some).collect();
    let mut changed = vec![false; list.len()];
    let mut i = 0;
    while i < list.len() {
        if let Some(new) = retarget(&list, &flow, i, profile) {
            for (j, ins) in new {
                list[j] = Some(ins);
                changed[j] = true;
            }
            list[i] = None;
            code[i].clear();
            any = true;
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
    any
}

/// Where each `endrep`/`endloop`/`endif`'s block starts, and each `endif`'s `else`.
struct Flow<'a> {
    starts: &'a [usize],
    elses: &'a [usize],
}

/// The start and end of a loop: the code between runs again after its end.
fn is_loop(op: &str) -> bool {
    matches!(op, "rep" | "endrep" | "loop" | "endloop")
}

/// `if b#` or `if_comp`.
fn is_if(op: &str) -> bool {
    op == "if" || op.starts_with("if_")
}

/// `break` or `break_comp`: leaves the loop around it.
fn is_break(op: &str) -> bool {
    op == "break" || op.starts_with("break_")
}

/// An instruction that starts, divides or ends a block, or leaves one.
fn is_flow(op: &str) -> bool {
    is_loop(op) || is_if(op) || is_break(op) || op == "else" || op == "endif"
}

/// An instruction, or a block's start, middle or end (with the operands an `if` tests:
/// a loop's count is an integer register, which nothing here writes).
fn parse_line(line: &str) -> Option<Ins> {
    let op = line.split(' ').next().unwrap_or(line);
    if is_flow(op) {
        let srcs = if is_if(op) || is_break(op) && op != "break" {
            let rest = line[op.len()..].trim();
            rest.split(", ")
                .map(parse_source)
                .collect::<Option<Vec<_>>>()?
        } else {
            Vec::new()
        };
        return Some(Ins {
            op: op.to_string(),
            sat: false,
            dst: String::new(),
            mask: [false; 4],
            srcs,
        });
    }
    parse(line)
}

/// The instructions that last write lanes `wanted` of `reg` before `list[i]`, in the
/// straight code before it: each lane's last writer. Where that code begins at an
/// `endif` of a branch with two arms, each arm's own straight code at its end is looked
/// into for the lanes not found after it; both arms must write them.
fn writers_before(
    list: &[Option<Ins>],
    flow: &Flow,
    i: usize,
    reg: &str,
    wanted: [bool; 4],
) -> Option<Vec<usize>> {
    let mut writers: Vec<usize> = Vec::new();
    let mut found = [false; 4];
    let mut j = i;
    while j > 0 {
        j -= 1;
        let Some(ins) = list[j].as_ref() else {
            continue;
        };
        if ins.op == "endif" && flow.elses[j] != usize::MAX {
            let rest: [bool; 4] = std::array::from_fn(|l| wanted[l] && !found[l]);
            let (start, middle) = (flow.starts[j], flow.elses[j]);
            let mut arms = writers_in(list, flow, start + 1, middle, reg, rest)?;
            arms.extend(writers_in(list, flow, middle + 1, j, reg, rest)?);
            writers.extend(arms);
            return Some(writers);
        }
        if is_flow(&ins.op) {
            break;
        }
        if ins.dst == reg {
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
        if found == wanted {
            return Some(writers);
        }
    }
    None
}

/// [`writers_before`] for the code `list[from..to]` (an arm): every lane must be found.
fn writers_in(
    list: &[Option<Ins>],
    flow: &Flow,
    from: usize,
    to: usize,
    reg: &str,
    wanted: [bool; 4],
) -> Option<Vec<usize>> {
    let w = writers_before(&list[..to], flow, to, reg, wanted)?;
    w.iter().all(|&k| k >= from).then_some(w)
}

/// The instructions that become writes of output `list[i]` copies, if they all can.
fn retarget(
    list: &[Option<Ins>],
    flow: &Flow,
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
    let writers = writers_before(list, flow, i, &src.reg, wanted)?;
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
        if read_after(list, flow, j, i, &src.reg, mov) {
            return None;
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
            // Any other instruction writes its lanes as they are (`texld oC0, …`).
            let in_place = (0..4).all(|l| mask[l] == ins.mask[l])
                && out_lanes.iter().all(|&l| usize::from(src.swz[l]) == l);
            if !in_place {
                return None;
            }
        }
        // vs_1_1's `frc` writes .x and .y only.
        if ins.op == "frc" && profile.is_vs_1_1() && (mask[2] || mask[3]) {
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

/// A block the scan of [`read_after`] is in: a loop, an arm of a branch entered on the way
/// (with the lanes alive as it began, and at the end of its `if` arm once in the `else`
/// arm), or the other arm of the branch the writer is in, which runs on other paths.
enum Block {
    Loop {
        entry: [bool; 4],
    },
    If {
        entry: [bool; 4],
        then_end: Option<[bool; 4]>,
    },
    Other {
        resume: [bool; 4],
    },
}

fn or(a: [bool; 4], b: [bool; 4]) -> [bool; 4] {
    std::array::from_fn(|l| a[l] || b[l])
}

/// Whether what `list[j]` writes to `reg` is read by anything but the copy `list[i]` on
/// some path after it, before it is written again. A lane is written again on every path
/// where straight code writes it, or both arms of a branch do; a loop may run no times;
/// at the end of a loop around `j`, the loop's code before `j` runs again and must not
/// read the lanes either.
fn read_after(list: &[Option<Ins>], flow: &Flow, j: usize, i: usize, reg: &str, mov: &Ins) -> bool {
    let Some(ins) = list[j].as_ref() else {
        return true;
    };
    let mut alive = ins.mask;
    let mut blocks: Vec<Block> = Vec::new();
    for (k, other) in list.iter().enumerate().skip(j + 1) {
        let Some(other) = other.as_ref() else {
            continue;
        };
        match other.op.as_str() {
            "rep" | "loop" => {
                blocks.push(Block::Loop { entry: alive });
                continue;
            }
            op if is_if(op) => {
                blocks.push(Block::If {
                    entry: alive,
                    then_end: None,
                });
                continue;
            }
            "else" => {
                match blocks.last_mut() {
                    Some(Block::If { entry, then_end }) => {
                        *then_end = Some(alive);
                        alive = *entry;
                    }
                    Some(_) => {}
                    None => blocks.push(Block::Other { resume: alive }),
                }
                continue;
            }
            "endrep" | "endloop" => {
                match blocks.pop() {
                    Some(Block::Loop { entry }) => alive = or(alive, entry),
                    Some(b) => blocks.push(b),
                    None => {
                        if read_before_written(&list[flow.starts[k] + 1..j], reg, alive) {
                            return true;
                        }
                    }
                }
                continue;
            }
            "endif" => {
                match blocks.pop() {
                    Some(Block::If { entry, then_end }) => {
                        alive = or(alive, then_end.unwrap_or(entry));
                    }
                    Some(Block::Other { resume }) => alive = resume,
                    Some(b) => blocks.push(b),
                    None => {}
                }
                continue;
            }
            _ => {}
        }
        if blocks.iter().any(|b| matches!(b, Block::Other { .. })) {
            continue;
        }
        if k == i {
            if mov.dst == reg {
                // The copy writes over what it read: readers after it read the copy.
                (0..4).for_each(|l| alive[l] &= !mov.mask[l]);
            }
            continue;
        }
        let r = reads(other, reg);
        if (0..4).any(|l| alive[l] && r[l]) {
            return true;
        }
        if other.dst == reg && (0..4).any(|l| alive[l] && other.mask[l]) {
            if k < i && blocks.is_empty() {
                return true;
            }
            // Written again: what follows on this path reads the new value.
            (0..4).for_each(|l| alive[l] &= !other.mask[l]);
        }
        if alive == [false; 4] && blocks.is_empty() {
            break;
        }
    }
    false
}

/// Whether straight code (with loops and branches inside it) reads lanes `lanes` of `reg`
/// before it writes them: a write inside a loop or an arm may not run, so it does not
/// count.
fn read_before_written(code: &[Option<Ins>], reg: &str, mut lanes: [bool; 4]) -> bool {
    let mut depth = 0usize;
    for ins in code.iter().flatten() {
        match ins.op.as_str() {
            "rep" | "loop" => depth += 1,
            op if is_if(op) => depth += 1,
            "endrep" | "endloop" | "endif" => depth = depth.saturating_sub(1),
            "else" => {}
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

    #[test]
    fn a_copy_after_endif_is_computed_by_both_arms() {
        let code = [
            "if_gt v0.x, c0.x",
            "texld r1, v0, s0",
            "mov r0, r1",
            "else",
            "mul r0, v0, c1",
            "endif",
            "mov oC0, r0",
        ];
        assert_eq!(
            run(&code, "ps_3_0"),
            [
                "if_gt v0.x, c0.x",
                "texld oC0, v0, s0",
                "else",
                "mul oC0, v0, c1",
                "endif"
            ]
        );
        // Without an else, the path around the arm still needs the old value.
        let code = [
            "mov r0, c2",
            "if b0",
            "mul r0, v0, c1",
            "endif",
            "mov oC0, r0",
        ];
        assert_eq!(run(&code, "ps_3_0"), code);
    }

    #[test]
    fn a_write_in_one_arm_leaves_the_other_arms_reads_alone() {
        // r1 is read after the branch on the path through the else arm only, which the
        // then arm's copy does not reach; both arms write r2 before it is read again.
        let code = [
            "if b0",
            "add r1, v0, c0",
            "mov r2, r1",
            "else",
            "mov r2, r1",
            "endif",
            "mov oC0, r2",
        ];
        let out = run(&code, "ps_3_0");
        assert_eq!(
            out,
            ["if b0", "add oC0, v0, c0", "else", "mov oC0, r1", "endif"]
        );
        // Read after the branch, on every path: the copy stays.
        let code = [
            "if b0",
            "add r1, v0, c0",
            "mov r2, r1",
            "else",
            "mov r2, c1",
            "endif",
            "add oC0, r2, r1",
        ];
        assert_eq!(run(&code, "ps_3_0"), code);
    }
}
