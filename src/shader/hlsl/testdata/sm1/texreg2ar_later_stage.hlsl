sampler2D s0 : register(s0);
sampler2D s2 : register(s2);
float4 main(float2 uv : TEXCOORD0) : COLOR
{
    return tex2D(s2, tex2D(s0, uv).ar);
}
