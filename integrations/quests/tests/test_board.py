"""Unit tests of the quest board against a real `redis-server` on a free loopback port (no
geppetto): the story stream is fed by hand as geppetto writes it, and the world events the
board writes are read back from the world stream.

    integrations/quests/run-unit-tests    (or: run-unit-tests test_board.BoardTest …)
"""
import json
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

import redis

from geppetto_quests import QuestBoard

ZONE = "village"
STORY, WORLD, EVENTS = (f"geppetto:{{{ZONE}}}:{s}" for s in ("story", "world", "npc_events"))


class RedisServer:
    """A private redis-server on a free loopback port, without persistence."""

    def __init__(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.dir = tempfile.mkdtemp(prefix="geppetto-quests-")
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.client = redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.client.ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


def signal(n, kind="threat_detected", importance=0.5, t=100, expires_at=1000, location="market",
           npcs=("greta", "vex"), context=None, message="story_signal", **extra):
    """A story stream message as geppetto writes it for signal `{kind}:{n}`."""
    sid = f"{kind}:{n}"
    suffix = {"story_signal": "", "story_signal_updated": f":updated:{t}",
              "story_signal_expired": ":expired", "story_signal_resolved": ":resolved"}[message]
    return {"v": 1, "type": message, "id": f"{ZONE}:story:{sid}{suffix}", "zone": ZONE,
            "game_time": t, "signal": sid, "signal_type": kind, "importance": importance,
            "npcs": list(npcs), "players": [], "location": location,
            "context": context if context is not None else {"subject": "vex"},
            "expires_at_hours": expires_at / 60, "expires_at": expires_at, "merged": 0, **extra}


class BoardTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = RedisServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def setUp(self):
        self.r = self.server.client
        self.r.flushall()

    def feed(self, *messages):
        for m in messages:
            self.r.xadd(STORY, {"m": json.dumps(m)})

    def world(self):
        return [json.loads(f["m"]) for _, f in self.r.xrange(WORLD)]

    def board(self, **kw):
        kw.setdefault("places", {"market": "stall"})
        return QuestBoard(self.r, ZONE, **kw)

    def test_signals_become_offers_and_are_taken(self):
        board = self.board(seed=1)
        self.feed(signal(1), signal(2, "rivalry_escalation", 0.7, context={}),
                  signal(3, "celebration", 0.9))
        board.tick(101)
        offers = board.offers()
        self.assertEqual([o.signal for o in offers], ["rivalry_escalation:2", "threat_detected:1"])
        threat = offers[1]
        self.assertEqual((threat.giver, threat.target, threat.place, threat.expires_at),
                         ("greta", "vex", "market", 1000))
        self.assertIn("vex", threat.title)
        self.assertGreater(threat.reward, 0)
        taken = [m for m in self.world() if m["type"] == "story_signal_taken"]
        self.assertEqual([m["signal"] for m in taken], ["rivalry_escalation:2", "threat_detected:1"])
        for m in taken:
            self.assertEqual((m["v"], m["zone"], m["by"], m["game_time"]), (1, ZONE, "quest-board", 101))
        self.assertEqual(len({m["id"] for m in taken}), 2)
        self.assertEqual(board.offers(room="bakery"), [])
        stats = board.stats()
        self.assertEqual((stats["signals raised"], stats["signals skipped"], stats["offers made"]),
                         (3, 1, 2))

    def test_duplicates_are_dropped_and_entries_acknowledged(self):
        board = self.board()
        self.feed(signal(1), signal(1))
        board.tick(101)
        self.assertEqual(board.stats()["signals raised"], 1)
        self.assertEqual(board.stats()["duplicates dropped"], 1)
        self.assertEqual(self.r.xpending(STORY, "quest-board")["pending"], 0)

    def test_pacing_open_offers_and_cooldown(self):
        board = self.board(max_open=2, cooldown_ticks=60)
        self.feed(*(signal(n, importance=n / 10) for n in range(1, 5)),
                  signal(5, "crisis", 0.2), signal(6, "betrayal", 0.8, context={"traitor": "vex"}))
        board.tick(101)
        # Most important first; one threat within the cool-down; two open at most.
        self.assertEqual([o.signal for o in board.offers()], ["betrayal:6", "threat_detected:4"])
        board.tick(150)
        self.assertEqual(len(board.offers()), 2)
        board.accept("quest-board:betrayal:6", "ann")
        board.complete("quest-board:betrayal:6", "ann", "helped")
        board.tick(155)                              # a slot, but threats cool down until 161
        self.assertEqual([o.signal for o in board.offers()], ["threat_detected:4", "crisis:5"])
        board.accept("quest-board:crisis:5", "ann")
        board.complete("quest-board:crisis:5", "ann", "failed")
        board.tick(161)
        self.assertEqual([o.signal for o in board.offers()], ["threat_detected:4", "threat_detected:3"])

    def test_offers_expire_and_lapsed_signals_drop(self):
        board = self.board(max_open=1)
        self.feed(signal(1, importance=0.9, expires_at=200), signal(2, "crisis", 0.3, expires_at=300))
        board.tick(101)
        self.assertEqual([o.signal for o in board.offers()], ["threat_detected:1"])
        self.feed(signal(2, "crisis", message="story_signal_expired", t=150, reason="lapsed"))
        board.tick(199)
        self.assertEqual(len(board.offers()), 1)
        board.tick(200)
        self.assertEqual(board.offers(), [])
        resolved = [m for m in self.world() if m["type"] == "story_signal_resolved"]
        self.assertEqual([(m["signal"], m["outcome"]) for m in resolved], [("threat_detected:1", "expired")])
        stats = board.stats()
        self.assertEqual((stats["offers expired"], stats["signals expired"], stats["offers made"]),
                         (1, 1, 1))

    def test_an_update_refreshes_the_offer(self):
        board = self.board()
        self.feed(signal(1, expires_at=400))
        board.tick(101)
        self.feed(signal(1, importance=0.8, expires_at=900, t=120, message="story_signal_updated",
                         npcs=("greta", "vex", "piet"), taken_by="quest-board"))
        board.tick(121)
        (offer,) = board.offers()
        self.assertEqual((offer.importance, offer.expires_at, offer.npcs), (0.8, 900, ("greta", "vex", "piet")))
        self.assertEqual(board.stats()["signals updated"], 1)

    def test_accept_and_complete_write_the_world_events_in_order(self):
        board = self.board(seed=3)
        self.feed(signal(1))
        board.tick(101)
        (offer,) = board.offers()
        board.accept(offer.id, "ann")
        board.tick(130)
        board.complete(offer.id, "ann", "helped")
        sent = [m for m in self.world()]
        self.assertEqual([m["type"] for m in sent],
                         ["story_signal_taken", "goal_assigned", "quest_outcome",
                          "story_signal_resolved", "goal_withdrawn"])
        goal = sent[1]
        self.assertEqual(goal["npc"], "greta")
        self.assertEqual(goal["goal"]["predicate"], {"predicate_type": "at_provider", "provider": "stall"})
        outcome = sent[2]
        self.assertEqual((outcome["by"], outcome["outcome"], outcome["signal"], outcome["game_time"]),
                         ("ann", "helped", "threat_detected:1", 130))
        self.assertEqual((sent[3]["by"], sent[3]["outcome"]), ("quest-board", "completed"))
        self.assertEqual(sent[4], {**sent[4], "npc": "greta", "goal": goal["goal"]["id"]})
        self.assertEqual(len({m["id"] for m in sent}), 5)
        self.feed(signal(1, message="story_signal_resolved", t=131, by="quest-board", outcome="completed"))
        board.tick(131)
        self.assertTrue(offer.resolved_seen)
        stats = board.stats()
        self.assertEqual((stats["offers accepted"], stats["offers completed"]), (1, 1))
        with self.assertRaises(ValueError):
            board.complete(offer.id, "ann", "helped")

    def test_a_goal_that_ended_is_not_withdrawn(self):
        board = self.board()
        self.feed(signal(1))
        board.tick(101)
        (offer,) = board.offers()
        board.accept(offer.id, "ann")
        self.r.xadd(EVENTS, {"m": json.dumps({
            "v": 1, "type": "goal_completed", "id": "village:greta:110:0", "zone": ZONE,
            "game_time": 110, "npc": "greta", "goal_id": offer.goal})})
        board.complete(offer.id, "ann", "harmed")
        self.assertNotIn("goal_withdrawn", [m["type"] for m in self.world()])
        self.assertEqual(offer.status, "failed")

    def test_the_same_stream_and_seed_give_the_same_offers(self):
        kinds = ["threat_detected", "rivalry_escalation", "goal_blocked", "resource_scarcity",
                 "trade_opportunity", "betrayal", "crisis"]
        self.feed(*(signal(n, kinds[n % 7], importance=(n * 37 % 10) / 10,
                           npcs=("greta", "vex", "piet", "mara")[: 2 + n % 3],
                           context={"subject": "vex", "goal": "bake bread", "need": "flour",
                                    "market": "market", "traitor": "piet"}) for n in range(14)))

        def offers(name, seed):
            board = self.board(name=name, seed=seed, max_open=5, cooldown_ticks=0)
            board.tick(101)
            return [(o.signal, o.title, o.giver, o.target, o.reward) for o in board.offers()]

        first = offers("board-a", 11)
        self.assertEqual(len(first), 5)
        self.assertEqual(first, offers("board-b", 11))
        self.assertNotEqual(first, offers("board-c", 12))


class FedBoardTest(unittest.TestCase):
    """A board its game feeds (`QuestBoard(None, zone, post=…)`, as the Evennia bridge runs
    it): no Redis at all, messages handed in, world events handed out."""

    def board(self, **kw):
        self.posted = []
        kw.setdefault("places", {"market": "stall"})
        return QuestBoard(None, ZONE, post=self.posted.append, **kw)

    def test_a_fed_board_takes_messages_and_posts_its_world_events(self):
        board = self.board(seed=3)
        board.handle("story", signal(1))
        board.handle("story", signal(1))
        board.tick(101)
        (offer,) = board.offers(room="market")
        board.accept(offer.id, "ann")
        board.handle("npc_events", {"v": 1, "type": "goal_completed", "id": "village:greta:110:0",
                                    "zone": ZONE, "game_time": 110, "npc": "greta",
                                    "goal_id": offer.goal})
        board.tick(120)
        board.complete(offer.id, "ann", "helped")
        self.assertEqual([m["type"] for m in self.posted],
                         ["story_signal_taken", "goal_assigned", "quest_outcome", "story_signal_resolved"])
        self.assertEqual(self.posted[0]["id"], "quest-board:village:threat_detected:1:taken")
        self.assertEqual([m["game_time"] for m in self.posted], [101, 101, 120, 120])
        self.assertEqual(board.stats()["duplicates dropped"], 1)

    def test_bad_construction_and_streams_are_refused_with_a_reason(self):
        with self.assertRaisesRegex(ValueError, "needs post"):
            QuestBoard(None, ZONE)
        with self.assertRaisesRegex(ValueError, "not both"):
            QuestBoard(object(), ZONE, post=print)
        with self.assertRaisesRegex(ValueError, "not 'intents'"):
            self.board().handle("intents", signal(1))

    def test_names_change_the_titles_words_and_never_a_choice(self):
        feed = [signal(n, kind, importance=n / 10, context={"subject": "vex", "traitor": "vex"})
                for n, kind in enumerate(["threat_detected", "rivalry_escalation", "betrayal"], 1)]

        def offers(**kw):
            board = self.board(seed=5, cooldown_ticks=0, **kw)
            for m in feed:
                board.handle("story", m)
            board.tick(101)
            return board.offers()

        plain = offers()
        named = offers(names=lambda word: {"vex": "Vex the cutpurse", "greta": "Greta",
                                           "market": "market square"}.get(word, word))
        self.assertEqual([(o.giver, o.target, o.place, o.reward) for o in plain],
                         [(o.giver, o.target, o.place, o.reward) for o in named])
        self.assertTrue(any("Vex the cutpurse" in o.title for o in named), [o.title for o in named])
        self.assertFalse(any("Vex the cutpurse" in o.title for o in plain))

    def test_a_snapshot_carries_the_board_over_a_restart(self):
        feed = [signal(n, importance=n / 10, expires_at=2000) for n in range(1, 7)]
        first = self.board(seed=9, max_open=2, cooldown_ticks=0)
        for m in feed[:4]:
            first.handle("story", m)
        first.tick(101)
        first.accept(first.offers()[0].id, "ann")
        saved = json.loads(json.dumps(first.snapshot()))   # plain data only
        second = self.board(seed=0, max_open=2, cooldown_ticks=0)
        second.restore(saved)
        self.assertEqual(second.quests, first.quests)
        self.assertEqual(second.stats(), first.stats())
        second.handle("story", feed[0])                    # seen before the restart
        self.assertEqual(second.stats()["duplicates dropped"], 1)
        for board in (first, second):
            for m in feed[4:]:
                board.handle("story", m)
            accepted = next(o for o in board.quests.values() if o.status == "accepted")
            board.complete(accepted.id, "ann", "helped")
            board.tick(130)
        self.assertEqual([(o.id, o.title, o.status) for o in second.offers()],
                         [(o.id, o.title, o.status) for o in first.offers()])
        with self.assertRaisesRegex(ValueError, "not one of 'other'"):
            self.board(name="other").restore(saved)


if __name__ == "__main__":
    unittest.main()
