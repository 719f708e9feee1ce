import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type EvaluateOptions, evaluateFiles } from "../src/cli/commands/evaluate.ts";
import { DataError } from "../src/data/errors.ts";
import { readAll } from "../src/data/tables.ts";
import { cachedJudge } from "../src/evaluation/judges/cache.ts";
import { FACTS_PROMPT, LLM_PROMPT_VERSION, llmJudge, SUPPORT_PROMPT } from "../src/evaluation/judges/llm.ts";

/**
 * A loopback OpenAI-compatible server playing three roles, told apart by the system prompt:
 * - facts: the sentences of the text; support: a statement is supported when the text contains it verbatim;
 * - the chat verifier: Supports with confidence 0.8 for every pair.
 * `broken` makes the next support answers have one verdict too few (the client must retry them).
 */
type Role = "facts" | "support" | "verifier";
let requests: { role: Role; user: string }[] = [];
let inFlight = 0;
let maxInFlight = 0;
let broken = 0;
let baseUrl = "";

function answer(system: string, user: string): { role: Role; content: string } {
  if (system === FACTS_PROMPT) {
    const text = user.replace(/^Text:\n/, "");
    return { role: "facts", content: JSON.stringify({ facts: text.split(/(?<=\.)\s+/) }) };
  }
  if (system === SUPPORT_PROMPT) {
    const [, text, list] = /^Text:\n([\s\S]*)\n\nStatements:\n([\s\S]*)$/.exec(user) ?? [];
    const statements = list.split("\n").map((l) => l.replace(/^\[\d+\] /, ""));
    const supported = statements.map((s) => text.includes(s));
    if (broken > 0) {
      broken--;
      supported.pop();
    }
    return { role: "support", content: `\`\`\`json\n${JSON.stringify({ supported })}\n\`\`\`` };
  }
  return { role: "verifier", content: '{"label": "Supports", "confidence": 0.8, "rationale": [0]}' };
}

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  let data = "";
  req.on("data", (c) => {
    data += c;
  });
  req.on("end", async () => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const body = JSON.parse(data) as { messages: { role: string; content: string }[] };
    const system = body.messages.find((m) => m.role === "system")?.content ?? "";
    const user = body.messages.find((m) => m.role === "user")?.content ?? "";
    const a = answer(system, user);
    requests.push({ role: a.role, user });
    await new Promise((r) => setTimeout(r, 5));
    inFlight--;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content: a.content } }] }));
  });
});

