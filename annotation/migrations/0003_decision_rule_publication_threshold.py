"""A lead's decision records the campaign's rule in force; a publication freezes the
relevance threshold its binary qrels use. Publications made before this take their
campaign's threshold as it is now (the best record there is); earlier decisions keep an
empty rule, meaning "not recorded", rather than a guess."""

from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def freeze_thresholds(apps, schema_editor):
    Campaign = apps.get_model("annotation", "Campaign")
    Publication = apps.get_model("annotation", "Publication")
    Publication.objects.update(
        relevance_threshold=Subquery(
            Campaign.objects.filter(pk=OuterRef("campaign_id")).values("relevance_threshold")[:1]
        )
    )


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0002_adjudication"),
    ]

    operations = [
        migrations.AddField(
            model_name="leaddecision",
            name="rule",
            field=models.CharField(
                blank=True,
                choices=[
                    ("majority", "Majority (a tie goes to the lead)"),
                    ("median", "Median (the lower median on ties)"),
                    ("lead", "The lead decides every disagreement"),
                ],
                help_text="The campaign's rule when the lead decided (empty: decided before it was kept).",
                max_length=10,
                default="",
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="publication",
            name="relevance_threshold",
            field=models.PositiveSmallIntegerField(
                default=1,
                help_text="The campaign's relevance threshold when published: the binary qrels of this version use it, whatever the campaign's threshold becomes later.",
            ),
            preserve_default=False,
        ),
        migrations.RunPython(freeze_thresholds, migrations.RunPython.noop),
    ]
