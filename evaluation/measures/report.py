"""Text output: trec_eval's, byte for byte (meas_print_single.c, meas_print_final.c), and
what ir_measures' command line prints.

trec_eval: each line is printf("%-22s\t%s\t%6.4f\n", name, qid, value); counts use "%ld" on
the value cast to long, and runid prints the run's tag. With -q the per-topic lines come
first, grouped by topic in trec_eval's topic order, each topic's measures in table order;
num_q, runid and gm_map have no per-topic line. The summary lines, qid "all", follow.

ir_measures: "measure<TAB>value" lines, or with -q "qid<TAB>measure<TAB>value" per topic and
"all" lines; 4 decimals. Every topic of the qrels is scored, those the run lacks with
ir_measures' value for them (0 for every measure, counts too), and they count in the means.

`places` prints that many decimals instead of 4 (trec_eval keeps its width of 6), or the
shortest text that reads back as the same double (FULL).
"""

import math

import polars as pl

from .catalog import COUNT_NAMES, SUMMARY_ONLY_NAMES
from .dialects import ir_names, is_mean
from .scoring import Evaluation

__all__ = ["FULL", "format_ir_measures", "format_trec_eval"]

FULL = "full"


def format_trec_eval(
    evaluation: Evaluation,
    *,
    per_topic: bool = False,
    runid: str = "",
    summary: bool = True,
    places: int | str = 4,
) -> str:
    """What `trec_eval [-q] -m ...` prints for this evaluation.

    per_topic: `-q`. trec_eval 9.0.8 prints no per-topic lines for topics missing from the
        run (counted with `complete`); 10.0 prints them.
    runid: printed on the runid line, if runid was requested (trec_eval prints the tag of
        the run file's last line).
    summary: False is `-n`: no "all" lines (nor runid).
    With z-scores (`-Z`) every value line reads "Z" + name and prints %6.4f, counts too.
    """
    lines: list[str] = []
    if per_topic:
        lines.extend(_per_topic_lines(evaluation, places))
    if not summary:
        return "".join(lines)
    if evaluation.runid_requested:
        lines.append(f"{'runid':<22}\tall\t{runid}\n")
    for name in evaluation.measures:
        lines.append(_line(name, "all", evaluation.means[name], evaluation.zscored, places))
    return "".join(lines)


def format_ir_measures(
    evaluation: Evaluation, *, per_topic: bool = False, places: int | str = 4
) -> str:
    """What `ir_measures QRELS RUN MEASURES [-q]` prints (its default providers). The
    evaluation must list the qrels topics the run lacks (Options.complete): ir_measures
    scores them 0. Measures whose "all" value is no mean or sum (gm_map) keep theirs."""
    names = ir_names(evaluation.measures, evaluation.options.relevance_level)
    frame = evaluation.per_topic
    qids = frame.get_column("qid").to_list()
    lacking = frame.get_column("qid").is_in(list(evaluation.missing_topics)).to_numpy()
    columns = {}
    scored = set(frame.columns)
    for name in evaluation.measures:
        values = (
            frame.get_column(name).to_numpy().copy()
            if name in scored
            else (~lacking).astype(float)  # num_q: 1 for each topic the run has
        )
        values[lacking] = 0.0
        columns[name] = values
    lines = []
    if per_topic:
        for row, qid in enumerate(qids):
            lines += [f"{qid}\t{names[n]}\t{_number(columns[n][row], places)}\n" for n in columns]
    for name, values in columns.items():
        if name in COUNT_NAMES:  # counts add up, as ir_measures' NumQ, NumRet, NumRel
            mean = float(values.sum())
        elif is_mean(name):
            mean = float(values.sum()) / values.size if values.size else 0.0
        else:
            mean = evaluation.means[name]
        text = _number(mean, places)
        lines.append(f"all\t{names[name]}\t{text}\n" if per_topic else f"{names[name]}\t{text}\n")
    return "".join(lines)


def _number(value: float, places: int | str) -> str:
    return repr(float(value)) if places == FULL else f"{value:.{places}f}"


def _per_topic_lines(evaluation: Evaluation, places: int | str) -> list[str]:
    names = evaluation.line_order or [
        name for name in evaluation.measures if name not in SUMMARY_ONLY_NAMES
    ]
    frame = evaluation.per_topic
    if evaluation.strings is not None:
        frame = frame.join(evaluation.strings, on="qid", how="left", maintain_order="left")
    if evaluation.options.trec_eval_version == 9 and evaluation.missing_topics:
        frame = frame.filter(~frame.get_column("qid").is_in(list(evaluation.missing_topics)))
    qids = frame.get_column("qid").to_list()
    columns = []
    prefix = "Z" if evaluation.zscored else ""
    schema = frame.schema  # made anew at each call: once, not once a measure
    for name in names:
        values = frame.get_column(name).to_list()
        tag = prefix
        if schema[name] == pl.String:  # relstring: printed quoted, no summary, no Z
            texts = [f"'{value}'" for value in values]
            tag = ""
        elif name in COUNT_NAMES and not evaluation.zscored:
            texts = [str(int(value)) for value in values]
        else:
            texts = [_decimal(value, evaluation.zscored, places) for value in values]
        rows = zip(qids, texts, strict=True)
        columns.append([f"{tag}{name:<22}\t{qid}\t{text}\n" for qid, text in rows])
    return [column[row] for row in range(len(qids)) for column in columns]


def _line(name: str, qid: str, value: float, zscored: bool, places: int | str) -> str:
    if zscored:
        return f"Z{name:<22}\t{qid}\t{_decimal(value, zscored, places)}\n"
    text = str(int(value)) if name in COUNT_NAMES else _decimal(value, False, places)
    return f"{name:<22}\t{qid}\t{text}\n"


def _decimal(value: float, zscored: bool = False, places: int | str = 4) -> str:
    """printf("%6.4f"). glibc prints a NaN with its sign. A measure's NaN is trec_eval's 0/0
    (e.g. under -J), whose sign x86 sets: "-nan", however our engines made it. Z-scores keep
    the sign arithmetic gave them (convert_to_zscores starts from such a -nan): a nan read
    from a z-score file has none, "nan"."""
    if math.isnan(value):
        return "  -nan" if not zscored or math.copysign(1.0, value) < 0 else "   nan"
    if places == FULL:
        return f"{float(value)!r:>6}"
    return f"{value:6.{places}f}"
