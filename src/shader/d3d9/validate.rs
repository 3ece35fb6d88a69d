//! Per-shader-model validation of D3D9 bytecode: what D3DX's assembler and the runtime
//! refuse for a model (`shared/formats/d3d9-bytecode.md` §4, §6, §8), checked on parsed
//! bytecode so it serves both the assembler (which maps offsets back to line:column) and
//! shaders read from archives.
//!
//! Where Wine's assembler tests (run against Microsoft's DLLs too) accept something the
//! Microsoft reference pages restrict (`_x8`/`_d4`/`_d8` and `_x2` sources in
//! ps_1_1–1_3, out-of-range registers under relative addressing), the tests win.

use super::bytecode::{Instruction, Param, Shader, ShaderKind, Version};
use super::limits::{self, ModelLimits, Slots};
use super::opcodes::{Class, Layout, OP_DEF, OP_DEFB, OP_DEFI, OP_PHASE};
use super::registers::{register_name, RegisterType, CONST_BANK_SIZE};
use super::rules::Rules;

/// Instruction slots a shader uses, by budget (§8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SlotUsage {
    pub texture: u32,
    pub arithmetic: u32,
    pub flow: u32,
}

/// Slots used by the instructions of `shader`; a co-issued instruction shares the slot of
/// the one before it (§7).
pub fn slot_usage(shader: &Shader) -> SlotUsage {
    let mut u = SlotUsage::default();
    for ins in shader.instructions() {
        if ins.coissue() {
            continue;
        }
        if let Some(info) = ins.info {
            add_slots(&mut u, info, shader.version);
        }
    }
    u
}

fn add_slots(u: &mut SlotUsage, info: &super::opcodes::OpcodeInfo, v: Version) {
    let n = info.slots(v);
    match info.class {
        Class::Arithmetic => u.arithmetic += n,
        Class::Texture => u.texture += n,
        Class::TextureAndArithmetic => {
            u.texture += 1;
            u.arithmetic += n.saturating_sub(1);
        }
        Class::FlowControl => u.flow += n,
        Class::Free => {}
    }
}

/// How much [`validate_at`] checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// What D3DX's assembler refuses even with `D3DCOMPILE_SKIP_VALIDATION`, the flag
    /// Wine's assembler tests (`dlls/d3dcompiler_43/tests/asm.c`, `exec_tests`) pass: the
    /// instruction exists in the model, registers exist and are in range, modifiers,
    /// masks and swizzles the syntax of the model has, slot budgets.
    Syntax,
    /// Everything the model's reference pages require of a shader the runtime accepts
    /// ([`super::rules`]): co-issue pairing, ps_1_4 phases and texld/texcrd forms, source
    /// swizzles per model, read-only and write-only registers, operand roles,
    /// declarations, flow-control structure and nesting, label numbers.
    Full,
}

/// A validation finding at the byte offset of an instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub offset: usize,
    pub message: String,
}

/// Everything `shader` does that its model does not allow, in stream order
/// ([`Level::Full`]).
pub fn validate(shader: &Shader) -> Vec<Diagnostic> {
    validate_at(shader, Level::Full)
}

/// What `shader` does that its model does not allow at `level`, in stream order (the
/// checks of the whole stream, such as blocks left open, at the end).
pub fn validate_at(shader: &Shader, level: Level) -> Vec<Diagnostic> {
    let v = shader.version;
    let Some(lim) = limits::limits(v) else {
        return vec![Diagnostic {
            offset: 0,
            message: format!("no limits known for {v}"),
        }];
    };
    let mut out = Vec::new();
    let mut budget = Budget::default();
    let mut previous: Option<&Instruction> = None;
    for ins in shader.instructions() {
        let mut report = |message: String| {
            out.push(Diagnostic {
                offset: ins.offset,
                message,
            })
        };
        check_instruction(ins, previous, v, lim, &mut report);
        budget.add(ins, v, lim, &mut report);
        previous = Some(ins);
    }
    // The full rules read operands the syntax level has accepted, so they run on a shader
    // without syntax-level findings (which therefore come first for the user, too).
    if level == Level::Syntax || !out.is_empty() {
        return out;
    }
    let has_phase = shader.instructions().any(|i| i.opcode() == OP_PHASE);
    let mut rules = Rules::new(v, lim, has_phase);
    for ins in shader.instructions() {
        rules.instruction(ins, &mut |message| {
            out.push(Diagnostic {
                offset: ins.offset,
                message,
            })
        });
    }
    rules.finish(shader.end_offset, &mut |offset, message| {
        out.push(Diagnostic { offset, message })
    });
    out
}

