#!/usr/bin/env bash
# A copy of this checkout at DEST with the opt-in compiled build (setup.py, PLAYHALL_COMPILE=1)
# made in place: the compiled modules sit beside their .py files there, so anything run from
# that copy (its tests, its bench/moves.py) uses them. The checkout itself is never touched,
# so no compiled module can shadow the .py files being edited.
#
#   bench/compiled_tree.sh DEST [PYTHON]      # PYTHON: one with mypy installed (the test extras)
set -euo pipefail
dest="$1"
python="${2:-$PWD/.venv/bin/python}"
cd "$(dirname "$0")/.."
mkdir -p "$dest"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$dest"
cd "$dest"
PLAYHALL_COMPILE=1 "$python" setup.py -q build_ext --inplace
# The benchmark's load generator too (bench/moves.py imports it from beside itself): it shares
# the other core with Redis, and compiled it takes about a fifth less CPU per move, so the
# load side stays further from that core's limit (docs/benchmarks.md).
(cd bench && MYPYPATH=../protocol:../server:../clients "$python" -m mypyc loadgen.py >/dev/null)
