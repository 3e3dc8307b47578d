// Health and key figures: GET /health, GET /admin/api/overview and GET /metrics (Prometheus text, read as the
// service role).
import { request } from "./api.js";
import { errorBox, figure, h, mount } from "./ui.js";

/** Sums of every sample of each metric name (labels summed over), from Prometheus text. */
function sums(text) {
  const totals = {};
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/);
    if (!match) continue;
    const value = Number(match[3]);
    if (!Number.isNaN(value)) totals[match[1]] = (totals[match[1]] || 0) + value;
  }
  return totals;
}

function rounded(value, digits = 3) {
  return value === undefined ? "—" : Number(value.toFixed(digits));
}

export function render(main) {
  const body = h("div", { id: "health-body" });
  mount(main, h("h1", {}, "Health"), h("div", { class: "row" }, h("button", { id: "health-refresh", onclick: () => load() }, "Refresh")), body);

  async function load() {
    try {
      const [healthResponse, overview, metrics] = await Promise.all([
        fetch("/health").then((r) => r.json()),
        request("/admin/api/overview"),
        request("/metrics").catch((error) => ({ error })),
      ]);
      const m = typeof metrics === "string" ? sums(metrics) : {};
      const requests = m.caravan_http_requests_total;
      const latencySum = m.caravan_http_request_duration_seconds_sum;
      const latencyCount = m.caravan_http_request_duration_seconds_count;
      const rt = overview.realtime || {};
      mount(body,
        h("div", { class: "figures" },
          figure("server", healthResponse.status, "health"),
          figure("REST tables", overview.exposed_tables, "tables"),
          figure("RPC functions", overview.rpc_functions, "functions"),
          figure("change log head", overview.change_log.head, "head"),
          figure("compacted through", overview.change_log.compacted_through, "compacted"),
          figure("realtime sockets", rt.sockets ?? "off", "sockets"),
          figure("realtime channels", rt.channels ?? "off", "channels"),
          figure("HTTP requests", requests ?? "—", "requests"),
          figure("mean latency (ms)", latencyCount ? rounded((latencySum / latencyCount) * 1000, 2) : "—", "latency"),
          figure("write transactions", m.caravan_write_transactions_total ?? "—", "writes"),
          figure("sign-ins", m.caravan_auth_sign_ins_total ?? "—", "sign_ins"),
          figure("auth failures", m.caravan_auth_failures_total ?? "—", "auth_failures"),
          figure("rate-limit refusals", m.caravan_rate_limit_refusals_total ?? "—", "rate_limited"),
          figure("DB connections in use", m.caravan_db_connections_in_use ?? "—", "db_in_use")),
        h("h2", {}, "Deployment"),
        h("div", { class: "panel" }, h("div", { class: "form-grid" },
          h("span", {}, "apps"), h("span", { id: "apps" }, overview.apps.join(", ")),
          h("span", {}, "change-log epoch"), h("span", { class: "mono" }, overview.change_log.epoch),
          h("span", {}, "auth"), h("span", {}, overview.auth ? "served" : "off"))),
        metrics.error ? errorBox(metrics.error) : h("details", { class: "panel" }, h("summary", {}, "Raw /metrics"), h("pre", {}, metrics)));
    } catch (error) {
      mount(body, errorBox(error));
    }
    main.dataset.loaded = "true";
  }
  load();
}
