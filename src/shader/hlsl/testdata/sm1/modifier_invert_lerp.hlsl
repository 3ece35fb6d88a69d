sampler2D s0 : register(s0);
float4 k : register(c1);
float4 main(float2 uv : TEXCOORD0, float4 col : COLOR0) : COLOR
{
    float4 t = tex2D(s0, uv);
    return lerp(col, k, 1 - t.a) + (2 * col - 1);
}
