// Storage: the Supabase Storage API at /storage/v1 (buckets, object listing, upload, image preview), as the
// service role. A server without storage answers 404 there, and the page says so.
import { APIError, request } from "./api.js";
import { cellText, errorBox, h, mount } from "./ui.js";

function objectPath(bucket, path) {
  return `/storage/v1/object/${encodeURIComponent(bucket)}/${path.split("/").map(encodeURIComponent).join("/")}`;
}

export function render(main) {
  const state = { bucket: null, prefix: "", previewURL: null };
  const buckets = h("div", { class: "list", id: "bucket-list" });
  const detail = h("div", { id: "bucket-detail" }, h("p", { class: "muted" }, "Choose a bucket."));
  const status = h("div", { id: "storage-status" });
  mount(main, h("h1", {}, "Storage"), status, h("div", { class: "split" }, h("div", { class: "panel" }, buckets), detail));

  function revokePreview() {
    if (state.previewURL) URL.revokeObjectURL(state.previewURL);
    state.previewURL = null;
  }

  async function loadBuckets() {
    try {
      const list = await request("/storage/v1/bucket");
      const name = h("input", { id: "new-bucket", placeholder: "new bucket id" });
      const isPublic = h("input", { type: "checkbox", id: "new-bucket-public" });
      mount(buckets, list.length ? list.map((b) => h("a", { href: "#/storage", "data-bucket": b.id || b.name,
        class: state.bucket === (b.id || b.name) ? "active" : null,
        onclick: (e) => { e.preventDefault(); state.bucket = b.id || b.name; state.prefix = ""; loadBuckets(); loadObjects(); } },
        b.name || b.id, b.public ? " (public)" : "")) : h("p", { class: "muted" }, "No buckets."),
        h("form", { class: "row", onsubmit: async (e) => {
          e.preventDefault();
          try {
            await request("/storage/v1/bucket", { method: "POST", json: { id: name.value, name: name.value, public: isPublic.checked } });
            loadBuckets();
          } catch (error) { mount(status, errorBox(error)); }
        } }, name, h("label", {}, isPublic, " public"), h("button", { type: "submit", id: "create-bucket" }, "Create")));
    } catch (error) {
      if (error instanceof APIError && error.status === 404) {
        mount(main, h("h1", {}, "Storage"), h("div", { class: "panel", id: "storage-unavailable" },
          "Storage is not available on this server (/storage/v1 answers 404)."));
      } else {
        mount(buckets, errorBox(error));
      }
    }
    main.dataset.loaded = "true";
  }

  async function preview(entry, target) {
    revokePreview();
    const path = state.prefix + entry.name;
    try {
      const response = await request(objectPath(state.bucket, path), { raw: true });
      const blob = await response.blob();
      state.previewURL = URL.createObjectURL(blob);
      mount(target, blob.type.startsWith("image/") ? h("img", { class: "preview", src: state.previewURL, alt: path })
        : h("p", {}, h("a", { href: state.previewURL, download: entry.name }, `Download ${entry.name}`), ` (${blob.type || "unknown type"}, ${blob.size} bytes)`));
    } catch (error) {
      mount(target, errorBox(error));
    }
  }

  async function loadObjects() {
    revokePreview();
    const bucket = state.bucket;
    const file = h("input", { type: "file", id: "upload-file" });
    const viewer = h("div", { id: "object-preview" });
    const upload = h("form", { class: "row", id: "upload-form", onsubmit: async (e) => {
      e.preventDefault();
      const chosen = file.files[0];
      if (!chosen) return;
      try {
        await request(objectPath(bucket, state.prefix + chosen.name), { method: "POST", body: chosen,
          headers: { "Content-Type": chosen.type || "application/octet-stream", "x-upsert": "true" } });
        loadObjects();
      } catch (error) { mount(viewer, errorBox(error)); }
    } }, "Upload to ", h("span", { class: "mono" }, `${bucket}/${state.prefix}`), file, h("button", { type: "submit", class: "primary", id: "upload-submit" }, "Upload"));
    try {
      const entries = await request(`/storage/v1/object/list/${encodeURIComponent(bucket)}`, { method: "POST",
        json: { prefix: state.prefix, limit: 100, offset: 0, sortBy: { column: "name", order: "asc" } } });
      const up = state.prefix ? h("a", { href: "#/storage", onclick: (e) => {
        e.preventDefault(); state.prefix = state.prefix.split("/").slice(0, -2).concat([""]).join("/").replace(/^\//, ""); loadObjects();
      } }, "↑ up") : null;
      const rows = entries.map((entry) => {
        const folder = entry.id === null || entry.id === undefined;
        const meta = entry.metadata || {};
        return h("tr", { "data-object": entry.name },
          h("td", {}, folder ? h("a", { href: "#/storage", onclick: (e) => { e.preventDefault(); state.prefix += `${entry.name}/`; loadObjects(); } }, `${entry.name}/`) : entry.name),
          h("td", {}, folder ? "" : cellText(meta.size)), h("td", {}, folder ? "" : cellText(meta.mimetype)),
          h("td", {}, (entry.updated_at || "").replace("T", " ").slice(0, 19)),
          h("td", {}, folder ? null : h("button", { class: "preview-object", onclick: () => preview(entry, viewer) }, "Preview")));
      });
      mount(detail, h("div", { class: "panel" }, h("h2", {}, bucket, " / ", state.prefix), upload, up, viewer,
        h("div", { class: "scroll" }, h("table", { class: "data" },
          h("thead", {}, h("tr", {}, ["Name", "Size", "Type", "Updated", ""].map((c) => h("th", {}, c)))), h("tbody", {}, rows)))));
    } catch (error) {
      mount(detail, errorBox(error));
    }
  }

  loadBuckets();
  return revokePreview;
}
