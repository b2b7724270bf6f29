"""DA-DCTCP's switch program (its reference model, configured by its
controller app) as an evaluation scheme: ns-3's DCTCP senders react to its
CE marks and the queue stays near K, where `none` fills the buffer."""

from __future__ import annotations

import importlib.util

import pytest

from models.net.metrics import compute_metrics
from models.net.scenario import ScenarioError, load_scenario, parse_scenario
from models.net.schemes import check_buildable
from models.net.simulate import RunSpec, run_one

needs_ns3 = pytest.mark.skipif(
    importlib.util.find_spec("ns3") is None,
    reason="the ns3 wheel is not installed (pip install -e '.[eval]')",
)
HORIZON_S = 1.5


def _scenario(transport: str = "tcp") -> object:
    raw = load_scenario("tcp-smoke").model_dump()
    raw.update(
        name="dadctcp-test",
        duration_s=HORIZON_S,
        transport=transport,
        flows=[
            {"name": "d1", "src": "h1", "dst": "r1", "cc": "dctcp" if transport == "tcp" else None},
            {"name": "d2", "src": "h2", "dst": "r2", "cc": "dctcp" if transport == "tcp" else None},
        ],
        schemes={"dadctcp": {"k_packets": 20}, "dadctcp-dctcp": {"mode": "dctcp"}, "none": {}},
        claims=[],
    )
    if transport == "udp":
        for f in raw["flows"]:
            f.pop("cc")
    return parse_scenario(raw)


def test_dadctcp_with_udp_senders_is_refused_by_check() -> None:
    s = _scenario("udp")
    with pytest.raises(ScenarioError, match=r"schemes\.dadctcp.*transport: tcp"):
        check_buildable(s)  # type: ignore[arg-type]


@needs_ns3
def test_dctcp_senders_hold_the_queue_near_k_through_dadctcp() -> None:
    s = _scenario()
    runs = {name: run_one(s, RunSpec(name, "")) for name in ("dadctcp", "none")}  # type: ignore[arg-type]
    m = {name: compute_metrics(r, s).values for name, r in runs.items()}  # type: ignore[arg-type]
    da, none = runs["dadctcp"], runs["none"]
    assert all(t.ece_acks > 0 for t in da.tcp)
    assert da.drops_overflow == 0 and none.drops_overflow > 0
    assert m["dadctcp"]["queue_mean_packets"] < 0.4 * m["none"]["queue_mean_packets"]
    # Not bought with idle link: at least 85 % of the 10 Mb/s delivered.
    goodput_bps = sum(f.bytes_received for f in da.flows) * 8 / HORIZON_S
    assert goodput_bps > 0.85 * 10e6
