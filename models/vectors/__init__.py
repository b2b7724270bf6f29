"""Shared test vectors: format, packet building, and the runner."""
