"""Restoring outside and machine judges with their grades, the judgment imports the grades
came from, machine runs and answers, and audits."""

from __future__ import annotations

from annotation.backup import schema
from annotation.models import (
    AuditPair,
    Campaign,
    ExternalGrade,
    ExternalJudge,
    JudgmentImport,
    MachineAnswer,
    MachineAudit,
    MachineJudge,
    MachineRun,
)
from annotation.services.machine_judges import allowed_key_env
from annotation.services.tallies import tally_pairs

from .inserting import RestoreBase, _fields, _insert


class ExternalRestore(RestoreBase):
    """Outside and machine judges, imports, machine runs and answers, audits."""

    def create_external(
        self, topic_ids: dict[str, int], pair_ids: dict[tuple[str, str], int]
    ) -> dict[str, int]:
        """Outside people and machines with their grades (format version 2), and (version 3)
        the imports the grades came from, the machines' runs and answers; the pairs' tallies
        then count the grades that count in adjudication. A machine judge's key is never in a
        backup: it comes back without one; nor is a run's background job (the instance's)."""
        backup = self.backup
        counts: dict[str, int] = {}
        self.machine_ids: dict[str, int] = {}
        import_ids = self.insert(
            JudgmentImport,
            backup.imports,
            lambda r: {
                "campaign_id": self.campaign_id,
                "imported_by_id": self.user(r["imported_by"]),
                **_fields(r, schema.IMPORT),
            },
            lambda r: r["id"],
        )
        if backup.imports:
            counts["judgment imports"] = len(backup.imports)
        if not backup.external_judges:
            return counts
        judge_ids = self.insert(
            ExternalJudge,
            backup.external_judges,
            lambda r: {
                "campaign_id": self.campaign_id,
                "created_by_id": self.user(r["created_by"]),
                **_fields(r, schema.EXTERNAL_JUDGE),
            },
            lambda r: r["name"],
        )
        machine_ids = self.insert(
            MachineJudge,
            [r for r in backup.external_judges if r["machine"] is not None],
            lambda r: {
                "judge_id": judge_ids[r["name"]],
                "created_by_id": self.user(r["machine"]["created_by"]),
                "api_key_sealed": "",  # never in a backup: stored again after the restore
                **_fields(r["machine"], schema.MACHINE),
                # A backup names a variable; only one the operator's prefix allows is read.
                "api_key_env": allowed_key_env(r["machine"]["api_key_env"]),
            },
            lambda r: r["name"],
        )
        self.machine_ids = machine_ids
        grade_rows = [
            {
                "judge_id": judge_ids[r["judge"]],
                "pair_id": pair_ids[r["qid"], r["docno"]],
                "source_id": None if r["source"] is None else import_ids[r["source"]],
                **_fields(r, schema.EXTERNAL_GRADE),
            }
            for r in backup.external_grades
        ]
        # Ids only when an answer points at its grade: most grades nothing refers to.
        grade_ids = _insert(
            ExternalGrade, grade_rows, ids=any(r["recorded"] for r in backup.machine_answers)
        )
        recorded = {
            (r["judge"], r["qid"], r["docno"]): pk
            for r, pk in zip(backup.external_grades, grade_ids, strict=False)
        }
        run_ids = self.insert(
            MachineRun,
            backup.machine_runs,
            lambda r: {
                "machine_id": machine_ids[r["judge"]],
                "topic_id": None if r["topic"] is None else topic_ids[r["topic"]],
                "job_id": None,
                "started_by_id": self.user(r["started_by"]),
                **_fields(r, schema.MACHINE_RUN),
            },
            lambda r: r["id"],
        )
        _insert(
            MachineAnswer,
            [
                {
                    "machine_id": machine_ids[r["judge"]],
                    "pair_id": pair_ids[r["qid"], r["docno"]],
                    "run_id": None if r["run"] is None else run_ids[r["run"]],
                    "recorded_id": recorded[r["judge"], r["qid"], r["docno"]]
                    if r["recorded"]
                    else None,
                    **_fields(r, schema.MACHINE_ANSWER),
                }
                for r in backup.machine_answers
            ],
            ids=False,
        )
        tally_pairs(campaign=Campaign.objects.get(pk=self.campaign_id))
        counts = {
            "outside or machine judges": len(backup.external_judges),
            "their grades": len(backup.external_grades),
            **counts,
        }
        if backup.machine_runs:
            counts["machine runs"] = len(backup.machine_runs)
        keys_to_store = sum(
            1
            for r in backup.external_judges
            if r["machine"] is not None
            and (
                r["machine"].get("api_key_stored")
                or allowed_key_env(r["machine"]["api_key_env"]) != r["machine"]["api_key_env"]
            )
        )
        if keys_to_store:
            counts["machine judges whose key must be stored again"] = keys_to_store
        if backup.machine_answers:
            counts["machine answers"] = len(backup.machine_answers)
        return counts

    def create_audits(self, pair_ids: dict[tuple[str, str], int]) -> dict[str, int]:
        """Audits and the pairs they sent (format version 3); the assignments they made are
        among the backup's assignments."""
        backup = self.backup
        self.audit_ids: list[int] = []
        if not backup.audits:
            return {}
        audit_ids = self.audit_ids = _insert(
            MachineAudit,
            [
                {
                    "campaign_id": self.campaign_id,
                    "sent_by_id": self.user(r["sent_by"]),
                    **_fields(r, schema.AUDIT),
                }
                for r in backup.audits
            ],
        )
        _insert(
            AuditPair,
            [
                {
                    "audit_id": audit_id,
                    "pair_id": pair_ids[p["qid"], p["docno"]],
                    **_fields(p, schema.AUDIT_PAIR),
                }
                for r, audit_id in zip(backup.audits, audit_ids, strict=True)
                for p in r["pairs"]
            ],
            ids=False,
        )
        return {"audits": len(backup.audits)}
