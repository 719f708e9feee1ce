import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { BUILTIN_CORPUS } from "../src/data/builtin-corpus.ts";
import { readCorpus } from "../src/data/climatecheck.ts";
import { ownDataFiles, readJudgedClaims, readJudgements, readWrittenClaims } from "../src/data/judged.ts";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { loadScopeDetector } from "../src/scope/scope.ts";
import { splitSentences } from "../src/text/sentences.ts";
import { NEI } from "../src/types.ts";
import { loadRelevanceGate, RELEVANCE_GATE, SUBJECT_PRIOR_FEATURE } from "../src/verification/relevance.ts";
import { TOPICS_FORMAT } from "../src/verification/topics.ts";

const dir = mkdtempSync(join(tmpdir(), "cc-judged-"));
const file = (name: string, lines: object[]) => {
  const path = join(dir, name);
  writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  return path;
};
const pair = {
  claim_id: "c1",
  abstract_id: "arXiv:1",
  about: true,
  label: "Supports",
  evidence: ["It rose."],
  judge: "J1",
};

test("the shipped judged set: every claim split once, every pair judged once, splits fixed before model work", async () => {
  const f = ownDataFiles();
  const claims = await readJudgedClaims(f.claims);
  const judged = await readJudgements(f.judgements);
  const second = await readJudgements(f.secondJudgements);
  assert.equal(claims.length, 744);
  // Test is the first 264 claims' split, unchanged; the 200 added claims are all train; the 120 short plain claims
  // added later are half train, half dev (3 + 3 of each subject and stance); the 160 added last are all train.
  assert.deepEqual(
    ["train", "dev", "test"].map((s) => claims.filter((c) => c.split === s).length),
    [545, 118, 81],
  );
  assert.equal(claims.filter((c) => c.stance === "accurate").length, 372);
  const short = claims.filter((c) => c.style === "short plain");
  assert.deepEqual(
    ["train", "dev", "test"].map((s) => short.filter((c) => c.split === s).length),
    [140, 60, 0],
  );
  const ids = new Set(claims.map((c) => c.id));
  assert.ok(judged.length >= 3355 && judged.every((j) => ids.has(j.claimId)));
  // Not about the claim is always NEI; a side always has its deciding sentence.
  assert.ok(judged.every((j) => j.about || j.label === NEI));
  assert.ok(judged.every((j) => j.label === NEI || j.evidence.length > 0));
  // The second judgements are of pairs judged first, by another judge.
  const firstBy = new Map(judged.map((j) => [`${j.claimId}\t${j.abstractId}`, j.judge]));
  assert.ok(second.length >= 0.15 * judged.length);
  assert.ok(
    second.every(
      (s) =>
        firstBy.has(`${s.claimId}\t${s.abstractId}`) &&
        firstBy.get(`${s.claimId}\t${s.abstractId}`) !== s.judge,
    ),
  );
  const written = await readWrittenClaims(f.writtenClaims);
  assert.equal(written.length, 1866);
  assert.equal(new Set(written.map((w) => w.abstractId)).size, 622);
});

test("judged-set readers name the file, line and field of bad input", async () => {
  await assert.rejects(
    readJudgements(file("bad-label.jsonl", [pair, { ...pair, abstract_id: "arXiv:2", label: "True" }])),
    /bad-label\.jsonl, line 2, field "label": expected Supports, Refutes or Not Enough Information, got "True"/,
  );
  await assert.rejects(
    readJudgements(file("off-side.jsonl", [{ ...pair, about: false }])),
    /off-side\.jsonl, line 1, field "label": a pair not about the claim is Not Enough Information/,
  );
  await assert.rejects(
    readJudgements(file("no-evidence.jsonl", [{ ...pair, evidence: [] }])),
    /line 1, field "evidence": Supports needs its deciding sentence/,
  );
  await assert.rejects(
    readJudgements(file("twice.jsonl", [pair, pair])),
    /line 2, field "abstract_id": pair c1 \/ arXiv:1 is judged twice/,
  );
  await assert.rejects(
    readJudgements(file("about.jsonl", [{ ...pair, about: "yes" }])),
    /line 1, field "about": expected true or false/,
  );
  const claim = {
    claim_id: "c1",
    claim: "Seas rise",
    stance: "accurate",
    subject: "sea-level",
    cards: ["0_0"],
    split: "train",
  };
  await assert.rejects(
    readJudgedClaims(file("split.jsonl", [{ ...claim, split: "holdout" }])),
    /split\.jsonl, line 1, field "split": expected one of train, dev, test, got "holdout"/,
  );
  await assert.rejects(
    readJudgedClaims(file("cards.jsonl", [{ ...claim, cards: ["9_9"] }])),
    /line 1, field "cards": expected CARDS codes/,
  );
  // A skipped abstract is passed over; a claim without its deciding sentence is not.
  const w = { id: "w1", abstract_id: "arXiv:1", claim: "x", label: "Refutes", evidence: ["y"], writer: "A" };
  const ok = await readWrittenClaims(
    file("w.jsonl", [{ abstract_id: "arXiv:9", skip: "maths", writer: "A" }, w]),
  );
  assert.deepEqual(
    ok.map((x) => x.id),
    ["w1"],
  );
  await assert.rejects(
    readWrittenClaims(file("w2.jsonl", [{ ...w, evidence: [] }])),
    /w2\.jsonl, line 1, field "evidence"/,
  );
});

