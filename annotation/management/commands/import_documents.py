from annotation import formats
from annotation.management.lookups import CampaignFileCommand
from annotation.services import campaign_files


class Command(CampaignFileCommand):
    help = (
        "Import documents into a campaign from JSONL or CSV/TSV with a header row (docno and "
        "any of title, text, url), plain or gzip. A docno already in the campaign gets the "
        "file's title, text and url. All or nothing, with every problem listed."
    )
    noun = "documents"
    formats = formats.DOCUMENT_FORMATS
    read = staticmethod(campaign_files.import_documents)
