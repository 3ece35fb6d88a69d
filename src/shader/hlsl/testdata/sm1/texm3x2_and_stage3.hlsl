// A bump map (stage 0) turned by the rows of stages 1 and 2 into the coordinates of an
// environment map (stage 2), lit by a light map read at TEXCOORD3 as it comes in.
sampler2D Bump : register(s0);
sampler2D Environment : register(s2);
sampler2D Light : register(s3);
float4 strength : register(c1);

float4 main(float2 uv : TEXCOORD0, float3 row0 : TEXCOORD1, float3 row1 : TEXCOORD2,
    float2 lightUv : TEXCOORD3, float4 diffuse : COLOR0) : COLOR
{
    float3 n = tex2D(Bump, uv).rgb * 2 - 1;
    float4 env = tex2D(Environment, float2(dot(row0, n), dot(row1, n)));
    return env * strength + tex2D(Light, lightUv) * diffuse;
}
