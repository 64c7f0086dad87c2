"""geppetto-quests: a reference quest board for geppetto's story signals (see README.md)."""
from .board import Offer, QuestBoard
from .templates import TEMPLATES

__all__ = ["Offer", "QuestBoard", "TEMPLATES"]
