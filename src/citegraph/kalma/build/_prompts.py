"""Prompts of KaLMA's evolutionary question generation (Appendix A.3, Tables 9-12).

Version ``kalma-build-v1`` (``kalma/prompts/build.json``). Each step is a chat prompt: the
table's instruction as the system message, its one demonstration as a user/assistant turn, then
the target in the demonstration's format:

- annotate (round 1, Table 9): ``sentence: ...`` + ``knowledge: {qid: Q.., name: .., ...}`` lines;
  the model returns the sentence labelled with ``[qid: Q.., relation: value]`` citations.
- extend (rounds 2-R, Table 10): ``answer: <labelled paragraph>`` + ``knowledge: {qid, name,
  relation: value}``; the model returns the paragraph with one more sentence.
- general / specific question (Tables 11 / 12): ``Paragraph: <plain paragraph>``.

People are shown by their display id (``Entity.display_id``: a QID, or the short id of an IRI
id such as ``ex:MarieCurie``), which the paper parser reads back to the full id.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from citegraph.kalma._prompt_files import prompt_file
from citegraph.kg import Subgraph, Triple
from citegraph.models import ChatMessage

BUILD_PROMPTS = "kalma-build-v1"
QuestionKind = Literal["general", "specific"]


def _prompts() -> dict[str, Any]:
    return prompt_file("build.json")


def knowledge_line(graph: Subgraph) -> str:
    """A person's facts as Table 9 writes them: ``{qid: Q1, name: X, relation: value, ...}``."""
    parts = [f"qid: {graph.center.display_id}", f"name: {graph.center.name}"]
    parts += [f"{t.relation}: {t.value}" for t in graph.triples if t.relation != "name"]
    return "{" + ", ".join(parts) + "}"


def fact_line(triple: Triple, name: str, shown_id: str | None = None) -> str:
    """One fact as Table 10 writes it: ``{qid: Q1, name: X, relation: value}``; ``shown_id``
    replaces the subject id (the short id of an IRI id)."""
    subject = shown_id or triple.subject
    return f"{{qid: {subject}, name: {name}, {triple.relation}: {triple.value}}}"


def _chat(step: str, demo_user: str, demo_answer: str, target: str) -> list[ChatMessage]:
    return [
        ChatMessage(role="system", content=_prompts()[step]["instruction"]),
        ChatMessage(role="user", content=demo_user),
        ChatMessage(role="assistant", content=demo_answer),
        ChatMessage(role="user", content=target),
    ]


def annotate_messages(sentence: str, pool: Sequence[Subgraph]) -> list[ChatMessage]:
    """Round 1 (Table 9): label the seed paragraph with facts of the knowledge pool."""
    demo = _prompts()["annotate"]["demo"]
    demo_user = f"sentence: {demo['sentence']}\nknowledge: " + "\n".join(demo["knowledge"])
    target = f"sentence: {sentence}\nknowledge: " + "\n".join(knowledge_line(g) for g in pool)
    return _chat("annotate", demo_user, demo["answer"], target)


def extend_messages(
    paragraph: str, fact: Triple, name: str, shown_id: str | None = None
) -> list[ChatMessage]:
    """Rounds 2-R (Table 10): add one sentence carrying ``fact`` to the labelled paragraph
    (``shown_id``: the subject's display id, when it is not the id itself)."""
    demo = _prompts()["extend"]["demo"]
    demo_user = f"answer: {demo['answer']}\nknowledge: {demo['knowledge']}"
    target = f"answer: {paragraph}\nknowledge: {fact_line(fact, name, shown_id)}"
    return _chat("extend", demo_user, demo["output"], target)


def question_messages(paragraph: str, kind: QuestionKind) -> list[ChatMessage]:
    """The general (Table 11) or specific (Table 12) question whose answer is ``paragraph``."""
    step = f"{kind}_question"
    demo = _prompts()[step]["demo"]
    return _chat(
        step, f"Paragraph: {demo['paragraph']}", demo["question"], f"Paragraph: {paragraph}"
    )


_PREFIX = re.compile(
    r"^\s*(?:generated\s+(?:answer|question)|answer|question|paragraph)\s*:\s*", re.IGNORECASE
)


def clean_paragraph(text: str) -> str:
    """The model's paragraph without an echoed ``Generated Answer:`` label or extra lines."""
    text = _PREFIX.sub("", text.strip())
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " ".join(lines)


def clean_question(text: str) -> str:
    """The first question the model wrote, without labels or quotes."""
    for line in text.splitlines():
        line = _PREFIX.sub("", line.strip()).strip().strip('"“”').strip()
        if line:
            end = line.find("?")
            return line[: end + 1] if end >= 0 else line
    return ""
