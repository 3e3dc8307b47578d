"""GoTrue conformance: the official supabase_auth client (supabase==2.34.1) against a live `caravan serve`."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import time
import uuid

import httpx
import jwt
import pytest
from supabase import Client, ClientOptions, create_client
from supabase_auth.errors import AuthApiError, AuthWeakPasswordError

from conftest import APPLE_AUDIENCE, CARAVAN_BIN, auth_environment, serving
from deployments import Deployment, new_deployment

PASSWORD = "correct-horse-9"


def new_client(url: str, key: str) -> Client:
    return create_client(url, key, options=ClientOptions(auto_refresh_token=False))


def unique_email() -> str:
    return f"user-{uuid.uuid4().hex[:12]}@example.com"


def unique_phone() -> str:
    return "9665" + str(uuid.uuid4().int)[:8]


def latest_code(deployment: Deployment, recipient: str) -> str:
    """The six-digit code in the newest development-outbox message to `recipient`."""
    # SQLite's default created_at has millisecond precision, so its insertion order (rowid) breaks ties; Postgres
    # keeps microseconds and has no rowid.
    tie_break = "" if deployment.database_url else ", rowid DESC"
    row = deployment.fetch_one(
        f"SELECT body FROM auth_outbox WHERE recipient = ? ORDER BY created_at DESC{tie_break} LIMIT 1", (recipient,)
    )
    assert row is not None, f"no message to {recipient} in the outbox"
    digits = [word.strip(".") for word in row[0].split() if word.strip(".").isdigit() and len(word.strip(".")) == 6]
    assert digits, row[0]
    return digits[0]


def claims(token: str) -> dict:
    return jwt.decode(token, options={"verify_signature": False})


def server_secret(deployment: Deployment) -> bytes:
    return deployment.signing_secret_bytes()


@pytest.fixture
def client(server) -> Client:
    return new_client(server.url, server.anon_key)


@pytest.fixture
def auth_http(server):
    with httpx.Client(base_url=f"{server.url}/auth/v1", headers={"apikey": server.anon_key}, timeout=30.0) as http:
        yield http


# MARK: Sign-up, sign-in, user


def test_sign_up_returns_a_session_and_the_user(client):
    email = unique_email()
    response = client.auth.sign_up({"email": email.upper(), "password": PASSWORD, "options": {"data": {"nickname": "Noura"}}})
    assert response.session is not None
    user = response.user
    assert user.email == email  # normalized
    assert user.user_metadata == {"nickname": "Noura"}
    assert user.app_metadata["provider"] == "email"
    assert user.identities and user.identities[0].provider == "email"
    token = claims(response.session.access_token)
    assert token["sub"] == user.id
    assert token["role"] == "authenticated" and token["aud"] == "authenticated"
    assert token["email"] == email and token["session_id"] and token["is_anonymous"] is False
    assert token["amr"][0]["method"] == "password"
    assert token["exp"] == response.session.expires_at
    assert token["exp"] - token["iat"] == 3600


def test_sign_in_get_and_update_user(client, server):
    email = unique_email()
    client.auth.sign_up({"email": email, "password": PASSWORD})
    client.auth.sign_out()
    signed_in = client.auth.sign_in_with_password({"email": email, "password": PASSWORD})
    assert signed_in.user.email == email
    fetched = client.auth.get_user()
    assert fetched.user.id == signed_in.user.id
    updated = client.auth.update_user({"data": {"city": "Riyadh"}})
    assert updated.user.user_metadata == {"city": "Riyadh"}
    client.auth.update_user({"password": "another-pass-7"})
    client.auth.sign_out()
    with pytest.raises(AuthApiError) as wrong:
        client.auth.sign_in_with_password({"email": email, "password": PASSWORD})
    assert wrong.value.code == "invalid_credentials"
    again = client.auth.sign_in_with_password({"email": email, "password": "another-pass-7"})
    assert again.user.user_metadata == {"city": "Riyadh"}


def test_app_metadata_cannot_be_set_by_the_user(client, auth_http):
    response = client.auth.sign_up({"email": unique_email(), "password": PASSWORD})
    raw = auth_http.put(
        "/user",
        headers={"Authorization": f"Bearer {response.session.access_token}"},
        json={"data": {"x": 1}, "app_metadata": {"role": "admin"}},
    )
    assert raw.status_code == 200
    assert "role" not in raw.json()["app_metadata"]


def test_duplicate_sign_up_is_refused(client):
    email = unique_email()
    client.auth.sign_up({"email": email, "password": PASSWORD})
    with pytest.raises(AuthApiError) as error:
        client.auth.sign_up({"email": email.upper(), "password": PASSWORD})
    assert error.value.code == "user_already_exists"
    assert error.value.status == 422


def test_weak_and_missing_passwords(client, auth_http):
    with pytest.raises(AuthWeakPasswordError) as weak:
        client.auth.sign_up({"email": unique_email(), "password": "short"})
    assert weak.value.code == "weak_password"
    assert "length" in weak.value.reasons
    raw = auth_http.post("/signup", json={"email": unique_email()})
    assert raw.status_code == 400 and raw.json()["code"] == "validation_failed"
    bad = auth_http.post("/signup", json={"email": "not-an-email", "password": PASSWORD})
    assert bad.status_code == 400 and bad.json()["code"] == "validation_failed"


def test_errors_use_the_2024_api_version(auth_http):
    response = auth_http.post("/token", params={"grant_type": "password"}, json={"email": unique_email(), "password": PASSWORD})
    assert response.status_code == 400
    assert response.headers["X-Supabase-Api-Version"] == "2024-01-01"
    assert response.json() == {"code": "invalid_credentials", "message": "Invalid login credentials"}
    unknown = auth_http.post("/token", params={"grant_type": "magic"}, json={})
    assert unknown.status_code == 400 and unknown.json()["code"] == "validation_failed"
    garbage = auth_http.post("/signup", content=b"{not json", headers={"Content-Type": "application/json"})
    assert garbage.status_code == 400 and garbage.json()["code"] == "bad_json"


def test_auth_requires_an_api_key(server):
    response = httpx.post(f"{server.url}/auth/v1/signup", json={"email": unique_email(), "password": PASSWORD})
    assert response.status_code == 401
    assert response.json()["code"] == "no_authorization"
    forged = httpx.post(f"{server.url}/auth/v1/signup", headers={"apikey": "not-a-key"}, json={"email": unique_email(), "password": PASSWORD})
    assert forged.status_code == 401


def test_phone_sign_up_and_sign_in(client):
    phone = unique_phone()
    response = client.auth.sign_up({"phone": f"+{phone}", "password": PASSWORD})
    assert response.user.phone == phone
    client.auth.sign_out()
    again = client.auth.sign_in_with_password({"phone": f"+{phone}", "password": PASSWORD})
    assert again.user.id == response.user.id


def test_anonymous_sign_in(client):
    response = client.auth.sign_in_anonymously({"options": {"data": {"guest": True}}})
    assert response.user.is_anonymous is True
    assert response.user.identities == []
    token = claims(response.session.access_token)
    assert token["is_anonymous"] is True and token["role"] == "authenticated"
    assert token["amr"][0]["method"] == "anonymous"
    # An anonymous user becomes permanent by adding an email and password.
    email = unique_email()
    converted = client.auth.update_user({"email": email, "password": PASSWORD})
    assert converted.user.email == email and converted.user.is_anonymous is False
    client.auth.sign_out()
    assert client.auth.sign_in_with_password({"email": email, "password": PASSWORD}).user.id == response.user.id


# MARK: Refresh tokens


def test_refresh_rotates_the_token(client):
    first = client.auth.sign_up({"email": unique_email(), "password": PASSWORD}).session
    second = client.auth.refresh_session(first.refresh_token).session
    assert second.refresh_token != first.refresh_token
    assert claims(second.access_token)["session_id"] == claims(first.access_token)["session_id"]
    assert second.user.id == first.user.id


def test_lost_reply_gets_the_same_child(server):
    a = new_client(server.url, server.anon_key)
    first = a.auth.sign_up({"email": unique_email(), "password": PASSWORD}).session
    child = a.auth.refresh_session(first.refresh_token).session
    # The reply was lost: the parent of the active token is answered with that same token.
    b = new_client(server.url, server.anon_key)
    again = b.auth.refresh_session(first.refresh_token).session
    assert again.refresh_token == child.refresh_token


def test_reusing_an_old_refresh_token_revokes_the_family(server):
    a = new_client(server.url, server.anon_key)
    t0 = a.auth.sign_up({"email": unique_email(), "password": PASSWORD}).session
    t1 = new_client(server.url, server.anon_key).auth.refresh_session(t0.refresh_token).session
    t2 = new_client(server.url, server.anon_key).auth.refresh_session(t1.refresh_token).session
    with pytest.raises(AuthApiError) as reuse:
        new_client(server.url, server.anon_key).auth.refresh_session(t0.refresh_token)
    assert reuse.value.code == "refresh_token_already_used"
    assert reuse.value.status == 400
    # The whole family is gone: even the newest token no longer works.
    with pytest.raises(AuthApiError) as gone:
        new_client(server.url, server.anon_key).auth.refresh_session(t2.refresh_token)
    assert gone.value.code in ("refresh_token_not_found", "session_not_found")


def test_unknown_refresh_token(client):
    with pytest.raises(AuthApiError) as error:
        client.auth.refresh_session("definitely-not-a-token")
    assert error.value.code == "refresh_token_not_found"


# MARK: Logout


def test_logout_scopes(server):
    email = unique_email()
    first = new_client(server.url, server.anon_key)
    first.auth.sign_up({"email": email, "password": PASSWORD})
    second = new_client(server.url, server.anon_key)
    second_session = second.auth.sign_in_with_password({"email": email, "password": PASSWORD}).session
    third = new_client(server.url, server.anon_key)
    third_session = third.auth.sign_in_with_password({"email": email, "password": PASSWORD}).session

    first.auth.sign_out({"scope": "others"})
    assert first.auth.get_user() is not None  # this session stays
    with pytest.raises(AuthApiError):
        new_client(server.url, server.anon_key).auth.refresh_session(second_session.refresh_token)
    with pytest.raises(AuthApiError) as gone:
        third.auth.get_user(third_session.access_token)
    assert gone.value.code == "session_not_found"

    first.auth.sign_out({"scope": "local"})
    assert first.auth.get_session() is None


def test_global_logout_ends_every_session(server):
    email = unique_email()
    a = new_client(server.url, server.anon_key)
    a.auth.sign_up({"email": email, "password": PASSWORD})
    b = new_client(server.url, server.anon_key)
    b_session = b.auth.sign_in_with_password({"email": email, "password": PASSWORD}).session
    a.auth.sign_out()  # global is the default
    with pytest.raises(AuthApiError):
        new_client(server.url, server.anon_key).auth.refresh_session(b_session.refresh_token)


# MARK: One-time codes


def test_email_otp_sign_in(client, server):
    email = unique_email()
    response = client.auth.sign_in_with_otp({"email": email})
    assert response.user is None and response.session is None
    code = latest_code(server.deployment, email)
    verified = client.auth.verify_otp({"email": email, "token": code, "type": "email"})
    assert verified.session is not None
    assert verified.user.email == email and verified.user.email_confirmed_at is not None
    assert claims(verified.session.access_token)["amr"][0]["method"] == "otp"
    # A code works once.
    with pytest.raises(AuthApiError) as reused:
        client.auth.verify_otp({"email": email, "token": code, "type": "email"})
    assert reused.value.code == "otp_expired"


def test_sms_otp_sign_in(client, server):
    phone = unique_phone()
    client.auth.sign_in_with_otp({"phone": f"+{phone}"})
    code = latest_code(server.deployment, phone)
    verified = client.auth.verify_otp({"phone": f"+{phone}", "token": code, "type": "sms"})
    assert verified.user.phone == phone and verified.user.phone_confirmed_at is not None


def test_otp_without_create_user_for_a_stranger(client):
    with pytest.raises(AuthApiError) as error:
        client.auth.sign_in_with_otp({"email": unique_email(), "options": {"should_create_user": False}})
    assert error.value.code == "otp_disabled"


def test_otp_resend_waits_sixty_seconds(client):
    email = unique_email()
    client.auth.sign_in_with_otp({"email": email})
    with pytest.raises(AuthApiError) as error:
        client.auth.sign_in_with_otp({"email": email})
    assert error.value.status == 429
    assert error.value.code == "over_email_send_rate_limit"


def test_otp_allows_five_attempts(client, server):
    email = unique_email()
    client.auth.sign_in_with_otp({"email": email})
    code = latest_code(server.deployment, email)
    wrong = "000000" if code != "000000" else "111111"
    for _ in range(4):
        with pytest.raises(AuthApiError) as error:
            client.auth.verify_otp({"email": email, "token": wrong, "type": "email"})
        assert error.value.code == "otp_expired" and error.value.status == 403
    # The fifth attempt may still be the right one.
    assert client.auth.verify_otp({"email": email, "token": code, "type": "email"}).session is not None


def test_otp_refuses_the_right_code_after_five_wrong_ones(client, server):
    email = unique_email()
    client.auth.sign_in_with_otp({"email": email})
    code = latest_code(server.deployment, email)
    wrong = "000000" if code != "000000" else "111111"
    for _ in range(5):
        with pytest.raises(AuthApiError):
            client.auth.verify_otp({"email": email, "token": wrong, "type": "email"})
    with pytest.raises(AuthApiError) as exhausted:
        client.auth.verify_otp({"email": email, "token": code, "type": "email"})
    assert exhausted.value.code == "otp_expired"


# MARK: Abuse limits


def test_password_brute_force_hits_the_limit(client):
    email = unique_email()
    client.auth.sign_up({"email": email, "password": PASSWORD})
    statuses = []
    for attempt in range(7):
        try:
            client.auth.sign_in_with_password({"email": email, "password": f"guess-{attempt}-xx"})
        except AuthApiError as error:
            statuses.append((error.status, error.code))
    assert statuses[0] == (400, "invalid_credentials")
    assert (429, "over_request_rate_limit") in statuses
    # Once limited, even the right password waits for the window.
    with pytest.raises(AuthApiError) as limited:
        client.auth.sign_in_with_password({"email": email, "password": PASSWORD})
    assert limited.value.status == 429


def test_every_429_carries_retry_after(auth_http):
    """Sign-in limits and code resends say when to come back (seconds, within the window)."""
    email = unique_email()
    assert auth_http.post("/signup", json={"email": email, "password": PASSWORD}).status_code == 200
    answers = [auth_http.post("/token", params={"grant_type": "password"}, json={"email": email, "password": "a-wrong-guess"})
               for _ in range(7)]
    limited = [r for r in answers if r.status_code == 429]
    assert limited, [r.status_code for r in answers]
    for r in limited:
        assert r.json()["code"] == "over_request_rate_limit"
        assert 1 <= int(r.headers["retry-after"]) <= 300, r.headers
    other = unique_email()
    assert auth_http.post("/otp", json={"email": other}).status_code == 200
    resent = auth_http.post("/otp", json={"email": other})
    assert resent.status_code == 429 and resent.json()["code"] == "over_email_send_rate_limit"
    assert 1 <= int(resent.headers["retry-after"]) <= 60, resent.headers


def test_look_alike_and_control_character_emails_are_not_new_accounts(auth_http):
    email = unique_email()
    assert auth_http.post("/signup", json={"email": email, "password": PASSWORD}).status_code == 200
    look_alike = "\uff41" + email[1:] if email[0] == "a" else email.replace("@example", "@\uff45xample")
    again = auth_http.post("/signup", json={"email": look_alike, "password": PASSWORD})
    assert again.status_code == 422 and again.json()["code"] == "user_already_exists", again.text
    for bad in [email + "\u0000", "\u0001" + email, email.replace("@", "\u200d@")]:
        r = auth_http.post("/signup", json={"email": bad, "password": PASSWORD})
        assert r.status_code == 400 and r.json()["code"] == "validation_failed", (bad, r.text)


# MARK: Tokens in REST requests


def test_rest_requests_carry_the_signed_in_user(server, places):
    owner = new_client(server.url, server.anon_key)
    owner_user = owner.auth.sign_up({"email": unique_email(), "password": PASSWORD}).user
    inserted = owner.table("favorites").insert({"user_id": owner_user.id, "place_id": places[0]["id"]}).execute()
    assert inserted.data[0]["user_id"] == owner_user.id
    mine = owner.table("favorites").select("*").execute()
    assert [row["user_id"] for row in mine.data] == [owner_user.id]

    stranger = new_client(server.url, server.anon_key)
    stranger.auth.sign_up({"email": unique_email(), "password": PASSWORD})
    assert stranger.table("favorites").select("*").eq("user_id", owner_user.id).execute().data == []
    # Writing a row for someone else is refused by the policy.
    with pytest.raises(Exception) as refused:
        stranger.table("favorites").insert({"user_id": owner_user.id, "place_id": places[1]["id"]}).execute()
    assert "42501" in str(refused.value)


def forge(secret: bytes, **overrides) -> str:
    now = int(time.time())
    payload = {"sub": str(uuid.uuid4()), "role": "authenticated", "aud": "authenticated", "iat": now, "exp": now + 600}
    payload.update(overrides)
    return jwt.encode(payload, secret, algorithm="HS256", headers={"kid": "caravan"})


@pytest.mark.parametrize(
    "kind",
    ["expired", "wrong_signature", "alg_none", "tampered", "garbage"],
)
def test_bad_tokens_are_refused(server, client, kind):
    secret = server_secret(server.deployment)
    session = client.auth.sign_up({"email": unique_email(), "password": PASSWORD}).session
    if kind == "expired":
        token = forge(secret, exp=int(time.time()) - 10)
    elif kind == "wrong_signature":
        token = forge(b"x" * 48)
    elif kind == "alg_none":
        header = base64.urlsafe_b64encode(b'{"alg":"none","typ":"JWT"}').rstrip(b"=").decode()
        body = base64.urlsafe_b64encode(json.dumps({"sub": str(uuid.uuid4()), "role": "service_role"}).encode()).rstrip(b"=").decode()
        token = f"{header}.{body}."
    elif kind == "tampered":
        header, body, signature = session.access_token.split(".")
        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        payload["role"] = "service_role"
        body = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
        token = f"{header}.{body}.{signature}"
    else:
        token = "not.a.jwt"
    rest = httpx.get(
        f"{server.rest_url}/favorites", headers={"apikey": server.anon_key, "Authorization": f"Bearer {token}"}
    )
    assert rest.status_code == 401
    assert rest.json()["code"] == ("PGRST303" if kind == "expired" else "PGRST301")
    user = httpx.get(f"{server.url}/auth/v1/user", headers={"apikey": server.anon_key, "Authorization": f"Bearer {token}"})
    assert user.status_code == 403 and user.json()["code"] == "bad_jwt"


def test_user_endpoint_needs_a_user_token(server, auth_http):
    assert auth_http.get("/user").status_code == 401
    anon = auth_http.get("/user", headers={"Authorization": f"Bearer {server.anon_key}"})
    assert anon.status_code == 403 and anon.json()["code"] == "bad_jwt"


# MARK: Sign in with Apple


def apple_token(apple, **overrides) -> str:
    now = int(time.time())
    payload = {
        "iss": "https://appleid.apple.com",
        "aud": APPLE_AUDIENCE,
        "sub": f"001234.{uuid.uuid4().hex}.0420",
        "iat": now,
        "exp": now + 600,
        "email": unique_email(),
        "email_verified": "true",
    }
    payload.update(overrides)
    payload = {k: v for k, v in payload.items() if v is not None}
    return jwt.encode(payload, apple.private_key, algorithm="RS256", headers={"kid": apple.kid})


def test_sign_in_with_apple(server, client, apple_issuer):
    nonce = uuid.uuid4().hex
    subject = f"001234.{uuid.uuid4().hex}.0420"
    token = apple_token(apple_issuer, sub=subject, nonce=hashlib.sha256(nonce.encode()).hexdigest())
    response = client.auth.sign_in_with_id_token({"provider": "apple", "token": token, "nonce": nonce})
    assert response.session is not None
    identities = response.user.identities
    assert [identity.provider for identity in identities] == ["apple"]
    assert identities[0].id == subject
    assert response.user.app_metadata["provider"] == "apple"
    # The same Apple subject signs in to the same user.
    again = new_client(server.url, server.anon_key).auth.sign_in_with_id_token(
        {"provider": "apple", "token": apple_token(apple_issuer, sub=subject)}
    )
    assert again.user.id == response.user.id


def test_apple_does_not_take_over_an_account_with_the_same_email(server, client, apple_issuer):
    email = unique_email()
    owner = client.auth.sign_up({"email": email, "password": PASSWORD}).user
    token = apple_token(apple_issuer, email=email, email_verified=True)
    apple_user = new_client(server.url, server.anon_key).auth.sign_in_with_id_token({"provider": "apple", "token": token}).user
    assert apple_user.id != owner.id
    assert apple_user.email in (None, "")


@pytest.mark.parametrize("problem", ["wrong_audience", "expired", "bad_nonce", "missing_nonce", "unexpected_nonce", "wrong_issuer", "foreign_key"])
def test_apple_tokens_that_must_fail(client, apple_issuer, problem):
    from cryptography.hazmat.primitives.asymmetric import rsa

    nonce = uuid.uuid4().hex
    good_hash = hashlib.sha256(nonce.encode()).hexdigest()
    overrides = {"nonce": good_hash}
    if problem == "wrong_audience":
        overrides["aud"] = "com.someone.else"
    elif problem == "expired":
        overrides["exp"] = int(time.time()) - 5
    elif problem == "bad_nonce":
        overrides["nonce"] = hashlib.sha256(b"other").hexdigest()
    elif problem == "missing_nonce":
        overrides["nonce"] = None
    elif problem == "wrong_issuer":
        overrides["iss"] = "https://evil.example.com"
    if problem == "foreign_key":
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        now = int(time.time())
        token = jwt.encode(
            {"iss": "https://appleid.apple.com", "aud": APPLE_AUDIENCE, "sub": "x", "iat": now, "exp": now + 600, "nonce": good_hash},
            other,
            algorithm="RS256",
            headers={"kid": apple_issuer.kid},
        )
    else:
        token = apple_token(apple_issuer, **overrides)
    with pytest.raises(AuthApiError) as error:
        # unexpected_nonce: the token carries a nonce hash, the request none.
        client.auth.sign_in_with_id_token({"provider": "apple", "token": token, "nonce": None if problem == "unexpected_nonce" else nonce})
    assert error.value.status == 400
    assert error.value.code == "validation_failed"


# MARK: Admin API


def test_admin_sets_the_app_role(server, client):
    user = client.auth.sign_up({"email": unique_email(), "password": PASSWORD}).user
    admin = new_client(server.url, server.service_role_key).auth.admin
    updated = admin.update_user_by_id(user.id, {"app_metadata": {"role": "admin"}})
    assert updated.user.app_metadata["role"] == "admin"
    assert updated.user.app_metadata["provider"] == "email"  # merged, not replaced
    refreshed = client.auth.refresh_session().session
    assert claims(refreshed.access_token)["app_metadata"]["role"] == "admin"
    assert admin.get_user_by_id(user.id).user.id == user.id
    assert user.id in [u.id for u in admin.list_users(page=1, per_page=1000)]


def test_admin_api_refuses_users(server, client):
    session = client.auth.sign_up({"email": unique_email(), "password": PASSWORD}).session
    response = httpx.get(
        f"{server.url}/auth/v1/admin/users",
        headers={"apikey": server.anon_key, "Authorization": f"Bearer {session.access_token}"},
    )
    assert response.status_code == 403 and response.json()["code"] == "not_admin"


def test_admin_creates_and_deletes_users(server, places):
    admin = new_client(server.url, server.service_role_key).auth.admin
    email = unique_email()
    created = admin.create_user({"email": email, "password": PASSWORD, "email_confirm": True, "user_metadata": {"a": 1}})
    assert created.user.email == email and created.user.email_confirmed_at is not None
    user_client = new_client(server.url, server.anon_key)
    user_client.auth.sign_in_with_password({"email": email, "password": PASSWORD})
    user_client.table("favorites").insert({"user_id": created.user.id, "place_id": places[2]["id"]}).execute()
    admin.delete_user(created.user.id)
    with pytest.raises(AuthApiError) as gone:
        admin.get_user_by_id(created.user.id)
    assert gone.value.status == 404
    service = create_client(server.url, server.service_role_key)
    assert service.table("favorites").select("id").eq("user_id", created.user.id).execute().data == []


# MARK: Confirmation on


@pytest.fixture(scope="module")
def confirming_server(apple_issuer):
    deployment = new_deployment("caravan-confirm-")
    try:
        env = auth_environment(apple_issuer, CARAVAN_AUTH_CONFIRM_EMAIL="true", CARAVAN_AUTH_CONFIRM_PHONE="true")
        keys = subprocess.run([str(CARAVAN_BIN), "keys", *deployment.args, "--json"], capture_output=True, text=True, check=True)
        with serving(deployment, env) as (_, url):
            yield url, json.loads(keys.stdout)["anon_key"], deployment
    finally:
        deployment.remove()


def test_sign_up_with_confirmation_sends_a_code(confirming_server):
    url, anon_key, deployment = confirming_server
    client = new_client(url, anon_key)
    email = unique_email()
    response = client.auth.sign_up({"email": email, "password": PASSWORD})
    assert response.session is None
    assert response.user.email == email and response.user.email_confirmed_at is None
    with pytest.raises(AuthApiError) as unconfirmed:
        client.auth.sign_in_with_password({"email": email, "password": PASSWORD})
    assert unconfirmed.value.code == "email_not_confirmed"
    verified = client.auth.verify_otp({"email": email, "token": latest_code(deployment, email), "type": "signup"})
    assert verified.session is not None and verified.user.email_confirmed_at is not None
    assert client.auth.sign_in_with_password({"email": email, "password": PASSWORD}).session is not None


def test_email_change_with_confirmation(confirming_server):
    url, anon_key, deployment = confirming_server
    client = new_client(url, anon_key)
    phone = unique_phone()
    client.auth.sign_up({"phone": phone, "password": PASSWORD})
    client.auth.verify_otp({"phone": phone, "token": latest_code(deployment, phone), "type": "sms"})
    email = unique_email()
    pending = client.auth.update_user({"email": email})
    assert pending.user.new_email == email and pending.user.email in (None, "")
    changed = client.auth.verify_otp({"email": email, "token": latest_code(deployment, email), "type": "email_change"})
    assert changed.user.email == email


# MARK: CLI


@pytest.fixture
def deployment():
    fresh = new_deployment("caravan-cli-")
    yield fresh
    fresh.remove()


def test_user_cli(deployment):
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(CARAVAN_BIN), "user", *args, *deployment.args], capture_output=True, text=True, timeout=60)

    created = run("create", "--email", "Admin@Example.com", "--password", PASSWORD, "--role", "admin")
    assert created.returncode == 0, created.stderr
    user = json.loads(created.stdout)
    assert user["email"] == "admin@example.com" and user["app_metadata"]["role"] == "admin"
    listed = run("list")
    assert f"{user['id']}\tadmin@example.com\t-\tadmin" in listed.stdout
    cleared = run("set-role", "admin@example.com", "--clear")
    assert cleared.returncode == 0 and cleared.stdout.strip().endswith("-")
    assert run("set-role", user["id"], "editor").stdout.strip() == f"{user['id']}\teditor"
    duplicate = run("create", "--email", "admin@example.com", "--password", PASSWORD)
    assert duplicate.returncode != 0
    assert run("delete", "admin@example.com").returncode == 0
    assert run("list").stdout == ""


# MARK: SMTP


class RecordingSMTPServer:
    """A minimal SMTP server on loopback that records every message (a real SMTP peer for the SMTP sender)."""

    def __init__(self) -> None:
        import socketserver
        import threading

        messages: list[dict] = []
        self.messages = messages

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                def reply(line: str) -> None:
                    self.wfile.write((line + "\r\n").encode())

                reply("220 recorder ESMTP")
                envelope: dict = {"to": []}
                while True:
                    raw = self.rfile.readline()
                    if not raw:
                        return
                    command = raw.decode().rstrip("\r\n")
                    verb = command.split(" ", 1)[0].upper()
                    if verb == "EHLO":
                        reply("250-recorder")
                        reply("250 AUTH PLAIN")
                    elif verb == "AUTH":
                        envelope["auth"] = base64.b64decode(command.split(" ")[2]).split(b"\0")[1:]
                        reply("235 ok")
                    elif verb == "MAIL":
                        envelope["from"] = command[10:]
                        reply("250 ok")
                    elif verb == "RCPT":
                        envelope["to"].append(command[8:])
                        reply("250 ok")
                    elif verb == "DATA":
                        reply("354 go ahead")
                        lines = []
                        while (line := self.rfile.readline().decode().rstrip("\r\n")) != ".":
                            lines.append(line[1:] if line.startswith("..") else line)
                        envelope["data"] = "\n".join(lines)
                        messages.append(envelope)
                        envelope = {"to": []}
                        reply("250 queued")
                    elif verb == "QUIT":
                        reply("221 bye")
                        return
                    else:
                        reply("502 unknown")

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_codes_leave_through_smtp_when_configured(apple_issuer):
    smtp = RecordingSMTPServer()
    deployment = new_deployment("caravan-smtp-")
    try:
        env = auth_environment(
            apple_issuer,
            CARAVAN_AUTH_SMTP_HOST="127.0.0.1",
            CARAVAN_AUTH_SMTP_PORT=str(smtp.port),
            CARAVAN_AUTH_SMTP_FROM="no-reply@caravan.test",
            CARAVAN_AUTH_SMTP_USER="mailer",
            CARAVAN_AUTH_SMTP_PASSWORD="mail-secret",
        )
        keys = subprocess.run([str(CARAVAN_BIN), "keys", *deployment.args, "--json"], capture_output=True, text=True, check=True)
        with serving(deployment, env) as (_, url):
            client = new_client(url, json.loads(keys.stdout)["anon_key"])
            email = unique_email()
            client.auth.sign_in_with_otp({"email": email})
            assert len(smtp.messages) == 1
            message = smtp.messages[0]
            assert message["from"] == "<no-reply@caravan.test>" and message["to"] == [f"<{email}>"]
            assert message["auth"] == [b"mailer", b"mail-secret"]
            code = next(word.strip(".") for word in message["data"].split() if word.strip(".").isdigit() and len(word.strip(".")) == 6)
            assert client.auth.verify_otp({"email": email, "token": code, "type": "email"}).session is not None
            # SMS has no provider configured: it still goes to the development outbox.
            phone = unique_phone()
            client.auth.sign_in_with_otp({"phone": phone})
            assert latest_code(deployment, phone)
            assert deployment.fetch_one("SELECT count(*) FROM auth_outbox WHERE recipient = ?", (email,))[0] == 0
    finally:
        smtp.close()
        deployment.remove()


def test_with_sign_ups_off_every_code_endpoint_answers_known_and_unknown_addresses_alike(apple_issuer):
    """`/otp` (a sign-in code or magic link), `/recover` and `/resend`, each asked twice in a row (the second inside
    the resend interval), give a known and an unknown address, email or phone, the same status and body; and
    `auth_email_lookalikes=reject` refuses a full-width look-alike with GoTrue's `email_address_invalid`."""
    deployment = new_deployment("caravan-closed-auth-")
    try:
        keys = json.loads(subprocess.run([str(CARAVAN_BIN), "keys", *deployment.args, "--json"], capture_output=True, text=True,
                                         check=True).stdout)
        env = auth_environment(apple_issuer, CARAVAN_AUTH_SIGNUP_ENABLED="false", CARAVAN_AUTH_EMAIL_LOOKALIKES="reject")
        with serving(deployment, env) as (_, url):
            headers = {"apikey": keys["anon_key"]}
            admin = {"apikey": keys["service_role_key"], "Authorization": f"Bearer {keys['service_role_key']}"}
            known_email, known_phone = unique_email(), unique_phone()
            for body in [{"email": known_email, "password": PASSWORD}, {"phone": known_phone, "password": PASSWORD}]:
                assert httpx.post(f"{url}/auth/v1/admin/users", json=body, headers=admin).status_code == 200

            def answers(address: dict) -> list[tuple[int, str]]:
                calls = [("/otp", {**address, "create_user": False}), ("/otp", {**address, "create_user": True}),
                         ("/resend", {**address, "type": "signup" if "email" in address else "sms"})]
                if "email" in address:
                    calls.append(("/recover", address))
                out = []
                for _ in range(2):
                    for path, body in calls:
                        r = httpx.post(f"{url}/auth/v1{path}", json=body, headers=headers)
                        out.append((r.status_code, r.text))
                return out

            known = answers({"email": known_email})
            assert known == answers({"email": unique_email()}), known
            assert {status for status, _ in known} == {200}
            assert answers({"phone": known_phone}) == answers({"phone": unique_phone()})
            # The known addresses did get their codes; the unknown ones no account.
            assert latest_code(deployment, known_email) and latest_code(deployment, known_phone)
            users = httpx.get(f"{url}/auth/v1/admin/users", headers=admin).json()["users"]
            assert len(users) == 2

            lookalike = httpx.post(f"{url}/auth/v1/otp", json={"email": "\uff41dmin@example.com"}, headers=headers)
            assert lookalike.status_code == 400 and lookalike.json()["code"] == "email_address_invalid", lookalike.text
    finally:
        deployment.remove()
