// Debanding: compare the pixel to four random-offset neighbours; where all are close,
// take their average, and add a little dither.
sampler2D Source : register(s0);

float2 PixelSize;
float Threshold;
float Range;
float Grain;
float Iterations;

float Hash(float2 p)
{
    return frac(sin(dot(p, float2(12.9898, 78.233))) * 43758.5453);
}

float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float4 ori = tex2D(Source, uv);
    float3 acc = ori.rgb;
    float seed = Hash(uv);
    [unroll]
    for (int i = 1; i <= 2; i++)
    {
        float dist = Hash(float2(seed, i)) * Range * i;
        float dir = Hash(float2(i, seed)) * 6.2831853;
        float2 o = float2(cos(dir), sin(dir)) * dist * PixelSize;
        float3 ref = tex2Dlod(Source, float4(uv + o, 0, 0)).rgb;
        ref += tex2Dlod(Source, float4(uv - o, 0, 0)).rgb;
        ref += tex2Dlod(Source, float4(uv + float2(o.y, -o.x), 0, 0)).rgb;
        ref += tex2Dlod(Source, float4(uv - float2(o.y, -o.x), 0, 0)).rgb;
        ref *= 0.25;
        float3 diff = abs(acc - ref);
        if (max(diff.r, max(diff.g, diff.b)) < Threshold)
            acc = ref;
    }
    float dither = (Hash(uv + seed) - 0.5) * Grain;
    return float4(acc + dither, ori.a);
}
