//! Tests: comments a user writes in asm text survive text → bytes → text → bytes, in
//! every shader model, beside a constant table, and never appear where the user wrote none.

use super::asm::{assemble, assemble_unvalidated};
use super::bytecode::{self, Item, Placement, UserComment, USER_COMMENT_FOURCC};
use super::ctab::{self, ConstantTable, CTAB_FOURCC};
use super::disasm::{disassemble, COMMENT_BLOCK};

/// Saves `text` as the `.sdp` view does, reads it back, saves that: the listing shown is
/// `listing` and the second save gives the bytes of the first.
fn round_trip(text: &str, listing: &str) -> Vec<u8> {
    let bytes = assemble(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let shown = disassemble(&bytes).unwrap();
    assert_eq!(shown, listing);
    let again = assemble(&shown).unwrap_or_else(|e| panic!("{e}\n{shown}"));
    assert_eq!(again, bytes, "{shown}");
    assert_eq!(disassemble(&again).unwrap(), shown);
    bytes
}

fn user_comments(bytes: &[u8]) -> Vec<UserComment> {
    bytecode::parse(bytes)
        .unwrap()
        .comments()
        .filter_map(|c| c.user_comment())
        .collect()
}

fn dwords(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn bytes_of(dwords: &[u32]) -> Vec<u8> {
    dwords.iter().flat_map(|d| d.to_le_bytes()).collect()
}

#[test]
fn vs_1_1_comments_come_back() {
    let bytes = round_trip(
        "vs_1_1\ndcl_position v0\ndcl_texcoord v1\n// transform\n\
         m4x4 oPos, v0, c0 // world-view-projection\nmov oT0, v1       ; pass the uv\n\
         /* fog:\n   none */\n",
        "    vs_1_1\n    dcl_position v0\n    dcl_texcoord v1\n// transform\n\
         \x20   m4x4 oPos, v0, c0 // world-view-projection\n    mov oT0, v1       ; pass the uv\n\
         /* fog:\n   none */\n\n// approximately 5 instruction slots used\n",
    );
    let placements: Vec<_> = user_comments(&bytes).iter().map(|c| c.placement).collect();
    use Placement::{AfterCode, OwnLine};
    assert_eq!(
        placements,
        [OwnLine, AfterCode, AfterCode, OwnLine, OwnLine],
        "one block a line"
    );
}

#[test]
fn ps_1_4_comments_come_back() {
    // rgba masks read as xyzw; fxc's co-issue spelling, `  + mov`, comes back.
    round_trip(
        "ps_1_4\n// sample the two maps\ntexld r0, t0      ; base\ntexld r1, t1 // detail\n\
         /* blend them */\nmul r0.rgb, r0, r1\n+mov r0.a, c0 // alpha\nphase // second phase\n\
         texld r2, r0 // dependent read\nadd r0.rgb, r0, r2\n+mov r0.a, c0\n",
        "    ps_1_4\n// sample the two maps\n    texld r0, t0      ; base\n\
         \x20   texld r1, t1 // detail\n/* blend them */\n    mul r0.xyz, r0, r1\n\
         \x20 + mov r0.w, c0 // alpha\n    phase // second phase\n\
         \x20   texld r2, r0 // dependent read\n    add r0.xyz, r0, r2\n  + mov r0.w, c0\n\n\
         // approximately 5 instruction slots used (3 texture, 2 arithmetic)\n",
    );
}

#[test]
fn ps_2_0_comments_come_back() {
    round_trip(
        "ps_2_0 // night sky\ndcl t0\ndcl_2d s0\ndef c1, 0.5, 0.5, 0.5, 1 // half\n\
         texld r0, t0, s0\n    // tweaked for the night sky\nmul r0, r0, c0 // tweak\n\
         mul r0, r0, /* dim */ c1 // twice\nmov oC0, r0\n",
        "    ps_2_0 // night sky\n    dcl t0\n    dcl_2d s0\n    def c1, 0.5, 0.5, 0.5, 1 // half\n\
         \x20   texld r0, t0, s0\n    // tweaked for the night sky\n    mul r0, r0, c0 // tweak\n\
         \x20   mul r0, r0, c1 /* dim */ // twice\n    mov oC0, r0\n\n\
         // approximately 4 instruction slots used (1 texture, 3 arithmetic)\n",
    );
}

#[test]
fn vs_3_0_comments_come_back() {
    round_trip(
        "vs_3_0\ndcl_position v0\ndcl_position o0\ndefi i0, 4, 0, 1, 0\nmov r0, c0\n\
         loop aL, i0 // four lights\n    // accumulate\n    add r0, r0, c1[aL] ; per light\n\
         endloop\nmov o0, v0 // position\n",
        "    vs_3_0\n    dcl_position v0\n    dcl_position o0\n    defi i0, 4, 0, 1, 0\n\
         \x20   mov r0, c0\n    loop aL, i0 // four lights\n    // accumulate\n\
         \x20     add r0, r0, c1[aL] ; per light\n    endloop\n    mov o0, v0 // position\n\n\
         // approximately 8 instruction slots used\n",
    );
}

#[test]
fn the_block_layout_is_fourcc_placement_length_text() {
    let bytes = assemble_unvalidated("vs_1_1\nnop // é\n").unwrap();
    assert_eq!(
        dwords(&bytes)[2..],
        [
            0x0004FFFE,
            USER_COMMENT_FOURCC,
            1 | 6 << 8,
            u32::from_le_bytes(*b" // "),
            u32::from_le_bytes([0xC3, 0xA9, 0, 0]),
            0x0000FFFF,
        ]
    );
    assert_eq!(USER_COMMENT_FOURCC.to_le_bytes(), *b"SFCM");
    // A NUL in the text is kept: the length says where the text ends.
    let c = UserComment {
        placement: Placement::OwnLine,
        text: "// a\0".into(),
    };
    assert_eq!(UserComment::from_payload(&c.payload()), Some(c));
}

#[test]
fn an_unedited_listing_stores_no_comment() {
    // A CTAB (the header above the version line), raw tokens with the line naming them,
    // another comment block and trailing data: all the disassembler's own comments.
    let (table, _) = worked_example();
    let mut d = vec![0xFFFF_0200, 0xFFFE | (table.len() as u32) << 16];
    d.extend(&table);
    d.extend([
        0x0000_FFFE,
        0x0300_0042,
        0x800F_0000,
        0xB0E4_0000,
        0xA0E4_0800,
    ]);
    d.extend([
        0x0200_0001,
        0x800F_4000,
        0x80E4_0000,
        0x0000_FFFF,
        0xDEAD_BEEF,
    ]);
    let bytes = bytes_of(&d);
    let text = disassemble(&bytes).unwrap();
    assert!(
        text.contains("//   Tint ") && text.contains("//\n\n    ps_2_0\n"),
        "{text}"
    );
    assert!(
        text.contains("with an encoding that has no asm spelling:"),
        "{text}"
    );
    assert!(text.contains("// approximately"), "{text}");
    let again = assemble_unvalidated(&text).unwrap();
    assert_eq!(again, bytes, "{text}");
    assert!(user_comments(&again).is_empty());
}

/// The §10.5 worked example (`float4 Tint : register(c0);` in ps_2_0).
fn worked_example() -> (Vec<u32>, ConstantTable) {
    let payload = vec![
        0x42415443, 0x0000001c, 0x0000004f, 0xffff0200, 0x00000001, 0x0000001c, 0x00000000,
        0x00000048, 0x00000030, 0x00000002, 0x00000001, 0x00000038, 0x00000000, 0x746e6954,
        0xababab00, 0x00030001, 0x00040001, 0x00000001, 0x00000000, 0x325f7370, 0x7300305f,
        0x65646168, 0x00736672,
    ];
    let table = ConstantTable::decode(&bytes_of(&payload), 0xffff0200).unwrap();
    (payload, table)
}

/// The comment-block lines of a CTAB payload, as the listing has them.
fn ctab_lines(payload: &[u32]) -> String {
    let mut s = format!("// {COMMENT_BLOCK}: {} dwords\n", payload.len());
    for chunk in payload.chunks(8) {
        let hex: Vec<String> = chunk.iter().map(|d| format!("{d:08x}")).collect();
        s.push_str(&format!("// {}\n", hex.join(" ")));
    }
    s
}

#[test]
fn comments_beside_a_constant_table() {
    let (table, _) = worked_example();
    let body = "dcl t0\n// tint it\nmul r0, t0, c0 // Tint\nmov oC0, r0\n";
    let with_ctab = format!("ps_2_0 // lit\n{}{body}", ctab_lines(&table));
    let bytes = assemble(&with_ctab).unwrap();
    // The CTAB is found, whole, and the listing's header comes from it.
    let location = ctab::find_ctab(&bytes).unwrap().unwrap();
    assert_eq!(location.payload, 8..8 + 4 * table.len());
    let listing = disassemble(&bytes).unwrap();
    assert!(listing.contains("//   Tint "), "{listing}");
    assert!(
        listing.contains("    ps_2_0 // lit\n    // comment-block"),
        "{listing}"
    );
    assert!(
        listing.contains("\n// tint it\n    mul r0, t0, c0 // Tint\n"),
        "{listing}"
    );
    assert_eq!(assemble(&listing).unwrap(), bytes);

    // The `.sdp` view keeps the old table when the saved text has none: it inserts the
    // CTAB right after the version token (`assemble_keeping_ctab`). The comment of the
    // version line stays on it, and the result reads back to itself.
    let without = assemble(&format!("ps_2_0 // lit\n{body}")).unwrap();
    assert_eq!(ctab::find_ctab(&without).unwrap(), None);
    let kept = ctab::replace_ctab(&without, &bytes_of(&table)).unwrap();
    assert_eq!(kept, bytes);
    assert_eq!(disassemble(&kept).unwrap(), listing);
    assert_eq!(ctab::remove_ctab(&kept).unwrap(), without);

    // A new table replaces the old one in place; the comments stay.
    let (_, decoded) = worked_example();
    let mut renamed = decoded.clone();
    renamed.constants[0].name = "Shade".into();
    let replaced = ctab::replace_ctab(&bytes, &renamed.encode()).unwrap();
    assert_eq!(user_comments(&replaced), user_comments(&bytes));
    let listing = disassemble(&replaced).unwrap();
    assert!(listing.contains("//   Shade "), "{listing}");
    assert_eq!(assemble(&listing).unwrap(), replaced);
    assert_eq!(
        bytecode::parse(&replaced).unwrap().comments().count(),
        4,
        "the CTAB and three comments"
    );
    assert_eq!(
        bytecode::parse(&replaced)
            .unwrap()
            .comments()
            .filter(|c| c.payload.first() == Some(&CTAB_FOURCC))
            .count(),
        1
    );
}

/// Blocks that the disassembler cannot print as the comment they hold (the assembler
/// would read the text back differently) are printed as data, and still come back exactly.
#[test]
fn blocks_that_cannot_print_as_text_travel_as_data() {
    let block = |placement: Placement, text: &str| {
        let payload = UserComment {
            placement,
            text: text.into(),
        }
        .payload();
        let mut d = vec![0xFFFE | (payload.len() as u32) << 16];
        d.extend(payload);
        d
    };
    let nop = [0u32];
    let own = |t: &str| block(Placement::OwnLine, t);
    let after = |t: &str| block(Placement::AfterCode, t);
    let cases: Vec<(&str, Vec<Vec<u32>>)> = vec![
        (
            "after-code with nothing before",
            vec![own("// a"), after(" // b")],
        ),
        (
            "two after one instruction",
            vec![nop.to_vec(), after(" // a"), after(" // b")],
        ),
        ("a line break", vec![own("// a\n// b")]),
        ("a continuation", vec![own("// a \\"), nop.to_vec()]),
        ("a final carriage return", vec![own("// a\r")]),
        ("no comment in it", vec![own("mov r0, r1")]),
        ("a blank line", vec![own("  ")]),
        ("code after it", vec![nop.to_vec(), after(" /* a */ nop")]),
        (
            "the footer",
            vec![own("// approximately 1 instruction slots used")],
        ),
        ("a data comment", vec![own("// raw-tokens: 1 dwords")]),
        ("an unclosed /*", vec![own("/* open"), nop.to_vec()]),
        (
            "an unclosed /* at the end",
            vec![nop.to_vec(), after(" /* open")],
        ),
        ("a CTAB follows the version line", {
            let (table, _) = worked_example();
            let mut ctab = vec![0xFFFE | (table.len() as u32) << 16];
            ctab.extend(table);
            vec![after(" // v"), ctab]
        }),
    ];
    for (what, items) in cases {
        let mut d = vec![0xFFFE_0101];
        d.extend(items.concat());
        d.push(0xFFFF);
        let bytes = bytes_of(&d);
        let text = disassemble(&bytes).unwrap();
        assert!(text.contains(COMMENT_BLOCK), "{what}:\n{text}");
        let again = assemble_unvalidated(&text).unwrap_or_else(|e| panic!("{what}: {e}\n{text}"));
        assert_eq!(again, bytes, "{what}:\n{text}");
    }
    // A block not in the layout to the bit (padding that is not NUL) is no user comment.
    let mut bad = own("// ab");
    *bad.last_mut().unwrap() |= 0x0100_0000;
    let shader = bytecode::parse(&bytes_of(
        &[[0xFFFE_0101].as_slice(), &bad, &[0xFFFF]].concat(),
    ))
    .unwrap();
    let Item::Comment(c) = &shader.items[0] else {
        panic!()
    };
    assert_eq!(c.user_comment(), None);
}

/// A multi-line `/* */` comment, each line its own block, closes before the next line the
/// disassembler writes.
#[test]
fn a_block_comment_over_several_lines_comes_back() {
    let text = "vs_2_0 /* the\n   whole\n\n   shader */\nmov r0, c0 /* one\ntwo */\n\
                mov r1, c1\n   /* three\n */ mov r2, c2\n";
    let bytes = assemble_unvalidated(text).unwrap();
    let listing = disassemble(&bytes).unwrap();
    assert_eq!(
        listing,
        "    vs_2_0 /* the\n   whole\n\n   shader */\n    mov r0, c0 /* one\ntwo */\n\
         \x20   mov r1, c1\n   /* three\n */\n    mov r2, c2\n\n\
         // approximately 3 instruction slots used\n"
    );
    assert_eq!(assemble_unvalidated(&listing).unwrap(), bytes);
}
