// API: the OpenAPI description served at /rest/v1/ (what API explorers and generators read), shown as the tables
// and functions it describes.
import { request } from "./api.js";
import { dataTable, errorBox, h, mount } from "./ui.js";

/** A column's or argument's type as the description gives it: the PostgreSQL name, else the JSON type. */
function typeOf(property) {
  return property.format || property.type || "json";
}

export function render(main) {
  const body = h("div", { id: "api-body" });
  mount(main, h("h1", {}, "API"),
    h("p", { class: "muted" }, "The OpenAPI (Swagger 2.0) description at ", h("a", { href: "/rest/v1/", id: "openapi-link" }, "/rest/v1/"),
      ", as the service role sees it. Send an apikey header to read it: each key sees the tables it has a policy on."), body);
  (async () => {
    try {
      const document = await request("/rest/v1/");
      const tables = Object.entries(document.definitions).map(([name, definition]) => {
        const required = new Set(definition.required || []);
        const columns = Object.entries(definition.properties).map(([column, property]) => {
          const notes = (property.description || "").includes("Primary Key") ? " (key)" : "";
          return `${column}: ${typeOf(property)}${required.has(column) ? " required" : ""}${notes}`;
        });
        return { table: name, columns: columns.join(", ") };
      });
      const functions = Object.entries(document.paths).filter(([path]) => path.startsWith("/rpc/")).map(([path, operations]) => {
        const post = operations.post.parameters.find((p) => p.in === "body").schema;
        const required = new Set(post.required || []);
        const args = Object.entries(post.properties).map(([name, property]) => `${name}: ${typeOf(property)}${required.has(name) ? "" : "?"}`);
        return { function: path.slice(5), methods: Object.keys(operations).join(", ").toUpperCase(), arguments: args.join(", ") };
      });
      mount(body, h("h2", {}, `Tables (${tables.length})`), h("div", { id: "api-tables" }, dataTable(["table", "columns"], tables)),
        h("h2", {}, `Functions (${functions.length})`), h("div", { id: "api-functions" }, dataTable(["function", "methods", "arguments"], functions)));
    } catch (error) {
      mount(body, errorBox(error));
    }
    main.dataset.loaded = "true";
  })();
  return null;
}
