vs_1_1
dcl_position v0
m3x3 r0.xyz, v0, c0
mov oPos, r0