test("relevance gate: a judged hard negative (shares the claim's word, about something else) is rejected; an on-subject abstract passes", async () => {
  const corpus = new Map<string, { title?: string; abstract: string; sentences?: string[] }>();
  for await (const { abstract: a } of readCorpus(BUILTIN_CORPUS.path, { format: "climatecheck" }))
    corpus.set(a.id, a);
  const doc = (id: string) => {
    const a = corpus.get(id);
    assert.ok(a, id);
    return { title: a.title, sentences: a.sentences ?? splitSentences(a.abstract) };
  };
  const scope = await loadScopeDetector();
  const use = await openUseLite({ workers: 0 });
  try {
    const gate = await loadRelevanceGate(
      (t) => scope.pClimate(t),
      undefined,
      (texts) => use.embed(texts),
    );
    assert.equal(gate.usesEncoder, true);
    // It compares the subjects of both sides (models/topics), not only their words.
    assert.equal(gate.json.topics, TOPICS_FORMAT);
    // Judged off-subject: "underwater" in the title, quantum key distribution in the abstract (the old gate gave 0.95).
    const claim = "The Maldives were supposed to be underwater by now.";
    const [off] = await gate.probabilities(claim, [doc("arXiv:1402.4666")]);
    assert.ok(off < RELEVANCE_GATE, `quantum key distribution under water: ${off}`);
    // The probability does not depend on rank or on the other abstracts asked about with it.
    const [alone] = await gate.probabilities(claim, [doc("arXiv:1402.4666")]);
    const [, withOthers] = await gate.probabilities(claim, [doc("arXiv:2005.09571"), doc("arXiv:1402.4666")]);
    assert.ok(Math.abs(alone - withOthers) < 1e-6);
    // The hard negative: a microfluidic sensor that samples ocean carbon, against an acidification claim.
    const [sensor] = await gate.probabilities("Ocean acidification is caused by the oceans absorbing CO2", [
      doc("arXiv:1909.01845"),
    ]);
    assert.ok(sensor < RELEVANCE_GATE, `microfluidic ocean-carbon sensor: ${sensor}`);
    // A same-subject pair of the corpus: cosmic rays and clouds, tested.
    const [cloud] = await gate.probabilities(
      "The CERN CLOUD experiments found cosmic rays have far too small an effect on clouds to drive warming",
      [doc("arXiv:0803.2298")],
    );
    assert.ok(cloud >= RELEVANCE_GATE, `cosmic rays and cloud cover: ${cloud}`);
    // It reads each built-in abstract's share judged about the train claims it was shown for: a melt-pond paper that
    // came back for many sea-ice claims, judged about few of them, is less likely about one more.
    assert.ok(gate.json.abstractPrior);
    const melt = doc("arXiv:1804.04754");
    const extent = "Arctic sea ice extent keeps shrinking, winter and summer.";
    const [known] = await gate.probabilities(extent, [{ ...melt, id: "arXiv:1804.04754" }]);
    // Its twin under an id never judged, with the same labelled subject: only the abstract prior differs.
    const subjects = gate.json.subjectPrior;
    assert.ok(subjects);
    subjects.codes["never-judged-twin"] = subjects.codes["arXiv:1804.04754"];
    const [twin] = await gate.probabilities(extent, [{ ...melt, id: "never-judged-twin" }]);
    assert.ok(known < twin - 0.1, `melt ponds, with its judged share ${known}, never judged ${twin}`);
    // An abstract without a subject label (another corpus) is scored by the gate that does not read the subject prior.
    assert.ok(gate.json.unlabelled && !gate.json.unlabelled.features.includes(SUBJECT_PRIOR_FEATURE));
    assert.ok(gate.json.features?.includes(SUBJECT_PRIOR_FEATURE));
    const [on] = await gate.probabilities("Global mean sea level is rising, and the rise is accelerating", [
      {
        title: "Global mean sea level rise and its acceleration",
        sentences: [
          "Satellite altimetry shows global mean sea level rising at about 3 mm per year since 1993.",
          "The rate of global mean sea level rise has accelerated over the altimetry era.",
        ],
      },
    ]);
    assert.ok(on >= RELEVANCE_GATE, `on-subject: ${on}`);
  } finally {
    await use.close();
  }
});
