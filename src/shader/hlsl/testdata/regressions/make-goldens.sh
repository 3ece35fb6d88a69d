#!/usr/bin/env bash
# Remake the goldens as ../heldout/make-goldens.sh does (its comment says how), here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../heldout/make-goldens.sh" "$here"
