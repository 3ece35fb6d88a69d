//! A CPU interpreter for Direct3D 9 shader bytecode (vs_1_1 … vs_3_0, ps_1_1 … ps_3_0),
//! for checking compilers by what their output *does*: run Microsoft's bytecode and ours on
//! the same inputs and compare.
//!
//! [`Program::new`] parses the bytecode once (`bytecode::parse`), decodes every operand and
//! matches the flow-control instructions; [`Program::run`] executes one invocation and
//! [`Program::run_quad`] four pixels of a 2×2 quad in lockstep, so that `dsx`/`dsy` and the
//! implicit level of detail of `texld` see their neighbours as on hardware (coarse
//! derivatives: the difference across the quad's top row and left column). [`draw`]
//! (`raster.rs`) runs a vertex and a pixel shader over triangles for chosen pixels.
//!
//! Semantics chosen, as Direct3D 9 hardware and WARP behave:
//! - IEEE single precision throughout (`0 × ∞` is NaN); `rcp 0` and `rsq 0` are +∞, `rsq`
//!   and `log` take the absolute value, `log 0` is −∞, `exp` is the exact 2^x; `pow` is
//!   `exp(src1 × log(src0))`, the expansion `pow---vs.md` and `pow---ps.md` give (and
//!   compilers write for HLSL's `pow`), so `0^0` is NaN.
//! - Scalar sources (`rcp`, `rsq`, `exp`, `log`, `pow`, …) read the `.w` of the swizzled
//!   source, as the D3D8/9 references' pseudo-code does (compilers write replicate
//!   swizzles, where every component is the same).
//! - `mova` rounds to nearest (`floor(x + 0.5)`); vs_1_1 `mov a0` floors.
//! - ps_1_x: every arithmetic result and every constant is clamped to [−1, 1]
//!   (`MaxPixelShaderValue` of the reference rasterizer is 1), `texcoord` saturates, `r0`
//!   is the colour output.
//! - A sampler with no texture returns (0, 0, 0, 1), what D3D9 drivers give for a NULL
//!   texture. A float constant beyond the bound ones reads 0, as does a relative address
//!   out of range; int and bool constants not given are 0 and false.
//! - An input register nobody supplies reads (0, 0, 0, 0).
//! - Denormal constants and results are flushed to zero, as D3D9 hardware and WARP do
//!   (uint uniforms written as bits are denormals and read as 0 on Windows).
//! - CTAB default values are loaded only when the caller asks
//!   ([`Constants::with_ctab_defaults`]): D3D9 itself never applies them (D3DX does);
//!   `def`/`defi`/`defb` always override what the caller set.
//!
//! Bad bytecode and instructions that cannot run are [`RunError`]s naming the byte offset;
//! a step limit ([`STEP_LIMIT`]) turns an endless loop into an error.

mod raster;
mod texture;

use std::collections::BTreeMap;
use std::fmt;

pub use raster::{draw, Draw, PointState, Topology};
pub use texture::{Address, Filter, Sampler, Texture, TextureKind};

use super::bytecode::{self, BytecodeError, Item, ShaderKind, Version};
use super::ctab::{ConstantTable, RegisterSet};
use super::opcodes::Class;
use super::registers::{RegisterType, CONST_BANK_SIZE};
use super::syntax::USAGES;

/// Instructions executed per invocation (per quad for [`Program::run_quad`]) before the
/// run is abandoned as endless.
pub const STEP_LIMIT: u64 = 1 << 22;

/// Nesting of calls, loops and ifs together; D3D9 allows far less.
const MAX_DEPTH: usize = 64;

/// Why a shader cannot be run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Bytecode(#[from] BytecodeError),
    #[error("constant table: {0}")]
    Ctab(String),
    #[error("at byte {offset}: '{mnemonic}': {what}")]
    Instruction {
        offset: usize,
        mnemonic: String,
        what: String,
    },
    #[error("draw: {0}")]
    Draw(String),
    #[error("more than {limit} instructions executed (an endless loop?)")]
    StepLimit { limit: u64 },
}

/// A `dcl` semantic: `D3DDECLUSAGE` and usage index (`TEXCOORD3` is usage 5, index 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Semantic {
    pub usage: u8,
    pub index: u8,
}

impl Semantic {
    pub const POSITION: u8 = 0;
    pub const PSIZE: u8 = 4;
    pub const TEXCOORD: u8 = 5;
    pub const COLOR: u8 = 10;
    pub const FOG: u8 = 11;

    pub const fn new(usage: u8, index: u8) -> Semantic {
        Semantic { usage, index }
    }

    /// Reads `TEXCOORD3`, `color`, `POSITION0` (any case; no digits is index 0).
    pub fn parse(text: &str) -> Option<Semantic> {
        let lower = text.to_ascii_lowercase();
        let digits = lower.bytes().rev().take_while(u8::is_ascii_digit).count();
        let (name, number) = lower.split_at(lower.len() - digits);
        let usage = USAGES.iter().position(|u| *u == name)? as u8;
        let index = if number.is_empty() {
            0
        } else {
            number.parse::<u8>().ok().filter(|i| *i < 16)?
        };
        Some(Semantic { usage, index })
    }
}

impl fmt::Display for Semantic {
    /// `TEXCOORD3`, `POSITION0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match USAGES.get(self.usage as usize) {
            Some(u) => write!(f, "{}{}", u.to_ascii_uppercase(), self.index),
            None => write!(f, "USAGE{}_{}", self.usage, self.index),
        }
    }
}

/// Constant registers set by the application (`SetPixelShaderConstantF/I/B`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Constants {
    pub float: BTreeMap<u32, [f32; 4]>,
    pub int: BTreeMap<u32, [i32; 4]>,
    pub bool: BTreeMap<u32, bool>,
}

impl Constants {
    /// These constants over the default values of `program`'s constant table (those the
    /// caller set win), as D3DX's `SetDefaults` would have loaded them.
    pub fn with_ctab_defaults(&self, program: &Program) -> Constants {
        let mut c = program.ctab_defaults.clone();
        c.float.extend(self.float.iter().map(|(k, v)| (*k, *v)));
        c.int.extend(self.int.iter().map(|(k, v)| (*k, *v)));
        c.bool.extend(self.bool.iter().map(|(k, v)| (*k, *v)));
        c
    }
}

/// What is shared by every invocation of a draw: constants and samplers, plus the bump
/// environment of ps_1_x `texbem`/`texbeml`/`bem` per stage (`D3DTSS_BUMPENVMAT00`, `01`,
/// `10`, `11`, `BUMPENVLSCALE`, `BUMPENVLOFFSET`; all 0 by default, as in D3D9).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bindings {
    pub constants: Constants,
    pub samplers: BTreeMap<u32, Sampler>,
    pub bump_env: BTreeMap<u32, [f32; 6]>,
    /// ps_1_x's range, the card's `MaxPixelShaderValue`: values are clamped to
    /// [-range, range]. `None`: 1, the least a card gives.
    pub ps1_range: Option<f32>,
}

/// What one invocation reads: its vertex attributes or interpolated pixel inputs by
/// semantic, values for input registers `v#` directly (they win over semantics), and the
/// ps_3_0 misc registers.
#[derive(Debug, Clone, PartialEq)]
pub struct Attributes {
    pub by_semantic: BTreeMap<Semantic, [f32; 4]>,
    pub by_register: BTreeMap<u32, [f32; 4]>,
    /// `vPos`: the pixel's coordinates (D3D9: integers at pixel centres).
    pub vpos: [f32; 2],
    /// `vFace`: positive for a front face.
    pub vface: f32,
}

impl Default for Attributes {
    fn default() -> Self {
        Attributes {
            by_semantic: BTreeMap::new(),
            by_register: BTreeMap::new(),
            vpos: [0.0; 2],
            vface: 1.0,
        }
    }
}

/// Everything a single invocation ([`run`]) reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inputs {
    pub bindings: Bindings,
    pub attributes: Attributes,
}

/// An output register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OutputRegister {
    /// `oPos`.
    Position,
    /// `oFog`.
    Fog,
    /// `oPts`.
    PointSize,
    /// `oD#`.
    Color(u8),
    /// `oT#` (vs_1_1–vs_2_x).
    Texcoord(u8),
    /// `o#` (vs_3_0).
    Output(u8),
    /// `oC#`.
    Target(u8),
    /// `oDepth`.
    Depth,
}

impl OutputRegister {
    fn slot(self) -> usize {
        match self {
            OutputRegister::Position => 0,
            OutputRegister::Fog => 1,
            OutputRegister::PointSize => 2,
            OutputRegister::Depth => 3,
            OutputRegister::Color(i) => 4 + (i as usize & 1),
            OutputRegister::Texcoord(i) => 6 + (i as usize & 7),
            OutputRegister::Output(i) => 14 + (i as usize % 12),
            OutputRegister::Target(i) => 26 + (i as usize & 3),
        }
    }

    fn from_slot(slot: usize) -> OutputRegister {
        match slot {
            0 => OutputRegister::Position,
            1 => OutputRegister::Fog,
            2 => OutputRegister::PointSize,
            3 => OutputRegister::Depth,
            4..=5 => OutputRegister::Color(slot as u8 - 4),
            6..=13 => OutputRegister::Texcoord(slot as u8 - 6),
            14..=25 => OutputRegister::Output(slot as u8 - 14),
            _ => OutputRegister::Target(slot as u8 - 26),
        }
    }
}

const OUTPUT_SLOTS: usize = 30;

impl fmt::Display for OutputRegister {
    /// The asm name: `oPos`, `oD1`, `oT0`, `o3`, `oC0`, `oDepth`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputRegister::Position => write!(f, "oPos"),
            OutputRegister::Fog => write!(f, "oFog"),
            OutputRegister::PointSize => write!(f, "oPts"),
            OutputRegister::Color(i) => write!(f, "oD{i}"),
            OutputRegister::Texcoord(i) => write!(f, "oT{i}"),
            OutputRegister::Output(i) => write!(f, "o{i}"),
            OutputRegister::Target(i) => write!(f, "oC{i}"),
            OutputRegister::Depth => write!(f, "oDepth"),
        }
    }
}

/// What an invocation produced: the output registers it wrote (a ps_1_x shader's `r0` is
/// `oC0`), with their semantics, and whether `texkill` discarded the pixel.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outputs {
    pub values: BTreeMap<OutputRegister, [f32; 4]>,
    /// Semantics of the written registers (vs_3_0: by `dcl`, with the components each
    /// covers; before: fixed, `oT2` is `TEXCOORD2`).
    pub semantics: Vec<(OutputRegister, u8, Semantic)>,
    pub discarded: bool,
    /// ps_1_x: the components of `oC0` that come from a result, before the last
    /// instruction, that left [−1, 1] and was clamped. That range is the least hardware
    /// has (`PixelShader1xMaxValue` is 1 or more), so these components depend on the
    /// card, and two shaders of one meaning may differ in them.
    pub ps1_range_dependent: u8,
}

