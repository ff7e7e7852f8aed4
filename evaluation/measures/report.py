"""trec_eval's text output, byte for byte (meas_print_single.c, meas_print_final.c).

Each line is printf("%-22s\t%s\t%6.4f\n", name, qid, value); counts use "%ld" on the value
cast to long, and runid prints the run's tag. With -q the per-topic lines come first, grouped
by topic in trec_eval's topic order, each topic's measures in table order; num_q, runid and
gm_map have no per-topic line. The summary lines, qid "all", follow.
"""

import math

import polars as pl

from .catalog import COUNT_NAMES, SUMMARY_ONLY_NAMES
from .scoring import Evaluation

__all__ = ["format_trec_eval"]


def format_trec_eval(
    evaluation: Evaluation, *, per_topic: bool = False, runid: str = "", summary: bool = True
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
        lines.extend(_per_topic_lines(evaluation))
    if not summary:
        return "".join(lines)
    if evaluation.runid_requested:
        lines.append(f"{'runid':<22}\tall\t{runid}\n")
    for name in evaluation.measures:
        lines.append(_line(name, "all", evaluation.means[name], evaluation.zscored))
    return "".join(lines)


def _per_topic_lines(evaluation: Evaluation) -> list[str]:
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
    for name in names:
        values = frame.get_column(name).to_list()
        tag = prefix
        if frame.schema[name] == pl.String:  # relstring: printed quoted, no summary, no Z
            texts = [f"'{value}'" for value in values]
            tag = ""
        elif name in COUNT_NAMES and not evaluation.zscored:
            texts = [str(int(value)) for value in values]
        else:
            texts = [_decimal(value, evaluation.zscored) for value in values]
        rows = zip(qids, texts, strict=True)
        columns.append([f"{tag}{name:<22}\t{qid}\t{text}\n" for qid, text in rows])
    return [column[row] for row in range(len(qids)) for column in columns]


def _line(name: str, qid: str, value: float, zscored: bool = False) -> str:
    if zscored:
        return f"Z{name:<22}\t{qid}\t{_decimal(value, zscored)}\n"
    text = str(int(value)) if name in COUNT_NAMES else _decimal(value)
    return f"{name:<22}\t{qid}\t{text}\n"


def _decimal(value: float, zscored: bool = False) -> str:
    """printf("%6.4f"). glibc prints a NaN with its sign. A measure's NaN is trec_eval's 0/0
    (e.g. under -J), whose sign x86 sets: "-nan", however our engines made it. Z-scores keep
    the sign arithmetic gave them (convert_to_zscores starts from such a -nan): a nan read
    from a z-score file has none, "nan"."""
    if math.isnan(value):
        return "  -nan" if not zscored or math.copysign(1.0, value) < 0 else "   nan"
    return f"{value:6.4f}"
