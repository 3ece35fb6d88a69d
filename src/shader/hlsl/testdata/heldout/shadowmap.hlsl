// Shadow-map lookup with four-tap percentage-closer filtering; the light-space position
// arrives projected in a texture coordinate.
sampler2D ShadowMap : register(s0);
sampler2D DiffuseMap : register(s1);

float4 ShadowParams; // x bias, y 1/size, z darkness
float4 LightColor;
float4 AmbientColor;

static const float2 Taps[4] = {
    float2(-0.5, -0.5), float2(0.5, -0.5), float2(-0.5, 0.5), float2(0.5, 0.5)
};

float Lit(float4 lightPos)
{
    float3 p = lightPos.xyz / lightPos.w;
    float2 uv = p.xy * float2(0.5, -0.5) + 0.5;
    float lit = 0;
    for (int i = 0; i < 4; i++)
    {
        float depth = tex2D(ShadowMap, uv + Taps[i] * ShadowParams.y).r;
        lit += (p.z - ShadowParams.x <= depth) ? 0.25 : 0.0;
    }
    return lit;
}

float4 main(float2 uv : TEXCOORD0, float4 lightPos : TEXCOORD1, float3 normal : TEXCOORD2, float3 lightDir : TEXCOORD3) : COLOR
{
    float4 diff = tex2D(DiffuseMap, uv);
    float ndl = saturate(dot(normalize(normal), -lightDir));
    float shadow = lerp(1.0 - ShadowParams.z, 1.0, Lit(lightPos));
    float3 light = AmbientColor.rgb + LightColor.rgb * ndl * shadow;
    return float4(diff.rgb * light, diff.a);
}
