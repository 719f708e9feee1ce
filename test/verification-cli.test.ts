import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { readAll } from "../src/data/tables.ts";
import { DEFAULT_MODEL_PATH } from "../src/verification/builtin.ts";
import { type ChatServer, startChatServer } from "./chat-server-fixture.ts";

const run = promisify(execFile);
const CLI = ["--import", "tsx", "src/cli/main.ts"];
let dir = "";

/** A loopback chat server: Refutes when the claim mentions "cooling", else Supports citing sentence 1. */
let chat: ChatServer | undefined;

const PAIRS = `claim_id,claim,abstract_id,abstract,title
c1,The planet is cooling,a1,"Global surface temperature rose by 1.1 °C since 1850. The warming is unequivocal.",Warming
c2,Sea level is rising,a2,"BACKGROUND: Tide gauges record the ocean. RESULTS: Global mean sea level rose 3.3 mm per year.",
`;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "verify-cli-"));
  await writeFile(join(dir, "pairs.csv"), PAIRS);
  chat = await startChatServer((prompt) =>
    prompt.includes("cooling")
      ? { label: "Refutes", confidence: 0.9, rationale: [0] }
      : { label: "Supports", confidence: 0.7, rationale: [1] },
  );
});
after(async () => {
  chat?.close();
  await rm(dir, { recursive: true, force: true });
});

const env = () => ({ ...process.env, CLIMATECHECK_HOME: join(dir, "home") });

test("verify --backend chat writes one verdict row per pair with the exact labels and columns", async () => {
  await writeFile(
    join(dir, "chat.json"),
    JSON.stringify({
      verification: { backend: "chat", baseUrl: chat?.baseUrl, model: "tiny" },
    }),
  );
  const out = join(dir, "out.csv");
  await run(
    "node",
    [...CLI, "verify", "--pairs", join(dir, "pairs.csv"), "--out", out, "--config", join(dir, "chat.json")],
    {
      env: env(),
    },
  );
  const rows = (await readAll(out)).map((r) => r.row);
  assert.deepEqual(Object.keys(rows[0]), [
    "claim_id",
    "abstract_id",
    "label",
    "confidence",
    "p_supports",
    "p_refutes",
    "p_nei",
    "rationale",
  ]);
  assert.deepEqual(
    rows.map((r) => [r.claim_id, r.abstract_id, r.label, r.rationale]),
    [
      ["c1", "a1", "Refutes", "[0]"],
      ["c2", "a2", "Supports", "[1]"],
    ],
  );
  assert.equal(Number(rows[0].p_refutes), 0.9);
});

test("verify reports a bad pairs file with file, line and field and exits 2", async () => {
  await writeFile(join(dir, "bad.csv"), "claim_id,claim,abstract_id\nc1,x,a1\n");
  await assert.rejects(
    run("node", [...CLI, "verify", "--pairs", join(dir, "bad.csv"), "--out", join(dir, "x.csv")], {
      env: env(),
    }),
    (e: { code?: number; stderr?: string }) =>
      e.code === 2 && /bad\.csv, line \d+, field "abstract": missing column/.test(e.stderr ?? ""),
  );
});

test("verify with the shipped built-in model labels pairs and points at sentences of the abstract", {
  skip: !existsSync(DEFAULT_MODEL_PATH) && "no shipped model",
}, async () => {
  const out = join(dir, "builtin.jsonl");
  await run("node", [...CLI, "verify", "--pairs", join(dir, "pairs.csv"), "--out", out], { env: env() });
  const rows = (await readFile(out, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  assert.equal(rows.length, 2);
  for (const r of rows) {
    assert.ok(["Supports", "Refutes", "Not Enough Information"].includes(r.label));
    assert.ok(Math.abs(r.p_supports + r.p_refutes + r.p_nei - 1) < 1e-3);
    assert.ok(Array.isArray(r.rationale) && r.rationale.every((i: number) => i >= 0 && i < 2));
  }
});
