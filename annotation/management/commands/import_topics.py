from annotation import formats
from annotation.management.lookups import CampaignFileCommand
from annotation.services import campaign_files


class Command(CampaignFileCommand):
    help = (
        "Import topics into a campaign from a TSV (qid<TAB>query), JSONL "
        "(qid/title/description/narrative) or TREC topic file, plain or gzip. All or nothing: "
        "a file with any bad line is refused with every problem listed."
    )
    noun = "topics"
    formats = formats.TOPIC_FORMATS
    read = staticmethod(campaign_files.import_topics)
