import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { TITLE_AND_ABSTRACT } from "../src/index/embed-text.ts";
import { ingest } from "../src/index/ingest.ts";
import { buildIvf, readIvf, writeIvf } from "../src/index/ivf.ts";
import { openIndex } from "../src/index/open.ts";
import { FILES } from "../src/index/schema.ts";
import { VectorSet } from "../src/index/vectors.ts";
import { mulberry32 } from "../src/learning/random.ts";
import { ABSTRACTS, fakeEncoder, tempDir, writeCorpus } from "./retrieval-fixtures.ts";

/** Unit vectors around a few hundred random centres (clustered, as sentence embeddings are). */
function clustered(n: number, dim: number, seed = 5): Float32Array {
  const rnd = mulberry32(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(rnd() + 1e-12)) * Math.cos(2 * Math.PI * rnd());
  const centres = Float32Array.from({ length: 200 * dim }, gauss);
  const data = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const c = Math.floor(rnd() * 200);
    let s = 0;
    for (let j = 0; j < dim; j++) {
      const v = centres[c * dim + j] + 0.8 * gauss();
      data[i * dim + j] = v;
      s += v * v;
    }
    for (let j = 0; j < dim; j++) data[i * dim + j] /= Math.sqrt(s);
  }
  return data;
}

function vectorSet(data: Float32Array, n: number, dim: number, withIvf: boolean): VectorSet {
  const dir = tempDir();
  const path = join(dir, "v.f32");
  writeIvf(join(dir, "v.ivf"), buildIvf(data, n, dim, { lists: 40 }));
  writeFileSync(path, new Uint8Array(data.buffer, 0, n * dim * 4));
  return new VectorSet(path, dim, n, withIvf ? readIvf(join(dir, "v.ivf")) : undefined);
}

test("IVF: every vector in exactly one list; probing all lists gives exactly the exhaustive top k", () => {
  const n = 3000;
  const dim = 24;
  const data = clustered(n, dim);
  const ivf = buildIvf(data, n, dim, { lists: 40 });
  assert.equal(ivf.start[ivf.lists], n);
  assert.deepEqual(
    Array.from(ivf.docs).sort((a, b) => a - b),
    Array.from({ length: n }, (_, i) => i),
  );
  const set = vectorSet(data, n, dim, true);
  for (let q = 0; q < 20; q++) {
    const query = data.slice(q * 97 * dim, (q * 97 + 1) * dim);
    assert.deepEqual(set.search(query, 50, ivf.lists), set.exhaustive(query, 50));
  }
});

test("IVF: recall grows with the lists probed on clustered data; the build is deterministic", () => {
  const n = 4000;
  const dim = 24;
  const data = clustered(n, dim, 9);
  const set = vectorSet(data, n, dim, true);
  const recall = (probe: number) => {
    let found = 0;
    const queries = 30;
    for (let q = 0; q < queries; q++) {
      const query = data.slice(q * 131 * dim, (q * 131 + 1) * dim);
      const exact = new Set(set.exhaustive(query, 50).map((h) => h.docno));
      for (const h of set.search(query, 50, probe)) if (exact.has(h.docno)) found++;
    }
    return found / (queries * 50);
  };
  const [r4, r8, r16] = [recall(4), recall(8), recall(16)];
  assert.ok(r4 <= r8 && r8 <= r16 && r16 > 0.9, `recall ${r4} ${r8} ${r16}`);
  const a = tempDir();
  writeIvf(join(a, "1"), buildIvf(data, n, dim, { lists: 40 }));
  writeIvf(join(a, "2"), buildIvf(data, n, dim, { lists: 40 }));
  assert.deepEqual(readFileSync(join(a, "1")), readFileSync(join(a, "2")));
});

test("ingest builds IVF lists for vector sets above the size limit, and search goes through them", async () => {
  const dir = tempDir();
  const corpus = writeCorpus(dir);
  const idx = join(dir, "idx");
  const vectors = [{ name: "fake", encoder: fakeEncoder(), recipe: TITLE_AND_ABSTRACT }];
  // First 6 docs, then the rest: the lists are rebuilt to cover the new docs.
  const firstSix = writeCorpus(
    tempDir(),
    ABSTRACTS.slice(0, 6).map((a) => ({ abstract_id: a.id, title: a.title, abstract: a.abstract })),
  );
  await ingest(firstSix, idx, { vectors, ivfMinDocs: 4 });
  assert.equal(readIvf(join(idx, FILES.ivf("fake"))).n, 6);
  await ingest(corpus, idx, { vectors, ivfMinDocs: 4 });
  const lists = readFileSync(join(idx, FILES.ivf("fake")));
  // Nothing new: the lists are kept as they are.
  await ingest(corpus, idx, { vectors, ivfMinDocs: 4 });
  assert.deepEqual(readFileSync(join(idx, FILES.ivf("fake"))), lists);
  const index = openIndex(idx);
  try {
    const set = index.vectors.fake;
    assert.ok(set.ivf && set.ivf.n === ABSTRACTS.length);
    const query = set.vector(2);
    assert.deepEqual(set.search(query, 5, set.ivf.lists), set.exhaustive(query, 5));
    assert.equal(set.search(query, 1)[0].docno, 2);
  } finally {
    index.close();
  }
  // Below the limit: no lists, exact search.
  const small = join(dir, "small");
  await ingest(corpus, small, { vectors });
  const plain = openIndex(small);
  try {
    assert.equal(plain.vectors.fake.ivf, undefined);
    assert.throws(() => readFileSync(join(small, FILES.ivf("fake"))));
  } finally {
    plain.close();
  }
});
