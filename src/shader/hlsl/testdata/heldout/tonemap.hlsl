// HDR tone mapping: exposure from the average luminance, a filmic curve, white point,
// gamma; bloom added before the curve.
sampler2D HDRBuffer : register(s0);
sampler2D AvgLuma : register(s1);
sampler2D BloomBuffer : register(s2);

float4 ToneParams; // x key, y white, z bloom strength, w gamma
bool UseFilmic;

float3 Filmic(float3 x)
{
    const float A = 0.15, B = 0.50, C = 0.10, D = 0.20, E = 0.02, F = 0.30;
    return ((x * (A * x + C * B) + D * E) / (x * (A * x + B) + D * F)) - E / F;
}

float3 Reinhard(float3 x, float white)
{
    return x * (1.0 + x / (white * white)) / (1.0 + x);
}

float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float3 hdr = tex2D(HDRBuffer, uv).rgb;
    float avg = max(tex2D(AvgLuma, float2(0.5, 0.5)).r, 0.001);
    hdr += tex2D(BloomBuffer, uv).rgb * ToneParams.z;
    float3 exposed = hdr * (ToneParams.x / avg);
    float3 mapped;
    if (UseFilmic)
        mapped = Filmic(exposed * 2.0) / Filmic(ToneParams.y);
    else
        mapped = Reinhard(exposed, ToneParams.y);
    return float4(pow(saturate(mapped), 1.0 / ToneParams.w), 1.0);
}
