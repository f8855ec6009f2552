// boxbench report: the page works without this script; it adds "expand all" for the runs and
// checks itself. The check is what the headless-browser test reads: body[data-ok] is "true"
// only if no script error happened and every chart has at least one visible mark with finite
// coordinates; otherwise it is "false" and body[data-problems] says why.
(function () {
  "use strict";
  var body = document.body;
  var problems = [];
  function fail(msg) {
    problems.push(msg);
    body.dataset.ok = "false";
    body.dataset.problems = problems.join(" | ");
  }
  window.addEventListener("error", function (e) {
    fail("script error: " + (e.message || String(e)));
  });

  var btn = document.getElementById("toggle-runs");
  if (btn) {
    btn.addEventListener("click", function () {
      var open = btn.textContent === "expand all";
      document.querySelectorAll("details.runs").forEach(function (d) { d.open = open; });
      btn.textContent = open ? "collapse all" : "expand all";
    });
  }

  function check() {
    // Closed <details> are not laid out; open them while measuring.
    var closed = Array.prototype.slice.call(document.querySelectorAll("details:not([open])"));
    closed.forEach(function (d) { d.open = true; });
    var charts = document.querySelectorAll("[data-chart]");
    charts.forEach(function (c) {
      var name = c.getAttribute("data-chart");
      c.querySelectorAll("*").forEach(function (el) {
        for (var i = 0; i < el.attributes.length; i++) {
          if (/NaN|Infinity/.test(el.attributes[i].value)) {
            fail("non-finite " + el.attributes[i].name + " in chart " + name);
          }
        }
      });
      var visible = 0;
      c.querySelectorAll(".mark").forEach(function (m) {
        var b = m.getBBox();
        if (b.width > 0 || b.height > 0) visible++;
      });
      if (visible === 0) fail("empty chart: " + name);
    });
    closed.forEach(function (d) { d.open = false; });
    body.dataset.charts = String(charts.length);
    if (charts.length === 0) fail("no charts");
    if (problems.length === 0) body.dataset.ok = "true";
  }
  check();
})();
