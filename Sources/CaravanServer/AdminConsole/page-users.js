// Users: GoTrue's admin API (/auth/v1/admin/users) as the service role, plus POST /admin/api/users/:id/logout.
import { request } from "./api.js";
import { cellText, errorBox, h, mount } from "./ui.js";

export function render(main) {
  let users = [];
  const status = h("div", { id: "users-status" });
  const search = h("input", { id: "user-search", type: "search", placeholder: "Search email, phone or id", class: "grow", oninput: () => draw() });
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
    h("div", { class: "panel" }, h("div", { class: "row" }, search, h("span", { class: "muted", id: "user-count" })), listing));

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
    const needle = search.value.trim().toLowerCase();
    const shown = users.filter((u) => !needle || [u.email, u.phone, u.id].some((v) => (v || "").toLowerCase().includes(needle)));
    document.getElementById("user-count").textContent = `${shown.length} of ${users.length}`;
    const rows = shown.map((u) => h("tr", { "data-user": u.email || u.id },
      h("td", {}, u.email || "—"), h("td", {}, u.phone || "—"), h("td", { class: "mono" }, u.id),
      h("td", {}, cellText(u.app_metadata && u.app_metadata.role ? u.app_metadata.role : "")),
      h("td", {}, (u.last_sign_in_at || "").replace("T", " ").slice(0, 19)), h("td", {}, u.created_at.replace("T", " ").slice(0, 19)),
      h("td", {}, actions(u))));
    mount(listing, h("div", { class: "scroll" }, h("table", { class: "data" },
      h("thead", {}, h("tr", {}, ["Email", "Phone", "Id", "App role", "Last sign-in", "Created", ""].map((c) => h("th", {}, c)))),
      h("tbody", {}, rows))));
  }

  async function load() {
    try {
      const answer = await request("/auth/v1/admin/users?page=1&per_page=1000");
      users = answer.users;
      draw();
    } catch (error) {
      mount(listing, errorBox(error));
    }
    main.dataset.loaded = "true";
  }
  load();
}
