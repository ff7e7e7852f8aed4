"""``manage.py create_campaign``: a campaign from the command line, through the API's checks
and services.create_campaign, so its rules and words are the API's (issue 28: no command
created a campaign)."""

import io
import json

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command

from accounts.services.roles import Role
from annotation.api.common import MESSAGES as API_MESSAGES
from annotation.models import Campaign
from annotation.scales import SCALES
from annotation.services.common import MESSAGES
from annotation.services.common import MESSAGES as SERVICE_MESSAGES

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(django_user_model):
    def user(name, role):
        made = django_user_model.objects.create_user(name)
        made.groups.add(Group.objects.get(name=role))
        return made

    return user("lea", Role.LEAD), user("ann", Role.JUDGE), user("bob", Role.JUDGE)


def create(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("create_campaign", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_a_campaign_with_every_option_prints_its_id_alone(people, tmp_path):
    lead, ann, bob = people
    guidelines = tmp_path / "guidelines.md"
    guidelines.write_text("# Grade by *usefulness*\n")

    out, err = create(
        "--name", "Web 2026", "--lead", "lea", "--description", "the web track",
        "--scale", "0-5", "--guidelines", str(guidelines), "--judges-per-pair", "2",
        "--relevance-threshold", "3", "--adjudication-rule", "median",
        "--gold-min-accuracy", "0.8", "--pool-ordering", "move_to_front",
        "--judge", "ann", "--judge", "bob",
    )  # fmt: skip

    campaign = Campaign.objects.get()
    assert out == f"{campaign.pk}\n"
    assert f"Created campaign {campaign.pk}: Web 2026 (lead lea)." in err
    assert (campaign.name, campaign.lead, campaign.description) == (
        "Web 2026",
        lead,
        "the web track",
    )
    assert campaign.scale == [dict(item) for item in SCALES["0-5"]]
    assert campaign.guidelines == "# Grade by *usefulness*"  # trimmed, as the API trims it
    assert (campaign.overlap, campaign.relevance_threshold, campaign.adjudication_rule) == (
        2,
        3,
        "median",
    )
    assert (campaign.gold_min_accuracy, campaign.pool_ordering) == (0.8, "move_to_front")
    assert set(campaign.judges.all()) == {ann, bob}


def test_defaults_are_the_apis_and_a_scale_may_come_from_a_json_file(people, tmp_path):
    scale = [
        {"grade": 0, "label": "No", "definition": "Off topic."},
        {"grade": 1, "label": "Yes", "definition": "Answers it."},
    ]
    path = tmp_path / "scale.json"
    path.write_text(json.dumps(scale))

    out, _ = create("--name", "Binary", "--lead", "lea", "--scale", str(path))

    campaign = Campaign.objects.get(pk=int(out))
    assert campaign.scale == scale
    assert (campaign.overlap, campaign.relevance_threshold, campaign.adjudication_rule) == (
        1,
        1,
        "majority",
    )
    assert campaign.pool_ordering == "random" and not campaign.judges.exists()


def test_more_judges_per_pair_than_judges_is_made_with_the_pages_warning(people):
    _, err = create("--name", "Thin", "--lead", "lea", "--overlap", "3", "--judge", "ann")

    assert SERVICE_MESSAGES["overlap_above_judges"].format(overlap=3, judges=1, s="") in err


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (
            ["--relevance-threshold", "7"],
            "--relevance-threshold: " + MESSAGES["threshold_outside_scale"].format(threshold=7),
        ),
        (
            ["--judges-per-pair", "0"],
            "--judges-per-pair: Ensure this value is greater than or equal to 1.",
        ),
        (["--scale", "0-9"], "--scale: Unknown scale '0-9'"),
        (
            ["--gold-min-accuracy", "1.5"],
            "--gold-min-accuracy: Ensure this value is less than or equal to 1.",
        ),
        (["--judge", "lea"], "--judge: " + API_MESSAGES["not_a_judge_user"].format(pk_value="lea")),
        (["--name", ""], "--name: This field may not be blank."),
    ],
)
def test_a_bad_option_is_refused_with_the_apis_words_naming_the_option(people, args, problem):
    with pytest.raises(CommandError) as refused:
        create("--name", "Bad", "--lead", "lea", *args)

    assert str(refused.value).startswith("nothing created:\n")
    assert problem in str(refused.value)
    assert not Campaign.objects.exists()


def test_the_lead_must_exist_and_hold_the_lead_role(people, tmp_path):
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        create("--name", "X", "--lead", "nobody")
    with pytest.raises(CommandError, match="--lead ann: only leads create campaigns"):
        create("--name", "X", "--lead", "ann")
    with pytest.raises(CommandError, match="No user named 'zed'"):
        create("--name", "X", "--lead", "lea", "--judge", "zed")
    with pytest.raises(CommandError, match=r"--guidelines .*missing.md: No such file"):
        create("--name", "X", "--lead", "lea", "--guidelines", str(tmp_path / "missing.md"))
    bad = tmp_path / "scale.json"
    bad.write_text("[{\n")
    with pytest.raises(CommandError, match=r"--scale .*scale.json:2: not JSON"):
        create("--name", "X", "--lead", "lea", "--scale", str(bad))
    assert not Campaign.objects.exists()
