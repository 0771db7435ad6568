/**
 * The HTTP API on the page's own origin: the local stack itself, or `skyforge console`'s loopback
 * proxy, which signs each request for a deployed stage. Errors carry the API's code and message.
 */
export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status; 0 when no answer came
   * @param {string} code
   * @param {string} message
   * @param {import("./api-shapes").Issue[]} [issues]
   */
  constructor(status, code, message, issues) {
    super(message);
    this.status = status;
    this.code = code;
    this.issues = issues;
  }
}

/**
 * `skyforge console` prints the page's address with a token in the fragment (#token=…), which the
 * browser never sends anywhere; the proxy forwards only calls that carry it in this header. The page
 * keeps it for the tab (sessionStorage, so a reload still works) and takes it out of the address bar,
 * where a screenshot or a copied link would show it. The local stack needs none and ignores the header.
 */
const TOKEN_HEADER = "x-skyforge-console-token";
const TOKEN_KEY = "skyforge-console-token";
const TOKEN_IN_ADDRESS = /^#token=([A-Za-z0-9_-]+)$/;
let token = storedToken();

/** @returns {string | undefined} */
function storedToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return undefined; // storage turned off: the token lasts until the page is left
  }
}

/** Takes the token out of the address, if it is there: called once, before anything reads the hash. */
export function adoptTokenFromAddress() {
  const m = TOKEN_IN_ADDRESS.exec(location.hash);
  if (!m?.[1]) return;
  token = m[1];
  try {
    sessionStorage.setItem(TOKEN_KEY, m[1]);
  } catch {
    // kept in memory only
  }
  history.replaceState(history.state, "", `${location.pathname}${location.search}`);
}

/**
 * One call; answers the parsed JSON (undefined for an empty body), shaped as the route says: the
 * caller names the shape where it keeps the answer.
 * @param {string} method
 * @param {string} path
 * @param {{ query?: Record<string, string | number | undefined>, body?: unknown }} [options]
 * @returns {Promise<any>}
 */
export async function api(method, path, { query, body } = {}) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== "") search.set(name, String(value));
  }
  const url = search.size ? `${path}?${search}` : path;
  /** @type {RequestInit & { headers: Record<string, string> }} */
  const init = { method, headers: { accept: "application/json" } };
  if (token !== undefined) init.headers[TOKEN_HEADER] = token;
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url, init);
  } catch (err) {
    throw new ApiError(0, "unreachable", `the API is unreachable (${/** @type {Error} */ (err).message})`);
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

/**
 * A job id as it goes into a path.
 * @param {string} id
 * @param {string} [action]
 */
export const jobPath = (id, action) => `/jobs/${encodeURIComponent(id)}${action ? `/${action}` : ""}`;
/**
 * @param {string} name
 * @param {string} action
 */
export const queuePath = (name, action) => `/queues/${encodeURIComponent(name)}/${action}`;

/**
 * "code: message" plus any issues, for a line of text under a form or a button.
 * @param {unknown} err
 */
export function describeError(err) {
  if (!(err instanceof ApiError))
    return String(/** @type {{ message?: unknown } | undefined} */ (err)?.message ?? err);
  const issues = (err.issues ?? []).map((i) => `${i.path}: ${i.message}`);
  return [`${err.code}: ${err.message}`, ...issues].join(" · ");
}
