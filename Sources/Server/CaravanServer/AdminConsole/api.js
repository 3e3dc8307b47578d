// The console's one door to the server: every request carries the console's token (a short-lived service-role
// token from POST /admin/api/session, or a pasted service_role key) as both apikey and Bearer.

const STORAGE_KEY = "caravan.admin.session";

/** An HTTP failure, with the server's error code and message when the body has them. */
export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The saved session: {token, label, expiresAt (seconds) or null}, or null. */
export function currentSession() {
  const text = sessionStorage.getItem(STORAGE_KEY);
  if (!text) return null;
  try {
    const session = JSON.parse(text);
    if (session.expiresAt && session.expiresAt * 1000 <= Date.now()) {
      sessionStorage.removeItem(STORAGE_KEY);
      return null;
    }
    return session;
  } catch {
    sessionStorage.removeItem(STORAGE_KEY);
    return null;
  }
}

export function saveSession(session) {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

export function clearSession() {
  sessionStorage.removeItem(STORAGE_KEY);
}

let onUnauthorized = () => {};
/** Called when the server answers 401 (the token expired or was refused): the app shows the sign-in again. */
export function setUnauthorizedHandler(handler) {
  onUnauthorized = handler;
}

async function errorFrom(response) {
  let code = `HTTP_${response.status}`;
  let message = response.statusText || `HTTP ${response.status}`;
  try {
    const body = await response.json();
    code = body.code ?? body.error_code ?? body.error ?? code;
    message = body.message ?? body.msg ?? body.error_description ?? message;
  } catch {
    // Not JSON: keep the status line.
  }
  return new APIError(response.status, String(code), String(message));
}

/**
 * fetch with the console's token. `options.json` is sent as a JSON body; `options.raw` returns the Response.
 * Throws APIError for any status >= 400.
 */
export async function request(path, options = {}) {
  const session = currentSession();
  const headers = new Headers(options.headers || {});
  if (session && !options.anonymous) {
    headers.set("apikey", session.token);
    headers.set("Authorization", `Bearer ${session.token}`);
  }
  let body = options.body;
  if (options.json !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(options.json);
  }
  const response = await fetch(path, { method: options.method || "GET", headers, body });
  if (response.status >= 400) {
    const error = await errorFrom(response);
    if (response.status === 401 && session && !options.anonymous) onUnauthorized(error);
    throw error;
  }
  if (options.raw) return response;
  if (response.status === 204) return null;
  const type = response.headers.get("Content-Type") || "";
  return type.includes("json") ? response.json() : response.text();
}

/** Signs in with an admin's email and password; saves the console token. */
export async function signInWithPassword(email, password) {
  const answer = await request("/admin/api/session", { method: "POST", json: { email, password }, anonymous: true });
  saveSession({ token: answer.access_token, expiresAt: answer.expires_at, label: answer.user.email || answer.user.id });
  return answer;
}

/** Checks a pasted service_role key with GET /admin/api/session, then saves it. */
export async function signInWithServiceKey(key) {
  const response = await fetch("/admin/api/session", { headers: { apikey: key, Authorization: `Bearer ${key}` } });
  if (response.status >= 400) throw await errorFrom(response);
  const answer = await response.json();
  saveSession({ token: key, expiresAt: answer.expires_at ?? null, label: "service_role key" });
  return answer;
}

/** A PostgREST filter value for `op` (quoted inside `in.(…)` lists). */
export function filterValue(op, value) {
  if (op === "in") {
    const items = value.split(",").map((item) => `"${item.trim().replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`);
    return `in.(${items.join(",")})`;
  }
  return `${op}.${value}`;
}
