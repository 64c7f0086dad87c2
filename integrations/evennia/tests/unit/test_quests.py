"""Quests through the bridge: the quest board (geppetto_quests, fed by the bridge) hears every
story message and NPC event, ticks with the game clock, posts its world events in order with
the game's, and players see and take its offers with `quests` and `accept`; the script makes
it from GEPPETTO_QUEST_BOARD and keeps its state over a reload."""
import json
from unittest.mock import patch

from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings
from evennia import create_script
from geppetto_quests import QuestBoard

from geppetto_evennia import SCRIPT_KEY, Bridge, Bus, CmdAccept, CmdQuests, GeppettoScript
from geppetto_evennia import scripts

from .support import ZONE, GeppettoTest, Heard, MemoryBus, RedisServer


def signal(n, kind="threat_detected", message="story_signal", t=420, importance=0.5,
           location="market", npcs=("greta", "vex"), expires_at=1000, **extra):
    """A story stream message as geppetto writes it, for signal `{kind}:{n}`."""
    sid = f"{kind}:{n}"
    suffix = {"story_signal": "", "story_signal_updated": f":updated:{t}",
              "story_signal_expired": ":expired", "story_signal_resolved": ":resolved"}[message]
    return {"v": 1, "type": message, "id": f"{ZONE}:story:{sid}{suffix}", "zone": ZONE,
            "game_time": t, "signal": sid, "signal_type": kind, "importance": importance,
            "npcs": list(npcs), "players": [], "location": location, "context": {"subject": "vex"},
            "expires_at_hours": expires_at / 60, "expires_at": expires_at, "merged": 0, **extra}


class QuestTest(GeppettoTest):
    """Greta and Vex in the market (room2), a stall there; a board fed by the bridge."""

    def setUp(self):
        super().setUp()
        self.room2.key = "the market"
        self.greta = self.npc("greta", "Greta the baker", self.room2)
        self.vex = self.npc("vex", "Vex", self.room2)
        self.bridge.board = QuestBoard(None, ZONE, seed=3, post=self.bus.post,
                                       names=self.bridge.name_of, places={"market": "stall"})

    def offer_one(self, **fields):
        self.handle("story", signal(1, **fields))
        self.bridge.clock(421)
        (offer,) = self.bridge.quest_offers()
        return offer


