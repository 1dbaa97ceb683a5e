#!/usr/bin/env bash
# The standing fuzz run: at least 10,000 toolkit-opt inputs and 10,000 structured
# export mutations (plus pass pipelines, `toolkit export inspect` and real
# toolkit-opt processes), with the counts printed. Exit status 1 on any crash,
# hang or unclean error; one reproducer per distinct failure is saved.
#
#   bash scripts/fuzz.sh                          # 10,000 of each, random seed
#   TOOLKIT_FUZZ_EXAMPLES=50000 bash scripts/fuzz.sh --seed 7
#   bash scripts/fuzz.sh --only export --findings /tmp/f
#
# Options are those of tests/fuzz/standing.py (--help). See docs/testing.md.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
. .venv/bin/activate
exec python tests/fuzz/standing.py "$@"
