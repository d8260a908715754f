"""Degree-based partitioning (TOTEM, section 6) and the PartitionPlan the engine runs on."""

from .plan import LocalView, PartitionPlan, STRATEGIES, auto_share, estimate_stats, partition

__all__ = ["LocalView", "PartitionPlan", "STRATEGIES", "auto_share", "estimate_stats", "partition"]
