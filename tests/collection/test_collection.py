"""evaluation/collection: the HTML reader, the passage splitter, the FAQ topics and their
answers, the fallback and the rankers. Pure: no database."""

import re
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation import trec
from evaluation.collection import (
    MAX_WORDS,
    MIN_WORDS,
    SourceMissing,
    build_collection,
    read_sections,
    split_passages,
)
from evaluation.collection.files import score_runs
from evaluation.collection.html import Section
from evaluation.collection.rankers import DEPTH, RANKERS, run_rankers

from .conftest import need_django, need_python

PYTHON_SHAPE = """<html><head><title>Demo &#8212; Python docs</title></head><body>
<div class="related" role="navigation"><ul><li><a href="../index.html">index</a></li></ul></div>
<div class="document"><div class="body" role="main">
<section id="demo-faq">
<h1>Demo FAQ<a class="headerlink" href="#demo-faq" title="Permalink">¶</a></h1>
<nav class="contents" id="contents"><p class="topic-title">Contents</p>
<ul><li><a href="#why">Why?</a></li></ul></nav>
<section id="why-is-the-sky-blue">
<h2><a class="toc-backref" href="#id1">Why is the sky blue?</a><a class="headerlink" href="#why-is-the-sky-blue">¶</a></h2>
<p>Because of <a class="reference internal" href="../library/optics.html#rayleigh">Rayleigh
   scattering</a>.</p>
<div class="highlight"><pre><span class="k">print</span>(<span class="s">"blue"</span>)
    indented()
</pre></div>
<dl><dt id="light">light</dt><dd><p>Waves.</p></dd></dl>
</section>
</section>
</div></div>
<div class="sphinxsidebar" role="navigation"><h3>Table of Contents</h3><p>Sidebar words</p></div>
<div class="footer">Copyright footer</div>
</body></html>"""

DJANGO_SHAPE = """<html><body><div id="hd"><h1><a href="index.html">Django docs</a></h1></div>
<div class="yui-g" id="faq-demo">
<div class="section" id="s-faq-demo">
<span id="faq-demo"></span><h1>FAQ: Demo<a class="headerlink" href="#faq-demo">¶</a></h1>
<div class="section" id="s-how-do-i-start">
<span id="how-do-i-start"></span><h2>How do I start?<a class="headerlink" href="#how-do-i-start">¶</a></h2>
<p>Read <a class="reference internal" href="../intro/tutorial01.html"><span class="doc">the tutorial</span></a>.</p>
<div class="highlight-default notranslate"><div class="highlight"><pre>$ django-admin startproject mysite
</pre></div></div>
<dl class="py class"><dt id="django.demo.Start">class Start<a class="reference internal" href="../_modules/demo.html#Start"><span class="viewcode-link"><span class="pre">[source]</span></span></a></dt></dl>
</div>
</div>
</div>
<div class="yui-b" id="sidebar"><h3>Contents</h3><ul><li>Sidebar link</li></ul></div>
</body></html>"""


# --- the HTML reader ---------------------------------------------------------------------------


def test_reader_reads_pythons_shape_and_drops_navigation():
    sections = read_sections(PYTHON_SHAPE, "faq/demo")

    assert [(s.anchor, s.heading, s.level) for s in sections] == [
        ("demo-faq", "Demo FAQ", 1),
        ("why-is-the-sky-blue", "Why is the sky blue?", 2),
    ]
    first, answer = sections
    assert first.blocks == []  # its contents list is navigation
    assert answer.parents == ("Demo FAQ",)
    assert answer.blocks == [
        "Because of Rayleigh scattering.",
        'print("blue")\n    indented()',  # a code block keeps its lines and indentation
        "light",
        "Waves.",
    ]
    assert ("library/optics", "rayleigh") in answer.links
    assert "light" in answer.ids
    text = " ".join(block for s in sections for block in s.blocks)
    for outside in ("index", "Sidebar", "Copyright", "Contents", "¶"):
        assert outside not in text


def test_reader_reads_djangos_shape_with_public_anchors():
    sections = read_sections(DJANGO_SHAPE, "faq/demo")

    assert [(s.anchor, s.heading, s.level) for s in sections] == [
        ("faq-demo", "FAQ: Demo", 1),
        ("how-do-i-start", "How do I start?", 2),
    ]
    assert sections[1].blocks == [
        "Read the tutorial.",
        "$ django-admin startproject mysite",
        "class Start",  # without its "[source]" link
    ]
    assert ("intro/tutorial01", "") in sections[1].links
    assert "Sidebar" not in " ".join(sections[1].blocks)


