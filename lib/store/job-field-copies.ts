import type { JobView } from "../job/schemas.ts";
import {
  type FieldValues,
  type ItemFieldName,
  JOB_FIELDS,
  type JobFieldName,
  type JobItem,
  type JobSeed,
  type MessageFieldName,
  type ResentFieldName,
  type SeedFieldName,
  type ViewedItem,
} from "./job-fields.ts";

/**
 * The copies of a job's fields, each derived from the map (lib/store/job-fields.ts): plan's item and
 * message, a message sent again from the item, a claim's seed from a message, and the view.
 */

/** A value counts as absent when undefined, false, "" or an empty list: none of these is ever stored. */
const present = (value: unknown): boolean =>
  value !== undefined && value !== false && value !== "" && !(Array.isArray(value) && value.length === 0);

type Entry = (typeof JOB_FIELDS)[JobFieldName];
const entries = Object.entries(JOB_FIELDS) as [JobFieldName, Entry][];
const namesWhere = <K extends JobFieldName>(test: (entry: Entry) => boolean): readonly K[] =>
  entries.filter(([, entry]) => test(entry)).map(([name]) => name as K);

const ITEM_FIELDS = namesWhere<ItemFieldName>((f) => f.item !== undefined);
export const MESSAGE_FIELDS = namesWhere<MessageFieldName>((f) => f.message !== undefined);
const RESENT_FIELDS = namesWhere<ResentFieldName>((f) => f.message === "always");
const SEED_FIELDS = namesWhere<SeedFieldName>((f) => f.seed !== undefined);

/** The names of `T`'s fields among `K`. */
type Among<T, K> = Pick<T, Extract<keyof T, K>>;

/** The present values among `names`; an inline payload stays out where the payload has its own item. */
function copy<T extends object, K extends JobFieldName>(from: T, names: readonly K[], forItem: boolean) {
  const values = from as Partial<Record<JobFieldName, unknown>>;
  const out: Partial<Record<K, unknown>> = {};
  for (const name of names) {
    const value = values[name];
    if (!present(value)) continue;
    if (forItem && JOB_FIELDS[name].item === "inline" && values.payloadRef) continue;
    out[name] = value;
  }
  return out as Among<T, K>;
}

/** What the item stores of a job's fields (plan's item; a run without a claim records its seed). */
export const itemFields = <T extends object>(fields: T) => copy(fields, ITEM_FIELDS, true);

/** What the message carries of a job's fields (plan's message). */
export const messageFields = <T extends object>(fields: T) => copy(fields, MESSAGE_FIELDS, false);

/** What every message carries of the item's fields: a message sent again from the item. */
export const resentFields = (item: JobItem) => copy(item, RESENT_FIELDS, false);

/** A claim's seed from a message, or what a seed writes: what the item keeps of the fields it carries. */
export const seedFields = (from: FieldValues<MessageFieldName> | JobSeed): JobSeed =>
  copy(from, SEED_FIELDS, true) as JobSeed;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The view of the item's fields, by each field's rule (payload and result are given apart, loaded).
 * Every field a JobView requires is a required field of the item shown as it is or as a time
 * (test/unit/job-fields.test.ts checks a bare item's view against JobView's schema).
 */
export function viewFields(item: JobItem): Omit<JobView, "payload"> {
  const values = item as Partial<Record<JobFieldName, unknown>>;
  const view: Record<string, unknown> = {};
  for (const [name, entry] of entries) {
    const rule = entry.view;
    const value = values[name];
    if (rule === undefined) continue;
    if (rule === "same") {
      if (present(value)) view[name] = value;
    } else if (rule === "time") {
      if (value !== undefined) view[name] = iso(value as number);
    } else Object.assign(view, (rule as (v: unknown, i: ViewedItem) => Partial<JobView>)(value, item));
  }
  return view as Omit<JobView, "payload">;
}
