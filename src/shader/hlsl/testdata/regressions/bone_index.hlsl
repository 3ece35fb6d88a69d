// Arrays of matrices and of structs read at an index the code computes, each as the
// compilers compute a0 for it: a D3DCOLOR's bytes (D3DCOLORtoUBYTE4), a cast to int, a
// float index, and a loop's counter.
struct Light
{
    float3 position;
    float4 colour;
    float range;
};

float4x3 Bones[20];
Light Lights[4];
float4x4 ViewProj;

struct VS_OUTPUT
{
    float4 position : POSITION;
    float4 colour : COLOR0;
};

VS_OUTPUT main(float4 p : POSITION, float4 packed : BLENDINDICES, float4 w : BLENDWEIGHT,
               float3 n : NORMAL)
{
    int4 idx = D3DCOLORtoUBYTE4(packed);
    float3 pos = mul(p, Bones[idx.x]) * w.x + mul(p, Bones[idx.y]) * w.y
               + mul(p, Bones[(int)(w.z * 8)]) * w.z
               + mul(p, Bones[w.w * 4]) * (1 - w.x - w.y - w.z);
    VS_OUTPUT o;
    o.position = mul(float4(pos, 1), ViewProj);
    float4 c = 0;
    [loop] for (int i = 0; i < 3; i++)
    {
        float3 d = Lights[i].position - pos;
        c += Lights[i].colour * saturate(dot(normalize(d), n))
           * saturate(1 - length(d) / Lights[i].range);
    }
    o.colour = c;
    return o;
}
