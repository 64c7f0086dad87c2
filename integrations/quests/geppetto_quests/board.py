"""A quest board: story signals from geppetto in, quest offers for players out.

The board reads a zone's `story` stream with its own consumer group (acknowledging each entry
once handled, dropping a message seen before by its envelope id) and keeps the signals it could
turn into quests. Each `tick(game_time)` it offers the most important of them, within its
pacing (at most `max_open` open quests, one offer of a signal type per `cooldown_ticks`), and
takes each signal it offers (`story_signal_taken`, so geppetto keeps it live for the board).

An offer is `offered`, then `accepted` by a player (its giver is then given a goal: to wait at
the quest's place, `goal_assigned`), then `completed` or `failed` (`quest_outcome`, then
`story_signal_resolved`, and `goal_withdrawn` if the giver still pursues the goal); an offer
nobody accepts is `expired` at its signal's expiry (and resolved as such). A signal that lapses
before it is offered is dropped; later evidence (`story_signal_updated`) refreshes its offer.

Every decision reads only the story stream, the game times given and `random.Random(seed)`:
the same story stream and seed give the same offers. The world events it writes have ids made
from the board's name and the signal's id, so a retried send is recognised as a duplicate.

A board reads and writes Redis itself (`QuestBoard(r, zone)`), or is fed by a game that already
reads the zone's streams (`QuestBoard(None, zone, post=…)`: the game hands it each `story` and
`npc_events` message with `handle` and writes what it `post`s to the world stream — the Evennia
bridge runs it so). `snapshot` and `restore` carry its state over a restart of the game.
"""
import json
import random
from collections import Counter
from dataclasses import asdict, dataclass, fields

import redis

from .templates import TEMPLATES, draft

SEEN_IDS_KEPT = 16384   # envelope ids remembered to drop duplicates (geppetto re-emits on restart)


@dataclass
class Offer:
    """A quest made from one story signal."""
    id: str
    signal: str
    signal_type: str
    title: str
    giver: str
    target: str
    place: str
    reward: int
    importance: float
    expires_at: int               # game time (ticks) the offer lapses at unless accepted
    made_at: int
    npcs: tuple = ()
    status: str = "offered"       # offered, accepted, completed, failed, expired, lost
    player: str | None = None
    goal: str | None = None       # the giver's goal id while the board assigned one
    outcome: str | None = None
    resolved_seen: bool = False   # geppetto said the signal was resolved (story stream)


