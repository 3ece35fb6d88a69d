//! The per-model rules of full validation ([`super::validate::Level::Full`]): what
//! `CreateVertexShader`/`CreatePixelShader` and D3DX without `D3DCOMPILE_SKIP_VALIDATION`
//! refuse beyond the checks the assembler makes on every shader. Each rule is a small
//! function or a field of the limits table ([`super::limits`]), and names its source:
//! Microsoft's asm reference pages (`MicrosoftDocs/win32 desktop-src/direct3dhlsl/…`).
//!
//! | Rule | Models | Source (`…` = `dx9-graphics-reference-asm`) |
//! |---|---|---|
//! | Temporaries are written before they are read, component by component | all | `…-vs-registers-temporary.md`, `…-ps-registers-temporary.md`, `…-ps-registers-ps-1-x.md` |
//! | Different registers of a type an instruction reads ("# Read ports") | all | each model's register page; ps_1_x: "Read Port Limit" |
//! | r0, the pixel colour, is written | ps_1_x | `…-ps-registers-ps-1-x.md` |
//! | oC0 is written; oC# only by `mov`, whole, once, in a row from oC0 | ps_2_0, ps_2_x | `…-ps-registers-output-color.md` |
//! | No oC# write in dynamic flow control or predicated | ps_2_x | same page |
//! | oDepth from a replicate swizzle, no mask; in 2_x only `mov`, once, outside flow control | ps_2_0+ | `…-ps-registers-output-depth.md` |
//! | oPos is written | vs_1_1 to vs_2_x | `…-vs-registers-position.md` |
//! | Dependent texture reads up to the third order | ps_2_0 (ps_2_x: a cap) | `texld---ps-2-0.md` |
//! | No gradients (texld, texldb, texldp, dsx, dsy) of a temporary in dynamic flow control | ps_2_x, ps_3_0 | `…-ps-instructions-flow-control.md` |
//! | A vs_1_1 declares its inputs; Direct3D 8-style ones are named as such | vs_1_1 | `dcl-usage-input-register---vs.md` |
//!
//! and, from before: co-issue pairing, ps_1_4 phases and texld/texcrd forms, source
//! swizzles, read-only and write-only registers, operand roles, declarations, flow-control
//! structure and nesting, label numbers (each function names its page).
//!
//! Wine's assembler tests (`wine-tests/asm`) assemble with `D3DCOMPILE_SKIP_VALIDATION`,
//! so several of them break these rules (`texld r5, c0`, inputs without `dcl`), and most
//! are fragments that write no output; the corpus tests list each by name with the rule
//! it breaks, or accept a fragment's refusal by one of the whole-program rules.
//!
//! Registers whose use needs a `dcl` are listed per model in the limits table. `vPos` and
//! `vFace` (ps_3_0 `MiscType`) are not among them: Microsoft's assembler wants
//! `dcl vPos.xy`/`dcl vFace`, Wine's refuses those declarations and accepts the registers
//! without one, and the runtime has nothing to bind for them (they are rasteriser values,
//! not interpolated inputs matched by semantic). We accept both spellings so that the
//! corpus's `ps30_vpos_vface_nodcl` (Wine's bytes) and `xfail_ps30_dcl_vpos_vface`
//! (Microsoft's) both assemble.

use std::collections::{HashMap, HashSet};

use super::bytecode::{Instruction, Param, Shader, ShaderKind, Version};
use super::dataflow::{self, components_read, DependentReads};
use super::limits::{FlowLimits, ModelLimits, Swizzles};
use super::opcodes::{Class, Layout, OP_DCL, OP_PHASE, OP_TEX, TEXLD_VARIANTS};
use super::registers::{register_name, RegisterType, CONST_BANK_SIZE};
use super::validate::Api;

pub(super) use super::dataflow::dependent_read_order;

const OP_MOV: u16 = 0x01;
const OP_SINCOS: u16 = 0x25;
const OP_DSX: u16 = 0x5B;
const OP_DSY: u16 = 0x5C;
const OP_TEXCRD: u16 = 0x40;
const OP_TEXKILL: u16 = 0x41;
const OP_DP3: u16 = 0x08;
const OP_CND: u16 = 0x50;
const OP_CALL: u16 = 0x19;
const OP_CALLNZ: u16 = 0x1A;
const OP_LOOP: u16 = 0x1B;
const OP_RET: u16 = 0x1C;
const OP_ENDLOOP: u16 = 0x1D;
const OP_LABEL: u16 = 0x1E;
const OP_REP: u16 = 0x26;
const OP_ENDREP: u16 = 0x27;
const OP_IF: u16 = 0x28;
const OP_IFC: u16 = 0x29;
const OP_ELSE: u16 = 0x2A;
const OP_ENDIF: u16 = 0x2B;
const OP_BREAK: u16 = 0x2C;
const OP_BREAKC: u16 = 0x2D;
const OP_TEXLDD: u16 = 0x5D;
const OP_TEXLDL: u16 = 0x5F;
const OP_BREAKP: u16 = 0x60;

const SWZ_IDENTITY: u8 = 0xE4;
const SWZ_XYZ: u8 = 0xA4;
const SWZ_XYW: u8 = 0xF4;
const MOD_DZ: u8 = 9;
const MOD_DW: u8 = 10;
const MASK_RGB: u8 = 0x7;
const MASK_A: u8 = 0x8;

/// A flow-control block open at some point of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    /// `if b#`: static nesting.
    IfStatic {
        has_else: bool,
    },
    /// `if_comp`, `if p0`: dynamic nesting.
    IfDynamic {
        has_else: bool,
    },
    Loop,
    Rep,
}

impl Block {
    fn opener(self) -> &'static str {
        match self {
            Block::IfStatic { .. } | Block::IfDynamic { .. } => "if",
            Block::Loop => "loop",
            Block::Rep => "rep",
        }
    }
}

