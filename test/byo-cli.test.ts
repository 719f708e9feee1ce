// End to end with a profile: ingest, retrieve, check, predict (tasks 1 and 2), classify and serve through the CLI,
// on the tiny ONNX models (dense retrieval, two cross-encoders, NLI verification) and a loopback chat model for
// the narratives; then the errors a wrong profile gives.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { readTask1Predictions } from "../src/data/climatecheck.ts";
import { loadTransformers, TRANSFORMERS_PACKAGE } from "../src/encoders/onnx-folder.ts";
import { readManifest } from "../src/index/schema.ts";
import { type ChatServer, startChatServer } from "./chat-server-fixture.ts";
import { CLAIMS_CSV, tempDir, writeCorpus } from "./retrieval-fixtures.ts";
import { tinyModels } from "./tiny-models-fixture.ts";

const runtime = await loadTransformers().then(
  () => ({ skip: false }),
  () => ({ skip: `${TRANSFORMERS_PACKAGE} is not installed (optional; see docs/cli.md, verify, onnx)` }),
);

const exec = promisify(execFile);
const CLI = ["--import", "tsx", "src/cli/main.ts"];
const dir = tempDir("byo-cli-");
const env = () => ({ ...process.env, CLIMATECHECK_HOME: join(dir, "home") });
const run = (args: string[]) => exec(process.execPath, [...CLI, ...args], { env: env() });
/** A run expected to fail: its exit code and stderr. */
const fails = async (args: string[]) => {
  try {
    await run(args);
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, stderr: err.stderr };
  }
  assert.fail(`expected ${args.join(" ")} to fail`);
};

let server: ChatServer;
let chatUrl = "";
const index = join(dir, "index");
const profilePath = join(dir, "profile.json");
let profile: Record<string, unknown> = {};

before(async () => {
  // Narratives: group 1 when the claim says "warming", else no narrative.
  server = await startChatServer((prompt) =>
    /\bwarming\b/i.test(prompt.split("Claim:").pop() ?? "") ? { codes: ["1.1"] } : { codes: ["0_0"] },
  );
  chatUrl = server.baseUrl;
  if (runtime.skip) return;
  const m = tinyModels();
  profile = {
    retrieval: {
      backend: "onnx",
      dense: { modelDir: m.embedding, queryPrefix: "query: ", passagePrefix: "passage: ", maxLength: 64 },
      rerank: { models: [{ modelDir: m.crossEncoder }, { modelDir: m.crossEncoder, maxLength: 8 }], topN: 4 },
    },
    verification: { backend: "onnx", modelDir: m.nli },
    narratives: { backend: "chat", baseUrl: chatUrl, model: "tiny", retries: 0 },
  };
  await writeFile(profilePath, JSON.stringify(profile));
  await writeFile(join(dir, "claims.csv"), CLAIMS_CSV);
  writeCorpus(dir);
});
after(() => server.close());

test("ingest --config embeds the abstracts with the profile's dense model", runtime, async () => {
  const { stderr } = await run([
    "ingest",
    join(dir, "corpus.jsonl"),
    "--index",
    index,
    "--no-vectors",
    "--config",
    profilePath,
  ]);
  assert.match(stderr, /built .*: 8 added/);
  assert.deepEqual(Object.keys(readManifest(index).vectors), ["dense"]);
  assert.equal(readManifest(index).vectors.dense.encoder, "onnx:embedding/mean+norm/64");
});

test("retrieve, check, predict and classify with the profile", runtime, async () => {
  const out = join(dir, "retrieved.csv");
  const r = await run([
    "retrieve",
    "--claims",
    join(dir, "claims.csv"),
    "--index",
    index,
    "--out",
    out,
    "--k",
    "3",
    "--config",
    profilePath,
  ]);
  assert.match(
    r.stderr,
    /\(bm25\+dense:onnx:embedding\/mean\+norm\/64 \(rrf k=60\) > onnx:cross-encoder, onnx:cross-encoder on top 4 \(rrf k=60\)\)/,
  );
  const preds = await readTask1Predictions(out);
  assert.equal(preds.length, 6 * 3);

  const c = await run([
    "check",
    "Arctic warming melts sea ice",
    "--index",
    index,
    "--k",
    "2",
    "--json",
    "--config",
    profilePath,
  ]);
  const result = JSON.parse(c.stdout) as {
    narratives: { code: string; probability: number }[];
    p_narrative: number;
    evidence: { label: string }[];
  };
  assert.deepEqual(
    result.narratives.map((n) => [n.code, n.probability]),
    [["1_1", 1]],
  );
  assert.equal(result.p_narrative, 1);
  assert.equal(result.evidence.length, 2);
  // The tiny NLI model sees no "true"/"false" in these abstracts: neutral wins, as its rows say.
  for (const e of result.evidence) assert.equal(e.label, "Not Enough Information");

  const t1 = join(dir, "task1.csv");
  await run([
    "predict",
    "--task",
    "1",
    "--claims",
    join(dir, "claims.csv"),
    "--index",
    index,
    "--out",
    t1,
    "--k",
    "2",
    "--config",
    profilePath,
  ]);
  const rows = await readTask1Predictions(t1);
  assert.equal(rows.length, 12);
  // predict ranks as retrieve does (same profile, same index).
  const top2 = preds.filter((p) => p.rank <= 2).map((p) => `${p.claimId}:${p.abstractId}`);
  assert.deepEqual(
    rows.map((p) => `${p.claimId}:${p.abstractId}`),
    top2,
  );

  const t2 = join(dir, "task2.csv");
  await run([
    "predict",
    "--task",
    "2",
    "--claims",
    join(dir, "claims.csv"),
    "--out",
    t2,
    "--config",
    profilePath,
  ]);
  const lines = (await readFile(t2, "utf8")).trim().split("\n").slice(1);
  // c3, c4 and c6 say "warming".
  assert.deepEqual(
    lines.map((l) => l.split(",")[1]),
    ["0_0", "0_0", "1_1", "1_1", "0_0", "1_1"],
  );
  const cl = join(dir, "classified.csv");
  await run(["classify", "--claims", join(dir, "claims.csv"), "--out", cl, "--config", profilePath]);
  assert.equal(await readFile(cl, "utf8"), await readFile(t2, "utf8"));
});

