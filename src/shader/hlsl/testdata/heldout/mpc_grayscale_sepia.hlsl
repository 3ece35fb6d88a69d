// Grayscale and sepia for a video player, chosen by a float parameter.
sampler s0 : register(s0);
float4 p0 : register(c0);

static const float3 LumaCoeff = float3(0.2126, 0.7152, 0.0722);
static const float4x4 SepiaMatrix = {
    0.393, 0.769, 0.189, 0,
    0.349, 0.686, 0.168, 0,
    0.272, 0.534, 0.131, 0,
    0, 0, 0, 1
};

float Strength;

float4 main(float2 tex : TEXCOORD0) : COLOR
{
    float4 c0 = tex2D(s0, tex);
    float gray = dot(c0.rgb, LumaCoeff);
    float4 sepia = mul(SepiaMatrix, c0);
    float4 result = (p0.w > 0.5) ? sepia : float4(gray.xxx, c0.a);
    return lerp(c0, result, Strength);
}
