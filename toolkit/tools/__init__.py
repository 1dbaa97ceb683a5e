"""Command-line tools, thin over the library: ``toolkit-opt`` (``opt.py``), ``toolkit-run`` (``run.py``),
``toolkit export ...`` (``export_cli.py``) and the demo (``demo.py``).

What the tools share: ``driver.py`` (flags, exit codes, reading and writing
files, running a tool's body), ``diagnostics.py`` (``file:line:col:``
messages), ``argument_values.py`` (``--arg`` values checked against a
parameter's type) and ``checks.py`` (the meaning of ``check.*`` custom
calls). Nothing imports this package.
"""
