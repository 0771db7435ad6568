import * as z from "zod";
import type { GroupStatus } from "./group-status.ts";
import { BoundedJson } from "./json-depth.ts";
import { MAX_CURSOR_CHARS } from "./schemas.ts";

/** Children one request may carry (create or add); a group may grow past it by adding more. */
export const MAX_GROUP_CHILDREN = 1000;
/** An unsealed group seals itself as failed after this long unless the request says otherwise. */
export const DEFAULT_GROUP_EXPIRY_SECONDS = 24 * 3600;
export const MAX_GROUP_EXPIRY_SECONDS = 7 * 24 * 3600;

/** A group's id: the caller's, or a ULID. It ends up in table keys, so it is short and plain. */
export const GroupId = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,80}$/, "group ids are 1-80 letters, digits, '_', '-', '.' or ':'");

export const groupFailureModes = ["continue", "terminate"] as const;
export type GroupFailureMode = (typeof groupFailureModes)[number];

export const OnComplete = z
  .object({
    kind: z.string().min(1).max(64),
    payload: BoundedJson.optional(),
    queue: z.string().min(1).max(40).optional(),
  })
  .strict();
export type OnComplete = z.infer<typeof OnComplete>;

/** The children are checked one by one against the enqueue contract, so the envelope takes any values. */
const Children = z.array(z.unknown()).max(MAX_GROUP_CHILDREN, {
  message: `at most ${MAX_GROUP_CHILDREN} children per request; add more with POST /groups/{id}/children`,
});

export const CreateGroupRequest = z
  .object({
    id: GroupId.optional(),
    children: Children.default([]),
    onComplete: OnComplete,
    failure: z.enum(groupFailureModes).default("continue"),
    /** Sealed at once (the default): no more children. false: add more, then POST /groups/{id}/seal. */
    sealed: z.boolean().default(true),
    expiresInSeconds: z.number().int().min(60).max(MAX_GROUP_EXPIRY_SECONDS).optional(),
  })
  .strict();
export type CreateGroupRequest = z.input<typeof CreateGroupRequest>;
export type ParsedGroupRequest = z.output<typeof CreateGroupRequest>;

export const AddChildrenRequest = z
  .object({ children: Children.min(1), seal: z.boolean().default(false) })
  .strict();
export type AddChildrenRequest = z.input<typeof AddChildrenRequest>;

export const groupChildStatuses = ["pending", "done", "dead", "cancelled"] as const;
export type GroupChildStatus = (typeof groupChildStatuses)[number];

export const ListChildrenQuery = z
  .object({
    status: z.enum(groupChildStatuses).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(50),
    cursor: z
      .string()
      .max(MAX_CURSOR_CHARS)
      .regex(/^(?:[0-9]{1,7}(?:\.[0-9]{1,2})?)?$/, "not a cursor this API returned")
      .optional(),
  })
  .strict();
/** A page request for a group's children, as code gives it (the API parses ListChildrenQuery into it). */
export interface ChildrenQuery {
  status?: GroupChildStatus;
  limit?: number;
  cursor?: string;
}

/** Children per recorded status; `pending` is every child not yet terminal. */
export interface GroupCounts {
  total: number;
  pending: number;
  done: number;
  dead: number;
  cancelled: number;
}

export interface GroupView {
  id: string;
  status: GroupStatus;
  failure: GroupFailureMode;
  counts: GroupCounts;
  onComplete: { kind: string; queue?: string };
  completionJobId?: string;
  /** Why the group failed: the child that made a terminate group fail, or its expiry before the seal. */
  failedChild?: { id: string; error: string };
  expired?: boolean;
  parentJobId?: string;
  createdAt: string;
  sealedAt?: string;
  expiresAt?: string;
  finishedAt?: string;
}

export interface GroupChildView {
  id: string;
  status: GroupChildStatus;
  result?: unknown;
  lastError?: string;
  /** A result kept in the claims bucket (over 8 KiB) is left out of pages: GET /jobs/{id} shows it. */
  omitted?: ["result"];
}

export interface GroupChildrenPage {
  items: GroupChildView[];
  cursor?: string;
}
