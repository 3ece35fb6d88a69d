//! Property tests: random instruction streams built from the opcode and limits tables
//! for each shader model survive bytes → text → bytes, and no prefix of one parses;
//! comments written at random places of their listings (above the version line too) come
//! back at the same places.

use proptest::prelude::*;

use super::asm::assemble_unvalidated;
use super::bytecode::{self, Comment, Item, Param, Placement, ShaderKind, UserComment, Version};
use super::disasm::{dcl_uses_usage, disassemble};
use super::limits::limits;
use super::opcodes::{Controls, Layout, OPCODES};
use super::registers::{RegisterType, CONST_BANK_SIZE};

/// A tiny deterministic generator fed by proptest's seeds.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }

    fn below(&mut self, n: u32) -> u32 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

fn register(rng: &mut Rng, v: Version) -> (RegisterType, u32) {
    let regs = limits(v).unwrap().registers;
    let r = regs[rng.below(regs.len() as u32) as usize];
    let n = rng.below(r.count);
    match r.ty.const_bank() {
        // c2048 and up are the CONST2…CONST4 register types (§4.2).
        Some(_) => (
            [
                RegisterType::Const,
                RegisterType::Const2,
                RegisterType::Const3,
                RegisterType::Const4,
            ][(n / CONST_BANK_SIZE) as usize],
            n % CONST_BANK_SIZE,
        ),
        None => (r.ty, n),
    }
}

/// One instruction (token and operand DWORDs) of `v`, from the table.
fn instruction(rng: &mut Rng, v: Version, first: bool) -> Vec<u32> {
    let rows: Vec<_> = OPCODES.iter().filter(|r| r.available(v)).collect();
    let info = rows[rng.below(rows.len() as u32) as usize];
    let sm2 = v.major >= 2;
    let mut out = Vec::new();
    let controls = match info.controls {
        Controls::None => 0,
        Controls::Comparison => 1 + rng.below(6),
        Controls::TexldVariant => rng.below(3),
    };
    let mut predicated = false;
    let limits = limits(v).unwrap();
    let src = |rng: &mut Rng, out: &mut Vec<u32>| {
        let (ty, n) = register(rng, v);
        let relative =
            v.kind == ShaderKind::Vertex && ty == RegisterType::Const && rng.below(4) == 0;
        let bits = rng.below(256) << 16 | rng.below(14) << 24;
        out.push(Param::make(ty, n, relative, bits));
        if relative && sm2 {
            out.push(Param::make(
                RegisterType::AddrOrTexture,
                0,
                false,
                rng.below(256) << 16,
            ));
        }
    };
    match info.layout {
        Layout::Dcl => {
            let (ty, n) = register(rng, v);
            let decl = if ty == RegisterType::Sampler {
                0x8000_0000 | (1 + rng.below(4)) << 27
            } else if dcl_uses_usage(ty, v) {
                0x8000_0000 | rng.below(14) | rng.below(16) << 16
            } else {
                0x8000_0000
            };
            out.push(decl);
            out.push(Param::make(ty, n, false, (1 + rng.below(15)) << 16));
        }
        Layout::Def4 | Layout::Def1 => {
            let ty = match info.opcode {
                0x51 => RegisterType::Const,
                0x30 => RegisterType::ConstInt,
                _ => RegisterType::ConstBool,
            };
            let n = rng.below(limits.count(ty).unwrap_or(1).min(CONST_BANK_SIZE));
            out.push(Param::make(ty, n, false, 0xF << 16));
            if info.layout == Layout::Def1 {
                out.push(rng.below(2));
            } else {
                for _ in 0..4 {
                    out.push(rng.next() ^ rng.next() << 16);
                }
            }
        }
        Layout::Operands => {
            if info.dst > 0 {
                let (ty, n) = register(rng, v);
                let shift = [0, 1, 2, 3, 13, 14, 15][rng.below(7) as usize];
                let bits = (1 + rng.below(15)) << 16 | rng.below(8) << 20 | shift << 24;
                out.push(Param::make(ty, n, false, bits));
            }
            if sm2 && limits.count(RegisterType::Predicate).is_some() && rng.below(4) == 0 {
                predicated = true;
                let not = if rng.below(2) == 0 { 0 } else { 13 << 24 };
                out.push(Param::make(
                    RegisterType::Predicate,
                    0,
                    false,
                    rng.below(256) << 16 | not,
                ));
            }
            for _ in 0..info.src {
                src(rng, &mut out);
            }
        }
    }
    let coissue = v.is_ps1() && !first && rng.below(4) == 0;
    let token = info.opcode as u32
        | controls << 16
        | if sm2 { (out.len() as u32) << 24 } else { 0 }
        | (predicated as u32) << 28
        | (coissue as u32) << 30;
    out.insert(0, token);
    out
}

