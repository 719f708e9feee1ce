import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parquetWriteFile } from "hyparquet-writer";
import { checkPulled } from "../src/cli/commands/data.ts";
import { readCorpus } from "../src/data/climatecheck.ts";
import { PullError, type PullManifest, pullData } from "../src/data/pull.ts";

let dir = "";
let corpusBytes: Buffer = Buffer.alloc(0);
const claimsBytes = Buffer.from("claim_id,claim\nc1,Sea level is rising\nc2,The sun drives warming\n");
const CORPUS = "climatecheck_publications_corpus.parquet";

/** What the fake hub does: drop the first download mid-body, report a wrong sha256. */
const hub = { dropFirst: false, wrongSha: false, requests: [] as { url: string; range?: string }[] };
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const gitOid = (b: Buffer) => createHash("sha1").update(`blob ${b.length}\0`).update(b).digest("hex");

function serveFile(req: IncomingMessage, res: import("node:http").ServerResponse, body: Buffer): void {
  const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
  const start = m ? Number(m[1]) : 0;
  if (start >= body.length) {
    res.writeHead(416).end();
    return;
  }
  const part = body.subarray(start);
  res.writeHead(m ? 206 : 200, {
    "content-length": part.length,
    etag: `"${sha256(body)}"`,
    ...(m ? { "content-range": `bytes ${start}-${body.length - 1}/${body.length}` } : {}),
  });
  if (hub.dropFirst) {
    // Half the body, then the connection goes away.
    hub.dropFirst = false;
    res.write(part.subarray(0, Math.floor(part.length / 2)), () => res.socket?.end());
    return;
  }
  res.end(part);
}

const server = createServer((req, res) => {
  const url = req.url ?? "";
  if (url === "/api/datasets/t/corpus/tree/main?recursive=true") {
    res.end(
      JSON.stringify([
        { type: "file", path: ".gitattributes", size: 10, oid: "0" },
        { type: "directory", path: "data", size: 0, oid: "1" },
        {
          type: "file",
          path: CORPUS,
          size: 134,
          oid: "pointer",
          lfs: { oid: hub.wrongSha ? "0".repeat(64) : sha256(corpusBytes), size: corpusBytes.length },
        },
      ]),
    );
  } else if (url === "/api/datasets/t/claims/tree/main?recursive=true") {
    res.end(
      JSON.stringify([
        { type: "file", path: "data/claims.csv", size: claimsBytes.length, oid: gitOid(claimsBytes) },
      ]),
    );
  } else if (url.startsWith("/datasets/")) {
    hub.requests.push({ url, range: req.headers.range });
    if (url === `/datasets/t/corpus/resolve/main/${CORPUS}`) serveFile(req, res, corpusBytes);
    else if (url === "/datasets/t/claims/resolve/main/data/claims.csv") serveFile(req, res, claimsBytes);
    else res.writeHead(404).end();
  } else res.writeHead(404).end();
});

let baseUrl = "";
const DATASETS = [
  { repo: "t/claims", folder: "claims" },
  { repo: "t/corpus", folder: "corpus" },
];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "pull-"));
  // A corpus in the ClimateCheck layout, big enough that half a body is many bytes.
  const n = 400;
  const ids = Array.from({ length: n }, (_, i) => `pub-${i}`);
  const file = join(dir, "source.parquet");
  parquetWriteFile({
    filename: file,
    columnData: [
      { name: "abstract_id", data: ids, type: "STRING" },
      { name: "title", data: ids.map((id) => `Title of ${id}`), type: "STRING" },
      {
        name: "abstract",
        data: ids.map((id) => `Abstract ${id}: ${"ocean heat content rises. ".repeat(8)}`),
        type: "STRING",
      },
    ],
    rowGroupSize: 100,
  });
  corpusBytes = readFileSync(file);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.close();
  await rm(dir, { recursive: true, force: true });
});

