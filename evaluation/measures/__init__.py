"""trec_eval-exact retrieval measures over polars frames, vectorised (pure: no Django).

    evaluate(qrels, run, ["ndcg_cut.10", "map", "nDCG@20", "ERR@20"], Options()) -> Evaluation
    format_trec_eval(evaluation, per_topic=True, runid="tag") -> what `trec_eval -q` prints

Semantics are trec_eval 9.0.8's (the C code inside pytrec_eval), with Options for 10.0,
exponential gain, `-l`, `-M`, `-c` and `-J`. Measures are named in trec_eval's dialect or
ir_measures'. Modules: families (every measure family declared once: names in both dialects,
parameters, docs, menus), catalog (trec_eval's measure table and `-m` syntax), dialects
(the one parser of names in both dialects, and how people read names), grouped (a request
in both dialects, scored by option group, and its outputs: each value's single spec and
cutoff), reference and doc (the measures page), ranking (trec_eval's document order),
scoring (the trec_eval measures), cascade (ERR, RR@k, RBP, Judged), report (text output),
frames (mapping -> frame helpers); trec_eval's other inputs: prefs (-R prefs, qrels_prefs),
judgment_groups (-R qrels_jg), zscores (-Z), judged_only (-J), inputs (which -R computes
which measure); chunked (a run too large to hold whole, scored in chunks of whole topics).
"""

from .catalog import DEFAULT_MEASURES, Measure, Options, parse_measures
from .chunked import can_chunk, evaluate_in_chunks
from .dialects import MeasureRequest, display_name, ir_name, ir_names, is_mean, parse_request
from .frames import qrels_frame, run_frame
from .grouped import Output, evaluate, output_names, outputs, parse_requests
from .judgment_groups import evaluate_judgment_groups
from .prefs import evaluate_prefs, prefs_from_qrels
from .report import format_ir_measures, format_trec_eval
from .scoring import Evaluation

__all__ = [
    "DEFAULT_MEASURES",
    "Evaluation",
    "Measure",
    "MeasureRequest",
    "Options",
    "Output",
    "can_chunk",
    "display_name",
    "evaluate",
    "evaluate_in_chunks",
    "evaluate_judgment_groups",
    "evaluate_prefs",
    "format_ir_measures",
    "format_trec_eval",
    "ir_name",
    "ir_names",
    "is_mean",
    "output_names",
    "outputs",
    "parse_measures",
    "parse_request",
    "parse_requests",
    "prefs_from_qrels",
    "qrels_frame",
    "run_frame",
]
