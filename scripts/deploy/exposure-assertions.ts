import type { StageResources } from "./stage-resources.ts";

/**
 * What the stage opens beyond IAM, as SST rendered it: no CORS on the HTTP API or on any bucket (no
 * browser calls either; the console goes through its loopback proxy), no ECS Exec into the pool's
 * tasks, and an API access log that names each caller.
 */

const CALLER_ARN = "$context.identity.userArn";

function corsFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  for (const api of stage.ofType("aws:apigatewayv2/api:Api")) {
    if (api.inputs.corsConfiguration !== undefined)
      failures.push(
        `API ${api.name} has a CORS configuration ${JSON.stringify(api.inputs.corsConfiguration)}`,
      );
  }
  for (const rule of stage.ofType("aws:s3/bucketCorsConfiguration:BucketCorsConfiguration"))
    failures.push(`bucket ${String(rule.inputs.bucket)} has a CORS configuration (${rule.name})`);
  for (const bucket of stage.ofType("aws:s3/bucket:Bucket")) {
    if (bucket.inputs.corsRules !== undefined) failures.push(`bucket ${bucket.name} has CORS rules`);
  }
  return failures;
}

function accessLogFailures(stage: StageResources): string[] {
  return stage.ofType("aws:apigatewayv2/stage:Stage").flatMap((s) => {
    const settings = s.inputs.accessLogSettings as { destinationArn?: string; format?: string } | undefined;
    if (!settings?.destinationArn || !settings.format) return [`API stage ${s.name} keeps no access log`];
    let fields: Record<string, unknown>;
    try {
      fields = JSON.parse(settings.format) as Record<string, unknown>;
    } catch {
      return [`API stage ${s.name}: the access log format is not JSON: ${settings.format}`];
    }
    return Object.values(fields).includes(CALLER_ARN)
      ? []
      : [`API stage ${s.name}: the access log does not record the caller's ARN (${CALLER_ARN})`];
  });
}

/** SST turns ECS Exec on for every service; the pool's must say false (an absent value is not enough). */
function execFailures(stage: StageResources): string[] {
  return stage
    .ofType("aws:ecs/service:Service")
    .filter((s) => s.inputs.enableExecuteCommand !== false)
    .map(
      (s) => `ECS service ${s.name} allows ECS Exec (enableExecuteCommand ${s.inputs.enableExecuteCommand})`,
    );
}

export function exposureFailures(stage: StageResources): string[] {
  return [...corsFailures(stage), ...accessLogFailures(stage), ...execFailures(stage)];
}