/// The state of full validation along one shader.
pub(super) struct Rules<'a> {
    v: Version,
    lim: &'static ModelLimits,
    /// ps_1_4: the shader has a `phase` marker, and the walk is past it.
    has_phase: bool,
    in_phase2: bool,
    dz_reads: u32,
    /// ps_1_4: the selector (`.xyz` or `.xyw`) each `t#` was first read with.
    t_selectors: HashMap<u32, u8>,
    declared: HashSet<(RegisterType, u32)>,
    executable_seen: bool,
    previous: Option<&'a Instruction>,
    blocks: Vec<Block>,
    static_count: u32,
    /// The subroutine being walked (`None`: the main program), and whether its `ret` was seen.
    routine: Option<u32>,
    returned: bool,
    labels: HashMap<u32, usize>,
    /// (calling routine, called label, offset of the call).
    calls: Vec<(Option<u32>, u32, usize)>,
    api: Api,
    /// The shader has no `dcl` at all (a vs_1_1 of that kind is Direct3D 8-style).
    no_dcl: bool,
    /// Components of each `r#` some earlier instruction wrote.
    temps: HashMap<u32, u8>,
    /// `r#` already reported as read before written.
    undefined_reported: HashSet<u32>,
    /// Components of each `r#` the subroutines write: defined after a call.
    subroutine_writes: HashMap<u32, u8>,
    samplers: HashMap<u32, u32>,
    dependent: DependentReads,
    /// Writes of each `oC#`, and of `oDepth`.
    color_writes: HashMap<u32, u32>,
    depth_writes: u32,
    position_written: bool,
}

fn ty(p: &Param) -> Option<RegisterType> {
    p.register_type().map(|t| {
        if t.const_bank().is_some() {
            RegisterType::Const
        } else {
            t
        }
    })
}

fn name(p: &Param, v: Version) -> String {
    p.register_type()
        .and_then(|t| register_name(t, p.number(), v))
        .unwrap_or_else(|| format!("register type {}", p.register_type_value()))
}

fn kind_name(t: RegisterType, v: Version) -> String {
    register_name(t, 0, v)
        .map(|n| format!("{}#", n.trim_end_matches('0')))
        .unwrap_or_else(|| format!("{t:?}"))
}

impl<'a> Rules<'a> {
    pub(super) fn new(shader: &Shader, lim: &'static ModelLimits, api: Api) -> Self {
        let v = shader.version;
        let has_phase = shader.instructions().any(|i| i.opcode() == OP_PHASE);
        Rules {
            v,
            lim,
            has_phase,
            in_phase2: !has_phase,
            dz_reads: 0,
            t_selectors: HashMap::new(),
            declared: HashSet::new(),
            executable_seen: false,
            previous: None,
            blocks: Vec::new(),
            static_count: 0,
            routine: None,
            returned: false,
            labels: HashMap::new(),
            calls: Vec::new(),
            api,
            no_dcl: !shader.instructions().any(|i| i.opcode() == OP_DCL),
            temps: HashMap::new(),
            undefined_reported: HashSet::new(),
            subroutine_writes: dataflow::subroutine_writes(shader),
            samplers: dataflow::sampler_types(shader),
            dependent: DependentReads::new(shader),
            color_writes: HashMap::new(),
            depth_writes: 0,
            position_written: false,
        }
    }

    /// Checks one instruction (whose opcode, form and registers the syntax level already
    /// accepted).
    pub(super) fn instruction(&mut self, ins: &'a Instruction, report: &mut dyn FnMut(String)) {
        let Some(info) = ins.info else { return };
        let Some(ops) = &ins.operands else { return };
        let op = info.opcode;
        if op == OP_PHASE {
            self.in_phase2 = true;
            self.previous = Some(ins);
            // `phase---ps.md`: "the alpha component of temporary registers do not persist
            // across the transition".
            for m in self.temps.values_mut() {
                *m &= !MASK_A;
            }
            return;
        }
        let v = self.v;
        let m = info.mnemonic;
        let ps14 = v.kind == ShaderKind::Pixel && v.major == 1 && v.minor == 4;
        let ps1 = v.is_ps1();

        self.order_and_declarations(ins, report);
        self.flow(ins, report);
        if ins.coissue() {
            self.coissue(ins, report);
        }

        // Read-only and write-only registers.
        if let Some(dst) = &ops.dst {
            if info.layout == Layout::Operands && op != OP_TEXKILL {
                if let Some(t) = ty(dst).filter(|t| self.lim.read_only.contains(t)) {
                    report(format!(
                        "'{m}' writes {}, but {} registers are read-only in {v}",
                        name(dst, v),
                        kind_name(t, v)
                    ));
                }
            }
        }
        for src in &ops.srcs {
            if let Some(t) = ty(src).filter(|t| self.lim.write_only.contains(t)) {
                report(format!(
                    "'{m}' reads {}, but {} registers are write-only in {v}",
                    name(src, v),
                    kind_name(t, v)
                ));
            }
        }

        // ps_1_x register roles.
        if ps14 {
            let operands = ops.dst.iter().chain(&ops.srcs);
            if info.class == Class::Arithmetic {
                if let Some(t) = operands
                    .clone()
                    .find(|p| ty(p) == Some(RegisterType::AddrOrTexture))
                {
                    report(format!(
                        "'{m}' uses {}: in ps_1_4 only texld and texcrd read t# registers \
                         (texture coordinates), arithmetic instructions cannot",
                        name(t, v)
                    ));
                }
            }
            if !self.in_phase2 {
                if let Some(p) = operands
                    .clone()
                    .find(|p| ty(p) == Some(RegisterType::Input))
                {
                    report(format!(
                        "'{m}' reads {} in phase 1: ps_1_4 colour registers exist only in \
                         phase 2 (after 'phase')",
                        name(p, v)
                    ));
                }
            }
            if matches!(op, OP_TEX | OP_TEXCRD) {
                self.texld_14(ins, report);
            }
        }
        if ps14 && !matches!(op, OP_TEX | OP_TEXCRD) {
            for src in &ops.srcs {
                let md = src.source_modifier();
                if matches!(md, MOD_DZ | MOD_DW) {
                    report(format!(
                        "'{m}': {} is a texld/texcrd source modifier only (ps_1_4)",
                        if md == MOD_DZ { "_dz" } else { "_dw" }
                    ));
                }
            }
        }
        if ps1 && v.minor <= 3 {
            if op == OP_DP3 {
                if let Some(dst) = &ops.dst {
                    if !matches!(dst.write_mask(), 0xF | MASK_RGB) {
                        report(format!(
                            "dp3 writes .rgb or .rgba in {v} (dp3 runs in the colour pipe)"
                        ));
                    }
                }
            }
            if op == OP_CND {
                if let Some(s0) = ops.srcs.first() {
                    if !(ty(s0) == Some(RegisterType::Temp)
                        && s0.number() == 0
                        && s0.swizzle() == 0xFF)
                    {
                        report(format!(
                            "cnd compares r0.a in {v}: its first source is {}, not r0.a",
                            name(s0, v)
                        ));
                    }
                }
            }
        }

        // Source swizzles of arithmetic instructions.
        if v.kind == ShaderKind::Pixel && info.class == Class::Arithmetic {
            let mask = ops.dst.as_ref().map_or(0xF, |d| d.write_mask());
            for (i, src) in ops.srcs.iter().enumerate() {
                self.swizzle(src, mask, components_read(op, i, mask), m, report);
            }
        }

        // Texture sampling in SM 2+.
        if (v.kind == ShaderKind::Pixel && v.major >= 2 && matches!(op, OP_TEX | OP_TEXLDD))
            || op == OP_TEXLDL
        {
            self.texld_20(ins, report);
        }

        self.read_ports(ins, report);
        self.temporaries(ins, report);
        self.outputs(ins, report);
        self.dependent_read(ins, report);
        self.gradient_in_dynamic_flow(ins, report);

        self.previous = Some(ins);
    }

