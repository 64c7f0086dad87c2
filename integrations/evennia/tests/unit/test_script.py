"""The game owns its bridge: the global script `GeppettoScript` makes it from the settings
when it starts, `running_bridge()` reaches it while the script runs and not after, its clock
and reader loop drive it, and the ids it handled outlive it in the script's attributes."""
import logging
from unittest.mock import Mock, patch

from django.test import override_settings
from evennia import create_object, create_script
from evennia.utils.test_resources import BaseEvenniaTest
from twisted.internet import defer

from geppetto_evennia import SCRIPT_KEY, Bridge, Bus, GeppettoScript, running_bridge
from geppetto_evennia import scripts

from .support import GeppettoTest, MemoryBus


class GameBridge(Bridge):
    """A game's own bridge class, named in GEPPETTO_BRIDGE."""


SETTINGS = {"GEPPETTO_REDIS_URL": "redis://127.0.0.1:1/0", "GEPPETTO_ZONE": "hamlet",
            "GEPPETTO_GROUP": "game", "GEPPETTO_CONSUMER": "game-2",
            "GEPPETTO_EXIT_MINUTES": 5, "GEPPETTO_SEEN_LIMIT": 50,
            "GEPPETTO_STAFF_CHANNEL": "Staff", "GEPPETTO_CLOCK_OFFSET_MINUTES": 420,
            "GEPPETTO_BRIDGE": f"{__name__}.GameBridge"}


@override_settings(**SETTINGS)
class ScriptStartTest(BaseEvenniaTest):
    """The script started as the server starts it: no thread runs (the reader loop and the
    threaded flush are recorded instead) and Redis is never reached."""

    def setUp(self):
        super().setUp()
        self.threaded = Mock(name="deferToThread")
        self.reading = Mock(name="read_next")
        for target, mock in (("geppetto_evennia.scripts.threads.deferToThread", self.threaded),
                             ("geppetto_evennia.scripts.read_next", self.reading),
                             ("geppetto_evennia.scripts.gametime.gametime", Mock(return_value=600.0))):
            patcher = patch(target, mock)
            patcher.start()
            self.addCleanup(patcher.stop)

    def test_no_script_no_bridge(self):
        self.assertIsNone(running_bridge())

    def test_starting_makes_the_bridge_from_the_settings_and_the_game_reaches_it(self):
        script = create_script(GeppettoScript, key=SCRIPT_KEY)
        running = running_bridge()
        self.assertIs(running, script.bridge)
        self.assertIsInstance(running, GameBridge)
        self.assertEqual((running.exit_minutes, running.staff_channel, running.seen_limit),
                         (5, "Staff", 50))
        bus = running.bus
        self.assertIsInstance(bus, Bus)
        self.assertEqual((bus.url, bus.zone, bus.group, bus.consumer),
                         ("redis://127.0.0.1:1/0", "hamlet", "game", "game-2"))
        self.assertEqual(running.now, 430)                  # 600 s of game time, plus 420
        self.reading.assert_called_once_with(script, script.ndb.reader)
        script.delete()

    def test_starting_announces_where_the_npcs_stand_and_flushes_from_a_thread(self):
        self.room1.tags.add("square", category="geppetto_room")
        bram = create_object("geppetto_evennia.typeclasses.GeppettoNPC", key="Bram", location=self.room1)
        bram.geppetto_id = "bram"
        script = create_script(GeppettoScript, key=SCRIPT_KEY)
        outbox = list(script.bridge.bus.outbox)
        self.assertEqual([(m["type"], m["npc"], m["room"], m["game_time"]) for m in outbox],
                         [("npc_moved", "bram", "square", 430)])
        self.threaded.assert_any_call(script.bridge.bus.flush)
        self.threaded.assert_called_with(script.bridge.bus.probe)     # do both sides share Redis?
        script.delete()

    def test_the_packages_log_reaches_the_server_log(self):
        create_script(GeppettoScript, key=SCRIPT_KEY).delete()
        create_script(GeppettoScript, key=SCRIPT_KEY).delete()         # started twice: one handler
        package_log = logging.getLogger("geppetto_evennia")
        self.assertEqual(sum(isinstance(h, scripts.ServerLogHandler) for h in package_log.handlers), 1)
        with patch("geppetto_evennia.scripts.logger.log_warn") as warned, \
                patch("geppetto_evennia.scripts.logger.log_err") as failed:
            package_log.warning("geppetto: nothing from geppetto yet")
            package_log.error("geppetto: handling failed")
        warned.assert_called_once_with("geppetto: nothing from geppetto yet")
        failed.assert_called_once_with("geppetto: handling failed")

    def test_a_stopped_script_runs_no_bridge_and_keeps_the_ids_it_handled(self):
        script = create_script(GeppettoScript, key=SCRIPT_KEY)
        for n in range(3):
            script.bridge.remember(f"i-{n}")
        with override_settings(GEPPETTO_SEEN_KEPT=2):
            script.stop()
        self.assertIsNone(running_bridge())
        self.assertIsNone(script.bridge)
        self.assertIsNone(script.ndb.reader)
        self.assertEqual(script.db.geppetto_handled, ["i-1", "i-2"])
        script.start()
        self.assertEqual(running_bridge().seen, {"i-1", "i-2"})
        self.assertIsInstance(running_bridge(), GameBridge)
        script.delete()

    def test_only_the_script_under_the_games_key_is_the_games(self):
        other = create_script(GeppettoScript, key="geppetto-elsewhere")
        self.assertIsNotNone(other.bridge)
        self.assertIsNone(running_bridge())
        plain = create_script("evennia.scripts.scripts.DefaultScript", key=SCRIPT_KEY)
        self.assertIsNone(running_bridge())
        other.delete()
        plain.delete()


