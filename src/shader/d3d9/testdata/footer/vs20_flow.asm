vs_2_0
defi i0, 3, 0, 1, 0
dcl_position v0
dcl_normal v1
mov r0, c10
sincos r1.xy, v0.x, c20, c21
nrm r2.xyz, v1
pow r3, v0.x, v0.y
crs r4.xyz, r2, v1
abs r5, v0
loop aL, i0
  add r0, r0, c[aL]
endloop
rep i0
  add r0, r0, r5
endrep
if b0
  mul r0, r0, r3.x
else
  add r0, r0, r4
endif
call l0
m4x4 oPos, v0, c0
mov oD0, r0
ret
label l0
mad r0, r0, r1.x, r2
ret
