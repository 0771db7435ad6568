/**
 * A durable job's token callback (docs/architecture.md §22): the one route deployed without IAM
 * auth, so a third party can complete the token its url names; the url's secret is the credential.
 */
export const TOKEN_CALLBACK_ROUTE = "POST /tokens/{id}";

/** Routes a caller reaches without AWS credentials: the token callback, nothing else. */
export const UNAUTHENTICATED_ROUTE_KEYS: readonly string[] = [TOKEN_CALLBACK_ROUTE];

/**
 * The HTTP API's routes as API Gateway route keys. Infra declares exactly these, each IAM-authorized
 * but for UNAUTHENTICATED_ROUTE_KEYS; a test checks they match what lib/api/routes.ts serves, so
 * neither side can drift.
 */
export const API_ROUTE_KEYS = [
  "GET /health",
  "HEAD /health",
  "POST /jobs",
  "POST /jobs/batch",
  "GET /jobs",
  "GET /jobs/{id}",
  "POST /jobs/{id}/cancel",
  "POST /jobs/{id}/retry",
  "POST /jobs/{id}/resume",
  "POST /jobs/replay",
  "POST /jobs/{id}/subscriptions",
  "POST /groups",
  "GET /groups/{id}",
  "GET /groups/{id}/children",
  "POST /groups/{id}/children",
  "POST /groups/{id}/seal",
  "POST /groups/{id}/cancel",
  "GET /queues",
  "POST /queues/{name}/pause",
  "POST /queues/{name}/resume",
  "PATCH /queues/{name}",
  "POST /queues/{name}/subscriptions",
  "GET /jobs/{id}/steps",
  "GET /tokens/{id}",
  TOKEN_CALLBACK_ROUTE,
  "POST /events",
  "GET /keys",
  "GET /keys/{kind}/{key}",
  "GET /schedules",
  "PUT /schedules/{name}",
  "DELETE /schedules/{name}",
] as const;

/**
 * The route key a request is served under: `METHOD /path/{name}`, and the path's `{name}` segments
 * (as sent, still percent-encoded). Infra registers exactly API_ROUTE_KEYS and no `$default`
 * catch-all, so API Gateway itself answers 404 for a request no key names; the local stack and the
 * invoke transport name the key the same way (routeFor) before the function sees the request.
 */
export interface RouteTarget {
  routeKey: string;
  pathParameters: Record<string, string>;
}

interface CompiledRoute {
  routeKey: string;
  method: string;
  pattern: RegExp;
  names: string[];
}

/**
 * Exact matching, as API Gateway's route keys mean it: `{name}` is one non-empty segment; a trailing
 * slash, an empty segment or anything else the key doesn't spell is another path. A path variant
 * must never reach a route, or an IAM Deny written for the route's path could be walked around.
 * Of two keys that both match, the one with fewer `{name}` segments wins (`/jobs/batch` over
 * `/jobs/{id}`), as API Gateway prefers the most specific route.
 */
export function routeMatcher(routeKeys: readonly string[]) {
  const compiled: CompiledRoute[] = routeKeys.map((routeKey) => {
    const space = routeKey.indexOf(" ");
    const method = routeKey.slice(0, space);
    const segments = routeKey.slice(space + 1).split("/");
    const names: string[] = [];
    const source = segments
      .map((segment) => {
        const name = /^\{([^/{}]+)\}$/.exec(segment)?.[1];
        if (name === undefined) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        names.push(name);
        return "([^/]+)";
      })
      .join("/");
    return { routeKey, method, pattern: new RegExp(`^${source}$`), names };
  });
  compiled.sort((a, b) => a.names.length - b.names.length);
  const on = (path: string) => compiled.filter((r) => r.pattern.test(path));
  return {
    /** The route this method and path are served under, or undefined: no route takes them. */
    find(method: string, path: string): RouteTarget | undefined {
      const route = on(path).find((r) => r.method === method);
      if (!route) return undefined;
      const values = route.pattern.exec(path)?.slice(1) ?? [];
      const pathParameters = Object.fromEntries(route.names.map((name, i) => [name, values[i] ?? ""]));
      return { routeKey: route.routeKey, pathParameters };
    },
    /** The methods some route serves this exact path with (a 405's `Allow`), sorted. */
    methods(path: string): string[] {
      return [...new Set(on(path).map((r) => r.method))].sort();
    },
  };
}

/** The deployed API's routes, matched exactly (the local stack and the invoke transport use it). */
export const apiRouteMatcher = routeMatcher(API_ROUTE_KEYS);
