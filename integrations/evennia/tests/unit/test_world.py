"""The world both sides share: a geppetto world directory built into Evennia (rooms, an exit
each way, providers, NPCs and residents, all tagged) and the game's world exported back;
paths over exits; the `geppetto_import` and `geppetto_export` commands."""
import tempfile
from pathlib import Path

import yaml

from geppetto_evennia import NPC, PROVIDER, ROOM, CmdGeppettoExport, CmdGeppettoImport, world

from .support import GeppettoTest

WORLD_FILES = {
    "world.yaml": "zone: hamlet\nseed: 7\nstart_game_time: 420\n",
    "rooms.yaml": """
rooms:
  - { id: green, name: "the green", neighbours: [inn, well_yard] }
  - { id: inn, name: "the inn", neighbours: [] }
  - { id: well_yard, name: "the well yard", neighbours: [lane] }
  - { id: lane, name: "the lane" }
""",
    "providers.yaml": """
providers:
  - { id: well, name: "the well", room: well_yard, capacity: 4,
      actions: [ { id: draw_water, tags: [chore], duration_hours: 0.25 } ] }
  - { id: taproom, name: "the taproom", room: inn,
      actions: [ { id: eat_stew, tags: [food] }, { id: drink, tags: [social] } ] }
""",
    "npcs.yaml": """
npcs:
  - { id: bram, name: "Bram the smith", archetype: craftsman, room: green, capabilities: [smithing] }
""",
    "residents.yaml": """
residents:
  - { id: pip, name: "Pip", archetype: child, room: lane, places: { home: cottages } }
  - { id: ulla, name: "Ulla", archetype: innkeeper, room: inn }
""",
}


class WorldDirTest(GeppettoTest):
    def setUp(self):
        super().setUp()
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name) / "hamlet"
        self.dir.mkdir()
        for name, text in WORLD_FILES.items():
            (self.dir / name).write_text(text)

    def tearDown(self):
        self.tmp.cleanup()
        super().tearDown()

    def exported(self, directory):
        return {name: yaml.safe_load((Path(directory) / name).read_text())
                for name in world.SECTIONS.values()}


class LoadTest(WorldDirTest):
    def test_sections_are_joined_over_the_files_in_name_order(self):
        (self.dir / "zz-more.yaml").write_text("residents:\n  - { id: nell, archetype: child }\nzone: other\n")
        data = world.load(self.dir)
        self.assertEqual([r["id"] for r in data["residents"]], ["pip", "ulla", "nell"])
        self.assertEqual(data["zone"], "other")
        self.assertEqual(data["seed"], 7)

    def test_a_file_that_is_not_a_mapping_is_refused(self):
        (self.dir / "bad.yaml").write_text("- just\n- a list\n")
        with self.assertRaisesRegex(ValueError, "bad.yaml: a world file is a mapping"):
            world.load(self.dir)

    def test_a_missing_directory_is_refused(self):
        with self.assertRaises(FileNotFoundError):
            world.load(self.dir / "nowhere")


class BuildTest(WorldDirTest):
    def test_rooms_exits_providers_and_npcs_are_made_and_tagged(self):
        made = world.build(self.dir)
        self.assertEqual(sorted(made[ROOM]), ["green", "inn", "lane", "well_yard"])
        green, inn, yard, lane = (made[ROOM][r] for r in ("green", "inn", "well_yard", "lane"))
        self.assertEqual(green.key, "the green")
        self.assertEqual(world.tagged(ROOM, "lane"), lane)
        self.assertEqual(sorted((e.key, e.destination.key) for e in world.exits_from(green)),
                         [("inn", "the inn"), ("well_yard", "the well yard")])
        self.assertEqual([e.destination for e in world.exits_from(lane)], [yard])
        self.assertEqual(len(world.exits_from(yard)), 2)

        well = made[PROVIDER]["well"]
        self.assertEqual((well.key, well.location), ("the well", yard))
        self.assertEqual(well.db.geppetto_spec["capacity"], 4)
        self.assertEqual(world.tagged(PROVIDER, "taproom").location, inn)

        bram, pip = made[NPC]["bram"], made[NPC]["pip"]
        self.assertEqual((bram.key, bram.location, bram.geppetto_archetype), ("Bram the smith", green, "craftsman"))
        self.assertEqual(bram.geppetto_id, "bram")
        self.assertEqual(bram.db.geppetto_spec["section"], "npcs")
        self.assertEqual(pip.db.geppetto_spec["section"], "residents")
        self.assertEqual(pip.location, lane)
        self.assertTrue(bram.is_typeclass("geppetto_evennia.typeclasses.GeppettoNPC", exact=True))
        self.assertTrue(green.is_typeclass("geppetto_evennia.typeclasses.GeppettoRoom", exact=True))

    def test_npcs_are_placed_without_being_taken_for_players(self):
        self.bus.take()
        world.build(self.dir)
        self.assertEqual([(m["type"], m.get("player")) for m in self.bus.take()], [])

    def test_building_again_keeps_what_is_tagged_and_adds_nothing_twice(self):
        first = world.build(self.dir)
        first[NPC]["bram"].move_to(first[ROOM]["inn"], quiet=True, geppetto_report=False)
        second = world.build(self.dir)
        for category in (ROOM, NPC, PROVIDER):
            self.assertEqual({k: o.id for k, o in first[category].items()},
                             {k: o.id for k, o in second[category].items()})
        self.assertEqual(len(world.exits_from(second[ROOM]["green"])), 2)
        self.assertEqual(second[NPC]["bram"].location, second[ROOM]["inn"])

    def test_a_neighbour_that_is_no_room_is_refused(self):
        (self.dir / "rooms.yaml").write_text("rooms:\n  - { id: green, neighbours: [moon] }\n")
        with self.assertRaisesRegex(ValueError, "room green names neighbour moon, which is no room"):
            world.build(self.dir)


