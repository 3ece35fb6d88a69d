// Pixel lighting from an array of point lights in a struct, with a per-light test.
sampler2D DiffuseMap : register(s0);

struct PointLight
{
    float4 position; // xyz, w: 1/radius
    float4 color;
};

PointLight Lights[4];
int LightCount;
float3 Ambient;
float SpecPower;
float3 EyePosition;

float3 Shade(PointLight light, float3 p, float3 n, float3 v)
{
    float3 d = light.position.xyz - p;
    float3 l = normalize(d);
    float att = saturate(1.0 - dot(d, d) * light.position.w * light.position.w);
    float ndl = dot(n, l);
    float3 result = 0;
    if (ndl > 0)
    {
        float3 h = normalize(l + v);
        result = light.color.rgb * (ndl + pow(saturate(dot(n, h)), SpecPower)) * att;
    }
    return result;
}

float4 main(float2 uv : TEXCOORD0, float3 worldPos : TEXCOORD1, float3 normal : TEXCOORD2) : COLOR
{
    float3 n = normalize(normal);
    float3 v = normalize(EyePosition - worldPos);
    float3 light = Ambient;
    for (int i = 0; i < 4; i++)
    {
        if (i < LightCount)
            light += Shade(Lights[i], worldPos, n, v);
    }
    float4 diff = tex2D(DiffuseMap, uv);
    return float4(diff.rgb * light, diff.a);
}