impl Outputs {
    /// The value a later stage reads for `semantic`: the components of the registers
    /// declared with it (`None` when no written register carries it).
    pub fn by_semantic(&self, semantic: Semantic) -> Option<[f32; 4]> {
        let mut out = [0.0; 4];
        let mut found = false;
        for (reg, mask, s) in &self.semantics {
            if *s != semantic {
                continue;
            }
            let Some(v) = self.values.get(reg) else {
                continue;
            };
            found = true;
            for c in 0..4 {
                if mask & (1 << c) != 0 {
                    out[c] = v[c];
                }
            }
        }
        found.then_some(out)
    }
}

/// A register reference after decoding: type, number and the relative address if any.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Reg {
    ty: RegisterType,
    number: u32,
    /// `[a0.c]` or `[aL]`: the register type (`AddrOrTexture` or `Loop`) and component.
    relative: Option<(RegisterType, u8)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Src {
    reg: Reg,
    swizzle: u8,
    modifier: u8,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Dst {
    reg: Reg,
    mask: u8,
    saturate: bool,
    /// ps_1_x scale as a power of two (−3 … 3).
    shift: i8,
}

/// One decoded instruction.
#[derive(Debug, Clone)]
struct Op {
    offset: usize,
    opcode: u16,
    mnemonic: &'static str,
    controls: u8,
    coissue: bool,
    class: Class,
    dst: Option<Dst>,
    predicate: Option<Src>,
    srcs: Vec<Src>,
    /// For `if`, `else`, `rep`, `loop`: the index of the matching `else`/`endif`,
    /// `endif`, `endrep`/`endloop`; for `endrep`/`endloop`: the loop's index.
    target: usize,
}

/// A `dcl` of an input or output register.
#[derive(Debug, Clone, Copy)]
struct Decl {
    ty: RegisterType,
    number: u32,
    mask: u8,
    semantic: Semantic,
}

/// A shader ready to run.
#[derive(Debug, Clone)]
pub struct Program {
    version: Version,
    ops: Vec<Op>,
    decls: Vec<Decl>,
    samplers: BTreeMap<u32, TextureKind>,
    defs: Vec<(u32, [f32; 4])>,
    defis: Vec<(u32, [i32; 4])>,
    defbs: Vec<(u32, bool)>,
    labels: BTreeMap<u32, usize>,
    /// ps_1_4: the instruction after `phase`, where the temporaries' alpha stops
    /// persisting ("the alpha component of temporary registers do not persist across
    /// the transition"): undefined on the hardware, 0 in a run.
    phase_at: Option<usize>,
    /// Float constant registers a run needs (highest referenced + 1, at least 256).
    float_count: usize,
    ctab_defaults: Constants,
    ctab_names: Vec<(String, RegisterSet, u32, u32)>,
    step_limit: u64,
}

fn op_error(op: &Op, what: impl Into<String>) -> RunError {
    RunError::Instruction {
        offset: op.offset,
        mnemonic: op.mnemonic.to_string(),
        what: what.into(),
    }
}

fn reg_type(token: u32, offset: usize, mnemonic: &'static str) -> Result<RegisterType, RunError> {
    let p = bytecode::Param {
        token,
        relative: None,
    };
    p.register_type().ok_or_else(|| RunError::Instruction {
        offset,
        mnemonic: mnemonic.to_string(),
        what: format!("unknown register type {}", p.register_type_value()),
    })
}

impl Program {
    /// The `def` constants: register and value.
    pub fn defs(&self) -> &[(u32, [f32; 4])] {
        &self.defs
    }

    /// Parses and prepares `bytecode`.
    pub fn new(bytecode_bytes: &[u8]) -> Result<Program, RunError> {
        let shader = bytecode::parse(bytecode_bytes)?;
        let version = shader.version;
        let mut ops = Vec::new();
        let mut phase_at = None;
        let mut decls = Vec::new();
        let mut samplers = BTreeMap::new();
        let (mut defs, mut defis, mut defbs) = (Vec::new(), Vec::new(), Vec::new());
        let mut float_count = 256usize;
        for item in &shader.items {
            let Item::Instruction(ins) = item else {
                continue;
            };
            let mnemonic = ins.mnemonic();
            let Some(info) = ins.info else {
                return Err(RunError::Instruction {
                    offset: ins.offset,
                    mnemonic: format!("{:#06x}", ins.opcode()),
                    what: format!("unknown opcode in {version}"),
                });
            };
            let Some(operands) = &ins.operands else {
                return Err(RunError::Instruction {
                    offset: ins.offset,
                    mnemonic: mnemonic.into(),
                    what: "operands do not fit the instruction".into(),
                });
            };
            let decode_reg = |p: &bytecode::Param| -> Result<Reg, RunError> {
                let ty = reg_type(p.token, ins.offset, mnemonic)?;
                let mut number = p.number();
                if let Some(bank) = ty.const_bank() {
                    number += bank * CONST_BANK_SIZE;
                }
                let relative = if !p.is_relative() {
                    None
                } else if let Some(r) = p.relative {
                    let rty = reg_type(r, ins.offset, mnemonic)?;
                    Some((rty, ((r >> 16) & 3) as u8))
                } else {
                    Some((RegisterType::AddrOrTexture, 0))
                };
                let ty = if ty.const_bank().is_some() {
                    RegisterType::Const
                } else {
                    ty
                };
                Ok(Reg {
                    ty,
                    number,
                    relative,
                })
            };
            let dst_param = operands.dst.as_ref();
            match ins.opcode() {
                0x1F => {
                    let (Some(decl), Some(dst)) = (operands.decl, dst_param) else {
                        continue;
                    };
                    let reg = decode_reg(dst)?;
                    if reg.ty == RegisterType::Sampler {
                        let kind = match (decl >> 27) & 0xF {
                            3 => TextureKind::Cube,
                            4 => TextureKind::Volume,
                            _ => TextureKind::TwoD,
                        };
                        samplers.insert(reg.number, kind);
                    } else {
                        let semantic = if version.kind == ShaderKind::Pixel && version.major < 3 {
                            fixed_semantic(version, reg.ty, reg.number)
                        } else {
                            Semantic::new((decl & 0x1F) as u8, ((decl >> 16) & 0xF) as u8)
                        };
                        decls.push(Decl {
                            ty: reg.ty,
                            number: reg.number,
                            mask: dst.write_mask(),
                            semantic,
                        });
                    }
                    continue;
                }
                0x51 | 0x30 | 0x2F => {
                    let Some(dst) = dst_param else { continue };
                    let reg = decode_reg(dst)?;
                    let imm = &operands.immediates;
                    match ins.opcode() {
                        0x51 => {
                            defs.push((reg.number, std::array::from_fn(|i| f32::from_bits(imm[i]))))
                        }
                        0x30 => defis.push((reg.number, std::array::from_fn(|i| imm[i] as i32))),
                        _ => defbs.push((reg.number, imm[0] != 0)),
                    }
                    if reg.ty == RegisterType::Const {
                        float_count = float_count.max(reg.number as usize + 1);
                    }
                    continue;
                }
                // ps_1_4's phase: where it falls among the instructions.
                0xFFFD => {
                    phase_at = Some(ops.len());
                    continue;
                }
                0x00 => continue,
                _ => {}
            }
            let dst = match dst_param {
                Some(p) => {
                    let reg = decode_reg(p)?;
                    let shift = ((p.shift() as i8) << 4) >> 4;
                    Some(Dst {
                        reg,
                        mask: p.write_mask(),
                        saturate: p.result_modifiers() & 1 != 0,
                        shift,
                    })
                }
                None => None,
            };
            let mut srcs = Vec::new();
            for p in &operands.srcs {
                let reg = decode_reg(p)?;
                if reg.ty == RegisterType::Const {
                    float_count = float_count.max(reg.number as usize + 4);
                }
                srcs.push(Src {
                    reg,
                    swizzle: p.swizzle(),
                    modifier: p.source_modifier(),
                });
            }
            let predicate = match operands.predicate {
                Some(t) => Some(Src {
                    reg: Reg {
                        ty: reg_type(t, ins.offset, mnemonic)?,
                        number: t & 0x7FF,
                        relative: None,
                    },
                    swizzle: (t >> 16) as u8,
                    modifier: ((t >> 24) & 0xF) as u8,
                }),
                None => None,
            };
            ops.push(Op {
                offset: ins.offset,
                opcode: ins.opcode(),
                mnemonic,
                controls: ins.controls(),
                coissue: version.is_ps1() && ins.coissue(),
                class: info.class,
                dst,
                predicate,
                srcs,
                target: 0,
            });
        }
        let labels = match_flow(&mut ops)?;
        let (ctab_defaults, ctab_names) = ctab_info(bytecode_bytes)?;
        Ok(Program {
            version,
            ops,
            decls,
            samplers,
            defs,
            defis,
            defbs,
            labels,
            phase_at,
            float_count: float_count.min(4 * CONST_BANK_SIZE as usize),
            ctab_defaults,
            ctab_names,
            step_limit: STEP_LIMIT,
        })
    }

    pub fn version(&self) -> Version {
        self.version
    }

    /// Bounds the instructions one run executes ([`STEP_LIMIT`] unless changed).
    pub fn set_step_limit(&mut self, limit: u64) {
        self.step_limit = limit;
    }

    /// The sampler registers the shader declares, with their texture shapes.
    pub fn sampler_kinds(&self) -> &BTreeMap<u32, TextureKind> {
        &self.samplers
    }

    /// The constant-table entry named `name`: its register set, first register and count.
    pub fn constant(&self, name: &str) -> Option<(RegisterSet, u32, u32)> {
        self.ctab_names
            .iter()
            .find(|(n, ..)| n == name)
            .map(|(_, set, index, count)| (*set, *index, *count))
    }

    /// The input semantics the shader declares (vertex inputs, ps_3_0 inputs; ps_2_x
    /// `v#`/`t#` as `COLOR#`/`TEXCOORD#`), with the register each is read into.
    pub fn input_semantics(&self) -> Vec<(u32, Semantic)> {
        self.decls
            .iter()
            .filter(|d| is_input(self.version, d.ty))
            .map(|d| (d.number, d.semantic))
            .collect()
    }

    /// Runs one invocation (for a pixel shader: a pixel alone, its derivatives 0).
    pub fn run(&self, inputs: &Inputs) -> Result<Outputs, RunError> {
        let mut m = Machine::new(
            self,
            &inputs.bindings,
            std::slice::from_ref(&inputs.attributes),
        );
        m.execute()?;
        Ok(m.outputs().remove(0))
    }

    /// Runs the four pixels of a 2×2 quad in lockstep: `lanes` are (x, y), (x+1, y),
    /// (x, y+1), (x+1, y+1).
    pub fn run_quad(
        &self,
        bindings: &Bindings,
        lanes: &[Attributes; 4],
    ) -> Result<[Outputs; 4], RunError> {
        let mut m = Machine::new(self, bindings, lanes);
        m.execute()?;
        let mut o = m.outputs().into_iter();
        Ok(std::array::from_fn(|_| o.next().unwrap_or_default()))
    }
}

/// Parses and runs `bytecode` once on `inputs`.
pub fn run(bytecode: &[u8], inputs: &Inputs) -> Result<Outputs, RunError> {
    Program::new(bytecode)?.run(inputs)
}

/// Whether a register of type `ty` is an input in `version`.
fn is_input(version: Version, ty: RegisterType) -> bool {
    ty == RegisterType::Input
        || (version.kind == ShaderKind::Pixel && ty == RegisterType::AddrOrTexture)
}

/// The semantic of a register before SM3 gave them `dcl` usages: ps `v#` = `COLOR#`, `t#`
/// = `TEXCOORD#`.
fn fixed_semantic(version: Version, ty: RegisterType, number: u32) -> Semantic {
    let n = number.min(15) as u8;
    match (version.kind, ty) {
        (ShaderKind::Pixel, RegisterType::Input) => Semantic::new(Semantic::COLOR, n),
        (ShaderKind::Pixel, RegisterType::AddrOrTexture) => Semantic::new(Semantic::TEXCOORD, n),
        _ => Semantic::new(Semantic::POSITION, n),
    }
}

/// CTAB defaults as constants, and the names with their registers.
#[allow(clippy::type_complexity)]
fn ctab_info(bytes: &[u8]) -> Result<(Constants, Vec<(String, RegisterSet, u32, u32)>), RunError> {
    let table = ConstantTable::from_bytecode(bytes).map_err(|e| RunError::Ctab(e.to_string()))?;
    let mut c = Constants::default();
    let mut names = Vec::new();
    let Some(table) = table else {
        return Ok((c, names));
    };
    for k in &table.constants {
        let (index, count) = (k.register_index as u32, k.register_count as u32);
        names.push((k.name.clone(), k.register_set, index, count));
        let Some(d) = &k.default_value else { continue };
        match k.register_set {
            RegisterSet::FLOAT4 => {
                for (i, r) in d.chunks_exact(4).take(count as usize).enumerate() {
                    c.float.insert(
                        index + i as u32,
                        std::array::from_fn(|j| f32::from_bits(r[j])),
                    );
                }
            }
            RegisterSet::INT4 => {
                for (i, r) in d.chunks_exact(4).take(count as usize).enumerate() {
                    c.int
                        .insert(index + i as u32, std::array::from_fn(|j| r[j] as i32));
                }
            }
            RegisterSet::BOOL => {
                for (i, b) in d.iter().take(count as usize).enumerate() {
                    c.bool.insert(index + i as u32, *b != 0);
                }
            }
            _ => {}
        }
    }
    Ok((c, names))
}

/// Matches `if`/`else`/`endif`, `rep`/`endrep`, `loop`/`endloop` and records the labels.
fn match_flow(ops: &mut [Op]) -> Result<BTreeMap<u32, usize>, RunError> {
    let mut stack: Vec<usize> = Vec::new();
    let mut labels = BTreeMap::new();
    for i in 0..ops.len() {
        match ops[i].opcode {
            0x28 | 0x29 | 0x26 | 0x1B => stack.push(i),
            0x2A => {
                let Some(&open) = stack
                    .last()
                    .filter(|&&o| matches!(ops[o].opcode, 0x28 | 0x29))
                else {
                    return Err(op_error(&ops[i], "no 'if' to belong to"));
                };
                ops[open].target = i;
                *stack.last_mut().unwrap_or(&mut 0) = i;
            }
            0x2B => {
                let Some(open) = stack
                    .pop()
                    .filter(|&o| matches!(ops[o].opcode, 0x28..=0x2A))
                else {
                    return Err(op_error(&ops[i], "no 'if' to close"));
                };
                ops[open].target = i;
            }
            0x27 | 0x1D => {
                let want = if ops[i].opcode == 0x27 { 0x26 } else { 0x1B };
                let Some(open) = stack.pop().filter(|&o| ops[o].opcode == want) else {
                    return Err(op_error(&ops[i], "no loop to close"));
                };
                ops[open].target = i;
                ops[i].target = open;
            }
            0x1E => {
                if let Some(s) = ops[i].srcs.first() {
                    labels.insert(s.reg.number, i);
                }
            }
            _ => {}
        }
    }
    if let Some(&open) = stack.last() {
        return Err(op_error(&ops[open], "never closed"));
    }
    Ok(labels)
}

/// One lane's registers.
#[derive(Clone)]
struct Lane {
    r: [[f32; 4]; 32],
    v: [[f32; 4]; 16],
    t: [[f32; 4]; 16],
    out: [[f32; 4]; OUTPUT_SLOTS],
    written: u32,
    a0: [i32; 4],
    al: i32,
    p: [bool; 4],
    killed: bool,
    vpos: [f32; 2],
    vface: f32,
    /// ps_1_x `texm3x2pad`/`texm3x3pad` dot products waiting for their last row, and
    /// the eye vector of `texm3x3vspec`.
    pad: Vec<f32>,
    eye: [f32; 3],
    /// ps_1_x: per r# and t#, the components whose value comes from a result clamped to
    /// [−1, 1] before the last instruction.
    overflowed_r: [u8; 8],
    overflowed_t: [u8; 8],
}

enum Frame {
    If {
        saved: u8,
        taken: u8,
    },
    Loop {
        saved: u8,
        start: usize,
        remaining: i64,
        step: i32,
        outer_al: [i32; 4],
    },
    Call {
        saved: u8,
        ret: usize,
    },
}

struct Machine<'a> {
    prog: &'a Program,
    bindings: &'a Bindings,
    consts: Vec<[f32; 4]>,
    ints: [[i32; 4]; 16],
    bools: [bool; 16],
    lanes: Vec<Lane>,
    active: u8,
    stack: Vec<Frame>,
    steps: u64,
    /// The instruction running.
    pc: usize,
}

