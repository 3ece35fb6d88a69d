// Luma-only sharpening: a blur of four diagonal taps, the difference in luma, clamped.
sampler2D BackBuffer : register(s0);

float2 PixelSize;
float SharpStrength;
float SharpClamp;
float OffsetBias;
bool ShowSharpen;

static const float3 CoefLuma = float3(0.2126, 0.7152, 0.0722);

float4 main(float2 tex : TEXCOORD0) : COLOR
{
    float4 colorInput = tex2D(BackBuffer, tex);
    float3 ori = colorInput.rgb;
    float3 sharp_strength_luma = CoefLuma * SharpStrength;

    float3 blur_ori = tex2D(BackBuffer, tex + float2(PixelSize.x, -PixelSize.y) * 0.5 * OffsetBias).rgb;
    blur_ori += tex2D(BackBuffer, tex - PixelSize * 0.5 * OffsetBias).rgb;
    blur_ori += tex2D(BackBuffer, tex + PixelSize * 0.5 * OffsetBias).rgb;
    blur_ori += tex2D(BackBuffer, tex - float2(PixelSize.x, -PixelSize.y) * 0.5 * OffsetBias).rgb;
    blur_ori *= 0.25;

    float3 sharp = ori - blur_ori;
    float4 sharp_strength_luma_clamp = float4(sharp_strength_luma * (0.5 / SharpClamp), 0.5);
    float sharp_luma = saturate(dot(float4(sharp, 1.0), sharp_strength_luma_clamp));
    sharp_luma = (SharpClamp * 2.0) * sharp_luma - SharpClamp;

    float3 outputcolor = ori + sharp_luma;
    if (ShowSharpen)
        outputcolor = saturate(0.5 + (sharp_luma * 4.0)).rrr;
    return float4(saturate(outputcolor), colorInput.a);
}
