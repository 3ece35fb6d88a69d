// FlatOut's car body in standard HLSL, with the names flatout.hlsl gives what the game
// puts where (after the car body of the FlatOut shader notes):
//   shaderfs d3d9 compile car_body.hlsl -T vs_1_1 -E vs_body -o car_body.vso
//   shaderfs d3d9 compile car_body.hlsl -T ps_1_1 -E ps_body -o car_body.pso

#include <flatout.hlsl>

sampler2D BaseColour : register(s0);   // t0: the paint
samplerCUBE Reflection : register(s1); // t1: reflection, specular in alpha
sampler2D Dirt : register(s2);         // t2: the dirt
samplerCUBE Lighting : register(s3);   // t3: N.L in alpha

float4 vs_body(float3 pos : POSITION, float3 nrm : NORMAL, float4 diff : COLOR0,
    float2 uv : TEXCOORD0,
    out float2 colourUv : TEXCOORD0, out float3 reflection : TEXCOORD1,
    out float2 dirtUv : TEXCOORD2, out float3 lighting : TEXCOORD3,
    out FlatOutColours fo) : POSITION
{
    colourUv = uv;
    dirtUv = uv;
    float3 worldNormal = RotateToWorld(nrm);
    // The lighting cube map is read at the world normal.
    lighting = worldNormal;
    // The reflection cube map at the eye's reflection.
    float3 incident = normalize(LocalToWorld(pos) - CAMERA.xyz);
    reflection = reflect(incident, worldNormal);
    // The vertex colour blends clean and dirty paint.
    BLEND = diff.a;
    EXTRA = 0;
    float f = 1 - abs(dot(incident, worldNormal));
    FRESNEL = f * f * f * 0.5 + 0.5;
    AMBIENT = sqrt(float3(dot(worldNormal, LIGHTPLANES[0].xyz),
        dot(worldNormal, LIGHTPLANES[1].xyz), dot(worldNormal, LIGHTPLANES[2].xyz)));
    return LocalToScreen(pos);
}

float4 ps_body(float2 colourUv : TEXCOORD0, float3 reflection : TEXCOORD1,
    float2 dirtUv : TEXCOORD2, float3 lighting : TEXCOORD3, FlatOutColours fo) : COLOR
{
    float4 specular = texCUBE(Reflection, reflection);
    float4 paint = lerp(tex2D(BaseColour, colourUv), tex2D(Dirt, dirtUv), BLEND);
    float4 c = saturate(specular * FRESNEL + paint);
    float4 l = texCUBE(Lighting, lighting).a * SHADOW;
    l.rgb = saturate(AMBIENT * 0.6 + l.rgb);
    return c * l;
}
