/**
 * What a user sees, judged (issue 22): claims as people post them (data/judged, test split, read once) checked against
 * the built-in corpus, each pair shown judged by careful reading. Three systems side by side in one run:
 * - shipped: the pipeline as it ships now;
 * - before: the same pipeline with the models of `BEFORE` (relevance gate, verifier, re-ranker before this issue);
 * - plain: stock stemmed BM25 top 5 + a TF-IDF LR verifier trained on our train pairs, every abstract shown as about.
 * Every figure has a bootstrap 95% interval over claims. Pairs a system shows that were never judged are counted
 * and written to UNJUDGED (to be judged, without the system's labels, before the figures are read); they are left
 * out of the figures meanwhile. Agreement of the double-judged share is Cohen's kappa.
 */

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import {
  type JudgedClaim,
  type Judgement,
  ownDataFiles,
  readJudgedClaims,
  readJudgements,
  readWrittenClaims,
  SHORT_PLAIN,
} from "../src/data/judged.ts";
import { itemInterval } from "../src/evaluation/bootstrap.ts";
import { cohenKappa, verificationF1 } from "../src/evaluation/metrics.ts";
import { Bm25Index, STOCK_PARAMS } from "../src/index/bm25.ts";
import { openIndex } from "../src/index/open.ts";
import { ensureDefaultIndex } from "../src/pipeline/default-index.ts";
import { createPipeline, openPipeline, type Pipeline } from "../src/pipeline/pipeline.ts";
import type { Evidence, Lean } from "../src/pipeline/result.ts";
import { summarize } from "../src/pipeline/summary.ts";
import { openRetriever } from "../src/retrieval/load.ts";
import { loadScopeDetector } from "../src/scope/scope.ts";
import { type Label, NEI } from "../src/types.ts";
import { trainBaseline } from "../src/verification/baseline.ts";
import { openBuiltinVerifier } from "../src/verification/builtin.ts";
import { type OwnPair, ownExamples } from "../src/verification/examples.ts";
import { loadRelevanceGate } from "../src/verification/relevance.ts";

import { type Bench, percentile, signedInterval, table } from "./report.ts";

/** The commit whose models are "before" (main before issue 22's model work). */
export const BEFORE = "42acd1d";
const K = 5;
/** The split scored: "test" (read once, at the end) or "dev" (while building; JUDGED_SPLIT=dev). */
const SPLIT = process.env.JUDGED_SPLIT === "dev" ? "dev" : "test";
const UNJUDGED = "bench/out/judged-unjudged.jsonl";
const log = (m: string) => process.stderr.write(`  ${new Date().toISOString().slice(11, 19)} ${m}\n`);

interface Shown {
  abstractId: string;
  about: boolean;
  label: Label;
}
interface ClaimRun {
  shown: Shown[];
  lean: Lean;
}