const SCALAR: usize = 3;

fn cmp(control: u8, a: f32, b: f32) -> bool {
    match control & 7 {
        1 => a > b,
        2 => a == b,
        3 => a >= b,
        4 => a < b,
        5 => a != b,
        6 => a <= b,
        _ => false,
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl<'a> Machine<'a> {
    fn new(prog: &'a Program, bindings: &'a Bindings, attrs: &[Attributes]) -> Machine<'a> {
        let mut consts = vec![[0.0f32; 4]; prog.float_count];
        for (k, v) in &bindings.constants.float {
            if let Some(c) = consts.get_mut(*k as usize) {
                *c = v.map(flush);
            }
        }
        let mut ints = [[0i32; 4]; 16];
        let mut bools = [false; 16];
        for (k, v) in &bindings.constants.int {
            if let Some(c) = ints.get_mut(*k as usize) {
                *c = *v;
            }
        }
        for (k, v) in &bindings.constants.bool {
            if let Some(c) = bools.get_mut(*k as usize) {
                *c = *v;
            }
        }
        for (k, v) in &prog.defs {
            if let Some(c) = consts.get_mut(*k as usize) {
                *c = *v;
            }
        }
        for (k, v) in &prog.defis {
            if let Some(c) = ints.get_mut(*k as usize) {
                *c = *v;
            }
        }
        for (k, v) in &prog.defbs {
            if let Some(c) = bools.get_mut(*k as usize) {
                *c = *v;
            }
        }
        if prog.version.is_ps1() {
            // ps_1_x constant registers hold [-1, 1] like every other register there.
            let range = bindings.ps1_range.unwrap_or(1.0);
            for c in &mut consts {
                *c = c.map(|x| x.clamp(-range, range));
            }
        }
        let lanes = attrs.iter().map(|a| lane_for(prog, a)).collect::<Vec<_>>();
        Machine {
            prog,
            bindings,
            consts,
            ints,
            bools,
            active: ((1u16 << lanes.len()) - 1) as u8,
            lanes,
            stack: Vec::new(),
            steps: 0,
            pc: 0,
        }
    }

    fn outputs(&self) -> Vec<Outputs> {
        let version = self.prog.version;
        self.lanes
            .iter()
            .map(|l| {
                let mut o = Outputs {
                    discarded: l.killed,
                    ps1_range_dependent: if version.is_ps1() {
                        l.overflowed_r[0]
                    } else {
                        0
                    },
                    ..Outputs::default()
                };
                for slot in 0..OUTPUT_SLOTS {
                    if l.written & (1 << slot) != 0 {
                        o.values
                            .insert(OutputRegister::from_slot(slot), l.out[slot]);
                    }
                }
                if version.is_ps1() {
                    o.values.insert(OutputRegister::Target(0), l.r[0]);
                }
                for reg in o.values.keys() {
                    let fixed = match *reg {
                        OutputRegister::Position => Some(Semantic::new(Semantic::POSITION, 0)),
                        OutputRegister::Fog => Some(Semantic::new(Semantic::FOG, 0)),
                        OutputRegister::PointSize => Some(Semantic::new(Semantic::PSIZE, 0)),
                        OutputRegister::Color(i) => Some(Semantic::new(Semantic::COLOR, i)),
                        OutputRegister::Texcoord(i) => Some(Semantic::new(Semantic::TEXCOORD, i)),
                        OutputRegister::Target(i) => Some(Semantic::new(Semantic::COLOR, i)),
                        OutputRegister::Depth => Some(Semantic::new(12, 0)),
                        OutputRegister::Output(_) => None,
                    };
                    // oFog and oPts are scalar registers: the fixed-function stages read
                    // their x alone (`dx9-graphics-reference-asm-vs-registers-vs-1-1.md`).
                    let mask = match *reg {
                        OutputRegister::Fog | OutputRegister::PointSize => 1,
                        _ => 0xF,
                    };
                    if let Some(s) = fixed {
                        o.semantics.push((*reg, mask, s));
                    }
                }
                for d in &self.prog.decls {
                    if d.ty == RegisterType::Output
                        && version.kind == ShaderKind::Vertex
                        && version.major >= 3
                    {
                        let reg = OutputRegister::Output(d.number as u8);
                        if o.values.contains_key(&reg) {
                            o.semantics.push((reg, d.mask, d.semantic));
                        }
                    }
                }
                o
            })
            .collect()
    }

    fn execute(&mut self) -> Result<(), RunError> {
        let prog = self.prog;
        let ops = &prog.ops;
        let mut pc = 0;
        while pc < ops.len() {
            self.steps += 1;
            if self.steps > prog.step_limit {
                return Err(RunError::StepLimit {
                    limit: prog.step_limit,
                });
            }
            if prog.phase_at == Some(pc) {
                // Undefined on the hardware; 0 here, in every shader run alike.
                for lane in &mut self.lanes {
                    for r in &mut lane.r {
                        r[3] = 0.0;
                    }
                    for m in &mut lane.overflowed_r {
                        *m &= !8;
                    }
                }
            }
            let op = &ops[pc];
            let mut next = pc + 1;
            self.pc = pc;
            match op.opcode {
                // ret
                0x1C => match self.stack.pop() {
                    Some(Frame::Call { saved, ret }) => {
                        self.active = saved;
                        next = ret;
                    }
                    Some(_) => return Err(op_error(op, "inside an unclosed if or loop")),
                    None => return Ok(()),
                },
                // label: the end of the main program
                0x1E => {
                    if !self.stack.iter().any(|f| matches!(f, Frame::Call { .. })) {
                        return Ok(());
                    }
                }
                // call, callnz
                0x19 | 0x1A => {
                    let label = op.srcs.first().map(|s| s.reg.number).unwrap_or(0);
                    let Some(&at) = prog.labels.get(&label) else {
                        return Err(op_error(op, format!("no label l{label}")));
                    };
                    let mask = if op.opcode == 0x1A {
                        self.condition_mask(op, &op.srcs[1])?
                    } else {
                        self.active
                    };
                    if mask != 0 {
                        self.push(
                            op,
                            Frame::Call {
                                saved: self.active,
                                ret: pc + 1,
                            },
                        )?;
                        self.active = mask;
                        next = at + 1;
                    }
                }
                // if, if_comp
                0x28 | 0x29 => {
                    let taken = if op.opcode == 0x28 {
                        self.condition_mask(op, &op.srcs[0])?
                    } else {
                        self.compare_mask(op)?
                    };
                    self.push(
                        op,
                        Frame::If {
                            saved: self.active,
                            taken,
                        },
                    )?;
                    self.active = taken;
                    if taken == 0 {
                        // Nothing to run: go straight to the else (or endif), which runs.
                        next = op.target;
                    }
                }
                // else
                0x2A => {
                    if let Some(Frame::If { saved, taken }) = self.stack.last() {
                        self.active = saved & !taken;
                        if self.active == 0 {
                            next = op.target;
                        }
                    }
                }
                // endif
                0x2B => {
                    if let Some(Frame::If { saved, .. }) = self.stack.pop() {
                        self.active = saved;
                    }
                }
                // rep, loop
                0x26 | 0x1B => {
                    let i_src = if op.opcode == 0x26 {
                        &op.srcs[0]
                    } else {
                        &op.srcs[1]
                    };
                    let i = self.ints[(i_src.reg.number as usize) & 15];
                    let count = i[0].max(0) as i64;
                    let outer_al = self.lanes.iter().map(|l| l.al).collect::<Vec<_>>();
                    let mut outer = [0; 4];
                    outer[..outer_al.len()].copy_from_slice(&outer_al);
                    if count == 0 || self.active == 0 {
                        next = op.target + 1;
                    } else {
                        self.push(
                            op,
                            Frame::Loop {
                                saved: self.active,
                                start: pc + 1,
                                remaining: count,
                                step: if op.opcode == 0x1B { i[2] } else { 0 },
                                outer_al: outer,
                            },
                        )?;
                        if op.opcode == 0x1B {
                            for l in &mut self.lanes {
                                l.al = i[1];
                            }
                        }
                    }
                }
                // endrep, endloop
                0x27 | 0x1D => {
                    if let Some(Frame::Loop {
                        saved,
                        start,
                        remaining,
                        step,
                        outer_al,
                    }) = self.stack.last_mut()
                    {
                        *remaining -= 1;
                        if *remaining > 0 && self.active != 0 {
                            for l in &mut self.lanes {
                                l.al = l.al.wrapping_add(*step);
                            }
                            next = *start;
                        } else {
                            let (saved, outer) = (*saved, *outer_al);
                            self.stack.pop();
                            self.active = saved;
                            if op.opcode == 0x1D {
                                for (l, a) in self.lanes.iter_mut().zip(outer) {
                                    l.al = a;
                                }
                            }
                        }
                    }
                }
                // break, breakc, breakp
                0x2C | 0x2D | 0x60 => {
                    let mask = match op.opcode {
                        0x2C => self.active,
                        0x2D => self.compare_mask(op)?,
                        _ => self.condition_mask(op, &op.srcs[0])?,
                    };
                    // Lanes that break sit out the rest of the loop; with none left the
                    // body runs on with nothing active, so every frame closes in order.
                    if mask != 0 && !self.break_lanes(mask) {
                        return Err(op_error(op, "not inside a loop"));
                    }
                }
                _ => {
                    if self.active != 0 {
                        if op.coissue {
                            // Handled with the instruction before it.
                        } else if ops.get(pc + 1).is_some_and(|n| n.coissue) {
                            let first = self.compute_all(op)?;
                            let second = self.compute_all(&ops[pc + 1])?;
                            self.write_all(op, first)?;
                            self.write_all(&ops[pc + 1], second)?;
                            next = pc + 2;
                        } else {
                            self.step(op)?;
                        }
                    }
                }
            }
            pc = next;
        }
        Ok(())
    }

    fn push(&mut self, op: &Op, f: Frame) -> Result<(), RunError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(op_error(op, format!("nested more than {MAX_DEPTH} deep")));
        }
        self.stack.push(f);
        Ok(())
    }

    /// Takes `mask` out of every frame up to the innermost loop; false outside loops.
    fn break_lanes(&mut self, mask: u8) -> bool {
        self.active &= !mask;
        for f in self.stack.iter_mut().rev() {
            match f {
                Frame::If { saved, taken } => {
                    *saved &= !mask;
                    *taken &= !mask;
                }
                Frame::Loop { .. } => return true,
                Frame::Call { .. } => return false,
            }
        }
        false
    }
}

