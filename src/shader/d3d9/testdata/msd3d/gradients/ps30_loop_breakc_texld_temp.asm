ps_3_0
dcl_texcoord v0
dcl_2d s0
mov r1, c2
mul r2, v0, c3
loop aL, i0
break_gt r1.x, c0.x
texld r1, r2, s0
endloop
mov oC0, r1
