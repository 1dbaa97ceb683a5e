#!/usr/bin/env bash
# Everything too long for the default suite (scripts/test.sh), in one command:
#   1. the standing fuzz run (scripts/fuzz.sh: >= 10,000 toolkit-opt inputs, >= 10,000 export mutations);
#   2. the whole JAX shape-polymorphism corpus at other sizes against JAX (scripts/corpus.sh).
# About 17 minutes on 2 cores. Exit status 1 if either part fails.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
bash scripts/fuzz.sh || status=1
bash scripts/corpus.sh || status=1
exit $status
