"""The zone's streams on Redis: world events out, intents, NPC events, story signals and
narration in (one consumer group, acknowledged once handled).

Nothing here touches Evennia or the reactor: every method does blocking Redis I/O and is
called from a thread (`deferToThread`) in a running server, directly in tests. Redis going
away is not an error the game sees: events the game sends wait in an outbox, in order, until
Redis answers again; entries read but not yet acknowledged are read again after a reconnect
(the consumer group's pending list), and the bridge drops what it already handled by id.
"""
import json
import logging
import threading
import time
import uuid
from collections import deque

import redis

log = logging.getLogger("geppetto_evennia")

#: The streams the game reads, short names (the key is `geppetto:{zone}:<name>`).
READ_STREAMS = ("npc_events", "intents", "narrative", "story")


class Bus:
    """One zone's streams. `send` never blocks on Redis; `flush` and `read` do."""

    def __init__(self, url, zone, group="evennia", consumer="evennia-1", read_count=500,
                 retry_seconds=1.0):
        self.url, self.zone, self.group, self.consumer = url, zone, group, consumer
        self.read_count, self.retry_seconds = read_count, retry_seconds
        # Unique over restarts of the game: the run's mark and a sequence number.
        self.run, self.seq = uuid.uuid4().hex[:10], 0
        self.outbox = deque()
        self.acks = deque()           # (stream, entry id) handled, to acknowledge
        self.write_lock = threading.Lock()  # sends in order, from whichever thread flushes
        self.read_lock = threading.Lock()   # one reader; a blocking read never holds up sends
        self.redis = redis.Redis.from_url(url, decode_responses=True, socket_connect_timeout=2,
                                          health_check_interval=10)
        self.pending_first = True     # after a (re)connect, read our pending entries again
        self.groups_made = False
        self.reconnects = 0

    def key(self, stream):
        return f"geppetto:{{{self.zone}}}:{stream}"

    def send(self, kind, game_time, /, **payload):
        """Queues one world event (`/`: a payload may have a `kind`) and returns its id."""
        self.seq += 1
        message = {"v": 1, "type": kind, "id": f"evennia-{self.run}-{self.seq}",
                   "zone": self.zone, "game_time": int(game_time), **payload}
        return self.post(message)

    def post(self, message):
        """Queues one world event already in geppetto's envelope (a quest board's, under its
        own id) behind what was sent before; returns its id."""
        if message.get("zone") != self.zone or "id" not in message or "type" not in message:
            raise ValueError(f"not a world event of zone {self.zone}: {message!r}")
        self.outbox.append(message)
        return message["id"]

    def ack(self, stream, entry_id):
        """Marks an entry handled; acknowledged with the next `flush` or `read`."""
        self.acks.append((stream, entry_id))

    def flush(self):
        """Writes queued world events in order and acknowledges handled entries. Returns
        False when Redis did not answer (everything stays queued for the next call)."""
        with self.write_lock:
            return self._guard(self._flush, False)

    def read(self, block_ms=0):
        """New entries of the read streams as (stream short name, entry id, message), NPC
        events first within a game minute (a relocation precedes the NPC's decision); [] when
        Redis did not answer. Flushes first, so a reply follows what it answers."""
        if not self.flush():
            return []
        with self.read_lock:
            return self._guard(lambda: self._read(block_ms), [])

    def probe(self, scan=2000):
        """What this Redis shows of geppetto for the zone, for telling whether the game and
        geppetto share it: {"answered": Redis answered, "from_geppetto": entries geppetto wrote
        on the zone's intents, npc_events and story streams, "completion": the mode of the
        newest `zone_settings` among the last `scan` world events (None if none)}."""
        def look():
            written = sum(self.redis.xlen(self.key(s)) for s in ("intents", "npc_events", "story"))
            completion = None
            for _, fields in self.redis.xrevrange(self.key("world"), count=scan):
                try:
                    message = json.loads(fields["m"])
                except (KeyError, TypeError, ValueError):
                    continue
                if message.get("type") == "zone_settings" and message.get("origin") == "geppetto":
                    completion = message.get("completion")
                    break
            return {"answered": True, "from_geppetto": written, "completion": completion}
        return self._guard(look, {"answered": False, "from_geppetto": 0, "completion": None})

    def _guard(self, work, failed):
        try:
            return work()
        except (redis.ConnectionError, redis.TimeoutError) as error:
            self.reconnects += 1
            self.pending_first = True
            log.warning("geppetto: Redis at %s did not answer (%s); retrying in %.1f s",
                        self.url, error, self.retry_seconds)
            time.sleep(self.retry_seconds)
            return failed

    def _flush(self):
        while self.outbox:
            message = self.outbox[0]
            self.redis.xadd(self.key("world"), {"m": json.dumps(message)})
            self.outbox.popleft()
        while self.acks:
            stream, entry_id = self.acks[0]
            self.redis.xack(self.key(stream), self.group, entry_id)
            self.acks.popleft()
        return True

    def _groups(self, start):
        for stream in READ_STREAMS:
            try:
                self.redis.xgroup_create(self.key(stream), self.group, id=start, mkstream=True)
            except redis.ResponseError as error:
                if "BUSYGROUP" not in str(error):
                    raise
        self.groups_made = True

    def _read(self, block_ms):
        if not self.groups_made:
            # From now on: what the zone sent before the game came is not this game's.
            self._groups("$")
        cursor = "0" if self.pending_first else ">"
        try:
            reply = self.redis.xreadgroup(self.group, self.consumer,
                                          {self.key(s): cursor for s in READ_STREAMS},
                                          count=self.read_count,
                                          block=None if cursor == "0" or not block_ms else block_ms)
        except redis.ResponseError as error:
            if "NOGROUP" not in str(error):
                raise
            # Redis came back without our groups (restarted without persistence): read the
            # streams from their start; what was handled before is dropped by id.
            self._groups("0")
            return []
        got = []
        for key, entries in reply or []:
            stream = key.rsplit(":", 1)[1]
            for entry_id, fields in entries:
                try:
                    got.append((stream, entry_id, json.loads(fields["m"])))
                except (KeyError, TypeError, ValueError) as error:
                    log.error("geppetto: %s entry %s is not a message (%s); acknowledged unread",
                              key, entry_id, error)
                    self.acks.append((stream, entry_id))
        if cursor == "0" and not got:
            self.pending_first = False
        return sorted(got, key=lambda g: (g[2].get("game_time", 0), g[0] != "npc_events"))
