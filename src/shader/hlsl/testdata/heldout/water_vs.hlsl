// Water surface: a height from a displacement texture fetched in the vertex shader plus
// a sum of directional waves, with the normal from the waves' derivatives.
sampler2D Displacement : register(s0);

float4x4 WorldViewProj;
float Time;
float DisplacementScale;
float3 EyePosition;

struct Wave
{
    float2 direction;
    float amplitude;
    float frequency;
    float speed;
};

Wave Waves[3];

struct VS_OUT
{
    float4 position : POSITION;
    float2 uv : TEXCOORD0;
    float3 normal : TEXCOORD1;
    float3 view : TEXCOORD2;
};

VS_OUT main(float4 pos : POSITION, float2 uv : TEXCOORD0)
{
    VS_OUT o;
    float h = tex2Dlod(Displacement, float4(uv, 0, 0)).r * DisplacementScale;
    float2 slope = 0;
    for (int i = 0; i < 3; i++)
    {
        float phase = dot(Waves[i].direction, pos.xz) * Waves[i].frequency + Time * Waves[i].speed;
        float s, c;
        sincos(phase, s, c);
        h += Waves[i].amplitude * s;
        slope += Waves[i].direction * (Waves[i].amplitude * Waves[i].frequency * c);
    }
    float4 p = float4(pos.x, pos.y + h, pos.z, 1.0);
    o.position = mul(p, WorldViewProj);
    o.uv = uv;
    o.normal = normalize(float3(-slope.x, 1.0, -slope.y));
    o.view = EyePosition - p.xyz;
    return o;
}
