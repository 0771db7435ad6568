import { ClientError, issuesOf } from "../errors.ts";
import { GroupId, ListChildrenQuery } from "../job/group-schemas.ts";
import type { Engine } from "../services/engine-services.ts";
import {
  type ApiRoute,
  clip,
  type HttpEvent,
  json,
  pathParam,
  queryParams,
  readJsonBody,
  route,
} from "./http.ts";
import { requestTrace } from "./trace-header.ts";

/**
 * A group id this API could have handed out; anything else names no group: a 404 without a read,
 * over HTTP and Invoke alike.
 */
export function namedGroup(id: string): string {
  if (!GroupId.safeParse(id).success) throw new ClientError("not_found", `group ${clip(id)} not found`);
  return id;
}

const groupId = (event: HttpEvent) => namedGroup(pathParam(event, "id"));

/** Job groups (docs/architecture.md §15; the README's routes table): fan-out, fan-in, cancel. */
export function groupRoutes(engine: Pick<Engine, "groups">): ApiRoute[] {
  const { groups } = engine;
  return [
    route("POST", "/groups", async (event) => {
      const { group, created } = await groups.create(readJsonBody(event), requestTrace(event));
      return json(created ? 201 : 200, { ...group, duplicate: !created });
    }),
    route("GET", "/groups/{id}", async (event) => json(200, await groups.get(groupId(event)))),
    route("GET", "/groups/{id}/children", async (event) => {
      const id = groupId(event);
      const parsed = ListChildrenQuery.safeParse(queryParams(event));
      if (!parsed.success)
        throw new ClientError("validation_error", "invalid children query", issuesOf(parsed.error));
      return json(200, await groups.children(id, parsed.data));
    }),
    route("POST", "/groups/{id}/children", async (event) =>
      json(200, await groups.addChildren(groupId(event), readJsonBody(event))),
    ),
    route("POST", "/groups/{id}/seal", async (event) => json(200, await groups.seal(groupId(event)))),
    route("POST", "/groups/{id}/cancel", async (event) => json(200, await groups.cancel(groupId(event)))),
  ];
}
