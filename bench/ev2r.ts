/**
 * Ev2R with the built-in judge on our own retrieval runs over the dev splits (SciFact, Climate-FEVER): plain
 * BM25 beside the shipped retriever (dense candidates + re-ranker), each pair labelled by the built-in verifier
 * for y^. The Ev2R cost grows with retrieved x gold abstracts x sentences, so a fixed subsample of dev claims
 * is scored (chosen by a hash of the claim id among claims in both dev splits, the same for every system). Judge answers go to a fresh
 * cache per run, so the times are cold-judge times (the USE-lite sentence cache is shared and may be warm).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Ev2rPair, type Ev2rScores, scoreEv2r } from "../src/evaluation/ev2r.ts";
import { builtinJudge, SUPPORT_THRESHOLD } from "../src/evaluation/judges/builtin.ts";
import { cachedJudge } from "../src/evaluation/judges/cache.ts";
import { type RetrievalScores, scoreRetrieval } from "../src/evaluation/metrics.ts";
import { hashSplit, hashUnit } from "../src/learning/split.ts";
import { openEncoders } from "../src/retrieval/encoders.ts";
import { RERANKER_PATH } from "../src/retrieval/load.ts";
import { Reranker } from "../src/retrieval/reranker.ts";
import { Retriever } from "../src/retrieval/retriever.ts";
import { openEvalSets } from "../src/retrieval/train.ts";
import type { Task1Prediction } from "../src/types.ts";
import { openBuiltinVerifier } from "../src/verification/builtin.ts";
import { DEV_FRACTION, SPLIT_SALT } from "../src/verification/examples.ts";
import type { Verifier } from "../src/verification/verifier.ts";
import { supportDecisionSection } from "./ev2r-support.ts";
import { type BenchSection, table } from "./report.ts";

/** Dev claims scored per data set (the same for every system). */
export const CLAIMS_PER_SET = 60;
const K = 10;

const HEADER = [
  "system",
  "claims scored",
  "left out: all NEI / all retrieved judged",
  "unannotated pairs",
  "Ev2R",
  "S_ref",
  "pairs with S_ref > 0",
  "S_proxy",
  "auto-verification",
  "R@5",
  "Bpref",
  "Ev2R time",
];

const n = (v: number | null) => (v === null ? "n/a" : v.toFixed(3));

function row(
  name: string,
  e: Ev2rScores,
  pairs: readonly Ev2rPair[],
  r: RetrievalScores,
  seconds: number,
): (string | number)[] {
  return [
    name,
    e.ev2r_claims,
    `${e.ev2r_excluded.all_nei} / ${e.ev2r_excluded.all_retrieved_annotated}`,
    e.ev2r_pairs,
    n(e.ev2r),
    n(e.ev2r_ref),
    `${pairs.filter((p) => p.sRef > 0).length} of ${pairs.length}`,
    n(e.ev2r_proxy),
    n(e.auto_verification),
    r.recall_at_5,
    r.bpref,
    `${seconds.toFixed(0)} s (${(e.ev2r_pairs / Math.max(seconds, 1e-3)).toFixed(1)} pairs/s)`,
  ];
}

/** Predicted labels for the retrieved pairs, from the verifier (the y^ of the automatic verification). */
async function label(
  preds: Task1Prediction[],
  claims: Map<string, string>,
  r: Retriever,
  verifier: Verifier,
): Promise<Task1Prediction[]> {
  const verdicts = await verifier.verifyPairs(
    preds.map((p) => {
      const d = r.index.docs.get(r.index.docs.docno(p.abstractId) as number);
      return {
        claim: claims.get(p.claimId) as string,
        abstract: d.abstract,
        title: d.title,
        sentences: d.sentences,
      };
    }),
  );
  return preds.map((p, i) => ({ ...p, label: verdicts[i].label }));
}

