"""``citegraph ask``: answer one question with citations to KG facts, offline by default.

Sampling options left unset take the model's defaults (:func:`generate_config_for`, as from
Python: the embedded ``local`` model answers in at most 128 tokens, with stop sequences and a
repetition penalty). While a local model generates, the status line shows tokens so far and
tokens/s.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from citegraph.cli._console import console, err_console, reports_errors
from citegraph.cli._exit import MODEL
from citegraph.cli._options import (
    contact_option,
    data_dir_option,
    deadline_options,
    device_options,
    kg_option,
    kg_options_from,
    kg_reading_options,
)
from citegraph.cli._streams import literal, markup_escaped, shown, shown_json
from citegraph.io import encodable
from citegraph.kalma import AskResult, ask_async
from citegraph.kalma.constrain import CitationsMode
from citegraph.kalma.generate import PROMPT_VERSIONS
from citegraph.kg import KnowledgeGraph, open_kg
from citegraph.models import (
    ChatModel,
    GenerateConfig,
    GenerationProgress,
    ProgressCallback,
    chat_model,
    parse_model_spec,
)
from citegraph.models.chat import generate_config_for
from citegraph.runs import Runtime


@click.command("ask")
@click.argument("question")
@kg_option
@kg_reading_options
@click.option(
    "--model",
    default="local",
    show_default=True,
    help="provider/model: openai/..., vllm/..., ollama/..., llamacpp/..., hf/..., local, mock.",
)
@click.option("--base-url", default=None, help="Server URL for OpenAI-compatible providers.")
@contact_option
@click.option(
    "--prompt",
    type=click.Choice(PROMPT_VERSIONS),
    default=PROMPT_VERSIONS[0],
    show_default=True,
    help="Prompt version.",
)
@click.option("--temperature", type=float, default=None, help="Default: 0.5.")
@click.option("--max-tokens", type=int, default=None, help="Default: 128 for local, else 512.")
@click.option(
    "--repetition-penalty",
    type=float,
    default=None,
    help="Penalise tokens the reply repeats (> 1; local models only). Default: 1.3 for local.",
)
@click.option(
    "--stop",
    multiple=True,
    help="Stop sequence (repeatable). Default: the local model's (blank lines, a new turn).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--citations",
    type=click.Choice(["constrained", "free"]),
    default="constrained",
    show_default=True,
    help="constrained: a grammar made from the retrieved triples lets a citation name only "
    "them, or [NA] (the text stays free); free: the model cites as it likes (the paper's runs).",
)
@data_dir_option
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")
@device_options
@deadline_options
@reports_errors
def ask_command(
    question: str,
    kg_spec: str,
    model: str,
    base_url: str | None,
    contact: str | None,
    prompt: str,
    temperature: float | None,
    max_tokens: int | None,
    repetition_penalty: float | None,
    stop: tuple[str, ...],
    seed: int,
    citations: CitationsMode,
    data_dir: Path | None,
    as_json: bool,
    device: str,
    dtype: str,
    timeout: float | None,
    total_timeout: float | None,
    max_response_mb: float | None,
    **kg_reading: Any,
) -> None:
    """Answer QUESTION citing KG facts ([NA] where the KG lacks the knowledge).

    Over your own KG (--kg kg.ttl or sparql+<url>), --label-predicate and --prefix say how it
    is read, as for kalma score.

    Exits 3, saying why on stderr, when the model gave no answer (an unreachable server, a
    failed generation)."""
    if encodable(question) != question:  # sys.argv holds bytes that are not UTF-8 as surrogates
        raise click.BadParameter(
            "is not UTF-8 text (the shell passed bytes in another encoding); give the question "
            "as UTF-8",
            param_hint="QUESTION",
        )
    parse_model_spec(model)  # a bad spec fails before the KG opens
    kg_options = kg_options_from(kg_reading)
    with err_console.status(literal(f"Opening KG {kg_spec} and model {model}...")):
        opened = open_kg(kg_spec, data_dir=data_dir, contact=contact, options=kg_options)
        runtime = Runtime(
            device=device,
            dtype=dtype,
            timeout=timeout,
            total_timeout=total_timeout,
            max_response_mb=max_response_mb,
            cache=False,  # one question: no response cache
        )
        chat = chat_model(model, runtime.model_options().serving(base_url))
    config = generate_config_for(
        chat,
        {
            "temperature": temperature,
            "max_tokens": max_tokens,
            "repetition_penalty": repetition_penalty,
            "stop": stop or None,
            "seed": seed,
        },
    )
    with err_console.status("Retrieving and generating...") as status:
        on_progress = progress_line(lambda line: status.update(literal(line)))
        result = asyncio.run(
            _ask(question, opened.kg, chat, config, prompt, on_progress, citations)
        )
    if as_json:
        click.echo(shown_json(result.model_dump(mode="json")))
        _say_no_answer(result)
    else:
        show_answer(result)
    if result.answer.error:  # no answer came (said on stderr): exit 3, see _exit
        sys.exit(MODEL)


def _say_no_answer(result: AskResult) -> None:
    """``No answer: <why>`` on stderr when the model gave no answer."""
    if result.answer.error:
        err_console.print(
            f"[bold red]No answer:[/] {markup_escaped(result.answer.error)}",
            markup=True,
            highlight=False,
            soft_wrap=True,
        )


def progress_line(show: Callable[[str], None]) -> ProgressCallback:
    """A progress callback that passes ``show`` one line: tokens so far of the most, the prompt's
    tokens and time, and the decoding rate (for the spinner of ``ask`` and ``demo``)."""

    def report(p: GenerationProgress) -> None:
        rate = p.decode_tokens_per_s
        speed = f", {rate:.1f} tokens/s" if rate is not None else ""
        show(
            f"Generating: {p.tokens}/{p.max_tokens} tokens{speed} "
            f"(prompt {p.prompt_tokens} tokens read in {p.prefill_s:.1f} s; {p.elapsed_s:.0f} s)"
        )

    return report


async def _ask(
    question: str,
    kg: KnowledgeGraph,
    chat: ChatModel,
    config: GenerateConfig,
    prompt: str,
    on_progress: ProgressCallback | None = None,
    citations: CitationsMode = "constrained",
) -> AskResult:
    try:
        return await ask_async(
            question,
            kg,
            chat,
            config=config,
            prompt_version=prompt,
            on_progress=on_progress,
            citations=citations,
        )
    finally:
        try:
            await chat.aclose()
        finally:
            await kg.aclose()  # the command opened it (a remote endpoint's connections)


def show_answer(result: AskResult) -> None:
    """Print the retrieved entities, the answer with its citations coloured, and a summary."""
    table = Table(title="Retrieved from the KG", show_lines=False)
    table.add_column("entity")
    table.add_column("id")
    table.add_column("facts", justify="right")
    for graph in result.retrieval.graphs:
        center = graph.center
        cell = literal(center.display_id)
        if center.display_id != center.id:  # the short id the prompt shows, then the IRI
            cell.append(f"\n{shown(center.id)}", style="dim")
        table.add_row(literal(center.name), cell, str(len(graph.triples)))
    console.print(table)
    if result.answer.error:
        _say_no_answer(result)
        return
    console.print(answer_text(result))
    scores = result.citations
    n_na = sum(1 for s in result.parsed.sentences for c in s.citations if c.kind == "na")
    console.print(
        f"\n{scores.n_citations} KG citations, {scores.n_correct} found in the KG "
        f"(green), {scores.n_citations - scores.n_correct} not (red); {n_na} [NA] "
        f"(yellow); {len(result.parsed.issues)} unreadable brackets. Model: {result.model}, "
        f"prompt {result.answer.prompt_version}, citations {_citations(result)}."
    )


def _citations(result: AskResult) -> str:
    """How the citations were made: ``free``, or ``constrained (<grammar>, <mode>)``."""
    record = result.answer.constraint
    if result.answer.citations == "free" or record is None:
        return result.answer.citations
    return f"constrained ({record['grammar']}, {record['mode']})"


def answer_text(result: AskResult) -> Text:
    """The answer with each bracket coloured by its verdict, every piece of it :func:`shown`
    (styled by the parser's offsets into the raw text, so a control character shown as its
    escape moves no colour)."""
    raw = result.answer.text
    verdicts = iter(result.citations.verdicts)
    status: dict[int, tuple[int, str]] = {}
    for sentence in result.parsed.sentences:
        for citation in sentence.citations:
            end = citation.start + len(citation.bracket)
            if citation.kind == "na":
                status[citation.start] = (end, "bold yellow")
                continue
            ok = next(verdicts).correct
            previous = status.get(citation.start, (end, "bold green"))[1]
            style = "bold red" if not ok or previous == "bold red" else "bold green"
            status[citation.start] = (end, style)
    for issue in result.parsed.issues:
        status.setdefault(issue.start, (issue.start + len(issue.bracket), "red"))
    text, at = Text(), 0
    for start, (end, style) in sorted(status.items()):
        start = max(start, at)
        text.append(shown(raw[at:start]))
        text.append(shown(raw[start:end]), style=style)
        at = max(at, end)
    text.append(shown(raw[at:]))
    return text
