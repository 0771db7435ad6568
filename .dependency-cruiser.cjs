/**
 * `npm run check:deps`: lib/'s layers point one way (docs/architecture.md §2). A module may import
 * its own layer or a lower one; cycles are refused everywhere. Type-only imports count too.
 */
const layers = [
  // 0 base
  ["^lib/(clock|errors|durable-errors|limits|retention)\\.ts$", "^lib/job/status\\.ts$", "^lib/observability/(log|metric-names|tracing)\\.ts$"],
  // 1 model: jobs, kinds, the app's declarations
  ["^lib/job/", "^lib/declarations/", "^lib/batching/"],
  // 2 store
  ["^lib/store/", "^lib/claims/"],
  // 3 transport
  ["^lib/transport/"],
  // 4 services
  ["^lib/observability/metrics\\.ts$", "^lib/rate-limit/", "^lib/queue-control/", "^lib/cron/"],
  // 5 the engine's service contract
  ["^lib/services/"],
  // 6 operations
  ["^lib/producer/", "^lib/groups/", "^lib/flow/", "^lib/durable/", "^lib/coalesce/", "^lib/realtime/", "^lib/runtime/", "^lib/ops/", "^lib/pool/"],
  // 7 edges
  ["^lib/api/", "^lib/deploy-plan/"],
  // 8 the builders: the engine, and a deployment's handlers assembled on it
  ["^lib/engine\\.ts$", "^lib/handlers/"],
];

const upward = layers.flatMap((paths, rank) => {
  const higher = layers.slice(rank + 1).flat();
  if (higher.length === 0) return [];
  return [
    {
      name: `layer-${rank}-imports-upward`,
      comment: "lib/ imports point down only: this module reaches a higher layer",
      severity: "error",
      from: { path: paths },
      to: { path: higher },
    },
  ];
});

module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      from: { path: "^(lib|app|functions|local|project|bench|infra|client|cli|console|http|mcp|packages)/" },
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
    {
      name: "no-cycles-in-lib",
      comment: "lib/ has no import cycles at all, type-only ones included",
      severity: "error",
      from: { path: "^lib/" },
      to: { path: "^lib/", circular: true },
    },
    {
      name: "lib-in-layers",
      comment: "every lib/ module belongs to a layer; add a new folder to the list above",
      severity: "error",
      from: { path: "^lib/", pathNot: layers.flat() },
      to: {},
    },
    {
      name: "lib-stays-engine",
      comment: "lib/ never imports the app, the entry points, the local stack or the bench",
      severity: "error",
      from: { path: "^lib/" },
      to: { path: "^(app|functions|local|project|bench|scripts|infra|test)/" },
    },
    {
      name: "rooms-behind-their-service",
      comment:
        "a feature's room (lib/groups/, lib/flow/, lib/durable/, lib/coalesce/, lib/realtime/) is reached through its service on the Engine (Engine.groups, Engine.flow, Engine.durable, Engine.coalesce, Engine.realtime): only lib/engine.ts builds it, and flow control's store operations are its room's alone",
      severity: "error",
      from: { path: "^lib/", pathNot: "^lib/(groups/|flow/|durable/|coalesce/|realtime/|engine\\.ts$)" },
      to: { path: "^lib/(groups/|flow/|durable/|coalesce/|realtime/|store/(flow-key|flow-cool|parked-line|flow-heal-cursor)-ops\\.ts$)" },
    },
    {
      name: "store-not-cron",
      comment: "a schedule's next fire time is computed above the store",
      severity: "error",
      from: { path: "^lib/store/" },
      to: { path: "^lib/cron/" },
    },
    {
      name: "registry-not-pool",
      severity: "error",
      from: { path: "^lib/job/registry\\.ts$" },
      to: { path: "^lib/pool/" },
    },
    {
      name: "transport-not-store-ops",
      comment: "the transport may use the store's data shapes, never an operation file",
      severity: "error",
      from: { path: "^lib/transport/" },
      to: { path: "^lib/store/.*-ops\\.ts$" },
    },
    {
      name: "client-is-light",
      comment:
        "the producer client (client/) ships to other services: it may use lib/'s model (lib/job/, lib/declarations/: types, schemas, the request check), the error-code table (lib/errors.ts, lib/durable-errors.ts) and the API's route keys (lib/api/route-keys.ts: data and a matcher), nothing that runs the engine",
      severity: "error",
      from: { path: "^client/" },
      to: { path: "^(lib/(?!job/|declarations/|errors\\.ts$|durable-errors\\.ts$|api/route-keys\\.ts$)|app/|functions/|local/|bench/|scripts/|infra/|cli/|console/)" },
    },
    {
      name: "cli-over-the-client",
      comment:
        "the CLI and the console reach skyforge through the client's transports, never the engine",
      severity: "error",
      from: { path: "^(cli|console)/" },
      to: { path: "^(lib|functions|local|bench|infra|scripts|test)/" },
    },
    {
      name: "mcp-over-the-client",
      comment:
        "the MCP server (mcp/) reaches skyforge through the client, as the CLI does, so it serves a stage as well as the local stack: of lib/ it may use the model (lib/job/, lib/declarations/) and the error table, never the engine",
      severity: "error",
      from: { path: "^mcp/" },
      to: { path: "^(lib/(?!job/|declarations/|errors\\.ts$)|app/|functions/|local/|bench/|scripts/|infra/|cli/|console/|test/)" },
    },
    {
      name: "http-is-shared",
      comment:
        "http/ holds what the repo's loopback servers share (the body reader, the Host/Origin guard): the local stack and the console's proxy both import it, so it imports neither, nor the engine",
      severity: "error",
      from: { path: "^http/" },
      to: { path: "^(lib|app|functions|local|bench|scripts|infra|test|cli|console)/" },
    },
    {
      name: "project-is-the-users",
      comment:
        "project/ finds and loads a user's project (the app module, sst.config.ts): it works for any app, so it never imports this repo's app/ or the tooling above it",
      severity: "error",
      from: { path: "^project/" },
      to: { path: "^(app|functions|local|bench|scripts|infra|test|cli|console)/" },
    },
    {
      name: "package-not-app",
      comment:
        "the skyforge package (packages/skyforge/src, and every module its entries reach, static or dynamic imports) is the engine for any app: it never carries this repo's demo app",
      severity: "error",
      from: { path: "^packages/skyforge/src/" },
      to: { path: "^app/", reachable: true },
    },
    ...upward,
  ],
  options: {
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" },
    moduleSystems: ["es6"],
  },
};
