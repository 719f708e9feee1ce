/**
 * `climatecheck queue` against a real redis-server (one per test): the collected file equals single-process predict
 * byte for byte through a SIGKILLed worker, a Redis restart (AOF), SIGTERM and failed-then-retried chunks; a worker
 * with another index or model refuses; bad claims fail at submit; passwords and TLS work and never show.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Redis } from "ioredis";
import { ingest } from "../src/index/ingest.ts";
import { connectRedis, RUNS_KEY } from "../src/queue/redis.ts";
import { type RunStatus, runStatus } from "../src/queue/status.ts";
import { startChatServer } from "./chat-server-fixture.ts";
import { HAS_REDIS, type RedisOptions, startRedis, type TestRedis } from "./redis-fixture.ts";
import { CLAIMS_CSV, tempDir, writeCorpus } from "./retrieval-fixtures.ts";

const CLI = ["--import", "tsx", "src/cli/main.ts"];
const dir = tempDir("cli-queue-");
// k = 2 rows per claim: 4 chat requests per 2-claim chunk.
const CLAIMS = `${CLAIMS_CSV}c7,Glacier melt drives sea level rise
c8,Solar irradiance explains the warming since 1950
`;
const CHUNKS = 4;
const claims = join(dir, "claims.csv");
const indexA = join(dir, "index-a");
const indexB = join(dir, "index-b");
const env = (more: Record<string, string> = {}) => ({
  ...process.env,
  CLIMATECHECK_HOME: join(dir, "home"),
  CLIMATECHECK_REDIS: "",
  ...more,
});

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}
function cli(args: string[], more: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...CLI, ...args], { env: env(more) }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A worker process whose stderr is kept; `until(re)` resolves when a line matches. */
function worker(args: string[], more: Record<string, string> = {}) {
  const child: ChildProcess = spawn(process.execPath, [...CLI, "queue", "work", ...args], {
    env: env(more),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const waiters: { re: RegExp; resolve(): void }[] = [];
  child.stderr?.on("data", (d) => {
    stderr += d;
    for (const w of waiters.splice(0)) (w.re.test(stderr) ? w.resolve : () => waiters.push(w))();
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return {
    child,
    exited,
    stderr: () => stderr,
    until: (re: RegExp) =>
      new Promise<void>((resolve) => (re.test(stderr) ? resolve() : waiters.push({ re, resolve }))),
  };
}

/**
 * A chat verifier (Refutes when the prompt mentions the sun, else Supports) with its config file; `hold(n)` keeps
 * request n unanswered until release(), `fail` answers HTTP 500 for matching prompts.
 */
async function chat(name: string) {
  const state = {
    requests: 0,
    holdAt: 0,
    fail: undefined as RegExp | undefined,
    held: () => {},
    release: () => {},
  };
  const server = await startChatServer(async (prompt) => {
    const n = ++state.requests;
    if (state.fail?.test(prompt)) throw new Error("model overloaded");
    if (n === state.holdAt)
      await new Promise<void>((r) => {
        state.release = r;
        state.held();
      });
    return /\bsun\b/.test(prompt)
      ? { label: "Refutes", confidence: 0.9, rationale: [0] }
      : { label: "Supports", confidence: 0.8, rationale: [0] };
  });
  const config = join(dir, `${name}.json`);
  await writeFile(
    config,
    JSON.stringify({ backend: "chat", baseUrl: server.baseUrl, model: "tiny", retries: 0 }),
  );
  const held = (n: number) => {
    state.holdAt = n;
    return new Promise<void>((r) => {
      state.held = r;
    });
  };
  return { state, config, held, close: server.close };
}

const task1 = (config: string, more: string[] = []) => [
  "--task",
  "1",
  "--claims",
  claims,
  "--index",
  indexA,
  "--k",
  "2",
  "--config",
  config,
  ...more,
];

async function submit(url: string, args: string[]): Promise<string> {
  const r = await cli(["queue", "submit", "--redis", url, "--chunk-size", "2", ...args]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
}

/** Status in this process (the CLI's text and JSON output are run once each below). */
async function status(url: string, run: string): Promise<RunStatus> {
  const redis = await connectRedis(url);
  try {
    return await runStatus(redis, run);
  } finally {
    redis.disconnect();
  }
}

/** The run's chunk counts (none active or waiting to retry). */
async function chunksAre(
  url: string,
  run: string,
  c: { total: number; waiting: number; done: number; failed: number },
): Promise<RunStatus> {
  const s = await status(url, run);
  assert.deepEqual(s.chunks, {
    total: c.total,
    waiting: c.waiting,
    active: 0,
    retrying: 0,
    done: c.done,
    failed: c.failed,
  });
  return s;
}

let reference1: Buffer;
let reference2: Buffer;

/** A task 1 run on its own redis-server and chat verifier, cleaned up after `body`. */
async function task1Run(
  name: string,
  options: RedisOptions,
  extra: string[],
  body: (r: { redis: TestRedis; c: Awaited<ReturnType<typeof chat>>; run: string }) => Promise<void>,
): Promise<void> {
  const redis = await startRedis(options);
  const c = await chat(name);
  try {
    await body({ redis, c, run: await submit(redis.url, task1(c.config, extra)) });
  } finally {
    c.close();
    await redis.cleanup();
  }
}

/** collect writes predict's task 1 file. */
async function collectsPredictFile(
  url: string,
  run: string,
  out: string,
  more: string[] = [],
): Promise<void> {
  const col = await cli(["queue", "collect", "--redis", url, "--run", run, "--out", out, ...more]);
  assert.equal(col.code, 0, col.stderr);
  assert.deepEqual(await readFile(out), reference1);
}

describe("climatecheck queue", {
  skip: !HAS_REDIS && "redis-server is not installed",
  concurrency: true,
}, () => {
  before(async () => {
    await writeFile(claims, CLAIMS);
    await ingest(writeCorpus(dir), indexA, { vectors: [] });
    await ingest(writeCorpus(dir), indexB, { vectors: [] });
    const c = await chat("reference");
    const [p1, p2] = await Promise.all([
      cli(["predict", ...task1(c.config, ["--out", join(dir, "ref1.csv"), "--workers", "0"])]),
      cli(["predict", "--task", "2", "--fast", "--claims", claims, "--out", join(dir, "ref2.csv")]),
    ]);
    c.close();
    assert.equal(p1.code, 0, p1.stderr);
    assert.equal(p2.code, 0, p2.stderr);
    reference1 = await readFile(join(dir, "ref1.csv"));
    reference2 = await readFile(join(dir, "ref2.csv"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test("submit is idempotent, collect refuses an incomplete run, bad claims fail at submit", async () => {
    const redis = await startRedis();
    try {
      const task2 = ["queue", "submit", "--redis", redis.url, "--task", "2", "--fast", "--claims"];
      const first = await cli([...task2, claims]);
      const again = await cli([...task2, claims]);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(again.stdout, first.stdout, "the same inputs name the same run");
      assert.match(again.stderr, /submitted already: 0 chunks added/);
      const run = first.stdout.trim();
      await chunksAre(redis.url, run, { total: 1, waiting: 1, done: 0, failed: 0 });

      const out = join(dir, "incomplete.csv");
      const c = await cli(["queue", "collect", "--redis", redis.url, "--run", run, "--out", out]);
      assert.equal(c.code, 2);
      assert.match(c.stderr, /incomplete: 1 chunk\(s\) not done \(chunk-000000\)/);
      assert.equal(existsSync(out), false);

      const noColumn = join(dir, "no-column.csv");
      const duplicate = join(dir, "duplicate.csv");
      await writeFile(noColumn, "claim_id,text\nc1,Sea level rise is accelerating\n");
      await writeFile(
        duplicate,
        "claim_id,claim\nc1,Sea level rise is accelerating\nc1,The sun causes warming\n",
      );
      for (const [file, message] of [
        [noColumn, /no-column\.csv.*claim/],
        [duplicate, /duplicate\.csv, line 3, field "claim_id": duplicate claim id "c1"/],
      ] as const) {
        const bad = await cli([...task2, file]);
        assert.equal(bad.code, 2, bad.stderr);
        assert.match(bad.stderr, message);
        assert.equal(bad.stderr.trim().split("\n").length, 1, bad.stderr);
      }
    } finally {
      await redis.cleanup();
    }
  });

  test("two workers, one SIGKILLed mid-chunk: its chunk comes back and the file equals predict's", async () => {
    await task1Run("killed", {}, [], async ({ redis, c, run }) => {
      // Request 7 is in the second chunk: worker A has finished chunk 0 and hangs in chunk 1.
      const held = c.held(7);
      const args = ["--redis", redis.url, "--index", indexA, "--lock-duration", "1500", "--exit-when-idle"];
      const a = worker(args);
      await held;
      const b = worker(args);
      await b.until(/working on run/);
      a.child.kill("SIGKILL");
      await a.exited;
      c.state.release();
      assert.equal(await b.exited, 0, b.stderr());
      assert.match(a.stderr(), /chunk-000000: 2 claims/);
      assert.match(b.stderr(), /chunk-000001: 2 claims/, "the killed worker's chunk was given back");
      assert.doesNotMatch(b.stderr(), /chunk-000000/, "a finished chunk is not done again");
      await chunksAre(redis.url, run, { total: CHUNKS, waiting: 0, done: CHUNKS, failed: 0 });
      const out = join(dir, "killed", "task1.csv");
      await collectsPredictFile(redis.url, run, out, ["--zip"]);
      assert.equal(existsSync(join(dir, "killed", "predictions.zip")), true);
    });
  });

  test("Redis killed and restarted mid-run (AOF): the run completes, nothing lost or done twice", async () => {
    await task1Run("restart", { aof: "always" }, [], async ({ redis, c, run }) => {
      const held = c.held(7);
      const w = worker(["--redis", redis.url, "--index", indexA, "--exit-when-idle"]);
      // A waiting collect rides out the restart too.
      const waited = join(dir, "restart-waited.csv");
      const collecting = cli([
        "queue",
        "collect",
        "--redis",
        redis.url,
        "--run",
        run,
        "--out",
        waited,
        "--wait",
      ]);
      await held;
      await redis.stop("SIGKILL");
      await redis.start();
      c.state.release();
      assert.equal(await w.exited, 0, w.stderr());
      assert.equal(c.state.requests, CHUNKS * 4, "every pair verified once");
      await chunksAre(redis.url, run, { total: CHUNKS, waiting: 0, done: CHUNKS, failed: 0 });
      const out = join(dir, "restart.csv");
      await collectsPredictFile(redis.url, run, out);
      const col = await collecting;
      assert.equal(col.code, 0, col.stderr);
      assert.deepEqual(await readFile(waited), reference1);
    });
  });

  test("a worker with another index or model refuses the run and writes nothing", async () => {
    await task1Run("mismatch", {}, [], async ({ redis, c, run }) => {
      const other = await cli(["queue", "work", "--redis", redis.url, "--index", indexB, "--exit-when-idle"]);
      assert.equal(other.code, 2, other.stderr);
      assert.match(
        other.stderr,
        new RegExp(
          `refusing run ${run}: its index has fingerprint \\w+ but this worker's index \\(${indexB}\\)`,
        ),
      );
      // The run records the shipped re-ranker's fingerprint; make it another model's.
      const r = new Redis(redis.url);
      const record = JSON.parse((await r.hget(RUNS_KEY, run)) as string);
      record.fingerprints.models.reranker = "0".repeat(64);
      await r.hset(RUNS_KEY, run, JSON.stringify(record));
      r.disconnect();
      const model = await cli(["queue", "work", "--redis", redis.url, "--index", indexA, "--exit-when-idle"]);
      assert.equal(model.code, 2, model.stderr);
      assert.match(
        model.stderr,
        /refusing run .*: its reranker model has fingerprint 000000000000 but this worker's has/,
      );
      assert.equal(c.state.requests, 0);
      await chunksAre(redis.url, run, { total: CHUNKS, waiting: CHUNKS, done: 0, failed: 0 });
    });
  });

  test("the only worker refuses the run: status says so and collect --wait --timeout ends with exit 2 and the reason", async () => {
    await task1Run("nobody", {}, [], async ({ redis, c, run }) => {
      const out = join(dir, "nobody.csv");
      const w = worker(["--redis", redis.url, "--index", indexB]);
      try {
        await w.until(/refusing run/);
        const s = await status(redis.url, run);
        assert.equal(s.workers.live.length, 1);
        assert.equal(s.workers.refusals.length, 1);
        assert.match(
          s.stuck ?? "",
          /every worker seen in the last 60 s \(1\) refused the run: its index has fingerprint/,
        );
        const timed = await cli([
          "queue",
          "collect",
          "--redis",
          redis.url,
          "--run",
          run,
          "--out",
          out,
          "--wait",
          "--timeout",
          "2",
        ]);
        assert.equal(timed.code, 2, timed.stderr);
        assert.match(timed.stderr, /waits for nobody: every worker seen .* refused the run/);
        const last = timed.stderr.trim().split("\n").pop() ?? "";
        assert.match(
          last,
          /^climatecheck: run \S+: incomplete: 4 chunk\(s\) not done .*; gave up after 2 s: every worker seen in the last 60 s \(1\) refused the run: its index has fingerprint \w+ but this worker's index/,
        );
        w.child.kill("SIGTERM");
        await w.exited;
        // The worker checked out: nobody is left, and the refusal is still told.
        const text = await cli(["queue", "status", "--redis", redis.url, "--run", run]);
        assert.match(text.stdout, /workers: 0 seen in the last minute, 1 refused this run/);
        assert.match(
          text.stdout,
          /waiting for nobody: no worker is running; 1 worker\(s\) refused it: its index has fingerprint/,
        );
      } finally {
        w.child.kill("SIGKILL");
      }
      assert.equal(existsSync(out), false);
      assert.equal(c.state.requests, 0);
    });
  });

  test("SIGTERM ends after the chunk in progress; a failing chunk is retried, shown failed, and re-queued by submit", async () => {
    await task1Run("term", {}, ["--attempts", "2", "--backoff", "100"], async ({ redis, c, run }) => {
      const held = c.held(5); // the first request of chunk 1
      const w = worker(["--redis", redis.url, "--index", indexA]);
      await held;
      w.child.kill("SIGTERM");
      await w.until(/SIGTERM: stopping after the chunks in progress/);
      c.state.release();
      assert.equal(await w.exited, 0, w.stderr());
      await chunksAre(redis.url, run, { total: CHUNKS, waiting: 2, done: 2, failed: 0 });

      // Chunk 2 (c5, c6): the model fails on c6 every time.
      c.state.fail = /Hurricanes/;
      const failing = await cli([
        "queue",
        "work",
        "--redis",
        redis.url,
        "--index",
        indexA,
        "--exit-when-idle",
      ]);
      assert.equal(failing.code, 0, failing.stderr);
      assert.match(failing.stderr, /chunk-000002 failed \(try 1 of 2\)/);
      const s = await chunksAre(redis.url, run, { total: CHUNKS, waiting: 0, done: 3, failed: 1 });
      assert.equal(s.failed.length, 1);
      assert.equal(s.failed[0].chunk, "chunk-000002");
      assert.equal(s.failed[0].attempts, 2);
      assert.match(s.failed[0].error, /500|overloaded/);
      const text = await cli(["queue", "status", "--redis", redis.url, "--run", run]);
      assert.match(text.stdout, /failed chunk-000002 after 2 tries: /);
      const out = join(dir, "term.csv");
      const refused = await cli([
        "queue",
        "collect",
        "--redis",
        redis.url,
        "--run",
        run,
        "--out",
        out,
        "--wait",
      ]);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /chunk-000002\); 1 failed for good/);

      c.state.fail = undefined;
      const again = await cli([
        "queue",
        "submit",
        "--redis",
        redis.url,
        "--chunk-size",
        "2",
        ...task1(c.config, ["--attempts", "2", "--backoff", "100"]),
      ]);
      assert.match(again.stderr, /0 chunks added, 1 failed chunks queued again/);
      const fixed = await cli(["queue", "work", "--redis", redis.url, "--index", indexA, "--exit-when-idle"]);
      assert.equal(fixed.code, 0, fixed.stderr);
      await collectsPredictFile(redis.url, run, out);
    });
  });

  for (const tls of [false, true])
    test(`a password${tls ? " over TLS (rediss://)" : ""} works and never shows in output`, async () => {
      const password = "hunter2-Very-Secret";
      const redis = await startRedis({ password, tls });
      const extra: Record<string, string> = redis.ca ? { NODE_EXTRA_CA_CERTS: redis.ca } : {};
      try {
        const outputs: string[] = [];
        const run1 = async (args: string[], more: Record<string, string> = {}) => {
          const r = await cli(args, { ...extra, ...more });
          outputs.push(r.stdout, r.stderr);
          assert.equal(r.code, 0, r.stderr.replaceAll(password, "<password>"));
          return r;
        };
        // The URL from the environment here, from --redis below.
        const sub = await run1(
          ["queue", "submit", "--task", "2", "--fast", "--claims", claims, "--chunk-size", "3"],
          {
            CLIMATECHECK_REDIS: redis.url,
          },
        );
        const run = sub.stdout.trim();
        await run1(["queue", "work", "--redis", redis.url, "--exit-when-idle"]);
        await run1(["queue", "status", "--redis", redis.url, "--run", run]);
        await run1(["queue", "status", "--redis", redis.url, "--run", run, "--json"]);
        const out = join(dir, `secret-${tls}.csv`);
        await run1(["queue", "collect", "--redis", redis.url, "--run", run, "--out", out]);
        assert.deepEqual(await readFile(out), reference2);
        const wrong = await cli(
          ["queue", "status", "--redis", redis.url.replace(password, "not-the-password"), "--run", run],
          extra,
        );
        outputs.push(wrong.stdout, wrong.stderr);
        assert.equal(wrong.code, 2);
        assert.match(wrong.stderr, /cannot use Redis at rediss?:\/\/:\*\*\*@127\.0\.0\.1:\d+\/?: WRONGPASS/);
        assert.doesNotMatch(wrong.stderr, /not-the-password/);
        for (const o of outputs) assert.equal(o.includes(password), false, "the password is never printed");
      } finally {
        await redis.cleanup();
      }
    });
});
