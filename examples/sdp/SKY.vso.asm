// Sky dome: position and two texture coordinates, no constant table (assembled shaders
// have none; ctab/SKY.vso.json shows null).
vs_1_1
dcl_position v0
dcl_texcoord v1
m4x4 oPos, v0, c0
mov oT0, v1
mov oT1, v1
