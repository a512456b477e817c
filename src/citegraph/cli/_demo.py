"""``citegraph demo``: the main job on the embedded default, offline (no server, no API key).

1. ``citegraph ask``: one question, spaCy retrieval over the embedded BioKaLMA KG, an answer
   from the embedded SmolLM2-135M-Instruct model with constrained citations (a grammar of the
   retrieved triples: every citation names one of them, or [NA]), checked against the KG.
2. ``citegraph kalma run --citations constrained --text-quality <model>``: the first few BioKaLMA
   questions answered by the same model, citations constrained the same way, and scored
   (citation quality against the question's KG, precision / recall against the labelled
   ``question-match`` approximate gold, alignment with the lexical matcher, and the G-Eval text
   quality judged by the same model, its replies constrained to a score 1-5).
3. ``citegraph kalma score`` on four hand-written answers with hand-written gold, so every
   metric (including [NA] precision and recall) is shown measured.
4. ``citegraph caqa build`` (CAQA samples from SimpleQuestions grounded in CoDEx-S, template
   text) and ``citegraph caqa judge`` of a few test samples by the same local model, its replies
   constrained to a label word (``--judge-replies``: ``auto`` constrains local models).
5. ``citegraph conner score gold --task wow``: the six CONNER perspectives on the gold knowledge
   of the first Wizard of Wikipedia turns, with the local stand-in models (named in the output),
   the same local model answering for validity.
6. ``citegraph report``: ``report.html`` of the runs above (metrics, figures, sample answers with
   their citations checked), and how to browse them with ``citegraph view``.

A 135M model is a plumbing demo: expect few citations and low scores; a real model goes through
the same commands with ``--model openai/...`` or ``--model vllm/... --base-url ...``.
"""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path

import click

from citegraph.caqa import CaqaBuildConfig, CaqaJudgeConfig, build_caqa, judge_caqa, render_report
from citegraph.caqa.build import render_statistics
from citegraph.cli._ask import progress_line, show_answer
from citegraph.cli._console import console, err_console, reports_errors
from citegraph.cli._kalma import print_metrics, run_score
from citegraph.cli._options import data_dir_option, device_options
from citegraph.cli._run import print_run_extras, run_one
from citegraph.cli._streams import literal
from citegraph.conner import ConnerScoreConfig, score_knowledge
from citegraph.conner.score import render_score
from citegraph.kalma import KalmaRunConfig, KalmaScoreConfig, ask_async
from citegraph.kg import open_kg
from citegraph.models import chat_model
from citegraph.models.chat import generate_config_for
from citegraph.runs import Runtime
from citegraph.viewer import write_report

QUESTION = "Who was Stephen Crane and what shaped his writing?"


