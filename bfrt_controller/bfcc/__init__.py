# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The BFCC app: config, intended switch state, status and run-time tuning."""
