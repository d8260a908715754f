"""Degree-based partitioning (TOTEM, section 6) and the PartitionPlan the engine runs on."""

from .plan import LocalView, PartitionPlan, partition, STRATEGIES

__all__ = ["LocalView", "PartitionPlan", "partition", "STRATEGIES"]
