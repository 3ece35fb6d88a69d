//! HLSL written into an asm shader of an effect: compiled for the block's shader model,
//! the code spliced into its `asm { }` block, and the source kept in the `.sha` as a
//! comment above the shader variable, which D3DX's preprocessor drops and the next mount
//! reads back:
//!
//! ```text
//! // shaderfs hlsl: the source of the asm block below (ps_2_0, main)
//! //| float4 main(float2 uv : TEXCOORD0) : COLOR
//! //| {
//! //|     return tex2D(s0, uv);
//! //| }
//! // shaderfs hlsl end
//! pixelshader pSdr =
//!     asm
//!     {
//!         ps_2_0
//!         dcl t0.xy
//!         …
//! ```
//!
//! The entry point is `main`, or else one of the names Zack's HLSL-to-FlatOut compiler
//! takes (`PixelShader`, `psMainD3D9`, `psMain`; `VertexShader`, `vsMainD3D9`, `vsMain`),
//! or else the source's only function. The block keeps its indentation and the file its
//! line endings; the comment is written with them. Every other byte of the effect stays.
//! Line comments (`//`) hold any text: a `*/` or a brace in the source cannot end them.
//!
//! The compiler's profile is the block's version (`ps.1.3` is ps_1_3), so a shader model
//! the compiler does not compile yet is refused with its reason, and is written the same
//! way once it does.

use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use super::check;
use super::effect::{self, ShaderVar, Stage};
use super::hlsl;
use crate::shader::d3d9::disasm;
use crate::shader::hlsl::compile::{compile_with, Options};

/// The first line of a kept source.
const HEAD: &str = "// shaderfs hlsl: ";
/// The prefix of each of its lines.
const LINE: &str = "//|";
/// The line after its last.
const END: &str = "// shaderfs hlsl end";

/// A source kept above a shader variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The comment's lines, from the head's first byte to the end line's line end.
    pub span: Range<usize>,
    /// The source, each line ended with `\n`.
    pub text: String,
}

