// Reflective surface: a cube-map reflection mixed by a Schlick Fresnel term.
sampler2D BaseMap : register(s0);
samplerCUBE EnvMap : register(s1);

float3 EyePosition;
float FresnelPower;
float ReflectAmount;
float4 Tint;

float4 main(float2 uv : TEXCOORD0, float3 worldPos : TEXCOORD1, float3 worldNormal : TEXCOORD2) : COLOR
{
    float3 n = normalize(worldNormal);
    float3 v = normalize(worldPos - EyePosition);
    float3 r = reflect(v, n);
    float4 env = texCUBE(EnvMap, r);
    float fresnel = 0.04 + 0.96 * pow(1.0 - saturate(dot(-v, n)), FresnelPower);
    float4 base = tex2D(BaseMap, uv);
    float3 c = lerp(base.rgb, env.rgb * Tint.rgb, saturate(fresnel * ReflectAmount * base.a));
    return float4(c, 1.0);
}
