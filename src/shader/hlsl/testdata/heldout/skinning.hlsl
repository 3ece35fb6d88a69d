// Skinned vertices: four bones per vertex from a palette of 3x4 matrices, indexed by
// blend indices packed in a D3DCOLOR, then tangent space for a normal-mapped pixel shader.
float4x4 ViewProj;
float4x3 Bones[29];
float3 LightDirection;
float3 EyePosition;

struct VS_INPUT
{
    float4 position : POSITION;
    float3 normal : NORMAL;
    float3 tangent : TANGENT;
    float3 binormal : BINORMAL;
    float2 uv : TEXCOORD0;
    float4 weights : BLENDWEIGHT;
    float4 indices : BLENDINDICES;
};

struct VS_OUTPUT
{
    float4 position : POSITION;
    float2 uv : TEXCOORD0;
    float3 lightTS : TEXCOORD1;
    float3 viewTS : TEXCOORD2;
};

VS_OUTPUT main(VS_INPUT IN)
{
    VS_OUTPUT OUT;
    int4 idx = D3DCOLORtoUBYTE4(IN.indices);
    float4 w = IN.weights;
    w.w = 1.0 - w.x - w.y - w.z;

    float3 pos = 0;
    float3 nrm = 0;
    float3 tan = 0;
    float3 bin = 0;
    for (int i = 0; i < 4; i++)
    {
        float4x3 m = Bones[idx[i]];
        pos += mul(IN.position, m) * w[i];
        nrm += mul(IN.normal, (float3x3)m) * w[i];
        tan += mul(IN.tangent, (float3x3)m) * w[i];
        bin += mul(IN.binormal, (float3x3)m) * w[i];
    }
    OUT.position = mul(float4(pos, 1.0), ViewProj);
    float3x3 tbn = float3x3(normalize(tan), normalize(bin), normalize(nrm));
    OUT.lightTS = mul(tbn, -LightDirection);
    OUT.viewTS = mul(tbn, EyePosition - pos);
    OUT.uv = IN.uv;
    return OUT;
}
