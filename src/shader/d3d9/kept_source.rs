//! HLSL source kept inside a shader, so that the `hlsl/` view of a package reads back what
//! was saved into it. `docs/hlsl-source.md` describes the layout for other tools.
//!
//! The source travels in comment blocks (`d3d9-bytecode.md` §2: opcode `0xFFFE`, the
//! payload's length in DWORDs in bits 30:16, at most `0x7FFF`), which the Direct3D runtime
//! and D3DX skip. Each block is one *chunk* of the source:
//!
//! | DWORD | content |
//! |---|---|
//! | 0 | [`SOURCE_FOURCC`], `'SFHL'` ("shaderfs HLSL") |
//! | 1 | the whole source's length in bytes (the same in every chunk) |
//! | 2 | where in the source this chunk's bytes start |
//! | 3… | the chunk's bytes of UTF-8 text, the last DWORD padded with zero bytes |
//!
//! A source longer than one block holds ([`CHUNK_TEXT_BYTES`]) continues in the blocks
//! right after it, each starting where the one before stopped; the source ends with the
//! chunk that reaches its length. Writers fill every chunk but the last; readers take any
//! chunk size, but nothing else: a chunk holds exactly the DWORDs its bytes need, padding
//! is zeros, an empty source is one chunk of no text.
//!
//! Where: among the comment blocks between the version token and the first instruction,
//! where no game reads anything but the CTAB. Writers put the chunks right after the CTAB
//! comment (or the version token when there is none); readers look at every comment
//! block of that run, and only there. A shader keeps at most one source.
//!
//! The FourCC is shaderfs's own rather than `'HLSL'`, which another tool may well use for
//! something else. Hostile input (a chunk that claims more than the shader holds, a
//! missing chunk, chunks out of order, text that is not UTF-8) is refused with the byte
//! offset of the block at fault; allocations never exceed the bytecode's size.

use std::ops::Range;

use super::bytecode::{COMMENT_TOKEN, END_TOKEN};
use super::ctab::{CTAB_FOURCC, MAX_COMMENT_DWORDS};

/// `'SFHL'`, the first payload DWORD of a comment block that holds a chunk of kept source.
pub const SOURCE_FOURCC: u32 = u32::from_le_bytes(*b"SFHL");

/// DWORDs of a chunk before its text: FourCC, length, start.
const HEADER_DWORDS: usize = 3;

/// The most bytes of text one chunk holds.
pub const CHUNK_TEXT_BYTES: usize = (MAX_COMMENT_DWORDS - HEADER_DWORDS) * 4;

/// The longest source a shader keeps. A shader of a package holds at most 4 MiB, and no
/// hand-written shader comes near this.
pub const MAX_SOURCE_BYTES: usize = 1 << 20;

/// Why the source a shader keeps cannot be read, or a source cannot be kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    #[error("{len} bytes are no D3D9 shader (a version token and whole DWORDs)")]
    NotShader { len: usize },
    #[error(
        "the comment block at byte {offset} declares {declared} DWORDs, but {available} follow it"
    )]
    CommentPastEnd {
        offset: usize,
        declared: usize,
        available: usize,
    },
    #[error(
        "the source chunk at byte {offset} has {dwords} DWORDs; a chunk has at least 3 \
         ('SFHL', the source's length, the chunk's start)"
    )]
    ShortChunk { offset: usize, dwords: usize },
    #[error(
        "the source chunk at byte {offset} gives the source {said} bytes, the chunk before \
         it {first}"
    )]
    LengthDisagrees {
        offset: usize,
        said: usize,
        first: usize,
    },
    #[error(
        "the source chunk at byte {offset} starts at byte {said} of the source; byte \
         {expected} was expected"
    )]
    OutOfOrder {
        offset: usize,
        said: usize,
        expected: usize,
    },
    #[error(
        "the source chunk at byte {offset} has {dwords} DWORDs of text for its {bytes} bytes \
         of the source"
    )]
    ChunkLength {
        offset: usize,
        dwords: usize,
        bytes: usize,
    },
    #[error("the source chunk at byte {offset} is padded with bytes that are not zero")]
    Padding { offset: usize },
    #[error(
        "the source of {len} bytes stops after {found} (at byte {offset} of the shader): a \
         chunk is missing"
    )]
    Truncated {
        offset: usize,
        len: usize,
        found: usize,
    },
    #[error("a second kept source starts at byte {offset}; a shader keeps one")]
    Second { offset: usize },
    #[error(
        "the source is {len} bytes; a shader keeps at most {} (1 MiB)",
        MAX_SOURCE_BYTES
    )]
    TooLong { len: usize },
    #[error("the kept source is not UTF-8 text (byte {at} cannot be read)")]
    NotUtf8 { at: usize },
}

