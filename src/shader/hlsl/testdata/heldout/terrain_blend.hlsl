// Terrain: four layers blended by vertex-colour weights, lit by a sun term from the
// vertex shader, fogged toward the fog colour.
sampler2D Layer0 : register(s0);
sampler2D Layer1 : register(s1);
sampler2D Layer2 : register(s2);
sampler2D Layer3 : register(s3);

float4 FogColor;
float TileScale;

struct PS_IN
{
    float2 uv : TEXCOORD0;
    float4 blend : COLOR0;
    float4 light : COLOR1;
    float fog : TEXCOORD1;
};

float4 main(PS_IN IN) : COLOR
{
    float2 tuv = IN.uv * TileScale;
    float4 weights = IN.blend / max(dot(IN.blend, 1.0), 0.001);
    float3 c = tex2D(Layer0, tuv).rgb * weights.x;
    c += tex2D(Layer1, tuv).rgb * weights.y;
    c += tex2D(Layer2, tuv).rgb * weights.z;
    c += tex2D(Layer3, tuv).rgb * weights.w;
    c *= IN.light.rgb;
    c = lerp(c, FogColor.rgb, saturate(IN.fog));
    return float4(c, 1.0);
}
