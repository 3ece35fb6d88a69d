sampler2D s0 : register(s0);
sampler2D s1 : register(s1);
sampler2D s2 : register(s2);
float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float4 a = tex2D(s1, tex2D(s0, uv).ar);
    return tex2D(s2, a.gb) + a;
}
