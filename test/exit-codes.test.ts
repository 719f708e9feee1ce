/**
 * docs/exit-codes.md's table, command by command: 0 done, 1 a service that did not answer (the hub, a chat endpoint,
 * Redis, each on a closed loopback port), 2 bad input; and every command of `climatecheck --help` has its row.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

const dir = mkdtempSync(join(tmpdir(), "cc-exit-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI; resolves with its exit code and output (never rejects on a non-zero code). */
function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
      env: { ...process.env, CLIMATECHECK_HOME: join(dir, "home") },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A loopback port nothing listens on (taken, then freed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

const doc = readFileSync("docs/exit-codes.md", "utf8");

test("the table names codes 0, 1, 2, 130 and 143, and every command has a row", async () => {
  for (const code of [0, 1, 2, 130, 143])
    assert.match(doc, new RegExp(`^\\| ${code} \\|`, "m"), String(code));
  const help = await cli("--help");
  assert.equal(help.code, 0);
  const commands = [...help.stdout.matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1]).filter((c) => c !== "help");
  assert.ok(commands.length >= 10, commands.join(" "));
  const rows = doc.slice(doc.indexOf("## Per command"));
  for (const c of commands) assert.match(rows, new RegExp(`^\\| \`${c}[ \`]`, "m"), `${c} has a row`);
});

test("0: a scored example run", async () => {
  const r = await cli(
    "evaluate",
    "--task",
    "2",
    "--predictions",
    "examples/task2-predictions.csv",
    "--gold",
    "examples/labels.csv",
  );
  assert.equal(r.code, 0, r.stderr);
});

test("1: the hub, a chat endpoint and Redis that do not answer", { timeout: 120_000 }, async () => {
  const port = await closedPort();
  const pull = await cli(
    "data",
    "pull",
    "--dir",
    join(dir, "data"),
    "--base-url",
    `http://127.0.0.1:${port}`,
  );
  assert.equal(pull.code, 1, pull.stderr);
  assert.match(pull.stderr, new RegExp(`^climatecheck: cannot reach http://127\\.0\\.0\\.1:${port}/`));

  const config = join(dir, "chat.json");
  writeFileSync(
    config,
    JSON.stringify({ backend: "chat", baseUrl: `http://127.0.0.1:${port}/v1`, model: "m", retries: 0 }),
  );
  const pairs = join(dir, "pairs.csv");
  writeFileSync(pairs, "claim_id,claim,abstract_id,abstract\nc1,Seas rise,a1,Sea level rose 20 cm.\n");
  const verify = await cli("verify", "--pairs", pairs, "--out", join(dir, "v.csv"), "--config", config);
  assert.equal(verify.code, 1, verify.stderr);
  assert.match(verify.stderr, /^climatecheck: .*127\.0\.0\.1.*chat completion failed/m);

  const redis = await cli("queue", "status", "--redis", `redis://127.0.0.1:${port}`, "--run", "r");
  assert.equal(redis.code, 1, redis.stderr);
  assert.match(redis.stderr, /climatecheck: --redis: cannot use Redis at redis:\/\/127\.0\.0\.1:\d+/);
});

test("2: a usage error, a bad file, no claim in common with the gold (a non-UTF-8 claim: cli-check.test.ts)", async () => {
  const usage = await cli("check", "--k", "0", "a claim");
  assert.equal(usage.code, 2);
  const bad = join(dir, "bad.csv");
  writeFileSync(bad, "claim_id,narrative\nex1,9_9\n");
  const file = await cli("evaluate", "--task", "2", "--predictions", bad, "--gold", "examples/labels.csv");
  assert.equal(file.code, 2);
  assert.match(file.stderr, /^climatecheck: .*bad\.csv, line 2, field "narrative"/);
  const none = join(dir, "none.csv");
  writeFileSync(none, "claim_id,narrative\nzz,1_6\n");
  const disjoint = await cli(
    "evaluate",
    "--task",
    "2",
    "--predictions",
    none,
    "--gold",
    "examples/labels.csv",
  );
  assert.equal(disjoint.code, 2);
  assert.match(disjoint.stderr, /no predicted claim is in the gold file/);
});
