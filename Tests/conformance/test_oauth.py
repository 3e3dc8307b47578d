"""OAuth with an OpenID Connect provider through supabase-py: `sign_in_with_oauth` gives the `/authorize` URL, the
test follows the redirects as a browser would (Caravan → the provider → Caravan's `/callback` → the app's
`redirect_to`), then `exchange_code_for_session` turns the code into a session (PKCE), or the implicit flow's
fragment carries the tokens. The provider is a fake on loopback (Python's http.server): discovery, an authorize
endpoint that signs the user in at once, a token endpoint that checks the client secret and PKCE verifier and
answers an RS256 ID token, and its JWKS.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import jwt
import pytest
from supabase import ClientOptions, create_client
from supabase_auth.errors import AuthApiError

from conftest import _run, auth_environment, serving
from deployments import new_deployment

# supabase-py accepts only the provider names it knows; a generic OIDC provider goes by one of them.
PROVIDER = "keycloak"
CLIENT_ID = "caravan-conformance-web"
CLIENT_SECRET = "conformance-secret"
APP_REDIRECT = "http://localhost:3000/auth/done"
SITE_URL = "http://localhost:3000/"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class FakeProvider:
    """The provider's state: its key, the user the next sign-in is, the authorize requests by code."""

    issuer: str = ""
    key: Any = None
    jwk: dict = field(default_factory=dict)
    next_user: dict = field(default_factory=dict)
    codes: dict = field(default_factory=dict)
    authorize_queries: list = field(default_factory=list)

    def id_token(self, user: dict, nonce: str | None, **overrides) -> str:
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": CLIENT_ID, "sub": user["sub"], "iat": now, "exp": now + 600,
                  "email": user.get("email"), "email_verified": user.get("email_verified", True), "name": user.get("name")}
        if nonce is not None:
            claims["nonce"] = nonce
        claims.update(overrides)
        claims = {k: v for k, v in claims.items() if v is not None}
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": "fake-rsa"})


def make_handler(provider: FakeProvider):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def answer(self, status: int, body: dict | None = None, location: str | None = None):
            self.send_response(status)
            if location:
                self.send_header("Location", location)
            payload = json.dumps(body or {}).encode()
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self):
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if parts.path == "/.well-known/openid-configuration":
                return self.answer(200, {"issuer": provider.issuer, "authorization_endpoint": provider.issuer + "/authorize",
                                         "token_endpoint": provider.issuer + "/token", "jwks_uri": provider.issuer + "/jwks"})
            if parts.path == "/jwks":
                return self.answer(200, {"keys": [provider.jwk]})
            if parts.path == "/authorize":
                provider.authorize_queries.append(query)
                code = uuid.uuid4().hex
                provider.codes[code] = (query, dict(provider.next_user))
                target = query["redirect_uri"] + "?" + urlencode({"code": code, "state": query.get("state", "")})
                return self.answer(302, location=target)
            return self.answer(404, {"error": "not_found"})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            if urlsplit(self.path).path != "/token":
                return self.answer(404, {"error": "not_found"})
            found = provider.codes.pop(form.get("code", ""), None)
            ok = (found is not None and form.get("grant_type") == "authorization_code" and form.get("client_id") == CLIENT_ID
                  and form.get("client_secret") == CLIENT_SECRET and form.get("redirect_uri") == found[0].get("redirect_uri")
                  and b64url(hashlib.sha256(form.get("code_verifier", "").encode()).digest()) == found[0].get("code_challenge"))
            if not ok:
                return self.answer(400, {"error": "invalid_grant"})
            query, user = found
            return self.answer(200, {"access_token": "provider-access", "token_type": "Bearer",
                                     "id_token": provider.id_token(user, query.get("nonce"))})

    return Handler


@pytest.fixture(scope="module")
def provider():
    from cryptography.hazmat.primitives.asymmetric import rsa
    from jwt.algorithms import RSAAlgorithm

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    jwk.update({"kid": "fake-rsa", "alg": "RS256", "use": "sig"})
    fake = FakeProvider(key=key, jwk=jwk, next_user={"sub": "fake-sub-1", "email": "ada@example.com", "email_verified": True})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(fake))
    fake.issuer = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()


@dataclass
class OAuthServer:
    url: str
    anon_key: str


@pytest.fixture(scope="module")
def oauth_server(provider, apple_issuer):
    deployment = new_deployment("caravan-oauth-")
    try:
        keys_run = _run("keys", *deployment.args, "--json")
        assert keys_run.returncode == 0, keys_run.stderr
        keys = json.loads(keys_run.stdout)
        env = auth_environment(apple_issuer, CARAVAN_AUTH_SITE_URL=SITE_URL, CARAVAN_AUTH_URI_ALLOW_LIST="http://localhost:3000/**",
                               CARAVAN_AUTH_OIDC_PROVIDERS=PROVIDER, CARAVAN_AUTH_OIDC_KEYCLOAK_ISSUER=provider.issuer,
                               CARAVAN_AUTH_OIDC_KEYCLOAK_CLIENT_ID=CLIENT_ID, CARAVAN_AUTH_OIDC_KEYCLOAK_SECRET=CLIENT_SECRET)
        with serving(deployment, env, log_name="oauth.log") as (_proc, url):
            yield OAuthServer(url=url, anon_key=keys["anon_key"])
            log = (deployment.data_dir / "oauth.log").read_text(errors="replace")
            assert CLIENT_SECRET not in log, "the client secret reached the log"
    finally:
        deployment.remove()


