import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { contentTokens } from "../src/text/tokenize.ts";
import { LABELS } from "../src/types.ts";
import { openChatVerifier } from "../src/verification/backends/chat.ts";
import { openBuiltinVerifier } from "../src/verification/builtin.ts";
import type { SourcedExample } from "../src/verification/examples.ts";
import { VerificationModel } from "../src/verification/model.ts";
import { trainVerificationModel } from "../src/verification/train.ts";
import { abstractSentences, type Verifier, type VerifyPair } from "../src/verification/verifier.ts";

/** Hashed bag-of-words vectors standing in for the sentence encoder. */
const embed = async (texts: string[]) =>
  texts.map((t) => {
    const v = new Float32Array(16);
    for (const w of contentTokens(t)) v[[...w].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 16, 7)] += 1;
    const n = Math.hypot(...v) || 1;
    return v.map((x) => x / n);
  });

const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    const content = JSON.stringify({ label: "Supports", confidence: 0.6, rationale: [0, 99] });
    res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content } }] }));
  });
});
before(() => new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r())));
after(() => server.close());

const PAIRS: VerifyPair[] = [
  {
    claim: "Warming raises sea level",
    abstract: "Sea level rose 3 mm per year. Warming explains half of it.",
  },
  {
    claim: "Coral is thriving",
    abstract: "RESULTS: Bleaching killed 30% of the coral. CONCLUSIONS: Reefs are in decline.",
  },
  { claim: "Snow is green", abstract: "One sentence only" },
];

/** The contract every backend keeps. */
async function checkContract(verifier: Verifier): Promise<void> {
  const verdicts = await verifier.verifyPairs(PAIRS);
  assert.equal(verdicts.length, PAIRS.length);
  for (const [i, v] of verdicts.entries()) {
    assert.ok(LABELS.includes(v.label), v.label);
    const sum = v.probs.supports + v.probs.refutes + v.probs.nei;
    assert.ok(Math.abs(sum - 1) < 1e-5, `probabilities sum to ${sum}`);
    const n = abstractSentences(PAIRS[i]).length;
    assert.ok(
      v.rationale.every((j) => Number.isInteger(j) && j >= 0 && j < n),
      `rationale ${v.rationale}`,
    );
    if (v.label === "Not Enough Information") assert.deepEqual(v.rationale, []);
  }
  const one = await verifier.verify(PAIRS[1].claim, { abstract: PAIRS[1].abstract });
  assert.deepEqual(one, verdicts[1]);
  await verifier.close();
}

test("builtin backend keeps the verifier contract", async () => {
  const train: SourcedExample[] = Array.from({ length: 60 }, (_, i) => ({
    source: "scifact",
    claimId: `c${i}`,
    claim: `topic ${i % 5} grows`,
    abstractId: `a${i}`,
    sentences: [
      `topic ${i % 5} ${i % 3 === 0 ? "grows" : i % 3 === 1 ? "does not grow" : "was measured"}.`,
      "Filler.",
    ],
    label: LABELS[i % 3],
    rationale: i % 3 === 2 ? [] : [0],
  }));
  const { model } = await trainVerificationModel(train, { embed, encoderName: "fake@1", folds: 2 });
  const encoder = { name: "fake@1", dim: 16, embed, close: async () => {} };
  await checkContract(await openBuiltinVerifier({ model: new VerificationModel(model), encoder }));
});

test("chat backend keeps the verifier contract", async () => {
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  await checkContract(openChatVerifier({ baseUrl, model: "tiny" }));
});
