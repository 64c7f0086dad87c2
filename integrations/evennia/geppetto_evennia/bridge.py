"""The game's side of the contract in `game` completion mode: what players do goes out as
world events, and the intents geppetto sends come back as things NPC objects do.

A `Bridge` is owned by the game's global script (`scripts.GeppettoScript`), which makes it at
the server's start; the game's hooks and commands reach it through `scripts.running_bridge()`.
It runs in the reactor thread (every method here touches Evennia objects); its bus does the
Redis I/O, from a thread in a running server or directly in tests. Walks go one exit per step (`exit_minutes` game minutes each), actions end when their
`duration_ticks` are over; each ends with `npc_moved` / `action_completed` / `action_failed`.

Subclass `Bridge` to change what the game does with a message (`on_story_signal` is the hook a
quest system overrides) and name the subclass in `GEPPETTO_BRIDGE`.
"""
import logging
from collections import Counter, deque
from dataclasses import dataclass, field

from evennia import search_channel

from . import world
from .world import NPC, PROVIDER, ROOM

log = logging.getLogger("geppetto_evennia")

#: Scenes whose witnesses are remembered for the model's narration (the oldest is forgotten
#: first: a narration comes seconds after its scene, or not at all without a model).
WITNESSED_SCENES_KEPT = 1000

def show(npc, line):
    """Shows `line` to everyone in the NPC's room as it is: `msg_contents` would read braces
    as fields to fill and `$name(...)` as a call, and a model's or a world's line may hold
    either."""
    verbatim = line.replace("{", "{{").replace("}", "}}").replace("$", "$$")
    npc.location.msg_contents(verbatim, from_obj=npc)


@dataclass
class Job:
    """An intent an NPC carries out: a walk (its exits left) or an action (when it ends)."""
    id: str
    npc: str
    kind: str
    due: int | None = None
    exits: list = field(default_factory=list)


