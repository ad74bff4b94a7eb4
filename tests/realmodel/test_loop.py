"""A short MRPO loop end to end on SmolLM2 through the server: one round on the generic
checklist, small budgets. The 135M model writes poor rewrites and judges harshly; what must
hold is the machinery: every stage ran on the real model's structured answers (nothing
degraded), and what the client gets is an answer, not the loop's scaffolding."""

from __future__ import annotations

from loops.answer import clean_answer, scaffolding

QUERY = "Write a two-sentence note thanking a neighbour for watering my plants."


def test_a_one_round_loop_runs_every_stage_and_answers_without_scaffolding(server, converted):
    # The request names the model by its folder's path, as a user of REDRAFT_MODEL=<folder>
    # does: the loop's hidden calls must reach the same model.
    with server.client() as client:
        reply = client.chat.completions.create(
            model=str(converted.folder), messages=[{"role": "user", "content": QUERY}],
            max_tokens=40, temperature=0,
            extra_body={"reflection": {"max_rounds": 1, "memory": False,
                                       "checklist": "generic:general-en"}})
    answer = reply.choices[0].message.content
    loop = reply.model_extra["reflection"]

    assert answer.strip()
    assert clean_answer(answer) == answer
    record = server.admin(f"/admin/loops/{loop['loop_id']}")
    hidden = "\n".join(str(c.get("reflection") or "") for c in record["candidates"])
    assert scaffolding(answer, allowed=QUERY, hidden=hidden) == []

    assert loop["stop_reason"] in ("max_rounds", "threshold")  # not "degraded", not "budget"
    assert record["stop_reason"] == loop["stop_reason"]
    assert record["error"] is None
    stages = {stage: u["calls"] for stage, u in loop["usage"].items()}
    assert stages["draft"] == 1 and stages["evaluate"] >= 1
    scored = [c for c in record["candidates"] if c.get("total_score") is not None]
    assert len(scored) == len(loop["scores"]) >= 1
    if loop["stop_reason"] == "max_rounds":  # the draft fell short: a round was run
        assert loop["rounds"] == 1 and stages["rewrite"] == 1
        rewrite = record["candidates"][-1]
        assert rewrite["kind"] == "rewrite" and rewrite["reflection"]["items"]
        assert len(scored) == 2  # the rewrite was judged too
    usage = reply.usage
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert usage.completion_tokens == sum(u["completion_tokens"] for u in loop["usage"].values())
