import type { IncomingMessage, ServerResponse } from "node:http";
import { consoleAsset, isConsolePath, writeAnswer } from "../console/assets.ts";

/**
 * The web console on the local stack: GET/HEAD /console, /console/ and the files listed in
 * console/assets.ts; anything else under /console is a 404, another method a 405 (the API's error
 * shape). The page talks to the API on the same origin. Answers true when the path was the console's.
 */
export async function serveConsole(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<boolean> {
  if (!isConsolePath(path)) return false;
  writeAnswer(req, res, await consoleAsset(req.method ?? "GET", path));
  return true;
}
