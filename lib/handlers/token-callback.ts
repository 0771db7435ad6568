import middy from "@middy/core";
import { durableRoutes } from "../api/durable-routes.ts";
import { clip, errorResponder, type HttpEvent, type HttpResult } from "../api/http.ts";
import { routeMatcher, TOKEN_CALLBACK_ROUTE } from "../api/route-keys.ts";
import { ClientError, InvariantError } from "../errors.ts";
import type { Engine } from "../services/engine-services.ts";

/**
 * The token callback's own function (docs/guide/security.md, "Token urls"): `POST /tokens/{id}` is the one
 * route deployed without IAM auth, so it runs apart from the API, under a role that may only read
 * and complete a token, resume its job and keep the data. It serves that route and nothing else:
 * any other route key or path (a variant, another method) is a 404 in the API's error shape, so a
 * mistake in infra that sent it another route could not reach more than the callback.
 */
export function tokenCallbackHandler(engine: Engine) {
  const callback = durableRoutes(engine).find((r) => `${r.method} ${r.path}` === TOKEN_CALLBACK_ROUTE);
  if (!callback) throw new InvariantError(`the API serves no ${TOKEN_CALLBACK_ROUTE}`);
  const matcher = routeMatcher([TOKEN_CALLBACK_ROUTE]);
  return middy<HttpEvent, HttpResult>()
    .use(errorResponder(engine.log))
    .use({ after: async () => engine.metrics.flush(), onError: async () => engine.metrics.flush() })
    .handler(async (event) => {
      const method = event.requestContext?.http?.method ?? "";
      const path = event.requestContext?.http?.path ?? event.rawPath ?? "";
      const target = matcher.find(method, path);
      if (!target || event.routeKey !== TOKEN_CALLBACK_ROUTE)
        throw new ClientError("not_found", `no route for ${clip(method)} ${clip(path)}`);
      return callback.handler({
        ...event,
        pathParameters: { ...target.pathParameters, ...event.pathParameters },
      });
    });
}
