# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""`pytest -m quick`: the edit-test loop's subset, marked by tests/conftest.py.

Every program's vectors on the reference model (the shared ones and
p4testgen's), the CLI on every program (bad input included) and each
program's controller on the fake BF-Runtime switch: a few minutes on two
cores where the whole suite takes half an hour (README gives both times).
Not in it: the ns-3 evaluation, the daemon's process and metrics-server
tests, packaging, the P4 build reports and the property-based fuzzing.
tests/test_quick_subset.py checks that every file named here exists and
that each program's controller is in it.
"""

from __future__ import annotations

QUICK = frozenset(
    {
        # Vectors on the model, every program and both chips.
        "tests/test_vectors_on_model.py",
        "tests/test_generated_vectors.py",
        "tests/test_p4_model_parity.py",
        "tests/test_vector_format.py",
        # The CLI.
        "tests/controller/test_cli.py",
        "tests/controller/test_bfcc_cli.py",
        "tests/controller/test_cli_hardening.py",
        "tests/controller/test_malformed_cli.py",
        "tests/controller/test_set_args.py",
        # The controller: each program's app and config, the BF-Runtime
        # backend, the TM and what is read back from the switch.
        "tests/controller/test_aqm_controller.py",
        "tests/controller/test_bfcc_app.py",
        "tests/controller/test_bfcc_config.py",
        "tests/controller/test_dadctcp_controller.py",
        "tests/controller/test_p4qcn_controller.py",
        "tests/controller/test_pmqecn_app.py",
        "tests/controller/test_pmqecn_config.py",
        "tests/test_spie_sizing.py",
        "tests/test_spie_columns.py",
        "tests/controller/test_bfrt_backend.py",
        "tests/controller/test_switch_truth.py",
        "tests/controller/test_source_binding.py",
        "tests/controller/test_retuning.py",
        "tests/controller/test_ports.py",
        "tests/controller/test_pfc_watchdog.py",
        "tests/controller/test_tm_pfc.py",
        "tests/controller/test_tm_pool.py",
        "tests/controller/test_tm_ppg.py",
        "tests/controller/test_tm_shaping.py",
        "tests/controller/test_documents.py",
        "tests/test_safe_yaml.py",
        "tests/test_quick_subset.py",
    }
)
