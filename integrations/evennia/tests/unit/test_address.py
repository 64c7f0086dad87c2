"""One Redis for both sides: the game's bus reads geppetto's own config (GEPPETTO_CONFIG) for
its address, refuses a GEPPETTO_REDIS_URL that names another Redis, and the bridge says on
the log and the staff channel whether geppetto is seen serving the zone there."""
import json
import tempfile
from pathlib import Path
from types import SimpleNamespace
from unittest.mock import Mock, patch

from django.core.exceptions import ImproperlyConfigured
from django.test import SimpleTestCase, override_settings
from twisted.internet import defer

from geppetto_evennia import Bus, scripts
from geppetto_evennia.address import AddressError, redis_url

from .support import ZONE, GeppettoTest, RedisServer


class AddressTest(SimpleTestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)

    def config(self, text, name="geppetto.toml"):
        (self.dir / name).write_text(text)
        return str(self.dir / name)

    def url(self, **settings):
        return redis_url(SimpleNamespace(GAME_DIR=str(self.dir), **settings))

    def test_without_geppettos_config_the_games_url_or_the_default(self):
        self.assertEqual(self.url(), "redis://127.0.0.1:6379/")
        self.assertEqual(self.url(GEPPETTO_REDIS_URL="redis://10.0.0.5:6380/1"), "redis://10.0.0.5:6380/1")

    def test_geppettos_config_gives_the_address(self):
        path = self.config('[bus]\nkind = "redis"\n[bus.redis]\nurl = "redis://127.0.0.1:6390/"\n')
        with patch.dict("os.environ", {}, clear=True):
            self.assertEqual(self.url(GEPPETTO_CONFIG=path), "redis://127.0.0.1:6390/")
            self.assertEqual(self.url(GEPPETTO_CONFIG="geppetto.toml"), "redis://127.0.0.1:6390/")
            # The same Redis written another way agrees.
            self.assertEqual(self.url(GEPPETTO_CONFIG=path, GEPPETTO_REDIS_URL="redis://127.0.0.1:6390/0"),
                             "redis://127.0.0.1:6390/")
            path = self.config('[bus]\nkind = "redis"\n', "defaults.toml")
            self.assertEqual(self.url(GEPPETTO_CONFIG=path), "redis://127.0.0.1:6379/")

    def test_a_url_naming_another_redis_is_refused(self):
        path = self.config('[bus]\nkind = "redis"\n[bus.redis]\nurl = "redis://127.0.0.1:6390/"\n')
        for other in ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6390/2", "redis://10.0.0.1:6390/"):
            with self.assertRaisesRegex(AddressError, r"is not the Redis geppetto uses \(redis://127.0.0.1:6390/"):
                self.url(GEPPETTO_CONFIG=path, GEPPETTO_REDIS_URL=other)

    def test_the_password_comes_as_geppetto_takes_it(self):
        (self.dir / "redis.password").write_text("s3cret\n")
        path = self.config('[bus]\nkind = "redis"\n[bus.redis]\nurl = "redis://127.0.0.1:6390/"\n'
                           'password_file = "redis.password"\n')
        self.assertEqual(self.url(GEPPETTO_CONFIG=path), "redis://:s3cret@127.0.0.1:6390/")
        path = self.config('[bus]\nkind = "redis"\n[bus.redis]\nurl = "redis://127.0.0.1:6390/"\n', "env.toml")
        with patch.dict("os.environ", {"GEPPETTO_REDIS_PASSWORD": "fromenv"}):
            self.assertEqual(self.url(GEPPETTO_CONFIG=path), "redis://:fromenv@127.0.0.1:6390/")
            with self.assertRaisesRegex(AddressError, r"\(redis://:\*\*\*@127.0.0.1:6390/, "):
                self.url(GEPPETTO_CONFIG=path, GEPPETTO_REDIS_URL="redis://127.0.0.1:1/")

    def test_configs_no_game_can_use_say_why(self):
        cases = [("[bus]\nkind = \"memory\"\n", "runs the in-process bus"),
                 ("workers = 2\n", "runs the in-process bus"),
                 ('[bus]\nkind = "redis"\n[bus.redis]\ncluster_nodes = ["redis://a:1"]\n', "Redis Cluster"),
                 ("[bus\n", "is not TOML"),
                 ('[bus]\nkind = "redis"\n[bus.redis]\npassword_file = "nope"\n', "cannot read password_file")]
        for n, (text, reason) in enumerate(cases):
            with self.subTest(text=text), self.assertRaisesRegex(AddressError, reason):
                self.url(GEPPETTO_CONFIG=self.config(text, f"c{n}.toml"))
        with self.assertRaisesRegex(AddressError, "cannot read geppetto's config"):
            self.url(GEPPETTO_CONFIG=str(self.dir / "missing.toml"))

    def test_the_script_refuses_to_start_on_a_bad_address(self):
        path = self.config('[bus]\nkind = "memory"\n')
        with override_settings(GEPPETTO_CONFIG=path), \
                self.assertRaisesRegex(ImproperlyConfigured, "in-process bus"):
            scripts.make_bridge()


