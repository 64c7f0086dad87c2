"""geppetto-evennia: living NPCs for Evennia games, decided by geppetto (`geppetto serve` in
`game` completion mode) and carried out by the game.

The package's public names, each from the module that owns it:

- `GeppettoScript`, `running_bridge`, `SCRIPT_KEY` (scripts): the global script that owns the
  game's bridge, and the one way to reach that bridge;
- `Bridge` (bridge): Evennia events out as world events, geppetto's intents in as what NPC
  objects do; subclass it and name it in GEPPETTO_BRIDGE;
- `Bus` (bus): the zone's Redis streams;
- `GeppettoRoomMixin`, `GeppettoRoom`, `GeppettoNPCMixin`, `GeppettoNPC`, `GeppettoThing`
  (typeclasses);
- `GeppettoCmdSet`, `CmdOrder`, `CmdGeppettoSay`, `CmdQuests`, `CmdAccept`,
  `CmdGeppettoImport`, `CmdGeppettoExport` (commands);
- `ROOM`, `NPC`, `PROVIDER` (world): the tag categories of geppetto's rooms, NPCs and
  providers; `world.build` / `world.export` import and export a geppetto world directory.

Each name is imported on first use: most of them need Evennia's flat API and Django's
settings, which exist only once Evennia has started (a server, `evennia test`, `evennia
shell`), while `import geppetto_evennia` works anywhere, a settings file included.
"""
from importlib import import_module

#: Public name -> the module (of this package) that owns it.
_OWNERS = {
    "Bridge": "bridge",
    "Bus": "bus",
    "CmdAccept": "commands",
    "CmdGeppettoExport": "commands",
    "CmdGeppettoImport": "commands",
    "CmdGeppettoSay": "commands",
    "CmdOrder": "commands",
    "CmdQuests": "commands",
    "GeppettoCmdSet": "commands",
    "GeppettoNPC": "typeclasses",
    "GeppettoNPCMixin": "typeclasses",
    "GeppettoRoom": "typeclasses",
    "GeppettoRoomMixin": "typeclasses",
    "GeppettoScript": "scripts",
    "GeppettoThing": "typeclasses",
    "NPC": "world",
    "PROVIDER": "world",
    "ROOM": "world",
    "SCRIPT_KEY": "scripts",
    "running_bridge": "scripts",
}

__all__ = [
    "Bridge",
    "Bus",
    "CmdAccept",
    "CmdGeppettoExport",
    "CmdGeppettoImport",
    "CmdGeppettoSay",
    "CmdOrder",
    "CmdQuests",
    "GeppettoCmdSet",
    "GeppettoNPC",
    "GeppettoNPCMixin",
    "GeppettoRoom",
    "GeppettoRoomMixin",
    "GeppettoScript",
    "GeppettoThing",
    "NPC",
    "PROVIDER",
    "ROOM",
    "SCRIPT_KEY",
    "running_bridge",
]


def __getattr__(name):
    """Imports a public name's module on first use (PEP 562) and keeps the name here."""
    owner = _OWNERS.get(name)
    if owner is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{owner}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
