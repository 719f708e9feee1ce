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
    "Calibrated probability that the claim asserts a contrarian CARDS proposition (not just that it is about the same subject). Codes are named only when it is at least 50%. A lead for review, not a finding: on held-out mainstream text the model still names a narrative for about 1 in 5 pro-climate-action tweets (README).";
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

const LEAN_TEXT = { out_of_scope: "out of scope" };

function renderSummary(summary, caution, scope) {
  const box = $("summary");
  box.replaceChildren(
    el("span", "lean", LEAN_TEXT[summary.lean] ?? summary.lean),
    summary.lean === "out_of_scope" ? " · " : ` (${pct(summary.lean_confidence)}) · `,
    el("span", "summary-text", summary.text),
  );
  const c = $("caution");
  c.className = caution.needs_human_review ? "caution review" : "caution";
  // The reason says why (out of scope, nothing about the claim, thin, disagreement, normative claim). No caution
  // is said only for what it means: in scope, and two or more abstracts about the claim take the same side.
  c.textContent = caution.needs_human_review
    ? `Needs human review: ${caution.reason}`
    : "No caution: the claim is in scope, and two or more abstracts about it take a side and all agree.";
  const s = $("scope");
  s.hidden = scope.in_scope;
  s.textContent = scope.in_scope ? "" : `Out of scope: ${scope.reason}`;
}

function renderCard(e) {
  // Below the relevance gate an abstract is "not about this claim": it takes no side and is not in the summary.
  const kind = e.about_claim ? (LABEL_CLASS[e.label] ?? "nei") : "off";
  const card = el("li", `card ${kind}`);
  card.dataset.abstractId = e.abstract_id;
  const head = el("div", "card-head");
  // The badge's label is the most probable of the three probabilities in the meta line; NEI shows no number.
  const badge =
    kind === "off" ? "Not about this claim" : kind === "nei" ? e.label : `${e.label} ${pct(e.confidence)}`;
  head.append(el("span", "rank", `#${e.rank}`), el("span", `badge ${kind}`, badge));
  // The title links to the published version (DOI) when there is one, else to the corpus URL (arXiv).
  const doiUrl = e.doi ? safeUrl(`https://doi.org/${e.doi}`) : undefined;
  const href = doiUrl ?? (e.url ? safeUrl(e.url) : undefined);
  const title = el(href ? "a" : "span", "card-title", e.title ? readableTex(e.title) : "(untitled)");
  if (href) {
    title.href = href;
    title.target = "_blank";
    title.rel = "noopener noreferrer";
  }
  head.append(title);
  const meta = [
    e.year,
    e.doi ? `doi:${e.doi}` : undefined,
    `id ${e.abstract_id}`,
    `S ${pct(e.p_supports)} · R ${pct(e.p_refutes)} · NEI ${pct(e.p_nei)}`,
    e.relevance === null ? undefined : `about the claim ${pct(e.relevance)}`,
    `retrieval ${e.retrieval_score}`,
  ];
  const abstract = el("p", "abstract");
  const rationale = new Set(e.rationale_indices);
  e.sentences.forEach((s, i) => {
    if (i > 0) abstract.append(" ");
    const text = readableTex(s);
    abstract.append(rationale.has(i) ? el("mark", "rationale", text) : el("span", "sentence", text));
  });
  const metaLine = el("div", "meta", meta.filter(Boolean).join(" · "));
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
        `Why: the chance that this abstract is about the claim's subject is ${pct(e.relevance)}, below 50%, so it takes no side and is left out of the summary.`,
      ),
    );
  card.append(abstract);
  return card;
}

function render(r) {
  $("claim-echo").textContent = r.claim;
  renderNarratives(r.narratives, r.p_narrative);
  renderSummary(r.summary, r.caution, r.scope);
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
    // Said by screen readers (the status line is aria-live); focus moves to the result for keyboard users.
    const s = body.summary;
    status.textContent = `Result: ${body.evidence.length} abstracts, ${s.supports} support, ${s.refutes} refute, ${s.nei} not enough information. ${s.text}`;
    resultBox.focus();
  } catch (err) {
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
    if (corpus.note) box.append(" ", el("span", "corpus-note", `Note: ${corpus.note}.`));
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
