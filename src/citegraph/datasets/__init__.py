"""Dataset loaders and typed records; data location (from :mod:`citegraph.io`) and download."""

from citegraph.datasets._answers import (
    MAX_ANSWER_CHARS,
    AnswerRecord,
    GoldRecord,
    index_answers,
    index_gold,
    read_answers,
    read_gold,
)
from citegraph.datasets._biokalma import (
    SPLIT_FILES,
    BioKaLMASample,
    KalmaSplit,
    biokalma_path,
    kalma_dataset_path,
    load_biokalma,
    load_kalma_dataset,
)
from citegraph.datasets._conner import (
    CONNER_FILES,
    CONNER_TASKS,
    NO_PASSAGE,
    ConnerSample,
    ConnerTask,
    WowSplit,
    conner_path,
    load_conner,
    read_conner,
)
from citegraph.datasets._fetch import SOURCES, fetch_datasets
from citegraph.datasets._questions import QuestionRecord, QuestionsFile
from citegraph.io import (
    DATA_ENV,
    dataset_file,
    default_download_dir,
    resolve_data_dir,
)

__all__ = [
    "CONNER_FILES",
    "CONNER_TASKS",
    "DATA_ENV",
    "MAX_ANSWER_CHARS",
    "NO_PASSAGE",
    "SOURCES",
    "SPLIT_FILES",
    "AnswerRecord",
    "BioKaLMASample",
    "ConnerSample",
    "ConnerTask",
    "GoldRecord",
    "KalmaSplit",
    "QuestionRecord",
    "QuestionsFile",
    "WowSplit",
    "biokalma_path",
    "conner_path",
    "dataset_file",
    "default_download_dir",
    "fetch_datasets",
    "index_answers",
    "index_gold",
    "kalma_dataset_path",
    "load_biokalma",
    "load_conner",
    "load_kalma_dataset",
    "read_answers",
    "read_conner",
    "read_gold",
    "resolve_data_dir",
]
