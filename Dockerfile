# redraft API server. The GPU (vLLM) runs in its own container: see compose.yaml.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /srv/redraft
COPY pyproject.toml README.md constraints.txt alembic.ini ./
COPY app ./app
COPY generation ./generation
COPY store ./store
COPY migrations ./migrations
COPY rubrics ./rubrics
COPY loops ./loops
COPY memory ./memory
COPY training ./training
COPY evals ./evals
RUN pip install ".[postgres]" -c constraints.txt

RUN useradd --create-home --uid 10001 redraft && mkdir -p /data && chown redraft /data
USER redraft

ENV REDRAFT_DATA_DIR=/data \
    REDRAFT_SERVER_HOST=0.0.0.0 \
    REDRAFT_SERVER_PORT=8000
EXPOSE 8000
VOLUME ["/data"]
HEALTHCHECK --interval=15s --timeout=4s --start-period=20s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=3)"
STOPSIGNAL SIGTERM
CMD ["redraft", "serve"]
