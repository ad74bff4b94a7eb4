import pytest

from app.cli import _overrides, _parser
from app.settings import ConfigError, is_loopback, load_settings


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    import os

    for key in list(os.environ):
        if key.startswith("REDRAFT_"):
            monkeypatch.delenv(key)


def test_defaults_are_embedded_local_backend_on_loopback(tmp_path, monkeypatch):
    monkeypatch.setenv("REDRAFT_DATA_DIR", str(tmp_path))
    s = load_settings()
    assert s.resolved_backend == "local"
    assert s.server.host == "127.0.0.1"
    assert s.database_url == f"sqlite+aiosqlite:///{tmp_path.resolve() / 'redraft.db'}"


def test_env_names_from_the_issue_reach_their_groups(monkeypatch):
    monkeypatch.setenv("REDRAFT_UPSTREAM_URL", "http://a:1/v1/, http://b:2/v1")
    monkeypatch.setenv("REDRAFT_UPSTREAM_API_KEY", "up-secret")
    monkeypatch.setenv("REDRAFT_API_KEYS", "team-a:k1,k2")
    monkeypatch.setenv("REDRAFT_ADMIN_KEY", "adm")
    monkeypatch.setenv("REDRAFT_REDIS_URL", "redis://127.0.0.1:6379/0")
    monkeypatch.setenv("REDRAFT_DATABASE_URL", "postgresql+asyncpg://x@h/db")
    monkeypatch.setenv("REDRAFT_MODEL", "m")
    s = load_settings()
    assert s.resolved_backend == "openai"
    assert s.upstream.url == ["http://a:1/v1", "http://b:2/v1"]
    assert s.upstream.api_key.get_secret_value() == "up-secret"
    assert "up-secret" not in repr(s)
    assert s.api.namespaces() == {"k1": "team-a", "k2": "default"}
    assert s.admin.key.get_secret_value() == "adm"
    assert s.database_url == "postgresql+asyncpg://x@h/db"
    assert s.model == "m"


def test_public_bind_without_keys_is_refused_with_the_fixes(monkeypatch):
    with pytest.raises(ConfigError) as err:
        load_settings(server={"host": "0.0.0.0"})
    message = str(err.value)
    assert "REDRAFT_API_KEYS" in message and "--allow-public" in message
    assert load_settings(server={"host": "0.0.0.0", "allow_public": True}).server.host == "0.0.0.0"
    monkeypatch.setenv("REDRAFT_API_KEYS", "k")
    assert load_settings(server={"host": "0.0.0.0"}).server.host == "0.0.0.0"


@pytest.mark.parametrize(
    ("env", "value", "fragment"),
    [
        ("REDRAFT_UPSTREAM_URL", "ftp://x", "must start with http"),
        ("REDRAFT_SERVER_PORT", "70000", "REDRAFT_SERVER_PORT"),
        ("REDRAFT_BACKEND", "gpu", "REDRAFT_BACKEND"),
    ],
)
def test_bad_configuration_names_the_variable(monkeypatch, env, value, fragment):
    monkeypatch.setenv(env, value)
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert fragment in str(err.value)


def test_openai_backend_needs_an_upstream(monkeypatch):
    monkeypatch.setenv("REDRAFT_BACKEND", "openai")
    with pytest.raises(ConfigError, match="REDRAFT_UPSTREAM_URL"):
        load_settings()


def test_cli_flags_override_environment(monkeypatch):
    monkeypatch.setenv("REDRAFT_SERVER_PORT", "9000")
    args = _parser().parse_args(["serve", "--port", "9100", "--upstream-url", "http://u/v1"])
    s = load_settings(**_overrides(args))
    assert s.server.port == 9100
    assert s.upstream.url == ["http://u/v1"]


def test_loopback_detection():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3")
