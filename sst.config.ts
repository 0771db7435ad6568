/// <reference path="./.sst/platform/config.d.ts" />

export default $config({
  app(input) {
    // Stages that hold real data: kept on removal, protected from `sst remove`, and (the component
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
    // This repository's own deployment: the demo app/, as any project declares skyforge (a user's
    // sst.config.ts imports the component from "skyforge/sst"). The component checks the
    // declarations before a single resource is planned.
    const { Skyforge } = await import("./infra/skyforge");
    const jobs = new Skyforge("Jobs", { app: "app/index.ts" });
    // The client (client/stage-outputs.ts) reads these from .sst/outputs.json, which holds the last
    // deploy's outputs whatever its stage: `stage` tells it whose they are.
    return jobs.outputs;
  },
});
