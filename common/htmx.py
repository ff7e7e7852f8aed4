def is_htmx(request) -> bool:
    """True for requests htmx sends (it marks them with this header)."""
    return request.headers.get("HX-Request") == "true"
