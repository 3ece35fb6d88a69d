sampler2D s0 : register(s0);
sampler2D s2 : register(s2);
float4 main(float2 uv : TEXCOORD0, float3 r1 : TEXCOORD1, float3 r2 : TEXCOORD2) : COLOR
{
    float3 n = tex2D(s0, uv).rgb * 2 - 1;
    return tex2D(s2, float2(dot(n, r1), dot(r2, n))) * r1.x;
}