    /// Read ports: "the number of different registers (for each register type) that can be
    /// read in a single instruction" — the "# Read ports" column of each model's register
    /// page (ps_1_x: "Read Port Limit" of `…-ps-registers-ps-1-x.md`), in the limits
    /// table. The two constants of the 2_x `sincos` are its documented form
    /// (`sincos---vs.md`, `sincos---ps.md`: "src1 and src2 must be … D3DSINCOSCONST1 and
    /// D3DSINCOSCONST2"), not counted.
    fn read_ports(&self, ins: &Instruction, report: &mut dyn FnMut(String)) {
        let (Some(info), Some(ops)) = (ins.info, &ins.operands) else {
            return;
        };
        if info.layout != Layout::Operands {
            return;
        }
        let v = self.v;
        let mut read: Vec<&Param> = ops
            .srcs
            .iter()
            .enumerate()
            .filter(|(i, _)| !(info.opcode == OP_SINCOS && *i > 0))
            .map(|(_, p)| p)
            .collect();
        if info.opcode == OP_TEXKILL {
            read.extend(&ops.dst);
        }
        let predicate = ops.predicate.map(|token| Param {
            token,
            relative: None,
        });
        read.extend(&predicate);
        let mut seen: Vec<(RegisterType, Vec<u32>)> = Vec::new();
        // A relative read (`c0[a0.x]`) names no register that can be counted before the
        // shader runs; it is left out.
        for p in read.into_iter().filter(|p| !p.is_relative()) {
            let Some(t) = ty(p) else { continue };
            let key = p
                .register_type()
                .and_then(RegisterType::const_bank)
                .unwrap_or(0)
                * CONST_BANK_SIZE
                + p.number();
            match seen.iter_mut().find(|(s, _)| *s == t) {
                Some((_, regs)) if !regs.contains(&key) => regs.push(key),
                Some(_) => {}
                None => seen.push((t, vec![key])),
            }
        }
        for (t, regs) in seen {
            let Some(ports) = self.lim.register(t).and_then(|r| r.read_ports) else {
                continue;
            };
            if regs.len() as u32 > ports {
                let names: Vec<String> = regs
                    .iter()
                    .map(|&n| register_name(t, n, v).unwrap_or_else(|| n.to_string()))
                    .collect();
                report(format!(
                    "'{}' reads {} different {} registers ({}): {v} reads at most {ports} \
                     per instruction (read ports)",
                    info.mnemonic,
                    regs.len(),
                    kind_name(t, v),
                    names.join(", ")
                ));
            }
        }
    }

    /// Temporaries read before anything wrote them: `…-vs-registers-temporary.md` ("Vertex
    /// shaders that read a value from a temporary register before writing to it will fail
    /// the Direct3D API call to create the vertex shader"), `…-ps-registers-temporary.md`
    /// (ps_2_0 and later: "If a temporary register uses components that are not defined in
    /// previous code, shader validation will fail"), `…-ps-registers-ps-1-x.md` (ps_1_x:
    /// "Shader validation will fail … on any shader that attempts to read from a temporary
    /// register that has not been written by a previous instruction"). Component by
    /// component, in stream order; a `call` defines what the subroutines write; ps_1_4's
    /// `phase` undefines the alpha components (`phase---ps.md`).
    fn temporaries(&mut self, ins: &Instruction, report: &mut dyn FnMut(String)) {
        let v = self.v;
        for (r, comps) in dataflow::temp_reads(ins, v, &self.samplers) {
            let defined = self.temps.get(&r).copied().unwrap_or(0);
            let missing = comps & !defined;
            if missing != 0 && self.undefined_reported.insert(r) {
                let letters: String = (0..4)
                    .filter(|c| missing & (1 << c) != 0)
                    .map(|c| b"xyzw"[c] as char)
                    .collect();
                report(format!(
                    "'{}' reads r{r}.{letters}, which no earlier instruction writes \
                     (temporaries start undefined: {v} refuses a read before a write)",
                    ins.mnemonic()
                ));
            }
        }
        if matches!(ins.opcode(), OP_CALL | OP_CALLNZ) {
            for (r, m) in &self.subroutine_writes {
                *self.temps.entry(*r).or_default() |= m;
            }
        }
        if let Some((r, m)) = dataflow::temp_write(ins) {
            *self.temps.entry(r).or_default() |= m;
        }
    }

