"""The package's version (``toolkit.__version__``), in a module of its own so the export's provenance record can
read it without importing the root package (whose ``load_module`` reaches back into ``export``)."""

__version__ = "0.1.0"
