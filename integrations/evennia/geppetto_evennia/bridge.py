"""The game's side of the contract in `game` completion mode: what players do goes out as
world events, and the intents geppetto sends come back as things NPC objects do.

A `Bridge` is owned by the game's global script (`scripts.GeppettoScript`), which makes it at
the server's start; the game's hooks and commands reach it through `scripts.running_bridge()`.
It runs in the reactor thread (every method here touches Evennia objects); its bus does the
Redis I/O, from a thread in a running server or directly in tests. Walks go one exit per step (`exit_minutes` game minutes each), actions end when their
`duration_ticks` are over; each ends with `npc_moved` / `action_completed` / `action_failed`.

Subclass `Bridge` to change what the game does with a message (`on_story_signal`,
`on_story_signal_updated`, `on_story_signal_expired` and `on_story_signal_resolved` are the
hooks a quest system overrides) and name the subclass in `GEPPETTO_BRIDGE`.

A bridge may run a quest board (`board`, a `geppetto_quests.QuestBoard` fed by the bridge,
made from GEPPETTO_QUEST_BOARD): every story message and the NPC events about goals ending
are handed to it, its
world events go out through the bus in order with the game's, the clock ticks it, and
players take its offers with `accept_quest` (the `quests` and `accept` commands).
"""
import logging
from collections import Counter, deque
from dataclasses import dataclass, field

from evennia import search_channel

from . import world
from .address import hide
from .world import NPC, PROVIDER, ROOM

log = logging.getLogger("geppetto_evennia")

#: The story stream's message types, each handed to the hook `on_<type>`.
STORY_TYPES = ("story_signal", "story_signal_updated", "story_signal_expired", "story_signal_resolved")

