import { Command, Option } from "commander";
import {
  type GroupChildrenPage,
  type GroupChildStatus,
  type GroupView,
  groupChildStatuses,
} from "../../client/vocabulary.ts";
import { action } from "../context.ts";
import { integer } from "../options.ts";
import { table } from "../output.ts";

interface ChildrenOptions {
  status?: GroupChildStatus;
  limit?: number;
  cursor?: string;
}

/** `skyforge groups get|children|seal|cancel`: the job-group routes (README, job groups). */
export function groupsCommand(): Command {
  const groups = new Command("groups").description("follow, seal and cancel job groups (fan-out, fan-in)");

  groups
    .command("get")
    .description("a group's status, counts per child status and completion job (GET /groups/{id})")
    .argument("<id>", "the group")
    .action(
      action<[string], object>(async ({ client, output }, id) => {
        const group = await client.groups.get(id);
        output.result(group, () => groupTable(group));
        return undefined;
      }),
    );

  groups
    .command("children")
    .description("one page of a group's children, in the order they were added (GET /groups/{id}/children)")
    .argument("<id>", "the group")
    .addOption(
      new Option("--status <status>", "only the children with this status").choices(groupChildStatuses),
    )
    .option("--limit <n>", "children per page, 1..100", integer(1))
    .option("--cursor <cursor>", "where the last page ended")
    .action(
      action<[string], ChildrenOptions>(async ({ client, output }, id, o) => {
        const page = await client.groups.children(id, {
          ...(o.status ? { status: o.status } : {}),
          ...(o.limit !== undefined ? { limit: o.limit } : {}),
          ...(o.cursor ? { cursor: o.cursor } : {}),
        });
        output.result(page, () => childrenTable(page));
        return undefined;
      }),
    );

  for (const verb of ["seal", "cancel"] as const) {
    groups
      .command(verb)
      .description(
        verb === "seal"
          ? "no more children: the group completes once every child ended"
          : "cancel every child not yet ended, the groups below them, and the group",
      )
      .argument("<id>", "the group")
      .action(
        action<[string], object>(async ({ client, output }, id) => {
          const group = await client.groups[verb](id);
          output.result(group, () => groupTable(group));
          return undefined;
        }),
      );
  }
  return groups;
}

function groupTable(g: GroupView): string {
  const { total, pending, done, dead, cancelled } = g.counts;
  return table(
    ["ID", "STATUS", "FAILURE", "TOTAL", "PENDING", "DONE", "DEAD", "CANCELLED", "COMPLETION JOB"],
    [[g.id, g.status, g.failure, total, pending, done, dead, cancelled, g.completionJobId ?? "-"]],
  );
}

function childrenTable(page: GroupChildrenPage): string {
  const rows = page.items.map((c) => [c.id, c.status, c.lastError ?? ""]);
  const next = page.cursor ? `\nmore: --cursor ${page.cursor}` : "";
  return `${table(["ID", "STATUS", "LAST ERROR"], rows)}${next}`;
}
