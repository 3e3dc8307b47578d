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

/**
 * The data grid: fixed row height, cells cut with an ellipsis (the full text in the title), a click on a row calls
 * `open(row)` (the detail view), and the `actions(row)` column pinned to the right edge of the grid's own scroll
 * container, so Edit/Delete stay in view whatever the width.
 */
export function grid(columns, rows, { actions, open } = {}) {
  const head = h("tr", {}, columns.map((c) => h("th", { title: c }, c)), actions ? h("th", { class: "actions" }, "") : null);
  const body = rows.map((row, index) => h("tr", { "data-index": index, onclick: (event) => {
    if (open && !event.target.closest("td.actions")) open(row);
  } }, columns.map((c) => h("td", { title: cellText(row[c]) }, cellText(row[c]))),
  actions ? h("td", { class: "actions" }, actions(row)) : null));
  return h("div", { class: "grid-wrap" }, h("table", { class: "grid" }, h("thead", {}, head), h("tbody", {}, body)));
}

/** An overlay panel over the page (the row detail view); closed by its button, Escape or a click outside. */
export function overlay(title, ...content) {
  const close = () => { layer.remove(); document.removeEventListener("keydown", onKey); };
  const onKey = (event) => { if (event.key === "Escape") close(); };
  const layer = h("div", { class: "overlay", onclick: (event) => { if (event.target === layer) close(); } },
    h("div", { class: "panel overlay-panel", role: "dialog", "aria-label": title },
      h("div", { class: "row" }, h("h2", { class: "grow" }, title), h("button", { id: "overlay-close", onclick: close }, "Close")), content));
  document.addEventListener("keydown", onKey);
  document.body.append(layer);
  return close;
}

/** A copy button for `text()`: the clipboard API, else a selected hidden field and execCommand. */
export function copyButton(text, id) {
  const button = h("button", { id, type: "button", onclick: async () => {
    const value = text();
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      const field = h("textarea", { class: "offscreen" }, value);
      document.body.append(field);
      field.select();
      document.execCommand("copy");
      field.remove();
    }
    button.textContent = "Copied";
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  } }, "Copy");
  return button;
}
