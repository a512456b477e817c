"""Where ``kalma score``'s NLI model ran is recorded with the numbers, and a run is not resumed
in another dtype (on the demo answers, BioKaLMA's specific split and the tiny BERT NLI model)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from citegraph.errors import ConfigError
from citegraph.kalma import KalmaScoreConfig, score_answers
from citegraph.runs import Runtime

pytest.importorskip("torch")

DEMO = Path(str(resources.files("citegraph.kalma") / "demo"))


def test_the_nli_models_device_dtype_and_size_are_recorded_and_kept(
    tmp_path: Path, data_dir: Path, tiny_nli_classifier_dir: Path
) -> None:
    import torch
    import transformers

    spec = f"hf:{tiny_nli_classifier_dir}"
    config = KalmaScoreConfig(split="specific", nli=spec)
    out = tmp_path / "run"
    answers = DEMO / "answers.jsonl"
    score_answers(answers, out, config, data_dir=data_dir, runtime=Runtime(limit=2))

    loaded = transformers.AutoModelForSequenceClassification.from_pretrained(
        tiny_nli_classifier_dir
    )
    n_params = sum(p.numel() for p in loaded.parameters())
    expected = {
        "name": spec,
        "device": "cuda:0" if torch.cuda.is_available() else "cpu",
        "dtype": "bfloat16" if torch.cuda.is_available() else "float32",
    }
    info = json.loads((out / "run.json").read_text())
    recorded = info["models"]["nli"]
    assert {k: recorded[k] for k in expected} == expected
    assert recorded["n_params"] == n_params
    assert info["runtime"]["device"] == "auto" and info["runtime"]["dtype"] == "auto"
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["models"] == info["models"]

    with pytest.raises(ConfigError) as caught:  # bf16 numbers would be mixed with fp32 ones
        score_answers(answers, out, config, data_dir=data_dir, runtime=Runtime(dtype="float16"))
    text = str(caught.value)
    assert f"its nli model ({spec}) ran in {expected['dtype']}" in text
    assert "this call would run it in float16" in text
    assert f"--dtype {expected['dtype']}" in text
    assert len((out / "samples.jsonl").read_text().splitlines()) == 2  # nothing lost

    # the same dtype resumes; another device is fine (only dtype moves numbers)
    done = score_answers(
        answers, out, config, data_dir=data_dir, runtime=Runtime(dtype=expected["dtype"])
    )
    assert done.n_resumed == 2
