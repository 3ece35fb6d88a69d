sampler2D s0 : register(s0);
float4 light : register(c1);
float4 main(float2 uv : TEXCOORD0, float4 col : COLOR0) : COLOR
{
    float3 n = tex2D(s0, uv).rgb * 2 - 1;
    float3 l = col.rgb * 2 - 1;
    return dot(n, l);
}
