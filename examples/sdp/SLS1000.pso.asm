// Base texture lit by the vertex colour, with the glow map added: the shape of
// Oblivion's SLS pixel shaders.
ps_2_0
dcl t0.xy
dcl v0
dcl_2d s0
dcl_2d s1
texld r0, t0, s0
texld r1, t0, s1
mul r0.rgb, r0, v0
mad r0.rgb, r1, c0, r0
mov oC0, r0
