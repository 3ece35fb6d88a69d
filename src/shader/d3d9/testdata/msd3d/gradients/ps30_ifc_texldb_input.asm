ps_3_0
dcl_texcoord v0
dcl_2d s0
mov r0, c0
mov r1, c2
if_gt r0.x, c1.x
texldb r1, v0, s0
endif
mov oC0, r1
