"""NPC tagging: an NPC is geppetto's by its tag in `geppetto_npc` and its archetype, a room by
its tag in `geppetto_room`; players are the characters that are not NPCs; commands find NPCs
by name in the room, else by geppetto id."""
from evennia import create_object

from geppetto_evennia import NPC, PROVIDER, ROOM, world
from geppetto_evennia.commands import advertisers, find_npc

from .support import GeppettoTest


class NpcTagTest(GeppettoTest):
    def test_the_geppetto_id_is_one_tag_in_the_npc_category(self):
        bram = self.npc("bram", "Bram", self.room1)
        self.assertEqual(bram.geppetto_id, "bram")
        self.assertEqual(bram.tags.get(category=NPC, return_list=True), ["bram"])
        bram.geppetto_id = "bjorn"
        self.assertEqual(bram.tags.get(category=NPC, return_list=True), ["bjorn"])
        self.assertEqual(world.tagged(NPC, "bjorn"), bram)
        self.assertIsNone(world.tagged(NPC, "bram"))

    def test_the_archetype_is_an_attribute(self):
        bram = self.npc("bram", "Bram", self.room1, archetype="blacksmith")
        self.assertEqual(bram.db.geppetto_archetype, "blacksmith")
        bram.geppetto_archetype = "guard"
        self.assertEqual(bram.geppetto_archetype, "guard")
        self.assertEqual(bram.attributes.get("geppetto_archetype"), "guard")

    def test_an_untagged_npc_has_no_id(self):
        npc = create_object("geppetto_evennia.typeclasses.GeppettoNPC", key="Nobody", location=self.room3)
        self.assertIsNone(npc.geppetto_id)
        self.assertFalse(world.is_npc(npc))


class WhoIsWhoTest(GeppettoTest):
    def test_players_are_characters_that_are_not_npcs(self):
        bram = self.npc("bram", "Bram", self.room1)
        self.assertTrue(world.is_player(self.char1))
        self.assertFalse(world.is_player(bram))
        self.assertTrue(world.is_npc(bram))
        self.assertFalse(world.is_player(self.obj1))
        self.assertFalse(world.is_npc(self.obj1))

    def test_ids_and_rooms(self):
        self.assertEqual(world.gid(self.room2, ROOM), "market")
        self.assertIsNone(world.gid(self.obj1, ROOM))
        self.assertIsNone(world.gid(None, ROOM))
        self.assertEqual(world.room_of(self.char1), "square")
        self.assertIsNone(world.room_of(self.room1))
        self.assertEqual(world.tagged(ROOM, "bakery"), self.room3)
        self.assertIsNone(world.tagged(ROOM, "mill"))

    def test_the_same_id_in_another_category_is_another_thing(self):
        self.obj1.tags.add("market", category=PROVIDER)
        self.assertEqual(world.tagged(ROOM, "market"), self.room2)
        self.assertEqual(world.tagged(PROVIDER, "market"), self.obj1)


class FindNpcTest(GeppettoTest):
    def test_by_name_in_the_room_first_then_by_id_anywhere(self):
        here = self.npc("piet", "Piet the trader", self.room1)
        there = self.npc("marla", "Marla the trader", self.room3)
        self.assertEqual(find_npc(self.char1, "piet"), here)
        self.assertEqual(find_npc(self.char1, "Marla"), there)
        self.assertIsNone(find_npc(self.char1, "trader-of-nowhere"))

    def test_players_in_the_room_are_not_npcs_to_find(self):
        self.assertIsNone(find_npc(self.char1, "Char2"))

    def test_advertisers_are_sorted_by_id(self):
        self.provider("well", "the well", self.room1, ["draw_water"])
        self.provider("brook", "the brook", self.room3, ["draw_water", "fish"])
        self.assertEqual([gid for gid, _ in advertisers("draw_water")], ["brook", "well"])
        self.assertEqual([gid for gid, _ in advertisers("fish")], ["brook"])
        self.assertEqual(advertisers("dance"), [])
