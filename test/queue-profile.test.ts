import assert from "node:assert/strict";
import { test } from "node:test";
import { localLane, mismatch, modelFingerprints, type RunLane, type RunRecord } from "../src/queue/run.ts";
import type { RetrievalConfig } from "../src/retrieval/byo.ts";

const retrieval = (modelDir: string, topN = 100): RetrievalConfig => ({
  backend: "onnx",
  rerank: { models: [{ modelDir }], topN },
});
const lane: RunLane = {
  kind: "task1",
  k: 5,
  verifier: { backend: "builtin" },
  retrieval: retrieval("/submitter/ce"),
};
const record = (l: RunLane) =>
  ({ lane: l, fingerprints: { models: modelFingerprints(l) } }) as unknown as RunRecord;

test("queue work --config: a run's own models come from this machine's folders when the settings agree", () => {
  const spec = localLane(lane, "/here/index", { retrieval: retrieval("/worker/ce") });
  assert.equal(spec.kind, "task1");
  assert.deepEqual(spec.kind === "task1" && spec.options.retrieval, retrieval("/worker/ce"));
  // Without a profile the run's own folders are used; a built-in run ignores the profile.
  assert.deepEqual(localLane(lane, "/i"), {
    kind: "task1",
    options: {
      index: "/i",
      k: 5,
      verifier: { backend: "builtin" },
      reranker: undefined,
      retrieval: retrieval("/submitter/ce"),
    },
  });
  const builtin: RunLane = { kind: "task2", fast: true };
  assert.deepEqual(
    localLane(builtin, undefined, { narratives: { backend: "chat", baseUrl: "http://x/v1", model: "m" } }),
    {
      kind: "task2",
      options: { fast: true },
    },
  );
  // Other settings (here topN) refuse the run, naming both.
  const why = mismatch(record(lane), undefined, { retrieval: retrieval("/worker/ce", 50) });
  assert.match(
    why ?? "",
    /its retrieval settings .*"topN":100.* differ from this worker's profile .*"topN":50/,
  );
  // The verifier's folder too; a stage the profile leaves built-in keeps the run's settings.
  const nli: RunLane = { ...lane, verifier: { backend: "onnx", modelDir: "/submitter/nli" } } as RunLane;
  const local = localLane(nli, "/i", { verification: { backend: "onnx", modelDir: "/worker/nli" } });
  assert.deepEqual(local.kind === "task1" && [local.options.verifier, local.options.retrieval], [
    { backend: "onnx", modelDir: "/worker/nli" },
    retrieval("/submitter/ce"),
  ]);
  assert.match(
    mismatch(record(nli), undefined, { verification: { backend: "onnx", modelDir: "/w", batchSize: 2 } }) ??
      "",
    /its verification settings .* differ/,
  );
  // A run on its own retrieval models needs no shipped re-ranker file.
  assert.deepEqual(Object.keys(modelFingerprints(lane)), ["verifier"]);
});
