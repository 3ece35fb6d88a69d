// Edge-preserving denoise: a 3x3 bilateral-like weighted average.
sampler s0 : register(s0);
float4 p0 : register(c0);
float2 p1 : register(c1);

float Sigma;

float4 main(float2 tex : TEXCOORD0) : COLOR
{
    float4 center = tex2D(s0, tex);
    float4 sum = 0;
    float wsum = 0;
    [unroll]
    for (int y = -1; y <= 1; y++)
    {
        [unroll]
        for (int x = -1; x <= 1; x++)
        {
            float4 c = tex2D(s0, tex + float2(x, y) * p1);
            float3 d = c.rgb - center.rgb;
            float w = exp(-dot(d, d) * Sigma - (x * x + y * y) * 0.5);
            sum += c * w;
            wsum += w;
        }
    }
    return sum / wsum;
}
