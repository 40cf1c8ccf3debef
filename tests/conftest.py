"""Keep the developer's own Eshu configuration out of the tests."""

import os
import tempfile

import pytest

_CREDENTIAL_VARIABLES = (
    "ESHU_API_KEY",
    "ESHU_AUTO_GENERATE_API_KEY",
    "ESHU_SCOPED_TOKENS_FILE",
    "ESHU_AUTH_RESOURCE_URI",
    "ESHU_AUTH_OIDC_CONFIG_FILE",
    "ESHU_MCP_ALLOW_UNAUTHENTICATED",
    "ESHU_MCP_DB",
    "ESHU_API_URL",
    "ESHU_UPSTREAM_API_KEY",
)


@pytest.fixture(autouse=True, scope="session")
def isolated_eshu_home():
    """Point ESHU_HOME at an empty folder and drop credential variables for the run."""
    saved = {name: os.environ.pop(name) for name in _CREDENTIAL_VARIABLES if name in os.environ}
    previous_home = os.environ.get("ESHU_HOME")
    with tempfile.TemporaryDirectory(prefix="eshu-home-") as home:
        os.environ["ESHU_HOME"] = home
        yield home
    if previous_home is None:
        os.environ.pop("ESHU_HOME", None)
    else:
        os.environ["ESHU_HOME"] = previous_home
    os.environ.update(saved)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, request):
    """A scratch folder shared by one test module's daemons and repositories."""
    return tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])


@pytest.fixture(scope="module")
def repository(workdir):
    """The small sample git repository of ``tests.daemon`` (a module may override it)."""
    from tests.daemon import make_fixture_repository

    return make_fixture_repository(workdir)
