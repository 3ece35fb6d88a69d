// A struct and a matrix placed by register(), with defaults.
struct Fog { float4 color; float2 range; };
Fog fog : register(c10) = { 0.5, 0.5, 0.5, 1, 10, 100 };
float4x3 boneMat : register(c2);
float4 weights : register(c0) = { 0.1, 0.2, 0.3, 0.4 };
sampler shadow : register(s1);
samplerCUBE env : register(s2);
float4 main(float3 p : TEXCOORD0, float4 uv : TEXCOORD1) : COLOR
{
    float3 q = mul(float4(p, 1), boneMat);
    float d = saturate((q.z - fog.range.x) / (fog.range.y - fog.range.x));
    return lerp(texCUBE(env, q) * tex2Dproj(shadow, uv) * weights, fog.color, d);
}
