// A table's schema view: GET /admin/api/tables/:name/schema (the app module's declaration) — columns, keys,
// indexes, foreign keys, search and sync settings — and its policies written out per command.
import { request } from "./api.js";
import { dataTable, errorBox, h, mount } from "./ui.js";

const COMMANDS = ["select", "insert", "update", "delete"];

function yes(flag) {
  return flag ? "yes" : "";
}

function policiesView(schema) {
  if (!schema.has_policies) {
    return h("div", { class: "flag no-policy", id: "no-policy", role: "note" },
      "No policy: anon and signed-in users can neither read nor write this table; only the service role reaches it.");
  }
  return h("div", { id: "policies" }, COMMANDS.map((command) => {
    const rules = schema.commands[command];
    return h("div", { class: "policy", id: `policy-${command}` },
      h("h3", {}, command.toUpperCase()),
      rules.length === 0
        ? h("p", { class: "flag" }, `No policy for ${command}: refused to anon and signed-in users.`)
        : h("ul", {}, rules.map((rule) => h("li", {},
          h("span", { class: "mono" }, rule.policy), h("span", { class: "muted" }, ` to ${rule.roles.join(", ")}`),
          rule.using ? h("div", {}, h("span", { class: "muted" }, "rows seen: "), h("code", {}, rule.using)) : null,
          rule.check ? h("div", {}, h("span", { class: "muted" }, "rows written: "), h("code", {}, rule.check)) : null))));
  }));
}

function searchView(search) {
  if (!search) return h("p", { class: "muted" }, "No search index.");
  const parts = [];
  if (search.full_text.length) parts.push(`full text: ${search.full_text.map((f) => `${f.column} (weight ${f.weight})`).join(", ")}`);
  if (search.fuzzy.length) parts.push(`typo-tolerant (trigrams): ${search.fuzzy.join(", ")}`);
  if (search.geo) parts.push(`nearest rows: ${search.geo.latitude}, ${search.geo.longitude}`);
  return h("ul", { id: "schema-search" }, parts.map((p) => h("li", {}, p)));
}

function syncView(sync) {
  const lines = [
    sync.synced ? "Synced to clients through /sync/v1" : "Not synced to clients",
    sync.change_logged ? "Writes go to the change log (realtime, sync)" : "Never written to the change log",
  ];
  if (sync.owner) lines.push(`Rows belong to the user in ${sync.owner}` + (sync.participants.length ? ` (and ${sync.participants.join(", ")})` : ""));
  for (const rule of sync.client_caches) lines.push(`Client cache: ${rule}`);
  return h("ul", { id: "schema-sync" }, lines.map((l) => h("li", {}, l)));
}

/** Renders the schema of `name` into `container`. */
export async function renderSchema(container, name) {
  mount(container, h("p", { class: "muted" }, "Loading the schema…"));
  try {
    const schema = await request(`/admin/api/tables/${encodeURIComponent(name)}/schema`);
    const columns = schema.columns.map((c) => ({
      column: c.name, type: c.type, nullable: yes(c.nullable), default: c.default ?? "", key: c.primary_key ? "primary" : "",
      references: c.references ?? "",
    }));
    const indexes = schema.indexes.map((i) => ({ index: i.name, columns: i.columns.join(", "), unique: yes(i.unique), kind: i.kind + (i.partial ? ", partial" : "") }));
    const keys = schema.foreign_keys.map((k) => ({ columns: k.columns.join(", "), references: `${k.table}(${k.referenced_columns.join(", ")})`, "on delete": k.on_delete }));
    mount(container, h("div", { class: "panel schema", id: "schema-view", "data-table": schema.name },
      h("p", { class: "muted" }, `Declared by the ${schema.app ?? "?"} app · ${schema.exposure === "rest" ? "served over REST" : `internal (${schema.exposure})`}` +
        ` · primary key (${schema.primary_key.join(", ")})`),
      h("h2", {}, "Policies"), policiesView(schema),
      h("h2", {}, "Columns"), h("div", { id: "schema-columns" }, dataTable(["column", "type", "nullable", "default", "key", "references"], columns)),
      h("h2", {}, "Foreign keys"), keys.length ? h("div", { id: "schema-foreign-keys" }, dataTable(["columns", "references", "on delete"], keys)) : h("p", { class: "muted" }, "None."),
      h("h2", {}, "Indexes"), indexes.length || schema.uniques.length ? h("div", { id: "schema-indexes" },
        dataTable(["index", "columns", "unique", "kind"], indexes.concat(schema.uniques.map((u) => ({ index: "(unique constraint)", columns: u.join(", "), unique: "yes", kind: "" })))))
        : h("p", { class: "muted" }, "None."),
      schema.checks.length ? [h("h2", {}, "Checks"), h("p", { class: "mono" }, schema.checks.join(", "))] : null,
      h("h2", {}, "Search"), searchView(schema.search),
      h("h2", {}, "Sync"), syncView(schema.sync)));
  } catch (error) {
    mount(container, errorBox(error));
  }
}
