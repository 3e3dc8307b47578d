// The admin console: sign-in, then pages chosen by the URL hash (#/tables, #/users, …).
import { clearSession, currentSession, setUnauthorizedHandler, signInWithPassword, signInWithServiceKey } from "./api.js";
import { errorBox, h, mount } from "./ui.js";
import * as tables from "./page-tables.js";
import * as users from "./page-users.js";
import * as changes from "./page-changes.js";
import * as realtime from "./page-realtime.js";
import * as storage from "./page-storage.js";
import * as health from "./page-health.js";
import * as api from "./page-api.js";
import * as keys from "./page-keys.js";
import * as logs from "./page-logs.js";

const pages = [
  { path: "tables", title: "Tables", page: tables },
  { path: "users", title: "Users", page: users },
  { path: "changes", title: "Change log", page: changes },
  { path: "realtime", title: "Realtime", page: realtime },
  { path: "storage", title: "Storage", page: storage },
  { path: "health", title: "Health", page: health },
  { path: "api", title: "API", page: api },
  { path: "keys", title: "API keys", page: keys },
  { path: "logs", title: "Request log", page: logs },
];

const root = document.getElementById("app");
let cleanup = null;
let signInMessage = null;

function stopPage() {
  if (cleanup) cleanup();
  cleanup = null;
  for (const layer of document.querySelectorAll(".overlay")) layer.remove();
}

function signOut(message) {
  stopPage();
  clearSession();
  signInMessage = message || null;
  go("#/signin");
}

setUnauthorizedHandler((error) => signOut(`Signed out: ${error.message}`));

function signInView() {
  const status = h("div", {});
  if (signInMessage) mount(status, h("div", { class: "error", role: "alert" }, signInMessage));
  const email = h("input", { id: "email", type: "email", autocomplete: "username", required: true });
  const password = h("input", { id: "password", type: "password", autocomplete: "current-password", required: true });
  const key = h("textarea", { id: "service-key", rows: 3, spellcheck: "false" });
  async function attempt(event, action) {
    event.preventDefault();
    mount(status, h("div", { class: "muted" }, "Signing in…"));
    try {
      await action();
      signInMessage = null;
      go("#/tables");
    } catch (error) {
      mount(status, errorBox(error));
    }
  }
  const passwordForm = h("form", { id: "signin-form", onsubmit: (e) => attempt(e, () => signInWithPassword(email.value, password.value)) },
    h("label", { for: "email" }, "Admin email"), email,
    h("label", { for: "password" }, "Password"), password,
    h("div", { class: "row" }, h("button", { class: "primary", type: "submit", id: "signin" }, "Sign in")));
  const keyForm = h("form", { id: "key-form", onsubmit: (e) => attempt(e, () => signInWithServiceKey(key.value.trim())) },
    h("label", { for: "service-key" }, "Or paste the service_role key (caravan keys)"), key,
    h("div", { class: "row" }, h("button", { type: "submit", id: "key-signin" }, "Use key")));
  return h("div", { class: "signin" }, h("div", { class: "panel" },
    h("h1", {}, "Caravan admin"),
    h("p", { class: "muted" }, "Sign in with an account whose app role is admin (caravan user set-role EMAIL admin)."),
    status, passwordForm, h("hr", {}), keyForm));
}

function shellView(active, session) {
  // Narrow screens: the links fold behind the menu button (style.css shows it below 760 px).
  const toggle = h("button", { id: "nav-toggle", class: "nav-toggle", "aria-expanded": "false", onclick: () => {
    const open = nav.classList.toggle("open");
    toggle.setAttribute("aria-expanded", String(open));
  } }, "Menu");
  const nav = h("nav", { class: "nav" },
    h("div", { class: "brand" }, h("span", {}, "Caravan admin"), h("span", { class: "current" }, active.title), toggle),
    h("div", { class: "links" }, pages.map((p) => h("a", { href: `#/${p.path}`, class: p.path === active.path ? "active" : null, "data-page": p.path }, p.title))),
    h("div", { class: "who" }, "Signed in as ", h("span", { id: "who" }, session.label), h("br", {}),
      h("button", { id: "signout", onclick: () => signOut(null) }, "Sign out")));
  const main = h("main", { id: "page", "data-page": active.path });
  return { element: h("div", { class: "shell" }, nav, main), main };
}

/** Shows `hash`: a hash change renders through the listener; the same hash renders at once. */
function go(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

function render() {
  stopPage();
  const session = currentSession();
  const path = location.hash.replace(/^#\/?/, "").split("?")[0];
  if (!session) {
    mount(root, signInView());
    root.dataset.state = "signin";
    return;
  }
  const active = pages.find((p) => p.path === path) || pages[0];
  const { element, main } = shellView(active, session);
  mount(root, element);
  root.dataset.state = "ready";
  cleanup = active.page.render(main) || null;
}

window.addEventListener("hashchange", render);
render();
