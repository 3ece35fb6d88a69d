// clip() of a uniform condition in ps_1_4: the legacy compilers write r0.xyz in phase 1
// and texkill r0 in phase 2, where r0.w is gone (texkill tests x, y and z only).
float4 k : register(c0);

float4 main() : COLOR
{
    if (k.x == 9.0)
        discard;
    return k;
}
