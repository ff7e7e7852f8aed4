from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction

from accounts.roles import Role
from annotation import services as annotation_services
from annotation.models import Assignment, Campaign, Document, Topic
from evaluation import demo, services
from evaluation.models import QrelsVersion, Run

DEMO_USERS = [
    # username, password, role (None: superuser)
    ("admin", "admin-demo", None),
    ("lead", "lead-demo", Role.LEAD),
    ("judge", "judge-demo", Role.JUDGE),
    ("engineer", "engineer-demo", Role.ENGINEER),
]
DEMO_QRELS = "demo-graded"
DEMO_CAMPAIGN = "Demo campaign"
DEMO_TOPICS = 5
# A campaign three synthetic judges have finished, for the agreement report and adjudication.
DEMO_PANEL_CAMPAIGN = "Demo panel (judged)"
DEMO_PANEL = {"ann": 0.85, "bob": 0.7, "cy": 0.55}  # how often each gives the true grade


class Command(BaseCommand):
    help = "Create demo users (one per role) and demo qrels, systems, runs and evaluations."

    @transaction.atomic
    def handle(self, *args, **options):
        User = get_user_model()
        for username, password, role in DEMO_USERS:
            user, _ = User.objects.get_or_create(username=username)
            user.set_password(password)
            user.is_staff = user.is_superuser = role is None
            user.save()
            if role is not None:
                user.groups.add(Group.objects.get(name=role))
        engineer = User.objects.get(username="engineer")

        if not QrelsVersion.objects.filter(name=DEMO_QRELS).exists():
            qrels_text = demo.make_qrels_text()
            qrels = services.import_qrels(
                source=qrels_text.encode(),
                filename="demo.qrels",
                name=DEMO_QRELS,
                description="Synthetic graded judgments (0–3) for 40 topics.",
                user=engineer,
            )
            for system, (strength, noise) in demo.DEMO_SYSTEMS.items():
                text = demo.make_run_text(qrels_text, tag=system, strength=strength, noise=noise)
                run = services.import_run(
                    source=text.encode(), filename=f"{system}.run", system=system, user=engineer
                )
                services.evaluate_run(
                    run=run, qrels=qrels, measure_specs=list(services.DASHBOARD_MEASURES)
                )
            self.stdout.write(f"Created {qrels.label} and {len(demo.DEMO_SYSTEMS)} scored runs.")

        if not Campaign.objects.filter(name=DEMO_CAMPAIGN).exists():
            self._create_campaign(User)
        if not Campaign.objects.filter(name=DEMO_PANEL_CAMPAIGN).exists():
            self._create_panel_campaign(User)

        self.stdout.write("Demo logins (username / password):")
        for username, password, role in DEMO_USERS:
            self.stdout.write(f"  {role or 'admin':<9} {username} / {password}")

    def _create_campaign(self, User):
        """A campaign for the demo judge: a few of the demo topics, pooled from two runs."""
        campaign = annotation_services.create_campaign(
            lead=User.objects.get(username="lead"),
            name=DEMO_CAMPAIGN,
            description="Judge the top 5 documents of two demo systems for five topics.",
            guidelines="Grade how well the **document** answers the query. "
            "Read the description and narrative first.",
            judges=[User.objects.get(username="judge")],
        )
        change = self._fill(campaign)
        self.stdout.write(f"Created {campaign.name}: {change.added} pairs for the demo judge.")

    def _create_panel_campaign(self, User):
        """The same pool judged by three synthetic judges of differing care, every pair by
        all three: the lead's agreement report and disagreement queue have work in them."""
        panel = []
        for username in DEMO_PANEL:
            user, created = User.objects.get_or_create(username=username)
            if created:
                user.set_unusable_password()
                user.save()
            user.groups.add(Group.objects.get(name=Role.JUDGE))
            panel.append(user)
        campaign = annotation_services.create_campaign(
            lead=User.objects.get(username="lead"),
            name=DEMO_PANEL_CAMPAIGN,
            description="Three judges graded every pair: read their agreement, settle the "
            "disagreements and publish qrels.",
            overlap=len(panel),
            judges=panel,
        )
        self._fill(campaign)
        truth = {
            (qid, docno): grade
            for qid, docno, grade in QrelsVersion.objects.get(
                name=DEMO_QRELS, version=1
            ).entries.values_list("qid", "docno", "grade")
        }
        for judge in panel:
            for assignment in Assignment.objects.filter(
                pair__campaign=campaign, judge=judge
            ).select_related("pair__topic", "pair__document"):
                qid, docno = assignment.pair.topic.qid, assignment.pair.document.docno
                grade = demo.judge_grade(
                    truth.get((qid, docno), 0),
                    judge=judge.username,
                    qid=qid,
                    docno=docno,
                    care=DEMO_PANEL[judge.username],
                )
                annotation_services.record_judgment(
                    assignment_id=assignment.pk, judge=judge, grade=grade, seconds=12.0
                )
        self.stdout.write(f"Created {campaign.name}: judged by {', '.join(DEMO_PANEL)}.")

    def _fill(self, campaign):
        """Five demo topics, pooled at depth 5 from two demo runs, with placeholder text."""
        qids = [str(1001 + t) for t in range(DEMO_TOPICS)]
        Topic.objects.bulk_create(
            Topic(
                campaign=campaign,
                qid=qid,
                query=f"demo question {qid}",
                description=f"The searcher wants the answer to demo question {qid}.",
                narrative="Documents that answer it are relevant; ones only about it are related.",
            )
            for qid in qids
        )
        runs = list(Run.objects.filter(system__name__in=["bm25", "dense-retriever"]))
        change = annotation_services.pool_from_runs(
            campaign=campaign,
            run_frames=[services.load_run_frame(run) for run in runs],
            depth=5,
            runs=runs,
        )
        for document in Document.objects.filter(campaign=campaign):
            document.title = f"Demo document {document.docno}"
            document.text = (
                f"This synthetic passage stands for document {document.docno}. It may or may "
                "not answer the demo question; in a real campaign its text comes from your corpus."
            )
            document.save(update_fields=["title", "text"])
        return change
