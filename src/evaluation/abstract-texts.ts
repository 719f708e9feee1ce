/**
 * The texts of given abstracts, from a built index (random access through its doc store) or by streaming a
 * corpus file once; only the ids asked for are kept, so a 400k-abstract corpus stays out of memory.
 */
import { readCorpus } from "../data/climatecheck.ts";
import { openIndex } from "../index/open.ts";
import { abstractSentences } from "../verification/verifier.ts";
import type { AbstractText } from "./ev2r.ts";

/** Sentences are always filled in, so the same abstract reads the same (and hits the same cache keys) from either source. */
const asText = (a: AbstractText): AbstractText => ({ ...a, sentences: abstractSentences(a) });

export type TextSource = { index: string } | { corpus: string };

/** Id -> text for the ids found; ids absent from the source are simply not in the map. */
export async function loadAbstractTexts(
  ids: ReadonlySet<string>,
  source: TextSource,
): Promise<Map<string, AbstractText>> {
  const out = new Map<string, AbstractText>();
  if ("index" in source) {
    const index = openIndex(source.index);
    try {
      for (const id of ids) {
        const docno = index.docs.docno(id);
        if (docno === undefined) continue;
        const d = index.docs.get(docno);
        out.set(id, asText({ abstract: d.abstract, title: d.title, sentences: d.sentences }));
      }
    } finally {
      index.close();
    }
    return out;
  }
  // Rows without id or text cannot be asked for by id; skip them rather than fail the whole evaluation.
  for await (const { abstract: a } of readCorpus(source.corpus, { onSkip: () => {} })) {
    if (ids.has(a.id) && !out.has(a.id))
      out.set(a.id, asText({ abstract: a.abstract, title: a.title, sentences: a.sentences }));
    if (out.size === ids.size) break;
  }
  return out;
}
