//! Direct3D 12 enumerations (`sgd2.md` §7 and `dxbc.md` §8, from `d3d12.idl`): those the
//! SGD2 state records store and those a serialized root signature holds. One table each;
//! a value no table holds is shown as `unknown (N)`, never guessed.

/// An enumeration: its name prefix and its (value, name) pairs.
pub struct Enum {
    pub prefix: &'static str,
    pub values: &'static [(u32, &'static str)],
}

impl Enum {
    /// The Direct3D name of `value` (`D3D12_CULL_MODE_BACK`), or `unknown (N)`. An
    /// enumeration without a prefix (DXIL's own, `dxbc.md`) names values bare.
    pub fn name(&self, value: u32) -> String {
        match self.values.iter().find(|v| v.0 == value) {
            Some((_, name)) if self.prefix.is_empty() => name.to_string(),
            Some((_, name)) => format!("{}_{name}", self.prefix),
            None => format!("unknown ({value})"),
        }
    }
}

pub const FILL_MODE: Enum = Enum {
    prefix: "D3D12_FILL_MODE",
    values: &[(2, "WIREFRAME"), (3, "SOLID")],
};

pub const CULL_MODE: Enum = Enum {
    prefix: "D3D12_CULL_MODE",
    values: &[(1, "NONE"), (2, "FRONT"), (3, "BACK")],
};

pub const DEPTH_WRITE_MASK: Enum = Enum {
    prefix: "D3D12_DEPTH_WRITE_MASK",
    values: &[(0, "ZERO"), (1, "ALL")],
};

pub const COMPARISON_FUNC: Enum = Enum {
    prefix: "D3D12_COMPARISON_FUNC",
    values: &[
        (0, "NONE"),
        (1, "NEVER"),
        (2, "LESS"),
        (3, "EQUAL"),
        (4, "LESS_EQUAL"),
        (5, "GREATER"),
        (6, "NOT_EQUAL"),
        (7, "GREATER_EQUAL"),
        (8, "ALWAYS"),
    ],
};

pub const STENCIL_OP: Enum = Enum {
    prefix: "D3D12_STENCIL_OP",
    values: &[
        (1, "KEEP"),
        (2, "ZERO"),
        (3, "REPLACE"),
        (4, "INCR_SAT"),
        (5, "DECR_SAT"),
        (6, "INVERT"),
        (7, "INCR"),
        (8, "DECR"),
    ],
};

pub const BLEND: Enum = Enum {
    prefix: "D3D12_BLEND",
    values: &[
        (1, "ZERO"),
        (2, "ONE"),
        (3, "SRC_COLOR"),
        (4, "INV_SRC_COLOR"),
        (5, "SRC_ALPHA"),
        (6, "INV_SRC_ALPHA"),
        (7, "DEST_ALPHA"),
        (8, "INV_DEST_ALPHA"),
        (9, "DEST_COLOR"),
        (10, "INV_DEST_COLOR"),
        (11, "SRC_ALPHA_SAT"),
        (14, "BLEND_FACTOR"),
        (15, "INV_BLEND_FACTOR"),
        (16, "SRC1_COLOR"),
        (17, "INV_SRC1_COLOR"),
        (18, "SRC1_ALPHA"),
        (19, "INV_SRC1_ALPHA"),
        (20, "ALPHA_FACTOR"),
        (21, "INV_ALPHA_FACTOR"),
    ],
};

pub const BLEND_OP: Enum = Enum {
    prefix: "D3D12_BLEND_OP",
    values: &[
        (1, "ADD"),
        (2, "SUBTRACT"),
        (3, "REV_SUBTRACT"),
        (4, "MIN"),
        (5, "MAX"),
    ],
};

pub const TEXTURE_ADDRESS_MODE: Enum = Enum {
    prefix: "D3D12_TEXTURE_ADDRESS_MODE",
    values: &[
        (1, "WRAP"),
        (2, "MIRROR"),
        (3, "CLAMP"),
        (4, "BORDER"),
        (5, "MIRROR_ONCE"),
    ],
};