class QuestBoard:
    """Turns a zone's story signals into quest offers and tells geppetto how they end.

    `r` is a redis-py client (`decode_responses=True`) the board reads and writes through; or
    None for a board its game feeds (`handle`), which then writes through `post(message)`.
    `places` maps a room to a provider in it: the giver of an accepted quest is sent there (an
    `at_provider` goal); without one for the quest's place no goal is assigned. `names`, a
    function of an NPC or room id, gives the name a title shows (the id itself by default);
    the offer's fields keep the ids.
    """

    def __init__(self, r, zone, name="quest-board", seed=0, max_open=3, cooldown_ticks=120,
                 min_importance=0.0, goal_deadline_hours=6, places=None, post=None, names=None):
        if r is None and post is None:
            raise ValueError("a quest board without a Redis client needs post, the function "
                             "that writes its world events")
        if r is not None and post is not None:
            raise ValueError("a quest board writes through its Redis client or through post, not both")
        self.r, self.zone, self.name, self.post = r, zone, name, post
        self.names = names
        self.rng = random.Random(seed)
        self.max_open, self.cooldown_ticks = max_open, cooldown_ticks
        self.min_importance, self.goal_deadline_hours = min_importance, goal_deadline_hours
        self.places = dict(places or {})
        self.now = 0
        self.candidates = {}      # signal id -> its latest state, not yet offered
        self.arrival = {}         # signal id -> order seen (ties in ranking)
        self.quests = {}          # offer id -> Offer, whatever its state
        self.by_signal = {}       # signal id -> offer id
        self.by_goal = {}         # (npc, goal id) -> offer id
        self.last_offer = {}      # signal type -> game time of its last offer
        self.seen = {}            # envelope ids handled (insertion-ordered, bounded)
        self.counts = Counter()
        if r is None:
            return
        for stream, start in (("story", "0"), ("npc_events", "$")):
            try:
                self.r.xgroup_create(self.key(stream), self.name, id=start, mkstream=True)
            except redis.ResponseError as error:   # BUSYGROUP: the board's group exists
                if "BUSYGROUP" not in str(error):
                    raise

    def key(self, stream):
        return f"geppetto:{{{self.zone}}}:{stream}"

    # --- the game's side --------------------------------------------------------------------

    def offers(self, room=None):
        """Open offers (not yet accepted), most important first; only those at `room` if given."""
        open_ = [o for o in self.quests.values()
                 if o.status == "offered" and (room is None or o.place == room)]
        return sorted(open_, key=lambda o: (-o.importance, o.made_at, o.id))

    def accept(self, offer_id, player):
        """`player` takes the quest: its giver is sent to wait at the quest's place."""
        offer = self.quests[offer_id]
        if offer.status != "offered":
            raise ValueError(f"offer {offer_id} is {offer.status}, not open")
        offer.status, offer.player = "accepted", player
        self.counts["offers accepted"] += 1
        provider = self.places.get(offer.place)
        if provider is not None:
            offer.goal = f"{self.name}:{offer.signal}"
            self.by_goal[(offer.giver, offer.goal)] = offer.id
            self.send("goal_assigned", "goal", offer.signal, npc=offer.giver, goal={
                "id": offer.goal, "description": f"meet {player} at the {offer.place}: {offer.title}",
                "predicate": {"predicate_type": "at_provider", "provider": provider},
                "deadline_hours": self.goal_deadline_hours})
        return offer

    def complete(self, offer_id, player, outcome="helped"):
        """The quest ended: `helped` (completed), `failed` or `harmed` (failed). geppetto hears
        the outcome for the signal's NPCs, then that the signal is resolved."""
        if outcome not in ("helped", "failed", "harmed"):
            raise ValueError(f"outcome {outcome!r}: helped, failed or harmed")
        self.poll()                                 # a goal that ended meanwhile is not withdrawn
        offer = self.quests[offer_id]
        if offer.status != "accepted" or offer.player != player:
            raise ValueError(f"offer {offer_id} is {offer.status} (by {offer.player}), not {player}'s")
        offer.status = "completed" if outcome == "helped" else "failed"
        offer.outcome = outcome
        self.counts[f"offers {offer.status}"] += 1
        self.send("quest_outcome", "outcome", offer.signal, by=player, outcome=outcome,
                  quest=offer.id, signal=offer.signal)
        self.send("story_signal_resolved", "resolved", offer.signal, signal=offer.signal,
                  by=self.name, outcome=offer.status)
        self.withdraw_goal(offer)
        return offer

    def tick(self, game_time):
        """The game's clock reached `game_time`: read the story stream, let offers nobody
        accepted expire, and make new offers within the pacing."""
        self.now = max(self.now, game_time)
        self.poll()
        for offer in list(self.quests.values()):
            if offer.status == "offered" and offer.expires_at <= self.now:
                offer.status = "expired"
                self.counts["offers expired"] += 1
                self.send("story_signal_resolved", "resolved", offer.signal, signal=offer.signal,
                          by=self.name, outcome="expired")
        for signal, state in list(self.candidates.items()):
            if state["expires_at"] <= self.now:      # lapsing: geppetto will say so
                del self.candidates[signal]
        self.make_offers()

    def stats(self):
        """What the board saw and did, by name (every count present, 0 if none)."""
        names = ("signals raised", "signals updated", "signals expired", "signals resolved",
                 "signals skipped", "offers made", "offers accepted", "offers completed",
                 "offers failed", "offers expired", "offers lost", "goals assigned",
                 "goals withdrawn", "goals refused", "duplicates dropped")
        return {name: self.counts[name] for name in names}

    # --- the streams ------------------------------------------------------------------------

    def poll(self):
        """Reads and handles what is new on the story stream and the NPC events (a fed board
        reads nothing: its game hands it the messages)."""
        if self.r is None:
            return
        streams = {self.key("story"): ">", self.key("npc_events"): ">"}
        while reply := self.r.xreadgroup(self.name, self.name, streams, count=500):
            for stream, entries in reply:
                for entry_id, entry in entries:
                    self.handle(stream.rsplit(":", 1)[1], json.loads(entry["m"]))
                    self.r.xack(stream, self.name, entry_id)

    def handle(self, stream, message):
        """One message of the zone's `story` or `npc_events` stream (short names), once by its
        envelope id; what a fed board's game calls for each message it reads."""
        if stream not in ("story", "npc_events"):
            raise ValueError(f"a quest board reads the story and npc_events streams, not {stream!r}")
        if message["id"] in self.seen:
            self.counts["duplicates dropped"] += 1
            return
        self.remember(message["id"])
        if stream == "story":
            self.on_story(message)
        else:
            self.on_npc_event(message)

    def remember(self, message_id):
        self.seen[message_id] = None
        if len(self.seen) > SEEN_IDS_KEPT:
            del self.seen[next(iter(self.seen))]

    def on_story(self, m):
        kind, signal = m["type"], m.get("signal")
        self.now = max(self.now, m["game_time"])
        offer = self.quests.get(self.by_signal.get(signal))
        if kind == "story_signal":
            self.counts["signals raised"] += 1
            self.arrival.setdefault(signal, len(self.arrival))
            if m["importance"] >= self.min_importance and m["signal_type"] in TEMPLATES and m["npcs"]:
                self.candidates[signal] = m
            else:
                self.counts["signals skipped"] += 1
        elif kind == "story_signal_updated":
            self.counts["signals updated"] += 1
            taken_by = m.get("taken_by")
            if signal in self.candidates:
                self.candidates[signal] = m
            elif offer and taken_by not in (None, self.name) and offer.status == "offered":
                offer.status = "lost"                   # another consumer holds it
                self.counts["offers lost"] += 1
            elif offer and offer.status == "offered":
                offer.importance, offer.npcs = m["importance"], tuple(m["npcs"])
                offer.expires_at = max(offer.expires_at, m["expires_at"])
                offer.place = m.get("location") or offer.place
        elif kind == "story_signal_expired":
            self.counts["signals expired"] += 1
            self.candidates.pop(signal, None)
            if offer and offer.status == "offered":
                offer.status = "expired"
                self.counts["offers expired"] += 1
        elif kind == "story_signal_resolved":
            self.counts["signals resolved"] += 1
            self.candidates.pop(signal, None)
            if offer:
                offer.resolved_seen = True

    def on_npc_event(self, m):
        """The giver's goal ended on its own: nothing to withdraw any more."""
        kind = m["type"]
        if kind not in ("goal_completed", "goal_failed", "goal_refused"):
            return
        offer = self.quests.get(self.by_goal.pop((m.get("npc"), m.get("goal_id")), None))
        if offer is not None and offer.goal == m.get("goal_id"):
            offer.goal = None
            if kind == "goal_refused":
                self.counts["goals refused"] += 1

    def make_offers(self):
        """Offers for the waiting signals, most important first, within the pacing."""
        ranked = sorted(self.candidates.values(),
                        key=lambda s: (-s["importance"], self.arrival[s["signal"]]))
        for state in ranked:
            open_ = sum(o.status in ("offered", "accepted") for o in self.quests.values())
            if open_ >= self.max_open:
                return
            last = self.last_offer.get(state["signal_type"])
            if last is not None and self.now < last + self.cooldown_ticks:
                continue
            self.offer(state)

    def offer(self, state):
        signal = state["signal"]
        del self.candidates[signal]
        title, giver, target, reward = draft(state, self.rng, self.names)
        offer = Offer(id=f"{self.name}:{signal}", signal=signal, signal_type=state["signal_type"],
                      title=title, giver=giver, target=target, place=state.get("location") or "",
                      reward=reward, importance=state["importance"],
                      expires_at=state["expires_at"], made_at=self.now, npcs=tuple(state["npcs"]))
        self.quests[offer.id] = offer
        self.by_signal[signal] = offer.id
        self.last_offer[offer.signal_type] = self.now
        self.counts["offers made"] += 1
        self.send("story_signal_taken", "taken", signal, signal=signal, by=self.name)

    def withdraw_goal(self, offer):
        if offer.goal is not None:
            self.by_goal.pop((offer.giver, offer.goal), None)
            self.send("goal_withdrawn", "withdrawn", offer.signal, npc=offer.giver, goal=offer.goal)
            self.counts["goals withdrawn"] += 1
            offer.goal = None

    def send(self, kind, what, signal, /, **payload):
        """A world event in geppetto's envelope; its id is the board's, the signal's and what
        it says, so each is sent once and a retry is a duplicate."""
        if kind == "goal_assigned":
            self.counts["goals assigned"] += 1
        message = {"v": 1, "type": kind, "id": f"{self.name}:{self.zone}:{signal}:{what}",
                   "zone": self.zone, "game_time": self.now, **payload}
        if self.r is None:
            self.post(message)
        else:
            self.r.xadd(self.key("world"), {"m": json.dumps(message)})

    # --- over a restart -----------------------------------------------------------------------

    def snapshot(self):
        """The board's state as plain data (dicts, lists, strings, numbers; JSON can hold
        it): what `restore` takes back after the game restarts."""
        state = self.rng.getstate()
        return {
            "board": self.name, "zone": self.zone, "now": self.now,
            "rng": [state[0], list(state[1]), state[2]],
            "candidates": list(self.candidates.values()),
            "arrival": dict(self.arrival),
            "quests": [asdict(o) | {"npcs": list(o.npcs)} for o in self.quests.values()],
            "by_goal": [[npc, goal, offer] for (npc, goal), offer in self.by_goal.items()],
            "last_offer": dict(self.last_offer),
            "seen": list(self.seen),
            "counts": dict(self.counts),
        }

    def restore(self, snapshot):
        """Takes back a `snapshot` of a board of the same name and zone."""
        if (snapshot.get("board"), snapshot.get("zone")) != (self.name, self.zone):
            raise ValueError(f"a snapshot of board {snapshot.get('board')!r} in zone "
                             f"{snapshot.get('zone')!r} is not one of {self.name!r} in {self.zone!r}")
        version, internal, gauss = snapshot["rng"]
        self.rng.setstate((version, tuple(internal), gauss))
        self.now = snapshot["now"]
        self.candidates = {state["signal"]: dict(state) for state in snapshot["candidates"]}
        self.arrival = dict(snapshot["arrival"])
        known = {f.name for f in fields(Offer)}
        self.quests = {}
        for saved in snapshot["quests"]:
            offer = Offer(**{k: v for k, v in saved.items() if k in known})
            offer.npcs = tuple(offer.npcs)
            self.quests[offer.id] = offer
        self.by_signal = {o.signal: o.id for o in self.quests.values()}
        self.by_goal = {(npc, goal): offer for npc, goal, offer in snapshot["by_goal"]}
        self.last_offer = dict(snapshot["last_offer"])
        self.seen = dict.fromkeys(snapshot["seen"])
        self.counts = Counter(snapshot["counts"])
