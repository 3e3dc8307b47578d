// The row editor's fields: a plain input per column, a JSON editor (validated as typed) for json and array columns,
// and a foreign-key picker (a search over the referenced table's keys) for a column that references a REST table.
import { request } from "./api.js";
import { h } from "./ui.js";

/** Whether a column holds JSON (jsonb, or an array type: `_text`). */
export const holdsJSON = (column) => column.type === "jsonb" || column.type.startsWith("_");

/** The single-column foreign key of `column` in `table` whose referenced table is served over REST, or null. */
export function referenceOf(table, column, tables) {
  const key = (table.foreign_keys || []).find((k) => k.columns.length === 1 && k.columns[0] === column.name);
  if (!key) return null;
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

/** An input with a list of the referenced table's keys (labelled), searched on the server as the user types. */
function foreignKeyPicker(column, text, reference) {
  const listID = `fk-${column.name}-${Math.random().toString(36).slice(2, 8)}`;
  const options = h("datalist", { id: listID, "data-references": `${reference.table.name}.${reference.column}` });
  const input = h("input", { value: text, list: listID, "data-column": column.name, class: "fk-picker", autocomplete: "off",
    placeholder: `a key of ${reference.table.name}` });
  const label = labelColumn(reference.table, reference.column);
  const keyType = reference.table.columns.find((c) => c.name === reference.column)?.type || "text";
  let timer = null;
  async function load(search) {
    const params = new URLSearchParams({ select: label ? `${reference.column},${label}` : reference.column, limit: "100",
      order: reference.column });
    if (search && keyType === "text") params.set(reference.column, `ilike.*${search.replaceAll("*", "")}*`);
    try {
      const rows = await request(`/rest/v1/${encodeURIComponent(reference.table.name)}?${params}`);
      options.replaceChildren(...rows.map((r) => h("option", { value: String(r[reference.column]) }, label && r[label] ? String(r[label]) : null)));
      options.dataset.loaded = "true";
    } catch {
      options.dataset.loaded = "error";
    }
  }
  input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => load(input.value.trim()), 250); });
  load("");
  return { input, invalid: () => null, element: h("div", { class: "fk-field" }, input, options,
    h("div", { class: "muted small" }, `references ${reference.table.name}.${reference.column}`)) };
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
