"""One process doing what an uploaded run goes through, for evaluate_bench.py's peak memory:
`upload_child.py QRELS RUN` on a fresh embedded instance (SQLite and a media folder in a
scratch folder): migrate, import the qrels, stage the run file in storage as the upload page
and the API do (a piece at a time), import it from there as the import task does
(services.import_run), score it with the benchmark's four measures (services.evaluate_run),
and print the means as JSON, as `evaluate --format json` does ({"all": {...}}).

Django's own receiving of the request body is not part of it: its upload handlers write a
large body to a temporary file a piece at a time.
"""

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEASURES = ["ndcg_cut.10", "ndcg", "P.10", "map"]


def main(qrels_path: str, run_path: str) -> None:
    scratch = tempfile.mkdtemp(prefix="qrelsmith-upload-bench-")
    try:
        os.environ["DATA_DIR"] = scratch
        os.environ.pop("DATABASE_URL", None)
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        from django.core.files import File
        from django.core.management import call_command

        from evaluation import services
        from jobs.services import stage_upload

        call_command("migrate", verbosity=0)
        qrels = services.import_qrels(
            source=Path(qrels_path).read_bytes(), filename="qrels.txt", name="bench"
        )
        with open(run_path, "rb") as upload:
            staged = stage_upload(File(upload, name="run.txt"), prefix="runs")
        from django.core.files.storage import default_storage

        with default_storage.open(staged, "rb") as file:
            run = services.import_run(source=file, filename="run.txt", system="bench")
        default_storage.delete(staged)
        evaluation = services.evaluate_run(run=run, qrels=qrels, measure_specs=MEASURES)
        sys.stdout.write(json.dumps({"all": evaluation.means}) + "\n")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main(*sys.argv[1:3])
