// Sphinx's search scorer (html_search_scorer in conf.py): Sphinx's defaults, and one change. A clause ID typed
// into the search box ("INDEX-12") leads to that clause first, a pasted error message to its entry (with the fix) on
// the landing page, and a release ("2.9", "torch 2.9") to its page: these search objects ("spec clause", "error
// message", "torch release": docs/_ext/clauses.py, errors.py, releases.py) outrank the pages that merely contain the
// words of the query (Sphinx scores a page by its best single word).
var Scorer = {
  score: (result) => {
    const [, , , descr, score] = result; // descr is null for a page found by its text
    return descr && /^(spec clause|error message|torch release)/.test(descr) ? score + 30 : score;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};

// The messages of the landing page's error entries, read from the search index (objects of type "pasted-error").
const pastedErrors = () => {
  const index = typeof Search === "undefined" ? null : Search._index;
  if (!index) return [];
  const type = Object.keys(index.objnames).find((key) => index.objnames[key][1] === "pasted-error");
  // Sphinx files an object under the part of its name before the last dot: "prefix.name" is the whole message
  return Object.entries(index.objects).flatMap(([prefix, matches]) =>
    matches.filter((match) => String(match[1]) === type).map((match) => (prefix ? `${prefix}.${match[4]}` : match[4])),
  );
};
const flat = (text) => text.toLowerCase().replace(/\u2019/g, "'").replace(/\s+/g, " ");

// Sphinx splits a query at every non-word character, so "CLONE-2" becomes "clone" and "2", which CLONE-12 matches
// as well as CLONE-2, and "2.9" becomes "2" and "9", which every clause ID with a 2 or a 9 matches. Keep each clause
// ID and each release whole too: the whole ID matches its clause's name, the release its page. A query that holds
// one of the landing page's messages (a traceback line as torch prints it: "RuntimeError: " in front, tensor
// shapes, versions and hints around it) is searched as that message alone. (Sphinx loads this after
// searchtools.js, whose default splitQuery this replaces.)
var splitQuery = (query) => {
  const held = pastedErrors().filter((message) => flat(query).includes(flat(message)));
  const pasted = held.sort((a, b) => b.length - a.length)[0]; // "a view of a leaf ..." holds "a leaf ..." too
  const text = pasted ? flat(pasted) : query; // lowercase, as Sphinx matches object names
  const ids = text.match(/\b[A-Za-z]+-\d+\b/g) || [];
  const releases = text.match(/\b\d+\.\d+(?:\.\d+)?\b/g) || [];
  // A query that names clauses ("INDEX-12 2.5", "DATA-1 torch 2.9") is about those clauses: their boxes show the
  // outcome on every release. Otherwise the words, and each release whole.
  const words = ids.length ? ids.join(" ") : releases.reduce((rest, release) => rest.replace(release, " "), text);
  return [
    ...words.split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu).filter((term) => term),
    ...ids,
    ...(ids.length ? [] : releases),
  ];
};
