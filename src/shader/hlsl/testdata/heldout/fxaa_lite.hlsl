// A simple edge anti-aliasing pass: luma contrast of the four neighbours decides whether
// to blend along the edge; flat areas return early.
sampler2D Screen : register(s0);

float2 RcpFrame;
float EdgeThreshold;
float EdgeThresholdMin;
float SubpixBlend;

float Luma(float3 c)
{
    return dot(c, float3(0.299, 0.587, 0.114));
}

float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float4 m = tex2Dlod(Screen, float4(uv, 0, 0));
    float lm = Luma(m.rgb);
    float ln = Luma(tex2Dlod(Screen, float4(uv + float2(0, -RcpFrame.y), 0, 0)).rgb);
    float ls = Luma(tex2Dlod(Screen, float4(uv + float2(0, RcpFrame.y), 0, 0)).rgb);
    float le = Luma(tex2Dlod(Screen, float4(uv + float2(RcpFrame.x, 0), 0, 0)).rgb);
    float lw = Luma(tex2Dlod(Screen, float4(uv + float2(-RcpFrame.x, 0), 0, 0)).rgb);
    float rangeMax = max(max(ln, ls), max(max(le, lw), lm));
    float rangeMin = min(min(ln, ls), min(min(le, lw), lm));
    float range = rangeMax - rangeMin;
    if (range < max(EdgeThresholdMin, rangeMax * EdgeThreshold))
        return m;
    bool horizontal = abs(ln + ls - 2.0 * lm) >= abs(le + lw - 2.0 * lm);
    float2 step = horizontal ? float2(0, RcpFrame.y) : float2(RcpFrame.x, 0);
    float g1 = horizontal ? abs(ln - lm) : abs(lw - lm);
    float g2 = horizontal ? abs(ls - lm) : abs(le - lm);
    if (g1 >= g2)
        step = -step;
    float blend = saturate(range / rangeMax) * SubpixBlend * 0.5;
    float4 other = tex2Dlod(Screen, float4(uv + step * 0.5, 0, 0));
    return lerp(m, other, blend);
}
