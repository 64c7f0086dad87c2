"""The bridge in a running server: a global script started with the server. Its repeat
sends the game clock (Evennia's game time, in minutes) and moves walks and actions on; a
reader loop waits on Redis in a thread (`deferToThread`) and hands what it read to the bridge
in the reactor thread, so the reactor never blocks on Redis.

The ids of the messages the bridge handled are kept in the script's attributes — the newest
GEPPETTO_SEEN_KEPT of them, saved every GEPPETTO_SEEN_SAVE_SECONDS and when the server reloads
or shuts down — and given back to the bridge when it starts again, so a reload does not carry
out an intent twice.

Settings: the table in the package's README (each optional, with its default there).
"""
import itertools

from django.conf import settings
from evennia import DefaultScript
from evennia.utils import gametime, logger
from evennia.utils.utils import class_from_module
from twisted.internet import reactor, threads

from . import bridge
from .bus import Bus

#: Which start of the script a reader loop belongs to: a reload starts a new loop, and the
#: old one stops at its next turn.
_starts = itertools.count(1)
_current_start = 0


def start_bridge():
    """Makes the bridge from the settings and makes it the running one."""
    bus = Bus(getattr(settings, "GEPPETTO_REDIS_URL", "redis://127.0.0.1:6379/0"),
              getattr(settings, "GEPPETTO_ZONE", "village"),
              group=getattr(settings, "GEPPETTO_GROUP", "evennia"),
              consumer=getattr(settings, "GEPPETTO_CONSUMER", "evennia-1"),
              read_count=getattr(settings, "GEPPETTO_READ_COUNT", 500),
              retry_seconds=getattr(settings, "GEPPETTO_RETRY_SECONDS", 1.0))
    cls = class_from_module(getattr(settings, "GEPPETTO_BRIDGE", "geppetto_evennia.bridge.Bridge"))
    bridge.current = cls(bus, exit_minutes=getattr(settings, "GEPPETTO_EXIT_MINUTES", 3),
                         staff_channel=getattr(settings, "GEPPETTO_STAFF_CHANNEL", "MudInfo"),
                         seen_limit=getattr(settings, "GEPPETTO_SEEN_LIMIT", 100_000))
    bridge.current.flusher = lambda: threads.deferToThread(bus.flush)
    bridge.current.now = game_minute()
    bridge.current.announce_positions()
    return bridge.current


class GeppettoScript(DefaultScript):
    """Add to GLOBAL_SCRIPTS: {"geppetto": {"typeclass": "geppetto_evennia.scripts.GeppettoScript",
    "persistent": True, "interval": 1}}."""

    def at_script_creation(self):
        self.key = "geppetto"
        self.desc = "living NPCs: the bridge to geppetto"
        self.persistent = True
        self.interval = 1

    def at_start(self, **kwargs):
        global _current_start
        _current_start = next(_starts)
        running = start_bridge()
        running.restore_handled(self.db.geppetto_handled or [])
        self.ndb.saved_at = 0
        read_next(running, _current_start)

    def at_stop(self, **kwargs):
        global _current_start
        self.save_handled()
        _current_start = 0
        bridge.current = None

    def at_repeat(self, **kwargs):
        if bridge.current is not None:
            bridge.current.clock(game_minute())
            every = getattr(settings, "GEPPETTO_SEEN_SAVE_SECONDS", 10)
            self.ndb.saved_at = (self.ndb.saved_at or 0) + 1
            if self.ndb.saved_at >= every:
                self.save_handled()

    def at_server_reload(self, **kwargs):
        self.save_handled()

    def at_server_shutdown(self, **kwargs):
        self.save_handled()

    def save_handled(self):
        """Keeps the newest handled ids in the script's attributes (bounded)."""
        self.ndb.saved_at = 0
        if bridge.current is not None:
            kept = getattr(settings, "GEPPETTO_SEEN_KEPT", 10_000)
            self.db.geppetto_handled = bridge.current.handled_ids(kept)


def game_minute():
    """Evennia's game time in minutes, plus GEPPETTO_CLOCK_OFFSET_MINUTES."""
    return getattr(settings, "GEPPETTO_CLOCK_OFFSET_MINUTES", 0) + int(gametime.gametime() // 60)


def read_next(running, start):
    """One read in a thread, handled in the reactor, then the next, while `start` is the
    script's current start."""
    if start != _current_start:
        return
    block = getattr(settings, "GEPPETTO_READ_BLOCK_MS", 1000)
    reading = threads.deferToThread(running.bus.read, block)
    reading.addCallback(running.handle)
    reading.addErrback(lambda failure: logger.log_err(failure.getTraceback()))
    reading.addBoth(lambda _: reactor.callLater(0, read_next, running, start))