fn check_instruction(
    ins: &Instruction,
    previous: Option<&Instruction>,
    v: Version,
    lim: &ModelLimits,
    report: &mut dyn FnMut(String),
) {
    let Some(info) = ins.info else {
        report(format!("unknown opcode {:#06x} in {v}", ins.opcode()));
        return;
    };
    let m = info.mnemonic;
    if !info.available(v) {
        let span = info
            .span(v.kind)
            .map(|s| {
                let lo = Version::new(v.kind, (s.min >> 8) as u8, s.min as u8);
                let hi = Version::new(v.kind, (s.max >> 8) as u8, s.max as u8);
                if s.min == s.max {
                    format!(" (only in {lo})")
                } else {
                    format!(" (available in {lo} to {hi})")
                }
            })
            .unwrap_or_default();
        report(format!("'{m}' is not available in {v}{span}"));
        return;
    }
    if ins.coissue() {
        if !v.is_ps1() {
            report(format!("co-issue ('+') exists only in ps_1_x, not in {v}"));
        } else if previous.map_or(true, |p| p.info.map_or(true, |i| i.class == Class::Free)) {
            report(format!(
                "co-issued '{m}' needs an instruction before it to pair with"
            ));
        }
    }
    let Some(ops) = &ins.operands else {
        report(format!("the operands of '{m}' do not fit its form in {v}"));
        return;
    };
    if let Some(dst) = &ops.dst {
        check_register(dst, v, lim, report);
        check_dst_modifiers(dst, info.layout, info.class, v, m, report);
        let want = match info.opcode {
            OP_DEF => Some(RegisterType::Const),
            OP_DEFI => Some(RegisterType::ConstInt),
            OP_DEFB => Some(RegisterType::ConstBool),
            _ => None,
        };
        if let Some(want) = want {
            if dst
                .register_type()
                .and_then(|t| t.const_bank().map(|_| RegisterType::Const).or(Some(t)))
                != Some(want)
            {
                report(format!(
                    "'{m}' defines a {} register",
                    match want {
                        RegisterType::Const => "c#",
                        RegisterType::ConstInt => "i#",
                        _ => "b#",
                    }
                ));
            }
        }
    }
    if let Some(p) = ops.predicate {
        let p = Param {
            token: p,
            relative: None,
        };
        check_register(&p, v, lim, report);
    }
    for src in &ops.srcs {
        check_register(src, v, lim, report);
        check_source_modifier(src, v, report);
        if v.is_ps1() && v.minor <= 3 && info.class == Class::Arithmetic {
            let s = src.swizzle();
            if !matches!(s, 0xE4 | 0xFF | 0xAA) {
                report(format!(
                    "{v} source swizzles are .rgba, .b (blue replicate) or .a (alpha replicate)"
                ));
            }
        }
    }
}

fn name_of(p: &Param, v: Version) -> String {
    p.register_type()
        .and_then(|t| register_name(t, p.number(), v))
        .unwrap_or_else(|| format!("register type {} #{}", p.register_type_value(), p.number()))
}

