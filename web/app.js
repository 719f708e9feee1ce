// The ClimateCheck page: posts the claim to /v1/check and renders the CheckResult. Every text that comes from a
// claim or an abstract goes into the page through textContent (el() below), never as markup.
import { readableTex } from "./tex.js";

const $ = (id) => document.getElementById(id);
const form = $("check-form");
const claimBox = $("claim");
const kBox = $("k");
const submit = $("submit");
const status = $("status");
const permalink = $("permalink");
const resultBox = $("result");

const LABEL_CLASS = { Supports: "supports", Refutes: "refutes", "Not Enough Information": "nei" };
const pct = (x) => `${Math.round(x * 100)}%`;

/** An element with a class and text (as text, never parsed as HTML). */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

/** Only http(s) links from the corpus become hrefs (no javascript: or data: URLs). */
function safeUrl(url) {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : undefined;
  } catch {
    return undefined;
  }
}

function renderNarratives(list, pNarrative) {
  const box = $("narratives");
  box.replaceChildren();
  if (pNarrative === null) {
    const gate = el("span", "gate", "Disinformation narratives: not assessed");
    gate.title =
      "The claim is out of scope (not English, or not about climate): the narratives model knows English climate text only, so it gives no number.";
    box.append(gate);
    return;
  }
  // The headline number the label follows: a narrative is named exactly when it is at least 50%.
  const gate = el("span", "gate", `Carries a disinformation narrative: ${pct(pNarrative)}`);
  gate.title =
    "Calibrated probability that the claim asserts a contrarian CARDS proposition (not just that it is about the same subject). Codes are named only when it is at least 50%. A lead for review, not a finding, and a low number is no all-clear: on held-out mainstream text the model still names a narrative for about 1 in 6 pro-climate-action tweets, and it finds only a little over half of the contrarian claims people post (docs/page.md).";
  box.append(gate);
  for (const n of list) {
    const chip = el("span", n.code.startsWith("4_") || n.code.startsWith("5_") ? "chip normative" : "chip");
    chip.title = n.description;
    chip.dataset.code = n.code;
    chip.append(el("span", "code", n.code), el("span", "name", n.name), ` (${pct(n.probability)})`);
    chip.append(el("span", "desc", n.description));
    box.append(chip);
  }
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/** "2 of the 4 abstracts about this claim support it and none refutes it" (the counts behind a lean). */
function sideCounts(s, about) {
  const sup =
    s.supports === 0 ? "none supports" : `${s.supports} ${s.supports === 1 ? "supports" : "support"}`;
  const ref = s.refutes === 0 ? "none refutes" : `${s.refutes} ${s.refutes === 1 ? "refutes" : "refute"}`;
  const lead = s.supports >= s.refutes ? `${sup} it and ${ref} it` : `${ref} it and ${sup} it`;
  return `of the ${plural(about, "abstract", "abstracts")} about this claim, ${lead}`;
}

/**
 * The result's first sentence: the lean and its reason. Only a side (supports / refutes) has a number, the mean
 * confidence of its verdicts; "insufficient", "mixed" and "out of scope" have none, since a 0% next to them reads as
 * "0% true".
 */
export function verdictOf(r) {
  const s = r.summary;
  const about = s.supports + s.refutes + s.nei;
  const found = r.evidence.length;
  switch (s.lean) {
    case "out_of_scope":
      return {
        lean: "Out of scope",
        reason: r.scope.reason ?? "the claim is outside what ClimateCheck checks",
      };
    case "supports":
    case "refutes":
      return {
        lean:
          s.lean === "supports" ? "Leans towards supporting the claim" : "Leans towards refuting the claim",
        reason: sideCounts(s, about),
        confidence: s.lean_confidence,
      };
    case "mixed":
      return { lean: "Mixed evidence", reason: sideCounts(s, about) };
    default: {
      let reason;
      if (found === 0) reason = "no abstract was found for this claim";
      else if (about === 0)
        reason = `none of the ${plural(found, "abstract", "abstracts")} found is about this claim`;
      else if (s.supports + s.refutes === 0)
        reason = `none of the ${plural(about, "abstract", "abstracts")} about this claim supports or refutes it`;
      else reason = "the abstracts that take a side all do so with a probability below 50%";
      return { lean: "Not settled", reason };
    }
  }
}

function renderVerdict(r) {
  const v = verdictOf(r);
  const box = $("verdict");
  box.className = `verdict lean-${r.summary.lean}`;
  // One sentence: "Leans towards supporting the claim: of the 4 abstracts ... (mean confidence 72%)."
  box.replaceChildren(el("strong", "lean", v.lean), `: ${v.reason}`);
  if (v.confidence !== undefined) {
    const c = el("span", "lean-confidence", ` (mean confidence ${pct(v.confidence)})`);
    c.title = "The mean probability of the verdicts on this side.";
    box.append(c);
  }
  box.append(".");
  const c = $("caution");
  // An out-of-scope claim's reason is already the verdict's: the caution keeps only what else there is to say.
  let reason = r.caution.reason ?? "";
  if (r.summary.lean === "out_of_scope" && r.scope.reason) reason = reason.replace(r.scope.reason, "").trim();
  if (r.caution.needs_human_review) {
    c.className = "caution review";
    c.textContent = reason ? `Needs human review: ${reason}` : "Needs human review.";
  } else {
    // No caution is said only for what it means: in scope, and two or more abstracts about the claim agree.
    c.className = "caution";
    c.textContent =
      "No caution: the claim is in scope, and two or more abstracts about it take a side and all agree.";
  }
}

/**
 * Indices shown unfolded: the rationale sentences and, for context, the sentence just before the first of them
 * (what it is about); with no rationale, the first sentence. Everything else is folded.
 */
export function excerptIndices(count, rationale) {
  const shown = new Set(rationale.filter((i) => i >= 0 && i < count));
  if (shown.size > 0) {
    const first = Math.min(...shown);
    if (first > 0) shown.add(first - 1);
  } else if (count > 0) shown.add(0);
  return [...shown].sort((a, b) => a - b);
}

/** The abstract's sentences (all, or those at `indices` with "…" over each gap), the rationale marked. */
function sentencesParagraph(className, sentences, rationale, indices) {
  const p = el("p", className);
  let last = -1;
  for (const i of indices) {
    if (i > last + 1) p.append(el("span", "gap", last < 0 ? "… " : " … "));
    else if (last >= 0) p.append(" ");
    const text = readableTex(sentences[i]);
    p.append(rationale.has(i) ? el("mark", "rationale", text) : el("span", "sentence", text));
    last = i;
  }
  if (last >= 0 && last < sentences.length - 1) p.append(el("span", "gap", " …"));
  return p;
}

function renderCard(e) {
  // Below the relevance gate an abstract is "about something else": it takes no side and is not in the summary.
  const kind = e.about_claim ? (LABEL_CLASS[e.label] ?? "nei") : "off";
  const card = el("li", `card ${kind}`);
  card.dataset.abstractId = e.abstract_id;
  const head = el("div", "card-head");
  // The badge's label is the most probable of the three probabilities in the meta line; NEI shows no number.
  const badge =
    kind === "off" ? "About something else" : kind === "nei" ? e.label : `${e.label} ${pct(e.confidence)}`;
  head.append(el("span", "rank", `#${e.rank}`), el("span", `badge ${kind}`, badge));
  // The title links to the published version (DOI) when there is one, else to the corpus URL (arXiv). The API
  // already gives it with TeX markup made readable (title_raw keeps the original).
  const doiUrl = e.doi ? safeUrl(`https://doi.org/${e.doi}`) : undefined;
  const href = doiUrl ?? (e.url ? safeUrl(e.url) : undefined);
  const title = el(href ? "a" : "span", "card-title", e.title ?? "(untitled)");
  if (href) {
    title.href = href;
    title.target = "_blank";
    title.rel = "noopener noreferrer";
  }
  head.append(title);
  const metaLine = el(
    "div",
    "meta",
    [e.year, e.doi ? `doi:${e.doi}` : undefined, `id ${e.abstract_id}`].filter(Boolean).join(" · "),
  );
  if (e.relevance !== null) {
    const about = el("span", "about", e.about_claim ? "about this claim" : "about something else");
    about.title = `Relevance gate: P(the abstract is about the claim's subject) = ${pct(e.relevance)}`;
    metaLine.append(" · ", about);
  }
  metaLine.append(
    ` · S ${pct(e.p_supports)} · R ${pct(e.p_refutes)} · NEI ${pct(e.p_nei)} · retrieval ${e.retrieval_score}`,
  );
  const pageUrl = e.url ? safeUrl(e.url) : undefined;
  if (pageUrl && pageUrl !== href) {
    const link = el("a", "source-link", new URL(pageUrl).hostname);
    link.href = pageUrl;
    link.target = "_blank";
    link.rel = "noopener noreferrer";
    metaLine.append(" · ", link);
  }
  card.append(head, metaLine);
  if (kind === "off")
    card.append(
      el(
        "div",
        "why",
        "Why: this abstract is about something else than the claim, so it takes no side and is left out of the summary.",
      ),
    );
  // The deciding sentences with a sentence of context; the whole abstract is folded under them.
  const rationale = new Set(e.rationale_indices);
  const shown = excerptIndices(e.sentences.length, e.rationale_indices);
  card.append(sentencesParagraph("excerpt", e.sentences, rationale, shown));
  if (shown.length < e.sentences.length) {
    const full = el("details", "full");
    full.append(
      el("summary", undefined, `Whole abstract (${plural(e.sentences.length, "sentence", "sentences")})`),
      sentencesParagraph(
        "abstract",
        e.sentences,
        rationale,
        e.sentences.map((_, i) => i),
      ),
    );
    card.append(full);
  }
  return card;
}

function clearResult() {
  resultBox.hidden = true;
  for (const id of ["claim-echo", "verdict", "caution", "narratives", "evidence", "timings"])
    $(id).replaceChildren();
}

function render(r) {
  $("claim-echo").textContent = r.claim;
  renderVerdict(r);
  renderNarratives(r.narratives, r.p_narrative);
  $("evidence").replaceChildren(...r.evidence.map(renderCard));
  const t = r.timings_ms;
  $("timings").textContent =
    `Narratives ${t.narratives} ms · retrieval ${t.retrieval} ms · verification ${t.verification} ms · total ${t.total} ms`;
  $("result").hidden = false;
}

function setPermalink(claim, k) {
  const url = new URL(window.location.href);
  url.search = "";
  url.searchParams.set("claim", claim);
  url.searchParams.set("k", String(k));
  permalink.href = url.pathname + url.search;
  permalink.hidden = false;
  window.history.replaceState(null, "", permalink.href);
}

async function check(claim) {
  submit.disabled = true;
  // The old result goes at once: it never stands beside a new claim, an error or "Checking…".
  clearResult();
  status.className = "";
  status.textContent = "Checking…";
  try {
    const k = Number(kBox.value);
    const res = await fetch("/v1/check", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ claim, k }),
    });
    const body = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
    if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
    render(body);
    setPermalink(claim, k);
    // Said by screen readers (the status line is aria-live); focus moves to the result, which is labelled by its
    // verdict sentence, so the verdict is read once and not repeated here.
    status.textContent = `Checked against ${plural(body.evidence.length, "abstract", "abstracts")}.`;
    resultBox.focus();
  } catch (err) {
    clearResult();
    permalink.hidden = true;
    status.className = "error";
    status.textContent = `Could not check the claim: ${err.message}`;
  } finally {
    submit.disabled = false;
  }
}

