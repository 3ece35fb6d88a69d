// The car body's pixel shader (car_body.hlsl's ps_body) as `pixel.hlsl` of a FlatOut
// effect takes it: entry `main`. Copied into the ps.1.3 block of a mounted car body
// effect, it is compiled for ps_1_3 and spliced into the block:
//   cp car_body_pixel.hlsl /mnt/car_body.sha/pixel.hlsl

#include <flatout.hlsl>

sampler2D BaseColour : register(s0);   // t0: the paint
samplerCUBE Reflection : register(s1); // t1: reflection, specular in alpha
sampler2D Dirt : register(s2);         // t2: the dirt
samplerCUBE Lighting : register(s3);   // t3: N.L in alpha

float4 main(float2 colourUv : TEXCOORD0, float3 reflection : TEXCOORD1,
    float2 dirtUv : TEXCOORD2, float3 lighting : TEXCOORD3, FlatOutColours fo) : COLOR
{
    float4 specular = texCUBE(Reflection, reflection);
    float4 paint = lerp(tex2D(BaseColour, colourUv), tex2D(Dirt, dirtUv), BLEND);
    float4 c = saturate(specular * FRESNEL + paint);
    float4 l = texCUBE(Lighting, lighting).a * SHADOW;
    l.rgb = saturate(AMBIENT * 0.6 + l.rgb);
    return c * l;
}