    /// Output registers. Shader model 2 (`…-ps-registers-output-color.md`, "Shader Model 2
    /// Restrictions"): oC# "can only be written with the mov - ps instruction", with no
    /// source swizzle or modifier and no write mask, at most once each; and ps_2_x may not
    /// write oC# "within dynamic flow control or predication". The page says the same of
    /// ps_3_0, but its own "Shader Model 3 Restrictions" let ps_3_0 write oC# "any number
    /// of times", the last write counting, or not at all "perhaps due to flow control", and
    /// Microsoft's compiler writes oC0 in both arms of an `if_comp` (fxc 9.29 on `[branch]
    /// if`: `texld oC0, v0, s0` / `mov oC0, c0`; vkd3d's conditional tests, run on Windows,
    /// draw with such shaders): not checked in ps_3_0. oDepth
    /// (`…-ps-registers-output-depth.md`): a replicate source swizzle and no write mask in
    /// every model; in ps_2_0/ps_2_x only `mov`, once, no source modifier, not inside flow
    /// control or predicated. The page's "no … instruction modifier" when writing oC# is
    /// not checked: fxc's own ps_2_0 output is said to write `mov_pp oC0, r0`, and no
    /// compiled shader at hand settles it. Which outputs must be written is checked at the
    /// end ([`Rules::finish`]).
    fn outputs(&mut self, ins: &Instruction, report: &mut dyn FnMut(String)) {
        let (Some(info), Some(ops)) = (ins.info, &ins.operands) else {
            return;
        };
        let Some(dst) = ops.dst.as_ref().filter(|_| info.layout == Layout::Operands) else {
            return;
        };
        let v = self.v;
        let m = info.mnemonic;
        let sm2 = v.kind == ShaderKind::Pixel && v.major == 2;
        let dynamic = ins.predicated()
            || self
                .blocks
                .iter()
                .any(|b| matches!(b, Block::IfDynamic { .. }));
        let src = ops.srcs.first();
        match ty(dst) {
            Some(RegisterType::RastOut) if dst.number() == 0 => self.position_written = true,
            Some(RegisterType::ColorOut) => {
                let n = dst.number();
                let writes = self.color_writes.entry(n).or_default();
                *writes += 1;
                if sm2 {
                    if info.opcode != OP_MOV {
                        report(format!("'{m}' writes oC{n}: {v} writes oC# only with mov"));
                    }
                    if src.is_some_and(|s| s.swizzle() != SWZ_IDENTITY || s.source_modifier() != 0)
                    {
                        report(format!(
                            "'{m}' writes oC{n} from a swizzled or modified source: {v} moves \
                             a whole register into oC#"
                        ));
                    }
                    if dst.write_mask() != 0xF {
                        report(format!(
                            "'{m}' writes oC{n} with a write mask: {v} writes all of oC#"
                        ));
                    }
                    if *writes == 2 {
                        report(format!("oC{n} is written twice: {v} writes each oC# once"));
                    }
                }
                if sm2 && v.minor == 1 && dynamic {
                    report(format!(
                        "'{m}' writes oC{n} inside dynamic flow control or predicated: {v} \
                         writes oC# outside them"
                    ));
                }
            }
            Some(RegisterType::DepthOut) => {
                self.depth_writes += 1;
                if dst.write_mask() != 0xF {
                    report(format!(
                        "'{m}' writes oDepth with a write mask: oDepth takes none"
                    ));
                }
                if src.is_some_and(|s| ![0x00, 0x55, 0xAA, 0xFF].contains(&s.swizzle())) {
                    report(format!(
                        "'{m}' writes oDepth from a source without a replicate swizzle (.x, \
                         .y, .z or .w)"
                    ));
                }
                if sm2 {
                    if info.opcode != OP_MOV {
                        report(format!(
                            "'{m}' writes oDepth: {v} writes oDepth only with mov"
                        ));
                    }
                    if src.is_some_and(|s| s.source_modifier() != 0) {
                        report(format!(
                            "'{m}' writes oDepth from a modified source: not in {v}"
                        ));
                    }
                    if self.depth_writes == 2 {
                        report(format!("oDepth is written twice: {v} writes it once"));
                    }
                    if ins.predicated() || !self.blocks.is_empty() {
                        report(format!(
                            "'{m}' writes oDepth inside flow control or predicated: not in {v}"
                        ));
                    }
                }
            }
            _ => {}
        }
    }

    /// ps_2_0 (and ps_2_x without `D3DPS20CAPS_NODEPENDENTREADLIMIT`, which the limits
    /// table treats as a capability the notes name): dependent texture reads up to the
    /// third order (`texld---ps-2-0.md`; [`DependentReads`]).
    fn dependent_read(&mut self, ins: &Instruction, report: &mut dyn FnMut(String)) {
        let Some(order) = self.dependent.step(ins, self.v) else {
            return;
        };
        if let Some((limit, None)) = self.lim.dependent_reads {
            if order > limit {
                report(format!(
                    "'{}' is a dependent texture read of order {order}: {} allows order \
                     {limit} at most (a sample whose coordinates come from a sample, {limit} \
                     deep)",
                    ins.mnemonic(),
                    self.v
                ));
            }
        }
    }

