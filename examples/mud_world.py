"""A small text world that plays the game's part against `geppetto serve` (docs/integration.md).

The game owns its world: rooms and exits with walking times, where every NPC stands, whether a
door opens, when an action is done, and a player, Ann, who walks about, gives Piet an order (and
a quest) and starts a fight with Vex. geppetto owns what the NPCs want: it sends intents, and
the game carries them out over its ticks, reporting `npc_moved` for every room an NPC walks
into and `action_completed` / `action_failed` for every intent it ends.

Run `geppetto serve` with the village world, `[bus] kind = "redis"`, `[clock] kind = "external"`
and `[integration] completion = "game"` (config/geppetto-redis.toml), then:

    python3 examples/mud_world.py --redis redis://127.0.0.1:6379/0 \\
        --admin http://127.0.0.1:7878 --world config/worlds/village --hours 12 [--verbose] [--quests]

It takes the NPCs where `GET /npcs` says they are and carries out the intents that come after.

It rides out faults as a game must: Redis or geppetto away for a while (it retries for
`--patience` seconds), the zone moving to another instance (`--admin` may list several admin
APIs: it asks the one that holds the zone), and it can send each event a second time under the
same id (`--resend-rate`), as a game does that retries a send whose reply it did not get: every
such copy must come back dead-lettered as a duplicate, never applied twice.

Each game minute the game reports what its NPCs did, sends `time_advanced`, waits until geppetto
has applied that tick (the zone's `game_time` in the admin API's brain view), handles the
intents and NPC events that came out (its own consumer groups, acknowledged once handled,
duplicates dropped by id) and checks that geppetto's room of every NPC is the game's. At the
end it prints its figures and exits 1 if any check failed, each failure saying what went wrong.

With `--quests` the reference quest board (integrations/quests) runs against the zone too: every
game hour Ann looks at the quests offered in her room (else on the whole board), takes one,
walks to its place and back and completes it. The game then checks that geppetto answered each
completed quest: NPCs remembering Ann's deed (`deed_remembered`, their regard before and
after), the rumour of it reaching another NPC (`rumour_heard` about Ann, topic `person`,
heard by an NPC that did not remember the deed itself) and the signal
resolved on the story stream; and that the board offered at least one quest.
"""
import argparse, json, os, random, re, sys, time, urllib.error, urllib.request
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field

import redis

GROUP, CONSUMER, PLAYER = "mud-world", "mud-world-1", "ann"
EXIT_MINUTES = 3                  # game minutes to walk through one exit...
LONG_EXITS = {("lane", "farm"): 6, ("mill", "river"): 4, ("river", "woods"): 5}   # ...or longer
LOCKED_DOOR_CHANCE = 0.03         # per exit walked: the door is locked and the walk fails
TOUR = ["square", "market", "bakery", "square", "chapel", "cottages", "square", "lane", "farm",
        "mill", "river", "woods"]  # Ann's round, walked exit by exit, over and over
LINGER_MINUTES = 25               # how long Ann stays in a room of her round
QUEST_AT, FIGHT_AT, FIGHT_MINUTES = 45, 240, 30   # minutes after the start
QUEST_NPC, FOE, FIGHT_REASON = "piet", "vex", "combat"
ORDER = {"provider": "gatehouse", "action": "report_a_theft"}      # what Ann asks of Piet
SYNC_TIMEOUT_S, DRIFT_WAIT_S = 10.0, 1.0   # geppetto applies a tick; then rooms must agree
BOARD = "quest-board"             # the quest board's name (--quests)
DEED_GOSSIP = "person"            # the topic of the rumour an NPC tells of a player's deed
QUEST_STEP_MINUTES = 5            # Ann on a quest's errand walks on after this, not lingering
QUEST_LAST_HOURS = 8              # Ann takes no quest this close to the end: its echo needs time


def clock(t):
    return f"{t // 60 % 24:02d}:{t % 60:02d}"