class Bridge:
    """Translates the game's events into world events on `bus` (`send`, `clock`,
    `player_entered` …) and carries out what `bus.read` returns (`handle`)."""

    def __init__(self, bus, exit_minutes=3, staff_channel="MudInfo", seen_limit=100_000):
        self.bus, self.exit_minutes, self.staff_channel = bus, exit_minutes, staff_channel
        self.now = 0                   # the game minute last sent as time_advanced
        self.jobs = {}                 # npc id -> the Job it is carrying out
        self.engaged = set()           # npc ids the game has taken over
        self.orders = {}               # order id -> the player (object) who gave it
        self.witnesses = {}            # social intent id -> players who saw the scene
        self.seen, self.seen_order = set(), deque()
        self.seen_limit = seen_limit
        self.figures = Counter()
        self.flusher = bus.flush       # a running server flushes from a thread instead

    # --- the game's side out ------------------------------------------------------------

    def send(self, kind, /, **payload):
        message_id = self.bus.send(kind, self.now, **payload)
        self.flusher()
        return message_id

    def clock(self, minute):
        """The game clock reached `minute`: due steps and completions, then `time_advanced`."""
        if minute <= self.now:
            return
        self.now = minute
        self.step()
        self.send("time_advanced")

    def announce_positions(self):
        """Tells geppetto where every NPC stands (the game's word), as the game starts."""
        for npc in world.search_tag(category=NPC):
            room = world.room_of(npc)
            if room is not None:
                self.npc_moved(world.gid(npc, NPC), room)

    def player_entered(self, player, room):
        self.send("player_entered", player=player.key, room=room)

    def player_left(self, player, room):
        self.send("player_left", player=player.key, room=room)

    def npc_moved(self, npc, room):
        self.send("npc_moved", npc=npc, room=room)

    def said(self, speaker, text, room, addressee=None):
        extra = {"addressee": addressee} if addressee else {}
        self.send("say", speaker=speaker.key, text=text, room=room, **extra)

    def order(self, player, npc, provider, action):
        """A player's order to an NPC; the answer comes back to the player."""
        order_id = self.send("order", npc=npc, provider=provider, action=action, by=player.key)
        self.orders[order_id] = player
        return order_id

    def engage(self, npc, reason):
        """The game takes the NPC over (a fight, a dialogue): it stops what it was doing."""
        self.engaged.add(npc)
        self.jobs.pop(npc, None)
        self.send("npc_engaged", npc=npc, reason=reason)

    def release(self, npc):
        self.engaged.discard(npc)
        self.send("npc_released", npc=npc)

    # --- the intents in -----------------------------------------------------------------

    def handle(self, batch):
        """Carries out what `bus.read` returned, each message once (by id), acknowledging
        each entry after it is handled."""
        for stream, entry_id, message in batch:
            if message.get("id") not in self.seen:
                self.remember(message.get("id"))
                try:
                    getattr(self, f"on_{stream}")(message)
                except Exception:       # one bad message must not stop the NPCs
                    log.exception("geppetto: handling %s %s", stream, message.get("id"))
                    self.figures["messages that failed"] += 1
            else:
                self.figures["duplicates dropped"] += 1
            self.bus.ack(stream, entry_id)

    def remember(self, message_id):
        self.seen.add(message_id)
        self.seen_order.append(message_id)
        if len(self.seen_order) > self.seen_limit:
            self.seen.discard(self.seen_order.popleft())

    def handled_ids(self, newest):
        """The ids of the `newest` messages handled, oldest first: what a reload keeps."""
        kept = list(self.seen_order)
        return kept[-newest:] if newest > 0 else []

    def restore_handled(self, ids):
        """Takes back the ids a previous start handled (`handled_ids`), so what Redis or
        geppetto delivers again after a reload is dropped like any duplicate."""
        for message_id in ids:
            if message_id not in self.seen:
                self.remember(message_id)

    def on_intents(self, m):
        kind, npc_id = m["type"], m["npc"]
        self.figures[f"intent {kind}"] += 1
        npc = world.tagged(NPC, npc_id)
        if npc is None or npc.location is None:
            log.warning("geppetto: %s %s for %s, who is not in the game", kind, m["id"], npc_id)
            return
        handler = getattr(self, f"do_{kind}", None)
        if handler is not None:
            handler(npc, npc_id, m)

    def do_navigate(self, npc, npc_id, m):
        exits = world.path(npc.location, m["to_room"])
        job = self.jobs[npc_id] = Job(m["id"], npc_id, "navigate")
        if exits is None:
            self.fail(job, f"no way from {npc.location.key} to {m['to_room']}")
        elif exits:
            job.exits, job.due = exits, self.now + self.exit_minutes
        else:                         # already there: geppetto sends the use next
            self.jobs.pop(npc_id)

    def do_use(self, npc, npc_id, m):
        provider = world.tagged(PROVIDER, m["provider"])
        name = provider.key if provider else m["provider"]
        action = m["action"].replace("_", " ")
        self.jobs[npc_id] = Job(m["id"], npc_id, "use", due=self.now + max(1, m["duration_ticks"]))
        show(npc, f"{npc.key} sets about: {action} ({name}).")
        self.figures["actions started"] += 1

    def do_reactive(self, npc, npc_id, m):
        self.jobs.pop(npc_id, None)
        show(npc, f"{npc.key} suddenly: {m['action'].replace('_', ' ')}!")

    def do_bark(self, npc, npc_id, m):
        show(npc, f'{npc.key} says, "{m["text"]}"')
        self.figures["barks shown"] += 1

    def do_social(self, npc, npc_id, m):
        players = [o for o in npc.location.contents if world.is_player(o)]
        if m.get("narration"):
            for player in players:
                player.msg(m["narration"])
            self.witnesses[m["id"]] = players
            while len(self.witnesses) > WITNESSED_SCENES_KEPT:
                del self.witnesses[next(iter(self.witnesses))]
            self.figures["scenes narrated"] += 1

    def do_cancel(self, npc, npc_id, m):
        job = self.jobs.get(npc_id)
        if job is not None and job.id == m["cancelled"]:
            del self.jobs[npc_id]
            self.figures[f"cancelled {m['reason']}"] += 1
            if job.kind == "use":
                show(npc, f"{npc.key} stops what they were doing.")

    def on_narrative(self, m):
        if m["type"] != "narrative_ready":
            return
        for player in self.witnesses.pop(m["interaction_id"], []):
            player.msg(m["text"])
            self.figures["narrations shown"] += 1

    def on_npc_events(self, m):
        kind = m["type"]
        if kind == "npc_relocated":
            npc, room = world.tagged(NPC, m["npc"]), world.tagged(ROOM, m["to"])
            if npc and room:          # geppetto placed it there already: no npc_moved
                self.jobs.pop(m["npc"], None)
                npc.move_to(room, quiet=True, geppetto_report=False)
        elif kind in ("order_accepted", "order_refused", "order_done") and m["order"] in self.orders:
            player, npc = self.orders[m["order"]], world.tagged(NPC, m["npc"])
            what = {"order_accepted": "will do as you asked",
                    "order_refused": f"refuses your order ({m.get('reason')})",
                    "order_done": f"is done with your order ({m.get('outcome')})"}[kind]
            player.msg(f"{npc.key if npc else m['npc']} {what}.")
            if kind != "order_accepted":
                self.orders.pop(m["order"])
            self.figures[kind] += 1

    def on_story(self, m):
        if m["type"] == "story_signal":
            self.on_story_signal(m)

    def on_story_signal(self, m):
        """A story signal (`schema/story.json`): override to feed a quest system. The default
        posts it to the staff channel."""
        channel = search_channel(self.staff_channel)
        if channel:
            context = "; ".join(f"{k}: {v}" for k, v in sorted(m.get("context", {}).items()))
            channel[0].msg(f"[geppetto] {m['signal_type'].replace('_', ' ')} at {m.get('location')}, "
                           f"{', '.join(m.get('npcs', []))} (importance {m.get('importance', 0):.2f})"
                           + (f": {context}" if context else ""))

    # --- carrying out -------------------------------------------------------------------

    def step(self):
        """Every walk and action due at the current minute moves on one step."""
        for npc_id, job in sorted(self.jobs.items()):
            if job.due is None or job.due > self.now or npc_id in self.engaged:
                continue
            npc = world.tagged(NPC, npc_id)
            if npc is None or npc.location is None:     # deleted or stored away meanwhile
                self.fail(job, "the NPC is no longer in the world")
                continue
            if job.kind == "use":
                del self.jobs[npc_id]
                self.send("action_completed", npc=npc_id, intent=job.id, outcome="done")
                self.figures["actions completed"] += 1
                continue
            exit_obj = job.exits.pop(0)
            if npc.location != exit_obj.location or not exit_obj.access(npc, "traverse"):
                show(npc, f"{npc.key} finds the way to {exit_obj.key} barred.")
                self.fail(job, f"the way to {exit_obj.key} is barred")
                continue
            npc.move_to(exit_obj.destination, move_type="traverse")   # the room reports it
            self.figures["npc moves"] += 1
            if job.exits:
                job.due = self.now + self.exit_minutes
            else:
                del self.jobs[npc_id]
                self.figures["walks arrived"] += 1

    def fail(self, job, reason):
        self.jobs.pop(job.npc, None)
        self.send("action_failed", npc=job.npc, intent=job.id, reason=reason)
        self.figures[f"{job.kind}s failed"] += 1
