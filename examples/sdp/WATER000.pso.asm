; Still water: the normal map perturbs the reflection lookup (ps_1_1 texbem), colour and
; alpha computed together (co-issue).
ps.1.1
tex t0
texbem t1, t0
mul r0.rgb, t1, c0
+ mov r0.a, c1.a
