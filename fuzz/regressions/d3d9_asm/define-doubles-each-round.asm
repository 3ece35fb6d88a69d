#define R R R
vs_1_1
mov r0, R
