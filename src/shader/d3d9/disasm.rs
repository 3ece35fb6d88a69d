//! D3D9 bytecode to asm text in the syntax D3DX/fxc and Wine print
//! (`shared/formats/d3d9-bytecode.md` §9), written so that [`super::asm::assemble`] gives
//! back the identical bytes.
//!
//! Three things have no D3DX spelling and are kept as *data comments*: a `//` line naming
//! what follows and its size, then `//` lines of 8-hex-digit DWORDs (up to eight a line,
//! optionally followed by `|ascii|` for the reader):
//!
//! ```text
//! // comment-block: 2 dwords
//! // 42415443 0000001c  |CTAB....|
//! // raw-tokens: 3 dwords
//! // 00000001 800f4000 a0e40000
//! // trailing-data: 1 dwords
//! // deadbeef
//! ```
//!
//! * `comment-block`: a comment block (§2) at this place in the stream; the payload is
//!   given, the comment token is rebuilt from its length.
//! * `raw-tokens`: an instruction whose encoding no asm text reproduces (reserved bits
//!   set, an unknown opcode, operands that do not fit the opcode table); the DWORDs are
//!   emitted as they are, instruction token first.
//! * `trailing-data`: DWORDs after the end token.
//!
//! Other assemblers read these lines as comments.
//!
//! # fxc's spelling
//! Everything else is printed as fxc 9.29 prints it, so that `diff` against fxc's listing
//! of the same bytes shows only fxc's command line (`../shared/corpus/d3d9/fxc-listings/`,
//! checked line by line by a test): the constant-table header (see `ctab/listing.rs`),
//! four-space indentation and two more per open flow-control block, co-issue as `  + mov
//! r0.w, t0.w`, write masks and swizzles in `xyzw` in every model, a swizzle as one letter
//! when it replicates and as all four otherwise (`c8.xyzz`), `def` values as C's `%.9g`
//! (`6.28318548`, `-1.55009923e-006`; infinities and NaNs, which have no such spelling,
//! as their bits in hex, `0x7fc00000`, which our assembler reads as raw bits), and the
//! footer `// approximately N instruction slots used` with ` (T texture, A arithmetic)`
//! when the shader samples.
//!
//! The CTAB is not printed as data when reading the header back gives its bytes exactly
//! (what the compiler writes and the header cannot show is taken as that compiler writes
//! it: `ctab/encode.rs`); the assembler then builds it from the header. Otherwise (other
//! flags, default values `%g` rounds, a hand-made layout) its `comment-block` follows the
//! version line as before, and the header is only a reading aid.
//!
//! Above the header, lines of `// ` notes say what the shader needs that the listing
//! cannot: a Direct3D 8-style vs_1_1 without `dcl`, a device capability beyond the
//! model's guaranteed minimum ([`validate::notes`]).
//!
//! # Comments
//! The notes and the header above the version line, and the slot count after the body,
//! are the disassembler's own: the assembler stores none of them as a comment. The comments
//! a user wrote are stored by [`super::asm`] as [`UserComment`] blocks (FourCC `'SFCM'`),
//! and print back as the text they hold: an [`OwnLine`](Placement::OwnLine) block as that
//! exact line (the user's indentation, not ours), an [`AfterCode`](Placement::AfterCode)
//! block appended to the instruction or version line before it (`    mul r0, r0, c0 //
//! tweak`), the blocks right after the version token (and its CTAB comment) that were
//! written above the version line as those lines: a [`Top`](Placement::Top) block above the
//! notes and the header, an [`AboveVersion`](Placement::AboveVersion) block after them,
//! right above the version line (a blank line under the header keeps it out of the
//! header). A block is printed so only where the assembler reads the line back to the
//! same block: an after-code block needs an instruction line (or the version line, with
//! only CTAB comments between) that has no comment yet, a `/* */` that user lines open
//! must close before the next line the disassembler writes, and the lines above the
//! version line must read back, all of them, as those comments in those places (a
//! [`Top`](Placement::Top) block in a listing with neither notes nor header does not).
//! Anywhere else, and for any block that does not follow the [`UserComment`] layout to the
//! bit, the block is a `comment-block` like any other, so the bytes still come back
//! exactly.

use std::fmt::Write;
use std::ops::Range;

use super::asm::{read_above, read_line, KeptComments};
use super::bytecode::{
    self, BytecodeError, Comment, Instruction, Item, Param, Placement, Shader, ShaderKind,
    UserComment, Version,
};
pub use super::ctab::Style;
use super::ctab::{ConstantTable, CTAB_FOURCC};
use super::opcodes::{Controls, Layout, COMPARISONS, TEXLD_VARIANTS};
use super::preamble;
use super::registers::{register_name, RegisterType};
use super::syntax::{
    format_g, format_mask, format_swizzle, RESULT_MODIFIERS, SAMPLER_TYPES, SHIFTS,
    SOURCE_MODIFIERS, USAGES,
};
use super::validate;

/// Names of the data-comment kinds (see the module documentation).
pub const COMMENT_BLOCK: &str = "comment-block";
pub const RAW_TOKENS: &str = "raw-tokens";
pub const TRAILING_DATA: &str = "trailing-data";

/// The line printed before the raw tokens of an instruction without asm spelling.
const NO_SPELLING: (&str, &str) = ("// '", "' with an encoding that has no asm spelling:");

