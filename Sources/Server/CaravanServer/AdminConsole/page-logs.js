// Request log: the last requests the server answered (GET /admin/api/requests, a ring kept in memory), newest first,
// tailed every two seconds. Paths carry no credential: the server replaces key and token values in query strings.
import { request } from "./api.js";
import { errorBox, h, mount } from "./ui.js";

const POLL_MS = 2000;
const NO_ROLE = "No key verified at the gateway: none (or an invalid one) was sent, or the route checks keys itself (/auth/v1)";

export function render(main) {
  let entries = [];
  let last = null;
  let timer = null;
  let capacity = 200;
  const live = h("input", { type: "checkbox", id: "log-live", checked: true, onchange: () => schedule() });
  const filter = h("input", { id: "log-filter", type: "search", placeholder: "Filter by path, status or role", class: "grow", oninput: () => draw() });
  const status = h("div", {});
  const count = h("span", { class: "muted", id: "log-count" });
  const listing = h("div", { id: "request-log" });
  mount(main, h("h1", {}, "Request log"),
    h("div", { class: "panel" }, h("div", { class: "row" }, filter, h("label", {}, live, " live tail"), count,
      h("button", { id: "log-refresh", onclick: () => fetchPage() }, "Refresh")), status, listing));

  function draw() {
    const words = filter.value.trim().toLowerCase();
    const shown = [...entries].reverse().filter((e) => !words || `${e.method} ${e.path} ${e.status} ${e.role ?? ""}`.toLowerCase().includes(words));
    count.textContent = `${entries.length} of the last ${capacity} requests`;
    mount(listing, shown.length ? h("div", { class: "grid-wrap" }, h("table", { class: "grid log" },
      h("thead", {}, h("tr", {}, ["Time", "Method", "Path", "Status", "ms", "Role"].map((c) => h("th", {}, c)))),
      h("tbody", {}, shown.map((e) => h("tr", { "data-id": e.id, class: e.status >= 500 ? "failed" : e.status >= 400 ? "refused" : null },
        h("td", {}, e.time.slice(11, 23)), h("td", {}, e.method), h("td", { class: "mono path", title: e.path }, e.path),
        h("td", {}, h("span", { class: `pill status-${Math.floor(e.status / 100)}xx` }, String(e.status))),
        h("td", {}, e.duration_ms.toFixed(1)), e.role ? h("td", {}, e.role) : h("td", { class: "muted", title: NO_ROLE }, "—"))))))
      : h("p", { class: "muted" }, "No requests yet."));
  }

  async function fetchPage() {
    try {
      const answer = await request(last === null ? "/admin/api/requests" : `/admin/api/requests?after=${last}`);
      capacity = answer.capacity;
      entries = entries.concat(answer.requests).slice(-capacity);
      if (answer.requests.length) last = answer.requests[answer.requests.length - 1].id;
      mount(status);
      draw();
    } catch (error) {
      mount(status, errorBox(error));
    }
    main.dataset.loaded = "true";
  }

  function schedule() {
    clearTimeout(timer);
    timer = live.checked ? setTimeout(async () => { await fetchPage(); schedule(); }, POLL_MS) : null;
  }

  fetchPage().then(schedule);
  return () => { clearTimeout(timer); live.checked = false; };
}
