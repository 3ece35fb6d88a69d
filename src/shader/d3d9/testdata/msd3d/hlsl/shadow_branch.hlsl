// A uniform picks a branch that samples an interpolated coordinate and discards; the
// gradients of a value both branches compute come after it (the shape of a shadow-map
// pass with alpha-tested leaves).
float4 mode : register(c0);
sampler2D alphamap : register(s0);

float4 main(float4 pos : TEXCOORD0, float2 uv : TEXCOORD1) : COLOR
{
    float d;
    if (mode.x == 2.0 || mode.y == 1.0) {
        float4 t = tex2D(alphamap, uv);
        clip(t.a - 0.25);
        d = pos.z / pos.w;
    } else {
        d = pos.z * mode.y;
    }
    float g = ddx(d) * ddx(d) + ddy(d) * ddy(d);
    float4 c;
    if (mode.w == 1.0)
        c = float4(d, d * d + g, 0, 1);
    else
        c = float4(exp(d * 40), d, 0, 1);
    return c;
}
