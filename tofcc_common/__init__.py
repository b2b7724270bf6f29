# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The registry of programs (registry.py): what every package may import to
find a program's parts. It imports nothing of the project, so no package
has to import upward to use it.
"""
