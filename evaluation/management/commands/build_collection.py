import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation import collection
from evaluation.collection import files, rankers, sources


class Command(BaseCommand):
    help = (
        "Build a test collection from the documentation installed on this machine (Debian's "
        f"{sources.PYTHON_PACKAGE} and {sources.DJANGO_PACKAGE}; pydoc_data.topics when "
        "neither is there) and write it to OUT_DIR: documents.jsonl, topics.jsonl, qrels.txt, "
        "one TREC run per ranker in runs/, and collection.json. See README.md, 'A real test "
        "collection'."
    )

    def add_arguments(self, parser):
        parser.add_argument("out_dir", help="folder to write (made if missing)")
        parser.add_argument(
            "--source",
            choices=collection.SOURCES,
            default="auto",
            help="auto (default): both packages, whatever of them is installed, else the "
            "fallback; python, django or both: refuse when missing; fallback: pydoc_data",
        )
        parser.add_argument(
            "--doc-root",
            default=str(sources.DOC_ROOT),
            help="where the packages install their docs (default %(default)s)",
        )

    def handle(self, *args, out_dir, source, doc_root, **options):
        out = Path(out_dir)
        if out.exists() and not out.is_dir():
            raise CommandError(f"{out_dir}: exists and is not a folder")
        started = time.perf_counter()
        try:
            built = collection.build_collection(source, doc_root=Path(doc_root))
        except collection.SourceMissing as error:
            raise CommandError(str(error)) from None
        for note in built.notes:
            self.stderr.write(note)
        if not built.topics:
            raise CommandError(f"the {source} source gave no topics: nothing written")
        build_seconds = time.perf_counter() - started
        runs = rankers.run_rankers(built.passages, built.topics)
        rank_seconds = time.perf_counter() - started - build_seconds
        scores = files.score_runs(built, runs)
        about = {
            "build_seconds": round(build_seconds, 1),
            "rank_seconds": round(rank_seconds, 1),
            "ndcg_cut_10": {name: round(value, 4) for name, value in scores.items()},
        }
        try:
            files.write_collection(built, runs, out, about=about)
        except OSError as error:
            reason = error.strerror or str(error)
            raise CommandError(f"{out_dir}: cannot write the collection there ({reason})") from None
        self.stdout.write(
            f"{len(built.passages):,} passages, {len(built.topics):,} topics, "
            f"{sum(len(t.answers) for t in built.topics):,} judgments from "
            f"{'; '.join(built.sources)} in {build_seconds:.1f} s; {len(runs)} runs in "
            f"{rank_seconds:.1f} s. Written to {out}."
        )
        self.stdout.write("nDCG@10 of each run against the known answers:")
        for name, value in sorted(scores.items(), key=lambda item: (-item[1], item[0])):
            self.stdout.write(f"  {name:<22} {value:.4f}")