class BoardFedByTheBridgeTest(QuestTest):
    def test_a_signal_becomes_an_offer_taken_before_the_minute_and_told_where_it_is(self):
        at_market, in_square = Heard(self.char1), Heard(self.char2)
        self.char1.move_to(self.room2, quiet=True)
        self.bus.take()
        offer = self.offer_one()
        sent = self.bus.take()
        self.assertEqual([m["type"] for m in sent], ["story_signal_taken", "time_advanced"])
        self.assertEqual((sent[0]["id"], sent[0]["signal"], sent[0]["by"], sent[0]["game_time"]),
                         ("quest-board:village:threat_detected:1:taken", "threat_detected:1",
                          "quest-board", 421))
        self.assertEqual((offer.giver, offer.target, offer.place), ("greta", "vex", "market"))
        self.assertTrue("Greta the baker" in offer.title or "Vex" in offer.title, offer.title)
        self.assertNotIn("the the", offer.title)
        self.assertIn(f"A new quest is offered here: {offer.title}. (quests)", at_market)
        self.assertNotIn("A new quest", in_square)
        self.bridge.clock(422)
        self.assertEqual(sum("A new quest" in t for t in at_market.texts), 1)
        self.assertEqual(self.bridge.figures["quests offered"], 1)

    def test_the_signals_life_reaches_the_board(self):
        offer = self.offer_one()
        self.handle("story", signal(1, "threat_detected", "story_signal_updated", t=430,
                                    importance=0.9, expires_at=1500, taken_by="quest-board",
                                    npcs=("greta", "vex", "piet")))
        self.assertEqual((offer.importance, offer.expires_at, offer.npcs),
                         (0.9, 1500, ("greta", "vex", "piet")))
        self.handle("story", signal(2, "crisis"))
        self.handle("story", signal(2, "crisis", "story_signal_expired", reason="lapsed"))
        self.bridge.clock(422)
        self.assertEqual([o.signal for o in self.bridge.quest_offers()], ["threat_detected:1"])
        self.handle("story", signal(1, "threat_detected", "story_signal_expired", reason="displaced"))
        self.assertEqual(offer.status, "expired")
        stats = self.bridge.board.stats()
        self.assertEqual((stats["signals raised"], stats["signals updated"], stats["signals expired"]),
                         (2, 1, 2))

    def test_a_board_that_lets_its_offer_lapse_resolves_it(self):
        offer = self.offer_one(expires_at=430)
        self.bus.take()
        self.bridge.clock(430)
        self.assertEqual(offer.status, "expired")
        sent = self.bus.take()
        self.assertEqual([(m["type"], m.get("outcome")) for m in sent],
                         [("story_signal_resolved", "expired"), ("time_advanced", None)])

    def test_a_quest_taken_and_completed_tells_geppetto_and_the_npcs_memory_reaches_the_player(self):
        ann = Heard(self.char1)
        offer = self.offer_one()
        self.bus.take()
        self.bridge.accept_quest(self.char1, offer.id)
        goal = self.assertSent("goal_assigned", npc="greta")
        self.assertEqual(goal["goal"]["predicate"], {"predicate_type": "at_provider", "provider": "stall"})
        self.assertEqual(self.bridge.quests_of(self.char1), [offer])
        self.assertEqual(self.bridge.quests_of(self.char2), [])
        self.bridge.complete_quest(self.char1, offer.id, "helped")
        sent = self.bus.take()
        self.assertEqual([m["type"] for m in sent],
                         ["quest_outcome", "story_signal_resolved", "goal_withdrawn"])
        self.assertEqual((sent[0]["by"], sent[0]["outcome"], sent[0]["signal"]),
                         ("Char", "helped", "threat_detected:1"))
        self.handle("npc_events", {"v": 1, "type": "deed_remembered", "id": "e-1", "zone": ZONE,
                                   "game_time": 422, "npc": "greta", "by": "Char",
                                   "outcome": "helped", "before": {}, "after": {}})
        self.assertIn("Greta the baker will remember what you did.", ann)
        self.handle("story", signal(1, message="story_signal_resolved", by="quest-board",
                                    outcome="completed"))
        self.assertTrue(offer.resolved_seen)
        self.assertEqual((self.bridge.figures["quests accepted"], self.bridge.figures["quests completed"]),
                         (1, 1))

    def test_without_a_place_set_the_giver_waits_at_a_provider_of_the_quests_room(self):
        self.bridge.board.places = {}
        self.provider("stalls", "the stalls", self.room2, ["sell_wares"])
        self.provider("awning", "the awning", self.room2, ["shelter"])
        offer = self.offer_one()
        self.bus.take()
        self.bridge.accept_quest(self.char1, offer.id)
        goal = self.assertSent("goal_assigned", npc="greta")
        self.assertEqual(goal["goal"]["predicate"], {"predicate_type": "at_provider", "provider": "awning"})

    def test_a_goal_that_ended_is_not_withdrawn(self):
        offer = self.offer_one()
        self.bridge.accept_quest(self.char1, offer.id)
        self.handle("npc_events", {"v": 1, "type": "goal_completed", "id": "e-1", "zone": ZONE,
                                   "game_time": 422, "npc": "greta", "goal_id": offer.goal})
        self.bus.take()
        self.bridge.complete_quest(self.char1, offer.id, "failed")
        self.assertEqual([m["type"] for m in self.bus.take()], ["quest_outcome", "story_signal_resolved"])
        self.handle("npc_events", {"v": 1, "type": "mood_changed", "id": "e-2", "zone": ZONE,
                                   "game_time": 423, "npc": "greta", "mood": "low"})
        self.assertIn("e-1", self.bridge.board.seen)
        self.assertNotIn("e-2", self.bridge.board.seen)      # not the board's: not kept by it

    def test_quests_that_cannot_be_taken_or_ended_say_why(self):
        offer = self.offer_one()
        with self.assertRaisesRegex(ValueError, "no offer nope"):
            self.bridge.accept_quest(self.char1, "nope")
        with self.assertRaisesRegex(ValueError, "accepted .*not Char2's|offered"):
            self.bridge.complete_quest(self.char2, offer.id)
        self.bridge.accept_quest(self.char1, offer.id)
        with self.assertRaisesRegex(ValueError, "not open"):
            self.bridge.accept_quest(self.char2, offer.id)
        with self.assertRaisesRegex(ValueError, "helped, failed or harmed"):
            self.bridge.complete_quest(self.char1, offer.id, "won")
        self.bridge.board = None
        with self.assertRaisesRegex(ValueError, "no quest board"):
            self.bridge.accept_quest(self.char1, offer.id)
        self.assertEqual(self.bridge.quest_offers(), [])


