//! Direct3D 9 bytecode as HLSL: globals named and typed from the constant table, inputs
//! and outputs as parameters with the semantics of the `dcl` lines (or of the ps_1_x
//! register conventions), `def` constants as literals, and the code as statements over
//! `float4` registers, a value folded into the statement that reads it when one read alone
//! takes it in the same block ([`fold`]).
//!
//! The text compiles back, with shaderfs's compiler or Microsoft's, for the shader's
//! profile and entry `main`, into a shader that behaves as the original and binds the same
//! constants to the same registers. `if`/`else`, `rep` and `loop` (as `for`, `aL` a
//! counter of its own), `break`, predication (`bool4 p0`, a lane kept where it is false),
//! relative addressing (an element of the constant array, or of an array declared over
//! the loose registers so read; of an array of matrices or structs where the code shows
//! `a0` to be an element index times the element's registers, [`address`]), `a0` (an
//! `int4`) and subroutines (`call`, `label`: a
//! function each, the registers static globals) are written out. Bump-environment mapping
//! (`texbem`, `texbeml`, `bem`: its matrix is texture-stage state, which HLSL cannot name)
//! keeps the texture stage as an `asm { }` block, which shaderfs's compiler takes
//! ([`crate::shader::hlsl::inline_asm`]) and Microsoft's do not. A subroutine calling
//! itself is refused with the instruction and its offset. What the text cannot say as the
//! shader does (a constant the table gives a type HLSL has not, [`table`]; vs_1_1's
//! `expp`/`logp` at an infinity; a vertex shader without a position, which the text gives
//! one of 0; the asm block) is said in its first comment.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::bytecode::{self, Instruction, Param, ShaderKind, Version};
use super::ctab::{
    type_name, Class, Constant, ConstantTable, ParamType, RegisterSet, TypeInfo, MAX_TYPE_NODES,
};
use super::limits;
use super::registers::RegisterType;
use super::syntax::USAGES;

mod address;
mod table;

const LANES: [char; 4] = ['x', 'y', 'z', 'w'];

/// Why a shader could not be decompiled: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecompileError {
    /// Byte offset of the instruction (0 for the shader as a whole).
    pub offset: usize,
    pub message: String,
}

impl std::fmt::Display for DecompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.message)
    }
}

fn fail<T>(ins: &Instruction, what: impl Into<String>) -> Result<T, DecompileError> {
    Err(DecompileError {
        offset: ins.offset,
        message: format!("'{}': {}", ins.mnemonic(), what.into()),
    })
}

/// HLSL for the shader in `bytes`.
pub fn decompile(bytes: &[u8]) -> Result<String, DecompileError> {
    decompiled(bytes).map(|d| d.text)
}

fn decompiled(bytes: &[u8]) -> Result<Decompiled, DecompileError> {
    let whole = |message: String| DecompileError { offset: 0, message };
    let shader = bytecode::parse(bytes).map_err(|e| whole(format!("{e:?}")))?;
    let (table, unread) = table_of(bytes);
    // Each constant's type is written out whole: as many type infos as a table may hold.
    let nodes = table.as_ref().map_or(0, |t| {
        t.constants
            .iter()
            .fold(0usize, |n, c| n.saturating_add(c.type_info.nodes()))
    });
    if nodes > MAX_TYPE_NODES {
        return Err(whole(format!(
            "constant table: its types take {nodes} type infos written out, more than {MAX_TYPE_NODES}"
        )));
    }
    match structured(&shader, table, unread) {
        // What the statements cannot say about an instruction: the shader as its
        // instructions, in an asm block.
        Err(e) if e.offset > 0 => {
            let (table, unread) = table_of(bytes);
            let why = format!("at byte {}, {}", e.offset, e.message);
            as_asm(&shader, table, unread, &why).ok_or(e)
        }
        done => done,
    }
}

/// The constant table of the shader in `bytes`, if it has one; or, where it does not
/// read, why, for the first comment (the game binds by register: the constants are then
/// read by their registers).
fn table_of(bytes: &[u8]) -> (Option<ConstantTable>, Option<String>) {
    match ConstantTable::from_bytecode(bytes) {
        Ok(t) => (t, None),
        Err(e) => (
            None,
            Some(format!(
                "the constant table does not read ({e}): constants are named by their registers"
            )),
        ),
    }
}

/// The shader as statements: `table` its constant table, if it reads (or why not).
fn structured(
    shader: &bytecode::Shader,
    table: Option<ConstantTable>,
    unread: Option<String>,
) -> Result<Decompiled, DecompileError> {
    let mut d = Decompiler::new(shader.version, table);
    d.notes.extend(unread);
    let mut instructions: Vec<&Instruction> = shader.instructions().collect();
    coissued_in_order(&mut instructions)?;
    for ins in &instructions {
        d.declare(ins)?;
    }
    if !d.wide_defs.is_empty() {
        let defs: Vec<String> = d.wide_defs.iter().map(|n| format!("c{n}")).collect();
        d.notes.push(format!(
            "def {} {} values beyond ps_1_x's [-1, 1]: read as a card of that range reads them, clamped (a card of a wider range reads more)",
            defs.join(", "),
            if defs.len() > 1 { "hold" } else { "holds" }
        ));
    }
    if let Some(t) = d.table.take() {
        let (t, notes) = table::declarable(t, d.version, &d.samplers);
        d.table = Some(t);
        d.notes.splice(0..0, notes);
    }
    // Instructions that compute (not declarations, definitions or comments).
    let code = instructions
        .iter()
        .filter(|i| {
            !matches!(
                i.opcode(),
                0x00 | 0x1F | 0x51 | 0x30 | 0x2F | 0xFFFE | 0xFFFF
            )
        })
        .count();
    // A pixel shader (past ps_1_x, whose colour is r0's) that writes no colour or depth
    // and discards nothing: nothing it computes is seen, and the text computes nothing.
    let seen = |i: &&Instruction| {
        i.mnemonic() == "texkill"
            || i.operands.as_ref().and_then(|o| o.dst).is_some_and(|d| {
                matches!(
                    d.register_type(),
                    Some(RegisterType::ColorOut | RegisterType::DepthOut)
                )
            })
    };
    // Microsoft's compilers refuse a pixel shader without a colour (X4530): the text
    // writes 0 to oC0, which the shader leaves undefined.
    if d.pixel() && !d.ps1() && !instructions.iter().any(seen) {
        d.notes.push(format!(
            "the shader writes no colour or depth and discards nothing: what its {code} instructions compute is seen nowhere, and the text leaves it out; HLSL needs a colour, and oC0 here is 0 (undefined on the hardware)"
        ));
        instructions.retain(|i| i.opcode() == 0xFFFE);
        d.outputs.insert(
            (RegisterType::ColorOut as u8, 0),
            ("out float4 oC0 : COLOR0".into(), "oC0".into()),
        );
    }
    d.relative_base = d.loose_array(&instructions);
    if !d.pixel() {
        // Arrays of matrices and structs: the registers of one element, by register.
        let element = |n: u32| {
            d.constant(RegisterSet::FLOAT4, n).and_then(|(c, _)| {
                let r = registers_one(&c.type_info);
                (c.type_info.elements > 1 && r > 1).then_some(r)
            })
        };
        d.elements = address::elements(&instructions, &d.defs, element);
    }
    d.input_array(&instructions)?;
    let mut at = d.texture_stage(&instructions)?;
    while at < instructions.len() {
        at += match d.merged_product(&instructions[at..])? {
            0 => {
                d.statement(instructions[at])?;
                d.track_a0(instructions[at]);
                1
            }
            n => n,
        };
    }
    if !d.game_loops.is_empty() {
        let regs: Vec<String> = d.game_loops.iter().map(|n| format!("i{n}")).collect();
        d.notes.push(format!(
            "{} {} set by the game: the text's loop runs aL from 0 by 1, as D3DX sets an int (n, 0, 1, 0); compiled, it is `loop aL, {}` again, which starts and steps aL as the game's y and z say",
            regs.join(", "),
            if regs.len() > 1 { "are" } else { "is" },
            regs[0]
        ));
    }
    let position = d
        .outputs
        .values()
        .any(|(decl, _)| decl.ends_with(" : POSITION") || decl.ends_with(" : POSITION0"));
    if !d.pixel() && !position {
        // Every HLSL vertex shader writes a position (Microsoft's compilers refuse one
        // that does not, X4541): the text writes 0, where the shader leaves it undefined.
        let (key, decl, name) = match d.version.major {
            3 => {
                let used: BTreeSet<u32> = d.outputs.keys().map(|k| k.1).collect();
                let n = (0..).find(|n| !used.contains(n)).unwrap_or(0);
                let name = format!("o{n}");
                let decl = format!("out float4 {name} : POSITION0");
                ((RegisterType::Output as u8, n), decl, name)
            }
            _ => (
                (RegisterType::RastOut as u8, 0),
                "out float4 oPos : POSITION".to_string(),
                "oPos".to_string(),
            ),
        };
        d.notes.push(format!(
            "the shader writes no position (undefined on the hardware); HLSL needs one, and {name} here is 0"
        ));
        d.outputs.insert(key, (decl, name));
    }
    Ok(d.finish(code))
}

/// The shader as one `asm { }` block, the body of `void main()`, the table's constants
/// declared on their registers: for a shader whose code HLSL cannot say (`why`, where the
/// statements stopped). `None` where an instruction has no text to assemble back.
fn as_asm(
    shader: &bytecode::Shader,
    table: Option<ConstantTable>,
    unread: Option<String>,
    why: &str,
) -> Option<Decompiled> {
    let version = shader.version;
    let mut notes = vec![format!(
        "written as asm: {why}; the shader is its instructions in an asm block, which shaderfs's compiler takes and Microsoft's refuse inside a function (X3064)"
    )];
    notes.extend(unread);
    let mut samplers = BTreeMap::new();
    let mut block = format!("        {version}\n");
    let mut depth = 0usize;
    let mut instructions = 0;
    for ins in shader.instructions() {
        let op = ins.opcode();
        if matches!(op, 0xFFFE | 0xFFFF) {
            continue;
        }
        if op == 0x1F {
            if let Some(ops) = &ins.operands {
                if let (Some(decl), Some(dst)) = (ops.decl, ops.dst) {
                    if dst.register_type() == Some(RegisterType::Sampler) {
                        samplers.insert(dst.number(), declared_sampler(decl));
                    }
                }
            }
        } else if !matches!(op, 0x51 | 0x30 | 0x2F) {
            instructions += 1;
        }
        // endif, endloop, endrep and else close a block; if, ifc, loop, rep and else
        // open one.
        if matches!(op, 0x2A | 0x2B | 0x1D | 0x27) {
            depth = depth.saturating_sub(1);
        }
        let text = super::disasm::instruction_text(ins, version)?;
        let plus = if ins.coissue() { "+ " } else { "" };
        let _ = writeln!(
            block,
            "        {}{plus}{text}",
            "    ".repeat(depth.min(16))
        );
        if matches!(op, 0x28 | 0x29 | 0x2A | 0x1B | 0x26) {
            depth += 1;
        }
    }
    let mut out = format!(
        "// {version}: decompiled by shaderfs ({instructions} instructions, written as asm)\n"
    );
    let table = table.map(|t| {
        let (t, more) = table::declarable(t, version, &samplers);
        notes.extend(more);
        t
    });
    for note in &notes {
        let _ = writeln!(out, "// {}", one_line(note));
    }
    for c in table.iter().flat_map(|t| &t.constants) {
        let _ = writeln!(out, "{}", declaration(c));
    }
    let _ = write!(out, "\nvoid main()\n{{\n    asm {{\n{block}    }}\n}}\n");
    Some(Decompiled {
        text: out,
        instructions,
        statements: instructions,
        as_asm: true,
    })
}