/// The slot-count footer: prefix, count, this (`slot` for one), then for a shader that
/// samples the two budgets.
const FOOTER: (&str, &str) = ("// approximately ", " instruction slot");

/// Disassembles a shader. Fails only where [`bytecode::parse`] fails.
pub fn disassemble(bytes: &[u8]) -> Result<String, BytecodeError> {
    disassemble_in(bytes, Style::Fxc)
}

/// Disassembles a shader in `style`. Fails only where [`bytecode::parse`] fails.
pub fn disassemble_in(bytes: &[u8], style: Style) -> Result<String, BytecodeError> {
    Ok(disassemble_shader_in(&bytecode::parse(bytes)?, style))
}

/// Disassembles a parsed shader.
pub fn disassemble_shader(shader: &Shader) -> String {
    disassemble_shader_in(shader, Style::Fxc)
}

/// Disassembles a parsed shader in `style`. In [`Style::D3DDisassemble`], what
/// D3DDisassemble prints for the same bytes: the header without fxc's command-line slot
/// and without a blank line above it, and nothing of the comments but the constant table
/// (neither notes, nor the user's comments, nor data lines: that text is for reading, and
/// does not assemble back to every byte).
pub fn disassemble_shader_in(shader: &Shader, style: Style) -> String {
    let v = shader.version;
    let microsoft = style == Style::D3DDisassemble;
    let notes = match microsoft {
        true => Vec::new(),
        false => validate::notes(shader),
    };
    let header = ctab_header(shader, style);
    let notes_or_header = !notes.is_empty() || header.is_some();
    // The user's comments above the version line follow the version token, or the CTAB
    // comment that follows it.
    let first = usize::from(matches!(shader.items.first(), Some(Item::Comment(c)) if is_ctab(c)));
    let mut leading = match microsoft {
        true => Vec::new(),
        false => leading_comments(&shader.items[first..], notes_or_header),
    };
    let mut out = preamble_text(&notes, header.as_ref(), &leading, style);
    if !leading.is_empty() && !reads_back(&out, &leading, notes_or_header) {
        leading.clear();
        out = preamble_text(&notes, header.as_ref(), &leading, style);
    }
    let above = first..first + leading.len();
    let omitted = header.as_ref().and_then(|h| h.exact.then_some(h.item));
    let mut body = Listing::new(out);
    body.version_line(&format!("    {v}"));
    let mut depth = 0usize;
    for (i, item) in shader.items.iter().enumerate() {
        match item {
            Item::Comment(_) if microsoft || omitted == Some(i) || above.contains(&i) => {}
            Item::Comment(c) => match c.user_comment() {
                Some(user) => body.user(c, user, shader.items.get(i + 1)),
                None if c.is_plain() => body.data(COMMENT_BLOCK, &c.payload, is_ctab(c)),
                None => {
                    let mut all = vec![c.token];
                    all.extend_from_slice(&c.payload);
                    body.data(RAW_TOKENS, &all, false);
                }
            },
            Item::Instruction(ins) => {
                let op = ins.opcode();
                if matches!(op, 0x2A | 0x2B | 0x1D | 0x27) {
                    depth = depth.saturating_sub(1);
                }
                let indent = " ".repeat(4 + 2 * depth.min(16));
                match instruction_text(ins, v) {
                    // fxc writes the `+` of a co-issued instruction in the indentation.
                    Some(text) if ins.coissue() => body.code(&format!("{}+ {text}", &indent[2..])),
                    Some(text) => body.code(&format!("{indent}{text}")),
                    None => {
                        let (head, tail) = NO_SPELLING;
                        body.line(&format!("{indent}{head}{}{tail}", ins.mnemonic()));
                        let mut all = vec![ins.token];
                        all.extend_from_slice(&ins.tokens);
                        body.data(RAW_TOKENS, &all, false);
                    }
                }
                if matches!(op, 0x28 | 0x29 | 0x2A | 0x1B | 0x26) {
                    depth += 1;
                }
            }
        }
    }
    if !shader.trailing.is_empty() && !microsoft {
        let dwords: Vec<u32> = shader
            .trailing
            .chunks(4)
            .map(|c| {
                let mut b = [0u8; 4];
                b[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(b)
            })
            .collect();
        body.data(TRAILING_DATA, &dwords, false);
    }
    let mut out = body.finish();
    out.push('\n');
    out.push_str(&slot_footer(shader));
    out
}

/// Whether the disassembly of `shader` has notes or a constant-table header above the
/// version line (where a [`Placement::Top`] comment goes above them).
pub(crate) fn prints_notes_or_header(shader: &Shader) -> bool {
    !validate::notes(shader).is_empty() || ctab_header(shader, Style::Fxc).is_some()
}

/// The user's comments above the version line, from the items after the version token
/// (and the CTAB comment that may come first): the run of [`Placement::Top`] blocks, while
/// there are notes or a header to print them above, then of
/// [`Placement::AboveVersion`] blocks.
fn leading_comments(items: &[Item], notes_or_header: bool) -> Vec<UserComment> {
    let mut above = false;
    items
        .iter()
        .map_while(|item| {
            let Item::Comment(c) = item else { return None };
            let user = c.user_comment()?;
            match user.placement {
                Placement::Top if notes_or_header && !above => Some(user),
                Placement::AboveVersion => {
                    above = true;
                    Some(user)
                }
                _ => None,
            }
        })
        .collect()
}

/// What the listing has above the version line: the user's [`Placement::Top`] comments,
/// the notes, the constant-table header, the user's [`Placement::AboveVersion`] comments.
fn preamble_text(
    notes: &[String],
    header: Option<&Header>,
    leading: &[UserComment],
    style: Style,
) -> String {
    let mut out = String::new();
    let (top, above): (Vec<_>, Vec<_>) =
        leading.iter().partition(|c| c.placement == Placement::Top);
    for c in top {
        let _ = writeln!(out, "{}", c.text);
    }
    for note in notes {
        let _ = writeln!(out, "// {note}");
    }
    match header {
        Some(h) => {
            if style == Style::Fxc {
                out.push('\n');
            }
            for line in &h.lines {
                if line.is_empty() {
                    out.push_str("//\n");
                } else {
                    let _ = writeln!(out, "// {line}");
                }
            }
            // A blank line ends the header, so the comments below are not read into it.
            if h.has_constants || !above.is_empty() {
                out.push('\n');
            }
        }
        None if !notes.is_empty() => out.push('\n'),
        None => {}
    }
    for c in above {
        let _ = writeln!(out, "{}", c.text);
    }
    out
}

/// Whether the assembler reads `preamble` back to the comments `leading`, each with its
/// placement.
fn reads_back(preamble: &str, leading: &[UserComment], notes_or_header: bool) -> bool {
    let Some(lines) = read_above(preamble) else {
        return false;
    };
    let read = preamble::read(&lines).comments;
    read.len() == leading.len()
        && read
            .iter()
            .zip(leading)
            .all(|(r, c)| r.text == c.text && r.placement(notes_or_header) == c.placement)
}

/// The header of a shader's constant table (the first CTAB comment, the one D3DX reads).
struct Header {
    /// Its lines, without `// `.
    lines: Vec<String>,
    has_constants: bool,
    /// The comment's index among the shader's items.
    item: usize,
    /// The comment follows the version token, no other CTAB comment follows, and the
    /// header reads back to its bytes: the header alone stands for it.
    exact: bool,
}

/// The header of the first CTAB comment, when the table decodes. A table that does not
/// decode gets none; it still travels, exactly, as its `comment-block`.
fn ctab_header(shader: &Shader, style: Style) -> Option<Header> {
    let (item, comment) = shader
        .items
        .iter()
        .enumerate()
        .find_map(|(i, item)| match item {
            Item::Comment(c) if is_ctab(c) => Some((i, c)),
            _ => None,
        })?;
    let payload: Vec<u8> = comment
        .payload
        .iter()
        .flat_map(|d| d.to_le_bytes())
        .collect();
    let version = shader.version.token();
    let table = ConstantTable::decode(&payload, version).ok()?;
    let lines = table.listing_in(style);
    let another = shader.items[item + 1..]
        .iter()
        .any(|i| matches!(i, Item::Comment(c) if is_ctab(c)));
    let exact = item == 0 && !another && {
        // Whether it reads back is a matter of the fxc style, the one the assembler reads.
        let fxc = match style {
            Style::Fxc => None,
            Style::D3DDisassemble => Some(table.listing()),
        };
        let read = fxc
            .as_ref()
            .unwrap_or(&lines)
            .iter()
            .map(|l| format!(" {l}"));
        let read: Vec<String> = read.collect();
        let read: Vec<&str> = read.iter().map(String::as_str).collect();
        matches!(ConstantTable::from_listing(&read, version), Ok(Some(t)) if t.encode() == payload)
    };
    Some(Header {
        lines,
        has_constants: !table.constants.is_empty(),
        item,
        exact,
    })
}

/// A comment block holding a CTAB, which the assembler stores before the comment of the
/// version line.
fn is_ctab(c: &Comment) -> bool {
    c.is_plain() && c.payload.first() == Some(&CTAB_FOURCC)
}

/// The body as it is printed, with what the assembler will make of it: whether user
/// comment lines leave a `/* */` open, and which line a comment after code may join.
struct Listing<'a> {
    out: String,
    /// User comments since one of them opened a `/* */` that has not closed yet.
    open: Option<OpenRun<'a>>,
    /// Start of the last line, when it is code without a comment.
    code_line: Option<usize>,
    /// The version line (its range, without the line break) while only CTAB comments
    /// follow it.
    version_line: Option<Range<usize>>,
}

