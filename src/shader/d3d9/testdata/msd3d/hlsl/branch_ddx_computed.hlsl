// A forced branch over the gradient of a computed value: fxc refuses it (X3528).
float4 k : register(c0);

float4 main(float4 uv : TEXCOORD0) : COLOR
{
    float4 c = k;
    [branch] if (uv.z > k.x)
        c = ddx(uv * k.y);
    return c;
}