/// A note as one comment line: a name from the table may hold a line break or another
/// control character, which would end the comment; each is written escaped (`\n`).
fn one_line(note: &str) -> String {
    note.chars()
        .map(|c| match c.is_control() {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect()
}

/// The HLSL type of a sampler its `dcl` token declares.
fn declared_sampler(decl: u32) -> &'static str {
    match (decl >> 27) & 0xF {
        1 => "sampler1D",
        3 => "samplerCUBE",
        4 => "sampler3D",
        _ => "sampler2D",
    }
}

struct Decompiler {
    version: Version,
    table: Option<ConstantTable>,
    /// `def`/`defi`/`defb` literals by register number.
    defs: BTreeMap<u32, [f32; 4]>,
    defis: BTreeMap<u32, [i32; 4]>,
    defbs: BTreeMap<u32, String>,
    /// Samplers by number: the HLSL type from their `dcl` (2D when none says).
    samplers: BTreeMap<u32, &'static str>,
    /// Input parameters: (declaration, name) by register key.
    inputs: BTreeMap<(u8, u32), (String, String)>,
    outputs: BTreeMap<(u8, u32), (String, String)>,
    /// ps_1_x texture registers written by the shader (read as inputs before).
    texture_written: BTreeSet<u32>,
    /// Constants not in the table (declared by register).
    loose: BTreeSet<(u8, u32)>,
    /// The body, a statement a line, before [`fold`] puts values into their readers.
    stmts: Vec<Stmt>,
    /// Every read of a register a statement may name (a temporary, a ps_1_x texture
    /// register written by the shader), by the marker its text holds.
    reads: Vec<Read>,
    depth: usize,
    /// The loops open, innermost last: each one's number (`aL0`, `k0`) and what it does at
    /// the end of its body (`aL0 += 1;`).
    loops: Vec<(usize, Option<Kind>)>,
    next_loop: usize,
    /// The loops whose aL something reads at, by what it is divided by: 1 for aL itself,
    /// an element's registers for an array of matrices or structs read at aL, which the
    /// text counts by elements (`aL0_3`, aL / 3).
    counters_read: BTreeMap<usize, BTreeSet<u32>>,
    /// Each `loop`'s aL start and step where a `defi` gives them, by loop.
    loop_by: BTreeMap<usize, (i32, i32)>,
    /// Loose float constants read at a relative address: an array from the lowest
    /// register so read (first, length).
    relative_base: Option<(u32, u32)>,
    /// Runs of `def` constants read at a relative address, by first register: each a
    /// `static const` array of their values (`defs_c0[a0.x + 3]`).
    def_arrays: BTreeSet<u32>,
    /// ps_1_x `def`s with values beyond [-1, 1], read clamped.
    wide_defs: Vec<u32>,
    /// Int registers the game sets that a `loop aL` runs on: its start and step are the
    /// game's too.
    game_loops: Vec<u32>,
    /// Inputs read at a relative address (`v0[aL]`): one array of them, (first, length).
    input_array: Option<(u32, u32)>,
    /// texm3x2pad/texm3x3pad rows waiting for their last row.
    pad_rows: Vec<String>,
    /// What the first comment says the text does not express as the shader has it.
    notes: Vec<String>,
    /// Subroutines: each label's number and the statement its body starts at (the main
    /// program's end).
    functions: Vec<(u32, usize)>,
    /// Subroutines a subroutine before them calls: declared before the first.
    ahead: BTreeSet<u32>,
    /// `a0` lanes the text writes as element indices ([`address`]).
    elements: address::Elements,
    /// `a0` lanes that hold a `def`'s literal here ([`Decompiler::track_a0`]).
    a0_known: [Option<i64>; 4],
}

impl Decompiler {
    fn new(version: Version, table: Option<ConstantTable>) -> Decompiler {
        Decompiler {
            version,
            table,
            defs: BTreeMap::new(),
            defis: BTreeMap::new(),
            defbs: BTreeMap::new(),
            samplers: BTreeMap::new(),
            inputs: BTreeMap::new(),
            outputs: BTreeMap::new(),
            texture_written: BTreeSet::new(),
            loose: BTreeSet::new(),
            stmts: Vec::new(),
            reads: Vec::new(),
            depth: 1,
            loops: Vec::new(),
            next_loop: 0,
            counters_read: BTreeMap::new(),
            loop_by: BTreeMap::new(),
            relative_base: None,
            game_loops: Vec::new(),
            input_array: None,
            def_arrays: BTreeSet::new(),
            wide_defs: Vec::new(),
            pad_rows: Vec::new(),
            notes: Vec::new(),
            functions: Vec::new(),
            ahead: BTreeSet::new(),
            elements: address::Elements::default(),
            a0_known: [None; 4],
        }
    }

    fn pixel(&self) -> bool {
        self.version.kind == ShaderKind::Pixel
    }

    fn ps1(&self) -> bool {
        self.version.is_ps1()
    }

    /// ps_1_1–1_3: texture instructions of their own (`tex`, `texreg2ar` …), `t` registers
    /// a texture instruction writes.
    fn ps1_texture_stage(&self) -> bool {
        self.ps1() && self.version.minor < 4
    }

    /// The label a call in the code so far goes to: one declared ahead where a subroutine
    /// calls one that follows it.
    fn callee(&mut self, ins: &Instruction, label: &Param) -> Result<u32, DecompileError> {
        let n = label.number();
        match self.functions.last() {
            Some(&(own, _)) if own == n => fail(
                ins,
                "a subroutine calling itself, which HLSL's functions cannot",
            ),
            Some(_) if !self.functions.iter().any(|f| f.0 == n) => {
                self.ahead.insert(n);
                Ok(n)
            }
            _ => Ok(n),
        }
    }

    /// `dcl` and `def` lines: what the registers are.
    fn declare(&mut self, ins: &Instruction) -> Result<(), DecompileError> {
        let Some(ops) = &ins.operands else {
            return fail(ins, "operands that do not fit the instruction");
        };
        match ins.opcode() {
            0x1F => {
                let (Some(decl), Some(dst)) = (ops.decl, ops.dst) else {
                    return Ok(());
                };
                let ty = reg_type(ins, &dst)?;
                if ty == RegisterType::Sampler {
                    self.samplers.insert(dst.number(), declared_sampler(decl));
                    return Ok(());
                }
                let usage = usage_name((decl & 0x1F) as u8);
                let index = (decl >> 16) & 0xF;
                let semantic = if index == 0 && matches!(usage.as_str(), "FOG" | "PSIZE" | "DEPTH")
                {
                    usage.clone()
                } else {
                    format!("{usage}{index}")
                };
                let key = (dst.register_type_value(), dst.number());
                match ty {
                    RegisterType::Input => {
                        let name = format!("v{}", dst.number());
                        let semantic = if self.pixel() && self.version.major < 3 {
                            format!("COLOR{}", dst.number())
                        } else {
                            semantic
                        };
                        self.inputs
                            .insert(key, (format!("float4 {name} : {semantic}"), name));
                    }
                    RegisterType::AddrOrTexture if self.pixel() => {
                        let name = format!("t{}", dst.number());
                        self.inputs.insert(
                            key,
                            (format!("float4 {name} : TEXCOORD{}", dst.number()), name),
                        );
                    }
                    RegisterType::Output => {
                        // As wide as its dcl's mask when that starts at .x (a point
                        // size is a scalar); a float4 written at its lanes when not
                        // (`dcl_texcoord o1.w`: a compiler places a float2 at .xy).
                        let name = format!("o{}", dst.number());
                        // A position is a float4 whatever its mask: HLSL refuses one
                        // with fewer lanes (the lanes the mask leaves out are 0).
                        let position = usage == "POSITION" && index == 0;
                        let lanes = match dst.write_mask() {
                            0xF => 4,
                            m if position => {
                                let left: String = (0..4)
                                    .filter(|l| m & (1 << l) == 0)
                                    .map(|l| LANES[l])
                                    .collect();
                                self.notes.push(format!(
                                    "{name} : {semantic} is declared without .{left} (undefined on the hardware); HLSL writes a position's four lanes, and .{left} here is 0"
                                ));
                                4
                            }
                            m @ (1 | 3 | 7) => m.count_ones(),
                            _ => 4,
                        };
                        let ty = match (usage.as_str(), lanes) {
                            ("PSIZE", _) | (_, 1) => "float".to_string(),
                            (_, n) => format!("float{n}"),
                        };
                        self.outputs
                            .insert(key, (format!("out {ty} {name} : {semantic}"), name));
                    }
                    RegisterType::MiscType => {
                        let (decl, name) = if dst.number() == 0 {
                            ("float2 vpos : VPOS".to_string(), "vpos")
                        } else {
                            ("float vface : VFACE".to_string(), "vface")
                        };
                        self.inputs.insert(key, (decl, name.to_string()));
                    }
                    _ => {}
                }
            }
            0x51 => {
                let Some(dst) = ops.dst else { return Ok(()) };
                // ps_1_x reads a constant register clamped to its range, [-1, 1] on
                // the least card: the literal is what the shader sees there (the first
                // comment says so where a def is beyond it).
                let range = if self.ps1() { 1.0 } else { f32::INFINITY };
                let mut v = [0f32; 4];
                for (v, &b) in v.iter_mut().zip(&ops.immediates) {
                    *v = f32::from_bits(b).clamp(-range, range);
                }
                if v.iter()
                    .zip(&ops.immediates)
                    .any(|(v, &b)| v.to_bits() != b)
                {
                    self.wide_defs.push(dst.number());
                }
                self.defs.insert(dst.number(), v);
            }
            0x30 => {
                let Some(dst) = ops.dst else { return Ok(()) };
                let mut v = [0i32; 4];
                for (v, &b) in v.iter_mut().zip(&ops.immediates) {
                    *v = b as i32;
                }
                self.defis.insert(dst.number(), v);
            }
            0x2F => {
                let Some(dst) = ops.dst else { return Ok(()) };
                let v = ops.immediates.first().copied().unwrap_or(0) != 0;
                self.defbs.insert(dst.number(), v.to_string());
            }
            _ => {}
        }
        Ok(())
    }

    /// A ps_1_x shader that maps bumps (`texbem`, `texbeml`, `bem`) keeps its texture
    /// stage as an `asm { }` block (shaderfs's compiler's, [`crate::shader::hlsl::inline_asm`]):
    /// in ps_1_1–1_3 its texture instructions, in ps_1_4 its first phase and the second's
    /// texture instructions. The registers it writes are then read by name. Returns the
    /// number of instructions the block took (0: no block).
    fn texture_stage(&mut self, instructions: &[&Instruction]) -> Result<usize, DecompileError> {
        use crate::shader::hlsl::inline_asm::{TEXTURE_1, TEXTURE_4};
        if !self.ps1() || !instructions.iter().any(|i| asm_only(i.mnemonic())) {
            return Ok(0);
        }
        let v14 = self.version.minor == 4;
        let texture = |i: &Instruction| match v14 {
            true => TEXTURE_4.contains(&i.mnemonic()),
            false => TEXTURE_1.iter().any(|&(t, _)| t == i.mnemonic()),
        };
        let declaration = |i: &Instruction| matches!(i.opcode(), 0x51 | 0xFFFE);
        let end = match v14 {
            // Without a phase there is no first one for `bem` (the statement refuses it).
            true => match instructions.iter().position(|i| i.mnemonic() == "phase") {
                None => return Ok(0),
                Some(phase) => {
                    let after = instructions[phase + 1..]
                        .iter()
                        .position(|i| !texture(i) && !declaration(i))
                        .map_or(instructions.len(), |k| phase + 1 + k);
                    after
                }
            },
            false => instructions
                .iter()
                .position(|i| !texture(i) && !declaration(i))
                .unwrap_or(instructions.len()),
        };
        let mut lines = Vec::new();
        let mut defs = Vec::new();
        for ins in &instructions[..end] {
            if declaration(ins) {
                continue;
            }
            let Some(text) = super::disasm::instruction_text(ins, self.version) else {
                return fail(ins, "an instruction with no text");
            };
            let Some(ops) = ins.operands.clone() else {
                return fail(ins, "operands that do not fit the instruction");
            };
            for src in &ops.srcs {
                if src.register_type() == Some(RegisterType::Const) {
                    let n = src.number();
                    // A def the block reads goes into it, as the shader has it.
                    let def = instructions.iter().find(|i| {
                        i.opcode() == 0x51
                            && i.operands
                                .as_ref()
                                .and_then(|o| o.dst)
                                .is_some_and(|d| d.number() == n)
                    });
                    match def.and_then(|i| super::disasm::instruction_text(i, self.version)) {
                        Some(t) if !defs.contains(&t) => defs.push(t),
                        Some(_) => {}
                        None => {
                            self.float_const(ins, n)?;
                        }
                    }
                }
            }
            if let Some(dst) = ops.dst {
                let n = dst.number();
                let sampled = match v14 {
                    true => ins.mnemonic() == "texld",
                    false => TEXTURE_1.iter().any(|&(t, s)| t == ins.mnemonic() && s),
                };
                if sampled {
                    self.sampler(n);
                }
                if !v14 && ins.mnemonic() != "texkill" {
                    self.texture_written.insert(n);
                }
            }
            lines.push(text);
        }
        let kept = |bump: bool| {
            instructions[..end]
                .iter()
                .map(|i| i.mnemonic())
                .filter(|&m| asm_only(m) && matches!(m, "texbem" | "texbeml" | "bem") == bump)
                .fold(Vec::new(), |mut v, m| {
                    if !v.contains(&m) {
                        v.push(m);
                    }
                    v
                })
        };
        let (bump, other) = (kept(true), kept(false));
        let said = match bump.is_empty() {
            false => format!("bump mapping ({}) moves texture coordinates by a matrix of texture-stage state (D3DTSS_BUMPENVMAT*), which HLSL cannot name", bump.join(", ")),
            true => format!("{} has no HLSL the decompiler writes", other.join(", ")),
        };
        self.notes.push(format!(
            "{said}: the texture stage is kept as asm {{ }}, which shaderfs's compiler takes and Microsoft's refuse inside a function (X3064)"
        ));
        self.open("asm");
        for l in defs.iter().chain(&lines) {
            self.line(l);
        }
        self.close();
        // ps_1_4: "the alpha component of temporary registers do not persist across the
        // transition" of `phase`: a register the first phase wrote and the block did not
        // write again after it has an undefined alpha, which the text makes 0 (HLSL's
        // compiler refuses a read of it).
        let mut lost: BTreeSet<u32> = BTreeSet::new();
        let mut past_phase = false;
        for ins in &instructions[..end] {
            if ins.mnemonic() == "phase" {
                past_phase = true;
                continue;
            }
            let Some(dst) = ins.operands.as_ref().and_then(|o| o.dst) else {
                continue;
            };
            if dst.register_type() != Some(RegisterType::Temp) {
                continue;
            }
            match past_phase {
                false => {
                    lost.insert(dst.number());
                }
                true if dst.write_mask() & 8 != 0 => {
                    lost.remove(&dst.number());
                }
                true => {}
            }
        }
        if past_phase && !lost.is_empty() {
            let names: Vec<String> = lost.iter().map(|n| format!("r{n}")).collect();
            self.notes.push(format!(
                "the alpha of {} (written before phase) does not persist across it, undefined on the hardware: the text makes it 0",
                names.join(", ")
            ));
            for &n in &lost {
                self.push(Kind::Assign(Assign {
                    name: format!("r{n}"),
                    reg_width: 4,
                    mask: 8,
                    width: Width::Scalar,
                    value: "0.0".into(),
                    target: Some((RegisterType::Temp as u8, n)),
                    foldable: true,
                    partial: false,
                }));
            }
        }
        Ok(end)
    }

    /// The array the loose float constants read at a relative address are declared as:
    /// from the lowest so read up to the next register the table holds, or to the
    /// model's last (less room for the compiled text's literals). `def`s within it are
    /// read as their literals where the index reaches them ([`Decompiler::relative`]).
    fn loose_array(&self, instructions: &[&Instruction]) -> Option<(u32, u32)> {
        let base = instructions
            .iter()
            .filter_map(|i| i.operands.as_ref())
            .flat_map(|o| o.srcs.iter())
            .filter(|p| p.is_relative() && p.register_type() == Some(RegisterType::Const))
            .map(|p| p.number())
            .filter(|&n| self.constant(RegisterSet::FLOAT4, n).is_none())
            .filter(|n| !self.defs.contains_key(n))
            .min()?;
        let last = super::limits::limits(self.version)
            .and_then(|l| l.count(RegisterType::Const))
            .unwrap_or(base + 1);
        let taken = self
            .table
            .iter()
            .flat_map(|t| &t.constants)
            .filter(|c| c.register_set == RegisterSet::FLOAT4)
            .map(|c| u32::from(c.register_index));
        // Room is left for the `def`s the text compiles to (they go after the uniforms).
        let end = taken
            .filter(|&r| r > base)
            .fold(last.saturating_sub(DEF_ROOM), u32::min);
        Some((base, end.saturating_sub(base).max(1)))
    }

    /// Inputs read at a relative address (`v0[aL]`, as fxc makes of an input array read
    /// in a loop) are one array: the registers from the lowest so read whose `dcl`s go on
    /// with the same usage, index by index (`float4 v0[8] : TEXCOORD0` for
    /// `dcl_texcoord0 v0` … `dcl_texcoord7 v7`). Every read of them is an element.
    fn input_array(&mut self, instructions: &[&Instruction]) -> Result<(), DecompileError> {
        let is_input =
            |p: &&Param| p.is_relative() && p.register_type() == Some(RegisterType::Input);
        let Some((first, base)) = instructions
            .iter()
            .flat_map(|i| {
                i.operands
                    .iter()
                    .flat_map(|o| o.srcs.iter())
                    .filter(is_input)
                    .map(move |p| (*i, p.number()))
            })
            .min_by_key(|&(_, n)| n)
        else {
            return Ok(());
        };
        let input = RegisterType::Input as u8;
        // The semantic of each register's dcl, split into usage and index.
        let semantic = |d: &Decompiler, n: u32| -> Option<(String, u32)> {
            let (decl, _) = d.inputs.get(&(input, n))?;
            let s = decl.rsplit(" : ").next()?;
            let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            let (usage, index) = s.split_at(s.len() - digits);
            Some((usage.to_string(), index.parse().unwrap_or(0)))
        };
        let Some((usage, index)) = semantic(self, base) else {
            return fail(
                first,
                format!("reads inputs at a relative address from v{base}, which no dcl declares"),
            );
        };
        let len = (1..)
            .take_while(|&k| semantic(self, base + k) == Some((usage.clone(), index + k)))
            .count() as u32
            + 1;
        for k in 1..len {
            self.inputs.remove(&(input, base + k));
        }
        let name = format!("v{base}");
        self.inputs.insert(
            (input, base),
            (format!("float4 {name}[{len}] : {usage}{index}"), name),
        );
        self.input_array = Some((base, len));
        Ok(())
    }

    /// Int constant `i#` as four expressions (its lanes): a `defi`'s literals or the
    /// table's constant.
    fn int_constant(&self, n: u32) -> Option<[String; 4]> {
        if let Some(v) = self.defis.get(&n) {
            return Some(v.map(|x| x.to_string()));
        }
        let (name, columns) = self.set_register(RegisterSet::INT4, n)?;
        // A scalar's register holds (n, 0, 1, 0), as D3DX sets an int.
        Some(match columns {
            1 => [name, "0".into(), "1".into(), "0".into()],
            c => std::array::from_fn(|l| match l < c {
                true => format!("{name}.{}", LANES[l]),
                false => "0".into(),
            }),
        })
    }

    /// Register `n` of an int or bool `set` as the table names it (an array's element
    /// `an[1]`), and the columns of that value.
    fn set_register(&self, set: RegisterSet, n: u32) -> Option<(String, usize)> {
        let (c, at) = self.constant(set, n)?;
        let ti = &c.type_info;
        let name = identifier(&c.name);
        let columns = usize::from(ti.columns.clamp(1, 4));
        // A bool register a component: of an element, a member, a lane; so are ints where
        // the table gives them more registers than their lanes take (fxc's layout of
        // ints that count loops: `int3 n` at i0–i2, n.z in i2), and an int struct's.
        let per_component = !ti.members.is_empty() || u32::from(c.register_count) > registers(ti);
        if set == RegisterSet::BOOL || set == RegisterSet::INT4 && per_component {
            return Some((format!("{name}{}", bool_path(ti, at)?), 1));
        }
        Some(match ti.elements > 1 {
            true => (format!("{name}[{at}]"), columns),
            false => (name, columns),
        })
    }

    /// The constant of `set` that holds register `n`, and the register's place in it.
    fn constant(&self, set: RegisterSet, n: u32) -> Option<(&Constant, u32)> {
        let t = self.table.as_ref()?;
        t.constants.iter().find_map(|c| {
            let start = u32::from(c.register_index);
            (c.register_set == set && (start..start + u32::from(c.register_count)).contains(&n))
                .then(|| (c, n - start))
        })
    }

    /// A float constant register as a `float4` expression.
    fn float_const(&mut self, ins: &Instruction, n: u32) -> Result<Held, DecompileError> {
        if let Some(v) = self.defs.get(&n) {
            return Ok(Held::Whole(literal(v)));
        }
        let Some((c, at)) = self.constant(RegisterSet::FLOAT4, n) else {
            if let Some((base, len)) = self.relative_base {
                if (base..base + len).contains(&n) {
                    return Ok(Held::Whole(format!("c{base}[{}]", n - base)));
                }
            }
            self.loose.insert((RegisterType::Const as u8, n));
            return Ok(Held::Whole(format!("c{n}")));
        };
        match register_of(&identifier(&c.name), &c.type_info, at, self.ps1()) {
            Some(e) => Ok(e),
            None => fail(ins, format!("reads c{n}, beyond what '{}' holds", c.name)),
        }
    }

    /// A register read, as a `float4` expression (before swizzle and modifier).
    fn register(&mut self, ins: &Instruction, p: &Param) -> Result<String, DecompileError> {
        Ok(self.held(ins, p)?.float4())
    }

    /// What a register read holds, as the text names it.
    fn held(&mut self, ins: &Instruction, p: &Param) -> Result<Held, DecompileError> {
        let ty = reg_type(ins, p)?;
        if p.is_relative() {
            return self.relative(ins, p, ty);
        }
        let n = p.number();
        let key = (p.register_type_value(), n);
        Ok(Held::Whole(match ty {
            RegisterType::Predicate => format!("p{n}"),
            RegisterType::Temp => {
                format!("r{n}")
            }
            RegisterType::Input => {
                if let Some((base, len)) = self.input_array {
                    if (base..base + len).contains(&n) {
                        return Ok(Held::Whole(format!("v{base}[{}]", n - base)));
                    }
                }
                if self.pixel() && self.version.major < 3 {
                    self.inputs
                        .entry(key)
                        .or_insert_with(|| (format!("float4 v{n} : COLOR{n}"), format!("v{n}")));
                }
                match self.inputs.get(&key) {
                    Some((_, name)) => name.clone(),
                    None => return fail(ins, format!("reads v{n}, which no dcl declares")),
                }
            }
            RegisterType::AddrOrTexture if self.pixel() => {
                if self.ps1() && self.texture_written.contains(&n) {
                    format!("t{n}")
                } else {
                    self.texcoord(n)
                }
            }
            RegisterType::Const
            | RegisterType::Const2
            | RegisterType::Const3
            | RegisterType::Const4 => {
                let n = n + ty.const_bank().unwrap_or(0) * 2048;
                return self.float_const(ins, n);
            }
            RegisterType::ConstInt => match self.defis.get(&n) {
                Some(v) => format!("int4({}, {}, {}, {})", v[0], v[1], v[2], v[3]),
                None => match self.int_constant(n) {
                    Some(lanes) => format!("int4({})", lanes.join(", ")),
                    None => {
                        self.loose.insert(key);
                        format!("i{n}")
                    }
                },
            },
            RegisterType::ConstBool => match self.defbs.get(&n) {
                Some(v) => v.clone(),
                None => match self.set_register(RegisterSet::BOOL, n) {
                    Some((name, _)) => name,
                    None => {
                        self.loose.insert(key);
                        format!("b{n}")
                    }
                },
            },
            RegisterType::MiscType => {
                // ps_3_0 may read vPos and vFace without declaring them.
                let (decl, name) = match n {
                    0 => ("float2 vpos : VPOS", "vpos"),
                    _ => ("float vface : VFACE", "vface"),
                };
                let (_, name) = self
                    .inputs
                    .entry(key)
                    .or_insert_with(|| (decl.to_string(), name.to_string()));
                // vFace is one value every lane reads.
                return Ok(match n {
                    0 => Held::Value(name.clone(), 2, false),
                    _ => Held::Value(name.clone(), 1, true),
                });
            }
            _ => {
                return fail(
                    ins,
                    format!("reads a register of type {ty:?}, not decompiled yet"),
                )
            }
        }))
    }

    /// A relative read, `c[a0.x + n]` or `c[aL + n]`: an element of the constant array
    /// that holds register `n`, or of the array of loose registers from the lowest such
    /// `n` ([`Decompiler::relative_base`]).
    fn relative(
        &mut self,
        ins: &Instruction,
        p: &Param,
        ty: RegisterType,
    ) -> Result<Held, DecompileError> {
        if !matches!(ty, RegisterType::Const | RegisterType::Input) {
            return fail(ins, format!("a relative read of a {ty:?} register"));
        }
        // The index, a0's lane it reads, or the loop whose aL it reads.
        let (index, lane, counter) = match p.relative.map(|t| {
            let r = Param {
                token: t,
                relative: None,
            };
            (r.register_type(), ((t >> 16) & 3) as usize)
        }) {
            // vs_1_1: a0.x, said by the register token alone.
            None => (self.address(0), Some(0), None),
            Some((Some(RegisterType::AddrOrTexture), lane)) => {
                (self.address(lane), Some(lane), None)
            }
            Some((Some(RegisterType::Loop), _)) => match self.loops.last() {
                Some(&(id, _)) => (format!("aL{id}"), None, Some(id)),
                None => return fail(ins, "reads at aL outside a loop"),
            },
            Some(_) => return fail(ins, "a relative address that is neither a0 nor aL"),
        };
        // An a0 lane that holds a def's literal: the one register it reads.
        if let Some(v) = lane.and_then(|l| self.a0_known[l]) {
            let count = limits::limits(self.version)
                .and_then(|m| m.count(RegisterType::Const))
                .unwrap_or(256);
            let reg = v.saturating_add(i64::from(p.number()));
            return match u32::try_from(reg).ok().filter(|&r| r < count) {
                Some(r) => self.float_const(ins, r),
                None => {
                    let note = format!(
                        "c{}[a0] with a0 a def's literal reads c{reg}, past {}'s constants: undefined on the hardware, the text reads 0 there",
                        p.number(),
                        self.version
                    );
                    if !self.notes.contains(&note) {
                        self.notes.push(note);
                    }
                    Ok(Held::Whole("float4(0.0, 0.0, 0.0, 0.0)".into()))
                }
            };
        }
        // What the text divides aL by there.
        let (held, by) = self.relative_at(ins, p, ty, index, lane, counter)?;
        if let Some(id) = counter {
            self.counters_read.entry(id).or_default().insert(by);
        }
        Ok(held)
    }

    /// [`Decompiler::relative`] at `index` (a0's `lane`, or aL of loop `counter`), and
    /// what aL is divided by in it (1 but for an element of an array of matrices or
    /// structs read at an aL that steps by whole elements).
    fn relative_at(
        &mut self,
        ins: &Instruction,
        p: &Param,
        ty: RegisterType,
        index: String,
        lane: Option<usize>,
        counter: Option<usize>,
    ) -> Result<(Held, u32), DecompileError> {
        // An a0 lane the text writes as an index of elements of `per` registers
        // ([`address`]): the register offset is the index times them.
        let per = lane.and_then(|l| self.elements.registers[l]).unwrap_or(1);
        let element_index = index.clone();
        let index = match per {
            1 => index,
            per => format!("{index} * {per}"),
        };
        let n = p.number();
        let at = |index: &str, k: u32| match k {
            0 => index.to_string(),
            k => format!("{index} + {k}"),
        };
        if ty == RegisterType::Input {
            return match self.input_array {
                Some((base, _)) if n >= base => {
                    Ok((Held::Whole(format!("v{base}[{}]", at(&index, n - base))), 1))
                }
                _ => fail(ins, "inputs read at a relative address below their array"),
            };
        }
        if let Some((c, k)) = self.constant(RegisterSet::FLOAT4, n) {
            let ti = &c.type_info;
            let one = TypeInfo {
                elements: 1,
                ..ti.clone()
            };
            let r = registers_one(ti);
            // An element of one register is at the register offset; one of more at the
            // index a0 holds where the text writes it as one.
            // At an aL that starts and steps by whole elements, the element is aL divided
            // by their registers, which the text counts as a loop counter of its own.
            let by_elements = counter
                .and_then(|id| self.loop_by.get(&id).map(|&by| (id, by)))
                .filter(|&(_, (start, step))| {
                    let r = i64::from(r);
                    i64::from(start) % r == 0 && i64::from(step) % r == 0
                });
            let element = match (r, by_elements) {
                (1, _) => Some((at(&index, k), 0, 1)),
                (r, _) if r == per => Some((at(&element_index, k / r), k % r, 1)),
                (r, Some((id, _))) => Some((at(&format!("aL{id}_{r}"), k / r), k % r, r)),
                _ => None,
            };
            if let (true, Some((e, j, by))) = (ti.elements > 1, element) {
                let base = format!("{}[{e}]", identifier(&c.name));
                return register_of(&base, &one, j, self.ps1())
                    .map(|h| (h, by))
                    .map_or_else(|| fail(ins, "a relative read past its array"), Ok);
            }
            return fail(
                ins,
                format!(
                    "reads '{}' at a relative address, and it is no array of vectors, nor of elements whose index the code shows a0 to be or an aL to step by",
                    c.name
                ),
            );
        }
        if self.defs.contains_key(&n) {
            // A run of defs read at a relative address is a table of literals, as fxc
            // makes of a `static const` array read so.
            let first = (0..=n)
                .rev()
                .take_while(|r| self.defs.contains_key(r))
                .last()
                .unwrap_or(n);
            self.def_arrays.insert(first);
            return Ok((
                Held::Whole(format!("defs_c{first}[{}]", at(&index, n - first))),
                1,
            ));
        }
        let Some((base, len)) = self.relative_base.filter(|&(base, _)| n >= base) else {
            return fail(ins, "a relative read below the loose constants read so");
        };
        // A `def` the index reaches within the array is its literal there (the game's
        // value never lands on a def'd register), the nearest first.
        let mut read = format!("c{base}[{}]", at(&index, n - base));
        let mut defs: Vec<(&u32, &[f32; 4])> = self
            .defs
            .range(base..base + len)
            .filter(|(&d, _)| d != n)
            .collect();
        defs.sort_by_key(|(&d, _)| std::cmp::Reverse(d.abs_diff(n)));
        for (&d, v) in defs {
            let offset = i64::from(d) - i64::from(n);
            read = format!("({index} == {offset} ? {} : {read})", literal(v));
        }
        Ok((Held::Whole(read), 1))
    }

    /// What `a0` holds where it is a `def`'s literal (`mova a0.x, c4.x` of `def c4, 2, …`),
    /// lane by lane, in the straight run of code since: a relative read there reads one
    /// register, which the text reads as such (an index both compilers fold, and refuse
    /// out of the array's bounds, X3504).
    fn track_a0(&mut self, ins: &Instruction) {
        let flow = address::flow(ins);
        if flow {
            self.a0_known = [None; 4];
            return;
        }
        let Some(ops) = &ins.operands else { return };
        let Some(dst) = ops
            .dst
            .filter(|d| !self.pixel() && d.register_type() == Some(RegisterType::AddrOrTexture))
        else {
            return;
        };
        let round = ins.mnemonic() == "mova" || self.version.major >= 2;
        let src = ops.srcs.first().copied();
        for l in (0..4).filter(|l| dst.write_mask() & (1 << l) != 0) {
            self.a0_known[l] = src
                .filter(|s| {
                    s.register_type() == Some(RegisterType::Const)
                        && !s.is_relative()
                        && matches!(s.source_modifier(), 0 | 1)
                        && !ins.predicated()
                })
                .and_then(|s| {
                    let v = self.defs.get(&s.number())?[address::swizzled(&s, l)];
                    let v = if s.source_modifier() == 1 { -v } else { v };
                    // As the hardware (and the interpreter) put a float into a0.
                    let v = if round { (v + 0.5).floor() } else { v.floor() };
                    Some(i64::from(v as i32))
                });
        }
    }

    /// An `a0` lane as the element index its code shows it to be ([`address`]).
    fn element_index(&mut self, i: &address::Index) -> Result<String, DecompileError> {
        Ok(match i.kind {
            address::IndexKind::Color => {
                // D3DCOLORtoUBYTE4(x) is x.zyxw scaled: lane l of the product is its
                // component zyxw[l].
                let x = self.source(&i.mul, &i.operand)?;
                format!("D3DCOLORtoUBYTE4({x}).{}", LANES[[2, 1, 0, 3][i.lane]])
            }
            address::IndexKind::Divided(registers) => {
                let x = self.source_at(&i.mul, &i.operand, &[i.lane])?;
                format!("(int)round({x} / {registers})")
            }
            address::IndexKind::Whole(times) => {
                let x = self.source_at(&i.mul, &i.operand, &[i.lane])?;
                match times {
                    1 => format!("(int)({x})"),
                    t => format!("(int)({x}) * {t}"),
                }
            }
        })
    }

    /// `a0`'s lane `lane`, read.
    fn address(&mut self, lane: usize) -> String {
        self.marker(Read {
            reg: (RegisterType::AddrOrTexture as u8, 0),
            lanes: vec![lane],
            plain: format!("a0.{}", LANES[lane]),
        })
    }

    /// A texture coordinate set as it comes in (ps_1_x's t# before a texture instruction
    /// writes it, ps_2_x's t#).
    fn texcoord(&mut self, n: u32) -> String {
        let key = (RegisterType::AddrOrTexture as u8, n);
        let name = if self.ps1() {
            format!("tc{n}")
        } else {
            format!("t{n}")
        };
        self.inputs
            .entry(key)
            .or_insert_with(|| (format!("float4 {name} : TEXCOORD{n}"), name.clone()));
        name
    }

    /// A source operand with its swizzle and modifier, as a `float4` expression.
    fn source(&mut self, ins: &Instruction, p: &Param) -> Result<String, DecompileError> {
        self.source_at(ins, p, &[0, 1, 2, 3])
    }

    /// A source operand read at `lanes` of the destination only: a vector as wide as
    /// `lanes` (the swizzle's components there).
    fn source_at(
        &mut self,
        ins: &Instruction,
        p: &Param,
        lanes: &[usize],
    ) -> Result<String, DecompileError> {
        let held = self.held(ins, p)?;
        let ty = reg_type(ins, p)?;
        let picked = picked_lanes(p, lanes);
        // ps_1_1–1_3 read a texture coordinate no texture instruction took through
        // `texcoord`, which gives its xyz (and 1): no HLSL reads the w lane it has.
        let n = p.number();
        if ty == RegisterType::AddrOrTexture
            && self.ps1_texture_stage()
            && !self.texture_written.contains(&n)
            && picked.contains(&3)
        {
            return fail(
                ins,
                format!("reads t{n}.w, which no texture instruction wrote: ps_1_{} reads a texture coordinate's xyz only", self.version.minor),
            );
        }
        let swz = if let Some(values) = self.def_read(p, &picked) {
            // A def's lanes, modified, as a literal of the width read.
            return match values {
                Some(v) => Ok(literal(&v)),
                None => fail(
                    ins,
                    format!("source modifier {} on a constant", p.source_modifier()),
                ),
            };
        } else if let Some(x) = held.lanes(&picked) {
            // A scalar, a vector, a matrix's row or column: its own lanes read.
            let m = p.source_modifier();
            let by = held.lanes(&[usize::from(m.clamp(9, 10)) - 7]);
            return modified(m, &x, by.as_deref().unwrap_or(&x))
                .map_or_else(|| fail(ins, "an unknown source modifier"), Ok);
        } else if ty == RegisterType::ConstBool {
            String::new()
        } else if lanes.len() == 4 {
            swizzle_text(p.swizzle())
        } else {
            format!(".{}", picked.iter().map(|&l| LANES[l]).collect::<String>())
        };
        let reg = held.float4();
        let x = self.read_of(ins, p, &format!("{reg}{swz}"), lanes)?;
        let by = match p.source_modifier() {
            m @ (9 | 10) => {
                let lane = usize::from(m - 7);
                self.read_lanes(ins, p, &format!("{reg}.{}", LANES[lane]), vec![lane])?
            }
            _ => String::new(),
        };
        modified(p.source_modifier(), &x, &by).map_or_else(
            || fail(ins, format!("source modifier {}", p.source_modifier())),
            Ok,
        )
    }

    /// `mul(v, M)` (or `mul(M, v)`) when an `m4x4`…`m3x2` reads the whole of a matrix of
    /// the table: its columns as the registers of a column-major one (its rows, of a
    /// row-major one), `width` long, `rows` of them, into as many lanes from x.
    fn product(
        &mut self,
        ins: &Instruction,
        srcs: &[Param],
        rows: u32,
        width: u8,
    ) -> Result<Option<String>, DecompileError> {
        let m = srcs[1];
        let written = self.lanes(ins);
        if m.is_relative()
            || m.register_type() != Some(RegisterType::Const)
            || srcs[0].source_modifier() != 0
            || m.source_modifier() != 0
            || m.swizzle() != 0xE4
            || !written.iter().copied().eq(0..rows as usize)
        {
            return Ok(None);
        }
        let Some((c, 0)) = self.constant(RegisterSet::FLOAT4, m.number()) else {
            return Ok(None);
        };
        let ti = &c.type_info;
        let name = identifier(&c.name);
        let shape = (u32::from(ti.rows), u32::from(ti.columns), ti.elements <= 1);
        let text = match ti.class {
            Class::MATRIX_COLUMNS if shape == (u32::from(width), rows, true) => {
                let v =
                    self.source_at(ins, &srcs[0], &(0..usize::from(width)).collect::<Vec<_>>())?;
                format!("mul({v}, {name})")
            }
            Class::MATRIX_ROWS if shape == (rows, u32::from(width), true) => {
                let v =
                    self.source_at(ins, &srcs[0], &(0..usize::from(width)).collect::<Vec<_>>())?;
                format!("mul({name}, {v})")
            }
            _ => return Ok(None),
        };
        Ok(Some(text))
    }

    /// A run of `dp4` (or `dp3`) that writes x, y, z… of one register from one vector and
    /// the registers of a table matrix one after another, as one `mul`: how many
    /// instructions it took (0: none).
    fn merged_product(&mut self, run: &[&Instruction]) -> Result<usize, DecompileError> {
        let first = run[0];
        let width = match first.opcode() {
            0x09 => 4,
            0x08 => 3,
            _ => return Ok(0),
        };
        let Some(ops) = first.operands.as_ref() else {
            return Ok(0);
        };
        let (Some(dst), [vector, matrix, ..]) = (ops.dst, ops.srcs.as_slice()) else {
            return Ok(0);
        };
        let same_register = |a: &Param, b: &Param| {
            a.register_type_value() == b.register_type_value() && a.number() == b.number()
        };
        let mut n = 0;
        for (k, ins) in run.iter().enumerate().take(4) {
            let Some(o) = ins.operands.as_ref() else {
                break;
            };
            let (Some(d), [v, m, ..]) = (o.dst, o.srcs.as_slice()) else {
                break;
            };
            let fits = ins.opcode() == first.opcode()
                && o.predicate.is_none()
                && same_register(&d, &dst)
                && d.write_mask() == 1 << k
                && d.result_modifiers() == dst.result_modifiers()
                && d.shift() == dst.shift()
                && v.token == vector.token
                && v.relative == vector.relative
                && !m.is_relative()
                && m.register_type() == Some(RegisterType::Const)
                && m.number() == matrix.number() + k as u32;
            if !fits {
                break;
            }
            n += 1;
        }
        // The vector must be read before any lane of it is written.
        if n < 2 || same_register(vector, &dst) {
            return Ok(0);
        }
        let mut merged = first.clone();
        if let Some(o) = merged.operands.as_mut() {
            if let Some(d) = o.dst.as_mut() {
                d.token = (d.token & !0xF_0000) | (((1u32 << n) - 1) << 16);
            }
        }
        let srcs = ops.srcs.clone();
        match self.product(&merged, &srcs, n as u32, width)? {
            Some(v) => {
                self.assign_as(&merged, v, Width::Lanes)?;
                Ok(n)
            }
            None => Ok(0),
        }
    }

    /// The lane `p` selects when it reads a `def` whose x, y and z (swizzled and
    /// modified) are one 1 and two 0s.
    fn unit_lane(&self, p: &Param) -> Option<usize> {
        let picked = self.def_read(p, &picked_lanes(p, &[0, 1, 2]))??;
        let ones: Vec<usize> = (0..3).filter(|&i| picked[i] == 1.0).collect();
        let zeros = picked.iter().filter(|&&v| v == 0.0).count();
        (ones.len() == 1 && zeros == 2).then(|| ones[0])
    }

    /// What `p` reads of a `def` at register `lanes`, modified: `None` when it reads no
    /// def, `Some(None)` under a modifier a constant cannot take.
    fn def_read(&self, p: &Param, lanes: &[usize]) -> Option<Option<Vec<f32>>> {
        if p.register_type() != Some(RegisterType::Const) || p.is_relative() {
            return None;
        }
        let values = self.defs.get(&p.number())?;
        let m = p.source_modifier();
        let by = values[usize::from(m.clamp(9, 10)) - 7];
        Some(
            lanes
                .iter()
                .map(|&l| modified_value(m, values[l], by))
                .collect(),
        )
    }

    /// `plain` (register `p` read at the destination's `lanes`), or for a register a
    /// statement may name, a marker [`fold`] replaces by that text or by the value.
    fn read_of(
        &mut self,
        ins: &Instruction,
        p: &Param,
        plain: &str,
        lanes: &[usize],
    ) -> Result<String, DecompileError> {
        self.read_lanes(ins, p, plain, picked_lanes(p, lanes))
    }

    /// `plain`, register `p` read at its `lanes`, or its marker.
    fn read_lanes(
        &mut self,
        ins: &Instruction,
        p: &Param,
        plain: &str,
        lanes: Vec<usize>,
    ) -> Result<String, DecompileError> {
        let ty = reg_type(ins, p)?;
        let n = p.number();
        let tracked = match ty {
            RegisterType::Temp | RegisterType::Predicate => true,
            RegisterType::AddrOrTexture if self.pixel() => {
                self.ps1() && self.texture_written.contains(&n)
            }
            RegisterType::AddrOrTexture => true,
            _ => false,
        };
        if !tracked {
            return Ok(plain.to_string());
        }
        Ok(self.marker(Read {
            reg: (p.register_type_value(), n),
            lanes,
            plain: plain.to_string(),
        }))
    }

    fn marker(&mut self, read: Read) -> String {
        self.reads.push(read);
        format!("{MARK}{}{END}", self.reads.len() - 1)
    }

    /// A statement that is not an assignment (`clip(…);`).
    fn line(&mut self, text: &str) {
        self.push(Kind::Line(text.to_string()));
    }

    /// A line of control flow (`if (…)`, `{`, `}`): no value is moved across it.
    fn control(&mut self, text: &str) {
        self.push(Kind::Control(text.to_string()));
    }

    /// `head` and the `{` of a block.
    fn open(&mut self, head: &str) {
        self.control(head);
        self.control("{");
        self.depth += 1;
    }

    fn close(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.control("}");
    }

    fn push(&mut self, kind: Kind) {
        self.stmts.push(Stmt {
            depth: self.depth,
            kind,
        });
    }

    /// `dst = value` with the write mask and the result modifiers; `scalar` values are
    /// one component, every lane written takes it.
    fn assign(
        &mut self,
        ins: &Instruction,
        value: String,
        scalar: bool,
    ) -> Result<(), DecompileError> {
        self.assign_as(ins, value, if scalar { Width::Scalar } else { Width::Four })
    }

    /// The lanes the destination writes (for a one-component output, its x).
    fn lanes(&self, ins: &Instruction) -> Vec<usize> {
        let mask = ins
            .operands
            .as_ref()
            .and_then(|o| o.dst)
            .map_or(0xF, |d| d.write_mask());
        let lanes: Vec<usize> = (0..4).filter(|i| mask & (1 << i) != 0).collect();
        if lanes.is_empty() {
            vec![0, 1, 2, 3]
        } else {
            lanes
        }
    }

    fn assign_as(
        &mut self,
        ins: &Instruction,
        value: String,
        width: Width,
    ) -> Result<(), DecompileError> {
        let Some(dst) = ins.operands.as_ref().and_then(|o| o.dst) else {
            return fail(ins, "no destination");
        };
        let ty = reg_type(ins, &dst)?;
        let n = dst.number();
        if dst.is_relative() {
            // vs_3_0's outputs written at aL: no compiler writes HLSL's output arrays
            // at a run-time index (fxc unrolls the loop, or refuses a [loop], X3531).
            return fail(
                ins,
                format!("writes o{n} at a relative address (o{n}[aL]), which no HLSL output array written in a loop compiles to"),
            );
        }
        let key = (dst.register_type_value(), n);
        let (name, reg_width) = match ty {
            RegisterType::Temp => (format!("r{n}"), 4),
            RegisterType::AddrOrTexture if self.pixel() => {
                self.texture_written.insert(n);
                (format!("t{n}"), 4)
            }
            RegisterType::AddrOrTexture => (format!("a{n}"), 4),
            RegisterType::Predicate => (format!("p{n}"), 4),
            RegisterType::RastOut => {
                let (decl, name, w) = match n {
                    0 => ("out float4 oPos : POSITION", "oPos", 4),
                    1 => ("out float oFog : FOG", "oFog", 1),
                    _ => ("out float oPts : PSIZE", "oPts", 1),
                };
                self.outputs.insert(key, (decl.into(), name.into()));
                (name.to_string(), w)
            }
            RegisterType::AttrOut => {
                let name = format!("oD{n}");
                self.outputs
                    .insert(key, (format!("out float4 {name} : COLOR{n}"), name.clone()));
                (name, 4)
            }
            RegisterType::Output if self.version.major < 3 => {
                let name = format!("oT{n}");
                self.outputs.insert(
                    key,
                    (format!("out float4 {name} : TEXCOORD{n}"), name.clone()),
                );
                (name, 4)
            }
            RegisterType::Output => match self.outputs.get(&key) {
                Some((decl, name)) => (
                    name.clone(),
                    if decl.starts_with("out float ") { 1 } else { 4 },
                ),
                None => return fail(ins, format!("writes o{n}, which no dcl declares")),
            },
            RegisterType::ColorOut => {
                let name = format!("oC{n}");
                self.outputs
                    .insert(key, (format!("out float4 {name} : COLOR{n}"), name.clone()));
                (name, 4)
            }
            RegisterType::DepthOut => {
                self.outputs
                    .insert(key, ("out float oDepth : DEPTH".into(), "oDepth".into()));
                ("oDepth".to_string(), 1)
            }
            _ => {
                return fail(
                    ins,
                    format!("writes a register of type {ty:?}, not decompiled yet"),
                )
            }
        };
        let shift = ((dst.shift() as i8) << 4) >> 4;
        let mut v = value;
        if shift > 0 {
            v = format!("({v}) * {}", 1 << shift);
        } else if shift < 0 {
            v = format!("({v}) / {}", 1 << -shift);
        }
        if dst.result_modifiers() & 1 != 0 {
            v = format!("saturate({v})");
        }
        let foldable =
            matches!(ty, RegisterType::Temp) || (ty == RegisterType::AddrOrTexture && self.pixel());
        let tracked =
            foldable || matches!(ty, RegisterType::Predicate | RegisterType::AddrOrTexture);
        let mut assign = Assign {
            name,
            reg_width,
            mask: dst.write_mask(),
            width,
            value: v,
            target: tracked.then_some(key),
            foldable,
            partial: false,
        };
        if let Some(token) = ins.operands.as_ref().and_then(|o| o.predicate) {
            // Each lane takes the value where its predicate is true, keeps its own elsewhere.
            let lanes = assign.lanes();
            let n = lanes.len();
            let picked: String = lanes.iter().map(|&l| LANES[l]).collect();
            let predicate = Param {
                token,
                relative: None,
            };
            let cond = self.source_at(ins, &predicate, &lanes)?;
            let old = match reg_width {
                _ if reg_width == 1 || picked == "xyzw" => assign.name.clone(),
                _ => format!("{}.{picked}", assign.name),
            };
            let old = match tracked {
                true => self.read_lanes(ins, &dst, &old, lanes.clone())?,
                false => old,
            };
            let value = match (width, n) {
                (Width::Four, _) if reg_width > 1 => format!("({}).{picked}", assign.value),
                (Width::Four, _) => format!("({}).x", assign.value),
                (Width::Scalar, n) if n > 1 => format!("({}).{}", assign.value, "x".repeat(n)),
                _ => assign.value.clone(),
            };
            assign.value = format!("{cond} ? {value} : {old}");
            assign.width = Width::Lanes;
            assign.partial = true;
        }
        self.push(Kind::Assign(assign));
        Ok(())
    }

    /// The sampler `s#` by name, and its HLSL type.
    fn sampler(&mut self, n: u32) -> (String, &'static str) {
        let ty = self.samplers.get(&n).copied();
        match self.constant(RegisterSet::SAMPLER, n) {
            // An element of a sampler array by its index.
            Some((c, at)) if c.type_info.elements > 1 => (
                format!("{}[{at}]", identifier(&c.name)),
                sampler_type(c.type_info.param_type),
            ),
            Some((c, _)) => (identifier(&c.name), sampler_type(c.type_info.param_type)),
            None => {
                self.loose.insert((RegisterType::Sampler as u8, n));
                self.samplers.entry(n).or_insert("sampler2D");
                (format!("s{n}"), ty.unwrap_or("sampler2D"))
            }
        }
    }

    /// Sampler `n`, read at three coordinates by `texm3x3tex` or `texreg2rgb`, a volume
    /// where neither the table nor a `dcl` says its type: a flat texture's `tex2D` would
    /// read two, which HLSL compiles to `texm3x2tex` or `texreg2gb`.
    fn volume_where_unsaid(&mut self, n: u32) {
        if self.constant(RegisterSet::SAMPLER, n).is_none() {
            self.samplers.entry(n).or_insert("sampler3D");
        }
    }

    /// A read of sampler `n` at `coords` (a float4 expression), by its type.
    fn sample(&mut self, n: u32, coords: &str, how: &str) -> String {
        let (name, ty) = self.sampler(n);
        let (f, lanes) = match ty {
            "sampler1D" => ("tex1D", ".x"),
            "sampler3D" => ("tex3D", ".xyz"),
            "samplerCUBE" => ("texCUBE", ".xyz"),
            _ => ("tex2D", ".xy"),
        };
        match how {
            "proj" | "bias" | "lod" => format!("{f}{how}({name}, {coords})"),
            _ => format!("{f}({name}, ({coords}){lanes})"),
        }
    }

    fn srcs(&mut self, ins: &Instruction) -> Result<Vec<String>, DecompileError> {
        let params: Vec<Param> = ins
            .operands
            .as_ref()
            .map(|o| o.srcs.clone())
            .unwrap_or_default();
        params.iter().map(|p| self.source(ins, p)).collect()
    }

    /// One instruction as statements.
    fn statement(&mut self, ins: &Instruction) -> Result<(), DecompileError> {
        let Some(info) = ins.info else {
            return fail(ins, "unknown opcode");
        };
        let Some(ops) = ins.operands.clone() else {
            return fail(ins, "operands that do not fit the instruction");
        };
        let m = info.mnemonic;
        let s = |d: &mut Self| d.srcs(ins);
        // Matrix products: rows from consecutive registers of the second source.
        let matrix = |d: &mut Self, rows: u32, dot: &str| -> Result<String, DecompileError> {
            let a = d.source(ins, &ops.srcs[0])?;
            let mut parts = Vec::new();
            for k in 0..rows {
                let mut p = ops.srcs[1];
                p.token = (p.token & !0x7FF) | (p.number() + k);
                let row = d.source(ins, &p)?;
                parts.push(if dot == "dp3" {
                    format!("dot(({a}).xyz, ({row}).xyz)")
                } else {
                    format!("dot({a}, {row})")
                });
            }
            while parts.len() < 4 {
                parts.push("0".into());
            }
            Ok(format!("float4({})", parts.join(", ")))
        };
        match ins.opcode() {
            0x00 | 0x1F | 0x51 | 0x30 | 0x2F | 0xFFFE | 0xFFFF => return Ok(()),
            _ => {}
        }
        // ps_1_1–1_3's texture stage reads a register whole: a dependent read of a
        // swizzled one samples at coordinates no HLSL read of the stage compiles to.
        if self.ps1_texture_stage() && (m.starts_with("texreg2") || m.starts_with("texm3x")) {
            if let Some(p) = ops.srcs.first().filter(|p| p.swizzle() != 0xE4) {
                let lanes = swizzle_text(p.swizzle());
                return fail(
                    ins,
                    format!("reads t{}{lanes}: a texture instruction's swizzled source, which the coordinates of no HLSL texture read of its stage compile to", p.number()),
                );
            }
        }
        // The operands each form reads, checked once (bytecode from anywhere).
        let needs = match m {
            "mad" | "lrp" | "cmp" | "cnd" | "dp2add" => 3,
            "texldd" => 4,
            "add" | "sub" | "mul" | "min" | "max" | "slt" | "sge" | "dp3" | "dp4" | "pow"
            | "crs" | "dst" | "m4x4" | "m4x3" | "m3x4" | "m3x3" | "m3x2" => 2,
            "if" if ins.opcode() == 0x29 => 2,
            "tex" | "texld" | "texldp" | "texldb" | "texldl" if !self.ps1() => 2,
            "tex" | "texcoord" | "texkill" | "else" | "endif" | "ret" | "phase" | "nop" => 0,
            "endrep" | "endloop" | "label" => 0,
            "break" if ins.opcode() == 0x2C => 0,
            "break" | "loop" | "setp" | "callnz" => 2,
            _ => 1,
        };
        let flow = address::flow(ins) || matches!(m, "phase" | "nop");
        if ops.srcs.len() < needs || (!flow && ops.dst.is_none()) {
            return fail(ins, "fewer operands than the instruction takes");
        }
        // A scalar operand: the component its replicate swizzle names.
        let x = |d: &mut Self, i: usize| d.source_at(ins, &ops.srcs[i], &[0]);
        // `if_gt`, `break_ge`…: its two scalar operands compared.
        let compared = |d: &mut Self| -> Result<String, DecompileError> {
            let (a, b) = (x(d, 0)?, x(d, 1)?);
            Ok(format!("{a} {} {b}", comparison(ins.controls())))
        };
        // Component-wise: each source read at the lanes written, the value that wide.
        let lanes = self.lanes(ins);
        let wide = |d: &mut Self| -> Result<Vec<String>, DecompileError> {
            ops.srcs
                .iter()
                .map(|p| d.source_at(ins, p, &lanes))
                .collect()
        };
        let vec_ty = ["float", "float2", "float3", "float4"][lanes.len().clamp(1, 4) - 1];
        let address = !self.pixel()
            && ops
                .dst
                .is_some_and(|d| d.register_type() == Some(RegisterType::AddrOrTexture));
        let pointwise = match m {
            // a0 takes an integer: mova rounds to nearest, vs_1_1's mov floors.
            "mov" | "mova" if address => {
                let ty = ["int", "int2", "int3", "int4"][lanes.len().clamp(1, 4) - 1];
                let round = m == "mova" || self.version.major >= 2;
                match self.elements.writes.get(&ins.offset).cloned() {
                    // Lanes that are element indices, each as its code shows it.
                    // One colour's bytes, every lane: its components, swizzled.
                    Some(scaled)
                        if lanes.len() > 1
                            && lanes.iter().all(|l| {
                                scaled.iter().any(|(c, i)| {
                                    c == l
                                        && i.kind == address::IndexKind::Color
                                        && i.mul.offset == scaled[0].1.mul.offset
                                        && i.operand == scaled[0].1.operand
                                })
                            }) =>
                    {
                        let first = &scaled[0].1;
                        let x = self.source(&first.mul, &first.operand)?;
                        let swizzle: String = lanes
                            .iter()
                            .filter_map(|l| scaled.iter().find(|(c, _)| c == l))
                            .map(|(_, i)| LANES[[2, 1, 0, 3][i.lane]])
                            .collect();
                        Some(format!("D3DCOLORtoUBYTE4({x}).{swizzle}"))
                    }
                    Some(scaled) => {
                        let mut parts = Vec::new();
                        for &l in &lanes {
                            parts.push(match scaled.iter().find(|(c, _)| *c == l) {
                                Some((_, i)) => self.element_index(i)?,
                                None => {
                                    let v = self.source_at(ins, &ops.srcs[0], &[l])?;
                                    match round {
                                        true => format!("(int)floor({v} + 0.5)"),
                                        false => format!("(int)floor({v})"),
                                    }
                                }
                            });
                        }
                        Some(match parts.len() {
                            1 => parts.remove(0),
                            _ => format!("{ty}({})", parts.join(", ")),
                        })
                    }
                    None => {
                        let a = wide(self)?;
                        match round {
                            true => Some(format!("({ty})floor({} + 0.5)", a[0])),
                            false => Some(format!("({ty})floor({})", a[0])),
                        }
                    }
                }
            }
            "mov" | "mova" => {
                let a = wide(self)?;
                Some(a[0].clone())
            }
            "add" => broadcast(wide(self)?).join(" + ").into(),
            "sub" => {
                let a = broadcast(wide(self)?);
                Some(format!("{} - {}", a[0], a[1]))
            }
            "mul" => broadcast(wide(self)?).join(" * ").into(),
            "mad" => {
                let a = broadcast(wide(self)?);
                Some(format!("{} * {} + {}", a[0], a[1], a[2]))
            }
            "min" | "max" => {
                let a = wide(self)?;
                Some(format!("{m}({}, {})", a[0], a[1]))
            }
            "slt" | "sge" => {
                let a = wide(self)?;
                let op = if m == "slt" { "<" } else { ">=" };
                Some(format!("({vec_ty})({} {op} {})", a[0], a[1]))
            }
            "frc" => Some(format!("frac({})", wide(self)?[0])),
            "sgn" => Some(format!("sign({})", wide(self)?[0])),
            "setp" => {
                let a = wide(self)?;
                let op = comparison(ins.controls());
                Some(format!("{} {op} {}", a[0], a[1]))
            }
            "abs" => Some(format!("abs({})", wide(self)?[0])),
            "dsx" => Some(format!("ddx({})", wide(self)?[0])),
            "dsy" => Some(format!("ddy({})", wide(self)?[0])),
            "lrp" => {
                let a = wide(self)?;
                Some(format!("lerp({}, {}, {})", a[2], a[1], a[0]))
            }
            "cmp" => {
                let a = wide(self)?;
                Some(format!("({} >= 0 ? {} : {})", a[0], a[1], a[2]))
            }
            "cnd" => {
                let a = wide(self)?;
                Some(format!("({} > 0.5 ? {} : {})", a[0], a[1], a[2]))
            }
            _ => None,
        };
        if let Some(v) = pointwise {
            return self.assign_as(ins, v, Width::Lanes);
        }
        match m {
            "dp3" => {
                // A dot product with a unit vector picks a lane (ps_1_1–1_3 has no
                // swizzles: D3DX reads one lane so).
                for (unit, other) in [(0, 1), (1, 0)] {
                    if let Some(k) = self.unit_lane(&ops.srcs[unit]) {
                        let v = self.source_at(ins, &ops.srcs[other], &[k])?;
                        return self.assign(ins, v, true);
                    }
                }
                let a = self.source_at(ins, &ops.srcs[0], &[0, 1, 2])?;
                let b = self.source_at(ins, &ops.srcs[1], &[0, 1, 2])?;
                self.assign(ins, format!("dot({a}, {b})"), true)
            }
            "dp4" => {
                let a = s(self)?;
                self.assign(ins, format!("dot({}, {})", a[0], a[1]), true)
            }
            "dp2add" => {
                let a = self.source_at(ins, &ops.srcs[0], &[0, 1])?;
                let b = self.source_at(ins, &ops.srcs[1], &[0, 1])?;
                let c = x(self, 2)?;
                self.assign(ins, format!("dot({a}, {b}) + {c}"), true)
            }
            "rcp" => {
                let a = x(self, 0)?;
                // 1.0: a float division whatever `a` is (`1 / sign(x)` divides ints).
                self.assign(ins, format!("1.0 / {a}"), true)
            }
            "rsq" => {
                let a = x(self, 0)?;
                self.assign(ins, format!("rsqrt(abs({a}))"), true)
            }
            // vs_1_1's partial-precision forms give four lanes.
            "expp" if self.version.major == 1 => {
                let a = x(self, 0)?;
                if ops.dst.is_some_and(|d| d.write_mask() & 1 != 0) {
                    // floor is x - frac(x) in HLSL on D3D9: NaN at an infinity.
                    self.notes.push(format!(
                        "expp at byte {}: where its input is infinite, 2^floor(x) (.x) is 0 or inf; this text's is NaN there",
                        ins.offset
                    ));
                }
                let v = format!("float4(exp2(floor({a})), frac({a}), exp2({a}), 1)");
                self.assign(ins, v, false)
            }
            "logp" if self.version.major == 1 => {
                let a = x(self, 0)?;
                if ops.dst.is_some_and(|d| d.write_mask() & 3 != 0) {
                    // HLSL's floor is x - frac(x) on D3D9, NaN at an infinity, and vs_1_1
                    // selects by arithmetic: nothing gives the instruction's -inf, 1 at 0.
                    self.notes.push(format!(
                        "logp at byte {}: where its input is 0 the exponent and mantissa (.x, .y) are -inf and 1; this text's are NaN there",
                        ins.offset
                    ));
                }
                let v = format!(
                    "float4(floor(log2(abs({a}))), abs({a}) / exp2(floor(log2(abs({a})))), log2(abs({a})), 1)"
                );
                self.assign(ins, v, false)
            }
            "exp" | "expp" => {
                let a = x(self, 0)?;
                self.assign(ins, format!("exp2({a})"), true)
            }
            "log" | "logp" => {
                let a = x(self, 0)?;
                self.assign(ins, format!("log2(abs({a}))"), true)
            }
            "pow" => {
                let (a, b) = (x(self, 0)?, x(self, 1)?);
                self.assign(ins, format!("pow(abs({a}), {b})"), true)
            }
            // w is src.w over the length of src.xyz (`nrm---vs.md`).
            "nrm" => {
                let a = s(self)?;
                let v = if ops.dst.is_some_and(|d| d.write_mask() & 8 != 0) {
                    let v = &a[0];
                    format!(
                        "float4(normalize(({v}).xyz), ({v}).w * rsqrt(dot(({v}).xyz, ({v}).xyz)))"
                    )
                } else {
                    format!("float4(normalize(({}).xyz), 0)", a[0])
                };
                self.assign(ins, v, false)
            }
            "crs" => {
                let a = s(self)?;
                let v = format!("float4(cross(({}).xyz, ({}).xyz), 0)", a[0], a[1]);
                self.assign(ins, v, false)
            }
            "sincos" => {
                let a = x(self, 0)?;
                let v = format!("float4(cos({a}), sin({a}), 0, 0)");
                self.assign(ins, v, false)
            }
            // HLSL's lit() is the instruction before vs_3_0; there compilers write it as
            // its documented formula, which differs where n·l or n·h is 0 and where the
            // power is past ±128, so vs_3_0 gets the instruction's own meaning. A choice
            // is arithmetic in a vertex shader (an infinity not chosen still makes NaN),
            // so the power is taken of a finite base, to the power 0 where not chosen.
            // A NaN power is the one input the text does not follow: the instruction's
            // result is NaN, the clamp's max makes it -128 (a NaN kept for the lanes that
            // take it would reach the ones that do not, through the arithmetic choice).
            "lit" if self.version.major >= 3 => {
                let a = s(self)?;
                let on = format!("(({0}).x > 0 && ({0}).y > 0)", a[0]);
                let v = format!(
                    "float4(1, max(({0}).x, 0), {on} ? pow(clamp(({0}).y, 1.175494351e-38, \
                     3.402823466e+38), {on} ? clamp(({0}).w, -128, 128) : 0) : 0, 1)",
                    a[0]
                );
                let note = "lit: where n.l and n.h are above 0 and the power (w) is NaN, \
                            the instruction's specular (z) is NaN and this text's a number \
                            (the clamp takes the power to -128)";
                if !self.notes.iter().any(|n| n == note) {
                    self.notes.push(note.to_string());
                }
                self.assign(ins, v, false)
            }
            "lit" => {
                let a = s(self)?;
                let v = format!("lit(({0}).x, ({0}).y, ({0}).w)", a[0]);
                self.assign(ins, v, false)
            }
            "dst" => {
                let a = s(self)?;
                self.assign(ins, format!("dst({}, {})", a[0], a[1]), false)
            }
            // m4x4 … m3x2: rows from consecutive registers, dp4 or dp3 each.
            "m4x4" | "m4x3" | "m3x4" | "m3x3" | "m3x2" => {
                let rows = u32::from(m.as_bytes()[3] - b'0');
                let dot = if m.as_bytes()[1] == b'4' {
                    "dp4"
                } else {
                    "dp3"
                };
                let width = if dot == "dp4" { 4 } else { 3 };
                if let Some(v) = self.product(ins, &ops.srcs, rows, width)? {
                    return self.assign_as(ins, v, Width::Lanes);
                }
                let v = matrix(self, rows, dot)?;
                self.assign(ins, v, false)
            }
            "texkill" => {
                let dst = ops.dst.unwrap();
                let r = self.register(ins, &dst)?;
                // ps_1_x kills on x, y and z; the later models on the lanes of the mask.
                let lanes: Vec<usize> = match self.ps1() {
                    true => vec![0, 1, 2],
                    false => (0..4).filter(|l| dst.write_mask() & (1 << l) != 0).collect(),
                };
                let text = match lanes.len() {
                    4 => r,
                    _ => format!("{r}.{}", lanes.iter().map(|&l| LANES[l]).collect::<String>()),
                };
                let r = self.read_lanes(ins, &dst, &text, lanes)?;
                self.line(&format!("clip({r});"));
                Ok(())
            }
            "tex" | "texld" | "texldp" | "texldb" | "texldl" | "texldd" if !self.ps1() => {
                // The sampler operand names a sampler, not a value.
                let a: Vec<String> = ops
                    .srcs
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        if i == 1 {
                            Ok(String::new())
                        } else {
                            self.source(ins, p)
                        }
                    })
                    .collect::<Result<_, _>>()?;
                let (Some(sampler), true) = (ops.srcs.get(1), a.len() >= 2) else {
                    return fail(ins, "a texture read without its sampler operand");
                };
                let sn = sampler.number();
                let how = match (m, ins.controls()) {
                    ("texldl", _) => "lod",
                    ("texldd", _) => "grad",
                    (_, 1) => "proj",
                    (_, 2) => "bias",
                    _ => "",
                };
                if how == "grad" && a.len() < 4 {
                    return fail(ins, "texldd without its two gradients");
                }
                let v = if how == "grad" {
                    let (name, ty) = self.sampler(sn);
                    let (f, l) = match ty {
                        "sampler3D" => ("tex3Dgrad", ".xyz"),
                        "samplerCUBE" => ("texCUBEgrad", ".xyz"),
                        "sampler1D" => ("tex1Dgrad", ".x"),
                        _ => ("tex2Dgrad", ".xy"),
                    };
                    format!("{f}({name}, ({}){l}, ({}){l}, ({}){l})", a[0], a[2], a[3])
                } else {
                    self.sample(sn, &a[0], how)
                };
                self.assign(ins, v, false)
            }
            // ps_1_1–1_3: t# takes the sample at its own coordinates.
            "tex" => {
                let n = ops.dst.unwrap().number();
                let c = self.texcoord(n);
                let v = self.sample(n, &c, "");
                self.assign(ins, v, false)
            }
            "texcoord" => {
                let n = ops.dst.unwrap().number();
                let c = self.texcoord(n);
                self.assign(ins, format!("float4(saturate(({c}).xyz), 1)"), false)
            }
            // ps_1_4: texld r#, t# or r# (the stage is the destination's number).
            "texld" => {
                let n = ops.dst.unwrap().number();
                let a = s(self)?;
                let v = self.sample(n, &a[0], "");
                self.assign(ins, v, false)
            }
            // ps_1_4: the coordinates' first three lanes; its fourth is undefined
            // (`texcrd---ps.md`), 1 here as texcoord's.
            "texcrd" => {
                let a = s(self)?;
                let c = if atomic(&a[0]) {
                    a[0].clone()
                } else {
                    format!("({})", a[0])
                };
                self.assign(ins, format!("float4({c}.xyz, 1)"), false)
            }
            "texreg2ar" | "texreg2gb" | "texreg2rgb" => {
                let n = ops.dst.unwrap().number();
                let a = s(self)?;
                let lanes = match m {
                    "texreg2ar" => "wxxx",
                    "texreg2gb" => "yzzz",
                    _ => "xyzz",
                };
                if m == "texreg2rgb" {
                    self.volume_where_unsaid(n);
                }
                let v = self.sample(n, &format!("({}).{lanes}", a[0]), "");
                self.assign(ins, v, false)
            }
            "texm3x2pad" | "texm3x3pad" => {
                let n = ops.dst.unwrap().number();
                let c = self.texcoord(n);
                let a = s(self)?;
                self.pad_rows
                    .push(format!("dot(({c}).xyz, ({}).xyz)", a[0]));
                Ok(())
            }
            "texm3x2tex" | "texm3x3tex" | "texm3x3" => {
                let n = ops.dst.unwrap().number();
                let c = self.texcoord(n);
                let a = s(self)?;
                let mut rows = std::mem::take(&mut self.pad_rows);
                rows.push(format!("dot(({c}).xyz, ({}).xyz)", a[0]));
                while rows.len() < 4 {
                    rows.push(if m == "texm3x3" {
                        "1".into()
                    } else {
                        "0".into()
                    });
                }
                let coords = format!("float4({})", rows.join(", "));
                if m == "texm3x3tex" {
                    self.volume_where_unsaid(n);
                }
                let v = if m == "texm3x3" {
                    coords
                } else {
                    self.sample(n, &coords, "")
                };
                self.assign(ins, v, false)
            }
            "phase" | "nop" => Ok(()),
            "if" if ins.opcode() == 0x28 => {
                let a = x(self, 0)?;
                self.open(&format!("if ({a})"));
                Ok(())
            }
            "if" => {
                let c = compared(self)?;
                self.open(&format!("if ({c})"));
                Ok(())
            }
            "else" => {
                self.close();
                self.open("else");
                Ok(())
            }
            "endif" => {
                self.close();
                Ok(())
            }
            // rep i#: i#.x times; loop aL, i#: i#.x times, aL from i#.y by i#.z.
            "rep" | "loop" => {
                let count = if m == "rep" {
                    &ops.srcs[0]
                } else {
                    &ops.srcs[1]
                };
                // The documented ranges (the `rep`/`loop` pages): past them the hardware's
                // count and counter are undefined, and an element read at aL is past any
                // array HLSL can declare.
                if let Some(v) = self.defis.get(&count.number()) {
                    let (n, start, step) = (v[0], v[1], v[2]);
                    if !(0..=255).contains(&n)
                        || m == "loop" && (!(0..=255).contains(&start) || !(-128..=127).contains(&step))
                    {
                        return fail(
                            ins,
                            format!("i{} (defi {n}, {start}, {step}) is past the counts the model runs: {m} takes 0-255 iterations{}", count.number(), if m == "loop" { ", aL from 0-255 by -128-127" } else { "" }),
                        );
                    }
                }
                // An int register the game sets, which neither a defi nor the table
                // gives: its count read by its own name (`for (… k < i0 …)`), which
                // compiles to a rep or a loop on it again. A loop's aL starts and steps
                // by it too, which no HLSL for loop says: the text says 0 and 1, as
                // D3DX sets an int, and the first comment says what the compiled
                // `loop aL, i#` does with the game's.
                let n = count.number();
                let i = match self.int_constant(n) {
                    Some(i) => i,
                    None => {
                        self.loose.insert((RegisterType::ConstInt as u8, n));
                        if m == "loop" && !self.game_loops.contains(&n) {
                            self.game_loops.push(n);
                        }
                        [format!("i{n}"), "0".into(), "1".into(), "0".into()]
                    }
                };
                let id = self.next_loop;
                self.next_loop += 1;
                if m == "loop" {
                    if let Some(v) = self.defis.get(&n) {
                        self.loop_by.insert(id, (v[1], v[2]));
                    }
                    self.push(Kind::Counter(id, Count::Start(i[1].clone())));
                }
                self.open(&format!("for (int k{id} = 0; k{id} < {}; k{id}++)", i[0]));
                let step = (m == "loop").then(|| Kind::Counter(id, Count::Step(i[2].clone())));
                self.loops.push((id, step));
                Ok(())
            }
            "endrep" | "endloop" => {
                if let Some((_, Some(step))) = self.loops.pop() {
                    self.push(step);
                }
                self.close();
                Ok(())
            }
            "break" if ins.opcode() == 0x2C => {
                self.control("break;");
                Ok(())
            }
            "break" => {
                let c = compared(self)?;
                self.control(&format!("if ({c}) break;"));
                Ok(())
            }
            "breakp" => {
                let a = x(self, 0)?;
                self.control(&format!("if ({a}) break;"));
                Ok(())
            }
            // The end of the main program or of a subroutine.
            "ret" if self.depth == 1 => Ok(()),
            "ret" => fail(ins, "a return inside a block, which HLSL's functions cannot say"),
            // A subroutine: a function over the registers, all of them static globals.
            "label" if self.depth == 1 && self.loops.is_empty() => {
                let Some(l) = ops.srcs.first() else {
                    return fail(ins, "a label without its number");
                };
                self.functions.push((l.number(), self.stmts.len()));
                Ok(())
            }
            "label" => fail(ins, "a label inside a block"),
            "call" => {
                let n = self.callee(ins, &ops.srcs[0])?;
                self.line(&format!("l{n}();"));
                Ok(())
            }
            "callnz" => {
                let n = self.callee(ins, &ops.srcs[0])?;
                let c = x(self, 1)?;
                self.line(&format!("if ({c}) l{n}();"));
                Ok(())
            }
            "texbem" | "texbeml" | "bem" => fail(
                ins,
                "bump-environment mapping takes its matrix from texture-stage state, which HLSL cannot name",
            ),
            _ => fail(ins, "not decompiled yet"),
        }
    }

    fn finish(mut self, instructions: usize) -> Decompiled {
        if self.ps1() {
            // The colour a ps_1_x shader leaves is r0's.
            let r0 = self.marker(Read {
                reg: (RegisterType::Temp as u8, 0),
                lanes: vec![0, 1, 2, 3],
                plain: "r0".into(),
            });
            self.push(Kind::Assign(Assign {
                name: "oC0".into(),
                reg_width: 4,
                mask: 0xF,
                width: Width::Four,
                value: r0,
                target: None,
                foldable: false,
                partial: false,
            }));
        }
        // With subroutines a register is read where the calls go: nothing is folded.
        let (into, dead) = match self.functions.is_empty() {
            true => fold(&self.stmts, &self.reads),
            false => (vec![None; self.reads.len()], BTreeSet::new()),
        };
        // The main program's statements and each subroutine's.
        let main_end = self.functions.first().map_or(self.stmts.len(), |f| f.1);
        let mut bodies = vec![String::new(); self.functions.len() + 1];
        let mut named = BTreeSet::new();
        let mut statements = 0;
        let mut folded: BTreeSet<usize> = into.iter().flatten().copied().collect();
        folded.extend(dead);
        for (i, stmt) in self.stmts.iter().enumerate() {
            if folded.contains(&i) {
                continue;
            }
            let render = |text: &str, named: &mut BTreeSet<(u8, u32)>| {
                render(text, &self.stmts, &self.reads, &into, named)
            };
            let lines = match &stmt.kind {
                Kind::Control(text) => vec![render(text, &mut named)],
                Kind::Line(text) => {
                    statements += 1;
                    vec![render(text, &mut named)]
                }
                // A loop's aL only as what reads at it divides it by (none: no line).
                Kind::Counter(id, count) => {
                    let by = self.counters_read.get(id).into_iter().flatten();
                    let defi = self.loop_by.get(id).copied();
                    let lines: Vec<String> = by.map(|&by| count.line(*id, by, defi)).collect();
                    statements += lines.len();
                    lines
                }
                Kind::Assign(a) => {
                    statements += 1;
                    named.extend(a.target);
                    vec![assignment(a, &render(&a.value, &mut named))]
                }
            };
            let part = match i < main_end {
                true => 0,
                false => self
                    .functions
                    .iter()
                    .rposition(|f| f.1 <= i)
                    .map_or(0, |k| k + 1),
            };
            let body = &mut bodies[part];
            for text in lines {
                for _ in 0..stmt.depth {
                    body.push_str("    ");
                }
                body.push_str(&text);
                body.push('\n');
            }
        }

        let mut out = String::new();
        let _ = writeln!(
            out,
            "// {}: decompiled by shaderfs ({instructions} instructions, {statements} statements)",
            self.version
        );
        for note in &self.notes {
            let _ = writeln!(out, "// {}", one_line(note));
        }
        if let Some(t) = &self.table {
            for c in &t.constants {
                let _ = writeln!(out, "{}", declaration(c));
            }
        }
        for &(ty, n) in &self.loose {
            let line = match RegisterType::from_u8(ty) {
                Some(RegisterType::Sampler) => {
                    let t = self.samplers.get(&n).copied().unwrap_or("sampler2D");
                    format!("{t} s{n} : register(s{n});")
                }
                // Only rep and loop read an int register, a count in its x.
                Some(RegisterType::ConstInt) => format!("int i{n} : register(i{n});"),
                Some(RegisterType::ConstBool) => format!("bool b{n} : register(b{n});"),
                _ => format!("float4 c{n} : register(c{n});"),
            };
            let _ = writeln!(out, "{line}");
        }
        if let Some((base, len)) = self.relative_base {
            let _ = writeln!(out, "float4 c{base}[{len}] : register(c{base});");
        }
        for &first in &self.def_arrays {
            let values: Vec<String> = (first..)
                .map_while(|r| self.defs.get(&r))
                .map(|v| literal(v))
                .collect();
            let _ = writeln!(
                out,
                "static const float4 defs_c{first}[{}] = {{ {} }};",
                values.len(),
                values.join(", ")
            );
        }
        let mut params: Vec<String> = self.inputs.values().map(|(d, _)| d.clone()).collect();
        if self.ps1() {
            params.push("out float4 oC0 : COLOR0".into());
        }
        params.extend(self.outputs.values().map(|(d, _)| d.clone()));
        // The registers a statement still names, each starting at 0.
        let registers: Vec<String> = named
            .iter()
            .map(|&(ty, n)| match RegisterType::from_u8(ty) {
                Some(RegisterType::Temp) => format!("float4 r{n}"),
                Some(RegisterType::Predicate) => format!("bool4 p{n}"),
                _ if self.pixel() => format!("float4 t{n}"),
                _ => format!("int4 a{n}"),
            })
            .collect();
        let mut main = String::new();
        if self.functions.is_empty() {
            for r in &registers {
                let _ = writeln!(main, "    {r} = 0;");
            }
            for (_, name) in self.outputs.values() {
                let _ = writeln!(main, "    {name} = 0;");
            }
            main.push_str(&bodies[0]);
        } else {
            // Subroutines share the registers: static globals (0 at the start), the
            // inputs copied in from main's parameters, the outputs copied out.
            out.push('\n');
            for r in &registers {
                let _ = writeln!(out, "static {r};");
            }
            for (decl, name) in self.inputs.values().chain(self.outputs.values()) {
                let ty = decl
                    .trim_start_matches("out ")
                    .split(' ')
                    .next()
                    .unwrap_or("float4");
                let _ = writeln!(out, "static {ty} {name};");
            }
            if !self.ahead.is_empty() {
                out.push('\n');
            }
            for n in &self.ahead {
                let _ = writeln!(out, "void l{n}();");
            }
            for (k, (n, _)) in self.functions.iter().enumerate() {
                let _ = write!(out, "\nvoid l{n}()\n{{\n{}}}\n", bodies[k + 1]);
            }
            let renamed = |decl: &str, name: &str, suffix: &str| {
                decl.replacen(&format!(" {name} :"), &format!(" {name}_{suffix} :"), 1)
            };
            params = self
                .inputs
                .values()
                .map(|(d, name)| renamed(d, name, "in"))
                .chain(
                    self.outputs
                        .values()
                        .map(|(d, name)| renamed(d, name, "out")),
                )
                .collect();
            for (_, name) in self.inputs.values() {
                let _ = writeln!(main, "    {name} = {name}_in;");
            }
            main.push_str(&bodies[0]);
            for (_, name) in self.outputs.values() {
                let _ = writeln!(main, "    {name}_out = {name};");
            }
        }
        let _ = writeln!(out, "\nvoid main({})\n{{", params.join(",\n    "));
        out.push_str(&main);
        out.push_str("}\n");
        Decompiled {
            text: out,
            instructions,
            statements,
            as_asm: false,
        }
    }
}

