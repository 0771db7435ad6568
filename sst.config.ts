/// <reference path="./.sst/platform/config.d.ts" />

export default $config({
  app(input) {
    // Stages that hold real data: kept on removal, protected from `sst remove`, and (infra/storage.ts
    // reads $app.protect) a table that refuses deletion.
    const production = ["prod", "production"].includes(input?.stage ?? "");
    return {
      name: "skyforge",
      home: "aws",
      removal: production ? "retain" : "remove",
      protect: production,
    };
  },
  async run() {
    // Refuse a declaration that can't work (visibility, timeouts, concurrency, DLQ, pool capacities)
    // before a single resource is planned.
    const { app: definition } = await import("./app/index");
    const { assertValidDeclarations } = await import("./lib/declarations/validate-app");
    const { poolKinds } = await import("./infra/pool-config");
    assertValidDeclarations({ ...definition, poolKinds });
    // The API's throttles and the token callback's reserved concurrency, refused here when malformed.
    await import("./infra/throttle-settings");
    const { lambdaArchitecture, lambdaRuntime, nodejsBuild } = await import("./infra/function-defaults");
    $transform(sst.aws.Function, (args) => {
      args.runtime ??= lambdaRuntime;
      args.architecture ??= lambdaArchitecture;
      args.logging ??= { format: "json", retention: "1 month" };
      args.nodejs ??= nodejsBuild;
    });
    // Each role trusts only the service that runs it, for this account (infra/role-trust.ts).
    const { restrictRoleTrust } = await import("./infra/role-trust");
    restrictRoleTrust();
    const { table } = await import("./infra/storage");
    await import("./infra/queues");
    await import("./infra/workers");
    const { api, apiFunction, enqueue } = await import("./infra/api");
    await import("./infra/schedules");
    await import("./infra/runtime-updates");
    const { pool } = await import("./infra/pool");
    const monitoring = await import("./infra/monitoring");
    return {
      // The client (client/stage-outputs.ts) reads these from .sst/outputs.json, which holds the last
      // deploy's outputs whatever its stage: `stage` tells it whose they are.
      stage: $app.stage,
      region: aws.getRegionOutput().region,
      table: table.name,
      api: api.url,
      apiFunction: apiFunction.name,
      enqueueFunction: enqueue.name,
      // The ECS service name (for `aws ecs update-service` and its logs); absent under `sst dev`.
      poolService: $dev ? undefined : pool.nodes.service.name,
      dashboard: monitoring.dashboardUrl,
    };
  },
});
