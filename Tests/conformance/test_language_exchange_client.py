"""LangMatcher through CaravanClient: the `caravan-client` command (the SDK alone, with the
module's declared cache rules) sends messages written offline through its outbox exactly once, keeps a partner's
profile for 24 hours (read over REST as the policies let her see it), and answers a repeated translation from its
least-recently-used cache without asking the server."""
from __future__ import annotations

import json
import os
import subprocess
import uuid

import pytest
from supabase import create_client

from conftest import CARAVAN_BIN
from test_language_exchange import PASSWORD

CLIENT_BIN = CARAVAN_BIN.parent / "caravan-client"


def _languages(service):
    service.table("languages").upsert([
        {"code": "en", "iso639_3": "eng", "iso639_1": "en", "name_en": "English"},
        {"code": "ar", "iso639_3": "ara", "iso639_1": "ar", "name_en": "Arabic"},
    ]).execute()


def _client(server, store, url=None):
    env = {**os.environ, "CARAVAN_CLIENT_URL": url or server.url, "CARAVAN_CLIENT_APIKEY": server.anon_key, "CARAVAN_CLIENT_STORE": str(store)}

    def run(*args: str, expect: int = 0) -> str:
        done = subprocess.run([str(CLIENT_BIN), *args], capture_output=True, text=True, timeout=300, env=env, check=False)
        assert done.returncode == expect, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done.stdout
    return run


def test_offline_messages_go_through_the_outbox_once_and_profiles_and_translations_are_cached(server, service, tmp_path):
    _languages(service)
    store = tmp_path / "lina.sqlite"
    lina = _client(server, store)
    email = f"lx-client-{uuid.uuid4().hex[:8]}@example.com"
    lina_id = json.loads(lina("sign-up", "--email", email, "--password", PASSWORD))["user_id"]
    lina_rest = create_client(server.url, server.anon_key)
    token = lina_rest.auth.sign_in_with_password({"email": email, "password": PASSWORD}).session.access_token
    lina_rest.postgrest.auth(token)
    lina_rest.table("profiles").insert({"id": lina_id, "first_name": "Lina", "native_language": "ar", "learning_languages": ["en"]}).execute()

    omar = create_client(server.url, server.anon_key)
    signed = omar.auth.sign_up({"email": f"lx-omar-{uuid.uuid4().hex[:8]}@example.com", "password": PASSWORD})
    omar.postgrest.auth(signed.session.access_token)
    omar_id = signed.user.id
    omar.table("profiles").insert({"id": omar_id, "first_name": "Omar", "native_language": "en", "learning_languages": ["ar"]}).execute()
    lina_rest.rpc("process_swipe", {"p_swiper_id": lina_id, "p_swiped_id": omar_id, "p_direction": "right"}).execute()
    matched = omar.rpc("process_swipe", {"p_swiper_id": omar_id, "p_swiped_id": lina_id, "p_direction": "right"}).execute().data
    conversation = matched["conversation_id"]
    omar.table("messages").insert({"conversation_id": conversation, "sender_id": omar_id, "receiver_id": lina_id,
                                   "original_text": "Hello Lina", "original_language": "en"}).execute()

    assert json.loads(lina("sync", "--tables", "messages", "--json"))["pulled"] == 1

    # Offline (nothing listens on that port): the message is written locally and queued.
    offline = _client(server, store, url="http://127.0.0.1:9")
    offline("insert", "messages", json.dumps({"conversation_id": conversation, "sender_id": lina_id, "receiver_id": omar_id,
                                              "original_text": "أهلاً يا عمر", "original_language": "ar"}))
    assert len(json.loads(offline("outbox"))["pending"]) == 1
    offline("sync", "--tables", "messages", "--attempts", "1", expect=3)
    assert len(json.loads(lina("outbox"))["pending"]) == 1, "an unreachable server loses nothing"

    report = json.loads(lina("sync", "--tables", "messages", "--json"))
    assert report["pushed"] == 1 and report["rejected"] == 0, report
    assert json.loads(lina("sync", "--tables", "messages", "--json"))["pushed"] == 0, "sent exactly once"
    on_server = service.table("messages").select("original_text").eq("conversation_id", conversation).order("created_at").execute().data
    assert [m["original_text"] for m in on_server] == ["Hello Lina", "أهلاً يا عمر"]
    stats = service.table("conversations").select("message_count,last_message_preview").eq("id", conversation).execute().data[0]
    assert stats == {"message_count": 2, "last_message_preview": "أهلاً يا عمر"}
    assert sorted(m["original_text"] for m in json.loads(lina("rows", "messages"))) == sorted(["Hello Lina", "أهلاً يا عمر"])

    # Omar's profile: read over REST once, then from the device for 24 hours.
    first = json.loads(lina("fetch", "profiles", json.dumps({"id": omar_id})))
    assert first["from_cache"] is False and first["value"]["first_name"] == "Omar" and "email" not in first["value"]
    omar.table("profiles").update({"first_name": "Omar A."}).eq("id", omar_id).execute()
    second = json.loads(lina("fetch", "profiles", json.dumps({"id": omar_id})))
    assert second["from_cache"] is True and second["value"]["first_name"] == "Omar" and "email" not in second["value"]
    # Offline, the kept copy still answers.
    assert json.loads(offline("fetch", "profiles", json.dumps({"id": omar_id})))["from_cache"] is True

    # A translation (source = target needs no provider) is asked of the server once, then answered locally.
    arguments = json.dumps({"text": "مرحبا", "source_language": "ar", "target_language": "ar"})
    asked = json.loads(lina("call", "translate", arguments, "--cache", "translations"))
    assert asked["from_cache"] is False
    again = json.loads(offline("call", "translate", arguments, "--cache", "translations"))
    assert again == {**asked, "from_cache": True}
