"""trec_eval-exact retrieval measures over polars frames, vectorised (pure: no Django).

    evaluate(qrels, run, ["ndcg_cut.10", "map"], Options()) -> Evaluation
    format_trec_eval(evaluation, per_topic=True, runid="tag") -> what `trec_eval -q` prints

Semantics are trec_eval 9.0.8's (the C code inside pytrec_eval), with Options for 10.0,
exponential gain, `-l`, `-M`, `-c` and `-J`. Modules: catalog (measure names and `-m` syntax),
ranking (trec_eval's document order), scoring (the measures), report (text output),
frames (mapping -> frame helpers); trec_eval's other inputs: prefs (-R prefs, qrels_prefs),
judgment_groups (-R qrels_jg), zscores (-Z), judged_only (-J), inputs (which -R computes
which measure).
"""

from .catalog import DEFAULT_MEASURES, Measure, Options, display_name, parse_measures
from .frames import qrels_frame, run_frame
from .judgment_groups import evaluate_judgment_groups
from .prefs import evaluate_prefs, prefs_from_qrels
from .report import format_trec_eval
from .scoring import Evaluation, evaluate

__all__ = [
    "DEFAULT_MEASURES",
    "Evaluation",
    "Measure",
    "Options",
    "display_name",
    "evaluate",
    "evaluate_judgment_groups",
    "evaluate_prefs",
    "format_trec_eval",
    "parse_measures",
    "prefs_from_qrels",
    "qrels_frame",
    "run_frame",
]
