# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""The ns-3 evaluation: each mechanism in simulated networks, against `none`
and its paper's baselines.

It uses what the rest of the project provides (the reference models from
models/, the controller apps from bfrt_controller/) and models nothing of its
own: scenarios (scenarios/*.yaml) name a topology, a workload and the schemes
to run; `tofcc eval` runs them and writes metrics, plots and a report.
"""
