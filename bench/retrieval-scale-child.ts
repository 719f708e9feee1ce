/**
 * Child process of the retrieval-scale benchmark, so peak memory is that of one job alone; prints one JSON line:
 * `ingest CORPUS DIR`, `query DIR CLAIMS_JSON` (BM25 + features), `dense WORKDIR` (IVF build, exhaustive and
 * IVF search of 400k vectors made from real USE-lite vectors, recall of IVF against exhaustive search),
 * `whole-ingest CORPUS WORKDIR` (an index with both vector sets) or `whole WORKDIR CLAIMS_JSON thread|worker`
 * (whole `retrieve` calls on it).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { USE_LITE_NAME } from "../src/encoders/use-lite-model.ts";
import { topHits } from "../src/index/bm25.ts";
import { titleAndLead } from "../src/index/embed-text.ts";
import { ingest, type VectorSpec } from "../src/index/ingest.ts";
import { buildIvf, dotRows, PROBE_SHARE } from "../src/index/ivf.ts";
import { openIndex } from "../src/index/open.ts";
import { VectorSet } from "../src/index/vectors.ts";
import { openEncoders, USE_LEAD_CHARS } from "../src/retrieval/encoders.ts";
import { FAMILIES } from "../src/retrieval/features.ts";
import { RERANKER_PATH } from "../src/retrieval/load.ts";
import { Reranker } from "../src/retrieval/reranker.ts";
import { Retriever } from "../src/retrieval/retriever.ts";
import { percentile } from "./report.ts";
import { timeEach } from "./retrieval-speed.ts";

const maxRssMiB = () => process.resourceUsage().maxRSS / 1024;
const [cmd, a, b] = process.argv.slice(2);
const f32 = (path: string) => {
  const buf = readFileSync(path);
  return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
};

if (cmd === "ingest") {
  const t = performance.now();
  const r = await ingest(a, b);
  console.log(
    JSON.stringify({ seconds: (performance.now() - t) / 1000, total: r.total, maxRssMiB: maxRssMiB() }),
  );
} else if (cmd === "query") {
  const t0 = performance.now();
  const index = openIndex(a);
  const openSeconds = (performance.now() - t0) / 1000;
  const claims = JSON.parse(readFileSync(b, "utf8")) as string[];
  const r = new Retriever(index);
  const families = FAMILIES.filter((f) => f === "lexical" || f === "coverage" || f === "numbers");
  const once = async (c: string) => {
    const [s] = await r.stage1([c]);
    r.features(s, families, 100);
  };
  for (const c of claims.slice(0, 10)) await once(c);
  const times: number[] = [];
  const bm25: number[] = [];
  for (const c of claims.slice(10)) {
    const t = performance.now();
    await once(c);
    times.push(performance.now() - t);
    const q = index.bm25.queryTerms(c);
    const t1 = performance.now();
    index.bm25.search(q, 1000);
    bm25.push(performance.now() - t1);
  }
  console.log(
    JSON.stringify({
      openSeconds,
      p50: percentile(times, 50),
      p95: percentile(times, 95),
      bm25p50: percentile(bm25, 50),
      bm25p95: percentile(bm25, 95),
      queries: times.length,
      maxRssMiB: maxRssMiB(),
    }),
  );
  index.close();
} else if (cmd === "dense") {
  const src = f32(join(a, "source-vectors.f32"));
  const pairs = new Uint16Array(readFileSync(join(a, "sources.u16")).buffer.slice(0));
  const claims = f32(join(a, "claim-vectors.f32"));
  const dim = 512;
  const n = pairs.length / 2;
  const nSrc = src.length / dim;
  // Mixed: title source + lead source, as the synthetic text is (two unrelated abstracts; hard for any
  // clustering). Coherent: title source + one of its 10 nearest SciFact abstracts (a real abstract's topic).
  const neighbours = nearestSources(src, nSrc, dim, 10);
  const partner = {
    mixed: (i: number) => pairs[2 * i + 1],
    coherent: (i: number) => neighbours[pairs[2 * i] * 10 + (pairs[2 * i + 1] % 10)],
  };
  const out: Record<string, unknown> = { n, queries: claims.length / dim };
  for (const kind of ["coherent", "mixed"] as const) {
    out[kind] = denseFigures(a, syntheticVectors(src, pairs, partner[kind]), n, dim, claims);
  }
  console.log(JSON.stringify({ ...out, maxRssMiB: maxRssMiB() }));
} else if (cmd === "whole-ingest") {
  // `whole-ingest CORPUS WORKDIR`: an index with both vector sets (SIF real; USE-lite the mixed synthetic
  // vectors, as ingest with the real encoder would take hours) into WORKDIR/index-whole.
  const work = b;
  const pairs = new Uint16Array(readFileSync(join(work, "sources.u16")).buffer.slice(0));
  const vectors = syntheticVectors(f32(join(work, "source-vectors.f32")), pairs, (i) => pairs[2 * i + 1]);
  const cold = await openEncoders({ workers: 0, cache: false, only: ["sif"] });
  const sif = cold.specs.find((x) => x.name === "sif");
  if (!sif) throw new Error("no SIF encoder");
  const use: VectorSpec = {
    name: "use",
    // The real encoder's name, so the query side (real USE-lite) is accepted; the vector of doc sN is row N.
    encoder: {
      name: USE_LITE_NAME,
      dim: 512,
      embed: async (ids) =>
        ids.map((id) => vectors.subarray(Number(id.slice(1)) * 512, (Number(id.slice(1)) + 1) * 512)),
    },
    recipe: { spec: titleAndLead(USE_LEAD_CHARS).spec, text: (d) => d.id },
  };
  const t0 = performance.now();
  await ingest(a, join(work, "index-whole"), { vectors: [use, sif], batchSize: 4096 });
  console.log(JSON.stringify({ ingestSeconds: (performance.now() - t0) / 1000, maxRssMiB: maxRssMiB() }));
  await cold.close();
} else if (cmd === "whole") {
  // `whole WORKDIR CLAIMS_JSON thread|worker`: whole `retrieve` calls in a fresh process, the claim embedded by
  // USE-lite without a cache, in this thread or in one worker thread (this thread meanwhile runs BM25 and SIF).
  const [work, claimsFile, where] = [a, b, process.argv[5]];
  const cold = await openEncoders({ workers: where === "worker" ? 1 : 0, cache: false });
  const index = openIndex(join(work, "index-whole"));
  const r = new Retriever(index, {
    encoders: cold.encoders,
    words: cold.words,
    reranker: Reranker.load(RERANKER_PATH),
  });
  const claims = JSON.parse(readFileSync(claimsFile, "utf8")) as string[];
  const t = await timeEach(claims, 10, (c) => r.retrieve(c, 10));
  console.log(
    JSON.stringify({
      wallP50: percentile(t.wall, 50),
      wallP95: percentile(t.wall, 95),
      cpuP50: percentile(t.cpu, 50),
      cpuP95: percentile(t.cpu, 95),
      queries: t.wall.length,
      probe: index.vectors.use.ivf?.probe ?? 0,
      lists: index.vectors.use.ivf?.lists ?? 0,
      maxRssMiB: maxRssMiB(),
    }),
  );
  index.close();
  await cold.close();
}

/** Unit vectors of the synthetic abstracts: title source + `partner(i)`, from the real source vectors. */
function syntheticVectors(
  src: Float32Array,
  pairs: Uint16Array,
  partner: (i: number) => number,
): Float32Array {
  const dim = 512;
  const n = pairs.length / 2;
  const data = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const t = pairs[2 * i] * dim;
    const l = partner(i) * dim;
    let s = 0;
    for (let j = 0; j < dim; j++) {
      const v = src[t + j] + src[l + j];
      data[i * dim + j] = v;
      s += v * v;
    }
    const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
    for (let j = 0; j < dim; j++) data[i * dim + j] *= inv;
  }
  return data;
}

