# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""A PFC watchdog, as switch OSes run one (SONiC's pfcwd: a detection time,
a restoration time, an action), on what the SDE exposes.

open-p4studio's `$PORT_STAT` counts, per port and CoS, the time the link
partner has held that CoS paused, in microseconds
(`$ReceivePri<cos>Pause1USCount`, bf_rt_port_tf1.json and tf2). Each poll
reads it from the MAC (the BF-Runtime backend reads with from_hw: the
server's shadow of it is refreshed only every 1000 ms, bf_pm.h line 28, so
at 200 ms polls a shadow read would rise by 0 or by a whole second, and a
0 in a storm would read as "restored"): a port whose counter rose by
(nearly) the whole time since the
last poll was paused all along; paused for `detection_s` in a row, it is in
a pause storm (a peer stuck sending XOFF, or a deadlock). The watchdog
reports it (a log line, the `storm` flag and the storm count its status
rows carry into the daemon's metrics) and, with action `forward`, stops
honouring pauses on that port's lossless queues (TmPfcWrite honour=False:
tm.queue.cfg pfc_cos moves to `ignore_cos`, a CoS no neighbour pauses; the
TM has no per-port "ignore" switch, see switch.py), so they drain again;
with `alert` it only reports. Once the counter has not moved for
`restoration_s` (the peer sent no pause), honouring comes back.

Not detected: a queue paused in bursts that never cover a whole detection
time, and whether the paused queue holds packets (SONiC's pfcwd also
checks that; the TM's tm.counter.queue usage_cells would say, and is not
read here): a port paused for the detection time with nothing to send is
reported as a storm too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from .switch import DEFAULT_IGNORE_COS, Switch, TmPfcWrite

log = logging.getLogger("tofcc.pfcwd")

# A poll interval counts as paused when the counter rose by this share of
# it: the counter ticks in whole microseconds and a poll's own time is not
# the switch's.
PAUSED_SHARE = 0.9
WATCHDOG_SECTION = "pfc watchdog"
# Poll times are floats: 0.5 - 0.4 is 0.0999... s, and two such polls must
# still make 200 ms.
TIME_SLACK_S = 1e-6

Action = Literal["alert", "forward"]


@dataclass
class PortWatch:
    """One port's watch: the counter at the last poll and the runs of
    paused (before a storm) or quiet (during one) time since."""

    last_us: int | None = None
    last_s: float = 0.0
    paused_s: float = 0.0
    quiet_s: float = 0.0
    storm: bool = False
    storms: int = 0


@dataclass(frozen=True)
class WatchdogEvent:
    port: int
    what: Literal["storm", "restored"]
    at_s: float


class PfcWatchdog:
    def __init__(
        self,
        switch: Switch,
        ports: list[int],
        cos: int,
        queues: tuple[int, ...],
        detection_s: float,
        restoration_s: float,
        action: Action,
        generate: bool = True,
        ignore_cos: int = DEFAULT_IGNORE_COS,
    ) -> None:
        if detection_s <= 0 or restoration_s <= 0:
            raise ValueError("detection_s and restoration_s must be positive")
        self.switch, self.cos, self.queues = switch, cos, queues
        self.detection_s, self.restoration_s, self.action = detection_s, restoration_s, action
        self.generate, self.ignore_cos = generate, ignore_cos
        self.watch = {p: PortWatch() for p in ports}

    def honouring(self, port: int) -> bool:
        """Whether `port` honours pauses now (False while `forward` breaks a storm)."""
        return not (self.action == "forward" and self.watch[port].storm)

    def write_for(self, port: int) -> TmPfcWrite:
        return TmPfcWrite(
            port, self.cos, self.queues, self.generate, self.honouring(port), self.ignore_cos
        )

    def poll(self, now_s: float) -> list[WatchdogEvent]:
        """Read every port's pause counter once; act on what changed. A
        refused write (WriteError) leaves the port's state as it was."""
        events: list[WatchdogEvent] = []
        for port, w in self.watch.items():
            us = self.switch.read_port_rx_pause_us(port, self.cos)
            last, dt = w.last_us, now_s - w.last_s
            w.last_us, w.last_s = us, now_s
            if last is None or dt <= 0:
                continue
            rose_us = us - last
            if rose_us < 0:
                # The switch restarted (its counters with it): start again.
                w.paused_s = w.quiet_s = 0.0
                continue
            if not w.storm:
                w.paused_s = w.paused_s + dt if rose_us >= PAUSED_SHARE * dt * 1e6 else 0.0
                if w.paused_s >= self.detection_s - TIME_SLACK_S:
                    self._set(port, w, storm=True)
                    w.storms += 1
                    w.quiet_s = 0.0
                    events.append(WatchdogEvent(port, "storm", now_s))
                    log.warning(
                        "PFC storm: port %d CoS %d paused %.3f s in a row (%s)",
                        port,
                        self.cos,
                        w.paused_s,
                        "pauses ignored" if self.action == "forward" else "alert only",
                    )
            else:
                w.quiet_s = w.quiet_s + dt if rose_us == 0 else 0.0
                if w.quiet_s >= self.restoration_s - TIME_SLACK_S:
                    self._set(port, w, storm=False)
                    w.paused_s = 0.0
                    events.append(WatchdogEvent(port, "restored", now_s))
                    log.info(
                        "PFC storm over: port %d CoS %d no pause for %.3f s%s",
                        port,
                        self.cos,
                        w.quiet_s,
                        ", pauses honoured again" if self.action == "forward" else "",
                    )
        return events

    def _set(self, port: int, w: PortWatch, storm: bool) -> None:
        if self.action == "forward":
            self.switch.write(
                [TmPfcWrite(port, self.cos, self.queues, self.generate, not storm, self.ignore_cos)]
            )
        w.storm = storm

    def status(self) -> list[dict[str, object]]:
        return [
            {
                "section": WATCHDOG_SECTION,
                "port": port,
                "cos": self.cos,
                "storm": int(w.storm),
                "storms": w.storms,
                "rx_paused_us": w.last_us,
                "honouring": int(self.honouring(port)),
            }
            for port, w in self.watch.items()
        ]
