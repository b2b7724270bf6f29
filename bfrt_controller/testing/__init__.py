"""Test doubles for running the controller without an SDE or a switch."""

from .fake_bfrt_grpc import FakeBfrtGrpc, StatusCode

__all__ = ["FakeBfrtGrpc", "StatusCode"]