class Map:
    """The game's map, from the world's rooms.yaml and providers.yaml: flow-style YAML, one
    entry a line, read with two patterns so that this script needs nothing but redis-py."""

    def __init__(self, world):
        self.exits = defaultdict(set)
        with open(f"{world}/rooms.yaml") as rooms:
            for room, neighbours in re.findall(r"id: (\w+),.*neighbours: \[([^\]]*)\]", rooms.read()):
                for other in re.findall(r"\w+", neighbours):
                    self.exits[room].add(other)
                    self.exits[other].add(room)
        with open(f"{world}/providers.yaml") as providers:
            text = providers.read()
            entries = r'\{ id: (\w+), name: "[^"]*", room: (\w+)'
            self.provider_room = dict(re.findall(entries, text))
        # What each action costs and pays: the game settles its economy in `game` mode and
        # reports it with the completion (geppetto never invents money there).
        self.settled = {}
        for entry in text.split("{ id: ")[1:]:
            action = re.match(r"\w+", entry).group(0)
            change = Counter()
            for field, sign in (("costs", -1), ("yields", 1)):
                listed = re.search(field + r": \{([^}]*)\}", entry)
                for name, amount in re.findall(r"(\w+): (-?[\d.]+)", listed.group(1) if listed else ""):
                    change[name] += sign * float(amount)
            if any(change.values()):
                self.settled[action] = dict(change)
        if not self.exits or not self.provider_room:
            raise SystemExit(f"{world}: found no rooms.yaml entries or providers.yaml entries")

    def path(self, start, goal):
        """The rooms walked into from `start` to `goal` (a shortest path), or None."""
        came, queue = {start: None}, deque([start])
        while queue:
            room = queue.popleft()
            for nxt in sorted(self.exits[room]):
                if nxt not in came:
                    came[nxt] = room
                    queue.append(nxt)
        if goal not in came:
            return None
        rooms = []
        while goal != start:
            rooms.append(goal)
            goal = came[goal]
        return rooms[::-1]

    def minutes(self, a, b):
        return LONG_EXITS.get((a, b)) or LONG_EXITS.get((b, a)) or EXIT_MINUTES


class Geppetto:
    """The zone's streams (world events out; intents and NPC events in, with our consumer
    groups) and its admin API."""

    def __init__(self, url, admin, zone, patience=SYNC_TIMEOUT_S, resend_rate=0.0, seed=7):
        self.r = redis.Redis.from_url(url, decode_responses=True, socket_timeout=5)
        self.admin_urls = [a.rstrip("/") for a in admin.split(",")]
        self.zone, self.seq, self.patience = zone, 0, patience
        self.resend_rate, self.rng = resend_rate, random.Random(seed + 1)
        self.resent, self.outages = set(), Counter()
        # A zone that ran before the game came has intents the game never carried out: their
        # cancels and timeouts are not the game's business.
        self.joined_late = self.r.xlen(self.key("intents")) > 0
        for stream in ("intents", "npc_events"):
            try:                                    # from now on: what came before is not ours
                self.r.xgroup_create(self.key(stream), GROUP, id="$", mkstream=True)
            except redis.ResponseError:
                pass                                # BUSYGROUP: ours already; resume from it
        newest = self.r.xrevrange(self.key("deadletter"), count=1)
        self.dead_cursor = newest[0][0] if newest else "0"
        self.letters_seen = set()
        self.run = None                             # set from the zone's time: unique event ids

    def key(self, stream):
        return f"geppetto:{{{self.zone}}}:{stream}"

    def patiently(self, what, call):
        """`call()`, tried again while Redis or geppetto does not answer, for `patience` s."""
        deadline = time.monotonic() + self.patience
        while True:
            try:
                return call()
            except (redis.ConnectionError, redis.TimeoutError, urllib.error.URLError, OSError,
                    LookupError) as error:
                self.outages[what] += 1
                if time.monotonic() > deadline:
                    raise SystemExit(f"{what}: no answer within {self.patience} s ({error})")
                time.sleep(0.05)

    def admin(self, path):
        """`path` of the admin API that holds the zone (several may be given; the zone moves
        between instances of a cluster)."""
        def ask():
            for url in self.admin_urls:
                try:
                    with urllib.request.urlopen(url + path, timeout=5) as reply:
                        answer = json.load(reply)
                except (urllib.error.URLError, OSError):
                    continue
                if path != "/npcs" or any(n["zone"] == self.zone for n in answer):
                    return answer
            raise LookupError(f"no admin API holds zone {self.zone} ({path})")
        return self.patiently("admin API", ask)

    def send(self, kind, game_time, /, **payload):     # `/`: a payload may have a `kind`
        self.seq += 1
        message = {"v": 1, "type": kind, "id": f"mud-{self.run}-{self.seq}", "zone": self.zone,
                   "game_time": game_time, **payload}
        body = {"m": json.dumps(message)}
        self.patiently("redis", lambda: self.r.xadd(self.key("world"), body))
        if self.rng.random() < self.resend_rate:          # a retry: the reply was "lost"
            self.resent.add(message["id"])
            self.patiently("redis", lambda: self.r.xadd(self.key("world"), body))
        return message["id"]

    def ack(self, stream, entry_id):
        self.patiently("redis", lambda: self.r.xack(stream, GROUP, entry_id))

    def read(self):
        """New intents and NPC events as (stream, entry id, message), by game time, NPC events
        first within a tick (a relocation precedes the NPC's decision)."""
        streams = {self.key("intents"): ">", self.key("npc_events"): ">"}
        got = []
        reply = self.patiently("redis", lambda: self.r.xreadgroup(GROUP, CONSUMER, streams, count=1000))
        for stream, entries in reply or []:
            got += [(stream, entry_id, json.loads(fields["m"])) for entry_id, fields in entries]
        return sorted(got, key=lambda g: (g[2]["game_time"], not g[0].endswith("npc_events")))

    def dead_letters(self):
        reply = self.patiently("redis", lambda: self.r.xread({self.key("deadletter"): self.dead_cursor},
                                                              count=1000)) or []
        for _, entries in reply:
            for entry_id, fields in entries:
                self.dead_cursor = entry_id
                letter = json.loads(fields["m"])
                if letter["id"] not in self.letters_seen:   # written again after a restart
                    self.letters_seen.add(letter["id"])
                    yield letter