/// User comments that printed as text while a `/* */` of theirs is open.
struct OpenRun<'a> {
    /// Where their text begins in the listing.
    start: usize,
    /// That is the end of a code line (the first is an after-code comment).
    after_code: bool,
    comments: Vec<&'a Comment>,
}

impl<'a> Listing<'a> {
    fn new(out: String) -> Self {
        Listing {
            out,
            open: None,
            code_line: None,
            version_line: None,
        }
    }

    /// A line the user's comments may not swallow: an open `/* */` run is printed as data.
    fn close(&mut self) {
        if let Some(run) = self.open.take() {
            self.out.truncate(run.start);
            if run.after_code {
                self.out.push('\n');
            }
            for c in run.comments {
                data_comment(&mut self.out, COMMENT_BLOCK, &c.payload);
            }
        }
    }

    fn line(&mut self, text: &str) {
        self.close();
        self.code_line = None;
        self.version_line = None;
        let _ = writeln!(self.out, "{text}");
    }

    fn code(&mut self, text: &str) {
        self.line(text);
        self.code_line = Some(self.out.len() - text.len() - 1);
    }

    fn version_line(&mut self, text: &str) {
        self.code(text);
        self.version_line = Some(self.out.len() - text.len() - 1..self.out.len() - 1);
    }

