import { TOKEN_CALLBACK_ROUTE } from "../lib/api/route-keys";
import { apiAccessLogFormat } from "./api-access-log";
import { throttle } from "./throttle-settings";

type Routes = $util.Input<aws.apigatewayv2.Route>[];
let resolveRoutes: (routes: Routes) => void = () => {};
const declaredRoutes = new Promise<Routes>((resolve) => {
  resolveRoutes = resolve;
});

/**
 * infra/api.ts hands over every route once it has declared them. SST makes the stage in the API's
 * constructor, before any route, and API Gateway refuses a stage whose settings name a route that
 * doesn't exist yet ("Unable to find Route by key"): the stage waits for them (its dependsOn).
 */
export function routesDeclared(routes: Routes): void {
  resolveRoutes(routes);
}

/**
 * The HTTP API, IAM (SigV4) authorized on every route but the token callback (infra/api.ts), every
 * route throttled by the stage's default and the token callback by a smaller limit of its own. No
 * CORS: no browser calls it (the console goes through its own loopback proxy), and SST's default
 * allows any origin. SST renders `cors: false` as an empty CORS configuration rather than none, so
 * the transform removes it. The access log names each caller (infra/api-access-log.ts).
 *
 * Declared on its own, before any function: the functions that run jobs take its URL
 * (SKYFORGE_API_URL, apiUrl below) for durable jobs' token urls, and its routes take the API
 * function. The API itself depends on neither, so API → functions → routes has no cycle.
 */
export const api = new sst.aws.ApiGatewayV2("Api", {
  cors: false,
  transform: {
    api: (args) => {
      args.corsConfiguration = undefined;
    },
    stage: (args, opts) => {
      args.defaultRouteSettings = {
        throttlingRateLimit: throttle.routes.rate,
        throttlingBurstLimit: throttle.routes.burst,
      };
      args.routeSettings = [
        {
          routeKey: TOKEN_CALLBACK_ROUTE,
          throttlingRateLimit: throttle.tokenCallback.rate,
          throttlingBurstLimit: throttle.tokenCallback.burst,
        },
      ];
      opts.dependsOn = declaredRoutes;
      args.accessLogSettings = $util.output(args.accessLogSettings).apply((settings) => {
        if (!settings) throw new Error("SST no longer gives the API stage an access log to format");
        return { ...settings, format: apiAccessLogFormat };
      });
    },
  },
});

/** What the functions that run jobs (workers, pool, API) are given for token urls (functions/runtime-config.ts). */
export const apiUrl = { SKYFORGE_API_URL: api.url };
