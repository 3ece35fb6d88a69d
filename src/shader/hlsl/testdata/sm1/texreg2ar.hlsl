sampler2D s0 : register(s0);
sampler2D s1 : register(s1);
float4 main(float2 uv : TEXCOORD0) : COLOR
{
    return tex2D(s1, tex2D(s0, uv).ar);
}
