"""How an import of judgments is checked and stored (annotation/services/imports.py's plan):
every topic, document and pair of the file found or refused with its lines, every grade put
on the campaign's scale, the file's judges matched to the campaign's outside people and
machines, then the grades stored with the import that brought them."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError

from annotation import formats
from annotation.models import (
    Document,
    ExternalGrade,
    ExternalJudge,
    ImportFormat,
    JudgeKind,
    JudgmentImport,
    Pair,
    PairSource,
)
from annotation.services import common
from annotation.services.agreement import mark_agreement_stale
from annotation.services.external import check_judge_name
from annotation.services.tallies import count_topics, tally_pairs
from common.ids import parse_small_int
from evaluation.trec import MAX_ERRORS, LineError, TrecFormatError

MESSAGES = {
    "unknown_format": "Unknown format {fmt!r}; choose one of {choices}.",
    "unknown_kind": "Judge kind must be 'outside' or 'machine', not {kind!r}.",
    "qrels_needs_judge": "Name the judge whose grades this qrels file holds.",
    "bad_mapping": "Grade mapping: {problem}.",
    "off_scale": (
        "grade {label} is not on this campaign's scale ({grades}); {lines} of the file {give} it: "
        "give a mapping from the file's grades to the scale (for example {example})"
    ),
    "mapping_off_scale": "the mapping sends {label!r} to {grade}, which is not on the scale",
    "unmapped": "grade {label} has no grade on the scale (not in the mapping)",
    "unknown_document": "document {docno} is not in this campaign (import it first)",
    "pair_not_in_pool": (
        "pair {qid} {docno} is not in the campaign's pool (choose to add missing pairs)"
    ),
    "no_topic_for_query": "no topic of this campaign has the query {query}",
    "many_topics_for_query": "topics {qids} all have the query {query}: give a qid",
    "no_document_for_passage": "no document of this campaign has this passage as its text",
    "many_documents_for_passage": "documents {docnos} all have this passage: give a docid",
    "judge_kind_clash": (
        "judge {name} is already this campaign's {kind} judge; this import names its judges "
        "{wanted}"
    ),
    "bad_judge": "{problem}",
    "as_job": "A job imports the file instead.",
}


@dataclass
class ImportResult:
    """What an import did (or, for the same file again, did not)."""

    record: JudgmentImport | None  # None: nothing changed, nothing recorded
    added: int
    changed: int
    unchanged: int
    pairs_added: int
    judges_added: list[str]
    skipped: list[tuple[int, str]] = field(default_factory=list)
    judges: list[str] = field(default_factory=list)
    earlier: JudgmentImport | None = None  # the import of the same file, when one was made

    @property
    def changed_anything(self) -> bool:
        return self.record is not None

    def summary(self) -> str:
        text = (
            f"{self.added} grade{'s' if self.added != 1 else ''} added, {self.changed} "
            f"changed, {self.unchanged} unchanged; {self.pairs_added} pair"
            f"{'s' if self.pairs_added != 1 else ''} added to the pool; "
            f"{len(self.judges_added)} new judge{'s' if len(self.judges_added) != 1 else ''}"
        )
        if self.skipped:
            text += f"; {len(self.skipped)} line{'s' if len(self.skipped) != 1 else ''} skipped"
        if not self.changed_anything:
            text += ". Nothing changed"
            if self.earlier is not None:
                text += f": this file was imported on {self.earlier.imported_at:%Y-%m-%d %H:%M}"
        return text + "."


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _short(text: str, limit: int = 60) -> str:
    text = _norm(text)
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


class ImportPlan:
    """The file's records resolved against the campaign: each record's pair (or the pair to
    add) and grade; its problems go to the reader (``check``), listed with the file's."""

    def __init__(self, campaign, judge_name, judge_kind, mapping, add_missing_pairs, max_rows):
        self.campaign = campaign
        self.name = ""
        self.records = []
        self.judge_name = judge_name
        self.judge_kind = judge_kind
        self.mapping = mapping
        self.add_missing_pairs = add_missing_pairs
        self.max_rows = max_rows
        self.max_errors = MAX_ERRORS
        self.problems: list[tuple[int, str]] = []
        self.errors: list[LineError] = []
        self.total_errors = 0
        # per record: (qid, docno, judge name, grade)
        self.rows: list[tuple] = []
        self.missing_pairs: set[tuple[str, str]] = set()

    def error(self, line: int, message: str) -> None:
        """A problem found while resolving (formats.source.read lists it with the file's)."""
        self.problems.append((line, message))

    def check(self, records, fmt: str) -> list[tuple[int, str]]:
        """The reader's ``check``: resolve the records read well against the campaign and
        return the problems found (none for a file too large for the request, which
        import_judgments refuses once read). A qrels file without a judge is refused."""
        if not self.judge_kind:
            self.judge_kind = (
                JudgeKind.MACHINE if fmt == ImportFormat.UMBRELA else JudgeKind.OUTSIDE
            )
        if fmt == ImportFormat.QRELS and not self.judge_name:
            # Each caller names its own way of giving the judge (--judge, judge_name).
            raise ValidationError(MESSAGES["qrels_needs_judge"], code="qrels_needs_judge")
        if self.max_rows is not None and len(records) > self.max_rows:
            return []
        self.records = records
        self.resolve(self.add_missing_pairs)
        return self.problems

    def _refuse(self, line: int, message: str) -> None:
        """A problem found under the campaign's lock, once the file is known to be good."""
        self.total_errors += 1
        if len(self.errors) < self.max_errors:
            self.errors.append(LineError(self.name, line, message))

    def raise_if_any(self) -> None:
        if self.total_errors:
            self.errors.sort(key=lambda e: e.line)
            raise TrecFormatError(self.errors, self.total_errors)

    # --- resolving ---------------------------------------------------------------------

    def resolve(self, add_missing_pairs: bool) -> None:
        campaign = self.campaign
        grades = campaign.grades
        self._check_scale(grades)
        topics = dict(campaign.topics.values_list("qid", "pk"))
        wanted_docnos = {r.docno for r in self.records if r.docno is not None}
        documents = {}
        for start in range(0, len(wanted_docnos), 5000):
            chunk = sorted(wanted_docnos)[start : start + 5000]
            documents.update(campaign.documents.filter(docno__in=chunk).values_list("docno", "pk"))
        by_query = by_passage = None
        if any(r.qid is None for r in self.records):
            by_query = defaultdict(list)
            for qid, query in campaign.topics.values_list("qid", "query"):
                by_query[_norm(query)].append(qid)
        if any(r.docno is None for r in self.records):
            by_passage = defaultdict(list)
            rows = campaign.documents.exclude(text="").values_list("docno", "text", "pk")
            for docno, text, pk in rows.iterator(chunk_size=2000):
                by_passage[_norm(text)].append(docno)
                documents[docno] = pk
        pairs = (
            set(Pair.objects.filter(campaign=campaign).values_list("topic__qid", "document__docno"))
            if self.records
            else set()
        )
        for record in self.records:
            qid = record.qid if record.qid is not None else self._qid(record, by_query)
            docno = record.docno if record.docno is not None else self._docno(record, by_passage)
            if qid is None or docno is None:
                continue
            known = True
            if qid not in topics:
                self.error(record.line, common.MESSAGES["unknown_topic"].format(qid=repr(qid)))
                known = False
            if docno not in documents:
                self.error(record.line, MESSAGES["unknown_document"].format(docno=repr(docno)))
                known = False
            grade = formats.map_grade(record.label, self.mapping, grades)
            if grade is None:
                if self.mapping:
                    self.error(record.line, MESSAGES["unmapped"].format(label=repr(record.label)))
                continue  # an off-scale grade without a mapping: reported by _check_scale
            if not known:
                continue
            if (qid, docno) not in pairs:
                if not add_missing_pairs:
                    self.error(
                        record.line,
                        MESSAGES["pair_not_in_pool"].format(qid=repr(qid), docno=repr(docno)),
                    )
                    continue
                self.missing_pairs.add((qid, docno))
            judge = self.judge_name or record.judge
            self.rows.append((record, qid, docno, judge, grade))
        self._check_repeats()
        self._check_judge_kinds()

    def _check_scale(self, grades: list[int]) -> None:
        """Without a mapping, every grade must be an integer of the scale: each grade off it
        is refused on the first line giving it, with how many lines do and the mapping that
        would put them on the scale. (A mapping's own grades are checked before reading.)"""
        if self.mapping:
            return
        off = Counter()
        first_line: dict[str, int] = {}
        for record in self.records:
            if formats.map_grade(record.label, None, grades) is None:
                off[record.label] += 1
                first_line.setdefault(record.label, record.line)
        if not off:
            return
        labels = sorted(off, key=lambda label: (parse_small_int(label) is None, label))
        example = ", ".join(f"{label}:{grades[-1]}" for label in labels[:3])
        for label in labels:
            self.error(
                first_line[label],
                MESSAGES["off_scale"].format(
                    label=repr(label),
                    lines=f"{off[label]:,} line{'s' * (off[label] > 1)}",
                    give="give" if off[label] > 1 else "gives",
                    grades=", ".join(map(str, grades)),
                    example=repr(example),
                ),
            )

    def _qid(self, record, by_query) -> str | None:
        qids = by_query.get(_norm(record.query), [])
        if not qids:
            self.error(
                record.line, MESSAGES["no_topic_for_query"].format(query=_short(record.query))
            )
            return None
        if len(qids) > 1:
            self.error(
                record.line,
                MESSAGES["many_topics_for_query"].format(
                    qids=", ".join(sorted(qids)[:5]), query=_short(record.query)
                ),
            )
            return None
        return qids[0]

    def _docno(self, record, by_passage) -> str | None:
        docnos = by_passage.get(_norm(record.passage), [])
        if not docnos:
            self.error(record.line, MESSAGES["no_document_for_passage"])
            return None
        if len(docnos) > 1:
            self.error(
                record.line,
                MESSAGES["many_documents_for_passage"].format(docnos=", ".join(sorted(docnos)[:5])),
            )
            return None
        return docnos[0]

    def _check_repeats(self) -> None:
        """Two lines naming one pair by text, or one judge named for a qrels file, may grade
        the same pair twice: the later line is refused."""
        seen: dict[tuple, int] = {}
        for record, qid, docno, judge, _ in self.rows:
            first = seen.setdefault((qid, docno, judge), record.line)
            if first != record.line:
                self.error(
                    record.line,
                    f"judge {judge!r} grades {qid!r} {docno!r} again (first on line {first})",
                )

    # --- storing -----------------------------------------------------------------------

    def _judge_lines(self) -> dict[str, int]:
        first_line: dict[str, int] = {}
        for record, _, _, judge, _ in self.rows:
            first_line.setdefault(judge, record.line)
        return first_line

    def _kind_clashes(self) -> list[tuple[int, str]]:
        """(line, problem) of each of the file's judges that is already another kind of
        judge of the campaign; remembers the judges that exist."""
        first_line = self._judge_lines()
        kinds = dict(
            ExternalJudge.objects.filter(
                campaign=self.campaign, name__in=sorted(first_line)
            ).values_list("name", "kind")
        )
        self.existing_judges = kinds
        return [
            (
                first_line[judge],
                MESSAGES["judge_kind_clash"].format(
                    name=repr(judge), kind=kind, wanted=self.judge_kind
                ),
            )
            for judge, kind in kinds.items()
            if kind != self.judge_kind
        ]

    def _check_judge_kinds(self) -> None:
        for judge, line in sorted(self._judge_lines().items()):
            try:
                check_judge_name(judge)
            except ValidationError as error:
                self.error(line, error.messages[0])
        for line, problem in self._kind_clashes():
            self.error(line, problem)

    def check_judges(self) -> None:
        """Under the campaign's lock: the file's judges are still new, or of the kind it
        names (a judge another import made meanwhile)."""
        for line, problem in self._kind_clashes():
            self._refuse(line, problem)
        self.raise_if_any()

    def store(self, *, user, sha256, fmt, options, skipped) -> ImportResult:
        campaign = self.campaign
        names = sorted({judge for _, _, _, judge, _ in self.rows})
        new_judges = [name for name in names if name not in self.existing_judges]
        pairs = {
            (qid, docno): pk
            for pk, qid, docno in Pair.objects.filter(campaign=campaign).values_list(
                "pk", "topic__qid", "document__docno"
            )
        }
        judges = dict(
            ExternalJudge.objects.filter(campaign=campaign, name__in=names).values_list(
                "name", "pk"
            )
        )
        current = {}
        if judges:
            for row in ExternalGrade.objects.filter(judge_id__in=list(judges.values())):
                current[row.judge_id, row.pair_id] = row
        new_rows, changed_rows, unchanged = [], [], 0
        for record, qid, docno, judge, grade in self.rows:
            values = {
                "grade": grade,
                "note": record.note,
                "seconds": record.seconds,
                "judged_at": record.judged_at,
                "details": record.details or {},
            }
            pair_id = pairs.get((qid, docno))
            old = current.get((judges.get(judge), pair_id)) if pair_id else None
            if old is None:
                new_rows.append((qid, docno, judge, values))
            elif any(getattr(old, key) != value for key, value in values.items()):
                for key, value in values.items():
                    setattr(old, key, value)
                changed_rows.append(old)
            else:
                unchanged += 1
        earlier = (
            JudgmentImport.objects.filter(campaign=campaign, sha256=sha256)
            .order_by("-imported_at")
            .first()
        )
        result = ImportResult(
            record=None,
            added=len(new_rows),
            changed=len(changed_rows),
            unchanged=unchanged,
            pairs_added=len(self.missing_pairs),
            judges_added=new_judges,
            skipped=list(skipped),
            judges=[f"{self.judge_kind}:{name}" for name in names],
            earlier=earlier,
        )
        if not (new_rows or changed_rows or self.missing_pairs or new_judges):
            return result  # the same file again: nothing changes, nothing is recorded
        record = JudgmentImport.objects.create(
            campaign=campaign,
            file_name=self.name[:255],
            sha256=sha256,
            format=fmt,
            judge_kind=self.judge_kind,
            mapping=self.mapping,
            options=options,
            counts={
                "added": result.added,
                "changed": result.changed,
                "unchanged": result.unchanged,
                "pairs_added": result.pairs_added,
                "judges_added": len(new_judges),
                "skipped": len(skipped),
            },
            imported_by=user,
        )
        result.record = record
        if self.missing_pairs:
            self._add_pairs(pairs)
        ExternalJudge.objects.bulk_create(
            [
                ExternalJudge(
                    campaign=campaign,
                    kind=self.judge_kind,
                    name=name,
                    description=f"Imported from {self.name}",
                    created_by=user,
                )
                for name in new_judges
            ]
        )
        judges = dict(
            ExternalJudge.objects.filter(campaign=campaign, name__in=names).values_list(
                "name", "pk"
            )
        )
        ExternalGrade.objects.bulk_create(
            [
                ExternalGrade(
                    judge_id=judges[judge], pair_id=pairs[qid, docno], source=record, **values
                )
                for qid, docno, judge, values in new_rows
            ],
            batch_size=2000,
        )
        for row in changed_rows:
            row.source = record
        ExternalGrade.objects.bulk_update(
            changed_rows,
            ["grade", "note", "seconds", "judged_at", "details", "source", "updated_at"],
            batch_size=2000,
        )
        touched = {pairs[qid, docno] for qid, docno, _, _ in new_rows}
        touched |= {row.pair_id for row in changed_rows}
        if self.judge_kind == JudgeKind.OUTSIDE or campaign.machine_grades_adjudicate:
            tally_pairs(pair_ids=touched)
        mark_agreement_stale(campaign_id=campaign.pk)
        return result

    def _add_pairs(self, pairs: dict) -> None:
        campaign = self.campaign
        topics = dict(campaign.topics.values_list("qid", "pk"))
        docnos = {docno for _, docno in self.missing_pairs}
        documents = dict(
            Document.objects.filter(campaign=campaign, docno__in=docnos).values_list("docno", "pk")
        )
        Pair.objects.bulk_create(
            [
                Pair(
                    campaign=campaign,
                    topic_id=topics[qid],
                    document_id=documents[docno],
                    source=PairSource.GRADED,
                )
                for qid, docno in sorted(self.missing_pairs)
            ],
            batch_size=2000,
        )
        for pk, qid, docno in Pair.objects.filter(
            campaign=campaign, source=PairSource.GRADED
        ).values_list("pk", "topic__qid", "document__docno"):
            pairs[qid, docno] = pk
        count_topics(topic_ids={topics[qid] for qid, _ in self.missing_pairs})
