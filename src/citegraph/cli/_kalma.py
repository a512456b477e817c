"""``citegraph kalma``: KaLMA commands (scoring attributed answers)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from citegraph.cli._console import (
    command_line,
    console,
    note_progress,
    progress_bar,
    reports_errors,
    warn,
)
from citegraph.cli._options import (
    contact_option,
    data_dir_option,
    engine_options,
    kg_option,
    kg_options_from,
    kg_reading_options,
    options_from_model,
    run_dir_options,
    runtime_from,
    showing_progress,
)
from citegraph.datasets import MAX_ANSWER_CHARS
from citegraph.kalma import KalmaRules, KalmaScoreConfig, RetrievalConfig, score_answers
from citegraph.kalma.score import warning_lines
from citegraph.runs import Runtime

_LABELS = {
    "correctness": "Correctness",
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1",
    "alignment": "Alignment",
    "na_precision": "[NA] precision",
    "na_recall": "[NA] recall",
}


@click.group("kalma")
def kalma_group() -> None:
    """KaLMA: attributed answers citing KG triples, and their evaluation."""


@kalma_group.command("score")
@click.argument("answers", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@options_from_model(KalmaScoreConfig, exclude=("batch_size",))
@engine_options
@click.option(
    "--gold",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="gold.jsonl with minimum knowledge sets (and optional 'absent'); with --kg, subjects "
    "may be ids, IRIs, short ids or labels.",
)
@click.option(
    "--max-answer-chars",
    type=click.IntRange(min=1),
    default=MAX_ANSWER_CHARS,
    show_default=True,
    help="The most characters an answer may hold (1 MB of text); a longer one is an input "
    "error naming the file and line. Not part of the run's identity.",
)
@contact_option
@data_dir_option
@run_dir_options
@reports_errors
def score(
    answers: Path,
    gold: Path | None,
    max_answer_chars: int,
    contact: str | None,
    data_dir: Path | None,
    out: Path,
    overwrite: bool,
    **options: Any,
) -> None:
    """Score attributed answers: citation quality, alignment and [NA] (KaLMA §4).

    Answers to a benchmark's questions (--dataset, --split: ids like specific-0), or over your
    own KG (--kg kg.ttl, sparql+<url>, codex-s...: your own ids, each answer's question and
    optionally its 'entities'; the graphs come from retrieval over the KG). The README's "Your
    own KG" section walks through examples/own-kg/.

    --batch-size answers go to the NLI model together (default 32; part of the run's config).
    """
    if options.get("kg") is not None:
        given = [
            f"--{name}"
            for name in ("dataset", "split")
            if click.get_current_context().get_parameter_source(name)
            != click.core.ParameterSource.DEFAULT
        ]
        if given:
            raise click.UsageError(
                f"--kg scores answers over your own KG; {' and '.join(given)} "
                f"{'choose' if len(given) > 1 else 'chooses'} a benchmark's questions instead: "
                "give one or the other"
            )
    batch_size = options.pop("batch_size", None)
    runtime = runtime_from(options, overwrite=overwrite)
    config = KalmaScoreConfig(**options, **({"batch_size": batch_size} if batch_size else {}))
    run_score(
        config,
        answers,
        gold,
        data_dir,
        out,
        overwrite,
        runtime=runtime,
        contact=contact,
        max_answer_chars=max_answer_chars,
    )


def run_score(
    config: KalmaScoreConfig,
    answers: Path,
    gold: Path | None,
    data_dir: Path | None,
    out: Path,
    overwrite: bool,
    *,
    runtime: Runtime | None = None,
    contact: str | None = None,
    max_answer_chars: int = MAX_ANSWER_CHARS,
) -> None:
    """Score, show progress, print the table (shared by ``kalma score`` and ``demo``)."""
    runtime = (runtime or Runtime(command=command_line())).model_copy(
        update={"overwrite": overwrite}
    )
    with showing_progress(runtime, "scoring answers") as live:
        result = score_answers(
            answers,
            out,
            config,
            runtime=live,
            gold_path=gold,
            data_dir=data_dir,
            contact=contact,
            max_answer_chars=max_answer_chars,
        )
    if result.n_resumed:
        console.print(f"Resumed: {result.n_resumed} answers were already scored in {out}.")
    print_metrics(result.metrics)
    warn(config.stand_in_warning(result.metrics["config"]["nli_name"]))
    console.print(f"Wrote {out / 'metrics.json'} and {out / 'samples.jsonl'}")


def print_metrics(metrics: dict[str, Any]) -> None:
    """Render ``metrics.json`` as a rich table with the unmeasured counts and the setup.

    Every answer a metric did not count carries its reason: those of ``unmeasured``, else
    (answers left out for a zero denominator that ``unmeasured`` does not name) the metric's own.
    F1 is 2PR/(P+R) of the precision and the recall, so it shows their counts and, when it is
    unmeasured, why. Then a line when the metrics cover only part of the run (see
    :func:`~citegraph.cli._console.note_progress`).
    """
    cfg = metrics["config"]
    failed = metrics.get("n_failed") or 0
    not_scored = f" ({failed} failed items not scored)" if failed else ""
    table = Table(
        title=f"KaLMA scores: {metrics['n_answers']} answers{not_scored}, "
        f"{metrics['n_citations']} citations",
        caption=f"mode={cfg['mode']} parser={cfg['parser_version']} nli={cfg['nli_name']} "
        f"hypothesis={cfg['hypothesis']}",
    )
    table.add_column("metric")
    table.add_column("micro", justify="right")
    table.add_column("macro", justify="right")
    table.add_column("answers counted", justify="right")
    table.add_column("not measured (why)")
    for name, label in _LABELS.items():
        counted, why = _counted_and_why(name, metrics)
        table.add_row(
            label, _pct(metrics[name]["micro"]), _pct(metrics[name]["macro"]), counted, why
        )
    console.print(table)
    if metrics.get("text_quality") and "generation" not in metrics:  # kalma run prints its own
        print_text_quality(metrics)
    if metrics.get("text_quality_agreement"):
        print_text_quality_agreement(metrics)
    validity = validity_line(metrics.get("citation_validity"), metrics.get("constraint"))
    if validity:
        console.print(validity, highlight=False, soft_wrap=True)
    for line in warning_lines(metrics.get("warnings")):
        warn(line)
    note_progress(metrics)


def _judge_of(metrics: dict[str, Any]) -> str:
    judge = (metrics.get("setup") or {}).get("judge") or metrics["config"].get("judge_name")
    return str(judge or "?")


def _reasons(reasons: dict[str, int] | None) -> str:
    return "; ".join(f"{k}: {why}" for why, k in (reasons or {}).items())


def print_text_quality(metrics: dict[str, Any]) -> None:
    """The text-quality judge's means per criterion, with the answers left out and why."""
    quality: dict[str, Any] = metrics["text_quality"]
    first = next(iter(quality.values()))
    table = Table(
        title="Text quality (G-Eval, 1-5)",
        caption=f"judge={_judge_of(metrics)} mode={first.get('mode')} "
        f"prompt={first.get('prompt_version')}",
    )
    for column in ("criterion", "mean", "std", "answers counted", "not measured (why)"):
        table.add_column(column, justify="left" if column[0] in "cn" else "right")
    for name, s in quality.items():
        mean, std = s.get("mean"), s.get("std")
        table.add_row(
            name,
            "unmeasured" if mean is None else f"{mean:.2f}",
            "-" if std is None else f"{std:.2f}",
            f"{s.get('n_measured')}/{s.get('n')}",
            _reasons(s.get("unmeasured_reasons")),
        )
    console.print(table)


def _coefficient(block: dict[str, Any]) -> str:
    value, ci = block.get("value"), block.get("ci")
    if value is None:
        return f"unmeasured ({block.get('reason')})"
    text = f"{value:.3f}"
    return text + (f" [{ci['low']:.3f}, {ci['high']:.3f}]" if ci else " [no interval]")


def print_text_quality_agreement(metrics: dict[str, Any]) -> None:
    """The judge's agreement with the human scores per criterion: Spearman's rho, Kendall's
    tau-b and Somers' D(judge | human), each with its bootstrap interval, the pairs counted and
    the answers left out and why."""
    agreement: dict[str, Any] = metrics["text_quality_agreement"]
    resamples = next(
        (
            b[c]["ci"]["n_resamples"]
            for b in agreement.values()
            for c in ("spearman", "kendall_tau_b", "somers_d")
            if b[c].get("ci")
        ),
        None,
    )
    table = Table(
        title="Text-quality judge vs human scores",
        caption=f"judge={_judge_of(metrics)}; 95% percentile bootstrap intervals "
        f"({resamples or '-'} resamples of answers); Somers' D(judge | human)",
    )
    for column in ("criterion", "pairs", "Spearman rho", "Kendall tau-b", "Somers' D"):
        table.add_column(column, justify="left" if column == "criterion" else "right")
    table.add_column("not measured (why)")
    for name, block in agreement.items():
        table.add_row(
            name,
            str(block["n"]),
            _coefficient(block["spearman"]),
            _coefficient(block["kendall_tau_b"]),
            _coefficient(block["somers_d"]),
            _reasons(block.get("unmeasured_reasons")),
        )
    console.print(table)


def validity_line(block: dict[str, Any] | None, constraint: dict[str, Any] | None) -> str:
    """One line of the ``citation_validity`` block (and how citations were constrained)."""
    if not block:
        return ""

    def share(count: str, rate: str) -> str:
        value = block.get(rate)
        return f"{block.get(count, 0)}" + (f" ({100 * value:.1f}%)" if value is not None else "")

    per = block.get("citations_per_sentence")
    not_in_kg = (
        share("not_in_kg", "not_in_kg_rate") if block.get("not_in_kg_checked") else "unmeasured"
    )
    repeated = ""
    if "repeated_rate" in block:
        repeated = (
            f", {share('repeated_citations', 'repeated_rate')} repeating a triple cited before "
            f"in the answer ({block.get('repeated_in_bracket', 0)} in the same bracket)"
        )
    how = ""
    if constraint:
        modes = ", ".join(constraint.get("modes") or [])
        how = f" Citations constrained ({', '.join(constraint.get('grammars') or [])}, {modes})."
        if constraint.get("grammar_share") is not None:
            how += f" Grammar: {100 * constraint['grammar_share']:.2f}% of generation time."
    unjudged = ""
    if block.get("no_entity_brackets"):
        unjudged = (
            f", {share('no_entity_brackets', 'no_entity_rate')} left unjudged (retrieval found "
            "no entity)"
        )
    return (
        f"Citation validity: {block.get('brackets', 0)} brackets, "
        f"{share('malformed_brackets', 'malformed_rate')} malformed{unjudged}; "
        f"{block.get('kg_citations', 0)} KG citations, "
        f"{share('outside_retrieved', 'outside_retrieved_rate')} outside the retrieved graphs, "
        f"{not_in_kg} not in the KG{repeated}; "
        f"{'-' if per is None else f'{per:.2f}'} citations per sentence.{how}"
    )


#: Why a metric left an answer out when its denominator was 0 and ``unmeasured`` names no
#: reason (metrics.json of kalma score lists none for recall's empty gold sets).
_ZERO_DENOMINATOR = {
    "recall": "empty gold minimum knowledge set (left out of the macro average)",
    "na_recall": "empty absent-knowledge set (left out of the macro average)",
}


def _counted(name: str, metrics: dict[str, Any]) -> int:
    detail = metrics["details"][name]
    return int(detail["n"] - detail["n_unmeasured"] - detail["n_excluded"])


def _counted_and_why(name: str, metrics: dict[str, Any]) -> tuple[str, str]:
    """The "answers counted" and "not measured (why)" cells of one metric (of the answers and
    the failed items, which ``unmeasured`` gives with their reason)."""
    n = metrics["n_answers"] + (metrics.get("n_failed") or 0)
    detail = metrics["details"][name]
    reasons: dict[str, int] = dict(metrics["unmeasured"].get(name, {}))
    value = metrics[name]
    if detail.get("method") == "f1":
        p, r = _counted("precision", metrics), _counted("recall", metrics)
        counted = f"{p}/{n}" if p == r else f"P {p}/{n}, R {r}/{n}"
        why = [f"{k}: {reason}" for reason, k in reasons.items()]
        if value["micro"] is None or value["macro"] is None:
            why.append(f"needs both P and R; {detail.get('reason') or 'P or R unmeasured'}")
        return counted, "; ".join(why)
    measured = _counted(name, metrics)
    missing = n - measured - sum(reasons.values())
    if missing > 0:
        reason = _ZERO_DENOMINATOR.get(name, "nothing to count (left out of the macro average)")
        reasons[reason] = reasons.get(reason, 0) + missing
    why = [f"{k}: {reason}" for reason, k in reasons.items()]
    if not why and (value["micro"] is None or value["macro"] is None) and detail.get("reason"):
        why.append(str(detail["reason"]))
    return f"{measured}/{n}", "; ".join(why)


def _pct(value: float | None) -> str:
    return "unmeasured" if value is None else f"{100 * value:.1f}"


@kalma_group.command("retrieve")
@click.option(
    "--split", type=click.Choice(["general", "specific"]), default="specific", show_default=True
)
@kg_option
@kg_reading_options
@click.option("--limit", type=int, default=None, help="Only the first N questions.")
@click.option(
    "--ner",
    type=click.Choice(["spacy", "capitalised"]),
    default="spacy",
    show_default=True,
    help="Entity recognizer ('capitalised' is not the paper's).",
)
@click.option(
    "--mode",
    type=click.Choice(["paper", "reference"]),
    default="paper",
    show_default=True,
    help="'reference': the authors' retrieval options and recall.",
)
@contact_option
@data_dir_option
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the retrievals (one JSON line per question) and the report here.",
)
@reports_errors
def retrieve_command(
    split: str,
    kg_spec: str,
    limit: int | None,
    ner: str,
    mode: str,
    contact: str | None,
    data_dir: Path | None,
    out: Path | None,
    **kg_reading: Any,
) -> None:
    """Retrieval accuracy of the KaLMA baseline (spaCy NER, lookup, rerank) on a split."""
    import asyncio
    import json

    from citegraph.datasets import load_biokalma
    from citegraph.kalma import Retrieval, RetrievalAccuracy, evaluate_retrieval_async
    from citegraph.kg import open_kg

    samples = load_biokalma(split, data_dir)[:limit]  # type: ignore[arg-type]
    kg_options = kg_options_from(kg_reading)
    rules = KalmaRules.for_mode(mode)
    config = RetrievalConfig.for_mode(rules).model_copy(update={"ner": ner})
    opened = open_kg(kg_spec, data_dir=data_dir, contact=contact, options=kg_options)

    async def retrieve(
        update: Callable[[int, int], None],
    ) -> tuple[RetrievalAccuracy, list[Retrieval]]:
        async with opened:  # the command opened the KG: closed here, also when retrieval fails
            return await evaluate_retrieval_async(
                samples, opened.kg, config, mode=rules, progress=update
            )

    with progress_bar("retrieving") as update:
        report, results = asyncio.run(retrieve(update))
    table = Table(title=f"Retrieval on BioKaLMA {split}: {report.n_measured} questions measured")
    for column in ("", "micro", "macro"):
        table.add_column(column, justify="right")
    for name in ("precision", "recall", "f1"):
        cell = getattr(report, name)
        table.add_row(name, _pct(cell.micro), _pct(cell.macro))
    table.add_row("exact set", _pct(report.exact_match), "")
    console.print(table)
    if report.n_unmeasured:
        console.print(f"{report.n_unmeasured} questions unmeasured: {report.unmeasured_reason}")
    elif report.n_no_gold:
        console.print(
            f"{report.n_no_gold} questions without gold counted with 0 correct ({mode} mode); "
            f"recall denominator: {report.recall_denominator}",
            highlight=False,
        )
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        with (out / "retrievals.jsonl").open("w", encoding="utf-8") as fh:
            for sample, result in zip(samples, results, strict=True):
                row = {
                    "id": sample.id,
                    "qids": result.qids,
                    "gold_qids": [g.center.id for g in sample.graphs],
                    "mentions": [m.text for m in result.mentions],
                }
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        report_json = report.model_dump(mode="json", exclude={"per_question"})
        (out / "report.json").write_text(json.dumps(report_json, indent=2) + "\n")
        console.print(f"Wrote {out / 'retrievals.jsonl'} and {out / 'report.json'}")
