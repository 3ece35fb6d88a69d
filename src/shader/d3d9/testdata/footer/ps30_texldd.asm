ps_3_0
dcl_texcoord0 v0
dcl_texcoord1 v1
dcl_2d s0
texldd r0, v0, s0, v1, v1
mov oC0, r0
