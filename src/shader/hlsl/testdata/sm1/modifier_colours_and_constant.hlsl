float4 k : register(c1);
float4 main(float4 col : COLOR0, float4 spec : COLOR1) : COLOR
{
    return (col - 0.5) * (1 - spec) + (k * 2 - 1) * spec;
}
