ps_2_x
dcl t0
dcl_2d s0
mov r0, c0
mov r1, c2
if_gt r0.x, c1.x
dsx r1, t0
endif
mov oC0, r1
