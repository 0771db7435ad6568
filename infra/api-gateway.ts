import { TOKEN_CALLBACK_ROUTE } from "../lib/api/route-keys";
import { apiAccessLogFormat } from "./api-access-log";
import { type Build, childName, childOpts } from "./build";
import { transformed } from "./skyforge-args";

/**
 * The HTTP API, IAM (SigV4) authorized on every route but the token callback (infra/api.ts). No
 * CORS: no browser calls it (the console goes through its own loopback proxy), and SST's default
 * allows any origin. SST renders `cors: false` as an empty CORS configuration rather than none, so
 * the transform removes it. The access log names each caller (infra/api-access-log.ts).
 *
 * Created on its own, before any function: the functions that run jobs take its URL
 * (SKYFORGE_API_URL, apiUrl below) for durable jobs' token urls, and its routes take the API
 * function. The API itself depends on neither, so API → functions → routes has no cycle.
 *
 * Its stage throttles every route (lib/deploy-plan/api-throttle.ts, the component's `throttle`),
 * the token callback's by a smaller limit of its own. API Gateway refuses a route's settings before
 * the route exists, and SST makes the stage before any route: the stage waits for the routes
 * (`routesDeclared`, called by infra/api.ts once it has made them).
 */
export function createApiGateway(build: Build) {
  const name = childName(build, "Api");
  const { throttle } = build;
  type Routes = $util.Input<aws.apigatewayv2.Route>[];
  let routesDeclared: (routes: Routes) => void = () => {};
  const declaredRoutes = new Promise<Routes>((resolve) => {
    routesDeclared = resolve;
  });
  const api = new sst.aws.ApiGatewayV2(
    name,
    transformed(
      build.args.transform?.api,
      name,
      {
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
      },
      childOpts(build),
    ),
    childOpts(build),
  );
  /** What the functions that run jobs (workers, pool, API) are given for token urls (functions/engine-config.ts). */
  const apiUrl = { SKYFORGE_API_URL: api.url };
  return { api, apiUrl, routesDeclared };
}
