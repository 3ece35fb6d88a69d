// Barrel distortion of a curved screen, rounded corners and vignetting.
sampler2D Screen : register(s0);

float CurvatureAmount;
float RoundCornerAmount;
float SmoothBorderAmount;
float VignettingAmount;
float2 ScreenDims;
float2 QuadDims;

float2 Distort(float2 coord)
{
    float2 centered = coord - 0.5;
    float r2 = dot(centered, centered);
    float k = CurvatureAmount * 0.25;
    return centered * (1.0 + r2 * k) / (1.0 + k * 0.5) + 0.5;
}

float RoundCorner(float2 coord)
{
    float2 aspect = QuadDims / max(QuadDims.x, QuadDims.y);
    float2 p = abs(coord - 0.5) * 2.0 * aspect;
    float radius = max(RoundCornerAmount, 1e-3) * min(aspect.x, aspect.y);
    float2 d = max(p - (aspect - radius), 0.0);
    float dist = length(d) - radius;
    return saturate(-dist / max(SmoothBorderAmount, 1e-3) + 0.5);
}

float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float2 coord = Distort(uv);
    float4 c = tex2D(Screen, coord);
    if (coord.x < 0.0 || coord.y < 0.0 || coord.x > 1.0 || coord.y > 1.0)
        c = float4(0, 0, 0, 1);
    float2 v = uv - 0.5;
    float vignette = saturate(1.0 - dot(v, v) * VignettingAmount);
    c.rgb *= vignette * RoundCorner(coord);
    return c;
}
