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

/** Title, then the abstract from its start, cut at a word boundary near maxChars characters in all. */
export function titleAndLead(maxChars: number): EmbedRecipe {
  return {
    spec: `title+lead:${maxChars}`,
    text(doc) {
      const full = doc.title ? `${doc.title}. ${doc.abstract}` : doc.abstract;
      if (full.length <= maxChars) return full;
      const space = full.lastIndexOf(" ", maxChars);
      return full.slice(0, space > maxChars / 2 ? space : maxChars);
    },
  };
}

export const TITLE_AND_ABSTRACT: EmbedRecipe = {
  spec: "title+abstract",
  text: (doc) => (doc.title ? `${doc.title}. ${doc.abstract}` : doc.abstract),
};
