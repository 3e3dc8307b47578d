// The change log: GET /admin/api/changes (latest entries, then tailing with ?after=), filtered by table.
import { request } from "./api.js";
import { cellText, errorBox, h, mount } from "./ui.js";

const POLL_MS = 2000;
const KEEP = 500;

export function render(main) {
  let entries = [];
  let last = null;
  let timer = null;
  const table = h("select", { id: "change-table", onchange: () => restart() }, h("option", { value: "" }, "all tables"));
  const live = h("input", { type: "checkbox", id: "change-live", checked: true, onchange: () => schedule() });
  const status = h("div", {});
  const head = h("span", { class: "muted", id: "change-head" });
  const listing = h("div", { id: "change-list" });
  mount(main, h("h1", {}, "Change log"),
    h("div", { class: "panel" }, h("div", { class: "row" }, "Table", table, h("label", {}, live, " live tail"), head,
      h("button", { id: "change-refresh", onclick: () => restart() }, "Reload")), status, listing));

  function query(after) {
    const params = new URLSearchParams({ limit: "100" });
    if (table.value) params.set("table", table.value);
    if (after !== null) params.set("after", String(after));
    return `/admin/api/changes?${params}`;
  }

  function draw() {
    const rows = [...entries].reverse().map((c) => h("tr", { "data-seq": c.seq },
      h("td", { class: "mono" }, String(c.seq)), h("td", {}, c.committed_at.replace("T", " ").slice(0, 23)), h("td", {}, c.table),
      h("td", {}, h("span", { class: `pill ${c.op}` }, c.op)), h("td", { class: "mono" }, cellText(c.primary_key)),
      h("td", { class: "mono" }, c.actor),
      h("td", {}, h("details", {}, h("summary", {}, "record"),
        c.old_record ? h("pre", {}, "before: " + JSON.stringify(c.old_record, null, 1)) : null,
        c.record ? h("pre", {}, "after: " + JSON.stringify(c.record, null, 1)) : null))));
    mount(listing, entries.length ? h("div", { class: "scroll" }, h("table", { class: "data" },
      h("thead", {}, h("tr", {}, ["Seq", "Committed", "Table", "Op", "Key", "Actor", ""].map((c) => h("th", {}, c)))), h("tbody", {}, rows)))
      : h("p", { class: "muted" }, "No changes."));
  }

  async function fetchPage() {
    try {
      const answer = await request(query(last));
      entries = entries.concat(answer.changes).slice(-KEEP);
      if (answer.changes.length) last = answer.changes[answer.changes.length - 1].seq;
      else if (last === null) last = answer.head;
      head.textContent = `head ${answer.head}, compacted through ${answer.compacted_through}`;
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

  async function restart() {
    entries = [];
    last = null;
    clearTimeout(timer);
    await fetchPage();
    schedule();
  }

  request("/admin/api/tables").then((answer) => {
    for (const t of answer.tables) table.append(h("option", { value: t.name }, t.name));
  }).catch((error) => mount(status, errorBox(error)));
  restart();
  return () => { clearTimeout(timer); live.checked = false; };
}
