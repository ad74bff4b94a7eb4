"""The flywheel's servers on llama.cpp: each model folder converted to GGUF once, served by
`llama-server`, `redraft serve` in front of it on its OpenAI-compatible backend. A converter
script and a `llama-server` stand-in (the fake upstream under llama-server's command line)
take the real tools' places; the real ones are benches' (docs/flywheel.md), not CI's."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from training.data.dataset import write_jsonl
from training.data.prompts import generate
from training.distill import main
from training.flywheel.config import FlywheelConfig
from training.flywheel.evaluate import evaluate
from training.flywheel.record import record

ROOT = Path(__file__).resolve().parents[2]


def script(path: Path, body: str) -> Path:
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body), "utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def tools(tmp_path: Path) -> dict[str, Path]:
    calls = tmp_path / "calls.jsonl"
    converter = script(tmp_path / "convert_hf_to_gguf.py", f"""
        import json, sys
        folder, _, out, _, outtype = sys.argv[1:]
        with open({str(calls)!r}, "a") as log:
            log.write(json.dumps({{"convert": folder, "outtype": outtype}}) + "\\n")
        open(out, "wb").write(b"GGUF")
        """)
    server = script(tmp_path / "llama-server", f"""
        import json, sys
        sys.path.insert(0, {str(ROOT)!r})
        args = sys.argv[1:]
        assert args.pop() == "--no-cache-prompt"
        named = dict(zip(args[::2], args[1::2]))
        assert open(named["-m"], "rb").read() == b"GGUF", named["-m"]
        with open({str(calls)!r}, "a") as log:
            log.write(json.dumps({{"serve": named["-m"], "slots": named["--parallel"]}}) + "\\n")
        from bench.fakes.upstream import main
        main(["--host", named["--host"], "--port", named["--port"], "--model",
              named["--alias"], "--responder", "writer"])
        """)
    return {"converter": converter, "server": server, "calls": calls}


def calls(tools: dict[str, Path]) -> list[dict[str, str]]:
    return [json.loads(line) for line in tools["calls"].read_text("utf-8").splitlines()]


def test_recording_and_evaluating_go_through_llama_server(tools, tiny_model_dir, tmp_path):
    run = tmp_path / "run"
    train, heldout = generate(0, 6, 2)
    write_jsonl(run / "prompts" / "train.jsonl", [p.record() for p in train])
    write_jsonl(run / "prompts" / "heldout.jsonl", [p.record() for p in heldout])
    config = FlywheelConfig(out=str(run), record_prompts=3, max_rounds=1, max_tokens=16,
                            concurrency=2, llama_server=str(tools["server"]),
                            gguf_converter=str(tools["converter"]), gguf_type="q8_0")
    trained = tmp_path / "trained"
    trained.symlink_to(tiny_model_dir)

    recorded = record(config, run, tiny_model_dir, run / "record")
    figures = evaluate(config, run, tiny_model_dir, trained, run / "evaluate")

    assert recorded["prompts"] == 3 and recorded["errors"] == 0 and recorded["loops"] == 3
    for method in ("base_direct", "base_mrpo", "trained_direct", "trained_mrpo"):
        assert figures["methods"][method]["errors"] == 0, method
    base_gguf = run / "models" / "base.q8_0.gguf"
    trained_gguf = run / "evaluate" / "gguf" / "trained.q8_0.gguf"
    # the base model is converted once and served twice (record, evaluate); the trained once;
    # each time by one single-slot process per request in flight, so that no answer shares a
    # batch with another
    base, again = {"serve": str(base_gguf), "slots": "1"}, {"serve": str(trained_gguf),
                                                           "slots": "1"}
    assert calls(tools) == [
        {"convert": str(tiny_model_dir), "outtype": "q8_0"}, base, base, base, base,
        {"convert": str(trained), "outtype": "q8_0"}, again, again,
    ]
    # redraft serve generated through llama-server: its loops name the openai backend
    rows = [json.loads(line) for line in
            (run / "record" / "answers.jsonl").read_text("utf-8").splitlines()]
    assert all(r["reflection"]["trace"]["candidates"] for r in rows)
    import sqlite3

    with sqlite3.connect(run / "record" / "redraft.db") as db:
        backends = {b for (b,) in db.execute("select backend from loops")}
    assert backends == {"openai"}


def test_a_failed_conversion_names_the_converter_and_its_error(tools, tiny_model_dir,
                                                               tmp_path):
    from training.flywheel.llamacpp import to_gguf

    broken = script(tmp_path / "broken.py", """
        import sys
        sys.exit("ERROR: Model LlamaForCausalLM is not supported")
        """)
    out = tmp_path / "m.gguf"
    with pytest.raises(RuntimeError, match="not supported") as caught:
        to_gguf(tiny_model_dir, out, broken, "f16")
    assert str(broken) in str(caught.value)
    assert not out.exists() and not out.with_name("m.gguf.partial").exists()


@pytest.mark.parametrize(("extra", "message"), [
    (["--llama-server", "/bin/true"], "--llama-server and --gguf-converter go together"),
    (["--llama-server", "/no/such/llama-server", "--gguf-converter", "/bin/true"],
     "--llama-server /no/such/llama-server: no such file"),
    (["--heldout-prompts", "4", "--pair-judge-prompts", "5"],
     "--pair-judge-prompts 5 is more than the 4 prompts evaluated"),
])
def test_engine_and_judge_options_are_checked_before_anything_is_written(extra, message,
                                                                     tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["flywheel", "--out", str(out), *extra]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
