import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { ingest } from "../src/index/ingest.ts";
import type { CheckResult } from "../src/pipeline/result.ts";
import { type ChatServer, startChatServer } from "./chat-server-fixture.ts";
import { tempDir, writeCorpus } from "./retrieval-fixtures.ts";

const run = promisify(execFile);
const CLI = ["--import", "tsx", "src/cli/main.ts"];
let dir = "";
let config = "";

/** A loopback chat model: Refutes citing sentence 0 when the abstract says "cannot", else NEI. */
let chat: ChatServer | undefined;

before(async () => {
  dir = tempDir("cc-check-cli-");
  await ingest(writeCorpus(dir), join(dir, "index"));
  chat = await startChatServer((prompt) =>
    prompt.includes("cannot explain")
      ? { label: "Refutes", confidence: 0.9, rationale: [0] }
      : { label: "Not Enough Information", confidence: 0.8, rationale: [] },
  );
  config = join(dir, "chat.json");
  await writeFile(config, JSON.stringify({ backend: "chat", baseUrl: chat.baseUrl, model: "t" }));
});
after(async () => {
  chat?.close();
  await rm(dir, { recursive: true, force: true });
});

const env = () => ({ ...process.env, CLIMATECHECK_HOME: join(dir, "home") });
const args = (...more: string[]) => [
  ...CLI,
  "check",
  "--index",
  join(dir, "index"),
  "--fast",
  "--config",
  config,
  ...more,
];

test("check --json prints the CheckResult of the claim", async () => {
  const { stdout } = await run(
    process.execPath,
    args("Solar irradiance explains warming since 1950", "--k", "2", "--json"),
    {
      env: env(),
    },
  );
  const r = JSON.parse(stdout) as CheckResult;
  assert.equal(r.claim, "Solar irradiance explains warming since 1950");
  assert.equal(r.evidence.length, 2);
  assert.equal(r.evidence[0].abstract_id, "a3");
  assert.equal(r.evidence[0].label, "Refutes");
  assert.deepEqual(r.evidence[0].rationale, [
    "Changes in solar irradiance cannot explain warming since 1950.",
  ]);
  // The second place goes to the likeliest of the rest, the permafrost abstract (retrieval rank 4), which is still
  // about something else: the relevance gate (trained on judged pairs) says so.
  assert.deepEqual(
    [r.evidence[1].abstract_id, r.evidence[1].rank, r.evidence[1].about_claim, r.evidence[1].label],
    ["a6", 4, false, "Not Enough Information"],
  );
  assert.deepEqual(
    [r.summary.supports, r.summary.refutes, r.summary.nei, r.summary.not_about_claim],
    [0, 1, 0, 1],
  );
  assert.ok(r.narratives.length >= 1 && r.narratives.every((n) => n.name.length > 0));
  assert.equal(typeof r.caution.needs_human_review, "boolean");
});

test("check prints narratives, ranked abstracts with label and DOI link, rationale, summary and caution", async () => {
  const { stdout } = await run(
    process.execPath,
    args("Solar irradiance explains warming since 1950", "--k", "2"),
    {
      env: env(),
    },
  );
  assert.match(
    stdout,
    /^Claim: Solar irradiance explains warming since 1950\n\nNarratives \(P\(any narrative\) \d+%; named from 50%\):\n {2}\d_\d {2}\S/,
  );
  assert.match(
    stdout,
    / {2}1\. \[Refutes 90%\] Solar activity and climate\n {5}id a3 · https:\/\/doi\.org\/10\.1\/a3 · S 5% R 90% NEI 5% · about the claim \d+%\n/,
  );
  assert.match(stdout, / {5}> Changes in solar irradiance cannot explain warming since 1950\.\n/);
  assert.match(stdout, / {2}4\. \[not about this claim\] Permafrost thaw\n/);
  assert.match(
    stdout,
    /\nSummary: Of 1 abstract about this claim \(1 of the 2 abstracts found is not about it\), 0 support it, 1 refutes it and 0 do not say enough\./,
  );
  assert.match(stdout, /\nCaution: (none|needs human review\. .+)\n/);
});

test("check answers a claim that is not about climate as out of scope: caution, no lean (CLI, shipped scope model)", async () => {
  const claim = "Aspirin lowers the risk of colorectal cancer in adults";
  const { stdout } = await run(process.execPath, args(claim, "--k", "2", "--json"), { env: env() });
  const r = JSON.parse(stdout) as CheckResult;
  assert.equal(r.scope.in_scope, false);
  assert.ok(r.scope.p_climate !== null && r.scope.p_climate < 0.5, String(r.scope.p_climate));
  assert.equal(r.summary.lean, "out_of_scope");
  assert.match(r.caution.reason ?? "", /does not look like a claim about climate/);
  // No phantom narrative: the narratives model is not asked about text it knows nothing of.
  assert.deepEqual([r.narratives, r.p_narrative], [[], null]);
  for (const e of r.evidence) assert.equal(typeof e.relevance, "number");
  const text = await run(process.execPath, args(claim, "--k", "2"), { env: env() });
  assert.match(text.stdout, /^Claim: .+\nOut of scope: This claim does not look like a claim about climate/);
  assert.match(text.stdout, /\nNarratives: not assessed \(the claim is out of scope\)\n\nEvidence/);
  assert.match(text.stdout, /\(lean: out_of_scope\)\n/);
  // The scope's reason is said once, on its own line.
  assert.equal(text.stdout.split("does not look like a claim about climate").length - 1, 1, text.stdout);
});

test("check refuses a bad --k and an empty claim with exit code 2", async () => {
  await assert.rejects(
    run(process.execPath, args("CO2 is rising", "--k", "0"), { env: env() }),
    (e: { code: number; stderr: string }) => {
      assert.equal(e.code, 2);
      assert.match(e.stderr, /--k must be a whole number/);
      return true;
    },
  );
  await assert.rejects(
    run(process.execPath, args("   "), { env: env() }),
    (e: { code: number; stderr: string }) => {
      assert.equal(e.code, 2);
      assert.match(e.stderr, /claim is empty/);
      return true;
    },
  );
});

test("check refuses a claim with bytes that are not UTF-8 (exit 2, naming the character) instead of scoring U+FFFD", async () => {
  // execFile passes a Buffer argument's bytes as they are: "Sea \xff level".
  const claim = Buffer.from([...Buffer.from("Sea "), 0xff, ...Buffer.from(" level rise")]);
  await assert.rejects(
    run(process.execPath, [...args("x").slice(0, -1), claim as unknown as string], { env: env() }),
    (e: { code: number; stderr: string; stdout: string }) => {
      assert.equal(e.code, 2);
      assert.equal(e.stdout, "");
      assert.equal(
        e.stderr.trim(),
        "climatecheck: check <claim>: not valid UTF-8 at character 5 (bytes in another encoding, shown as U+FFFD); pass the claim as UTF-8",
      );
      return true;
    },
  );
});
