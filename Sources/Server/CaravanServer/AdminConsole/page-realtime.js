// Realtime: GET /admin/api/realtime (open sockets, channels and their subscriptions on this instance).
import { request } from "./api.js";
import { dataTable, errorBox, figure, h, mount } from "./ui.js";

export function render(main) {
  const body = h("div", { id: "realtime-body" });
  let timer = null;
  mount(main, h("h1", {}, "Realtime"), h("div", { class: "row" }, h("button", { id: "realtime-refresh", onclick: () => load() }, "Refresh"),
    h("span", { class: "muted" }, "This instance only; refreshes every 3 s.")), body);

  async function load() {
    clearTimeout(timer);
    try {
      const answer = await request("/admin/api/realtime");
      const f = answer.figures;
      const rows = answer.channels.map((c) => ({ ...c, tables: c.tables.join(", "), user_id: c.user_id || "—" }));
      mount(body, h("div", { class: "figures" }, figure("open sockets", f.sockets, "sockets"), figure("channels", f.channels, "channels"),
        figure("events sent", f.events_sent, "events_sent"), figure("resyncs", f.resyncs, "resyncs")),
        h("h2", {}, "Channels"),
        rows.length ? dataTable(["socket", "topic", "role", "user_id", "tables", "presences", "pending_frames", "protocol"], rows)
          : h("p", { class: "muted", id: "no-channels" }, "No channel is open."));
    } catch (error) {
      mount(body, errorBox(error));
    }
    main.dataset.loaded = "true";
    timer = setTimeout(load, 3000);
  }
  load();
  return () => clearTimeout(timer);
}
