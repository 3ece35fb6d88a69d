// Depth of field: a circle of confusion from linear depth, then a disc of eight taps
// weighted against bleeding of sharp foreground into the blur.
sampler2D SceneBuffer : register(s0);
sampler2D DepthBuffer : register(s1);

float4 DOFParams;   // x focus distance, y focus range, z max blur radius, w far plane
float2 PixelSize;

static const float2 Disc[8] = {
    float2(1.0, 0.0), float2(0.7071, 0.7071), float2(0.0, 1.0), float2(-0.7071, 0.7071),
    float2(-1.0, 0.0), float2(-0.7071, -0.7071), float2(0.0, -1.0), float2(0.7071, -0.7071)
};

float LinearDepth(float2 uv)
{
    return tex2Dlod(DepthBuffer, float4(uv, 0, 0)).r * DOFParams.w;
}

float CoC(float depth)
{
    return saturate(abs(depth - DOFParams.x) / DOFParams.y);
}

float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float depth = LinearDepth(uv);
    float coc = CoC(depth);
    float4 sum = tex2Dlod(SceneBuffer, float4(uv, 0, 0));
    float weight = 1.0;
    [unroll]
    for (int i = 0; i < 8; i++)
    {
        float2 tap = uv + Disc[i] * PixelSize * coc * DOFParams.z;
        float tapCoc = CoC(LinearDepth(tap));
        float w = (LinearDepth(tap) < depth) ? tapCoc : 1.0;
        sum += tex2Dlod(SceneBuffer, float4(tap, 0, 0)) * w;
        weight += w;
    }
    return sum / weight;
}
