ps_2_0
dcl t0
dcl t1
dcl_2d s0
dcl_cube s1
texld r0, t0, s0
texldp r1, t1, s0
texldb r2, t0, s1
texkill t1
mul r0, r0, r1
mad r0, r2, c0, r0
mov oC0, r0