/** The k nearest other sources of each source (by dot product), row-major. */
function nearestSources(src: Float32Array, n: number, dim: number, k: number): Uint16Array {
  const out = new Uint16Array(n * k);
  const scores = new Float32Array(n);
  const ids = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    for (let d = 0; d < n; d++) {
      scores[d] = d === i ? Number.NEGATIVE_INFINITY : dotRows(src, i * dim, src, d * dim, dim);
      ids[d] = d;
    }
    topHits(ids, n, scores, k).forEach((h, r) => {
      out[i * k + r] = h.docno;
    });
  }
  return out;
}

function denseFigures(work: string, data: Float32Array, n: number, dim: number, claims: Float32Array) {
  const vecPath = join(work, "vectors.f32");
  writeFileSync(vecPath, new Uint8Array(data.buffer));
  const t0 = performance.now();
  const ivf = buildIvf(data, n, dim);
  const ivfSeconds = (performance.now() - t0) / 1000;
  const set = new VectorSet(vecPath, dim, n, ivf);
  const queries = claims.length / dim;
  const exact: Set<number>[] = [];
  const exhaustiveMs: number[] = [];
  for (let q = 0; q < queries; q++) {
    const v = claims.subarray(q * dim, (q + 1) * dim);
    const t = performance.now();
    exact.push(new Set(set.exhaustive(v, 200).map((h) => h.docno)));
    exhaustiveMs.push(performance.now() - t);
  }
  const probes = [0.02, 0.04, 0.1, 0.2, PROBE_SHARE]
    .filter((x, i, xs) => xs.indexOf(x) === i)
    .sort((x, y) => x - y)
    .map((share) => {
      const probe = Math.max(1, Math.ceil(ivf.lists * share));
      const ms: number[] = [];
      let found = 0;
      for (let q = 0; q < queries; q++) {
        const v = claims.subarray(q * dim, (q + 1) * dim);
        const t = performance.now();
        const hits = set.search(v, 200, probe);
        ms.push(performance.now() - t);
        for (const h of hits) if (exact[q].has(h.docno)) found++;
      }
      return {
        share,
        probe,
        recall: found / (queries * 200),
        p50: percentile(ms, 50),
        p95: percentile(ms, 95),
      };
    });
  return {
    lists: ivf.lists,
    defaultProbe: ivf.probe,
    ivfSeconds,
    exhaustiveP50: percentile(exhaustiveMs, 50),
    probes,
  };
}
