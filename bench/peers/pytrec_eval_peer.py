"""pytrec_eval the ordinary way: its own parsers into dicts, RelevanceEvaluator, means.

Usage: pytrec_eval_peer.py QRELS RUN
Prints the means as JSON: {"ndcg_cut_10": ..., "ndcg": ..., "P_10": ..., "map": ...}.
"""

import json
import sys

import pytrec_eval

MEASURES = ("ndcg_cut_10", "ndcg", "P_10", "map")


def main(qrels_path, run_path):
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "ndcg", "P.10", "map"})
    per_topic = evaluator.evaluate(run)
    means = {
        measure: pytrec_eval.compute_aggregated_measure(
            measure, [values[measure] for values in per_topic.values()]
        )
        for measure in MEASURES
    }
    print(json.dumps(means))


if __name__ == "__main__":
    main(*sys.argv[1:])
