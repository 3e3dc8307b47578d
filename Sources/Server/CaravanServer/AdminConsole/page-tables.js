// Tables: the REST tables, browsed, edited, inserted into and deleted from through /rest/v1 as the service role
// (same endpoints, policies and write pipeline as any service-role client).
import { filterValue, request } from "./api.js";
import { cellText, dataTable, errorBox, h, mount } from "./ui.js";

const OPERATORS = ["eq", "neq", "gt", "gte", "lt", "lte", "like", "ilike", "is", "in"];
const PAGE_SIZE = 50;

export function render(main) {
  const state = { tables: [], table: null, filters: [], order: null, descending: false, offset: 0 };
  const list = h("div", { class: "list", id: "table-list" });
  const detail = h("div", { id: "table-detail" }, h("p", { class: "muted" }, "Choose a table."));
  mount(main, h("h1", {}, "Tables"), h("div", { class: "split" }, h("div", { class: "panel" }, list), detail));

  function select(table) {
    Object.assign(state, { table, filters: [], order: null, descending: false, offset: 0 });
    for (const a of list.querySelectorAll("a")) a.classList.toggle("active", a.dataset.table === table.name);
    load();
  }

  let loads = 0;
  async function load(notice) {
    const table = state.table;
    const params = new URLSearchParams({ select: "*", limit: String(PAGE_SIZE), offset: String(state.offset) });
    for (const f of state.filters) params.append(f.column, filterValue(f.op, f.value));
    if (state.order) params.set("order", `${state.order}.${state.descending ? "desc" : "asc"}`);
    mount(detail, h("p", { class: "muted" }, "Loading…"));
    try {
      const response = await request(`/rest/v1/${encodeURIComponent(table.name)}?${params}`, { headers: { Prefer: "count=exact" }, raw: true });
      const rows = await response.json();
      const total = (response.headers.get("Content-Range") || "").split("/")[1] || "?";
      mount(detail, notice || null, controls(table), rowsView(table, rows, total));
    } catch (error) {
      mount(detail, notice || null, controls(table), errorBox(error));
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
      h("h2", {}, table.name, " ", h("span", { class: "muted" }, `primary key: ${table.primary_key.join(", ")}`)),
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
    const grid = dataTable(names, rows, (row) => h("div", { class: "row" },
      h("button", { class: "edit-row", onclick: () => mount(editor, editForm(table, row, editor)) }, "Edit"),
      deleteButton(table, row, editor)));
    return h("div", { class: "panel" }, h("div", { class: "row" }, pager, insert), editor, grid);
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
  /** A labelled input per column of `table` (a textarea for JSON and arrays), each starting as `initial(column)`
   * gives it (`text`, whether it is `json`); `inputs` gets each one by column name, with its original text. */
  function columnFields(table, inputs, initial) {
    return table.columns.map((column) => {
      const { text, json } = initial(column);
      const input = json ? h("textarea", { rows: 2, "data-column": column.name }, text) : h("input", { value: text, "data-column": column.name });
      inputs[column.name] = { input, json, original: text, column };
      return [h("label", {}, column.name, h("span", { class: "muted" }, ` ${column.type}${column.nullable ? "" : " not null"}`)), input];
    });
  }

  /** Whether a column holds JSON (jsonb, or an array type: `_text`). */
  const holdsJSON = (column) => column.type === "jsonb" || column.type.startsWith("_");

  function insertForm(table, editor) {
    const inputs = {};
    const fields = columnFields(table, inputs, (column) => ({ text: "", json: holdsJSON(column) }));
    const status = h("div", {});
    async function save(event) {
      event.preventDefault();
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
    const fields = columnFields(table, inputs, (column) => {
      const value = row[column.name];
      const json = holdsJSON(column) || typeof value === "object";
      return { text: value === null || value === undefined ? "" : json ? JSON.stringify(value) : String(value), json };
    });
    for (const name of table.primary_key) inputs[name]?.input.setAttribute("readonly", "");
    const status = h("div", {});
    async function save(event) {
      event.preventDefault();
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
    mount(list, answer.tables.length ? answer.tables.map((t) =>
      h("a", { href: "#/tables", "data-table": t.name, onclick: (e) => { e.preventDefault(); select(t); } }, t.name))
      : h("p", { class: "muted" }, "No tables are served over REST."));
    main.dataset.loaded = "true";
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
