// A vertex shader whose features the game switches per draw with bool registers (as
// Oblivion's and Fallout's skinned/fogged variants do): each toggle is bound to its own
// b# by register(), so the branches stay static `if b#` blocks.
float4x4 WorldViewProj : register(c0);
float4 FogParams : register(c4);      // start, 1 / (end - start)
float4 Tint : register(c5);
bool UseFog : register(b0);
bool UseTint : register(b1);

struct VS_OUT
{
    float4 pos : POSITION;
    float4 color : COLOR0;
    float fog : FOG;
};

VS_OUT main(float4 pos : POSITION, float4 color : COLOR0)
{
    VS_OUT o;
    o.pos = mul(pos, WorldViewProj);
    o.color = color;
    if (UseTint)
        o.color = color * Tint;
    o.fog = 1;
    if (UseFog)
        o.fog = saturate((o.pos.z - FogParams.x) * FogParams.y);
    return o;
}
