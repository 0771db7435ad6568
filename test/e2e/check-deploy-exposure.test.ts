import { describe, expect, test } from "vitest";
import { API_ROUTE_KEYS } from "../../lib/api/route-keys.ts";
import { useCheckDeployCopy } from "../support/check-deploy-copy.ts";

/**
 * The offline deploy proof must fail when the infra is broken on purpose. Each case edits one infra
 * file in a copy of the project, runs SST's real components on it for one stage, and expects the
 * named failure; the untouched copy must pass first (test/e2e/check-deploy.test.ts), so a failure
 * can only come from the edit. The cases are split over three files, each with its own copy, so
 * they run beside each other: here, what is exposed: CORS, ECS Exec, the access log, the pool
 * task's privileges, the routes' auth and throttles.
 */

const project = useCheckDeployCopy("skyforge-check-deploy-exposure-");

describe("check:deploy on SST's own components: exposure", () => {
  test("CORS, ECS Exec or an access log without the caller fails", async () => {
    const failures = await project.failuresAfterEdits([
      ["infra/api-gateway.ts", "args.corsConfiguration = undefined;", ""],
      ["infra/storage.ts", "cors: false,", ""],
      ["infra/pool.ts", "args.enableExecuteCommand = false;", ""],
      ["infra/api-access-log.ts", 'callerArn: "$context.identity.userArn",', ""],
    ]);
    expect(failures).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Jobs: API JobsApiApi has a CORS configuration/),
        expect.stringMatching(/^Jobs: bucket .* has a CORS configuration \(JobsClaimsCors\)/),
        expect.stringMatching(/^Jobs: ECS service JobsPoolService allows ECS Exec/),
        expect.stringMatching(
          /^Jobs: API stage JobsApiStage: the access log does not record the caller's ARN/,
        ),
      ]),
    );
  }, 60_000);

  test("a pool task left with Docker's default capabilities and user fails", async () => {
    const failures = await project.failuresAfter(
      "infra/pool.ts",
      "args.containerDefinitions = $output(args.containerDefinitions).apply(withPoolPrivileges);",
      "void withPoolPrivileges;",
    );
    expect(failures).toContainEqual(
      expect.stringMatching(
        /the pool container keeps capabilities it doesn't need: AUDIT_WRITE, DAC_OVERRIDE/,
      ),
    );
    expect(failures).toContainEqual(expect.stringMatching(/the pool container runs as user undefined/));
  }, 60_000);

  test("another route left without IAM auth, or served by the token callback's function, fails", async () => {
    const failures = await project.failuresAfter(
      "infra/api.ts",
      "  UNAUTHENTICATED_ROUTE_KEYS.includes(route)\n",
      '  UNAUTHENTICATED_ROUTE_KEYS.includes(route) || route === "GET /keys"\n',
    );
    expect(failures).toEqual(
      expect.arrayContaining([
        "Jobs: route GET /keys is NONE, not AWS_IAM",
        expect.stringMatching(
          /^Jobs: route GET \/keys is served by JobsCallback\w*, not \.sst\/skyforge\/Jobs\/api\.handler$/,
        ),
      ]),
    );
    // The callback itself behind IAM (and in the API function) fails too: a token's url would stop working.
    const closed = await project.failuresAfter(
      "infra/api.ts",
      "  UNAUTHENTICATED_ROUTE_KEYS.includes(route)\n",
      "  UNAUTHENTICATED_ROUTE_KEYS.includes(route.toLowerCase())\n",
    );
    expect(closed).toEqual(
      expect.arrayContaining([
        "Jobs: route POST /tokens/{id} is AWS_IAM, not NONE",
        expect.stringMatching(
          /^Jobs: route POST \/tokens\/\{id\} is served by JobsApiHandler\w*, not \.sst\/skyforge\/Jobs\/token-callback\.handler$/,
        ),
      ]),
    );
  }, 90_000);

  test("an API stage without its throttles, made before its routes, or a token callback without reserved concurrency fails", async () => {
    const failures = await project.failuresAfterEdits([
      ["infra/api-gateway.ts", "args.defaultRouteSettings = {", "void {"],
      ["infra/api-gateway.ts", "opts.dependsOn = declaredRoutes;", "void declaredRoutes;"],
      ["infra/api.ts", "concurrency: { reserved: build.throttle.tokenCallback.reservedConcurrency },", ""],
    ]);
    expect(failures).toEqual(
      expect.arrayContaining([
        "Jobs: API stage JobsApiStage throttles its routes at none, not rate 1000 / burst 2000",
        // Every route: the stage depends on none of them.
        `Jobs: API stage JobsApiStage is created before ${API_ROUTE_KEYS.length} of its routes (DELETE /schedules/{name}, GET /groups/{id}, GET /groups/{id}/children, …): API Gateway refuses a route's settings before the route exists`,
        "Jobs: function JobsCallbackFunction reserves no concurrency, not 50 (the token callback's)",
      ]),
    );
    // The callback's route left to the stage's default (its own settings gone) fails too.
    const shared = await project.failuresAfter(
      "infra/api-gateway.ts",
      "routeKey: TOKEN_CALLBACK_ROUTE,",
      'routeKey: "POST /events",',
    );
    expect(shared).toEqual(
      expect.arrayContaining([
        "Jobs: API stage JobsApiStage throttles POST /tokens/{id} at the stage's default, not rate 20 / burst 30",
        "Jobs: API stage JobsApiStage has settings of its own for POST /events",
      ]),
    );
  }, 90_000);
});
