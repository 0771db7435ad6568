/**
 * The HTTP API on the page's own origin: the local stack itself, or `skyforge console`'s loopback
 * proxy, which signs each request for a deployed stage. Errors carry the API's code and message.
 */
export class ApiError extends Error {
  constructor(status, code, message, issues) {
    super(message);
    this.status = status;
    this.code = code;
    this.issues = issues;
  }
}

export async function api(method, path, { query, body } = {}) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== "") search.set(name, String(value));
  }
  const url = search.size ? `${path}?${search}` : path;
  const init = { method, headers: { accept: "application/json" } };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url, init);
  } catch (err) {
    throw new ApiError(0, "unreachable", `the API is unreachable (${err.message})`);
  }
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    throw new ApiError(res.status, "bad_answer", `HTTP ${res.status}: not JSON`);
  }
  if (!res.ok) {
    const e = data?.error ?? {};
    throw new ApiError(res.status, e.code ?? "http_error", e.message ?? `HTTP ${res.status}`, e.issues);
  }
  return data;
}

/** A job id as it goes into a path. */
export const jobPath = (id, action) => `/jobs/${encodeURIComponent(id)}${action ? `/${action}` : ""}`;
export const queuePath = (name, action) => `/queues/${encodeURIComponent(name)}/${action}`;

/** "code: message" plus any issues, for a line of text under a form or a button. */
export function describeError(err) {
  if (!(err instanceof ApiError)) return String(err?.message ?? err);
  const issues = (err.issues ?? []).map((i) => `${i.path}: ${i.message}`);
  return [`${err.code}: ${err.message}`, ...issues].join(" · ");
}
