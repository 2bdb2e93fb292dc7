"""Nightly incremental runs over Delta Lake state (night.py, state.py)."""