class QuestCommandTest(QuestTest):
    def test_quests_lists_this_rooms_offers_or_the_whole_board(self):
        offer = self.offer_one()
        self.call(CmdQuests(), "", "No quests are offered here; 1 elsewhere (quests all).")
        line = (f"1. {offer.title} — from Greta the baker, {offer.reward} gold, at the market, "
                "for 9 h 39 min more")
        self.call(CmdQuests(), "all", f"Quests offered on the board:\n  {line}\nTake one with: accept <number>")
        self.char1.move_to(self.room2, quiet=True)
        self.call(CmdQuests(), "", f"Quests offered here:\n  {line}")
        self.call(CmdQuests(), "everything", "Usage: quests [all]")

    def test_accept_takes_the_numbered_quest_and_quests_then_shows_it_as_yours(self):
        offer = self.offer_one()
        self.char1.move_to(self.room2, quiet=True)
        self.bus.take()
        self.call(CmdQuests(), "", "Quests offered here:")
        self.call(CmdAccept(), "1", f"You take the quest: {offer.title}. Greta the baker will wait "
                                    f"for you at the market; the reward is {offer.reward} gold.")
        self.assertSent("goal_assigned", npc="greta")
        self.assertEqual((offer.status, offer.player), ("accepted", "Char"))
        self.call(CmdAccept(), "1", "That quest is no longer offered (accepted).")
        shown = self.call(CmdQuests(), "", "No quests are offered here.\nYour quests:\n  "
                          f"{offer.title} — from Greta the baker, {offer.reward} gold, at the market")
        self.assertNotIn(" more", shown)                   # a quest taken is not on offer
        self.call(CmdAccept(), "1", "There is no quest 1 here: `quests` lists them.")

    def test_a_quest_with_no_place_for_its_giver_says_where_it_is(self):
        self.bridge.board.places = {}
        offer = self.offer_one()
        self.call(CmdQuests(), "all", "Quests offered on the board:")
        self.call(CmdAccept(), "1", f"You take the quest: {offer.title}. It is at the market; "
                                    f"the reward is {offer.reward} gold.")
        self.assertIsNone(offer.goal)

    def test_accept_uses_the_list_the_player_saw_last(self):
        offer = self.offer_one()
        self.call(CmdQuests(), "all", "Quests offered on the board:")
        self.call(CmdAccept(), "1", "You take the quest:")             # from the square
        self.assertEqual(offer.player, "Char")

    def test_accept_refuses_bad_numbers_and_says_why(self):
        self.offer_one()
        self.call(CmdAccept(), "", "Usage: accept <number> (the number `quests` shows)")
        self.call(CmdAccept(), "first", "Usage: accept <number>")
        self.call(CmdAccept(), "0", "Usage: accept <number>")
        self.call(CmdAccept(), "1", "There is no quest 1 here: `quests` lists them.")   # the square
        self.call(CmdQuests(), "all", "Quests offered on the board:")
        self.call(CmdAccept(), "2", "There is no quest 2 here")
        self.assertEqual(self.bus.take("goal_assigned"), [])

    def test_without_a_board_or_a_bridge_the_commands_say_so(self):
        self.bridge.board = None
        self.call(CmdQuests(), "", "There is no quest board in this game.")
        self.call(CmdAccept(), "1", "There is no quest board in this game.")
        self.game_script.delete()
        self.call(CmdQuests(), "", "The villagers are not listening (geppetto is not running).")
        self.call(CmdAccept(), "1", "The villagers are not listening (geppetto is not running).")


