import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import {
  codesToPrediction,
  flatSystemPrompt,
  groupsSystemPrompt,
  openChatNarratives,
} from "../src/narratives/chat.ts";
import { readNarrativesConfig } from "../src/narratives/config.ts";
import { NARRATIVES } from "../src/taxonomy/cards.ts";
import { type ChatServer, startChatServer } from "./chat-server-fixture.ts";
import { tempDir } from "./retrieval-fixtures.ts";

/** Answers by what the prompt asks: step one (groups), step two or flat (codes); `next` overrides one answer. */
const prompts: string[] = [];
let next: unknown[] = [];
let server: ChatServer;
before(async () => {
  server = await startChatServer((prompt) => {
    prompts.push(prompt);
    if (next.length) {
      const a = next.shift();
      return typeof a === "function" ? (a as () => unknown)() : a;
    }
    if (prompt.includes("First choose the groups")) return { groups: [1, "5"] };
    if (prompt.includes("group(s) 1, 5")) return { reasoning: "denies warming", codes: ["1_1", "5.2"] };
    return { codes: ["5.1"] };
  });
});
after(() => server.close());

const chat = (more: object = {}) =>
  openChatNarratives({ baseUrl: server.baseUrl, model: "tiny", retries: 0, ...more });

test("the flat prompt names every code with its name and description", () => {
  const p = flatSystemPrompt();
  for (const n of NARRATIVES) {
    assert.ok(p.includes(`${n.code}: ${n.name}. ${n.description}`), n.code);
  }
  assert.match(groupsSystemPrompt(true), /"reasoning"/);
});

test("flat: the answer's codes, normalised, with probabilities that agree with them", async () => {
  const [p] = await chat().classify(["The climate models are unreliable"]);
  assert.deepEqual(p.codes, ["5_1"]);
  assert.equal(p.narrative, 1);
  assert.equal(p.probabilities["5_1"], 1);
  assert.equal(p.probabilities["5_0"], 1);
  assert.equal(p.probabilities["0_0"], 0);
  assert.equal(p.probabilities["1_1"], 0);
  assert.deepEqual(codesToPrediction(["0_0"]).probabilities["0_0"], 1);
});

test("two-step: groups first, then the codes of those groups only", async () => {
  prompts.length = 0;
  const c = chat({ mode: "two-step" });
  const [p] = await c.classify(["It is not warming and scientists lie"]);
  assert.deepEqual(p.codes, ["1_1", "5_2"]);
  assert.equal(prompts.length, 2);
  assert.match(prompts[1], /group\(s\) 1, 5/);
  // Step two lists the chosen groups' codes and no others.
  assert.ok(prompts[1].includes("1_1:") && prompts[1].includes("5_2:") && !prompts[1].includes("3_1:"));
  next = [{ groups: [0] }];
  assert.deepEqual((await c.classify(["Solar panels are getting cheaper"]))[0].codes, ["0_0"]);
  // A code outside the chosen groups is an invalid answer.
  next = [{ groups: [1] }, { codes: ["3_1"] }];
  await assert.rejects(c.classify(["Warming stopped in 1998"]), /code 3_1 is not in the chosen group\(s\) 1/);
});

test("unknown codes, 0_0 beside a code, malformed JSON, a timeout: stage, URL and the reason", async () => {
  const url = `${server.baseUrl}/chat/completions`;
  const cases: [unknown, RegExp][] = [
    [{ codes: ["9_9"] }, /unknown CARDS code "9_9"/],
    [{ codes: ["0_0", "1_1"] }, /0_0 \(no narrative\) must stand alone/],
    ["not json at all", /invalid JSON answer/],
    [{ labels: ["1_1"] }, /answer does not match the schema \(codes/],
  ];
  for (const [answer, why] of cases) {
    next = [answer];
    await assert.rejects(chat().classify([`claim ${String(why)}`]), (e: Error) => {
      assert.ok(e.message.startsWith(`narratives (chat), ${url}: chat completion failed`), e.message);
      assert.match(e.message, why);
      return true;
    });
  }
  next = [() => new Promise((r) => setTimeout(() => r({ codes: ["1_1"] }), 2000))];
  await assert.rejects(
    chat({ timeoutMs: 100 }).classify(["slow claim"]),
    /narratives \(chat\), .*timed out after 100 ms/,
  );
});

test("identical claims are asked once; a failed one is asked again", async () => {
  prompts.length = 0;
  const c = chat();
  await c.classify(["same", "same", "other"]);
  assert.equal(prompts.length, 2);
  next = ["broken"];
  await assert.rejects(c.classify(["fresh"]));
  assert.deepEqual((await c.classify(["fresh"]))[0].codes, ["5_1"]);
});

test("the narratives section of a profile: chat settings validated, missing means built-in", async () => {
  const dir = tempDir("narratives-chat-");
  const file = join(dir, "p.json");
  writeFileSync(file, JSON.stringify({ retrieval: { backend: "builtin" } }));
  assert.deepEqual(await readNarrativesConfig(file), { backend: "builtin" });
  writeFileSync(
    file,
    JSON.stringify({
      narratives: { backend: "chat", baseUrl: "http://x/v1", model: "m", mode: "three-step" },
    }),
  );
  await assert.rejects(readNarrativesConfig(file), /p\.json, field "narratives\.mode"/);
});
