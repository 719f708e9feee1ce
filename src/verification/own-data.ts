/**
 * Our own verification pairs on the built-in corpus, as examples: judged pairs of claims as people post them
 * (data/judged; train claims for training, dev claims for scoring; the test split is never returned) and claims
 * written from abstracts (data/abstract-claims, all for training). The abstracts' sentences are split as the index
 * splits them, so training sees what inference sees.
 */
import { existsSync } from "node:fs";
import { BUILTIN_CORPUS } from "../data/builtin-corpus.ts";
import { readCorpus } from "../data/climatecheck.ts";
import {
  type JudgedSplit,
  ownDataFiles,
  readJudgedClaims,
  readJudgements,
  readWrittenClaims,
} from "../data/judged.ts";
import { storedSentences } from "../index/ingest.ts";
import { type OwnPair, ownExamples, type SourcedExample } from "./examples.ts";

export interface OwnData {
  /** Judged pairs of train claims, then written claims whose abstract no dev or test claim was judged on. */
  train: SourcedExample[];
  /** Judged pairs of dev claims. */
  dev: SourcedExample[];
  /** Written claims left out because a dev or test claim was judged on their abstract. */
  droppedWritten: number;
}

type AbstractOf = (id: string) => { title?: string; sentences: string[] } | undefined;

/** The built-in corpus by id, with the index's sentence split. */
export async function builtinAbstracts(path: string = BUILTIN_CORPUS.path): Promise<AbstractOf> {
  const byId = new Map<string, { title?: string; sentences: string[] }>();
  for await (const { abstract: a } of readCorpus(path, { format: "climatecheck" }))
    byId.set(a.id, { title: a.title, sentences: storedSentences(a) });
  return (id) => byId.get(id);
}

const markJudged = (xs: SourcedExample[]): SourcedExample[] => xs.map((e) => ({ ...e, judged: true }));

/** Our pairs from `dataDir` (default the repository's data/); empty when data/judged is absent. */
export async function loadOwnData(dataDir?: string, abstractOf?: AbstractOf): Promise<OwnData> {
  const files = ownDataFiles(dataDir);
  if (!existsSync(files.claims) || !existsSync(files.judgements))
    return { train: [], dev: [], droppedWritten: 0 };
  const claims = await readJudgedClaims(files.claims);
  const judged = await readJudgements(files.judgements);
  const written = existsSync(files.writtenClaims) ? await readWrittenClaims(files.writtenClaims) : [];
  const splitOf = new Map(claims.map((c) => [c.id, c]));
  const of = abstractOf ?? (await builtinAbstracts());
  const judgedPairs = (split: JudgedSplit): OwnPair[] =>
    judged.flatMap((j) => {
      const c = splitOf.get(j.claimId);
      return c?.split === split ? [{ ...j, claim: c.claim }] : [];
    });
  // Held-out abstracts: a written claim on one would teach the model a dev or test pair's abstract.
  const heldOut = new Set(
    judged.filter((j) => splitOf.get(j.claimId)?.split !== "train").map((j) => j.abstractId),
  );
  const kept = written.filter((w) => !heldOut.has(w.abstractId));
  const writtenPairs: OwnPair[] = kept.map((w) => ({
    claimId: w.id,
    claim: w.claim,
    abstractId: w.abstractId,
    label: w.label,
    evidence: w.evidence,
  }));
  return {
    train: [...markJudged(ownExamples(judgedPairs("train"), of)), ...ownExamples(writtenPairs, of)],
    dev: markJudged(ownExamples(judgedPairs("dev"), of)),
    droppedWritten: written.length - kept.length,
  };
}
