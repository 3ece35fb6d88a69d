sampler2D s0 : register(s0);
sampler2D s1 : register(s1);
float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float4 a = tex2D(s0, uv);
    return tex2D(s1, float2(a.a, a.r));
}
