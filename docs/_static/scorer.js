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
