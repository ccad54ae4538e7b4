"""limits.py - the importer's input limits, the same values as include/fusetile/limits.h (tests/python/test_import_errors.py checks they agree)."""

# Largest model graph file (`fusetile import GRAPH.json`, written by
# --graph-only), bytes: FT_MAX_GRAPH_BYTES.  Checked before the file is
# parsed.  The graphs of bench/run's models are under 1 MiB.
MAX_GRAPH_BYTES = 64 << 20
