//! The states D3DX9's effect compiler knows, and what each takes: learnt from
//! `d3dx9_31.dll` by experiment (`fx-verdicts/README.md`), not from the documentation,
//! which disagrees with it in places (`DebugMonitorToken` takes no names; `Zbias` is not
//! there at all).
//!
//! A state name is matched without regard to case. A state is either not indexed, or
//! needs an index (`AddressU[0]`), within a range that depends on its kind. What a state
//! takes depends on its [`Class`]; enumeration names are matched without regard to case
//! and may be joined with `|`, as may numbers.

/// What a state's value must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A DWORD: a number, a `float4(…)` (D3DX: "a numeric scalar or a 4-float vector"),
    /// or one of these names (none for a plain number such as `AlphaRef`).
    Dword(&'static [&'static str]),
    /// A float: a number only (D3DX: "must be assigned a scalar").
    Float,
    /// A light's colour, position or direction: a 3- or 4-vector or a number.
    LightVector,
    /// A material colour: any numeric value.
    Material,
    /// A matrix (the transforms): any numeric value.
    Matrix,
    /// `…ShaderConstantF/I[n]`, `…ShaderConstant1-4[n]`: any numeric value, no names.
    Constant,
    /// `…ShaderConstantB[n]`: any numeric value, or TRUE/FALSE.
    BoolConstant,
    /// `Texture[n]`: a texture, NULL or 0.
    Texture,
    /// `Sampler[n]`: a sampler, NULL or 0.
    Sampler,
    /// `StateBlock`: a state block, NULL or 0.
    StateBlock,
    /// `VertexShader`, `PixelShader`: a shader of that stage, NULL or 0.
    Shader(super::effect::Stage),
    /// `FVF`: the D3DFVF flags, not 0.
    Fvf,
}

/// Which indices a state takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Index {
    /// `CullMode = …`: none.
    None,
    /// A sampler: 0–15, or the displacement-map and vertex samplers 256–260.
    Sampler,
    /// `DMapOffset[256]`: the displacement-map sampler only.
    DisplacementMap,
    /// A texture stage: 0–7.
    Stage,
    /// Up to this index.
    Max(u32),
    /// Any (lights, shader constants).
    Any,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct State {
    /// As the Direct3D documentation spells it.
    pub name: &'static str,
    pub class: Class,
    pub index: Index,
    /// A sampler state, which a `sampler_state { }` block may set (without an index).
    pub sampler: bool,
}

