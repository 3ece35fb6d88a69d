// Constants placed by register() beside constants the compiler places.
float4 tint : register(c5);
float4 offsets[3] : register(c9);
float4 scale;
sampler2D diffuse : register(s3);
sampler2D detail;
bool doubled : register(b2);
int4 steps : register(i1);
float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float4 r = tint + offsets[2] + scale + tex2D(diffuse, uv) + tex2D(detail, uv);
    if (doubled)
        r *= 2;
    for (int i = 0; i < steps.x; i++)
        r += 0.125;
    return r;
}
