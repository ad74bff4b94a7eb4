"""Trainer fixtures: a tiny random Qwen2 model, the fake writer upstream (also the judge), and
loops recorded by the real app against it; and for the real-model tests, redraft serving
SmolLM2 in a subprocess, the loops it recorded and their export.

Session-scoped: the models are built or started once and the loops recorded once; tests that
write take their own output directories.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

from bench.fakes.tiny_model import build_tiny_model  # noqa: E402
from bench.fakes.upstream import FakeUpstream, run_in_thread  # noqa: E402
from tests.training.real_server import RedraftOnModel  # noqa: E402

PROMPTS = [
    "Write a short note inviting the team to a picnic on Friday.",
    "Draft a product announcement for a new note-taking app.",
    "Write a polite email asking a landlord to fix a leaking tap.",
    "Write a short story opening about a lighthouse keeper.",
    "Summarise the benefits of daily walks for office workers.",
    "Write a cover letter paragraph for a junior data analyst role.",
]
API_KEY = "sk-train"
OTHER_KEY = "sk-other"


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-qwen2"), corpus=PROMPTS)


@pytest.fixture(scope="session")
def writer_fake() -> Iterator[tuple[str, FakeUpstream]]:
    """The fake upstream with the writer responder: the server's model and the judge."""
    with run_in_thread(responder="writer") as (url, fake):
        yield url, fake


def _ask(client: Any, prompt: str, key: str = API_KEY, **extra: Any) -> dict[str, Any]:
    body = {"model": "fake-model", "messages": [{"role": "user", "content": prompt}], **extra}
    r = client.post("/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"})
    assert r.status_code == 200, r.text
    return r.json()


def _add_variants(url: str) -> dict[str, str]:
    """Three more loops copied from a real one: degraded, errored, and with reflection off
    (what an upgraded server that records passthrough requests would store)."""
    from store import LoopRepository, make_engine, make_sessionmaker

    async def work() -> dict[str, str]:
        engine = make_engine(url)
        try:
            repo = LoopRepository(make_sessionmaker(engine))
            page, _ = await repo.list(namespace="team-a", limit=1)
            (base,) = await repo.get_many([page[0].id])
            variants = {
                "degraded": dataclasses.replace(base, stop_reason="degraded"),
                "errored": dataclasses.replace(base, error="upstream went away"),
                "passthrough": dataclasses.replace(
                    base, request={**base.request, "reflection": {"enabled": False}}),
            }
            ids = {}
            for name, record in variants.items():
                from store import new_id

                copy = dataclasses.replace(record, id=new_id(), candidates=tuple(
                    dataclasses.replace(c, id=new_id()) for c in record.candidates))
                await repo.save(copy)
                ids[name] = copy.id
            return ids
        finally:
            await engine.dispose()

    return asyncio.run(work())


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory,
             writer_fake: tuple[str, FakeUpstream]) -> dict[str, Any]:
    """A SQLite store holding real loops: six prompts (the first asked twice), one in another
    namespace, plus degraded / errored / reflection-off copies. {"url", "data_dir", ...}"""
    from fastapi.testclient import TestClient

    from app.factory import create_app
    from app.settings import load_settings

    base_url, fake = writer_fake
    data_dir = tmp_path_factory.mktemp("recorded")
    with pytest.MonkeyPatch.context() as mp:
        for key in ("REDRAFT_API_KEYS", "REDRAFT_ADMIN_KEY", "REDRAFT_UPSTREAM_URL",
                    "REDRAFT_DATABASE_URL", "REDRAFT_MODEL", "REDRAFT_BACKEND"):
            mp.delenv(key, raising=False)
        settings = load_settings(
            data={"dir": data_dir}, model="fake-model", upstream={"url": base_url},
            api={"keys": f"team-a:{API_KEY},team-b:{OTHER_KEY}"}, memory={"enabled": False},
            # judged loops to record: no budget relative to the fake's one-line draft
            reflection={"token_budget_ratio": 0, "time_budget_ratio": 0})
        with TestClient(create_app(settings)) as client:
            answers = [_ask(client, p) for p in PROMPTS]
            answers.append(_ask(client, PROMPTS[0]))
            answers.append(_ask(client, "Write a haiku about autumn rain.", key=OTHER_KEY))
            skipped = _ask(client, PROMPTS[1], reflection={"enabled": False})
    assert all("loop_id" in a["reflection"] for a in answers), answers[0]["reflection"]
    assert "skipped" in skipped["reflection"]
    url = settings.database_url
    variants = _add_variants(url)
    fake.reset()
    return {"url": url, "data_dir": data_dir, "variants": variants, "answers": answers}


