"""KaLMA's baseline retrieval (NER, entity lookup, one-hop subgraphs, rerank) and its accuracy."""

from citegraph.kalma.retrieve._accuracy import RetrievalAccuracy, retrieval_accuracy
from citegraph.kalma.retrieve._config import RetrievalConfig
from citegraph.kalma.retrieve._evaluate import evaluate_retrieval, evaluate_retrieval_async
from citegraph.kalma.retrieve._ner import (
    DEFAULT_SPACY_MODELS,
    RETRIEVAL_EXTRA,
    EntityRecognizer,
    Mention,
    capitalised_ner,
    clean_mention,
    spacy_ner,
)
from citegraph.kalma.retrieve._retrieve import (
    Candidate,
    MentionResult,
    Retrieval,
    Retriever,
    Unresolved,
    find_candidates,
    find_candidates_async,
    rerank,
    retrieve,
    retrieve_async,
    retrieve_many,
    retrieve_many_async,
    type_matches,
)

__all__ = [
    "DEFAULT_SPACY_MODELS",
    "RETRIEVAL_EXTRA",
    "Candidate",
    "EntityRecognizer",
    "Mention",
    "MentionResult",
    "Retrieval",
    "RetrievalAccuracy",
    "RetrievalConfig",
    "Retriever",
    "Unresolved",
    "capitalised_ner",
    "clean_mention",
    "evaluate_retrieval",
    "evaluate_retrieval_async",
    "find_candidates",
    "find_candidates_async",
    "rerank",
    "retrieval_accuracy",
    "retrieve",
    "retrieve_async",
    "retrieve_many",
    "retrieve_many_async",
    "spacy_ner",
    "type_matches",
]