    fn data(&mut self, kind: &str, dwords: &[u32], ctab: bool) {
        let version_line = self.version_line.take().filter(|_| ctab);
        self.line_free_of_user_text();
        data_comment(&mut self.out, kind, dwords);
        self.version_line = version_line;
    }

    /// Closes an open run and forgets the line a comment could join.
    fn line_free_of_user_text(&mut self) {
        self.close();
        self.code_line = None;
    }

    /// A user comment, as its text where that reads back to this block, else as data.
    fn user(&mut self, c: &'a Comment, user: UserComment, next: Option<&Item>) {
        let printed = match user.placement {
            Placement::OwnLine => self.own_line(c, &user.text),
            Placement::AfterCode => self.after_code(c, &user.text, next),
            // Above the version line only where `leading_comments` finds it.
            Placement::Top | Placement::AboveVersion => false,
        };
        if !printed {
            self.data(COMMENT_BLOCK, &c.payload, false);
        }
    }

    fn own_line(&mut self, c: &'a Comment, text: &str) -> bool {
        let mut in_block = self.open.is_some();
        let expected = KeptComments {
            own_line: Some((0, text.to_string())),
            after_code: None,
        };
        if !read_line(text, &mut in_block)
            .is_some_and(|(code, kept)| code.is_empty() && same_text(&kept, &expected))
        {
            return false;
        }
        self.code_line = None;
        self.version_line = None;
        let start = self.out.len();
        let _ = writeln!(self.out, "{text}");
        self.advance(c, in_block, start, false);
        true
    }

    fn after_code(&mut self, c: &'a Comment, text: &str, next: Option<&Item>) -> bool {
        let on_version = self.version_line.is_some();
        let Some(line) = self
            .code_line
            .map(|start| start..self.out.len() - 1)
            .or_else(|| self.version_line.clone())
        else {
            return false;
        };
        // The assembler stores the version line's comment after a CTAB comment that follows.
        if on_version && matches!(next, Some(Item::Comment(n)) if is_ctab(n)) {
            return false;
        }
        let code = &self.out[line.clone()];
        let mut in_block = false;
        let expected = KeptComments {
            own_line: None,
            after_code: Some((0, text.to_string())),
        };
        let reads_back = read_line(&format!("{code}{text}"), &mut in_block)
            .is_some_and(|(c, kept)| c == code.trim() && same_text(&kept, &expected));
        let last = line.end + 1 == self.out.len();
        if !reads_back || (in_block && !last) {
            return false;
        }
        self.out.insert_str(line.end, text);
        self.code_line = None;
        self.version_line = None;
        self.advance(c, in_block, line.end, true);
        true
    }

    /// Follows the `/* */` state after a user comment printed at `start`.
    fn advance(&mut self, c: &'a Comment, in_block: bool, start: usize, after_code: bool) {
        match (&mut self.open, in_block) {
            (None, false) => {}
            (None, true) => {
                self.open = Some(OpenRun {
                    start,
                    after_code,
                    comments: vec![c],
                })
            }
            (Some(run), true) => run.comments.push(c),
            (Some(_), false) => self.open = None,
        }
    }

    fn finish(mut self) -> String {
        self.close();
        self.out
    }
}

/// The same comments, whatever their columns.
fn same_text(a: &KeptComments, b: &KeptComments) -> bool {
    let text = |c: &Option<(usize, String)>| c.as_ref().map(|(_, t)| t.clone());
    text(&a.own_line) == text(&b.own_line) && text(&a.after_code) == text(&b.after_code)
}

/// Whether `line` is one the disassembler writes about the shader, not one a user wrote:
/// the slot-count footer (ours or fxc's, any numbers) or the line that names an instruction
/// printed as raw tokens. The assembler does not keep these as comments.
pub fn is_generated_comment(line: &str) -> bool {
    let t = line.trim();
    let (head, tail) = NO_SPELLING;
    if t.len() > head.len() + tail.len() && t.starts_with(head) && t.ends_with(tail) {
        return true;
    }
    let (prefix, slot) = FOOTER;
    let Some(rest) = t
        .strip_prefix(prefix)
        .and_then(number)
        .and_then(|r| r.strip_prefix(slot))
        .map(|r| r.strip_prefix('s').unwrap_or(r))
        .and_then(|r| r.strip_prefix(" used"))
    else {
        return false;
    };
    rest.is_empty()
        || rest
            .strip_prefix(" (")
            .and_then(number)
            .and_then(|r| r.strip_prefix(" texture, "))
            .and_then(number)
            .is_some_and(|r| r == " arithmetic)")
}

/// `s` after its leading decimal digits, if it has any.
fn number(s: &str) -> Option<&str> {
    let rest = s.trim_start_matches(|c: char| c.is_ascii_digit());
    (rest.len() < s.len()).then_some(rest)
}