const BOOL: &[&str] = &["TRUE", "FALSE"];
const ZBUFFER: &[&str] = &["TRUE", "FALSE", "USEW"];
const FILL: &[&str] = &["POINT", "WIREFRAME", "SOLID"];
const SHADE: &[&str] = &["FLAT", "GOURAUD", "PHONG"];
const BLEND: &[&str] = &[
    "ZERO",
    "ONE",
    "SRCCOLOR",
    "INVSRCCOLOR",
    "SRCALPHA",
    "INVSRCALPHA",
    "DESTALPHA",
    "INVDESTALPHA",
    "DESTCOLOR",
    "INVDESTCOLOR",
    "SRCALPHASAT",
    "BOTHSRCALPHA",
    "BOTHINVSRCALPHA",
    "BLENDFACTOR",
    "INVBLENDFACTOR",
];
const CULL: &[&str] = &["NONE", "CW", "CCW"];
const CMP: &[&str] = &[
    "NEVER",
    "LESS",
    "EQUAL",
    "LESSEQUAL",
    "GREATER",
    "NOTEQUAL",
    "GREATEREQUAL",
    "ALWAYS",
];
const STENCILOP: &[&str] = &[
    "KEEP", "ZERO", "REPLACE", "INCRSAT", "DECRSAT", "INVERT", "INCR", "DECR",
];
const FOG: &[&str] = &["NONE", "EXP", "EXP2", "LINEAR"];
const MATERIAL_SOURCE: &[&str] = &["MATERIAL", "COLOR1", "COLOR2"];
const VERTEX_BLEND: &[&str] = &[
    "DISABLE", "1WEIGHTS", "2WEIGHTS", "3WEIGHTS", "TWEENING", "0WEIGHTS",
];
const CLIP_PLANES: &[&str] = &[
    "CLIPPLANE0",
    "CLIPPLANE1",
    "CLIPPLANE2",
    "CLIPPLANE3",
    "CLIPPLANE4",
    "CLIPPLANE5",
];
const PATCH_EDGE: &[&str] = &["DISCRETE", "CONTINUOUS"];
const COLOR_WRITE: &[&str] = &["RED", "GREEN", "BLUE", "ALPHA"];
const BLEND_OP: &[&str] = &["ADD", "SUBTRACT", "REVSUBTRACT", "MIN", "MAX"];
const DEGREE: &[&str] = &["LINEAR", "QUADRATIC", "CUBIC", "QUINTIC"];
const WRAP: &[&str] = &["COORD0", "COORD1", "COORD2", "COORD3", "U", "V", "W"];
const TEXTURE_OP: &[&str] = &[
    "DISABLE",
    "SELECTARG1",
    "SELECTARG2",
    "MODULATE",
    "MODULATE2X",
    "MODULATE4X",
    "ADD",
    "ADDSIGNED",
    "ADDSIGNED2X",
    "SUBTRACT",
    "ADDSMOOTH",
    "BLENDDIFFUSEALPHA",
    "BLENDTEXTUREALPHA",
    "BLENDFACTORALPHA",
    "BLENDTEXTUREALPHAPM",
    "BLENDCURRENTALPHA",
    "PREMODULATE",
    "MODULATEALPHA_ADDCOLOR",
    "MODULATECOLOR_ADDALPHA",
    "MODULATEINVALPHA_ADDCOLOR",
    "MODULATEINVCOLOR_ADDALPHA",
    "BUMPENVMAP",
    "BUMPENVMAPLUMINANCE",
    "DOTPRODUCT3",
    "MULTIPLYADD",
    "LERP",
];
const TEXTURE_ARG: &[&str] = &[
    "SELECTMASK",
    "DIFFUSE",
    "CURRENT",
    "TEXTURE",
    "TFACTOR",
    "SPECULAR",
    "TEMP",
    "CONSTANT",
    "COMPLEMENT",
    "ALPHAREPLICATE",
];
const TEXCOORD_INDEX: &[&str] = &[
    "PASSTHRU",
    "CAMERASPACENORMAL",
    "CAMERASPACEPOSITION",
    "CAMERASPACEREFLECTIONVECTOR",
    "SPHEREMAP",
];
const TRANSFORM_FLAGS: &[&str] = &[
    "DISABLE",
    "COUNT1",
    "COUNT2",
    "COUNT3",
    "COUNT4",
    "PROJECTED",
];
const ADDRESS: &[&str] = &["WRAP", "MIRROR", "CLAMP", "BORDER", "MIRRORONCE"];
const FILTER: &[&str] = &[
    "NONE",
    "POINT",
    "LINEAR",
    "ANISOTROPIC",
    "PYRAMIDALQUAD",
    "GAUSSIANQUAD",
];
const LIGHT_TYPE: &[&str] = &["POINT", "SPOT", "DIRECTIONAL"];
pub const FVF: &[&str] = &[
    "XYZ",
    "XYZRHW",
    "XYZB1",
    "XYZB2",
    "XYZB3",
    "XYZB4",
    "XYZB5",
    "XYZW",
    "NORMAL",
    "PSIZE",
    "DIFFUSE",
    "SPECULAR",
    "TEX0",
    "TEX1",
    "TEX2",
    "TEX3",
    "TEX4",
    "TEX5",
    "TEX6",
    "TEX7",
    "TEX8",
    "LASTBETA_UBYTE4",
    "LASTBETA_D3DCOLOR",
];
const NUMBER: &[&str] = &[];

