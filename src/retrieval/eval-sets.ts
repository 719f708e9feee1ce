/**
 * Our retrieval dev sets from ../shared/data, split deterministically by claim id:
 * - SciFact: claims_train over the full 5,183-abstract corpus; evidence abstracts are relevant, cited abstracts
 *   without evidence are judged non-relevant (so Bpref has judged negatives).
 * - Climate-FEVER: every distinct evidence sentence of every claim is the corpus (one-sentence abstracts titled by
 *   their Wikipedia article); SUPPORTS/REFUTES sentences are relevant, NOT_ENOUGH_INFO ones judged non-relevant.
 */
import { join } from "node:path";
import type { CorpusFormat } from "../data/climatecheck.ts";
import { homeDir, trainingFiles } from "../data/paths.ts";
import { readClimateFever, readSciFactClaims } from "../data/training-sets.ts";
import { hashSplit } from "../learning/split.ts";
import type { Claim, LabelledPair } from "../types.ts";

export const DEV_FRACTION = 0.3;

export interface EvalSet {
  name: "scifact" | "climate-fever";
  corpus: string;
  format: CorpusFormat;
  train: Claim[];
  dev: Claim[];
  gold: LabelledPair[];
}

const side = (set: string, id: string) => hashSplit(id, DEV_FRACTION, `retrieval:${set}`);

export async function loadEvalSets(dataDir?: string): Promise<EvalSet[]> {
  const files = trainingFiles(dataDir);
  const sci = await readSciFactClaims(files.scifactClaims);
  const sciGold: LabelledPair[] = [];
  for (const c of sci) {
    for (const [doc, ev] of c.evidence) sciGold.push({ claimId: c.id, abstractId: doc, label: ev.label });
    for (const doc of c.cited) {
      if (!c.evidence.has(doc))
        sciGold.push({ claimId: c.id, abstractId: doc, label: "Not Enough Information" });
    }
  }
  const cf = await readClimateFever(files.climateFever);
  const cfGold: LabelledPair[] = [];
  for (const c of cf) {
    const seen = new Set<string>();
    for (const e of c.evidences) {
      if (seen.has(e.id)) continue;
      seen.add(e.id);
      cfGold.push({ claimId: c.id, abstractId: e.id, label: e.label });
    }
  }
  const make = (
    name: EvalSet["name"],
    corpus: string,
    format: CorpusFormat,
    claims: Claim[],
    gold: LabelledPair[],
  ): EvalSet => ({
    name,
    corpus,
    format,
    train: claims.filter((c) => side(name, c.id) === "train"),
    dev: claims.filter((c) => side(name, c.id) === "dev"),
    gold,
  });
  return [
    make(
      "scifact",
      files.scifactCorpus,
      "scifact",
      sci.map((c) => ({ id: c.id, text: c.claim })),
      sciGold,
    ),
    make(
      "climate-fever",
      files.climateFever,
      "climate-fever",
      cf.map((c) => ({ id: c.id, text: c.claim })),
      cfGold,
    ),
  ];
}

/** Where the persistent index of an eval set lives (reused across runs; ingest is idempotent). */
export function evalIndexDir(name: string): string {
  return join(homeDir(), "eval-index", name);
}
