"""CAQA tests. The hand-made graphs and worlds they share (``_caqa_graphs``, ``_worlds``,
``_codex_queries``) live in this folder, which this file puts on ``sys.path`` for the tests of
every stage folder below it (pytest's rootdir import mode)."""