def test_reader_reads_an_installed_python_faq_page():
    doc = need_python()
    html = (doc.root / "faq" / "programming.html").read_text(encoding="utf-8")
    sections = {s.anchor: s for s in read_sections(html, "faq/programming")}

    answer = sections["why-are-default-values-shared-between-objects"]
    assert answer.heading == "Why are default values shared between objects?"
    assert answer.parents == ("Programming FAQ", "Core Language")
    assert answer.level == 3
    assert any("def " in block and "\n" in block for block in answer.blocks)  # code kept
    assert not any("¶" in s.heading for s in sections.values())
    assert sections["programming-faq"].blocks == []  # the page's contents list is dropped


def test_reader_reads_an_installed_django_faq_page():
    doc = need_django()
    html = (doc.root / "faq" / "models.html").read_text(encoding="utf-8")
    sections = read_sections(html, "faq/models")

    anchors = [s.anchor for s in sections]
    assert anchors[0] == "faq-databases-and-models"
    assert "how-can-i-see-the-raw-sql-queries-django-is-running" in anchors
    assert not any(anchor.startswith("s-") for anchor in anchors)
    raw_sql = sections[anchors.index("how-can-i-see-the-raw-sql-queries-django-is-running")]
    assert any(block.startswith(">>> from django.db import connection") for block in raw_sql.blocks)


# --- the passage splitter ----------------------------------------------------------------------


def _section(anchor: str, words: int, *, page="p", paragraph=50) -> Section:
    blocks = []
    while words > 0:
        size = min(paragraph, words)
        blocks.append(" ".join(f"{anchor}{i}" for i in range(size)))
        words -= size
    return Section(page, anchor, anchor.title(), 2, ("Page",), blocks)


def _split(sections):
    return split_passages(
        sections,
        docno=lambda s, part: f"{s.page}#{s.anchor}" + (f"~{part}" if part > 1 else ""),
        url=lambda s: f"https://example.org/{s.page}#{s.anchor}",
        page_title=lambda s: "Page",
    )


def test_splitter_keeps_every_passage_within_the_bounds():
    sections = [
        _section("empty", 0),
        _section("short", 40),
        _section("fits", 250),
        _section("tiny", 30),
        _section("long", 900),
        _section("last", 20),  # short, and the passage before it is full: dropped
        _section("other", 150, page="q"),
    ]
    passages = _split(sections)

    assert all(MIN_WORDS <= p.words <= MAX_WORDS for p in passages), [p.words for p in passages]
    assert [p.docno for p in passages] == [
        "p#short",  # 40 words wait for the next section: 40 + "Fits" + 250, then "Tiny" + 30
        "p#long",  # 900 words in three parts
        "p#long~2",
        "p#long~3",
        "q#other",
    ]
    assert passages[0].sections == (("p", "short"), ("p", "fits"), ("p", "tiny"))
    assert passages[0].title == "Page — Short"
    assert passages[0].url == "https://example.org/p#short"
    assert "Fits" in passages[0].text.split("\n\n")  # a joined section's heading is kept
    assert not any("last0" in p.text for p in passages)


def test_splitter_joins_a_short_section_to_the_passage_before_when_it_fits():
    passages = _split([_section("first", 200), _section("second", 60)])

    assert [p.docno for p in passages] == ["p#first"]
    assert passages[0].sections == (("p", "first"), ("p", "second"))
    assert passages[0].words == 200 + 1 + 60


def test_splitter_gives_a_pages_short_end_whole_sections_from_the_passage_before():
    sections = [_section("a", 50), _section("b", 250), _section("c", 90), _section("d", 40)]
    passages = _split(sections)

    # a waits for b (301 words); c joins them (392); d (40) does not fit, so it takes c.
    assert [(p.docno, p.sections, p.words) for p in passages] == [
        ("p#a", (("p", "a"), ("p", "b")), 50 + 1 + 250),
        ("p#c", (("p", "c"), ("p", "d")), 90 + 1 + 40),
    ]
    assert passages[1].title == "Page — C"
    assert passages[1].text.split("\n\n")[-2] == "D"  # d's heading, kept as a line


