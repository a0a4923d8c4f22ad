// The site's only script (tools/site). Every page reads without it: the folds are <details>, and
// the diff's view switch is a pair of radio buttons that CSS alone obeys. The script only adds
// what needs it: one button that unfolds or folds every unchanged stretch of the page, and the
// view chosen last kept from page to page.
(function () {
  "use strict";
  var KEY = "gemm-site-view";

  var radios = document.querySelectorAll('input[name="view"]');
  var saved = null;
  try {
    saved = window.localStorage.getItem(KEY);
  } catch (e) {
    // No storage (a private window, a file:// policy): each page starts side by side.
  }
  radios.forEach(function (radio) {
    if (radio.value === saved) radio.checked = true;
    radio.addEventListener("change", function () {
      try {
        window.localStorage.setItem(KEY, radio.value);
      } catch (e) {
        // As above: the choice holds for this page only.
      }
    });
  });

  var folds = document.querySelectorAll("details.fold");
  document.querySelectorAll("button.unfold").forEach(function (button) {
    if (!folds.length) return;
    button.hidden = false;
    function label() {
      var open = Array.prototype.every.call(folds, function (d) { return d.open; });
      button.textContent = open ? "Fold all" : "Unfold all";
      return open;
    }
    label();
    button.addEventListener("click", function () {
      var open = !label();
      folds.forEach(function (d) { d.open = open; });
      label();
    });
    folds.forEach(function (d) { d.addEventListener("toggle", label); });
  });
})();