/// The line ending the text uses (CRLF where its first line ends so).
pub fn line_ending(text: &[u8]) -> &'static str {
    match text.iter().position(|&b| b == b'\n') {
        Some(i) if i > 0 && text[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// The source kept above `shader`, if there is one: the comment's lines end on the line
/// before the one the shader variable starts on (which has only blanks before it).
pub fn find(text: &[u8], shader: &ShaderVar) -> Option<Kept> {
    let start = shader.span.start;
    let line_start = text[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    if !text[line_start..start]
        .iter()
        .all(|b| matches!(b, b' ' | b'\t'))
    {
        return None;
    }
    // The lines above, last first.
    let mut lines: Vec<Range<usize>> = Vec::new();
    let mut end = line_start;
    while end > 0 {
        let from = text[..end - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line = trim_cr(text, from..end - 1);
        let is_head = text[line.clone()].starts_with(HEAD.as_bytes());
        if lines.is_empty() && &text[line.clone()] != END.as_bytes() {
            return None;
        }
        let is_line = text[line.clone()].starts_with(LINE.as_bytes());
        lines.push(line);
        if is_head {
            let body = &lines[1..lines.len() - 1];
            let mut out = String::new();
            for l in body.iter().rev() {
                let l = text[l.clone()].strip_prefix(LINE.as_bytes())?;
                let l = l.strip_prefix(b" ").unwrap_or(l);
                out.push_str(&String::from_utf8_lossy(l));
                out.push('\n');
            }
            return Some(Kept {
                span: from..line_start,
                text: out,
            });
        }
        if lines.len() > 1 && !is_line {
            return None;
        }
        end = from;
    }
    None
}

fn trim_cr(text: &[u8], line: Range<usize>) -> Range<usize> {
    match text.get(line.end.wrapping_sub(1)) {
        Some(b'\r') if line.end > line.start => line.start..line.end - 1,
        _ => line,
    }
}

/// The comment that keeps `source`, compiled for `profile` from `entry`.
fn comment(source: &str, profile: &str, entry: &str, eol: &str) -> String {
    let mut out = format!("{HEAD}the source of the asm block below ({profile}, {entry}){eol}");
    for line in source.lines() {
        match line {
            "" => out.push_str(LINE),
            _ => out.push_str(&format!("{LINE} {line}")),
        }
        out.push_str(eol);
    }
    out.push_str(END);
    out.push_str(eol);
    out
}

/// Zack's HLSL-to-FlatOut compiler's entry points, by stage.
const ZACKS: [&[&str]; 2] = [
    &["VertexShader", "vsMainD3D9", "vsMain"],
    &["PixelShader", "psMainD3D9", "psMain"],
];

/// The function of `source` to compile: `main`, one of Zack's names, or the only one.
fn entry_point(source: &[u8], stage: Stage) -> Result<String, String> {
    let parsed = effect::parse(source).unwrap_or_default();
    let names: Vec<String> = parsed
        .others
        .iter()
        .filter_map(|o| hlsl::definition(source, &o.span))
        .map(|f| String::from_utf8_lossy(&source[f.name]).into_owned())
        .collect();
    let wanted = std::iter::once("main").chain(ZACKS[stage as usize].iter().copied());
    for name in wanted {
        if names.iter().any(|n| n == name) {
            return Ok(name.to_string());
        }
    }
    match names.as_slice() {
        [only] => Ok(only.clone()),
        // The compiler says there is no main.
        [] => Ok("main".into()),
        several => Err(format!(
            "which function is the shader? {} are defined: name the entry point main (or {})",
            several.join(", "),
            ZACKS[stage as usize].join(", ")
        )),
    }
}

/// The compiler's profile for an asm block's version (`ps.1.3` → `ps_1_3`).
fn profile_of(version: &str) -> String {
    version.replace('.', "_").to_ascii_lowercase()
}

/// The new text of `text` once `source` (what was written to the `.hlsl` view of
/// `shader`, called `view` in messages) is compiled into its block and kept above it.
pub fn write(
    text: &[u8],
    shader: &ShaderVar,
    view: &str,
    source: &[u8],
) -> Result<Vec<u8>, String> {
    let source_text = std::str::from_utf8(source).map_err(|e| {
        format!(
            "{view}: not UTF-8 text (byte {} cannot be read): HLSL is compiled, and kept, as \
             UTF-8",
            e.valid_up_to()
        )
    })?;
    let version = check::version_word(text, &shader.asm)
        .ok_or_else(|| format!("{view}: the asm block has no version line to compile for"))?;
    let profile = profile_of(&version);
    let entry = entry_point(source, shader.stage).map_err(|e| format!("{view}: {e}"))?;
    let options = Options {
        profile: profile.clone(),
        entry: entry.clone(),
        ..Options::default()
    };
    let compiled = catch_unwind(AssertUnwindSafe(|| {
        compile_with(
            view,
            source_text,
            Some(Path::new(view)),
            &options,
            &hlsl::NoIncludes,
        )
    }))
    .map_err(|_| {
        format!("{view}: internal error: the compiler stopped on this source (please report it)")
    })?
    .map_err(|failed| failed.render().trim_end().to_string())?;
    let listing = disasm::disassemble(&compiled.bytecode)
        .map_err(|e| format!("{view}: the compiled shader does not read back: {e}"))?;
    let eol = line_ending(text);
    let body = block(text, &shader.asm, &listing, eol);
    // The comment goes where the kept one is, or on lines of its own above the shader
    // variable (which then starts its line, if it did not).
    let start = shader.span.start;
    let item_line = text[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let starts_line = text[item_line..start]
        .iter()
        .all(|b| matches!(b, b' ' | b'\t'));
    let (comment_at, lead) = match find(text, shader) {
        Some(k) => (k.span, ""),
        None if starts_line => (item_line..item_line, ""),
        None => (start..start, eol),
    };
    let mut out = Vec::with_capacity(text.len() + source.len() * 2 + body.len());
    out.extend_from_slice(&text[..comment_at.start]);
    out.extend_from_slice(lead.as_bytes());
    out.extend_from_slice(comment(source_text, &profile, &entry, eol).as_bytes());
    out.extend_from_slice(&text[comment_at.end..shader.asm.start]);
    out.extend_from_slice(body.as_bytes());
    out.extend_from_slice(&text[shader.asm.end..]);
    Ok(out)
}

/// `text` without the source kept above `shader` (an asm edit that changed the code
/// leaves the source behind it).
pub fn drop(text: &[u8], shader: &ShaderVar) -> Option<Vec<u8>> {
    let kept = find(text, shader)?;
    let mut out = text[..kept.span.start].to_vec();
    out.extend_from_slice(&text[kept.span.end..]);
    Some(out)
}

/// The new body of the block: the listing's instructions, one a line, indented as the
/// block's first line of code was, and the blanks the block ended with before its `}`.
fn block(text: &[u8], body: &Range<usize>, listing: &str, eol: &str) -> String {
    let first = check::first_code(text, body);
    let line_start = text[body.start..first]
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|i| body.start + i + 1);
    let indent = match line_start {
        Some(s) => String::from_utf8_lossy(&text[s..first]).into_owned(),
        None => "\t\t".into(),
    };
    let tail = text[body.clone()]
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|i| String::from_utf8_lossy(&text[body.start + i + 1..body.end]).into_owned())
        .filter(|t| t.bytes().all(|b| matches!(b, b' ' | b'\t')))
        .unwrap_or_else(|| "\t".into());
    let mut out = eol.to_string();
    for line in listing.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        out.push_str(&indent);
        out.push_str(line);
        out.push_str(eol);
    }
    out.push_str(&tail);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_source_is_found_above_its_shader_and_nowhere_else() {
        let source = "float4 main() : COLOR\n{\n\n    return 0; // }\n}\n";
        let eol = "\r\n";
        let text = format!(
            "Texture Tex0;\r\n{}pixelshader p =\r\n\tasm\r\n\t{{\r\n\t\tps_2_0\r\n\t}};\r\n",
            comment(source, "ps_2_0", "main", eol)
        );
        let e = effect::parse(text.as_bytes()).unwrap();
        let kept = find(text.as_bytes(), &e.shaders[0]).unwrap();
        assert_eq!(kept.text, source);
        assert_eq!(
            &text[kept.span.clone()],
            comment(source, "ps_2_0", "main", eol)
        );
        let dropped = drop(text.as_bytes(), &e.shaders[0]).unwrap();
        assert_eq!(
            String::from_utf8(dropped).unwrap(),
            "Texture Tex0;\r\npixelshader p =\r\n\tasm\r\n\t{\r\n\t\tps_2_0\r\n\t};\r\n"
        );
        // Not directly above: not this shader's.
        let apart = text.replace("pixelshader p", "\r\npixelshader p");
        let e = effect::parse(apart.as_bytes()).unwrap();
        assert_eq!(find(apart.as_bytes(), &e.shaders[0]), None);
    }

    #[test]
    fn the_entry_point_is_main_zacks_name_or_the_only_function() {
        let e = |s: &str, stage| entry_point(s.as_bytes(), stage);
        assert_eq!(
            e(
                "float4 f() : COLOR { return 0; }\nfloat4 main() : COLOR { return f(); }",
                Stage::Pixel
            ),
            Ok("main".into())
        );
        assert_eq!(
            e(
                "float4 g() : COLOR { return 0; }\nfloat4 psMain() : COLOR { return g(); }",
                Stage::Pixel
            ),
            Ok("psMain".into())
        );
        assert_eq!(
            e("float4 shade() : COLOR { return 0; }", Stage::Pixel),
            Ok("shade".into())
        );
        let two = e(
            "float4 a() : COLOR { return 0; }\nfloat4 b() : COLOR { return 0; }",
            Stage::Vertex,
        )
        .unwrap_err();
        assert!(two.contains("a, b") && two.contains("vsMain"), "{two}");
    }
}
