"""Where the shared API key comes from: environment, ``$ESHU_HOME/.env``, or generation."""

import os
import re
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.auth.apikey import eshu_home, is_truthy, read_env_file_key, resolve_api_key


class _HomeMixin:
    def home(self, env_text: str | None = None) -> str:
        directory = tempfile.mkdtemp()
        self.addCleanup(_remove_tree, directory)  # type: ignore[attr-defined]
        if env_text is not None:
            with open(os.path.join(directory, ".env"), "w") as handle:
                handle.write(env_text)
        return directory


def _remove_tree(directory: str) -> None:
    for name in os.listdir(directory):
        os.remove(os.path.join(directory, name))
    os.rmdir(directory)


class ResolutionTests(_HomeMixin, SynchronousTestCase):
    def test_environment_variable_wins_and_is_trimmed(self) -> None:
        home = self.home("ESHU_API_KEY=from-file\n")
        environ = {"ESHU_API_KEY": "  from-env \n", "ESHU_HOME": home}
        self.assertEqual(resolve_api_key(environ), "from-env")

    def test_persisted_key_in_eshu_home_is_used(self) -> None:
        home = self.home('# local\nOTHER=1\nexport ESHU_API_KEY="persisted"\n')
        self.assertEqual(resolve_api_key({"ESHU_HOME": home}), "persisted")

    def test_no_source_gives_no_key_and_writes_nothing(self) -> None:
        home = self.home()
        self.assertEqual(resolve_api_key({"ESHU_HOME": home}), "")
        self.assertFalse(os.path.exists(os.path.join(home, ".env")))

    def test_auto_generation_writes_a_64_hex_key_once(self) -> None:
        home = self.home("OTHER=1")
        environ = {"ESHU_HOME": home, "ESHU_AUTO_GENERATE_API_KEY": "yes"}
        key = resolve_api_key(environ)
        self.assertRegex(key, r"^[0-9a-f]{64}$")
        self.assertEqual(resolve_api_key(environ), key)
        self.assertEqual(resolve_api_key({"ESHU_HOME": home}), key)
        with open(os.path.join(home, ".env")) as handle:
            text = handle.read()
        self.assertIn("OTHER=1\n", text)
        self.assertEqual(len(re.findall("ESHU_API_KEY=", text)), 1)
        self.assertEqual(os.stat(os.path.join(home, ".env")).st_mode & 0o077, 0)

    def test_auto_generation_creates_a_missing_home(self) -> None:
        parent = self.home()
        home = os.path.join(parent, "nested")
        self.addCleanup(_remove_tree, home)
        key = resolve_api_key({"ESHU_HOME": home, "ESHU_AUTO_GENERATE_API_KEY": "1"})
        self.assertEqual(read_env_file_key(Path(home, ".env")), key)


class SpellingTests(SynchronousTestCase):
    def test_truthy_spellings(self) -> None:
        for value in ("1", "true", "T", " yes ", "Y", "ON"):
            self.assertTrue(is_truthy(value), value)
        for value in ("", "0", "false", "no", "off", "enabled", None):
            self.assertFalse(is_truthy(value), value)

    def test_eshu_home_expands_tilde_and_defaults_under_home(self) -> None:
        user_home = os.path.expanduser("~")
        self.assertEqual(str(eshu_home({"ESHU_HOME": "~/x"})), os.path.join(user_home, "x"))
        self.assertEqual(str(eshu_home({})), os.path.join(user_home, ".eshu"))

    def test_last_assignment_in_env_file_wins_and_quotes_are_removed(self) -> None:
        handle, path = tempfile.mkstemp()
        self.addCleanup(os.remove, path)
        with os.fdopen(handle, "w") as stream:
            stream.write("ESHU_API_KEY=first\nESHU_API_KEY_OLD=x\nESHU_API_KEY = 'second'\n")
        self.assertEqual(read_env_file_key(Path(path)), "second")


class GenerationLayoutTests(_HomeMixin, SynchronousTestCase):
    def test_generated_key_goes_on_its_own_line(self) -> None:
        for existing in ("OTHER=1", "OTHER=1\n"):
            home = self.home(existing)
            key = resolve_api_key({"ESHU_HOME": home, "ESHU_AUTO_GENERATE_API_KEY": "true"})
            with open(os.path.join(home, ".env")) as handle:
                self.assertEqual(handle.read(), f"OTHER=1\nESHU_API_KEY={key}\n")