def follow(url: str, stop_at: str, limit: int = 5) -> str:
    """Follows 302s as a browser would, until a `Location` leaves for `stop_at` (the app, which is not running)."""
    for _ in range(limit):
        response = httpx.get(url, follow_redirects=False, timeout=10)
        assert response.status_code == 302, (url, response.status_code, response.text)
        url = response.headers["location"]
        if url.startswith(stop_at):
            return url
    raise AssertionError(f"no redirect to {stop_at} after {limit} hops; last {url}")


def new_client(server: OAuthServer, flow_type: str = "pkce"):
    return create_client(server.url, server.anon_key, options=ClientOptions(flow_type=flow_type, auto_refresh_token=False))


def test_pkce_sign_in_with_oauth_and_exchange_code_for_session(oauth_server, provider):
    provider.next_user = {"sub": "sub-" + uuid.uuid4().hex, "email": f"ada-{uuid.uuid4().hex[:8]}@example.com",
                          "email_verified": True, "name": "Ada"}
    client = new_client(oauth_server)
    started = client.auth.sign_in_with_oauth({"provider": PROVIDER, "options": {"redirect_to": APP_REDIRECT, "scopes": "calendar"}})
    assert started.url.startswith(f"{oauth_server.url}/auth/v1/authorize?")
    landed = follow(started.url, APP_REDIRECT)
    asked = provider.authorize_queries[-1]
    assert asked["client_id"] == CLIENT_ID and asked["redirect_uri"] == f"{oauth_server.url}/auth/v1/callback"
    assert asked["scope"] == "openid email profile calendar" and asked["code_challenge_method"] == "S256"
    code = parse_qs(urlsplit(landed).query)["code"][0]

    response = client.auth.exchange_code_for_session({"auth_code": code, "redirect_to": APP_REDIRECT})
    assert response.session is not None and response.session.access_token
    assert response.user.email == provider.next_user["email"]
    assert response.user.app_metadata["provider"] == PROVIDER
    assert [identity.provider for identity in response.user.identities] == [PROVIDER]
    assert client.auth.get_user().user.id == response.user.id

    # The code is good once.
    with pytest.raises(AuthApiError) as reused:
        new_client(oauth_server).auth.exchange_code_for_session({"auth_code": code, "code_verifier": "x" * 43})
    assert reused.value.code == "flow_state_not_found"


def test_a_wrong_code_verifier_is_refused(oauth_server, provider):
    client = new_client(oauth_server)
    started = client.auth.sign_in_with_oauth({"provider": PROVIDER, "options": {"redirect_to": APP_REDIRECT}})
    code = parse_qs(urlsplit(follow(started.url, APP_REDIRECT)).query)["code"][0]
    with pytest.raises(AuthApiError) as refused:
        client.auth.exchange_code_for_session({"auth_code": code, "code_verifier": "not-the-verifier-" + "y" * 40})
    assert refused.value.code == "bad_code_verifier"


def test_the_same_provider_subject_is_the_same_user(oauth_server, provider):
    provider.next_user = {"sub": "sub-" + uuid.uuid4().hex, "email": f"lin-{uuid.uuid4().hex[:8]}@example.com", "email_verified": True}
    ids = []
    for _ in range(2):
        client = new_client(oauth_server)
        started = client.auth.sign_in_with_oauth({"provider": PROVIDER, "options": {"redirect_to": APP_REDIRECT}})
        code = parse_qs(urlsplit(follow(started.url, APP_REDIRECT)).query)["code"][0]
        ids.append(client.auth.exchange_code_for_session({"auth_code": code}).user.id)
    assert ids[0] == ids[1]


def test_implicit_flow_puts_the_tokens_in_the_fragment(oauth_server, provider):
    client = new_client(oauth_server, flow_type="implicit")
    started = client.auth.sign_in_with_oauth({"provider": PROVIDER, "options": {"redirect_to": APP_REDIRECT}})
    assert "code_challenge" not in started.url
    landed = follow(started.url, APP_REDIRECT)
    fragment = {k: v[0] for k, v in parse_qs(urlsplit(landed).fragment).items()}
    assert fragment["token_type"] == "bearer" and fragment["refresh_token"]
    user = httpx.get(f"{oauth_server.url}/auth/v1/user", headers={"apikey": oauth_server.anon_key,
                                                                  "Authorization": f"Bearer {fragment['access_token']}"})
    assert user.status_code == 200 and user.json()["email"] == provider.next_user["email"]


def test_redirect_to_off_the_allow_list_ends_at_the_site_url(oauth_server, provider):
    client = new_client(oauth_server)
    started = client.auth.sign_in_with_oauth({"provider": PROVIDER, "options": {"redirect_to": "https://evil.example/steal"}})
    landed = follow(started.url, SITE_URL)
    assert landed.startswith(SITE_URL + "?code=")


def test_sign_in_with_id_token_for_a_configured_provider(oauth_server, provider):
    nonce = uuid.uuid4().hex
    user = {"sub": "sub-" + uuid.uuid4().hex, "email": f"grace-{uuid.uuid4().hex[:8]}@example.com", "email_verified": True}
    token = provider.id_token(user, hashlib.sha256(nonce.encode()).hexdigest())
    response = new_client(oauth_server).auth.sign_in_with_id_token({"provider": PROVIDER, "token": token, "nonce": nonce})
    assert response.session is not None and response.user.email == user["email"]
    with pytest.raises(AuthApiError) as wrong_nonce:
        new_client(oauth_server).auth.sign_in_with_id_token({"provider": PROVIDER, "token": token, "nonce": "other"})
    assert wrong_nonce.value.code == "validation_failed"
    with pytest.raises(AuthApiError) as wrong_audience:
        new_client(oauth_server).auth.sign_in_with_id_token(
            {"provider": PROVIDER, "token": provider.id_token(user, None, aud="someone-else")})
    assert wrong_audience.value.code == "validation_failed"
