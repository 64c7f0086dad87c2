"""The world both sides share: Evennia rooms, exits, NPCs and providers, tagged with their
geppetto ids, built from a geppetto world directory and exported back to one.

Rooms carry the tag `<room id>` in category `geppetto_room`, NPCs `<npc id>` in
`geppetto_npc` (and `db.geppetto_archetype`, `db.geppetto_spec`), providers `<provider id>`
in `geppetto_provider` (and `db.geppetto_spec`, the provider as the world file gives it).
"""
from collections import deque
from pathlib import Path

import yaml
from evennia import create_object, search_tag
from evennia.utils.dbserialize import deserialize
from evennia.utils.utils import inherits_from

ROOM, NPC, PROVIDER = "geppetto_room", "geppetto_npc", "geppetto_provider"
#: The sections of a world directory the game exports (the rest of a world is geppetto's).
SECTIONS = {"rooms": "rooms.yaml", "providers": "providers.yaml", "npcs": "npcs.yaml",
            "residents": "residents.yaml"}


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


def build(world, room_typeclass="geppetto_evennia.typeclasses.GeppettoRoom",
          exit_typeclass="evennia.objects.objects.DefaultExit",
          npc_typeclass="geppetto_evennia.typeclasses.GeppettoNPC",
          provider_typeclass="evennia.objects.objects.DefaultObject"):
    """Builds (or completes) the Evennia side of a geppetto world directory: a room per room,
    an exit each way per neighbour, an object per provider and an NPC per NPC or resident.
    Objects already tagged are kept. Returns {category: {id: object}}."""
    data = load(world)
    made = {ROOM: {}, NPC: {}, PROVIDER: {}}
    for spec in data.get("rooms", []):
        room = tagged(ROOM, spec["id"]) or create_object(room_typeclass, key=spec.get("name", spec["id"]))
        room.tags.add(spec["id"], category=ROOM)
        made[ROOM][spec["id"]] = room
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
    return made


def export(directory):
    """Writes the game's rooms (neighbours from its exits), providers and NPCs (where each
    now stands) to a geppetto world directory's rooms.yaml, providers.yaml, npcs.yaml and
    residents.yaml. The other sections (zone, seed, weather, …) stay the author's, in their
    own file. Returns the counts written."""
    rooms = []
    for room in sorted(search_tag(category=ROOM), key=lambda r: gid(r, ROOM)):
        neighbours = sorted({gid(e.destination, ROOM) for e in exits_from(room)} - {None})
        rooms.append({"id": gid(room, ROOM), "name": room.key, "neighbours": neighbours})
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
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    sections = {"rooms": rooms, "providers": providers, **npcs}
    for section, entries in sections.items():
        with open(out / SECTIONS[section], "w") as text:
            text.write(f"# Exported from the Evennia game by geppetto-evennia: its {section}.\n")
            yaml.safe_dump({section: entries}, text, sort_keys=False, default_flow_style=None)
    return {section: len(entries) for section, entries in sections.items()}
