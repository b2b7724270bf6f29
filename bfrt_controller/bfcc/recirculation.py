# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""BFCC's recirculation: the pipes a config uses, their sessions and
recirculation ports, and the worst-case load each pipe's port carries,
checked against its capacity (tna/bfcc/README.md, "Recirculation bandwidth"
and "Pipes"; issue 50, finding 3)."""

from __future__ import annotations

from dataclasses import dataclass

from hw_profiles import HwProfile

from ..common import guarded_ports, pipe_of
from ..errors import ConfigError
from .schema import BfccConfig, Params, ReactionPoint


def config_pipes(cfg: BfccConfig, profile: HwProfile) -> list[int]:
    """The pipes holding a port the config names, in order. Registers are per
    pipe and a sender's packets read bp_state in the ingress pipe of the port
    they arrive on, so backpressure is copied to each of these pipes."""
    return sorted({pipe_of(port, profile) for port in guarded_ports(cfg, own_ports(cfg))})


def own_ports(cfg: BfccConfig) -> set[int]:
    """The ports of BFCC's own sections: upstream, congestion and reaction points."""
    return (
        {u.port for u in cfg.upstream_ports}
        | {cp.port for cp in cfg.congestion_points}
        | {rp.port for rp in cfg.reaction_points}
    )


def recirculation_sessions(cfg: BfccConfig, profile: HwProfile) -> dict[int, int]:
    """pipe -> the mirror session to that pipe's recirculation port, for every
    pipe the config uses: recirculation_session for the first, the next ids
    for the next (none without reaction points). A fake's original
    recirculates through its reaction port's own pipe; backpressure goes
    round the pipes through theirs."""
    if not cfg.reaction_points or cfg.recirculation_session is None:
        return {}
    return {
        pipe: cfg.recirculation_session + i for i, pipe in enumerate(config_pipes(cfg, profile))
    }


def recirculation_ports(cfg: BfccConfig, profile: HwProfile) -> dict[int, int]:
    """pipe -> its recirculation port (hw profile), for the pipes with a session."""
    return {
        pipe: profile.recirculation_ports[pipe] for pipe in recirculation_sessions(cfg, profile)
    }


def recirculation_level_cells(p: Params, profile: HwProfile) -> int:
    """The recirculation table's level_cells: whole cells within the level."""
    return p.recirculation_level_bytes // profile.cell_bytes


@dataclass(frozen=True)
class RecirculationLoad:
    """The worst case a pipe's recirculation port carries: every reaction
    point whose fakes' originals recirculate through it, at its line rate,
    at the degree that recirculates most (1/(RT+1) of its slots; RT 1 at
    severe: half), against what the port carries (hw profile)."""

    pipe: int
    port: int
    load_gbps: float
    capacity_gbps: float
    # (index in reaction_points, the port's worst share in Gb/s), in order.
    shares: tuple[tuple[int, float], ...]
    rt_packets: int

    @property
    def over(self) -> bool:
        return self.load_gbps > self.capacity_gbps


def line_rate_gbps(rp: ReactionPoint, profile: HwProfile) -> float:
    """A reaction port's speed: its rate_mbps, else the chip's fastest port
    (the worst case a port of unknown speed can be)."""
    return rp.rate_mbps / 1000 if rp.rate_mbps is not None else float(profile.max_port_gbps)


def recirculation_loads(cfg: BfccConfig, p: Params, profile: HwProfile) -> list[RecirculationLoad]:
    """Each pipe's worst-case recirculation (tna/bfcc/README.md, "Recirculation
    bandwidth"), for the pipes with reaction points: a fake's original
    recirculates through its reaction port's own pipe. None when nothing
    recirculates (no reaction point, or reduction shaping: the TM cuts the
    port, no fakes)."""
    if not cfg.reaction_points or p.reduction != "fakes":
        return []
    rt = min(p.rate_thresholds().values())
    share = 1 / (rt + 1)
    by_pipe: dict[int, list[tuple[int, float]]] = {}
    for i, rp in enumerate(cfg.reaction_points):
        by_pipe.setdefault(pipe_of(rp.port, profile), []).append(
            (i, line_rate_gbps(rp, profile) * share)
        )
    return [
        RecirculationLoad(
            pipe,
            profile.recirculation_ports[pipe],
            sum(g for _, g in shares),
            float(profile.recirculation_port_gbps),
            tuple(shares),
            rt,
        )
        for pipe, shares in sorted(by_pipe.items())
    ]


def _gbps(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".")


def check_recirculation_budget(
    cfg: BfccConfig, p: Params, profile: HwProfile, field: str | None = None
) -> None:
    """Refuse reaction points whose worst-case recirculation exceeds their
    pipe's recirculation port (issue 50, finding 3). The data plane never
    drops an original for it (past the port's level an original leaves
    itself instead of a fake), but the cut then falls short of RT/(RT+1)
    whenever the ports are busy: a config that cannot have its cut is
    refused rather than silently weakened. The error names the reaction
    point that crosses the capacity (or `field`, the parameter a `set`
    changed), the pipe and the load."""
    for load in recirculation_loads(cfg, p, profile):
        if not load.over:
            continue
        running = 0.0
        first_over = load.shares[-1][0]
        for i, gbps in load.shares:
            running += gbps
            if running > load.capacity_gbps:
                first_over = i
                break
        ports = ", ".join(str(cfg.reaction_points[i].port) for i, _ in load.shares)
        raise ConfigError(
            field or f"reaction_points[{first_over}].port",
            f"pipe {load.pipe}'s recirculation port {load.port} would carry up to "
            f"{_gbps(load.load_gbps)} Gb/s against its {_gbps(load.capacity_gbps)} Gb/s: "
            f"reaction ports {ports} each recirculate 1/(RT+1) = 1/{load.rt_packets + 1} of "
            "their line rate (rate_mbps, else the chip's fastest port) at the degree with "
            f"the lowest RT ({load.rt_packets}). Raise that RT, give the ports' rate_mbps, "
            "move reaction points to another pipe (each pipe recirculates through its own "
            "port), take reaction points off, or use reduction: shaping",
        )


def check_recirculation_sessions(cfg: BfccConfig, profile: HwProfile) -> None:
    """One session per pipe the config uses, from recirculation_session on:
    each must be the chip's and none an upstream port's."""
    upstream = {u.mirror_session: i for i, u in enumerate(cfg.upstream_ports)}
    for k, (pipe, sid) in enumerate(recirculation_sessions(cfg, profile).items()):
        which = f"session {sid}" if k == 0 else f"session {sid} (recirculation_session + {k})"
        if not profile.valid_mirror_session(sid):
            raise ConfigError(
                "recirculation_session",
                f"{which}, pipe {pipe}'s recirculation, is outside "
                f"{profile.mirror_session_min}..{profile.mirror_session_max} on {profile.chip} "
                "(each pipe the config uses takes the next id)",
            )
        if sid in upstream:
            raise ConfigError(
                "recirculation_session",
                f"{which} is upstream_ports[{upstream[sid]}].mirror_session "
                f"(pipe {pipe}'s recirculation takes it; each pipe the config uses takes "
                "the next id from recirculation_session)",
            )
