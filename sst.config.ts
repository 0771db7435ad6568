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
    $transform(sst.aws.Function, (args) => {
      args.runtime ??= "nodejs24.x";
      args.architecture ??= "arm64";
      args.logging ??= { format: "json", retention: "1 month" };
      args.nodejs ??= { minify: true, format: "esm" };
    });
    const storage = await import("./infra/storage");
    await import("./infra/queues");
    await import("./infra/schedules");
    const { api, enqueue } = await import("./infra/api");
    return { table: storage.table.name, api: api.url, enqueueFunction: enqueue.name };
  },
});
