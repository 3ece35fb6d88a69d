sampler2D s0 : register(s0);
sampler2D s1 : register(s1);
float4 main(float2 uv : TEXCOORD0, float3 r1 : TEXCOORD1) : COLOR
{
    float3 n = tex2D(s0, uv).rgb * 2 - 1;
    return tex2D(s1, float2(dot(r1, n), 0));
}
