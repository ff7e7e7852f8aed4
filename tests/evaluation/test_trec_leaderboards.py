"""evaluation.trec.leaderboards: the four layouts round-trip, trec_eval's layout is what
our trec_eval-exact report prints, hostile files are refused with file:line errors, and two
leaderboards are compared entry by entry."""

import io
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation import measures
from evaluation.trec import leaderboards as formats

E = formats.Entry

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-/.@", min_size=1, max_size=12)
values = st.floats(allow_nan=False, allow_infinity=False, width=64)
entries = st.lists(st.tuples(names, names, names, values), max_size=30, unique_by=lambda t: t[:3])


@settings(max_examples=60, deadline=None)
@given(entries, st.sampled_from(["ir_measures", "tot", "jsonl"]))
def test_full_precision_layouts_round_trip(rows, layout):
    written = formats.write_leaderboard([E(*row) for row in rows], layout)
    if not rows:
        return
    assert formats.read_leaderboard(written.encode(), layout) == [E(*row) for row in rows]


def test_trec_eval_layout_is_what_trec_eval_q_prints_for_one_run():
    qrels = measures.qrels_frame({"1": {"a": 1, "b": 0}, "2": {"c": 2}})
    run = measures.run_frame({"1": {"a": 2.0, "b": 1.0}, "2": {"d": 1.0, "c": 0.5}})
    result = measures.evaluate(qrels, run, ["runid", "ndcg_cut.10", "P.5", "num_ret"])
    expected = measures.format_trec_eval(result, per_topic=True, runid="bm25")
    entries = [
        E("bm25", row["qid"], name, row[name])
        for row in result.per_topic.iter_rows(named=True)
        for name in ("ndcg_cut_10", "P_5", "num_ret")
    ] + [E("bm25", "all", name, result.means[name]) for name in ("ndcg_cut_10", "P_5", "num_ret")]

    written = formats.write_leaderboard(entries, "trec_eval")

    assert sorted(written.splitlines()) == sorted(expected.splitlines())
    back = formats.read_leaderboard(expected.encode(), "trec_eval")
    assert {(e.run, e.topic, e.measure) for e in back} == {
        (e.run, e.topic, e.measure) for e in entries
    }
    assert all(
        abs(a.value - b.value) <= 5e-5
        for a, b in zip(sorted(back, key=str), sorted(entries, key=str), strict=True)
    )


def test_trec_eval_blocks_of_several_runs_are_told_apart():
    text = (
        "P_5\t1\t0.2000\nrunid\tall\tbm25\nP_5\tall\t0.2000\n"
        "P_5\t1\t0.4000\nrunid\tall\tdense\nP_5\tall\t0.4000\n"
    )
    entries = formats.read_leaderboard(text.encode(), "trec_eval")
    assert entries == [
        E("bm25", "1", "P_5", 0.2),
        E("bm25", "all", "P_5", 0.2),
        E("dense", "1", "P_5", 0.4),
        E("dense", "all", "P_5", 0.4),
    ]


def test_a_trec_eval_file_without_runid_is_one_run_named_after_the_file():
    entries = formats.read_leaderboard(
        b"map\t1\t0.5\nmap\tall\t0.5\n", "trec_eval", filename="x/bm25.txt"
    )
    assert {e.run for e in entries} == {"bm25"}


@pytest.mark.parametrize(
    ("layout", "data", "problem"),
    [
        (
            "tot",
            b"bm25 P_5 1 0.2\nbm25 P_5 2\n",
            "lb.txt:2: expected 4 fields (run measure topic value), found 3",
        ),
        (
            "ir_measures",
            b"bm25 1 P_5 2.5abc\n",
            "lb.txt:1: the value '2.5abc' is not a finite number",
        ),
        ("ir_measures", b"bm25 1 P_5 nan\n", "lb.txt:1: the value 'nan' is not a finite number"),
        (
            "ir_measures",
            b"bm25 1 P_5 0.1\nbm25 1 P_5 0.2\n",
            "lb.txt:2: bm25 1 P_5 is given twice (first on line 1)",
        ),
        (
            "jsonl",
            b'{"run_id": "a", "topic_id": "1", "measure": "P_5"}\n',
            "lb.txt:1: missing value",
        ),
        ("jsonl", b"[1, 2]\n", "lb.txt:1: expected an object {run_id, topic_id, measure, value}"),
        (
            "jsonl",
            b'{"run_id": "a", "topic_id": "1", "measure": "P_5", "value": true}\n',
            "lb.txt:1: the value True is not a finite number",
        ),
        ("jsonl", b"{nope\n", "lb.txt:1: not JSON"),
        (
            "jsonl",
            b'{"run_id": "a", "topic_id": "1", "measure": "P_5", "value": 0.1, "value": 0.9}\n',
            "lb.txt:1: duplicate key 'value' (a key may appear once per object)",
        ),
        ("jsonl", b"[" * 100_000 + b"\n", "lb.txt:1: not JSON (nested more than 32 levels deep)"),
        (
            "jsonl",
            b'{"run_id": "a", "topic_id": "1", "measure": "P_5", "value": ' + b"7" * 5000 + b"}\n",
            "lb.txt:1: not JSON (a number has too many digits)",
        ),
        ("trec_eval", b"P_5 1\n", "lb.txt:1: expected 3 fields (measure topic value), found 2"),
        ("trec_eval", b"runid 1 bm25\n", "lb.txt:1: a runid line names topic all, not '1'"),
        ("tot", b"\xff\xfe bm25\n", "lb.txt:1: not UTF-8 text"),
        ("tot", b"\n\n", "lb.txt:1: the file holds no entry"),
    ],
)
def test_hostile_files_are_refused_with_file_and_line(layout, data, problem):
    with pytest.raises(formats.LeaderboardFormatError) as caught:
        formats.read_leaderboard(data, layout, filename="lb.txt")
    assert any(error.startswith(problem) for error in caught.value.errors), caught.value.errors


