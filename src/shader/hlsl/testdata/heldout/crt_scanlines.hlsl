// CRT scanlines and shadow mask, in the manner of an arcade emulator's post pass.
sampler2D DiffuseSampler : register(s0);

float2 SourceDims;
float2 TargetDims;
float ScanlineAlpha;
float ScanlineScale;
float ScanlineHeight;
float ScanlineBrightScale;
float ScanlineBrightOffset;
float ScanlineOffset;
float3 Floor;
float ShadowAlpha;

struct PS_INPUT
{
    float4 Color : COLOR0;
    float2 TexCoord : TEXCOORD0;
};

static const float PI = 3.1415927;

float4 main(PS_INPUT Input) : COLOR
{
    float4 BaseColor = tex2D(DiffuseSampler, Input.TexCoord);

    // Shadow mask: one of three phosphor columns lit per target pixel.
    float column = frac(Input.TexCoord.x * TargetDims.x / 3.0) * 3.0;
    float3 mask = float3(column < 1.0, column >= 1.0 && column < 2.0, column >= 2.0);
    BaseColor.rgb = lerp(BaseColor.rgb, BaseColor.rgb * mask * 3.0, ShadowAlpha);

    float InnerSine = Input.TexCoord.y * SourceDims.y * ScanlineScale;
    float ScanBrightMod = sin(InnerSine * PI + ScanlineOffset * SourceDims.y);
    float3 ScanBrightness = lerp(1.0, (pow(ScanBrightMod * ScanBrightMod, ScanlineHeight) * ScanlineBrightScale + 1.0) * 0.5, ScanlineAlpha);
    float3 Scanned = BaseColor.rgb * (ScanBrightness + ScanlineBrightOffset);

    float3 Result = Floor + (1.0 - Floor) * Scanned;
    return float4(Result * Input.Color.rgb, BaseColor.a);
}
