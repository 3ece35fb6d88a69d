ps_1_4
def c0, 0.5, 0.25, 0.125, 1
texld r0, t0
texcrd r1.rgb, t1
texkill t2
bem r2.rg, r0, r1
phase
texld r3, r2
cmp r0, r0, c0, r3
dp4 r1, r3, c0
lrp r0, c0, r0, r1