/// A lane's registers at the start: inputs from `attrs` by semantic (ps_1_x–ps_2_x by
/// register number), then the `v#` values given directly.
fn lane_for(prog: &Program, attrs: &Attributes) -> Lane {
    let mut lane = Lane {
        r: [[0.0; 4]; 32],
        v: [[0.0; 4]; 16],
        t: [[0.0; 4]; 16],
        out: [[0.0; 4]; OUTPUT_SLOTS],
        written: 0,
        a0: [0; 4],
        al: 0,
        p: [false; 4],
        killed: false,
        vpos: attrs.vpos,
        vface: attrs.vface,
        pad: Vec::new(),
        eye: [0.0; 3],
        overflowed_r: [0; 8],
        overflowed_t: [0; 8],
    };
    let get = |s: Semantic| attrs.by_semantic.get(&s).copied().unwrap_or([0.0; 4]);
    let version = prog.version;
    if version.kind == ShaderKind::Pixel && version.major < 3 {
        for i in 0..2 {
            lane.v[i] = get(Semantic::new(Semantic::COLOR, i as u8));
        }
        for i in 0..8 {
            lane.t[i] = get(Semantic::new(Semantic::TEXCOORD, i as u8));
        }
    } else {
        for d in prog.decls.iter().filter(|d| d.ty == RegisterType::Input) {
            let value = get(d.semantic);
            if let Some(reg) = lane.v.get_mut(d.number as usize) {
                for c in 0..4 {
                    if d.mask & (1 << c) != 0 {
                        reg[c] = value[c];
                    }
                }
            }
        }
    }
    for (n, value) in &attrs.by_register {
        if let Some(reg) = lane.v.get_mut(*n as usize) {
            *reg = *value;
        }
    }
    lane
}

fn swizzle(v: [f32; 4], s: u8) -> [f32; 4] {
    std::array::from_fn(|i| v[((s >> (2 * i)) & 3) as usize])
}

fn modify(m: u8, v: [f32; 4]) -> [f32; 4] {
    let each = |f: &dyn Fn(f32) -> f32| v.map(f);
    match m {
        1 => each(&|x| -x),
        2 => each(&|x| x - 0.5),
        3 => each(&|x| -(x - 0.5)),
        4 => each(&|x| 2.0 * x - 1.0),
        5 => each(&|x| -(2.0 * x - 1.0)),
        6 => each(&|x| 1.0 - x),
        7 => each(&|x| 2.0 * x),
        8 => each(&|x| -2.0 * x),
        9 => [v[0] / v[2], v[1] / v[2], v[2], v[3]],
        10 => [v[0] / v[3], v[1] / v[3], v[2], v[3]],
        11 => each(&|x| x.abs()),
        12 => each(&|x| -x.abs()),
        _ => v,
    }
}

