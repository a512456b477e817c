"""The run page's line per local model (run.json ``models``), from hand-written entries."""

from __future__ import annotations

from citegraph.viewer._site import placement_lines


def test_one_line_per_model_with_device_dtype_and_size() -> None:
    info = {
        "models": {
            "nli": {
                "name": "t5:google/t5_xxl_true_nli_mixture",
                "device": "cuda:0",
                "dtype": "bfloat16",
                "n_params": 11_307_321_344,
                "weight_bytes": 22_614_642_688,
            },
            "lm": {
                "name": "local",
                "device": "cpu",
                "dtype": "float32",
                "n_params": 134_515_008,
                "weight_bytes": 538_060_032,
            },
            "broken": {"n_params": "many"},
            "not-a-dict": 3,
        }
    }
    assert placement_lines(info) == [
        "nli: t5:google/t5_xxl_true_nli_mixture on cuda:0, bfloat16, 11.31B parameters, 22.61 GB",
        "lm: local on cpu, float32, 135M parameters, 0.54 GB",
    ]
    assert placement_lines({}) == [] and placement_lines({"models": None}) == []
    assert placement_lines({"models": ["edited by hand"]}) == []
