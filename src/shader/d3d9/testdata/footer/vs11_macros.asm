vs_1_1
dcl_position v0
dcl_normal v1
exp r0, v0.x
log r1, v0.y
frc r2, v0
lit r3, v1
expp r4, v0.z
logp r5, v0.w
m4x4 oPos, v0, c0
m3x3 r6.xyz, v1, c4
dst r7, r0, r1
add oD0, r7, r6