@pytest.fixture(scope="session")
def dataset_dir(tmp_path_factory: pytest.TempPathFactory, recorded: dict[str, Any],
                tiny_model_dir: Path) -> Path:
    """`export` of the recorded loops (namespace team-a, one prompt in six held out)."""
    from training.distill import main

    out = tmp_path_factory.mktemp("export") / "data"
    code = main(["export", "--database", recorded["url"], "--out", str(out),
                 "--namespace", "team-a", "--holdout", "0.2", "--tokenizer", str(tiny_model_dir),
                 "--max-prompt-tokens", "96"])
    assert code == 0
    return out


# Short writing prompts SmolLM2 answers in the real-model tests: one loop each, one round, on a
# small checklist the request carries (generating one costs a 135M model on a CPU minutes per
# prompt, and every judge call reads the whole checklist: three dimensions of three bands keep
# the evaluation prompt near 500 tokens).
REAL_PROMPTS = PROMPTS[:3]


def _dimension(name: str, description: str, low: str, mid: str, high: str) -> dict[str, Any]:
    return {"name": name, "description": description,
            "bands": [{"low": 1, "high": 4, "description": low},
                      {"low": 5, "high": 7, "description": mid},
                      {"low": 8, "high": 10, "description": high}]}


REAL_CHECKLIST = {"dimensions": [
    _dimension("Task fulfilment", "Does the text do what the request asks?",
               "Answers a different request.", "Does part of what was asked.",
               "Does everything that was asked."),
    _dimension("Clarity", "Can a reader follow the text easily?",
               "Hard to follow or repetitive.", "Mostly clear, with some repetition.",
               "Clear and well ordered throughout."),
    _dimension("Tone", "Does the tone suit the reader and the purpose?",
               "Wrong tone for the reader.", "Tone mostly fits.",
               "Tone fits the reader and purpose exactly."),
]}
REAL_REFLECTION = {"max_rounds": 1, "memory": False, "checklist": REAL_CHECKLIST,
                   "evaluation": "joint"}  # judged loops, whatever the judge's probe says
REAL_CALL_TOKENS = 96  # the cap on each judge call of the loop and of GSPO's reward
REAL_ANSWER_TOKENS = 32


@pytest.fixture(scope="session")
def smollm2_server(smollm2_dir: Path,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedraftOnModel]:
    """`redraft serve` on SmolLM2 (local backend, memory off) in a subprocess on a free port."""
    server = RedraftOnModel(smollm2_dir, tmp_path_factory.mktemp("smollm2-server"),
                            call_tokens=REAL_CALL_TOKENS)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def smollm2_recorded(smollm2_server: RedraftOnModel) -> list[dict[str, Any]]:
    """The `reflection` object of each answer SmolLM2 gave through the loop: draft, judge,
    reflect and rewrite all by SmolLM2, each loop recorded in the server's SQLite store."""
    return [smollm2_server.chat(p, max_tokens=REAL_ANSWER_TOKENS,
                                reflection=REAL_REFLECTION)["reflection"]
            for p in REAL_PROMPTS]


@pytest.fixture(scope="session")
def smollm2_dataset(smollm2_server: RedraftOnModel, smollm2_recorded: list[dict[str, Any]],
                    smollm2_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`export` of the loops SmolLM2 recorded (one prompt held out)."""
    from training.distill import main

    out = tmp_path_factory.mktemp("smollm2-export") / "data"
    # answers are capped at REAL_ANSWER_TOKENS to keep the test short, so most are cut at the
    # token limit, which export leaves out by default: the mechanics need them kept
    assert main(["export", "--database", smollm2_server.database_url, "--out", str(out),
                 "--holdout", "0.3", "--tokenizer", str(smollm2_dir),
                 "--max-prompt-tokens", "96", "--keep-dropped-task"]) == 0
    return out