class AgreementTest(GeppettoTest):
    def test_geppetto_not_seen_is_said_once_and_seen_later_is_said_too(self):
        staff = Mock(name="to_staff")
        self.bridge.to_staff = staff
        nothing = {"answered": True, "from_geppetto": 0, "completion": None}
        with self.assertLogs("geppetto_evennia", "WARNING") as logged:
            self.assertFalse(self.bridge.agree(nothing))
            self.bridge.agree(nothing)
        self.assertEqual(len(logged.output), 1)
        self.assertIn(f"nothing from geppetto for zone {ZONE} on redis://127.0.0.1:1/0 yet", logged.output[0])
        staff.assert_called_once()
        self.assertFalse(self.bridge.agree({"answered": False, "from_geppetto": 0, "completion": None}))
        self.assertTrue(self.bridge.agree({"answered": True, "from_geppetto": 0, "completion": "game"}))
        self.assertEqual(staff.call_count, 1)

    def test_a_zone_run_in_simulated_completion_is_warned_about(self):
        self.bridge.to_staff = Mock(name="to_staff")
        with self.assertLogs("geppetto_evennia", "WARNING") as logged:
            self.bridge.agree({"answered": True, "from_geppetto": 3, "completion": "simulated"})
            self.bridge.agree({"answered": True, "from_geppetto": 3, "completion": "simulated"})
        self.assertEqual(len(logged.output), 1)
        self.assertIn("in simulated completion", logged.output[0])

    def test_a_message_read_from_geppetto_is_agreement(self):
        self.npc("nell", "Nell", self.room1)
        self.intent("bark", "nell", "b-1", text="Hi")
        self.assertTrue(self.bridge.shared)

    def test_the_script_looks_at_the_start_and_then_every_so_often_until_seen(self):
        probe = Mock(return_value={"answered": True, "from_geppetto": 0, "completion": None})
        self.bus.probe = probe
        self.bridge.to_staff = Mock()
        with override_settings(GEPPETTO_AGREE_SECONDS=3), \
                patch("geppetto_evennia.scripts.threads.deferToThread",
                      side_effect=lambda work: defer.succeed(work())), \
                patch("geppetto_evennia.scripts.gametime.gametime", return_value=0.0), \
                self.assertLogs("geppetto_evennia", "WARNING"):
            self.game_script.check_agreement()
            for _ in range(6):
                self.game_script.at_repeat()
            self.assertEqual(probe.call_count, 3)
            self.bridge.shared = True
            for _ in range(6):
                self.game_script.at_repeat()
            self.assertEqual(probe.call_count, 3)


class ProbeOverRedisTest(SimpleTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.server = RedisServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        super().tearDownClass()

    def test_the_probe_sees_what_geppetto_wrote_for_the_zone(self):
        r = self.server.client
        r.flushall()
        bus = Bus(self.server.url, ZONE)
        self.assertEqual(bus.probe(), {"answered": True, "from_geppetto": 0, "completion": None})
        r.xadd(bus.key("world"), {"m": json.dumps({"v": 1, "type": "zone_settings", "id": "s",
                                                   "zone": ZONE, "game_time": 420,
                                                   "completion": "game", "origin": "geppetto"})})
        r.xadd(bus.key("world"), {"m": "not json"})
        r.xadd(bus.key("world"), {"m": json.dumps({"v": 1, "type": "time_advanced", "id": "t",
                                                   "zone": ZONE, "game_time": 421})})
        r.xadd(bus.key("npc_events"), {"m": "{}"})
        self.assertEqual(bus.probe(), {"answered": True, "from_geppetto": 1, "completion": "game"})
        other = Bus("redis://127.0.0.1:1/0", ZONE, retry_seconds=0)
        self.assertEqual(other.probe(), {"answered": False, "from_geppetto": 0, "completion": None})
