/**
 * How an abstract becomes the text an encoder embeds. USE-lite costs time in proportion to text length (about
 * 35 texts/s at 110 characters, 10/s at 1,500) and reads at most 128 tokens, so it gets the title and the lead
 * of the abstract; word vectors are cheap, so they see everything.
 */
import type { StoredDoc } from "./schema.ts";

export interface EmbedRecipe {
  /** Recorded in the manifest, e.g. "title+lead:200"; queries against a vector set need the same recipe. */
  spec: string;
  text(doc: StoredDoc): string;
}

/** Title, then whole sentences of the abstract until about maxChars (at least the first sentence, cut). */
export function titleAndLead(maxChars: number): EmbedRecipe {
  return {
    spec: `title+lead:${maxChars}`,
    text(doc) {
      let out = doc.title ? `${doc.title}.` : "";
      for (const s of doc.sentences) {
        if (out.length > 0 && out.length + 1 + s.length > maxChars) break;
        out = out ? `${out} ${s}` : s;
      }
      return out.slice(0, maxChars);
    },
  };
}

export const TITLE_AND_ABSTRACT: EmbedRecipe = {
  spec: "title+abstract",
  text: (doc) => (doc.title ? `${doc.title}. ${doc.abstract}` : doc.abstract),
};