    /// ps_2_x and ps_3_0, "Interaction of Per-Pixel Flow Control With Screen Gradients" in
    /// `…-ps-instructions-flow-control.md`: texld, texldb, texldp (which compute gradients
    /// of their coordinates) and dsx, dsy are "not permitted inside flow control that could
    /// vary across the pixels" when "a temporary register is used for the texture
    /// coordinate" (dsx, dsy: "for the operand"); with "a read-only quantity … (may vary
    /// per-pixel, such as interpolated texture coordinates)" they are "permitted
    /// anywhere", and texldl, texldd take their level or gradients from the shader. A
    /// temporary counts wherever it was written, before the branch too ("where it appears
    /// that x is not modified across any of the branches, nevertheless still fall into
    /// scenario A"). Dynamic flow control here is `if_comp` and `if pred` (the blocks that
    /// add to the page's dynamic nesting). Microsoft's own output agrees: fxc samples
    /// interpolated inputs and constants inside `if_comp` (TESReloaded's shipped
    /// `ShadowMap.pso`, `texld r0, v1, s0` in `if_lt`, runs in the game), and refuses to
    /// branch over gradients of anything else (error X3528, "can't force branch with
    /// gradients on non-inputs"); see `testdata/msd3d/README.md`. Predicated gradients
    /// (the two pages disagree) and loops with `break_comp`/`breakp` (fxc refuses gradients
    /// in them outright, X3526) are left alone.
    fn gradient_in_dynamic_flow(&self, ins: &Instruction, report: &mut dyn FnMut(String)) {
        let v = self.v;
        if v.kind != ShaderKind::Pixel || v.major < 2 {
            return;
        }
        let (Some(info), Some(ops)) = (ins.info, &ins.operands) else {
            return;
        };
        if !matches!(info.opcode, OP_TEX | OP_DSX | OP_DSY)
            || !self
                .blocks
                .iter()
                .any(|b| matches!(b, Block::IfDynamic { .. }))
        {
            return;
        }
        let Some(src) = ops
            .srcs
            .first()
            .filter(|s| ty(s) == Some(RegisterType::Temp))
        else {
            return;
        };
        let m = if info.opcode == OP_TEX {
            TEXLD_VARIANTS
                .get(ins.controls() as usize)
                .copied()
                .unwrap_or(info.mnemonic)
        } else {
            info.mnemonic
        };
        let mend = if info.opcode == OP_TEX {
            "take the coordinates from an input or a constant, sample before the branch, or \
             use texldl, or texldd with gradients taken by dsx/dsy before the branch"
        } else {
            "take the operand from an input or a constant, or move it before the branch"
        };
        report(format!(
            "'{m}' computes screen gradients of {}, a temporary, inside dynamic flow control \
             (if_comp, if p0): {v} refuses that, as the neighbouring pixels it takes them \
             from may not run the branch; {mend}",
            name(src, v)
        ));
    }

    /// `dcl` comes before the first executable instruction, and registers of the types the
    /// model declares are declared before use (`dcl---ps.md`, `dcl-usage-input-register---vs.md`:
    /// "All dcl instructions must appear before the first executable instruction").
    fn order_and_declarations(&mut self, ins: &Instruction, report: &mut dyn FnMut(String)) {
        let (Some(info), Some(ops)) = (ins.info, &ins.operands) else {
            return;
        };
        let v = self.v;
        if info.opcode == OP_DCL {
            if self.api == Api::Direct3D8 {
                report(
                    "dcl does not exist in Direct3D 8 (its vertex declaration binds the \
                     inputs); remove it, or assemble for Direct3D 9"
                        .into(),
                );
            }
            if self.executable_seen {
                report(format!(
                    "dcl after the first executable instruction (declarations come first in {v})"
                ));
            }
            if let Some(d) = &ops.dst {
                if let Some(t) = ty(d) {
                    self.declared.insert((t, d.number()));
                }
            }
            return;
        }
        if info.layout != Layout::Operands {
            return;
        }
        self.executable_seen = true;
        for p in ops.dst.iter().chain(&ops.srcs) {
            let Some(t) = ty(p) else { continue };
            // Direct3D 8 binds vertex inputs through the vertex declaration.
            if self.api == Api::Direct3D8 && t == RegisterType::Input {
                continue;
            }
            if self.lim.declared.contains(&t)
                && !p.is_relative()
                && !self.declared.contains(&(t, p.number()))
            {
                let d3d8 = v.kind == ShaderKind::Vertex && v.major == 1 && self.no_dcl;
                report(if d3d8 {
                    format!(
                        "'{}' uses {} without a dcl: this is a Direct3D 8-style {v} shader \
                         (Direct3D 8 bound its inputs through the vertex declaration, not \
                         dcl), and a Direct3D 9 game needs one dcl_* line for each input \
                         register it reads; add them after the version line, with the usage \
                         of the game's vertex data (dcl_position v0, dcl_normal v1, \
                         dcl_texcoord v2, …), or assemble it for Direct3D 8 with `shaderfs \
                         d3d9 asm --d3d8`",
                        info.mnemonic,
                        name(p, v)
                    )
                } else {
                    format!(
                        "'{}' uses {} without a dcl ({} registers must be declared in {v})",
                        info.mnemonic,
                        name(p, v),
                        kind_name(t, v)
                    )
                });
                // One message per register.
                self.declared.insert((t, p.number()));
            }
        }
    }

    /// Co-issue (ps_1_1–1_4): two arithmetic instructions, one in the colour pipe (a mask
    /// within .rgb) and one in the alpha pipe (.a). Sources: DirectX 9 SDK "Instruction
    /// Pairing" (".rgb: vector pipe, .a: scalar pipe, .rgba: both, already a pair");
    /// `dx9-graphics-reference-asm-ps-1-x.md` ("texture addressing instructions each
    /// consume one slot, but arithmetic instructions can be paired").
    fn coissue(&mut self, ins: &Instruction, report: &mut dyn FnMut(String)) {
        let Some(prev) = self.previous else { return };
        let (Some(pi), Some(ci)) = (prev.info, ins.info) else {
            return;
        };
        if pi.class == Class::Free {
            return; // the syntax level reports the missing partner
        }
        if prev.coissue() {
            report(format!(
                "co-issued '{}' follows a co-issued instruction: a pair is two instructions",
                ci.mnemonic
            ));
            return;
        }
        for i in [pi, ci] {
            if i.class != Class::Arithmetic {
                report(format!(
                    "'{}' is in a co-issued pair, but only arithmetic instructions co-issue",
                    i.mnemonic
                ));
                return;
            }
        }
        let mask = |x: &Instruction| {
            x.operands
                .as_ref()
                .and_then(|o| o.dst.as_ref())
                .map_or(0, |d| d.write_mask())
        };
        let (a, b) = (mask(prev), mask(ins));
        let colour = |m: u8| m != 0 && m & MASK_A == 0;
        if !((a == MASK_A && colour(b)) || (b == MASK_A && colour(a))) {
            report(format!(
                "co-issued '{}' and '{}' must write colour (.rgb) in one and alpha (.a) in \
                 the other",
                pi.mnemonic, ci.mnemonic
            ));
        }
    }

