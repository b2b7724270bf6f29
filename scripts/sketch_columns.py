# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""How many sketch columns S-PIE needs for how many flows (issue 50).

One flow sends `ratio` times every other flow's rate into a congested S-PIE
port; the rest send one packet a round each. Algorithm 2 admits a large
flow only until its count of admitted packets reaches the weighted
average's, so even a perfect sketch admits a share of it (about margin /
ratio: 0.30 at 4x). Collisions in a narrow sketch inflate every flow's
count and the weighted average with it, until the large flow is admitted
whole. This runs S-PIE's reference model (models/switch/spie.py, the P4's
registers and decisions, configured by the controller app) with the port
held congested and p at 0, so every drop is the sketch's, and prints the
large flow's admitted share for each column count and flow count. The
table in tna/spie/README.md ("How many columns") is its output.

    .venv/bin/python scripts/sketch_columns.py [--rounds 40]
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import yaml
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bfrt_controller.backends.model import ModelSwitch  # noqa: E402
from bfrt_controller.spie import names as n  # noqa: E402
from bfrt_controller.spie.app import SpieApp  # noqa: E402
from bfrt_controller.spie.config import DEFAULT_CONFIG, parse_config  # noqa: E402
from hw_profiles import load_profile  # noqa: E402
from models.switch.core import Match  # noqa: E402

PORT = 3  # the default config's S-PIE port (slot 0)
SENDER_PORT = 1
NOW_NS = 1_000_000_000
COLUMNS = (256, 1024, 4096)
FLOWS = (4, 16, 64, 128, 256, 512, 1024, 4096)


def spie_model(columns: int) -> tuple[SpieApp, ModelSwitch]:
    raw = copy.deepcopy(yaml.safe_load(DEFAULT_CONFIG.read_text()))
    raw["sketch"]["columns"] = columns
    # Slow enough that every packet is counted (no sampling) and the epoch
    # is the configured 1.07 s: the columns are all that varies.
    raw["sketch"]["line_rate_gbps"] = 0.01
    # Algorithm 2's rule (line 13): every packet of a flow judged large is
    # dropped, so the share admitted is the sketch's judgement alone.
    raw["sketch"]["large_drop_probability"] = 1.0
    switch = ModelSwitch("spie", load_profile("tofino"))
    app = SpieApp(switch, parse_config(raw))
    app.push_all()
    return app, switch


def hold_congested(switch: ModelSwitch) -> None:
    """A fresh update saying congested with p = 0, and a random value that
    counts every packet and drops none by p."""
    model = switch.model
    model.now_ns = NOW_NS
    now_ticks = (NOW_NS >> 6) & 0xFFFFFFFF
    held = (
        (n.PROB, 0),
        (f"{n.IG}.state", now_ticks),
        (f"{n.IG}.congested", now_ticks),
        # No PI step is due, so no update (of an empty queue) clears it.
        (f"{n.EG}.last_update_ticks", now_ticks),
    )
    for reg, value in held:
        model.register(reg).write(0, value)
    model.table("SwitchIngress.random_hook.random_override").add_or_modify(
        {"ig_intr_md.ingress_port": Match(SENDER_PORT)},
        "SwitchIngress.random_hook.inject",
        {"random_value": 0x7FFFFFFE},
    )


def frame(flow: int) -> bytes:
    return bytes(
        Ether(dst="02:00:00:00:00:01", src="00:00:00:00:01:01")
        / IP(src="10.0.1.1", dst="10.0.3.3")
        / UDP(sport=1024 + flow % 60000, dport=2000 + flow // 60000)
    )


def large_admitted_share(columns: int, flows: int, ratio: int, rounds: int) -> float:
    _app, switch = spie_model(columns)
    hold_congested(switch)
    model = switch.model
    packets = [frame(f) for f in range(flows)]
    sent = admitted = 0
    for _ in range(rounds):
        for f in range(flows):
            for _ in range(ratio if f == 0 else 1):
                out = model.send(SENDER_PORT, packets[f])
                if f == 0:
                    sent += 1
                    admitted += any(o.port == PORT for o in out)
    return admitted / sent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=40, help="packets each small flow sends")
    ap.add_argument("--ratio", type=int, default=4, help="the large flow's rate over the others'")
    args = ap.parse_args(argv)
    print(f"large flow at {args.ratio}x, {args.rounds} rounds: its admitted share")
    print("| columns | " + " | ".join(f"{f} flows" for f in FLOWS) + " |")
    print("|---|" + "---|" * len(FLOWS))
    for w in COLUMNS:
        shares = [large_admitted_share(w, f, args.ratio, args.rounds) for f in FLOWS]
        print(f"| {w} | " + " | ".join(f"{s:.2f}" for s in shares) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
