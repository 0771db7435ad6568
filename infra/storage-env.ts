import { table } from "./storage";

/** What every function and the pool need to find the table (a name, never a secret). */
export const storage = { SKYFORGE_TABLE: table.name };
