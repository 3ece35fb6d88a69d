// Every constant placed by register(), as game shaders usually are.
float4x4 worldViewProj : register(c0);
float4 fogParams : register(c4);
float3 lightDir : register(c6);
float4 bones[12] : register(c20);
struct VSOut { float4 pos : POSITION; float4 color : COLOR0; float fog : FOG; };
VSOut main(float4 pos : POSITION, float3 normal : NORMAL, float4 idx : BLENDINDICES)
{
    VSOut o;
    float4 p = pos + bones[idx.x] * 0.01;
    o.pos = mul(p, worldViewProj);
    o.color = saturate(dot(normal, lightDir)) * fogParams;
    o.fog = o.pos.z * fogParams.x + fogParams.y;
    return o;
}