def test_splitter_splits_a_long_section_on_paragraphs_into_near_even_parts():
    passages = _split([_section("long", 1000, paragraph=40)])

    assert [p.docno for p in passages] == ["p#long", "p#long~2", "p#long~3"]
    assert all(MIN_WORDS <= p.words <= MAX_WORDS for p in passages)
    assert sum(p.words for p in passages) == 1000  # nothing lost
    # Cut between paragraphs: every part is whole paragraphs of 40 words.
    assert all(len(block.split()) == 40 for p in passages for block in p.text.split("\n\n"))


def test_splitter_cuts_a_paragraph_longer_than_the_maximum():
    passages = _split([_section("wall", 1000, paragraph=1000)])

    assert all(MIN_WORDS <= p.words <= MAX_WORDS for p in passages)
    assert sum(p.words for p in passages) == 1000


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1500), st.integers(1, 450), st.sampled_from("pq")),
        max_size=12,
    )
)
def test_splitter_never_leaves_the_bounds_and_loses_only_a_pages_short_end(shapes):
    sections = [
        _section(f"s{i}x", words, page=page, paragraph=paragraph)
        for i, (words, paragraph, page) in enumerate(sorted(shapes, key=lambda s: s[2]))
    ]
    passages = _split(sections)

    assert all(MIN_WORDS <= p.words <= MAX_WORDS for p in passages), [p.words for p in passages]
    held = {key for p in passages for key in p.sections}
    for page in "pq":
        on_page = [s for s in sections if s.page == page and s.words]
        kept = [s for s in on_page if (s.page, s.anchor) in held]
        # What is left out is a run of short sections at the page's end, under MIN_WORDS.
        left = on_page[len(kept) :]
        assert on_page[: len(kept)] == kept
        assert sum(s.words + 1 for s in left) < MIN_WORDS + len(left)


# --- the installed documentation ---------------------------------------------------------------


@pytest.fixture(scope="module")
def real():
    need_python()
    need_django()
    return build_collection("both")


def test_installed_docs_give_at_least_2000_passages_and_60_topics(real):
    assert len(real.passages) >= 2000
    assert len(real.topics) >= 60
    assert real.sources[0].startswith("Python 3.") and "PSF" in real.sources[0]
    assert real.sources[1].startswith("Django ") and "BSD-3-Clause" in real.sources[1]


def test_every_real_passage_is_within_bounds_titled_and_addressed(real):
    docnos = [p.docno for p in real.passages]
    assert len(set(docnos)) == len(docnos)
    for passage in real.passages:
        assert MIN_WORDS <= passage.words <= MAX_WORDS, passage.docno
        assert passage.title.strip(), passage.docno
        assert not any(c.isspace() for c in passage.docno)
        assert re.fullmatch(
            r"https://docs\.python\.org/3\.\d+/[\w/.-]+\.html#[\w.-]+"
            r"|https://docs\.djangoproject\.com/en/\d+\.\d+/[\w/.-]*#[\w.-]+",
            passage.url,
        ), passage.url


def test_real_topics_are_faq_questions_answered_by_their_own_section(real):
    by_query = {topic.query: topic for topic in real.topics}
    topic = by_query["Why are default values shared between objects?"]
    assert topic.qid.startswith("py-faq-")
    assert "Why are default values shared between objects?" in topic.description
    assert "Programming FAQ, under “Core Language”" in topic.description
    assert "(3)" in topic.narrative and "(1)" in topic.narrative
    answers = [docno for docno, grade in topic.answers.items() if grade == 3]
    assert answers == ["py:faq/programming#why-are-default-values-shared-between-objects"]
    passages = {p.docno: p for p in real.passages}
    assert "mydict" in passages[answers[0]].text  # the FAQ's own example
    assert all(topic.answers for topic in real.topics)
    assert all(set(topic.answers.values()) <= {1, 3} for topic in real.topics)
    assert sum(t.qid.startswith("dj-faq-") for t in real.topics) >= 40
    assert sum(t.qid.startswith("py-faq-") for t in real.topics) >= 150


def test_a_link_in_an_answer_makes_its_target_related(real):
    related = [
        (topic.qid, docno)
        for topic in real.topics
        for docno, grade in topic.answers.items()
        if grade == 1
    ]
    assert related
    passages = {p.docno: p for p in real.passages}
    assert all(docno in passages for _, docno in related)


