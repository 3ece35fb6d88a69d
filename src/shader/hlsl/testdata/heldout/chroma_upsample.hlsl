// Chroma upsampling of a 4:2:0 picture: luma at full size, chroma interpolated with a
// four-tap cubic across a half-resolution plane, then BT.709 to RGB.
sampler2D LumaPlane : register(s0);
sampler2D ChromaPlane : register(s1);

float2 ChromaSize;
float2 ChromaPixel;

static const float3x3 BT709 = {
    1.0, 0.0, 1.5748,
    1.0, -0.1873, -0.4681,
    1.0, 1.8556, 0.0
};

float4 CubicWeights(float t)
{
    float t2 = t * t;
    float t3 = t2 * t;
    float4 w;
    w.x = -0.5 * t3 + t2 - 0.5 * t;
    w.y = 1.5 * t3 - 2.5 * t2 + 1.0;
    w.z = -1.5 * t3 + 2.0 * t2 + 0.5 * t;
    w.w = 0.5 * t3 - 0.5 * t2;
    return w;
}

float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float y = tex2D(LumaPlane, uv).r;
    float pos = uv.x * ChromaSize.x - 0.5;
    float f = frac(pos);
    float base = (pos - f + 0.5) * ChromaPixel.x;
    float4 w = CubicWeights(f);
    float2 c = tex2D(ChromaPlane, float2(base - ChromaPixel.x, uv.y)).rg * w.x;
    c += tex2D(ChromaPlane, float2(base, uv.y)).rg * w.y;
    c += tex2D(ChromaPlane, float2(base + ChromaPixel.x, uv.y)).rg * w.z;
    c += tex2D(ChromaPlane, float2(base + 2.0 * ChromaPixel.x, uv.y)).rg * w.w;
    float3 yuv = float3((y - 16.0 / 255.0) * (255.0 / 219.0), c - 0.5);
    return float4(saturate(mul(BT709, yuv)), 1.0);
}
