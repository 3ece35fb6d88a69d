// Levels: TV range (16-235) to PC range, with black point, white point and gamma.
sampler s0 : register(s0);

float BlackPoint;
float WhitePoint;
float Gamma;
bool ExpandTVRange;

float4 main(float2 tex : TEXCOORD0) : COLOR
{
    float4 c = tex2D(s0, tex);
    float3 rgb = c.rgb;
    if (ExpandTVRange)
        rgb = (rgb - 16.0 / 255.0) * (255.0 / 219.0);
    rgb = saturate((rgb - BlackPoint) / max(WhitePoint - BlackPoint, 1.0 / 255.0));
    rgb = pow(rgb, 1.0 / Gamma);
    return float4(rgb, c.a);
}
