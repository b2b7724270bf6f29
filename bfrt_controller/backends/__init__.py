# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Switch backends: `model` (reference model, no SDE) and `bfrt` (BF-Runtime gRPC)."""
