"""How KaLMA runs (``kalma run``, ``kalma score``) are shown: :class:`KalmaPresenter` (the
viewer's sample list and pages, the metrics table, the paper's figures, the export tables) and
what ``runs compare`` shows of KaLMA runs.

Inside: the presenter (``_presenter``), the sample page (``_sample``, with the run's generation
and retrieval fields in ``_run_fields`` and triple ids in ``_ids``), citation validity
(``_validity``), the figures (``_charts``), the export tables (``_export``), the comparison of
several runs (``_compare``).
"""

from citegraph.kalma.view._compare import CompareFigures
from citegraph.kalma.view._presenter import METRIC_NAMES, KalmaPresenter

__all__ = ["METRIC_NAMES", "CompareFigures", "KalmaPresenter"]