/// A source found in a shader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptSource {
    pub text: String,
    /// The comment blocks that hold it, in bytes of the bytecode.
    pub blocks: Range<usize>,
}

fn word(bytecode: &[u8], index: usize) -> u32 {
    let at = index * 4;
    u32::from_le_bytes([
        bytecode[at],
        bytecode[at + 1],
        bytecode[at + 2],
        bytecode[at + 3],
    ])
}

/// One comment block of the run after the version token.
struct Block {
    /// DWORD index of the comment token.
    at: usize,
    /// Payload DWORDs, as the token declares them.
    len: usize,
    /// The payload lies within the bytecode.
    whole: bool,
}

impl Block {
    fn offset(&self) -> usize {
        self.at * 4
    }

    fn end(&self) -> usize {
        (self.at + 1 + self.len) * 4
    }

    fn fourcc(&self, bytecode: &[u8]) -> Option<u32> {
        (self.len >= 1 && self.at + 1 < bytecode.len() / 4).then(|| word(bytecode, self.at + 1))
    }

    /// Whether the block is a chunk: a plain comment token (nothing set but the opcode and
    /// the length) whose payload starts with [`SOURCE_FOURCC`].
    fn is_chunk(&self, bytecode: &[u8]) -> bool {
        word(bytecode, self.at) == COMMENT_TOKEN | (self.len as u32) << 16
            && self.fourcc(bytecode) == Some(SOURCE_FOURCC)
    }
}

/// The comment blocks between the version token and the first instruction (or the end
/// token); the last may run past the end of the bytecode (`whole` false).
fn leading_blocks(bytecode: &[u8]) -> Result<Vec<Block>, SourceError> {
    if bytecode.len() < 4 || bytecode.len() % 4 != 0 {
        return Err(SourceError::NotShader {
            len: bytecode.len(),
        });
    }
    let n = bytecode.len() / 4;
    let mut out = Vec::new();
    let mut at = 1;
    while at < n {
        let token = word(bytecode, at);
        if token == END_TOKEN || token & 0xFFFF != COMMENT_TOKEN {
            break;
        }
        let len = ((token >> 16) & 0x7FFF) as usize;
        let whole = len < n - at;
        out.push(Block { at, len, whole });
        if !whole {
            break;
        }
        at += 1 + len;
    }
    Ok(out)
}

/// Whether the shader keeps a source, from the headers of its first comment blocks alone
/// (what listing `hlsl/` costs): the source is not read, so it may still fail to decode.
pub fn has_source(bytecode: &[u8]) -> bool {
    leading_blocks(bytecode).is_ok_and(|blocks| blocks.iter().any(|b| b.is_chunk(bytecode)))
}

/// A source being gathered from its chunks.
struct Gathering {
    start: usize,
    len: usize,
    bytes: Vec<u8>,
}

