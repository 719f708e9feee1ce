import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { BUILTIN_CORPUS } from "../src/data/builtin-corpus.ts";
import { readCorpus } from "../src/data/climatecheck.ts";
import { ownDataFiles, readSubjectLabels } from "../src/data/judged.ts";
import { PACKAGE_ROOT } from "../src/data/paths.ts";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { subjectAgreement } from "../src/verification/build-topics.ts";
import { loadTopicModel, TOPIC_CODES, topicFeatures } from "../src/verification/topics.ts";

const dir = mkdtempSync(join(tmpdir(), "cc-topics-"));
const file = (name: string, lines: object[]) => {
  const path = join(dir, name);
  writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  return path;
};

test("the subject codes in code are the guidelines' codes, in order", () => {
  const text = readFileSync(join(PACKAGE_ROOT, "data", "abstract-subjects", "GUIDELINES.md"), "utf8");
  const listed = [...text.matchAll(/^- `([a-z0-9-]+)`/gm)].map((m) => m[1]);
  assert.deepEqual(listed, [...TOPIC_CODES]);
});

test("readSubjectLabels: an unknown code, a repeated main, a repeated id are errors naming file, line and field", async () => {
  const ok = { id: "arXiv:1", main: "sea-level", also: ["glaciers"], annotator: "S1" };
  assert.deepEqual(await readSubjectLabels(file("ok.jsonl", [ok])), [ok]);
  await assert.rejects(
    readSubjectLabels(file("a.jsonl", [ok, { ...ok, id: "arXiv:2", main: "sea-levels" }])),
    /a\.jsonl, line 2, field "main"/,
  );
  await assert.rejects(
    readSubjectLabels(file("b.jsonl", [{ ...ok, also: ["sea-level"] }])),
    /b\.jsonl, line 1, field "also"/,
  );
  await assert.rejects(readSubjectLabels(file("c.jsonl", [ok, ok])), /c\.jsonl, line 2, field "id"/);
});

test("the shipped subject labels: every built-in abstract once, a blind second share of at least 15%", async () => {
  const files = ownDataFiles();
  const labels = await readSubjectLabels(files.abstractSubjects);
  const second = await readSubjectLabels(files.abstractSubjectsSecond);
  const ids = new Set<string>();
  for await (const { abstract: a } of readCorpus(BUILTIN_CORPUS.path, { format: "climatecheck" }))
    ids.add(a.id);
  assert.deepEqual(new Set(labels.map((l) => l.id)), ids);
  assert.ok(second.length >= 0.15 * labels.length);
  const byId = new Map(labels.map((l) => [l.id, l.annotator]));
  assert.ok(second.every((l) => byId.has(l.id) && byId.get(l.id) !== l.annotator));
  const a = subjectAgreement(labels, second);
  assert.equal(a.items, second.length);
  assert.ok(a.kappa > 0.7, `kappa ${a.kappa}`);
});

test("subjectAgreement: kappa 1 for the same labels, 0 or below for labels unrelated to the first", () => {
  const l = (id: string, main: string) => ({ id, main, also: [], annotator: "A" });
  const first = [l("1", "solar"), l("2", "sea-level"), l("3", "solar"), l("4", "sea-level")];
  assert.equal(subjectAgreement(first, first).kappa, 1);
  const other = [l("1", "solar"), l("2", "solar"), l("3", "sea-level"), l("4", "sea-level")];
  assert.ok(subjectAgreement(first, other).kappa <= 0);
});

test("topicFeatures: the same subject scores high, another subject low", () => {
  const at = (k: number, p = 0.9) => Float32Array.from(TOPIC_CODES, (_, i) => (i === k ? p : (1 - p) / 63));
  const same = topicFeatures(at(3), at(3));
  const other = topicFeatures(at(3), at(40));
  assert.ok(same[0] > 0.8 && other[0] < 0.05, `${same[0]} ${other[0]}`);
  assert.ok(same[1] > 0.99 && other[1] < 0.05);
  assert.ok(same[2] > 0.8 && other[2] < 0.01);
  // Same top code, all top-3 codes shared, most of the mass shared; another subject: none of that.
  assert.deepEqual([same[4], same[5]], [1, 1]);
  assert.ok(other[4] === 0 && other[5] < 1);
  assert.ok(same[6] > 0.99 && other[6] < 0.15);
  // A sure reading has a lower entropy than a spread one.
  const spread = topicFeatures(at(3, 0.3), at(3));
  assert.ok(spread[7] > same[7] && spread[8] === same[8]);
});

test("the shipped subject model reads a claim's and a paper's subject, not their shared words", async () => {
  const model = await loadTopicModel();
  const use = await openUseLite({ workers: 0 });
  try {
    const top = async (text: string) => {
      const [v] = await use.embed([text]);
      const p = model.distribution(text, v);
      return TOPIC_CODES[p.indexOf(Math.max(...p))];
    };
    assert.equal(
      await top("Arctic sea ice is growing again, the death spiral never happened lol"),
      "sea-ice-arctic",
    );
    assert.equal(
      await top("Solar panels and wind turbines are now the cheapest electricity ever built"),
      "renewables",
    );
    // Shares "ocean" and "CO2" with an acidification claim; it is about a measuring device.
    assert.notEqual(
      await top(
        "A microfluidic chip for sampling sea water. We present a lab-on-chip device that draws ocean samples and measures dissolved inorganic carbon with low reagent use.",
      ),
      "ocean-acidification",
    );
  } finally {
    await use.close();
  }
});