/// `D3D12_FILTER`: the values below 0x100 fit the byte an SGD2 sampler record stores;
/// the minimum and maximum reductions (0x100 + and 0x180 + a standard value) appear in
/// root signatures' static samplers.
pub const FILTER: Enum = Enum {
    prefix: "D3D12_FILTER",
    values: &[
        (0x00, "MIN_MAG_MIP_POINT"),
        (0x01, "MIN_MAG_POINT_MIP_LINEAR"),
        (0x04, "MIN_POINT_MAG_LINEAR_MIP_POINT"),
        (0x05, "MIN_POINT_MAG_MIP_LINEAR"),
        (0x10, "MIN_LINEAR_MAG_MIP_POINT"),
        (0x11, "MIN_LINEAR_MAG_POINT_MIP_LINEAR"),
        (0x14, "MIN_MAG_LINEAR_MIP_POINT"),
        (0x15, "MIN_MAG_MIP_LINEAR"),
        (0x54, "MIN_MAG_ANISOTROPIC_MIP_POINT"),
        (0x55, "ANISOTROPIC"),
        (0x80, "COMPARISON_MIN_MAG_MIP_POINT"),
        (0x81, "COMPARISON_MIN_MAG_POINT_MIP_LINEAR"),
        (0x84, "COMPARISON_MIN_POINT_MAG_LINEAR_MIP_POINT"),
        (0x85, "COMPARISON_MIN_POINT_MAG_MIP_LINEAR"),
        (0x90, "COMPARISON_MIN_LINEAR_MAG_MIP_POINT"),
        (0x91, "COMPARISON_MIN_LINEAR_MAG_POINT_MIP_LINEAR"),
        (0x94, "COMPARISON_MIN_MAG_LINEAR_MIP_POINT"),
        (0x95, "COMPARISON_MIN_MAG_MIP_LINEAR"),
        (0xD4, "COMPARISON_MIN_MAG_ANISOTROPIC_MIP_POINT"),
        (0xD5, "COMPARISON_ANISOTROPIC"),
        (0x100, "MINIMUM_MIN_MAG_MIP_POINT"),
        (0x101, "MINIMUM_MIN_MAG_POINT_MIP_LINEAR"),
        (0x104, "MINIMUM_MIN_POINT_MAG_LINEAR_MIP_POINT"),
        (0x105, "MINIMUM_MIN_POINT_MAG_MIP_LINEAR"),
        (0x110, "MINIMUM_MIN_LINEAR_MAG_MIP_POINT"),
        (0x111, "MINIMUM_MIN_LINEAR_MAG_POINT_MIP_LINEAR"),
        (0x114, "MINIMUM_MIN_MAG_LINEAR_MIP_POINT"),
        (0x115, "MINIMUM_MIN_MAG_MIP_LINEAR"),
        (0x154, "MINIMUM_MIN_MAG_ANISOTROPIC_MIP_POINT"),
        (0x155, "MINIMUM_ANISOTROPIC"),
        (0x180, "MAXIMUM_MIN_MAG_MIP_POINT"),
        (0x181, "MAXIMUM_MIN_MAG_POINT_MIP_LINEAR"),
        (0x184, "MAXIMUM_MIN_POINT_MAG_LINEAR_MIP_POINT"),
        (0x185, "MAXIMUM_MIN_POINT_MAG_MIP_LINEAR"),
        (0x190, "MAXIMUM_MIN_LINEAR_MAG_MIP_POINT"),
        (0x191, "MAXIMUM_MIN_LINEAR_MAG_POINT_MIP_LINEAR"),
        (0x194, "MAXIMUM_MIN_MAG_LINEAR_MIP_POINT"),
        (0x195, "MAXIMUM_MIN_MAG_MIP_LINEAR"),
        (0x1D4, "MAXIMUM_MIN_MAG_ANISOTROPIC_MIP_POINT"),
        (0x1D5, "MAXIMUM_ANISOTROPIC"),
    ],
};

pub const STATIC_BORDER_COLOR: Enum = Enum {
    prefix: "D3D12_STATIC_BORDER_COLOR",
    values: &[
        (0, "TRANSPARENT_BLACK"),
        (1, "OPAQUE_BLACK"),
        (2, "OPAQUE_WHITE"),
        (3, "OPAQUE_BLACK_UINT"),
        (4, "OPAQUE_WHITE_UINT"),
    ],
};

pub const SHADER_VISIBILITY: Enum = Enum {
    prefix: "D3D12_SHADER_VISIBILITY",
    values: &[
        (0, "ALL"),
        (1, "VERTEX"),
        (2, "HULL"),
        (3, "DOMAIN"),
        (4, "GEOMETRY"),
        (5, "PIXEL"),
        (6, "AMPLIFICATION"),
        (7, "MESH"),
    ],
};

pub const ROOT_PARAMETER_TYPE: Enum = Enum {
    prefix: "D3D12_ROOT_PARAMETER_TYPE",
    values: &[
        (0, "DESCRIPTOR_TABLE"),
        (1, "32BIT_CONSTANTS"),
        (2, "CBV"),
        (3, "SRV"),
        (4, "UAV"),
    ],
};

pub const DESCRIPTOR_RANGE_TYPE: Enum = Enum {
    prefix: "D3D12_DESCRIPTOR_RANGE_TYPE",
    values: &[(0, "SRV"), (1, "UAV"), (2, "CBV"), (3, "SAMPLER")],
};

