/**
 * The narratives training data from ../shared/data: CARDS validation and FLICC train+val, split into train and
 * dev by a hash of the normalised text (so a text repeated across sources lands on one side); FLICC test kept
 * apart; and, when a user gives one, a ClimateCheck training file (all of it used for training).
 */
import { readTask2Gold } from "../data/climatecheck.ts";
import { trainingFiles } from "../data/paths.ts";
import { readCards, readFlicc } from "../data/training-sets.ts";
import { hashSplit } from "../learning/split.ts";
import { tokenize } from "../text/tokenize.ts";
import type { NarrativeExample } from "../types.ts";

export const SPLIT_SALT = "narratives-v1";
export const DEV_FRACTION = 0.2;

export interface NarrativeData {
  train: NarrativeExample[];
  dev: NarrativeExample[];
  /** FLICC's own test file: a second, separate figure. */
  fliccTest: NarrativeExample[];
}

export function splitKey(text: string): string {
  return tokenize(text).join(" ");
}

export async function loadNarrativeData(
  dataDir?: string,
  climatecheckTrain?: string,
): Promise<NarrativeData> {
  const files = trainingFiles(dataDir);
  const cards = await readCards(files.cards);
  // The adapter numbers ids by line within a file: prefix the split so train and val ids stay distinct.
  const flicc = [
    ...(await readFlicc(files.flicc.train)).examples.map((e) => ({ ...e, id: `flicc-train:${e.id}` })),
    ...(await readFlicc(files.flicc.val)).examples.map((e) => ({ ...e, id: `flicc-val:${e.id}` })),
  ];
  const train: NarrativeExample[] = [];
  const dev: NarrativeExample[] = [];
  for (const e of [...cards, ...flicc]) {
    (hashSplit(splitKey(e.text), DEV_FRACTION, SPLIT_SALT) === "dev" ? dev : train).push(e);
  }
  if (climatecheckTrain) {
    for (const e of await readTask2Gold(climatecheckTrain)) {
      if (e.text !== "") train.push({ ...e, id: `climatecheck:${e.id}` });
    }
  }
  const fliccTest = (await readFlicc(files.flicc.test)).examples;
  return { train, dev, fliccTest };
}

/** Rows per source (the id prefix), for the model card. */
export function countBySource(examples: readonly NarrativeExample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of examples) {
    const source = e.id.split(":")[0].replace(/-(train|val)$/, "");
    out[source] = (out[source] ?? 0) + 1;
  }
  return out;
}
