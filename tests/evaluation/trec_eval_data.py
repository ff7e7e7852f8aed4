"""Seeded qrels and runs for checking every measure against trec_eval itself: graded
judgments with negative grades (-1, -2: trec_eval's "in the pool, unjudged") and grades
above 9 (relstring's '>'), tied and float32-tied scores, unjudged documents, topics only in
the qrels and topics only in the run, numeric qids whose byte order is not their numeric
order. Used by test_trec_eval_oracle.py and by tests/data/trec_eval/make_expected.py."""

import random

GRADES = [-2, -1, 0, 0, 0, 0, 1, 1, 1, 2, 2, 3, 4, 12]
TOPICS = ["1", "2", "3", "10", "21", "300"]

# Command lines (trec_eval's flags) whose output is compared byte for byte. Gains in the
# pairs stay at least 1 apart: trec_eval sorts gains with an integer comparison, so closer
# gains come out in an unspecified order.
PARAMETERS = [
    *("-m", "all_trec", "-m", "relstring.15", "-m", "yaap", "-m", "ndcg.0=1,2=5,3=2.5"),
    *("-m", "G.1=2,4=9", "-m", "Rndcg.2=7", "-m", "ndcg_rel.1=4", "-m", "utility.2,-1,-0.5,0"),
    *("-m", "11pt_avg.0.2,0.5,0.8", "-m", "set_F.0.5", "-m", "Rprec_mult.0.5,1,3"),
    *("-m", "success.1,3", "-m", "iprec_at_recall.0.15,0.33", "-m", "relative_P.2,7"),
]
COMMANDS = {
    "all_trec": ["-q", "-m", "all_trec"],
    "complete": ["-q", "-c", "-m", "all_trec"],
    "level_2": ["-q", "-l", "2", "-m", "all_trec"],
    "complete_depth": ["-q", "-c", "-M", "7", "-l", "3", "-m", "all_trec"],
    "parameters": ["-q", *PARAMETERS],
}
# trec_eval 10.0's own measures. dcg and ideal_dcg share ndcg's parameter block in
# m_ndcg.c: with gains given to one of them, trec_eval 10.0 crashes on exit, so here none.
# m_rbp.c rescales gains with a min and max it never initialises: they hold what the
# measure computed before it left on the stack, so rbp with gains is checked on its own.
COMMANDS_10 = {
    "measures_10": [
        *("-q", "-m", "dcg", "-m", "ideal_dcg", "-m", "ndcg", "-m", "rbp_resid.p=0.5"),
        *("-m", "unj.3,7"),
    ],
    "rbp_default": ["-q", "-c", "-m", "rbp", "-m", "rbp_resid", "-m", "unj"],
    "rbp_pairs": ["-q", "-m", "rbp.p=0.7,2=5"],
}


def generated_files(seed: int) -> tuple[str, str]:
    """(qrels text, run text) for one seed."""
    rng = random.Random(seed)
    topics = rng.sample(TOPICS, rng.randint(2, len(TOPICS)))
    roles = ["both"] + [rng.choice(["both", "both", "qrels", "run"]) for _ in topics[1:]]
    qrels, run = [], []
    for qid, role in zip(topics, roles, strict=True):
        pool = [f"d{i}" for i in range(40)]
        if role != "run":
            judged = rng.sample(pool, rng.randint(1, 25))
            grades = [rng.choice(GRADES) for _ in judged]
            grades[0] = max(grades[0], 0)  # trec_eval needs a grade >= 0 in every topic
            qrels += [f"{qid} 0 {d} {g}" for d, g in zip(judged, grades, strict=True)]
        if role != "qrels":
            retrieved = rng.sample(pool, rng.randint(1, 30))
            for rank, docno in enumerate(retrieved, 1):
                score = rng.choice(
                    [
                        f"{rng.randint(0, 6) / 2:.1f}",  # ties
                        f"{rng.uniform(-2, 5):.6f}",
                        "0.1000000001" if rng.random() < 0.5 else "0.1",  # float32 ties
                    ]
                )
                run.append(f"{qid} Q0 {docno} {rank} {score} run{seed}")
    rng.shuffle(qrels)
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"