/// ps_1_x's co-issued pairs read before either writes; the text runs one statement
/// after the other. Where the second reads lanes the first writes (`mov r0.a, r1.a` +
/// `cnd r0.rgb, r0.a, c1, c2` reads the old r0.a), the pair is read the other way round,
/// which is the same pair where the first reads nothing the second writes. A pair each
/// of which reads what the other writes is refused.
fn coissued_in_order(instructions: &mut [&Instruction]) -> Result<(), DecompileError> {
    // Lanes of each register an instruction writes, and those it reads.
    fn written(ins: &Instruction) -> Option<(u8, u32, u8)> {
        let dst = ins.operands.as_ref()?.dst?;
        Some((dst.register_type_value(), dst.number(), dst.write_mask()))
    }
    fn reads(ins: &Instruction, (ty, n, mask): (u8, u32, u8)) -> bool {
        let Some(ops) = ins.operands.as_ref() else {
            return false;
        };
        let dst_mask = ops.dst.map_or(0xF, |d| d.write_mask());
        let per_lane: u8 = match ins.mnemonic() {
            "dp3" => 0b0111,
            "dp4" => 0b1111,
            _ => dst_mask,
        };
        ops.srcs.iter().any(|p| {
            let swz = p.swizzle();
            let lanes = (0..4)
                .filter(|l| per_lane & (1 << l) != 0)
                .fold(0u8, |m, l| m | 1 << ((swz >> (2 * l)) & 3));
            p.register_type_value() == ty && p.number() == n && lanes & mask != 0
        })
    }
    let mut i = 0;
    while i + 1 < instructions.len() {
        let (a, b) = (instructions[i], instructions[i + 1]);
        if b.coissue() {
            let b_reads_a = written(a).is_some_and(|w| reads(b, w));
            let a_reads_b = written(b).is_some_and(|w| reads(a, w));
            match (b_reads_a, a_reads_b) {
                (true, false) => instructions.swap(i, i + 1),
                (true, true) => {
                    return fail(
                        b,
                        "a co-issued pair each of which reads what the other writes: no order of two statements reads as it does",
                    )
                }
                _ => {}
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    Ok(())
}

/// The components of a value of type `ti`, each a register where fxc gives each one
/// its own (bools; ints that count loops). [`TypeInfo::components`] as the text reads a
/// table: a count of 0 (a table no compiler wrote) is one, so the constant still names
/// its registers.
fn components(ti: &TypeInfo) -> u32 {
    let (rows, columns) = (u32::from(ti.rows.max(1)), u32::from(ti.columns.max(1)));
    let one = match (ti.members.is_empty(), ti.class) {
        (false, _) => ti
            .members
            .iter()
            .fold(0u32, |n, m| n.saturating_add(components(&m.type_info))),
        (true, Class::VECTOR) => columns,
        (true, Class::MATRIX_ROWS | Class::MATRIX_COLUMNS) => rows * columns,
        _ => 1,
    };
    one.saturating_mul(u32::from(ti.elements.max(1)))
}

/// Where bool register `at` of a value of type `ti` is (a register a component, in order
/// of elements, members, rows and columns): `[1].vb.z`; `None` past the type.
fn bool_path(ti: &TypeInfo, at: u32) -> Option<String> {
    let one = components(ti) / u32::from(ti.elements.max(1));
    if one == 0 || at >= components(ti) {
        return None;
    }
    let (element, mut at) = (at / one, at % one);
    let mut path = match ti.elements > 1 {
        true => format!("[{element}]"),
        false => String::new(),
    };
    if !ti.members.is_empty() {
        for m in &ti.members {
            let n = components(&m.type_info);
            if at < n {
                return Some(format!(
                    "{path}.{}{}",
                    identifier(&m.name),
                    bool_path(&m.type_info, at)?
                ));
            }
            at -= n;
        }
        return None;
    }
    let matrix = matches!(ti.class, Class::MATRIX_ROWS | Class::MATRIX_COLUMNS);
    if matrix && ti.rows > 1 {
        let columns = u32::from(ti.columns.max(1));
        let _ = write!(path, "._m{}{}", at / columns, at % columns);
    } else if one > 1 {
        path.push('.');
        path.push(LANES[(at % 4) as usize]);
    }
    Some(path)
}

/// ps_1_x instructions kept in an `asm { }` texture stage: bump mapping, whose matrix is
/// texture-stage state, and the texture instructions the decompiler writes no HLSL for
/// (depth from the texture stage, the dp3 and specular addressing forms).
fn asm_only(mnemonic: &str) -> bool {
    matches!(
        mnemonic,
        "texbem"
            | "texbeml"
            | "bem"
            | "texdepth"
            | "texm3x2depth"
            | "texdp3"
            | "texdp3tex"
            | "texm3x3spec"
            | "texm3x3vspec"
    )
}

/// The decompiled text and how much it says.
#[cfg_attr(not(test), allow(dead_code))]
struct Decompiled {
    text: String,
    /// Instructions of the shader's code (not `dcl`, `def`, comments).
    instructions: usize,
    /// Statements of the text (assignments, `clip`; not control lines), or its
    /// instructions where it is written as asm.
    statements: usize,
    /// The text is the shader's instructions in an asm block ([`as_asm`]).
    as_asm: bool,
}

/// Marks a read of a register in a statement's text: `\u{1}` read number `\u{2}`.
const MARK: char = '\u{1}';
const END: char = '\u{2}';

/// A read of a register a statement may name.
#[derive(Debug, Clone)]
struct Read {
    /// Register type and number.
    reg: (u8, u32),
    /// The register's lanes read, in the order the value takes them.
    lanes: Vec<usize>,
    /// The read as text when no value is put in its place (`r3.yzx`).
    plain: String,
}

struct Stmt {
    depth: usize,
    kind: Kind,
}

enum Kind {
    /// A statement that assigns nothing (`clip(…);`).
    Line(String),
    /// A line of control flow; no value is moved across it.
    Control(String),
    /// A statement of loop `id`'s aL counter (`int aL0 = 0;`, `aL0 += 1;`).
    Counter(usize, Count),
    Assign(Assign),
}

/// What a line of a loop's aL counter does: start it at, or step it by, a value (a
/// `defi`'s literal, or the name of the int the game sets).
enum Count {
    Start(String),
    Step(String),
}

impl Count {
    /// The line of loop `id`'s aL divided by `by`: 1, aL itself (`aL0`); an element's
    /// registers, aL counted by elements (`aL0_3`), from the start and step of the loop's
    /// `defi`, which `by` divides ([`Decompiler::relative_at`] reads so only then).
    fn line(&self, id: usize, by: u32, defi: Option<(i32, i32)>) -> String {
        let Some((start, step)) = defi.filter(|_| by > 1) else {
            return match self {
                Count::Start(v) => format!("int aL{id} = {v};"),
                Count::Step(v) => format!("aL{id} += {v};"),
            };
        };
        let by = i64::from(by);
        match self {
            Count::Start(_) => format!("int aL{id}_{by} = {};", i64::from(start) / by),
            Count::Step(_) => format!("aL{id}_{by} += {};", i64::from(step) / by),
        }
    }
}

impl Kind {
    /// The text its reads are in.
    fn text(&self) -> &str {
        match self {
            Kind::Line(t) | Kind::Control(t) => t,
            Kind::Counter(..) => "",
            Kind::Assign(a) => &a.value,
        }
    }
}

/// `name.mask = value;`
struct Assign {
    name: String,
    /// Lanes of the variable (1 for `oFog`, `oDepth`).
    reg_width: u8,
    mask: u8,
    width: Width,
    value: String,
    /// The register written, when statements may read it (a temporary, a ps_1_x texture
    /// register, `a0`, `p0`).
    target: Option<(u8, u32)>,
    /// Whether a later statement may take the value in place of the register.
    foldable: bool,
    /// A predicated write: lanes keep their value where the predicate is false.
    partial: bool,
}

impl Assign {
    /// Whether the assignment writes register lane `l` (a mask of 0 writes all four).
    fn writes(&self, l: usize) -> bool {
        self.mask == 0 || self.mask & (1 << l) != 0
    }

    fn lanes(&self) -> Vec<usize> {
        let lanes: Vec<usize> = (0..4).filter(|i| self.mask & (1 << i) != 0).collect();
        match lanes.is_empty() {
            true => vec![0, 1, 2, 3],
            false => lanes,
        }
    }
}

/// The text of an assignment of `v` (the value rendered).
fn assignment(a: &Assign, v: &str) -> String {
    let name = &a.name;
    let lanes: String = a.lanes().iter().map(|&i| LANES[i]).collect();
    let whole = a.mask == 0xF || a.mask == 0;
    match a.width {
        _ if a.reg_width == 1 && a.width == Width::Four => format!("{name} = ({v}).x;"),
        _ if a.reg_width == 1 || whole && a.width != Width::Scalar => format!("{name} = {v};"),
        Width::Scalar if whole => format!("{name} = ({v}).xxxx;"),
        Width::Four => match constructor_lanes(v, &a.lanes()) {
            Some(picked) => format!("{name}.{lanes} = {picked};"),
            None => format!("{name}.{lanes} = ({v}).{lanes};"),
        },
        _ => format!("{name}.{lanes} = {v};"),
    }
}

/// Lanes `comps` of `v` when it is a `float4(a, b, c, d)` of four scalars: the scalars
/// themselves (`c`, or `float2(a, c)`), not the vector built to be swizzled.
fn constructor_lanes(v: &str, comps: &[usize]) -> Option<String> {
    let inner = v.strip_prefix("float4(")?.strip_suffix(')')?;
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            // `float4(a).x + float4(b)`: not one constructor.
            return None;
        }
    }
    parts.push(inner[start..].trim());
    if parts.len() != 4 || comps.is_empty() || comps.iter().any(|&c| c > 3) {
        return None;
    }
    Some(match comps {
        [c] => {
            let p = parts[*c];
            match atomic(p) {
                true => p.to_string(),
                false => format!("({p})"),
            }
        }
        _ => {
            let picked: Vec<&str> = comps.iter().map(|&c| parts[c]).collect();
            format!("float{}({})", comps.len(), picked.join(", "))
        }
    })
}

/// Float registers a loose array read at a relative address leaves free at the top of
/// the model's, for the literals of the compiled text.
const DEF_ROOM: u32 = 16;

/// Values longer than this stay statements of their own.
const FOLD_LIMIT: usize = 100;

/// Which statement's value each read takes in place of the register: a statement whose
/// value one read alone takes, in the same block with nothing in between writing what the
/// value reads, goes into that read. Also the statements whose value nothing reads.
fn fold(stmts: &[Stmt], reads: &[Read]) -> (Vec<Option<usize>>, BTreeSet<usize>) {
    let in_stmt: Vec<Vec<usize>> = stmts.iter().map(|s| markers(s.kind.text())).collect();
    let mut owner = vec![usize::MAX; reads.len()];
    for (i, rs) in in_stmt.iter().enumerate() {
        for &r in rs {
            if let Some(o) = owner.get_mut(r) {
                *o = i;
            }
        }
    }
    // What each statement's value reads, with what was put into it.
    let mut reading: Vec<Vec<((u8, u32), usize)>> = in_stmt
        .iter()
        .map(|rs| {
            rs.iter()
                .filter_map(|&r| reads.get(r))
                .flat_map(|r| r.lanes.iter().map(|&l| (r.reg, l)))
                .collect()
        })
        .collect();
    let mut size: Vec<usize> = stmts.iter().map(|s| s.kind.text().len()).collect();
    let mut into = vec![None; reads.len()];
    let mut dead = BTreeSet::new();
    let looped = in_loop(stmts);
    for s in 0..stmts.len() {
        let Kind::Assign(a) = &stmts[s].kind else {
            continue;
        };
        let Some(reg) = a.target.filter(|_| a.foldable && !a.partial) else {
            continue;
        };
        let r = match only_reader(stmts, reads, &in_stmt, s, reg, &a.lanes(), looped[s]) {
            Readers::Unread => {
                dead.insert(s);
                continue;
            }
            Readers::One(_) if size[s] > FOLD_LIMIT => continue,
            Readers::One(r) => r,
            Readers::Many => continue,
        };
        let u = owner[r];
        let overwritten = (s + 1..u).any(|k| match &stmts[k].kind {
            Kind::Assign(b) => b
                .target
                .is_some_and(|w| reading[s].iter().any(|&(g, l)| g == w && b.writes(l))),
            _ => false,
        });
        if overwritten {
            continue;
        }
        into[r] = Some(s);
        let taken = std::mem::take(&mut reading[s]);
        reading[u].extend(taken);
        size[u] += size[s];
    }
    (into, dead)
}

/// Who reads the value a statement writes.
enum Readers {
    /// Nobody: every lane is written over, in the block, before any read (or never read).
    Unread,
    /// One read alone, in the same block.
    One(usize),
    /// More than one, or one past the block's edge.
    Many,
}

/// The reads that take the value statement `s` writes to `lanes` of `reg`.
fn only_reader(
    stmts: &[Stmt],
    reads: &[Read],
    in_stmt: &[Vec<usize>],
    s: usize,
    reg: (u8, u32),
    lanes: &[usize],
    looped: bool,
) -> Readers {
    let mut open = lanes.to_vec();
    let mut reader = None;
    let mut crossed = false;
    for j in s + 1..stmts.len() {
        if open.is_empty() {
            break;
        }
        for &r in &in_stmt[j] {
            let Some(read) = reads.get(r) else {
                return Readers::Many;
            };
            if read.reg != reg || !read.lanes.iter().any(|l| open.contains(l)) {
                continue;
            }
            if crossed || reader.is_some() || !read.lanes.iter().all(|l| open.contains(l)) {
                return Readers::Many;
            }
            reader = Some(r);
        }
        match &stmts[j].kind {
            // A write in the block kills the value; past a block's edge it may not.
            Kind::Assign(b) if !crossed && !b.partial && b.target == Some(reg) => {
                open.retain(|&l| !b.writes(l));
            }
            Kind::Control(_) => {
                // In a loop the value may go round to an earlier read.
                if looped {
                    return Readers::Many;
                }
                crossed = true;
            }
            _ => {}
        }
    }
    match reader {
        Some(r) => Readers::One(r),
        // A value still live at the end of a loop's body may go round.
        None if looped && !open.is_empty() => Readers::Many,
        None => Readers::Unread,
    }
}

/// Whether each statement is inside a loop.
fn in_loop(stmts: &[Stmt]) -> Vec<bool> {
    let mut depth: Vec<bool> = Vec::new();
    let mut head = "";
    stmts
        .iter()
        .map(|s| {
            if let Kind::Control(t) = &s.kind {
                match t.as_str() {
                    "{" => depth.push(head.starts_with("for ")),
                    "}" => {
                        depth.pop();
                    }
                    line => head = line,
                }
            }
            depth.iter().any(|&l| l)
        })
        .collect()
}

/// The read numbers of the markers in `text`, in order.
fn markers(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        rest = &rest[at + MARK.len_utf8()..];
        let end = rest.find(END).unwrap_or(rest.len());
        if let Ok(n) = rest[..end].parse() {
            out.push(n);
        }
        rest = &rest[end..];
    }
    out
}

