//! DXIL's enumerations as the container parts store them (`dxbc.md` §5–§7, from DXC's
//! `DxilConstants.h` and `DxilPipelineStateValidation.h`). One table each; values no
//! table holds show as `unknown (N)`.

use crate::shader::d3d12::Enum;

const fn dense(values: &'static [(u32, &'static str)]) -> Enum {
    Enum { prefix: "", values }
}

/// Signature element `SystemValue` (`dxbc.md` §5).
pub const SYSTEM_VALUE: Enum = dense(&[
    (0, "Undefined"),
    (1, "Position"),
    (2, "ClipDistance"),
    (3, "CullDistance"),
    (4, "RenderTargetArrayIndex"),
    (5, "ViewPortArrayIndex"),
    (6, "VertexID"),
    (7, "PrimitiveID"),
    (8, "InstanceID"),
    (9, "IsFrontFace"),
    (10, "SampleIndex"),
    (11, "FinalQuadEdgeTessfactor"),
    (12, "FinalQuadInsideTessfactor"),
    (13, "FinalTriEdgeTessfactor"),
    (14, "FinalTriInsideTessfactor"),
    (15, "FinalLineDetailTessfactor"),
    (16, "FinalLineDensityTessfactor"),
    (23, "Barycentrics"),
    (24, "ShadingRate"),
    (25, "CullPrimitive"),
    (64, "Target"),
    (65, "Depth"),
    (66, "Coverage"),
    (67, "DepthGE"),
    (68, "DepthLE"),
    (69, "StencilRef"),
    (70, "InnerCoverage"),
]);

/// Signature element and PSV `CompType` (`dxbc.md` §5).
pub const COMPONENT_TYPE: Enum = dense(&[
    (0, "Unknown"),
    (1, "UInt32"),
    (2, "SInt32"),
    (3, "Float32"),
    (4, "UInt16"),
    (5, "SInt16"),
    (6, "Float16"),
    (7, "UInt64"),
    (8, "SInt64"),
    (9, "Float64"),
]);

pub const MIN_PRECISION: Enum = dense(&[
    (0, "Default"),
    (1, "Float16"),
    (2, "Float2_8"),
    (3, "Reserved"),
    (4, "SInt16"),
    (5, "UInt16"),
    (0xF0, "Any16"),
    (0xF1, "Any10"),
]);

/// PSV0 resource record `ResType` (`dxbc.md` §6.4).
pub const RESOURCE_TYPE: Enum = dense(&[
    (0, "Invalid"),
    (1, "Sampler"),
    (2, "CBV"),
    (3, "SRVTyped"),
    (4, "SRVRaw"),
    (5, "SRVStructured"),
    (6, "UAVTyped"),
    (7, "UAVRaw"),
    (8, "UAVStructured"),
    (9, "UAVStructuredWithCounter"),
]);

/// The HLSL register class of a PSV0 `ResType`: `s`, `b`, `t` or `u`.
pub fn register_class(res_type: u32) -> Option<char> {
    match res_type {
        1 => Some('s'),
        2 => Some('b'),
        3..=5 => Some('t'),
        6..=9 => Some('u'),
        _ => None,
    }
}

pub const RESOURCE_KIND: Enum = dense(&[
    (0, "Invalid"),
    (1, "Texture1D"),
    (2, "Texture2D"),
    (3, "Texture2DMS"),
    (4, "Texture3D"),
    (5, "TextureCube"),
    (6, "Texture1DArray"),
    (7, "Texture2DArray"),
    (8, "Texture2DMSArray"),
    (9, "TextureCubeArray"),
    (10, "TypedBuffer"),
    (11, "RawBuffer"),
    (12, "StructuredBuffer"),
    (13, "CBuffer"),
    (14, "Sampler"),
    (15, "TBuffer"),
    (16, "RTAccelerationStructure"),
    (17, "FeedbackTexture2D"),
    (18, "FeedbackTexture2DArray"),
]);

/// PSV0 signature element `SemanticKind` (`dxbc.md` §6.5).
pub const SEMANTIC_KIND: Enum = dense(&[
    (0, "Arbitrary"),
    (1, "VertexID"),
    (2, "InstanceID"),
    (3, "Position"),
    (4, "RenderTargetArrayIndex"),
    (5, "ViewPortArrayIndex"),
    (6, "ClipDistance"),
    (7, "CullDistance"),
    (8, "OutputControlPointID"),
    (9, "DomainLocation"),
    (10, "PrimitiveID"),
    (11, "GSInstanceID"),
    (12, "SampleIndex"),
    (13, "IsFrontFace"),
    (14, "Coverage"),
    (15, "InnerCoverage"),
    (16, "Target"),
    (17, "Depth"),
    (18, "DepthLessEqual"),
    (19, "DepthGreaterEqual"),
    (20, "StencilRef"),
    (21, "DispatchThreadID"),
    (22, "GroupID"),
    (23, "GroupIndex"),
    (24, "GroupThreadID"),
    (25, "TessFactor"),
    (26, "InsideTessFactor"),
    (27, "ViewID"),
    (28, "Barycentrics"),
    (29, "ShadingRate"),
    (30, "CullPrimitive"),
    (31, "Invalid"),
]);

