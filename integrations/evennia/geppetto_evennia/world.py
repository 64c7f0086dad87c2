"""The world both sides share: Evennia rooms, exits, NPCs and providers, tagged with their
geppetto ids, built from a geppetto world directory and exported back to one.

Rooms carry the tag `<room id>` in category `geppetto_room`, NPCs `<npc id>` in
`geppetto_npc` (and `db.geppetto_archetype`, `db.geppetto_spec`), providers `<provider id>`
in `geppetto_provider` (and `db.geppetto_spec`, the provider as the world file gives it).

Room descriptions travel in a section of the world directory geppetto does not read,
`descriptions` (`descriptions.yaml`: room id -> text). The world is entered from the game's
start room (Limbo) by an exit the import makes, and left by one back.
"""
import os
from collections import deque
from pathlib import Path

import yaml
from evennia import create_object, search_object, search_tag
from evennia.utils.dbserialize import deserialize
from evennia.utils.utils import inherits_from

ROOM, NPC, PROVIDER = "geppetto_room", "geppetto_npc", "geppetto_provider"
#: The sections of a world directory the game exports (the rest of a world is geppetto's).
SECTIONS = {"rooms": "rooms.yaml", "providers": "providers.yaml", "npcs": "npcs.yaml",
            "residents": "residents.yaml", "descriptions": "descriptions.yaml"}
#: The file an export writes the world's own settings to when the directory has none.
WORLD_SETTINGS = "world.yaml"
#: Modes of what an export writes, whatever the server's umask (twistd's is 077).
FILE_MODE, DIR_MODE = 0o644, 0o755


def tagged(category, gid):
    """The object tagged `gid` in `category`, or None."""
    found = search_tag(gid, category=category)
    return found[0] if found else None


def gid(obj, category):
    """The geppetto id of a tagged object, or None."""
    return obj.tags.get(category=category, return_list=False) if obj else None


def room_of(obj):
    """The geppetto room id of the room `obj` stands in, or None."""
    return gid(obj.location, ROOM) if obj and obj.location else None


def is_npc(obj):
    return bool(gid(obj, NPC))


def is_player(obj):
    """A character that is not an NPC of geppetto's."""
    return inherits_from(obj, "evennia.objects.objects.DefaultCharacter") and not is_npc(obj)


def players_named(key):
    """The player characters called `key` (geppetto knows players by their key)."""
    return [o for o in search_object(key, exact=True) if o.key == key and is_player(o)]


def bare_name(name):
    """A name without its leading article ("the village green" -> "village green"), for a
    sentence that puts its own."""
    first, _, rest = name.partition(" ")
    return rest if rest and first.lower() in ("a", "an", "the") else name


def exits_from(room):
    return [o for o in room.contents if o.destination]


def path(start, goal_id):
    """The exits to walk from the room `start` to the room tagged `goal_id` (a shortest path
    over exits), [] when already there, None when it cannot be reached."""
    came, queue = {start.id: None}, deque([start])
    while queue:
        room = queue.popleft()
        if gid(room, ROOM) == goal_id:
            steps = []
            while came[room.id] is not None:
                exit_obj = came[room.id]
                steps.append(exit_obj)
                room = exit_obj.location
            return steps[::-1]
        for exit_obj in sorted(exits_from(room), key=lambda e: e.key):
            nxt = exit_obj.destination
            if nxt.id not in came:
                came[nxt.id] = exit_obj
                queue.append(nxt)
    return None


def load(world):
    """A geppetto world directory's sections, joined over its *.yaml files in name order."""
    if not Path(world).is_dir():
        raise FileNotFoundError(f"no world directory at {world}")
    joined = {}
    for file in sorted(Path(world).glob("*.yaml")):
        with open(file) as text:
            data = yaml.safe_load(text) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{file}: a world file is a mapping of sections, found {type(data).__name__}")
        for section, value in data.items():
            if isinstance(value, list):
                joined.setdefault(section, []).extend(value)
            else:
                joined[section] = value
    return joined


def sentence(name):
    """A name as a sentence starts with it ("the forge" -> "The forge")."""
    return name[:1].upper() + name[1:]


