// Static geometry, one directional light and fog: the shape of Oblivion's SLS vertex
// shaders, written for the shaderfs example package.
vs_2_0
dcl_position v0
dcl_normal v1
dcl_texcoord v2
m4x4 oPos, v0, c0          // clip position
dp3 r0.x, v1, c4           // N.L
max r0.x, r0.x, c6.x       // clamp at zero
mul oD0, r0.x, c5          // light colour
mov oT0.xy, v2
dp4 r1.z, v0, c2           // depth for fog
mad oFog, r1.z, c7.x, c7.y
