import * as z from "zod";
import { ClientError, issuesOf } from "../errors.ts";
import { BUSIEST_KEYS_DEFAULT, BUSIEST_KEYS_MAX } from "../job/flow-views.ts";
import type { Engine } from "../services/engine-services.ts";
import { type ApiRoute, json, pathParam, queryParams, route } from "./http.ts";

/** `GET /keys`'s query: a queue (a name no queue has is a 404, as the queue routes answer it) and how many keys. */
const BusiestKeysQuery = z
  .object({
    queue: z.string().min(1).max(100),
    limit: z.coerce.number().int().min(1).max(BUSIEST_KEYS_MAX).default(BUSIEST_KEYS_DEFAULT),
  })
  .strict();

/** `GET /keys/{kind}/{key}`'s query: which of the kind's limits the key is of (its first when absent). */
const KeyViewQuery = z.object({ limit: z.string().min(1).max(32).optional() }).strict();

/**
 * A flow key as the operator sees it (docs/guide/flow-control.md, lib/flow/key-view.ts): its runs,
 * its waiting jobs, its limits and its cool-down. 404 for a kind without flow control, or a key no
 * job has used; 400 for a key no job could have. `GET /keys?queue=…&limit=…`: a queue's keys with
 * the most parked jobs (lib/flow/busiest-keys.ts); 404 for a queue not declared, 400 for a limit
 * outside 1..50.
 */
export function keyRoutes(engine: Engine): ApiRoute[] {
  return [
    route("GET", "/keys", async (e) => {
      const parsed = BusiestKeysQuery.safeParse(queryParams(e));
      if (!parsed.success)
        throw new ClientError("validation_error", "invalid keys query", issuesOf(parsed.error));
      return json(200, await engine.flow.busiestKeys(parsed.data.queue, parsed.data.limit));
    }),
    route("GET", "/keys/{kind}/{key}", async (e) => {
      const parsed = KeyViewQuery.safeParse(queryParams(e));
      if (!parsed.success)
        throw new ClientError("validation_error", "invalid key query", issuesOf(parsed.error));
      return json(
        200,
        await engine.flow.keyView(pathParam(e, "kind"), pathParam(e, "key"), parsed.data.limit),
      );
    }),
  ];
}
