ps_2_0
dcl t0
dcl v0
texkill t0
nrm r0.xyz, t0
pow r1.x, t0.x, t0.y
sincos r2.xy, t0.x, c0, c1
crs r3.xyz, r0, t0
dp2add r4.x, t0, c2, c2.x
mov oC0, r0
