"""Commands: `order` (a player's order to an NPC), `say` (the default say, also heard by
geppetto's perception), `quests` / `accept` (the quest board's offers, and taking one),
`geppetto_import` / `geppetto_export` (a geppetto world directory into the game, the game's
world back to one).
Add `GeppettoCmdSet` to the character command set. `order`, `say`, `quests` and `accept` go
through the game's running bridge (`running_bridge()`); without one, `order`, `quests` and
`accept` say so and `say` is only speech."""
from pathlib import Path

from django.conf import settings
from evennia import CmdSet, default_cmds, search_object
from evennia.commands.command import Command

from . import world
from .scripts import game_minute, running_bridge
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
            caller.msg(NOT_RUNNING)
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


NOT_RUNNING = "The villagers are not listening (geppetto is not running)."
NO_BOARD = "There is no quest board in this game."


def duration(minutes):
    """Game minutes as a player reads them: "2 h 5 min", "40 min"."""
    hours, minutes = divmod(max(0, minutes), 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


def quest_line(running, offer):
    """One quest as `quests` lists it: an open offer with the time it is still offered for."""
    line = f"{offer.title} — from {running.name_of(offer.giver)}, {offer.reward} gold, at the {running.name_of(offer.place)}"
    return line + (f", for {duration(offer.expires_at - running.now)} more" if offer.status == "offered" else "")


class CmdQuests(Command):
    """
    See the quests offered.

    Usage:
      quests
      quests all

    Lists the quests offered in this room (or, with "all", on the whole board), numbered
    for `accept <n>`, and the quests you have taken.
    """

    key = "quests"
    locks = "cmd:all()"

    def func(self):
        caller, what = self.caller, self.args.strip().lower()
        if what not in ("", "all"):
            caller.msg("Usage: quests [all]")
            return
        running = running_bridge()
        if running is None:
            caller.msg(NOT_RUNNING)
            return
        if running.board is None:
            caller.msg(NO_BOARD)
            return
        room = world.gid(caller.location, ROOM) if caller.location else None
        offers = running.quest_offers(None if what == "all" else room)
        caller.ndb.geppetto_quests = [o.id for o in offers]
        lines = []
        if offers:
            lines.append("Quests offered " + ("on the board:" if what == "all" else "here:"))
            lines += [f"  {n}. {quest_line(running, o)}" for n, o in enumerate(offers, 1)]
            lines.append("Take one with: accept <number>")
        elif what == "all":
            lines.append("No quests are offered.")
        else:
            elsewhere = len(running.quest_offers())
            lines.append("No quests are offered here" + (
                f"; {elsewhere} elsewhere (quests all)." if elsewhere else "."))
        taken = running.quests_of(caller)
        if taken:
            lines.append("Your quests:")
            lines += [f"  {quest_line(running, o)}" for o in taken]
        caller.msg("\n".join(lines))


class CmdAccept(Command):
    """
    Take a quest.

    Usage:
      accept <number>

    Takes the quest of that number in the list `quests` showed you last (this room's
    quests if you have not looked yet).
    """

    key = "accept"
    locks = "cmd:all()"

    def func(self):
        caller, arg = self.caller, self.args.strip()
        if not arg.isdigit() or int(arg) < 1:
            caller.msg("Usage: accept <number> (the number `quests` shows)")
            return
        running = running_bridge()
        if running is None:
            caller.msg(NOT_RUNNING)
            return
        if running.board is None:
            caller.msg(NO_BOARD)
            return
        listed = caller.ndb.geppetto_quests
        if listed is None:
            room = world.gid(caller.location, ROOM) if caller.location else None
            listed = [o.id for o in running.quest_offers(room)] if room else []
        number = int(arg)
        if number > len(listed):
            caller.msg(f"There is no quest {number} here: `quests` lists them.")
            return
        offer = running.board.quests.get(listed[number - 1])
        if offer is None or offer.status != "offered":
            caller.msg(f"That quest is no longer offered ({offer.status if offer else 'gone'}).")
            return
        try:
            running.accept_quest(caller, offer.id)
        except ValueError as error:
            caller.msg(f"You cannot take that quest: {error}.")
            return
        where = running.name_of(offer.place)
        caller.msg(f"You take the quest: {offer.title}. "
                   + (f"{running.name_of(offer.giver)} will wait for you at the {where}; "
                      if offer.goal else f"It is at the {where}; ")
                   + f"the reward is {offer.reward} gold.")


class CmdGeppettoSay(default_cmds.CmdSay):
    __doc__ = default_cmds.CmdSay.__doc__

    def func(self):
        super().func()
        speech = self.args.strip()
        room = world.gid(self.caller.location, ROOM) if self.caller.location else None
        running = running_bridge() if speech and room else None
        if running is not None:
            running.said(self.caller, speech, room)


def world_path(argument):
    """A world directory as a command names it: absolute, or relative to the game folder
    (settings.GAME_DIR, where `evennia` runs)."""
    path = Path(argument).expanduser()
    return path if path.is_absolute() else Path(settings.GAME_DIR) / path


def start_room():
    """The game's room a new character starts in (GEPPETTO_START_ROOM, else Evennia's
    START_LOCATION, Limbo): where the way into an imported world begins."""
    ref = getattr(settings, "GEPPETTO_START_ROOM", None) or settings.START_LOCATION
    found = search_object(ref)
    if not found:
        raise ValueError(f"the start room {ref} (GEPPETTO_START_ROOM or START_LOCATION) is not in the game")
    return found[0]


class CmdGeppettoExport(Command):
    """
    Export the world to a geppetto world directory.

    Usage:
      geppetto_export <directory>

    Writes rooms.yaml (neighbours from the exits), providers.yaml, npcs.yaml,
    residents.yaml and descriptions.yaml from the tagged rooms, providers and NPCs; the
    directory's other files (zone, seed, weather) are left as they are, and a world.yaml is
    written only if there is none. The directory must be in a folder named worlds (as
    geppetto validate wants it); a relative one is in the game folder.
    """

    key = "geppetto_export"
    locks = "cmd:perm(Developer)"

    def func(self):
        directory = self.args.strip()
        if not directory:
            self.caller.msg("Usage: geppetto_export <directory>")
            return
        path = world_path(directory)
        running = running_bridge()
        try:
            counts = world.export(path, zone=getattr(settings, "GEPPETTO_ZONE", "village"),
                                  start_game_time=running.now if running else game_minute())
        except (OSError, ValueError) as error:
            self.caller.msg(f"geppetto_export: {error}")
            return
        self.caller.msg(f"Exported to {path}: " + ", ".join(f"{n} {s}" for s, n in counts.items()))


class CmdGeppettoImport(Command):
    """
    Build rooms, exits, providers and NPCs from a geppetto world directory.

    Usage:
      geppetto_import <directory>

    Objects already tagged with their geppetto id are kept; missing ones are made. An exit
    named after the zone leads from the start room (Limbo, or GEPPETTO_START_ROOM) into the
    world's entry room (GEPPETTO_ENTRY_ROOM, else its first room), and one leads back. A
    relative directory is in the game folder.
    """

    key = "geppetto_import"
    locks = "cmd:perm(Developer)"

    def func(self):
        directory = self.args.strip()
        if not directory:
            self.caller.msg("Usage: geppetto_import <directory>")
            return
        path = world_path(directory)
        entry = getattr(settings, "GEPPETTO_ENTRY_ROOM", None)
        try:
            start = start_room()
            made = world.build(path, start=start, entry=entry)
        except (OSError, ValueError) as error:
            self.caller.msg(f"geppetto_import: {path}: {error}")
            return
        except KeyError as error:
            self.caller.msg(f"geppetto_import: {path}: an entry lacks the field {error}")
            return
        inside = made[ROOM].get(entry or next(iter(made[ROOM]), None))
        way = next((e for e in world.exits_from(start) if e.destination == inside), None)
        self.caller.msg(f"Built from {path}: " + ", ".join(
            f"{len(objs)} {category.removeprefix('geppetto_')}s" for category, objs in made.items())
            + (f". From {start.key}, the exit '{way.key}' leads to {inside.key}." if way else ""))


class GeppettoCmdSet(CmdSet):
    key = "geppetto"

    def at_cmdset_creation(self):
        self.add(CmdOrder())
        self.add(CmdGeppettoSay())
        self.add(CmdQuests())
        self.add(CmdAccept())
        self.add(CmdGeppettoImport())
        self.add(CmdGeppettoExport())