test("pull resumes a dropped download with Range, verifies checksums, records them and the corpus opens", async () => {
  const out = join(dir, "a");
  hub.requests = [];
  hub.dropFirst = true;
  const r = await pullData({ dir: out, baseUrl, datasets: DATASETS, retries: 2 });
  assert.deepEqual(r.downloaded, ["claims/data/claims.csv", `corpus/${CORPUS}`]);
  // The claims file was the first download, so it was the one cut; its retry asked for the rest only.
  const claimsReqs = hub.requests.filter((q) => q.url.endsWith("claims.csv"));
  assert.equal(claimsReqs.length, 2);
  assert.equal(claimsReqs[0].range, undefined);
  assert.equal(claimsReqs[1].range, `bytes=${Math.floor(claimsBytes.length / 2)}-`);
  assert.deepEqual(await readFile(join(out, "claims/data/claims.csv")), claimsBytes);
  assert.deepEqual(await readFile(join(out, "corpus", CORPUS)), corpusBytes);
  assert.equal(existsSync(join(out, "corpus", `${CORPUS}.part`)), false);

  const m = JSON.parse(await readFile(join(out, "manifest.json"), "utf8")) as PullManifest;
  assert.equal(m.files[`corpus/${CORPUS}`].sha256, sha256(corpusBytes));
  assert.equal(m.files[`corpus/${CORPUS}`].verified, "sha256");
  assert.equal(m.files["claims/data/claims.csv"].verified, "git-oid");
  assert.equal(m.files[`corpus/${CORPUS}`].size, corpusBytes.length);

  const ids: string[] = [];
  for await (const { abstract } of readCorpus(join(out, "corpus", CORPUS))) ids.push(abstract.id);
  assert.equal(ids.length, 400);
  assert.equal(ids[399], "pub-399");
  const check = await checkPulled(out, r.downloaded);
  assert.match(check[0], /2 claims/);

  hub.requests = [];
  const again = await pullData({ dir: out, baseUrl, datasets: DATASETS });
  assert.deepEqual(again.present.length, 2);
  assert.equal(hub.requests.length, 0, "nothing is downloaded twice");
});

test("an interrupted pull leaves a .part that the next run continues from", async () => {
  const out = join(dir, "b");
  hub.dropFirst = true;
  await assert.rejects(
    pullData({ dir: out, baseUrl, datasets: [DATASETS[1]], retries: 0 }),
    (e: unknown) => e instanceof PullError && /run again to resume/.test(e.message),
  );
  const part = join(out, "corpus", `${CORPUS}.part`);
  const kept = (await stat(part)).size;
  assert.ok(kept > 0 && kept < corpusBytes.length);
  hub.requests = [];
  await pullData({ dir: out, baseUrl, datasets: [DATASETS[1]], retries: 0 });
  assert.deepEqual(
    hub.requests.map((q) => q.range),
    [`bytes=${kept}-`],
  );
  assert.deepEqual(await readFile(join(out, "corpus", CORPUS)), corpusBytes);
});

test("a checksum mismatch is an error naming both sums, and nothing is kept", async () => {
  const out = join(dir, "c");
  hub.wrongSha = true;
  try {
    await assert.rejects(
      pullData({ dir: out, baseUrl, datasets: [DATASETS[1]] }),
      (e: unknown) =>
        e instanceof PullError &&
        e.message.includes(
          `checksum mismatch: expected sha256 ${"0".repeat(64)}, got ${sha256(corpusBytes)}`,
        ),
    );
  } finally {
    hub.wrongSha = false;
  }
  assert.equal(existsSync(join(out, "corpus", CORPUS)), false);
  assert.equal(existsSync(join(out, "corpus", `${CORPUS}.part`)), false);
});

test("a hub error names the URL and the status", async () => {
  await assert.rejects(
    pullData({ dir: join(dir, "d"), baseUrl, datasets: [{ repo: "t/missing", folder: "x" }] }),
    (e: unknown) => e instanceof PullError && /api\/datasets\/t\/missing.*HTTP 404/.test(e.message),
  );
});
