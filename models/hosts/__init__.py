"""End-host (reaction point) models of the congestion-control schemes."""

from models.hosts.pmqecn_rp import Phase, ReactionPoint, RpConfig, RpState

__all__ = ["Phase", "ReactionPoint", "RpConfig", "RpState"]
