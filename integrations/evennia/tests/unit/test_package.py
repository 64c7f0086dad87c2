"""The package's face: the public names `__init__` exports, each the object of the module that
owns it, and `import geppetto_evennia` working where Evennia has not started (a settings file,
an installer), importing none of the modules that need it."""
import importlib
import json
import os
import subprocess
import sys

from django.test import SimpleTestCase

import geppetto_evennia


class ExportsTest(SimpleTestCase):
    def test_every_public_name_is_the_owning_modules_object(self):
        self.assertEqual(sorted(geppetto_evennia.__all__), sorted(geppetto_evennia._OWNERS))
        for name in geppetto_evennia.__all__:
            owner = importlib.import_module(f"geppetto_evennia.{geppetto_evennia._OWNERS[name]}")
            self.assertIs(getattr(geppetto_evennia, name), getattr(owner, name), name)

    def test_star_import_gives_exactly_the_public_names(self):
        names = {}
        exec("from geppetto_evennia import *", names)
        self.assertEqual(set(names) - {"__builtins__"}, set(geppetto_evennia.__all__))

    def test_an_unknown_name_is_an_attribute_error(self):
        with self.assertRaises(AttributeError):
            geppetto_evennia.current
        self.assertIn("Bridge", dir(geppetto_evennia))

    def test_import_needs_neither_evennia_nor_django_settings(self):
        env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
        probe = ("import json, sys, geppetto_evennia\n"
                 "print(json.dumps({'all': geppetto_evennia.__all__, 'loaded': sorted(\n"
                 "    m for m in sys.modules if m.startswith(('geppetto_evennia.', 'evennia', 'django')))}))")
        done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                              text=True, timeout=60, check=True)
        seen = json.loads(done.stdout)
        self.assertEqual(seen["all"], geppetto_evennia.__all__)
        self.assertEqual(seen["loaded"], [])

    def test_the_bus_alone_imports_without_evennia(self):
        env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
        probe = ("import sys\nfrom geppetto_evennia import Bus\n"
                 "print(Bus('redis://127.0.0.1:1/0', 'z').key('world'), "
                 "any(m.startswith('evennia') for m in sys.modules))")
        done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                              text=True, timeout=60, check=True)
        self.assertEqual(done.stdout.split(), ["geppetto:{z}:world", "False"])
