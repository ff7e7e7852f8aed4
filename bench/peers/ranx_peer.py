"""ranx the ordinary way: Qrels/Run.from_file(kind="trec"), evaluate.

Usage: ranx_peer.py QRELS RUN
Prints the means as JSON: {"ndcg_cut_10": ..., "ndcg": ..., "P_10": ..., "map": ...}.
ranx orders tied scores by its own (unstable) sort and keeps scores as float64, so on runs with
ties it can differ from trec_eval; bench/README.md explains.
"""

import json
import sys

from ranx import Qrels, Run, evaluate

# ranx metric name -> trec_eval's name for the same measure
MEASURES = {"ndcg@10": "ndcg_cut_10", "ndcg": "ndcg", "precision@10": "P_10", "map": "map"}


def main(qrels_path, run_path):
    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    scores = evaluate(qrels, run, list(MEASURES))
    print(json.dumps({MEASURES[name]: float(value) for name, value in scores.items()}))


if __name__ == "__main__":
    main(*sys.argv[1:])
