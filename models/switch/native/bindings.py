# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""What each compiled core runs on: the model's tables (with their key fields
in the order their memos key on), counters, registers and action names, in
the order of the core's `Slot` enum (`<program>.cpp`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..bfcc import Bfcc
    from ..core import Table
    from ..dadctcp import Dadctcp
    from ..pmqecn import Pmqecn
    from ..spie import Spie


def table_slots(table: Table, *names: str) -> tuple[Table, tuple[str, ...]]:
    """A table's two slots: the table, then its key fields, which must be
    `names` in the table's order (a core's memo keys on them so)."""
    if tuple(table.keys) != names:
        raise RuntimeError(f"{table.name}: keys {tuple(table.keys)}, the core has {names}")
    return table, names


def record(cls: type, *names: str) -> tuple[type, tuple[str, ...]]:
    """(cls, names) for a core to make results with (pyobj.hpp NewRecord:
    each field set, without running __init__): `names` must be the
    dataclass's fields in order, and its __init__ must do nothing but set
    them (no __post_init__, not frozen, no slots)."""
    fields = tuple(f.name for f in dataclasses.fields(cls))
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    if (
        fields != names
        or hasattr(cls, "__post_init__")
        or params.frozen
        or "__slots__" in vars(cls)
    ):
        raise RuntimeError(f"{cls.__name__}: fields {fields}, the core makes {names} by hand")
    return cls, names


INGRESS_RESULT = ("drop", "egress_port", "qid", "data", "mirror", "icos")
EGRESS_RESULT = ("drop", "data", "mirror")


def _shared_ingress(m: Any) -> tuple[Any, ...]:
    """FeedbackTrust, SourceGuard and Ipv4Forward (controls.hpp)."""
    trust, guard, fwd = m.trust, m.source_guard, m.forward
    return (
        *table_slots(trust.trusted_ports, "ig_intr_md.ingress_port"),
        trust.untrusted_feedback_drops,
        *table_slots(guard.source_bindings, "ig_intr_md.ingress_port", "hdr.ipv4.src_addr"),
        guard.spoofed_source_drops,
        guard.spoofed_source.name,
        *table_slots(fwd.ipv4_lpm, "hdr.ipv4.dst_addr"),
        fwd.drop.name,
    )


def dadctcp(m: Dadctcp) -> tuple[Any, ...]:
    from ..tna import EgressResult, IngressResult

    hook = m.queue_hook
    return (
        *_shared_ingress(m),
        *table_slots(m.queue_select, "hdr.ipv4.dscp"),
        m.set_queue.name,
        *table_slots(hook.queue_md_override, "eg_intr_md.egress_port"),
        hook.inject.name,
        *table_slots(m.queue_threshold, "eg_intr_md.egress_port", "eg_intr_md.egress_qid"),
        m.set_threshold.name,
        m.ce_marked,
        m.not_ect_dropped,
        m.last_depth,
        m.last_slope,
        m.last_departure,
        record(IngressResult, *INGRESS_RESULT),
        record(EgressResult, *EGRESS_RESULT),
    )


def pmqecn(m: Pmqecn) -> tuple[Any, ...]:
    from ..tna import EgressResult, IngressMirror, IngressResult

    clock, hook = m.clock, m.queue_hook
    return (
        *_shared_ingress(m),
        *table_slots(clock.ingress_tstamp_override, "ig_intr_md.ingress_port"),
        clock.inject.name,
        *table_slots(
            m.classify,
            "hdr.ipv4.src_addr",
            "hdr.ipv4.dst_addr",
            "hdr.ipv4.dscp",
            "hdr.ipv4.protocol",
        ),
        m.set_class.name,
        m.class_counters,
        *table_slots(m.feedback_session, "hdr.bridged.ingress_port"),
        m.set_feedback_session.name,
        *table_slots(m.vq_weight, "ig_md.vq_id"),
        m.wrr.name,
        m.vq_used,
        m.vq_level,
        *table_slots(m.wrr_level_queue, "ig_md.wrr_level"),
        m.set_priority_queue.name,
        m.vq_last_tick,
        m.class_arrivals,
        *table_slots(m.ecn_threshold, "hdr.bridged.class_id", "ingress_pipe"),
        m.set_threshold.name,
        *table_slots(m.vq_log_elapsed, "ig_md.vq_elapsed_ticks"),
        m.log_elapsed.name,
        *table_slots(m.vq_exp_drain, "ig_md.vq_log_drain_q7"),
        m.vq_bytes,
        *table_slots(m.class_rates, "hdr.bridged.class_id"),
        m.feedback_gate,
        record(IngressResult, *INGRESS_RESULT),
        IngressMirror,
        *table_slots(hook.queue_md_override, "eg_intr_md.egress_port"),
        hook.inject.name,
        *table_slots(m.sojourn_epoch),
        *table_slots(m.sojourn_sampling, "hdr.bridged.class_id"),
        *m.sojourn_sum_ns,
        *m.sojourn_pkts,
        m.feedback_rebuilt,
        record(EgressResult, *EGRESS_RESULT),
    )


