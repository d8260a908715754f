"""Degree-based partitioning (TOTEM, section 6) and the PartitionPlan the engine runs on."""

from .plan import (HUB_SORTS, LocalView, PartitionPlan, STRATEGIES, auto_share, check_gpus,
                   check_hub_sort, estimate_stats, local_order, partition)

__all__ = ["HUB_SORTS", "LocalView", "PartitionPlan", "STRATEGIES", "auto_share", "check_gpus",
           "check_hub_sort", "estimate_stats", "local_order", "partition"]