/// `// approximately N instruction slots used (T texture, A arithmetic)` as D3DDisassemble
/// (and so fxc's `/Fc` file) prints it: `slot` for one, the two budgets when some slot is
/// a texture slot, counted as [`footer_slots`] counts.
fn slot_footer(shader: &Shader) -> String {
    let (texture, arithmetic) = footer_slots(shader);
    let (prefix, slot) = FOOTER;
    let total = texture + arithmetic;
    let plural = if total == 1 { "" } else { "s" };
    let mut s = format!("{prefix}{total}{slot}{plural} used");
    if texture > 0 {
        let _ = write!(s, " ({texture} texture, {arithmetic} arithmetic)");
    }
    s.push('\n');
    s
}

/// The footer's (texture, arithmetic) slots, as Microsoft's disassembler counts them for
/// the same bytes (`testdata/footer/`, `../shared/corpus/hlsl/`), which is not quite the
/// budgets the models' reference pages give and [`validate::slot_usage`] checks: `texkill`
/// counts as arithmetic, flow control as arithmetic, `texldd` as one texture and two
/// arithmetic slots, `texldl` as two texture slots, vs_1_1's `lit` as one, `dsx`/`dsy` as
/// arithmetic, and in ps_1_x every instruction as one slot (`dp4`, `cmp`, `bem` too), a
/// texture slot for the texture instructions.
fn footer_slots(shader: &Shader) -> (u32, u32) {
    use super::opcodes::Class;
    const LIT: u16 = 0x10;
    const TEXKILL: u16 = 0x41;
    const DSX: u16 = 0x5B;
    const DSY: u16 = 0x5C;
    const TEXLDD: u16 = 0x5D;
    const TEXLDL: u16 = 0x5F;
    let v = shader.version;
    let ps_1 = v.kind == ShaderKind::Pixel && v.major == 1;
    let vs_1 = v.kind == ShaderKind::Vertex && v.major == 1;
    let (mut texture, mut arithmetic) = (0, 0);
    for ins in shader.instructions() {
        let Some(info) = ins.info.filter(|_| !ins.coissue()) else {
            continue;
        };
        let n = info.slots(v);
        let (t, a) = match (ins.opcode(), info.class) {
            (_, Class::Free) => (0, 0),
            (TEXKILL, _) => (0, 1),
            (_, Class::Texture | Class::TextureAndArithmetic) if ps_1 => (1, 0),
            _ if ps_1 => (0, 1),
            (LIT, _) if vs_1 => (0, 1),
            (DSX | DSY, _) => (0, n),
            (TEXLDD, _) => (1, 2),
            (TEXLDL, _) => (2, 0),
            (_, Class::Texture) => (n, 0),
            (_, Class::TextureAndArithmetic) => (1, n.saturating_sub(1)),
            (_, Class::Arithmetic | Class::FlowControl) => (0, n),
        };
        texture += t;
        arithmetic += a;
    }
    (texture, arithmetic)
}