test("serve --config names every stage's backend at start-up and in /healthz", runtime, async () => {
  const child = spawn(
    process.execPath,
    [...CLI, "serve", "--port", "0", "--workers", "1", "--index", index, "--config", profilePath],
    { env: env(), stdio: ["ignore", "ignore", "pipe"] },
  );
  try {
    let err = "";
    const line = await new Promise<string>((resolve, reject) => {
      child.stderr.on("data", (d) => {
        err += d;
        const l = err.split("\n").find((x) => x.includes('"listening"'));
        if (l) resolve(l);
      });
      child.on("exit", () => reject(new Error(`serve exited: ${err}`)));
    });
    const info = JSON.parse(line) as { url: string; backends: Record<string, string> };
    const want = {
      narratives: "chat:tiny/flat",
      retrieval:
        "bm25+dense:onnx:embedding/mean+norm/64 (rrf k=60) > onnx:cross-encoder, onnx:cross-encoder on top 4 (rrf k=60)",
      verification: "onnx:nli",
    };
    assert.deepEqual(info.backends, want);
    const h = (await (await fetch(`${info.url}/healthz`, { headers: { connection: "close" } })).json()) as {
      backends: Record<string, string>;
    };
    assert.deepEqual(h.backends, want);
  } finally {
    child.kill("SIGTERM");
  }
});

test(
  "a wrong profile: the stage, the path or URL and what was expected; nothing written",
  runtime,
  async () => {
    const bad = join(dir, "bad.json");
    const out = join(dir, "never.csv");
    const claims = join(dir, "claims.csv");
    const m = tinyModels();
    const write = (p: object) => writeFile(bad, JSON.stringify({ ...profile, ...p }));

    await write({ retrieval: { backend: "onnx", dense: { modelDir: join(dir, "missing") } } });
    let f = await fails(["retrieve", "--claims", claims, "--index", index, "--out", out, "--config", bad]);
    assert.equal(f.code, 2);
    assert.match(f.stderr, /missing: retrieval \(dense\): no such model folder/);

    await write({ retrieval: { backend: "onnx", rerank: { models: [{ modelDir: m.nli }] } } });
    f = await fails(["retrieve", "--claims", claims, "--index", index, "--out", out, "--config", bad]);
    assert.equal(f.code, 2);
    assert.match(
      f.stderr,
      /nli: retrieval \(re-ranking\): expected a cross-encoder with output logits \[batch, 1\], the model gives logits \[1, 3\]/,
    );

    // An endpoint that answers with no JSON.
    const broken = await startChatServer(() => "no json here");
    try {
      await write({ narratives: { backend: "chat", baseUrl: broken.baseUrl, model: "m", retries: 0 } });
      f = await fails(["predict", "--task", "2", "--claims", claims, "--out", out, "--config", bad]);
      assert.match(
        f.stderr,
        new RegExp(
          `narratives \\(chat\\), ${broken.baseUrl}/chat/completions: chat completion failed after 1 attempt\\(s\\): invalid JSON answer`,
        ),
      );
    } finally {
      broken.close();
    }
    // An endpoint that does not answer in time.
    const slow = await startChatServer(
      () => new Promise((r) => setTimeout(() => r({ codes: ["0_0"] }), 3000)),
    );
    try {
      await write({
        narratives: { backend: "chat", baseUrl: slow.baseUrl, model: "m", retries: 0, timeoutMs: 200 },
      });
      f = await fails(["classify", "--claims", claims, "--out", out, "--config", bad]);
      assert.equal(f.code, 1);
      assert.match(
        f.stderr,
        /narratives \(chat\), .*: chat completion failed after 1 attempt\(s\): timed out after 200 ms/,
      );
    } finally {
      slow.close();
    }
    assert.equal(existsSync(out), false);
  },
);