/// `text` with each marker replaced by the read's register or by the value put there;
/// the registers still named are added to `named`.
fn render(
    text: &str,
    stmts: &[Stmt],
    reads: &[Read],
    into: &[Option<usize>],
    named: &mut BTreeSet<(u8, u32)>,
) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        rest = &rest[at + MARK.len_utf8()..];
        let end = rest.find(END).unwrap_or(rest.len());
        let n: usize = rest[..end].parse().unwrap_or(usize::MAX);
        rest = rest.get(end + END.len_utf8()..).unwrap_or("");
        let Some(read) = reads.get(n) else { continue };
        match into.get(n).copied().flatten().map(|s| &stmts[s].kind) {
            Some(Kind::Assign(a)) => {
                let v = render(&a.value, stmts, reads, into, named);
                let t = taken(a, &v, &read.lanes);
                // A product or a sum needs no parentheses where an operator of its own
                // level or a lower one stands on each side.
                let bare = t
                    .strip_prefix('(')
                    .and_then(|x| x.strip_suffix(')'))
                    .filter(|inner| atomic(&t) && !inner.starts_with('-'));
                // Bare only where the text parses to the same order of operations:
                // `(a * b) * c`, `x + (a * b)`, `(a + b) - c` (floats do not reassociate).
                let before = out.trim_end();
                let after = rest.trim_start();
                let leftmost = before.is_empty() || before.ends_with(['(', ',', '=']);
                // A binary + or - (an operand before it), not a negation (`1 / -x`).
                let after_sum = [" +", " -"].iter().any(|op| {
                    before.strip_suffix(op).is_some_and(|b| {
                        b.ends_with(|c: char| c.is_alphanumeric() || matches!(c, ')' | ']' | '_'))
                    })
                });
                let ends = after.is_empty()
                    || after.starts_with([')', ',', ';'])
                    || after.starts_with("+ ")
                    || after.starts_with("- ");
                match bare.map(|inner| (inner, top_level(inner))) {
                    Some((inner, Level::Product))
                        if (leftmost || after_sum) && (ends || after.starts_with("* ")) =>
                    {
                        out.push_str(inner)
                    }
                    Some((inner, Level::Sum)) if leftmost && ends => out.push_str(inner),
                    _ => out.push_str(&t),
                }
            }
            _ => {
                named.insert(read.reg);
                out.push_str(&read.plain);
            }
        }
    }
    out.push_str(rest);
    out
}