    /// Source swizzles per model (the limits table's [`Swizzles`]). Only the components
    /// the instruction reads count (`read`): `mov r0.x, r1.yxxx` reads `.y`, a replicate.
    fn swizzle(&self, src: &Param, mask: u8, read: u8, m: &str, report: &mut dyn FnMut(String)) {
        let s = src.swizzle();
        let agrees = |allowed: u8| {
            (0..4).all(|i| read & (1 << i) == 0 || (s >> (2 * i)) & 3 == (allowed >> (2 * i)) & 3)
        };
        let replicate = [0x00, 0x55, 0xAA, 0xFF].into_iter().any(agrees);
        let v = self.v;
        let (ok, allowed) = match self.lim.swizzles {
            Swizzles::Ps11 => (
                s == SWZ_IDENTITY || s == 0xFF || (s == 0xAA && mask == MASK_A),
                ".xyzw, .w, and .z when the destination mask is .w",
            ),
            Swizzles::Ps14 => (
                agrees(SWZ_IDENTITY) || replicate,
                ".xyzw and the replicates .x/.y/.z/.w",
            ),
            Swizzles::Ps20 => (
                [SWZ_IDENTITY, 0xC9, 0xD2, 0x1B].into_iter().any(agrees) || replicate,
                ".xyzw, the replicates, .yzxw, .zxyw and .wzyx",
            ),
            Swizzles::Any => (true, ""),
        };
        if !ok {
            report(format!(
                "'{m}': swizzle {} of {} is not allowed in {v} (allowed: {allowed})",
                swizzle_text(s),
                name(src, v)
            ));
        }
    }

    /// ps_1_4 `texld`/`texcrd` (`texld---ps-1-4.md`, `texcrd---ps.md`): the destination is
    /// r#; the coordinates are t# (and, for texld in phase 2, r#) read as .xyz or .xyw;
    /// `_dz` only on texld with r# coordinates, at most twice a shader; `_dw` only with
    /// t#.xyw; no other modifier; every read of one t# uses the same selector.
    fn texld_14(&mut self, ins: &Instruction, report: &mut dyn FnMut(String)) {
        let (Some(info), Some(ops)) = (ins.info, &ins.operands) else {
            return;
        };
        let v = self.v;
        let m = info.mnemonic;
        if let Some(d) = &ops.dst {
            if ty(d) != Some(RegisterType::Temp) {
                report(format!("'{m}' writes r# in ps_1_4, not {}", name(d, v)));
            }
        }
        let Some(src) = ops.srcs.first() else { return };
        let t = ty(src);
        match (t, info.opcode) {
            (Some(RegisterType::AddrOrTexture), _) => {}
            (Some(RegisterType::Temp), OP_TEX) if self.has_phase && self.in_phase2 => {}
            (Some(RegisterType::Temp), OP_TEX) => report(format!(
                "texld reads {} before 'phase': r# coordinates are allowed in phase 2 only \
                 (phase 1 reads t#)",
                name(src, v)
            )),
            _ => report(format!(
                "'{m}' reads its coordinates from {}: {} (texture coordinate registers)",
                name(src, v),
                if info.opcode == OP_TEX {
                    "t#, or r# in phase 2"
                } else {
                    "t#"
                }
            )),
        }
        let s = src.swizzle();
        if !matches!(s, SWZ_IDENTITY | SWZ_XYZ | SWZ_XYW) {
            report(format!(
                "'{m}' reads {} with {}: the selectors are .xyz and .xyw",
                name(src, v),
                swizzle_text(s)
            ));
        }
        match src.source_modifier() {
            MOD_DZ => {
                self.dz_reads += 1;
                if info.opcode != OP_TEX || t != Some(RegisterType::Temp) {
                    report(format!(
                        "_dz is allowed on texld with r# coordinates, not on '{m}' {}",
                        name(src, v)
                    ));
                } else if self.dz_reads == 3 {
                    report("_dz is used more than twice (the limit is two a shader)".into());
                }
            }
            MOD_DW if t != Some(RegisterType::AddrOrTexture) || s != SWZ_XYW => {
                report(format!("_dw divides t#.xyw: write {}_dw.xyw", name(src, v)));
            }
            0 | MOD_DW => {}
            // Modifiers are for arithmetic; texld and texcrd have their own two
            // (`…-ps-registers-modifiers-ps-1-4.md`, `…-modifiers-source.md`).
            _ => report(format!(
                "'{m}' reads {} with a source modifier: ps_1_4's texld and texcrd take _dz and _dw only",
                name(src, v)
            )),
        }
        if t == Some(RegisterType::AddrOrTexture) {
            let sel = if s == SWZ_XYW { SWZ_XYW } else { SWZ_XYZ };
            let first = *self.t_selectors.entry(src.number()).or_insert(sel);
            if first != sel {
                report(format!(
                    "{} is read as {} here and as {} before: every read of a t# uses the \
                     same selector",
                    name(src, v),
                    swizzle_text(sel),
                    swizzle_text(first)
                ));
            }
        }
    }

    /// SM 2+ sampling (`texld---ps-2-0.md`, `texldl---ps.md`, `texldd---ps.md`): the
    /// sampler operand is s# without modifier; in ps_2_0/ps_2_x `texld` writes a whole r#
    /// and reads t#/r# coordinates and the sampler without modifier or swizzle.
    fn texld_20(&mut self, ins: &Instruction, report: &mut dyn FnMut(String)) {
        let (Some(info), Some(ops)) = (ins.info, &ins.operands) else {
            return;
        };
        let v = self.v;
        let m = info.mnemonic;
        if let Some(s) = ops.srcs.get(1) {
            if ty(s) != Some(RegisterType::Sampler) {
                report(format!(
                    "'{m}' samples through {}: the second source is a sampler (s#)",
                    name(s, v)
                ));
            } else if s.source_modifier() != 0 {
                report(format!(
                    "'{m}': the sampler {} takes no modifier",
                    name(s, v)
                ));
            }
        }
        if !(info.opcode == OP_TEX && v.kind == ShaderKind::Pixel && v.major == 2) {
            return;
        }
        if let Some(d) = &ops.dst {
            if ty(d) != Some(RegisterType::Temp) || d.write_mask() != 0xF {
                report(format!(
                    "'{m}' writes a whole r# in {v} (no write mask), not {}",
                    name(d, v)
                ));
            }
        }
        for (i, s) in ops.srcs.iter().enumerate() {
            if i == 0
                && !matches!(
                    ty(s),
                    Some(RegisterType::Temp | RegisterType::AddrOrTexture)
                )
            {
                report(format!(
                    "'{m}' reads its coordinates from {}: t# or r# in {v}",
                    name(s, v)
                ));
            }
            if s.swizzle() != SWZ_IDENTITY || s.source_modifier() != 0 {
                report(format!(
                    "'{m}': {} takes no swizzle or modifier in {v}",
                    name(s, v)
                ));
            }
        }
    }

