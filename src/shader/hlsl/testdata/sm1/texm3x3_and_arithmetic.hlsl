sampler2D s0 : register(s0);
sampler3D s3 : register(s3);
float4 k : register(c0);
float4 main(float2 uv : TEXCOORD0, float3 r1 : TEXCOORD1, float3 r2 : TEXCOORD2, float3 r3 : TEXCOORD3) : COLOR
{
    float4 b = tex2D(s0, uv);
    float3 n = b.rgb;
    return tex3D(s3, float3(dot(r1, n), dot(r2, n), dot(r3, n))) * k + b;
}
