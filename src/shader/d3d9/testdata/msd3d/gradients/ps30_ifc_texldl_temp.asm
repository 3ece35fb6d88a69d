ps_3_0
dcl_texcoord v0
dcl_2d s0
mov r0, c0
mov r1, c2
mul r2, v0, c3
if_gt r0.x, c1.x
texldl r1, r2, s0
endif
mov oC0, r1
