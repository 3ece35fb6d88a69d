// Bloom: a weighted sum of the scene and four mip-like blurred levels.
sampler2D DiffuseA : register(s0);
sampler2D DiffuseB : register(s1);
sampler2D DiffuseC : register(s2);
sampler2D DiffuseD : register(s3);

float4 Level0123Weight;
float Level0Weight;
float3 BloomScale;
float2 TargetSize;

float3 Luma(float3 c)
{
    return dot(c, float3(0.299, 0.587, 0.114));
}

float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float2 px = 1.0 / TargetSize;
    float3 base = tex2D(DiffuseA, uv).rgb;
    float3 b0 = tex2D(DiffuseB, uv + px * float2(0.5, 0.5)).rgb;
    float3 b1 = tex2D(DiffuseC, uv - px * float2(0.5, 0.5)).rgb;
    float3 b2 = tex2D(DiffuseD, uv).rgb;

    float3 bloom = b0 * Level0123Weight.x + b1 * Level0123Weight.y + b2 * Level0123Weight.z;
    bloom = bloom * BloomScale;
    float3 blend = base * Level0Weight + bloom;
    // Soft clip: brighter bloom saturates toward white.
    float3 over = saturate(blend - 1.0);
    blend = saturate(blend) + Luma(over) * Level0123Weight.w;
    return float4(saturate(blend), 1.0);
}
