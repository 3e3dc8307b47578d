// The row editor's fields: a plain input per column, a JSON editor (validated as typed) for json and array columns,
// and a foreign-key picker (a search over the referenced table's keys) for a column that references a REST table.
import { request } from "./api.js";
import { h } from "./ui.js";

/** Whether a column holds JSON (jsonb, or an array type: `_text`). */
export const holdsJSON = (column) => column.type === "jsonb" || column.type.startsWith("_");

/** The users table: not served over REST, its rows are picked through GoTrue's admin API instead. */
const USERS = "auth_users";

/**
 * The single-column foreign key of `column` in `table` to a table served over REST (`{table, column}`) or to the
 * users' ids (`{users: true}`), or null.
 */
export function referenceOf(table, column, tables) {
  const key = (table.foreign_keys || []).find((k) => k.columns.length === 1 && k.columns[0] === column.name);
  if (!key) return null;
  if (key.table === USERS && key.referenced_columns[0] === "id") return { users: true };
  const target = tables.find((t) => t.name === key.table);
  return target ? { table: target, column: key.referenced_columns[0] } : null;
}

/** A column that names the referenced row for a person (shown beside its key in the picker), or null. */
function labelColumn(table, keyColumn) {
  const names = table.columns.map((c) => c.name);
  return ["name_en", "name", "title", "label", "email", "slug"].find((n) => names.includes(n) && n !== keyColumn) || null;
}

/** A JSON textarea that says at once whether its text parses; `field.invalid()` gives the error or null. */
function jsonEditor(column, text) {
  const message = h("div", { class: "json-error", "data-column": column.name, role: "alert" });
  const input = h("textarea", { rows: 4, class: "json-editor", "data-column": column.name, spellcheck: "false" }, text);
  const invalid = () => {
    if (input.value.trim() === "") return null;
    try {
      JSON.parse(input.value);
      return null;
    } catch (error) {
      return error.message;
    }
  };
  const check = () => {
    const problem = invalid();
    message.textContent = problem ? `Invalid JSON: ${problem}` : "";
    input.toggleAttribute("aria-invalid", Boolean(problem));
  };
  input.addEventListener("input", check);
  const format = h("button", { type: "button", class: "json-format", onclick: () => {
    if (!invalid() && input.value.trim()) input.value = JSON.stringify(JSON.parse(input.value), null, 2);
    check();
  } }, "Format");
  return { input, invalid, element: h("div", { class: "json-field" }, input, h("div", { class: "row" }, format, message)) };
}

/**
 * An input with a list of the referenced rows' keys (labelled), searched on the server as the user types:
 * `fetchOptions(search)` gives `[{value, label}]`.
 */
function picker(column, text, referenced, fetchOptions) {
  const listID = `fk-${column.name}-${Math.random().toString(36).slice(2, 8)}`;
  const options = h("datalist", { id: listID, "data-references": referenced });
  const input = h("input", { value: text, list: listID, "data-column": column.name, class: "fk-picker", autocomplete: "off",
    placeholder: `a key of ${referenced.split(".")[0]}` });
  let timer = null;
  async function load(search) {
    try {
      const found = await fetchOptions(search);
      options.replaceChildren(...found.map((o) => h("option", { value: o.value }, o.label || null)));
      options.dataset.loaded = "true";
    } catch {
      options.dataset.loaded = "error";
    }
  }
  input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => load(input.value.trim()), 250); });
  load("");
  return { input, invalid: () => null, element: h("div", { class: "fk-field" }, input, options,
    h("div", { class: "muted small" }, `references ${referenced}`)) };
}

/** The first 100 keys of a REST table (with a name column beside them), filtered by `ilike` for text keys. */
function tableOptions(reference) {
  const label = labelColumn(reference.table, reference.column);
  const keyType = reference.table.columns.find((c) => c.name === reference.column)?.type || "text";
  return async (search) => {
    const params = new URLSearchParams({ select: label ? `${reference.column},${label}` : reference.column, limit: "100",
      order: reference.column });
    if (search && keyType === "text") params.set(reference.column, `ilike.*${search.replaceAll("*", "")}*`);
    const rows = await request(`/rest/v1/${encodeURIComponent(reference.table.name)}?${params}`);
    return rows.map((r) => ({ value: String(r[reference.column]), label: label && r[label] ? String(r[label]) : null }));
  };
}

/** Users by id, labelled with their email or phone (GoTrue's admin list and filter). */
async function userOptions(search) {
  const params = new URLSearchParams({ per_page: "100" });
  if (search) params.set("filter", search);
  const answer = await request(`/auth/v1/admin/users?${params}`);
  return answer.users.map((u) => ({ value: u.id, label: u.email || u.phone || null }));
}

function foreignKeyPicker(column, text, reference) {
  return reference.users ? picker(column, text, `${USERS}.id`, userOptions)
    : picker(column, text, `${reference.table.name}.${reference.column}`, tableOptions(reference));
}

/**
 * The labelled fields of `table`, each starting as `initial(column)` gives it (`text`, whether it is `json`);
 * `inputs[name]` gets `{input, json, original, column, invalid}`.
 */
export function columnFields(table, tables, inputs, initial) {
  return table.columns.map((column) => {
    const { text, json } = initial(column);
    const reference = json ? null : referenceOf(table, column, tables);
    const field = json ? jsonEditor(column, text) : reference ? foreignKeyPicker(column, text, reference)
      : { input: h("input", { value: text, "data-column": column.name }), invalid: () => null };
    inputs[column.name] = { input: field.input, json, original: text, column, invalid: field.invalid };
    return [h("label", {}, column.name, h("span", { class: "muted" }, ` ${column.type}${column.nullable ? "" : " not null"}`)),
      field.element || field.input];
  });
}

/** The first JSON field whose text does not parse, as an Error naming the column, or null. */
export function invalidJSON(inputs) {
  for (const [name, field] of Object.entries(inputs)) {
    const problem = field.invalid();
    if (problem) return new Error(`Invalid JSON in ${name}: ${problem}`);
  }
  return null;
}