/// Value `v` of assignment `a`, read at register `lanes`.
fn taken(a: &Assign, v: &str, lanes: &[usize]) -> String {
    let written = a.lanes();
    let comps: Vec<usize> = match a.width {
        Width::Lanes => lanes
            .iter()
            .map(|l| written.iter().position(|w| w == l).unwrap_or(0))
            .collect(),
        Width::Four => lanes.to_vec(),
        Width::Scalar => vec![0; lanes.len()],
    };
    let whole = match a.width {
        Width::Lanes => comps.iter().copied().eq(0..written.len()),
        Width::Four => comps == [0, 1, 2, 3],
        Width::Scalar => comps.len() == 1,
    };
    if !whole {
        // `u.y` read at .xxx is `u.yyy`.
        if let Some((base, lane)) = one_lane(v) {
            return format!("{base}.{}", lane.to_string().repeat(comps.len()));
        }
        // A constructor's lanes are its scalars.
        if let Some(picked) = constructor_lanes(v, &comps) {
            return picked;
        }
        // A literal's lanes are a literal.
        if let Some(values) = literal_values(v) {
            let picked: Option<Vec<f32>> = comps.iter().map(|&c| values.get(c).copied()).collect();
            if let Some(picked) = picked {
                let text = literal(&picked);
                return match atomic(&text) {
                    true => text,
                    false => format!("({text})"),
                };
            }
        }
    }
    let v = match atomic(v) {
        true => v.to_string(),
        false => format!("({v})"),
    };
    match whole {
        true => v,
        false => format!(
            "{v}.{}",
            comps.iter().map(|&c| LANES[c]).collect::<String>()
        ),
    }
}

