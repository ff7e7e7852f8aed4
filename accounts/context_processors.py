from accounts.services.roles import Role, roles_of


def roles(request):
    # Error pages render before AuthenticationMiddleware may have run (config/errors.py):
    # no user there is an anonymous visitor.
    user = getattr(request, "user", None)
    names = roles_of(user) if user is not None else set()
    return {
        "user_roles": sorted(names),
        "is_judge": Role.JUDGE in names,
        "is_lead": Role.LEAD in names,
        "is_engineer": Role.ENGINEER in names,
    }
