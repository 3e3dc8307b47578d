"""MFA (TOTP) and reauthentication conformance: supabase-py's `auth.mfa.*` against a live `caravan serve`.

TOTP codes are computed here with hmac (RFC 6238), independently of the server's implementation; the enrollment QR
code is checked module for module against the `qrcode` package's encoder for the same URI."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import struct
import time
import urllib.parse
import uuid

import httpx
import jwt
import pytest
import qrcode
from qrcode import util as qrutil
from supabase import Client
from supabase_auth.errors import AuthApiError

from test_auth import PASSWORD, latest_code, new_client, unique_email


def totp(secret: str, offset: int = 0, at: float | None = None) -> str:
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    counter = int((time.time() if at is None else at) // 30) + offset
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    start = mac[-1] & 0x0F
    value = (int.from_bytes(mac[start : start + 4], "big") & 0x7FFFFFFF) % 1_000_000
    return f"{value:06d}"


def claims(token: str) -> dict:
    return jwt.decode(token, options={"verify_signature": False})


def signed_up(server) -> tuple[Client, str]:
    client = new_client(server.url, server.anon_key)
    email = unique_email()
    client.auth.sign_up({"email": email, "password": PASSWORD})
    return client, email


def svg_matrix(svg: str) -> list[list[bool]]:
    side = int(re.search(r'viewBox="0 0 (\d+) \d+"', svg).group(1))
    size = side - 8
    matrix = [[False] * size for _ in range(size)]
    for x, y in re.findall(r"M(\d+) (\d+)h1v1h-1z", svg):
        matrix[int(y) - 4][int(x) - 4] = True
    return matrix


def test_enroll_challenge_verify_and_assurance_levels(server):
    client, email = signed_up(server)
    level = client.auth.mfa.get_authenticator_assurance_level()
    assert (level.current_level, level.next_level) == ("aal1", "aal1")
    assert [m.method for m in level.current_authentication_methods] == ["password"]

    enrolled = client.auth.mfa.enroll({"factor_type": "totp", "friendly_name": "phone", "issuer": "Caravan Test"})
    assert enrolled.type == "totp" and enrolled.friendly_name == "phone"
    uri = urllib.parse.urlparse(enrolled.totp.uri)
    assert uri.scheme == "otpauth" and uri.netloc == "totp"
    assert urllib.parse.unquote(uri.path) == f"/Caravan Test:{email}"
    query = urllib.parse.parse_qs(uri.query)
    assert query["secret"] == [enrolled.totp.secret] and query["issuer"] == ["Caravan Test"]
    assert query["algorithm"] == ["SHA1"] and query["digits"] == ["6"] and query["period"] == ["30"]
    assert enrolled.totp.qr_code.startswith("data:image/svg+xml;utf-8,<svg ")

    factors = client.auth.mfa.list_factors()
    assert [(f.id, f.status) for f in factors.all] == [(enrolled.id, "unverified")] and factors.totp == []

    challenge = client.auth.mfa.challenge({"factor_id": enrolled.id})
    assert abs(challenge.expires_at - (time.time() + 300)) < 60
    with pytest.raises(AuthApiError) as wrong:
        client.auth.mfa.verify({"factor_id": enrolled.id, "challenge_id": challenge.id, "code": totp(enrolled.totp.secret, 3)})
    assert wrong.value.status == 422 and wrong.value.code == "mfa_verification_failed"

    verified = client.auth.mfa.verify({"factor_id": enrolled.id, "challenge_id": challenge.id, "code": totp(enrolled.totp.secret)})
    token = claims(verified.access_token)
    assert token["aal"] == "aal2"
    assert [entry["method"] for entry in token["amr"]] == ["totp", "password"]
    level = client.auth.mfa.get_authenticator_assurance_level()
    assert (level.current_level, level.next_level) == ("aal2", "aal2")
    assert [f.status for f in client.auth.mfa.list_factors().totp] == ["verified"]

    # The session kept its level through a refresh; the same time step is never accepted again.
    refreshed = client.auth.refresh_session()
    assert claims(refreshed.session.access_token)["aal"] == "aal2"
    with pytest.raises(AuthApiError) as reused:
        client.auth.mfa.challenge_and_verify({"factor_id": enrolled.id, "code": totp(enrolled.totp.secret)})
    assert reused.value.code == "mfa_verification_failed"
    again = client.auth.mfa.challenge_and_verify({"factor_id": enrolled.id, "code": totp(enrolled.totp.secret, 1)})
    assert claims(again.access_token)["aal"] == "aal2"

    # A fresh password sign-in is aal1 and may not remove a verified factor; the aal2 session may.
    other = new_client(server.url, server.anon_key)
    other.auth.sign_in_with_password({"email": email, "password": PASSWORD})
    level = other.auth.mfa.get_authenticator_assurance_level()
    assert (level.current_level, level.next_level) == ("aal1", "aal2")
    with pytest.raises(AuthApiError) as insufficient:
        other.auth.mfa.unenroll({"factor_id": enrolled.id})
    assert insufficient.value.status == 422 and insufficient.value.code == "insufficient_aal"
    with pytest.raises(AuthApiError) as enroll_more:
        other.auth.mfa.enroll({"factor_type": "totp", "friendly_name": "laptop"})
    assert enroll_more.value.status == 403 and enroll_more.value.code == "insufficient_aal"

    assert client.auth.mfa.unenroll({"factor_id": enrolled.id}).id == enrolled.id
    assert client.auth.mfa.list_factors().all == []


def test_unknown_factor_and_challenge(server):
    client, _ = signed_up(server)
    with pytest.raises(AuthApiError) as missing:
        client.auth.mfa.challenge({"factor_id": str(uuid.uuid4())})
    assert missing.value.status == 404 and missing.value.code == "mfa_factor_not_found"
    enrolled = client.auth.mfa.enroll({"factor_type": "totp"})
    with pytest.raises(AuthApiError) as no_challenge:
        client.auth.mfa.verify({"factor_id": enrolled.id, "challenge_id": str(uuid.uuid4()), "code": totp(enrolled.totp.secret)})
    assert no_challenge.value.status == 422 and no_challenge.value.code == "mfa_factor_not_found"

    stranger, _ = signed_up(server)
    with pytest.raises(AuthApiError) as foreign:
        stranger.auth.mfa.unenroll({"factor_id": enrolled.id})
    assert foreign.value.status == 404 and foreign.value.code == "mfa_factor_not_found"


def test_the_qr_code_matches_an_independent_encoder(server):
    client, _ = signed_up(server)
    enrolled = client.auth.mfa.enroll({"factor_type": "totp", "issuer": "Caravan"})
    svg = enrolled.totp.qr_code.removeprefix("data:image/svg+xml;utf-8,")
    ours = svg_matrix(svg)
    reference = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_M, border=0)
    reference.add_data(qrutil.QRData(enrolled.totp.uri.encode(), mode=qrutil.MODE_8BIT_BYTE))
    reference.make(fit=True)
    expected = reference.get_matrix()
    assert len(ours) == len(expected), (len(ours), reference.version)
    assert ours == expected


def test_reauthenticate_sends_a_nonce_a_password_change_accepts(server):
    client, email = signed_up(server)
    client.auth.reauthenticate()
    nonce = latest_code(server.deployment, email)
    client.auth.update_user({"password": "a-new-password-7", "nonce": nonce})
    fresh = new_client(server.url, server.anon_key)
    assert fresh.auth.sign_in_with_password({"email": email, "password": "a-new-password-7"}).session is not None


def test_raw_wire_shapes_and_unknown_routes(server):
    """What the client hides: the enrollment and challenge bodies as supabase-swift decodes them, a challenge answered
    once, the bearer requirement, and GoTrue's JSON 404 for every path no route serves."""
    client, _ = signed_up(server)
    token = client.auth.get_session().access_token
    headers = {"apikey": server.anon_key, "Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=f"{server.url}/auth/v1", headers=headers, timeout=30.0) as http:
        enrolled = http.post("/factors", json={"factor_type": "totp", "friendly_name": "raw"})
        assert enrolled.status_code == 200
        body = enrolled.json()
        assert set(body) == {"id", "type", "friendly_name", "totp"} and body["type"] == "totp"
        assert set(body["totp"]) == {"qr_code", "secret", "uri"} and body["totp"]["qr_code"].startswith("<svg ")
        challenge = http.post(f"/factors/{body['id']}/challenge", json={}).json()
        assert set(challenge) == {"id", "type", "expires_at"} and isinstance(challenge["expires_at"], int)
        code = totp(body["totp"]["secret"])
        verified = http.post(f"/factors/{body['id']}/verify", json={"challenge_id": challenge["id"], "code": code})
        assert verified.status_code == 200
        session = verified.json()
        assert {"access_token", "refresh_token", "expires_in", "expires_at", "token_type", "user"} <= set(session)
        assert claims(session["access_token"])["aal"] == "aal2"
        assert [f["status"] for f in session["user"]["factors"]] == ["verified"]
        again = http.post(f"/factors/{body['id']}/verify", json={"challenge_id": challenge["id"], "code": code},
                          headers={"Authorization": f"Bearer {session['access_token']}"})
        assert again.status_code == 422 and again.json()["code"] == "mfa_ip_address_mismatch"
        wrong_type = http.post("/factors", json={"factor_type": "sms"})
        assert wrong_type.status_code == 400 and wrong_type.json()["code"] == "validation_failed"

        for method, path in [("GET", "/no-such-route"), ("POST", "/factors/a/b/c"), ("GET", "/factors"), ("PATCH", "/reauthenticate")]:
            answer = http.request(method, path)
            assert answer.status_code == 404, (method, path, answer.status_code)
            assert answer.headers["Content-Type"].startswith("application/json"), (method, path)
            assert answer.json()["code"] == "not_found", (method, path)

    anonymous = httpx.get(f"{server.url}/auth/v1/reauthenticate", headers={"apikey": server.anon_key})
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "no_authorization"
    unsigned = httpx.post(f"{server.url}/auth/v1/factors", headers={"apikey": server.anon_key}, json={"factor_type": "totp"})
    assert unsigned.status_code == 401 and unsigned.json()["code"] == "no_authorization"

