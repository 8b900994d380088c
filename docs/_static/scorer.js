// Sphinx's search scorer (html_search_scorer in conf.py): Sphinx's defaults, and one change. A clause ID typed
// into the search box ("INDEX-12") leads to that clause first, and a pasted error message to its entry on the
// landing page: these search objects ("spec clause", "error message": docs/_ext/clauses.py, errors.py) outrank
// the pages that merely contain the words of the query (Sphinx scores a page by its best single word).
var Scorer = {
  score: (result) => {
    const [, , , descr, score] = result; // descr is null for a page found by its text
    return descr && /^(spec clause|error message)/.test(descr) ? score + 30 : score;
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

// Sphinx splits a query at every non-word character, so "CLONE-2" becomes "clone" and "2", which CLONE-12 matches
// as well as CLONE-2. Keep each clause ID whole too: the whole ID matches its clause's name exactly (Sphinx loads
// this after searchtools.js, whose default splitQuery this replaces).
var splitQuery = (query) => [
  ...query.split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu).filter((term) => term),
  ...(query.match(/\b[A-Za-z]+-\d+\b/g) || []),
];