fn shader(version: Version, seeds: &[u64]) -> Vec<u8> {
    let mut dwords = vec![version.token()];
    for (i, &seed) in seeds.iter().enumerate() {
        let mut rng = Rng(seed | 1);
        if rng.below(8) == 0 {
            let n = rng.below(6);
            dwords.push(0xFFFE | n << 16);
            for _ in 0..n {
                dwords.push(rng.next());
            }
        } else {
            dwords.extend(instruction(&mut rng, version, i == 0));
        }
    }
    dwords.push(0xFFFF);
    dwords.iter().flat_map(|d| d.to_le_bytes()).collect()
}

/// A comment a user might write: `//`, `;` or a closed `/* */`, any printable text.
fn comment() -> impl Strategy<Value = String> {
    (0..3usize, "[ -~\tàé€ß😀]{0,24}").prop_map(|(marker, body)| match marker {
        0 => format!("//{}", body.trim_end_matches('\\')),
        1 => format!(";{}", body.trim_end_matches('\\')),
        _ => format!("/*{}*/", body.replace("*/", "*_")),
    })
}

/// Text for a comment block that need not print as a comment: line breaks, unclosed or
/// stray `/*` and `*/`, continuations, NULs, code, data-comment, header and note look-alikes.
fn any_comment_text() -> impl Strategy<Value = String> {
    const PIECES: [&str; 19] = [
        "//",
        ";",
        "/*",
        "*/",
        " ",
        "\t",
        "a",
        "é",
        "\\",
        "\r",
        "\n",
        "\0",
        "#",
        "mov r0, r1",
        "// comment-block: 1 dwords",
        "00000000",
        "// approximately 1 instruction slots used",
        "// Generated by x",
        "// Needs X >= 1: it uses c0, and vs_1_1 guarantees 0.",
    ];
    prop::collection::vec(prop::sample::select(&PIECES[..]), 0..6).prop_map(|p| p.concat())
}

/// Whether a listing line is an instruction (or the version line).
fn is_code(line: &str) -> bool {
    let t = line.trim_start();
    !t.is_empty() && !t.starts_with("//")
}

/// `bytes` without the blocks that hold comments of the text.
fn without_user_comments(bytes: &[u8]) -> Vec<u8> {
    let mut shader = bytecode::parse(bytes).unwrap();
    shader
        .items
        .retain(|i| !matches!(i, Item::Comment(c) if c.user_comment().is_some()));
    shader.encode()
}

