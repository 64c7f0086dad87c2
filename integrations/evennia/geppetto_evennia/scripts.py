"""The game's bridge, owned by a global script: `GeppettoScript` (key `geppetto`, started with
the server from GLOBAL_SCRIPTS) makes the bridge when it starts, holds it while it runs and
drops it when it stops. `running_bridge()` is how the rest of the game reaches it — the
room and NPC hooks and the commands report through it, and do nothing while no bridge runs.

While it runs, the script's repeat sends the game clock (Evennia's game time, in minutes) and
moves walks and actions on; a reader loop waits on Redis in a thread (`deferToThread`) and
hands what it read to the bridge in the reactor thread, so the reactor never blocks on Redis.

The ids of the messages the bridge handled are kept in the script's attributes — the newest
GEPPETTO_SEEN_KEPT of them, saved every GEPPETTO_SEEN_SAVE_SECONDS and when the server reloads
or shuts down — and given back to the bridge the script owns next, so a reload does not carry
out an intent twice. The quest board's state (GEPPETTO_QUEST_BOARD) is kept the same way, so
the quests offered and taken outlive a reload.

Settings: the table in the package's README (each optional, with its default there).
"""
import logging

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from evennia import DefaultScript
from evennia.scripts.models import ScriptDB
from evennia.utils import gametime, logger
from evennia.utils.dbserialize import deserialize
from evennia.utils.utils import class_from_module
from twisted.internet import reactor, threads

from .address import AddressError, redis_url
from .bus import Bus

#: The key of the game's geppetto script: the name of its GLOBAL_SCRIPTS entry.
SCRIPT_KEY = "geppetto"


class ServerLogHandler(logging.Handler):
    """Writes the package's log records (logger `geppetto_evennia`) to Evennia's server log,
    which does not take Python's logging by itself."""

    def emit(self, record):
        text = self.format(record)
        if record.levelno >= logging.ERROR:
            logger.log_err(text)
        elif record.levelno >= logging.WARNING:
            logger.log_warn(text)
        else:
            logger.log_info(text)


def log_to_server():
    """Sends the package's log to the server log (once, however often the script starts)."""
    package_log = logging.getLogger("geppetto_evennia")
    if not any(isinstance(h, ServerLogHandler) for h in package_log.handlers):
        package_log.addHandler(ServerLogHandler())
        package_log.setLevel(logging.INFO)


def running_bridge():
    """The bridge the game's geppetto script runs, or None while none runs (no script, or a
    stopped one)."""
    script = ScriptDB.objects.filter(db_key=SCRIPT_KEY, db_obj__isnull=True,
                                     db_account__isnull=True).first()
    return script.bridge if isinstance(script, GeppettoScript) else None


#: What a GEPPETTO_QUEST_BOARD may set: the arguments of geppetto_quests.QuestBoard that are
#: the game's to choose (the bridge supplies the rest).
QUEST_BOARD_OPTIONS = ("name", "seed", "max_open", "cooldown_ticks", "min_importance",
                       "goal_deadline_hours", "places")


def make_board(bus, options, names=None):
    """The quest board GEPPETTO_QUEST_BOARD describes (`options`, a dict of
    QUEST_BOARD_OPTIONS), fed by the bridge and writing through `bus`; None when `options` is
    None. A bad setting raises ImproperlyConfigured with the reason."""
    if options is None:
        return None
    if not isinstance(options, dict):
        raise ImproperlyConfigured(f"GEPPETTO_QUEST_BOARD is a dict of QuestBoard options, not "
                                   f"{type(options).__name__}")
    unknown = sorted(set(options) - set(QUEST_BOARD_OPTIONS))
    if unknown:
        raise ImproperlyConfigured(f"GEPPETTO_QUEST_BOARD: unknown option(s) {', '.join(unknown)} "
                                   f"(known: {', '.join(QUEST_BOARD_OPTIONS)})")
    try:
        from geppetto_quests import QuestBoard
    except ImportError as error:
        raise ImproperlyConfigured("GEPPETTO_QUEST_BOARD is set but geppetto_quests is not installed "
                                   "(pip install integrations/quests)") from error
    return QuestBoard(None, bus.zone, post=bus.post, names=names, **options)


def make_bridge():
    """A bridge from the settings: GEPPETTO_BRIDGE's class over a bus on GEPPETTO_REDIS_URL,
    running the quest board GEPPETTO_QUEST_BOARD describes (if set)."""
    try:
        url = redis_url(settings)
    except AddressError as error:
        raise ImproperlyConfigured(str(error)) from error
    bus = Bus(url,
              getattr(settings, "GEPPETTO_ZONE", "village"),
              group=getattr(settings, "GEPPETTO_GROUP", "evennia"),
              consumer=getattr(settings, "GEPPETTO_CONSUMER", "evennia-1"),
              read_count=getattr(settings, "GEPPETTO_READ_COUNT", 500),
              retry_seconds=getattr(settings, "GEPPETTO_RETRY_SECONDS", 1.0))
    cls = class_from_module(getattr(settings, "GEPPETTO_BRIDGE", "geppetto_evennia.bridge.Bridge"))
    running = cls(bus, exit_minutes=getattr(settings, "GEPPETTO_EXIT_MINUTES", 3),
                  staff_channel=getattr(settings, "GEPPETTO_STAFF_CHANNEL", "MudInfo"),
                  seen_limit=getattr(settings, "GEPPETTO_SEEN_LIMIT", 100_000))
    running.board = make_board(bus, getattr(settings, "GEPPETTO_QUEST_BOARD", None), running.name_of)
    return running


