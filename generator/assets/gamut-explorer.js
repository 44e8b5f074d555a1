/* GAMUT question explorer: the question list, and one question's responses, scores and (with
   public rubrics) checklist, loaded on demand from explorer/q/<id>.js. Every value arrives as
   data and is placed with textContent: nothing from the data is parsed as HTML.
   Permalinks: explorer.html?question=ID, &model=SUBMISSION (one model's response), &setting=S.
   (Not ?q=: the theme's search reads that.) */
(function () {
  "use strict";

  var VERDICTS = ["meets", "partially meets", "missing", "contradicts"];
  var LETTER = { M: 0, P: 1, S: 2, C: 3 };
  var TIERS = { answer_critical: "Answer-critical", valuable: "Valuable", context: "Context" };

  var h = window.gamut.h;

  function f1(x) { return window.gamut.fmt(x, false); }

  function getJSON(url) { return window.gamut.load(url); }

  function link(params, text) {
    var q = new URLSearchParams(params).toString();
    return h("a", { href: "explorer.html?" + q, text: text });
  }

  function th(label, key, numeric) {
    return h("th", { scope: "col", "data-col": key, "class": numeric ? "gamut-num" : null }, [
      h("button", { type: "button", "class": "gamut-sort", "data-type": numeric ? "num" : "text",
                    text: label })
    ]);
  }

  function td(value, text, numeric, children) {
    var sortKey = value === null || value === undefined ? "" : String(value);
    return h("td", { "data-sort": sortKey, "class": numeric ? "gamut-num" : null },
             children || [text]);
  }

  function sortableTable(caption, head, rows) {
    var table = h("table", { "data-sortable": "true" }, [
      h("caption", { text: caption }),
      h("thead", {}, [h("tr", {}, head)]),
      h("tbody", {}, rows)
    ]);
    return h("div", { "class": "gamut-table" }, [table]);
  }

  /* ---- the question list ---- */

  function showList(root, index, params) {
    var list = root.querySelector(".gamut-x-list");
    list.hidden = false;
    var domains = {};
    index.questions.forEach(function (q) { domains[q[1]] = true; });
    var search = h("input", { type: "search", "class": "gamut-x-search", "aria-label":
                              "Search the questions", placeholder: "Search questions" });
    var domain = h("select", { "aria-label": "Domain" }, [h("option", { value: "", text: "All domains" })]
      .concat(Object.keys(domains).sort().map(function (d) {
        return h("option", { value: d, text: d });
      })));
    search.value = params.get("text") || "";
    if (params.get("domain")) { domain.value = params.get("domain"); }
    var form = h("form", { "class": "gamut-filters", role: "search",
                           "aria-label": "Search and filter the questions" }, [
      h("label", {}, ["Search ", search]), h("label", {}, ["Domain ", domain])
    ]);
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    var count = h("p", { "class": "gamut-muted", role: "status" });
    var rows = index.questions.map(function (q) {
      /* the search covers the id, both forms of the question and the domain */
      var text = [q[0], q[4], q[6] || "", q[1]].join(" ").toLowerCase();
      var tr = h("tr", { "data-domain": q[1], "data-text": text }, [
        td(q[0], null, false, [link({ question: q[0] }, q[0])]),
        td(q[1], q[1], false),
        td(q[2], q[2], false),
        td(q[3] ? 1 : 0, q[3] ? "yes" : "no", false),
        td(q[7], f1(q[7]), true),
        td(q[8], f1(q[8]), true),
        td(q[4], q[4], false)
      ]);
      return tr;
    });
    var settings = index.settings || {};
    var table = sortableTable("Questions", [th("Question", "id"), th("Domain", "domain"),
      th("Popularity", "popularity"), th("Egocentric", "egocentric"),
      th("Mean " + (settings.multimodal || "multimodal") + " score", "mean_multimodal", true),
      th("Mean " + (settings.text_only || "text-only") + " score", "mean_text_only", true),
      th("Question (multimodal form)", "text")], rows);
    var pager = window.gamut.paged(table.querySelector("table"),
                                   Number(root.getAttribute("data-page-size")) || 50);
    function apply(record) {
      var text = search.value.trim().toLowerCase(), dom = domain.value;
      pager.keep = function (tr) {
        return (!dom || tr.getAttribute("data-domain") === dom) &&
          (!text || tr.getAttribute("data-text").indexOf(text) >= 0);
      };
      var shown = pager.first();
      count.textContent = shown ? shown + " of " + rows.length + " questions"
        : "No question matches this search.";
      if (record) { window.gamut.setParams({ text: search.value.trim(), domain: dom }); }
    }
    search.addEventListener("input", function () { apply(true); });
    domain.addEventListener("change", function () { apply(true); });
    list.appendChild(form);
    list.appendChild(count);
    list.appendChild(table);
    list.appendChild(pager.nav);
    window.gamut.initSorting(list);
    apply(false);
    window.gamut.onPop(function (now) {
      if (now.get("question")) { window.location.reload(); return; }
      search.value = now.get("text") || "";
      domain.value = now.get("domain") || "";
      apply(false);
    }, list);
  }

  /* ---- one question ---- */

  function verdictCounts(tiers) {
    var total = [0, 0, 0, 0];
    Object.keys(tiers || {}).forEach(function (t) {
      tiers[t].forEach(function (n, i) { total[i] += n; });
    });
    return total;
  }

  function countsTable(caption, counts, labels) {
    var body = Object.keys(counts || {}).map(function (k) {
      return h("tr", {}, [h("th", { scope: "row", text: labels[k] || k })].concat(
        counts[k].map(function (n) { return h("td", { "class": "gamut-num", text: String(n) }); })));
    });
    return h("div", { "class": "gamut-table" }, [h("table", {}, [
      h("caption", { text: caption }),
      h("thead", {}, [h("tr", {}, [h("th", { scope: "col", text: "" })].concat(
        VERDICTS.map(function (v) { return h("th", { scope: "col", "class": "gamut-num", text: v }); })))]),
      h("tbody", {}, body)
    ])]);
  }

  function responsesTable(data, setting, focus) {
    var rows = data.rows.filter(function (r) { return r.s === setting; }).map(function (r) {
      var model = data.models[r.m];
      var total = verdictCounts(r.tiers);
      var details = h("details", { "class": "gamut-x-response" }, [
        h("summary", { text: "Response" }),
        h("div", { "class": "gamut-x-text", text: r.response === null || r.response === undefined
          ? "(no response)" : (r.response || "(empty response)") }),
        data.judging ? h("p", { "class": "gamut-x-judged" }, [
          "Judged by " + data.judge + ": ",
          h("a", { href: data.judging, text: "how this was judged" }),
          " (the judge's prompt template and request settings)"
        ]) : null,
        r.tiers ? countsTable("Verdicts by tier", r.tiers, TIERS) : null,
        r.kinds ? countsTable("Verdicts by check kind", r.kinds, {}) : null
      ]);
      if (focus === model.id) { details.open = true; }
      var permalink = link({ question: data.id, model: model.id, setting: setting }, "link");
      permalink.setAttribute("aria-label", "Permalink to " + model.name + "'s response");
      var tr = h("tr", { id: "m-" + model.id, "data-sid": model.id,
                         "class": focus === model.id ? "gamut-x-focus" : null }, [
        td(model.name, null, false, [
          h("a", { href: model.href, text: model.name }),
          " ", h("span", { "class": "gamut-muted" }, ["(", permalink, ")"])
        ]),
        td(r.gamut, f1(r.gamut), true),
        td(r.ac, f1(r.ac), true),
        td(r.v, f1(r.v), true),
        td(r.c, f1(r.c), true),
        td(total[0], String(total[0]), true),
        td(total[1], String(total[1]), true),
        td(total[2], String(total[2]), true),
        td(total[3], String(total[3]), true),
        td(null, null, false, [details])
      ]);
      return tr;
    });
    var head = [
      th("Model", "model"), th("Gamut", "gamut", true), th("AC", "ac", true),
      th("V", "v", true), th("C", "c", true), th("Meets", "meets", true),
      th("Partially", "partial", true), th("Missing", "missing", true),
      th("Contradicts", "contra", true), th("Response and verdicts", "response")
    ];
    /* on a phone each response is a block (gamut.css): a cell shows its column's name, and an
       opened response takes the block's full width */
    rows.forEach(function (tr) {
      Array.prototype.forEach.call(tr.cells, function (cell, i) {
        cell.setAttribute("data-label", head[i].textContent);
      });
    });
    var table = sortableTable("Responses (" + data.settings[setting] + ")", head, rows);
    table.classList.add("gamut-x-responses");
    return table;
  }

  function checklist(data, setting, params) {
    var box = h("section", { "class": "gamut-x-checks" }, [h("h3", { text: "Checklist" })]);
    var rows = data.rows.filter(function (r) { return r.s === setting; });
    var model = h("select", { "aria-label": "Model" }, rows.map(function (r) {
      return h("option", { value: String(r.m), text: data.models[r.m].name });
    }));
    var focusRow = rows.filter(function (r) { return data.models[r.m].id === params.get("model"); })[0];
    if (focusRow) { model.value = String(focusRow.m); }
    var contradicted = h("input", { type: "checkbox" });
    var missed = h("input", { type: "checkbox" });
    contradicted.checked = params.get("only") === "contradicted";
    missed.checked = params.get("only") === "missed";
    var form = h("form", { "class": "gamut-filters" }, [
      h("label", {}, ["Model ", model]),
      h("label", {}, [contradicted, " Checks this model contradicted"]),
      h("label", {}, [missed, " Checks most models miss"])
    ]);
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    box.appendChild(h("p", { text: "Each check, grouped by the meta-rubric item it was compiled " +
      "from, with every model's verdict. “Most models miss” means more than half of the models " +
      "got missing or contradicts. Click a verdict for the judge's rationale." }));
    box.appendChild(form);
    var status = h("p", { "class": "gamut-muted", role: "status" });
    box.appendChild(status);
    var rationales = null;
    var groups = {}, order = [];
    data.checks.forEach(function (c, k) {
      if (!groups[c.item]) { groups[c.item] = []; order.push(c.item); }
      groups[c.item].push(k);
    });
    var items = order.map(function (item) {
      var list = h("ul", { "class": "gamut-x-checklist" }, groups[item].map(function (k) {
        var c = data.checks[k];
        var chips = rows.map(function (r) {
          var letter = (r.verdicts || "")[k] || "-";
          var v = LETTER[letter];
          var chip = h("button", { type: "button", "class": "gamut-chip gamut-v" + (v === undefined ? "x" : v),
            "data-m": String(r.m), "aria-expanded": "false",
            text: data.models[r.m].name + ": " + (v === undefined ? "no verdict" : VERDICTS[v]) });
          chip.addEventListener("click", function () {
            var li = chip.closest("li");
            var out = li.querySelector(".gamut-x-why");
            var load = rationales || getJSON(data.rationales);
            rationales = load;
            load.then(function (all) {
              var text = ((all[setting] || {})[data.models[r.m].id] || [])[k];
              out.hidden = false;
              out.textContent = data.models[r.m].name + ": " + (text || "(no rationale recorded)");
              chip.setAttribute("aria-expanded", "true");
            });
          });
          return chip;
        });
        return h("li", { "data-k": String(k) }, [
          h("span", { "class": "gamut-x-check", text: c.text }), " ",
          h("span", { "class": "gamut-muted", text: "(" + c.id + " · " + c.kind + " · " +
            (TIERS[c.tier] || c.tier) + (c.secondary ? " · secondary" : "") + ")" }),
          h("div", { "class": "gamut-chips" }, chips),
          h("p", { "class": "gamut-x-why", hidden: "hidden", "aria-live": "polite" })
        ]);
      }));
      var first = data.checks[groups[item][0]];
      return h("div", { "class": "gamut-x-item", "data-item": item }, [
        h("h4", { text: "Item " + item + " · " + (TIERS[first.tier] || first.tier) }), list
      ]);
    });
    items.forEach(function (el) { box.appendChild(el); });
    function apply(record) {
      var m = Number(model.value), shown = 0;
      var row = rows.filter(function (r) { return r.m === m; })[0];
      box.querySelectorAll("li[data-k]").forEach(function (li) {
        var k = Number(li.getAttribute("data-k"));
        var ok = (!contradicted.checked || (row && (row.verdicts || "")[k] === "C")) &&
          (!missed.checked || data.checks[k].most_missed[setting]);
        li.hidden = !ok;
        if (ok) { shown += 1; }
        li.querySelectorAll(".gamut-chip").forEach(function (chip) {
          chip.classList.toggle("gamut-chip-focus", Number(chip.getAttribute("data-m")) === m);
        });
      });
      box.querySelectorAll(".gamut-x-item").forEach(function (div) {
        div.hidden = !div.querySelector("li:not([hidden])");
      });
      status.textContent = shown ? shown + " of " + data.checks.length + " checks shown"
        : "No check matches these filters.";
      if (record) {
        window.gamut.setParams({ model: data.models[m] ? data.models[m].id : null,
          only: contradicted.checked ? "contradicted" : (missed.checked ? "missed" : null) });
      }
    }
    contradicted.addEventListener("change", function () {
      if (contradicted.checked) { missed.checked = false; } apply(true);
    });
    missed.addEventListener("change", function () {
      if (missed.checked) { contradicted.checked = false; } apply(true);
    });
    model.addEventListener("change", function () { apply(true); });
    apply(false);
    return box;
  }

  function showQuestion(root, data, params) {
    var view = root.querySelector(".gamut-x-question");
    view.hidden = false;
    var settings = Object.keys(data.settings);
    var setting = settings.indexOf(params.get("setting")) >= 0 ? params.get("setting") : settings[0];
    var picker = h("select", { "aria-label": "Setting" }, settings.map(function (s) {
      return h("option", { value: s, text: data.settings[s] });
    }));
    picker.value = setting;
    var image = data.image
      ? h("img", { src: data.image, alt: "The photo of question " + data.id, "class": "gamut-x-image",
                   loading: "lazy" })
      : h("p", { "class": "gamut-muted", text: data.image_link
          ? "The image is hosted elsewhere and is not loaded here." : "No image for this question." });
    var head = h("div", { "class": "gamut-x-head" }, [
      image,
      h("dl", { "class": "gamut-meta" }, [
        h("dt", { text: "Question" }), h("dd", {}, [h("code", { text: data.id })]),
        h("dt", { text: "Multimodal form" }), h("dd", { text: data.question }),
        h("dt", { text: "Text-only form" }), h("dd", { text: data.text_only_question }),
        h("dt", { text: "Domain" }), h("dd", { text: data.domain }),
        h("dt", { text: "Popularity" }), h("dd", { text: data.popularity }),
        h("dt", { text: "Egocentric" }), h("dd", { text: data.egocentric ? "yes" : "no" }),
        h("dt", { text: "Judge" }), h("dd", { text: data.judge }),
        data.image_link ? h("dt", { text: "Image" }) : null,
        data.image_link ? h("dd", {}, [h("a", { href: data.image_link, rel: "nofollow noopener",
                                                 text: "the image (external site)" })]) : null
      ])
    ]);
    var body = h("div", { "class": "gamut-x-body" });
    function draw(record) {
      body.textContent = "";
      body.appendChild(responsesTable(data, setting, params.get("model")));
      if (data.public && data.checks) {
        body.appendChild(checklist(data, setting, params));
      } else {
        body.appendChild(h("p", { "class": "gamut-muted", text: "The rubrics are held: this page " +
          "shows each response's scores and its verdict counts per tier and check kind, not the " +
          "checks themselves." }));
      }
      window.gamut.initSorting(body);
      if (record) { window.gamut.setParams({ setting: setting }); }
    }
    picker.addEventListener("change", function () { setting = picker.value; draw(true); });
    window.gamut.onPop(function (now) {
      if (now.get("question") !== data.id) { window.location.reload(); return; }
      params = now;
      setting = settings.indexOf(now.get("setting")) >= 0 ? now.get("setting") : settings[0];
      picker.value = setting;
      draw(false);
    }, view);
    view.appendChild(h("p", {}, [h("a", { href: "explorer.html", text: "All questions" })]));
    view.appendChild(h("h2", { text: data.question }));
    view.appendChild(head);
    view.appendChild(h("form", { "class": "gamut-filters" }, [h("label", {}, ["Setting ", picker])]));
    view.appendChild(body);
    draw(false);
    var focus = params.get("model") && document.getElementById("m-" + params.get("model"));
    if (focus) { focus.scrollIntoView({ block: "center" }); }
    root.setAttribute("data-loaded", data.id);
  }

  function fail(root, message) {
    var p = h("p", { "class": "gamut-x-error", role: "alert", text: message });
    root.appendChild(p);
    root.setAttribute("data-loaded", "error");
  }

  function init() {
    var root = document.getElementById("gamut-explorer");
    if (!root || root.getAttribute("data-ready")) { return; }
    root.setAttribute("data-ready", "true");
    var params = new URLSearchParams(window.location.search);
    var q = params.get("question");
    /* a plain id names its file (generator/explorer.py question_file): the question opens
       without the index of every question; any other id is looked up there */
    var direct = q && /^[a-z0-9][a-z0-9._-]{0,63}$/.test(q.toLowerCase())
      ? "explorer/q/" + q.toLowerCase() + ".js" : null;
    var index = null;
    function entryFile(idx) {
      var entry = idx.questions.filter(function (e) { return e[0] === q; })[0];
      if (!entry) { throw new Error("No question has the id " + q + "."); }
      return entry[5];
    }
    (q && direct ? getJSON(direct).catch(function () {
      return getJSON(root.getAttribute("data-index")).then(function (idx) {
        return getJSON(entryFile(idx));
      });
    }) : getJSON(root.getAttribute("data-index")).then(function (idx) {
      index = idx;
      return q ? getJSON(entryFile(idx)) : null;
    })).then(function (data) {
      if (!q) { showList(root, index, params); root.setAttribute("data-loaded", "list"); return; }
      showQuestion(root, data, params);
    }).catch(function (err) {
      fail(root, /^No question/.test(err.message) ? err.message
        : "The question data could not be loaded: " + err.message);
    });
  }

  if (typeof document$ !== "undefined") { document$.subscribe(init); }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