/// A set of flags: its name prefix and its (bit, name) pairs.
pub struct Flags {
    pub prefix: &'static str,
    pub bits: &'static [(u32, &'static str)],
}

impl Flags {
    /// The names of the bits set in `value`, bits no table names kept as one number.
    pub fn names(&self, value: u32) -> Vec<String> {
        let mut out: Vec<String> = self
            .bits
            .iter()
            .filter(|(bit, _)| value & bit != 0)
            .map(|(_, name)| format!("{}_{name}", self.prefix))
            .collect();
        let known = self.bits.iter().fold(0, |all, (bit, _)| all | bit);
        if value & !known != 0 {
            out.push(format!("{:#x}", value & !known));
        }
        out
    }
}

pub const ROOT_SIGNATURE_FLAGS: Flags = Flags {
    prefix: "D3D12_ROOT_SIGNATURE_FLAG",
    bits: &[
        (0x1, "ALLOW_INPUT_ASSEMBLER_INPUT_LAYOUT"),
        (0x2, "DENY_VERTEX_SHADER_ROOT_ACCESS"),
        (0x4, "DENY_HULL_SHADER_ROOT_ACCESS"),
        (0x8, "DENY_DOMAIN_SHADER_ROOT_ACCESS"),
        (0x10, "DENY_GEOMETRY_SHADER_ROOT_ACCESS"),
        (0x20, "DENY_PIXEL_SHADER_ROOT_ACCESS"),
        (0x40, "ALLOW_STREAM_OUTPUT"),
        (0x80, "LOCAL_ROOT_SIGNATURE"),
        (0x100, "DENY_AMPLIFICATION_SHADER_ROOT_ACCESS"),
        (0x200, "DENY_MESH_SHADER_ROOT_ACCESS"),
        (0x400, "CBV_SRV_UAV_HEAP_DIRECTLY_INDEXED"),
        (0x800, "SAMPLER_HEAP_DIRECTLY_INDEXED"),
        (0x8000_0000, "ALLOW_LOW_TIER_RESERVED_HW_CB_LIMIT"),
    ],
};

pub const DESCRIPTOR_RANGE_FLAGS: Flags = Flags {
    prefix: "D3D12_DESCRIPTOR_RANGE_FLAG",
    bits: &[
        (0x1, "DESCRIPTORS_VOLATILE"),
        (0x2, "DATA_VOLATILE"),
        (0x4, "DATA_STATIC_WHILE_SET_AT_EXECUTE"),
        (0x8, "DATA_STATIC"),
        (0x10000, "DESCRIPTORS_STATIC_KEEPING_BUFFER_BOUNDS_CHECKS"),
    ],
};

pub const ROOT_DESCRIPTOR_FLAGS: Flags = Flags {
    prefix: "D3D12_ROOT_DESCRIPTOR_FLAG",
    bits: &[
        (0x2, "DATA_VOLATILE"),
        (0x4, "DATA_STATIC_WHILE_SET_AT_EXECUTE"),
        (0x8, "DATA_STATIC"),
    ],
};

/// `D3D12_COLOR_WRITE_ENABLE` bits of a write mask: `ALL`, or the channels joined by `|`,
/// with bits above the four channels kept as a number.
pub fn color_write_mask(mask: u8) -> String {
    const CHANNELS: [(u8, &str); 4] = [(1, "RED"), (2, "GREEN"), (4, "BLUE"), (8, "ALPHA")];
    if mask == 0xF {
        return "D3D12_COLOR_WRITE_ENABLE_ALL".into();
    }
    if mask == 0 {
        return "0".into();
    }
    let mut parts: Vec<String> = CHANNELS
        .iter()
        .filter(|(bit, _)| mask & bit != 0)
        .map(|(_, name)| format!("D3D12_COLOR_WRITE_ENABLE_{name}"))
        .collect();
    if mask & 0xF0 != 0 {
        parts.push(format!("{:#04x}", mask & 0xF0));
    }
    parts.join("|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_unknowns() {
        assert_eq!(COMPARISON_FUNC.name(5), "D3D12_COMPARISON_FUNC_GREATER");
        assert_eq!(BLEND.name(6), "D3D12_BLEND_INV_SRC_ALPHA");
        assert_eq!(BLEND.name(12), "unknown (12)");
        assert_eq!(FILTER.name(0x55), "D3D12_FILTER_ANISOTROPIC");
        assert_eq!(color_write_mask(15), "D3D12_COLOR_WRITE_ENABLE_ALL");
        assert_eq!(
            color_write_mask(0x13),
            "D3D12_COLOR_WRITE_ENABLE_RED|D3D12_COLOR_WRITE_ENABLE_GREEN|0x10"
        );
    }
}
