// A forced branch over a sample of a computed coordinate: fxc refuses it (X3528).
float4 k : register(c0);
sampler2D s : register(s0);

float4 main(float4 uv : TEXCOORD0) : COLOR
{
    float4 c = k;
    float2 t = uv.xy * k.yz;
    [branch] if (uv.z > k.x)
        c = tex2D(s, t);
    return c;
}