    /// Flow control (`dx9-graphics-reference-asm-vs-instructions-flow-control.md`,
    /// `…-ps-instructions-flow-control.md`, `loop---vs.md`, `label---vs.md`,
    /// `ret---vs.md`): blocks close in order and do not straddle; `break` is inside a
    /// loop or rep; `aL` is read inside a loop; `label` directly follows `ret` and names a
    /// number the model has; nesting and static-flow counts stay within the table.
    fn flow(&mut self, ins: &Instruction, report: &mut dyn FnMut(String)) {
        let (Some(info), Some(ops)) = (ins.info, &ins.operands) else {
            return;
        };
        let op = info.opcode;
        let flow = self.lim.flow;
        let m = info.mnemonic;
        // After a `ret`, only a `label` may follow.
        if self.returned && op != OP_LABEL {
            report(format!(
                "'{m}' follows 'ret' outside any subroutine: after the main program's or a \
                 subroutine's ret comes 'label'"
            ));
            self.returned = false;
        }
        if op != OP_LOOP && self.routine.is_none() && !self.blocks.contains(&Block::Loop) {
            let uses_al = ops.srcs.iter().chain(&ops.dst).any(|p| {
                ty(p) == Some(RegisterType::Loop)
                    || p.relative.is_some_and(|a| {
                        RegisterType::from_u8((((a >> 28) & 7) | ((a >> 8) & 0x18)) as u8)
                            == Some(RegisterType::Loop)
                    })
            });
            if uses_al {
                report(format!(
                    "'{m}' uses aL outside a loop…endloop block (aL is the counter of the \
                     enclosing loop)"
                ));
            }
        }
        let bool_condition = ops
            .srcs
            .last()
            .is_some_and(|s| ty(s) == Some(RegisterType::ConstBool));
        match op {
            OP_IF => {
                let b = if bool_condition {
                    Block::IfStatic { has_else: false }
                } else {
                    Block::IfDynamic { has_else: false }
                };
                if bool_condition {
                    self.count_static(flow, m, report);
                }
                self.open(b, flow, m, report);
            }
            OP_IFC => self.open(Block::IfDynamic { has_else: false }, flow, m, report),
            OP_LOOP => {
                self.count_static(flow, m, report);
                self.open(Block::Loop, flow, m, report);
            }
            OP_REP => {
                self.count_static(flow, m, report);
                self.open(Block::Rep, flow, m, report);
            }
            OP_ELSE => match self.blocks.last_mut() {
                Some(Block::IfStatic { has_else } | Block::IfDynamic { has_else })
                    if !*has_else =>
                {
                    let was_static = matches!(self.blocks.last(), Some(Block::IfStatic { .. }));
                    if let Some(Block::IfStatic { has_else } | Block::IfDynamic { has_else }) =
                        self.blocks.last_mut()
                    {
                        *has_else = true;
                    }
                    if was_static {
                        self.count_static(flow, m, report);
                    }
                }
                Some(Block::IfStatic { .. } | Block::IfDynamic { .. }) => {
                    report("a second 'else' in one if block".into())
                }
                other => report(format!(
                    "'else' without an open if block{}",
                    other.map_or(String::new(), |b| format!(
                        " (the innermost open block is '{}')",
                        b.opener()
                    ))
                )),
            },
            OP_ENDIF => self.close(
                |b| matches!(b, Block::IfStatic { .. } | Block::IfDynamic { .. }),
                "if",
                m,
                report,
            ),
            OP_ENDLOOP => self.close(|b| b == Block::Loop, "loop", m, report),
            OP_ENDREP => self.close(|b| b == Block::Rep, "rep", m, report),
            OP_BREAK | OP_BREAKC | OP_BREAKP => {
                if !self
                    .blocks
                    .iter()
                    .any(|b| matches!(b, Block::Loop | Block::Rep))
                {
                    report(format!("'{m}' outside a loop or rep block"));
                }
                if op == OP_BREAKC {
                    self.momentary_dynamic(flow, m, report);
                }
            }
            OP_CALL | OP_CALLNZ => {
                if op == OP_CALL || bool_condition {
                    self.count_static(flow, m, report);
                } else {
                    self.momentary_dynamic(flow, m, report);
                }
                if let Some(l) = ops.srcs.first() {
                    self.label_number(l, report);
                    self.calls.push((self.routine, l.number(), ins.offset));
                }
            }
            OP_RET => {
                if let Some(b) = self.blocks.last() {
                    report(format!(
                        "'ret' inside an open '{}' block (ret ends the main program or a \
                         subroutine; close the block first)",
                        b.opener()
                    ));
                    self.blocks.clear();
                }
                self.returned = true;
            }
            OP_LABEL => {
                let after_ret = self.returned;
                self.returned = false;
                if !after_ret {
                    report(
                        "'label' must directly follow 'ret' (subroutines come after the main \
                         program)"
                            .into(),
                    );
                }
                if let Some(l) = ops.srcs.first() {
                    self.label_number(l, report);
                    if self.labels.insert(l.number(), ins.offset).is_some() {
                        report(format!("label l{} is defined twice", l.number()));
                    }
                    self.routine = Some(l.number());
                }
            }
            _ => {}
        }
    }

    fn label_number(&self, l: &Param, report: &mut dyn FnMut(String)) {
        if l.number() >= self.lim.labels {
            report(format!(
                "label l{} is out of range: {} has l0 to l{}",
                l.number(),
                self.v,
                self.lim.labels.saturating_sub(1)
            ));
        }
    }

    fn depth(&self, f: impl Fn(&Block) -> bool) -> u32 {
        self.blocks.iter().filter(|b| f(b)).count() as u32
    }

