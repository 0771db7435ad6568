/// <reference path="./.sst/platform/config.d.ts" />

export default $config({
  app(input) {
    return {
      name: "skyforge",
      home: "aws",
      removal: input?.stage === "production" ? "retain" : "remove",
      protect: ["production"].includes(input?.stage),
    };
  },
  async run() {
    // Refuse a declaration that can't work (visibility, timeouts, concurrency, DLQ, pool capacities)
    // before a single resource is planned.
    const { assertValidDeclarations, declaredEverything } = await import("./lib/infra/validate-declarations");
    const { poolKinds } = await import("./infra/pool-config");
    assertValidDeclarations({ ...declaredEverything(), poolKinds });
    $transform(sst.aws.Function, (args) => {
      args.runtime ??= "nodejs24.x";
      args.architecture ??= "arm64";
      args.logging ??= { format: "json", retention: "1 month" };
      args.nodejs ??= { minify: true, format: "esm" };
    });
    const { table } = await import("./infra/storage");
    await import("./infra/queues");
    await import("./infra/workers");
    const { api, enqueue } = await import("./infra/api");
    await import("./infra/schedules");
    const { pool } = await import("./infra/pool");
    const monitoring = await import("./infra/monitoring");
    return {
      table: table.name,
      api: api.url,
      enqueueFunction: enqueue.name,
      poolService: pool.service,
      dashboard: monitoring.dashboardUrl,
    };
  },
});
