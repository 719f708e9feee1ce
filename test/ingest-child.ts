/**
 * A child process for the crash test (test/index-crash.test.ts): one ingest of CORPUS into DIR with the test's
 * deterministic encoder and IVF lists even at this size, so every phase of a real ingest runs. Killed by
 * CLIMATECHECK_KILL_AT (src/index/crash-points.ts).
 */
import { TITLE_AND_ABSTRACT } from "../src/index/embed-text.ts";
import { ingest } from "../src/index/ingest.ts";
import { fakeEncoder } from "./retrieval-fixtures.ts";

export const CRASH_INGEST = { batchSize: 40, ivfMinDocs: 100, dim: 32 };

export function crashIngest(corpus: string, dir: string) {
  return ingest(corpus, dir, {
    batchSize: CRASH_INGEST.batchSize,
    ivfMinDocs: CRASH_INGEST.ivfMinDocs,
    vectors: [{ name: "fake", encoder: fakeEncoder("fake@1", CRASH_INGEST.dim), recipe: TITLE_AND_ABSTRACT }],
  });
}

if (process.argv[1]?.endsWith("ingest-child.ts")) await crashIngest(process.argv[2], process.argv[3]);
