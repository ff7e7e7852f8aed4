"""How every list of the API is paged: ``page``, and ``page_size`` (100 by default, at most
1000; a page_size that is not a positive whole number gives the default). One class for
every list, so no endpoint ignores ``page_size`` (issue 28: provenance and machine answers
did)."""

from rest_framework.pagination import PageNumberPagination

MAX_PAGE_SIZE = 1000


class Pagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
