"""The flatbuffer schema of the ``Exported`` wire format and its flatc-generated reader/writer.

``exported_generated.py`` is generated from ``exported.fbs``; do not edit it
by hand (see docs/export-wire-format.md for the command).
"""
