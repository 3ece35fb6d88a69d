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
use super::opcodes::{Class, Layout, OP_DCL, OP_DEF, OP_DEFB, OP_DEFI, OP_PHASE};
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

/// Adds the slots `info` costs in `v` to `u`.
pub(super) fn add_slots(u: &mut SlotUsage, info: &super::opcodes::OpcodeInfo, v: Version) {
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
    /// declarations, flow-control structure and nesting, label numbers, read ports,
    /// temporaries written before read, the outputs each model must write and how,
    /// dependent-read order, gradients of temporaries outside dynamic flow control.
    Full,
}

/// The Direct3D whose rules a shader is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Direct3D 9: every model, inputs declared with `dcl`.
    Direct3D9,
    /// Direct3D 8 (`shaderfs d3d9 asm --d3d8`): vs_1_1 and ps_1_1–ps_1_4 only, with no `dcl`
    /// (Direct3D 8 binds vertex inputs through the vertex declaration, `D3DVSD_REG`, and its
    /// token set has no `dcl`: `D3DSIO_DCL` is new in Direct3D 9's `d3d9types.h`).
    Direct3D8,
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
    validate_for(shader, level, Api::Direct3D9)
}

/// [`validate_at`] with the rules of `api`.
pub fn validate_for(shader: &Shader, level: Level, api: Api) -> Vec<Diagnostic> {
    let v = shader.version;
    if api == Api::Direct3D8 && v.major >= 2 {
        return vec![Diagnostic {
            offset: 0,
            message: format!("{v} is not a Direct3D 8 model (vs_1_1, ps_1_1 to ps_1_4)"),
        }];
    }
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
    let mut rules = Rules::new(shader, lim, api);
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

/// A vs_1_1 written for Direct3D 8: it reads input registers and declares none, because
/// Direct3D 8 bound them through the vertex declaration (`D3DVSD_REG`); Direct3D 9 needs a
/// `dcl_*` for each (`dcl-usage-input-register---vs.md`).
pub fn is_direct3d8_style(shader: &Shader) -> bool {
    let v = shader.version;
    v.kind == ShaderKind::Vertex
        && v.major == 1
        && !shader.instructions().any(|i| i.opcode() == OP_DCL)
        && shader.instructions().any(|i| {
            i.operands.as_ref().is_some_and(|o| {
                o.srcs
                    .iter()
                    .any(|p| p.register_type() == Some(RegisterType::Input))
            })
        })
}

/// The wording of the [`notes`], `{}` where a value goes: a Direct3D 8-style vs_1_1, a
/// register or the slot count beyond the model's guaranteed minimum, a dependent read
/// deeper than the model allows without a capability.
const NOTES: [&str; 4] = [
    "Direct3D 8-style {}: no dcl. Its inputs are bound by the vertex declaration \
     (D3DVSD_REG), as Direct3D 8 did; Direct3D 9 needs a dcl_* line for each \
     (dcl_position v0, ...).",
    "Needs {} >= {}: it uses {}, and {} guarantees {}.",
    "Needs {} >= {}: it uses {} instruction slots, and {} guarantees {}.",
    "Needs {}: it has a dependent texture read of order {}, and {} without it allows order {}.",
];

/// A note of [`NOTES`] with its values.
fn note(template: &str, values: &[&dyn std::fmt::Display]) -> String {
    let mut out = String::new();
    for (i, piece) in template.split("{}").enumerate() {
        if let Some(v) = i.checked_sub(1).and_then(|i| values.get(i)) {
            out.push_str(&v.to_string());
        }
        out.push_str(piece);
    }
    out
}

/// Whether `text` is one of the [`notes`], whatever its values: the assembler does not keep
/// these lines above the version line as comments, even once they no longer hold.
pub fn is_note(text: &str) -> bool {
    NOTES.iter().any(|template| {
        let pieces: Vec<&str> = template.split("{}").collect();
        let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
        let Some(mut rest) = text.strip_prefix(first).and_then(|r| r.strip_suffix(last)) else {
            return false;
        };
        // Each value is some text; the pieces between them come in order.
        for piece in &pieces[1..pieces.len() - 1] {
            match rest.get(1..).and_then(|r| r.find(piece)) {
                Some(at) => rest = &rest[1 + at + piece.len()..],
                None => return false,
            }
        }
        !rest.is_empty()
    })
}

/// Lines for the top of the disassembly, about what the listing cannot say: that a vs_1_1 is
/// Direct3D 8-style, and each device capability the shader needs beyond the minimum every
/// device of its model has (the limits table's [`Cap`](super::limits::Cap)s).
pub fn notes(shader: &Shader) -> Vec<String> {
    let v = shader.version;
    let mut out = Vec::new();
    if is_direct3d8_style(shader) {
        out.push(note(NOTES[0], &[&v]));
    }
    let Some(lim) = limits::limits(v) else {
        return out;
    };
    for file in lim.registers {
        let Some(cap) = file.cap else { continue };
        let highest = shader
            .instructions()
            .filter_map(|i| i.operands.as_ref())
            .flat_map(|o| o.dst.iter().chain(&o.srcs))
            .filter(|p| !p.is_relative())
            .filter_map(|p| {
                let ty = p.register_type()?;
                let same =
                    ty == file.ty || (file.ty.const_bank().is_some() && ty.const_bank().is_some());
                same.then(|| ty.const_bank().map_or(0, |b| b * CONST_BANK_SIZE) + p.number())
            })
            .max();
        if let Some(n) = highest.filter(|&n| n >= cap.guaranteed) {
            let name = file
                .ty
                .const_bank()
                .map_or_else(|| register_name(file.ty, n, v), |_| Some(format!("c{n}")))
                .unwrap_or_else(|| n.to_string());
            out.push(note(
                NOTES[1],
                &[&cap.name, &(n + 1), &name, &v, &cap.guaranteed],
            ));
        }
    }
    if let Slots::Total(_, Some(cap)) = lim.slots {
        let u = slot_usage(shader);
        let total = u.texture + u.arithmetic + u.flow;
        if total > cap.guaranteed {
            out.push(note(
                NOTES[2],
                &[&cap.name, &total, &total, &v, &cap.guaranteed],
            ));
        }
    }
    if let Some((limit, Some(cap))) = lim.dependent_reads {
        let order = super::rules::dependent_read_order(shader);
        if order > limit {
            out.push(note(NOTES[3], &[&cap, &order, &v, &limit]));
        }
    }
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
            if dst.write_mask() == 0 {
                report(format!(
                    "'{m}' has an empty write mask: it defines no component"
                ));
            }
        }
        // No assembler writes an empty mask (`r0.`), and there is nothing it writes.
        Layout::Operands if dst.write_mask() == 0 => {
            report(format!(
                "'{m}' has an empty write mask: it writes no component"
            ));
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
            Slots::Total(n, _) => (u.texture + u.arithmetic + u.flow > n
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
            "vs_2_x\ndcl_position v0\nmov r0, v0\nmov r1, c0\nsetp_gt p0, r0, r1\n\
             mov r2, c1\n(!p0) add r2, r2, r0\nmov oPos, r2",
            "vs_3_0\ndcl_position v0\ndcl_texcoord o0\nmov r0, c0\nmova a0.x, c1.x\n\
             mov o[a0.x + 12], r0\nmov r2, c2\nloop aL, i0\nadd r0, v0[aL], r2\nendloop",
            "ps_3_0\ndcl_texcoord0_centroid v0\nmov r1, v0\nmov r0, r1_abs\nmov oC0, r0",
            // The same constant twice is one read port; sincos's two constants are its form.
            "vs_2_0\ndcl_position v0\ndef c1, -1.55009923e-006, -2.17013894e-005, \
             0.00260416674, 0.00026041668\ndef c2, -0.020833334, -0.125, 1, 0.5\n\
             mad r0.xy, v0, c0, c0.zwzw\nsincos r1.xy, r0.x, c1, c2\nmov r0.zw, v0\n\
             add oPos, r0, r1.xyxy",
        ] {
            assert_eq!(messages(text), Vec::<String>::new(), "{text}");
        }
    }

    /// The rules this issue added, each with the model it holds in and its source (see
    /// `rules.rs`): a shader that breaks it is refused with its message, and the same
    /// shader mended passes.
    #[test]
    fn program_rules_refuse_and_accept() {
        let ps20 = "ps_2_0\ndcl t0\ndcl_2d s0\n";
        for (bad, needle, good) in [
            // Temporaries read before written (every model), component by component.
            (
                "vs_1_1\ndcl_position v0\nadd r0, r1, v0\nmov oPos, r0".to_string(),
                "'add' reads r1.xyzw, which no earlier instruction writes",
                "vs_1_1\ndcl_position v0\nmov r1, c0\nadd r0, r1, v0\nmov oPos, r0".to_string(),
            ),
            (
                "ps_2_0\nmov r0.xy, c0\nmov oC0, r0".into(),
                "reads r0.zw",
                "ps_2_0\nmov r0.xy, c0\nmov r0.zw, c1\nmov oC0, r0".into(),
            ),
            (
                "ps_1_4\ntexld r0, t0\nphase\nmov r0, r0".into(),
                "reads r0.w",
                "ps_1_4\ntexld r0, t0\nphase\nmov r0.xyz, r0\n+mov r0.w, c0.w".into(),
            ),
            (
                "vs_2_0\ndcl_position v0\nmov oPos, r0\nret\nlabel l0\nmov r0, v0\nret".into(),
                "reads r0.xyzw",
                "vs_2_0\ndcl_position v0\ncall l0\nmov oPos, r0\nret\nlabel l0\n\
                 mov r0, v0\nret"
                    .into(),
            ),
            // Read ports: ps_1_1 two t#, ps_1_2 three; two c# in ps_1_x; one v# in vs.
            (
                "ps_1_1\ntex t0\ntex t1\ntex t2\nmad r0, t0, t1, t2".into(),
                "'mad' reads 3 different t# registers (t0, t1, t2): ps_1_1 reads at most 2",
                "ps_1_2\ntex t0\ntex t1\ntex t2\nmad r0, t0, t1, t2".into(),
            ),
            (
                "ps_1_1\nmad r0, c0, c1, c2".into(),
                "reads 3 different c# registers",
                "ps_1_1\nmad r0, c0, c1, c0".into(),
            ),
            (
                "vs_1_1\ndcl_position v0\ndcl_normal v1\nadd r0, v0, v1\nmov oPos, r0".into(),
                "reads 2 different v# registers (v0, v1): vs_1_1 reads at most 1",
                "vs_1_1\ndcl_position v0\ndcl_normal v1\nmov r1, v1\nadd r0, v0, r1\n\
                 mov oPos, r0"
                    .into(),
            ),
            (
                format!("{ps20}mad r0, c0, c1, c2\nmov oC0, r0"),
                "reads 3 different c# registers (c0, c1, c2): ps_2_0 reads at most 1",
                format!("{ps20}mov r1, c1\nmov r2, c2\nmad r0, c0, r1, r2\nmov oC0, r0"),
            ),
            // ps_2_0 dependent reads, at most third order.
            (
                format!(
                    "{ps20}texld r0, t0, s0\ntexld r1, r0, s0\ntexld r2, r1, s0\n\
                     texld r3, r2, s0\ntexld r4, r3, s0\nmov oC0, r4"
                ),
                "'texld' is a dependent texture read of order 4: ps_2_0 allows order 3",
                format!(
                    "{ps20}texld r0, t0, s0\ntexld r1, r0, s0\ntexld r2, r1, s0\n\
                     texld r3, r2, s0\nmov oC0, r3"
                ),
            ),
            // Outputs that must be written.
            (
                "ps_1_1\ntex t0\nmov r1, t0".into(),
                "r0 is the pixel colour of a ps_1_1 shader and nothing writes it",
                "ps_1_1\ntex t0\nmov r0, t0".into(),
            ),
            (
                format!("{ps20}texld r0, t0, s0"),
                "ps_2_0 must write oC0",
                format!("{ps20}texld r0, t0, s0\nmov oC0, r0"),
            ),
            (
                "vs_2_0\ndcl_position v0\nmov oD0, v0".into(),
                "vs_2_0 must write oPos",
                "vs_2_0\ndcl_position v0\nmov oPos, v0".into(),
            ),
            // oC# and oDepth.
            (
                "ps_2_0\nadd oC0, c0, c0".into(),
                "writes oC# only with mov",
                "ps_2_0\nadd r0, c0, c0\nmov oC0, r0".into(),
            ),
            (
                "ps_2_0\nmov oC0, c0.x".into(),
                "from a swizzled or modified source",
                "ps_2_0\nmov oC0, c0".into(),
            ),
            (
                "ps_2_0\nmov oC0.xyz, c0".into(),
                "writes oC0 with a write mask",
                "ps_3_0\nmov oC0.xyz, c0".into(),
            ),
            (
                "ps_2_0\nmov oC0, c0\nmov oC0, c1".into(),
                "oC0 is written twice",
                "ps_2_0\nmov oC0, c0\nmov oC1, c1".into(),
            ),
            (
                "ps_2_0\nmov oC0, c0\nmov oC2, c1".into(),
                "oC2 is written but oC1 is not",
                "ps_2_0\nmov oC0, c0\nmov oC1, c0\nmov oC2, c1".into(),
            ),
            (
                "ps_2_x\nmov r0, c0\nif_gt r0.x, c1.x\nmov oC0, r0\nendif".into(),
                "inside dynamic flow control or predicated",
                "ps_2_x\nmov r0, c0\nif b0\nmov r0, c1\nendif\nmov oC0, r0".into(),
            ),
            (
                "ps_2_0\nmov oC0, c0\nmov oDepth, c0".into(),
                "without a replicate swizzle",
                "ps_2_0\nmov oC0, c0\nmov oDepth, c0.z".into(),
            ),
            (
                "ps_2_x\nmov oC0, c0\nif b0\nmov oDepth, c0.x\nendif".into(),
                "writes oDepth inside flow control",
                "ps_3_0\nmov oC0, c0\nif b0\nmov oDepth, c0.x\nendif".into(),
            ),
            // Gradients of a temporary inside dynamic flow control; of an input they may
            // be (testdata/msd3d/gradients has the other cases).
            (
                "ps_3_0\ndcl_texcoord v0\ndcl_2d s0\nmov r0, c0\nmov r1, c1\n\
                 mul r2, v0, c2\nif_gt r0.x, c1.x\ntexld r1, r2, s0\nendif\nmov oC0, r1"
                    .into(),
                "'texld' computes screen gradients of r2, a temporary, inside dynamic flow \
                 control",
                "ps_3_0\ndcl_texcoord v0\ndcl_2d s0\nmov r0, c0\nmov r1, c1\n\
                 mul r2, v0, c2\nif_gt r0.x, c1.x\ntexld r1, v0, s0\nendif\nmov oC0, r1"
                    .into(),
            ),
        ] {
            let b = assemble_unvalidated(&bad).unwrap();
            let shader = bytecode::parse(&b).unwrap();
            assert_eq!(validate_at(&shader, Level::Syntax), vec![], "{bad}");
            let m = messages(&bad);
            assert!(m.iter().any(|m| m.contains(needle)), "{bad}: {m:?}");
            assert_eq!(messages(&good), Vec::<String>::new(), "{good}");
        }
    }

    /// Counts a device may raise beyond the model's minimum are accepted, and the
    /// disassembly names the capability they need.
    #[test]
    fn device_caps_are_accepted_and_named() {
        let text = "vs_2_0\ndcl_position v0\nmov r0, c297\nadd oPos, v0, r0";
        assert!(messages(text).is_empty(), "{:?}", messages(text));
        let b = assemble(text).unwrap();
        let listing = super::super::disasm::disassemble(&b).unwrap();
        assert!(
            listing.starts_with(
                "// Needs D3DCAPS9.MaxVertexShaderConst >= 298: it uses c297, and vs_2_0 \
                 guarantees 256.\n\n    vs_2_0\n"
            ),
            "{listing}"
        );
        assert_eq!(assemble(&listing).unwrap(), b);
        let text = "vs_2_x\ndcl_position v0\nmov r20, v0\nmov oPos, r20";
        let listing = super::super::disasm::disassemble(&assemble(text).unwrap()).unwrap();
        assert!(
            listing.contains("Needs D3DCAPS9.VS20Caps.NumTemps >= 21: it uses r20"),
            "{listing}"
        );
        // The register token ends at c8191.
        assert!(assemble_unvalidated("vs_3_0\nmov r0, c8192").is_err());
        assert!(messages("vs_3_0\nmov r0, c8191\nmov r1, r0")
            .iter()
            .all(|m| !m.contains("out of range")));
        // ps_2_x: a fourth-order dependent read needs D3DPS20CAPS_NODEPENDENTREADLIMIT.
        let chain = "ps_2_x\ndcl t0\ndcl_2d s0\ntexld r0, t0, s0\ntexld r1, r0, s0\n\
                     texld r2, r1, s0\ntexld r3, r2, s0\ntexld r4, r3, s0\nmov oC0, r4";
        assert!(messages(chain).is_empty(), "{:?}", messages(chain));
        let listing = super::super::disasm::disassemble(&assemble(chain).unwrap()).unwrap();
        assert!(
            listing.contains("// Needs D3DPS20CAPS_NODEPENDENTREADLIMIT: "),
            "{listing}"
        );
    }

    /// Every note, whatever its values, reads as a note (the assembler does not keep one
    /// above the version line as a comment); a comment that only starts like one does not.
    #[test]
    fn notes_are_recognised_whatever_their_values() {
        let texts = [
            "vs_1_1\nm4x4 oPos, v0, c0",
            "vs_2_0\ndcl_position v0\nmov r0, c297\nadd oPos, v0, r0",
            "ps_2_x\ndcl t0\ndcl_2d s0\ntexld r0, t0, s0\ntexld r1, r0, s0\n\
             texld r2, r1, s0\ntexld r3, r2, s0\ntexld r4, r3, s0\nmov oC0, r4",
        ];
        for text in texts {
            let shader = bytecode::parse(&assemble_unvalidated(text).unwrap()).unwrap();
            let notes = notes(&shader);
            assert!(!notes.is_empty(), "{text}");
            assert!(notes.iter().all(|n| is_note(n)), "{notes:?}");
        }
        assert!(is_note(
            "Needs D3DCAPS9.MaxVertexShaderConst >= 300: it uses c299, and vs_2_0 guarantees 256."
        ));
        for not in [
            "Needs more work",
            "Needs X >= : it uses c1, and vs_2_0 guarantees 256.",
            "Direct3D 8-style: no dcl.",
            "",
        ] {
            assert!(!is_note(not), "{not}");
        }
    }

    /// A vs_1_1 written for Direct3D 8 (no dcl) is named as such, refused for Direct3D 9
    /// with a message that says how to mend it, and accepted with Direct3D 8's rules.
    #[test]
    fn direct3d8_vertex_shaders() {
        let text = "vs_1_1\nm4x4 oPos, v0, c0\nmov oD0, v1";
        let m = messages(text);
        assert!(
            m[0].starts_with("'m4x4' uses v0 without a dcl: this is a Direct3D 8-style vs_1_1"),
            "{m:?}"
        );
        assert!(m[0].contains("dcl_position v0"), "{m:?}");
        assert!(m[0].contains("--d3d8"), "{m:?}");
        let b = assemble_unvalidated(text).unwrap();
        let shader = bytecode::parse(&b).unwrap();
        assert!(is_direct3d8_style(&shader));
        assert!(validate_for(&shader, Level::Full, Api::Direct3D8).is_empty());
        assert_eq!(super::super::asm::assemble_d3d8(text).unwrap(), b);
        let listing = super::super::disasm::disassemble(&b).unwrap();
        assert!(
            listing.starts_with("// Direct3D 8-style vs_1_1: no dcl."),
            "{listing}"
        );
        // With dcl it is a Direct3D 9 shader; Direct3D 8 has no dcl, and no 2_0 models.
        let d3d9 = assemble_unvalidated("vs_1_1\ndcl_position v0\nmov oPos, v0").unwrap();
        let d3d9 = bytecode::parse(&d3d9).unwrap();
        assert!(!is_direct3d8_style(&d3d9));
        assert!(validate_for(&d3d9, Level::Full, Api::Direct3D8)[0]
            .message
            .contains("dcl does not exist in Direct3D 8"));
        let vs20 = bytecode::parse(&assemble_unvalidated("vs_2_0\nmov oPos, c0").unwrap()).unwrap();
        assert!(validate_for(&vs20, Level::Full, Api::Direct3D8)[0]
            .message
            .contains("not a Direct3D 8 model"));
    }

    /// A write mask of no component, which no assembler writes (the d3d9_decompile fuzz
    /// target's find: the listing said `add r0., r0.w, c40.w`, which no assembler reads).
    #[test]
    fn an_empty_write_mask_is_refused() {
        let mut b = assemble_unvalidated(
            "vs_2_0\ndef c0, 1, 1, 1, 1\nmov r0, c0\nadd r0.x, r0.w, c0.w\nmov oPos, r0",
        )
        .unwrap();
        let shader = bytecode::parse(&b).unwrap();
        // An instruction's, and a def's (the fuzz target's `defi i0.`, listed so).
        for (mnemonic, says) in [("add", "empty write mask"), ("def", "defines no component")] {
            let ins = shader
                .instructions()
                .find(|i| i.mnemonic() == mnemonic)
                .unwrap();
            let at = ins.offset + 4;
            let dst = u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) & !(0xF << 16);
            b[at..at + 4].copy_from_slice(&dst.to_le_bytes());
            let found = validate(&bytecode::parse(&b).unwrap());
            assert!(
                found
                    .iter()
                    .any(|d| d.offset == ins.offset && d.message.contains(says)),
                "{found:?}"
            );
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
            ("ps_2_0\nmov r0, c32", "out of range"),
            ("ps_3_0\nmov r0, c224", "out of range"),
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
            (
                "ps_1_4\ntexld r0, t0_bias",
                "texld and texcrd take _dz and _dw only",
            ),
            (
                "ps_1_4\ntexcrd r0.rgb, -t0",
                "texld and texcrd take _dz and _dw only",
            ),
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
        assert!(messages(&nest("if_lt r0, r1", "endif", 25))
            .iter()
            .any(|m| m.contains("dynamic")));
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
        let mut text = String::from("ps_1_1\ntex t0\ntex t1\n");
        for _ in 0..8 {
            text.push_str("add r0.rgb, t0, t1\n+add r0.a, t0, t1\n");
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
