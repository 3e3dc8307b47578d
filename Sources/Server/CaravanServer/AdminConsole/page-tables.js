// Tables: the REST tables grouped by app (with row counts and a search), each browsed in a grid, edited,
// inserted into and deleted from through /rest/v1 as the service role (same endpoints, policies and write pipeline
// as any service-role client), or read as its schema and policies.
import { filterValue, request } from "./api.js";
import { cellText, errorBox, grid, h, mount, overlay } from "./ui.js";
import { columnFields, holdsJSON, invalidJSON } from "./row-fields.js";
import { renderSchema } from "./table-schema.js";

const OPERATORS = ["eq", "neq", "gt", "gte", "lt", "lte", "like", "ilike", "is", "in"];
const PAGE_SIZE = 50;
const COUNTS_AT_ONCE = 4;

export function render(main) {
  const state = { tables: [], table: null, filters: [], order: null, descending: false, offset: 0, view: "rows" };
  const search = h("input", { id: "table-search", type: "search", placeholder: "Search tables", oninput: () => filterList() });
  const list = h("div", { class: "list", id: "table-list" });
  const detail = h("div", { id: "table-detail" }, h("p", { class: "muted" }, "Choose a table."));
  mount(main, h("h1", {}, "Tables"), h("div", { class: "split" }, h("div", { class: "panel table-nav" }, search, list), detail));

  function filterList() {
    const words = search.value.trim().toLowerCase();
    for (const group of list.querySelectorAll(".group")) {
      let shown = 0;
      for (const a of group.querySelectorAll("a")) {
        const match = !words || a.dataset.table.includes(words) || group.dataset.app.includes(words);
        a.hidden = !match;
        if (match) shown += 1;
      }
      group.hidden = shown === 0;
    }
  }

  function listView(tables) {
    const apps = new Map();
    for (const t of tables) {
      const app = t.app || "other";
      if (!apps.has(app)) apps.set(app, []);
      apps.get(app).push(t);
    }
    return [...apps.entries()].map(([app, members]) => h("div", { class: "group", "data-app": app },
      h("div", { class: "group-title" }, app, h("span", { class: "count" }, `${members.length} table${members.length === 1 ? "" : "s"}`)),
      members.map((t) => h("a", { href: "#/tables", "data-table": t.name, onclick: (e) => { e.preventDefault(); select(t); } },
        h("span", { class: "name" }, t.name),
        t.policies === 0 ? h("span", { class: "badge warn", title: "No policy: the service role only" }, "no policy") : null,
        h("span", { class: "count rows", "data-count": "" }, "…")))));
  }

  /** Row counts, a few tables at a time (Prefer: count=exact on a one-row read). */
  async function loadCounts(tables) {
    const queue = [...tables];
    async function worker() {
      while (queue.length) {
        const t = queue.shift();
        const cell = list.querySelector(`a[data-table="${t.name}"] .rows`);
        try {
          const params = new URLSearchParams({ select: t.primary_key[0] || t.columns[0].name, limit: "1" });
          const response = await request(`/rest/v1/${encodeURIComponent(t.name)}?${params}`, { headers: { Prefer: "count=exact" }, raw: true });
          const total = (response.headers.get("Content-Range") || "").split("/")[1];
          if (cell) { cell.textContent = total ?? "?"; cell.dataset.count = total ?? ""; }
        } catch {
          if (cell) cell.textContent = "?";
        }
      }
    }
    await Promise.all(Array.from({ length: COUNTS_AT_ONCE }, worker));
    list.dataset.counted = "true";
  }

  function select(table) {
    Object.assign(state, { table, filters: [], order: null, descending: false, offset: 0, view: "rows" });
    for (const a of list.querySelectorAll("a")) a.classList.toggle("active", a.dataset.table === table.name);
    load();
    // One column on a narrow screen: the table opens below the list, so bring it into view.
    if (matchMedia("(max-width: 760px)").matches) detail.scrollIntoView({ block: "start" });
  }

  function tabs(table) {
    const tab = (view, label) => h("button", { id: `tab-${view}`, class: state.view === view ? "tab active" : "tab", onclick: () => {
      state.view = view;
      load();
    } }, label);
    return h("div", { class: "tabs" }, h("h2", { class: "grow" }, table.name), tab("rows", "Rows"), tab("schema", "Schema & policies"));
  }

  let loads = 0;
  let latest = 0;
  async function load(notice) {
    const table = state.table;
    const ticket = ++latest;  // a slower earlier load never draws over a later one
    if (state.view === "schema") {
      const body = h("div", {});
      mount(detail, tabs(table), body);
      await renderSchema(body, table.name);
      main.dataset.loaded = "true";
      main.dataset.loads = String(++loads);
      return;
    }
    const params = new URLSearchParams({ select: "*", limit: String(PAGE_SIZE), offset: String(state.offset) });
    for (const f of state.filters) params.append(f.column, filterValue(f.op, f.value));
    if (state.order) params.set("order", `${state.order}.${state.descending ? "desc" : "asc"}`);
    mount(detail, h("p", { class: "muted" }, "Loading…"));
    try {
      const response = await request(`/rest/v1/${encodeURIComponent(table.name)}?${params}`, { headers: { Prefer: "count=exact" }, raw: true });
      const rows = await response.json();
      const total = (response.headers.get("Content-Range") || "").split("/")[1] || "?";
      if (ticket !== latest) return;
      mount(detail, tabs(table), notice || null, controls(table), rowsView(table, rows, total));
    } catch (error) {
      if (ticket !== latest) return;
      mount(detail, tabs(table), notice || null, controls(table), errorBox(error));
    }
    main.dataset.loaded = "true";
    main.dataset.loads = String(++loads);
  }

  function controls(table) {
    const names = table.columns.map((c) => c.name);
    const column = h("select", { id: "filter-column" }, names.map((n) => h("option", { value: n }, n)));
    const op = h("select", { id: "filter-op" }, OPERATORS.map((o) => h("option", { value: o }, o)));
    const value = h("input", { id: "filter-value", placeholder: "value" });
    const order = h("select", { id: "sort-column" }, h("option", { value: "" }, "(no sort)"), names.map((n) => h("option", { value: n }, n)));
    order.value = state.order || "";
    const descending = h("input", { type: "checkbox", id: "sort-desc", checked: state.descending });
    const active = state.filters.map((f, i) => h("span", { class: "pill" }, `${f.column} ${f.op} ${f.value} `,
      h("a", { href: "#", onclick: (e) => { e.preventDefault(); state.filters.splice(i, 1); state.offset = 0; load(); } }, "×")));
    return h("div", { class: "panel" },
      h("p", { class: "muted" }, `primary key: ${table.primary_key.join(", ")}`),
      h("form", { class: "row", id: "filter-form", onsubmit: (e) => {
        e.preventDefault();
        state.filters.push({ column: column.value, op: op.value, value: value.value });
        state.offset = 0;
        load();
      } }, "Filter", column, op, value, h("button", { type: "submit", id: "add-filter" }, "Add filter")),
      h("div", { class: "row" }, "Sort", order, h("label", {}, descending, " descending"),
        h("button", { id: "apply-sort", onclick: () => { state.order = order.value || null; state.descending = descending.checked; load(); } }, "Apply")),
      active.length ? h("div", { class: "row", id: "active-filters" }, active) : null);
  }

  function rowsView(table, rows, total) {
    const names = table.columns.map((c) => c.name);
    const pager = h("div", { class: "row" },
      h("span", { class: "muted", id: "row-count" }, `${rows.length} of ${total} rows (from ${state.offset + 1})`),
      h("button", { disabled: state.offset === 0, onclick: () => { state.offset = Math.max(0, state.offset - PAGE_SIZE); load(); } }, "Previous"),
      h("button", { disabled: rows.length < PAGE_SIZE, onclick: () => { state.offset += PAGE_SIZE; load(); } }, "Next"));
    const editor = h("div", { id: "row-editor" });
    const insert = h("button", { id: "insert-row", onclick: () => mount(editor, insertForm(table, editor)) }, "Insert row");
    const rowsGrid = grid(names, rows, {
      actions: (row) => h("div", { class: "row-actions" },
        h("button", { class: "edit-row", onclick: () => { mount(editor, editForm(table, row, editor)); editor.scrollIntoView({ block: "nearest" }); } }, "Edit"),
        deleteButton(table, row, editor)),
      open: (row) => detailView(table, row),
    });
    return h("div", { class: "panel" }, h("div", { class: "row" }, pager, insert), editor, rowsGrid);
  }

  /** The full row, every value whole (JSON indented), over the page. */
  function detailView(table, row) {
    overlay(`${table.name} ${table.primary_key.map((k) => cellText(row[k])).join(", ")}`,
      h("dl", { class: "row-detail", id: "row-detail" }, table.columns.map((c) => [
        h("dt", {}, c.name, h("span", { class: "muted" }, ` ${c.type}`)),
        h("dd", { "data-column": c.name }, h("pre", {}, row[c.name] !== null && typeof row[c.name] === "object"
          ? JSON.stringify(row[c.name], null, 2) : cellText(row[c.name])))])));
  }

  /** Two clicks: the first arms, the second deletes the row by its primary key (DELETE /rest/v1/<table>?<pk>=eq.…). */
  function deleteButton(table, row, editor) {
    const button = h("button", { class: "danger delete-row", onclick: async () => {
      if (!button.dataset.armed) {
        button.dataset.armed = "true";
        button.textContent = "Confirm delete";
        return;
      }
      const params = new URLSearchParams();
      for (const key of table.primary_key) params.set(key, `eq.${row[key]}`);
      try {
        const deleted = await request(`/rest/v1/${encodeURIComponent(table.name)}?${params}`,
          { method: "DELETE", headers: { Prefer: "return=representation" } });
        load(h("div", { class: "notice", id: "delete-result" }, `Deleted ${deleted.length} row${deleted.length === 1 ? "" : "s"}.`));
      } catch (error) {
        mount(editor, errorBox(error));
      }
    } }, "Delete");
    return button;
  }

  /** A new row: blank fields are left out, so the column's default (or NULL) applies. */
  function insertForm(table, editor) {
    const inputs = {};
    const fields = columnFields(table, state.tables, inputs, (column) => ({ text: "", json: holdsJSON(column) }));
    const status = h("div", {});
    async function save(event) {
      event.preventDefault();
      mount(status);
      const invalid = invalidJSON(inputs);
      if (invalid) { mount(status, errorBox(invalid)); return; }
      const values = {};
      try {
        for (const [name, field] of Object.entries(inputs)) {
          const text = field.input.value;
          if (text === "") continue;
          values[name] = field.json ? JSON.parse(text) : coerce(field.column.type, text);
        }
      } catch (error) {
        mount(status, errorBox(new Error(`Invalid JSON: ${error.message}`)));
        return;
      }
      try {
        const inserted = await request(`/rest/v1/${encodeURIComponent(table.name)}`,
          { method: "POST", json: values, headers: { Prefer: "return=representation" } });
        load(h("div", { class: "notice", id: "insert-result" }, `Inserted ${inserted.length} row${inserted.length === 1 ? "" : "s"}.`));
      } catch (error) {
        mount(status, errorBox(error));
      }
    }
    return h("form", { class: "panel", id: "insert-form", onsubmit: save },
      h("h2", {}, "Insert a row into ", h("span", { class: "mono" }, table.name)),
      h("p", { class: "muted" }, "Blank fields are left out: the column's default applies."),
      h("div", { class: "form-grid" }, fields), status,
      h("div", { class: "row" }, h("button", { class: "primary", type: "submit", id: "insert-submit" }, "Insert"),
        h("button", { type: "button", onclick: () => mount(editor) }, "Cancel")));
  }

  function editForm(table, row, editor) {
    const inputs = {};
    const fields = columnFields(table, state.tables, inputs, (column) => {
      const value = row[column.name];
      const json = holdsJSON(column) || (value !== null && typeof value === "object");
      return { text: value === null || value === undefined ? "" : json ? JSON.stringify(value) : String(value), json };
    });
    for (const name of table.primary_key) inputs[name]?.input.setAttribute("readonly", "");
    const status = h("div", {});
    async function save(event) {
      event.preventDefault();
      mount(status);
      const invalid = invalidJSON(inputs);
      if (invalid) { mount(status, errorBox(invalid)); return; }
      const changes = {};
      try {
        for (const [name, field] of Object.entries(inputs)) {
          if (field.input.value === field.original) continue;
          const text = field.input.value;
          changes[name] = text === "" && field.column.nullable ? null : field.json ? JSON.parse(text) : coerce(field.column.type, text);
        }
      } catch (error) {
        mount(status, errorBox(new Error(`Invalid JSON: ${error.message}`)));
        return;
      }
      if (Object.keys(changes).length === 0) { mount(status, h("div", { class: "muted" }, "Nothing changed.")); return; }
      const params = new URLSearchParams();
      for (const key of table.primary_key) params.set(key, `eq.${row[key]}`);
      try {
        const updated = await request(`/rest/v1/${encodeURIComponent(table.name)}?${params}`,
          { method: "PATCH", json: changes, headers: { Prefer: "return=representation" } });
        load(h("div", { class: "notice", id: "save-result" }, `Saved ${updated.length} row.`));
      } catch (error) {
        mount(status, errorBox(error));
      }
    }
    return h("form", { class: "panel", id: "edit-form", onsubmit: save },
      h("h2", {}, "Edit row ", h("span", { class: "mono" }, table.primary_key.map((k) => cellText(row[k])).join(", "))),
      h("div", { class: "form-grid" }, fields), status,
      h("div", { class: "row" }, h("button", { class: "primary", type: "submit", id: "save-row" }, "Save"),
        h("button", { type: "button", onclick: () => mount(editor) }, "Cancel")));
  }

  request("/admin/api/tables").then((answer) => {
    state.tables = answer.tables;
    mount(list, answer.tables.length ? listView(answer.tables) : h("p", { class: "muted" }, "No tables are served over REST."));
    main.dataset.loaded = "true";
    loadCounts(answer.tables);
  }).catch((error) => { mount(list, errorBox(error)); main.dataset.loaded = "error"; });
}

/** A typed value from an input's text (numbers and booleans as JSON; text as it is). */
function coerce(type, text) {
  if (["int2", "int4", "int8", "float4", "float8", "numeric"].some((t) => type.startsWith(t))) {
    const number = Number(text);
    return Number.isNaN(number) ? text : number;
  }
  if (type === "bool") return text === "true" ? true : text === "false" ? false : text;
  return text;
}
