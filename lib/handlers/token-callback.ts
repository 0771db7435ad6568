import { durableRoutes } from "../api/durable-routes.ts";
import { TOKEN_CALLBACK_ROUTE } from "../api/route-keys.ts";
import { serveRoutes } from "../api/routes.ts";
import { InvariantError } from "../errors.ts";
import type { Engine } from "../services/engine-services.ts";

/**
 * The token callback's own function (docs/guide/security.md, "Token urls"): `POST /tokens/{id}` is the one
 * route deployed without IAM auth, so it runs apart from the API, under a role that may only read
 * and complete a token, resume its job and keep the data. It serves that route and nothing else:
 * any other route key or path (a variant) is a 404 in the API's error shape (another method on its
 * path a 405), matched as the API matches its routes (serveRoutes), so a
 * mistake in infra that sent it another route could not reach more than the callback.
 */
export function tokenCallbackHandler(engine: Engine) {
  const callback = durableRoutes(engine).find((r) => `${r.method} ${r.path}` === TOKEN_CALLBACK_ROUTE);
  if (!callback) throw new InvariantError(`the API serves no ${TOKEN_CALLBACK_ROUTE}`);
  return serveRoutes(engine, [callback]);
}
