"""The village in Evennia against a real `geppetto serve` (`game` completion mode, the game's
clock) and a private redis-server: run by `evennia test` in a game folder made by
`evennia --init` (the repository's tests/games/evennia.rs sets it all up).

The village is built from a geppetto world directory and exported back (the same rooms, exits
and NPCs). A player, Ann, walks into the square, says hello, orders Piet to report a theft at
the gatehouse, walks a round of the village, later chases Vex through the exits and fights it
(the NPC is engaged, an order to it refused, then released); in each room of her round she
greets an NPC by name, who answers her within a tick (`reply`). The bridge runs the quest board
(geppetto_quests): every half hour of her round Ann looks at the quests offered (`quests
all`), takes the first (`accept 1`) and an hour later has done it (`complete_quest`); the NPCs
it was about remember her for it and the signal is resolved on the story stream. In between
the bridge carries out every intent: NPCs walk exit by exit (for a while doors lock in villagers' way, and their walks
fail), act, bark, and social scenes are narrated to the players who saw them. Half-way,
Redis is shut down and started again: nothing the bridge acknowledged is carried out twice,
nothing it had not is lost. The test prints its figures and fails on the first broken promise.

Environment: GEPPETTO_TEST_REDIS (url), GEPPETTO_TEST_ADMIN (admin API url),
GEPPETTO_TEST_WORLD (the world directory), GEPPETTO_TEST_MINUTES (game minutes to play),
GEPPETTO_TEST_REDIS_SERVER (optional: the JSON argv that started redis-server, with its data
kept on disk; the test then shuts it down half-way, plays a minute without it and starts it
again, stopping it at the end).
"""
import json
import os
import subprocess
import tempfile
import time
import urllib.request
from collections import Counter

import redis

from evennia import create_object, create_script
from evennia.utils.test_resources import EvenniaTestCase

from geppetto_quests import QuestBoard

from geppetto_evennia import (NPC, ROOM, SCRIPT_KEY, Bridge, Bus, CmdAccept, CmdGeppettoSay,
                              CmdOrder, CmdQuests, GeppettoScript, world)

ZONE, QUEST_NPC, FOE = "village", "piet", "vex"
ORDER_AT, FIGHT_AT, FIGHT_MINUTES = 5, 240, 20      # game minutes after the start
LOCK_AT, LOCKED_MINUTES = 30, 30  # doors lock on villagers' walks; open this long after a failure
TOUR = ["market", "square", "tavern", "square", "forge", "square", "chapel", "square"]
LINGER_MINUTES = 15              # Ann's stay in each room of her round before the fight
QUEST_LOOK_MINUTES, QUEST_MINUTES = 30, 60  # Ann looks for a quest this often; does one this long
SYNC_TIMEOUT_S, AGREE_TIMEOUT_S = 20.0, 5.0
NARRATION_WAIT_S = 10.0          # for the model's narration of a scene (geppetto gives it 8 s)
NARRATION_WAITS = 4              # scenes waited for at most, until one is narrated


class Admin:
    def __init__(self, url):
        self.url = url.rstrip("/")

    def get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=5) as reply:
            return json.load(reply)

    def rooms(self):
        return {n["id"]: n["room"] for n in self.get("/npcs") if n["zone"] == ZONE}


class QuestBridge(Bridge):
    """A game's quest system: story signals are counted, as a quest hook would take them. And
    doors that lock: while asked, the first door of each villager's walk is locked, until a walk
    fails at one."""

    lock_walks, locked, first_failure = False, (), None

    def said(self, speaker, text, room, addressee=None):
        message_id = super().said(speaker, text, room, addressee)
        self.said_ids.append(message_id)
        return message_id

    def do_reply(self, npc, npc_id, m):
        super().do_reply(npc, npc_id, m)
        self.replies.append((npc_id, m["to"], m["in_reply_to"], self.now))

    def do_navigate(self, npc, npc_id, m):
        super().do_navigate(npc, npc_id, m)
        job = self.jobs.get(npc_id)
        if self.lock_walks and job and job.exits and npc_id not in (QUEST_NPC, FOE):
            job.exits[0].locks.add("traverse:false()")
            self.locked = (*self.locked, job.exits[0])

    def fail(self, job, reason):
        super().fail(job, reason)
        if job.kind == "navigate" and self.first_failure is None:
            self.lock_walks, self.first_failure = False, self.now

    def on_story_signal(self, m):
        self.figures[f"story {m['signal_type']}"] += 1
        self.figures["story signals"] += 1


