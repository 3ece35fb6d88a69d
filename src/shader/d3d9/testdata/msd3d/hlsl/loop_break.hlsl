// A sample of an interpolated coordinate in a loop with a break: fxc refuses it (X3526).
float4 k : register(c0);
int4 n : register(i0);
sampler2D s : register(s0);

float4 main(float4 uv : TEXCOORD0) : COLOR
{
    float4 c = 0;
    [loop] for (int i = 0; i < n.x; i++) {
        if (c.x > k.x)
            break;
        c += tex2D(s, uv.xy);
    }
    return c;
}
