ps_1_3
def c0, 0.5, 0.25, 0.125, 1
tex t0
texkill t1
cmp r0, r0, c0, t0
dp4 r1, t0, c0
cnd r0, r0.a, r1, c0
lrp r1, c0, r0, t0
mad r0, r1, c0, r0
