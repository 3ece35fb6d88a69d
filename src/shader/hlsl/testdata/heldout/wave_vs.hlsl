// Water surface: a sum of WaveCount harmonics of one travelling wave, each half the
// height of the one before, displacing the vertex and bending its normal.
float4x4 WorldViewProj;
float2 WaveDir;
float4 WaveParams; // x amplitude, y frequency, z speed, w time
int WaveCount;

struct VsOut
{
    float4 pos : POSITION;
    float3 normal : TEXCOORD0;
    float height : TEXCOORD1;
};

VsOut main(float4 pos : POSITION)
{
    float h = 0;
    float2 slope = 0;
    float amp = WaveParams.x;
    float freq = WaveParams.y;
    for (int i = 0; i < WaveCount; i++)
    {
        float phase = dot(pos.xz, WaveDir) * freq + WaveParams.w * WaveParams.z * freq;
        float s, c;
        sincos(phase, s, c);
        h += s * amp;
        slope += WaveDir * (c * amp * freq);
        amp *= 0.5;
        freq *= 2.0;
    }
    VsOut o;
    o.pos = mul(float4(pos.x, pos.y + h, pos.z, 1), WorldViewProj);
    o.normal = normalize(float3(-slope.x, 1, -slope.y));
    o.height = h;
    return o;
}
