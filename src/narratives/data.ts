/**
 * The narratives training data from ../shared/data. Codes: CARDS validation and FLICC train+val, split into train
 * and dev by a hash of the normalised text (so a text repeated across sources lands on one side); FLICC test kept
 * apart; and, when a user gives one, a ClimateCheck training file (all of it used for training). Stance (does the
 * text carry any narrative?): those rows plus mainstream climate text that carries none (ClimateStance Favor
 * tweets, ClimateBERT report paragraphs, environmental-claims sentences, Climate-FEVER SUPPORTS claims and evidence
 * sentences) and contrarian text without a code (ClimateStance Against tweets, Climate-FEVER REFUTES claims).
 */
import { readTask2Gold } from "../data/climatecheck.ts";
import { trainingFiles } from "../data/paths.ts";
import { cellString, readAll, requireString } from "../data/tables.ts";
import {
  readCards,
  readClimateFever,
  readClimateStance,
  readFlicc,
  readTexts,
} from "../data/training-sets.ts";
import { hashSplit } from "../learning/split.ts";
import { splitSentences } from "../text/sentences.ts";
import { tokenize } from "../text/tokenize.ts";
import type { NarrativeExample } from "../types.ts";
import { splitByClaim } from "../verification/examples.ts";

export const SPLIT_SALT = "narratives-v1";
export const DEV_FRACTION = 0.2;

export interface NarrativeData {
  train: NarrativeExample[];
  dev: NarrativeExample[];
  /** FLICC's own test file: a second, separate figure. */
  fliccTest: NarrativeExample[];
  /** Stance rows for the narrative gate: every row of `train` plus the mainstream and uncoded contrarian text. */
  stanceTrain: StanceExample[];
  /** Held-out stance rows, per source (none of their texts is in any training row). */
  stanceDev: StanceExample[];
}

/** Where a stance row comes from; the benchmark reports the share given a narrative per source. */
export type StanceSource =
  | "cards"
  | "flicc"
  | "climatecheck"
  | "stance-favor"
  | "stance-against"
  | "climatebert"
  | "env-claims"
  | "cf-supports"
  | "cf-refutes"
  | "cf-evidence"
  | "arxiv";

export interface StanceExample {
  id: string;
  text: string;
  /** Whether the text carries a narrative (any code but 0_0). */
  narrative: boolean;
  source: StanceSource;
}

/** Mainstream sources: the share of their texts given a narrative is the false-alarm rate. */
export const MAINSTREAM_SOURCES: readonly StanceSource[] = [
  "stance-favor",
  "climatebert",
  "env-claims",
  "cf-supports",
  "cf-evidence",
  "arxiv",
];

/** arXiv papers in categories of their own (physics.gen-ph) include contrarian ones: those are left out. */
const ARXIV_EXCLUDED_CATEGORY = "physics.gen-ph";
/** Sentences taken from each arXiv abstract (its title and first ones): statements of findings, not methods. */
const ARXIV_SENTENCES = 3;

const stanceOf = (e: NarrativeExample, source: StanceSource): StanceExample => ({
  id: e.id,
  text: e.text,
  narrative: !e.codes.includes("0_0"),
  source,
});

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

  const sourceOf = (id: string): StanceSource =>
    id.split(":")[0].startsWith("flicc") ? "flicc" : (id.split(":")[0] as StanceSource);
  const stanceTrain: StanceExample[] = train.map((e) => stanceOf(e, sourceOf(e.id)));
  const stanceDev: StanceExample[] = [
    ...dev.filter((e) => e.id.startsWith("cards:")).map((e) => stanceOf(e, "cards")),
    ...fliccTest.map((e) => stanceOf(e, "flicc")),
  ];
  const plain = (id: string, text: string, narrative: boolean, source: StanceSource): StanceExample => ({
    id,
    text,
    narrative,
    source,
  });
  const tweets = async (path: string, side: StanceExample[]) => {
    for (const t of await readClimateStance(path)) {
      if (t.stance === "Favor") side.push(plain(t.id, t.text, false, "stance-favor"));
      else if (t.stance === "Against") side.push(plain(t.id, t.text, true, "stance-against"));
    }
  };
  await tweets(files.climateStance.train, stanceTrain);
  await tweets(files.climateStance.val, stanceDev);
  for (const t of await readTexts(files.climatebert.train, "climatebert"))
    stanceTrain.push(plain(t.id, t.text, false, "climatebert"));
  for (const t of await readTexts(files.climatebert.test, "climatebert-test"))
    stanceDev.push(plain(t.id, t.text, false, "climatebert"));
  for (const t of await readTexts([files.environmentalClaims.train], "env-claims"))
    stanceTrain.push(plain(t.id, t.text, false, "env-claims"));
  const envDev = await readTexts(
    [files.environmentalClaims.dev, files.environmentalClaims.test],
    "env-claims-dev",
  );
  for (const t of envDev) stanceDev.push(plain(t.id, t.text, false, "env-claims"));
  // Climate-FEVER: the verifier's claim split, so a claim the verifier is scored on is never a training row here.
  const fever = (await readClimateFever(files.climateFever)).map((c) => ({ ...c, claimId: `cf:${c.id}` }));
  const feverSplit = splitByClaim(fever);
  for (const [claims, side] of [
    [feverSplit.train, stanceTrain],
    [feverSplit.dev, stanceDev],
  ] as const) {
    for (const c of claims) {
      if (c.claimLabel === "SUPPORTS") side.push(plain(c.claimId, c.claim, false, "cf-supports"));
      if (c.claimLabel === "REFUTES") side.push(plain(c.claimId, c.claim, true, "cf-refutes"));
      for (const e of c.evidences) side.push(plain(`${c.claimId}:${e.id}`, e.text, false, "cf-evidence"));
    }
  }
  for (const a of await readArxivStatements(files.arxivClimate)) {
    // Split by paper: the sentences of one abstract stay on one side.
    const paper = a.id.split(":").slice(0, -1).join(":");
    const side = hashSplit(paper, DEV_FRACTION, "narratives-arxiv") === "dev" ? stanceDev : stanceTrain;
    side.push(plain(a.id, a.text, false, "arxiv"));
  }
  return {
    train,
    dev,
    fliccTest,
    stanceTrain: distinct(stanceTrain, stanceDev),
    stanceDev: distinct(stanceDev, []),
  };
}

/** Titles and first sentences of the arXiv climate abstracts: mainstream scientific statements on the codes' topics. */
async function readArxivStatements(path: string): Promise<{ id: string; text: string }[]> {
  const out: { id: string; text: string }[] = [];
  for (const r of await readAll(path)) {
    const id = requireString(path, r, "abstract_id");
    if ((cellString(r.row.categories) ?? "").split(/\s+/).includes(ARXIV_EXCLUDED_CATEGORY)) continue;
    const title = cellString(r.row.title);
    if (title) out.push({ id: `arxiv:${id}:title`, text: title });
    splitSentences(requireString(path, r, "abstract"))
      .slice(0, ARXIV_SENTENCES)
      .forEach((text, k) => {
        out.push({ id: `arxiv:${id}:${k}`, text });
      });
  }
  return out;
}

/** Rows whose normalised text is not in `exclude` nor repeated earlier (a dev text never trains). */
function distinct(rows: readonly StanceExample[], exclude: readonly StanceExample[]): StanceExample[] {
  const seen = new Set(exclude.map((e) => splitKey(e.text)));
  return rows.filter((e) => {
    const key = splitKey(e.text);
    if (key === "" || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
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
