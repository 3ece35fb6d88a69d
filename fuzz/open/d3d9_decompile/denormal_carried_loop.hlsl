int i0 : register(i0);
float4 c15 : register(c15);
float4 c16[20] : register(c16);
float4 main(float4 v0 : POSITION0) : POSITION
{
    float4 r0 = 0;
    float4 r4 = 0;
    int4 a0 = 0;
    r0.w = 2.2959e-41;
    for (int k0 = 0; k0 < i0; k0++)
    {
        a0.x = (int)floor((r0.w + c15.x) * 3.0 + 0.5);
        r4.xyz = v0.xyz * (a0.x == 4 ? float4(1, 2, 3, 4) : c16[a0.x]).xyz + r4.xyz;
        r0.w = r0.w * 1.0;
    }
    return r4;
}