fn min(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

fn max(a: f32, b: f32) -> f32 {
    if a >= b {
        a
    } else {
        b
    }
}

fn splat(x: f32) -> [f32; 4] {
    [x; 4]
}

fn zip(a: [f32; 4], b: [f32; 4], f: impl Fn(f32, f32) -> f32) -> [f32; 4] {
    std::array::from_fn(|i| f(a[i], b[i]))
}

impl Machine<'_> {
    /// The value of `reg` (plus `row` registers, for the matrix instructions) in lane `l`,
    /// before swizzle and modifier.
    fn raw(&self, op: &Op, l: usize, reg: &Reg, row: u32) -> Result<[f32; 4], RunError> {
        let lane = &self.lanes[l];
        let rel = match reg.relative {
            None => 0,
            Some((RegisterType::Loop, _)) => lane.al as i64,
            Some((_, c)) => lane.a0[c as usize & 3] as i64,
        };
        let index = reg.number as i64 + row as i64 + rel;
        let at = |regs: &[[f32; 4]]| -> [f32; 4] {
            usize::try_from(index)
                .ok()
                .and_then(|i| regs.get(i))
                .copied()
                .unwrap_or([0.0; 4])
        };
        let pixel = self.prog.version.kind == ShaderKind::Pixel;
        Ok(match reg.ty {
            RegisterType::Temp => {
                if index as usize >= lane.r.len() {
                    return Err(op_error(op, format!("no temporary register r{index}")));
                }
                at(&lane.r)
            }
            RegisterType::Input => at(&lane.v),
            RegisterType::Const => at(&self.consts),
            RegisterType::AddrOrTexture if pixel => at(&lane.t),
            RegisterType::AddrOrTexture => lane.a0.map(|x| x as f32),
            RegisterType::ConstInt => self.ints[(index as usize) & 15].map(|x| x as f32),
            RegisterType::ConstBool => splat(self.bools[(index as usize) & 15] as u8 as f32),
            RegisterType::Loop => splat(lane.al as f32),
            RegisterType::MiscType if index == 0 => [lane.vpos[0], lane.vpos[1], 0.0, 0.0],
            RegisterType::MiscType => splat(lane.vface),
            RegisterType::Predicate => lane.p.map(|b| b as u8 as f32),
            // The sampler operand of texld names a stage; it has no value.
            RegisterType::Sampler => [0.0; 4],
            other => return Err(op_error(op, format!("cannot read a {other:?} register"))),
        })
    }

    fn read_row(&self, op: &Op, l: usize, src: &Src, row: u32) -> Result<[f32; 4], RunError> {
        let v = self.raw(op, l, &src.reg, row)?;
        Ok(modify(src.modifier, swizzle(v, src.swizzle)))
    }

    fn read(&self, op: &Op, l: usize, k: usize) -> Result<[f32; 4], RunError> {
        let src = op
            .srcs
            .get(k)
            .ok_or_else(|| op_error(op, format!("source {k} missing")))?;
        self.read_row(op, l, src, 0)
    }

    /// Lanes (of the active ones) where a boolean or predicate source holds.
    fn condition_mask(&self, op: &Op, src: &Src) -> Result<u8, RunError> {
        let mut mask = 0;
        for l in 0..self.lanes.len() {
            if self.active & (1 << l) == 0 {
                continue;
            }
            let holds = match src.reg.ty {
                RegisterType::ConstBool => self.bools[(src.reg.number as usize) & 15],
                RegisterType::Predicate => {
                    let c = (src.swizzle & 3) as usize;
                    self.lanes[l].p[c] != (src.modifier == 13)
                }
                other => {
                    return Err(op_error(
                        op,
                        format!("a {other:?} register is no condition"),
                    ))
                }
            };
            if holds {
                mask |= 1 << l;
            }
        }
        Ok(mask)
    }

    /// Lanes (of the active ones) where `src0 <op> src1` holds, for `if_comp`/`breakc`.
    fn compare_mask(&self, op: &Op) -> Result<u8, RunError> {
        let mut mask = 0;
        for l in 0..self.lanes.len() {
            if self.active & (1 << l) != 0 {
                let (a, b) = (self.read(op, l, 0)?, self.read(op, l, 1)?);
                if cmp(op.controls, a[0], b[0]) {
                    mask |= 1 << l;
                }
            }
        }
        Ok(mask)
    }

    fn step(&mut self, op: &Op) -> Result<(), RunError> {
        match op.opcode {
            // texkill
            0x41 => {
                let dst = op.dst.ok_or_else(|| op_error(op, "no register"))?;
                let mask = if self.prog.version.is_ps1() {
                    7
                } else {
                    dst.mask
                };
                for l in 0..self.lanes.len() {
                    if self.active & (1 << l) == 0 {
                        continue;
                    }
                    let v = self.raw(op, l, &dst.reg, 0)?;
                    if (0..4).any(|c| mask & (1 << c) != 0 && v[c] < 0.0) {
                        self.lanes[l].killed = true;
                    }
                }
                Ok(())
            }
            // setp
            0x5E => {
                let dst = op.dst.ok_or_else(|| op_error(op, "no register"))?;
                for l in 0..self.lanes.len() {
                    if self.active & (1 << l) == 0 {
                        continue;
                    }
                    let (a, b) = (self.read(op, l, 0)?, self.read(op, l, 1)?);
                    let pred = self.predicate(op, l);
                    for c in 0..4 {
                        if dst.mask & pred & (1 << c) != 0 {
                            self.lanes[l].p[c] = cmp(op.controls, a[c], b[c]);
                        }
                    }
                }
                Ok(())
            }
            _ => {
                let values = self.compute_all(op)?;
                self.write_all(op, values)
            }
        }
    }

    /// The components the instruction's predicate lets it write in lane `l`.
    fn predicate(&self, op: &Op, l: usize) -> u8 {
        let Some(p) = &op.predicate else { return 0xF };
        let mut mask = 0;
        for c in 0..4 {
            let from = ((p.swizzle >> (2 * c)) & 3) as usize;
            if self.lanes[l].p[from] != (p.modifier == 13) {
                mask |= 1 << c;
            }
        }
        mask
    }

    /// Sources of every lane (inactive lanes too: derivatives read them).
    fn sources(&self, op: &Op) -> Result<Vec<Vec<[f32; 4]>>, RunError> {
        (0..self.lanes.len())
            .map(|l| (0..op.srcs.len()).map(|k| self.read(op, l, k)).collect())
            .collect()
    }

    fn sampler(&self, stage: u32) -> Option<&Sampler> {
        self.bindings.samplers.get(&stage)
    }

    fn sample(&self, stage: u32, coords: [f32; 4], lod: f32) -> [f32; 4] {
        match self.sampler(stage) {
            Some(s) => s.sample(coords, lod),
            None => [0.0, 0.0, 0.0, 1.0],
        }
    }

    /// The level of detail of sampling `stage` at `coords` (one per lane), from the
    /// differences across the quad, or from explicit gradients.
    fn lod(&self, stage: u32, dx: [f32; 4], dy: [f32; 4]) -> f32 {
        let Some(s) = self.sampler(stage) else {
            return 0.0;
        };
        let t = &*s.texture;
        let size = [t.width as f32, t.height as f32, t.depth as f32];
        let dims = if t.kind == TextureKind::Volume { 3 } else { 2 };
        let len = |d: [f32; 4]| -> f32 {
            (0..dims)
                .map(|i| (d[i] * size[i]).powi(2))
                .sum::<f32>()
                .sqrt()
        };
        let rho = max(len(dx), len(dy));
        rho.log2()
    }

    /// Coarse derivatives of a per-lane value: right minus left and bottom minus top of
    /// the quad's first pixel, the same for all four (0 outside a quad).
    fn quad_diffs(coords: &[[f32; 4]]) -> ([f32; 4], [f32; 4]) {
        if coords.len() < 4 {
            return ([0.0; 4], [0.0; 4]);
        }
        (
            zip(coords[1], coords[0], |a, b| a - b),
            zip(coords[2], coords[0], |a, b| a - b),
        )
    }

    /// The result of `op` in every lane (`None`: the lane writes nothing).
    fn compute_all(&mut self, op: &Op) -> Result<Vec<Option<[f32; 4]>>, RunError> {
        let n = self.lanes.len();
        let version = self.prog.version;
        let s = self.sources(op)?;
        let dst_number = op.dst.map_or(0, |d| d.reg.number);
        let mut out = vec![None; n];
        match op.opcode {
            0x5B | 0x5C => {
                let col: Vec<[f32; 4]> = s.iter().map(|v| v[0]).collect();
                let (dx, dy) = Self::quad_diffs(&col);
                let d = if op.opcode == 0x5B { dx } else { dy };
                return Ok(vec![Some(d); n]);
            }
            // SM2+ texld/texldp/texldb, texldl, texldd; ps_1_4 texld
            0x42 | 0x5F | 0x5D if !(version.is_ps1() && version.minor < 4) => {
                let stage = if version.is_ps1() {
                    dst_number
                } else {
                    op.srcs.get(1).map_or(0, |x| x.reg.number)
                };
                let mut coords: Vec<[f32; 4]> = s.iter().map(|v| v[0]).collect();
                if op.opcode == 0x42 && op.controls == 1 {
                    for c in &mut coords {
                        *c = [c[0] / c[3], c[1] / c[3], c[2] / c[3], c[3]];
                    }
                }
                for (l, o) in out.iter_mut().enumerate() {
                    let lod = match op.opcode {
                        0x5F => coords[l][3],
                        0x5D => self.lod(stage, s[l][2], s[l][3]),
                        _ => {
                            let (dx, dy) = Self::quad_diffs(&coords);
                            let lod = self.lod(stage, dx, dy);
                            if op.controls == 2 {
                                lod + coords[l][3]
                            } else {
                                lod
                            }
                        }
                    };
                    *o = Some(self.sample(stage, coords[l], lod));
                }
                return Ok(out);
            }
            0x40 | 0x42..=0x4D | 0x52..=0x57 => return self.ps1_texture(op, &s),
            _ => {}
        }
        for (l, o) in out.iter_mut().enumerate() {
            let a = |k: usize| s[l].get(k).copied().unwrap_or([0.0; 4]);
            let w = |k: usize| a(k)[SCALAR];
            let v = match op.opcode {
                0x01 | 0x2E => a(0),
                0x02 => zip(a(0), a(1), |x, y| x + y),
                0x03 => zip(a(0), a(1), |x, y| x - y),
                0x04 => std::array::from_fn(|i| a(0)[i] * a(1)[i] + a(2)[i]),
                0x05 => zip(a(0), a(1), |x, y| x * y),
                0x06 => splat(1.0 / w(0)),
                0x07 => splat(1.0 / w(0).abs().sqrt()),
                0x08 => splat(dot(&a(0)[..3], &a(1)[..3])),
                0x09 => splat(dot(&a(0), &a(1))),
                0x0A => zip(a(0), a(1), min),
                0x0B => zip(a(0), a(1), max),
                0x0C => zip(a(0), a(1), |x, y| (x < y) as u8 as f32),
                0x0D => zip(a(0), a(1), |x, y| (x >= y) as u8 as f32),
                0x0E => splat(w(0).exp2()),
                0x0F => splat(log2_abs(w(0))),
                0x10 => lit(a(0)),
                0x11 => [1.0, a(0)[1] * a(1)[1], a(0)[2], a(1)[3]],
                0x12 => std::array::from_fn(|i| a(0)[i] * (a(1)[i] - a(2)[i]) + a(2)[i]),
                0x13 => a(0).map(|x| x - x.floor()),
                0x14..=0x18 => {
                    let (rows, cols) = match op.opcode {
                        0x14 => (4, 4),
                        0x15 => (3, 4),
                        0x16 => (4, 3),
                        0x17 => (3, 3),
                        _ => (2, 3),
                    };
                    let mut r = [0.0; 4];
                    for (i, ri) in r.iter_mut().enumerate().take(rows) {
                        let m = self.read_row(op, l, &op.srcs[1], i as u32)?;
                        *ri = dot(&a(0)[..cols], &m[..cols]);
                    }
                    r
                }
                0x20 => splat((w(1) * log2_abs(w(0))).exp2()),
                0x21 => {
                    let (x, y) = (a(0), a(1));
                    [
                        x[1] * y[2] - x[2] * y[1],
                        x[2] * y[0] - x[0] * y[2],
                        x[0] * y[1] - x[1] * y[0],
                        0.0,
                    ]
                }
                0x22 => a(0).map(|x| {
                    if x > 0.0 {
                        1.0
                    } else if x < 0.0 {
                        -1.0
                    } else {
                        0.0
                    }
                }),
                0x23 => a(0).map(f32::abs),
                0x24 => {
                    let x = a(0);
                    let r = 1.0 / dot(&x[..3], &x[..3]).sqrt();
                    x.map(|c| c * r)
                }
                0x25 => [w(0).cos(), w(0).sin(), 0.0, 0.0],
                // From vs_2_0 on, expp and logp give 2^x and log2|x| in every component
                // (`expp---vs.md`, `logp---vs.md`); vs_1_1's give a vector.
                0x4E if version.major >= 2 => splat(w(0).exp2()),
                0x4F if version.major >= 2 => splat(log2_abs(w(0))),
                0x4E => {
                    let x = w(0);
                    [x.floor().exp2(), x - x.floor(), x.exp2(), 1.0]
                }
                0x4F => {
                    let x = w(0).abs();
                    if x == 0.0 {
                        [f32::NEG_INFINITY, 1.0, f32::NEG_INFINITY, 1.0]
                    } else {
                        let e = x.log2().floor();
                        [e, x / e.exp2(), x.log2(), 1.0]
                    }
                }
                0x50 => {
                    if version.is_ps1() && version.minor < 4 {
                        if a(0)[3] > 0.5 {
                            a(1)
                        } else {
                            a(2)
                        }
                    } else {
                        std::array::from_fn(|i| if a(0)[i] > 0.5 { a(1)[i] } else { a(2)[i] })
                    }
                }
                0x58 => std::array::from_fn(|i| if a(0)[i] >= 0.0 { a(1)[i] } else { a(2)[i] }),
                0x59 => {
                    let m = self.bump(dst_number);
                    let (x, y) = (a(0), a(1));
                    [
                        x[0] + m[0] * y[0] + m[2] * y[1],
                        x[1] + m[1] * y[0] + m[3] * y[1],
                        0.0,
                        0.0,
                    ]
                }
                0x5A => splat(a(0)[0] * a(1)[0] + a(0)[1] * a(1)[1] + w(2)),
                _ => return Err(op_error(op, format!("not supported in {version}"))),
            };
            *o = Some(v);
        }
        Ok(out)
    }

    fn bump(&self, stage: u32) -> [f32; 6] {
        self.bindings
            .bump_env
            .get(&stage)
            .copied()
            .unwrap_or([0.0; 6])
    }

    /// ps_1_1–ps_1_4 texture addressing instructions (ps_1_4 `texld` goes with SM2's).
    fn ps1_texture(
        &mut self,
        op: &Op,
        s: &[Vec<[f32; 4]>],
    ) -> Result<Vec<Option<[f32; 4]>>, RunError> {
        let n = self.lanes.len();
        let dst = op.dst.ok_or_else(|| op_error(op, "no destination"))?;
        let stage = dst.reg.number;
        let own: Vec<[f32; 4]> = (0..n)
            .map(|l| self.raw(op, l, &dst.reg, 0))
            .collect::<Result<_, _>>()?;
        let src = |l: usize| s[l].first().copied().unwrap_or([0.0; 4]);
        let dot3 = |a: [f32; 4], b: [f32; 4]| dot(&a[..3], &b[..3]);
        let mut coords: Vec<Option<[f32; 4]>> = vec![None; n];
        let mut out: Vec<Option<[f32; 4]>> = vec![None; n];
        for l in 0..n {
            match op.opcode {
                // texcoord (saturated) / texcrd
                0x40 => {
                    out[l] = Some(if self.prog.version.minor < 4 {
                        let t = own[l].map(|x| x.clamp(0.0, 1.0));
                        [t[0], t[1], t[2], 1.0]
                    } else {
                        // ps_1_4's texcrd: the fourth lane is undefined
                        // (`texcrd---ps.md`); 1, as texcoord's.
                        let t = src(l);
                        [t[0], t[1], t[2], 1.0]
                    })
                }
                0x42 => coords[l] = Some(own[l]),
                0x43 | 0x44 => {
                    let m = self.bump(stage);
                    let (t, b) = (own[l], src(l));
                    coords[l] = Some([
                        t[0] + m[0] * b[0] + m[2] * b[1],
                        t[1] + m[1] * b[0] + m[3] * b[1],
                        t[2],
                        t[3],
                    ]);
                }
                0x45 => coords[l] = Some([src(l)[3], src(l)[0], 0.0, 0.0]),
                0x46 => coords[l] = Some([src(l)[1], src(l)[2], 0.0, 0.0]),
                0x52 => coords[l] = Some([src(l)[0], src(l)[1], src(l)[2], 0.0]),
                0x47 | 0x49 => {
                    let lane = &mut self.lanes[l];
                    if lane.pad.len() >= 2 {
                        lane.pad.clear();
                    }
                    let k = lane.pad.len();
                    lane.eye[k] = own[l][3];
                    lane.pad.push(dot3(own[l], src(l)));
                }
                0x48 | 0x54 => {
                    let u = self.lanes[l].pad.first().copied().unwrap_or(0.0);
                    let v = dot3(own[l], src(l));
                    self.lanes[l].pad.clear();
                    if op.opcode == 0x48 {
                        coords[l] = Some([u, v, 0.0, 0.0]);
                    } else {
                        let depth = if v == 0.0 { 1.0 } else { u / v };
                        self.lanes[l].out[OutputRegister::Depth.slot()] = splat(depth);
                        self.lanes[l].written |= 1 << OutputRegister::Depth.slot();
                        out[l] = Some(splat(depth));
                    }
                }
                0x4A | 0x56 | 0x4C | 0x4D => {
                    let pad = std::mem::take(&mut self.lanes[l].pad);
                    let nrm = [
                        pad.first().copied().unwrap_or(0.0),
                        pad.get(1).copied().unwrap_or(0.0),
                        dot3(own[l], src(l)),
                        1.0,
                    ];
                    let reflect = |e: [f32; 3]| -> [f32; 4] {
                        let ne = dot(&nrm[..3], &e);
                        let nn = dot(&nrm[..3], &nrm[..3]);
                        std::array::from_fn(|i| {
                            if i < 3 {
                                2.0 * nrm[i] * ne / nn - e[i]
                            } else {
                                0.0
                            }
                        })
                    };
                    match op.opcode {
                        0x56 => out[l] = Some(nrm),
                        0x4A => coords[l] = Some(nrm),
                        0x4C => {
                            let e = s[l].get(1).copied().unwrap_or([0.0; 4]);
                            coords[l] = Some(reflect([e[0], e[1], e[2]]));
                        }
                        _ => {
                            let e = self.lanes[l].eye;
                            coords[l] = Some(reflect([e[0], e[1], own[l][3]]));
                        }
                    }
                }
                0x53 => coords[l] = Some([dot3(own[l], src(l)), 0.0, 0.0, 0.0]),
                0x55 => out[l] = Some(splat(dot3(own[l], src(l)))),
                0x57 => {
                    let r = own[l];
                    let depth = if r[1] == 0.0 { 1.0 } else { r[0] / r[1] };
                    self.lanes[l].out[OutputRegister::Depth.slot()] = splat(depth);
                    self.lanes[l].written |= 1 << OutputRegister::Depth.slot();
                }
                _ => return Err(op_error(op, "not supported")),
            }
        }
        if coords.iter().any(Option::is_some) {
            let all: Vec<[f32; 4]> = coords.iter().map(|c| c.unwrap_or([0.0; 4])).collect();
            for l in 0..n {
                if let Some(c) = coords[l] {
                    let (dx, dy) = Self::quad_diffs(&all);
                    let lod = self.lod(stage, dx, dy);
                    let mut v = self.sample(stage, c, lod);
                    if op.opcode == 0x44 {
                        let m = self.bump(stage);
                        let lum = src(l)[2] * m[4] + m[5];
                        v = v.map(|x| x * lum);
                    }
                    out[l] = Some(v);
                }
            }
        }
        Ok(out)
    }

    fn write_all(&mut self, op: &Op, values: Vec<Option<[f32; 4]>>) -> Result<(), RunError> {
        let Some(dst) = op.dst else { return Ok(()) };
        for (l, v) in values.into_iter().enumerate() {
            if self.active & (1 << l) == 0 {
                continue;
            }
            if let Some(v) = v {
                self.write(op, &dst, l, v)?;
            }
        }
        Ok(())
    }

    fn write(&mut self, op: &Op, dst: &Dst, l: usize, v: [f32; 4]) -> Result<(), RunError> {
        let version = self.prog.version;
        let mask = dst.mask & self.predicate(op, l);
        let scale = (dst.shift as f32).exp2();
        let ps1_clamp = version.is_ps1() && op.class == Class::Arithmetic;
        let range = self.bindings.ps1_range.unwrap_or(1.0);
        let ops = &self.prog.ops;
        let last = self.pc + 1 >= ops.len() || self.pc + 2 == ops.len() && ops[self.pc + 1].coissue;
        let mut overflow = 0u8;
        let mut c = 0;
        let v = v.map(|x| {
            let mut x = flush(if dst.shift != 0 { x * scale } else { x });
            if dst.saturate {
                // A NaN saturates to 0, as Microsoft's compilers fold `saturate` of one
                // (vkd3d's smoothstep.section8) and as vs_2_0's max-then-min gives it.
                x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
            }
            if ps1_clamp {
                if x.abs() > range && !last {
                    overflow |= 1 << c;
                }
                x = x.clamp(-range, range);
            }
            c += 1;
            x
        });
        let overflowed = if version.is_ps1() {
            overflow | self.overflowed_sources(op, l)
        } else {
            0
        };
        let lane = &mut self.lanes[l];
        if version.is_ps1() && dst.reg.relative.is_none() {
            let n = dst.reg.number as usize;
            let marks = match dst.reg.ty {
                RegisterType::Temp => lane.overflowed_r.get_mut(n),
                RegisterType::AddrOrTexture => lane.overflowed_t.get_mut(n),
                _ => None,
            };
            if let Some(m) = marks {
                *m = (*m & !mask) | (overflowed & mask);
            }
        }
        let rel = match dst.reg.relative {
            None => 0,
            Some((RegisterType::Loop, _)) => lane.al as i64,
            Some((_, c)) => lane.a0[c as usize & 3] as i64,
        };
        let index = dst.reg.number as i64 + rel;
        let pixel = version.kind == ShaderKind::Pixel;
        let target: &mut [f32; 4] = match dst.reg.ty {
            RegisterType::Temp => lane
                .r
                .get_mut(index as usize)
                .ok_or_else(|| op_error(op, format!("no temporary register r{index}")))?,
            RegisterType::AddrOrTexture if pixel => lane
                .t
                .get_mut(index as usize)
                .ok_or_else(|| op_error(op, format!("no texture register t{index}")))?,
            RegisterType::AddrOrTexture => {
                let round = op.opcode == 0x2E || version.major >= 2;
                for (c, (a, x)) in lane.a0.iter_mut().zip(v).enumerate() {
                    if mask & (1 << c) != 0 {
                        *a = if round { (x + 0.5).floor() } else { x.floor() } as i32;
                    }
                }
                return Ok(());
            }
            ty => {
                let reg = match ty {
                    RegisterType::RastOut => match index {
                        0 => OutputRegister::Position,
                        1 => OutputRegister::Fog,
                        _ => OutputRegister::PointSize,
                    },
                    RegisterType::AttrOut => OutputRegister::Color(index as u8),
                    RegisterType::Output if version.major >= 3 => {
                        OutputRegister::Output(index as u8)
                    }
                    RegisterType::Output => OutputRegister::Texcoord(index as u8),
                    RegisterType::ColorOut => OutputRegister::Target(index as u8),
                    RegisterType::DepthOut => OutputRegister::Depth,
                    other => {
                        return Err(op_error(op, format!("cannot write a {other:?} register")))
                    }
                };
                if !(0..16).contains(&index) {
                    return Err(op_error(
                        op,
                        format!("output register {index} out of range"),
                    ));
                }
                lane.written |= 1 << reg.slot();
                &mut lane.out[reg.slot()]
            }
        };
        for c in 0..4 {
            if mask & (1 << c) != 0 {
                target[c] = v[c];
            }
        }
        Ok(())
    }
}