class ExportTest(WorldDirTest):
    def test_export_writes_the_world_as_the_game_has_it(self):
        made = world.build(self.dir)
        made[NPC]["pip"].move_to(made[ROOM]["green"], quiet=True, geppetto_report=False)
        with tempfile.TemporaryDirectory() as out:
            (Path(out) / "world.yaml").write_text("zone: mine\n")
            counts = world.export(out)
            files = self.exported(out)
            self.assertEqual((Path(out) / "world.yaml").read_text(), "zone: mine\n")
            self.assertTrue((Path(out) / "rooms.yaml").read_text().startswith(
                "# Exported from the Evennia game by geppetto-evennia: its rooms.\n"))
            again = world.load(out)
        # The game's own square, market and bakery (the test rooms) are rooms too.
        self.assertEqual(counts, {"rooms": 7, "providers": 2, "npcs": 1, "residents": 2})
        rooms = {r["id"]: r for r in files["rooms.yaml"]["rooms"]}
        self.assertEqual(rooms["green"], {"id": "green", "name": "the green", "neighbours": ["inn", "well_yard"]})
        self.assertEqual(rooms["lane"]["neighbours"], ["well_yard"])
        self.assertEqual(rooms["inn"]["neighbours"], ["green"])
        residents = {n["id"]: n for n in files["residents.yaml"]["residents"]}
        self.assertEqual(residents["pip"]["room"], "green")
        self.assertEqual(residents["pip"]["places"], {"home": "cottages"})
        self.assertNotIn("section", residents["pip"])
        self.assertEqual(files["npcs.yaml"]["npcs"][0]["capabilities"], ["smithing"])
        providers = {p["id"]: p for p in files["providers.yaml"]["providers"]}
        self.assertEqual([a["id"] for a in providers["taproom"]["actions"]], ["eat_stew", "drink"])
        self.assertEqual(providers["well"]["room"], "well_yard")
        self.assertEqual(again["zone"], "mine")

    def test_an_npc_made_in_the_game_is_exported_as_a_resident(self):
        self.npc("nell", "Nell", self.room2, archetype="child")
        with tempfile.TemporaryDirectory() as out:
            world.export(out)
            residents = self.exported(out)["residents.yaml"]["residents"]
        self.assertEqual(residents, [{"id": "nell", "name": "Nell", "archetype": "child", "room": "market"}])

    def test_a_provider_without_actions_is_refused(self):
        self.obj1.tags.add("stump", category=PROVIDER)
        with tempfile.TemporaryDirectory() as out, \
                self.assertRaisesRegex(ValueError, "provider stump .* advertises no actions"):
            world.export(out)

    def test_an_npc_without_archetype_is_refused(self):
        nell = self.npc("nell", "Nell", self.room2)
        del nell.db.geppetto_archetype
        with tempfile.TemporaryDirectory() as out, \
                self.assertRaisesRegex(ValueError, "NPC nell .* has no archetype"):
            world.export(out)


class PathTest(GeppettoTest):
    def test_the_shortest_way_over_exits(self):
        self.assertEqual([e.key for e in world.path(self.room1, "bakery")], ["market", "bakery"])
        self.assertEqual([e.location for e in world.path(self.room3, "square")], [self.room3, self.room2])
        self.assertEqual(world.path(self.room2, "market"), [])
        self.link(self.room1, self.room3)
        self.assertEqual([e.key for e in world.path(self.room1, "bakery")], ["bakery"])

    def test_no_way_is_none(self):
        self.assertIsNone(world.path(self.room1, "moon"))
        for exit_obj in world.exits_from(self.room2):
            exit_obj.delete()
        self.assertIsNone(world.path(self.room1, "bakery"))


class CommandTest(WorldDirTest):
    def test_import_then_export(self):
        self.call(CmdGeppettoImport(), str(self.dir),
                  f"Built from {self.dir}: 4 rooms, 3 npcs, 2 providers")
        self.assertIsNotNone(world.tagged(NPC, "ulla"))
        with tempfile.TemporaryDirectory() as out:
            self.call(CmdGeppettoExport(), out,
                      f"Exported to {out}: 7 rooms, 2 providers, 1 npcs, 2 residents")
            self.assertTrue((Path(out) / "npcs.yaml").exists())

    def test_usage_and_errors_are_told_to_the_caller(self):
        self.call(CmdGeppettoImport(), "", "Usage: geppetto_import <directory>")
        self.call(CmdGeppettoExport(), "", "Usage: geppetto_export <directory>")
        self.call(CmdGeppettoImport(), str(self.dir / "nowhere"), "geppetto_import: ")
        self.obj1.tags.add("stump", category=PROVIDER)
        with tempfile.TemporaryDirectory() as out:
            self.call(CmdGeppettoExport(), out, "geppetto_export: provider stump")

    def test_only_developers_may_import_and_export(self):
        self.assertTrue(self.char1.locks.check_lockstring(self.char1, CmdGeppettoImport.locks))
        self.assertFalse(self.char2.locks.check_lockstring(self.char2, CmdGeppettoImport.locks))
        self.assertFalse(self.char2.locks.check_lockstring(self.char2, CmdGeppettoExport.locks))
