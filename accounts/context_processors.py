from accounts.roles import Role, roles_of


def roles(request):
    names = roles_of(request.user)
    return {
        "user_roles": sorted(names),
        "is_judge": Role.JUDGE in names,
        "is_lead": Role.LEAD in names,
        "is_engineer": Role.ENGINEER in names,
    }
