//! The asm spellings of the small enumerations in parameter and `dcl` tokens
//! (`shared/formats/d3d9-bytecode.md` §4.3, §4.4, §5.1, §9): one table each, read by the
//! disassembler to print and by the assembler to read.

/// `D3DDECLUSAGE` (§5.1); index = value.
pub const USAGES: [&str; 14] = [
    "position",
    "blendweight",
    "blendindices",
    "normal",
    "psize",
    "texcoord",
    "tangent",
    "binormal",
    "tessfactor",
    "positiont",
    "color",
    "fog",
    "depth",
    "sample",
];

/// Sampler texture types of a `dcl` info token `[30:27]` (§5.1); index = value.
pub const SAMPLER_TYPES: [&str; 5] = ["", "1d", "2d", "cube", "volume"];

/// Destination shift scales `[27:24]` (§4.3): value and suffix.
pub const SHIFTS: [(u8, &str); 6] = [
    (1, "x2"),
    (2, "x4"),
    (3, "x8"),
    (15, "d2"),
    (14, "d4"),
    (13, "d8"),
];

/// Destination result modifiers `[23:20]` (§4.3): bit and suffix, in printing order.
pub const RESULT_MODIFIERS: [(u8, &str); 3] = [(1, "sat"), (2, "pp"), (4, "centroid")];

/// How a source modifier (§4.4) is written around a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceModifier {
    pub value: u8,
    /// Leading `-`.
    pub negate: bool,
    /// Leading `1-`.
    pub complement: bool,
    /// Leading `!`.
    pub not: bool,
    /// `_bias`, `_bx2`, … after the register (without the underscore), or "".
    pub suffix: &'static str,
}

const fn sm(value: u8, negate: bool, suffix: &'static str) -> SourceModifier {
    SourceModifier {
        value,
        negate,
        complement: false,
        not: false,
        suffix,
    }
}

/// §4.4, value for value. `_db`/`_da` are read as aliases of `_dz`/`_dw`.
pub const SOURCE_MODIFIERS: [SourceModifier; 14] = [
    sm(0, false, ""),
    sm(1, true, ""),
    sm(2, false, "bias"),
    sm(3, true, "bias"),
    sm(4, false, "bx2"),
    sm(5, true, "bx2"),
    SourceModifier {
        value: 6,
        negate: false,
        complement: true,
        not: false,
        suffix: "",
    },
    sm(7, false, "x2"),
    sm(8, true, "x2"),
    sm(9, false, "dz"),
    sm(10, false, "dw"),
    sm(11, false, "abs"),
    sm(12, true, "abs"),
    SourceModifier {
        value: 13,
        negate: false,
        complement: false,
        not: true,
        suffix: "",
    },
];

/// The source modifier written with these prefixes and suffix, if there is one.
pub fn source_modifier(
    negate: bool,
    complement: bool,
    not: bool,
    suffix: &str,
) -> Option<SourceModifier> {
    let suffix = match suffix {
        "db" => "dz",
        "da" => "dw",
        s => s,
    };
    SOURCE_MODIFIERS.iter().copied().find(|m| {
        m.negate == negate && m.complement == complement && m.not == not && m.suffix == suffix
    })
}

const XYZW: [char; 4] = ['x', 'y', 'z', 'w'];
const RGBA: [char; 4] = ['r', 'g', 'b', 'a'];

/// Component letters: `rgba` for ps_1_x (as its hand-written asm uses), `xyzw` elsewhere.
pub fn letters(rgba: bool) -> [char; 4] {
    if rgba {
        RGBA
    } else {
        XYZW
    }
}

fn component(c: char) -> Option<u8> {
    let c = c.to_ascii_lowercase();
    XYZW.iter()
        .position(|&x| x == c)
        .or_else(|| RGBA.iter().position(|&x| x == c))
        .map(|i| i as u8)
}

/// `.xz`-style suffix for a write mask; empty for the full mask.
pub fn format_mask(mask: u8, rgba: bool) -> String {
    if mask == 0xF {
        return String::new();
    }
    let l = letters(rgba);
    let mut s = String::from(".");
    for (i, c) in l.iter().enumerate() {
        if mask & (1 << i) != 0 {
            s.push(*c);
        }
    }
    s
}

/// Reads a write mask (letters in component order, each at most once).
pub fn parse_mask(text: &str) -> Result<u8, String> {
    let mut mask = 0u8;
    let mut last = None;
    for c in text.chars() {
        let i =
            component(c).ok_or_else(|| format!("'{c}' is not a component in mask '.{text}'"))?;
        if last.is_some_and(|l| i <= l) {
            return Err(format!(
                "write mask '.{text}' must name components once each, in x, y, z, w order"
            ));
        }
        last = Some(i);
        mask |= 1 << i;
    }
    if mask == 0 {
        return Err("empty write mask".into());
    }
    Ok(mask)
}

/// `.xyw`-style suffix for a swizzle: empty for identity, trailing repeats dropped (a
/// short swizzle repeats its last letter).
pub fn format_swizzle(swizzle: u8, rgba: bool) -> String {
    if swizzle == 0xE4 {
        return String::new();
    }
    let l = letters(rgba);
    let comps: Vec<u8> = (0..4).map(|i| (swizzle >> (2 * i)) & 3).collect();
    let mut n = 4;
    while n > 1 && comps[n - 1] == comps[n - 2] {
        n -= 1;
    }
    let mut s = String::from(".");
    for &c in &comps[..n] {
        s.push(l[c as usize]);
    }
    s
}

/// Reads a swizzle of one to four letters; the last letter repeats.
pub fn parse_swizzle(text: &str) -> Result<u8, String> {
    if text.is_empty() || text.chars().count() > 4 {
        return Err(format!(
            "swizzle '.{text}' must have one to four components"
        ));
    }
    let mut comps = Vec::with_capacity(4);
    for c in text.chars() {
        comps.push(
            component(c).ok_or_else(|| format!("'{c}' is not a component in swizzle '.{text}'"))?,
        );
    }
    while comps.len() < 4 {
        comps.push(*comps.last().unwrap_or(&0));
    }
    Ok(comps
        .iter()
        .enumerate()
        .fold(0, |acc, (i, &c)| acc | c << (2 * i)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_swizzles() {
        assert_eq!(format_mask(0x7, true), ".rgb");
        assert_eq!(parse_mask("rgb"), Ok(0x7));
        assert_eq!(parse_mask("xyb"), Ok(0x7));
        assert!(parse_mask("xxyz").is_err());
        assert!(parse_mask("").is_err());
        for s in 0..=255u8 {
            for rgba in [false, true] {
                let text = format_swizzle(s, rgba);
                let back = if text.is_empty() {
                    0xE4
                } else {
                    parse_swizzle(&text[1..]).unwrap()
                };
                assert_eq!(back, s, "{text}");
            }
        }
        assert!(parse_swizzle("xyzwx").is_err());
        assert!(parse_swizzle("abcd").is_err());
        assert_eq!(parse_swizzle("a"), Ok(0xFF));
    }

    #[test]
    fn modifiers() {
        for m in SOURCE_MODIFIERS {
            assert_eq!(
                source_modifier(m.negate, m.complement, m.not, m.suffix),
                Some(m)
            );
        }
        assert_eq!(source_modifier(false, false, false, "db").unwrap().value, 9);
        assert_eq!(source_modifier(true, false, false, "dz"), None);
    }
}
