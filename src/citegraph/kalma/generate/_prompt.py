"""The answer-generation prompt (KaLMA §3.3, Table 13): versioned templates and KG flattening.

Two versions ship, and every run records which one it used:

- ``kalma-table13-v1`` (default, the paper): the instruction and one-shot demonstration of
  Table 13, the knowledge as one ``{name: ..., relation: value, ..., qid: Q..}`` line per
  subgraph, then the question.
- ``kalma-code-v1`` (the authors' scripts): the demonstration of
  ``answer_question_{simple,complex}_prompt.json`` (one per split) and the knowledge flattened
  with Python's ``str(list_of_dicts)`` and four string replacements, which leaves mixed quotes when
  a value holds an apostrophe (visible in the paper's Table 19). Each entity keeps only the first
  value of each relation, as the authors' Wikidata retrieval did.

Entities are shown by their display id (``Entity.display_id``): a QID as it is; an IRI id by its
short id (``ex:MarieCurie``, from the KG's prefixes, or a compact local name; graphs without
one get :func:`citegraph.kg.with_short_ids` over the prompt's centres), which the parsers map
back to the full id.

Both are chat prompts: system instruction, the demonstration as a user/assistant turn, then the
question as the final user turn (the authors' ``turbo_answer_questions.py`` layout).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from citegraph.errors import ConfigError
from citegraph.io import encodable
from citegraph.kalma._prompt_files import prompt_file
from citegraph.kg import Subgraph, with_short_ids
from citegraph.models import ChatMessage

PromptVersion = Literal["kalma-table13-v1", "kalma-code-v1"]
PROMPT_VERSIONS: tuple[str, ...] = ("kalma-table13-v1", "kalma-code-v1")
DEFAULT_PROMPT: PromptVersion = "kalma-table13-v1"


def _templates() -> dict[str, Any]:
    return prompt_file("answer.json")


def flatten_graph_paper(graph: Subgraph) -> str:
    """One subgraph as a Table 13 line: ``{name: X, relation: value, ..., qid: Q1}``.

    Every triple is kept (a relation with several values appears several times); ``name`` comes
    first and ``qid`` last, as in the paper. The ``qid`` is the centre's display id.
    """
    parts = [f"name: {graph.center.name}"]
    parts += [f"{t.relation}: {t.value}" for t in graph.triples if t.relation != "name"]
    parts.append(f"qid: {graph.center.display_id}")
    return "{" + ", ".join(parts) + "}"


def flatten_kg_reference(dicts: Sequence[Mapping[str, str]]) -> str:
    """The authors' ``KGstr``: ``str(list_of_dicts)`` with their four replacements."""
    text = str([dict(d) for d in dicts])
    return text.replace("{'", "{").replace("': '", ": ").replace("', '", ", ").replace("'}", "}")


def flatten_kg(graphs: Sequence[Subgraph], version: str = DEFAULT_PROMPT) -> str:
    """The knowledge as the prompt ``version`` writes it (centres by their display ids)."""
    _check(version)
    graphs = with_short_ids(graphs)
    if version == "kalma-code-v1":
        return flatten_kg_reference([_shown_dict(g) for g in graphs])
    return "\n".join(flatten_graph_paper(g) for g in graphs)


def _shown_dict(graph: Subgraph) -> dict[str, str]:
    """:meth:`Subgraph.as_dict` with the centre's display id as ``qid``."""
    out = graph.as_dict()
    out["qid"] = graph.center.display_id
    return out


def _user_turn(knowledge: str, question: str, version: str) -> str:
    if version == "kalma-code-v1":
        return "Considering the information: " + knowledge + ", " + question
    return "Considering the information:\n" + knowledge + "\n" + question


def build_messages(
    question: str,
    graphs: Sequence[Subgraph],
    *,
    version: str = DEFAULT_PROMPT,
    split: Literal["general", "specific"] = "specific",
) -> list[ChatMessage]:
    """The chat messages asking a model for an attributed answer to ``question``.

    Args:
        question: The question.
        graphs: The KG context (one subgraph per retrieved entity).
        version: ``kalma-table13-v1`` (paper) or ``kalma-code-v1`` (the authors' scripts).
        split: Picks the authors' demonstration for ``kalma-code-v1`` (the paper has one).

    Every lone surrogate in the question or the graphs (text UTF-8 cannot encode, which no
    model client, tokenizer or server takes) is written as U+FFFD.

    Raises:
        ConfigError: unknown version.
    """
    _check(version)
    template = _templates()[version]
    if version == "kalma-code-v1":
        demo = template["demo"][split]
        demo_user = _user_turn(flatten_kg_reference(demo["graphs"]), demo["question"], version)
    else:
        demo = template["demo"]
        demo_user = _user_turn("\n".join(demo["knowledge_lines"]), demo["question"], version)
    # no model takes a lone surrogate (a KG value or question may hold one): U+FFFD instead
    asked = encodable(_user_turn(flatten_kg(graphs, version), question, version))
    return [
        ChatMessage(role="system", content=template["system"]),
        ChatMessage(role="user", content=demo_user),
        ChatMessage(role="assistant", content=demo["answer"]),
        ChatMessage(role="user", content=asked),
    ]


def _check(version: str) -> None:
    if version not in PROMPT_VERSIONS:
        raise ConfigError(
            f"unknown prompt version {version!r}; choose one of {', '.join(PROMPT_VERSIONS)}"
        )
