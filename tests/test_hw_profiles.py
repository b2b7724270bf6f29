# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hw_profiles import PROFILE_DIR, ProfileError, load_profile, load_profile_file


@pytest.mark.parametrize("chip", ["tofino", "tofino2"])
def test_embedded_profiles_load(chip: str) -> None:
    p = load_profile(chip)
    assert p.chip == chip
    assert p.bytes_to_cells(0) == 0
    assert p.bytes_to_cells(1) == 1
    assert p.bytes_to_cells(p.cell_bytes) == 1
    assert p.bytes_to_cells(p.cell_bytes + 1) == 2


def test_chip_facts_differ_where_the_chips_do() -> None:
    t1, t2 = load_profile("tofino"), load_profile("tofino2")
    assert (t1.cell_bytes, t2.cell_bytes) == (80, 176)
    assert (t1.max_queue_id, t2.max_queue_id) == (31, 127)
    assert (t1.max_timedelta_ns, t2.max_timedelta_ns) == (2**18 - 1, 2**32 - 1)
    # The driver's normal-session maxima (pipe_mgr_get_max_mirror_sessions):
    # Tofino keeps 1016..1023 for coalescing sessions.
    assert t1.valid_mirror_session(1015) and not t1.valid_mirror_session(1016)
    assert t2.valid_mirror_session(255) and not t2.valid_mirror_session(256)
    assert not t1.valid_mirror_session(0)


def test_front_panel_ports_start_where_the_chip_puts_them() -> None:
    t1, t2 = load_profile("tofino"), load_profile("tofino2")
    # Tofino2 pipe 0: 0 PCIe, 2-5 CPU Ethernet, front panel from 8.
    assert [t2.front_panel_port(n) for n in range(3)] == [8, 9, 10]
    assert [t1.front_panel_port(n) for n in range(3)] == [0, 1, 2]
    for p in (t1, t2):
        panel = {p.front_panel_port(n) for n in range(8)}
        assert not panel & set(p.cpu_eth_ports)
        assert not panel & set(p.recirculation_ports)
    with pytest.raises(ValueError, match="non-negative"):
        t2.front_panel_port(-1)


def _write(tmp_path: Path, mutate) -> Path:  # type: ignore[no-untyped-def]
    raw = yaml.safe_load((PROFILE_DIR / "tofino.yaml").read_text())
    mutate(raw)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r: r.pop("cell_bytes"), "missing key 'cell_bytes'"),
        (lambda r: r.update(cells_per_furlong=3), "unknown key 'cells_per_furlong'"),
        (lambda r: r.update(cell_bytes="80"), "key 'cell_bytes' must be an integer"),
        (lambda r: r.update(cell_bytes=True), "key 'cell_bytes' must be an integer"),
        (lambda r: r.update(buffer_cells=0), "key 'buffer_cells' must be positive"),
        (lambda r: r.update(mau_stages=-12), "key 'mau_stages' must be positive"),
        (lambda r: r.pop("recirculation_port_gbps"), "missing key 'recirculation_port_gbps'"),
        (
            lambda r: r.update(recirculation_port_gbps=10**6),
            "key 'recirculation_port_gbps' must be at most 10000",
        ),
        (lambda r: r.update(chip="tofino9"), "key 'chip' must be one of"),
        # The entry is named since pydantic validates the profile (issue 46).
        (
            lambda r: r.update(pktgen_ports=[68, "x"]),
            "key 'pktgen_ports' entry 1 must be an integer",
        ),
        (
            lambda r: r.update(cpu_eth_ports=[-2]),
            "key 'cpu_eth_ports' entry 0 must not be negative",
        ),
        (lambda r: r.update(cpu_eth_ports=[]), "key 'cpu_eth_ports' must be a non-empty list"),
        (lambda r: r.update(p4_arch=""), "key 'p4_arch' must be a non-empty string"),
        (lambda r: r.update(recirculation_ports=[9999]), "key 'recirculation_ports' port 9999"),
        (lambda r: r.update(mirror_session_min=2000), "key 'mirror_session_min' exceeds"),
        (lambda r: r.update(pipes=2**40), "key 'pipes' must be at most 16"),
        (lambda r: r.update(port_id_bits=2**40), "key 'port_id_bits' must be at most 32"),
        (lambda r: r.update(buffer_cells=2**70), "key 'buffer_cells' must be at most"),
        (lambda r: r.update(pipes=3), "key 'pipes' must be a power of two"),
        (lambda r: r.update(recirculation_ports=[68]), "one port per pipe (4), got 1"),
        (lambda r: r.update(pktgen_ports=[68, 196, 324, 68]), "entry 3 (port 68)"),
        (lambda r: r.update(ports_per_pipe=200), "key 'ports_per_pipe' 200 does not fit"),
        (lambda r: r.update(queues_per_port_group=64), "key 'queues_per_port_group' 64"),
        (lambda r: r.update(front_panel_port_min=72), "key 'front_panel_port_min' 72"),
        (lambda r: r.update({7: 1}), "key 7 must be a string"),
        (lambda r: r.update(capacity_gbps=50), "key 'capacity_gbps' 50 is below one port"),
    ],
)
def test_bad_profile_names_file_and_key(tmp_path: Path, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    path = _write(tmp_path, mutate)
    with pytest.raises(ProfileError) as exc:
        load_profile_file(path)
    assert message in str(exc.value)
    assert str(path) in str(exc.value)


def test_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n")
    with pytest.raises(ProfileError, match="top level must be a mapping"):
        load_profile_file(path)


def test_unknown_chip_name() -> None:
    with pytest.raises(ProfileError, match="unknown chip"):
        load_profile("tofino3")


def test_chip_must_match_the_file_name(tmp_path: Path) -> None:
    raw = yaml.safe_load((PROFILE_DIR / "tofino.yaml").read_text())
    path = tmp_path / "tofino2.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ProfileError, match=r"key .chip. is .tofino. but the file is tofino2\.yaml"):
        load_profile_file(path)
    path.rename(tmp_path / "lab.yaml")  # any other name: the file's own chip stands
    assert load_profile_file(tmp_path / "lab.yaml").chip == "tofino"


def test_unreadable_profile_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "tofino.yaml"
    path.write_bytes(b"\xff\xfe binary")
    with pytest.raises(ProfileError, match=r"tofino\.yaml: not UTF-8"):
        load_profile_file(path)
    with pytest.raises(ProfileError, match="is a directory"):
        load_profile_file(tmp_path)
