# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The PMQECN app: config, intended switch state, and the optimise-and-apply loop."""
