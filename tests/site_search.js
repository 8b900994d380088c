// Sphinx's own search (the built site's searchtools.js, language_data.js and searchindex.js), run without a browser.
// usage: node site_search.js <built html dir> <JSON list of queries>; prints, per query, its first results as
// [docname, title, anchor]. The stubs stand for what a page would provide; only the results are used.
const fs = require("fs");
const path = require("path");
const vm = require("vm");

const [dir, queries] = process.argv.slice(2);
const context = {
  document: { addEventListener() {}, getElementById() { return null; } },
  DOCUMENTATION_OPTIONS: { URL_ROOT: "", FILE_SUFFIX: ".html", LINK_SUFFIX: ".html", SHOW_SEARCH_SUMMARY: false },
  SPHINX_HIGHLIGHT_ENABLED: false,
  _: (text) => text,
  _ready: () => {},
  setTimeout,
};
context.window = context;
vm.createContext(context);
for (const file of ["_static/language_data.js", "_static/searchtools.js", "searchindex.js"]) {
  vm.runInContext(fs.readFileSync(path.join(dir, file), "utf8"), context, { filename: file });
}
const found = JSON.parse(queries).map((query) => {
  const results = vm.runInContext(`Search._performSearch(...Search._parseQuery(${JSON.stringify(query)}))`, context);
  return results.reverse().slice(0, 5).map(([docname, title, anchor]) => [docname, title, anchor]);
});
console.log(JSON.stringify(found));
