"""Command-line tools, thin over the library: ``toolkit-opt`` (``opt.py``) and
``toolkit-run`` (``run.py``). Nothing imports this package."""