class GameBoardTest(GeppettoTest):
    """The script makes the board GEPPETTO_QUEST_BOARD describes and keeps it over a reload."""

    OPTIONS = {"name": "notices", "seed": 4, "max_open": 2, "places": {"market": "stall"}}

    def test_the_setting_makes_a_board_the_bridge_feeds(self):
        with override_settings(GEPPETTO_QUEST_BOARD=self.OPTIONS, GEPPETTO_REDIS_URL="redis://127.0.0.1:1/0"):
            running = scripts.make_bridge()
        board = running.board
        self.assertIsInstance(board, QuestBoard)
        self.assertEqual((board.name, board.zone, board.max_open, board.places, board.r),
                         ("notices", "village", 2, {"market": "stall"}, None))
        self.assertIsNone(scripts.make_board(running.bus, None))
        with override_settings(GEPPETTO_REDIS_URL="redis://127.0.0.1:1/0"):
            self.assertIsNone(scripts.make_bridge().board)

    def test_a_bad_setting_says_what_is_wrong(self):
        bus = MemoryBus()
        with self.assertRaisesRegex(ImproperlyConfigured, "a dict of QuestBoard options, not list"):
            scripts.make_board(bus, ["notices"])
        with self.assertRaisesRegex(ImproperlyConfigured, r"unknown option\(s\) post, size \(known: name"):
            scripts.make_board(bus, {"size": 3, "post": print})

    def test_the_board_is_saved_with_the_handled_ids_and_given_to_the_next_bridge(self):
        board = scripts.make_board(self.bus, self.OPTIONS, self.bridge.name_of)
        self.bridge.board = board
        self.handle("story", signal(1))
        self.bridge.clock(421)
        (offer,) = self.bridge.quest_offers()
        self.game_script.at_server_reload()
        json.dumps(self.game_script.db.geppetto_board, default=lambda o: o.__class__.__name__)
        after = Bridge(MemoryBus())
        after.board = scripts.make_board(after.bus, self.OPTIONS, after.name_of)
        self.game_script.own(after)
        self.assertEqual(after.quest_offers(), [offer])
        self.assertEqual(after.board.stats(), board.stats())
        after.handle([("story", "9-0", signal(1))])
        self.assertEqual(after.figures["duplicates dropped"], 1)

    def test_a_saved_board_of_another_name_is_not_taken(self):
        self.bridge.board = scripts.make_board(self.bus, self.OPTIONS)
        self.handle("story", signal(1))
        self.bridge.clock(421)
        self.game_script.save_handled()
        after = Bridge(MemoryBus())
        after.board = scripts.make_board(after.bus, {**self.OPTIONS, "name": "other"})
        with patch("geppetto_evennia.scripts.logger.log_warn") as warned:
            self.game_script.own(after)
        self.assertIn("the saved quest board is not this one", warned.call_args[0][0])
        self.assertEqual(after.quest_offers(), [])


class BoardOverRedisTest(GeppettoTest):
    """The bridge, its board and the package's `Bus` over a real redis-server: the board's
    events reach the world stream under their own ids, in order with the game's."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.server = RedisServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        super().tearDownClass()

    def test_a_story_signal_read_from_redis_becomes_a_taken_offer_on_the_world_stream(self):
        r = self.server.client
        r.flushall()
        bus = Bus(self.server.url, ZONE)
        running = self.game_script.own(Bridge(bus))
        running.now = 420
        running.board = QuestBoard(None, ZONE, post=bus.post, places={"market": "stall"})
        running.handle(bus.read())                                     # makes the groups
        r.xadd(bus.key("story"), {"m": json.dumps(signal(1))})
        running.handle(bus.read())
        running.clock(421)
        (offer,) = running.quest_offers()
        running.accept_quest(self.char1, offer.id)
        bus.flush()
        world = [json.loads(f["m"]) for _, f in r.xrange(bus.key("world"))]
        self.assertEqual([(m["type"], m["game_time"]) for m in world],
                         [("story_signal_taken", 421), ("time_advanced", 421), ("goal_assigned", 421)])
        self.assertEqual(world[0]["id"], "quest-board:village:threat_detected:1:taken")
        self.assertTrue(world[1]["id"].startswith(f"evennia-{bus.run}-"))
        self.assertEqual(r.xpending(bus.key("story"), "evennia")["pending"], 0)