#: The NPC events a quest board reads (its givers' goals ending): only these are handed to it,
#: so the ids it keeps (and the script saves) are few.
BOARD_NPC_EVENTS = ("goal_completed", "goal_failed", "goal_refused")

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

    def __init__(self, bus, exit_minutes=3, staff_channel="MudInfo", seen_limit=100_000, board=None):
        self.bus, self.exit_minutes, self.staff_channel = bus, exit_minutes, staff_channel
        self.board = board             # a fed geppetto_quests.QuestBoard, or None
        self.now = 0                   # the game minute last sent as time_advanced
        self.jobs = {}                 # npc id -> the Job it is carrying out
        self.engaged = set()           # npc ids the game has taken over
        self.orders = {}               # order id -> the player (object) who gave it
        self.witnesses = {}            # social intent id -> players who saw the scene
        self.seen, self.seen_order = set(), deque()
        self.seen_limit = seen_limit
        self.figures = Counter()
        self.flusher = bus.flush       # a running server flushes from a thread instead
        self.shared = None             # whether geppetto was seen on the game's Redis (agree)

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
        if self.board is not None:
            self.tick_board(minute)
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
        """A player's line in a room (the NPC it addresses answers with a `reply` intent);
        returns the say's id, which the reply names as `in_reply_to`."""
        extra = {"addressee": addressee} if addressee else {}
        return self.send("say", speaker=speaker.key, text=text, room=room, **extra)

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

    def agree(self, probe):
        """Whether geppetto serves the zone on the game's Redis, from `bus.probe()`: said on
        the log and the staff channel when it is first known or changes. Returns it."""
        if not probe["answered"]:
            return self.shared
        shared = bool(probe["from_geppetto"] or probe["completion"])
        if shared != self.shared:
            self.shared = shared
            where = f"zone {self.bus.zone} on {hide(self.bus.url)}"
            if shared:
                log.info("geppetto: geppetto serves %s", where)
            else:
                line = (f"nothing from geppetto for {where} yet: is `geppetto serve` running on this "
                        "Redis ([bus.redis] url in its config; GEPPETTO_CONFIG reads it from there) "
                        f"with a world of zone {self.bus.zone}?")
                log.warning("geppetto: %s", line)
                self.to_staff(line)
        if probe["completion"] not in (None, "game"):
            line = (f"geppetto runs zone {self.bus.zone} in {probe['completion']} completion: it moves "
                    "the NPCs itself and does not wait for the game; serve with [integration] "
                    'completion = "game" (config/geppetto-redis.toml)')
            if self.figures["completion warnings"] == 0:
                log.warning("geppetto: %s", line)
                self.to_staff(line)
            self.figures["completion warnings"] += 1
        return self.shared

    def handle(self, batch):
        """Carries out what `bus.read` returned, each message once (by id), acknowledging
        each entry after it is handled."""
        if batch and not self.shared:
            self.shared = True         # geppetto wrote to the game's Redis: they agree
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
            self.witness(m["id"], players)
            self.figures["scenes narrated"] += 1

    def do_reply(self, npc, npc_id, m):
        """The NPC answers a player who spoke to it: a line in the room, at once; a model's
        in-character line may follow (`narrative_ready` under the reply's id) to those there."""
        show(npc, f'{npc.key} says to {m["to"]}, "{m["text"]}"')
        self.witness(m["id"], [o for o in npc.location.contents if world.is_player(o)])
        self.figures["replies shown"] += 1

    def witness(self, message_id, players):
        """Remembers who saw a scene or heard a reply, for the narration that may follow."""
        self.witnesses[message_id] = players
        while len(self.witnesses) > WITNESSED_SCENES_KEPT:
            del self.witnesses[next(iter(self.witnesses))]

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
        if self.board is not None and kind in BOARD_NPC_EVENTS:
            self.board.handle("npc_events", m)
        if kind == "deed_remembered":
            self.deed_remembered(m)
        elif kind == "npc_relocated":
            npc, room = world.tagged(NPC, m["npc"]), world.tagged(ROOM, m["to"])
            if npc and room:          # geppetto placed it there already: no npc_moved
                self.jobs.pop(m["npc"], None)
                self.relocate(npc, room, m.get("leave"), m.get("arrive"))
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
        """A story stream message: the quest board hears it first, then its hook
        (`on_story_signal`, `on_story_signal_updated`, `on_story_signal_expired`,
        `on_story_signal_resolved`)."""
        kind = m["type"]
        if kind not in STORY_TYPES:
            log.warning("geppetto: story message %s of unknown type %s", m.get("id"), kind)
            self.figures["story messages unknown"] += 1
            return
        self.figures[kind] += 1
        if self.board is not None:
            self.board.handle("story", m)
        getattr(self, f"on_{kind}")(m)

    def on_story_signal(self, m):
        """A new story signal (`schema/story.json`): override to feed a quest system of your
        own. The default posts it to the staff channel."""
        context = "; ".join(f"{k}: {v}" for k, v in sorted(m.get("context", {}).items()))
        self.to_staff(f"{m['signal_type'].replace('_', ' ')} at {m.get('location')}, "
                      f"{', '.join(m.get('npcs', []))} (importance {m.get('importance', 0):.2f})"
                      + (f": {context}" if context else "") + f" [{m['signal']}]")

    def on_story_signal_updated(self, m):
        """Later evidence merged into a live signal, or a consumer took it (`taken_by`). The
        default posts it to the staff channel."""
        taken = f", taken by {m['taken_by']}" if m.get("taken_by") else ""
        self.to_staff(f"{m['signal']} updated: {', '.join(m.get('npcs', []))} (importance "
                      f"{m.get('importance', 0):.2f}, merged {m.get('merged', 0)}){taken}")

    def on_story_signal_expired(self, m):
        """A signal left the live set unresolved (`reason` lapsed or displaced). The default
        posts it to the staff channel."""
        self.to_staff(f"{m['signal']} expired ({m.get('reason')})")

    def on_story_signal_resolved(self, m):
        """A consumer resolved a signal (`by`, `outcome`). The default posts it to the staff
        channel."""
        self.to_staff(f"{m['signal']} resolved by {m.get('by')}: {m.get('outcome')}")

    def to_staff(self, line):
        channel = search_channel(self.staff_channel)
        if channel:
            channel[0].msg(f"[geppetto] {line}")

    # --- quests -------------------------------------------------------------------------

    def tick_board(self, minute):
        """The quest board's minute: expiry and new offers; the players standing where a new
        quest is offered hear of it."""
        known = set(self.board.quests)
        self.board.tick(minute)
        for offer in self.board.offers():
            if offer.id in known:
                continue
            self.figures["quests offered"] += 1
            room = world.tagged(ROOM, offer.place)
            for player in (o for o in (room.contents if room else []) if world.is_player(o)):
                player.msg(f"A new quest is offered here: {offer.title}. (quests)")

    def quest_offers(self, room=None):
        """The open offers of the quest board (at the geppetto room `room` if given), most
        important first; [] without a board."""
        return self.board.offers(room=room) if self.board is not None else []

    def quests_of(self, player):
        """The quests `player` has taken and not finished, oldest first."""
        if self.board is None:
            return []
        return [o for o in self.board.quests.values() if o.status == "accepted" and o.player == player.key]

    def accept_quest(self, player, offer_id):
        """`player` takes an open offer: the board assigns its giver a goal, to wait at the
        provider `places` names for the quest's room, else at the first provider (by id)
        standing there. Raises ValueError with the reason when there is no board or the
        offer is not open."""
        if self.board is None:
            raise ValueError("no quest board runs in this game")
        if offer_id not in self.board.quests:
            raise ValueError(f"the quest board has no offer {offer_id}")
        place = self.board.quests[offer_id].place
        if place not in self.board.places:      # the giver waits at a provider of the place
            room = world.tagged(ROOM, place)
            here = sorted(world.gid(o, PROVIDER) for o in (room.contents if room else [])
                          if world.gid(o, PROVIDER))
            if here:
                self.board.places[place] = here[0]
        offer = self.board.accept(offer_id, player.key)
        self.flusher()
        self.figures["quests accepted"] += 1
        return offer

    def complete_quest(self, player, offer_id, outcome="helped"):
        """Ends a quest `player` took: `helped` (completed), `failed` or `harmed`. geppetto
        hears the outcome (the NPCs remember the player for it) and the signal is resolved.
        Raises ValueError with the reason when it cannot end so."""
        if self.board is None:
            raise ValueError("no quest board runs in this game")
        if offer_id not in self.board.quests:
            raise ValueError(f"the quest board has no offer {offer_id}")
        offer = self.board.complete(offer_id, player.key, outcome)
        self.flusher()
        self.figures[f"quests {offer.status}"] += 1
        return offer

    def name_of(self, word):
        """The name a player reads for a geppetto id: an NPC's or a room's (without a leading
        article, as titles put their own), else the word itself."""
        npc = world.tagged(NPC, word)
        if npc is not None:
            return npc.key
        room = world.tagged(ROOM, word)
        if room is not None:
            return world.bare_name(room.key)
        return word

    def relocate(self, npc, room, leave=None, arrive=None):
        """geppetto placed the NPC in `room` (a promotion out of Background): it leaves where
        it stands with a line and arrives with one — geppetto's `leave` and `arrive` when the
        event has them, else the bridge's own — and the move is not reported back."""
        if npc.location == room:
            return
        left = npc.location
        if left is not None:
            show(npc, leave or f"{npc.key} heads off to {room.key}.")
        npc.move_to(room, quiet=True, geppetto_report=False)
        show(npc, arrive or f"{npc.key} arrives" + (f" from {left.key}." if left is not None else "."))
        self.figures["relocations shown"] += 1

    def deed_remembered(self, m):
        """An NPC remembers what a player did for a quest: the player, if in the game, hears."""
        npc = world.tagged(NPC, m["npc"])
        for player in world.players_named(m["by"]):
            player.msg(f"{npc.key if npc else m['npc']} will remember what you did.")
            self.figures["deeds remembered"] += 1

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