/// The source the shader keeps, `None` when it keeps none.
pub fn find(bytecode: &[u8]) -> Result<Option<KeptSource>, SourceError> {
    let mut gathering: Option<Gathering> = None;
    let mut found: Option<(Vec<u8>, Range<usize>)> = None;
    for block in leading_blocks(bytecode)? {
        let offset = block.offset();
        if !block.is_chunk(bytecode) {
            if let Some(g) = gathering {
                return Err(SourceError::Truncated {
                    offset,
                    len: g.len,
                    found: g.bytes.len(),
                });
            }
            continue;
        }
        if !block.whole {
            return Err(SourceError::CommentPastEnd {
                offset,
                declared: block.len,
                available: bytecode.len() / 4 - block.at - 1,
            });
        }
        if found.is_some() {
            return Err(SourceError::Second { offset });
        }
        if block.len < HEADER_DWORDS {
            return Err(SourceError::ShortChunk {
                offset,
                dwords: block.len,
            });
        }
        let said = word(bytecode, block.at + 2) as usize;
        let start = word(bytecode, block.at + 3) as usize;
        let g = match gathering.as_mut() {
            Some(g) if g.len != said => {
                return Err(SourceError::LengthDisagrees {
                    offset,
                    said,
                    first: g.len,
                })
            }
            Some(g) => g,
            None if said > MAX_SOURCE_BYTES => return Err(SourceError::TooLong { len: said }),
            None => gathering.insert(Gathering {
                start: offset,
                len: said,
                // Bounded by what the shader holds, whatever the length says.
                bytes: Vec::with_capacity(said.min(bytecode.len())),
            }),
        };
        if start != g.bytes.len() {
            return Err(SourceError::OutOfOrder {
                offset,
                said: start,
                expected: g.bytes.len(),
            });
        }
        let text_dwords = block.len - HEADER_DWORDS;
        let bytes = (g.len - g.bytes.len()).min(text_dwords * 4);
        if text_dwords != bytes.div_ceil(4) || (bytes == 0 && g.len != 0) {
            return Err(SourceError::ChunkLength {
                offset,
                dwords: text_dwords,
                bytes,
            });
        }
        let text = &bytecode[(block.at + 1 + HEADER_DWORDS) * 4..block.end()];
        if text[bytes..].iter().any(|&b| b != 0) {
            return Err(SourceError::Padding { offset });
        }
        g.bytes.extend_from_slice(&text[..bytes]);
        if g.bytes.len() == g.len {
            let g = gathering.take().expect("being gathered");
            found = Some((g.bytes, g.start..block.end()));
        }
    }
    if let Some(g) = gathering {
        return Err(SourceError::Truncated {
            offset: bytecode.len(),
            len: g.len,
            found: g.bytes.len(),
        });
    }
    found
        .map(|(bytes, blocks)| {
            String::from_utf8(bytes)
                .map(|text| KeptSource { text, blocks })
                .map_err(|e| SourceError::NotUtf8 {
                    at: e.utf8_error().valid_up_to(),
                })
        })
        .transpose()
}

