// flatout.hlsl: what FlatOut 1 and 2 put where, for shaders written in standard HLSL.
//
// Shipped inside shaderfs: `#include <flatout.hlsl>` works in `shaderfs d3d9 compile`
// and in the HLSL saved to a mounted effect's pixel.hlsl or vertex.hlsl (compiled into
// the effect's asm block, so the game never reads this file). A file of the same name
// beside the source or in an -I folder is read instead.
//
// From the FlatOut shader notes and ZackWilde27/FlatOut2-HLSLToSHA's README; TIME (c14)
// and the car body's light planes (c17-c19) are the community's reading, not confirmed.

#ifndef FLATOUT_HLSL
#define FLATOUT_HLSL

// ---- Vertex shader constants (vs_1_1): the game's, c0-c31; a shader's own from c32 ----

float4x4 FlatOutLocalToScreen : register(c0); // m4x4 oPos, v0, c0
float4x4 FlatOutLocalToWorld : register(c4);
float4 CAMERA : register(c8);  // the camera's position, world space
float4 CAMDIR : register(c9);  // the camera's direction, world space
float4 TIME : register(c14);
float4 LIGHTPLANES[3] : register(c17); // the car body dots the world normal with each
#define FLATOUT_VS_FIRST_FREE_CONSTANT 32

// Local (model) space to the screen, to the world, and a direction to the world.
float4 LocalToScreen(float3 pos)
{
    return mul(float4(pos, 1), FlatOutLocalToScreen);
}

float3 LocalToWorld(float3 pos)
{
    return mul(float4(pos, 1), FlatOutLocalToWorld).xyz;
}

float3 RotateToWorld(float3 dir)
{
    return mul(dir, (float3x3)FlatOutLocalToWorld);
}

// ---- Pixel shader constants (ps_1_x): the game's, c0-c2; a shader's own from c3 ----

float4 SHADOW : register(c2); // the track's shadow mask
#define FLATOUT_PS_FIRST_FREE_CONSTANT 3

// ---- The two colours the vertex shader passes to the pixel shader ----
//
// Declare `out FlatOutColours fo` in the vertex shader and `FlatOutColours fo` in the
// pixel shader; the names below then read and write their parts.

struct FlatOutColours
{
    float4 colour0 : COLOR0; // rgb: AMBIENT, a: FRESNEL
    float4 colour1 : COLOR1; // rgb: EXTRA, a: BLEND
};

#define AMBIENT fo.colour0.rgb // ambient light
#define FRESNEL fo.colour0.a   // the Fresnel term
#define EXTRA fo.colour1.rgb   // unused by the stock shaders, as far as is known
#define BLEND fo.colour1.a     // the car body's blend of clean and dirty

#endif
