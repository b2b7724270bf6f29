# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Test doubles for running the controller without an SDE or a switch: a fake
`bfrt_grpc` that refuses what the SDE's server refuses, backends built on it,
a model switch that fails on cue. Tests import them as `doubles` (pytest's
pythonpath); the wheel does not ship them and no product module imports them."""

from .fake_bfrt_grpc import FakeBfrtGrpc, StatusCode

__all__ = ["FakeBfrtGrpc", "StatusCode"]
