"""Typeclasses and mixins: rooms that report who comes and goes, NPCs that carry a geppetto
id and archetype, providers whose names carry their own article. Mix the mixins into a game's own typeclasses (before the Evennia parent)
or use the ready classes. They report to the game's running bridge (`running_bridge()`) and
do nothing while none runs.
"""
from evennia import DefaultCharacter, DefaultObject, DefaultRoom

from . import world
from .scripts import running_bridge
from .world import NPC, ROOM


class GeppettoRoomMixin:
    """Reports players entering and leaving, and NPCs arriving, when the room is tagged with
    a geppetto room id. A move with `geppetto_report=False` is not reported (geppetto placed
    the NPC there itself)."""

    def at_object_receive(self, moved_obj, source_location, move_type="move", **kwargs):
        super().at_object_receive(moved_obj, source_location, move_type=move_type, **kwargs)
        here = world.gid(self, ROOM)
        if here is None or not kwargs.get("geppetto_report", True):
            return
        running = running_bridge()
        if running is None:
            return
        if world.is_npc(moved_obj):
            running.npc_moved(world.gid(moved_obj, NPC), here)
        elif world.is_player(moved_obj):
            running.player_entered(moved_obj, here)

    def at_object_leave(self, moved_obj, target_location, move_type="move", **kwargs):
        super().at_object_leave(moved_obj, target_location, move_type=move_type, **kwargs)
        here = world.gid(self, ROOM)
        if here is None or not world.is_player(moved_obj):
            return
        running = running_bridge()
        if running is not None:
            running.player_left(moved_obj, here)


class GeppettoRoom(GeppettoRoomMixin, DefaultRoom):
    pass


class GeppettoNPCMixin:
    """An NPC geppetto decides for: `geppetto_id` (its tag in category `geppetto_npc`) and
    `geppetto_archetype`. `geppetto_engage` / `geppetto_release` hand it to the game (a fight,
    a conversation) and back."""

    @property
    def geppetto_id(self):
        return world.gid(self, NPC)

    @geppetto_id.setter
    def geppetto_id(self, value):
        self.tags.remove(category=NPC)
        self.tags.add(value, category=NPC)

    @property
    def geppetto_archetype(self):
        return self.db.geppetto_archetype

    @geppetto_archetype.setter
    def geppetto_archetype(self, value):
        self.db.geppetto_archetype = value

    def geppetto_engage(self, reason):
        """The game takes this NPC over (`reason`: "combat", "dialogue" …): geppetto cancels
        what it was doing and leaves it to the game until `geppetto_release`."""
        running = running_bridge()
        if running is not None:
            running.engage(self.geppetto_id, reason)

    def geppetto_release(self):
        """Hands this NPC back to geppetto."""
        running = running_bridge()
        if running is not None:
            running.release(self.geppetto_id)


class GeppettoNPC(GeppettoNPCMixin, DefaultCharacter):
    pass


ARTICLES = ("a ", "an ", "the ")


class NamedWithArticleMixin:
    """An object whose name may carry its own article ("the well"): listed as it is, not as
    "a the well"."""

    def get_numbered_name(self, count, looker, **kwargs):
        as_string = kwargs.pop("return_string", False)
        singular, plural = super().get_numbered_name(count, looker, **kwargs)
        key = kwargs.get("key", self.get_display_name(looker))
        if count == 1 and str(key).lower().startswith(ARTICLES):
            singular = key
        if as_string:
            return singular if count == 1 else plural
        return singular, plural


class GeppettoThing(NamedWithArticleMixin, DefaultObject):
    """A provider (a well, a forge) as the import makes it."""
