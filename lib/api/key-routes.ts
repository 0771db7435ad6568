import { ClientError } from "../errors.ts";
import { MAX_BATCH_KEY_CHARS } from "../job/batch.ts";
import { concurrencyFor } from "../job/flow.ts";
import type { Engine } from "../services/engine-services.ts";
import { countParked, readFlowKey } from "../store/flow-key-ops.ts";
import { type ApiRoute, json, pathParam, route } from "./http.ts";

/**
 * A flow key as the operator sees it (docs/flow-control.md): its runs, its waiting jobs, its limits
 * and its cool-down. 404 for a kind without flow control, or a key no job has used; 400 for a key
 * no job could have.
 */
export function keyRoutes(engine: Engine): ApiRoute[] {
  return [
    route("GET", "/keys/{kind}/{key}", async (e) => {
      const kindName = pathParam(e, "kind");
      const key = pathParam(e, "key");
      const kind = engine.registry.get(kindName);
      if (!kind?.flow)
        throw new ClientError(
          "not_found",
          `kind "${kindName}" has no flow control (or is not a kind of this app)`,
        );
      if (key.length === 0 || key.length > MAX_BATCH_KEY_CHARS)
        throw new ClientError("validation_error", `a flow key is 1..${MAX_BATCH_KEY_CHARS} characters`, [
          { path: "key", message: `got ${key.length} characters` },
        ]);
      const [state, waiting] = await Promise.all([
        readFlowKey(engine.store, kind.name, key),
        countParked(engine.store, kind.name, key),
      ]);
      const running = Object.keys(state.holders).length;
      if (running === 0 && waiting === 0 && state.coolUntil === undefined)
        throw new ClientError("not_found", `no job of kind "${kindName}" runs or waits under key "${key}"`);
      const concurrency = concurrencyFor(kind.flow, key);
      return json(200, {
        kind: kind.name,
        key,
        running,
        waiting,
        ...(typeof concurrency === "number" ? { concurrency } : {}),
        ...(kind.flow.rate ? { rate: kind.flow.rate } : {}),
        ...(state.coolUntil !== undefined && state.coolUntil > engine.clock.now()
          ? { coolUntil: new Date(state.coolUntil).toISOString() }
          : {}),
      });
    }),
  ];
}