pub const INTERPOLATION_MODE: Enum = dense(&[
    (0, "Undefined"),
    (1, "Constant"),
    (2, "Linear"),
    (3, "LinearCentroid"),
    (4, "LinearNoperspective"),
    (5, "LinearNoperspectiveCentroid"),
    (6, "LinearSample"),
    (7, "LinearNoperspectiveSample"),
    (8, "Invalid"),
]);

pub const TESSELLATOR_DOMAIN: Enum =
    dense(&[(0, "Undefined"), (1, "IsoLine"), (2, "Tri"), (3, "Quad")]);

pub const TESSELLATOR_OUTPUT_PRIMITIVE: Enum = dense(&[
    (0, "Undefined"),
    (1, "Point"),
    (2, "Line"),
    (3, "TriangleCW"),
    (4, "TriangleCCW"),
]);

/// Geometry input primitives; 8–39 are `ControlPointPatch1`–`32` (named by
/// [`input_primitive`]).
const INPUT_PRIMITIVE: Enum = dense(&[
    (0, "Undefined"),
    (1, "Point"),
    (2, "Line"),
    (3, "Triangle"),
    (6, "LineWithAdjacency"),
    (7, "TriangleWithAdjacency"),
]);

pub fn input_primitive(value: u32) -> String {
    match value {
        8..=39 => format!("ControlPointPatch{}", value - 7),
        _ => INPUT_PRIMITIVE.name(value),
    }
}

pub const PRIMITIVE_TOPOLOGY: Enum = dense(&[
    (0, "Undefined"),
    (1, "PointList"),
    (2, "LineList"),
    (3, "LineStrip"),
    (4, "TriangleList"),
    (5, "TriangleStrip"),
]);

pub const MESH_OUTPUT_TOPOLOGY: Enum = dense(&[(0, "Undefined"), (1, "Line"), (2, "Triangle")]);

/// `SFI0` feature flags (`dxbc.md` §7.1), by bit value.
pub const FEATURE_FLAGS: &[(u64, &str)] = &[
    (0x1, "Doubles"),
    (0x2, "ComputeShadersPlusRawAndStructuredBuffersViaShader4X"),
    (0x4, "UAVsAtEveryStage"),
    (0x8, "64UAVs"),
    (0x10, "MinimumPrecision"),
    (0x20, "11_1_DoubleExtensions"),
    (0x40, "11_1_ShaderExtensions"),
    (0x80, "LEVEL9ComparisonFiltering"),
    (0x100, "TiledResources"),
    (0x200, "StencilRef"),
    (0x400, "InnerCoverage"),
    (0x800, "TypedUAVLoadAdditionalFormats"),
    (0x1000, "ROVs"),
    (
        0x2000,
        "ViewportAndRTArrayIndexFromAnyShaderFeedingRasterizer",
    ),
    (0x4000, "WaveOps"),
    (0x8000, "Int64Ops"),
    (0x10000, "ViewID"),
    (0x20000, "Barycentrics"),
    (0x40000, "NativeLowPrecision"),
    (0x80000, "ShadingRate"),
    (0x100000, "Raytracing_Tier_1_1"),
    (0x200000, "SamplerFeedback"),
    (0x400000, "AtomicInt64OnTypedResource"),
    (0x800000, "AtomicInt64OnGroupShared"),
    (0x1000000, "DerivativesInMeshAndAmpShaders"),
    (0x2000000, "ResourceDescriptorHeapIndexing"),
    (0x4000000, "SamplerDescriptorHeapIndexing"),
    (0x8000000, "Reserved"),
    (0x10000000, "AtomicInt64OnHeapResource"),
    (0x20000000, "AdvancedTextureOps"),
    (0x40000000, "WriteableMSAATextures"),
    (0x80000000, "SampleCmpGradientOrBias"),
    (0x100000000, "ExtendedCommandInfo"),
    (0x10000000000, "UsesDerivatives"),
    (0x20000000000, "RequiresGroup"),
];

/// The names of the feature flags set in `flags`, unnamed bits kept as one number.
pub fn feature_names(flags: u64) -> Vec<String> {
    let mut out: Vec<String> = FEATURE_FLAGS
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|(_, name)| name.to_string())
        .collect();
    let known = FEATURE_FLAGS.iter().fold(0, |all, (bit, _)| all | bit);
    if flags & !known != 0 {
        out.push(format!("{:#x}", flags & !known));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(SYSTEM_VALUE.name(64), "Target");
        assert_eq!(SYSTEM_VALUE.name(17), "unknown (17)");
        assert_eq!(input_primitive(10), "ControlPointPatch3");
        assert_eq!(
            feature_names(0x4000 | 0x100000 | 1 << 50),
            ["WaveOps", "Raytracing_Tier_1_1", "0x4000000000000"]
        );
        assert_eq!(register_class(9), Some('u'));
    }
}
