# SPDX-FileCopyrightText: 2026 The tofino-cc authors
# SPDX-License-Identifier: Apache-2.0
"""End-host (reaction point) models of the congestion-control schemes."""

from models.hosts.bfcc_sender import BfccSender, SenderReactionConfig, State
from models.hosts.pmqecn_rp import Phase, ReactionPoint, RpConfig, RpState

__all__ = [
    "BfccSender",
    "Phase",
    "ReactionPoint",
    "RpConfig",
    "RpState",
    "SenderReactionConfig",
    "State",
]
