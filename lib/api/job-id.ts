import { ClientError } from "../errors.ts";
import { clip, type HttpEvent, pathParam } from "./http.ts";

/**
 * Job ids are ULIDs (lib/producer/enqueue.ts). Anything else names no job: a 404 answered without a
 * read, so an id past DynamoDB's key-size limit never reaches DynamoDB.
 */
const JOB_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** The `{id}` of a job route, or a 404 for a string that can't be a job's id. */
export function jobId(event: HttpEvent): string {
  const id = pathParam(event, "id");
  if (!JOB_ID.test(id)) throw new ClientError("not_found", `job ${clip(id)} not found`);
  return id;
}