class VillageTest(EvenniaTestCase):
    def setUp(self):
        super().setUp()
        self.admin = Admin(os.environ["GEPPETTO_TEST_ADMIN"])
        self.world_dir = os.environ["GEPPETTO_TEST_WORLD"]
        self.minutes = int(os.environ.get("GEPPETTO_TEST_MINUTES", "360"))
        self.redis_argv = json.loads(os.environ.get("GEPPETTO_TEST_REDIS_SERVER", "null"))
        self.redis_url, self.restarted = os.environ["GEPPETTO_TEST_REDIS"], None
        self.bus = Bus(self.redis_url, ZONE, group="evennia-test",
                       retry_seconds=0.2)
        # The game's geppetto script owns the test's bridge, which the test drives itself:
        # the script is not started (no clock of its own, no reader loop).
        self.script = create_script(GeppettoScript, key=SCRIPT_KEY, autostart=False)
        self.bridge = self.script.own(QuestBridge(self.bus))
        self.bridge.replies, self.bridge.said_ids = [], []  # (npc, to, in reply to, minute); say ids
        self.greetings = []                               # (say id, npc greeted, minute)
        self.bridge.board = QuestBoard(None, ZONE, seed=7, post=self.bus.post,
                                       names=self.bridge.name_of)
        self.heard, self.figures = [], Counter()
        self.quest = None                                 # Ann's quest: (offer id, minute taken)

    def tearDown(self):
        self.script.delete()
        if self.restarted is not None:
            self.restarted.kill()
            self.restarted.wait()
        super().tearDown()

    # --- the world ---------------------------------------------------------------------

    def build_and_export(self):
        made = world.build(self.world_dir)
        source = world.load(self.world_dir)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "worlds", ZONE)       # a world directory geppetto validates
            counts = world.export(out, zone=ZONE)
            exported = world.load(out)
        self.assertEqual(
            {r["id"]: set(r["neighbours"]) for r in exported["rooms"]},
            undirected(source["rooms"]), "the exported room graph is the world's")
        self.assertEqual(sorted(n["id"] for n in exported["npcs"] + exported["residents"]),
                         sorted(n["id"] for n in source["npcs"] + source["residents"]))
        self.assertEqual(counts["providers"], len(source["providers"]))
        self.figures["rooms exported"] = counts["rooms"]
        self.figures["npcs exported"] = counts["npcs"] + counts["residents"]
        return made

    def ann(self, square):
        ann = create_object("evennia.objects.objects.DefaultCharacter", key="Ann")

        def hear(text=None, **kwargs):
            self.heard.append(str(text[0] if isinstance(text, tuple) else text))
        ann.msg = hear
        ann.move_to(square)
        return ann

    # --- the clock ---------------------------------------------------------------------

    def wait_until_applied(self, t, probe):
        deadline = time.monotonic() + SYNC_TIMEOUT_S
        while self.admin.get(f"/npcs/{probe}/brain")["game_time"] < t:
            self.bus.flush()                              # what waited while Redis was away
            self.assertLess(time.monotonic(), deadline, f"geppetto did not apply minute {t}")
            time.sleep(0.005)

    def drain(self):
        while batch := self.bus.read(0):
            self.bridge.handle(batch)

    def tick(self, t, probe):
        self.bridge.clock(t)
        self.wait_until_applied(t, probe)
        self.drain()

    # --- the story ---------------------------------------------------------------------

    def say(self, ann, text):
        cmd = CmdGeppettoSay()
        cmd.caller, cmd.args, cmd.cmdstring = ann, f" {text}", "say"
        cmd.func()

    def order(self, ann, text):
        cmd = CmdOrder()
        cmd.caller, cmd.args = ann, f" {text}"
        cmd.func()

    def greet(self, ann, minute):
        """Ann greets an NPC of the room she walked into by name (the first by id): it answers
        within a tick (a reply intent, shown in the room)."""
        here = sorted(world.gid(o, NPC) for o in ann.location.contents if world.is_npc(o))
        if here:
            self.say(ann, f"Good day, {here[0].capitalize()}!")
            self.greetings.append((self.bridge.said_ids[-1], here[0], minute))

    def command(self, ann, cls, args):
        cmd = cls()
        cmd.caller, cmd.args = ann, f" {args}"
        cmd.func()

    def quests(self, ann, minute):
        """Ann's quest: taken from the board through the commands, done an hour later."""
        if self.quest is None and minute < FIGHT_AT and minute % QUEST_LOOK_MINUTES == 0:
            self.command(ann, CmdQuests, "all")
            if self.bridge.quest_offers():
                self.command(ann, CmdAccept, "1")
                taken = self.bridge.quests_of(ann)
                self.assertEqual(len(taken), 1, "accept 1 took the first quest offered")
                self.quest = (taken[0].id, minute)
        elif self.quest is not None and len(self.quest) == 2 and minute == self.quest[1] + QUEST_MINUTES:
            self.bridge.complete_quest(ann, self.quest[0], "helped")
            self.quest = (*self.quest, "done")

    def walk_to(self, ann, room):
        """One exit towards `room`."""
        steps = world.path(ann.location, room)
        if steps:
            ann.move_to(steps[0].destination, move_type="traverse")

    def redis_answers(self):
        try:
            return redis.Redis.from_url(self.redis_url, socket_connect_timeout=1).ping()
        except redis.ConnectionError:
            return False

    def wait_for_redis(self, up):
        deadline = time.monotonic() + SYNC_TIMEOUT_S
        while self.redis_answers() != up:
            self.assertLess(time.monotonic(), deadline, f"redis-server did not {'start' if up else 'stop'}")
            time.sleep(0.05)

    def stop_redis(self):
        try:
            redis.Redis.from_url(self.redis_url).shutdown()      # its data kept on disk
        except redis.ConnectionError:
            pass
        self.wait_for_redis(False)

    def start_redis(self):
        self.restarted = subprocess.Popen(self.redis_argv, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL)
        self.wait_for_redis(True)
        self.figures["redis restarts"] += 1

    def test_handled_ids_survive_a_reload(self):
        """The global script keeps the newest handled ids in its attributes: the bridge it
        starts after a reload drops what the one before it carried out."""
        from django.test import override_settings
        from geppetto_evennia import scripts

        reading, scripts.read_next = scripts.read_next, lambda script, reader: None
        try:
            with override_settings(GEPPETTO_REDIS_URL=self.redis_url, GEPPETTO_ZONE="reloaded",
                                   GEPPETTO_SEEN_KEPT=3):
                script = create_script(GeppettoScript, key="geppetto-reload")
                for message_id in ["i1", "i2", "i3", "i4"]:
                    script.bridge.remember(message_id)
                script.at_server_reload()
                self.assertEqual(script.db.geppetto_handled, ["i2", "i3", "i4"])
                script.at_start()
                after = script.bridge
                self.assertEqual(after.seen, {"i2", "i3", "i4"})
                after.handle([("intents", "1-0", {"id": "i4", "type": "bark", "npc": "piet"})])
                self.assertEqual(after.figures["duplicates dropped"], 1)
                script.delete()
        finally:
            scripts.read_next = reading

    def test_villagers_live_in_evennia(self):
        made = self.build_and_export()
        # The NPCs stand where geppetto has them (the world's rooms, or later ones).
        for npc_id, room in self.admin.rooms().items():
            made[NPC][npc_id].move_to(made[ROOM][room], quiet=True, geppetto_report=False)
        self.bus.read(0)                                  # the consumer group, from now on
        probe = sorted(made[NPC])[0]
        start = self.bridge.now = self.admin.get(f"/npcs/{probe}/brain")["game_time"]
        self.bridge.announce_positions()
        ann = self.ann(made[ROOM]["square"])
        self.say(ann, "Good morning, villagers!")
        vex = made[NPC][FOE]
        fight, waits = {}, 0
        for t in range(start + 1, start + self.minutes + 1):
            minute = t - start
            if minute == LOCK_AT:
                self.bridge.lock_walks = True
            if self.bridge.first_failure == t - LOCKED_MINUTES:
                for door in self.bridge.locked:
                    door.locks.add("traverse:all()")
            if minute == ORDER_AT:
                self.order(ann, f"{QUEST_NPC} report_a_theft at gatehouse")
            if minute < FIGHT_AT and minute % LINGER_MINUTES == 0:
                self.walk_to(ann, TOUR[minute // LINGER_MINUTES % len(TOUR)])
                self.greet(ann, t)
            self.quests(ann, minute)
            if minute >= FIGHT_AT and "engaged" not in fight:
                if ann.location == vex.location:
                    vex.geppetto_engage("combat")
                    fight["engaged"] = minute
                    self.order(ann, f"{FOE} pray at chapel")
                else:
                    self.walk_to(ann, world.room_of(vex))
            if fight.get("engaged") == minute - FIGHT_MINUTES:
                vex.geppetto_release()
                fight["released"] = minute
            if minute == self.minutes // 2 and self.redis_argv:
                self.stop_redis()                         # the game goes on without it
                self.bridge.clock(t)
                self.say(ann, "Is anyone there?")
                self.start_redis()
            self.tick(t, probe)
            if len(self.bridge.witnesses) > waits and waits < NARRATION_WAITS:
                waits += 1                                # Ann lingers while it is told
                self.wait_for_narration()
        self.assert_rooms_agree()
        self.assert_nothing_lost(start)
        self.report(ann, fight)

    # --- checks ------------------------------------------------------------------------

    def assert_rooms_agree(self):
        deadline = time.monotonic() + AGREE_TIMEOUT_S
        while True:
            self.drain()
            theirs = self.admin.rooms()
            ours = {world.gid(o, NPC): world.room_of(o) for o in world.search_tag(category=NPC)}
            off = {n: (ours[n], theirs.get(n)) for n in ours if theirs.get(n) != ours[n]}
            if not off or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual(off, {}, "NPC rooms, (Evennia's, geppetto's)")

    def assert_nothing_lost(self, start):
        """Every intent geppetto sent after the game came was handled (once: the bridge keeps
        ids), and every entry read was acknowledged."""
        client = redis.Redis.from_url(self.redis_url, decode_responses=True)
        sent = [json.loads(f["m"]) for _, f in client.xrange(self.bus.key("intents"))]
        lost = [m["id"] for m in sent if m["game_time"] > start and m["id"] not in self.bridge.seen]
        self.assertEqual(lost, [], "intents never carried out")
        self.figures["intents sent"] = sum(m["game_time"] > start for m in sent)
        self.bus.flush()
        for stream in ("intents", "npc_events", "narrative", "story"):
            pending = client.xpending(self.bus.key(stream), self.bus.group)["pending"]
            self.assertEqual(pending, 0, f"{stream}: entries read and never acknowledged")

    def wait_for_narration(self):
        """The model narrates a witnessed scene in a second or so (a small model's answer may
        be refused, and the scene keeps its template line), and the narration goes out only
        while a witness is still there: the clock waits, until one scene is narrated."""
        deadline = time.monotonic() + NARRATION_WAIT_S
        while not self.bridge.figures["narrations shown"]:
            if time.monotonic() > deadline:
                break
            self.drain()
            time.sleep(0.05)

    def dead_letters(self):
        """Our world events geppetto refused, by type, with the reasons."""
        client = redis.Redis.from_url(self.redis_url, decode_responses=True)
        refused, reasons = Counter(), []
        ours = (f"evennia-{self.bus.run}-", f"{self.bridge.board.name}:{ZONE}:")
        for _, fields in client.xrange(f"geppetto:{{{ZONE}}}:deadletter"):
            letter = json.loads(fields["m"])
            original = json.loads(letter.get("original") or "{}")
            if str(original.get("id", "")).startswith(ours):
                refused[original.get("type")] += 1
                reasons.append(f"{original.get('type')} {original.get('id')}: {letter.get('reason')}")
        return refused, reasons

    def report(self, ann, fight):
        fig = self.bridge.figures + self.figures
        refused, reasons = self.dead_letters()
        # A report crossing geppetto's cancel of the same intent is refused as stale: allowed.
        fig["reports refused as stale"] = refused["action_completed"] + refused["action_failed"]
        heard = self.heard
        fig["player saw arrivals"] = sum("arrives" in h for h in heard)
        fig["player saw departures"] = sum("is leaving" in h for h in heard)
        fig["player heard barks"] = sum(' says, "' in h for h in heard)
        cancelled = sum(v for k, v in fig.items() if k.startswith("cancelled "))
        print("\nevennia village:")
        for name, count in sorted(fig.items()):
            print(f"  {name}: {count}")
        print(f"  fight: {fight}")
        print(f"figures: minutes={self.minutes} npc_moves={fig['npc moves']} "
              f"arrived={fig['walks arrived']} completed={fig['actions completed']} "
              f"cancelled={cancelled} barks={fig['player heard barks']} "
              f"scenes={fig['scenes narrated']} narrations={fig['narrations shown']} "
              f"seen_by_player={len(heard)} orders_done={fig['order_done']} "
              f"refused={fig['order_refused']} duplicates={fig['duplicates dropped']} "
              f"reconnects={self.bus.reconnects} failed_messages={fig['messages that failed']} "
              f"intents={fig['intents sent']} lost=0 story={fig['story signals']} "
              f"locked_walks_failed={fig['navigates failed']} quests_offered={fig['quests offered']} "
              f"quests_accepted={fig['quests accepted']} quests_completed={fig['quests completed']} "
              f"deeds_remembered={fig['deeds remembered']} greetings={len(self.greetings)} "
              f"replies={fig['replies shown']}",
              flush=True)
        print(f"  quest board: {self.bridge.board.stats()}")
        self.assertIn("Piet the trader is done with your order (completed).", heard)
        self.assertIn("Vex refuses your order (engaged).", heard)
        self.assertIn("released", fight, f"the fight with {FOE} began and ended")
        self.assertGreater(fig["npc moves"], 0)
        self.assertGreater(fig["actions completed"], 0)
        self.assertGreater(fig["navigates failed"], 0, "a walk failed at a locked door")
        self.assertGreater(fig["player saw arrivals"], 0)
        self.assertGreater(fig["player saw departures"], 0)
        self.assertGreater(fig["player heard barks"], 0)
        self.assertGreater(fig["scenes narrated"], 0)
        self.assertGreater(fig["narrations shown"], 0, "a narrated scene reached its witness")
        self.assertGreater(fig["story signals"], 0, "story signals reached the quest hook")
        self.assertEqual(fig["messages that failed"], 0)
        answered = {in_reply_to: (npc, to, at) for npc, to, in_reply_to, at in self.bridge.replies}
        for say_id, npc, at in self.greetings:
            self.assertIn(say_id, answered, f"Ann's greeting of {npc} at minute {at} was answered")
            self.assertEqual(answered[say_id][:2], (npc, "Ann"), "the NPC greeted answered Ann")
            self.assertLessEqual(answered[say_id][2], at + 1, "within a tick")
        self.assertGreater(len(self.greetings), 0, "Ann greeted someone")
        self.assertIn(" says to Ann, ", " ".join(heard))
        self.assertGreater(fig["quests offered"], 0, "story signals became quests")
        self.assertIsNotNone(self.quest, "Ann took a quest")
        self.assertEqual(fig["quests completed"], 1, "Ann's quest was done")
        offer = self.bridge.board.quests[self.quest[0]]
        self.assertTrue(offer.resolved_seen, f"the story stream resolved {offer.signal}")
        self.assertGreater(fig["deeds remembered"], 0, "the NPCs of the quest remember Ann")
        self.assertIn(" will remember what you did.", " ".join(heard))
        self.assertEqual(sum(refused.values()), fig["reports refused as stale"],
                         f"geppetto refused world events of ours: {reasons}")


def undirected(rooms):
    graph = {r["id"]: set() for r in rooms}
    for r in rooms:
        for other in r.get("neighbours", []):
            graph[r["id"]].add(other)
            graph[other].add(r["id"])
    return graph
