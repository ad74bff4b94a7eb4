"""The backend registry turns settings into the configured backend, unstarted."""

import pytest

from app.backends import BACKENDS, build_backend, build_judge
from app.http.metrics import Metrics
from app.settings import load_settings
from generation.local import LocalBackend
from generation.openai import OpenAIBackend
from generation.vllm import VllmBackend


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    import os

    for key in list(os.environ):
        if key.startswith("REDRAFT_"):
            monkeypatch.delenv(key)


def test_registry_is_an_explicit_dict():
    assert set(BACKENDS) == {"openai", "vllm", "local"}


def test_upstream_url_selects_openai_with_every_url():
    s = load_settings(upstream={"url": "http://a:1/v1,http://b:2/v1", "retries": 5}, model="m")
    backend = build_backend(s, Metrics())
    assert isinstance(backend, OpenAIBackend)
    assert [u.url for u in backend.balancer.upstreams] == ["http://a:1/v1", "http://b:2/v1"]


def test_vllm_backend_builds_the_serve_command():
    s = load_settings(backend="vllm", model="Qwen/Qwen2.5-7B-Instruct",
                      vllm={"command": "/opt/vllm/bin/vllm serve", "args": "--max-model-len 8192",
                            "port": 8123})
    backend = build_backend(s, Metrics())
    assert isinstance(backend, VllmBackend)
    assert backend.base_url == "http://127.0.0.1:8123/v1"


def test_no_upstream_means_the_local_model(tmp_path):
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "config.json").write_text("{}")
    backend = build_backend(load_settings(model=str(tmp_path / "tiny"), data={"dir": tmp_path}),
                            Metrics())
    assert isinstance(backend, LocalBackend)
    assert backend.model == "tiny"
    assert backend.cache_dir == tmp_path / "models"  # converted GGUF files live in the data dir


def test_a_local_model_that_does_not_exist_is_refused_before_anything_starts(tmp_path):
    from generation.local import ModelLoadError

    with pytest.raises(ModelLoadError, match=r"^REDRAFT_MODEL: .*no-such does not exist; point"):
        build_backend(load_settings(model=str(tmp_path / "no-such")), Metrics())


def test_the_default_model_is_the_packaged_smollm2():
    settings = load_settings()
    assert settings.model == "smollm2-135m-instruct"
    assert settings.resolved_backend == "local"


def test_judge_is_the_writer_unless_configured():
    assert build_judge(load_settings(), Metrics()) is None
    judge = build_judge(load_settings(upstream={"url": "http://w/v1"},
                                      judge={"url": "http://j/v1", "model": "judge-m"}), Metrics())
    assert isinstance(judge, OpenAIBackend)
    assert [u.url for u in judge.balancer.upstreams] == ["http://j/v1"]


def test_structured_dialects_come_from_settings_per_upstream(monkeypatch):
    assert build_backend(load_settings(upstream={"url": "http://w/v1"}),
                         Metrics()).structured == "auto"  # the default probes
    monkeypatch.setenv("REDRAFT_UPSTREAM_STRUCTURED", "json_object_schema")
    monkeypatch.setenv("REDRAFT_JUDGE_STRUCTURED", "guided_json")
    s = load_settings(upstream={"url": "http://w/v1"}, judge={"url": "http://j/v1"})
    writer, judge = build_backend(s, Metrics()), build_judge(s, Metrics())
    assert writer.structured == "json_object_schema" and judge.structured == "guided_json"
    monkeypatch.delenv("REDRAFT_JUDGE_STRUCTURED")
    judge = build_judge(load_settings(upstream={"url": "http://w/v1"},
                                      judge={"url": "http://j/v1"}), Metrics())
    assert judge.structured == "json_object_schema"  # the judge follows the writer's setting


def test_an_unknown_structured_dialect_is_refused_at_start_up(monkeypatch):
    from app.settings import ConfigError

    monkeypatch.setenv("REDRAFT_UPSTREAM_STRUCTURED", "json")
    with pytest.raises(ConfigError, match="REDRAFT_UPSTREAM_STRUCTURED"):
        load_settings(upstream={"url": "http://w/v1"})