class ScriptRunTest(GeppettoTest):
    """The script's repeat and its reader loop, over the test's `MemoryBus`."""

    def test_each_repeat_sends_the_game_clock(self):
        with override_settings(GEPPETTO_CLOCK_OFFSET_MINUTES=420), \
                patch("geppetto_evennia.scripts.gametime.gametime", return_value=125.0):
            self.game_script.at_repeat()
        self.assertSent("time_advanced", game_time=422)

    def test_the_handled_ids_are_saved_every_so_many_repeats_and_on_reload(self):
        self.bridge.remember("i-1")
        with override_settings(GEPPETTO_SEEN_SAVE_SECONDS=3), \
                patch("geppetto_evennia.scripts.gametime.gametime", return_value=0.0):
            self.game_script.at_repeat()
            self.game_script.at_repeat()
            self.assertIsNone(self.game_script.db.geppetto_handled)
            self.game_script.at_repeat()
            self.assertEqual(self.game_script.db.geppetto_handled, ["i-1"])
        self.bridge.remember("i-2")
        self.game_script.at_server_reload()
        self.assertEqual(self.game_script.db.geppetto_handled, ["i-1", "i-2"])
        self.bridge.remember("i-3")
        self.game_script.at_server_shutdown()
        self.assertEqual(self.game_script.db.geppetto_handled, ["i-1", "i-2", "i-3"])

    def test_a_bridge_owned_next_drops_what_the_one_before_handled(self):
        self.bridge.remember("b-1")
        self.game_script.save_handled()
        after = self.game_script.own(Bridge(MemoryBus()))
        self.assertIs(running_bridge(), after)
        self.npc("nell", "Nell", self.room1)
        after.handle([("intents", "7-0", {"type": "bark", "id": "b-1", "npc": "nell", "text": "Hi"})])
        self.assertEqual(after.figures["duplicates dropped"], 1)

    def test_the_reader_loop_hands_each_read_to_the_bridge_and_goes_on_while_it_is_the_scripts(self):
        self.npc("nell", "Nell", self.room1)
        entry = self.bus.deliver("intents", {"type": "bark", "id": "b-1", "npc": "nell", "text": "Hi"})
        reader = self.game_script.ndb.reader = object()
        later = Mock(name="callLater")
        with override_settings(GEPPETTO_READ_BLOCK_MS=250), \
                patch("geppetto_evennia.scripts.threads.deferToThread",
                      side_effect=lambda read, block: defer.succeed(read(block))) as threaded, \
                patch("geppetto_evennia.scripts.reactor.callLater", later):
            scripts.read_next(self.game_script, reader)
            threaded.assert_called_once_with(self.bus.read, 250)
            self.assertEqual(self.bridge.figures["barks shown"], 1)
            later.assert_called_once_with(0, scripts.read_next, self.game_script, reader)
            self.bus.flush()
            self.assertEqual(self.bus.acked, [("intents", entry)])
            self.game_script.ndb.reader = object()          # the script started another loop
            scripts.read_next(self.game_script, reader)
            self.assertEqual(threaded.call_count, 1)

    def test_a_failed_read_is_logged_and_the_loop_goes_on(self):
        reader = self.game_script.ndb.reader = object()
        later = Mock(name="callLater")
        with patch("geppetto_evennia.scripts.threads.deferToThread",
                   return_value=defer.fail(RuntimeError("read failed"))), \
                patch("geppetto_evennia.scripts.reactor.callLater", later), \
                patch("geppetto_evennia.scripts.logger.log_err") as logged:
            scripts.read_next(self.game_script, reader)
        self.assertIn("read failed", logged.call_args[0][0])
        later.assert_called_once_with(0, scripts.read_next, self.game_script, reader)
