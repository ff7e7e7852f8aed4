"""Checking the document's top level (format, version, the sections) and its users."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from accounts.services.roles import Role
from annotation.backup import schema
from annotation.backup.schema import text_checker

from .base import Backup, BackupError, CheckBase, _show


class DocumentChecks(CheckBase):
    """The whole document, section by section, and the users it names."""

    def document(self, document: Any) -> Backup:
        if not isinstance(document, dict):
            raise BackupError(self.name, ["the document must be a JSON object"])
        if document.get("format") not in schema.READ_FORMATS:
            raise BackupError(
                self.name,
                [f"format: must be {schema.FORMAT!r} (this is not a Qrelsmith campaign backup)"],
            )
        version = document.get("version")
        if type(version) is not int:
            raise BackupError(self.name, ["version: must be an integer"])
        if version not in schema.READ_VERSIONS:
            *first, last = map(str, schema.READ_VERSIONS)
            shown = f"{', '.join(first)} and {last}"
            raise BackupError(
                self.name,
                [
                    f"version: {version} is not a version this Qrelsmith reads "
                    f"(it reads versions {shown})"
                ],
            )
        self.version = version
        keys = schema.TOP_KEYS_OF[version]
        top, _ = self.object(
            "",
            document,
            {"exported_at": schema.field_checker(schema.Campaign._meta.get_field("created_at"))},
            tuple(k for k in keys if k != "exported_at"),
        )
        get = top.get  # a missing section is reported once, as missing, and read as empty
        users = self.users(get("users", []))
        campaign = self.campaign(get("campaign")) if "campaign" in top else {}
        judges = self.judges(get("judges", []))
        topics = self.keyed("topics", get("topics", []), schema.TOPIC, "qid", self.topics)
        documents = self.keyed(
            "documents", get("documents", []), schema.DOCUMENT, "docno", self.documents
        )
        pairs = self.pair_rows(get("pairs", []))
        assignments = self.assignment_rows(get("assignments", []))
        judgments = self.judgment_rows(get("judgments", []))
        changes = self.change_rows(get("changes", []))
        decisions = self.decision_rows(get("decisions", []))
        publications = self.publication_rows(get("publications", []))
        external_judges = self.external_judge_rows(get("external_judges", []))
        imports = self.import_rows(get("imports", []))
        external_grades = self.external_grade_rows(get("external_grades", []))
        machine_runs = self.machine_run_rows(get("machine_runs", []))
        machine_answers = self.machine_answer_rows(get("machine_answers", []))
        audits = self.audit_rows(get("audits", []))
        design, gates = None, []
        if version >= 4:
            self.trust_settings(campaign)
            design = self.design_row(get("certified_design"), audits)
            gates = self.gate_rows(get("gates", []))
        if self.total:
            raise self.fail()
        return Backup(
            version=version,
            external_judges=external_judges,
            external_grades=external_grades,
            imports=imports,
            machine_runs=machine_runs,
            machine_answers=machine_answers,
            audits=audits,
            certified_design=design,
            gates=gates,
            name=self.name,
            exported_at=top["exported_at"],
            campaign=campaign,
            users=users,
            judges=judges,
            topics=topics,
            documents=documents,
            pairs=pairs,
            assignments=assignments,
            judgments=judgments,
            changes=changes,
            decisions=decisions,
            publications=publications,
        )

    def users(self, value: Any) -> list[dict]:
        username = schema.username_checker()
        user_model = get_user_model()
        checks = {
            "username": username,
            **{
                key: text_checker(user_model._meta.get_field(key).max_length)
                for key in schema.USER
                if key != "username"
            },
        }
        first: dict[str, int] = {}

        def each(path: str, row: dict) -> bool:
            ok = True
            name = row.get("username")
            if name is not None:
                if name in first:
                    self.add(f"{path}.username", f"{_show(name)} is already users[{first[name]}]")
                    ok = False
                else:
                    first[name] = int(path[6:-1])
                    self.usernames.add(name)
                    row["path"] = path
            if "roles" in row:
                roles = row["roles"]
                if not isinstance(roles, list) or any(
                    type(r) is not str or r not in Role.values for r in roles
                ):
                    self.add(
                        f"{path}.roles",
                        f"must be a list of roles out of {', '.join(Role.values)}",
                    )
                    ok = False
                elif len(set(roles)) != len(roles):
                    self.add(f"{path}.roles", "names a role more than once")
                    ok = False
            return ok

        return self.rows("users", value, checks, schema.USER_REFS, each)
