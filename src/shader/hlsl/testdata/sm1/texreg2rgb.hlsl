sampler2D s0 : register(s0);
sampler3D s1 : register(s1);
float4 main(float2 uv : TEXCOORD0) : COLOR
{
    return tex3D(s1, tex2D(s0, uv).rgb);
}
