"""Executable reference models of the tna/ programs (see registry.py)."""
