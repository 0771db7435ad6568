/**
 * The type of /console/vendor/realtime.mjs, which the console's modules import by its URL: it is
 * `@skyforge/client/realtime` itself, bundled for the browser (console/realtime-bundle.ts), so its
 * types are the client's own. Types only: nothing here is served.
 */
export * from "../../client/realtime.ts";