def spie(m: Spie) -> tuple[Any, ...]:
    from ..spie import UndoDigest
    from ..tna import EgressMirror, EgressResult, IngressResult

    clock, rnd, hook = m.clock, m.random_hook, m.queue_hook
    terms = m.term_tables
    out: list[Any] = [
        *_shared_ingress(m),
        *table_slots(clock.ingress_tstamp_override, "ig_intr_md.ingress_port"),
        clock.inject.name,
        # The hook itself: the core draws from its `rng` as it is then.
        rnd,
        *table_slots(rnd.random_override, "ig_intr_md.ingress_port"),
        rnd.inject.name,
        *table_slots(m.sketch_config),
        *table_slots(m.update_ports, "ig_intr_md.ingress_port"),
        m.accept_update.name,
        *table_slots(m.spie_port, "ig_tm_md.ucast_egress_port"),
        m.set_spie.name,
        *table_slots(m.log_res, "ig_md.m_before"),
        *table_slots(m.log_count, "ig_md.m_count_before"),
        *table_slots(m.log_sumsq, "ig_md.sumsq"),
        *m.rows,
        m.m_count,
        m.sumsq,
        m.prob,
        m.state,
        m.congested,
        m.large_flow_drops,
        m.random_drops,
        m.rejected_updates,
        record(IngressResult, *INGRESS_RESULT),
        UndoDigest,
        *table_slots(hook.queue_md_override, "eg_intr_md.egress_port"),
        hook.inject.name,
        hook.tofino2,
        *table_slots(m.pi_port, "eg_intr_md.egress_port"),
        m.set_pi.name,
    ]
    for name, key in (
        ("alpha_hi", "eg_md.d_ref"),
        ("alpha_lo", "eg_md.d_ref"),
        ("beta_hi", "eg_md.d_old"),
        ("beta_lo", "eg_md.d_old"),
    ):
        out += table_slots(terms[name][0], key)
    out += [
        m.last_update_ticks,
        m.del_old,
        m.pi_prob,
        m.pi_updates,
        record(EgressResult, *EGRESS_RESULT),
        EgressMirror,
    ]
    return tuple(out)


def bfcc(m: Bfcc) -> tuple[Any, ...]:
    from ..tna import EgressMirror, EgressResult, IngressResult

    hook, recirc = m.queue_hook, m.recirc_queue_hook
    port = "eg_intr_md.egress_port"
    return (
        *_shared_ingress(m),
        m.fake_drops,
        m.admitted_by_qid,
        m.bp_state,
        m.bp_recorded_ns,
        *table_slots(m.sender_group, "hdr.ipv4.src_addr"),
        m.set_group.name,
        *table_slots(m.reaction_point, "ig_tm_md.ucast_egress_port"),
        m.react.name,
        m.backpressure_received,
        *table_slots(m.bp_replicate, "ig_intr_md.ingress_port"),
        m.replicate.name,
        m.relay_replica.name,
        *table_slots(m.sender_notify, "hdr.feedback.msg_type", "hdr.feedback.class_id"),
        m.notify_senders.name,
        record(IngressResult, *INGRESS_RESULT),
        *table_slots(hook.queue_md_override, port),
        hook.inject.name,
        *table_slots(recirc.queue_md_override, port),
        recirc.inject.name,
        m.flagged_departures,
        m.fakes_sent,
        m.recirculation_skips,
        m.rr_count,
        *table_slots(m.rate_threshold, "hdr.bfcc_bridged.bp_degree"),
        m.set_rate_threshold.name,
        *table_slots(m.recirculation, port),
        m.recirculate.name,
        m.recirculation_depth,
        m.occupancy_window,
        m.vq_occupancy,
        m.congested_vq,
        m.bp_last_sent,
        *table_slots(m.congestion_point, port),
        m.monitor.name,
        *table_slots(m.bp_upstream, "eg_md.bp_group"),
        m.to_upstream.name,
        record(EgressResult, *EGRESS_RESULT),
        EgressMirror,
    )


BINDINGS: dict[str, Callable[[Any], tuple[Any, ...]]] = {
    "bfcc": bfcc,
    "dadctcp": dadctcp,
    "pmqecn": pmqecn,
    "spie": spie,
}