fn check_register(p: &Param, v: Version, lim: &ModelLimits, report: &mut dyn FnMut(String)) {
    let Some(ty) = p.register_type() else {
        report(format!("unknown register type {}", p.register_type_value()));
        return;
    };
    let name = name_of(p, v);
    let Some(count) = lim.count(ty) else {
        report(format!("register {name} does not exist in {v}"));
        return;
    };
    let index = ty.const_bank().map_or(0, |b| b * CONST_BANK_SIZE) + p.number();
    if !p.is_relative() {
        if index >= count {
            let kind = name.trim_end_matches(|c: char| c.is_ascii_digit());
            report(format!(
                "register {name} is out of range: {v} has {count} {kind}# registers ({kind}0 to {kind}{})",
                count - 1
            ));
        }
        return;
    }
    let allowed = match (v.kind, v.major) {
        (ShaderKind::Vertex, 3) => {
            matches!(ty, RegisterType::Input | RegisterType::Output) || ty.const_bank().is_some()
        }
        (ShaderKind::Vertex, _) => ty.const_bank().is_some(),
        (ShaderKind::Pixel, 3) => ty == RegisterType::Input,
        (ShaderKind::Pixel, _) => false,
    };
    if !allowed {
        report(format!(
            "relative addressing of {name} is not allowed in {v}"
        ));
        return;
    }
    if let Some(a) = p.relative {
        let a = Param {
            token: a,
            relative: None,
        };
        let aty = a.register_type();
        let ok = match v.kind {
            ShaderKind::Vertex => {
                matches!(aty, Some(RegisterType::AddrOrTexture | RegisterType::Loop))
            }
            ShaderKind::Pixel => aty == Some(RegisterType::Loop),
        };
        if !ok {
            report(format!(
                "{name}: relative addressing in {v} uses {}",
                if v.kind == ShaderKind::Vertex {
                    "a0 or aL"
                } else {
                    "aL"
                }
            ));
            return;
        }
        check_register(&a, v, lim, report);
        if aty == Some(RegisterType::Loop) && a.swizzle() != 0xE4 {
            report("aL is a scalar register and takes no swizzle".into());
        }
    }
}

fn check_dst_modifiers(
    dst: &Param,
    layout: Layout,
    class: Class,
    v: Version,
    m: &str,
    report: &mut dyn FnMut(String),
) {
    let mods = dst.result_modifiers();
    let pixel = v.kind == ShaderKind::Pixel;
    if dst.shift() != 0 && !v.is_ps1() {
        report(format!(
            "shift modifiers (_x2, _d2, …) exist only in ps_1_x, not in {v}"
        ));
    }
    if mods & 2 != 0 && !pixel {
        report(format!("_pp is not allowed in vertex shaders ('{m}')"));
    }
    if mods & 4 != 0 && !(pixel && v.major >= 2) {
        report(format!("_centroid is not allowed in {v} ('{m}')"));
    }
    if mods & 8 != 0 {
        report(format!("unknown result modifier bit on '{m}'"));
    }
    match layout {
        Layout::Dcl => {
            if mods & 1 != 0 || dst.shift() != 0 {
                report("dcl takes no _sat or shift modifier".into());
            }
        }
        Layout::Def4 | Layout::Def1 => {
            if mods != 0 || dst.shift() != 0 {
                report(format!("'{m}' takes no modifiers"));
            }
        }
        Layout::Operands => {}
    }
    if v.is_ps1()
        && v.minor <= 3
        && class == Class::Arithmetic
        && layout == Layout::Operands
        && !matches!(dst.write_mask(), 0xF | 0x7 | 0x8)
    {
        report(format!("{v} write masks are .rgba, .rgb or .a"));
    }
}

fn check_source_modifier(src: &Param, v: Version, report: &mut dyn FnMut(String)) {
    let m = src.source_modifier();
    let ok = match m {
        0 | 1 => true,
        2..=8 => v.is_ps1(),
        9 | 10 => v.is_ps1() && v.minor == 4,
        11 | 12 => v.major >= 3,
        13 => matches!(
            src.register_type(),
            Some(RegisterType::ConstBool | RegisterType::Predicate)
        ),
        _ => false,
    };
    if !ok {
        let what = match m {
            2 | 3 => "_bias",
            4 | 5 => "_bx2",
            6 => "1- (complement)",
            7 | 8 => "_x2",
            9 => "_dz",
            10 => "_dw",
            11 | 12 => "_abs",
            13 => "! (not) on a register other than b# or p0",
            _ => "an unknown source modifier",
        };
        report(format!("source modifier {what} is not allowed in {v}"));
    }
}