export async function bench(): Promise<BenchSection> {
  const enc = await openEncoders({ workers: 0 });
  const sets = await openEvalSets(enc, undefined, (m) => console.error(m));
  const verifier = await openBuiltinVerifier();
  const reranker = existsSync(RERANKER_PATH) ? Reranker.load(RERANKER_PATH) : undefined;
  const cacheRoot = mkdtempSync(join(tmpdir(), "cc-bench-ev2r-"));
  const parts: string[] = [];
  try {
    for (const s of sets) {
      const index = s.retriever.index;
      // Only claims that neither the retriever nor the verifier trained on, so S_proxy and S_ver are honest.
      const prefix = s.set.name === "scifact" ? "sf" : "cf";
      const unseen = s.set.dev.filter(
        (c) => hashSplit(`${prefix}:${c.id}`, DEV_FRACTION, SPLIT_SALT) === "dev",
      );
      const claims = unseen
        .sort((a, b) => hashUnit(a.id, "ev2r-bench") - hashUnit(b.id, "ev2r-bench"))
        .slice(0, CLAIMS_PER_SET);
      const ids = new Set(claims.map((c) => c.id));
      const gold = s.set.gold.filter((g) => ids.has(g.claimId));
      const claimText = new Map(claims.map((c) => [c.id, c.text]));
      const systems: { name: string; retriever: Retriever }[] = [
        { name: "BM25", retriever: new Retriever(index) },
      ];
      if (reranker) {
        const full = new Retriever(index, { encoders: enc.encoders, words: enc.words, reranker });
        if (full.reranker)
          systems.push({ name: "shipped retriever (BM25 + dense + re-ranker)", retriever: full });
      }
      const rows: (string | number)[][] = [];
      for (const sys of systems) {
        const preds = await label(
          await sys.retriever.retrieveAll(claims, K),
          claimText,
          sys.retriever,
          verifier,
        );
        const abstracts = new Map(
          [...new Set([...preds.map((p) => p.abstractId), ...gold.map((g) => g.abstractId)])].flatMap(
            (id) => {
              const docno = index.docs.docno(id);
              if (docno === undefined) return [];
              const d = index.docs.get(docno);
              return [[id, { abstract: d.abstract, title: d.title, sentences: d.sentences }] as const];
            },
          ),
        );
        const judge = cachedJudge(
          builtinJudge(verifier),
          join(cacheRoot, `${s.set.name}-${sys.name.replace(/\W+/g, "_")}.jsonl`),
        );
        const started = performance.now();
        const { scores, pairs } = await scoreEv2r({
          claims: claimText,
          gold,
          predictions: preds,
          abstracts,
          judge,
          verifier,
        });
        const seconds = (performance.now() - started) / 1000;
        console.error(`ev2r ${s.set.name} ${sys.name}: ${n(scores.ev2r)} in ${seconds.toFixed(0)} s`);
        rows.push(row(sys.name, scores, pairs, scoreRetrieval(preds, gold), seconds));
      }
      parts.push(
        `### ${s.set.name} dev: ${claims.length} claims (of ${unseen.length} in both dev splits, ${s.set.dev.length} in the retrieval dev split), top ${K}, ${index.docs.size} abstracts\n\n${table(HEADER, rows)}`,
      );
    }
    parts.push(
      [
        `Built-in judge (${builtinJudge(verifier).name}): atomic facts = abstract sentences, a fact is supported when the built-in verifier gives (fact, text) P(Supports) ≥ ${SUPPORT_THRESHOLD}; an approximation of the paper's LLM atomic-fact judge. Proxy and y^: ${verifier.name}.`,
        reranker
          ? ""
          : "The shipped re-ranker (models/retrieval/reranker.json) was missing when this ran, so only BM25 is shown.",
        "Gold: SciFact evidence abstracts (Supports/Refutes) and cited non-evidence abstracts (NEI); Climate-FEVER: the claim's five evidence sentences with their labels (the corpus is one-sentence abstracts, so there each pair has one atomic fact).",
        "Claims are drawn from the intersection of the retrieval dev split and the verifier's dev split, so neither the re-ranker nor the verifier (proxy, judge, y^) saw them in training.",
      ]
        .filter((l) => l !== "")
        .join("\n\n"),
    );
    parts.push(await supportDecisionSection(verifier));
  } finally {
    rmSync(cacheRoot, { recursive: true, force: true });
    await verifier.close();
    for (const s of sets) s.close();
    await enc.close();
  }
  return {
    id: "ev2r",
    title: "Ev2R (built-in judge) of our retrieval runs on the dev splits",
    command: "npm run bench -- ev2r",
    markdown: parts.join("\n\n"),
  };
}
