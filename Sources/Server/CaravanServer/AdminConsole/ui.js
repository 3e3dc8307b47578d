// Small DOM helpers: no framework, no inline HTML built from data (text always goes in as text).

/** An element: h("button", {class: "primary", onclick: f}, "Save"). Children may be strings, nodes, arrays, null. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") element.addEventListener(key.slice(2), value);
    else if (key === "value") element.value = value;
    else if (key === "checked") element.checked = Boolean(value);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : String(child));
  }
}

/** Replaces the children of `element`. */
export function mount(element, ...children) {
  element.replaceChildren();
  append(element, children);
}

/** An error box for an APIError or any Error. */
export function errorBox(error) {
  const code = error && error.code ? `${error.code}: ` : "";
  return h("div", { class: "error", role: "alert" }, code + (error && error.message ? error.message : String(error)));
}

/** A cell's text for any JSON value. */
export function cellText(value) {
  if (value === null || value === undefined) return "∅";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** A table of `rows` (objects) over `columns`; `extra(row)` adds a last cell. */
export function dataTable(columns, rows, extra) {
  const head = h("tr", {}, columns.map((c) => h("th", {}, c)), extra ? h("th", {}, "") : null);
  const body = rows.map((row) =>
    h("tr", {}, columns.map((c) => h("td", { title: cellText(row[c]) }, cellText(row[c]))), extra ? h("td", {}, extra(row)) : null));
  return h("div", { class: "scroll" }, h("table", { class: "data" }, h("thead", {}, head), h("tbody", {}, body)));
}

/** A figure tile. */
export function figure(label, value, id) {
  return h("div", { class: "figure", "data-figure": id || label }, h("div", { class: "value" }, cellText(value)), h("div", { class: "label" }, label));
}