const fn render(name: &'static str, class: Class) -> State {
    State {
        name,
        class,
        index: Index::None,
        sampler: false,
    }
}

const fn indexed(name: &'static str, class: Class, index: Index) -> State {
    State {
        name,
        class,
        index,
        sampler: false,
    }
}

const fn sampler(name: &'static str, class: Class) -> State {
    State {
        name,
        class,
        index: Index::Sampler,
        sampler: true,
    }
}

use super::effect::Stage;
use Class::*;

/// Every state `d3dx9_31.dll` knows.
pub const STATES: &[State] = &[
    // Render states.
    render("ZEnable", Dword(ZBUFFER)),
    render("FillMode", Dword(FILL)),
    render("ShadeMode", Dword(SHADE)),
    render("ZWriteEnable", Dword(BOOL)),
    render("AlphaTestEnable", Dword(BOOL)),
    render("LastPixel", Dword(BOOL)),
    render("SrcBlend", Dword(BLEND)),
    render("DestBlend", Dword(BLEND)),
    render("CullMode", Dword(CULL)),
    render("ZFunc", Dword(CMP)),
    render("AlphaRef", Dword(NUMBER)),
    render("AlphaFunc", Dword(CMP)),
    render("DitherEnable", Dword(BOOL)),
    render("AlphaBlendEnable", Dword(BOOL)),
    render("FogEnable", Dword(BOOL)),
    render("SpecularEnable", Dword(BOOL)),
    render("FogColor", Dword(NUMBER)),
    render("FogTableMode", Dword(FOG)),
    render("FogStart", Float),
    render("FogEnd", Float),
    render("FogDensity", Float),
    render("RangeFogEnable", Dword(BOOL)),
    render("StencilEnable", Dword(BOOL)),
    render("StencilFail", Dword(STENCILOP)),
    render("StencilZFail", Dword(STENCILOP)),
    render("StencilPass", Dword(STENCILOP)),
    render("StencilFunc", Dword(CMP)),
    render("StencilRef", Dword(NUMBER)),
    render("StencilMask", Dword(NUMBER)),
    render("StencilWriteMask", Dword(NUMBER)),
    render("TextureFactor", Dword(NUMBER)),
    render("Wrap0", Dword(WRAP)),
    render("Wrap1", Dword(WRAP)),
    render("Wrap2", Dword(WRAP)),
    render("Wrap3", Dword(WRAP)),
    render("Wrap4", Dword(WRAP)),
    render("Wrap5", Dword(WRAP)),
    render("Wrap6", Dword(WRAP)),
    render("Wrap7", Dword(WRAP)),
    render("Wrap8", Dword(WRAP)),
    render("Wrap9", Dword(WRAP)),
    render("Wrap10", Dword(WRAP)),
    render("Wrap11", Dword(WRAP)),
    render("Wrap12", Dword(WRAP)),
    render("Wrap13", Dword(WRAP)),
    render("Wrap14", Dword(WRAP)),
    render("Wrap15", Dword(WRAP)),
    render("Clipping", Dword(BOOL)),
    render("Lighting", Dword(BOOL)),
    render("Ambient", Dword(NUMBER)),
    render("FogVertexMode", Dword(FOG)),
    render("ColorVertex", Dword(BOOL)),
    render("LocalViewer", Dword(BOOL)),
    render("NormalizeNormals", Dword(BOOL)),
    render("DiffuseMaterialSource", Dword(MATERIAL_SOURCE)),
    render("SpecularMaterialSource", Dword(MATERIAL_SOURCE)),
    render("AmbientMaterialSource", Dword(MATERIAL_SOURCE)),
    render("EmissiveMaterialSource", Dword(MATERIAL_SOURCE)),
    render("VertexBlend", Dword(VERTEX_BLEND)),
    render("ClipPlaneEnable", Dword(CLIP_PLANES)),
    render("PointSize", Float),
    render("PointSize_Min", Float),
    render("PointSpriteEnable", Dword(BOOL)),
    render("PointScaleEnable", Dword(BOOL)),
    render("PointScale_A", Float),
    render("PointScale_B", Float),
    render("PointScale_C", Float),
    render("MultiSampleAntialias", Dword(BOOL)),
    render("MultiSampleMask", Dword(NUMBER)),
    render("PatchEdgeStyle", Dword(PATCH_EDGE)),
    render("DebugMonitorToken", Dword(NUMBER)),
    render("PointSize_Max", Float),
    render("IndexedVertexBlendEnable", Dword(BOOL)),
    render("ColorWriteEnable", Dword(COLOR_WRITE)),
    render("TweenFactor", Float),
    render("BlendOp", Dword(BLEND_OP)),
    render("PositionDegree", Dword(DEGREE)),
    render("NormalDegree", Dword(DEGREE)),
    render("ScissorTestEnable", Dword(BOOL)),
    render("SlopeScaleDepthBias", Float),
    render("AntialiasedLineEnable", Dword(BOOL)),
    render("MinTessellationLevel", Float),
    render("MaxTessellationLevel", Float),
    render("AdaptiveTess_X", Float),
    render("AdaptiveTess_Y", Float),
    render("AdaptiveTess_Z", Float),
    render("AdaptiveTess_W", Float),
    render("EnableAdaptiveTessellation", Dword(BOOL)),
    render("TwoSidedStencilMode", Dword(BOOL)),
    render("CCW_StencilFail", Dword(STENCILOP)),
    render("CCW_StencilZFail", Dword(STENCILOP)),
    render("CCW_StencilPass", Dword(STENCILOP)),
    render("CCW_StencilFunc", Dword(CMP)),
    render("ColorWriteEnable1", Dword(COLOR_WRITE)),
    render("ColorWriteEnable2", Dword(COLOR_WRITE)),
    render("ColorWriteEnable3", Dword(COLOR_WRITE)),
    render("BlendFactor", Dword(NUMBER)),
    render("SRGBWriteEnable", Dword(BOOL)),
    render("DepthBias", Float),
    render("SeparateAlphaBlendEnable", Dword(BOOL)),
    render("SrcBlendAlpha", Dword(BLEND)),
    render("DestBlendAlpha", Dword(BLEND)),
    render("BlendOpAlpha", Dword(BLEND_OP)),
    // Texture stage states.
    indexed("ColorOp", Dword(TEXTURE_OP), Index::Stage),
    indexed("ColorArg0", Dword(TEXTURE_ARG), Index::Stage),
    indexed("ColorArg1", Dword(TEXTURE_ARG), Index::Stage),
    indexed("ColorArg2", Dword(TEXTURE_ARG), Index::Stage),
    indexed("AlphaOp", Dword(TEXTURE_OP), Index::Stage),
    indexed("AlphaArg0", Dword(TEXTURE_ARG), Index::Stage),
    indexed("AlphaArg1", Dword(TEXTURE_ARG), Index::Stage),
    indexed("AlphaArg2", Dword(TEXTURE_ARG), Index::Stage),
    indexed("ResultArg", Dword(TEXTURE_ARG), Index::Stage),
    indexed("BumpEnvMat00", Float, Index::Stage),
    indexed("BumpEnvMat01", Float, Index::Stage),
    indexed("BumpEnvMat10", Float, Index::Stage),
    indexed("BumpEnvMat11", Float, Index::Stage),
    indexed("BumpEnvLScale", Float, Index::Stage),
    indexed("BumpEnvLOffset", Float, Index::Stage),
    indexed("TexCoordIndex", Dword(TEXCOORD_INDEX), Index::Stage),
    indexed(
        "TextureTransformFlags",
        Dword(TRANSFORM_FLAGS),
        Index::Stage,
    ),
    indexed("Constant", Dword(NUMBER), Index::Stage),
    // Sampler states, and the texture and sampler of a stage.
    sampler("AddressU", Dword(ADDRESS)),
    sampler("AddressV", Dword(ADDRESS)),
    sampler("AddressW", Dword(ADDRESS)),
    sampler("BorderColor", Dword(NUMBER)),
    sampler("MagFilter", Dword(FILTER)),
    sampler("MinFilter", Dword(FILTER)),
    sampler("MipFilter", Dword(FILTER)),
    sampler("MipMapLodBias", Float),
    sampler("MaxMipLevel", Dword(NUMBER)),
    sampler("MaxAnisotropy", Dword(NUMBER)),
    sampler("SRGBTexture", Dword(BOOL)),
    sampler("ElementIndex", Dword(NUMBER)),
    State {
        name: "DMapOffset",
        class: Dword(NUMBER),
        index: Index::DisplacementMap,
        sampler: true,
    },
    sampler("Texture", Texture),
    indexed("Sampler", Sampler, Index::Sampler),
    // Lights and the material.
    indexed("LightType", Dword(LIGHT_TYPE), Index::Any),
    indexed("LightDiffuse", LightVector, Index::Any),
    indexed("LightSpecular", LightVector, Index::Any),
    indexed("LightAmbient", LightVector, Index::Any),
    indexed("LightPosition", LightVector, Index::Any),
    indexed("LightDirection", LightVector, Index::Any),
    indexed("LightRange", Float, Index::Any),
    indexed("LightFalloff", Float, Index::Any),
    indexed("LightAttenuation0", Float, Index::Any),
    indexed("LightAttenuation1", Float, Index::Any),
    indexed("LightAttenuation2", Float, Index::Any),
    indexed("LightTheta", Float, Index::Any),
    indexed("LightPhi", Float, Index::Any),
    indexed("LightEnable", Dword(BOOL), Index::Any),
    render("MaterialDiffuse", Material),
    render("MaterialAmbient", Material),
    render("MaterialSpecular", Material),
    render("MaterialEmissive", Material),
    render("MaterialPower", Float),
    // Transforms.
    indexed("WorldTransform", Matrix, Index::Max(255)),
    render("ViewTransform", Matrix),
    render("ProjectionTransform", Matrix),
    indexed("TextureTransform", Matrix, Index::Max(7)),
    // Shaders and their constants.
    render("VertexShader", Shader(Stage::Vertex)),
    render("PixelShader", Shader(Stage::Pixel)),
    indexed("VertexShaderConstantF", Constant, Index::Any),
    indexed("VertexShaderConstantB", BoolConstant, Index::Any),
    indexed("VertexShaderConstantI", Constant, Index::Any),
    indexed("VertexShaderConstant", Constant, Index::Any),
    indexed("VertexShaderConstant1", Constant, Index::Any),
    indexed("VertexShaderConstant2", Constant, Index::Any),
    indexed("VertexShaderConstant3", Constant, Index::Any),
    indexed("VertexShaderConstant4", Constant, Index::Any),
    indexed("PixelShaderConstantF", Constant, Index::Any),
    indexed("PixelShaderConstantB", BoolConstant, Index::Any),
    indexed("PixelShaderConstantI", Constant, Index::Any),
    indexed("PixelShaderConstant", Constant, Index::Any),
    indexed("PixelShaderConstant1", Constant, Index::Any),
    indexed("PixelShaderConstant2", Constant, Index::Any),
    indexed("PixelShaderConstant3", Constant, Index::Any),
    indexed("PixelShaderConstant4", Constant, Index::Any),
    // The rest.
    render("FVF", Fvf),
    render("PatchSegments", Float),
    render("StateBlock", StateBlock),
];