// Ctrl+Enter (Cmd+Enter on a Mac) in the claim box submits, as Enter would in a one-line field.
claimBox.addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
    ev.preventDefault();
    form.requestSubmit();
  }
});

form.addEventListener("submit", (ev) => {
  ev.preventDefault();
  const claim = claimBox.value.trim();
  if (claim) check(claim);
});

for (const b of document.querySelectorAll(".example")) {
  b.addEventListener("click", () => {
    claimBox.value = b.textContent;
    check(b.textContent);
  });
}

/**
 * The demo corpus's note, folded: its first clause, then (on opening) the rest with `commands` as code that wraps,
 * so a long path never widens the page.
 */
function corpusNote(note) {
  const box = el("details", "corpus-note");
  box.id = "corpus-note";
  const [head, ...rest] = note.split(/;\s*/);
  box.append(el("summary", undefined, `Note: ${head}.`));
  const body = el("p");
  rest
    .join("; ")
    .split("`")
    .forEach((part, i) => {
      if (part) body.append(i % 2 ? el("code", undefined, part) : part);
    });
  box.append(body);
  return box;
}

/** What is searched: the corpus and, for the built-in demo corpus, how to load the real one (from /healthz). */
async function showCorpus() {
  try {
    const res = await fetch("/healthz");
    if (!res.ok) return;
    const { corpus, profile } = await res.json();
    showModels(profile);
    if (!corpus) return;
    const box = $("corpus");
    box.textContent = `Searching ${corpus.abstracts.toLocaleString("en")} abstracts: ${corpus.name}.`;
    if (corpus.note) box.after(corpusNote(corpus.note));
    box.hidden = false;
  } catch {
    // The page works without it.
  }
}
/** The profile's models (serve --profile), one per stage: which pretrained models produce what the page shows. */
function showModels(profile) {
  if (!profile) return;
  const box = $("models");
  const list = profile.models.map((m) => `${m.repo}@${m.revision.slice(0, 7)} (${m.stage})`);
  box.textContent = `Profile ${profile.name}${list.length ? `: ${list.join(", ")}` : ""}.`;
  box.hidden = false;
}
showCorpus();

// A permalink (/?claim=...&k=...) fills the box (and the number of abstracts) and runs the check.
const params = new URL(window.location.href).searchParams;
const initial = params.get("claim");
const initialK = params.get("k");
if (initialK && /^\d+$/.test(initialK) && Number(initialK) >= 1 && Number(initialK) <= 50) {
  if (![...kBox.options].some((o) => o.value === initialK)) kBox.append(new Option(initialK, initialK));
  kBox.value = initialK;
}
if (initial) {
  claimBox.value = initial;
  check(initial);
}
