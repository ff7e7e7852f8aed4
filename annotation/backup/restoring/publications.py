"""Restoring lead decisions and publications: the qrels versions published (created, or
reused when the same grades are already here) and the grades each publication gave."""

from __future__ import annotations

from annotation.backup import schema
from annotation.backup.checking import BackupError
from annotation.models import LeadDecision, Publication, PublishedGrade
from evaluation.models import QrelsEntry, QrelsVersion

from .inserting import MAX_ROWS, RestoreBase, _fields, _insert


class PublicationRestore(RestoreBase):
    """Lead decisions and publications with their qrels and grades."""

    # --- decisions ----------------------------------------------------------------------

    def create_decisions(self, pair_ids: dict[tuple[str, str], int]) -> dict[int, int]:
        """File-local id → new id. A decision refers to the one it supersedes, so a batch
        ends before a decision whose predecessor is still in it."""
        ids: dict[int, int] = {}
        batch: list[tuple[int, dict]] = []

        def flush():
            for row, pk in zip(batch, _insert(LeadDecision, [v for _, v in batch]), strict=True):
                ids[row[0]] = pk
            batch.clear()

        for row in self.backup.decisions:
            earlier = row["supersedes"]
            if earlier is not None and earlier not in ids:
                flush()  # the superseded decision is in this batch: store it first
            values = {
                "pair_id": pair_ids[row["qid"], row["docno"]],
                "decided_by_id": self.user(row["decided_by"]),
                "supersedes_id": None if earlier is None else ids[earlier],
                **_fields(row, schema.DECISION),
            }
            batch.append((row["id"], values))
            if len(batch) >= MAX_ROWS:
                flush()
        if batch:
            flush()
        return ids

    # --- qrels and publications ---------------------------------------------------------

    def check_qrels(self) -> list[QrelsVersion | None]:
        """For each publication, the existing qrels version to reuse, or None to create it."""
        problems, found = [], []
        for row in self.backup.publications:
            qrels = row["qrels"]
            label = f"{qrels['name']} v{qrels['version']}"
            existing = (
                QrelsVersion.objects.select_for_update()
                .filter(name=qrels["name"], version=qrels["version"])
                .first()
            )
            found.append(existing)
            if existing is None:
                continue
            where = f"{row['path']}.qrels"
            publication = Publication.objects.filter(qrels=existing).select_related("campaign")
            publication = publication.first()
            if publication is not None:
                problems.append(
                    f"{where}: qrels {label} already exists here, published by campaign "
                    f"{publication.campaign.name!r} (id {publication.campaign_id}); this "
                    "backup seems imported already (delete that campaign to import it again)"
                )
            elif existing.checksum != qrels["checksum"] or set(
                existing.entries.values_list("qid", "docno", "grade")
            ) != set(qrels["entries"]):
                problems.append(
                    f"{where}: qrels {label} already exists here with other grades "
                    f"(sha256 {existing.checksum}, the backup's is {qrels['checksum']}); "
                    "qrels versions never change, so the import is refused"
                )
        if problems:
            raise BackupError(self.backup.name, problems)
        return found

    def create_publications(
        self, existing: list[QrelsVersion | None], decision_ids: dict[int, int]
    ) -> tuple[list[str], list[str]]:
        created, reused = [], []
        for row, qrels in zip(self.backup.publications, existing, strict=True):
            data = row["qrels"]
            label = f"{data['name']} v{data['version']}"
            if qrels is None:
                [qrels_id] = _insert(
                    QrelsVersion,
                    [
                        {
                            "created_by_id": self.user(data["created_by"]),
                            "team_id": self.team_id,  # the restored campaign's
                            **_fields(data, schema.QRELS),
                        }
                    ],
                )
                _insert(
                    QrelsEntry,
                    [
                        {"qrels_id": qrels_id, "qid": qid, "docno": docno, "grade": grade}
                        for qid, docno, grade in data["entries"]
                    ],
                    ids=False,
                )
                created.append(label)
            else:
                qrels_id = qrels.pk
                reused.append(label)
            [publication_id] = _insert(
                Publication,
                [
                    {
                        "campaign_id": self.campaign_id,
                        "qrels_id": qrels_id,
                        "published_by_id": self.user(row["published_by"]),
                        # Before version 4 the gates of the machines that filled it
                        # restore as unknown (the qrels description still says).
                        "machine_gates": {},
                        **_fields(row, schema.PUBLICATION),
                        **_fields(
                            row,
                            {k: v for k, v in schema.PUBLICATION_V4.items() if k in row},
                        ),
                    }
                ],
            )
            _insert(
                PublishedGrade,
                [
                    {
                        "publication_id": publication_id,
                        "decision_id": None
                        if g["decision"] is None
                        else decision_ids[g["decision"]],
                        **_fields(g, schema.GRADE),
                    }
                    for g in row["grades"]
                ],
                ids=False,
            )
        return created, reused
