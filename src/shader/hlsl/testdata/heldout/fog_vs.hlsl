// Sky and distant objects: exponential-squared height fog, computed per vertex, chosen
// by a uniform flag, with the view vector for a sky gradient.
float4x4 WorldViewProj;
float4x4 World;
float3 CameraPos;
float4 FogParams;   // x density, y height falloff, z base height, w max
float4 FogColor;
float4 SkyUpper;
float4 SkyLower;
bool HeightFog;

struct VS_OUTPUT
{
    float4 pos : POSITION;
    float4 color : COLOR0;
    float fogFactor : FOG;
    float3 viewDir : TEXCOORD0;
};

VS_OUTPUT main(float4 pos : POSITION, float4 color : COLOR0)
{
    VS_OUTPUT o;
    o.pos = mul(pos, WorldViewProj);
    float3 wp = mul(pos, World).xyz;
    float3 view = wp - CameraPos;
    float dist = length(view);
    float density = FogParams.x;
    if (HeightFog)
        density *= exp(-max(wp.y - FogParams.z, 0.0) * FogParams.y);
    float f = dist * density;
    float fog = exp(-f * f);
    o.fogFactor = max(fog, 1.0 - FogParams.w);
    float up = saturate(view.y / dist * 0.5 + 0.5);
    o.color = lerp(SkyLower, SkyUpper, smoothstep(0.0, 1.0, up)) * color;
    o.viewDir = view / dist;
    return o;
}
