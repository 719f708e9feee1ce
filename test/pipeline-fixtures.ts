/**
 * A small pipeline for the pipeline, server and browser tests: the retrieval fixtures' corpus in a BM25 index built
 * in a temp dir, a rule-based verifier and a keyword narratives classifier, so every expected output is known.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { ingest } from "../src/index/ingest.ts";
import { openIndex } from "../src/index/open.ts";
import type { NarrativePrediction } from "../src/narratives/classifier.ts";
import { createPipeline, type Pipeline, type PipelineParts } from "../src/pipeline/pipeline.ts";
import { Retriever } from "../src/retrieval/retriever.ts";
import { tokenize } from "../src/text/tokenize.ts";
import { abstractSentences, makeVerifier, type Verdict } from "../src/verification/verifier.ts";
import { tempDir, writeCorpus } from "./retrieval-fixtures.ts";

/**
 * Refutes (0.8) citing the first sentence with "cannot", else Supports (0.7) citing the first sentence sharing
 * two words with the claim, else NEI (0.6).
 */
export function ruleVerdict(claim: string, sentences: string[]): Verdict {
  const words = new Set(tokenize(claim));
  const refuting = sentences.findIndex((s) => /\bcannot\b/i.test(s));
  if (refuting >= 0)
    return {
      label: "Refutes",
      confidence: 0.8,
      probs: { supports: 0.1, refutes: 0.8, nei: 0.1 },
      rationale: [refuting],
    };
  const supporting = sentences.findIndex((s) => tokenize(s).filter((t) => words.has(t)).length >= 2);
  if (supporting >= 0)
    return {
      label: "Supports",
      confidence: 0.7,
      probs: { supports: 0.7, refutes: 0.1, nei: 0.2 },
      rationale: [supporting],
    };
  return {
    label: "Not Enough Information",
    confidence: 0.6,
    probs: { supports: 0.2, refutes: 0.2, nei: 0.6 },
    rationale: [],
  };
}

/**
 * "scientists"/"models" in a claim: 5_1 with P(group 5) 0.8. "policies": 0_0 with P(narrative) 0.45, most of it on
 * groups 4 and 5 (a phantom narrative the gate did not name). Otherwise 0_0.
 */
export function keywordNarratives(text: string): NarrativePrediction {
  if (/policies/i.test(text))
    return { codes: ["0_0"], narrative: 0.45, probabilities: { "0_0": 0.55, "4_0": 0.3, "5_0": 0.25 } };
  return /scientist|models/i.test(text)
    ? { codes: ["5_1"], narrative: 0.9, probabilities: { "0_0": 0.1, "4_0": 0.05, "5_0": 0.8, "5_1": 0.6 } }
    : { codes: ["0_0"], narrative: 0.1, probabilities: { "0_0": 0.9, "4_0": 0.02, "5_0": 0.03 } };
}

export interface TestPipeline {
  pipeline: Pipeline;
  dir: string;
  /** Pairs the verifier saw, per call. */
  verifierCalls: number[];
  cleanup(): Promise<void>;
}

/** Builds the fixture index (BM25 only) and a pipeline over it. */
export async function testPipeline(
  parts: Pick<PipelineParts, "relevance" | "scope"> = {},
): Promise<TestPipeline> {
  const dir = tempDir("cc-pipeline-");
  const index = join(dir, "index");
  await ingest(writeCorpus(dir), index);
  const opened = openIndex(index);
  const verifierCalls: number[] = [];
  const verifier = makeVerifier("rules", async (pairs) => {
    verifierCalls.push(pairs.length);
    return pairs.map((p) => ruleVerdict(p.claim, abstractSentences(p)));
  });
  const pipeline = createPipeline({
    retriever: new Retriever(opened),
    verifier,
    classifier: { classify: async (texts) => texts.map(keywordNarratives) },
    ...parts,
    close: async () => opened.close(),
  });
  return {
    pipeline,
    dir,
    verifierCalls,
    async cleanup() {
      await pipeline.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