/// The operands of an arithmetic operator with a literal whose lanes are all one value
/// written as that value (`x * 0.5`), while another operand is no literal and keeps the
/// result as wide.
fn broadcast(operands: Vec<String>) -> Vec<String> {
    let scalar = |o: &String| {
        let v = literal_values(o)?;
        (v.len() > 1 && v.iter().all(|x| x.to_bits() == v[0].to_bits())).then(|| float_text(v[0]))
    };
    if operands.iter().all(|o| literal_values(o).is_some()) {
        return operands;
    }
    operands
        .into_iter()
        .map(|o| scalar(&o).unwrap_or(o))
        .collect()
}

/// The values of a literal [`literal`] wrote (`float3(1.0, -0.5, 0.0)`, `2.0`).
fn literal_values(v: &str) -> Option<Vec<f32>> {
    let inner = match v.strip_prefix("float") {
        Some(rest) => rest.get(1..)?.strip_prefix('(')?.strip_suffix(')')?,
        None => v,
    };
    inner.split(", ").map(|x| x.parse::<f32>().ok()).collect()
}

/// The operators at the top level of an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    /// `a * b * c`
    Product,
    /// `a + b - c`, `a * b + c`
    Sum,
    /// anything else (`?:`, `/`, comparisons)
    Other,
}

fn top_level(v: &str) -> Level {
    let mut depth = 0;
    let (mut product, mut sum) = (false, false);
    let bytes = v.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            _ if depth > 0 => {}
            b'*' if i > 0 && bytes[i - 1] == b' ' => product = true,
            b'+' | b'-' if i > 0 && bytes[i - 1] == b' ' && bytes.get(i + 1) == Some(&b' ') => {
                sum = true
            }
            b'/' | b'?' | b'<' | b'>' | b'=' | b'!' | b'&' | b'|' => return Level::Other,
            _ => {}
        }
    }
    match (product, sum) {
        (_, true) => Level::Sum,
        (true, false) => Level::Product,
        _ => Level::Other,
    }
}

/// `name.c` (a name, indexed or not, and one lane): the name and the lane.
fn one_lane(v: &str) -> Option<(&str, char)> {
    let (base, lane) = v.rsplit_once('.')?;
    let mut chars = lane.chars();
    let (Some(lane), None) = (chars.next(), chars.next()) else {
        return None;
    };
    let plain = "xyzw".contains(lane)
        && base.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && base
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '[' || c == ']');
    plain.then_some((base, lane))
}

/// Whether `v` needs no parentheses to be an operand or take a swizzle: a name, a
/// swizzled or indexed name, a call, or already parenthesised.
fn atomic(v: &str) -> bool {
    if v.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '[' || c == ']')
    {
        return !v.starts_with(|c: char| c.is_ascii_digit());
    }
    // A call or a parenthesised whole: the first '(' closes at the end.
    let Some(open) = v.find('(') else {
        return false;
    };
    if !v[..open]
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return false;
    }
    let mut depth = 0;
    for (i, c) in v.char_indices().skip_while(|&(i, _)| i < open) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return i == v.len() - 1;
                }
            }
            _ => {}
        }
    }
    false
}

/// A literal of `values`: a float, or a vector as wide as they are.
fn literal(values: &[f32]) -> String {
    if let [v] = values {
        return float_text(*v);
    }
    let mut out = format!("float{}(", values.len());
    for (i, &v) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_float(&mut out, v);
    }
    out.push(')');
    out
}

/// Value `x` under source modifier `m`, as the hardware computes it (`by`: the lane
/// `_dz`/`_dw` divide by).
fn modified_value(m: u8, x: f32, by: f32) -> Option<f32> {
    Some(match m {
        0 => x,
        1 => -x,
        2 => x - 0.5,
        3 => -(x - 0.5),
        4 => 2.0 * x - 1.0,
        5 => -(2.0 * x - 1.0),
        6 => 1.0 - x,
        7 => 2.0 * x,
        8 => -2.0 * x,
        9 | 10 => x / by,
        11 => x.abs(),
        12 => -x.abs(),
        _ => return None,
    })
}

/// `x` under source modifier `m` (`by`: the lane `_dz`/`_dw` divide by).
fn modified(m: u8, x: &str, by: &str) -> Option<String> {
    Some(match m {
        0 => x.to_string(),
        1 => format!("-{x}"),
        2 => format!("({x} - 0.5)"),
        3 => format!("-({x} - 0.5)"),
        4 => format!("(2 * {x} - 1)"),
        5 => format!("-(2 * {x} - 1)"),
        6 => format!("(1 - {x})"),
        7 => format!("(2 * {x})"),
        8 => format!("(-2 * {x})"),
        9 | 10 => format!("({x} / {by})"),
        11 => format!("abs({x})"),
        12 => format!("-abs({x})"),
        13 => format!("!{x}"),
        _ => return None,
    })
}

/// What a statement's value is: one component for every lane written, a float4 of which
/// the lanes written are taken, or a vector of just those lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    Scalar,
    Four,
    Lanes,
}

/// The register lanes read at destination `lanes` through `p`'s swizzle.
fn picked_lanes(p: &Param, lanes: &[usize]) -> Vec<usize> {
    lanes
        .iter()
        .map(|&l| usize::from((p.swizzle() >> (2 * l)) & 3))
        .collect()
}

/// Float registers one value of type `ti` takes (one element of an array).
fn registers_one(ti: &TypeInfo) -> u32 {
    if !ti.members.is_empty() {
        return ti
            .members
            .iter()
            .fold(0u32, |n, m| n.saturating_add(registers(&m.type_info)));
    }
    match ti.class {
        Class::MATRIX_ROWS => u32::from(ti.rows.max(1)),
        Class::MATRIX_COLUMNS => u32::from(ti.columns.max(1)),
        _ => 1,
    }
}

/// Float registers a value of type `ti` takes, every element.
fn registers(ti: &TypeInfo) -> u32 {
    registers_one(ti).saturating_mul(u32::from(ti.elements.max(1)))
}

/// What a register holds, as the text names it.
enum Held {
    /// A value of the first `width` lanes; the rest read 0, or, when `repeats`, the value
    /// again (a ps_1_x scalar constant, read whole by an instruction without swizzles;
    /// where that matters the behaviour test says so).
    Value(String, usize, bool),
    /// A column of a column-major matrix of four rows: its lanes by name (`_m02`).
    Column(String, [String; 4]),
    /// Anything else, as a `float4`.
    Whole(String),
}

impl Held {
    /// The register as a `float4` expression.
    fn float4(&self) -> String {
        match self {
            Held::Value(v, 4, _) => v.clone(),
            Held::Value(v, 1, true) => format!("{v}.xxxx"),
            Held::Value(v, width, _) => format!("float4({v}{})", ", 0".repeat(4 - width)),
            Held::Column(m, lanes) => format!("{m}.{}", lanes.concat()),
            Held::Whole(v) => v.clone(),
        }
    }

    /// The register read at its `lanes`, where the value names them itself (`u.yx`,
    /// `m._m12_m02`); `None` where a `float4` and a swizzle say it.
    fn lanes(&self, lanes: &[usize]) -> Option<String> {
        match self {
            Held::Value(v, width, _) if lanes.iter().all(|l| l < width) => {
                let whole = lanes.iter().copied().eq(0..*width);
                Some(match (whole, width) {
                    (true, _) => v.clone(),
                    (false, 1) => format!("{v}.{}", "x".repeat(lanes.len())),
                    _ => format!(
                        "{v}.{}",
                        lanes.iter().map(|&l| LANES[l]).collect::<String>()
                    ),
                })
            }
            Held::Column(m, names) if !lanes.iter().copied().eq(0..4) => {
                let picked: String = lanes.iter().map(|&l| names[l].as_str()).collect();
                Some(format!("{m}.{picked}"))
            }
            _ => None,
        }
    }
}

/// Register `at` of a value `base` of type `ti`: an element, a member, a matrix's row or
/// column, a vector (in `ps1`, a scalar repeats in every lane).
fn register_of(base: &str, ti: &TypeInfo, at: u32, ps1: bool) -> Option<Held> {
    if ti.elements > 1 {
        let one = TypeInfo {
            elements: 1,
            ..ti.clone()
        };
        let per = registers_one(ti).max(1);
        return register_of(&format!("{base}[{}]", at / per), &one, at % per, ps1);
    }
    if !ti.members.is_empty() {
        let mut start = 0u32;
        for m in &ti.members {
            let n = registers(&m.type_info);
            if at < start.saturating_add(n) {
                return register_of(
                    &format!("{base}.{}", identifier(&m.name)),
                    &m.type_info,
                    at - start,
                    ps1,
                );
            }
            start = start.saturating_add(n);
        }
        return None;
    }
    let (rows, cols) = (usize::from(ti.rows.max(1)), usize::from(ti.columns.max(1)));
    Some(match ti.class {
        Class::MATRIX_ROWS => Held::Value(format!("{base}[{at}]"), cols.min(4), false),
        Class::MATRIX_COLUMNS if rows == 4 => Held::Column(
            base.to_string(),
            std::array::from_fn(|i| format!("_m{i}{at}")),
        ),
        Class::MATRIX_COLUMNS => {
            let mut parts: Vec<String> = (0..rows.min(4))
                .map(|i| format!("{base}[{i}][{at}]"))
                .collect();
            parts.resize(4, "0".into());
            Held::Whole(format!("float4({})", parts.join(", ")))
        }
        _ => Held::Value(base.to_string(), cols.min(4), cols == 1 && ps1),
    })
}

/// The HLSL type of `ti` (a struct's named `name`, declared into `structs` with the
/// types of its members first).
fn type_text(ti: &TypeInfo, name: &str, structs: &mut Vec<String>) -> String {
    if !ti.members.is_empty() {
        let mut body = String::new();
        for m in &ti.members {
            let member = identifier(&m.name);
            let t = type_text(&m.type_info, &format!("{name}_{member}"), structs);
            let array = if m.type_info.elements > 1 {
                format!("[{}]", m.type_info.elements)
            } else {
                String::new()
            };
            let _ = writeln!(body, "    {t} {member}{array};");
        }
        structs.push(format!("struct {name}\n{{\n{body}}};\n"));
        return name.to_string();
    }
    if ti.class == Class::OBJECT {
        return sampler_type(ti.param_type).to_string();
    }
    // Column-major spelled out: the text means the same under -Zpr.
    let ty = type_name(ti);
    if ti.class == Class::MATRIX_COLUMNS {
        format!("column_major {ty}")
    } else {
        ty
    }
}

/// The sampler type a constant of the SAMPLER set is declared and read as (an effect's
/// `texture`-typed or untyped one as a 2D sampler).
fn sampler_type(t: ParamType) -> &'static str {
    match t {
        ParamType(11) => "sampler1D",
        ParamType(13) => "sampler3D",
        ParamType(14) => "samplerCUBE",
        _ => "sampler2D",
    }
}

/// The HLSL declaration of a constant of the table, at its register.
fn declaration(c: &Constant) -> String {
    let name = identifier(&c.name);
    let mut structs = Vec::new();
    let ty = type_text(&c.type_info, &format!("{name}_t"), &mut structs);
    let array = if c.type_info.elements > 1 {
        format!("[{}]", c.type_info.elements)
    } else {
        String::new()
    };
    let set = match c.register_set {
        RegisterSet::BOOL => "b",
        RegisterSet::INT4 => "i",
        RegisterSet::SAMPLER => "s",
        _ => "c",
    };
    format!(
        "{}{ty} {name}{array} : register({set}{});",
        structs.concat(),
        c.register_index
    )
}

/// A table name as an HLSL identifier: an effect's `sampler+texture` pair names joined
/// by `_`.
fn identifier(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

fn reg_type(ins: &Instruction, p: &Param) -> Result<RegisterType, DecompileError> {
    match p.register_type() {
        Some(t) => Ok(t),
        None => fail(ins, format!("register type {}", p.register_type_value())),
    }
}

fn swizzle_text(s: u8) -> String {
    if s == 0xE4 {
        return String::new();
    }
    let l: String = (0..4)
        .map(|i| LANES[usize::from((s >> (2 * i)) & 3)])
        .collect();
    format!(".{l}")
}

fn comparison(controls: u8) -> &'static str {
    match controls {
        1 => ">",
        2 => "==",
        3 => ">=",
        4 => "<",
        5 => "!=",
        _ => "<=",
    }
}

fn usage_name(u: u8) -> String {
    USAGES
        .get(usize::from(u))
        .unwrap_or(&"texcoord")
        .to_ascii_uppercase()
}

/// A float literal HLSL reads back to the same bits.
fn float_text(v: f32) -> String {
    let mut out = String::new();
    push_float(&mut out, v);
    out
}

