"""What the unit tests share: `MemoryBus` (the bus seam without Redis), `RedisServer` (a
private redis-server on a free loopback port), `Heard` (what a character was shown) and
`GeppettoTest`, Evennia's `BaseEvenniaTest` with geppetto rooms, NPCs and a game script that
owns a bridge over a `MemoryBus`.
"""
import shutil
import socket
import subprocess
import tempfile
import time

import redis
from evennia import create_object, create_script
from evennia.utils.test_resources import BaseEvenniaCommandTest

from geppetto_evennia import (NPC, ROOM, SCRIPT_KEY, Bridge, Bus, GeppettoNPC, GeppettoRoom,
                              GeppettoScript)

ZONE = "village"


class MemoryBus(Bus):
    """The package's `Bus` with Redis replaced by lists: `send` and `ack` are the real ones
    (the envelope geppetto receives); `flush` moves the outbox to `world` and the acks to
    `acked`; `read` hands out what a test `deliver`ed. Any use of Redis fails the test."""

    def __init__(self, zone=ZONE):
        super().__init__("redis://127.0.0.1:1/0", zone)
        self.redis = None             # no client: a call to Redis raises AttributeError
        self.world, self.acked, self.inbox = [], [], []
        self.flushes, self.entries = 0, 0

    def flush(self):
        self.flushes += 1
        while self.outbox:
            self.world.append(self.outbox.popleft())
        while self.acks:
            self.acked.append(self.acks.popleft())
        return True

    def read(self, block_ms=0):
        self.flush()
        got, self.inbox = self.inbox, []
        return got

    def probe(self, scan=2000):
        """geppetto is taken to serve the zone here (AgreementTest sets its own answers)."""
        return {"answered": True, "from_geppetto": 1, "completion": "game"}

    def deliver(self, stream, message):
        """Queues one entry of a read stream; returns its entry id."""
        self.entries += 1
        entry_id = f"{self.entries}-0"
        self.inbox.append((stream, entry_id, message))
        return entry_id

    def take(self, kind=None):
        """The world events sent since the last take (of type `kind`, if given)."""
        self.flush()
        sent, self.world = self.world, []
        return [m for m in sent if kind is None or m["type"] == kind]


class RedisServer:
    """A private redis-server on a free loopback port, without persistence."""

    def __init__(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.dir = tempfile.mkdtemp(prefix="geppetto-evennia-")
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
                    self.stop()
                    raise
                time.sleep(0.02)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


class Heard:
    """Replaces a character's `msg`: the texts it was shown, in order."""

    def __init__(self, obj):
        self.texts = []
        obj.msg = self.hear

    def hear(self, text=None, **kwargs):
        if isinstance(text, tuple):
            text = text[0]
        if text is not None:
            self.texts.append(str(text))

    def __contains__(self, text):
        return any(text in t for t in self.texts)


class GeppettoTest(BaseEvenniaCommandTest):
    """Three tagged rooms in a line — square (room1) ⇄ market (room2) ⇄ bakery (room3) —
    with the exits named by the room they lead to, players char1 (a Developer) and char2 in
    the square, and the game's geppetto script owning a bridge over a `MemoryBus` at game
    minute 420."""

    room_typeclass = GeppettoRoom

    def setUp(self):
        super().setUp()
        self.room1.tags.add("square", category=ROOM)
        self.room2.tags.add("market", category=ROOM)
        self.exit.key = "market"
        self.room3 = create_object(GeppettoRoom, key="Room3")
        self.room3.tags.add("bakery", category=ROOM)
        self.link(self.room2, self.room1)
        self.link(self.room2, self.room3)
        self.link(self.room3, self.room2)
        self.bus = MemoryBus()
        self.game_script = create_script(GeppettoScript, key=SCRIPT_KEY, autostart=False)
        self.bridge = self.game_script.own(Bridge(self.bus))
        self.bridge.now = 420

    def tearDown(self):
        if self.game_script.pk:
            self.game_script.delete()
        super().tearDown()

    def link(self, here, there):
        """An exit from `here` to `there`, named by the geppetto id of `there`."""
        return create_object("evennia.objects.objects.DefaultExit",
                             key=there.tags.get(category=ROOM), location=here, destination=there)

    def npc(self, gid, key, room, archetype="villager"):
        """A geppetto NPC standing in `room`; what its creation reported is dropped."""
        self.bus.flush()
        before = len(self.bus.world)
        npc = create_object(GeppettoNPC, key=key, location=room, home=room)
        npc.geppetto_id = gid
        npc.geppetto_archetype = archetype
        self.bus.flush()
        del self.bus.world[before:]
        return npc

    def provider(self, gid, key, room, actions):
        obj = create_object("evennia.objects.objects.DefaultObject", key=key, location=room)
        obj.tags.add(gid, category="geppetto_provider")
        obj.db.geppetto_spec = {"id": gid, "name": key, "room": room.tags.get(category=ROOM),
                                "actions": [{"id": a} for a in actions]}
        return obj

    def intent(self, kind, npc, message_id, **fields):
        """Delivers one intent and has the bridge handle what the bus reads."""
        return self.handle("intents", {"v": 1, "type": kind, "id": message_id, "npc": npc,
                                       "zone": ZONE, "game_time": self.bridge.now, **fields})

    def handle(self, stream, message):
        entry = self.bus.deliver(stream, message)
        self.bridge.handle(self.bus.read())
        return entry

    def assertSent(self, kind, **fields):
        """Exactly one world event was sent since the last take, of type `kind`, carrying
        `fields`; returns it."""
        sent = self.bus.take()
        self.assertEqual([m["type"] for m in sent], [kind], sent)
        for name, value in fields.items():
            self.assertEqual(sent[0].get(name), value, f"{kind}.{name} in {sent[0]}")
        return sent[0]
