// Structs, matrices and default values, none placed by hand.
struct Light
{
    float4 color;
    float3 direction;
    float range;
};
Light lights[2];
float3x3 normalMat = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
row_major float2x4 skew;
float4 ambient = { 0.25, 0.5, 0.75, 1 };
float gain = 2.5;
int count = 3;
float4 main(float3 n : TEXCOORD0, float4 c : COLOR0) : COLOR
{
    float3 nn = mul(n, normalMat);
    float4 r = ambient;
    for (int i = 0; i < 2; i++)
        r += lights[i].color * saturate(dot(nn, lights[i].direction)) / lights[i].range;
    return r * gain + mul(skew, float4(nn, 1)).xyxy + count * c;
}
