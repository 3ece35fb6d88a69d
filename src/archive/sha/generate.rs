//! Large test effects (`shaderfs dev gen-sha`): a real effect's shaders and techniques
//! repeated until the effect holds the asm blocks asked for, so `check`, a mount's
//! whole-tree read and a save can be measured on effects far larger than any the game
//! ships (which hold two blocks).
//!
//! Copy 0 is the effect's own shaders and techniques, as written. Copy `c` repeats each
//! shader's item with its variable renamed `NAME_c`, then each technique with its name
//! renamed `NAME_c` and its passes' `<references>` to the copied shaders renamed with
//! them; a last, partial copy holds shaders only. Everything before the first shader
//! (textures, `inputStreamFormat`) is written once, so the generated effect reports
//! exactly what the original does, once per copy of what repeats.

use std::ops::Range;

use super::effect::{self, Effect};

/// Why an effect cannot be repeated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenerateError(pub String);

impl std::fmt::Display for GenerateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The effect `text` repeated until it has `blocks` asm blocks.
pub fn repeat_blocks(text: &[u8], blocks: usize) -> Result<Vec<u8>, GenerateError> {
    let parsed = effect::parse(text).map_err(|e| {
        GenerateError(format!(
            "the effect does not parse (byte {}): {}",
            e.offset, e.message
        ))
    })?;
    let (Some(first), Some(last)) = (parsed.shaders.first(), parsed.shaders.last()) else {
        return Err(GenerateError(
            "the effect has no asm block to repeat".into(),
        ));
    };
    if parsed
        .techniques
        .iter()
        .any(|t| t.span.start < last.span.end)
    {
        return Err(GenerateError(
            "a technique comes before the last shader; the generator repeats effects laid \
             out as the game's are (declarations, shaders, then techniques)"
                .into(),
        ));
    }
    if blocks == 0 {
        return Err(GenerateError(
            "an effect of 0 asm blocks repeats nothing".into(),
        ));
    }
    let per_copy = parsed.shaders.len();
    let too_large = |len: usize| {
        GenerateError(format!(
            "{blocks} blocks make an effect of more than {len} bytes, more than the {} an \
             effect may have; repeat a smaller effect",
            effect::MAX_EFFECT_LEN
        ))
    };
    let mut out = text[..first.span.start].to_vec();
    for copy in 0..blocks.div_ceil(per_copy) {
        // Stopped as soon as it is too large: what it allocates is bounded whatever is asked.
        if out.len() > effect::MAX_EFFECT_LEN {
            return Err(too_large(out.len()));
        }
        let shaders = (blocks - copy * per_copy).min(per_copy);
        for shader in &parsed.shaders[..shaders] {
            renamed(
                text,
                &shader.span,
                std::slice::from_ref(&shader.name),
                copy,
                &mut out,
            );
            out.extend_from_slice(b"\n\n");
        }
        if shaders < per_copy {
            continue;
        }
        for technique in &parsed.techniques {
            let mut names = vec![technique.name.clone()];
            names.extend(shader_references(text, &parsed, technique));
            renamed(text, &technique.span, &names, copy, &mut out);
            out.extend_from_slice(b"\n\n");
        }
    }
    match out.len() > effect::MAX_EFFECT_LEN {
        true => Err(too_large(out.len())),
        false => Ok(out),
    }
}

/// The `<name>` references in `technique`'s passes that name one of the effect's shaders.
fn shader_references(
    text: &[u8],
    effect: &Effect,
    technique: &effect::Technique,
) -> Vec<Range<usize>> {
    let is_shader = |r: &Range<usize>| {
        effect
            .shaders
            .iter()
            .any(|s| text[s.name.clone()] == text[r.clone()])
    };
    technique
        .passes
        .iter()
        .flat_map(|p| &p.states)
        .flat_map(|a| effect::references(text, &a.value))
        .filter(is_shader)
        .collect()
}

/// `text[span]` onto `out`, each of `names` (ranges inside `span`, in order, a nameless
/// technique's empty one included) followed by `_copy` after copy 0.
fn renamed(
    text: &[u8],
    span: &Range<usize>,
    names: &[Range<usize>],
    copy: usize,
    out: &mut Vec<u8>,
) {
    let mut names: Vec<&Range<usize>> = names.iter().filter(|n| !n.is_empty()).collect();
    names.sort_by_key(|n| n.start);
    let mut at = span.start;
    for name in names {
        out.extend_from_slice(&text[at..name.end]);
        if copy > 0 {
            out.extend_from_slice(format!("_{copy}").as_bytes());
        }
        at = name.end;
    }
    out.extend_from_slice(&text[at..span.end]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::sha::check;

    const EFFECT: &str = "Texture Tex0;\n\
        const string inputStreamFormat = \"PosTex1\";\n\
        vertexshader vSdr = asm { vs.1.1\n dcl_position v0\n m4x4 oPos, v0, c0\n };\n\
        pixelshader pSdr = asm { ps.1.3\n tex t0\n mov r0, t0\n };\n\
        Technique T0 { Pass P0 { Texture[0] = <Tex0>; VertexShader = <vSdr>; \
        PixelShader = <pSdr>; } }\n";

    #[test]
    fn repeats_shaders_and_techniques_with_their_names_renamed() {
        let out = repeat_blocks(EFFECT.as_bytes(), 5).expect("repeats");
        let parsed = effect::parse(&out).expect("the repeated effect parses");
        let name = |r: &Range<usize>| String::from_utf8_lossy(&out[r.clone()]).into_owned();
        let shaders: Vec<String> = parsed.shaders.iter().map(|s| name(&s.name)).collect();
        assert_eq!(shaders, ["vSdr", "pSdr", "vSdr_1", "pSdr_1", "vSdr_2"]);
        let techniques: Vec<String> = parsed.techniques.iter().map(|t| name(&t.name)).collect();
        assert_eq!(techniques, ["T0", "T0_1"]);
        assert_eq!(parsed.textures.len(), 1);
        // What the copies reference resolves, and nothing is refused or warned about.
        assert_eq!(check::check(&out, &parsed), []);
        let refs: Vec<String> = parsed.techniques[1].passes[0]
            .states
            .iter()
            .flat_map(|a| effect::references(&out, &a.value))
            .map(|r| name(&r))
            .collect();
        assert_eq!(refs, ["Tex0", "vSdr_1", "pSdr_1"]);
    }

    #[test]
    fn refuses_what_it_cannot_repeat() {
        let no_shader = b"Technique T0 { Pass P0 { } }\n";
        assert!(repeat_blocks(no_shader, 4)
            .unwrap_err()
            .0
            .contains("no asm block"));
        let open = b"pixelshader p = asm { ps.1.3\n";
        assert!(repeat_blocks(open, 4)
            .unwrap_err()
            .0
            .contains("does not parse"));
        assert!(repeat_blocks(EFFECT.as_bytes(), 0).is_err());
        let too_many = repeat_blocks(EFFECT.as_bytes(), usize::MAX).unwrap_err();
        assert!(too_many.0.contains("more than"), "{too_many}");
    }
}
