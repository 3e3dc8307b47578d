// API keys: the deployment's anon and service_role keys (GET /admin/api/keys) and the URL supabase clients connect
// to, each with a copy button.
import { request } from "./api.js";
import { copyButton, errorBox, h, mount } from "./ui.js";

function keyRow(label, id, value, note) {
  const field = h("input", { id, value, readonly: true, class: "mono key", spellcheck: "false" });
  return h("div", { class: "panel key-row" }, h("h2", {}, label), h("div", { class: "row nowrap" }, field, copyButton(() => field.value, `copy-${id}`)),
    h("p", { class: "muted" }, note));
}

export function render(main) {
  const body = h("div", { id: "keys-body" });
  mount(main, h("h1", {}, "API keys"), body);
  (async () => {
    try {
      const keys = await request("/admin/api/keys");
      const url = location.origin;
      const snippet = `import { createClient } from "@supabase/supabase-js"\n\nconst supabase = createClient("${url}", "${keys.anon_key}")`;
      mount(body,
        keyRow("URL", "project-url", url, "What supabase-js, supabase-py, supabase-swift and supabase-kt connect to."),
        keyRow("anon key", "anon-key", keys.anon_key, "Safe in apps and browsers: it reaches only what the policies allow anon and signed-in users."),
        keyRow("service_role key", "service-role-key", keys.service_role_key,
          "Secret: it bypasses every policy. Use it on servers and in scripts only, never in an app. The command caravan keys prints both."),
        h("div", { class: "panel" }, h("h2", {}, "Connect a client"), h("pre", { id: "client-snippet" }, snippet),
          copyButton(() => snippet, "copy-snippet")));
    } catch (error) {
      mount(body, errorBox(error));
    }
    main.dataset.loaded = "true";
  })();
  return null;
}
