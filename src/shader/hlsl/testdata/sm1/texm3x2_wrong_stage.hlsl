sampler2D s0 : register(s0);
sampler2D s3 : register(s3);
float4 main(float2 uv : TEXCOORD0, float3 r1 : TEXCOORD1, float3 r2 : TEXCOORD2) : COLOR
{
    float3 n = tex2D(s0, uv).rgb * 2 - 1;
    return tex2D(s3, float2(dot(r1, n), dot(r2, n)));
}
