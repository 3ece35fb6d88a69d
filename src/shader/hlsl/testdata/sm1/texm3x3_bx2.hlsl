sampler2D s0 : register(s0);
samplerCUBE s3 : register(s3);
float4 main(float2 uv : TEXCOORD0, float3 r1 : TEXCOORD1, float3 r2 : TEXCOORD2, float3 r3 : TEXCOORD3) : COLOR
{
    float3 n = tex2D(s0, uv).rgb * 2 - 1;
    return texCUBE(s3, float3(dot(r1, n), dot(r2, n), dot(r3, n)));
}
