"""A leaderboard out in the ecosystem's layouts, and one computed elsewhere checked against
ours (issue 17, part 5). The layouts are evaluation.trec.leaderboards' (pure)."""

from __future__ import annotations

from evaluation import measures
from evaluation.dashboards.scoring import Scoring, scored
from evaluation.trec import leaderboards as formats

MAX_UPLOAD_BYTES = 50 << 20

MESSAGES = {
    "layout": "Choose a layout: " + ", ".join(formats.LAYOUTS) + ".",
    "download_layout": "Choose a layout: " + ", ".join(formats.DOWNLOAD_LAYOUTS) + ".",
    "too_big": "The file is larger than 50 MB.",
    "empty": "Choose a file.",
    "rank_measure": "{measure} is not a measure both leaderboards hold: {names}.",
}


def download(scoring: Scoring, layout: str) -> str | bytes:
    """The leaderboard file in one of formats.DOWNLOAD_LAYOUTS (a zip's bytes, or text)."""
    entries = leaderboard_entries(scoring)
    if layout == formats.ZIP_LAYOUT:
        return formats.write_leaderboard_zip(entries)
    return formats.write_leaderboard(entries, layout)


def leaderboard_entries(scoring: Scoring) -> list[formats.Entry]:
    """Every run scored with the scoring: each topic's value of each measure (topics in byte
    order), then its "all" values (trec_eval's means), runs in label order."""
    entries = []
    evaluations = sorted(scored(scoring).select_related("run__system"), key=lambda e: str(e.run))
    for evaluation in evaluations:
        label = str(evaluation.run)
        for qid in sorted(evaluation.per_topic, key=str.encode):
            values = evaluation.per_topic[qid]
            entries.extend(
                formats.Entry(label, qid, name, values[name])
                for name in scoring.names
                if name in values
            )
        entries.extend(
            formats.Entry(label, formats.ALL, name, evaluation.means[name])
            for name in scoring.names
            if name in evaluation.means
        )
    return entries


def aliases(scoring: Scoring) -> tuple[dict[str, str], dict[str, str]]:
    """(run aliases, measure aliases): a run's bare name (when no other run has it) and its
    label with whitespace as ``_``; a measure's display name (nDCG@10) and -m form."""
    runs: dict[str, list[str]] = {}
    labels = {}
    for evaluation in scored(scoring).select_related("run__system"):
        label = str(evaluation.run)
        runs.setdefault(evaluation.run.name, []).append(label)
        labels[formats._label(label)] = label
    run_aliases = {name: found[0] for name, found in runs.items() if len(found) == 1}
    run_aliases.update(labels)
    measure_aliases = {}
    for name in scoring.names:
        measure_aliases[measures.display_name(name)] = name
        measure_aliases[scoring.outputs[name].spec] = name
    return run_aliases, measure_aliases


def check_with_rankings(
    scoring: Scoring,
    data: bytes,
    layout: str,
    *,
    filename: str,
    measure: str | None = None,
    k: int | None = None,
):
    """Their leaderboard (a file in ``layout``) against ours, entry by entry
    (LeaderboardFormatError for a bad file: every bad line, file:line), plus their system
    ranking by ``measure`` (an output name, -m form or display name; default nDCG@10, else
    the first measure both hold) against ours, meta-evaluated as the AutoJudge track does
    (evaluation.dashboards.rankings: every coefficient, @k with ``k``, swaps, intervals and
    per-topic coefficients over the topics both hold). The page and the API both call this. The ranking is None when fewer than 3
    runs or no measure are in both; RankingError (field "measure" or "k") when the measure
    asked for is not in both or k is more than the runs compared."""
    from evaluation.dashboards import rankings  # rankings imports this package's scoring

    theirs = formats.read_leaderboard(data, layout, filename=filename)
    ours = leaderboard_entries(scoring)
    run_aliases, measure_aliases = aliases(scoring)
    comparison = formats.compare_leaderboards(
        ours, theirs, run_aliases=run_aliases, measure_aliases=measure_aliases
    )
    our_runs = {e.run for e in ours}
    our_measures = {e.measure for e in ours}
    matched = [
        formats.Entry(
            e.run if e.run in our_runs else run_aliases.get(e.run, e.run),
            e.topic,
            e.measure if e.measure in our_measures else measure_aliases.get(e.measure, e.measure),
            e.value,
        )
        for e in theirs
    ]
    shared = our_measures & {e.measure for e in matched if e.topic == formats.ALL}
    if measure:
        wanted = measure if measure in our_measures else measure_aliases.get(measure)
        if wanted not in shared:
            names = ", ".join(measures.display_name(m) for m in sorted(shared)) or "none"
            raise rankings.RankingError(
                "measure", MESSAGES["rank_measure"].format(measure=measure, names=names)
            )
        measure = wanted
    else:
        measure = "ndcg_cut_10" if "ndcg_cut_10" in shared else min(shared, default=None)
    if measure is None:
        return comparison, None
    tables = [_tables(entries, measure) for entries in (ours, matched)]
    try:
        ranking = rankings.rank_comparison(
            tables[0][0],
            tables[1][0],
            measure=measure,
            k=k,
            reference_topics=tables[0][1],
            other_topics=tables[1][1],
        )
    except rankings.RankingError as error:
        if error.field == "runs":  # fewer than 3 runs in both: nothing to rank, not an error
            return comparison, None
        raise
    return comparison, ranking


def _tables(entries, measure: str):
    """({run: "all" value}, {run: {topic: value}}) of one measure."""
    means, topics = {}, {}
    for e in entries:
        if e.measure != measure:
            continue
        if e.topic == formats.ALL:
            means[e.run] = e.value
        else:
            topics.setdefault(e.run, {})[e.topic] = e.value
    return means, {run: values for run, values in topics.items() if run in means}
