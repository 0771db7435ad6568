import { claims, table } from "./storage";

/** What every function and the pool need to find the table and the claims bucket (names, never secrets). */
export const storage = { SKYFORGE_TABLE: table.name, SKYFORGE_CLAIMS_BUCKET: claims.name };
