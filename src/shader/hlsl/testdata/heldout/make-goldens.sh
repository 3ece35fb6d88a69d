#!/usr/bin/env bash
# Remake the goldens: for each line of profiles.txt, Microsoft's d3dcompiler_43 (through
# msd3d, beside the project in ../shared/tools) compiles SOURCE.hlsl for each profile to
# SOURCE.PROFILE.bin, and D3DDisassemble lists it to SOURCE.PROFILE.txt. In this folder,
# or in the one given (../regressions uses it so).
set -euo pipefail
cd "${1:-$(dirname "$0")}"
msd3d=${MSD3D:-/work/shared/tools/msd3d}
grep -v '^#' profiles.txt | while read -r source profiles; do
  for p in $profiles; do
    "$msd3d" compile "$source.hlsl" "$p" main "$source.$p.bin" d3dcompiler_43.dll 0
    "$msd3d" disasm "$source.$p.bin" "$source.$p.txt"
  done
done
