import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { ListQueuesCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CLAIMS_BUCKET, dynamoClient, LOCAL_AWS, s3Client, sqsClient } from "../../../local/emulators.ts";
import { consoleBrowser, REBOUND, UI_MS } from "../../support/console-browser.ts";
import {
  bannerEndpoints,
  blankPageServer,
  listeningPorts,
  portOf,
  rawCall,
  sigV4,
} from "../../support/emulator-ports.ts";
import {
  amzJson,
  claimKey,
  createProbeTable,
  type EmulatorClients,
  emulatorProbes,
  itemExists,
  OTHER_KEY,
  objectExists,
  PROBE_TABLE,
  refusedVariants,
} from "../../support/emulator-probes.ts";

/**
 * Every emulator port `npm start` opens (dynalite; fauxqs for SQS and S3) answers the project's SDK
 * clients only: a web page (it sends Origin, preflights too), a rebinding Host and any credential
 * but the local one get 403 and change nothing (local/emulator-guard.ts). Checked against a real
 * `npm start`, with raw requests from Node and from a page in Debian's chromium, and each effect
 * looked for afterwards through the SDK with the right credentials.
 */
const env = consoleBrowser();
let c: EmulatorClients;
let serial = 0;
const unique = (what: string) => `security-${what}-${process.pid}-${++serial}`;

/** What a page's fetch() may carry: strings only, so it crosses into the page as it is. */
interface PageInit {
  method: string;
  mode?: "cors" | "no-cors";
  headers?: Record<string, string>;
  body?: string;
}

/** fetch() in the page: its answer, or the error a refused CORS preflight makes of it. */
function pageFetch(page: Page, url: string, init: PageInit) {
  return page.evaluate(
    async ({ url, init }) => {
      try {
        const r = await fetch(url, init);
        return { status: r.status, body: await r.text() };
      } catch (err) {
        return { error: String(err) };
      }
    },
    { url, init },
  );
}

const refusedByThePreflight = { error: expect.stringContaining("Failed to fetch") };
const sdkLike = (service: string, target: string) => ({ ...sigV4("local", service), ...amzJson(target) });
const scanJobs = (service = "dynamodb") => ({
  method: "POST",
  headers: sdkLike(service, "DynamoDB_20120810.Scan"),
  body: JSON.stringify({ TableName: "skyforge-jobs" }),
});

