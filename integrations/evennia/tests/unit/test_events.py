"""Evennia events out as geppetto world events: what the rooms' hooks, the NPCs' engage and
release, the `say` and `order` commands and the clock publish on the world stream, in the
envelope `Bus.send` gives them."""
from geppetto_evennia import CmdGeppettoSay, CmdOrder

from .support import ZONE, GeppettoTest, Heard


class EnvelopeTest(GeppettoTest):
    def test_every_event_carries_the_envelope_and_a_unique_id(self):
        self.char2.move_to(self.room2, move_type="traverse")
        self.bridge.clock(421)
        sent = self.bus.take()
        self.assertEqual([m["type"] for m in sent], ["player_left", "player_entered", "time_advanced"])
        for message in sent:
            self.assertEqual(message["v"], 1)
            self.assertEqual(message["zone"], ZONE)
            self.assertTrue(message["id"].startswith(f"evennia-{self.bus.run}-"), message)
        self.assertEqual([m["game_time"] for m in sent], [420, 420, 421])
        self.assertEqual(len({m["id"] for m in sent}), 3)

    def test_each_event_is_flushed_as_it_is_sent(self):
        before = self.bus.flushes
        self.bridge.npc_moved("bram", "square")
        self.bridge.npc_moved("bram", "market")
        self.assertEqual(self.bus.flushes - before, 2)
        self.assertEqual([m["room"] for m in self.bus.world], ["square", "market"])


class PresenceTest(GeppettoTest):
    def test_a_player_walking_between_rooms_leaves_one_and_enters_the_other(self):
        self.char1.move_to(self.room2, move_type="traverse")
        sent = self.bus.take()
        self.assertEqual([(m["type"], m["player"], m["room"]) for m in sent],
                         [("player_left", "Char", "square"), ("player_entered", "Char", "market")])

    def test_an_npc_walking_in_is_reported_as_moved_and_never_as_a_player(self):
        bram = self.npc("bram", "Bram", self.room1)
        bram.move_to(self.room2, move_type="traverse")
        self.assertSent("npc_moved", npc="bram", room="market")

    def test_a_move_geppetto_made_itself_is_not_reported(self):
        bram = self.npc("bram", "Bram", self.room1)
        bram.move_to(self.room2, quiet=True, geppetto_report=False)
        self.char1.move_to(self.room2, geppetto_report=False)
        self.assertEqual(self.bus.take(), [player_left("Char", "square")])

    def test_rooms_without_a_geppetto_id_and_things_that_are_not_characters_say_nothing(self):
        self.room2.tags.remove(category="geppetto_room")
        self.obj1.move_to(self.room3)
        self.char2.move_to(self.room2)
        self.assertEqual(self.bus.take(), [player_left("Char2", "square")])

    def test_announcing_positions_tells_where_every_npc_stands(self):
        self.npc("bram", "Bram", self.room1)
        self.npc("mira", "Mira", self.room3)
        self.bridge.announce_positions()
        sent = self.bus.take("npc_moved")
        self.assertEqual(sorted((m["npc"], m["room"]) for m in sent),
                         [("bram", "square"), ("mira", "bakery")])

    def test_without_a_running_bridge_the_hooks_report_nothing(self):
        bus = self.bus
        self.game_script.delete()
        self.char1.move_to(self.room2)
        self.npc("bram", "Bram", self.room1).geppetto_engage("combat")
        self.assertEqual(bus.take(), [])


class EngagementTest(GeppettoTest):
    def test_engage_and_release_go_out_with_the_npc_and_the_reason(self):
        vex = self.npc("vex", "Vex", self.room1)
        vex.geppetto_engage("combat")
        self.assertSent("npc_engaged", npc="vex", reason="combat")
        self.assertIn("vex", self.bridge.engaged)
        vex.geppetto_release()
        self.assertSent("npc_released", npc="vex")
        self.assertNotIn("vex", self.bridge.engaged)

    def test_an_engaged_npc_drops_its_walk_and_does_not_step_while_engaged(self):
        vex = self.npc("vex", "Vex", self.room1)
        self.intent("navigate", "vex", "i-1", to_room="bakery")
        vex.geppetto_engage("dialogue")
        self.bus.take()
        self.bridge.clock(430)
        self.assertEqual(vex.location, self.room1)
        self.assertEqual(self.bus.take(), [Fields(type="time_advanced", game_time=430)])