/// Instruction slots used so far, checked against the model's budget (§8).
#[derive(Default)]
struct Budget {
    used: SlotUsage,
    phases: u32,
    arithmetic_seen: bool,
}

impl Budget {
    fn add(
        &mut self,
        ins: &Instruction,
        v: Version,
        lim: &ModelLimits,
        report: &mut dyn FnMut(String),
    ) {
        let Some(info) = ins.info else { return };
        if ins.opcode() == OP_PHASE {
            self.phases += 1;
            if self.phases > 1 {
                report("a ps_1_4 shader has at most one phase instruction".into());
            }
            self.used = SlotUsage::default();
            self.arithmetic_seen = false;
            return;
        }
        if v.is_ps1() {
            match info.class {
                Class::Arithmetic => self.arithmetic_seen = true,
                Class::Texture | Class::TextureAndArithmetic if self.arithmetic_seen => {
                    report(format!(
                        "'{}': in {v} texture instructions come before arithmetic ones{}",
                        info.mnemonic,
                        if v.minor == 4 { " within a phase" } else { "" }
                    ));
                }
                _ => {}
            }
        }
        if ins.coissue() {
            return;
        }
        let before = self.used;
        add_slots(&mut self.used, info, v);
        let u = self.used;
        let over = match lim.slots {
            Slots::Total(n) => (u.texture + u.arithmetic + u.flow > n
                && before.texture + before.arithmetic + before.flow <= n)
                .then(|| format!("{v} allows {n} instruction slots")),
            Slots::Split {
                texture,
                arithmetic,
            }
            | Slots::PerPhase {
                texture,
                arithmetic,
            } => {
                let per = if matches!(lim.slots, Slots::PerPhase { .. }) {
                    " per phase"
                } else {
                    ""
                };
                if u.texture > texture && before.texture <= texture {
                    Some(format!(
                        "{v} allows {texture} texture instruction slots{per}"
                    ))
                } else if u.arithmetic + u.flow > arithmetic
                    && before.arithmetic + before.flow <= arithmetic
                {
                    Some(format!(
                        "{v} allows {arithmetic} arithmetic instruction slots{per}"
                    ))
                } else {
                    None
                }
            }
        };
        if let Some(msg) = over {
            report(format!(
                "too many instructions: {msg}; '{}' goes beyond",
                info.mnemonic
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::asm::{assemble, assemble_unvalidated};
    use super::super::bytecode;
    use super::*;

    fn messages(text: &str) -> Vec<String> {
        let b = assemble_unvalidated(text).unwrap();
        validate(&bytecode::parse(&b).unwrap())
            .into_iter()
            .map(|d| d.message)
            .collect()
    }

    #[test]
    fn valid_shaders_pass() {
        for text in [
            "ps_1_3\ntex t0\nmul r0.rgb, t0, c3\n+mov r0.a, c4\nmul_x2 r0, r0, v0",
            "ps_1_4\ntexld r0, t0\nmov r1, r0\nphase\ntexld r2, r1\nmov r0, r2",
            "vs_2_x\nsetp_gt p0, r0, r1\n(!p0) add r2, r2, r3",
            "vs_3_0\ndcl_position v0\nmov o[a0.x + 12], r0\n\
             loop aL, i0\nadd r0, v0[aL], r2\nendloop",
            "ps_3_0\ndcl_texcoord0_centroid v0\nmov r0, r1_abs",
        ] {
            assert_eq!(messages(text), Vec::<String>::new(), "{text}");
        }
    }

    #[test]
    fn model_rules_are_enforced() {
        for (text, needle) in [
            ("ps_1_3\nmov r0.rg, r1", "write masks"),
            ("ps_1_3\nmov r0, r1.g", "source swizzles"),
            (
                "ps_1_3\nmov r0, r1\ntex t0",
                "texture instructions come before",
            ),
            ("ps_1_4\nphase\nphase", "at most one phase"),
            ("ps_1_1\n+mov r0, r1", "needs an instruction before it"),
            ("vs_1_1\ndef i0, 1, 2, 3, 4", "defines a c# register"),
            ("ps_2_0\nmov r0, r1_abs", "_abs"),
            ("ps_2_0\nloop aL, i0\nendloop", "not available in ps_2_0"),
            ("vs_2_0\nmov r0, c256", "out of range"),
        ] {
            let m = messages(text);
            assert!(m.iter().any(|m| m.contains(needle)), "{text}: {m:?}");
        }
    }

    /// Each rule of full validation fires, with its message, and the syntax level lets the
    /// shader through.
    #[test]
    fn full_rules_fire() {
        for (text, needle) in [
            // Co-issue.
            (
                "ps_1_1\nmov r0.rgb, r1\n+mov r0.rgb, r1",
                "colour (.rgb) in one and alpha (.a)",
            ),
            (
                "ps_1_4\nmov r0.xy, r1\n+mov r0.a, r1\n+mov r1.a, r1",
                "a pair is two",
            ),
            (
                "ps_1_1\ntex t0\n+mov r0.a, t0",
                "only arithmetic instructions co-issue",
            ),
            // ps_1_4 phases and texld/texcrd.
            (
                "ps_1_4\ntexld r0, r1",
                "r# coordinates are allowed in phase 2 only",
            ),
            ("ps_1_4\ntexcrd r0, r1", "reads its coordinates from r1: t#"),
            (
                "ps_1_4\ntexld r0, t0.xzy",
                "the selectors are .xyz and .xyw",
            ),
            (
                "ps_1_4\ntexld r0, t0.xyz\ntexld r1, t0.xyw",
                "same selector",
            ),
            ("ps_1_4\ntexld r0, t0_dw", "_dw divides t#.xyw"),
            ("ps_1_4\nmov r0, t0", "arithmetic instructions cannot"),
            (
                "ps_1_4\nmov r0, v0\nphase\nmov r0, r0",
                "phase 2 (after 'phase')",
            ),
            (
                "ps_1_4\nmov r0, c0\nphase\ntexld r1, r0_dz\ntexld r2, r0_dz\ntexld r3, r0_dz",
                "more than twice",
            ),
            // Masks, swizzles and operand roles.
            ("ps_1_3\ndp3 r0.a, r1, r0", "dp3 writes .rgb or .rgba"),
            (
                "ps_1_3\nmov r0.rgb, r1.b",
                "when the destination mask is .w",
            ),
            (
                "ps_1_4\nmov r0, r1.xxyy",
                "swizzle .xxyy of r1 is not allowed in ps_1_4",
            ),
            (
                "ps_2_0\nmov r0, r1.yxzw",
                "swizzle .yxzw of r1 is not allowed in ps_2_0",
            ),
            ("ps_1_3\ncnd r0, r1, r0, v0", "cnd compares r0.a"),
            ("ps_1_1\nmov v0, r0", "v# registers are read-only"),
            (
                "vs_1_1\ndcl_position v0\nmov c0, v0",
                "c# registers are read-only",
            ),
            ("vs_1_1\nmov r0, oPos", "write-only"),
            ("ps_2_0\ndcl t0\nmov t0, r0", "t# registers are read-only"),
            (
                "ps_2_0\ndcl t0\ndcl_2d s0\ntexld r0, t0, t0",
                "the second source is a sampler",
            ),
            (
                "ps_2_0\ndcl t0\ndcl_2d s0\ntexld r0.xy, t0, s0",
                "writes a whole r#",
            ),
            (
                "ps_2_0\ndcl t0\ndcl_2d s0\ntexld r0, t0.yxzw, s0",
                "no swizzle or modifier",
            ),
            // Declarations.
            ("ps_2_0\nmov r0, t0", "uses t0 without a dcl"),
            ("vs_2_0\nmov oPos, v0", "uses v0 without a dcl"),
            (
                "vs_3_0\ndcl_position v0\nmov o0, v0",
                "uses o0 without a dcl",
            ),
            (
                "ps_2_0\nmov r0, c0\ndcl t0",
                "dcl after the first executable",
            ),
            // Flow control.
            (
                "vs_2_0\nif b0\nendloop",
                "closes 'loop', but the innermost open block is 'if'",
            ),
            ("vs_2_0\nloop aL, i0\nendrep", "closes 'rep'"),
            ("vs_2_0\nelse", "'else' without an open if"),
            ("vs_2_0\nif b0\nelse\nelse\nendif", "a second 'else'"),
            ("vs_2_0\nif b0", "ends inside a 'if' block"),
            ("vs_2_x\nbreak", "outside a loop or rep"),
            ("vs_2_0\nrep i0\nrep i1\nendrep\nendrep", "vs_2_0 allows 1"),
            ("vs_2_0\nmov r0, c[aL]", "uses aL outside a loop"),
            ("vs_2_0\ncall l0\nret", "which no 'label' defines"),
            (
                "vs_2_0\nmov r0, c0\nlabel l0\nret",
                "'label' must directly follow 'ret'",
            ),
            (
                "vs_2_0\nret\nmov r0, c0",
                "follows 'ret' outside any subroutine",
            ),
            ("vs_2_0\ncall l16\nret\nlabel l16\nret", "l0 to l15"),
            ("vs_2_0\nret\nlabel l0\nret\nlabel l0\nret", "defined twice"),
            (
                "vs_2_0\nif b0\nret\nendif",
                "'ret' inside an open 'if' block",
            ),
            (
                "vs_2_0\ncall l0\nret\nlabel l0\ncall l1\nret\nlabel l1\nret",
                "nests calls 2 deep (vs_2_0 allows 1)",
            ),
            (
                "vs_3_0\ncall l0\nret\nlabel l0\ncall l0\nret",
                "no recursion",
            ),
        ] {
            let b = assemble_unvalidated(text).unwrap();
            let shader = bytecode::parse(&b).unwrap();
            assert_eq!(validate_at(&shader, Level::Syntax), vec![], "{text}");
            let m = messages(text);
            assert!(m.iter().any(|m| m.contains(needle)), "{text}: {m:?}");
        }
        // Nesting limits and the static flow count.
        let nest = |open: &str, close: &str, n: usize| {
            format!(
                "vs_3_0\n{}{}",
                format!("{open}\n").repeat(n),
                format!("{close}\n").repeat(n)
            )
        };
        assert!(messages(&nest("rep i0", "endrep", 4)).is_empty());
        assert!(messages(&nest("rep i0", "endrep", 5))[0].contains("vs_3_0 allows 4"));
        assert!(messages(&nest("if b0", "endif", 24)).is_empty());
        assert!(messages(&nest("if b0", "endif", 25))[0].contains("vs_3_0 allows 24"));
        assert!(messages(&nest("if_lt r0, r1", "endif", 25))[0].contains("dynamic"));
        let many = format!("vs_2_0\n{}", "if b0\nendif\n".repeat(17));
        assert!(messages(&many)[0].contains("vs_2_0 allows 16 a shader"));
        // A message reaches the assembler's caller as line:column.
        let e = assemble("ps_1_1\ntex t0\n  +mov r0.a, t0").unwrap_err();
        assert_eq!((e.line, e.column), (3, 3));
        assert!(e.to_string().starts_with("3:3: "), "{e}");
    }

    #[test]
    fn slot_limits() {
        let mut text = String::from("ps_1_1\n");
        for _ in 0..9 {
            text.push_str("add r0, r0, r1\n");
        }
        let e = assemble(&text).unwrap_err();
        assert_eq!(e.line, 10);
        assert!(e.message.contains("8 arithmetic instruction slots"), "{e}");
        // Co-issued pairs share a slot.
        let mut text = String::from("ps_1_1\n");
        for _ in 0..8 {
            text.push_str("add r0.rgb, r0, r1\n+add r0.a, r0, r1\n");
        }
        assert!(assemble(&text).is_ok());
        let mut text = String::from("ps_1_4\n");
        for _ in 0..2 {
            for _ in 0..8 {
                text.push_str("add r0, r0, r1\n");
            }
            text.push_str("phase\n");
        }
        let e = assemble(&text).unwrap_err();
        assert!(e.message.contains("at most one phase"), "{e}");
    }
}
