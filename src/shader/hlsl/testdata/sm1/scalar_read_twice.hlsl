// A scalar read by a product spread over four lanes and read again later: the product's
// register must not be the scalar's.
float4 i : register(c0);
float4 n : register(c1);
float4 main() : COLOR
{
    float a = dot(i.xyz, float3(1, 0, 0));
    float b = dot(n.xyz, float3(1, 0, 0));
    float w = (a * b) * 2;
    return -w * b + a;
}
