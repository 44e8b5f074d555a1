/* GAMUT model comparison: two models, one setting; per question who scored higher, and the
   paired bootstrap difference from the score tables. State in the address bar (?setting=&a=&b=). */
(function () {
  "use strict";

  var h = window.gamut.h;
  var fmt = window.gamut.fmt;

  function init() {
    var root = document.getElementById("gamut-compare");
    if (!root || root.getAttribute("data-ready")) { return; }
    root.setAttribute("data-ready", "true");
    var cfg = JSON.parse(root.getAttribute("data-config"));
    var params = new URLSearchParams(window.location.search);
    var settingSel = root.querySelector("select[name=setting]");
    var aSel = root.querySelector("select[name=a]");
    var bSel = root.querySelector("select[name=b]");
    var summary = root.querySelector(".gamut-c-summary");
    var out = root.querySelector(".gamut-c-questions");
    var cache = {};

    var unknown = [];  /* ids in the address that this setting has no model for */
    function fill(select, models, wanted, fallback) {
      select.textContent = "";
      models.forEach(function (m) { select.appendChild(h("option", { value: m.id, text: m.name })); });
      var ids = models.map(function (m) { return m.id; });
      if (wanted && ids.indexOf(wanted) < 0) { unknown.push(wanted); }
      select.value = ids.indexOf(wanted) >= 0 ? wanted : (ids[fallback] || ids[0] || "");
    }

    function name(setting, id) {
      var m = cfg.models[setting].filter(function (x) { return x.id === id; })[0];
      return m ? m.name : id;
    }

    /* The summary comes from the page itself: it shows even when the question scores cannot
       be loaded. */
    function summarize(setting, a, b) {
      summary.textContent = "";
      if (unknown.length) {
        summary.appendChild(h("p", { "class": "gamut-x-error", role: "alert",
          text: "No model in this setting has the id " + unknown.join(" or ") + "; showing " +
            name(setting, a) + " and " + name(setting, b) + " instead." }));
      }
      if (a === b) {
        summary.appendChild(h("p", { text: "Choose two different models." }));
        return false;
      }
      var pair = cfg.pairs.filter(function (p) { return p.s === setting && p.a === a && p.b === b; })[0];
      var na = name(setting, a), nb = name(setting, b);
      if (pair) {
        summary.appendChild(h("p", { "class": "gamut-summary" }, [
          na + " minus " + nb + ": ", h("strong", { text: fmt(pair.diff, true) + " points" }),
          " [" + fmt(pair.lo, true) + ", " + fmt(pair.hi, true) + "], 95% paired bootstrap interval. ",
          (pair.sig ? "Significant" : "Not significant") + " after Holm's adjustment over the " +
            cfg.family + " pairs of this page (adjusted p = " + pair.p.toPrecision(2) + ").",
          " " + na + " scored higher on " + pair.a_higher + " of " + pair.n + " questions, " + nb +
          " on " + pair.b_higher + ", and they tied on " + pair.equal + "."
        ]));
      }
      return true;
    }

    function render(data, setting, a, b) {
      out.textContent = "";
      var na = name(setting, a), nb = name(setting, b);
      var sa = data.scores[a] || [], sb = data.scores[b] || [];
      var rows = data.questions.map(function (q, i) {
        var x = sa[i], y = sb[i];
        var d = (x === null || y === null || x === undefined || y === undefined) ? null : x - y;
        var who = d === null ? "–" : (Math.abs(d) < 1e-9 ? "tie" : (d > 0 ? na : nb));
        var href = cfg.explorer + "?" + new URLSearchParams({ question: q, setting: setting, model: a }).toString();
        return h("tr", { "data-who": d === null ? "" : (Math.abs(d) < 1e-9 ? "tie" : (d > 0 ? "a" : "b")) }, [
          h("td", { "data-sort": q }, [h("a", { href: href, text: q })]),
          h("td", { "data-sort": data.domains[i], text: data.domains[i] }),
          h("td", { "data-sort": x === null ? "" : String(x), "class": "gamut-num", text: fmt(x) }),
          h("td", { "data-sort": y === null ? "" : String(y), "class": "gamut-num", text: fmt(y) }),
          h("td", { "data-sort": d === null ? "" : String(d), "class": "gamut-num", text: fmt(d, true) }),
          h("td", { "data-sort": who, text: who })
        ]);
      });
      rows.sort(function (r1, r2) {
        return Number(r2.cells[4].getAttribute("data-sort") || -1e9) -
          Number(r1.cells[4].getAttribute("data-sort") || -1e9);
      });
      function th(label, numeric) {
        return h("th", { scope: "col", "class": numeric ? "gamut-num" : null }, [
          h("button", { type: "button", "class": "gamut-sort", "data-type": numeric ? "num" : "text",
                        text: label })]);
      }
      var table = h("table", { "data-sortable": "true" }, [
        h("caption", { text: "Question scores: " + na + " and " + nb + " (points, −100 to 100)" }),
        h("thead", {}, [h("tr", {}, [th("Question"), th("Domain"), th(na, true), th(nb, true),
          th("Difference", true), th("Higher")])]),
        h("tbody", {}, rows)
      ]);
      out.appendChild(h("div", { "class": "gamut-table" }, [table]));
      out.appendChild(window.gamut.paged(table, Number(root.getAttribute("data-page-size")) || 50).nav);
      window.gamut.initSorting(out);
      root.setAttribute("data-loaded", setting + ":" + a + ":" + b);
    }

    function update(record) {
      var setting = settingSel.value, a = aSel.value, b = bSel.value;
      if (record) { window.gamut.setParams({ setting: setting, a: a, b: b }); }
      if (!summarize(setting, a, b)) {
        out.textContent = "";
        root.setAttribute("data-loaded", "same");
        return;
      }
      var load = cache[setting] || window.gamut.load(cfg.data[setting]);
      cache[setting] = load;
      load.then(function (data) { render(data, setting, a, b); }).catch(function (err) {
        summary.appendChild(h("p", { "class": "gamut-x-error", role: "alert",
          text: "The question scores could not be loaded: " + err.message }));
        root.setAttribute("data-loaded", "error");
      });
    }

    var settings = Object.keys(cfg.models);
    settingSel.value = settings.indexOf(params.get("setting")) >= 0 ? params.get("setting") : settings[0];
    function models() {
      unknown = [];
      fill(aSel, cfg.models[settingSel.value], params.get("a"), 0);
      fill(bSel, cfg.models[settingSel.value], params.get("b"), 1);
    }
    models();
    settingSel.addEventListener("change", function () {
      params = new URLSearchParams({ a: aSel.value, b: bSel.value });
      models();
      update(true);
    });
    aSel.addEventListener("change", function () { unknown = []; update(true); });
    bSel.addEventListener("change", function () { unknown = []; update(true); });
    window.gamut.onPop(function (now) {
      params = now;
      settingSel.value = settings.indexOf(now.get("setting")) >= 0 ? now.get("setting") : settings[0];
      models();
      update(false);
    }, root);
    root.querySelector("form").addEventListener("submit", function (e) { e.preventDefault(); });
    update(false);
  }

  if (typeof document$ !== "undefined") { document$.subscribe(init); }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
