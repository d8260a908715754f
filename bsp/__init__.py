"""The bulk-synchronous engine: partitions, boxes, exchange, supersteps (no algorithm logic)."""

from .api import Algorithm, Message, Mode, Vote
from .engine import Engine
from .partition import EdgeOptions

__all__ = ["Algorithm", "Message", "Mode", "Vote", "Engine", "EdgeOptions"]