/// The comment blocks (tokens and payloads) that keep `text`.
pub fn encode(text: &str) -> Result<Vec<u8>, SourceError> {
    let bytes = text.as_bytes();
    if bytes.len() > MAX_SOURCE_BYTES {
        return Err(SourceError::TooLong { len: bytes.len() });
    }
    let mut out = Vec::with_capacity(bytes.len() + 64);
    let mut chunks: Vec<&[u8]> = bytes.chunks(CHUNK_TEXT_BYTES).collect();
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    let mut start = 0;
    for chunk in chunks {
        let dwords = HEADER_DWORDS + chunk.len().div_ceil(4);
        for d in [
            COMMENT_TOKEN | (dwords as u32) << 16,
            SOURCE_FOURCC,
            bytes.len() as u32,
            start as u32,
        ] {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(chunk);
        out.resize(out.len() + (4 - chunk.len() % 4) % 4, 0);
        start += chunk.len();
    }
    Ok(out)
}

/// `bytecode` without the source it keeps, and that source; `None` when it keeps none or
/// its source does not decode (the blocks then stay where they are, as any comment).
pub fn split(bytecode: &[u8]) -> Option<(Vec<u8>, KeptSource)> {
    let kept = find(bytecode).ok()??;
    let mut bare = bytecode[..kept.blocks.start].to_vec();
    bare.extend_from_slice(&bytecode[kept.blocks.end..]);
    Some((bare, kept))
}

/// `bytecode` keeping `text` as its source: the chunks right after the CTAB comment of
/// the leading run (or the version token), in place of any source it kept.
pub fn with_source(bytecode: &[u8], text: &str) -> Result<Vec<u8>, SourceError> {
    let chunks = encode(text)?;
    let bare = match find(bytecode)? {
        Some(kept) => {
            let mut bare = bytecode[..kept.blocks.start].to_vec();
            bare.extend_from_slice(&bytecode[kept.blocks.end..]);
            bare
        }
        None => bytecode.to_vec(),
    };
    let at = leading_blocks(&bare)?
        .iter()
        .find(|b| b.whole && b.fourcc(&bare) == Some(CTAB_FOURCC))
        .map_or(4, Block::end);
    let mut out = Vec::with_capacity(bare.len() + chunks.len());
    out.extend_from_slice(&bare[..at]);
    out.extend_from_slice(&chunks);
    out.extend_from_slice(&bare[at..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shader::d3d9::{asm, bytecode, disasm};
    use crate::shader::hlsl::compile::{compile, Options};

    fn dwords(bytes: &[u8]) -> Vec<u32> {
        bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    fn bytes_of(dwords: &[u32]) -> Vec<u8> {
        dwords.iter().flat_map(|d| d.to_le_bytes()).collect()
    }

    /// A ps_2_0 with a constant table (`Tint` at `c5`).
    fn shader() -> Vec<u8> {
        let options = Options {
            profile: "ps_2_0".into(),
            keep_registers: [("Tint".to_string(), ('c', 5))].into_iter().collect(),
            ..Options::default()
        };
        compile(
            "t.hlsl",
            "float4 Tint;\nfloat4 main() : COLOR { return Tint; }\n",
            None,
            &options,
        )
        .map_err(|f| f.render())
        .unwrap()
        .bytecode
    }

    #[test]
    fn the_layout_is_fourcc_length_start_text() {
        let code = with_source(&bytes_of(&[0xFFFF0200, 0x0000FFFF]), "float4 x;").unwrap();
        assert_eq!(
            dwords(&code),
            [
                0xFFFF0200,
                0x0006FFFE,
                SOURCE_FOURCC,
                9,
                0,
                u32::from_le_bytes(*b"floa"),
                u32::from_le_bytes(*b"t4 x"),
                u32::from_le_bytes([b';', 0, 0, 0]),
                0x0000FFFF,
            ]
        );
        assert_eq!(SOURCE_FOURCC.to_le_bytes(), *b"SFHL");
    }

    #[test]
    fn sources_round_trip_after_the_ctab() {
        let code = shader();
        for text in [
            "",
            "a",
            "abcd",
            "float4 main() : COLOR { return 1; }\r\n",
            "é\0ü",
        ] {
            let kept = with_source(&code, text).unwrap();
            let found = find(&kept).unwrap().unwrap();
            assert_eq!(found.text, text);
            // Right after the CTAB comment; the rest of the shader as it was.
            let ctab = crate::shader::d3d9::ctab::find_ctab(&code)
                .unwrap()
                .unwrap();
            assert_eq!(found.blocks.start, ctab.comment.end);
            let (bare, again) = split(&kept).unwrap();
            assert_eq!((bare, again), (code.clone(), found));
            // The shader still parses, and keeping the same source again changes nothing.
            bytecode::parse(&kept).unwrap();
            assert_eq!(with_source(&kept, text).unwrap(), kept);
            assert!(has_source(&kept));
        }
        assert!(!has_source(&code));
        assert_eq!(find(&code).unwrap(), None);
        // A new source replaces the old one.
        let kept = with_source(&with_source(&code, "old").unwrap(), "new").unwrap();
        assert_eq!(find(&kept).unwrap().unwrap().text, "new");
    }

    #[test]
    fn long_sources_continue_in_further_comments() {
        let code = shader();
        let line = "float4 c; // a line of a long source\n";
        let text = line.repeat(2 * CHUNK_TEXT_BYTES / line.len() + 3);
        let kept = with_source(&code, &text).unwrap();
        let shader = bytecode::parse(&kept).unwrap();
        let chunks: Vec<_> = shader
            .comments()
            .filter(|c| c.payload.first() == Some(&SOURCE_FOURCC))
            .collect();
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks[0].payload.len(), MAX_COMMENT_DWORDS);
        assert_eq!(chunks[1].payload[2] as usize, CHUNK_TEXT_BYTES);
        assert!(chunks.iter().all(|c| c.payload[1] as usize == text.len()));
        assert_eq!(find(&kept).unwrap().unwrap().text, text);
        // Exactly full chunks need no padding, and no empty chunk after them.
        let full = "x".repeat(CHUNK_TEXT_BYTES * 2);
        let kept = with_source(&code, &full).unwrap();
        assert_eq!(kept.len(), code.len() + 2 * (MAX_COMMENT_DWORDS + 1) * 4);
        assert_eq!(find(&kept).unwrap().unwrap().text, full);
        assert_eq!(
            with_source(&code, &"x".repeat(MAX_SOURCE_BYTES + 1)),
            Err(SourceError::TooLong {
                len: MAX_SOURCE_BYTES + 1
            })
        );
    }

    /// The payload DWORDs of the chunks of a kept `text`, to corrupt.
    fn kept_words(text: &str) -> Vec<u32> {
        let mut words = vec![0xFFFF0200];
        words.extend(dwords(&encode(text).unwrap()));
        words.push(0x0000FFFF);
        words
    }

    #[test]
    fn hostile_chunks_are_refused_with_their_place() {
        let good = kept_words("float4 main() : COLOR { return 0.5; }");
        assert!(find(&bytes_of(&good)).unwrap().is_some());
        let cases: Vec<(&str, Vec<u32>, &str)> = vec![
            (
                "a chunk claims more DWORDs than the shader has",
                {
                    let mut w = good.clone();
                    w[1] = 0xFFFE | 0x7000 << 16;
                    w
                },
                "declares 28672 DWORDs",
            ),
            (
                "the length says more than the chunk holds",
                {
                    let mut w = good.clone();
                    w[3] += 8;
                    w
                },
                "stops after 40",
            ),
            (
                "a source cut short: its second chunk is missing",
                {
                    let mut w = kept_words(&"y".repeat(CHUNK_TEXT_BYTES + 10));
                    let second = 1 + 1 + MAX_COMMENT_DWORDS;
                    w.drain(second..w.len() - 1);
                    w
                },
                "stops after 131056",
            ),
            (
                "another comment where the second chunk should be",
                {
                    let mut w = kept_words(&"y".repeat(CHUNK_TEXT_BYTES + 10));
                    let second = 1 + 1 + MAX_COMMENT_DWORDS;
                    w[second + 1] = CTAB_FOURCC;
                    w
                },
                "a chunk is missing",
            ),
            (
                "a chunk out of order",
                {
                    let mut w = good.clone();
                    w[4] = 4;
                    w
                },
                "starts at byte 4 of the source; byte 0",
            ),
            (
                "a chunk without its header",
                vec![0xFFFF0200, 0x0002FFFE, SOURCE_FOURCC, 5, 0x0000FFFF],
                "has 2 DWORDs",
            ),
            (
                "padding that is not zeros",
                {
                    let mut w = good.clone();
                    let last = w.len() - 2;
                    w[last] |= 0x4100_0000;
                    w
                },
                "not zero",
            ),
            (
                "text that is not UTF-8",
                {
                    let mut w = good.clone();
                    w[5] = u32::from_le_bytes([b'f', 0xFF, b'o', b'a']);
                    w
                },
                "not UTF-8 text (byte 1",
            ),
            (
                "two sources",
                {
                    let mut w = good.clone();
                    let again = good[1..good.len() - 1].to_vec();
                    w.splice(1..1, again);
                    w
                },
                "a second kept source",
            ),
            (
                "a length beyond any kept source",
                {
                    let mut w = good.clone();
                    w[3] = u32::MAX;
                    w
                },
                "at most",
            ),
        ];
        for (what, words, says) in cases {
            let bytes = bytes_of(&words);
            let err = find(&bytes).expect_err(what).to_string();
            assert!(err.contains(says), "{what}: {err}");
            assert_eq!(split(&bytes), None, "{what}");
        }
        // Not a shader at all, and every prefix of a good one: an error or no source,
        // never a panic.
        assert!(find(&[1, 2, 3]).is_err());
        let bytes = bytes_of(&good);
        for n in 0..bytes.len() {
            let _ = find(&bytes[..n]);
            let _ = has_source(&bytes[..n]);
        }
    }

    #[test]
    fn chunks_after_the_first_instruction_are_no_source() {
        let mut words = vec![0xFFFF0200, 0x00000000];
        words.extend(dwords(&encode("late").unwrap()));
        words.push(0x0000FFFF);
        assert_eq!(find(&bytes_of(&words)).unwrap(), None);
    }

    #[test]
    fn the_disassembler_keeps_the_chunks_as_data() {
        // Our own tools see a comment like any other: the disassembly gives the bytes back,
        // the validator and the slot count do not see it.
        let kept = with_source(
            &shader(),
            "float4 Tint;\nfloat4 main() : COLOR { return Tint; }",
        )
        .unwrap();
        let text = disasm::disassemble(&kept).unwrap();
        assert!(text.contains("// comment-block: "), "{text}");
        assert!(
            text.contains("approximately 1 instruction slot used"),
            "{text}"
        );
        assert_eq!(asm::assemble(&text).unwrap(), kept);
    }
}
