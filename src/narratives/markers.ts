/**
 * Who says what (issue 23): a text that states a myth only to reject or report it ("No, Arctic ice is not
 * recovering", "Some claim the sun drives warming; the data say otherwise", 'The "they renamed it" argument...')
 * shares its words with the myth. These markers say how the text holds its claim: a leading rejection ("No,"),
 * rebuttal and report words, a turn ("but", "in fact"), a short verdict sentence ("It didn't."), and the stance
 * cues (cues.ts) of the parts it only reports (inside quotes, after "claim that" / "some say") marked apart from
 * those it asserts. Hashed into a fixed number of buckets, so the block needs no vocabulary.
 */
import { STOPWORDS, tokenize } from "../text/tokenize.ts";
import { stanceCues } from "./cues.ts";

/** Buckets of the hashed marker block. */
export const MARKER_DIM = 1 << 12;

/** A text opening with one of these and a stop ("No, ...", "Wrong:", "False.") rejects what follows or came before. */
const LEAD =
  /^\s*["'“‘]?\s*(no|nope|wrong|false|myth|fact|actually|yes|not true|nonsense|debunked)\s*[,.:;!—–-]/i;
/** Words that name a claim as a claim, or judge it. */
const REBUTTAL_WORDS = new Set(
  (
    "myth myths debunked debunk debunking misleading misinformation disinformation false falsely wrong incorrect " +
    "claim claims claimed claiming argument arguments argue argues supposedly so-called alleged allegedly narrative " +
    "talking point cherry-picked cherry-picking cherry-pick denier deniers denial skeptic skeptics sceptic sceptics " +
    "contrarian contrarians fallacy doesn't don't didn't isn't aren't can't cannot won't otherwise actually fact " +
    "facts evidence data shows show showed confirm confirms confirmed measurements observations research studies"
  ).split(" "),
);
/** Phrases after which the rest of the sentence is reported, not asserted. */
const REPORT =
  /\b(claims?|claimed|argue[sd]?|argument|say|says|said|insist|insists|tell you|you'll hear|you hear|the idea|the notion|the myth|the story|the line|believe|believes|think|thinks|suggest|suggests)\s+(that\s+)?/gi;
/** Sentence openers that turn against what came before. */
const TURNS = new Set([
  "but",
  "yet",
  "however",
  "actually",
  "instead",
  "rather",
  "still",
  "in fact",
  "the data",
  "the evidence",
]);
/** A short sentence that only gives a verdict. */
const VERDICT =
  /^\s*(it|that|they|this|which)?\s*(is|isn't|is not|was|wasn't|did|didn't|does|doesn't|has|hasn't|can|can't|won't)?\s*(not|n't)?\s*(true|false|wrong|happen|happening|so|nonsense|correct|right)?\s*[.!]?\s*$/i;

const QUOTED = /["“”«»]([^"“”«»]{3,200})["“”«»]/g;

/** The marker strings of a text, with repeats. */
export function stanceMarkers(text: string): string[] {
  const out: string[] = [];
  const lead = LEAD.exec(text);
  if (lead) out.push(`lead:${lead[1].toLowerCase()}`);
  const sentences = text.split(/(?<=[.!?;])\s+/).filter((s) => s.trim() !== "");
  if (sentences.length > 1) out.push("multi");
  if (/\?\s*$/.test(text)) out.push("ends:question");
  sentences.forEach((s, k) => {
    const tokens = tokenize(s);
    if (tokens.length === 0) return;
    const last = k === sentences.length - 1 && k > 0;
    const first2 = tokens.slice(0, 2).join(" ");
    const turn = TURNS.has(tokens[0]) ? tokens[0] : TURNS.has(first2) ? first2 : undefined;
    if (turn) out.push(`turn:${turn}`, `turn:${last ? "last" : "mid"}`);
    if (tokens.length <= 5 && VERDICT.test(s) && k > 0) out.push("verdict");
    if (tokens.length <= 5 && k > 0 && tokens.some((t) => t === "not" || t.endsWith("n't")))
      out.push("short-negation");
    for (const t of tokens) if (REBUTTAL_WORDS.has(t)) out.push(`word:${t}${last ? ":last" : ""}`);
    // The cues of a turn sentence are what the text asserts against the rest.
    if (turn) for (const c of stanceCues(tokens)) out.push(`turncue:${c}`);
    else if (last) for (const c of stanceCues(tokens)) out.push(`lastcue:${c}`);
  });
  // Reported parts: quoted spans, and the rest of a sentence after a report phrase.
  let quoted = 0;
  for (const m of text.matchAll(QUOTED)) {
    quoted++;
    for (const c of stanceCues(tokenize(m[1]))) out.push(`rep:${c}`);
    for (const t of tokenize(m[1])) if (!STOPWORDS.has(t)) out.push(`repword:${t}`);
  }
  if (quoted > 0) out.push("quoted");
  for (const s of sentences) {
    REPORT.lastIndex = 0;
    const m = REPORT.exec(s);
    if (!m) continue;
    out.push(`report:${m[1].toLowerCase()}`);
    for (const c of stanceCues(tokenize(s.slice(m.index + m[0].length)))) out.push(`rep:${c}`);
  }
  return out;
}

/** FNV-1a, 32-bit, salted apart from the cue block's buckets. */
function bucket(s: string): number {
  let h = 0x811c9dc5;
  const salted = `m|${s}`;
  for (let i = 0; i < salted.length; i++) {
    h ^= salted.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % MARKER_DIM;
}

/** Marker counts by bucket, sublinear (1 + log count), L2-normalised, sorted by index. */
export function markerVector(text: string): { indices: number[]; values: number[] } {
  const counts = new Map<number, number>();
  for (const m of stanceMarkers(text)) {
    const b = bucket(m);
    counts.set(b, (counts.get(b) ?? 0) + 1);
  }
  const indices = [...counts.keys()].sort((a, b) => a - b);
  const values = indices.map((b) => 1 + Math.log(counts.get(b) ?? 1));
  const n = Math.hypot(...values);
  return { indices, values: n > 0 ? values.map((v) => v / n) : values };
}
