// Ambient occlusion from the depth buffer: a fixed kernel of samples around the pixel,
// each occluding when in front by less than a range, multiplied into the scene.
sampler2D DepthBuffer : register(s0);
sampler2D SceneBuffer : register(s1);
sampler2D NoiseMap : register(s2);

float4 AOParams; // x radius, y range, z strength, w far
float2 NoiseScale;

static const float3 Kernel[8] = {
    float3(0.53, 0.12, 0.30), float3(-0.41, 0.36, 0.15), float3(0.10, -0.62, 0.44),
    float3(-0.22, -0.19, 0.71), float3(0.76, 0.41, 0.05), float3(-0.69, 0.05, 0.38),
    float3(0.27, 0.83, 0.22), float3(-0.05, -0.35, 0.91)
};

float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float depth = tex2Dlod(DepthBuffer, float4(uv, 0, 0)).r * AOParams.w;
    float3 rnd = normalize(tex2Dlod(NoiseMap, float4(uv * NoiseScale, 0, 0)).xyz * 2.0 - 1.0);
    float occlusion = 0;
    [loop]
    for (int i = 0; i < 8; i++)
    {
        float3 s = reflect(Kernel[i], rnd) * AOParams.x;
        float2 suv = uv + s.xy / max(depth, 1.0);
        float sd = tex2Dlod(DepthBuffer, float4(suv, 0, 0)).r * AOParams.w;
        float diff = depth - sd;
        occlusion += (diff > 0.01 && diff < AOParams.y) ? 1.0 - diff / AOParams.y : 0.0;
    }
    float ao = 1.0 - occlusion / 8.0 * AOParams.z;
    float4 scene = tex2D(SceneBuffer, uv);
    return float4(scene.rgb * saturate(ao), scene.a);
}
