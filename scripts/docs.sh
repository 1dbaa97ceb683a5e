#!/usr/bin/env bash
# Build the documentation site into site/ (or the folder given as $1): the guides in docs/ and the API reference,
# one page per public module, generated from the docstrings (scripts/generate_api_pages.py writes docs/api/).
# `mkdocs build --strict`: any warning (a broken cross-reference, a docstring mkdocstrings cannot read) fails.
# Needs the docs extra: pip install -e '.[docs]' (scripts/setup.sh installs it with the test extra).
set -euo pipefail
export NO_MKDOCS_2_WARNING=1  # Material's banner about its successor
cd "$(dirname "$0")/.."
if [ -x .venv/bin/python ] && [ -z "${VIRTUAL_ENV:-}" ]; then
  . .venv/bin/activate
fi
python -c "import mkdocs, mkdocstrings_handlers.python, material" 2>/dev/null \
  || { echo "docs.sh: MkDocs is not installed: pip install -e '.[docs]'" >&2; exit 1; }
python scripts/generate_api_pages.py
site="${1:-site}"
PYTHONPATH="scripts${PYTHONPATH:+:$PYTHONPATH}" python -m mkdocs build --strict --site-dir "$site"
echo "docs.sh: the site is in $site/ (open $site/index.html)"
