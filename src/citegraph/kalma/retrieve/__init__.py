"""KaLMA's baseline retrieval (NER, entity lookup, one-hop subgraphs, rerank) and its accuracy."""

from citegraph.kalma.retrieve._accuracy import RetrievalAccuracy, retrieval_accuracy
from citegraph.kalma.retrieve._config import RetrievalConfig
from citegraph.kalma.retrieve._evaluate import evaluate_retrieval
from citegraph.kalma.retrieve._ner import (
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
    rerank,
    retrieve,
    retrieve_many,
)

__all__ = [
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
    "rerank",
    "retrieval_accuracy",
    "retrieve",
    "retrieve_many",
    "spacy_ner",
]
