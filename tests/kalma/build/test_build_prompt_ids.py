"""The build prompts show a person with an IRI id by the short id, and what they cite with it is
read back to the full IRI."""

from __future__ import annotations

from citegraph.kalma.build._evolve import _cited, _extended
from citegraph.kalma.build._prompts import annotate_messages, extend_messages
from citegraph.kg import Entity, Subgraph, Triple, with_short_ids

FULL = "http://example.org/kg/MarieCurie"
FACT = Triple(subject=FULL, relation="spouse", value="Pierre Curie", subject_label="Marie Curie")
MARIE = Subgraph(
    center=Entity(id=FULL, name="Marie Curie", short_id="ex:MarieCurie"), triples=(FACT,)
)


def test_annotate_and_extend_show_the_short_id() -> None:
    target = annotate_messages("Marie Curie married Pierre Curie.", [MARIE])[-1].content
    assert "knowledge: {qid: ex:MarieCurie, name: Marie Curie, spouse: Pierre Curie}" in target
    extend = extend_messages("P.", FACT, "Marie Curie", "ex:MarieCurie")[-1].content
    assert extend.endswith(
        "knowledge: {qid: ex:MarieCurie, name: Marie Curie, spouse: Pierre Curie}"
    )
    # A pool read from a dataset file has no short id: the compact local name is shown.
    bare = Subgraph(center=Entity(id=FULL, name="Marie Curie"), triples=(FACT,))
    assert "{qid: MarieCurie, " in annotate_messages("s", with_short_ids([bare]))[-1].content


def test_template_fallback_cites_the_short_id_and_reads_back() -> None:
    paragraph, why = _extended(
        "Marie Curie was a physicist.", "", FACT, {FULL: "Marie Curie"}, "ex:MarieCurie"
    )
    assert why == "template: the reply was empty"
    assert "[qid: ex:MarieCurie, spouse: Pierre Curie]" in paragraph
    assert _cited(paragraph, [MARIE]) == [FACT]
