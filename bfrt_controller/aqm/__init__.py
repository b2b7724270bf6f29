# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""RED and CoDel (tna/aqm/aqm.p4) on a switch."""
