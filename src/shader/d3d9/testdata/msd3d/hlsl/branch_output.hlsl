// A forced branch whose arms each give the colour: fxc writes oC0 inside both arms of the
// if_comp, once by sampling an interpolated coordinate straight into it.
float4 k : register(c0);
sampler2D s : register(s0);

float4 main(float4 uv : TEXCOORD0) : COLOR
{
    float4 c = k;
    [branch] if (uv.z > k.x)
        c = tex2D(s, uv.xy);
    return c;
}
