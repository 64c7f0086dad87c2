"""Commands: `order` (a player's order to an NPC), `say` (the default say, also heard by
geppetto's perception), `geppetto_import` / `geppetto_export` (a geppetto world directory into
the game, the game's world back to one).
Add `GeppettoCmdSet` to the character command set. `order` and `say` report to the game's
running bridge (`running_bridge()`); without one, `order` says so and `say` is only speech."""
from evennia import CmdSet, default_cmds
from evennia.commands.command import Command

from . import world
from .scripts import running_bridge
from .world import NPC, PROVIDER, ROOM


def find_npc(caller, name):
    """An NPC in the caller's room by name, else anywhere by geppetto id; None if neither."""
    here = [o for o in caller.location.contents if world.is_npc(o)] if caller.location else []
    found = caller.search(name, candidates=here, quiet=True)
    if found:
        return found[0]
    return world.tagged(NPC, name.lower())


def advertisers(action):
    """Providers advertising `action`, by geppetto id."""
    return sorted((world.gid(p, PROVIDER), p) for p in world.search_tag(category=PROVIDER)
                  if any(a.get("id") == action for a in (p.db.geppetto_spec or {}).get("actions", [])))


class CmdOrder(Command):
    """
    Order an NPC to do something.

    Usage:
      order <npc> <action> [at <provider>]

    The NPC walks to a place advertising the action (the one named, or the first) and does
    it; it tells you when it accepts, refuses or is done.
    """

    key = "order"
    locks = "cmd:all()"

    def func(self):
        caller, words = self.caller, self.args.split()
        provider_id = None
        if len(words) >= 4 and words[-2] == "at":
            provider_id, words = words[-1].lower(), words[:-2]
        if len(words) != 2:
            caller.msg("Usage: order <npc> <action> [at <provider>]")
            return
        running = running_bridge()
        if running is None:
            caller.msg("The villagers are not listening (geppetto is not running).")
            return
        npc = find_npc(caller, words[0])
        if npc is None:
            caller.msg(f"There is no one called {words[0]} to order.")
            return
        action = words[1].lower()
        if provider_id is None:
            offers = advertisers(action)
            if not offers:
                caller.msg(f"Nowhere offers '{action}'.")
                return
            provider_id = offers[0][0]
        running.order(caller, world.gid(npc, NPC), provider_id, action)
        caller.msg(f"You tell {npc.key} to {action.replace('_', ' ')}.")


class CmdGeppettoSay(default_cmds.CmdSay):
    __doc__ = default_cmds.CmdSay.__doc__

    def func(self):
        super().func()
        speech = self.args.strip()
        room = world.gid(self.caller.location, ROOM) if self.caller.location else None
        running = running_bridge() if speech and room else None
        if running is not None:
            running.said(self.caller, speech, room)


class CmdGeppettoExport(Command):
    """
    Export the world to a geppetto world directory.

    Usage:
      geppetto_export <directory>

    Writes rooms.yaml (neighbours from the exits), providers.yaml, npcs.yaml and
    residents.yaml from the tagged rooms, providers and NPCs; the directory's other files
    (zone, seed, weather) are left as they are.
    """

    key = "geppetto_export"
    locks = "cmd:perm(Developer)"

    def func(self):
        directory = self.args.strip()
        if not directory:
            self.caller.msg("Usage: geppetto_export <directory>")
            return
        try:
            counts = world.export(directory)
        except (OSError, ValueError) as error:
            self.caller.msg(f"geppetto_export: {error}")
            return
        self.caller.msg(f"Exported to {directory}: " + ", ".join(f"{n} {s}" for s, n in counts.items()))


class CmdGeppettoImport(Command):
    """
    Build rooms, exits, providers and NPCs from a geppetto world directory.

    Usage:
      geppetto_import <directory>

    Objects already tagged with their geppetto id are kept; missing ones are made.
    """

    key = "geppetto_import"
    locks = "cmd:perm(Developer)"

    def func(self):
        directory = self.args.strip()
        if not directory:
            self.caller.msg("Usage: geppetto_import <directory>")
            return
        try:
            made = world.build(directory)
        except (OSError, ValueError, KeyError) as error:
            self.caller.msg(f"geppetto_import: {directory}: {error!r}")
            return
        self.caller.msg(f"Built from {directory}: " + ", ".join(
            f"{len(objs)} {category.removeprefix('geppetto_')}s" for category, objs in made.items()))


class GeppettoCmdSet(CmdSet):
    key = "geppetto"

    def at_cmdset_creation(self):
        self.add(CmdOrder())
        self.add(CmdGeppettoSay())
        self.add(CmdGeppettoImport())
        self.add(CmdGeppettoExport())
