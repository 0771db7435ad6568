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
 */
export function createApiGateway(build: Build) {
  const name = childName(build, "Api");
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
          stage: (args) => {
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
  return { api, apiUrl };
}
