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

fn component(c: char) -> Option<u8> {
    let c = c.to_ascii_lowercase();
    XYZW.iter()
        .position(|&x| x == c)
        .or_else(|| RGBA.iter().position(|&x| x == c))
        .map(|i| i as u8)
}

/// `.xz`-style suffix for a write mask; empty for the full mask. Printed with `xyzw` in
/// every model, as D3DX and fxc print it (`mul r0.xyz, t0, v0` in ps_1_1 too); `rgba` is
/// read as well.
pub fn format_mask(mask: u8) -> String {
    if mask == 0xF {
        return String::new();
    }
    let mut s = String::from(".");
    for (i, c) in XYZW.iter().enumerate() {
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

/// A swizzle as D3DX and fxc print it: nothing for `.xyzw`, one letter for a replicate
/// (`.w`), otherwise all four letters (`c8.xyzz`, `r0.xyww`, `c41.zwzw`), never a
/// shortened form. [`parse_swizzle`] also reads the short forms people write (`.xyz`,
/// where the last letter repeats), so any spelling of the same bits assembles the same.
pub fn format_swizzle(swizzle: u8) -> String {
    if swizzle == 0xE4 {
        return String::new();
    }
    let comps: Vec<u8> = (0..4).map(|i| (swizzle >> (2 * i)) & 3).collect();
    let n = if comps.iter().all(|&c| c == comps[0]) {
        1
    } else {
        4
    };
    let mut s = String::from(".");
    for &c in &comps[..n] {
        s.push(XYZW[c as usize]);
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

/// `x` as C's `printf("%.*g", digits, x)` prints it with Microsoft's C runtime: `digits`
/// significant digits, trailing zeros dropped, an exponent (of at least three digits,
/// `1e-005`) below 1e-4 or from 10^`digits` on. fxc prints `def` values with 9 digits
/// (`6.28318548`, `-1.55009923e-006`), which always read back to the same `f32`, and
/// default values with 6 (`0.57735`). `x` must be finite.
pub fn format_g(x: f64, digits: usize) -> String {
    let digits = digits.max(1);
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let scientific = format!("{:.*e}", digits - 1, x);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exponent < -4 || exponent >= digits as i32 {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:03}", trim(mantissa), exponent.abs())
    } else {
        let decimals = (digits as i32 - 1 - exponent).max(0) as usize;
        trim(&format!("{x:.decimals$}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_swizzles() {
        assert_eq!(format_mask(0x7), ".xyz");
        assert_eq!(parse_mask("rgb"), Ok(0x7));
        assert_eq!(parse_mask("xyb"), Ok(0x7));
        assert!(parse_mask("xxyz").is_err());
        assert!(parse_mask("").is_err());
        for s in 0..=255u8 {
            let text = format_swizzle(s);
            let back = if text.is_empty() {
                0xE4
            } else {
                parse_swizzle(&text[1..]).unwrap()
            };
            assert_eq!(back, s, "{text}");
            assert!(matches!(text.len(), 0 | 2 | 5), "{text}");
        }
        assert_eq!(format_swizzle(0xA4), ".xyzz");
        assert_eq!(format_swizzle(0xF4), ".xyww");
        assert_eq!(format_swizzle(0xFF), ".w");
        assert_eq!(parse_swizzle("xyz"), Ok(0xA4));
        assert!(parse_swizzle("xyzwx").is_err());
        assert!(parse_swizzle("abcd").is_err());
        assert_eq!(parse_swizzle("a"), Ok(0xFF));
    }

    #[test]
    fn numbers_as_c_prints_them() {
        let g9 = |f: f32| format_g(f64::from(f), 9);
        assert_eq!(g9(6.283_185_5), "6.28318548");
        assert_eq!(g9(-1.550_099_2e-6), "-1.55009923e-006");
        assert_eq!(g9(0.002_604_166_7), "0.00260416674");
        assert_eq!(g9(-0.020_833_334), "-0.020833334");
        assert_eq!(g9(0.159_154_94), "0.159154937");
        assert_eq!(g9(1.0), "1");
        assert_eq!(g9(-0.0), "-0");
        assert_eq!(g9(1e10), "1e+010");
        assert_eq!(g9(123_456_790.0), "123456792");
        assert_eq!(format_g(f64::from(0.577_350_26f32), 6), "0.57735");
        assert_eq!(format_g(0.0001, 6), "0.0001");
        for bits in [1u32, 0x0080_0000, 0x7F7F_FFFF, 0x3DCC_CCCD, 0xB5D0_0D01] {
            let f = f32::from_bits(bits);
            assert_eq!(g9(f).parse::<f32>().unwrap().to_bits(), bits, "{}", g9(f));
        }
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