/// The state called `name` (any case).
pub fn find(name: &[u8]) -> Option<&'static State> {
    STATES
        .iter()
        .find(|s| s.name.as_bytes().eq_ignore_ascii_case(name))
}

/// States of Direct3D 8 and earlier that D3DX9 does not know, and what to write instead
/// (`None`: Direct3D 9 has no such state).
const RETIRED: &[(&str, Option<&str>, &str)] = &[
    (
        "ZBias",
        Some("DepthBias"),
        "Direct3D 8's ZBIAS, which Zack's HLSL-to-FlatOut-Shader still writes, is \
         D3DRS_DEPTHBIAS in Direct3D 9: a float added to the depth (a small fraction \
         such as -0.00002), not ZBIAS's integer 0-16, so choose the value again",
    ),
    (
        "EdgeAntialias",
        Some("AntialiasedLineEnable"),
        "Direct3D 8's EDGEANTIALIAS became D3DRS_ANTIALIASEDLINEENABLE",
    ),
    (
        "ZVisible",
        None,
        "Direct3D 8's ZVISIBLE is gone from Direct3D 9",
    ),
    (
        "LinePattern",
        None,
        "Direct3D 8's LINEPATTERN is gone from Direct3D 9",
    ),
    (
        "SoftwareVertexProcessing",
        None,
        "Direct3D 8's SOFTWAREVERTEXPROCESSING is a device setting in Direct3D 9",
    ),
    (
        "ClipPlane",
        None,
        "clip planes are set by the program (SetClipPlane), not by an effect state; \
         ClipPlaneEnable is the state",
    ),
];