class ClockTest(GeppettoTest):
    def test_the_clock_goes_out_only_when_it_moves_on(self):
        self.bridge.clock(421)
        self.bridge.clock(421)
        self.bridge.clock(400)
        self.bridge.clock(425)
        self.assertEqual([m["game_time"] for m in self.bus.take("time_advanced")], [421, 425])
        self.assertEqual(self.bridge.now, 425)


class SayTest(GeppettoTest):
    def test_say_is_speech_in_the_room_and_a_say_event(self):
        heard = Heard(self.char2)
        self.call(CmdGeppettoSay(), "Good morning, villagers!", 'You say, "Good morning, villagers!"')
        self.assertSent("say", speaker="Char", text="Good morning, villagers!", room="square")
        self.assertIn('Char says, "Good morning, villagers!"', heard)

    def test_saying_nothing_or_outside_geppetto_rooms_sends_nothing(self):
        self.call(CmdGeppettoSay(), "", "Say what?")
        self.assertEqual(self.bus.take(), [])
        self.room3.tags.remove(category="geppetto_room")
        self.char1.move_to(self.room3, quiet=True)
        self.bus.take()
        self.call(CmdGeppettoSay(), "hello", 'You say, "hello"')
        self.assertEqual(self.bus.take(), [])


class OrderTest(GeppettoTest):
    def setUp(self):
        super().setUp()
        self.piet = self.npc("piet", "Piet the trader", self.room1)
        self.provider("gatehouse", "the gatehouse", self.room3, ["report_a_theft"])
        self.provider("chapel", "the chapel", self.room3, ["pray", "report_a_theft"])

    def test_an_order_names_the_npc_the_provider_the_action_and_who_gave_it(self):
        self.call(CmdOrder(), "piet report_a_theft at gatehouse", "You tell Piet the trader to report a theft.")
        sent = self.assertSent("order", npc="piet", provider="gatehouse", action="report_a_theft", by="Char")
        self.assertIs(self.bridge.orders[sent["id"]], self.char1)

    def test_without_a_provider_the_first_advertiser_by_id_is_chosen(self):
        self.call(CmdOrder(), "Piet pray", "You tell Piet the trader to pray.")
        self.assertSent("order", provider="chapel", action="pray")
        self.call(CmdOrder(), "piet report_a_theft", "You tell Piet the trader to report a theft.")
        self.assertSent("order", provider="chapel", action="report_a_theft")

    def test_an_npc_elsewhere_is_found_by_its_geppetto_id(self):
        self.piet.move_to(self.room3, quiet=True, geppetto_report=False)
        self.call(CmdOrder(), "piet pray at chapel", "You tell Piet the trader to pray.")
        self.assertSent("order", npc="piet")

    def test_orders_that_cannot_be_given_send_nothing(self):
        self.call(CmdOrder(), "piet", "Usage: order <npc> <action> [at <provider>]")
        self.call(CmdOrder(), "nobody pray", "There is no one called nobody to order.")
        self.call(CmdOrder(), "piet dance", "Nowhere offers 'dance'.")
        self.assertEqual(self.bus.take(), [])
        self.game_script.delete()
        self.call(CmdOrder(), "piet pray", "The villagers are not listening (geppetto is not running).")
        self.assertEqual(self.bus.take(), [])


def player_left(player, room):
    """The fields of a player_left event, for comparing without the envelope."""
    return Fields(type="player_left", player=player, room=room)


class Fields(dict):
    """Equal to any message that carries these fields (whatever else it carries)."""

    def __eq__(self, other):
        return isinstance(other, dict) and all(other.get(k) == v for k, v in self.items())

    __hash__ = None