@click.command("demo")
@click.option(
    "--out", type=click.Path(path_type=Path), default=Path("runs/demo"), show_default=True
)
@data_dir_option
@click.option("--model", default="local", show_default=True, help="Answering model.")
@click.option("--questions", type=int, default=3, show_default=True, help="Questions to run.")
@click.option("--judge", type=int, default=8, show_default=True, help="CAQA test samples to judge.")
@click.option("--conner", type=int, default=8, show_default=True, help="WoW turns to score.")
@click.option("--max-tokens", type=int, default=160, show_default=True)
@click.option(
    "--citations",
    type=click.Choice(["constrained", "free"]),
    default="constrained",
    show_default=True,
    help="How the answers cite (see citegraph ask --help).",
)
@click.option(
    "--mode", type=click.Choice(["paper", "reference"]), default="paper", show_default=True
)
@click.option(
    "--judge-replies",
    type=click.Choice(["auto", "free", "constrained"]),
    default="auto",
    show_default=True,
    help="The judges' replies (CAQA label, text-quality score): constrained by grammar, free "
    "(the papers' setting), or auto (constrained for local and hf/ models).",
)
@device_options
@reports_errors
def demo(
    out: Path,
    data_dir: Path | None,
    model: str,
    questions: int,
    judge: int,
    conner: int,
    max_tokens: int,
    citations: str,
    mode: str,
    judge_replies: str,
    device: str,
    dtype: str,
) -> None:
    """Ask, run and score KaLMA, build and judge CAQA, score knowledge with CONNER, on embedded
    data and a local model."""
    console.rule(f"1. citegraph ask {QUESTION!r}")
    with err_console.status("Opening the embedded KG and the local model (first time: ~20 s)"):
        kg = open_kg("biokalma", data_dir=data_dir).kg
        chat = chat_model(model, device=device, dtype=dtype)
    with err_console.status("Retrieving and generating...") as status:
        config = generate_config_for(chat, {"max_tokens": max_tokens})
        on_progress = progress_line(lambda line: status.update(literal(line)))
        result = asyncio.run(
            ask_async(
                QUESTION,
                kg,
                chat,
                config=config,
                on_progress=on_progress,
                citations=citations,  # type: ignore[arg-type]
            )
        )
    show_answer(result)

    console.rule(
        f"2. citegraph kalma run --limit {questions} --model {model} --citations {citations} "
        f"--text-quality {model} --judge-replies {judge_replies}"
    )
    run_config = KalmaRunConfig(
        model=model,
        max_tokens=max_tokens,
        citations=citations,  # type: ignore[arg-type]
        gold="question-match",
        mode=mode,  # type: ignore[arg-type]
        text_quality=model,
        judge_replies=judge_replies,  # type: ignore[arg-type]
    )
    run_runtime = Runtime(limit=questions, device=device, dtype=dtype)
    run = run_one(out / "kalma-run", run_config, run_runtime, data_dir, None, overwrite=True)
    print_metrics(run.metrics)
    print_run_extras(run)

    console.rule("3. citegraph kalma score on hand-written answers with hand-written gold")
    demo_dir = resources.files("citegraph.kalma") / "demo"
    answers = Path(str(demo_dir / "answers.jsonl"))
    gold = Path(str(demo_dir / "gold.jsonl"))
    score_config = KalmaScoreConfig(split="specific", mode=mode, nli="lexical")  # type: ignore[arg-type]
    run_score(score_config, answers, gold, data_dir, out / "scored", overwrite=True)

    console.rule(
        f"4. citegraph caqa build + caqa judge --limit {judge} --evaluator {model} "
        f"--judge-replies {judge_replies}"
    )
    built = build_caqa(
        out / "caqa", CaqaBuildConfig(questions="simplequestions-wd"), data_dir=data_dir,
        runtime=Runtime(overwrite=True, device=device, dtype=dtype),
    )  # fmt: skip
    console.print(render_statistics(built.metrics["statistics"]), markup=False, soft_wrap=True)
    judge_config = CaqaJudgeConfig(
        data=str(out / "caqa" / "test.jsonl"),
        evaluator=model,
        prompt="alpaca",
        max_tokens=8,
        judge_replies=judge_replies,  # type: ignore[arg-type]
    )
    with err_console.status(literal(f"Judging {judge} CAQA samples with {model}...")):
        judged = judge_caqa(
            out / "caqa-judge",
            judge_config,
            runtime=Runtime(limit=judge, overwrite=True, device=device, dtype=dtype),
        )
    console.print(render_report(judged.report), markup=False, highlight=False, soft_wrap=True)
    replies = judged.metrics.get("setup", {}).get("judge_replies", "free")
    console.print(
        f"(judge replies {replies}; raw replies in {out / 'caqa-judge' / 'samples.jsonl'}: a 135M "
        "model free rarely answers with a label, constrained it always does, though it is no "
        "judge; a real judge goes through the same command, e.g. --evaluator openai/gpt-4o)",
        highlight=False,
    )

    console.rule(
        f"5. citegraph conner score gold --task wow --limit {conner} --answer-model {model}"
    )
    conner_config = ConnerScoreConfig(
        knowledge="gold",
        task="wow",
        mode=mode,  # type: ignore[arg-type]
        answer_model=model,
        answer_shots=0,
    )
    with err_console.status(f"Scoring the gold knowledge of {conner} WoW turns..."):
        scored = score_knowledge(
            out / "conner",
            conner_config,
            data_dir=data_dir,
            runtime=Runtime(limit=conner, overwrite=True, device=device, dtype=dtype),
        )
    console.print(render_score(scored.metrics), markup=False, highlight=False, soft_wrap=True)

    console.rule("6. citegraph report + citegraph view")
    report = write_report(
        [out / "kalma-run", out / "scored", out / "caqa-judge", out / "conner"],
        out / "report.html",
    )
    console.print(
        f"Wrote {report}: one self-contained HTML file (open it in a browser, no server).\n"
        f"Browse every answer with its citations checked: citegraph view {out} "
        "(then open http://127.0.0.1:7575/)",
        highlight=False,
    )
