// Normal-mapped diffuse with a glossy specular from the normal map's alpha and a
// tangent-space light from the vertex shader.
sampler2D BaseMap : register(s0);
sampler2D NormalMap : register(s1);

float4 AmbientColor;
float4 LightColor;
float SpecularPower;
float4 Toggles; // x: specular on, y: alpha test reference

struct PS_INPUT
{
    float2 uv : TEXCOORD0;
    float3 lightTS : TEXCOORD1;
    float3 viewTS : TEXCOORD2;
    float4 vertexColor : COLOR0;
};

float4 main(PS_INPUT IN) : COLOR0
{
    float4 base = tex2D(BaseMap, IN.uv);
    float4 nmap = tex2D(NormalMap, IN.uv);
    float3 n = normalize(nmap.xyz * 2.0 - 1.0);
    float3 l = normalize(IN.lightTS);
    float3 v = normalize(IN.viewTS);
    float ndl = dot(n, l);
    float3 h = normalize(l + v);
    float spec = pow(saturate(dot(n, h)), SpecularPower) * nmap.a * Toggles.x;
    float3 diffuse = AmbientColor.rgb + LightColor.rgb * saturate(ndl);
    float3 color = base.rgb * diffuse * IN.vertexColor.rgb + LightColor.rgb * spec * (ndl > 0);
    return float4(color, base.a * IN.vertexColor.a);
}
