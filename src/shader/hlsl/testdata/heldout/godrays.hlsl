// Light shafts: a radial blur toward the sun's screen position over the occlusion
// buffer, with decay per step, added to the scene.
sampler2D SceneBuffer : register(s0);
sampler2D OcclusionBuffer : register(s1);

float4 SunScreen;   // xy position, z visibility
float4 RayParams;   // x density, y weight, z decay, w exposure
float3 RayColor;

#define SAMPLES 12

float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float3 scene = tex2D(SceneBuffer, uv).rgb;
    float2 delta = (uv - SunScreen.xy) * (RayParams.x / SAMPLES);
    float2 coord = uv;
    float illumination = 1.0;
    float rays = 0;
    [unroll]
    for (int i = 0; i < SAMPLES; i++)
    {
        coord -= delta;
        float s = tex2Dlod(OcclusionBuffer, float4(coord, 0, 0)).r;
        rays += s * illumination * RayParams.y;
        illumination *= RayParams.z;
    }
    float3 shafts = rays * RayParams.w * SunScreen.z * RayColor;
    return float4(scene + shafts, 1.0);
}
