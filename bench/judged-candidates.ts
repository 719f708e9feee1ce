/**
 * Writes the pairs to judge for data/judged/: for each claim of data/judged/claims.jsonl, the union of the top 5
 * of the shipped pipeline (`check`, k = 5, on the default index of the built-in corpus) and of a plain stemmed BM25
 * (stock parameters k1 1.2, b 0.75, over title and abstract) on the same index. Judges see the claim and the whole
 * abstract only, never a system's label: `node --import tsx bench/judged-candidates.ts OUT.jsonl [CLAIMS.jsonl]`.
 * JUDGED_K=10 takes the top 10 of both instead (the abstracts the gate decides on when `check` shows 5), and
 * JUDGED_NEW_ONLY=1 leaves out the pairs data/judged/judgements.jsonl already holds.
 */
import { rename, writeFile } from "node:fs/promises";
import { ownDataFiles, readJudgedClaims, readJudgements } from "../src/data/judged.ts";
import { Bm25Index, STOCK_PARAMS } from "../src/index/bm25.ts";
import { openIndex } from "../src/index/open.ts";
import { openPipeline } from "../src/pipeline/pipeline.ts";

const out = process.argv[2];
if (!out) throw new Error("usage: judged-candidates.ts OUT.jsonl [CLAIMS.jsonl]");
const claims = await readJudgedClaims(process.argv[3] ?? ownDataFiles().claims);

const k = Number(process.env.JUDGED_K ?? 5);
const judged = new Set(
  process.env.JUDGED_NEW_ONLY === "1"
    ? (await readJudgements(ownDataFiles().judgements)).map((j) => `${j.claimId}|${j.abstractId}`)
    : [],
);

const pipeline = await openPipeline();
const index = openIndex(pipeline.indexDir);
const plain = new Bm25Index(index.dir, { params: { ...STOCK_PARAMS } });
const rows: string[] = [];
try {
  for (const c of claims) {
    const shipped = (await pipeline.check(c.claim, { k })).evidence.map((e) => e.abstract_id);
    const bm25 = plain.search(plain.queryTerms(c.claim), k).map((h) => index.docs.get(h.docno).id);
    const ids = [...new Set([...shipped, ...bm25])].filter((id) => !judged.has(`${c.id}|${id}`));
    for (const id of ids) {
      const a = pipeline.abstract(id);
      if (!a) throw new Error(`abstract ${id} not in the index`);
      rows.push(
        JSON.stringify({
          claim_id: c.id,
          claim: c.claim,
          abstract_id: id,
          title: a.title,
          abstract: a.abstract,
          pipeline_rank: shipped.indexOf(id) + 1 || null,
          bm25_rank: bm25.indexOf(id) + 1 || null,
        }),
      );
    }
  }
} finally {
  index.close();
  await pipeline.close();
}
await writeFile(`${out}.tmp`, `${rows.join("\n")}\n`);
await rename(`${out}.tmp`, out);
process.stderr.write(`wrote ${rows.length} pairs for ${claims.length} claims to ${out}\n`);
