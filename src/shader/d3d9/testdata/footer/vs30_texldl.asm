vs_3_0
dcl_position v0
dcl_texcoord v1
dcl_position o0
dcl_texcoord o1
dcl_2d s0
texldl r0, v1, s0
sincos r1.xy, v0.x
nrm r2.xyz, v0
m4x4 o0, v0, c0
mad o1, r0, r1.x, r2
