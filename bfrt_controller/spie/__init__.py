# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""S-PIE (tna/spie/spie.p4): PIE with a count-min sketch, and plain PIE."""