def and_list(names):
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def plain_description(spec, providers):
    """What a room without a description in its world is described as: its name and the
    providers in it ("The forge, with the anvil and the quench tub.")."""
    name = spec.get("name", spec["id"])
    here = [p.get("name", p["id"]) for p in providers
            if p.get("room") == spec["id"] and p.get("name", p["id"]) != name]
    return sentence(name) + (f", with {and_list(here)}" if here else "") + "."


def build(world, room_typeclass="geppetto_evennia.typeclasses.GeppettoRoom",
          exit_typeclass="evennia.objects.objects.DefaultExit",
          npc_typeclass="geppetto_evennia.typeclasses.GeppettoNPC",
          provider_typeclass="geppetto_evennia.typeclasses.GeppettoThing",
          start=None, entry=None):
    """Builds (or completes) the Evennia side of a geppetto world directory: a room per room
    (described by the world's `descriptions`, else by its name and providers), an exit each
    way per neighbour, an object per provider and an NPC per NPC or resident. Objects already
    tagged are kept. With `start` (a room of the game, Limbo) an exit named after the zone
    leads from it to the room `entry` (a room id; the world's first room by default), and
    one back. Returns {category: {id: object}}."""
    data = load(world)
    descriptions = data.get("descriptions") or {}
    if not isinstance(descriptions, dict):
        raise ValueError(f"{world}: descriptions is a mapping of room id to text, "
                         f"found {type(descriptions).__name__}")
    made = {ROOM: {}, NPC: {}, PROVIDER: {}}
    for spec in data.get("rooms", []):
        room = tagged(ROOM, spec["id"]) or create_object(room_typeclass, key=spec.get("name", spec["id"]))
        room.tags.add(spec["id"], category=ROOM)
        if spec["id"] in descriptions:
            room.db.desc = str(descriptions[spec["id"]])
        elif not room.db.desc:
            room.db.desc = plain_description(spec, data.get("providers", []))
        made[ROOM][spec["id"]] = room
    unknown = sorted(set(descriptions) - set(made[ROOM]))
    if unknown:
        raise ValueError(f"{world}: descriptions of rooms the world does not have: {', '.join(unknown)}")
    for spec in data.get("rooms", []):
        here = made[ROOM][spec["id"]]
        for other in spec.get("neighbours", []):
            if other not in made[ROOM]:
                raise ValueError(f"{world}: room {spec['id']} names neighbour {other}, which is no room")
            for a, b in ((here, made[ROOM][other]), (made[ROOM][other], here)):
                if not any(e.destination == b for e in exits_from(a)):
                    create_object(exit_typeclass, key=gid(b, ROOM), location=a, destination=b)
    for spec in data.get("providers", []):
        obj = tagged(PROVIDER, spec["id"]) or create_object(
            provider_typeclass, key=spec.get("name", spec["id"]), location=made[ROOM].get(spec.get("room")))
        obj.tags.add(spec["id"], category=PROVIDER)
        obj.db.geppetto_spec = spec
        made[PROVIDER][spec["id"]] = obj
    for section in ("npcs", "residents"):
        for spec in data.get(section, []):
            obj = tagged(NPC, spec["id"])
            if obj is None:
                # Tagged before it is placed, and placed without the move hooks: a new NPC is
                # neither reported as a player entering its room nor as an NPC moving there.
                room = made[ROOM].get(spec.get("room"))
                obj = create_object(npc_typeclass, key=spec.get("name", spec["id"]), home=room)
                obj.tags.add(spec["id"], category=NPC)
                if room is not None:
                    obj.move_to(room, quiet=True, move_hooks=False)
            obj.db.geppetto_archetype = spec.get("archetype")
            obj.db.geppetto_spec = {"section": section, **spec}
            made[NPC][spec["id"]] = obj
    if start is not None and made[ROOM]:
        way_in(start, made[ROOM], entry, data.get("zone"), exit_typeclass)
    return made