/** A model file as it was at `commit`, written to a temporary file (the "before" system). */
function modelAt(commit: string, path: string): string {
  const dir = mkdtempSync(join(tmpdir(), "cc-before-"));
  const out = join(dir, path.replace(/\//g, "_"));
  writeFileSync(out, execFileSync("git", ["show", `${commit}:${path}`], { maxBuffer: 1 << 28 }));
  return out;
}

async function beforePipeline(indexDir: string): Promise<Pipeline> {
  const { retriever, close } = await openRetriever(indexDir, {
    model: modelAt(BEFORE, "models/retrieval/reranker.json"),
  });
  const verifier = await openBuiltinVerifier({
    modelPath: modelAt(BEFORE, "models/verification/model.json"),
  });
  const scope = await loadScopeDetector();
  const relevance = await loadRelevanceGate(
    (t) => scope.pClimate(t),
    modelAt(BEFORE, "models/relevance/model.json"),
  );
  return createPipeline({
    retriever,
    verifier,
    // Narratives only weigh on the caution, which this bench does not score.
    classifier: {
      classify: async (claims) => claims.map(() => ({ codes: ["0_0"], narrative: 0, probabilities: {} })),
    },
    relevance,
    scope,
    close: async () => {
      await verifier.close();
      await close();
    },
  });
}

const pairKey = (claimId: string, abstractId: string) => `${claimId}\t${abstractId}`;

function lean(shown: readonly Evidence[]): Lean {
  return summarize(shown).lean;
}

export const bench: Bench = async () => {
  const files = ownDataFiles();
  const claims = await readJudgedClaims(files.claims);
  const judged = await readJudgements(files.judgements);
  const second = existsSync(files.secondJudgements) ? await readJudgements(files.secondJudgements) : [];
  const written = existsSync(files.writtenClaims) ? await readWrittenClaims(files.writtenClaims) : [];
  const byPair = new Map(judged.map((j) => [pairKey(j.claimId, j.abstractId), j]));
  const claimById = new Map(claims.map((c) => [c.id, c]));
  const test = claims.filter((c) => c.split === SPLIT);

  const indexDir = await ensureDefaultIndex();
  const index = openIndex(indexDir);
  const stock = new Bm25Index(index.dir, { params: { ...STOCK_PARAMS } });
  const abstractOf = (id: string) => {
    const docno = index.docs.docno(id);
    if (docno === undefined) return undefined;
    const d = index.docs.get(docno);
    return { title: d.title, sentences: d.sentences ?? [d.abstract] };
  };

  // The plain system's verifier: TF-IDF LR on our train pairs (judged train claims + claims written from abstracts).
  const trainPairs: OwnPair[] = [
    ...judged
      .filter((j) => claimById.get(j.claimId)?.split === "train")
      .map((j) => ({ ...j, claim: claimById.get(j.claimId)?.claim ?? "" })),
    ...written.map((w) => ({
      claimId: w.id,
      claim: w.claim,
      abstractId: w.abstractId,
      label: w.label,
      evidence: w.evidence,
    })),
  ];
  const baseline = trainBaseline(ownExamples(trainPairs, abstractOf));
  log(`plain verifier trained on ${trainPairs.length} own pairs`);

  const shipped = await openPipeline({ index: indexDir });
  const before = await beforePipeline(indexDir);
  const runs: Record<"shipped" | "before" | "plain", ClaimRun[]> = { shipped: [], before: [], plain: [] };
  const pairLabels: Record<"shipped" | "before" | "plain", Label[]> = { shipped: [], before: [], plain: [] };
  const latencies: number[] = [];
  const testPairs = judged.filter((j) => claimById.get(j.claimId)?.split === SPLIT);
  try {
    for (const c of test) {
      const t = performance.now();
      const s = await shipped.check(c.claim, { k: K });
      latencies.push(performance.now() - t);
      const b = await before.check(c.claim, { k: K });
      const asShown = (r: { evidence: Evidence[]; summary: { lean: Lean } }): ClaimRun => ({
        shown: r.evidence.map((e) => ({ abstractId: e.abstract_id, about: e.about_claim, label: e.label })),
        lean: r.summary.lean,
      });
      runs.shipped.push(asShown(s));
      runs.before.push(asShown(b));
      const hits = stock.search(stock.queryTerms(c.claim), K).map((h) => index.docs.get(h.docno));
      const verdicts = baseline.predict(
        hits.map((d) => ({ claim: c.claim, sentences: d.sentences ?? [d.abstract], title: d.title })),
      );
      const evidence = hits.map(
        (d, i) =>
          ({
            abstract_id: d.id,
            label: verdicts[i].label,
            confidence: verdicts[i].confidence,
            relevance: null,
            about_claim: true,
          }) as Evidence,
      );
      runs.plain.push({
        shown: evidence.map((e) => ({ abstractId: e.abstract_id, about: true, label: e.label })),
        lean: lean(evidence),
      });
    }
    for (const j of testPairs) {
      const claim = claimById.get(j.claimId)?.claim ?? "";
      pairLabels.shipped.push((await shipped.verify(claim, j.abstractId)).label);
      pairLabels.before.push((await before.verify(claim, j.abstractId)).label);
      const doc = abstractOf(j.abstractId);
      pairLabels.plain.push(
        baseline.predict([{ claim, sentences: doc?.sentences ?? [], title: doc?.title }])[0].label,
      );
    }
  } finally {
    await shipped.close();
    await before.close();
    index.close();
  }

  // Pairs shown but never judged: written out to be judged, left out of the figures meanwhile.
  const unjudged = new Map<string, { claim_id: string; claim: string; abstract_id: string }>();
  for (const sys of Object.values(runs))
    sys.forEach((r, i) => {
      for (const s of r.shown)
        if (!byPair.has(pairKey(test[i].id, s.abstractId)))
          unjudged.set(pairKey(test[i].id, s.abstractId), {
            claim_id: test[i].id,
            claim: test[i].claim,
            abstract_id: s.abstractId,
          });
    });
  mkdirSync("bench/out", { recursive: true });
  writeFileSync(UNJUDGED, [...unjudged.values()].map((u) => `${JSON.stringify(u)}\n`).join(""));

  const section = figures(
    { test, runs, pairLabels, testPairs },
    byPair,
    second,
    judged,
    unjudged.size,
    latencies,
  );
  return {
    // A dev run has its own section, so it never overwrites the test split's figures (read once).
    id: SPLIT === "dev" ? "judged-dev" : "judged",
    title: `What a user sees: claims as people post them, judged on the built-in corpus (issue 22)${SPLIT === "dev" ? ", dev split" : ""}`,
    command: SPLIT === "dev" ? "JUDGED_SPLIT=dev npm run bench -- judged" : "npm run bench -- judged",
    markdown: section,
  };
};

type Stat = (idx: number[]) => number;
const ratio = (num: number, den: number) => (den === 0 ? 0 : num / den);
const iv = (n: number, f: Stat) => {
  const r = itemInterval(n, f, { seed: 22 });
  return `${r.value.toFixed(3)} (${r.low.toFixed(3)}-${r.high.toFixed(3)})`;
};
const opposite = (a: Label, b: Label) =>
  (a === "Supports" && b === "Refutes") || (a === "Refutes" && b === "Supports");

/** The table's columns: the issue's targets, then the top 5's about share and the pair F1. */
const COLUMNS = [
  "system",
  "shown as about, judged off-subject (≤ 0.25)",
  "judged-about items shown as about (≥ 0.70)",
  "S/R shown judged otherwise (≤ 0.35)",
  "S/R shown the opposite way (≤ 0.03)",
  "lean right (≥ 0.50) / wrong way (≤ 0.03)",
  "top 5 judged about",
  `pair weighted F1, all judged ${SPLIT} pairs`,
];

/** The claims scored, each system's runs of them (in their order) and its labels of their judged pairs. */
interface Scored {
  test: readonly JudgedClaim[];
  runs: Record<string, ClaimRun[]>;
  pairLabels: Record<string, Label[]>;
  testPairs: readonly Judgement[];
}

/** One row per system, and each system's top-5 about share. */
function systemRows(
  { test, runs, pairLabels, testPairs }: Scored,
  byPair: Map<string, Judgement>,
): { rows: (string | number)[][]; aboutShares: Map<string, Stat> } {
  const j = (ci: number, s: Shown) => byPair.get(pairKey(test[ci].id, s.abstractId));
  const sum = (idx: number[], f: (ci: number) => [number, number]) => {
    let a = 0;
    let b = 0;
    for (const i of idx) {
      const [x, y] = f(i);
      a += x;
      b += y;
    }
    return ratio(a, b);
  };
  const rows: (string | number)[][] = [];
  const aboutShares = new Map<string, Stat>();
  for (const [name, run] of Object.entries(runs)) {
    const n = run.length;
    const judgedShown = (ci: number) => run[ci].shown.filter((s) => j(ci, s));
    // Of the items shown as about the claim, the share judged off-subject.
    const offShown: Stat = (idx) =>
      sum(idx, (ci) => {
        const about = judgedShown(ci).filter((s) => s.about);
        return [about.filter((s) => !j(ci, s)?.about).length, about.length];
      });
    // Of the judged-about items in the top 5, the share shown as about.
    const aboutRecall: Stat = (idx) =>
      sum(idx, (ci) => {
        const jAbout = judgedShown(ci).filter((s) => j(ci, s)?.about);
        return [jAbout.filter((s) => s.about).length, jAbout.length];
      });
    const decisive = (ci: number) => judgedShown(ci).filter((s) => s.about && s.label !== NEI);
    const labelWrong: Stat = (idx) =>
      sum(idx, (ci) => [decisive(ci).filter((s) => j(ci, s)?.label !== s.label).length, decisive(ci).length]);
    const labelOpposite: Stat = (idx) =>
      sum(idx, (ci) => [
        decisive(ci).filter((s) => opposite(j(ci, s)?.label ?? NEI, s.label)).length,
        decisive(ci).length,
      ]);
    const aboutShare: Stat = (idx) =>
      sum(idx, (ci) => [judgedShown(ci).filter((s) => j(ci, s)?.about).length, judgedShown(ci).length]);
    aboutShares.set(name, aboutShare);
    // The right lean from the judged labels of the items this system shows: the side with more judged Supports /
    // Refutes (a tie is mixed); claims with none are left out.
    const rightLean = (ci: number): Lean | undefined => {
      const labels = judgedShown(ci).map((s) => j(ci, s)?.label);
      const sN = labels.filter((l) => l === "Supports").length;
      const rN = labels.filter((l) => l === "Refutes").length;
      if (sN + rN === 0) return undefined;
      return sN > rN ? "supports" : rN > sN ? "refutes" : "mixed";
    };
    const leanRight: Stat = (idx) =>
      sum(idx, (ci) => {
        const want = rightLean(ci);
        return want ? [run[ci].lean === want ? 1 : 0, 1] : [0, 0];
      });
    const leanWrong: Stat = (idx) =>
      sum(idx, (ci) => {
        const want = rightLean(ci);
        const got = run[ci].lean;
        const wrong =
          (want === "supports" && got === "refutes") || (want === "refutes" && got === "supports") ? 1 : 0;
        return want ? [wrong, 1] : [0, 0];
      });
    const withEvidence = run.filter((_, ci) => rightLean(ci)).length;
    const labels = pairLabels[name];
    const pairIdx = testPairs.map((_, i) => i);
    const byClaim = new Map<string, number[]>();
    pairIdx.forEach((i) => {
      byClaim.set(testPairs[i].claimId, [...(byClaim.get(testPairs[i].claimId) ?? []), i]);
    });
    const claimIdx = test.map((c) => byClaim.get(c.id) ?? []);
    const f1: Stat = (idx) => {
      const rowsOf = idx.flatMap((ci) => claimIdx[ci]);
      return verificationF1(
        rowsOf.map((r) => labels[r]),
        rowsOf.map((r) => testPairs[r].label),
      ).weighted;
    };
    const all = run.map((_, ci) => ci);
    const shownAbout = all.reduce((a, ci) => a + judgedShown(ci).filter((s) => s.about).length, 0);
    const judgedAbout = all.reduce((a, ci) => a + judgedShown(ci).filter((s) => j(ci, s)?.about).length, 0);
    const sides = all.reduce((a, ci) => a + decisive(ci).length, 0);
    rows.push([
      name,
      `${iv(n, offShown)} of ${shownAbout}`,
      `${iv(n, aboutRecall)} of ${judgedAbout}`,
      `${iv(n, labelWrong)} of ${sides}`,
      `${iv(n, labelOpposite)} of ${sides}`,
      `${iv(n, leanRight)} / ${iv(n, leanWrong)} (${withEvidence} claims)`,
      iv(n, aboutShare),
      iv(n, f1),
    ]);
  }
  return { rows, aboutShares };
}

/** The claims of one wording style, with their runs and judged pairs. */
function styleSubset(style: string, { test, runs, pairLabels, testPairs }: Scored): Scored {
  const keep = test.map((c) => c.style === style);
  const ids = new Set(test.filter((_, i) => keep[i]).map((c) => c.id));
  const pairKeep = testPairs.map((p) => ids.has(p.claimId));
  return {
    test: test.filter((_, i) => keep[i]),
    runs: Object.fromEntries(Object.entries(runs).map(([k, r]) => [k, r.filter((_, i) => keep[i])])),
    pairLabels: Object.fromEntries(
      Object.entries(pairLabels).map(([k, l]) => [k, l.filter((_, i) => pairKeep[i])]),
    ),
    testPairs: testPairs.filter((_, i) => pairKeep[i]),
  };
}

function figures(
  scored: Scored,
  byPair: Map<string, Judgement>,
  second: readonly Judgement[],
  judged: readonly Judgement[],
  unjudged: number,
  latencies: number[],
): string {
  const { test, testPairs } = scored;
  const { rows, aboutShares } = systemRows(scored, byPair);
  const short = styleSubset(SHORT_PLAIN, scored);
  const shortTable =
    short.test.length > 0 && short.test.length < test.length
      ? [
          "",
          `Of these, the ${short.test.length} short plain claims (one plain sentence of 5 to 12 words, as people most often paste a claim; added 2026-12-03), ${short.testPairs.length} judged pairs:`,
          "",
          table(COLUMNS, systemRows(short, byPair).rows),
        ]
      : [];
  const pairsSecond = second
    .map((s) => [byPair.get(pairKey(s.claimId, s.abstractId)), s] as const)
    .filter((p): p is [Judgement, Judgement] => p[0] !== undefined);
  const kAbout = cohenKappa(
    pairsSecond.map(([a]) => String(a.about)),
    pairsSecond.map(([, b]) => String(b.about)),
  );
  const kLabel = cohenKappa(
    pairsSecond.map(([a]) => a.label),
    pairsSecond.map(([, b]) => b.label),
  );
  const p50 = percentile(latencies, 50);
  // The top 5's judged-about share of the shipped pipeline minus each other system's, paired (the same resamples of
  // claims for both).
  const shipped = aboutShares.get("shipped");
  const gains = [...aboutShares]
    .filter(([name]) => name !== "shipped" && shipped)
    .map(([name, other]) => {
      const r = itemInterval(test.length, (idx) => (shipped as Stat)(idx) - other(idx), { seed: 22 });
      return `${name} ${signedInterval(r)}`;
    });
  return [
    `${SPLIT === "test" ? "Test split" : "Dev split"}: ${test.length} claims (data/judged, split by claim before any model work${SPLIT === "test" ? ", read once" : ""}), ${testPairs.length} judged ${SPLIT} pairs; ${judged.length} judged pairs in all. Top ${K} per claim. Pairs shown by a system and never judged: **${unjudged}** (written to \`${UNJUDGED}\` to be judged blind; left out of the figures until then).`,
    "",
    table(COLUMNS, rows),
    ...shortTable,
    "",
    `Top 5 judged about, shipped minus each system, paired bootstrap 95% interval over claims: ${gains.join("; ")} (target: at least +0.10 over plain BM25).`,
    "",
    `Agreement of the double-judged share (${pairsSecond.length} pairs judged twice, independently): Cohen's kappa ${kAbout.toFixed(3)} on about, ${kLabel.toFixed(3)} on the three-way label (the organisers report 0.73).`,
    "",
    `\`check\` on the built-in index (k = ${K}, the ${SPLIT} claims, one at a time, on a machine shared with other jobs: load average ${loadavg()[0].toFixed(1)} at the end): p50 ${p50.toFixed(0)} ms, p95 ${percentile(latencies, 95).toFixed(0)} ms (target p50 < 200 ms).`,
  ].join("\n");
}