class GeppettoScript(DefaultScript):
    """The owner of the game's bridge. Add to GLOBAL_SCRIPTS:
    {"geppetto": {"typeclass": "geppetto_evennia.scripts.GeppettoScript",
    "persistent": True, "interval": 1}}."""

    def at_script_creation(self):
        self.key = SCRIPT_KEY
        self.desc = "living NPCs: the bridge to geppetto"
        self.persistent = True
        self.interval = 1

    @property
    def bridge(self):
        """The bridge this script runs, None while it is stopped."""
        return self.ndb.bridge

    def own(self, bridge):
        """Makes `bridge` this script's (what `running_bridge()` returns, if this is the game's
        script) and gives it back the handled ids the script kept. `at_start` owns the bridge
        the settings describe; a game or a test may hand it one of its own instead."""
        bridge.restore_handled(self.db.geppetto_handled or [])
        saved = self.db.geppetto_board
        if bridge.board is not None and saved:
            try:
                bridge.board.restore(deserialize(saved))
            except (ValueError, KeyError, TypeError) as error:
                logger.log_warn(f"geppetto: the saved quest board is not this one ({error}); "
                                "it starts empty")
        self.ndb.bridge = bridge
        self.ndb.saved_at = 0
        return bridge

    def at_start(self, **kwargs):
        log_to_server()
        running = self.own(make_bridge())
        running.flusher = lambda: threads.deferToThread(running.bus.flush)
        running.now = game_minute()
        running.announce_positions()
        self.ndb.reader = reader = object()      # a loop runs while it is the script's reader
        self.ndb.probe_in = 0
        read_next(self, reader)
        self.check_agreement()

    def at_stop(self, **kwargs):
        self.save_handled()
        self.ndb.reader = None
        self.ndb.bridge = None

    def check_agreement(self):
        """Looks (from a thread) whether geppetto serves the zone on the game's Redis, until it
        is seen to: at the start, then every GEPPETTO_AGREE_SECONDS."""
        running = self.bridge
        if running is None or running.shared:
            return
        self.ndb.probe_in = getattr(settings, "GEPPETTO_AGREE_SECONDS", 60)
        looking = threads.deferToThread(running.bus.probe)
        looking.addCallback(running.agree)
        looking.addErrback(lambda failure: logger.log_err(failure.getTraceback()))

    def at_repeat(self, **kwargs):
        if self.bridge is not None:
            self.ndb.probe_in = (self.ndb.probe_in or 0) - 1
            if self.ndb.probe_in <= 0:
                self.check_agreement()
            self.bridge.clock(game_minute())
            every = getattr(settings, "GEPPETTO_SEEN_SAVE_SECONDS", 10)
            self.ndb.saved_at = (self.ndb.saved_at or 0) + 1
            if self.ndb.saved_at >= every:
                self.save_handled()

    def at_server_reload(self, **kwargs):
        self.save_handled()

    def at_server_shutdown(self, **kwargs):
        self.save_handled()

    def save_handled(self):
        """Keeps the newest handled ids in the script's attributes (bounded), and the quest
        board's state when the bridge runs one."""
        self.ndb.saved_at = 0
        if self.bridge is not None:
            kept = getattr(settings, "GEPPETTO_SEEN_KEPT", 10_000)
            self.db.geppetto_handled = self.bridge.handled_ids(kept)
            if self.bridge.board is not None:
                self.db.geppetto_board = self.bridge.board.snapshot()


def game_minute():
    """Evennia's game time in minutes, plus GEPPETTO_CLOCK_OFFSET_MINUTES."""
    return getattr(settings, "GEPPETTO_CLOCK_OFFSET_MINUTES", 0) + int(gametime.gametime() // 60)


def read_next(script, reader):
    """One read in a thread, handled in the reactor by the script's bridge, then the next,
    while `reader` is the script's reader (a restart of the script starts a new loop, and the
    old one stops at its next turn)."""
    running = script.bridge
    if script.ndb.reader is not reader or running is None:
        return
    block = getattr(settings, "GEPPETTO_READ_BLOCK_MS", 1000)
    reading = threads.deferToThread(running.bus.read, block)
    reading.addCallback(running.handle)
    reading.addErrback(lambda failure: logger.log_err(failure.getTraceback()))
    reading.addBoth(lambda _: reactor.callLater(0, read_next, script, reader))