    fn open(
        &mut self,
        b: Block,
        flow: Option<FlowLimits>,
        m: &str,
        report: &mut dyn FnMut(String),
    ) {
        self.blocks.push(b);
        let Some(f) = flow else { return };
        let v = self.v;
        match b {
            Block::Loop | Block::Rep => {
                let d = self.depth(|b| matches!(b, Block::Loop | Block::Rep));
                if d > f.loop_rep {
                    report(format!(
                        "'{m}' nests loop/rep blocks {d} deep ({v} allows {})",
                        f.loop_rep
                    ));
                }
            }
            Block::IfStatic { .. } => {
                if let Some(max) = f.static_depth {
                    let d = self.depth(|b| matches!(b, Block::IfStatic { .. }));
                    if d > max {
                        report(format!(
                            "'{m}' nests static if blocks {d} deep ({v} allows {max})"
                        ));
                    }
                }
            }
            Block::IfDynamic { .. } => {
                let d = self.depth(|b| matches!(b, Block::IfDynamic { .. }));
                if d > f.dynamic_depth {
                    report(format!(
                        "'{m}' nests dynamic flow control {d} deep ({v} allows {})",
                        f.dynamic_depth
                    ));
                }
            }
        }
    }

    fn momentary_dynamic(
        &mut self,
        flow: Option<FlowLimits>,
        m: &str,
        report: &mut dyn FnMut(String),
    ) {
        let Some(f) = flow else { return };
        let d = self.depth(|b| matches!(b, Block::IfDynamic { .. })) + 1;
        if d > f.dynamic_depth {
            report(format!(
                "'{m}' nests dynamic flow control {d} deep ({} allows {})",
                self.v, f.dynamic_depth
            ));
        }
    }

    fn count_static(&mut self, flow: Option<FlowLimits>, m: &str, report: &mut dyn FnMut(String)) {
        let Some(max) = flow.and_then(|f| f.static_count) else {
            return;
        };
        self.static_count += 1;
        if self.static_count == max + 1 {
            report(format!(
                "'{m}' is static flow instruction {}: {} allows {max} a shader",
                self.static_count, self.v
            ));
        }
    }

    fn close(
        &mut self,
        matches: impl Fn(Block) -> bool,
        opener: &str,
        m: &str,
        report: &mut dyn FnMut(String),
    ) {
        match self.blocks.last() {
            Some(&b) if matches(b) => {
                self.blocks.pop();
            }
            Some(&b) => report(format!(
                "'{m}' closes '{opener}', but the innermost open block is '{}' (blocks may \
                 not straddle)",
                b.opener()
            )),
            None => report(format!("'{m}' without '{opener}'")),
        }
    }

    /// Checks that need the whole stream: blocks left open, calls to labels that do not
    /// exist, recursion and call nesting. Diagnostics at `end` (the end token) unless a
    /// call is at fault.
    pub(super) fn finish(self, end: usize, out: &mut dyn FnMut(usize, String)) {
        let v = self.v;
        // ps_1_x: "The value in r0 at the end of the shader is the pixel color"
        // (`…-ps-registers-ps-1-x.md`), so r0 is read at the end and must have been written.
        if v.is_ps1() && self.temps.get(&0).copied().unwrap_or(0) == 0 {
            out(
                end,
                format!("r0 is the pixel colour of a {v} shader and nothing writes it"),
            );
        }
        // `…-ps-registers-output-color.md`, shader model 2: "oC0 must be always written in
        // the shader" and "If oCn is written, then oC0 - oCn-1 must also be written".
        if v.kind == ShaderKind::Pixel && v.major == 2 {
            if !self.color_writes.contains_key(&0) {
                out(
                    end,
                    format!("{v} must write oC0 (mov oC0, r#), and nothing does"),
                );
            }
            if let Some(&n) = self.color_writes.keys().max() {
                for gap in (0..n).filter(|k| !self.color_writes.contains_key(k)) {
                    out(
                        end,
                        format!(
                            "oC{n} is written but oC{gap} is not: {v} writes oC0 to oCn in a row"
                        ),
                    );
                }
            }
        }
        // `dx9-graphics-reference-asm-vs-registers-position.md`: oPos "must be written by
        // the vertex shader" (the register of vs_1_1 to vs_2_x).
        if v.kind == ShaderKind::Vertex && v.major < 3 && !self.position_written {
            out(end, format!("{v} must write oPos, and nothing does"));
        }
        if let Some(b) = self.blocks.last() {
            out(
                end,
                format!(
                    "the shader ends inside a '{}' block ({} open)",
                    b.opener(),
                    self.blocks.len()
                ),
            );
        }
        for &(_, callee, offset) in &self.calls {
            if !self.labels.contains_key(&callee) {
                out(
                    offset,
                    format!("call to l{callee}, which no 'label' defines"),
                );
            }
        }
        let Some(f) = self.lim.flow else { return };
        // Depth of the call chains from each routine (None: recursion).
        fn depth(
            r: Option<u32>,
            calls: &[(Option<u32>, u32, usize)],
            stack: &mut Vec<Option<u32>>,
        ) -> Option<u32> {
            if stack.contains(&r) {
                return None;
            }
            stack.push(r);
            let mut d = 0;
            for &(caller, callee, _) in calls {
                if caller == r {
                    d = d.max(1 + depth(Some(callee), calls, stack)?);
                }
            }
            stack.pop();
            Some(d)
        }
        for &(caller, callee, offset) in &self.calls {
            if caller.is_some() {
                continue;
            }
            match depth(Some(callee), &self.calls, &mut Vec::new()) {
                None => {
                    out(
                        offset,
                        format!("l{callee} calls itself (directly or not): no recursion"),
                    );
                    return;
                }
                Some(d) if d + 1 > f.call => {
                    out(
                        offset,
                        format!(
                            "the call to l{callee} nests calls {} deep ({} allows {})",
                            d + 1,
                            self.v,
                            f.call
                        ),
                    );
                    return;
                }
                _ => {}
            }
        }
    }
}

fn swizzle_text(s: u8) -> String {
    let c = |i: u8| b"xyzw"[((s >> (2 * i)) & 3) as usize] as char;
    format!(".{}{}{}{}", c(0), c(1), c(2), c(3))
}