/// What to say of a state D3DX does not know: the state to write instead, or the nearest
/// known name.
pub fn unknown(name: &str) -> String {
    if let Some((old, new, why)) = RETIRED
        .iter()
        .find(|(old, _, _)| old.eq_ignore_ascii_case(name))
    {
        return match new {
            Some(new) => format!(
                "'{name}' is not a state D3DX knows, and D3DX refuses the effect \
                 (\"Unrecognized state '{name}'\"): write {new} ({why})"
            ),
            None => format!("'{name}' is not a state D3DX knows ({why}; was {old})"),
        };
    }
    match nearest(name, STATES.iter().map(|s| s.name)) {
        Some(near) => format!("'{name}' is not a state D3DX knows (did you mean {near}?)"),
        None => format!("'{name}' is not a state D3DX knows"),
    }
}

/// The candidate closest to `word` (any case) within two edits, if one is.
pub fn nearest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let word = word.to_ascii_lowercase();
    candidates
        .map(|c| (distance(&word, &c.to_ascii_lowercase()), c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance, bytes.
fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &x) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &y) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(x != y));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

impl State {
    /// Why `index` is wrong for the state, if it is.
    pub fn index_problem(&self, index: Option<u32>) -> Option<String> {
        let name = self.name;
        match (self.index, index) {
            (Index::None, None) => None,
            (Index::None, Some(_)) => Some(format!("{name} is not indexed: write '{name} = …'")),
            (_, None) => Some(format!(
                "{name} needs an index: '{name}[{}] = …'",
                if self.index == Index::DisplacementMap {
                    256
                } else {
                    0
                }
            )),
            (Index::Sampler, Some(i)) if (16..256).contains(&i) => Some(format!(
                "{name}[{i}]: there is no sampler {i} (samplers are 0-15, and 256-260 for the \
                 displacement map and the vertex shader's)"
            )),
            (Index::Sampler, Some(i)) if i > 260 => {
                Some(format!("{name}[{i}]: the largest sampler index is 260"))
            }
            (Index::DisplacementMap, Some(i)) if i != 256 => Some(format!(
                "{name}[{i}]: {name} is a state of the displacement-map sampler only, \
                 {name}[256]"
            )),
            (Index::Stage, Some(i)) if i > 7 => {
                Some(format!("{name}[{i}]: texture stages are 0-7"))
            }
            (Index::Max(max), Some(i)) if i > max => {
                Some(format!("{name}[{i}]: the largest index of {name} is {max}"))
            }
            _ => None,
        }
    }

    /// The names the state takes, as the message lists them.
    pub fn names(&self) -> &'static [&'static str] {
        match self.class {
            Dword(names) => names,
            BoolConstant => BOOL,
            Fvf => FVF,
            _ => NUMBER,
        }
    }
}
