// Parallax offset mapping: one height lookup shifts the texture coordinates along the
// view direction before the diffuse and normal lookups.
sampler2D DiffuseMap : register(s0);
sampler2D NormalMap : register(s1);
sampler2D HeightMap : register(s2);

float2 ParallaxScaleBias;
float3 LightColor;
float3 Ambient;

float4 main(float2 uv : TEXCOORD0, float3 lightTS : TEXCOORD1, float3 viewTS : TEXCOORD2) : COLOR
{
    float3 v = normalize(viewTS);
    float height = tex2D(HeightMap, uv).r * ParallaxScaleBias.x + ParallaxScaleBias.y;
    float2 puv = uv + height * v.xy;
    float4 diff = tex2D(DiffuseMap, puv);
    float3 n = tex2D(NormalMap, puv).xyz * 2.0 - 1.0;
    float3 l = normalize(lightTS);
    float ndl = saturate(dot(n, l));
    float3 r = reflect(-l, n);
    float spec = pow(saturate(dot(r, v)), 16.0) * diff.a;
    return float4(diff.rgb * (Ambient + LightColor * ndl) + spec * LightColor, 1.0);
}
