from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction

from accounts.roles import Role
from evaluation import demo, services
from evaluation.models import QrelsVersion

DEMO_USERS = [
    # username, password, role (None: superuser)
    ("admin", "admin-demo", None),
    ("lead", "lead-demo", Role.LEAD),
    ("judge", "judge-demo", Role.JUDGE),
    ("engineer", "engineer-demo", Role.ENGINEER),
]
DEMO_QRELS = "demo-graded"


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

        self.stdout.write("Demo logins (username / password):")
        for username, password, role in DEMO_USERS:
            self.stdout.write(f"  {role or 'admin':<9} {username} / {password}")
