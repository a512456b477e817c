"""``conner score`` runs end to end on the first NQ items with stub models of known behaviour.

Three hand-written knowledge texts for nq:0..2 (a JSONL file; nq:3 has none):

- k0 = a stretch of nq:0's gold passage that holds its answer "28.0. 0.137" (17 words);
- k1 = "Dragon Ball Z is an anime." (6 words; nq:1's answer "291 episodes" is not in it);
- k2 = "Dragon Ball Z ran for 291 episodes." (7 words; holds nq:1's answer, not nq:2's).

Stubs: the LM gives every scored token a loss of 1 nat, except an answer continuation found
verbatim in its prompt (0.1 nat); NLI entails exactly when the hypothesis is a substring of the
premise (else neutral); relevance is 1 when the text mentions "dragon", else 0.25; paragraph
coherence is the word count. By hand, with u = 2 (the negatives are the two other texts):

- factuality: k0 (both of its sentences are in the gold passage) 1; k1, k2 0: mean 1/3,
  labels consistent 1/3, non-verified 2/3;
- relevance: 0.25, 1, 1: mean 0.75;
- sentence coherence: every sentence has PPL e: 1/e;
- informativeness: 1 - exp(-1) for each;
- helpfulness: nq:0 1 - 0.1/1 = 0.9; nq:1 1 - 1/0.55 < 0 -> 0; nq:2 0: mean 0.3;
- paragraph coherence raw 17, 6, 7 (mean 10), min-max normalised (1 + 0 + 1/11) / 3 = 4/11;
- validity (answers: "28.0. 0.137", "276 episodes", "beneath the liver"): 1, 0, 1.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from _conner_stubs import (
    StubLM,
    StubRelevance,
    SubstringNLI,
    WordCount,
    merged_metrics,
    read_records,
)
from citegraph.conner import ConnerScoreConfig, score_knowledge
from citegraph.conner.acquire import read_knowledge
from citegraph.conner.metrics import EVIDENCE_CHARS, punkt_sentences
from citegraph.conner.score import PROMPT_TOO_LONG, ScoreModels, render_score
from citegraph.datasets import load_conner
from citegraph.errors import (
    ConfigError,
    DataError,
    DataNotFoundError,
    PromptTooLong,
    ServerError,
)
from citegraph.models import ChatRequest, MockChat
from citegraph.runs import Runtime

K0 = (
    "Platform Latest version Browser support Windows XP and later Windows Server 2003 and later "
    "28.0. 0.137 Firefox"
)
K1 = "Dragon Ball Z is an anime."
K2 = "Dragon Ball Z ran for 291 episodes."


def answerer(fail_on: str | None = None, too_long: str | None = None) -> MockChat:
    def reply(request: ChatRequest) -> str:
        prompt = request.messages[-1].content
        if fail_on is not None and fail_on in prompt:
            raise ServerError("scripted outage", status=503, url="mock://")
        if too_long is not None and too_long in prompt:
            raise PromptTooLong("mock: the prompt has 9000 tokens; ... context of 8192 tokens")
        for marker, answer in (("Firefox", "28.0. 0.137"), ("anime", "276 episodes")):
            if marker in prompt:
                return answer
        return "beneath the liver"

    return MockChat(reply)


def models(chat: MockChat) -> ScoreModels:
    return ScoreModels(
        lm=StubLM(),
        nli=SubstringNLI(),
        relevance=StubRelevance(),
        paragraph=WordCount(),
        answer=chat,
    )


@pytest.fixture
def knowledge_file(tmp_path: Path) -> Path:
    path = tmp_path / "know.jsonl"
    rows = [{"id": "nq:0", "text": K0}, {"id": "nq:1", "text": K1}, {"id": "nq:2", "text": K2}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def config(path: Path, **extra: object) -> ConnerScoreConfig:
    fields: dict[str, object] = {"u": 2, "answer_model": "mock", "answer_shots": 0} | extra
    return ConnerScoreConfig(knowledge=str(path), task="nq", **fields)  # type: ignore[arg-type]


def test_score_run_values_resume_and_failures(
    data_dir: Path, knowledge_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    first = score_knowledge(
        out,
        config(knowledge_file),
        data_dir=data_dir,
        models=models(answerer(fail_on="291 episodes")),  # k2's answer call fails
        runtime=Runtime(limit=4, batch_size=2),
    )
    assert (first.n_samples, first.n_failed, first.n_resumed) == (4, 1, 0)
    m = first.metrics
    assert m["n_failed"] == 1 and m["n_knowledge_missing"] == 1
    # nq:2 failed (left out); nq:3 has no knowledge: counted unmeasured with the reason
    assert m["metrics"]["validity"]["mean"] == pytest.approx(0.5)
    reasons = m["metrics"]["relevance"]["unmeasured_reasons"]
    assert list(reasons.values()) == [1] and "no knowledge for this id" in next(iter(reasons))

    second_models = models(answerer())
    second = score_knowledge(
        out,
        config(knowledge_file),
        data_dir=data_dir,
        models=second_models,
        runtime=Runtime(limit=4, batch_size=2),
    )
    assert (second.n_failed, second.n_resumed) == (0, 3)
    # only nq:2 was scored again: its text and answer, and its two negatives for helpfulness
    assert isinstance(second_models.lm, StubLM)
    assert K0 not in second_models.lm.texts and K2 in second_models.lm.texts
    got = {name: v["mean"] for name, v in second.metrics["metrics"].items()}
    assert got["factuality"] == pytest.approx(1 / 3)
    assert got["relevance"] == pytest.approx(0.75)
    assert got["coherence_sent"] == pytest.approx(1 / math.e)
    assert got["informativeness"] == pytest.approx(1 - math.exp(-1))
    assert got["helpfulness"] == pytest.approx(0.3)
    assert got["coherence_para"] == pytest.approx(4 / 11)
    assert second.metrics["metrics"]["coherence_para"]["mean_raw"] == pytest.approx(10)
    assert got["validity"] == pytest.approx(2 / 3)
    labels = second.metrics["metrics"]["factuality"]["labels"]
    assert labels["factual_consistent"] == pytest.approx(1 / 3)
    assert labels["non_verified"] == pytest.approx(2 / 3)
    for summary in second.metrics["metrics"].values():
        assert (summary["n"], summary["n_unmeasured"]) == (3, 1)

    records = {
        r["id"]: r
        for r in map(json.loads, (out / "samples.jsonl").read_text().splitlines())
        if r["status"] == "ok"
    }
    help0 = records["nq:0"]["metrics"]["helpfulness"]
    assert help0["value"] == pytest.approx(0.9) and help0["model"] == "stub-lm"
    assert records["nq:1"]["metrics"]["helpfulness"]["details"]["unclipped"] == pytest.approx(
        1 - 1 / 0.55
    )
    assert records["nq:2"]["answer"] == "beneath the liver"
    # a record holds what was scored: the question, the knowledge, each sentence's verdict
    one, gold = records["nq:1"], load_conner("nq", data_dir=data_dir)[1]
    assert one["query"] == gold.query and one["knowledge"] == K1
    first_gold_sentence = punkt_sentences(gold.gold_knowledge)[0]
    assert len(first_gold_sentence) <= EVIDENCE_CHARS  # kept whole
    assert one["metrics"]["factuality"]["details"]["sentences"] == [
        {"index": 0, "text": K1, "label": "non-verified", "entailment": 0.0,
         "evidence_index": 0, "evidence": first_gold_sentence},  # all neutral: the first
    ]  # fmt: skip
    missing = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert [(r["knowledge"], r["query"] != "") for r in missing if r["id"] == "nq:3"] == [
        (None, True)
    ]
    assert json.loads((out / "metrics.json").read_text())["metrics"]["validity"]["n"] == 3
    table = render_score(second.metrics)
    assert "helpfulness" in table and "cons/non-verif/incons 33.3% / 66.7% / 0.0%" in table


def test_a_prompt_too_long_for_the_answer_model_leaves_validity_unmeasured(
    data_dir: Path, knowledge_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    chosen = config(knowledge_file, metrics="validity")
    chat = answerer(too_long="291 episodes")  # k2's prompt does not fit
    result = score_knowledge(
        out, chosen, data_dir=data_dir, models=models(chat), runtime=Runtime(limit=3)
    )
    # not a failed item: a retry cannot help; validity of k0, k1 is 1, 0 (module docstring)
    assert result.n_failed == 0
    validity = result.metrics["metrics"]["validity"]
    assert (validity["mean"], validity["n"], validity["n_unmeasured"]) == (0.5, 2, 1)
    assert validity["unmeasured_reasons"] == {PROMPT_TOO_LONG: 1}
    record = json.loads((out / "samples.jsonl").read_text().splitlines()[2])
    assert (record["id"], record["status"], record["answer"]) == ("nq:2", "ok", None)
    assert "9000 tokens" in record["answer_error"]
    again = score_knowledge(
        out, chosen, data_dir=data_dir, models=models(chat), runtime=Runtime(limit=3)
    )
    assert again.n_resumed == 3  # nothing is asked again


def test_reference_mode_and_a_changed_config_is_refused(
    data_dir: Path, knowledge_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    ref = config(knowledge_file, mode="reference", metrics="coherence_para,informativeness")
    result = score_knowledge(
        out, ref, data_dir=data_dir, models=models(answerer()), runtime=Runtime(limit=3)
    )
    m = result.metrics["metrics"]
    assert m["coherence_para"]["mean"] == pytest.approx(10)  # raw, as the reference code
    assert "mean_raw" not in m["coherence_para"]
    # info.py drops the first knowledge token: still 1 nat per token
    assert m["informativeness"]["mean"] == pytest.approx(1 - math.exp(-1))
    assert list(m) == ["coherence_para", "informativeness"]
    with pytest.raises(ConfigError, match="different configuration"):
        score_knowledge(out, config(knowledge_file), data_dir=data_dir, models=models(answerer()))


def test_read_knowledge_inputs(data_dir: Path, tmp_path: Path) -> None:
    wow = load_conner("wow", data_dir, split="seen")
    gold, digest = read_knowledge("gold", wow)
    assert digest == "gold"
    missing = [v for v in gold.values() if isinstance(v, str)]
    assert len(missing) == 30  # the 30 WoW-seen turns whose gold is no_passages_used
    nq = load_conner("nq", data_dir)[:3]

    run = tmp_path / "know"
    run.mkdir()
    (run / "samples.jsonl").write_text(
        json.dumps({"id": "nq:0", "status": "ok", "text": "a", "source": "llm:x"})
        + "\n"
        + json.dumps({"id": "nq:1", "status": "failed", "text": None, "error": "boom"})
        + "\n",
        encoding="utf-8",
    )
    got, _ = read_knowledge(str(run), nq)
    assert got["nq:0"].text == "a" and got["nq:0"].source == "llm:x"  # type: ignore[union-attr]
    assert got["nq:1"] == "knowledge generation failed: boom"
    assert str(got["nq:2"]).startswith("no knowledge for this id")

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "nq:0", "text": "ok"}\n{"id": "nq:1"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.jsonl:2: field 'text' must be a string"):
        read_knowledge(str(bad), nq)
    other = tmp_path / "wow.jsonl"
    other.write_text('{"id": "wow-seen:0", "text": "x"}\n', encoding="utf-8")
    with pytest.raises(DataError, match="--task or --split"):
        read_knowledge(str(other), nq)
    with pytest.raises(DataNotFoundError):
        read_knowledge(str(tmp_path / "nothing"), nq)
    with pytest.raises(DataNotFoundError, match="not a knowledge run"):
        read_knowledge(str(tmp_path), nq)


def test_config_checks() -> None:
    with pytest.raises(ConfigError, match="unknown metrics"):
        ConnerScoreConfig(knowledge="gold", metrics="factuality,bogus")
    chosen = ConnerScoreConfig(knowledge="gold", metrics="relevance, relevance,factuality")
    assert chosen.metrics == ("relevance", "factuality")
    assert not chosen.needs_corpus()
    assert ConnerScoreConfig(knowledge="gold", evidence="corpus").needs_corpus()


@pytest.mark.parametrize("mode", ["paper", "reference"])
def test_shards_merge_to_the_whole_run(
    data_dir: Path, knowledge_file: Path, tmp_path: Path, mode: str
) -> None:
    # more texts, so that each shard has several: helpfulness draws its negatives from every
    # item's knowledge and paper mode min-max normalises paragraph coherence over the run
    extra = ["The liver is an organ. It sits beneath the diaphragm.", "Flash Player 28 shipped."]
    with knowledge_file.open("a", encoding="utf-8") as fh:
        for i, text in zip((4, 6), extra, strict=True):
            fh.write(json.dumps({"id": f"nq:{i}", "text": text}) + "\n")
    chosen = config(knowledge_file, mode=mode, answer_shots=2)

    def run(out: Path, runtime: Runtime) -> None:
        batched = runtime.model_copy(update={"batch_size": 2})
        score_knowledge(out, chosen, data_dir=data_dir, models=models(answerer()), runtime=batched)

    whole, merged = merged_metrics("conner.score", run, tmp_path, limit=7)
    assert merged == whole
    assert whole["n_samples"] == 7 and whole["n_knowledge_missing"] == 2
    assert whole["metrics"]["helpfulness"]["n"] == 5
    assert read_records(tmp_path / "merged") == read_records(tmp_path / "whole")


def test_a_u_too_large_for_a_small_file_says_which_u_fits_before_anything_is_written(
    data_dir: Path, knowledge_file: Path, tmp_path: Path
) -> None:
    """Three texts: each item's negatives come from the two others, so u can be 2 at most.
    u=3 fails before the run directory is written, naming ``--u 2``; u=2 then runs there."""
    out = tmp_path / "run"
    too_many = config(knowledge_file, u=3, metrics="helpfulness")
    with pytest.raises(ConfigError, match=r"there are only 2 to draw from: rerun with --u 2"):
        score_knowledge(out, too_many, data_dir=data_dir, models=models(answerer()))
    assert not (out / "run.json").exists()
    fits = score_knowledge(
        out,
        config(knowledge_file, u=2, metrics="helpfulness"),
        data_dir=data_dir,
        models=models(answerer()),
        runtime=Runtime(limit=3),
    )
    # as in the module docstring: helpfulness 0.9, 0, 0 -> mean 0.3
    assert fits.metrics["metrics"]["helpfulness"]["mean"] == pytest.approx(0.3)
    # without helpfulness, u is not used and not checked
    no_help = config(knowledge_file, u=3, metrics="relevance")
    score_knowledge(
        tmp_path / "rel",
        no_help,
        data_dir=data_dir,
        models=models(answerer()),
        runtime=Runtime(limit=1),
    )


def test_max_negatives_by_hand() -> None:
    from citegraph.conner import Knowledge
    from citegraph.conner.metrics import max_negatives

    def k(i: str, text: str) -> Knowledge:
        return Knowledge(id=i, text=text, source="gold")

    # a, b, c non-blank, d blank (not drawable): a, b, c each have 2 others; d (asking with no
    # text of its own) would have 3; the fewest is 2.
    pool = [k("a", "x"), k("b", "y"), k("c", "z"), k("d", "  ")]
    assert max_negatives(pool, ["a", "b", "c"]) == 2
    assert max_negatives(pool, ["d"]) == 3
    assert max_negatives([k("a", "x")], ["a"]) == 0


def test_a_duplicate_id_in_a_knowledge_file_is_refused(data_dir: Path, tmp_path: Path) -> None:
    """Issue 27, item 12: the last line of an id no longer wins silently; a record that
    follows a failed one of its id (a run directory's retry) still replaces it."""
    nq = load_conner("nq", data_dir)[:3]
    twice = tmp_path / "twice.jsonl"
    twice.write_text(
        '{"id": "nq:0", "text": "a"}\n{"id": "nq:1", "text": "b"}\n{"id": "nq:0", "text": "c"}\n',
        encoding="utf-8",
    )
    with pytest.raises(DataError, match=r"twice.jsonl:3, field 'id': duplicate id 'nq:0' \(first"):
        read_knowledge(str(twice), nq)
    retried = tmp_path / "retried.jsonl"
    retried.write_text(
        '{"id": "nq:0", "status": "failed", "text": null}\n{"id": "nq:0", "text": "c"}\n',
        encoding="utf-8",
    )
    got, _ = read_knowledge(str(retried), nq)
    assert got["nq:0"].text == "c"  # type: ignore[union-attr]
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"id": "", "text": "a"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"empty.jsonl:1, field 'id': empty id"):
        read_knowledge(str(empty), nq)
