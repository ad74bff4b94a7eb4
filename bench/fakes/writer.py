"""A fake writer model: answers redraft's hidden calls the way a competent model would.

The fake upstream (`python -m bench.fakes.upstream --responder writer`) calls a
`WriterResponder` for every chat request. It recognises each hidden call by the shape of the
JSON schema in `response_format` (open, axial, selective and fused coding; the joint and
per-dimension judge; the loop's fused assessment; the reflection; the holistic judge) or,
for plain-text calls, by the prompt (a rewrite starts with the rewrite template's first
words; anything else is a draft). Answers are deterministic and cost O(prompt length) to build.

The judge's score is a function of the text alone: `draft_score + step * r`, capped at 1,
where r counts the revision marks (`REVISION_MARK`) in the text. Each rewrite appends one
sentence carrying the next mark, so every round scores higher and a loop reaches its
threshold after ceil((threshold - draft_score) / step) rounds (2 with the defaults and 0.9).
Every dimension gets the smallest integer on its scale whose normalised value is at least
that score, so the loop's normalised score is never below it.

It imports nothing of ours, so the fake upstream can load it when run by path.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

REVISION_MARK = "(rev. "
REWRITE_OPENING = "Request:\n"  # `loops/prompts/rewrite_frame.txt`
DRAFT_HEADING = "\n\nDraft answer:\n"
TASK_HEADINGS = ("\n\nThe draft does not meet", "\n\nWhat to change:", "\n\nEarlier rounds:",
                 "\n\nLessons from similar tasks", "\n\nWrite the answer again")

_TARGET = '<turn role="user" target="true">\n'
_DIM_HEADER = re.compile(r"### (.+?) \(scale (-?\d+)-(-?\d+), weight")
_N_DIMS = re.compile(r"between (\d+) and (\d+) dimensions")
_N_BANDS = re.compile(r"between (\d+) and (\d+) band")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


@dataclass(frozen=True, slots=True)
class _Dim:
    name: str
    description: str
    rationale: str
    candidates: tuple[tuple[str, str], ...]  # (candidate name, aspect) merged into it


_EN = (
    _Dim("Task fulfilment", "Whether the response does everything the request asks.",
         "A response that misses part of the task fails the reader whatever its style.",
         (("Answers the request", "task_goal"), ("Completeness", "task_goal"))),
    _Dim("Structure and flow", "Whether ideas come in a logical order with clear transitions.",
         "The reader must follow the argument without rereading.",
         (("Logical order", "format"), ("Paragraphing", "format"))),
    _Dim("Audience fit", "Whether content and register suit the intended reader.",
         "The request implies a reader whose needs decide what to include.",
         (("Reader needs", "audience"), ("Register", "audience"))),
    _Dim("Concrete detail", "Whether claims are backed by specific examples, figures or steps.",
         "Specifics make the answer usable rather than generic.",
         (("Specific examples", "content_risk"), ("Supporting evidence", "content_risk"))),
    _Dim("Style and tone", "Whether the prose is clear, concise and in a fitting tone.",
         "Tone shapes how the reader receives the content.",
         (("Tone", "style"), ("Concision", "style"))),
    _Dim("Genre conventions", "Whether the response follows the conventions of its genre.",
         "Readers expect the form the request names.", (("Genre conventions", "genre"),)),
    _Dim("Format and length", "Whether the format and length match what was asked.",
         "Explicit and implicit format constraints are part of the task.",
         (("Length constraint", "format"), ("Formatting", "format"))),
    _Dim("Accuracy and consistency", "Whether statements are correct and do not contradict.",
         "Errors undermine trust in everything else.",
         (("Factual accuracy", "content_risk"), ("Internal consistency", "content_risk"))),
)
_ZH = (
    _Dim("任务完成度", "回答是否完成了请求的全部要求。", "遗漏任务的任何部分都会让读者失望。",
         (("回应请求", "task_goal"), ("完整性", "task_goal"))),
    _Dim("结构与连贯", "观点是否按逻辑顺序展开、过渡清楚。", "读者应当无需重读即可跟上思路。",
         (("逻辑顺序", "format"), ("段落划分", "format"))),
    _Dim("读者适配", "内容与语体是否适合目标读者。", "请求隐含的读者决定了应写什么。",
         (("读者需求", "audience"), ("语体", "audience"))),
    _Dim("具体细节", "论点是否有具体例子、数据或步骤支撑。", "具体内容让回答可用而不空泛。",
         (("具体例子", "content_risk"), ("支撑证据", "content_risk"))),
    _Dim("文风与语气", "文字是否清晰简洁、语气得当。", "语气影响读者如何接受内容。",
         (("语气", "style"), ("简洁", "style"))),
    _Dim("体裁规范", "回答是否符合其体裁的惯例。", "读者期待请求所指的体裁形式。",
         (("体裁规范", "genre"),)),
    _Dim("格式与篇幅", "格式与篇幅是否符合要求。", "明示与隐含的格式约束都是任务的一部分。",
         (("篇幅限制", "format"), ("排版", "format"))),
    _Dim("准确与一致", "陈述是否正确且前后一致。", "错误会削弱读者对全文的信任。",
         (("事实准确", "content_risk"), ("前后一致", "content_risk"))),
)
_LEVELS_EN = {
    "severe": "Severely missing: no passage of the response shows {x}.",
    "largely": "Largely missing: {x} appears once, in passing, without support.",
    "partly": "Partly satisfied: {x} is present in some paragraphs but missing or wrong in others.",
    "mostly": "Mostly satisfied: {x} is present throughout, with one or two visible lapses.",
    "fully": "Fully satisfied: {x} is present in every paragraph, with concrete support.",
}
_LEVELS_ZH = {
    "severe": "严重缺失：回答中没有任何段落体现{x}。",
    "largely": "大部分缺失：{x}只被顺带提及一次，缺乏支撑。",
    "partly": "部分满足：部分段落体现了{x}，其他段落缺失或有误。",
    "mostly": "基本满足：全文体现了{x}，仅有一两处明显疏漏。",
    "fully": "完全满足：每个段落都体现了{x}，并有具体支撑。",
}
_LADDERS = {2: ("severe", "fully"), 3: ("severe", "partly", "fully"),
            4: ("severe", "partly", "mostly", "fully"),
            5: ("severe", "largely", "partly", "mostly", "fully")}


class WriterResponder:
    """`responder(request_body, choice_index)` -> the reply's content, or None for the default."""

    def __init__(self, *, draft_score: float = 0.5, step: float = 0.2) -> None:
        self.draft_score = draft_score
        self.step = step
        self.counts: Counter[str] = Counter()  # kind of call -> calls answered
        self._kinds: dict[tuple[Any, ...], str | None] = {}  # schema shape -> kind

    def reset(self) -> None:
        self.counts.clear()

    def __call__(self, req: dict[str, Any], index: int = 0) -> str | None:
        fmt = req.get("response_format") or {}
        messages = req.get("messages") or []
        if fmt.get("type") == "json_schema":
            schema = (fmt.get("json_schema") or {}).get("schema") or {}
            kind = self.kind(schema)
            self.counts[kind or "unknown"] += 1
            if kind is None:
                return None
            # The task is the first user turn; later ones are retry notes.
            prompt = next((_content(m) for m in messages if m.get("role") == "user"), "")
            answer = self._handlers[kind](self, schema, prompt)
            if "checks" in schema["properties"]:  # the agents' checks: the pre-pass finds them
                answer["checks"] = []
            return orjson.dumps(answer).decode()
        if fmt.get("type") not in (None, "text"):
            return None
        prompt = next((_content(m) for m in reversed(messages) if m.get("role") == "user"), "")
        if prompt.startswith(REWRITE_OPENING) and DRAFT_HEADING in prompt:
            self.counts["rewrite"] += 1
            return self.rewrite(prompt, messages)
        self.counts["draft"] += 1
        return draft(prompt, index)

    # -- recognising a call -------------------------------------------------------------------
    def kind(self, schema: dict[str, Any]) -> str | None:
        """Which hidden call a schema belongs to; computed once per schema shape."""
        props = schema.get("properties")
        if not isinstance(props, dict):
            return None
        # Inline schemas (no $defs) differ below the top level: axial vs selective coding.
        items = [sorted(_deref(schema, (p.get("items") or {})).get("properties") or ())
                 for p in props.values() if isinstance(p, dict) and p.get("type") == "array"]
        key = (*sorted(props), "|", *sorted(schema.get("$defs") or ()), "|", *map(tuple, items))
        if key not in self._kinds:
            self._kinds[key] = _classify(schema, frozenset(props) - {"checks"})
        return self._kinds[key]

    # -- judging ------------------------------------------------------------------------------
    def quality(self, text: str) -> float:
        return min(1.0, max(0.0, self.draft_score + self.step * text.count(REVISION_MARK)))

    def score(self, text: str, low: int, high: int) -> int:
        return low + math.ceil(self.quality(text) * (high - low) - 1e-9)

    def _joint(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        text = _response(prompt)
        dims = schema["properties"]["scores"].get("properties") or {}
        return {"scores": {name: {"evidence": _quote(text),
                                  "score": self.score(text, *_scale(spec))}
                           for name, spec in dims.items()}}

    def _dimension(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        text = _response(prompt)
        return {"evidence": _quote(text), "score": self.score(text, *_scale(schema))}

    def _assess(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        text = _response(prompt)
        dims = schema["properties"]["scores"].get("properties") or {}
        scores = {name: {"evidence": _quote(text), "score": self.score(text, *_scale(spec))}
                  for name, spec in dims.items()}
        return {"scores": scores, **self._critique(text, list(dims), prompt)}

    def _holistic(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        text = _response(prompt)
        critique = self._critique(text, ["overall quality"], prompt)
        return {"critique": critique["summary"], "actions": critique["items"][0]["actions"],
                "score": self.score(text, *_scale(schema))}

    def _reflect(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        text = _response(prompt)
        return self._critique(text, [d[0] for d in _rendered_dimensions(prompt)], prompt)

    def _critique(self, text: str, names: list[str], prompt: str) -> dict[str, Any]:
        """Two weak dimensions, a different pair each round (every score is level)."""
        revisions = text.count(REVISION_MARK)
        picked = [names[(revisions + j) % len(names)] for j in range(min(2, len(names)))]
        topic = _topic(_target(prompt))
        if _is_zh(prompt):
            items = [{"dimension": n, "evidence": _quote(text),
                      "objective": f"让{n}在每一段都可见。",
                      "actions": [f"补充一句与“{topic}”相关、体现{n}的具体细节。",
                                  f"删去与{n}无关的句子。"]} for n in picked]
            return {"summary": "补充具体细节，删去空泛内容。", "items": items}
        items = [{"dimension": n, "evidence": _quote(text),
                  "objective": f"Make {n.lower()} observable in every paragraph.",
                  "actions": [f"Add one sentence on {n.lower()} with a concrete detail about "
                              f"{topic}.", f"Cut any sentence that does not serve {n.lower()}."]}
                 for n in picked]
        return {"summary": "Add concrete detail where the answer is generic and cut filler.",
                "items": items}

    # -- writing ------------------------------------------------------------------------------
    def rewrite(self, prompt: str, messages: list[dict[str, Any]]) -> str:
        """The draft the revision request quotes plus one sentence that carries the next
        revision mark (each round's sentence its own words: a rewrite saying a sentence
        twice is `padded` and never the answer)."""
        request, current, task = revision_parts(prompt)
        reflection = _between(task, "What to change:\n", "\n\n")
        dim = next((line[2:].split(":", 1)[0] for line in reflection.splitlines()
                    if line.startswith("- ")), "the weakest point")
        revision = current.count(REVISION_MARK) + 1
        topic = _topic(request)[:60]  # Chinese has no spaces: a topic of 10 words is a page
        if _is_zh(request + current) or any(_is_zh(_content(m)) for m in messages[:-1]):
            added = (f"关于{dim}：第{revision}版补充了与“{topic}”相关的具体细节"
                     f"{REVISION_MARK}{revision})。")
        else:
            added = (f"On {dim.lower()}: version {revision} adds a concrete detail about "
                     f"{topic} {REVISION_MARK}{revision}).")
        return f"{current}\n\n{added}" if current else added

    # -- coding (checklist agents) --------------------------------------------------------
    def _open(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        return {"candidates": _candidates(prompt)}

    def _axial(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        table = _table(prompt)
        dims = [{"name": d.name, "description": d.description, "rationale": d.rationale,
                 "merged_from": [c for c, _ in d.candidates]}
                for d in _pick(table, _bounds(_N_DIMS, prompt, 4, 8))]
        return {"dimensions": dims}

    def _selective(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        given = _listed_dimensions(prompt)
        dims = given or [{"name": d.name, "description": d.description,
                          "rationale": d.rationale} for d in _pick(_table(prompt), (4, 8))]
        bands = _bounds(_N_BANDS, prompt, 3, 5)
        zh = _is_zh(prompt)
        return {"dimensions": [{
            "name": d["name"], "description": d.get("description") or d["name"],
            "rationale": d.get("rationale") or "", "bands": _bands(d["name"], i, bands, zh),
        } for i, d in enumerate(dims)]}

    def _fused(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        zh = _is_zh(prompt)
        bands = _bounds(_N_BANDS, prompt, 3, 5)
        dims = [{"name": d.name, "description": d.description, "rationale": d.rationale,
                 "bands": _bands(d.name, i, bands, zh)}
                for i, d in enumerate(_pick(_table(prompt), _bounds(_N_DIMS, prompt, 4, 8)))]
        return {"candidates": _candidates(prompt), "dimensions": dims}

    # -- the memory bank's calls -----------------------------------------------------------
    def _task_key(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        return {"genre": _topic(_target(prompt), 8), "audience": "general readers",
                "constraints": ["clear structure"]}

    def _select(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        # Keeps the first lesson listed, the nearest by the bank's ranking.
        if "\n[1] task:" not in prompt and not prompt.lstrip().startswith("[1] task:"):
            return {"selected": []}
        return {"selected": [{"number": 1, "reason": "the same kind of task"}]}

    def _summarise(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        task = _between(prompt, "<task kind>\n", "\n</task kind>") or "this task"
        return {"experience": f"For {task}: the first draft stayed generic; adding a concrete "
                              "example and naming the main constraint raised task fulfilment "
                              "and concrete detail by two bands. Start with the answer, then "
                              "the supporting specifics."}

    _handlers: dict[str, Callable[[WriterResponder, dict[str, Any], str], dict[str, Any]]] = {
        "open_coding": _open, "axial_coding": _axial, "selective_coding": _selective,
        "fused_coding": _fused, "judge_joint": _joint, "judge_dimension": _dimension,
        "assess": _assess, "reflect": _reflect, "task_key": _task_key, "select": _select,
        "summarise": _summarise, "holistic": _holistic,
    }


def _classify(schema: dict[str, Any], props: frozenset[str]) -> str | None:
    if props == {"candidates"}:
        return "open_coding"
    if props == {"candidates", "dimensions"}:
        return "fused_coding"
    if props == {"dimensions"}:
        item = _deref(schema, (schema["properties"]["dimensions"].get("items") or {}))
        return "axial_coding" if "merged_from" in (item.get("properties") or {}) else \
            "selective_coding"
    if props == {"scores"}:
        return "judge_joint"
    if props == {"evidence", "score"}:
        return "judge_dimension"
    if props == {"scores", "summary", "items"}:
        return "assess"
    if props == {"summary", "items"}:
        return "reflect"
    if props == {"critique", "actions", "score"}:
        return "holistic"
    if props == {"genre", "audience", "constraints"}:
        return "task_key"
    if props == {"selected"}:
        return "select"
    if props == {"experience"}:
        return "summarise"
    return None


def _rendered_dimensions(prompt: str) -> list[tuple[str, int, int]]:
    """(name, low, high) of each "### name (scale low-high, weight w)" line of a prompt."""
    # str.find per header: a MULTILINE "^" regex tries every position and costs 10x more.
    found, i = [], prompt.find("\n### ")
    while i >= 0:
        end = prompt.find("\n", i + 1)
        m = _DIM_HEADER.match(prompt, i + 1, len(prompt) if end < 0 else end)
        if m:
            found.append((m[1], int(m[2]), int(m[3])))
        i = prompt.find("\n### ", i + 1)
    return found


def _deref(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return node
    target: Any = root
    for part in ref.lstrip("#/").split("/"):
        target = target.get(part, {}) if isinstance(target, dict) else {}
    return target if isinstance(target, dict) else {}


def draft(prompt: str, index: int = 0) -> str:
    """A first answer of a few sentences (variants differ by a prefix when n > 1)."""
    topic = _topic(prompt)
    prefix = f"Variant {index}: " if index else ""
    if _CJK.search(prompt[:400]):
        return (f"{prefix}关于“{topic}”：先给出简短的回答。本回复直接说明要点，给出一个具体例子，"
                "并指出最重要的限制。最后为读者提供明确的下一步。")
    return (f"{prefix}{topic[:1].upper()}{topic[1:]}: the short answer comes first. This reply "
            "states the main point plainly, gives one concrete example and names the most "
            "important constraint. It ends with a clear next step for the reader.")


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def revision_parts(prompt: str) -> tuple[str, str, str]:
    """A revision request's (request, quoted draft, task), as `loops.rewrite` frames it."""
    request, rest = prompt[len(REWRITE_OPENING):].split(DRAFT_HEADING, 1)
    cut = min((i for h in TASK_HEADINGS if (i := rest.rfind(h)) >= 0), default=len(rest))
    return request.strip(), rest[:cut].strip(), rest[cut:]


def _between(text: str, start: str, end: str) -> str:
    i = text.find(start)
    if i < 0:
        return ""
    i += len(start)
    j = text.find(end, i)
    return text[i:] if j < 0 else text[i:j]


def _target(prompt: str) -> str:
    """The target user turn inside a rendered conversation (the prompt itself if none)."""
    return _between(prompt, _TARGET, "\n</turn>") or prompt


def _response(prompt: str) -> str:
    i = prompt.find("</conversation>")
    return _between(prompt[max(i, 0):], "<response>\n", "\n</response>")


def _topic(text: str, words: int = 10) -> str:
    topic = " ".join(text[:400].split()[:words]).rstrip(".,;:!?。，；：！？")
    return topic or "the request"


def _quote(text: str, limit: int = 160) -> str:
    """A verbatim piece of the response: its first sentence, at most `limit` characters."""
    head = text.strip()[:limit]
    end = max(head.find(". "), head.find("。"))
    return head[: end + 1] if end > 0 else head or "(the response is empty)"


def _is_zh(prompt: str) -> bool:
    return "简体中文" in prompt


def _table(prompt: str) -> tuple[_Dim, ...]:
    return _ZH if _is_zh(prompt) else _EN


def _bounds(pattern: re.Pattern[str], prompt: str, low: int, high: int) -> tuple[int, int]:
    m = pattern.search(prompt)
    return (int(m[1]), int(m[2])) if m else (low, high)


def _pick(table: tuple[_Dim, ...], bounds: tuple[int, int]) -> list[_Dim]:
    """Six dimensions when the bounds allow; synthetic extras if they ask for more than eight."""
    n = max(bounds[0], min(6, bounds[1]))
    extra = [_Dim(f"Aspect {k}", f"Aspect {k} of the request.", "Asked for by the bounds.",
                  ((f"Aspect {k}", "other"),)) for k in range(len(table) + 1, n + 1)]
    return [*table, *extra][:n]


def _candidates(prompt: str) -> list[dict[str, str]]:
    topic = _topic(_target(prompt))
    if _is_zh(prompt):
        return [{"name": name, "aspect": aspect, "reason": f"请求“{topic}”需要{name}。"}
                for d in _ZH for name, aspect in d.candidates]
    return [{"name": name, "aspect": aspect,
             "reason": f"A response to '{topic}' needs {name.lower()}."}
            for d in _EN for name, aspect in d.candidates]


def _listed_dimensions(prompt: str) -> list[dict[str, Any]]:
    """The dimensions axial coding passed to selective coding (a JSON list in the prompt)."""
    start = prompt.find("\n[", prompt.find("</conversation>") + 1)
    end = prompt.find("\n]", start + 1)
    if start < 0 or end < 0:
        return []
    try:
        dims = json.loads(prompt[start + 1:end + 2])
    except ValueError:
        return []
    return [d for d in dims if isinstance(d, dict) and isinstance(d.get("name"), str)]


def _bands(name: str, position: int, bounds: tuple[int, int], zh: bool) -> list[str]:
    """3, 4 or 5 bands by position (an adaptive count), within the prompt's bounds."""
    count = max(bounds[0], min(bounds[1], 3 + position % 3))
    ladder = _LADDERS.get(count) or _LADDERS[5]
    levels = _LEVELS_ZH if zh else _LEVELS_EN
    subject = name if zh else name.lower()
    out = [levels[level].format(x=subject) for level in ladder]
    return out + [f"{out[-1]} ({k})" for k in range(len(out), count)]


def _scale(spec: dict[str, Any]) -> tuple[int, int]:
    score = (spec.get("properties") or {}).get("score") or {}
    low = int(score.get("minimum", 1))
    return low, int(score.get("maximum", low + 9))
