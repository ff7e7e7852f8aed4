"""ir_measures the ordinary way: read_trec_qrels/read_trec_run, calc_aggregate.

Usage: ir_measures_peer.py QRELS RUN
Prints the means as JSON: {"ndcg_cut_10": ..., "ndcg": ..., "P_10": ..., "map": ...}.
"""

import json
import sys

import ir_measures
from ir_measures import AP, P, nDCG

# ir_measures measure -> trec_eval's name for the same measure
MEASURES = {nDCG @ 10: "ndcg_cut_10", nDCG: "ndcg", P @ 10: "P_10", AP: "map"}


def main(qrels_path, run_path):
    qrels = ir_measures.read_trec_qrels(qrels_path)
    run = ir_measures.read_trec_run(run_path)
    means = ir_measures.calc_aggregate(list(MEASURES), qrels, run)
    print(json.dumps({MEASURES[measure]: float(value) for measure, value in means.items()}))


if __name__ == "__main__":
    main(*sys.argv[1:])
