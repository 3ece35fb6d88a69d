// Phosphor persistence: the previous frame decays per channel and the brighter one wins.
sampler2D CurrentFrame : register(s0);
sampler2D PreviousFrame : register(s1);

float3 Phosphor;
bool Passthrough;

float4 main(float4 color : COLOR0, float2 uv : TEXCOORD0, float2 prev_uv : TEXCOORD1) : COLOR
{
    float4 current = tex2D(CurrentFrame, uv);
    float3 previous = tex2D(PreviousFrame, prev_uv).rgb * Phosphor;
    float3 outc = max(current.rgb, previous);
    if (Passthrough)
        outc = current.rgb;
    return float4(outc, current.a) * color;
}
