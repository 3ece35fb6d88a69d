ps_3_0
dcl_texcoord v0
dcl_2d s0
mov r0, c0
mov r1, c2
mul r2, v0, c3
setp_gt p0, r0, c1
(p0) dsx r1, r2
mov oC0, r1