describe("the emulators of npm start", () => {
  beforeAll(async () => {
    const endpoints = bannerEndpoints(env.stack().output());
    c = {
      endpoints,
      dynamodb: dynamoClient(endpoints.dynamodb),
      sqs: sqsClient(endpoints.sqs),
      s3: s3Client(endpoints.sqs),
    };
    await createProbeTable(c.dynamodb);
  });
  afterAll(() => {
    for (const client of [c?.dynamodb, c?.sqs, c?.s3]) client?.destroy();
  });

  describe("each emulator port npm start opens", () => {
    it("is dynalite's or fauxqs's: the stack listens on nothing else but its HTTP API and its realtime broker", () => {
      // The broker takes MQTT from any page holding a token (test/e2e/browser/realtime-browser.ts).
      const realtime = /^ +realtime +ws:\/\/127\.0\.0\.1:(\d+)\//m.exec(env.stack().output())?.[1];
      const expected = [env.stack().url, c.endpoints.dynamodb, c.endpoints.sqs].map(portOf);
      expected.push(Number(realtime));
      expect(listeningPorts(env.stack().pid)).toEqual(new Set(expected));
    });

    describe.each(emulatorProbes(() => c))("$name", (probe) => {
      it.each(refusedVariants)("with $name: 403, and nothing happens", async (variant) => {
        const id = unique("refused");
        const request = variant.change(probe.request(id), portOf(probe.endpoint()), probe.service);
        const answer = await rawCall(probe.endpoint(), request);
        expect([answer.status, JSON.parse(answer.body).__type]).toEqual([403, "AccessDeniedException"]);
        expect(answer.headers["access-control-allow-origin"]).toBeUndefined();
        expect(await probe.happened(id)).toBe(false);
      });

      it.each(["127.0.0.1", "localhost", "[::1]"])(
        "as the SDK sends it, to Host %s:<port>: it happens",
        async (name) => {
          const id = unique("allowed");
          const request = probe.request(id);
          const host = `${name}:${portOf(probe.endpoint())}`;
          const answer = await rawCall(probe.endpoint(), {
            ...request,
            headers: { ...request.headers, host },
          });
          expect(answer.status).toBe(200);
          expect(await probe.happened(id)).toBe(true);
        },
      );
    });

    it("refuses the SDK itself signing with other credentials (a developer's real keys)", async () => {
      const other = {
        ...LOCAL_AWS,
        credentials: { accessKeyId: OTHER_KEY, secretAccessKey: "x" },
        maxAttempts: 1,
      };
      const id = unique("sdk");
      const calls = [
        new DynamoDBClient({ ...other, endpoint: c.endpoints.dynamodb }).send(
          new GetItemCommand({ TableName: PROBE_TABLE, Key: { pk: { S: id } } }),
        ),
        new SQSClient({ ...other, endpoint: c.endpoints.sqs }).send(new ListQueuesCommand({})),
        new S3Client({ ...other, endpoint: c.endpoints.sqs, forcePathStyle: true }).send(
          new PutObjectCommand({ Bucket: CLAIMS_BUCKET, Key: claimKey(id), Body: "planted" }),
        ),
      ];
      const status = (err: { $metadata?: { httpStatusCode?: number } }) => err.$metadata?.httpStatusCode;
      expect(await Promise.all(calls.map((call) => call.then(() => 200, status)))).toEqual([403, 403, 403]);
      expect(await objectExists(c.s3, claimKey(id))).toBe(false);
    });
  });

  describe("a page in chromium", () => {
    let origin: Awaited<ReturnType<typeof blankPageServer>>;
    let page: Page | undefined;
    beforeAll(async () => {
      origin = await blankPageServer();
    });
    afterAll(() => origin?.close());
    afterEach(() => page?.close());
    /** A page on a loopback origin, as a local dev server's would be: no Private Network Access check. */
    const openPage = async () => {
      page = await env.browser().newPage();
      await page.goto(origin.url);
      return page;
    };

    it("on a loopback origin neither reads nor writes dynalite (Scan, PutItem)", async () => {
      const page = await openPage();
      expect(await pageFetch(page, c.endpoints.dynamodb, scanJobs())).toEqual(refusedByThePreflight);
      const id = unique("page-item");
      const put = await pageFetch(page, c.endpoints.dynamodb, {
        method: "POST",
        headers: sdkLike("dynamodb", "DynamoDB_20120810.PutItem"),
        body: JSON.stringify({ TableName: PROBE_TABLE, Item: { pk: { S: id } } }),
      });
      expect(put).toEqual(refusedByThePreflight);
      expect(await itemExists(c.dynamodb, id)).toBe(false);
    });

    it("on a loopback origin neither stores nor deletes claim objects in fauxqs's S3 (POST ?delete, PUT, form)", async () => {
      const page = await openPage();
      const bucketUrl = `${c.endpoints.sqs}/${CLAIMS_BUCKET}`;
      // A text/plain POST needs no preflight: the page can't read the answer, only cause the effect.
      const kept = claimKey(unique("kept"));
      await c.s3.send(new PutObjectCommand({ Bucket: CLAIMS_BUCKET, Key: kept, Body: "the job's payload" }));
      const body = `<Delete><Object><Key>${kept}</Key></Object></Delete>`;
      const del = await pageFetch(page, `${bucketUrl}?delete`, {
        method: "POST",
        mode: "no-cors",
        headers: { "content-type": "text/plain" },
        body,
      });
      expect(del).toEqual({ status: 0, body: "" });
      const still = await c.s3.send(new GetObjectCommand({ Bucket: CLAIMS_BUCKET, Key: kept }));
      expect(await still.Body?.transformToString()).toBe("the job's payload");

      const putKey = claimKey(unique("page-put"));
      const put = await pageFetch(page, `${bucketUrl}/${putKey}`, { method: "PUT", body: "planted" });
      expect(put).toEqual(refusedByThePreflight);
      expect(await objectExists(c.s3, putKey)).toBe(false);

      // A browser form upload (S3's POST Object): multipart, no preflight, the page navigates.
      const formKey = claimKey(unique("page-form"));
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url() === bucketUrl, { timeout: UI_MS }),
        page.evaluate(`(() => {
          const form = Object.assign(document.createElement("form"),
            { method: "POST", action: ${JSON.stringify(bucketUrl)}, enctype: "multipart/form-data" });
          form.innerHTML = '<input name="key" value=${JSON.stringify(formKey)}><textarea name="file">planted</textarea>';
          document.body.append(form);
          form.submit();
        })()`),
      ]);
      expect(answer.status()).toBe(403);
      expect(await objectExists(c.s3, formKey)).toBe(false);
    });

    it("served through a rebinding Host reads neither emulator (SQS ListQueues, dynalite Scan, fauxqs's listing)", async () => {
      for (const [service, endpoint] of Object.entries(c.endpoints)) {
        // The attacker's name rebound to 127.0.0.1: the page is then on the emulator's own origin
        // (and on loopback, so no Private Network Access check stands in the way).
        const at = `http://${REBOUND}:${portOf(endpoint)}`;
        page = await env.browser().newPage();
        expect((await page.goto(`${at}/_fauxqs/queues`))?.status()).toBe(403);
        const init =
          service === "sqs"
            ? { method: "POST", headers: sdkLike("sqs", "AmazonSQS.ListQueues"), body: "{}" }
            : scanJobs();
        const answer = await pageFetch(page, "/", init);
        expect(answer).toMatchObject({ status: 403, body: expect.stringContaining("AccessDeniedException") });
        expect(JSON.stringify(answer)).not.toContain("skyforge-");
        await page.close();
      }
    });
  });
});