fn data_comment(out: &mut String, kind: &str, dwords: &[u32]) {
    let _ = writeln!(out, "    // {kind}: {} dwords", dwords.len());
    for chunk in dwords.chunks(8) {
        let hex: Vec<String> = chunk.iter().map(|d| format!("{d:08x}")).collect();
        let ascii: String = chunk
            .iter()
            .flat_map(|d| d.to_le_bytes())
            .map(|b| {
                if b.is_ascii_graphic() && b != b'\\' || b == b' ' {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        let _ = writeln!(out, "    // {}  |{}|", hex.join(" "), ascii);
    }
}

/// The asm text of one instruction, or `None` when no text assembles back to exactly its
/// DWORDs.
pub fn instruction_text(ins: &Instruction, v: Version) -> Option<String> {
    let info = ins.info?;
    let ops = ins.operands.as_ref()?;
    let controls = ins.controls();
    let controls_ok = match info.controls {
        Controls::None => controls == 0,
        Controls::Comparison => (1..=6).contains(&controls),
        Controls::TexldVariant => controls <= 2,
    };
    if !controls_ok {
        return None;
    }
    let sm2 = v.major >= 2;
    let expected = ins.opcode() as u32
        | (controls as u32) << 16
        | if sm2 {
            (ins.tokens.len() as u32) << 24
        } else {
            0
        }
        | if sm2 { ins.token & (1 << 28) } else { 0 }
        | ins.token & (1 << 30);
    if ins.token != expected || (ins.tokens.len() > 15 && sm2) {
        return None;
    }
    let mut s = String::new();
    if let Some(p) = ops.predicate {
        let p = Param {
            token: p,
            relative: None,
        };
        if p.register_type() != Some(RegisterType::Predicate) {
            return None;
        }
        let _ = write!(s, "({}) ", src_text(&p, v)?);
    }
    let mut mnemonic = match info.controls {
        Controls::None => info.mnemonic.to_string(),
        Controls::Comparison => format!("{}_{}", info.mnemonic, COMPARISONS[controls as usize]),
        Controls::TexldVariant => TEXLD_VARIANTS[controls as usize].to_string(),
    };
    let mut operands = Vec::new();
    if let Some(dst) = &ops.dst {
        if info.layout == Layout::Dcl {
            mnemonic.push_str(&dcl_suffix(ops.decl?, dst, v)?);
        }
        let (text, suffixes) = dst_text(dst, v)?;
        mnemonic.push_str(&suffixes);
        operands.push(text);
    }
    match info.layout {
        Layout::Def4 if info.opcode == super::opcodes::OP_DEF => {
            operands.extend(ops.immediates.iter().map(|&b| format_float(b)));
        }
        Layout::Def4 => operands.extend(ops.immediates.iter().map(|&b| (b as i32).to_string())),
        Layout::Def1 => operands.push(
            match ops.immediates[0] {
                0 => "false",
                1 => "true",
                _ => return None,
            }
            .to_string(),
        ),
        Layout::Dcl | Layout::Operands => {}
    }
    for src in &ops.srcs {
        operands.push(src_text(src, v)?);
    }
    s.push_str(&mnemonic);
    if !operands.is_empty() {
        s.push(' ');
        s.push_str(&operands.join(", "));
    }
    Some(s)
}

/// Does `(ty, version)` declare with a usage (`dcl_texcoord1 v2`) rather than bare?
pub fn dcl_uses_usage(ty: RegisterType, v: Version) -> bool {
    match v.kind {
        ShaderKind::Vertex => {
            ty == RegisterType::Input || (v.major >= 3 && ty == RegisterType::Output)
        }
        ShaderKind::Pixel => v.major >= 3 && ty == RegisterType::Input,
    }
}

fn dcl_suffix(decl: u32, dst: &Param, v: Version) -> Option<String> {
    let ty = dst.register_type()?;
    if ty == RegisterType::Sampler {
        let t = (decl >> 27) & 0xF;
        if decl != 0x8000_0000 | t << 27 || !(1..=4).contains(&t) {
            return None;
        }
        return Some(format!("_{}", SAMPLER_TYPES[t as usize]));
    }
    if dcl_uses_usage(ty, v) {
        let usage = decl & 0xF;
        let index = (decl >> 16) & 0xF;
        if decl != 0x8000_0000 | usage | index << 16 || usage as usize >= USAGES.len() {
            return None;
        }
        let mut s = format!("_{}", USAGES[usage as usize]);
        if index > 0 {
            let _ = write!(s, "{index}");
        }
        return Some(s);
    }
    (decl == 0x8000_0000).then(String::new)
}

/// The register, with relative addressing, as text.
fn register_text(p: &Param, v: Version) -> Option<String> {
    let ty = p.register_type()?;
    let name = register_name(ty, p.number(), v)?;
    if !p.is_relative() {
        return Some(name);
    }
    if v.major < 2 {
        // VS 1.x: implicit a0.x, no address token (§4.1), spelled as D3DDisassemble
        // spells it (`c20[a0.x]`; the assembler also reads `c[a0.x + 20]`).
        if v.kind != ShaderKind::Vertex || ty != RegisterType::Const {
            return None;
        }
        return Some(format!("{name}[a0.x]"));
    }
    let addr = Param {
        token: p.relative?,
        relative: None,
    };
    let aty = addr.register_type()?;
    let swz = addr.swizzle();
    if addr.token != Param::make(aty, 0, false, (swz as u32) << 16) {
        return None;
    }
    let aname = match aty {
        RegisterType::AddrOrTexture if v.kind == ShaderKind::Vertex => "a0",
        RegisterType::Loop => "aL",
        _ => return None,
    };
    Some(format!("{name}[{aname}{}]", format_swizzle(swz)))
}

/// Destination operand text and the mnemonic suffixes its modifiers add.
fn dst_text(p: &Param, v: Version) -> Option<(String, String)> {
    if p.token & 0xC000 != 0 || p.result_modifiers() & 8 != 0 {
        return None;
    }
    let mut suffixes = String::new();
    let shift = p.shift();
    if shift != 0 {
        let (_, name) = SHIFTS.iter().find(|(s, _)| *s == shift)?;
        let _ = write!(suffixes, "_{name}");
    }
    for (bit, name) in RESULT_MODIFIERS {
        if p.result_modifiers() & bit != 0 {
            let _ = write!(suffixes, "_{name}");
        }
    }
    let text = register_text(p, v)? + &format_mask(p.write_mask());
    Some((text, suffixes))
}

fn src_text(p: &Param, v: Version) -> Option<String> {
    if p.token & 0xC000 != 0 {
        return None;
    }
    let m = SOURCE_MODIFIERS.get(p.source_modifier() as usize)?;
    let mut s = String::new();
    if m.not {
        s.push('!');
    }
    if m.negate {
        s.push('-');
    }
    if m.complement {
        s.push_str("1-");
    }
    s.push_str(&register_text(p, v)?);
    if !m.suffix.is_empty() {
        let _ = write!(s, "_{}", m.suffix);
    }
    s.push_str(&format_swizzle(p.swizzle()));
    Some(s)
}

/// A `def` value as fxc prints it (C's `%.9g`, which reads back to the same `f32`), or
/// `0x…` when there is no decimal for `bits` (infinities, NaNs).
pub fn format_float(bits: u32) -> String {
    let f = f32::from_bits(bits);
    if f.is_finite() {
        let s = format_g(f64::from(f), 9);
        if s.parse::<f32>().map(f32::to_bits) == Ok(bits) {
            return s;
        }
    }
    format!("{bits:#010x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dis(dwords: &[u32]) -> String {
        let b: Vec<u8> = dwords.iter().flat_map(|d| d.to_le_bytes()).collect();
        disassemble(&b).unwrap()
    }

    fn body(text: &str) -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("// approx"))
            .map(String::from)
            .collect()
    }

    #[test]
    fn spec_vectors() {
        let t = dis(&[
            0xFFFE0101, 0x0000001F, 0x80000000, 0x900F0000, 0x00000014, 0xC00F0000, 0x90E40000,
            0xA0E40000, 0x00000001, 0x800F0000, 0xA0E42005, 0x0000FFFF,
        ]);
        assert_eq!(
            body(&t),
            [
                "vs_1_1",
                "dcl_position v0",
                "m4x4 oPos, v0, c0",
                "mov r0, c5[a0.x]"
            ]
        );
        let t = dis(&[
            0xFFFF0103, 0x00000042, 0xB00F0000, 0x00000005, 0x80070000, 0xB0E40000, 0xA0E40003,
            0x40000001, 0x80080000, 0xA0E40004, 0x00000005, 0x810F0000, 0x80E40000, 0x90E40000,
            0x0000FFFF,
        ]);
        assert_eq!(
            body(&t),
            [
                "ps_1_3",
                "tex t0",
                "mul r0.xyz, t0, c3",
                "+ mov r0.w, c4",
                "mul_x2 r0, r0, v0"
            ]
        );
        let t = dis(&[
            0xFFFF0200, 0x0200001F, 0x80000000, 0xB00F0000, 0x0200001F, 0x90000000, 0xA00F0800,
            0x05000051, 0xA00F0000, 0x3F800000, 0x00000000, 0x3F000000, 0x3F800000, 0x03000042,
            0x800F0000, 0xB0E40000, 0xA0E40800, 0x0000FFFF,
        ]);
        assert_eq!(
            body(&t),
            [
                "ps_2_0",
                "dcl t0",
                "dcl_2d s0",
                "def c0, 1, 0, 0.5, 1",
                "texld r0, t0, s0"
            ]
        );
        assert!(t.contains("(1 texture, 0 arithmetic)"));
        let t = dis(&[
            0xFFFE0201, 0x14000002, 0x800F0000, 0xBDE41000, 0x80E40001, 0x80E40002, 0x03000001,
            0x800F0000, 0xA1002005, 0xB0FF0000, 0x0000FFFF,
        ]);
        assert_eq!(
            body(&t),
            ["vs_2_x", "(!p0) add r0, r1, r2", "mov r0, -c5[a0.w].x"]
        );
    }

    #[test]
    fn flow_control_and_comparisons() {
        let t = dis(&[
            0xFFFF0201, 0x02030029, 0x80E40000, 0x80E40001, 0x0000002A, 0x0000002B, 0x0301005E,
            0xB00F1000, 0x80E40000, 0x80E40001, 0x0000FFFF,
        ]);
        assert_eq!(
            t.lines().take(5).collect::<Vec<_>>(),
            [
                "    ps_2_x",
                "    if_ge r0, r1",
                "    else",
                "    endif",
                "    setp_gt p0, r0, r1"
            ]
        );
    }

    #[test]
    fn comments_and_odd_encodings_become_data_comments() {
        let t = dis(&[
            0xFFFF0200, 0x0002FFFE, 0x42415443, 0x5C5C0000, 0x02000001, 0x800F4000, 0x80E40000,
            0x0000FFFF, 0x12345678,
        ]);
        assert!(t.contains("// comment-block: 2 dwords\n    // 42415443 5c5c0000  |CTAB....|"));
        assert!(t.contains("// raw-tokens: 3 dwords\n    // 02000001 800f4000 80e40000"));
        assert!(t.contains("// trailing-data: 1 dwords\n    // 12345678"));
    }

    #[test]
    fn floats_read_back_to_their_bits() {
        for bits in [
            0u32, 0x80000000, 0x3F800000, 0x3DCCCCCD, 0x00000001, 0x7F7FFFFF, 0x7F800000,
            0x7FC00000, 0xFFFFFFFF, 0xB5D00D01,
        ] {
            let s = format_float(bits);
            let back = match s.strip_prefix("0x") {
                Some(h) => u32::from_str_radix(h, 16).unwrap(),
                None => s.parse::<f32>().unwrap().to_bits(),
            };
            assert_eq!(back, bits, "{s}");
        }
        assert_eq!(format_float(0x3F000000), "0.5");
        assert_eq!(format_float(0x80000000), "-0");
    }

    /// A ps_2_0 with a constant table as fxc 9.29 writes it for constants it placed itself
    /// (`fxc-listings/` layout), and the given body.
    fn with_table(constants: &[(&str, u16)], body: &[u32]) -> Vec<u8> {
        use super::super::ctab::{Class, Constant, ParamType, RegisterSet, TypeInfo};
        let table = ConstantTable {
            creator: "Microsoft (R) HLSL Shader Compiler 9.29.952.3111".into(),
            target: Some("ps_2_0".into()),
            version: 0xFFFF0200,
            flags: 0x100,
            constants: constants
                .iter()
                .map(|&(name, index)| Constant {
                    name: name.into(),
                    register_set: RegisterSet::FLOAT4,
                    register_index: index,
                    register_count: 1,
                    reserved: 0,
                    type_info: TypeInfo {
                        class: Class::VECTOR,
                        param_type: ParamType::FLOAT,
                        rows: 1,
                        columns: 4,
                        elements: 1,
                        members: vec![],
                    },
                    default_value: None,
                    own_type: false,
                })
                .collect(),
        };
        let payload = table.encode();
        let mut d = vec![0xFFFF0200, 0xFFFE | ((payload.len() / 4) as u32) << 16];
        d.extend(
            payload
                .chunks(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
        d.extend(body);
        d.push(0xFFFF);
        d.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// `mov oC0, c0`, `mov oC0, c1`.
    const MOV_C0: [u32; 3] = [0x02000001, 0x800F0800, 0xA0E40000];

    #[test]
    fn the_header_is_the_table() {
        use super::super::asm::{assemble, assemble_unvalidated};
        let bytes = with_table(&[("Tint", 0)], &MOV_C0);
        let text = disassemble(&bytes).unwrap();
        assert!(!text.contains(COMMENT_BLOCK), "{text}");
        assert!(text.starts_with("\n//\n// Generated by Microsoft (R) HLSL Shader Compiler"));
        assert_eq!(assemble(&text).unwrap(), bytes);
        // Editing the header edits the table.
        let renamed = text
            .replace("//   float4 Tint;", "//   float4 Shade;")
            .replace(
                "//   Tint         c0       1",
                "//   Shade        c0       1",
            );
        assert_eq!(
            assemble(&renamed).unwrap(),
            with_table(&[("Shade", 0)], &MOV_C0)
        );
        let moved = text.replace("c0       1", "c1       1");
        let b = assemble_unvalidated(&moved).unwrap();
        let table = ConstantTable::from_bytecode(&b).unwrap().unwrap();
        assert_eq!(table.constants[0].register_index, 1);
        // A header that does not read as a table is an error at its line.
        let broken = text.replace("//   Tint         c0       1\n", "");
        let e = assemble(&broken).unwrap_err();
        assert!(
            e.message
                .contains("'Tint' has no row in the Registers table"),
            "{e}"
        );
        assert_eq!(e.line, 9, "{e}");
        // Text without the framed `Generated by` line has no table.
        let b = assemble("// Generated by hand\nps_2_0\nmov oC0, c0").unwrap();
        assert_eq!(ConstantTable::from_bytecode(&b).unwrap(), None);
    }

    #[test]
    fn a_table_the_header_cannot_show_travels_as_data() {
        use super::super::asm::assemble;
        // Reserved 7, no mark fxc writes (0 for a constant it placed, index × 4 + 2 for
        // one register() placed): the header cannot say so.
        let mut bytes = with_table(&[("Tint", 0)], &MOV_C0);
        let at = 4 * (2 + 1 + 7) + 10; // the first CONSTANTINFO's Reserved
        bytes[at..at + 2].copy_from_slice(&[7, 0]);
        let text = disassemble(&bytes).unwrap();
        assert!(text.contains("//   Tint         c0       1\n"), "{text}");
        assert!(text.contains(COMMENT_BLOCK), "{text}");
        assert_eq!(assemble(&text).unwrap(), bytes);
        // Editing the header while the block stays is an error, not a silent no-op.
        let edited = text
            .replace("//   float4 Tint;", "//   float4 Shade;")
            .replace(
                "//   Tint         c0       1",
                "//   Shade        c0       1",
            );
        let e = assemble(&edited).unwrap_err();
        assert!(e.message.contains("describe different tables"), "{e}");
        // Without the block, the header is the table.
        let block_start = edited.find("    // comment-block").unwrap();
        let block_end = edited[block_start..].find("\n    mov").unwrap() + block_start + 1;
        let header_only = format!("{}{}", &edited[..block_start], &edited[block_end..]);
        assert_eq!(
            assemble(&header_only).unwrap(),
            with_table(&[("Shade", 0)], &MOV_C0)
        );
        // A header without `Default values:` (ours before, D3DX's) beside the block that
        // holds defaults describes the same table.
        let mut table = ConstantTable::from_bytecode(&bytes).unwrap().unwrap();
        table.constants[0].default_value = Some(vec![0x3F80_0000; 4]);
        let with_defaults = super::super::ctab::replace_ctab(&bytes, &table.encode()).unwrap();
        let text = disassemble(&with_defaults).unwrap();
        assert!(text.contains("//     c0   = { 1, 1, 1, 1 };\n"), "{text}");
        let older = text.replace(
            "//\n// Default values:\n//\n//   Tint\n//     c0   = { 1, 1, 1, 1 };\n//\n",
            "",
        );
        assert_ne!(older, text);
        assert_eq!(assemble(&older).unwrap(), with_defaults);
        // Two tables: the first keeps its header and its data, so neither is lost.
        let mut two = with_table(&[("Tint", 0)], &[]);
        two.truncate(two.len() - 4);
        let second = with_table(&[("Other", 1)], &MOV_C0);
        two.extend_from_slice(&second[4..]);
        let text = disassemble(&two).unwrap();
        assert_eq!(text.matches(COMMENT_BLOCK).count(), 2, "{text}");
        assert_eq!(assemble(&text).unwrap(), two);
    }
}
