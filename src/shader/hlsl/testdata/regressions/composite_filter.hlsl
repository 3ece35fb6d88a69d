// A composite-video decoder: a windowed-sinc low-pass over 32 taps, four taps a pass,
// demodulating luma and two chroma carriers. Several float4 sines and cosines are live
// at once in the loop's body.
sampler2D Source : register(s0);
float2 TexelSize;
float Carrier = 3.58;
float Phase;
float LumaCut = 2.5;
float NotchLow = 1.9;
float NotchHigh = 2.2;
float ChromaCut = 0.9;

static const float4 TapOffset = float4(0.0, 1.0, 2.0, 3.0);

float4 main(float2 uv : TEXCOORD0) : COLOR
{
    float4 luma = 0.0;
    float4 inPhase = 0.0;
    float4 quadrature = 0.0;
    for (float k = -16.0; k < 16.0; k += 4.0)
    {
        float4 n = k + TapOffset;
        float4 x = uv.x + TexelSize.x * n;
        float4 s = float4(tex2D(Source, float2(x.x, uv.y)).r,
                          tex2D(Source, float2(x.y, uv.y)).r,
                          tex2D(Source, float2(x.z, uv.y)).r,
                          tex2D(Source, float2(x.w, uv.y)).r);
        float4 window = 0.5 + 0.5 * cos(n * (3.14159265 / 16.0));
        float4 yArg = LumaCut * n;
        float4 cArg = ChromaCut * n;
        float4 lowArg = NotchLow * n;
        float4 highArg = NotchHigh * n;
        float4 ySinc = yArg != 0.0 ? sin(yArg) / yArg : 1.0;
        float4 notch = n != 0.0 ? (sin(lowArg) - sin(highArg)) / (3.14159265 * n) : 0.0;
        float4 cSinc = cArg != 0.0 ? sin(cArg) / cArg : 1.0;
        float4 carrier = Carrier * x / TexelSize.x + Phase;
        luma += s * window * (ySinc - notch);
        inPhase += s * window * cSinc * cos(carrier);
        quadrature += s * window * cSinc * sin(carrier);
    }
    float y = dot(luma, 1.0) * LumaCut / 3.14159265;
    float i = dot(inPhase, 2.0) * ChromaCut / 3.14159265;
    float q = dot(quadrature, 2.0) * ChromaCut / 3.14159265;
    return float4(y + 0.956 * i + 0.621 * q,
                  y - 0.272 * i - 0.647 * q,
                  y - 1.106 * i + 1.703 * q, 1.0);
}
