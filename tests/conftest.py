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
    """
    Point ESHU_HOME and XDG_CACHE_HOME (where the embedding model's word list is kept) at
    empty folders and drop credential variables for the run; child processes inherit them.
    """
    saved = {name: os.environ.pop(name) for name in _CREDENTIAL_VARIABLES if name in os.environ}
    previous = {name: os.environ.get(name) for name in ("ESHU_HOME", "XDG_CACHE_HOME")}
    with (
        tempfile.TemporaryDirectory(prefix="eshu-home-") as home,
        tempfile.TemporaryDirectory(prefix="eshu-cache-") as cache,
    ):
        os.environ["ESHU_HOME"] = home
        os.environ["XDG_CACHE_HOME"] = cache
        yield home
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
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
