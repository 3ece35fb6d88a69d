// Colour through YIQ: saturation, hue rotation and a tint, as a composite-video effect does.
sampler2D Source : register(s0);

float Saturation;
float HueShift;
float3 Tint;

static const float3x3 RGBToYIQ = {
    0.299, 0.587, 0.114,
    0.596, -0.274, -0.322,
    0.211, -0.523, 0.312
};
static const float3x3 YIQToRGB = {
    1.0, 0.956, 0.621,
    1.0, -0.272, -0.647,
    1.0, -1.106, 1.703
};

float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float4 c = tex2D(Source, uv);
    float3 yiq = mul(RGBToYIQ, c.rgb);
    float s, co;
    sincos(HueShift, s, co);
    float2 iq = float2(yiq.y * co - yiq.z * s, yiq.y * s + yiq.z * co) * Saturation;
    float3 rgb = mul(YIQToRGB, float3(yiq.x, iq));
    return float4(rgb * Tint, c.a);
}
