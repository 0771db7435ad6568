import * as z from "zod";
import { ClientError, issuesOf } from "../errors.ts";
import { MAX_BATCH_KEY_CHARS } from "../job/batch.ts";
import { concurrencyFor } from "../job/flow.ts";
import { computedKeyWrites, storedKeyProblem } from "../job/key-layout.ts";
import { BUSIEST_KEYS_DEFAULT, BUSIEST_KEYS_MAX, busiestKeys } from "../ops/busiest-keys.ts";
import { livePlaces } from "../runtime/flow-places.ts";
import type { Engine } from "../services/engine-services.ts";
import { readFlowKey } from "../store/flow-key-ops.ts";
import { countParked } from "../store/parked-line-ops.ts";
import { type ApiRoute, json, pathParam, queryParams, route } from "./http.ts";

/** `GET /keys`'s query: a queue (a name no queue has is a 404, as the queue routes answer it) and how many keys. */
const BusiestKeysQuery = z
  .object({
    queue: z.string().min(1).max(100),
    limit: z.coerce.number().int().min(1).max(BUSIEST_KEYS_MAX).default(BUSIEST_KEYS_DEFAULT),
  })
  .strict();

/**
 * A flow key as the operator sees it (docs/guide/flow-control.md): its runs, its waiting jobs, its limits
 * and its cool-down. 404 for a kind without flow control, or a key no job has used; 400 for a key
 * no job could have. `GET /keys?queue=…&limit=…`: a queue's keys with the most parked jobs
 * (lib/ops/busiest-keys.ts); 404 for a queue not declared, 400 for a limit outside 1..50.
 */
export function keyRoutes(engine: Engine): ApiRoute[] {
  return [
    route("GET", "/keys", async (e) => {
      const parsed = BusiestKeysQuery.safeParse(queryParams(e));
      if (!parsed.success)
        throw new ClientError("validation_error", "invalid keys query", issuesOf(parsed.error));
      return json(200, await busiestKeys(engine, parsed.data.queue, parsed.data.limit));
    }),
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
      // A key the enqueue would refuse names no key's state, and its parked line's prefix is no key
      // DynamoDB takes in a query.
      const problem = storedKeyProblem([key], (k) => computedKeyWrites("flow", kind.name, k));
      if (problem)
        throw new ClientError("validation_error", "no job can have this flow key", [
          { path: "key", message: `the flow key ${problem}` },
        ]);
      const [state, waiting] = await Promise.all([
        readFlowKey(engine.store, kind.name, key),
        countParked(engine.store, kind.name, key),
      ]);
      const running = await livePlaces(engine, kind.name, key, state, engine.clock.now());
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
