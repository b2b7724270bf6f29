# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""Models, and only models: executable reference models of every P4 program
(switch/), the queueing model and PMQECN's optimiser (queueing/, optimize/),
host-side reaction points and windows (hosts/), the baselines' algorithms
(baselines/), and the shared test-vector format and runner (vectors/).

Nothing here needs ns-3 or the controller; the evaluation (evaluation/) and
the controller (bfrt_controller/) build on it.
"""
