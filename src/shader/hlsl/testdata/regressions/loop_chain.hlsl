// Two loops in a row, each changing one lane of a value the other reads: the second
// starts from what the first leaves, which nothing reads after it.
int Count : register(i0);
float4 Scale : register(c0);

float4 main(float4 position : POSITION0) : POSITION
{
    float4 a = position * Scale;
    float4 b = position + Scale;
    for (int i = 0; i < Count; i++)
    {
        b = b * a + Scale;
        a.w = a.w + 1.0;
    }
    for (int j = 0; j < Count; j++)
    {
        b = b * a.w + Scale;
        a.x = a.x + 2.0;
    }
    return b + a;
}