def test_every_bad_line_is_listed_up_to_the_cap_with_the_total():
    data = b"".join(b"bm25 1 P_5 x%d\n" % i for i in range(30))
    with pytest.raises(formats.LeaderboardFormatError) as caught:
        formats.read_leaderboard(data, "ir_measures", filename="lb.txt")
    assert len(caught.value.errors) == formats.MAX_ERRORS and caught.value.total == 30
    assert "(and 10 more)" in str(caught.value)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"[" * 100_000, "lb.jsonl:1: not JSON (nested more than 32 levels deep)"),
        (
            b'{"run_id": "a", "topic_id": "1", "measure": "P_5", "value": ' + b"9" * 5000 + b"}",
            "lb.jsonl:1: not JSON (a number has too many digits)",
        ),
    ],
    ids=["deep", "digits"],
)
def test_a_json_line_the_decoder_cannot_take_is_a_line_error_not_a_crash(line, problem):
    with pytest.raises(formats.LeaderboardFormatError) as caught:
        formats.read_leaderboard(line + b"\n", "jsonl", filename="lb.jsonl")
    assert caught.value.errors == [problem]


def test_reading_stops_at_the_10000th_bad_line_and_says_where():
    data = b"x\n" * 50_000
    with pytest.raises(formats.LeaderboardFormatError) as caught:
        formats.read_leaderboard(data, "ir_measures", filename="lb.txt")
    assert (caught.value.total, len(caught.value.errors)) == (10_000, formats.MAX_ERRORS + 1)
    assert caught.value.errors[-1] == (
        "lb.txt:10000: checking stopped at this line after 10,000 errors; the lines after it "
        "were not checked"
    )


def test_an_unknown_layout_is_refused():
    with pytest.raises(ValueError, match="unknown layout"):
        formats.read_leaderboard(b"", "csv")
    with pytest.raises(ValueError, match="unknown layout"):
        formats.write_leaderboard([], "csv")


def test_whitespace_in_names_becomes_underscores_in_whitespace_layouts():
    written = formats.write_leaderboard([E("my system/run 1", "1", "P_5", 0.5)], "tot")
    assert written == "my_system/run_1 P_5 1 0.5\n"


def test_compare_finds_the_same_the_different_and_the_unmatched():
    ours = [
        E("bm25/bm25", "1", "ndcg_cut_10", 0.5),
        E("bm25/bm25", "2", "ndcg_cut_10", 0.25),
        E("bm25/bm25", "all", "ndcg_cut_10", 0.375),
        E("dense/dense", "1", "ndcg_cut_10", 0.1),
    ]
    theirs = [
        E("bm25", "1", "nDCG@10", 0.50004),
        E("bm25", "2", "nDCG@10", 0.3),
        E("bm25", "all", "nDCG@10", 0.375),
        E("bm25", "3", "nDCG@10", 1.0),
        E("other", "1", "AP", 0.2),
    ]

    result = formats.compare_leaderboards(
        ours, theirs, run_aliases={"bm25": "bm25/bm25"}, measure_aliases={"nDCG@10": "ndcg_cut_10"}
    )

    assert (result.compared, result.same, result.only_ours, result.only_theirs) == (3, 2, 1, 2)
    [difference] = result.differences
    assert (difference.run, difference.topic, difference.measure) == (
        "bm25/bm25",
        "2",
        "ndcg_cut_10",
    )
    assert difference.delta == pytest.approx(0.05) and result.max_delta == pytest.approx(0.05)
    assert (result.unknown_runs, result.unknown_measures) == (["other"], ["AP"])


def test_the_zip_has_one_trec_eval_file_per_run_with_safe_distinct_names():
    entries = [
        formats.Entry("bm25/a b", "1", "P_5", 0.25),
        formats.Entry("bm25/a b", "all", "P_5", 0.25),
        formats.Entry("bm25_a_b", "1", "P_5", 0.5),
        formats.Entry("../etc", "all", "map", 0.125),
    ]
    with zipfile.ZipFile(io.BytesIO(formats.write_leaderboard_zip(entries))) as archive:
        names = archive.namelist()
        assert names == ["bm25_a_b.txt", "bm25_a_b-2.txt", "_etc.txt"]
        first = archive.read("bm25_a_b.txt").decode()
    assert first == formats.write_leaderboard(entries[:2], "trec_eval")
    assert "runid                 \tall\tbm25/a_b\n" in first
