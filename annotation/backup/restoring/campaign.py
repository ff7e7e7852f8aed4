"""Restoring the campaign's core: the campaign, its judges, topics, documents, pairs,
assignments, judgments and history, and the users they name; the order of the whole
restore (:meth:`CampaignRestore.run`) and its summary."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from accounts.services.roles import Role
from accounts.services.teams import default_team_pk
from annotation.backup import schema
from annotation.backup.checking import BackupError
from annotation.models import (
    Assignment,
    Campaign,
    CampaignJudge,
    Document,
    Judgment,
    JudgmentChange,
    LeadDecision,
    Pair,
    PoolOrdering,
    StopRule,
    Topic,
)
from annotation.services import tallies
from annotation.services.judge_tallies import tally_judges
from annotation.services.tallies import count_topics

from .inserting import RestoreBase, _analyze, _fields, _insert


@dataclass
class ImportSummary:
    campaign: Campaign
    counts: dict[str, int]
    created_users: list[str] = field(default_factory=list)
    existing_users: list[str] = field(default_factory=list)
    created_qrels: list[str] = field(default_factory=list)
    reused_qrels: list[str] = field(default_factory=list)

    @property
    def lines(self) -> list[str]:
        """What the import did, for people (the import command prints these)."""
        lines = [
            f"Created campaign {self.campaign.name!r} (id {self.campaign.pk}): "
            + ", ".join(f"{n:,} {key}" for key, n in self.counts.items())
            + "."
        ]
        if self.created_qrels:
            lines.append(f"Created qrels {', '.join(self.created_qrels)}.")
        if self.reused_qrels:
            lines.append(
                f"Reused qrels {', '.join(self.reused_qrels)}: already here with the same grades."
            )
        if self.existing_users:
            lines.append(
                f"Linked {len(self.existing_users)} existing user(s), left unchanged: "
                + ", ".join(self.existing_users)
                + "."
            )
        if self.created_users:
            lines.append(
                f"Created {len(self.created_users)} user(s), inactive and without a password "
                "(an admin activates them and sets a password): "
                + ", ".join(self.created_users)
                + "."
            )
        return lines


class CampaignRestore(RestoreBase):
    """The campaign and the rows its judging is made of, and the order every part is stored
    in (the other parts' methods are those of the restorer this is part of)."""

    def run(self, *, create_users: bool) -> ImportSummary:
        backup = self.backup
        qrels = self.check_qrels()
        summary_users = self.link_users(create_users)
        self.team_id = default_team_pk()
        [campaign_id] = _insert(
            Campaign,
            [
                {
                    "lead_id": self.users[backup.campaign["lead"]],
                    # A backup names no team (teams are this instance's): the default team.
                    "team_id": self.team_id,
                    **_fields(backup.campaign, schema.CAMPAIGN),
                    # Format version 1 carries no outside or machine judges, so their
                    # settings restore as off (their defaults); nor the pool ordering, which
                    # restores as today's random order (the lead may choose it again).
                    "machine_grades_adjudicate": False,
                    "machine_grades_fill": False,
                    "pool_ordering": PoolOrdering.RANDOM,
                    **_fields(
                        backup.campaign,
                        {k: v for k, v in schema.CAMPAIGN_V2.items() if k in backup.campaign},
                    ),
                    # The ordering's state is recomputed from the grades (services/ordering.py).
                    "pool_ordering_state": {},
                    # Before version 4: post-editing's suggestions off, with the default
                    # blind share, and the gullibility gate's default threshold. The
                    # suggested machine is set once the machine judges exist (trust).
                    "suggestions_from_id": None,
                    "blind_share": Campaign._meta.get_field("blind_share").default,
                    "gate_threshold": Campaign._meta.get_field("gate_threshold").default,
                    **_fields(
                        backup.campaign,
                        {k: v for k, v in schema.CAMPAIGN_V4.items() if k in backup.campaign},
                    ),
                    # Before version 5: no stop rule (its defaults), judging not paused.
                    "stop_rule": StopRule.NONE,
                    "stop_confidence": Campaign._meta.get_field("stop_confidence").default,
                    "stop_top": Campaign._meta.get_field("stop_top").default,
                    "paused_at": None,
                    "stop_event": {},
                    **_fields(
                        backup.campaign,
                        {k: v for k, v in schema.CAMPAIGN_V5.items() if k in backup.campaign},
                    ),
                }
            ],
        )
        self.campaign_id = campaign_id
        _insert(
            CampaignJudge,
            [
                {
                    "campaign_id": campaign_id,
                    "judge_id": self.users[r["username"]],
                    **_fields(r, schema.JUDGE),
                }
                for r in backup.judges
            ],
            ids=False,
        )
        topic_ids = self.insert(
            Topic,
            backup.topics,
            lambda r: {"campaign_id": campaign_id, **_fields(r, schema.TOPIC)},
            lambda r: r["qid"],
        )
        document_ids = self.insert(
            Document,
            backup.documents,
            lambda r: {"campaign_id": campaign_id, **_fields(r, schema.DOCUMENT)},
            lambda r: r["docno"],
        )
        tallies = self.tallies()
        pair_ids = self.insert(
            Pair,
            backup.pairs,
            lambda r: {
                "campaign_id": campaign_id,
                "topic_id": topic_ids[r["qid"]],
                "document_id": document_ids[r["docno"]],
                **_fields(r, schema.PAIR),
                **tallies[r["qid"], r["docno"]],
            },
            lambda r: (r["qid"], r["docno"]),
        )
        assignment_ids = self.insert(
            Assignment,
            backup.assignments,
            lambda r: {
                "pair_id": pair_ids[r["qid"], r["docno"]],
                "judge_id": self.users[r["judge"]],
                **_fields(r, schema.ASSIGNMENT),
            },
            lambda r: (r["qid"], r["docno"], r["judge"]),
        )
        _insert(
            Judgment,
            [
                {
                    "assignment_id": assignment_ids[r["qid"], r["docno"], r["judge"]],
                    **_fields(r, schema.JUDGMENT),
                }
                for r in backup.judgments
            ],
            ids=False,
        )
        _insert(
            JudgmentChange,
            [
                {
                    "assignment_id": assignment_ids[r["qid"], r["docno"], r["judge"]],
                    "changed_by_id": self.user(r["changed_by"]),
                    **_fields(r, schema.CHANGE),
                }
                for r in backup.changes
            ],
            ids=False,
        )
        tally_judges(campaign_id=campaign_id)
        external = self.create_external(topic_ids, pair_ids)
        decision_ids = self.create_decisions(pair_ids)
        count_topics(campaign=Campaign(pk=campaign_id))
        _analyze([Topic, Document, Pair, Assignment, Judgment, JudgmentChange, LeadDecision])
        created_qrels, reused_qrels = self.create_publications(qrels, decision_ids)
        counts = {
            "judges": len(backup.judges),
            "topics": len(backup.topics),
            "documents": len(backup.documents),
            "pairs": len(backup.pairs),
            "assignments": len(backup.assignments),
            "judgments": len(backup.judgments),
            "history entries": len(backup.changes),
            "lead decisions": len(backup.decisions),
            "publications": len(backup.publications),
            **external,
            **self.create_audits(pair_ids),
            **self.create_trust(pair_ids),
        }
        return ImportSummary(
            campaign=Campaign.objects.get(pk=campaign_id),
            counts=counts,
            created_users=summary_users[0],
            existing_users=summary_users[1],
            created_qrels=created_qrels,
            reused_qrels=reused_qrels,
        )

    def tallies(self) -> dict:
        """Each pair's tally of its judges (annotation/services/tallies.py), counted from
        the file's assignments and judgments: derived, so not in the file."""
        grade_of = {(r["qid"], r["docno"], r["judge"]): r["grade"] for r in self.backup.judgments}
        rows = defaultdict(list)
        for r in self.backup.assignments:
            grade = grade_of.get((r["qid"], r["docno"], r["judge"]))
            rows[r["qid"], r["docno"]].append((r["status"], grade))
        return {
            (r["qid"], r["docno"]): dict(
                zip(
                    tallies.FIELDS,
                    tallies.tally_of(rows.get((r["qid"], r["docno"]), [])),
                    strict=True,
                )
            )
            for r in self.backup.pairs
        }

    # --- users --------------------------------------------------------------------------

    def link_users(self, create_users: bool) -> tuple[list[str], list[str]]:
        user_model = get_user_model()
        wanted = [row["username"] for row in self.backup.users]
        self.users = dict(
            user_model.objects.filter(username__in=wanted).values_list("username", "pk")
        )
        missing = [row for row in self.backup.users if row["username"] not in self.users]
        existing = sorted(self.users)
        if missing and not create_users:
            raise BackupError(
                self.backup.name,
                [
                    f"{row['path']}.username: no user {row['username']!r} on this instance "
                    "(--no-create-users: create it first, or allow the import to create it)"
                    for row in missing
                ],
            )
        groups = {g.name: g for g in Group.objects.filter(name__in=Role.values)}
        for row in missing:
            user = user_model(
                **{key: row[key] for key in schema.USER}, is_active=False, is_staff=False
            )
            user.set_unusable_password()
            user.save()
            for role in row["roles"]:
                if role not in groups:
                    groups[role], _ = Group.objects.get_or_create(name=role)
                user.groups.add(groups[role])
            self.users[user.get_username()] = user.pk
        return sorted(row["username"] for row in missing), existing