before(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const reset = () => {
  requests = [];
  maxInFlight = 0;
  broken = 0;
};
const count = (role: Role) => requests.filter((r) => r.role === role).length;
const dir = mkdtempSync(join(tmpdir(), "cc-ev2r-llm-"));

test("llm judge: atomic facts and support through the chat endpoint, schema-checked, retried, concurrency-bounded", async () => {
  reset();
  const judge = llmJudge({ baseUrl, model: "judge-m", backoffMs: 1, concurrency: 2 });
  assert.ok(judge.name.includes(LLM_PROMPT_VERSION) && judge.name.includes("judge-m"));
  assert.equal(judge.approximation, undefined);
  const facts = await judge.atomicFacts({ abstract: "Sea level rose 3 mm per year. The rise accelerated." });
  assert.deepEqual(facts, ["Sea level rose 3 mm per year.", "The rise accelerated."]);
  broken = 1;
  const flags = await judge.supported([...facts, "Storms grew."], {
    abstract: "The rise accelerated. Sea level rose 3 mm per year.",
  });
  assert.deepEqual(flags, [true, true, false]);
  assert.equal(count("support"), 2, "the answer with one verdict too few was retried");
  assert.match(requests[1].user, /\[2\] Storms grew\./);
  await Promise.all(
    Array.from({ length: 6 }, (_, i) => judge.supported([`f${i}`], { abstract: `text ${i}` })),
  );
  assert.ok(maxInFlight <= 2, `at most 2 requests in flight, saw ${maxInFlight}`);
  assert.deepEqual(await judge.supported([], { abstract: "x" }), []);
});

test("llm judge behind the cache: a second run sends no judge request", async () => {
  reset();
  const file = join(dir, "judge.jsonl");
  const run = async () => {
    const j = cachedJudge(llmJudge({ baseUrl, model: "judge-m", backoffMs: 1 }), file);
    const f = await j.atomicFacts({ abstract: "A fell. B rose." });
    return { f, s: await j.supported(f, { abstract: "B rose." }) };
  };
  const first = await run();
  assert.equal(requests.length, 2);
  assert.deepEqual(first.s, [false, true]);
  assert.deepEqual(await run(), first);
  assert.equal(requests.length, 2, "answers come from the cache");
});

/** The CLI in a child process (asynchronously, so this process's server keeps answering). */
function cli(
  args: string[],
  home: string,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
      env: { ...process.env, CLIMATECHECK_HOME: home },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

const write = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

test("evaluate --ev2r with the LLM judge and chat verifier on loopback: scores by hand, audit file, cache reuse", async () => {
  reset();
  const gold = write(
    "gold.csv",
    [
      "claim_id,claim,abstract_id,annotation",
      "c1,Sea level rise is accelerating.,G1,Supports",
      "c1,Sea level rise is accelerating.,G2,Not Enough Information",
      "c2,Arctic ice grows.,N1,Not Enough Information",
    ].join("\n"),
  );
  const corpus = write(
    "corpus.csv",
    [
      "abstract_id,abstract",
      'G1,"Sea level rose 3 mm per year. The rise accelerated after 1990."',
      "G2,Tide gauges vary.",
      'R1,"The rise accelerated after 1990. Storms grew stronger."',
      "N1,Ice was measured.",
      "R9,Ice shrank.",
    ].join("\n"),
  );
  const preds = write(
    "preds.csv",
    ["claim_id,abstract_id,rank,label", "c1,G1,1,Supports", "c1,R1,2,Supports", "c2,R9,1,Refutes"].join("\n"),
  );
  const judgeConfig = write(
    "judge.json",
    JSON.stringify({ judge: { baseUrl, model: "judge-m", backoffMs: 1 } }),
  );
  const verifierConfig = write(
    "verifier.json",
    JSON.stringify({ backend: "chat", baseUrl, model: "verifier-m" }),
  );
  const details = join(dir, "details.csv");
  const home = join(dir, "home");
  const args = [
    "evaluate",
    "--task",
    "1",
    "--predictions",
    preds,
    "--gold",
    gold,
    "--ev2r",
    "--corpus",
    corpus,
    "--judge",
    "llm",
    "--judge-config",
    judgeConfig,
    "--config",
    verifierConfig,
    "--details",
    details,
    "--json",
  ];
  const r = await cli(args, home);
  assert.equal(r.status, 0, r.stderr);
  const s = JSON.parse(r.stdout);
  // R1 vs G1: 1 of R1's 2 facts in G1, 1 of G1's 2 in R1: S_ref = 0.5 (G2 shares nothing); y* = Supports,
  // P(Supports) = 0.8 -> Ev2R = 0.25 + 0.4. S_ver: y^ = Supports = y* -> 0.5 * 0.8 + 0.5.
  assert.ok(Math.abs(s.ev2r - 0.65) < 1e-9, String(s.ev2r));
  assert.equal(s.ev2r_claims, 1);
  assert.ok(Math.abs(s.ev2r_ref - 0.5) < 1e-9);
  assert.ok(Math.abs(s.ev2r_proxy - 0.8) < 1e-9);
  assert.ok(Math.abs(s.auto_verification - 0.9) < 1e-9);
  assert.deepEqual(s.ev2r_excluded, { all_nei: 1, no_predictions: 0, all_retrieved_annotated: 0 });
  assert.equal(s.ev2r_approximation, null);
  assert.equal(s.ev2r_verifier, "chat:verifier-m");
  assert.equal(typeof s.recall_at_5, "number", "the official keys are still there");
  const rows = await readAll(details);
  assert.equal(rows.length, 1);
  assert.deepEqual(
    { ...rows[0].row },
    {
      claim_id: "c1",
      abstract_id: "R1",
      rank: "2",
      best_gold_abstract_id: "G1",
      best_gold_label: "Supports",
      ref_precision: "0.5",
      ref_recall: "0.5",
      s_ref: "0.5",
      s_proxy: "0.8",
      ev2r: "0.65",
      predicted_label: "Supports",
      p_predicted: "0.8",
      s_ver: "0.9",
    },
  );
  const judgeRequests = count("facts") + count("support");
  // Facts of R1, G1, G2; support of R1 in G1, G1 in R1, R1 in G2, G2 in R1.
  assert.equal(judgeRequests, 7);

  // The second run (in this process, same cache home) reads every judge answer from the cache.
  reset();
  process.env.CLIMATECHECK_HOME = home;
  const again = await evaluateFiles({
    task: 1,
    predictions: preds,
    gold,
    ev2r: true,
    corpus,
    judge: "llm",
    judgeConfig,
    config: verifierConfig,
  });
  assert.equal(count("facts") + count("support"), 0);
  assert.equal(count("verifier"), 1);
  assert.deepEqual(JSON.parse(JSON.stringify(again.result)), s);
  assert.match(again.notes?.join("\n") ?? "", /7 cached, 0 new/);
  assert.match(again.text, /Ev2R\s+0\.6500/);
  assert.equal(readFileSync(details, "utf8").split("\n")[0].split(",")[0], "claim_id");
});

test("evaluate --ev2r: bad input is a DataError (exit 2) naming what is missing", async () => {
  process.env.CLIMATECHECK_HOME = join(dir, "home-bad");
  const preds = join(dir, "preds.csv");
  const gold = join(dir, "gold.csv");
  const corpus = join(dir, "corpus.csv");
  const base = { task: 1 as const, predictions: preds, gold, ev2r: true, judge: "builtin" };
  const fails = (o: Partial<EvaluateOptions>, message: RegExp) =>
    assert.rejects(
      evaluateFiles({ ...base, ...o }),
      (e: Error) => e instanceof DataError && message.test(e.message),
    );

  await fails({}, /--index DIR or --corpus FILE/);
  await fails({ corpus, index: dir }, /exactly one of --index DIR or --corpus FILE/);
  const noClaim = write("gold-noclaim.csv", "claim_id,abstract_id,annotation\nc1,G1,Supports\n");
  await fails(
    { gold: noClaim, corpus },
    /gold-noclaim\.csv, line \d+, field "claim": missing column.*--ev2r needs the claim texts/,
  );
  const shortCorpus = write("corpus-short.csv", "abstract_id,abstract\nG1,Some text.\nG2,Other text.\n");
  await fails(
    { corpus: shortCorpus },
    /preds\.csv, field "abstract_id": abstract "R1" is not in .*corpus-short\.csv/,
  );
  await fails({ corpus, judge: "llm" }, /--judge-config/);
  await fails({ corpus, judge: "gpt" }, /unknown judge "gpt"/);
  await fails({ corpus, task: 2 } as Partial<EvaluateOptions>, /task 1 only/);
});
