"""The world both sides share: a geppetto world directory built into Evennia (rooms with their
descriptions, an exit each way, providers, NPCs and residents, all tagged, and a way in from
the start room) and the game's world exported back (into a worlds/ folder, files of mode
644); paths over exits; the `geppetto_import` and `geppetto_export` commands."""
import os
import stat
import tempfile
from pathlib import Path

import yaml
from django.test import override_settings
from evennia import create_object

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

    def out(self, name="mine"):
        """A world directory to export to, in a worlds/ folder (not made yet)."""
        return Path(self.tmp.name) / "worlds" / name

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

    def test_rooms_are_described_by_the_world_else_by_name_and_providers(self):
        (self.dir / "descriptions.yaml").write_text(
            "descriptions:\n  green: The grass is worn to mud around the old oak.\n")
        (self.dir / "zz-door.yaml").write_text(
            'providers:\n  - { id: inn_door, name: "the inn", room: inn, actions: [ { id: knock } ] }\n')
        made = world.build(self.dir)
        self.assertEqual(made[ROOM]["green"].db.desc, "The grass is worn to mud around the old oak.")
        self.assertEqual(made[ROOM]["well_yard"].db.desc, "The well yard, with the well.")
        self.assertEqual(made[ROOM]["lane"].db.desc, "The lane.")
        self.assertEqual(made[ROOM]["inn"].db.desc, "The inn, with the taproom.")   # not "the inn" again
        made[ROOM]["lane"].db.desc = "A builder's words."
        world.build(self.dir)
        self.assertEqual(made[ROOM]["lane"].db.desc, "A builder's words.")
        self.assertNotIn("This is a room.", made[ROOM]["inn"].return_appearance(self.char1))

    def test_descriptions_of_rooms_the_world_lacks_are_refused(self):
        (self.dir / "descriptions.yaml").write_text("descriptions:\n  moon: Grey dust.\n")
        with self.assertRaisesRegex(ValueError, "descriptions of rooms the world does not have: moon"):
            world.build(self.dir)
        (self.dir / "descriptions.yaml").write_text("descriptions: [green]\n")
        with self.assertRaisesRegex(ValueError, "descriptions is a mapping of room id to text"):
            world.build(self.dir)

    def test_a_provider_named_with_its_article_is_listed_without_another(self):
        made = world.build(self.dir)
        seen = made[ROOM]["well_yard"].return_appearance(self.char1)
        self.assertIn("the well", seen)
        self.assertNotIn("a the well", seen)
        self.assertEqual(made[PROVIDER]["well"].get_numbered_name(1, self.char1, return_string=True),
                         "the well")
        self.assertEqual(made[PROVIDER]["well"].get_numbered_name(2, self.char1)[1], "two the wells")

    def test_a_way_in_leads_from_the_start_room_and_back(self):
        limbo = create_object("evennia.objects.objects.DefaultRoom", key="Limbo")
        made = world.build(self.dir, start=limbo)
        (way_in,) = world.exits_from(limbo)
        self.assertEqual((way_in.key, way_in.destination), ("hamlet", made[ROOM]["green"]))
        self.assertIn("green", way_in.aliases.all())
        back = [e for e in world.exits_from(made[ROOM]["green"]) if e.destination == limbo]
        self.assertEqual([e.key for e in back], ["limbo"])
        world.build(self.dir, start=limbo)
        self.assertEqual(len(world.exits_from(limbo)), 1)
        self.assertEqual(len(world.exits_from(made[ROOM]["green"])), 3)
        self.char2.move_to(limbo, quiet=True)
        self.char2.execute_cmd("hamlet")
        self.assertEqual(self.char2.location, made[ROOM]["green"])
        out = self.out()
        world.export(out)
        rooms = {r["id"]: r for r in self.exported(out)["rooms.yaml"]["rooms"]}
        self.assertEqual(rooms["green"]["neighbours"], ["inn", "well_yard"])

    def test_the_way_in_may_lead_to_another_room_but_not_to_none(self):
        limbo = create_object("evennia.objects.objects.DefaultRoom", key="Limbo")
        made = world.build(self.dir, start=limbo, entry="inn")
        self.assertEqual([e.destination for e in world.exits_from(limbo)], [made[ROOM]["inn"]])
        with self.assertRaisesRegex(ValueError, "the entry room moon is not a room of the world"):
            world.build(self.dir, start=limbo, entry="moon")

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
        out = self.out()
        out.mkdir(parents=True)
        (out / "world.yaml").write_text("zone: mine\n")
        counts = world.export(out)
        files = self.exported(out)
        self.assertEqual((out / "world.yaml").read_text(), "zone: mine\n")
        self.assertTrue((out / "rooms.yaml").read_text().startswith(
            "# Exported from the Evennia game by geppetto-evennia: its rooms.\n"))
        again = world.load(out)
        # The game's own square, market and bakery (the test rooms) are rooms too (room1 described).
        self.assertEqual(counts, {"rooms": 7, "providers": 2, "npcs": 1, "residents": 2,
                                  "descriptions": 5})
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
        world.export(self.out())
        residents = self.exported(self.out())["residents.yaml"]["residents"]
        self.assertEqual(residents, [{"id": "nell", "name": "Nell", "archetype": "child", "room": "market"}])

    def test_a_provider_without_actions_is_refused(self):
        self.obj1.tags.add("stump", category=PROVIDER)
        with self.assertRaisesRegex(ValueError, "provider stump .* advertises no actions"):
            world.export(self.out())

    def test_an_npc_without_archetype_is_refused(self):
        nell = self.npc("nell", "Nell", self.room2)
        del nell.db.geppetto_archetype
        with self.assertRaisesRegex(ValueError, "NPC nell .* has no archetype"):
            world.export(self.out())

    def test_a_directory_without_world_settings_gets_them_and_keeps_them(self):
        world.build(self.dir)
        out = self.out()
        world.export(out, zone="hamlet", start_game_time=500)
        settings = yaml.safe_load((out / "world.yaml").read_text())
        self.assertEqual(settings, {"zone": "hamlet", "seed": 0, "start_game_time": 500})
        (out / "world.yaml").write_text("zone: hamlet\nseed: 9\n")
        world.export(out, zone="other")
        self.assertEqual((out / "world.yaml").read_text(), "zone: hamlet\nseed: 9\n")
        self.assertEqual(world.load(out)["zone"], "hamlet")

    def test_files_are_written_readable_whatever_the_umask(self):
        world.build(self.dir)
        before = os.umask(0o077)                        # what twistd gives a daemonized server
        try:
            world.export(self.out())
        finally:
            os.umask(before)
        out = self.out()
        self.assertEqual(stat.S_IMODE(out.stat().st_mode), 0o755)
        self.assertEqual(stat.S_IMODE(out.parent.stat().st_mode), 0o755)
        for file in out.iterdir():
            self.assertEqual(stat.S_IMODE(file.stat().st_mode), 0o644, file.name)

    def test_a_directory_outside_a_worlds_folder_is_refused_with_the_reason(self):
        elsewhere = Path(self.tmp.name) / "exports" / "mine"
        with self.assertRaisesRegex(ValueError, "not in a folder named worlds: geppetto validate .*"
                                                "exports/worlds/mine"):
            world.export(elsewhere)
        self.assertFalse(elsewhere.exists())

    def test_descriptions_go_out_and_come_back(self):
        made = world.build(self.dir)
        made[ROOM]["inn"].db.desc = "Low beams, a fire, the smell of stew."
        out = self.out()
        world.export(out)
        self.assertEqual(self.exported(out)["descriptions.yaml"]["descriptions"]["inn"],
                         "Low beams, a fire, the smell of stew.")
        made[ROOM]["inn"].db.desc = "changed in the game"
        world.build(out)
        self.assertEqual(made[ROOM]["inn"].db.desc, "Low beams, a fire, the smell of stew.")


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
    def setUp(self):
        super().setUp()
        self.limbo = create_object("evennia.objects.objects.DefaultRoom", key="Limbo")
        patcher = override_settings(GEPPETTO_START_ROOM=self.limbo.dbref, GAME_DIR=self.tmp.name)
        patcher.enable()
        self.addCleanup(patcher.disable)

    def test_import_then_export(self):
        self.call(CmdGeppettoImport(), str(self.dir),
                  f"Built from {self.dir}: 4 rooms, 3 npcs, 2 providers. "
                  "From Limbo, the exit 'hamlet' leads to the green.")
        self.assertIsNotNone(world.tagged(NPC, "ulla"))
        out = self.out()
        self.call(CmdGeppettoExport(), str(out),
                  f"Exported to {out}: 7 rooms, 2 providers, 1 npcs, 2 residents, 5 descriptions")
        self.assertTrue((out / "npcs.yaml").exists())
        self.assertEqual(yaml.safe_load((out / "world.yaml").read_text())["zone"], "village")

    def test_relative_directories_are_in_the_game_folder(self):
        self.call(CmdGeppettoImport(), "hamlet", f"Built from {self.dir}: 4 rooms")
        self.call(CmdGeppettoExport(), "worlds/copy", f"Exported to {self.out('copy')}: 7 rooms")
        self.assertTrue((self.out("copy") / "rooms.yaml").exists())

    def test_import_with_an_entry_room_setting(self):
        with override_settings(GEPPETTO_ENTRY_ROOM="inn"):
            self.call(CmdGeppettoImport(), str(self.dir), f"Built from {self.dir}: 4 rooms, 3 npcs, "
                      "2 providers. From Limbo, the exit 'hamlet' leads to the inn.")
        with override_settings(GEPPETTO_ENTRY_ROOM="moon"):
            self.call(CmdGeppettoImport(), str(self.dir),
                      f"geppetto_import: {self.dir}: the entry room moon is not a room of the world")

    def test_usage_and_errors_are_told_to_the_caller(self):
        self.call(CmdGeppettoImport(), "", "Usage: geppetto_import <directory>")
        self.call(CmdGeppettoExport(), "", "Usage: geppetto_export <directory>")
        self.call(CmdGeppettoImport(), str(self.dir / "nowhere"),
                  f"geppetto_import: {self.dir / 'nowhere'}: no world directory at")
        (self.dir / "rooms.yaml").write_text("rooms:\n  - { name: nameless }\n")
        self.call(CmdGeppettoImport(), str(self.dir),
                  f"geppetto_import: {self.dir}: an entry lacks the field 'id'")
        self.call(CmdGeppettoExport(), "/tmp/mine", "geppetto_export: /tmp/mine is not in a folder named worlds")
        self.obj1.tags.add("stump", category=PROVIDER)
        self.call(CmdGeppettoExport(), str(self.out()), "geppetto_export: provider stump")
        with override_settings(GEPPETTO_START_ROOM="#99999"):
            self.call(CmdGeppettoImport(), str(self.dir),
                      f"geppetto_import: {self.dir}: the start room #99999 (GEPPETTO_START_ROOM")

    def test_only_developers_may_import_and_export(self):
        self.assertTrue(self.char1.locks.check_lockstring(self.char1, CmdGeppettoImport.locks))
        self.assertFalse(self.char2.locks.check_lockstring(self.char2, CmdGeppettoImport.locks))
        self.assertFalse(self.char2.locks.check_lockstring(self.char2, CmdGeppettoExport.locks))
