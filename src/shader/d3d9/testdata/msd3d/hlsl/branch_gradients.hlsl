// Gradients of interpolated inputs inside a forced branch: dsx, dsy, texldb, texldp.
float4 k : register(c0);
sampler2D s : register(s0);

float4 main(float4 uv : TEXCOORD0) : COLOR
{
    float4 c = k;
    [branch] if (uv.z > k.x)
        c = ddx(uv) + ddy(uv) + tex2Dbias(s, uv) + tex2Dproj(s, uv);
    return c;
}
