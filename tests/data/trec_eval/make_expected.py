"""Write two generated qrels/run pairs and what trec_eval printed for them (see README.md).

    TREC_EVAL=/path/to/10.0/trec_eval TREC_EVAL_9=/path/to/9.0.8/trec_eval \\
        .venv/bin/python tests/data/trec_eval/make_expected.py
"""

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "evaluation"))

from trec_eval_data import COMMANDS, COMMANDS_10, generated_files  # noqa: E402

SEEDS = {"run_only_topics": 1000, "qrels_only_topics": 1005}


def main() -> None:
    binaries = {10: os.environ["TREC_EVAL"], 9: os.environ["TREC_EVAL_9"]}
    for stem, seed in SEEDS.items():
        qrels_text, run_text = generated_files(seed)
        (HERE / f"{stem}.qrels").write_text(qrels_text)
        (HERE / f"{stem}.run").write_text(run_text)
        cases = [(name, args, v) for name, args in COMMANDS.items() for v in (9, 10)]
        cases += [(name, args, 10) for name, args in COMMANDS_10.items()]
        for name, args, version in cases:
            command = [binaries[version], *args, f"{stem}.qrels", f"{stem}.run"]
            done = subprocess.run(command, cwd=HERE, capture_output=True, text=True)
            if done.returncode:  # 10.0 stops at a judged topic the run lacks, without -c
                print(f"skipped {stem} {name} {version}: {done.stderr.strip()}")
                continue
            (HERE / f"{stem}.{version}.{name}.out").write_text(done.stdout)


if __name__ == "__main__":
    main()