proptest! {
    /// Comments on their own lines (with any indentation) and after instructions, put in
    /// a listing at random, come back as the same listing, and its bytes are the shader's
    /// with the comment blocks added.
    #[test]
    fn comments_at_random_lines_come_back(
        version in 0..Version::ALL.len(),
        seeds in prop::collection::vec(any::<u64>(), 0..16),
        own in prop::collection::vec((any::<prop::sample::Index>(), "[ \t]{0,6}", comment()), 0..6),
        after in prop::collection::vec((any::<prop::sample::Index>(), "[ \t]{0,3}", comment()), 0..6),
        top in prop::collection::vec(comment(), 0..3),
        above in prop::collection::vec(comment(), 0..3),
    ) {
        let bytes = shader(Version::ALL[version], &seeds);
        let listing = disassemble(&bytes).unwrap();
        let mut lines: Vec<String> = listing.lines().map(String::from).collect();
        // The version line and the instructions take a comment after them.
        let code: Vec<usize> = (0..lines.len()).filter(|&i| is_code(&lines[i])).collect();
        for (at, gap, c) in &after {
            let i = code[at.index(code.len())];
            if !lines[i].contains(['/', ';']) {
                lines[i] = format!("{}{gap}{c}", lines[i]);
            }
        }
        // Own lines go before an instruction or at the end of the body (not above the
        // version line, not among data lines).
        let mut places: Vec<usize> = code[1..].to_vec();
        places.push(lines.len() - 2);
        let mut inserts: Vec<(usize, String)> = own
            .iter()
            .map(|(at, indent, c)| (places[at.index(places.len())], format!("{indent}{c}")))
            .collect();
        inserts.sort_by_key(|(i, _)| std::cmp::Reverse(*i));
        for (i, line) in inserts {
            lines.insert(i, line);
        }
        // Above the version line: at the top, and right above the version line.
        lines.splice(code[0]..code[0], above);
        lines.splice(0..0, top);
        let text = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        let saved = assemble_unvalidated(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(without_user_comments(&saved), bytes);
        prop_assert_eq!(disassemble(&saved).unwrap(), text.clone());
        prop_assert_eq!(assemble_unvalidated(&text).unwrap(), saved);
    }

    /// Comment blocks of any text at any place: printed as the comment or as data,
    /// they give back the same bytes.
    #[test]
    fn any_user_comment_block_round_trips(
        version in 0..Version::ALL.len(),
        seeds in prop::collection::vec(any::<u64>(), 0..12),
        blocks in prop::collection::vec((any::<prop::sample::Index>(), 0..4usize, any_comment_text()), 0..8),
    ) {
        let mut shader = bytecode::parse(&shader(Version::ALL[version], &seeds)).unwrap();
        for (at, placement, text) in blocks {
            let payload = UserComment {
                placement: [
                    Placement::OwnLine,
                    Placement::AfterCode,
                    Placement::Top,
                    Placement::AboveVersion,
                ][placement],
                text,
            }
            .payload();
            let c = Comment { offset: 0, token: 0xFFFE | (payload.len() as u32) << 16, payload };
            shader.items.insert(at.index(shader.items.len() + 1), Item::Comment(c));
        }
        let bytes = shader.encode();
        let text = disassemble(&bytes).unwrap();
        let back = assemble_unvalidated(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, bytes, "{}", text);
    }

    #[test]
    fn random_streams_round_trip(version in 0..Version::ALL.len(), seeds in prop::collection::vec(any::<u64>(), 0..24)) {
        let v = Version::ALL[version];
        let bytes = shader(v, &seeds);
        let parsed = bytecode::parse(&bytes).unwrap();
        prop_assert_eq!(parsed.items.len(), seeds.len());
        prop_assert_eq!(parsed.encode(), bytes.clone());
        let text = disassemble(&bytes).unwrap();
        prop_assert!(!text.contains(super::disasm::RAW_TOKENS), "{}", text);
        let back = assemble_unvalidated(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, bytes, "{}", text);
    }

    #[test]
    fn prefixes_are_refused(version in 0..Version::ALL.len(), seeds in prop::collection::vec(any::<u64>(), 0..8)) {
        let bytes = shader(Version::ALL[version], &seeds);
        for n in 0..bytes.len() {
            prop_assert!(bytecode::parse(&bytes[..n]).is_err());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        if let Ok(s) = bytecode::parse(&bytes) {
            prop_assert_eq!(s.encode(), bytes.clone());
            let text = disassemble(&bytes).unwrap();
            prop_assert_eq!(assemble_unvalidated(&text).unwrap(), bytes);
        }
    }
}