@dataclass
class Job:
    """An intent the game carries out: a walk, an action or a reactive pick."""
    id: str
    npc: str
    kind: str
    tick: int
    due: int | None = None        # the tick of the next step (walk) or of completion (use)
    path: list = field(default_factory=list)
    locked: bool = False          # the next door on the walk is locked
    end: str | None = None        # arrived, completed, failed, cancelled, ended
    cancel_reason: str | None = None
    action: str | None = None     # the action a `use` carries out


class Game:
    def __init__(self, gp, world, npcs, start, seed, verbose):
        self.gp, self.map, self.start, self.verbose = gp, world, start, verbose
        self.rooms = {n["id"]: n["room"] for n in npcs}        # the game's truth
        self.rng = random.Random(seed)
        self.jobs, self.current, self.seen = {}, {}, set()
        self.figures, self.failures = Counter(), []
        self.drifting = {}         # NPC out of step -> its failure's index
        self.now = start           # the game's clock
        self.end = start           # the last tick to play (main sets it)
        self.ann = {"room": "square", "next": start + LINGER_MINUTES, "route": [], "stop": 0}
        self.fight = {}            # started, ends, engaged_at, released_at, refusal order id
        self.orders = {}           # order id -> what became of it
        self.goals, self.quest = set(), f"quest-{gp.run}"
        self.board, self.taken = None, []  # --quests: the board; Ann's quests, oldest first
        self.deeds = defaultdict(list)     # quest -> (npc, regard before, after) remembered
        self.rumours = []                  # rumour_heard about Ann: (tick, hearer, teller, gossip)
        self.spoken = {}                   # Ann's say id -> [tick, NPC spoken to, answered]

    def engaged(self, npc):
        return npc == FOE and "engaged_at" in self.fight and "released_at" not in self.fight

    def say(self, text, always=False):
        if always or self.verbose:
            print(f"[{clock(self.now)}] {text}")

    def fail(self, text):
        self.failures.append(text)

    # --- intents and NPC events in ---------------------------------------------------------

    def drain(self):
        while batch := self.gp.read():
            for stream, entry_id, m in batch:
                if m["id"] not in self.seen:               # re-emitted after a restart: drop
                    self.seen.add(m["id"])
                    (self.on_intent if stream.endswith("intents") else self.on_event)(m)
                self.gp.ack(stream, entry_id)
        for letter in self.gp.dead_letters():
            self.on_dead_letter(letter)

    def on_intent(self, m):
        npc, kind, t = m["npc"], m["type"], m["game_time"]
        self.figures[f"intent {kind}"] += 1
        since, until = self.fight.get("engaged_at"), self.fight.get("released_at", 1 << 62)
        if npc == FOE and kind != "cancel" and since is not None and since <= t < until:
            self.fail(f"tick {t}: intent {m['id']} ({kind}) for {npc}, engaged since tick {since}: "
                      "an engaged NPC emits no intents")
        if kind == "cancel":
            return self.on_cancel(m)
        if kind in ("bark", "social", "reply"):
            if self.rooms.get(npc) == self.ann["room"] and (kind != "social" or m["witnessed"]):
                self.figures["lines Ann heard"] += 1
            if kind == "reply":
                return self.on_reply(m)
            text = m.get("text") or m.get("narration") or f"{m['action']} with {', '.join(m['with'])}"
            return self.say(f"{npc}: {text}")
        previous = self.current.get(npc)
        if previous and previous.end is None:
            if previous.kind == "reactive":
                previous.end = "ended"                  # a new pick ends a reactive one
            else:
                previous.end = "replaced"
                self.fail(f"tick {t}: {npc}'s {previous.kind} {previous.id} (tick {previous.tick}) was "
                          f"replaced by {kind} {m['id']} without a completion, a failure or a cancel")
        job = self.jobs[m["id"]] = self.current[npc] = Job(m["id"], npc, kind, t)
        here = self.rooms.get(npc)
        if kind == "navigate":
            if m["from_room"] != here:
                self.fail(f"tick {t}: navigate {m['id']} walks {npc} from the {m['from_room']}, "
                          f"the game has it in the {here}")
            job.path = self.map.path(here, m["to_room"]) or []
            if not job.path:
                job.end = "arrived"
            else:
                self.plan_exit(job, t)
                self.say(f"{npc} sets off for the {m['to_room']} ({m['provider']})")
        elif kind == "use":
            room = self.rooms.get(m["provider"]) or self.map.provider_room.get(m["provider"])
            if room is not None and room != here:
                self.fail(f"tick {t}: use {m['id']} of {m['provider']} for {npc} in the {here}, the "
                          f"provider is in the {room}: use goes out only once the NPC is there")
            job.due = t + max(1, m["duration_ticks"])
            job.action = m["action"]
            used = (npc, m["provider"], m["action"])
            for order in self.orders.values():
                if used == (order["npc"], order["provider"], order["action"]):
                    order["obeyed"] = (m["id"], m.get("player_queued"))
            self.say(f"{npc} starts to {m['action']} ({m['duration_ticks']} min)")
        else:
            self.say(f"{npc} reacts: {m['action']} ({m['set']})", always=True)

    def on_reply(self, m):
        """An NPC answers Ann: the one she spoke to, within a tick of her line."""
        spoken, t = self.spoken.get(m["in_reply_to"]), m["game_time"]
        if spoken is None or m["to"] != PLAYER:
            return self.fail(f"tick {t}: reply {m['id']} answers {m['in_reply_to']} of {m['to']}, "
                             "which Ann never said")
        said_at, npc, answered = spoken
        if answered:
            return self.fail(f"tick {t}: a second reply {m['id']} to {m['in_reply_to']}")
        if m["npc"] != npc or t > said_at + 1:
            self.fail(f"tick {t}: reply {m['id']} by {m['npc']} to Ann's line to {npc} of tick "
                      f"{said_at}: the NPC spoken to answers within a tick")
        spoken[2] = True
        self.figures["replies to Ann"] += 1
        self.say(f"{m['npc']} answers Ann: {m['text']}", always=True)

    def speak(self, t):
        """Ann greets an NPC of the room she walked into by name (the first by id; not one the
        game holds in a fight)."""
        here = sorted(n for n, room in self.rooms.items() if room == self.ann["room"] and not self.engaged(n))
        if not here:
            return
        npc = here[0]
        text = f"Good day, {npc.capitalize()}!"
        said = self.gp.send("say", t, speaker=PLAYER, room=self.ann["room"], text=text)
        self.spoken[said] = [t, npc, False]
        self.figures["lines Ann said"] += 1
        self.say(f"Ann says to {npc}: {text}", always=True)

    def on_cancel(self, m):
        job, t = self.jobs.get(m["cancelled"]), m["game_time"]
        if job is None and self.gp.joined_late:
            self.figures["intents from before the game came"] += 1
            return
        if job is None:
            return self.fail(f"tick {t}: cancel {m['id']} names {m['cancelled']}, never sent")
        job.cancel_reason = m["reason"]
        if job.end is None:
            job.end = "cancelled"
            self.figures[f"cancelled {m['reason']}"] += 1
            self.say(f"{job.npc} stops its {job.kind} ({m['reason']})")
        else:
            self.figures["cancels crossing the game's report"] += 1

    def on_event(self, m):
        kind, npc, t = m["type"], m.get("npc"), m["game_time"]
        if kind == "npc_relocated":
            if self.rooms.get(npc) != m["from"]:
                self.fail(f"tick {t}: npc_relocated {m['id']} moves {npc} from the {m['from']}, "
                          f"the game had it in the {self.rooms.get(npc)}")
            self.rooms[npc] = m["to"]
            self.figures["relocations"] += 1
            self.say(f"{m['leave']} ({m['from']}) / {m['arrive']} ({m['to']})",
                     always=self.ann["room"] in (m["from"], m["to"]))
        elif kind == "action_failed" and m.get("reason") == "timeout":
            job = self.jobs.get(m.get("intent"))
            if job is None and self.gp.joined_late:
                self.figures["intents from before the game came"] += 1
                return
            state = job and (job.end or f"due at tick {job.due}")
            self.fail(f"tick {t}: geppetto timed out {npc}'s {m.get('intent')} ({job and job.kind} "
                      f"of tick {job and job.tick}; the game's state: {state})")
        elif kind == "action_completed":
            job = self.jobs.get(m.get("intent"))
            if job is None or job.end != "completed":
                self.fail(f"tick {t}: {m['id']} reports {npc}'s {m.get('intent')} completed, "
                          f"which the game did not complete (its state: {job and job.end})")
        elif kind == "action_started" and self.engaged(npc):
            self.fail(f"tick {t}: {npc} starts {m['provider']}/{m['action']} ({m['id']}) while engaged")
        elif kind == "mood_changed":
            self.figures["mood events"] += 1
            if m["mood"] == m["from"]:
                self.fail(f"tick {t}: mood_changed {m['id']} for {npc} stays {m['mood']}")
            self.say(f"{npc} feels {m['mood']} (was {m['from']}; {m['cause']})")
        elif kind == "goal_created":                       # goal ids are each NPC's own
            self.goals.add((npc, m["goal_id"]))
            self.figures["goal events"] += 1
        elif kind in ("goal_completed", "goal_failed", "goal_blocked"):
            self.figures["goal events"] += 1
            if (npc, m["goal_id"]) not in self.goals and self.gp.joined_late:
                self.figures["goals from before the game came"] += 1
            elif (npc, m["goal_id"]) not in self.goals:
                self.fail(f"tick {t}: {kind} {m['id']} names {npc}'s {m['category']} goal "
                          f"{m['goal_id']} ({m['description']!r}), which no goal_created announced")
                self.goals.add((npc, m["goal_id"]))
            if m["goal_id"] == self.quest:
                self.fight.setdefault("quest", kind)
                self.say(f"{npc}'s quest: {kind}", always=True)
        elif kind in ("order_accepted", "order_refused", "order_done"):
            order = self.orders.get(m["order"])
            if order is None:
                return self.fail(f"tick {t}: {kind} {m['id']} names order {m['order']}, never given")
            order[kind] = m
            self.say(f"{npc}: {kind} {m.get('outcome') or m.get('reason') or ''}", always=True)
        elif kind in ("npc_engaged", "npc_released"):
            self.figures[f"echo {kind}"] += 1
        elif kind == "deed_remembered" and m["by"] == PLAYER:
            self.deeds[m.get("quest")].append((npc, m["before"], m["after"]))
        elif kind == "rumour_heard" and m["subject"] == PLAYER:
            self.rumours.append((t, npc, m["teller"], m["gossip"]))
        elif kind == "npc_spawned":
            self.rooms[npc] = m["room"]
        elif kind == "npc_despawned":
            self.rooms.pop(npc, None)
        elif kind == "reactive_ended" and npc in self.current and self.current[npc].kind == "reactive":
            self.current[npc].end = "ended"

    def on_dead_letter(self, letter):
        try:
            original = json.loads(letter["original"])
        except (ValueError, TypeError):
            return
        if str(original.get("id", "")).startswith(f"{BOARD}:"):
            if original["type"] == "goal_withdrawn":    # the goal ended as the quest did: a race
                self.figures["board's goal withdrawals crossing the goal's end"] += 1
            else:
                self.fail(f"tick {original['game_time']}: geppetto refused the quest board's "
                          f"{original['type']} {original['id']}: {letter['reason']}")
            return
        if not str(original.get("id", "")).startswith(f"mud-{self.gp.run}-"):
            return                                          # not ours
        if letter["reason"].startswith("duplicate"):
            self.figures["duplicates refused"] += 1         # a copy, never applied twice
            return
        if original["id"] in self.gp.resent:                # a copy of an event refused itself
            self.figures["resent copies refused like their original"] += 1
            self.gp.resent.discard(original["id"])
            return
        job = self.jobs.get(original.get("intent"))
        if original["type"] in ("action_completed", "action_failed") and job and job.cancel_reason:
            self.figures["reports crossing a cancel (dead-lettered)"] += 1
        else:
            self.fail(f"tick {original['game_time']}: geppetto refused our {original['type']} "
                      f"{original['id']}: {letter['reason']}")

    # --- the game's tick --------------------------------------------------------------------

    def plan_exit(self, job, t):
        job.due = t + self.map.minutes(self.rooms[job.npc], job.path[0])
        job.locked = self.rng.random() < LOCKED_DOOR_CHANCE

    def step(self, t):
        """The game's minute `t`: the player, then every NPC's walk or action due now."""
        self.now = t
        self.player(t)
        for npc in sorted(self.current):
            job = self.current[npc]
            if job.end or job.due is None or job.due > t or self.engaged(npc):
                continue
            if job.kind == "use":
                paid = self.map.settled.get(job.action)
                extra = {"resources": paid} if paid else {}
                self.gp.send("action_completed", t, npc=npc, intent=job.id, outcome="done", **extra)
                if paid:
                    self.figures["completions that moved money"] += 1
                job.end = "completed"
                self.figures["actions completed"] += 1
            elif job.locked:
                door = job.path[0]
                self.gp.send("action_failed", t, npc=npc, intent=job.id,
                             reason=f"the door to the {door} is locked")
                job.end = "failed"
                self.figures["walks failed at a locked door"] += 1
                self.say(f"{npc} finds the door to the {door} locked", always=True)
            else:
                self.rooms[npc] = job.path.pop(0)
                self.gp.send("npc_moved", t, npc=npc, room=self.rooms[npc])
                if job.path:
                    self.plan_exit(job, t)
                else:
                    job.end = "arrived"
                    self.figures["walks arrived"] += 1

    def player(self, t):
        """Ann's minute: she arrives, gives Piet a quest and an order, goes after Vex and
        fights it, and otherwise walks her round, lingering in each room."""
        ann, fight = self.ann, self.fight
        if t == self.start + 1:
            self.gp.send("player_entered", t, player=PLAYER, room=ann["room"])
            self.say(f"Ann walks into the {ann['room']}", always=True)
        if t == self.start + QUEST_AT:
            self.give_quest(t)
        if t == self.start + FIGHT_AT:
            fight["started"] = t                            # Ann goes after Vex
        chasing = "started" in fight and "engaged_at" not in fight
        if chasing and ann["room"] == self.rooms[FOE]:
            self.start_fight(t)
            chasing = False
        if fight.get("ends") == t:
            self.gp.send("npc_released", t, npc=FOE)
            fight["released_at"] = t
            self.say("Vex breaks free and runs", always=True)
        if self.board and (t - self.start) % 60 == 0:
            self.look_for_quest(t)
        if t < ann["next"] or self.engaged(FOE):
            return
        if chasing:                                         # one exit a minute, towards Vex
            ann["route"] = self.map.path(ann["room"], self.rooms[FOE])
        elif not ann["route"] and ann.get("quest"):
            self.on_quest(t)
        elif not ann["route"]:
            ann["stop"] = (ann["stop"] + 1) % len(TOUR)
            ann["route"] = self.map.path(ann["room"], TOUR[ann["stop"]])
        if ann["route"]:
            self.gp.send("player_left", t, player=PLAYER, room=ann["room"])
            ann["room"] = ann["route"].pop(0)
            self.gp.send("player_entered", t, player=PLAYER, room=ann["room"])
            self.say(f"Ann walks into the {ann['room']}")
            self.speak(t)
        on_an_errand = ann.get("quest") and ann["route"]      # a quest's walk: no lingering
        ann["next"] = t + (1 if chasing else QUEST_STEP_MINUTES if on_an_errand else LINGER_MINUTES)

    def look_for_quest(self, t):
        """Ann's hour: with no quest on her hands (and time left to see it through) she takes
        the best quest offered in her room, else the best on the board."""
        ann = self.ann
        if ann.get("quest") or t > self.end - QUEST_LAST_HOURS * 60:
            return
        here = self.board.offers(room=ann["room"])
        offers = here or self.board.offers()
        if not offers:
            return
        offer = self.board.accept(offers[0].id, PLAYER)
        ann.update(quest=offer.id, home=ann["room"], back=False)
        self.taken.append({"offer": offer.id, "accepted": t})
        self.figures["quests taken " + ("in her room" if here else "from the whole board")] += 1
        self.say(f"Ann takes the quest \"{offer.title}\" from {offer.giver} ({offer.reward} gold, "
                 f"at the {offer.place})", always=True)

    def on_quest(self, t):
        """Ann on her quest: out to its place, a while there, back where she took it; there
        she completes it."""
        ann = self.ann
        offer = self.board.quests[ann["quest"]]
        goal = ann["home"] if ann["back"] else offer.place
        if ann["room"] != goal:
            ann["route"] = self.map.path(ann["room"], goal) or []
        elif not ann["back"]:
            ann["back"] = True
            self.say(f"Ann does what the quest asks at the {offer.place}", always=True)
        else:
            self.board.complete(offer.id, PLAYER, "helped")
            self.taken[-1]["completed"] = t
            ann["quest"] = None
            self.say(f"Ann completes \"{offer.title}\" for {offer.giver}", always=True)

    def give_quest(self, t):
        """A quest (a goal the game assigns), a coin and an order, all for Piet."""
        self.gp.send("goal_assigned", t, npc=QUEST_NPC, goal={
            "id": self.quest, "description": "report the theft at the gatehouse", "deadline_hours": 8,
            "predicate": {"predicate_type": "has_fact", "fact": "theft_reported"}})
        self.gp.send("social_event", t, kind="gift", source=PLAYER, target=QUEST_NPC, deltas={})
        order = self.gp.send("order", t, npc=QUEST_NPC, by=PLAYER, **ORDER)
        self.orders[order] = {"npc": QUEST_NPC, **ORDER}
        self.say(f"Ann gives Piet a coin and asks him to {ORDER['action']} ({order})", always=True)

    def start_fight(self, t):
        """Ann corners Vex: the game takes Vex over, and an order to it is to be refused."""
        self.gp.send("npc_engaged", t, npc=FOE, reason=FIGHT_REASON)
        self.gp.send("social_event", t, kind="threat", source=PLAYER, target=FOE, deltas={})
        refused = self.gp.send("order", t, npc=FOE, by=PLAYER, provider="chapel", action="pray")
        self.orders[refused] = {"npc": FOE, "provider": "chapel", "action": "pray"}
        job = self.current.get(FOE)                         # geppetto must cancel it
        self.fight.update(engaged_at=t, ends=t + FIGHT_MINUTES, refusal=refused,
                          job=job if job and job.end is None else None)
        self.say(f"Ann corners Vex in the {self.ann['room']}: a fight!", always=True)

    # --- checks -----------------------------------------------------------------------------

    def wait_until_applied(self, t, probe):
        deadline = time.monotonic() + self.gp.patience
        while (now := self.gp.admin(f"/npcs/{probe}/brain")["game_time"]) < t:
            if time.monotonic() > deadline:
                raise SystemExit(f"geppetto did not apply tick {t} within {self.gp.patience} s "
                                 f"(its game time: {now})")
            time.sleep(0.002)

    def check_rooms(self, t):
        """geppetto's room of every NPC is the game's. Rooms may take a moment to agree (an
        output still on its way); an NPC already out of step is not waited for again."""
        deadline = time.monotonic() + DRIFT_WAIT_S
        while True:
            theirs = {n["id"]: n["room"] for n in self.gp.admin("/npcs") if n["zone"] == self.gp.zone}
            off = {npc for npc, room in self.rooms.items() if theirs.get(npc) != room}
            if not off - set(self.drifting) or time.monotonic() > deadline:
                break
            time.sleep(0.01)
            self.drain()
        self.figures["ticks checked"] += 1
        self.figures["drift"] += len(off)
        for npc in sorted(off - set(self.drifting)):
            self.drifting[npc] = len(self.failures)
            self.fail(f"tick {t}: {npc} is in the {self.rooms[npc]} for the game, "
                      f"in the {theirs.get(npc)} for geppetto")
        for npc in sorted(set(self.drifting) - off):
            self.failures[self.drifting.pop(npc)] += f" (until tick {t})"

    def final_checks(self):
        order_id, fight = next(iter(self.orders), None), self.fight
        order = self.orders.get(order_id, {})
        done = order.get("order_done", {})
        use = order.get("obeyed", (None, False))
        if "order_accepted" not in order:
            self.fail(f"order {order_id} to {QUEST_NPC} was not accepted ({order.get('order_refused')})")
        elif done.get("outcome") == "interrupted":          # a need collapsed: the contract allows it
            self.figures["orders interrupted"] += 1
        elif use[1] is not True or done.get("outcome") != "completed":
            self.fail(f"order {order_id}: {QUEST_NPC} was to {ORDER['provider']}/{ORDER['action']}; "
                      f"player-queued use: {use}, order_done: {done or None}")
        else:
            self.figures["orders obeyed"] += 1
        if "released_at" not in fight:
            self.fail(f"the fight with {FOE} never started or ended ({fight})")
        elif self.orders[fight["refusal"]].get("order_refused", {}).get("reason") != "engaged":
            self.fail(f"order {fight['refusal']} to the engaged {FOE} was not refused as engaged "
                      f"({self.orders[fight['refusal']]})")
        job = fight.get("job")
        if job and job.cancel_reason != FIGHT_REASON:
            self.fail(f"npc_engaged at tick {fight['engaged_at']}: {FOE}'s {job.kind} {job.id} was not "
                      f"cancelled with reason {FIGHT_REASON} (cancel: {job.cancel_reason})")
        if fight.get("quest") != "goal_completed":
            self.fail(f"quest {self.quest} of {QUEST_NPC} (has_fact theft_reported) was not completed "
                      f"({fight.get('quest')})")
        if self.board:
            self.check_quests()
        if not self.figures["mood events"]:
            self.fail("no mood_changed event in the whole run")
        if not self.goals:
            self.fail("no goal_created event in the whole run")
        unanswered = [i for i, (at, _, answered) in self.spoken.items() if not answered and at < self.end - 1]
        if not self.spoken or unanswered:
            self.fail(f"Ann spoke {len(self.spoken)} times; unanswered: {unanswered[:5]}")

    def check_quests(self):
        """Every completed quest was answered: deeds remembered, a rumour spread, the signal
        resolved on the story stream; and the board offered at least one quest."""
        if not self.board.stats()["offers made"]:
            self.fail("the quest board never made an offer")
        for quest in self.taken:
            if "completed" not in quest:
                continue
            offer = self.board.quests[quest["offer"]]
            deeds = self.deeds.get(offer.id, [])
            rememberers = {npc for npc, _, _ in deeds}
            quest["rumour"] = next((r for r in self.rumours if r[0] >= quest["completed"]
                                    and r[1] not in rememberers and r[3] == DEED_GOSSIP), None)
            changed = [d for d in deeds if d[1] != d[2]]
            if not changed:
                self.fail(f"quest {offer.id} completed at tick {quest['completed']}: no NPC's regard for "
                          f"{PLAYER} changed ({deeds or 'no deed_remembered'})")
            if quest["rumour"] is None:
                self.fail(f"quest {offer.id}: no rumour about {PLAYER} reached an NPC but "
                          f"{sorted(rememberers)} after tick {quest['completed']}")
            if not offer.resolved_seen:
                self.fail(f"quest {offer.id}: story_signal_resolved of {offer.signal} never came back")

    def report_quests(self):
        stats = self.board.stats()
        for quest in self.taken:
            offer = self.board.quests[quest["offer"]]
            print(f"  quest {offer.id}: \"{offer.title}\" from {offer.giver}, accepted at tick "
                  f"{quest['accepted']}, {offer.status} at tick {quest.get('completed')}, signal "
                  f"resolved on story: {offer.resolved_seen}")
            for npc, before, after in self.deeds.get(offer.id, []):
                regard = " ".join(f"{k} {before[k]:.2f}->{after[k]:.2f}" for k in sorted(before))
                print(f"    {npc} remembers Ann's deed: {regard}")
            if quest.get("rumour"):
                tick, hearer, teller, gossip = quest["rumour"]
                print(f"    tick {tick}: {hearer} hears from {teller} about Ann ({gossip})")
        print("quests: " + " ".join(f"{name.replace(' ', '_')}={n}" for name, n in stats.items())
              + f" rumours_about_ann={len(self.rumours)}")

    def report(self, t):
        fig, ended = self.figures, Counter(str(j.end) for j in self.jobs.values())
        print(f"mud_world: {clock(self.start)}-{clock(t)}, {fig['ticks checked']} ticks checked, "
              f"{len(self.rooms)} NPCs")
        for name, count in sorted(fig.items()):
            print(f"  {name}: {count}")
        print(f"  intents ended: {dict(sorted(ended.items()))}")
        hours = max(t - self.start, 1) / 60
        print(f"  lines Ann heard a game hour: {fig['lines Ann heard'] / hours:.1f}")
        if self.board:
            self.report_quests()
        for failure in self.failures[:30]:
            print(f"FAILED: {failure}")
        if len(self.failures) > 30:
            print(f"FAILED: ... and {len(self.failures) - 30} more")
        cancelled = sum(v for k, v in fig.items() if k.startswith("cancelled "))
        print(f"figures: ticks={fig['ticks checked']} npcs={len(self.rooms)} "
              f"completed={fig['actions completed']} arrived={fig['walks arrived']} "
              f"failed={fig['walks failed at a locked door']} cancelled={cancelled} "
              f"open={ended['None']} drift={fig['drift']} orders={len(self.orders)} "
              f"obeyed={fig['orders obeyed']} moods={fig['mood events']} goals={fig['goal events']} "
              f"relocations={fig['relocations']} resent={len(self.gp.resent)} "
              f"said={fig['lines Ann said']} replies={fig['replies to Ann']} "
              f"heard_per_hour={fig['lines Ann heard'] / hours:.1f} "
              f"duplicates={fig['duplicates refused']} "
              f"outages={sum(self.gp.outages.values())} failures={len(self.failures)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--admin", default="http://127.0.0.1:7878")
    parser.add_argument("--world", default="config/worlds/village", help="rooms.yaml and providers.yaml")
    parser.add_argument("--zone", default="village")
    parser.add_argument("--hours", type=float, default=12)
    parser.add_argument("--seconds", type=float, help="play for this long instead (at least six game hours)")
    parser.add_argument("--patience", type=float, default=SYNC_TIMEOUT_S,
                        help="seconds to wait for Redis or geppetto to answer again")
    parser.add_argument("--resend-rate", type=float, default=0.0,
                        help="chance that an event is sent twice under its id (a game's retry)")
    parser.add_argument("--seed", type=int, default=7, help="which doors are locked")
    parser.add_argument("--verbose", action="store_true", help="tell every walk, action and line")
    parser.add_argument("--quests", action="store_true",
                        help="run the quest board (integrations/quests); Ann takes its quests")
    args = parser.parse_args()
    gp = Geppetto(args.redis, args.admin, args.zone, args.patience, args.resend_rate, args.seed)
    npcs = [n for n in gp.admin("/npcs") if n["zone"] == args.zone]
    if not npcs:
        raise SystemExit(f"zone {args.zone} has no NPCs in {args.admin}/npcs")
    probe = npcs[0]["id"]
    start = gp.run = gp.admin(f"/npcs/{probe}/brain")["game_time"]   # the zone's time
    game = Game(gp, Map(args.world), npcs, start, args.seed, args.verbose)
    end = game.end = start + int(args.hours * 60)
    if args.quests:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "integrations", "quests"))
        from geppetto_quests import QuestBoard
        places = {}                                 # a provider of each room: where givers wait
        for provider, room in sorted(game.map.provider_room.items()):
            places.setdefault(room, provider)
        game.board = QuestBoard(gp.r, args.zone, name=BOARD, seed=args.seed, places=places)
    until = time.monotonic() + args.seconds if args.seconds else None
    t = start
    while t < end if until is None else (time.monotonic() < until or t < start + 360):
        t += 1
        game.drain()
        game.step(t)
        gp.send("time_advanced", t)
        game.wait_until_applied(t, probe)
        game.drain()
        game.check_rooms(t)
        if game.board:
            game.board.tick(t)
    game.final_checks()
    game.report(t)
    sys.exit(1 if game.failures else 0)


if __name__ == "__main__":
    main()
