# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The BF-Runtime controller and the `tofcc` CLI.

One `Switch` interface with two backends (backends/: BF-Runtime gRPC and the
reference model), one package per program (its config schema, app, status
columns and commands, found through tofcc_common.registry), and what runs
them: the CLI (cli.py, context.py), the service (service.py, supervisor.py,
metrics.py) and the front-panel ports (ports.py).
"""
