"""LanguageExchange (LangMatcher) realtime through the official Python clients: new matches and
messages reach their two participants only over postgres_changes (the select policies decide), and a conversation's
channel carries presence (online status) and broadcast (typing) between the two."""
from __future__ import annotations

import uuid

import pytest
from realtime import AsyncRealtimeClient
from supabase import Client, create_client

PASSWORD = "conformance-pass-7"


def _signed_up(server, name: str, native: str, learning: str) -> tuple[Client, str, str]:
    client = create_client(server.url, server.anon_key)
    response = client.auth.sign_up({"email": f"lx-{name}-{uuid.uuid4().hex[:8]}@example.com", "password": PASSWORD})
    assert response.session is not None and response.user is not None
    client.postgrest.auth(response.session.access_token)
    user_id = response.user.id
    client.table("profiles").insert({
        "id": user_id, "first_name": name.title(), "native_language": native, "learning_languages": [learning],
    }).execute()
    return client, user_id, response.session.access_token


@pytest.fixture(scope="module")
def people(server, service):
    # The reference rows the profiles' codes are checked against (a full load is `caravan import languages`).
    service.table("languages").upsert([
        {"code": "en", "iso639_3": "eng", "iso639_1": "en", "name_en": "English"},
        {"code": "ar", "iso639_3": "ara", "iso639_1": "ar", "name_en": "Arabic"},
    ]).execute()
    return {name: _signed_up(server, name, native, learning)
            for name, native, learning in [("sam", "eng", "ar"), ("amal", "ar", "en"), ("outsider", "ar", "en")]}


def test_matches_and_messages_reach_only_their_two_participants(server, people):
    from test_realtime import eventually, run, settle, subscribed

    (sam, sam_id, _), (amal, amal_id, _) = people["sam"], people["amal"]
    sinks: dict[str, dict[str, list]] = {name: {"matches": [], "messages": []} for name in people}

    async def scenario():
        clients = []
        for name, (_, _, token) in people.items():
            for table in ("matches", "messages"):
                client, _ = await subscribed(server, token, f"lx-{table}-{name}", [{"event": "INSERT", "table": table}], sinks[name][table])
                clients.append(client)
        sam.rpc("process_swipe", {"p_swiper_id": sam_id, "p_swiped_id": amal_id, "p_direction": "right"}).execute()
        result = amal.rpc("process_swipe", {"p_swiper_id": amal_id, "p_swiped_id": sam_id, "p_direction": "super"}).execute().data
        assert result["is_match"] is True
        await eventually(lambda: len(sinks["sam"]["matches"]) == 1 and len(sinks["amal"]["matches"]) == 1)
        sam.table("messages").insert({
            "conversation_id": result["conversation_id"], "sender_id": sam_id, "receiver_id": amal_id,
            "original_text": "مرحبا يا أمل", "original_language": "ar",
        }).execute()
        await eventually(lambda: len(sinks["sam"]["messages"]) == 1 and len(sinks["amal"]["messages"]) == 1)
        await settle()
        for client in clients:
            await client.close()
        return result

    result = run(scenario())
    for name in ("sam", "amal"):
        [match] = sinks[name]["matches"]
        assert match["data"]["record"]["id"] == result["match_id"] and match["data"]["record"]["match_type"] == "super_like"
        [message] = sinks[name]["messages"]
        assert message["data"]["record"]["original_text"] == "مرحبا يا أمل"
        assert message["data"]["record"]["conversation_id"] == result["conversation_id"]
    assert sinks["outsider"] == {"matches": [], "messages": []}


def test_presence_and_typing_on_a_conversation_channel(server, people):
    from test_realtime import eventually, run, settle

    (_, sam_id, sam_token), (_, amal_id, amal_token) = people["sam"], people["amal"]
    topic = f"conversation:{uuid.uuid4()}"

    async def scenario():
        sam_rt = AsyncRealtimeClient(f"{server.url}/realtime/v1", server.anon_key, auto_reconnect=False)
        amal_rt = AsyncRealtimeClient(f"{server.url}/realtime/v1", server.anon_key, auto_reconnect=False)
        for client, token in ((sam_rt, sam_token), (amal_rt, amal_token)):
            await client.connect()
            await client.set_auth(token)
        sam_channel = sam_rt.channel(topic, {"config": {"presence": {"key": sam_id}}})
        sam_typing: list = []
        sam_channel.on_broadcast("typing", sam_typing.append)
        sam_channel.on_presence_sync(lambda: None)
        await sam_channel.subscribe()
        amal_channel = amal_rt.channel(topic, {"config": {"presence": {"key": amal_id}}})
        amal_typing: list = []
        leaves: list = []
        amal_channel.on_broadcast("typing", amal_typing.append)
        amal_channel.on_presence_leave(lambda key, current, left: leaves.append(key))
        await amal_channel.subscribe()
        await sam_channel.track({"user_id": sam_id, "status": "online"})
        await eventually(lambda: sam_id in amal_channel.presence_state())
        assert amal_channel.presence_state()[sam_id][0]["status"] == "online"
        await sam_channel.send_broadcast("typing", {"user_id": sam_id, "is_typing": True})
        await eventually(lambda: len(amal_typing) == 1)
        await amal_channel.send_broadcast("typing", {"user_id": amal_id, "is_typing": False})
        await eventually(lambda: len(sam_typing) == 1)
        await settle()
        await sam_channel.untrack()
        await eventually(lambda: sam_id in leaves)
        await sam_rt.close()
        await amal_rt.close()
        assert [m["payload"]["user_id"] for m in amal_typing] == [sam_id]  # no echo of one's own typing
        assert [m["payload"]["user_id"] for m in sam_typing] == [amal_id]
        assert amal_typing[0]["payload"]["is_typing"] is True

    run(scenario())


def test_conversations_embed_their_messages_for_their_two_participants_only(server, people):
    """Resource embedding on a landed app: `conversations?select=*,messages(*)` with the embed's order and limit, the messages
    being exactly those the participant reads directly; an outsider sees no conversation at all."""
    (sam, sam_id, _), (amal, amal_id, _) = people["sam"], people["amal"]
    outsider = people["outsider"][0]
    conversations = sam.table("conversations").select("id").execute().data
    assert conversations, "the earlier test matched Sam and Amal"
    conversation = conversations[0]["id"]
    for text in ("one", "two", "three"):
        sam.table("messages").insert({"conversation_id": conversation, "sender_id": sam_id, "receiver_id": amal_id,
                                      "original_text": text, "original_language": "en"}).execute()
    for reader in (sam, amal):
        embedded = (reader.table("conversations").select("id, message_count, messages(original_text, created_at)").eq("id", conversation)
                    .order("created_at", desc=True, foreign_table="messages").limit(2, foreign_table="messages").execute().data)
        direct = (reader.table("messages").select("original_text, created_at").eq("conversation_id", conversation)
                  .order("created_at", desc=True).limit(2).execute().data)
        assert embedded[0]["messages"] == direct and len(direct) == 2
        assert embedded[0]["message_count"] >= 3
    assert outsider.table("conversations").select("id, messages(*)").execute().data == []