# --- the fallback ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fallback():
    return build_collection("fallback")


def test_fallback_splits_pydoc_topics_within_bounds(fallback):
    assert len(fallback.sources) == 1
    assert re.fullmatch(r"pydoc_data\.topics of Python 3\.\d+ \(PSF-2\.0\)", fallback.sources[0])
    assert len(fallback.passages) >= 150
    assert all(MIN_WORDS <= p.words <= MAX_WORDS for p in fallback.passages)
    assert all(p.url.startswith("https://docs.python.org/3.") for p in fallback.passages)
    by_query = {t.query: t for t in fallback.topics}
    assert len(fallback.topics) >= 30
    floats = by_query["Floating point literals"]  # help("FLOAT")
    assert floats.answers["pydoc:floating#floating-point-literals"] == 3
    assert "FLOAT" in floats.description
    assert all(3 in t.answers.values() for t in fallback.topics)


def test_the_same_source_gives_the_same_collection(fallback):
    again = build_collection("fallback")
    assert again.passages == fallback.passages
    assert again.topics == fallback.topics


def test_auto_falls_back_and_names_the_packages_when_none_is_installed(tmp_path):
    built = build_collection("auto", doc_root=tmp_path)

    assert built.sources[0].startswith("pydoc_data.topics")
    assert "python3.11-doc" in built.notes[0] and "python-django-doc" in built.notes[0]


def test_a_named_source_that_is_missing_is_refused(tmp_path):
    with pytest.raises(SourceMissing, match="apt-get install --no-install-recommends python3"):
        build_collection("python", doc_root=tmp_path)
    with pytest.raises(ValueError, match="unknown source 'perl'"):
        build_collection("perl")


def test_sample_of_installed_pages(sample_doc_root):
    built = build_collection("both", doc_root=sample_doc_root)

    assert {p.url.split("/")[2] for p in built.passages} == {
        "docs.python.org",
        "docs.djangoproject.com",
    }
    assert any(t.query == "Why are default values shared between objects?" for t in built.topics)
    assert any(t.qid.startswith("dj-faq-") for t in built.topics)


def test_auto_reads_what_is_installed_and_names_what_is_not(sample_doc_root):
    shutil.rmtree(sample_doc_root / "python-django-doc")
    built = build_collection("auto", doc_root=sample_doc_root)

    assert len(built.sources) == 1 and built.sources[0].startswith("Python 3.")
    assert built.notes == ["python-django-doc is not installed: its part is left out."]
    assert all(p.docno.startswith("py:") for p in built.passages)


# --- the rankers -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fallback_runs(fallback):
    return run_rankers(fallback.passages, fallback.topics)


def test_rankers_answer_every_topic_to_depth_in_trec_order(fallback, fallback_runs):
    assert list(fallback_runs) == list(RANKERS)
    assert len(RANKERS) >= 7
    qids = {t.qid for t in fallback.topics}
    for name, text in fallback_runs.items():
        run = trec.read_run(text.encode(), name=name)
        assert set(run["qid"]) == qids, name
        assert set(run["tag"]) == {name}
        for qid, group in run.group_by("qid", maintain_order=True):
            ranks = group["rank"].to_list()
            assert ranks == list(range(1, len(ranks) + 1)) and len(ranks) <= DEPTH
            pairs = list(zip(group["score"], group["docno"], strict=True))
            assert pairs == sorted(pairs, reverse=True), (name, qid)  # trec_eval's order


def test_rankers_are_deterministic(fallback, fallback_runs):
    again = run_rankers(fallback.passages, list(reversed(fallback.topics)))
    assert again == fallback_runs


def test_rankers_ndcg_spreads(fallback, fallback_runs):
    scores = score_runs(fallback, fallback_runs)

    assert all(0 < value < 1 for value in scores.values())
    assert max(scores.values()) - min(scores.values()) > 0.15, scores
    assert scores["bm25-title-body"] > scores["bm25-body"]  # titles hold the headings


def test_an_unknown_ranker_is_refused(fallback):
    with pytest.raises(ValueError, match="unknown ranker 'tfidf'"):
        run_rankers(fallback.passages, fallback.topics, ["tfidf"])
