"""KaLMA: attributed answers that cite KG triples, their evaluation, and benchmark building.

One folder per stage, each with its own face: :mod:`.parse` (reading answers), :mod:`.retrieve`
(NER, lookup, rerank), :mod:`.generate` (prompts, answers), :mod:`.constrain` (constrained
citations), :mod:`.score` (the metrics and the ``kalma.score`` task), :mod:`.run` (the
experiments and the ``kalma.run`` task), :mod:`.build` (benchmark building and the
``kalma.build`` task), :mod:`.view` (how the viewer shows the runs). Paper vs reference mode is
one :class:`KalmaRules`.

This face is the core a user calls; every other name is imported from its stage's face
(``from citegraph.kalma.parse import find_brackets``).

==================================================  ====================================
name                                                what it is
==================================================  ====================================
ask / ask_async, AskResult                          one question answered with citations
run_kalma / run_kalma_async                         the kalma.run task: answer and score
KalmaRunConfig, KalmaRunResult, KalmaRunTask        its config, result and task
score_answers / score_answers_async                 the kalma.score task: score answers
KalmaScoreConfig, KalmaScoreResult, KalmaScoreTask  its config, result and task
build_benchmark / build_benchmark_async             the kalma.build task: a benchmark
KalmaBuildConfig, KalmaBuildResult, KalmaBuildTask  its config, result and task
evaluate_retrieval / evaluate_retrieval_async       retrieval accuracy over a split
RetrievalConfig, Retrieval, RetrievalAccuracy       its config, per question, totals
generate_answer / generate_answer_async             one answer from a prompt
AttributedAnswer                                    an answer and the facts it cites
parse_answer, ParsedAnswer, Sentence, Citation      an answer's sentences and citations
score_alignment / score_alignment_async             citation alignment of one answer
AnswerAlignment                                     its result
score_na / score_na_async, AnswerNAScores           [NA] precision and recall
score_citations, AnswerCitationScores               citation precision, recall and F1
KalmaRules, Mode                                    paper vs reference behaviour
HypothesisStyle, REFERENCE_CAP                      two of the rules' settings
TABLE3, Table3Row, Table3Cells                      the paper's published Table 3
PAPER_RETRIEVAL_ACCURACY                            the paper's retrieval accuracy
==================================================  ====================================

API rule: every coroutine function is named ``..._async`` and has a blocking twin with the plain
name (``score_alignment_async`` / ``score_alignment``); see :func:`citegraph.runs.blocking`.
Importing this package registers its tasks (``kalma.run``, ``kalma.score``, ``kalma.build``).
"""

from citegraph.kalma._ask import AskResult, ask, ask_async
from citegraph.kalma._published import (
    PAPER_RETRIEVAL_ACCURACY,
    TABLE3,
    Table3Cells,
    Table3Row,
)
from citegraph.kalma._rules import REFERENCE_CAP, HypothesisStyle, KalmaRules, Mode
from citegraph.kalma.build import (
    KalmaBuildConfig,
    KalmaBuildResult,
    KalmaBuildTask,
    build_benchmark,
    build_benchmark_async,
)
from citegraph.kalma.generate import AttributedAnswer, generate_answer, generate_answer_async
from citegraph.kalma.parse import Citation, ParsedAnswer, Sentence, parse_answer
from citegraph.kalma.retrieve import (
    Retrieval,
    RetrievalAccuracy,
    RetrievalConfig,
    evaluate_retrieval,
    evaluate_retrieval_async,
)
from citegraph.kalma.run import (
    KalmaRunConfig,
    KalmaRunResult,
    KalmaRunTask,
    run_kalma,
    run_kalma_async,
)
from citegraph.kalma.score import (
    AnswerAlignment,
    AnswerCitationScores,
    AnswerNAScores,
    KalmaScoreConfig,
    KalmaScoreResult,
    KalmaScoreTask,
    score_alignment,
    score_alignment_async,
    score_answers,
    score_answers_async,
    score_citations,
    score_na,
    score_na_async,
)

__all__ = [
    "PAPER_RETRIEVAL_ACCURACY",
    "REFERENCE_CAP",
    "TABLE3",
    "AnswerAlignment",
    "AnswerCitationScores",
    "AnswerNAScores",
    "AskResult",
    "AttributedAnswer",
    "Citation",
    "HypothesisStyle",
    "KalmaBuildConfig",
    "KalmaBuildResult",
    "KalmaBuildTask",
    "KalmaRules",
    "KalmaRunConfig",
    "KalmaRunResult",
    "KalmaRunTask",
    "KalmaScoreConfig",
    "KalmaScoreResult",
    "KalmaScoreTask",
    "Mode",
    "ParsedAnswer",
    "Retrieval",
    "RetrievalAccuracy",
    "RetrievalConfig",
    "Sentence",
    "Table3Cells",
    "Table3Row",
    "ask",
    "ask_async",
    "build_benchmark",
    "build_benchmark_async",
    "evaluate_retrieval",
    "evaluate_retrieval_async",
    "generate_answer",
    "generate_answer_async",
    "parse_answer",
    "run_kalma",
    "run_kalma_async",
    "score_alignment",
    "score_alignment_async",
    "score_answers",
    "score_answers_async",
    "score_citations",
    "score_na",
    "score_na_async",
]
