// Per-vertex lighting of a static mesh: world-view-projection, a sun and two point
// lights, linear fog, as an open-world game's default object shader.
float4x4 ModelViewProj;
float4x4 ObjToWorld;
float3 EyePosition;
float3 SunDirection;
float4 SunColor;
float4 AmbientColor;
float4 PointPositions[2];   // xyz position, w radius
float4 PointColors[2];
float2 FogParam;            // x start, y 1/(end-start)
float4 FogColor;

struct VS_INPUT
{
    float4 position : POSITION;
    float3 normal : NORMAL;
    float2 uv : TEXCOORD0;
    float4 color : COLOR0;
};

struct VS_OUTPUT
{
    float4 position : POSITION;
    float2 uv : TEXCOORD0;
    float4 diffuse : COLOR0;
    float4 fog : COLOR1;
};

VS_OUTPUT main(VS_INPUT IN)
{
    VS_OUTPUT OUT;
    OUT.position = mul(ModelViewProj, IN.position);
    float3 worldPos = mul(ObjToWorld, IN.position).xyz;
    float3 n = normalize(mul((float3x3)ObjToWorld, IN.normal));

    float3 light = AmbientColor.rgb + SunColor.rgb * saturate(dot(n, -SunDirection));
    for (int i = 0; i < 2; i++)
    {
        float3 toLight = PointPositions[i].xyz - worldPos;
        float dist = length(toLight);
        float att = saturate(1.0 - dist / PointPositions[i].w);
        light += PointColors[i].rgb * saturate(dot(n, toLight / dist)) * att * att;
    }
    OUT.diffuse = float4(light * IN.color.rgb, IN.color.a);
    OUT.uv = IN.uv;

    float eyeDist = length(worldPos - EyePosition);
    float fog = saturate((eyeDist - FogParam.x) * FogParam.y);
    OUT.fog = float4(FogColor.rgb, fog);
    return OUT;
}
