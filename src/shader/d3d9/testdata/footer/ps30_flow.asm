ps_3_0
defi i0, 4, 0, 1, 0
def c0, 0, 1, 0.5, 0.25
dcl_texcoord0 v0
dcl_2d s0
mov r0, c0.x
dsx r1, v0
dsy r2, v0
texldd r3, v0, s0, r1, r2
loop aL, i0
  add r0, r0, v0
  break_ge r0.x, c0.y
endloop
setp_gt p0, v0, c0.x
if p0.x
  texldl r4, v0, s0
  add r0, r0, r4
endif
texkill v0
call l0
mov oC0, r0
ret
label l0
mad r0, r0, r3, c0.z
ret
