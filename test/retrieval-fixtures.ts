/** Shared fixtures of the index and retrieval tests: a small corpus written to a temp dir and a fake encoder. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { normalizeInPlace } from "../src/encoders/vector.ts";
import { tokenize } from "../src/text/tokenize.ts";

export const ABSTRACTS = [
  {
    id: "a1",
    title: "Arctic sea ice decline",
    abstract:
      "Arctic sea ice extent has declined by 13 percent per decade since 1979. Summer minima are falling fastest.",
  },
  {
    id: "a2",
    title: "Sea level rise",
    abstract:
      "Global mean sea level rose 3.3 mm per year from 1993 to 2020. Thermal expansion and glacier melt explain most of it.",
  },
  {
    id: "a3",
    title: "Solar activity and climate",
    abstract:
      "Changes in solar irradiance cannot explain warming since 1950. The sun has been slightly cooling.",
  },
  {
    id: "a4",
    title: "Coral bleaching",
    abstract: "Marine heatwaves cause mass coral bleaching. Reefs recover slowly between events.",
  },
  {
    id: "a5",
    title: "Carbon dioxide and temperature",
    abstract:
      "Atmospheric CO2 reached 415 ppm in 2021. Warming follows cumulative emissions almost linearly.",
  },
  {
    id: "a6",
    title: "Permafrost thaw",
    abstract: "Thawing permafrost releases methane and carbon dioxide. Emissions may accelerate warming.",
  },
  {
    id: "a7",
    title: "Hurricane intensity",
    abstract:
      "The share of category 4 and 5 hurricanes has increased. Rainfall rates rise with warmer oceans.",
  },
  {
    id: "a8",
    title: "Antarctic ice sheet",
    abstract:
      "The Antarctic ice sheet lost mass at an accelerating rate. West Antarctica dominates the loss.",
  },
];

export function tempDir(prefix = "cc-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Writes the corpus as ClimateCheck JSONL (abstract_id, title, abstract, doi) and returns its path. */
export function writeCorpus(
  dir: string,
  rows: object[] = ABSTRACTS.map((a) => ({
    abstract_id: a.id,
    title: a.title,
    abstract: a.abstract,
    doi: `10.1/${a.id}`,
  })),
): string {
  const path = join(dir, "corpus.jsonl");
  writeFileSync(path, `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`);
  return path;
}

/** A unit bag-of-hashed-words vector of a text: similar word sets give similar vectors. */
export function hashedVector(text: string, dim: number): Float32Array {
  const v = new Float32Array(dim);
  for (const tok of tokenize(text)) {
    let h = 2166136261;
    for (let i = 0; i < tok.length; i++) h = Math.imul(h ^ tok.charCodeAt(i), 16777619);
    v[(h >>> 0) % dim] += 1;
  }
  return normalizeInPlace(v);
}

/** A deterministic bag-of-hashed-words encoder (16-d; see hashedVector). */
export function fakeEncoder(name = "fake@1", dim = 16) {
  const calls: string[][] = [];
  return {
    name,
    dim,
    calls,
    async embed(texts: string[]): Promise<Float32Array[]> {
      calls.push(texts);
      return texts.map((t) => hashedVector(t, dim));
    },
    async close() {},
  };
}

/** Claims for the CLI batch tests: each shares words with at least two abstracts, so each gets k = 2 rows. */
export const CLAIMS_CSV = `claim_id,claim
c1,Arctic sea ice is declining fast
c2,Sea level rise is accelerating
c3,The sun causes the recent warming
c4,Coral reefs bleach in marine heatwaves and warming
c5,Permafrost thaw releases methane and emissions
c6,Hurricanes rise with warmer oceans and warming
`;
