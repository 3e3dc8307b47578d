"""The admin console at /admin in a real headless Chromium (Chrome DevTools Protocol, see cdp.py).

A deployment of its own (no places.json needed): an admin (`caravan user create --role admin`), a plain user and
one place row. The test signs in as the plain user (refused), then as the admin, opens every page, edits the row
through the tables page and checks the change through REST with supabase-py, inserts and deletes a row there,
works the users page (server-side search, then paging past 1,000 users), and saves a screenshot of each page under
.build/admin-screenshots/ (one file per engine and page).
"""

from __future__ import annotations

import json
import struct
import subprocess
import uuid
import zlib
from pathlib import Path

import httpx
import pytest
from supabase import create_client
from websockets.sync.client import connect

from cdp import Browser
from conftest import CARAVAN_BIN, REPO_ROOT, serving
from deployments import ENGINE, new_deployment

PASSWORD = "console-password-1"
SCREENSHOTS = REPO_ROOT / ".build" / "admin-screenshots"
ENV = {"CARAVAN_AUTH_RATE_LIMIT_SIGN_IN": "100000", "CARAVAN_AUTH_RATE_LIMIT_SIGN_IN_PER_IDENTIFIER": "1000"}


def caravan(*args: str, stdin: str | None = None) -> str:
    run = subprocess.run([str(CARAVAN_BIN), *args], input=stdin, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, f"caravan {' '.join(args[:2])} failed:\n{run.stdout}\n{run.stderr}"
    return run.stdout


@pytest.fixture(scope="module")
def console():
    if not CARAVAN_BIN.is_file():
        pytest.fail(f"caravan binary not found at {CARAVAN_BIN}: run `swift build` or set CARAVAN_BIN")
    deployment = new_deployment("caravan-admin-console-")
    try:
        caravan("migrate", *deployment.args)
        caravan("user", "create", "--email", "admin@example.com", "--password-stdin", "--role", "admin", *deployment.args, stdin=PASSWORD + "\n")
        caravan("user", "create", "--email", "plain@example.com", "--password-stdin", *deployment.args, stdin=PASSWORD + "\n")
        keys = json.loads(caravan("keys", *deployment.args, "--json"))
        with serving(deployment, ENV, log_name="admin-console.log") as (_, url):
            yield {"url": url, "keys": keys, "deployment": deployment}
    finally:
        deployment.remove()


@pytest.fixture(scope="module")
def browser():
    chromium = Browser()
    try:
        yield chromium
    finally:
        chromium.close()


def shot(browser: Browser, name: str) -> None:
    browser.screenshot(SCREENSHOTS / f"{ENGINE}-{name}.png")


def sign_in(browser: Browser, url: str, email: str) -> None:
    browser.navigate(f"{url}/admin")
    browser.wait_for("document.getElementById('app')?.dataset.state === 'signin'", what="the sign-in form")
    browser.fill("#email", email)
    browser.fill("#password", PASSWORD)
    browser.click("#signin")


def open_page(browser: Browser, page: str) -> None:
    browser.evaluate(f"location.hash = '#/{page}'")
    browser.wait_for(f"document.querySelector('main[data-page={page}]')?.dataset.loaded", what=f"the {page} page")


def text(browser: Browser, selector: str) -> str:
    return browser.evaluate(f"document.querySelector({json.dumps(selector)})?.innerText ?? ''")


def test_admin_console_in_a_browser(console, browser, tmp_path):
    url, keys = console["url"], console["keys"]
    service = create_client(url, keys["service_role_key"])
    place_id = f"console-{uuid.uuid4().hex[:8]}"
    service.table("places").insert({"id": place_id, "name_ar": "مكان", "name_en": "Before edit", "category": "cafe",
                                    "category_ar": "كافيه"}).execute()

    # The shell loads without a key and carries no data; the data endpoints refuse without one.
    shell = httpx.get(f"{url}/admin")
    assert shell.status_code == 200 and shell.headers["content-type"].startswith("text/html")
    assert place_id not in shell.text and "example.com" not in shell.text
    assert httpx.get(f"{url}/admin/api/tables").status_code == 401

    # A plain user is refused with a clear message and never gets past the sign-in.
    sign_in(browser, url, "plain@example.com")
    refusal = browser.wait_for("document.querySelector('.signin .error')?.innerText", what="the refusal")
    assert "CARAVAN_NOT_ADMIN" in refusal and "not an admin" in refusal
    assert browser.evaluate("document.getElementById('app').dataset.state") == "signin"
    assert browser.evaluate("sessionStorage.length") == 0
    shot(browser, "refused")

    sign_in(browser, url, "admin@example.com")
    browser.wait_for("document.getElementById('app')?.dataset.state === 'ready'", what="the signed-in console")
    assert text(browser, "#who") == "admin@example.com"

    edit_a_row(browser, service, place_id)
    insert_and_delete_a_row(browser, service)
    users_page(browser, url, keys)
    users_beyond_a_thousand(browser, url, keys)
    change_log_page(browser, place_id)
    realtime_page(browser, url, keys)
    storage_page(browser, url, keys, tmp_path)
    health_page(browser)
    api_page(browser)

    browser.click("#signout")
    browser.wait_for("document.getElementById('app')?.dataset.state === 'signin'", what="the sign-in after signing out")
    assert browser.evaluate("fetch('/admin/api/tables').then(r => r.status)") == 401
    assert browser.errors == [], f"the console raised errors: {browser.errors}"


def api_page(browser: Browser) -> None:
    """The API page shows the OpenAPI description of /rest/v1/: its tables with typed columns, its functions."""
    open_page(browser, "api")
    tables = text(browser, "#api-tables")
    assert "places" in tables and "name_ar: text required" in tables, tables[:400]
    functions = text(browser, "#api-functions")
    assert "nearby_places" in functions and "lat: double precision" in functions, functions[:400]
    shot(browser, "api")


def edit_a_row(browser: Browser, service, place_id: str) -> None:
    open_page(browser, "tables")
    browser.wait_for("document.querySelector('#table-list a[data-table=places]')", what="the places table in the list")
    browser.click("#table-list a[data-table=places]")
    browser.wait_for("document.querySelector('#row-count')", what="the rows of places")
    browser.fill("#filter-column", "id")
    browser.fill("#filter-op", "eq")
    browser.fill("#filter-value", place_id)
    browser.click("#add-filter")
    browser.wait_for("document.querySelector('#row-count')?.innerText.startsWith('1 of 1')", what="the filtered row")
    loads = browser.evaluate("Number(document.querySelector('main').dataset.loads)")
    browser.fill("#sort-column", "name_en")
    browser.click("#sort-desc")
    browser.click("#apply-sort")
    browser.wait_for(f"Number(document.querySelector('main').dataset.loads) > {loads}", what="the sorted rows")
    assert text(browser, "#row-count").startswith("1 of 1")
    shot(browser, "tables")
    browser.click("button.edit-row")
    browser.wait_for("document.querySelector('#edit-form')", what="the row editor")
    browser.fill("#edit-form input[data-column=name_en]", "Edited in the console")
    browser.click("#save-row")
    saved = browser.wait_for("document.querySelector('#save-result, #edit-form .error')?.innerText", what="the save result")
    assert saved.startswith("Saved 1 row"), saved
    shot(browser, "tables-edited")
    row = service.table("places").select("id,name_en").eq("id", place_id).execute().data
    assert row == [{"id": place_id, "name_en": "Edited in the console"}]


def insert_and_delete_a_row(browser: Browser, service) -> None:
    """A row inserted through the form (blank fields left to their defaults) and deleted with two clicks, both
    through /rest/v1 and checked there with supabase-py."""
    new_id = f"console-new-{uuid.uuid4().hex[:8]}"
    browser.click("#insert-row")
    browser.wait_for("document.querySelector('#insert-form')", what="the insert form")
    for column, value in {"id": new_id, "name_ar": "جديد", "name_en": "Inserted in the console", "category": "cafe", "category_ar": "كافيه"}.items():
        browser.fill(f"#insert-form input[data-column={column}]", value)
    browser.click("#insert-submit")
    inserted = browser.wait_for("document.querySelector('#insert-result, #insert-form .error')?.innerText", what="the insert result")
    assert inserted == "Inserted 1 row.", inserted
    row = service.table("places").select("id,name_en,is_active").eq("id", new_id).execute().data
    assert row == [{"id": new_id, "name_en": "Inserted in the console", "is_active": True}]  # is_active: its default
    loads = browser.evaluate("Number(document.querySelector('main').dataset.loads)")
    browser.click("#active-filters a")  # drop the filter on the edited row
    browser.wait_for(f"Number(document.querySelector('main').dataset.loads) > {loads} && !document.querySelector('#active-filters')",
                     what="the filter removed")
    browser.fill("#filter-column", "id")
    browser.fill("#filter-op", "eq")
    browser.fill("#filter-value", new_id)
    browser.click("#add-filter")
    browser.wait_for("document.querySelector('#row-count')?.innerText.startsWith('1 of 1')", what="the inserted row")
    shot(browser, "tables-inserted")
    browser.click("button.delete-row")
    assert text(browser, "button.delete-row") == "Confirm delete"
    assert service.table("places").select("id").eq("id", new_id).execute().data != []  # one click deletes nothing
    browser.click("button.delete-row")
    deleted = browser.wait_for("document.querySelector('#delete-result, #row-editor .error')?.innerText", what="the delete result")
    assert deleted == "Deleted 1 row.", deleted
    assert service.table("places").select("id").eq("id", new_id).execute().data == []


def users_page(browser: Browser, url: str, keys: dict) -> None:
    open_page(browser, "users")
    browser.wait_for("document.querySelector('tr[data-user=\"plain@example.com\"]')", what="the users list")
    assert browser.wait_for("document.getElementById('user-count').innerText") == "2 users"
    browser.fill("#user-search", "plain@")  # searched on the server (GoTrue's filter)
    browser.wait_for("document.getElementById('user-count').innerText === '1 matching “plain@”'", what="the search result")
    assert not browser.evaluate("Boolean(document.querySelector('tr[data-user=\"admin@example.com\"]'))")
    browser.fill("#user-search", "")
    browser.wait_for("document.getElementById('user-count').innerText === '2 users'", what="the full list again")
    browser.fill("#new-email", "created@example.com")
    browser.fill("#new-password", PASSWORD)
    browser.click("#create-user-submit")
    row = "tr[data-user=\"created@example.com\"]"
    browser.wait_for(f"document.querySelector('{row}')", what="the created user")
    browser.click(f"{row} button.set-role")
    browser.wait_for(f"document.querySelector('{row}')?.innerText.includes('Remove admin')", what="the admin role")
    browser.click(f"{row} button.sign-out-user")
    browser.wait_for("document.querySelector('#users-status')?.innerText.includes('everywhere')", what="sign out everywhere")
    shot(browser, "users")
    admins = [u for u in admin_users(url, keys) if u["email"] == "created@example.com"]
    assert admins and admins[0]["app_metadata"].get("role") == "admin"
    browser.click(f"{row} button.delete-user")
    browser.click(f"{row} button.delete-user")
    browser.wait_for(f"!document.querySelector('{row}')", what="the deleted user to go")
    assert "created@example.com" not in [u["email"] for u in admin_users(url, keys)]


def users_beyond_a_thousand(browser: Browser, url: str, keys: dict) -> None:
    """1,003 users: the list pages on the server, so the last ones are reachable (and found by search)."""
    from concurrent.futures import ThreadPoolExecutor

    headers = {"apikey": keys["service_role_key"], "Authorization": f"Bearer {keys['service_role_key']}"}
    with httpx.Client(timeout=60, headers=headers) as client:
        def create(n: int) -> int:
            return client.post(f"{url}/auth/v1/admin/users", json={"email": f"bulk-{n:04d}@example.com", "email_confirm": True}).status_code
        with ThreadPoolExecutor(max_workers=8) as pool:
            assert set(pool.map(create, range(1, 1002))) == {200}
    browser.fill("#user-per-page", "1000")
    browser.wait_for("document.getElementById('user-page').innerText === 'Page 1 of 2'", what="two pages of 1000")
    assert text(browser, "#user-count") == "1003 users"
    assert browser.evaluate("document.querySelectorAll('#user-list tbody tr').length") == 1000
    browser.click("#user-next")
    browser.wait_for("document.getElementById('user-page').innerText === 'Page 2 of 2'", what="the second page")
    browser.wait_for("document.querySelectorAll('#user-list tbody tr').length === 3", what="the last 3 users")
    assert browser.evaluate("document.querySelector('#user-next').disabled") is True
    shot(browser, "users-page-2")
    browser.fill("#user-search", "bulk-1001")
    browser.wait_for("document.getElementById('user-count').innerText === '1 matching “bulk-1001”'", what="a user past the first 1000")
    assert browser.evaluate("Boolean(document.querySelector('tr[data-user=\"bulk-1001@example.com\"]'))")
    assert text(browser, "#user-page") == "Page 1 of 1"


def admin_users(url: str, keys: dict) -> list[dict]:
    # Through the admin API with the service key, as supabase-py's auth.admin does.
    client = create_client(url, keys["service_role_key"])
    return [u.model_dump() for u in client.auth.admin.list_users()]


def change_log_page(browser: Browser, place_id: str) -> None:
    open_page(browser, "changes")
    browser.fill("#change-table", "places")
    browser.wait_for(f"[...document.querySelectorAll('#change-list tr')].some(r => r.innerText.includes('update') && r.innerText.includes('{place_id}'))",
                     what="the update in the change log")
    shot(browser, "changes")


def realtime_page(browser: Browser, url: str, keys: dict) -> None:
    socket_url = url.replace("http://", "ws://") + f"/realtime/v1/websocket?apikey={keys['anon_key']}&vsn=1.0.0"
    with connect(socket_url) as ws:
        ws.send(json.dumps({"topic": "realtime:console-test", "event": "phx_join", "ref": "1", "join_ref": "1", "payload": {
            "config": {"postgres_changes": [{"event": "*", "schema": "public", "table": "places"}]}, "access_token": keys["anon_key"]}}))
        reply = json.loads(ws.recv(timeout=10))
        assert reply["payload"]["status"] == "ok", reply
        open_page(browser, "realtime")
        browser.click("#realtime-refresh")
        browser.wait_for("document.querySelector('#realtime-body')?.innerText.includes('realtime:console-test')", what="the open channel")
        assert text(browser, "[data-figure=sockets] .value") == "1"
        shot(browser, "realtime")


def png(width: int = 64, height: int = 64) -> bytes:
    """A small valid PNG (a red square)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def storage_page(browser: Browser, url: str, keys: dict, tmp_path: Path) -> None:
    open_page(browser, "storage")
    service_headers = {"apikey": keys["service_role_key"], "Authorization": f"Bearer {keys['service_role_key']}"}
    available = httpx.get(f"{url}/storage/v1/bucket", headers=service_headers).status_code != 404
    if not available:
        unavailable = browser.wait_for("document.querySelector('#storage-unavailable')?.innerText", what="the storage notice")
        assert "not available" in unavailable
        shot(browser, "storage")
        return
    # Storage is served: create a bucket, upload an image through the file input, preview it.
    browser.wait_for("document.querySelector('#new-bucket')", what="the bucket form")
    browser.fill("#new-bucket", "console-test")
    browser.click("#create-bucket")
    browser.wait_for("document.querySelector('#bucket-list a[data-bucket=\"console-test\"]')", what="the created bucket")
    browser.click("#bucket-list a[data-bucket=\"console-test\"]")
    browser.wait_for("document.querySelector('#upload-form')", what="the upload form")
    image = tmp_path / "pixel.png"
    image.write_bytes(png())
    browser.set_files("#upload-file", [image])
    browser.click("#upload-submit")
    row = "tr[data-object=\"pixel.png\"]"
    browser.wait_for(f"document.querySelector('{row}')", what="the uploaded object")
    browser.click(f"{row} button.preview-object")
    browser.wait_for("document.querySelector('img.preview')?.naturalWidth === 64", what="the image preview")
    shot(browser, "storage")
    stored = httpx.get(f"{url}/storage/v1/object/console-test/pixel.png", headers=service_headers)
    assert stored.status_code == 200 and stored.content == image.read_bytes()


def health_page(browser: Browser) -> None:
    open_page(browser, "health")
    browser.wait_for("document.querySelector('[data-figure=health] .value')?.innerText === 'ok'", what="the health figures")
    assert int(text(browser, "[data-figure=head] .value")) > 0
    assert float(text(browser, "[data-figure=requests] .value")) > 0
    shot(browser, "health")


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
LONG_NAME = "A place whose English name is far too long to fit in one grid cell of the console " * 2


def test_the_console_fits_at_1400_and_420_px(console, browser, tmp_path):
    """The grid (fixed row height, cut cells with a detail view, actions pinned), the grouped table list, the schema
    and policy view, the keys page, the request log, foreign-key pickers and the JSON editor, each checked in the
    browser at 1400 px and at 420 px (no page-level horizontal scroll), with screenshots of both widths."""
    url, keys = console["url"], console["keys"]
    service = create_client(url, keys["service_role_key"])
    place_id = f"layout-{uuid.uuid4().hex[:8]}"
    service.table("places").insert({"id": place_id, "name_ar": "مكان", "name_en": LONG_NAME, "category": "cafe", "category_ar": "كافيه",
                                    "hours": {"sat": "9-17"}}).execute()
    tables = httpx.get(f"{url}/admin/api/tables", headers=service_headers(keys)).json()["tables"]
    screenshots = tmp_path / "screenshots"

    browser.resize(1400)
    sign_in(browser, url, "admin@example.com")
    browser.wait_for("document.getElementById('app')?.dataset.state === 'ready'", what="the signed-in console")
    for width in (1400, 420):
        browser.resize(width)
        table_list(browser, service, tables, width)
        places_grid(browser, place_id, width)
        capture(browser, screenshots, width, "tables")
        if width == 1400:
            json_editor(browser, service, place_id)
            foreign_key_picker(browser, service, place_id)
        schema_and_policies(browser, tables)
        capture(browser, screenshots, width, "schema")
        keys_page(browser, url, keys)
        capture(browser, screenshots, width, "keys")
        request_log(browser, url, keys, place_id)
        capture(browser, screenshots, width, "logs")
        for page in ("users", "changes", "health", "api"):
            open_page(browser, page)
            assert_no_page_scroll(browser, f"the {page} page at {width} px")
        if width == 420:
            narrow_navigation(browser)
    for name in ("tables", "schema", "keys", "logs"):
        for width in (1400, 420):
            image = (screenshots / f"{width}-{name}.png").read_bytes()
            assert image.startswith(PNG_SIGNATURE) and len(image) > 2000, f"{width}-{name}.png is not a screenshot"
    browser.resize(1360)
    assert browser.errors == [], f"the console raised errors: {browser.errors}"


def service_headers(keys: dict) -> dict:
    return {"apikey": keys["service_role_key"], "Authorization": f"Bearer {keys['service_role_key']}"}


def capture(browser: Browser, directory: Path, width: int, name: str) -> None:
    browser.screenshot(directory / f"{width}-{name}.png")
    shot(browser, f"{width}-{name}")


def assert_no_page_scroll(browser: Browser, what: str) -> None:
    wide = browser.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert wide[0] <= wide[1], f"{what} scrolls sideways: {wide[0]} px wide in a {wide[1]} px window"


def table_list(browser: Browser, service, tables: list[dict], width: int) -> None:
    """Tables grouped by the app declaring them, with row counts, a search, and the tables without a policy flagged."""
    open_page(browser, "tables")
    browser.wait_for("document.querySelector('#table-list .group[data-app=places] a[data-table=favorites]')", what="the places group")
    groups = browser.evaluate("[...document.querySelectorAll('#table-list .group')].map(g => [g.dataset.app, g.querySelectorAll('a').length])")
    apps = {t["app"] for t in tables}
    assert {app for app, _ in groups} == apps and sum(n for _, n in groups) == len(tables), groups
    expected = service.table("places").select("id", count="exact").limit(1).execute().count
    counted = browser.wait_for("document.querySelector('#table-list a[data-table=places] .rows')?.dataset.count", what="the row count of places")
    assert int(counted) == expected
    unprotected = [t["name"] for t in tables if t["policies"] == 0]
    assert unprotected, "every table has a policy: the flag has nothing to show"
    for name in unprotected:
        assert browser.evaluate(f"Boolean(document.querySelector('#table-list a[data-table={name}] .badge.warn'))"), name
    assert not browser.evaluate("Boolean(document.querySelector('#table-list a[data-table=favorites] .badge.warn'))")
    browser.fill("#table-search", "favor")
    shown = browser.evaluate("[...document.querySelectorAll('#table-list a')].filter(a => a.offsetParent !== null).map(a => a.dataset.table)")
    assert shown == ["favorites"], shown
    browser.fill("#table-search", "")
    assert browser.evaluate("[...document.querySelectorAll('#table-list a')].filter(a => a.offsetParent !== null).length") == len(tables)
    assert_no_page_scroll(browser, f"the tables page at {width} px")


def places_grid(browser: Browser, place_id: str, width: int) -> None:
    browser.click("#table-list a[data-table=places]")
    browser.wait_for("document.querySelector('#table-detail table.grid tbody tr')", what="the grid of places")
    heights = browser.evaluate("[...document.querySelectorAll('#table-detail table.grid tbody tr')].map(r => r.getBoundingClientRect().height)")
    assert heights and max(heights) <= 36, f"rows are {max(heights)} px tall"
    # Every row's Edit and Delete are in view, inside the grid's own scroll box and the window.
    edges = browser.evaluate("""(() => {
        const wrap = document.querySelector('#table-detail .grid-wrap').getBoundingClientRect();
        return [...document.querySelectorAll('#table-detail td.actions')].slice(0, 5).map(cell => {
            const edit = cell.querySelector('button.edit-row').getBoundingClientRect();
            const remove = cell.querySelector('button.delete-row').getBoundingClientRect();
            return [edit.left, remove.right, wrap.left, wrap.right, window.innerWidth];
        });
    })()""")
    for left, right, wrap_left, wrap_right, inner in edges:
        assert wrap_left <= left and right <= wrap_right + 1 and right <= inner, f"actions off-screen at {width} px: {edges[0]}"
    assert browser.evaluate("(() => { const w = document.querySelector('#table-detail .grid-wrap'); return w.scrollWidth > w.clientWidth; })()"), \
        "the places grid is wide: it scrolls inside its own box"
    assert_no_page_scroll(browser, f"the places grid at {width} px")
    # The long name is cut with an ellipsis in its cell, and whole in the row's detail view.
    browser.fill("#filter-column", "id")
    browser.fill("#filter-op", "eq")
    browser.fill("#filter-value", place_id)
    browser.click("#add-filter")
    browser.wait_for("document.querySelector('#row-count')?.innerText.startsWith('1 of 1')", what="the long-named row")
    cell = "[...document.querySelectorAll('#table-detail table.grid td')].find(td => td.title.startsWith('A place whose'))"
    assert browser.evaluate(f"(() => {{ const td = {cell}; return td.scrollWidth > td.clientWidth && getComputedStyle(td).textOverflow === 'ellipsis'; }})()")
    browser.evaluate(f"{cell}.click()")
    shown = browser.wait_for("document.querySelector('#row-detail dd[data-column=name_en]')?.innerText", what="the row detail")
    assert shown.strip() == LONG_NAME.strip()
    assert '"sat"' in text(browser, "#row-detail dd[data-column=hours]")
    browser.click("#overlay-close")
    assert not browser.evaluate("Boolean(document.querySelector('.overlay'))")


def json_editor(browser: Browser, service, place_id: str) -> None:
    """A json column is edited in a JSON editor: bad JSON is named at once and never sent; good JSON is saved."""
    browser.click("button.edit-row")
    editor = "#edit-form textarea.json-editor[data-column=hours]"
    browser.wait_for(f"document.querySelector('{editor}')", what="the JSON editor")
    browser.fill(editor, '{"sat": ')
    problem = browser.wait_for("document.querySelector('#edit-form .json-error[data-column=hours]')?.innerText", what="the JSON error")
    assert problem.startswith("Invalid JSON"), problem
    browser.click("#save-row")
    refused = browser.wait_for("document.querySelector('#edit-form .error')?.innerText", what="the refused save")
    assert "Invalid JSON in hours" in refused, refused
    assert service.table("places").select("hours").eq("id", place_id).execute().data == [{"hours": {"sat": "9-17"}}]
    browser.fill(editor, '{"sat": "10-18", "fri": null}')
    assert text(browser, "#edit-form .json-error[data-column=hours]") == ""
    browser.click("#save-row")
    saved = browser.wait_for("document.querySelector('#save-result, #edit-form .error')?.innerText", what="the save result")
    assert saved.startswith("Saved 1 row"), saved
    assert service.table("places").select("hours").eq("id", place_id).execute().data == [{"hours": {"sat": "10-18", "fri": None}}]


def foreign_key_picker(browser: Browser, service, place_id: str) -> None:
    """favorites.place_id references places: the insert form offers the places' keys, searched as one types; its
    user_id offers the users by email. A favorite inserted with both pickers lands in the table."""
    browser.click("#table-list a[data-table=favorites]")
    browser.wait_for("document.querySelector('#insert-row')", what="the favorites rows")
    browser.click("#insert-row")
    picker = "#insert-form datalist[data-references='places.id']"
    browser.wait_for(f"document.querySelector(\"{picker}\")?.dataset.loaded === 'true'", what="the foreign-key picker")
    assert browser.evaluate(f"document.querySelector(\"{picker}\").options.length") > 0
    browser.fill("#insert-form input[data-column=place_id]", place_id)
    values = f"[...document.querySelector(\"{picker}\").options].map(o => o.value)"
    offered = browser.wait_for(f"{values}.length > 0 && {values}.every(v => v.includes('{place_id}')) && {values}", what="the searched place")
    assert offered == [place_id], offered
    assert browser.evaluate("document.querySelector('#insert-form input[data-column=place_id]').getAttribute('list')")
    # user_id references the users (not a REST table): picked by email through the admin users API.
    users = "#insert-form datalist[data-references='auth_users.id']"
    browser.fill("#insert-form input[data-column=user_id]", "admin@")
    admin = browser.wait_for(f"(() => {{ const o = [...document.querySelector(\"{users}\").options]; "
                             "return o.length === 1 && o[0].label === 'admin@example.com' && o[0].value; })()", what="the admin in the user picker")
    browser.fill("#insert-form input[data-column=user_id]", admin)
    browser.click("#insert-submit")
    inserted = browser.wait_for("document.querySelector('#insert-result, #insert-form .error')?.innerText", what="the inserted favorite")
    assert inserted == "Inserted 1 row.", inserted
    assert service.table("favorites").select("user_id").eq("place_id", place_id).execute().data == [{"user_id": admin}]


def schema_and_policies(browser: Browser, tables: list[dict]) -> None:
    """favorites' schema (columns, keys, indexes, sync) and its owner policy per command; a table without a policy flagged."""
    browser.click("#table-list a[data-table=favorites]")
    browser.wait_for("document.querySelector('#tab-schema')", what="the table tabs")
    browser.click("#tab-schema")
    browser.wait_for("document.querySelector('#schema-view[data-table=favorites]')", what="the schema of favorites")
    columns = text(browser, "#schema-columns")
    assert "place_id" in columns and "user_id" in columns and "uuid" in columns and "places.id" in columns, columns
    assert "places(id)" in text(browser, "#schema-foreign-keys") and "cascade" in text(browser, "#schema-foreign-keys")
    assert "idx_favorites_user" in text(browser, "#schema-indexes")
    assert "Synced" in text(browser, "#schema-sync") and "user_id" in text(browser, "#schema-sync")
    for command in ("select", "insert", "update", "delete"):
        policy = text(browser, f"#policy-{command}")
        assert "favorites_own" in policy and "user_id = auth.uid()" in policy, (command, policy)
    assert not browser.evaluate("Boolean(document.querySelector('#no-policy'))")
    assert_no_page_scroll(browser, "the schema view")
    unprotected = next(t["name"] for t in tables if t["policies"] == 0)
    browser.click(f"#table-list a[data-table={unprotected}]")
    browser.wait_for("document.querySelector('#tab-schema')", what="the table tabs")
    browser.click("#tab-schema")
    flag = browser.wait_for(f"document.querySelector('#schema-view[data-table={unprotected}] #no-policy')?.innerText", what="the no-policy flag")
    assert "No policy" in flag and "service role" in flag
    browser.click("#table-list a[data-table=favorites]")
    browser.wait_for("document.querySelector('#tab-schema')", what="the table tabs")
    browser.click("#tab-schema")
    browser.wait_for("document.querySelector('#schema-view[data-table=favorites]')", what="the schema of favorites")


def keys_page(browser: Browser, url: str, keys: dict) -> None:
    """The deployment's keys and URL, copyable, and working: the anon key reads REST, the service key the admin API."""
    open_page(browser, "keys")
    browser.wait_for("document.querySelector('#anon-key')", what="the keys")
    shown = browser.evaluate("({url: document.querySelector('#project-url').value, anon: document.querySelector('#anon-key').value,"
                             " service: document.querySelector('#service-role-key').value})")
    assert shown == {"url": url, "anon": keys["anon_key"], "service": keys["service_role_key"]}
    anon = httpx.get(f"{url}/rest/v1/places?select=id&limit=1", headers={"apikey": shown["anon"], "Authorization": f"Bearer {shown['anon']}"})
    assert anon.status_code == 200
    assert httpx.get(f"{url}/admin/api/session", headers={"apikey": shown["service"], "Authorization": f"Bearer {shown['service']}"}).status_code == 200
    assert keys["anon_key"] in text(browser, "#client-snippet")
    browser.click("#copy-anon-key")
    browser.wait_for("document.querySelector('#copy-anon-key').innerText === 'Copied'", what="the copied key")
    assert_no_page_scroll(browser, "the keys page")


def request_log(browser: Browser, url: str, keys: dict, place_id: str) -> None:
    """A request just made shows in the tail with its status and role; no key appears in it, even one sent in a URL."""
    marker = uuid.uuid4().hex[:10]
    anon = keys["anon_key"]
    httpx.get(f"{url}/rest/v1/places?select=id&id=eq.{marker}", headers={"apikey": anon, "Authorization": f"Bearer {anon}"})
    httpx.get(f"{url}/storage/v1/object/sign/console/{marker}.png?token={anon}")
    open_page(browser, "logs")
    row = browser.wait_for(f"[...document.querySelectorAll('#request-log tr')].find(r => r.innerText.includes('eq.{marker}'))?.innerText",
                           what="the request just made")
    assert "GET" in row and "200" in row and "anon" in row, row
    signed = browser.wait_for(f"[...document.querySelectorAll('#request-log tr')].find(r => r.innerText.includes('{marker}.png'))?.innerText",
                              what="the signed-URL request")
    assert "token=…" in signed, signed
    page = browser.evaluate("document.body.innerHTML")
    assert anon not in page and keys["service_role_key"] not in page
    assert_no_page_scroll(browser, "the request log")


def narrow_navigation(browser: Browser) -> None:
    """At 420 px the links fold behind the menu button."""
    assert browser.evaluate("getComputedStyle(document.querySelector('.nav .links')).display") == "none"
    assert browser.evaluate("document.querySelector('#nav-toggle').offsetParent !== null")
    browser.click("#nav-toggle")
    assert browser.evaluate("getComputedStyle(document.querySelector('.nav .links')).display") == "block"
    browser.click(".nav .links a[data-page=keys]")
    browser.wait_for("document.querySelector('main[data-page=keys]')?.dataset.loaded", what="the keys page from the menu")
    assert browser.evaluate("getComputedStyle(document.querySelector('.nav .links')).display") == "none"
    assert_no_page_scroll(browser, "the folded navigation")
