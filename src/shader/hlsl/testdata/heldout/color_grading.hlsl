// Colour grading: contrast, saturation and vibrance, then a 16x16x16 look-up volume.
sampler2D Scene : register(s0);
sampler3D GradingLUT : register(s1);

float Contrast;
float Saturation;
float Vibrance;
float LUTAmount;

float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float3 c = tex2D(Scene, uv).rgb;
    c = (c - 0.5) * Contrast + 0.5;
    float luma = dot(c, float3(0.2126, 0.7152, 0.0722));
    c = lerp(luma.xxx, c, Saturation);
    float maxc = max(c.r, max(c.g, c.b));
    float minc = min(c.r, min(c.g, c.b));
    float sat = maxc - minc;
    c = lerp(luma.xxx, c, 1.0 + Vibrance * (1.0 - sat));
    c = saturate(c);
    float3 lutCoord = c * (15.0 / 16.0) + 0.5 / 16.0;
    float3 graded = tex3D(GradingLUT, lutCoord).rgb;
    return float4(lerp(c, graded, LUTAmount), 1.0);
}