def way_in(start, rooms, entry, zone, exit_typeclass="evennia.objects.objects.DefaultExit"):
    """An exit from the game's room `start` into the world's room `entry` (an id of `rooms`,
    the first by default), named after the zone with the room's id as an alias, and one back
    named after `start`; none made twice. Returns the entry room."""
    entry = entry or next(iter(rooms))
    if entry not in rooms:
        raise ValueError(f"the entry room {entry} is not a room of the world ({', '.join(rooms)})")
    inside = rooms[entry]
    if start == inside:
        return inside
    if not any(e.destination == inside for e in exits_from(start)):
        name = zone or entry
        create_object(exit_typeclass, key=name, location=start, destination=inside,
                      aliases=[entry] if entry != name else None)
    if not any(e.destination == start for e in exits_from(inside)):
        create_object(exit_typeclass, key=start.key.lower(), location=inside, destination=start)
    return inside


def export(directory, zone="village", start_game_time=420):
    """Writes the game's rooms (neighbours from its exits), providers and NPCs (where each
    now stands) and the rooms' descriptions to a geppetto world directory's rooms.yaml,
    providers.yaml, npcs.yaml, residents.yaml and descriptions.yaml. The other sections
    (zone, seed, weather, …) stay the author's, in their own file; a directory without
    world.yaml gets one with `zone` and `start_game_time`. The directory must be in a folder
    named `worlds` (how `geppetto validate` tells a world directory). Files are written with
    mode 644 (directories 755). Returns the counts written."""
    out = Path(directory)
    if out.resolve().parent.name != "worlds":
        raise ValueError(f"{directory} is not in a folder named worlds: geppetto validate tells a "
                         f"world directory by its folder, so export to …/worlds/<name> "
                         f"(e.g. {out.resolve().parent / 'worlds' / out.name})")
    rooms, descriptions = [], {}
    for room in sorted(search_tag(category=ROOM), key=lambda r: gid(r, ROOM)):
        neighbours = sorted({gid(e.destination, ROOM) for e in exits_from(room)} - {None})
        rooms.append({"id": gid(room, ROOM), "name": room.key, "neighbours": neighbours})
        if room.db.desc:
            descriptions[gid(room, ROOM)] = str(room.db.desc)
    providers = []
    for obj in sorted(search_tag(category=PROVIDER), key=lambda o: gid(o, PROVIDER)):
        spec = deserialize(obj.db.geppetto_spec) or {}
        spec.update(id=gid(obj, PROVIDER), name=obj.key, room=room_of(obj) or spec.get("room"))
        if not spec.get("actions"):
            raise ValueError(f"provider {spec['id']} ({obj.dbref}) advertises no actions: "
                             "set db.geppetto_spec with its actions")
        providers.append(spec)
    npcs = {"npcs": [], "residents": []}
    for obj in sorted(search_tag(category=NPC), key=lambda o: gid(o, NPC)):
        spec = deserialize(obj.db.geppetto_spec) or {}
        section = spec.pop("section", "residents")
        spec.update(id=gid(obj, NPC), name=obj.key, archetype=obj.db.geppetto_archetype,
                    room=room_of(obj) or spec.get("room"))
        if spec["archetype"] is None:
            raise ValueError(f"NPC {spec['id']} ({obj.dbref}) has no archetype (db.geppetto_archetype)")
        npcs[section].append(spec)
    for folder in reversed([out, *out.parents]):
        if not folder.exists():
            folder.mkdir()
            folder.chmod(DIR_MODE)
    sections = {"rooms": rooms, "providers": providers, **npcs, "descriptions": descriptions}
    for section, entries in sections.items():
        note = (" (geppetto does not read them: the game's, for the next import)"
                if section == "descriptions" else "")
        write(out / SECTIONS[section],
              f"# Exported from the Evennia game by geppetto-evennia: its {section}{note}.\n"
              + yaml.safe_dump({section: entries}, sort_keys=False, allow_unicode=True, width=100,
                               default_flow_style=False if section == "descriptions" else None))
    if not (out / WORLD_SETTINGS).exists():
        write(out / WORLD_SETTINGS,
              "# The world's own settings, written by geppetto-evennia's export because the\n"
              "# directory had none: yours to edit (seed, profile, weather …); a later export\n"
              "# keeps this file as it is.\n"
              + yaml.safe_dump({"zone": zone, "seed": 0, "start_game_time": start_game_time},
                               sort_keys=False))
    return {section: len(entries) for section, entries in sections.items()}


def write(path, text):
    """Writes `text` to `path` with mode 644, whatever the process's umask."""
    with open(path, "w") as file:
        file.write(text)
    os.chmod(path, FILE_MODE)
