from __future__ import annotations

import json
import logging

import httpx
import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse

from app.http.logs import RequestIdMiddleware, configure_logging, current_request_id


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    uvicorn = {n: logging.getLogger(n) for n in ("uvicorn", "uvicorn.error", "uvicorn.access")}
    saved_uvicorn = {n: (list(lg.handlers), lg.level, lg.propagate) for n, lg in uvicorn.items()}
    yield
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])
    for name, (handlers, level, propagate) in saved_uvicorn.items():
        uvicorn[name].handlers[:] = handlers
        uvicorn[name].setLevel(level)
        uvicorn[name].propagate = propagate


def json_lines(err: str) -> list[dict]:
    return [json.loads(line) for line in err.splitlines() if line.startswith("{")]


def test_json_lines_carry_fields_extras_and_exceptions(restore_logging, capsys):
    configure_logging("info", json=True)
    log = logging.getLogger("redraft.test")
    log.debug("hidden at INFO")
    log.info("loop %s done", "L1", extra={"rounds": 3, "score": 0.92, "obj": object()})
    try:
        raise ValueError("bad band")
    except ValueError:
        log.exception("evaluation failed")

    lines = json_lines(capsys.readouterr().err)
    assert len(lines) == 2
    done, failed = lines
    assert done["level"] == "INFO" and done["logger"] == "redraft.test"
    assert done["msg"] == "loop L1 done"
    assert done["rounds"] == 3 and done["score"] == 0.92
    assert done["obj"].startswith("<object")  # unserialisable extras become strings
    assert done["ts"].endswith("+00:00")
    assert "request_id" not in done
    assert failed["level"] == "ERROR"
    assert "ValueError: bad band" in failed["exc"] and "Traceback" in failed["exc"]


def test_configuring_twice_installs_one_handler(restore_logging, capsys):
    configure_logging("INFO", json=True)
    configure_logging("WARNING", json=False)
    logging.getLogger("redraft.test").info("dropped at WARNING")
    logging.getLogger("redraft.test").warning("plain text now")
    err = capsys.readouterr().err
    assert err.count("plain text now") == 1
    assert "dropped" not in err
    assert not json_lines(err)


def test_uvicorn_loggers_flow_through_the_root_handler(restore_logging, capsys):
    stray = logging.StreamHandler()
    logging.getLogger("uvicorn.error").addHandler(stray)
    logging.getLogger("uvicorn.error").propagate = False
    configure_logging("INFO", json=True)
    logging.getLogger("uvicorn.error").info("Started server process")
    logging.getLogger("uvicorn.access").info('127.0.0.1 - "GET / HTTP/1.1" 200')
    lines = json_lines(capsys.readouterr().err)
    assert [line["msg"] for line in lines] == ["Started server process"]


def _app(outermost: bool = False):
    app = FastAPI()

    @app.get("/v1/models")
    async def models() -> dict:
        logging.getLogger("redraft.route").warning("inside")
        return {"request_id": current_request_id()}

    @app.get("/boom")
    async def boom() -> dict:
        raise RuntimeError("bug")

    @app.exception_handler(Exception)
    async def crashed(request, exc: Exception) -> JSONResponse:
        # Starlette runs this outside every added middleware.
        return JSONResponse({"request_id": current_request_id()}, status_code=500)

    if outermost:
        return RequestIdMiddleware(app)
    app.add_middleware(RequestIdMiddleware)
    return app


async def _get(path: str, outermost: bool = False, **headers: str | bytes) -> httpx.Response:
    transport = httpx.ASGITransport(app=_app(outermost), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        return await client.get(path, headers=headers)


async def test_sane_client_request_id_is_kept_and_echoed(restore_logging, capsys):
    configure_logging("INFO", json=True)
    response = await _get("/v1/models", **{"X-Request-ID": "trace-42.a_b"})
    assert response.headers["x-request-id"] == "trace-42.a_b"
    assert response.json() == {"request_id": "trace-42.a_b"}
    lines = json_lines(capsys.readouterr().err)
    inside, access = [line for line in lines if line["logger"].startswith("redraft.")]
    assert inside["msg"] == "inside" and inside["request_id"] == "trace-42.a_b"
    assert access["logger"] == "redraft.access" and access["level"] == "INFO"
    assert access["request_id"] == "trace-42.a_b"
    assert (access["method"], access["path"], access["status"]) == ("GET", "/v1/models", 200)
    assert access["duration_ms"] >= 0
    assert current_request_id() is None  # nothing leaks out of the request


@pytest.mark.parametrize("bad", ["x" * 65, "a b", "id;drop", "ünï".encode(), ""])
async def test_insane_client_request_id_is_replaced(bad):
    response = await _get("/v1/models", **{"X-Request-ID": bad})
    generated = response.headers["x-request-id"]
    assert generated != bad and 8 <= len(generated) <= 64 and generated.isalnum()
    assert response.json() == {"request_id": generated}


async def test_ids_are_generated_per_request():
    first, second = await _get("/v1/models"), await _get("/v1/models")
    assert first.headers["x-request-id"] != second.headers["x-request-id"]


@pytest.mark.parametrize("outermost", [False, True])
async def test_crash_is_logged_as_500_under_the_request_id(caplog, outermost):
    caplog.set_level(logging.INFO)
    response = await _get("/boom", outermost, **{"X-Request-ID": "crash-1"})
    assert response.status_code == 500
    # The app's catch-all handler can still name the request it failed.
    assert response.json() == {"request_id": "crash-1"}
    if outermost:  # wrapped around the whole app, even the 500 carries the header
        assert response.headers["x-request-id"] == "crash-1"
    access = [r for r in caplog.records if r.name == "redraft.access"]
    assert len(access) == 1
    assert access[0].status == 500 and access[0].path == "/boom"
    assert access[0].request_id == "crash-1"
