//! Tests: comments a user writes in asm text survive text → bytes → text → bytes, in
//! every shader model, beside a constant table, above the version line, and never appear
//! where the user wrote none.

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

/// The worked example with a `Reserved` of 7, which no producer writes: a table the header
/// cannot show, so it travels as a `comment-block`.
fn unshowable_example() -> Vec<u32> {
    let (mut payload, _) = worked_example();
    payload[10] = 0x0007_0001;
    payload
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
    let table = unshowable_example();
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
    let top = |t: &str| block(Placement::Top, t);
    let above = |t: &str| block(Placement::AboveVersion, t);
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
        ("above the notes in a shader without any", vec![top("// a")]),
        (
            "above the version line after an instruction",
            vec![nop.to_vec(), above("// a")],
        ),
        (
            "above the notes after one above the version line",
            vec![above("// a"), top("// b")],
        ),
        ("above the version line, opening a /*", vec![above("/* a")]),
        (
            "above the version line, a note",
            vec![above(
                "// Needs X >= 2: it uses c1, and vs_1_1 guarantees 1.",
            )],
        ),
        (
            "above the version line, a header",
            vec![above("//"), above("// Generated by me"), above("//")],
        ),
        ("above the version line, code", vec![above("mov r0, r1")]),
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

/// The placements of the user comments of `bytes`, in order.
fn placements(bytes: &[u8]) -> Vec<Placement> {
    user_comments(bytes).iter().map(|c| c.placement).collect()
}

/// `text` saved the way D3DX saves it, without a comment: what the bytes of `text` hold
/// besides the user's comments.
fn without_comments(text: &str) -> Vec<u8> {
    let mut shader = bytecode::parse(&assemble(text).unwrap()).unwrap();
    shader
        .items
        .retain(|i| !matches!(i, Item::Comment(c) if c.user_comment().is_some()));
    shader.encode()
}

#[test]
fn comments_above_the_version_line_come_back() {
    use Placement::AboveVersion;
    // vs_1_1: a `;` line and a `//` line, then the shader.
    let bytes = round_trip(
        "; lit by the sun\n// two passes\nvs_1_1\ndcl_position v0\nm4x4 oPos, v0, c0\n",
        "; lit by the sun\n// two passes\n    vs_1_1\n    dcl_position v0\n\
         \x20   m4x4 oPos, v0, c0\n\n// approximately 4 instruction slots used\n",
    );
    assert_eq!(placements(&bytes), [AboveVersion, AboveVersion]);
    assert_eq!(
        without_comments("vs_1_1\ndcl_position v0\nm4x4 oPos, v0, c0\n"),
        without_comments(
            "; lit by the sun\n// two passes\nvs_1_1\ndcl_position v0\nm4x4 oPos, v0, c0\n"
        ),
    );
    // ps_2_0: a `//` line with the user's indentation, a blank line (not kept), a `/* */`
    // over two lines, and the one before the version line's code.
    let bytes = round_trip(
        "  // night sky\n\n/* dimmed\n   by half */\n/* v */ ps_2_0 ; tweaked\ndef c1, 0.5, 0.5, 0.5, 1\n\
         mov oC0, c1\n",
        "  // night sky\n/* dimmed\n   by half */\n/* v */\n    ps_2_0 ; tweaked\n\
         \x20   def c1, 0.5, 0.5, 0.5, 1\n    mov oC0, c1\n\n\
         // approximately 1 instruction slot used\n",
    );
    assert_eq!(placements(&bytes)[..4], [AboveVersion; 4]);
    assert_eq!(placements(&bytes)[4], Placement::AfterCode);
    // ps_3_0, where the first line of the text is a comment.
    let bytes = round_trip(
        "// shadow\n;  soft\nps_3_0\ndcl_texcoord v0\nmov oC0, v0 ; pass\n",
        "// shadow\n;  soft\n    ps_3_0\n    dcl_texcoord v0\n    mov oC0, v0 ; pass\n\n\
         // approximately 1 instruction slot used\n",
    );
    assert_eq!(placements(&bytes)[..2], [AboveVersion; 2]);
}

/// The constant-table header fxc prints over a shader of `target` with one constant.
fn fxc_header(target: &str, declaration: &str, row: &str) -> String {
    format!(
        "//\n// Generated by Microsoft (R) HLSL Shader Compiler 9.29.952.3111\n//\n\
         //   fxc /T {target} shader.hlsl\n//\n//\n// Parameters:\n//\n//   {declaration}\n//\n\
         //\n// Registers:\n//\n//   Name         Reg   Size\n//   ------------ ----- ----\n\
         //   {row}\n//\n"
    )
}

/// The same header as the disassembler prints it (without fxc's command line).
fn our_header(target: &str, declaration: &str, row: &str) -> String {
    fxc_header(target, declaration, row).replace(&format!("//   fxc /T {target} shader.hlsl\n"), "")
}

#[test]
fn comments_above_and_below_a_constant_table_header() {
    use Placement::{AboveVersion, Top};
    for (target, declaration, row, body, footer) in [
        (
            "vs_1_1",
            "float4x4 Transform;",
            "Transform    c0       4",
            "dcl_position v0\nm4x4 oPos, v0, c0\n",
            "4 instruction slots",
        ),
        (
            "ps_2_0",
            "float4 Tint;",
            "Tint         c0       1",
            "mov oC0, c0\n",
            "1 instruction slot",
        ),
        (
            "ps_3_0",
            "float4 Tint;",
            "Tint         c0       1",
            "mov oC0, c0\n",
            "1 instruction slot",
        ),
    ] {
        // fxc's listing with a comment at the top, one among fxc's lines before the
        // sections, and a `;` and a `//` right above the version line.
        let header = fxc_header(target, declaration, row)
            .replace("shader.hlsl\n//\n", "shader.hlsl\n// tuned by hand\n//\n");
        let text =
            format!("// {target} for the sky\n\n{header}\n; was 0.5\n// keep\n{target}\n{body}");
        let indented: String = body.lines().map(|l| format!("    {l}\n")).collect();
        let ours = our_header(target, declaration, row);
        let listing = format!(
            "// {target} for the sky\n\n{ours}\n// tuned by hand\n; was 0.5\n// keep\n    {target}\n\
             {indented}\n// approximately {footer} used\n"
        );
        let bytes = round_trip(&text, &listing);
        assert_eq!(
            placements(&bytes),
            [Top, AboveVersion, AboveVersion, AboveVersion],
            "{target}"
        );
        // The table is the header's, right after the version token, and the rest is what
        // the text without its comments gives.
        let location = ctab::find_ctab(&bytes).unwrap().unwrap();
        assert_eq!(location.comment.start, 4, "{target}");
        let plain = format!("{}\n{target}\n{body}", fxc_header(target, declaration, row));
        assert_eq!(
            without_comments(&text),
            assemble(&plain).unwrap(),
            "{target}"
        );
        // A comment written right under a header without constants, before the blank line
        // the disassembler leaves there, is the user's too.
        let (table, _) = worked_example();
        let mut empty = ConstantTable::decode(&bytes_of(&table), 0xFFFF_0200).unwrap();
        empty.constants.clear();
        let shader = assemble("ps_2_0\nmov oC0, c0\n").unwrap();
        let with_empty = ctab::replace_ctab(&shader, &empty.encode()).unwrap();
        let shown = disassemble(&with_empty).unwrap();
        assert!(shown.contains("//\n    ps_2_0\n"), "{shown}");
        let edited = shown.replace("//\n    ps_2_0\n", "//\n// right above\n    ps_2_0\n");
        let saved = assemble(&edited).unwrap();
        assert_eq!(placements(&saved), [AboveVersion]);
        let again = disassemble(&saved).unwrap();
        assert!(
            again.contains("//\n\n// right above\n    ps_2_0\n"),
            "{again}"
        );
        assert_eq!(assemble(&again).unwrap(), saved);
    }
}

#[test]
fn comments_above_a_table_kept_as_data_or_by_the_sdp_view() {
    use Placement::{AboveVersion, Top};
    // A table the header cannot show travels as a `comment-block` after the version line;
    // the header above is only a reading aid, and the comments around it are kept.
    let table = unshowable_example();
    let text = format!(
        "ps_2_0\n{}dcl t0\nmul r0, t0, c0\nmov oC0, r0\n",
        ctab_lines(&table)
    );
    let shown = disassemble(&assemble(&text).unwrap()).unwrap();
    assert!(
        shown.contains("//   Tint ") && shown.contains(COMMENT_BLOCK),
        "{shown}"
    );
    let edited = format!(
        "; tint\n{}",
        shown.replace("\n    ps_2_0\n", "\n// by hand\n    ps_2_0\n")
    );
    let bytes = round_trip(&edited, &edited);
    assert_eq!(placements(&bytes), [Top, AboveVersion]);
    assert_eq!(ctab::find_ctab(&bytes).unwrap().unwrap().comment.start, 4);

    // The `.sdp` view puts the shader's table back into text that has none, right after
    // the version token: the comments come back below its header.
    let hand = assemble("; tint\n// by hand\nps_2_0 // lit\ndcl t0\nmul r0, t0, c0\nmov oC0, r0\n")
        .unwrap();
    assert_eq!(placements(&hand)[..2], [AboveVersion, AboveVersion]);
    let kept = ctab::replace_ctab(&hand, &bytes_of(&table)).unwrap();
    let listing = disassemble(&kept).unwrap();
    assert!(
        listing.contains("//\n\n; tint\n// by hand\n    ps_2_0 // lit\n    // comment-block"),
        "{listing}"
    );
    assert_eq!(assemble(&listing).unwrap(), kept);
}

#[test]
fn comments_beside_the_notes() {
    use Placement::{AboveVersion, Top};
    // c297 needs a device capability, which the first line of the listing says.
    let body = "dcl_position v0\nmov r0, c297\nadd oPos, v0, r0\n";
    let shown = disassemble(&assemble(&format!("vs_2_0\n{body}")).unwrap()).unwrap();
    let note = shown.lines().next().unwrap().to_string();
    assert!(
        note.starts_with("// Needs D3DCAPS9.MaxVertexShaderConst >= 298"),
        "{shown}"
    );
    let text = format!("// above the note\n{note}\n\n; under it\nvs_2_0\n{body}");
    let bytes = round_trip(
        &text,
        &format!(
            "// above the note\n{note}\n\n; under it\n    vs_2_0\n    dcl_position v0\n\
             \x20   mov r0, c297\n    add oPos, v0, r0\n\n\
             // approximately 2 instruction slots used\n"
        ),
    );
    assert_eq!(placements(&bytes), [Top, AboveVersion]);
    // A note that no longer holds after an edit is the disassembler's line, not a comment.
    let edited = text.replace("c297", "c2");
    let saved = assemble(&edited).unwrap();
    let listing = disassemble(&saved).unwrap();
    assert!(!listing.contains("Needs"), "{listing}");
    assert_eq!(
        user_comments(&saved)
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>(),
        ["// above the note", "; under it"]
    );
    assert!(
        listing.starts_with("// above the note\n; under it\n    vs_2_0\n"),
        "{listing}"
    );
    assert_eq!(assemble(&listing).unwrap(), saved);
}

/// A comment inside a section of the header cannot be told from an edit of the table:
/// the save is refused at its line, with where the comment can go.
#[test]
fn a_comment_inside_the_header_is_refused_at_its_line() {
    let header = fxc_header("ps_2_0", "float4 Tint;", "Tint         c0       1");
    let text = format!("{header}\nps_2_0\nmov oC0, c0\n");
    assert!(assemble(&text).is_ok());
    let inside = text.replace(
        "//   Tint         c0       1\n",
        "//   Tint         c0       1\n// mine\n",
    );
    let e = assemble(&inside).unwrap_err();
    assert_eq!(inside.lines().nth(e.line - 1), Some("// mine"), "{e}");
    assert!(e.message.contains("'mine'"), "{e}");
    assert!(
        e.message
            .contains("a comment of yours goes above the header"),
        "{e}"
    );
    // Beside a CTAB comment-block the header is only a reading aid; a line added to it
    // is refused all the same rather than dropped.
    let (table, _) = worked_example();
    let shown =
        disassemble(&assemble(&format!("ps_2_0\n{}mov oC0, c0\n", ctab_lines(&table))).unwrap())
            .unwrap();
    let inside = shown.replace("// Parameters:\n//\n", "// Parameters:\n//\n// mine\n");
    assert_ne!(inside, shown);
    let e = assemble(&inside).unwrap_err();
    assert_eq!(inside.lines().nth(e.line - 1), Some("// mine"), "{e}");
    assert!(
        e.message
            .contains("a comment of yours goes above the header"),
        "{e}"
    );
}

/// FlatOut's and Wine's bytes: text assembled without comments stores none above the
/// version line either.
#[test]
fn dropping_comments_drops_those_above_the_version_line() {
    use super::asm::assemble_dropping_comments;
    let plain = "vs_1_1\ndcl_position v0\nm4x4 oPos, v0, c0\n";
    assert_eq!(
        assemble_dropping_comments(&format!("; one\n// two\n/* three */\n{plain}")).unwrap(),
        assemble_dropping_comments(plain).unwrap()
    );
}
