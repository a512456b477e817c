"""Numbers the KaLMA paper publishes, for checks and for reports beside citegraph's own.

Table 3 (specific questions, mean of three runs with the standard deviation in brackets; the
first five metrics micro, the last three macro), from arXiv 2310.05634v2 (``001_*.txt`` lines
172-179, checked against the OCR of page 6 in ``000_*.txt``). Values in percent.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

#: KaLMA §5.3: "our retrieval accuracy is 75.9".
PAPER_RETRIEVAL_ACCURACY = 75.9


class Table3Cells(NamedTuple):
    """Precision and recall (mean, std) and F1 of one Table 3 row, micro or macro."""

    precision: float
    precision_std: float
    recall: float
    recall_std: float
    f1: float


class Table3Row(NamedTuple):
    """One Table 3 row: micro and macro cells."""

    micro: Table3Cells
    macro: Table3Cells

    def cells(self, kind: Literal["micro", "macro"]) -> Table3Cells:
        """The micro or the macro cells."""
        return self.micro if kind == "micro" else self.macro


def _row(*v: float) -> Table3Row:
    return Table3Row(Table3Cells(*v[:5]), Table3Cells(*v[5:]))


#: Model -> (micro P, std, R, std, F1), (macro P, std, R, std, F1).
TABLE3: dict[str, Table3Row] = {
    "GPT-4 (0.5)": _row(36.0, 0.6, 43.6, 1.0, 39.4, 40.7, 1.1, 43.9, 1.0, 42.3),
    "ChatGPT (0.1)": _row(29.0, 0.0, 50.8, 0.3, 36.9, 32.7, 0.4, 51.2, 0.3, 39.9),
    "ChatGPT (0.5)": _row(29.9, 0.2, 49.0, 0.8, 37.2, 34.1, 0.5, 49.4, 0.9, 40.4),
    "ChatGPT (0.9)": _row(28.7, 0.2, 49.0, 0.3, 36.2, 32.5, 0.2, 49.4, 0.3, 39.2),
    "Alpaca-7B": _row(14.9, 1.4, 19.4, 0.2, 16.8, 19.8, 0.4, 19.9, 0.3, 19.8),
    "LLaMA-7B": _row(7.7, 2.4, 41.1, 0.7, 13.0, 11.0, 1.9, 41.4, 0.7, 17.4),
    "LLaMA-13B": _row(10.5, 3.3, 43.7, 1.0, 16.9, 13.8, 2.2, 43.5, 1.0, 20.9),
    "Vicuna-13B": _row(14.9, 0.2, 16.8, 0.0, 15.8, 15.1, 0.0, 17.0, 0.0, 16.0),
}