/// [`float_text`] written onto `out`.
fn push_float(out: &mut String, v: f32) {
    if v.is_nan() {
        out.push_str("(0.0 / 0.0)");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 {
            "(1.0 / 0.0)"
        } else {
            "(-1.0 / 0.0)"
        });
    } else {
        // A negative literal is no operand on its own: `atomic` says so, and it is put in
        // parentheses where it is substituted.
        let _ = write!(out, "{v:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shader::hlsl::behaviour::same_behaviour;
    use crate::shader::hlsl::compile::{compile, Options};

    /// Output `out` of the shader in `bytes` run with float constants `float`.
    fn output_of(
        bytes: &[u8],
        float: &[(u32, [f32; 4])],
        out: crate::shader::d3d9::run::OutputRegister,
    ) -> [f32; 4] {
        let mut inputs = crate::shader::d3d9::run::Inputs::default();
        inputs
            .bindings
            .constants
            .float
            .extend(float.iter().copied());
        crate::shader::d3d9::run::run(bytes, &inputs)
            .unwrap()
            .values[&out]
    }

    /// The decompiled `text` compiled by ours for `profile`.
    fn compiled_back(text: &str, profile: &str) -> Vec<u8> {
        let options = Options {
            profile: profile.into(),
            ..Options::default()
        };
        compile("d.hlsl", text, None, &options)
            .unwrap_or_else(|f| panic!("{}\n{text}", f.render()))
            .bytecode
    }

    /// The instruction tokens of a shader, comments (its constant table) left out.
    fn code_of(bytes: &[u8]) -> Vec<u32> {
        let shader = bytecode::parse(bytes).unwrap();
        let mut code = vec![shader.version.token()];
        for ins in shader.instructions().filter(|i| i.opcode() != 0xFFFE) {
            code.push(ins.token);
            code.extend(&ins.tokens);
        }
        code
    }

    /// The shader in `bytes` written as asm, as [`decompile`] writes what statements
    /// cannot say.
    fn forced_asm(bytes: &[u8]) -> Option<String> {
        let shader = bytecode::parse(bytes).ok()?;
        let (table, unread) = table_of(bytes);
        as_asm(&shader, table, unread, "at byte 1, asked").map(|d| d.text)
    }

    /// The text of the shader of asm `source` for `profile`, which statements cannot
    /// say: its first comment says why (`because`), and it is the shader's instructions
    /// in an asm block, which ours compiles back to the very instructions, the table's
    /// constants on their registers.
    fn written_as_asm(source: &str, profile: &str, because: &str) -> String {
        let bytes = crate::shader::d3d9::asm::assemble(source).unwrap();
        written_as_asm_bytes(&bytes, profile, because)
    }

    /// [`written_as_asm`] of a shader's bytes.
    fn written_as_asm_bytes(bytes: &[u8], profile: &str, because: &str) -> String {
        let text = decompile(bytes).unwrap();
        let first = text.lines().nth(1).unwrap_or_default();
        assert!(first.starts_with("// written as asm: "), "{text}");
        assert!(first.contains(because), "no '{because}':\n{text}");
        assert!(text.contains("\nvoid main()\n{\n    asm {\n"), "{text}");
        let back = compiled_back(&text, profile);
        assert_eq!(code_of(&back), code_of(bytes), "{text}");
        let ours = ConstantTable::from_bytecode(&back).unwrap();
        if let Ok(Some(theirs)) = ConstantTable::from_bytecode(bytes) {
            let registers = |t: &ConstantTable| -> Vec<(String, u16, u16)> {
                let mut r: Vec<_> = t
                    .constants
                    .iter()
                    .map(|c| (c.name.clone(), c.register_set.0, c.register_index))
                    .collect();
                r.sort();
                r
            };
            assert_eq!(registers(&ours.unwrap()), registers(&theirs), "{text}");
        }
        text
    }

    /// `original` with the constant table the behaviour test binds by, as the text
    /// decompiled from it names its constants: the table's constants the text declares
    /// ([`table::declarable`]), their names as HLSL spells them (an
    /// effect's `sampler+texture` as `sampler_texture`), and the registers it reads
    /// without naming them (`c2`, `c20[…]`) under the names the text declares them by,
    /// as `compiled` (the text compiled) has them.
    pub(crate) fn bound_as(original: &[u8], compiled: &[u8]) -> Vec<u8> {
        let Ok(Some(ours)) = ConstantTable::from_bytecode(compiled) else {
            return original.to_vec();
        };
        // What the text declares of the original's table: its registers bound by name.
        let theirs = ConstantTable::from_bytecode(original)
            .ok()
            .flatten()
            .map(|t| {
                let shader = bytecode::parse(original).unwrap();
                let mut d = Decompiler::new(shader.version, None);
                for ins in shader.instructions() {
                    let _ = d.declare(ins);
                }
                table::declarable(t, shader.version, &d.samplers).0
            });
        let mut table = theirs.unwrap_or_else(|| ConstantTable {
            constants: Vec::new(),
            ..ours.clone()
        });
        for c in &mut table.constants {
            c.name = identifier(&c.name);
        }
        for c in &ours.constants {
            if !table.constants.iter().any(|t| t.name == c.name) {
                table.constants.push(c.clone());
            }
        }
        crate::shader::d3d9::ctab::replace_ctab(original, &table.encode()).unwrap()
    }

    /// `text`, decompiled from `original`, compiled back with ours for the original's
    /// profile, runs as the original on random inputs (`seed`).
    fn runs_as_the_original(original: &[u8], text: &str, seed: u64) {
        let profile = bytecode::parse(original).unwrap().version.to_string();
        let back = compiled_back(text, &profile);
        same_behaviour(&bound_as(original, &back), &back, 8, seed)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
    }

    /// A constant table no compiler wrote (the fuzz target's finds): what HLSL cannot
    /// declare as the table has it is named in the first comment with the reason, mended
    /// or read by register, and the text still compiles back and runs as the original.
    #[test]
    fn a_constant_table_hlsl_cannot_declare_is_named_in_the_first_comment() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/regressions/d3d9_decompile");
        for (file, says, declared) in [
            (
                "ctab-float6-vector.bin",
                "// the constant table's 'f4' is not declared: its type (float6) is none HLSL has",
                "float4 c13 : register(c13);",
            ),
            (
                "ctab-unknown-type.bin",
                "'fogColor' is not declared: its type (type63484) is none HLSL has",
                "float4 c0 : register(c0);",
            ),
            (
                "ctab-void-sampler.bin",
                "'scube' is not declared: a void is in the sampler registers",
                "samplerCUBE s2 : register(s2);",
            ),
            (
                "ctab-two-samplers-one-name.bin",
                "'s2D' is not declared: 's2D' names another constant",
                "sampler2D s1 : register(s1);",
            ),
            (
                "ctab-register-count-past-the-elements.bin",
                "gives 'flags' 15618 registers, more than its type's 2",
                "bool flags[2] : register(c2);",
            ),
            (
                "ctab-constant-past-the-register-file.bin",
                "'xform' is not declared: its type takes c65485–c65485, past vs_2_0's last, c8191",
                "float4 c41 : register(c41);",
            ),
            (
                // Declared past the register file, as Microsoft's compilers take it
                // (only the registers read must be in it): the table places one.
                "ctab-array-past-the-register-file.bin",
                "float4 xform[22273] : register(c41);",
                "float4 fogData[22273] : register(c14);",
            ),
        ] {
            let bytes = std::fs::read(dir.join(file)).unwrap();
            let text = decompile(&bytes).unwrap();
            assert!(text.contains(says), "{file}:\n{text}");
            assert!(text.contains(declared), "{file}:\n{text}");
            runs_as_the_original(&bytes, &text, 3);
        }
    }

    /// A co-issued pair reads before either writes: where the second reads what the
    /// first writes, the text writes the second first (`cnd` reads the old r0.a), and it
    /// runs as the original; a pair that reads each other's results is refused, saying
    /// why.
    #[test]
    fn a_coissued_pair_reads_before_either_writes() {
        let source = "ps_1_1\ntex t0\ntex t1\nmov r0, t0\nmov r1, t1\n\
                      mov r0.a, r1.b\n+ cnd r0.rgb, r0.a, c1, c2\n";
        let bytes = crate::shader::d3d9::asm::assemble(source).unwrap();
        let text = decompile(&bytes).unwrap();
        // The condition is t0's alpha, r0.a before the pair.
        assert!(text.contains("tex2D(s0, (tc0).xy).www > 0.5"), "{text}");
        runs_as_the_original(&bytes, &text, 5);
    }

    /// A read at a relative address over loose registers among which a `def` sits
    /// (Wine's `test_mvp` reladdr shader): where the index reaches the def, the text
    /// reads its literal, elsewhere the array, so every index reads what the original
    /// reads.
    #[test]
    fn a_relative_read_over_a_def_reads_the_literal_where_it_lands() {
        use crate::shader::d3d9::run::OutputRegister;
        let source = "vs_2_0\ndcl_position v0\ndef c3, 1, 0.5, 0.25, 2\n\
                      mova a0.x, c0.x\nmov oD0, c1[a0.x]\nmov oPos, v0\n";
        let bytes = crate::shader::d3d9::asm::assemble(source).unwrap();
        let text = decompile(&bytes).unwrap();
        assert!(
            text.contains("a0.x == 2 ? float4(1.0, 0.5, 0.25, 2.0) : c1[a0.x]"),
            "{text}"
        );
        let back = compiled_back(&text, "vs_2_0");
        for index in -1..6 {
            let mut float = vec![(0, [index as f32, 0.0, 0.0, 0.0])];
            float.extend((1..8).map(|r| (r, [r as f32 / 8.0, 0.5, -0.5, 1.0])));
            let colour = |b: &[u8]| output_of(b, &float, OutputRegister::Color(0));
            assert_eq!(colour(&back), colour(&bytes), "index {index}\n{text}");
        }
    }

    /// vs_3_0 `lit` as the instruction has it, infinite powers and a NaN power where
    /// the specular is not taken among its inputs; the one input the text does not
    /// follow, a NaN power where it is taken, is said in the first comment.
    #[test]
    fn lit_in_vs_3_0_is_the_instruction_and_says_what_it_is_not() {
        use crate::shader::d3d9::run::OutputRegister;
        let source = "vs_3_0\ndcl_position v0\ndcl_position o0\ndcl_texcoord o1\n\
                      mov o0, v0\nlit o1, c0\n";
        let bytes = crate::shader::d3d9::asm::assemble(source).unwrap();
        let text = decompile(&bytes).unwrap();
        assert!(
            text.contains("// lit: where n.l and n.h are above 0 and the power (w) is NaN"),
            "{text}"
        );
        let back = compiled_back(&text, "vs_3_0");
        let (nan, inf) = (f32::NAN, f32::INFINITY);
        for c0 in [
            [1.0, 0.5, 0.0, inf],
            [1.0, 0.5, 0.0, -inf],
            [1.0, 0.5, 0.0, 3.0],
            [1.0, 0.5, 0.0, -200.0],
            [0.5, 2.0, 0.0, 200.0],
            [-1.0, 0.5, 0.0, nan],
            [1.0, 0.0, 0.0, nan],
        ] {
            let lit =
                |b: &[u8]| output_of(b, &[(0, c0)], OutputRegister::Output(1)).map(f32::to_bits);
            assert_eq!(lit(&back), lit(&bytes), "c0 = {c0:?}\n{text}");
        }
    }

    /// `loop aL, i0` on an int register the game sets (no defi, no table): the text's
    /// loop counts to i0 and runs aL from 0 by 1, as D3DX sets an int, the first comment
    /// says so, and it compiles to `loop aL, i0` again, which starts and steps aL as the
    /// game's i0 says whatever it holds.
    #[test]
    fn a_loop_on_an_int_the_game_sets_compiles_to_the_same_loop() {
        use crate::shader::d3d9::run::{self, Inputs, OutputRegister};
        let source = "vs_2_0\ndcl_position v0\nmov r0, c0\nloop aL, i0\n\
                      add r0, r0, c1[aL]\nendloop\nmov oPos, v0\nmov oD0, r0\n";
        let bytes = crate::shader::d3d9::asm::assemble(source).unwrap();
        let text = decompile(&bytes).unwrap();
        assert!(text.contains("// i0 is set by the game"), "{text}");
        assert!(text.contains("k0 < i0;"), "{text}");
        let back = compiled_back(&text, "vs_2_0");
        for i0 in [[0, 0, 1, 0], [3, 0, 1, 0], [3, 1, 2, 0], [2, 5, -2, 0]] {
            let mut inputs = Inputs::default();
            inputs.bindings.constants.int.insert(0, i0);
            let float = &mut inputs.bindings.constants.float;
            for r in 0..8 {
                float.insert(r, [r as f32, 0.5, -0.25, 1.0]);
            }
            let colour = |b: &[u8]| run::run(b, &inputs).unwrap().values[&OutputRegister::Color(0)];
            assert_eq!(colour(&back), colour(&bytes), "i0 = {i0:?}\n{text}");
        }
    }

    /// A pixel shader that writes no colour or depth and discards nothing (Wine's
    /// `ps_3_0_5`, a loop reading inputs at aL into r0): nothing it computes is seen,
    /// so the text computes nothing and says so, writing 0 to the colour HLSL needs
    /// (undefined in the original).
    #[test]
    fn a_pixel_shader_that_outputs_nothing_computes_nothing() {
        let source =
            "ps_3_0\ndcl_texcoord v0\nloop aL, i0\nmov r0, v0[aL]\nendloop\nadd r1, r0, c0\n";
        let bytes = crate::shader::d3d9::asm::assemble(source).unwrap();
        let text = decompile(&bytes).unwrap();
        assert!(
            text.contains("// the shader writes no colour or depth and discards nothing: what its 4 instructions compute is seen nowhere"),
            "{text}"
        );
        assert!(text.contains("    oC0 = 0;\n}"), "{text}");
        runs_as_the_original(&bytes, &text, 6);
        // One that discards is decompiled whole.
        let kills = "ps_3_0\ndcl_texcoord v0\nadd r0, v0, c0\ntexkill r0\n";
        let bytes = crate::shader::d3d9::asm::assemble(kills).unwrap();
        let text = decompile(&bytes).unwrap();
        assert!(text.contains("clip(") || text.contains("discard"), "{text}");
        runs_as_the_original(&bytes, &text, 7);
    }

    /// Inputs read at aL (`v1[aL]`, as fxc makes of an input array read in a `[loop]`):
    /// one array from the lowest so read over the dcls that go on with its usage index
    /// by index, every read of them an element, and the text runs as the original.
    #[test]
    fn inputs_read_at_al_are_one_input_array() {
        let source = "ps_3_0\ndefi i0, 3, 0, 1, 0\ndcl_color v0\ndcl_texcoord2 v1\n\
                      dcl_texcoord3 v2\ndcl_texcoord4 v3\ndcl_texcoord7 v4\n\
                      mov r0, v0\nloop aL, i0\nmad r0, v1[aL], c0, r0\nendloop\n\
                      add r0, r0, v2\nadd oC0, r0, v4\n";
        let bytes = crate::shader::d3d9::asm::assemble(source).unwrap();
        let text = decompile(&bytes).unwrap();
        for want in [
            "float4 v1[3] : TEXCOORD2",
            "float4 v4 : TEXCOORD7",
            "v1[aL0]",
            "v1[1]",
        ] {
            assert!(text.contains(want), "no '{want}':\n{text}");
        }
        runs_as_the_original(&bytes, &text, 8);
        // Read at aL from a register no dcl declares: written as asm, saying why.
        let bare = "ps_3_0\ndefi i0, 2, 0, 1, 0\ndcl_texcoord v0\nmov r0, v0\n\
                    loop aL, i0\nadd r0, r0, v1[aL]\nendloop\nmov oC0, r0\n";
        written_as_asm(bare, "ps_3_0", "from v1, which no dcl declares");
    }

    /// The d3d9_decompile fuzz target's vs_2_0 shader of four `rep` loops over six
    /// registers and a constant array read at `a0.x` over a `def`: its text took 13
    /// temporaries (the position, computed first, held one through every loop; each loop
    /// moved its carried values into registers of their own). It fits vs_2_0's 12 now,
    /// and runs as the original.
    #[test]
    fn a_text_of_four_loops_fits_the_temporaries_of_vs_2_0() {
        let bytes = include_bytes!(
            "../../../fuzz/regressions/d3d9_decompile/crash-5478a02b731db147590c045349d0836a0367f286"
        );
        let text = decompile(bytes).unwrap();
        assert!(
            text.starts_with("// vs_2_0: decompiled by shaderfs"),
            "{text}"
        );
        runs_as_the_original(bytes, &text, 9);
    }

    /// A scalar whose type info gives it two columns (a member, in the d3d9_decompile
    /// fuzz target's table) is a type HLSL has not: its constant is not declared, its
    /// registers read by their own names (the text read `p[1].f_2.y`, which no compiler
    /// takes), and the text runs as the original.
    #[test]
    fn a_scalar_of_two_columns_is_read_by_its_registers() {
        let bytes = include_bytes!(
            "../../../fuzz/regressions/d3d9_decompile/crash-bf9147086ca1049c47ce0cdca88081c2722b7328"
        );
        let text = decompile(bytes).unwrap();
        assert!(
            text.contains("the constant table's 'p' is not declared: its member 'f_2': its type (")
                && text.contains("c11.y"),
            "{text}"
        );
        runs_as_the_original(bytes, &text, 10);
    }

    /// A constant's name with a line break in it (the table's bytes say anything) is
    /// written escaped in the first comment, which it would otherwise end (the
    /// d3d9_decompile fuzz target's find: the text of the name's second line did not
    /// compile).
    #[test]
    fn a_name_with_a_line_break_stays_in_its_comment() {
        let bytes = include_bytes!(
            "../../../fuzz/regressions/d3d9_decompile/crash-5ec119fb71b09f46b989a21727cc155d389732c7"
        );
        let text = decompile(bytes).unwrap();
        assert!(
            text.contains("// the constant table's 's\\nf' is not declared"),
            "{text}"
        );
        let version = bytecode::shader_version(bytes).unwrap().to_string();
        compiled_back(&text, &version);
    }

    /// A relative read where a0 holds a def's literal reads one register: the text reads
    /// it so (an index both compilers would fold, and refuse past the array, X3504), and
    /// one past the model's constants as 0, the first comment saying so (the
    /// d3d9_decompile fuzz target's `mov a0.x` of -inf, read at c3[a0.x]).
    #[test]
    fn a_relative_read_at_a_literal_address_reads_its_register() {
        let source = "vs_2_0\ndef c0, 3, 0, 0, 0\ndef c1, -9, 0, 0, 0\ndcl_position v0\n\
                      mova a0.x, c0.x\nmov oD0, c[a0.x + 4]\nmova a0.y, c1.x\n\
                      mov oT0, c[a0.y + 2]\nmov oPos, v0\n";
        let bytes = crate::shader::d3d9::asm::assemble(source).unwrap();
        let text = decompile(&bytes).unwrap();
        assert!(text.contains("oD0 = c2[5];"), "{text}");
        assert!(text.contains("oT0 = float4(0.0, 0.0, 0.0, 0.0);"), "{text}");
        assert!(
            text.contains("reads c-7, past vs_2_0's constants"),
            "{text}"
        );
        let ours = compiled_back(&text, "vs_2_0");
        same_behaviour(&bound_as(&bytes, &ours), &ours, 16, 0xA0).unwrap();
    }

    /// Microsoft's code of arrays of matrices and structs read at a run-time index reads
    /// `c0[a0.x]` of `float4x3 Bones[29]`: the text reads the element (`Bones[a0.x]`),
    /// a0 the index the code shows (a D3DCOLOR's bytes, a whole number times the
    /// element's registers, a loop's counter), and compiles back to a shader that
    /// behaves as the original.
    #[test]
    fn arrays_of_matrices_and_structs_are_read_by_element() {
        let testdata =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/shader/hlsl/testdata");
        for (file, profile, wants) in [
            (
                "heldout/skinning.vs_2_0.bin",
                "vs_2_0",
                &[
                    "a0 = D3DCOLORtoUBYTE4(v6.zyxw).yzxw;",
                    "dot(v0, Bones[a0.x]._m00_m10_m20_m30)",
                ][..],
            ),
            // vs_1_1's `mov a0.x` floors: the compilers' code of the index again.
            (
                "heldout/skinning.vs_1_1.bin",
                "vs_1_1",
                &["a0.x = D3DCOLORtoUBYTE4(v6.zyxw).y;", "Bones[a0.x]"][..],
            ),
            (
                "heldout/water_vs.vs_3_0.bin",
                "vs_3_0",
                &["a0.x = (int)(r0.z);", "Waves[a0.x].amplitude"][..],
            ),
            (
                "regressions/bone_index.vs_2_0.bin",
                "vs_2_0",
                &[
                    "a0.x = (int)round(r0.x / 3);",
                    "a0.y = D3DCOLORtoUBYTE4(v1.zyyw).z;",
                    "Lights[a0.x].colour",
                ][..],
            ),
            (
                "regressions/bone_index.vs_3_0.bin",
                "vs_3_0",
                &[
                    "a0.x = D3DCOLORtoUBYTE4(v1.zyzw).z;",
                    "Bones[a0.x]",
                    "Lights[a0.x].range",
                ][..],
            ),
        ] {
            let bytes = std::fs::read(testdata.join(file)).unwrap();
            let text = decompile(&bytes).unwrap();
            assert!(!text.contains("asm"), "{file}:\n{text}");
            for w in wants {
                assert!(text.contains(w), "{file}: no '{w}':\n{text}");
            }
            let ours = compiled_back(&text, profile);
            same_behaviour(&bound_as(&bytes, &ours), &ours, 24, 0xB0E)
                .unwrap_or_else(|e| panic!("{file}: {e}\n{text}"));
        }
        // A product the code does not show to be an index times the element's registers
        // (skinning's 765.005859, three times D3DCOLORtoUBYTE4's scale, made 700): a0
        // reads registers inside elements, which no HLSL index says; the shader is its
        // instructions.
        let mut bytes = std::fs::read(testdata.join("heldout/skinning.vs_2_0.bin")).unwrap();
        let shader = bytecode::parse(&bytes).unwrap();
        let def = shader
            .instructions()
            .find(|i| i.mnemonic() == "def")
            .unwrap();
        let at = def.offset + 12;
        assert_eq!(
            f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()),
            765.005_86
        );
        bytes[at..at + 4].copy_from_slice(&700.0f32.to_le_bytes());
        written_as_asm_bytes(&bytes, "vs_2_0", "reads 'Bones' at a relative address");
    }

    /// An array of matrices read at a `loop`'s aL that starts and steps by whole elements
    /// (`defi i0, 4, 3, 3, 0` over `float4x3 Bones[8]`, as one writes by hand): the text
    /// counts aL by elements (`aL0_3`, from 1 by 1) and reads `Bones[aL0_3]`, and it runs
    /// as the original; where aL steps by part of an element, the registers it reads are
    /// no element HLSL can name, and the shader stays its instructions.
    #[test]
    fn a_matrix_array_read_at_al_is_read_by_element_where_al_steps_by_elements() {
        let table_source = "float4x3 Bones[8];\nfloat4 main(float4 p : POSITION) : POSITION\n\
                            { return float4(mul(p, Bones[0]) + mul(p, Bones[7]), 1); }\n";
        let shader = |profile: &str, defi: &str| {
            let table = ConstantTable::from_bytecode(&compiled_back(table_source, profile))
                .unwrap()
                .unwrap();
            let source = format!(
                "{profile}\ndefi i0, {defi}\ndef c30, 0, 0, 0, 1\ndcl_position v0\n\
                 {}mov r0, c30.x\nloop aL, i0\ndp4 r1.x, v0, c0[aL]\ndp4 r1.y, v0, c1[aL]\n\
                 dp4 r1.z, v0, c2[aL]\nadd r0.xyz, r0, r1\nmul r0.w, v0.w, c2[aL].w\nendloop\n\
                 mov {o}.xyz, r0\nmov {o}.w, c30.w\n",
                if profile == "vs_3_0" {
                    "dcl_position o0\n"
                } else {
                    ""
                },
                o = if profile == "vs_3_0" { "o0" } else { "oPos" },
            );
            let bytes = crate::shader::d3d9::asm::assemble(&source).unwrap();
            crate::shader::d3d9::ctab::replace_ctab(&bytes, &table.encode()).unwrap()
        };
        for (profile, defi, wants) in [
            (
                "vs_3_0",
                "4, 3, 3, 0",
                ["int aL0_3 = 1;", "aL0_3 += 1;", "Bones[aL0_3]"],
            ),
            (
                "vs_2_0",
                "8, 0, 3, 0",
                ["int aL0_3 = 0;", "aL0_3 += 1;", "Bones[aL0_3]"],
            ),
            (
                "vs_3_0",
                "3, 21, -6, 0",
                ["int aL0_3 = 7;", "aL0_3 += -2;", "Bones[aL0_3]"],
            ),
        ] {
            let bytes = shader(profile, defi);
            let text = decompile(&bytes).unwrap();
            assert!(!text.contains("asm"), "{defi}:\n{text}");
            for w in wants {
                assert!(text.contains(w), "{defi}: no '{w}':\n{text}");
            }
            runs_as_the_original(&bytes, &text, 0xA1);
        }
        written_as_asm_bytes(
            &shader("vs_3_0", "4, 0, 2, 0"),
            "vs_3_0",
            "nor of elements whose index the code shows a0 to be or an aL to step by",
        );
    }

    /// ps_1_1–1_3's three-row texture reads, `texm3x3tex` and `texreg2rgb`, sample at
    /// three coordinates: without a table or a `dcl` to type the stage, its sampler is a
    /// volume (`tex2D` would read two, compiled as `texm3x2tex` or `texreg2gb`), and the
    /// text compiles back to the very instructions.
    #[test]
    fn a_three_coordinate_stage_of_no_type_said_is_a_volume() {
        for (profile, code) in [
            (
                "ps_1_1",
                "tex t0\ntexm3x3pad t1, t0_bx2\ntexm3x3pad t2, t0_bx2\ntexm3x3tex t3, t0_bx2\nmov r0, t3\n",
            ),
            ("ps_1_3", "tex t0\ntexreg2rgb t1, t0\nmov r0, t1\n"),
        ] {
            let bytes = crate::shader::d3d9::asm::assemble(&format!("{profile}\n{code}")).unwrap();
            let text = decompile(&bytes).unwrap();
            assert!(text.contains("tex3D("), "{text}");
            assert_eq!(code_of(&compiled_back(&text, profile)), code_of(&bytes), "{text}");
        }
    }

    /// What no HLSL compiles to is the shader's instructions in an asm block, the first
    /// comment saying what: vs_3_0 outputs written at aL (`mov o1[aL], …`), a ps_1_x
    /// co-issued pair each of which reads what the other writes (inputs read at aL from
    /// a register no dcl declares: above). Each compiles back to its instructions, and
    /// the globals are the table's constants on their registers.
    #[test]
    fn what_no_hlsl_says_is_written_as_asm() {
        let outputs = "vs_3_0\ndefi i0, 2, 0, 1, 0\ndcl_position v0\ndcl_position o0\n\
                       dcl_texcoord o1\ndcl_texcoord1 o2\nmov o0, v0\nloop aL, i0\n\
                       mov o1[aL], c0[aL]\nendloop\n";
        let text = written_as_asm(outputs, "vs_3_0", "writes o1 at a relative address");
        assert!(
            text.contains("        loop aL, i0\n            mov o1[aL], c0[aL]\n        endloop\n"),
            "{text}"
        );
        let pair = "ps_1_1\ntexcoord t0\nmov r0, t0\nmov r1, t0\n\
                    mov r0.rgb, r1.a\n+ mov r1.a, r0.b\n";
        written_as_asm(pair, "ps_1_1", "each of which reads what the other writes");
    }

    /// ps_1_1–1_3 reads no HLSL compiles to, found by the d3d9_decompile fuzz target and
    /// taken by Microsoft's assembler too, are the shader's instructions: a dependent read
    /// of a swizzled register samples at coordinates its stage does not receive, and a
    /// `t` no texture instruction wrote has no w lane HLSL can read (`texcoord` gives xyz).
    #[test]
    fn ps_1_x_reads_no_hlsl_says_are_written_as_asm() {
        let swizzled = "ps_1_3\ntex t0\ntexreg2ar t1, t0.xwyx\nadd_x4 r0, -t0, t1_bias\n\
                        mov r0.w, t0.w\n";
        written_as_asm(swizzled, "ps_1_3", "'texreg2ar': reads t0.xwyx");
        let matrix = "ps_1_3\ntex t0\ntexm3x2pad t1, t0\ntexm3x2tex t2, t0.zzzz\nmov r0, t2\n";
        written_as_asm(matrix, "ps_1_3", "'texm3x2tex': reads t0.zzzz");
        let unwritten = "ps_1_2\ndef c0, 0, 1, 0, 1\ntexcoord t0\nmov r0, t0\n\
                         dp3 r1, r0, c0\nmov r0.w, r1.w\ncnd r0, r0.w, c1, t2\n";
        written_as_asm(
            unwritten,
            "ps_1_2",
            "'cnd': reads t2.w, which no texture instruction wrote",
        );
        let alpha = "ps_1_1\ntexcoord t0\nmov r0, t1.w\n";
        written_as_asm(alpha, "ps_1_1", "reads t1.w");
    }

    /// ps_1_4: a register the first phase wrote keeps no alpha across `phase` (the
    /// d3d9_decompile fuzz target's find, the colour read at the end): the text makes
    /// that alpha 0, says so, and compiles back (ours refuses a read of it).
    #[test]
    fn a_first_phase_alpha_read_after_phase_is_0() {
        let source = "ps_1_4\ntexld r0, t0\ntexcrd r1.xyz, t1\nbem r2.xy, r1, r0\n\
                      phase\ntexld r2, r2\nmov r0.xyz, r2\n";
        let bytes = crate::shader::d3d9::asm::assemble(source).unwrap();
        let text = decompile(&bytes).unwrap();
        assert!(
            text.contains("// the alpha of r0, r1 (written before phase)"),
            "{text}"
        );
        assert!(text.contains("    r0.w = 0.0;\n"), "{text}");
        runs_as_the_original(&bytes, &text, 9);
    }

    /// ps_1_4's texcrd copies three lanes (its fourth is undefined, 1 here): the text
    /// reads a whole `texcrd r0, t0` as `float4(tc0.xyz, 1)`, which ps_1_4 can compile.
    #[test]
    fn texcrd_reads_three_lanes_of_its_coordinates() {
        let bytes = crate::shader::d3d9::asm::assemble("ps_1_4\ntexcrd r0, t0\n").unwrap();
        let text = decompile(&bytes).unwrap();
        assert!(text.contains("float4(tc0.xyz, 1)"), "{text}");
        runs_as_the_original(&bytes, &text, 4);
    }

    /// Bump-environment mapping (`texbem`, `texbeml`, `bem`) reads texture-stage state no
    /// HLSL names: the texture stage is an `asm { }` block, the first comment says why,
    /// the arithmetic after it is HLSL over the registers it wrote, and the text runs as
    /// the original with the stages' matrices drawn at random (a `tex` in place of the
    /// `texbem` does not: the trial sees the matrix).
    #[test]
    fn bump_mapping_keeps_its_texture_stage_as_asm() {
        let cases = [
            (
                "ps_1_1\ndef c0, 0.5, 0.25, 1, 1\ntex t0\ntexbem t1, t0\ntexbeml t2, t0\nmul r0, t1, t2\nmul r0.rgb, r0, c0\n",
                ["texbem t1, t0", "texbeml t2, t0", "r0 = t1 * t2;"],
            ),
            (
                "ps_1_4\ndef c1, 0.5, 0.5, 0.5, 0.5\ntexld r0, t0\ntexcrd r1.rgb, t1\nbem r2.rg, r1, r0\nphase\ntexld r2, r2\nmul r0, r2, c1\n",
                ["bem r2.xy, r1, r0", "phase", "texld r2, r2"],
            ),
        ];
        for (source, shows) in cases {
            let bytes = crate::shader::d3d9::asm::assemble(source).unwrap();
            let text = decompile(&bytes).unwrap();
            assert!(
                text.lines().nth(1).is_some_and(|l| l.contains(
                    "moves texture coordinates by a matrix of texture-stage state (D3DTSS_BUMPENVMAT*)"
                )),
                "{text}"
            );
            assert!(text.contains("    asm\n    {\n"), "{text}");
            for s in shows {
                assert!(text.contains(s), "{s}:\n{text}");
            }
            runs_as_the_original(&bytes, &text, 5);
            let unbumped = source
                .replace("texbem t1, t0", "tex t1")
                .replace("bem r2.rg, r1, r0", "add r2.rg, r1, r0");
            let unbumped = crate::shader::d3d9::asm::assemble(&unbumped).unwrap();
            // Both with the samplers bound as the text binds them.
            let options = Options {
                profile: bytecode::parse(&bytes).unwrap().version.to_string(),
                ..Options::default()
            };
            let back = compile("d.hlsl", &text, None, &options).unwrap().bytecode;
            assert!(
                same_behaviour(&bound_as(&bytes, &back), &bound_as(&unbumped, &back), 8, 5)
                    .is_err(),
                "the trial does not see the bump matrix:\n{source}"
            );
        }
    }

    /// Subroutines are functions over the registers, which are static globals (the
    /// inputs copied in, the outputs out); a `callnz` is an `if`; a subroutine calling
    /// one after it declares it first. The text runs as the original.
    #[test]
    fn subroutines_are_functions_over_static_registers() {
        let bytes = crate::shader::d3d9::asm::assemble(
            "vs_3_0\ndcl_position v0\ndcl_texcoord v1\ndcl_position o0\ndcl_texcoord o1.xy\n\
             defi i0, 3, 0, 1, 0\nmov r0, v0\ncall l2\nrep i0\ncallnz l3, b0\nendrep\n\
             mov o0, r0\nret\nlabel l2\ncall l3\nmul r0, r0, c0\nmov o1.xy, v1\nret\n\
             label l3\nadd r0, r0, c1\nret\n",
        )
        .unwrap();
        let text = decompile(&bytes).unwrap();
        for line in [
            "static float4 r0;",
            "void l3();",
            "void l2()\n{\n    l3();\n    r0 = r0 * c0;",
            "        if (b0) l3();",
            "    v0 = v0_in;",
            "    o0_out = o0;",
        ] {
            assert!(text.contains(line), "{line}:\n{text}");
        }
        runs_as_the_original(&bytes, &text, 5);
    }

    /// A value folded after a negation keeps its parentheses: `1 / -(a * b)`, not
    /// `1 / -a * b`, which divides first.
    #[test]
    fn a_negated_product_keeps_its_parentheses() {
        let bytes = crate::shader::d3d9::asm::assemble(
            "vs_2_0\ndcl_position v0\nmul r0.y, v0.x, c0.x\nrcp r1.x, -r0.y\nmov oPos, r1.x\n",
        )
        .unwrap();
        let text = decompile(&bytes).unwrap();
        assert!(text.contains("1.0 / -(v0.x * c0.x)"), "{text}");
    }

    /// A vertex shader that writes no position: every HLSL vertex shader writes one, so
    /// the text writes 0 there and its first comment says so; it compiles back and the
    /// outputs the shader has behave as before.
    #[test]
    fn a_vertex_shader_without_a_position_writes_0_there_and_says_so() {
        let bytes =
            crate::shader::d3d9::asm::assemble("vs_3_0\ndcl_texcoord o0\nmov o0, c0\n").unwrap();
        let text = decompile(&bytes).unwrap();
        assert!(
            text.contains("// the shader writes no position (undefined on the hardware); HLSL needs one, and o1 here is 0"),
            "{text}"
        );
        assert!(text.contains("out float4 o1 : POSITION0"), "{text}");
        runs_as_the_original(&bytes, &text, 6);
    }

    /// What a reader of the text sees: a transform by a table matrix as one `mul`, a value
    /// read once written where it is read, a loop as a `for`, a predicated write as a
    /// select; and it still runs as the original.
    #[test]
    fn the_text_reads_like_source_and_runs_as_the_original() {
        let source =
            "float4x4 wvp;\nfloat4 tint;\nvoid main(float4 pos : POSITION, float4 color : COLOR0, \
                      out float4 oPos : POSITION, out float4 oColor : COLOR0)\n\
                      { oPos = mul(pos, wvp); oColor = color * tint * 0.5; }\n";
        let options = Options {
            profile: "vs_2_0".into(),
            ..Options::default()
        };
        let original = compile("t.hlsl", source, None, &options).unwrap().bytecode;
        let d = decompiled(&original).unwrap();
        assert!(d.text.contains("    oPos = mul(v0, wvp);\n"), "{}", d.text);
        assert!(
            d.text.contains("    oD0 = v1 * tint * 0.5;\n"),
            "{}",
            d.text
        );
        assert!(
            d.text
                .starts_with("// vs_2_0: decompiled by shaderfs (6 instructions, 2 statements)\n"),
            "{}",
            d.text
        );
        let back = compile("d.hlsl", &d.text, None, &options).unwrap().bytecode;
        same_behaviour(&bound_as(&original, &back), &back, 8, 1).unwrap();

        let looped = crate::shader::d3d9::asm::assemble(
            "vs_3_0\ndcl_position v0\ndcl_position o0\ndefi i0, 3, 0, 1, 0\nmov r0, v0\n\
             loop aL, i0\nadd r0, r0, c[aL + 2]\nendloop\nsetp_gt p0, r0, c0\n(p0) mov r0, c1\nmov o0, r0\n",
        )
        .unwrap();
        let text = decompile(&looped).unwrap();
        assert!(text.contains("for (int k0 = 0; k0 < 3; k0++)"), "{text}");
        assert!(text.contains("r0 = p0 ? c1 : r0;"), "{text}");
        let options = Options {
            profile: "vs_3_0".into(),
            ..Options::default()
        };
        let back = compile("d.hlsl", &text, None, &options)
            .map_err(|f| f.render())
            .unwrap()
            .bytecode;
        same_behaviour(&bound_as(&looped, &back), &back, 8, 2).unwrap();
    }

    /// Every D3D9 shader Microsoft's compilers made of the vkd3d corpus (SM2/3, and SM1 in
    /// `legacy/`): decompiled, compiled back with shaderfs's compiler for its profile, it
    /// behaves as the original on random inputs (the constants bound by their names,
    /// which the decompiled text keeps). Those this first form refuses (loops) and the
    /// ps_1_1–1_3 ones that do not fit their model again are counted; the counts may only
    /// fall.
    #[test]
    fn corpus_shaders_decompile_and_compile_back_to_the_same_behaviour() {
        // Microsoft's output of real shaders kept in the repository (MPC-HC's, a CRT
        // filter's, Oblivion-style lighting; the compiler's held-out and regression
        // sources, and ps_1_x from the legacy compiler) is read in every clone; the corpus
        // where it is here.
        let testdata =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/shader/hlsl/testdata");
        let mut dirs = vec![
            testdata.join("heldout"),
            testdata.join("regressions"),
            testdata.join("sm1"),
        ];
        if let (Some(hlsl), Some(d3d9), Some(sha)) = (
            crate::test_corpus::corpus("hlsl"),
            crate::test_corpus::corpus("d3d9"),
            crate::test_corpus::corpus("sha"),
        ) {
            dirs.extend([
                hlsl.join("vkd3d"),
                hlsl.join("legacy"),
                d3d9.join("compiled"),
                d3d9.join("asm"),
                sha.join("assembled"),
                d3d9.join("wine-tests/visual"),
                d3d9.join("wine-tests/asm"),
                d3d9.join("wine-tests/d3dx9"),
            ]);
        }
        let mut files = Vec::new();
        for dir in dirs {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.extension()
                    .is_some_and(|x| x == "bin" || x == "vso" || x == "pso")
                {
                    files.push(p);
                }
            }
        }
        files.sort();
        let (mut same, mut refused) = (0, 0);
        let (mut as_asm, mut as_asm_back, mut breaking) = (0, 0, 0);
        let (mut instructions, mut statements) = (0, 0);
        let mut problems = Vec::new();
        let mut oversized = Vec::new();
        // Wine's tests hold fragments and broken shaders on purpose (an assembler's
        // conformance cases, tables written by hand): only those the validator takes
        // are shaders a game could create.
        let mut invalid = 0;
        for path in &files {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(path).unwrap();
            if path.to_string_lossy().contains("wine-tests")
                && !bytecode::parse(&bytes)
                    .is_ok_and(|s| crate::shader::d3d9::validate::validate(&s).is_empty())
            {
                invalid += 1;
                continue;
            }
            // Written as asm, every valid shader compiles back to its instructions.
            let shader = bytecode::parse(&bytes).unwrap();
            if !crate::shader::d3d9::validate::validate(&shader).is_empty() {
                breaking += 1;
            } else {
                match forced_asm(&bytes) {
                    Some(text) => {
                        let version = shader.version.to_string();
                        let options = Options {
                            profile: version.clone(),
                            ..Options::default()
                        };
                        match compile("asm.hlsl", &text, None, &options) {
                            Ok(c) if code_of(&c.bytecode) == code_of(&bytes) => as_asm_back += 1,
                            Ok(_) => problems.push(format!(
                                "{name}: written as asm, compiles back to other instructions\n{text}"
                            )),
                            Err(f) => problems.push(format!(
                                "{name}: written as asm, does not compile back:\n{}\n{text}",
                                f.render()
                            )),
                        }
                    }
                    None => problems.push(format!("{name}: cannot be written as asm")),
                }
            }
            let text = match decompiled(&bytes) {
                Ok(d) if d.as_asm => {
                    as_asm += 1;
                    problems.push(format!("{name}: written as asm:\n{}", d.text));
                    continue;
                }
                Ok(d) => {
                    instructions += d.instructions;
                    statements += d.statements;
                    d.text
                }
                Err(e) => {
                    refused += 1;
                    eprintln!("{name}: refused: {e}");
                    problems.push(format!("{name}: refused: {e}"));
                    continue;
                }
            };
            // Every constant of the table is declared by its name (as HLSL spells it).
            if let Ok(Some(t)) = ConstantTable::from_bytecode(&bytes) {
                let missing: Vec<String> = t
                    .constants
                    .iter()
                    .filter(|c| {
                        !text.lines().take_while(|l| l.starts_with("//")).any(|l| {
                            l.contains(&format!(
                                "the constant table's '{}' is not declared",
                                c.name
                            ))
                        })
                    })
                    .map(|c| identifier(&c.name))
                    .filter(|n| {
                        !text.lines().any(|l| {
                            !l.starts_with("//")
                                && l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                                    .any(|w| w == n)
                        })
                    })
                    .collect();
                if !missing.is_empty() {
                    problems.push(format!(
                        "{name}: the text does not name {missing:?}\n{text}"
                    ));
                }
            }
            let version = bytecode::shader_version(&bytes).unwrap();
            let options = Options {
                profile: version.to_string(),
                ..Options::default()
            };
            let ours = match compile("decompiled.hlsl", &text, None, &options) {
                Ok(c) => c.bytecode,
                Err(f) => {
                    // Text of a shader its model does not hold (Microsoft's own ps_1_x
                    // code past 8 slots) cannot fit it either.
                    let shader = bytecode::parse(&bytes).unwrap();
                    let over = crate::shader::d3d9::validate::validate(&shader);
                    match over.is_empty() {
                        true => problems.push(format!(
                            "{name}: does not compile back:\n{}\n{text}",
                            f.render()
                        )),
                        false => oversized.push(format!("{name}: {}", over[0].message)),
                    }
                    continue;
                }
            };
            // Constants are matched by name: the original's as HLSL spells them.
            let original = bound_as(&bytes, &ours);
            match same_behaviour(&original, &ours, 16, 0xDEC) {
                Ok(()) => same += 1,
                Err(e) => problems.push(format!("{name}: behaves otherwise: {e}\n{text}")),
            }
        }
        // Known gaps, counted; each count may only fall: ps_1_x shaders whose every
        // output lane overflows [-1, 1] on random inputs (the trial compares nothing).
        // Everything else, Wine's tests among it, must compile back and behave.
        let (unmeasured, problems): (Vec<String>, Vec<String>) = problems
            .into_iter()
            .partition(|p| p.contains("nothing was compared"));
        eprintln!(
            "decompiled: {} shaders ({invalid} of Wine's tests the validator refuses left out); {same} compile back and behave the same, {refused} refused, {as_asm} written as asm ({as_asm_back} compile back to their instructions when written so; {breaking} break their model's rules), {} do not fit their model and neither does the original, {} unmeasured (ps_1_x overflow), {} otherwise; {statements} statements for {instructions} instructions ({:.2})",
            files.len(),
            oversized.len(),
            unmeasured.len(),
            problems.len(),
            statements as f64 / instructions.max(1) as f64
        );
        if std::env::var_os("SHADERFS_SHOW_EARLY").is_some() {
            eprintln!(
                "{}\n\n{}\n\n{}",
                oversized.join("\n"),
                unmeasured.join("\n\n"),
                problems.join("\n\n"),
            );
        }
        assert!(
            refused == 0 && oversized.len() <= 20 && unmeasured.is_empty(),
            "more refused ({refused}), past their model ({}) or unmeasured ({}) than before",
            oversized.len(),
            unmeasured.len(),
        );
        assert!(
            statements * 10 <= instructions * 7,
            "{statements} statements for {instructions} instructions: values are folded into fewer statements than that"
        );
        assert!(
            problems.is_empty(),
            "{} problems:\n{}",
            problems.len(),
            problems
                .iter()
                .take(400)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n\n")
        );
    }
}