impl Machine<'_> {
    /// ps_1_x: the components of `op`'s result in lane `l` that read a component marked
    /// as overflowed: lane for lane for the instructions that work so, every component
    /// for the others (`dp3`, the texture instructions) if any read is marked.
    fn overflowed_sources(&self, op: &Op, l: usize) -> u8 {
        let lane = &self.lanes[l];
        // mov add sub mad mul lrp cnd cmp
        let per_component = matches!(op.opcode, 0x01..=0x05 | 0x12 | 0x50 | 0x58);
        let mut out = 0u8;
        for src in &op.srcs {
            let n = src.reg.number as usize;
            let marks = match src.reg.ty {
                RegisterType::Temp => lane.overflowed_r.get(n).copied().unwrap_or(0),
                RegisterType::AddrOrTexture => lane.overflowed_t.get(n).copied().unwrap_or(0),
                _ => 0,
            };
            if marks == 0 {
                continue;
            }
            for c in 0..4 {
                let from = (src.swizzle >> (2 * c)) & 3;
                if marks & (1 << from) != 0 {
                    out |= if per_component { 1 << c } else { 0xF };
                }
            }
        }
        out
    }
}

/// Denormals become zero of the same sign, as D3D9 hardware and WARP treat them.
pub(crate) fn flush(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// `log`: log2 of the absolute value, −∞ at 0.
fn log2_abs(x: f32) -> f32 {
    let a = x.abs();
    if a == 0.0 {
        f32::NEG_INFINITY
    } else {
        a.log2()
    }
}

/// `lit` (D3D9 reference pseudo-code) of a source (N·L, N·H, _, m): x = 1,
/// y = max(N·L, 0), z = specular, w = 1. The HLSL compiler folds `lit` with this.
pub(crate) fn lit(s: [f32; 4]) -> [f32; 4] {
    let mut d = [1.0, 0.0, 0.0, 1.0];
    let power = s[3].clamp(-128.0, 128.0);
    if s[0] > 0.0 {
        d[1] = s[0];
        if s[1] > 0.0 {
            d[2] = s[1].powf(power);
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    /// Unvalidated: the interpreter runs what the bytecode says, read-port limits or not.
    use crate::shader::d3d9::asm::assemble_unvalidated as assemble;

    fn program(text: &str) -> Program {
        let code = assemble(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        Program::new(&code).unwrap()
    }

    fn with(consts: &[(u32, [f32; 4])]) -> Inputs {
        let mut i = Inputs::default();
        i.bindings.constants.float.extend(consts.iter().copied());
        i
    }

    fn out(p: &Program, inputs: &Inputs, reg: OutputRegister) -> [f32; 4] {
        p.run(inputs).unwrap().values[&reg]
    }

    const OC0: OutputRegister = OutputRegister::Target(0);
    const OPOS: OutputRegister = OutputRegister::Position;

    #[test]
    fn scalar_special_values_follow_d3d9() {
        let p = program(
            "vs_2_0\ndcl_position v0\nrcp r0.x, c0.x\nrsq r0.y, c0.y\nlog r0.z, c0.x\nexp r0.w, c0.z\nmov oPos, r0\nfrc oT0, c1\n",
        );
        let i = with(&[(0, [0.0, -4.0, 3.0, 0.0]), (1, [-0.25, 1.5, 2.0, -1.0])]);
        assert_eq!(
            out(&p, &i, OPOS),
            [f32::INFINITY, 0.5, f32::NEG_INFINITY, 8.0]
        );
        assert_eq!(
            out(&p, &i, OutputRegister::Texcoord(0)),
            [0.75, 0.5, 0.0, 0.0]
        );
        // rsq 0 is +inf too, and 0 × inf is NaN as IEEE says.
        let p = program(
            "vs_2_0\ndcl_position v0\nrsq r0, c0.x\nmul r1, r0, c0.x\nmov oPos, r0\nmov oT0, r1\n",
        );
        let i = with(&[(0, [0.0; 4])]);
        assert_eq!(out(&p, &i, OPOS), [f32::INFINITY; 4]);
        assert!(out(&p, &i, OutputRegister::Texcoord(0))[0].is_nan());
    }

    /// `_sat` clamps to [0, 1], a NaN to 0.
    #[test]
    fn saturate_takes_a_nan_to_0() {
        let p = program("ps_3_0\nmul_sat r0, c0, c1\nmov oC0, r0\n");
        let i = with(&[
            (0, [0.0, f32::INFINITY, -0.5, 0.25]),
            (1, [f32::INFINITY, 1.0, 1.0, 1.0]),
        ]);
        assert_eq!(out(&p, &i, OC0), [0.0, 1.0, 0.0, 0.25]);
    }

    /// pow is exp(src1 × log(src0)), so 0^0 is NaN as compiled `pow()` gives; expp and
    /// logp replicate 2^x and log2|x| from vs_2_0 on, where vs_1_1's give vectors.
    #[test]
    fn pow_expp_and_logp() {
        let p = program(
            "vs_2_0\ndcl_position v0\npow r0.x, c0.x, c0.y\npow r0.y, c0.z, c0.w\n\
             expp r0.zw, c1.x\nmov oPos, r0\nlogp oT0, c1.y\n",
        );
        let i = with(&[(0, [0.0, 0.0, 2.0, 3.0]), (1, [2.5, -8.0, 0.0, 0.0])]);
        let o = out(&p, &i, OPOS);
        assert!(o[0].is_nan());
        assert_eq!(o[1..], [8.0, 2.5f32.exp2(), 2.5f32.exp2()]);
        assert_eq!(out(&p, &i, OutputRegister::Texcoord(0)), [3.0; 4]);
        let p = program("vs_1_1\ndcl_position v0\nexpp oPos, c1.x\nlogp oT0, c1.y\n");
        assert_eq!(out(&p, &i, OPOS), [4.0, 0.5, 2.5f32.exp2(), 1.0]);
        assert_eq!(
            out(&p, &i, OutputRegister::Texcoord(0)),
            [3.0, 1.0, 3.0, 1.0]
        );
    }

    /// oFog and oPts are read by their x alone, whatever else the shader writes there.
    #[test]
    fn fog_and_point_size_are_scalars() {
        let p = program("vs_2_0\ndcl_position v0\nmov oPos, c0\nmov oFog, c0\nmov oPts, c0\n");
        let o = p.run(&with(&[(0, [1.0, 2.0, 3.0, 4.0])])).unwrap();
        for usage in [Semantic::FOG, Semantic::PSIZE] {
            assert_eq!(
                o.by_semantic(Semantic::new(usage, 0)),
                Some([1.0, 0.0, 0.0, 0.0])
            );
        }
        assert_eq!(
            o.by_semantic(Semantic::new(Semantic::POSITION, 0)),
            Some([1.0, 2.0, 3.0, 4.0])
        );
    }

    #[test]
    fn comparisons_and_selections() {
        let p = program(
            "ps_2_0\ndef c2, 1, 2, 3, 4\ndef c3, 5, 6, 7, 8\nmov r1, c2\ncmp r0, c0, r1, c3\nmov oC0, r0\n",
        );
        // cmp picks src1 where src0 >= 0, −0 included.
        let i = with(&[(0, [0.0, -0.0, -1.0, 2.0])]);
        assert_eq!(out(&p, &i, OC0), [1.0, 2.0, 7.0, 4.0]);
        let p = program(
            "vs_2_0\ndcl_position v0\nslt r0, c0, c1\nsge r1, c0, c1\nmin r2, c0, c1\nmax r3, c0, c1\n\
             mov oPos, r0\nmov oT0, r1\nmov oT1, r2\nmov oT2, r3\n",
        );
        let i = with(&[(0, [1.0, 2.0, 3.0, -1.0]), (1, [2.0, 2.0, 1.0, 0.0])]);
        let o = p.run(&i).unwrap().values;
        assert_eq!(o[&OPOS], [1.0, 0.0, 0.0, 1.0]);
        assert_eq!(o[&OutputRegister::Texcoord(0)], [0.0, 1.0, 1.0, 0.0]);
        assert_eq!(o[&OutputRegister::Texcoord(1)], [1.0, 2.0, 1.0, -1.0]);
        assert_eq!(o[&OutputRegister::Texcoord(2)], [2.0, 2.0, 3.0, 0.0]);
    }

    #[test]
    fn vector_instructions() {
        let p = program(
            "vs_3_0\ndcl_position v0\ndcl_position o0\ndcl_texcoord0 o1\ndcl_texcoord1 o2\ndcl_texcoord2 o3\n\
             dcl_texcoord3 o4\ndcl_texcoord4 o5\n\
             crs r0.xyz, c0, c1\nmov r0.w, c0.w\nmov o0, r0\nnrm o1, c2\nlit o2, c3\ndst o3, c4, c5\n\
             m4x4 o4, c6, c0\nsincos r1.xy, c7.x\nmov o5, r1\n",
        );
        let i = with(&[
            (0, [1.0, 0.0, 0.0, 9.0]),
            (1, [0.0, 1.0, 0.0, 0.0]),
            (2, [3.0, 0.0, 4.0, 10.0]),
            (3, [0.5, 4.0, 0.0, 2.0]),
            (4, [0.0, 2.0, 3.0, 0.0]),
            (5, [0.0, 5.0, 0.0, 7.0]),
            (6, [1.0, 2.0, 3.0, 4.0]),
            (7, [0.0, 0.0, 0.0, 0.0]),
            (8, [1.0, 1.0, 1.0, 1.0]),
            (9, [0.0, 0.0, 0.0, 2.0]),
        ]);
        let o = p.run(&i).unwrap().values;
        assert_eq!(o[&OutputRegister::Output(0)], [0.0, 0.0, 1.0, 9.0]);
        assert_eq!(o[&OutputRegister::Output(1)], [0.6, 0.0, 0.8, 2.0]);
        assert_eq!(o[&OutputRegister::Output(2)], [1.0, 0.5, 16.0, 1.0]);
        assert_eq!(o[&OutputRegister::Output(3)], [1.0, 10.0, 3.0, 7.0]);
        // Rows c0, c1, c2, c3 dotted with c6.
        assert_eq!(o[&OutputRegister::Output(4)], [37.0, 2.0, 55.0, 16.5]);
        assert_eq!(o[&OutputRegister::Output(5)], [1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn relative_addressing_rounds_in_vs2_and_floors_in_vs1() {
        let p = program(
            "vs_2_0\ndcl_position v0\ndef c10, 10, 0, 0, 0\ndef c11, 11, 0, 0, 0\ndef c12, 12, 0, 0, 0\n\
             mova a0.x, c0.x\nmov oPos, c[a0.x + 10]\n",
        );
        assert_eq!(out(&p, &with(&[(0, [1.5, 0.0, 0.0, 0.0])]), OPOS)[0], 12.0);
        assert_eq!(out(&p, &with(&[(0, [1.4, 0.0, 0.0, 0.0])]), OPOS)[0], 11.0);
        let p = program(
            "vs_1_1\ndcl_position v0\ndef c10, 10, 0, 0, 0\ndef c11, 11, 0, 0, 0\nmov a0.x, c0.x\nmov oPos, c[a0.x + 10]\n",
        );
        assert_eq!(out(&p, &with(&[(0, [1.9, 0.0, 0.0, 0.0])]), OPOS)[0], 11.0);
    }

    #[test]
    fn loops_reps_and_breaks() {
        // loop aL from i0.y by i0.z, i0.x times: 2 + 5 + 8 = 15.
        let p = program(
            "vs_3_0\ndcl_position v0\ndcl_position o0\ndefi i0, 3, 2, 3, 0\ndef c0, 0, 1, 0, 0\n\
             mov r0, c0.x\nloop aL, i0\nadd r0.x, r0.x, c[aL].y\nendloop\nmov o0, r0\n\
             def c2, 0, 1, 0, 0\ndef c5, 0, 4, 0, 0\ndef c8, 0, 10, 0, 0\n",
        );
        assert_eq!(
            out(&p, &Inputs::default(), OutputRegister::Output(0))[0],
            15.0
        );
        // rep i0 with a breakc after three additions of 1.
        let p = program(
            "vs_2_x\ndcl_position v0\ndefi i0, 10, 0, 0, 0\ndef c0, 0, 1, 3, 0\nmov r0, c0.x\n\
             rep i0\nadd r0.x, r0.x, c0.y\nbreak_ge r0.x, c0.z\nendrep\nmov oPos, r0\n",
        );
        assert_eq!(out(&p, &Inputs::default(), OPOS)[0], 3.0);
        // The integer constant set by the application counts the reps.
        let p = program(
            "vs_2_0\ndcl_position v0\ndef c0, 0, 1, 0, 0\nmov r0, c0.x\nrep i1\nadd r0.x, r0.x, c0.y\nendrep\nmov oPos, r0\n",
        );
        let mut i = Inputs::default();
        i.bindings.constants.int.insert(1, [7, 0, 0, 0]);
        assert_eq!(out(&p, &i, OPOS)[0], 7.0);
        i.bindings.constants.int.insert(1, [0, 0, 0, 0]);
        assert_eq!(out(&p, &i, OPOS)[0], 0.0);
    }

    #[test]
    fn endless_work_is_an_error() {
        let p = program(
            "vs_2_0\ndcl_position v0\ndefi i0, 255, 0, 0, 0\ndef c0, 1, 0, 0, 0\nmov r0, c0\n\
             rep i0\nrep i0\nrep i0\nadd r0, r0, c0\nendrep\nendrep\nendrep\nmov oPos, r0\n",
        );
        assert_eq!(
            p.run(&Inputs::default()),
            Err(RunError::StepLimit { limit: STEP_LIMIT })
        );
    }

    #[test]
    fn ifs_else_and_calls() {
        let p = program(
            "vs_2_0\ndcl_position v0\ndef c0, 1, 2, 0, 0\nif b0\nmov r0, c0.x\nelse\nmov r0, c0.y\nendif\n\
             call l1\nmov oPos, r0\nret\nlabel l1\nadd r0, r0, c0.x\nret\n",
        );
        let mut i = Inputs::default();
        assert_eq!(out(&p, &i, OPOS)[0], 3.0);
        i.bindings.constants.bool.insert(0, true);
        assert_eq!(out(&p, &i, OPOS)[0], 2.0);
    }

    #[test]
    fn predication_writes_only_where_the_predicate_holds() {
        let p = program(
            "vs_2_x\ndcl_position v0\ndef c2, 9, 9, 9, 9\nmov r0, c1\nsetp_gt p0, c0, c1\n(p0) mov r0, c2\n\
             mov oPos, r0\nmov r1, c1\n(!p0.x) mov r1, c2\nmov oT0, r1\n",
        );
        let i = with(&[(0, [1.0, 0.0, 3.0, 0.0]), (1, [0.0, 0.0, 2.0, 5.0])]);
        let o = p.run(&i).unwrap().values;
        assert_eq!(o[&OPOS], [9.0, 0.0, 9.0, 5.0]);
        assert_eq!(o[&OutputRegister::Texcoord(0)], [0.0, 0.0, 2.0, 5.0]);
    }

    #[test]
    fn quads_give_derivatives_and_divergent_ifs() {
        let p = program(
            "ps_3_0\ndef c0, 0.5, 0, 0, 0\ndcl_texcoord v0.xy\ndsx r0.x, v0.x\ndsy r0.y, v0.y\n\
             if_gt v0.x, c0.x\nmov r0.z, c0.x\nelse\nmov r0.z, v0.y\nendif\nmov r0.w, c0.y\nmov oC0, r0\n",
        );
        let lanes: [Attributes; 4] = std::array::from_fn(|i| {
            let mut a = Attributes::default();
            let (x, y) = ((i & 1) as f32, (i >> 1) as f32);
            a.by_semantic.insert(
                Semantic::new(Semantic::TEXCOORD, 0),
                [x * 0.75, y * 3.0, 0.0, 0.0],
            );
            a
        });
        let o = p.run_quad(&Bindings::default(), &lanes).unwrap();
        assert_eq!(o[0].values[&OC0], [0.75, 3.0, 0.0, 0.0]);
        assert_eq!(o[1].values[&OC0], [0.75, 3.0, 0.5, 0.0]);
        assert_eq!(o[2].values[&OC0], [0.75, 3.0, 3.0, 0.0]);
        assert_eq!(o[3].values[&OC0], [0.75, 3.0, 0.5, 0.0]);
    }

    #[test]
    fn texkill_discards_and_unbound_samplers_read_black_opaque() {
        let p = program("ps_2_0\ndcl t0\ndcl_2d s0\ntexkill t0\ntexld r0, t0, s0\nmov oC0, r0\n");
        let mut i = Inputs::default();
        i.attributes
            .by_semantic
            .insert(Semantic::new(Semantic::TEXCOORD, 0), [0.5, 0.5, 0.0, 0.0]);
        let o = p.run(&i).unwrap();
        assert!(!o.discarded);
        assert_eq!(o.values[&OC0], [0.0, 0.0, 0.0, 1.0]);
        i.attributes
            .by_semantic
            .insert(Semantic::new(Semantic::TEXCOORD, 0), [0.5, -0.5, 0.0, 0.0]);
        assert!(p.run(&i).unwrap().discarded);
        // texldp divides by w before sampling.
        let texels = vec![[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0]];
        i.bindings
            .samplers
            .insert(0, Sampler::new(Texture::two_d(2, 1, texels).unwrap()));
        let p = program("ps_2_0\ndcl t0\ndcl_2d s0\ntexldp r0, t0, s0\nmov oC0, r0\n");
        i.attributes
            .by_semantic
            .insert(Semantic::new(Semantic::TEXCOORD, 0), [1.5, 0.0, 0.0, 2.0]);
        assert_eq!(out(&p, &i, OC0), [0.0, 1.0, 0.0, 1.0]);
    }

    #[test]
    fn ps1_clamps_shifts_and_coissues() {
        let p = program("ps_1_1\nadd_x2 r0, c0, c1\n");
        let i = with(&[(0, [0.75, -0.75, 0.1, 0.25]), (1, [0.0, 0.0, 0.1, -0.5])]);
        assert_eq!(out(&p, &i, OC0), [1.0, -1.0, 0.4, -0.5]);
        let p = program("ps_1_1\nmul_d2 r0, c0, c1_bx2\n");
        let i = with(&[(0, [1.0, 1.0, 1.0, 1.0]), (1, [1.0, 0.5, 0.0, 0.75])]);
        assert_eq!(out(&p, &i, OC0), [0.5, 0.0, -0.5, 0.25]);
        // Co-issued instructions read the registers as they were before the pair.
        let p = program("ps_1_1\nmov r0, c0\nmov r0.rgb, c1\n+mov r0.a, r0.b\n");
        let i = with(&[(0, [0.1, 0.2, 0.3, 0.4]), (1, [0.5, 0.6, 0.7, 0.8])]);
        assert_eq!(out(&p, &i, OC0), [0.5, 0.6, 0.7, 0.3]);
    }

    #[test]
    fn constants_precedence_and_names() {
        let p = program("ps_2_0\ndef c1, 7, 7, 7, 7\nadd r0, c0, c1\nmov oC0, r0\n");
        // def wins over what the application sets.
        let i = with(&[(0, [1.0; 4]), (1, [100.0; 4])]);
        assert_eq!(out(&p, &i, OC0), [8.0; 4]);
        assert_eq!(Semantic::parse("TEXCOORD3"), Some(Semantic::new(5, 3)));
        assert_eq!(Semantic::parse("color"), Some(Semantic::new(10, 0)));
        assert_eq!(Semantic::new(0, 0).to_string(), "POSITION0");
        assert_eq!(Semantic::parse("nonsense1"), None);
    }

    #[test]
    fn bad_bytecode_and_missing_labels_are_errors_with_a_place() {
        assert!(matches!(
            Program::new(&[1, 2, 3]),
            Err(RunError::Bytecode(_))
        ));
        let code = assemble("vs_2_0\ndcl_position v0\ncall l3\nmov oPos, v0\nret\nlabel l3\nret\n")
            .unwrap();
        // Rename the label so the call finds none.
        let mut words: Vec<u32> = code
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let label = words.iter().rposition(|w| *w & 0xFFFF == 0x1E).unwrap();
        words[label + 1] = (words[label + 1] & !0x7FF) | 5;
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let e = Program::new(&code)
            .unwrap()
            .run(&Inputs::default())
            .unwrap_err();
        assert!(e.to_string().contains("'call': no label l3"), "{e}");
    }

    /// Every single-bit change of a few shaders (one of each model family) either runs or
    /// is an error: nothing the bytecode says makes the interpreter panic or hang.
    #[test]
    fn mutated_bytecode_never_panics() {
        let shaders = [
            "vs_3_0\ndcl_position v0\ndcl_position o0\ndefi i0, 3, 0, 1, 0\nmov r0, v0\n\
             loop aL, i0\nadd r0, r0, c[aL]\nbreak_gt r0.x, c0.x\nendloop\nmova a0.x, r0.x\n\
             mov o0, c[a0.x]\n",
            "ps_3_0\ndcl_texcoord v0\ndcl_2d s0\ndsx r1, v0\ntexld r0, v0, s0\nif_lt r0.x, v0.y\n\
             texkill v0\nelse\nsetp_ge p0, v0, r1\n(p0) mov r0, v0\nendif\nmov oC0, r0\n",
            "ps_1_4\ntexld r0, t0\ntexcrd r1.rgb, t1\nmul r0, r0, r1\nphase\ntexld r2, r0\nadd r0, r0, r2\n",
            "ps_1_1\ntex t0\ntexm3x2pad t1, t0\ntexm3x2tex t2, t0\nmul r0, t2, v0\n+add r0.a, t0, c0\n",
        ];
        let mut lanes: [Attributes; 4] = Default::default();
        for (i, l) in lanes.iter_mut().enumerate() {
            l.by_semantic.insert(
                Semantic::new(Semantic::TEXCOORD, 0),
                [i as f32, 0.5, -1.0, 2.0],
            );
        }
        let mut bindings = Bindings::default();
        let texels = vec![[1.0; 4]; 4];
        bindings
            .samplers
            .insert(0, Sampler::new(Texture::two_d(2, 2, texels).unwrap()));
        for text in shaders {
            let code = assemble(text).unwrap_or_else(|e| panic!("{e}"));
            for byte in 4..code.len() {
                for bit in 0..8 {
                    let mut m = code.clone();
                    m[byte] ^= 1 << bit;
                    if let Ok(mut p) = Program::new(&m) {
                        p.set_step_limit(20_000);
                        let _ = p.run_quad(&bindings, &lanes);
                    }
                }
            }
        }
    }
}
