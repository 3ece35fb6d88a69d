ps_3_0
dcl_texcoord0 v0
dcl_texcoord1 v1
dcl_2d s0
dsx r0, v0
mov oC0, r0
