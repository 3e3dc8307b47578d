// Users: GoTrue's admin API (/auth/v1/admin/users) as the service role, plus POST /admin/api/users/:id/logout.
// The list pages on the server (page, per_page, X-Total-Count) and searches there (GoTrue's filter).
import { request } from "./api.js";
import { cellText, errorBox, h, mount } from "./ui.js";

const PAGE_SIZES = [50, 100, 500, 1000];

export function render(main) {
  let users = [];
  const state = { page: 1, perPage: 50, total: 0, filter: "" };
  const status = h("div", { id: "users-status" });
  let searchTimer = null;
  const search = h("input", { id: "user-search", type: "search", placeholder: "Search email, phone or id", class: "grow", oninput: () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => { state.filter = search.value.trim(); state.page = 1; load(); }, 250);
  } });
  const perPage = h("select", { id: "user-per-page", onchange: () => { state.perPage = Number(perPage.value); state.page = 1; load(); } },
    PAGE_SIZES.map((n) => h("option", { value: String(n) }, `${n} per page`)));
  const previous = h("button", { id: "user-prev", onclick: () => { state.page = Math.max(1, state.page - 1); load(); } }, "Previous");
  const next = h("button", { id: "user-next", onclick: () => { state.page += 1; load(); } }, "Next");
  const pageLabel = h("span", { class: "muted", id: "user-page" });
  const listing = h("div", { id: "user-list" });
  const email = h("input", { id: "new-email", type: "email", placeholder: "email", required: true });
  const password = h("input", { id: "new-password", type: "password", placeholder: "password", required: true });
  const role = h("select", { id: "new-role" }, h("option", { value: "" }, "no app role"), h("option", { value: "admin" }, "admin"));
  const create = h("form", { class: "row", id: "create-user", onsubmit: async (e) => {
    e.preventDefault();
    const body = { email: email.value, password: password.value, email_confirm: true };
    if (role.value) body.app_metadata = { role: role.value };
    await act(() => request("/auth/v1/admin/users", { method: "POST", json: body }), `Created ${email.value}.`);
    email.value = ""; password.value = "";
  } }, "New user", email, password, role, h("button", { type: "submit", class: "primary", id: "create-user-submit" }, "Create"));
  mount(main, h("h1", {}, "Users"), h("div", { class: "panel" }, create), status,
    h("div", { class: "panel" }, h("div", { class: "row" }, search, h("span", { class: "muted", id: "user-count" })),
      h("div", { class: "row" }, previous, pageLabel, next, perPage), listing));

  async function act(action, message) {
    try {
      await action();
      mount(status, h("div", { class: "notice" }, message));
      await load();
    } catch (error) {
      mount(status, errorBox(error));
    }
  }

  function actions(user) {
    const isAdmin = user.app_metadata && user.app_metadata.role === "admin";
    const remove = h("button", { class: "danger delete-user", onclick: () => {
      if (remove.dataset.armed) return act(() => request(`/auth/v1/admin/users/${user.id}`, { method: "DELETE" }), `Deleted ${user.email || user.id}.`);
      remove.dataset.armed = "true";
      remove.textContent = "Confirm delete";
    } }, "Delete");
    return h("div", { class: "row" },
      h("button", { class: "set-role", onclick: () => act(() => request(`/auth/v1/admin/users/${user.id}`,
        { method: "PUT", json: { app_metadata: { role: isAdmin ? null : "admin" } } }), `${isAdmin ? "Removed admin from" : "Made admin:"} ${user.email || user.id}.`) },
        isAdmin ? "Remove admin" : "Make admin"),
      h("button", { class: "sign-out-user", onclick: () => act(() => request(`/admin/api/users/${user.id}/logout`, { method: "POST" }),
        `Signed out ${user.email || user.id} everywhere.`) }, "Sign out everywhere"),
      remove);
  }

  function draw() {
    const pages = Math.max(1, Math.ceil(state.total / state.perPage));
    document.getElementById("user-count").textContent =
      state.filter ? `${state.total} matching “${state.filter}”` : `${state.total} user${state.total === 1 ? "" : "s"}`;
    pageLabel.textContent = `Page ${state.page} of ${pages}`;
    previous.disabled = state.page <= 1;
    next.disabled = state.page >= pages;
    const rows = users.map((u) => h("tr", { "data-user": u.email || u.id },
      h("td", {}, u.email || "—"), h("td", {}, u.phone || "—"), h("td", { class: "mono" }, u.id),
      h("td", {}, cellText(u.app_metadata && u.app_metadata.role ? u.app_metadata.role : "")),
      h("td", {}, (u.last_sign_in_at || "").replace("T", " ").slice(0, 19)), h("td", {}, u.created_at.replace("T", " ").slice(0, 19)),
      h("td", {}, actions(u))));
    mount(listing, h("div", { class: "scroll" }, h("table", { class: "data" },
      h("thead", {}, h("tr", {}, ["Email", "Phone", "Id", "App role", "Last sign-in", "Created", ""].map((c) => h("th", {}, c)))),
      h("tbody", {}, rows))));
  }

  let loads = 0;
  async function load() {
    const params = new URLSearchParams({ page: String(state.page), per_page: String(state.perPage) });
    if (state.filter) params.set("filter", state.filter);
    try {
      const response = await request(`/auth/v1/admin/users?${params}`, { raw: true });
      const answer = await response.json();
      users = answer.users;
      state.total = Number(response.headers.get("X-Total-Count") || users.length);
      const pages = Math.max(1, Math.ceil(state.total / state.perPage));
      if (state.page > pages) { state.page = pages; return load(); }  // the last page emptied (a delete)
      draw();
    } catch (error) {
      mount(listing, errorBox(error));
    }
    main.dataset.loaded = "true";
    main.dataset.loads = String(++loads);
  }
  load();
}
