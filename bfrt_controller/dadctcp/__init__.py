# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""DA-DCTCP on a switch: slope-aware marking thresholds and Algorithm 2."""
