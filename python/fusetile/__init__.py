"""fusetile: Python tools around the fusetile scheduler (the model importer lives in fusetile.importer)."""

__all__ = []
