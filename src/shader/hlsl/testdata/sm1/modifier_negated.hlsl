sampler2D s0 : register(s0);
sampler2D s1 : register(s1);
float4 k : register(c2);
float4 main(float2 uv : TEXCOORD0, float2 uv1 : TEXCOORD1, float4 col : COLOR0) : COLOR
{
    float4 a = tex2D(s0, uv) - 0.5;
    float4 b = tex2D(s1, uv1) * 2 - 1;
    return (k - a * col) * (1 - col.a) - b * col.a;
}
