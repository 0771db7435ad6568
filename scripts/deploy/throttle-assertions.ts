import { TOKEN_CALLBACK_ROUTE } from "../../lib/api/route-keys.ts";
import type { ApiThrottlePlan, RouteThrottle } from "../../lib/deploy-plan/api-throttle.ts";
import type { RecordedResource } from "./pulumi-mocks.ts";
import type { StageResources } from "./stage-resources.ts";

/**
 * What a flood of requests can spend, as SST rendered it (lib/deploy-plan/api-throttle.ts, from the
 * component's report of the plan it built from): the API stage throttles every route by default and the
 * token callback's route by its own, smaller limit; the stage is registered after the routes its
 * settings name (API Gateway refuses a route's settings before the route exists); and the function
 * that serves the callback holds exactly its reserved concurrency, which no other function has.
 */

interface StageThrottles {
  defaultRouteSettings?: { throttlingRateLimit?: number; throttlingBurstLimit?: number };
  routeSettings?: { routeKey?: string; throttlingRateLimit?: number; throttlingBurstLimit?: number }[];
}

const shown = (s: { throttlingRateLimit?: number; throttlingBurstLimit?: number } | undefined) =>
  s ? `rate ${s.throttlingRateLimit} / burst ${s.throttlingBurstLimit}` : "none";
const same = (
  s: { throttlingRateLimit?: number; throttlingBurstLimit?: number } | undefined,
  t: RouteThrottle,
) => s?.throttlingRateLimit === t.rate && s.throttlingBurstLimit === t.burst;

function stageFailures(stage: StageResources, plan: ApiThrottlePlan): string[] {
  const stages = stage.ofType("aws:apigatewayv2/stage:Stage");
  if (stages.length === 0) return ["no API stage"];
  const routes = stage.ofType("aws:apigatewayv2/route:Route");
  const order = (r: RecordedResource) => stage.run.resources.indexOf(r);
  return stages.flatMap((s) => {
    const failures: string[] = [];
    const inputs = s.inputs as StageThrottles;
    const expected = `rate ${plan.routes.rate} / burst ${plan.routes.burst}`;
    if (!same(inputs.defaultRouteSettings, plan.routes))
      failures.push(
        `API stage ${s.name} throttles its routes at ${shown(inputs.defaultRouteSettings)}, not ${expected}`,
      );
    const settings = inputs.routeSettings ?? [];
    const callback = settings.filter((r) => r.routeKey === TOKEN_CALLBACK_ROUTE);
    const { rate, burst } = plan.tokenCallback;
    if (callback.length !== 1 || !same(callback[0], plan.tokenCallback))
      failures.push(
        `API stage ${s.name} throttles ${TOKEN_CALLBACK_ROUTE} at ${callback.map(shown).join(", ") || "the stage's default"}, not rate ${rate} / burst ${burst}`,
      );
    const others = settings.filter((r) => r.routeKey !== TOKEN_CALLBACK_ROUTE).map((r) => r.routeKey);
    if (others.length > 0)
      failures.push(`API stage ${s.name} has settings of its own for ${others.join(", ")}`);
    // Sorted: the order Pulumi registers resources whose inputs wait on outputs varies run to run.
    const early = routes
      .filter((r) => order(r) > order(s))
      .map((r) => String(r.inputs.routeKey))
      .sort();
    if (early.length > 0)
      failures.push(
        `API stage ${s.name} is created before ${early.length} of its routes (${early.slice(0, 3).join(", ")}${early.length > 3 ? ", …" : ""}): API Gateway refuses a route's settings before the route exists`,
      );
    return failures;
  });
}

function concurrencyFailures(stage: StageResources, plan: ApiThrottlePlan): string[] {
  const failures: string[] = [];
  for (const fn of stage.functions) {
    const reserved = fn.inputs.reservedConcurrentExecutions as number | undefined;
    const callback = stage.handlerOf(fn) === stage.report.handlers["token-callback"];
    const wanted = callback ? plan.tokenCallback.reservedConcurrency : undefined;
    if (reserved !== wanted)
      failures.push(
        `function ${fn.name} reserves ${reserved ?? "no"} concurrency, not ${wanted ?? "none"}${callback ? " (the token callback's)" : ""}`,
      );
  }
  return failures;
}

export function throttleFailures(stage: StageResources): string[] {
  const plan = stage.report.throttle;
  return [...stageFailures(stage, plan), ...concurrencyFailures(stage, plan)];
}
