"""KaLMA: attributed answers that cite KG triples, their evaluation, and benchmark building.

One folder per stage: :mod:`.parse` (reading answers), :mod:`.retrieve` (NER, lookup, rerank),
:mod:`.generate` (prompts, answers), :mod:`.score` (the metrics and the ``kalma.score`` task),
:mod:`.run` (the experiments and the ``kalma.run`` task), :mod:`.build` (benchmark building and
the ``kalma.build`` task). Paper vs reference mode is one :class:`KalmaRules`.

This face is every stage's face (its ``__all__``), plus :func:`ask` / :func:`ask_async` and the
rules.

API rule: every coroutine function is named ``..._async`` and has a blocking twin with the plain
name (``score_alignment_async`` / ``score_alignment``); see :func:`citegraph.runs.blocking`.
"""

from citegraph.kalma import build as _build
from citegraph.kalma import generate as _generate
from citegraph.kalma import parse as _parse
from citegraph.kalma import retrieve as _retrieve
from citegraph.kalma import run as _run
from citegraph.kalma import score as _score
from citegraph.kalma._ask import AskResult, ask, ask_async
from citegraph.kalma._published import (
    PAPER_RETRIEVAL_ACCURACY,
    TABLE3,
    Table3Cells,
    Table3Row,
)
from citegraph.kalma._rules import REFERENCE_CAP, HypothesisStyle, KalmaRules, Mode
from citegraph.kalma.build import *  # noqa: F403
from citegraph.kalma.generate import *  # noqa: F403
from citegraph.kalma.parse import *  # noqa: F403
from citegraph.kalma.retrieve import *  # noqa: F403
from citegraph.kalma.run import *  # noqa: F403
from citegraph.kalma.score import *  # noqa: F403

__all__ = [
    "PAPER_RETRIEVAL_ACCURACY",
    "REFERENCE_CAP",
    "TABLE3",
    "AskResult",
    "HypothesisStyle",
    "KalmaRules",
    "Mode",
    "Table3Cells",
    "Table3Row",
    "ask",
    "ask_async",
]
__all__ += _build.__all__
__all__ += _generate.__all__
__all__ += _parse.__all__
__all__ += _retrieve.__all__
__all__ += _run.__all__
__all__ += _score.__all__
