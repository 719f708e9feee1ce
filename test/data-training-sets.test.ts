import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { DataError } from "../src/data/errors.ts";
import { trainingFiles } from "../src/data/paths.ts";
import {
  parseIdList,
  parsePythonStringList,
  readCards,
  readClimateFever,
  readClimateStance,
  readFlicc,
  readSciFactClaims,
  readSciFactCorpus,
  readTexts,
} from "../src/data/training-sets.ts";

const files = trainingFiles();
const haveData = existsSync(files.scifactCorpus);

test("Python-style string lists keep sentence boundaries and unescape", () => {
  assert.deepEqual(
    parsePythonStringList(`['It\\'s a \\"test\\".'\n "Don't split, here."\n 'Tab\\there \\u00e9\\\\']`),
    [`It's a "test".`, "Don't split, here.", "Tab\there é\\"],
  );
  assert.deepEqual(parsePythonStringList("[]"), []);
  assert.deepEqual(parseIdList("[2 5]"), ["2", "5"]);
  assert.deepEqual(parseIdList("[14717500, 3]"), ["14717500", "3"]);
  assert.deepEqual(parseIdList("[]"), []);
});

test("SciFact adapters read the shared files", { skip: !haveData }, async () => {
  const corpus = await readSciFactCorpus(files.scifactCorpus);
  assert.equal(corpus.length, 5183);
  assert.ok(corpus.every((a) => a.sentences && a.sentences.length > 0 && a.abstract.length > 0));
  const claims = await readSciFactClaims(files.scifactClaims);
  assert.equal(claims.length, 809);
  const c2 = claims.find((c) => c.id === "2");
  assert.deepEqual(c2?.evidence.get("13734012"), { label: "Refutes", sentences: [4] });
  const labels = claims.flatMap((c) => [...c.evidence.values()].map((e) => e.label));
  assert.ok(labels.includes("Supports") && labels.includes("Refutes"));
});

test("Climate-FEVER, CARDS and FLICC adapters read the shared files", { skip: !haveData }, async () => {
  const cf = await readClimateFever(files.climateFever);
  assert.equal(cf.length, 1083);
  assert.ok(cf.every((c) => c.evidences.length === 5));
  // Annotator agreement with the evidence label: 2 of 2 votes, then a 1-1 split (nulls are not votes).
  const c5 = cf.find((c) => c.id === "5");
  assert.deepEqual(
    c5?.evidences.map((e) => e.agreement),
    [1, 1, 1, 0.5, 0.5],
  );
  const cards = await readCards(files.cards);
  assert.equal(cards.length, 2605);
  assert.equal(cards.filter((e) => e.codes[0] === "0_0").length, 1812);
  const flicc = await readFlicc(files.flicc.train);
  assert.equal(flicc.examples.length + flicc.skipped, 1796);
  assert.equal(flicc.skipped, 1);
  // Level-3 codes are cut to level 2, bare groups become X_0.
  assert.equal(flicc.examples.filter((e) => e.codes[0] === "5_3").length, 147);
  assert.equal(flicc.examples.filter((e) => e.codes[0] === "3_0").length, 20);
});

test("ClimateStance and plain text files: labels checked by line, texts distinct across files", async () => {
  const dir = await mkdtemp(join(tmpdir(), "stance-"));
  try {
    const good = join(dir, "good.csv");
    await writeFile(good, 'text,label\n"Act now, the climate is warming",Favor\n"It is a hoax",Against\n');
    assert.deepEqual(await readClimateStance(good), [
      { id: "stance:2", text: "Act now, the climate is warming", stance: "Favor" },
      { id: "stance:3", text: "It is a hoax", stance: "Against" },
    ]);
    const bad = join(dir, "bad.csv");
    await writeFile(bad, "text,label\nA tweet,Favor\nAnother,Neutral\n");
    await assert.rejects(readClimateStance(bad), (e: unknown) => {
      assert.ok(e instanceof DataError);
      assert.match(
        e.message,
        /bad\.csv, line 3, field "label": label must be one of Favor, Against, Ambiguous/,
      );
      return true;
    });
    const a = join(dir, "a.csv");
    const b = join(dir, "b.jsonl");
    await writeFile(a, "text,label\nSame paragraph,yes\nOnly in a,no\n");
    await writeFile(b, '{"text": "Same paragraph", "label": 1}\n{"text": "Only in b", "label": 0}\n');
    assert.deepEqual(
      (await readTexts([a, b], "x")).map((t) => t.text),
      ["Same paragraph", "Only in a", "Only in b"],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("the stance data: every source on both sides, and no dev text among the training rows", {
  skip: !haveData,
}, async () => {
  const { loadNarrativeData, splitKey } = await import("../src/narratives/data.ts");
  const d = await loadNarrativeData();
  const sources = (rows: { source: string }[]) => new Set(rows.map((r) => r.source));
  for (const s of [
    "stance-favor",
    "stance-against",
    "climatebert",
    "env-claims",
    "cf-supports",
    "cf-evidence",
    "arxiv",
  ]) {
    assert.ok(sources(d.stanceTrain).has(s), `train has ${s}`);
    assert.ok(sources(d.stanceDev).has(s), `dev has ${s}`);
  }
  // The split key is the tokenized text: the same words in another case or punctuation are the same text.
  const devTexts = new Set(d.stanceDev.map((e) => splitKey(e.text)));
  assert.equal(d.stanceTrain.filter((e) => devTexts.has(splitKey(e.text))).length, 0);
});
