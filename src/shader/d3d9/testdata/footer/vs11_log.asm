vs_1_1
dcl_position v0
log r0, v0
mov oPos, r0
