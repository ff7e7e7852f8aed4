from django.urls import path

from accounts import views

app_name = "accounts"

urlpatterns = [
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.logout, name="logout"),
    path("oidc/login/", views.oidc_login, name="oidc-login"),
    path("oidc/callback/", views.oidc_callback, name="oidc-callback"),
    path("password/", views.PasswordChangeView.as_view(), name="password-change"),
    path("tokens/", views.tokens, name="tokens"),
    path("tokens/<int:pk>/revoke/", views.token_revoke, name="token-revoke"),
    path("teams/", views.teams, name="teams"),
    path("teams/tokens/<int:pk>/revoke/", views.service_token_revoke, name="service-token-revoke"),
]
