// citegraph viewer: citation tooltips (hover, focus or click). Text is set with textContent,
// never as HTML, so model text cannot inject markup.
(function () {
  var tip = document.getElementById("tip");
  if (!tip) { return; }
  var pinned = null;
  function show(el) {
    tip.textContent = el.getAttribute("data-tip");
    var box = el.getBoundingClientRect();
    tip.style.left = (window.scrollX + box.left) + "px";
    tip.style.top = (window.scrollY + box.bottom + 6) + "px";
    tip.hidden = false;
  }
  function hide() { if (!pinned) { tip.hidden = true; } }
  document.querySelectorAll("[data-tip]").forEach(function (el) {
    el.addEventListener("mouseenter", function () { show(el); });
    el.addEventListener("mouseleave", hide);
    el.addEventListener("focus", function () { show(el); });
    el.addEventListener("blur", hide);
    el.addEventListener("click", function (event) {
      if (el.tagName === "A") { return; }
      event.stopPropagation();
      pinned = pinned === el ? null : el;
      if (pinned) { show(el); } else { tip.hidden = true; }
    });
  });
  document.addEventListener("click", function () { pinned = null; tip.hidden = true; });
  // The run page's filters apply as soon as a select changes.
  var form = document.getElementById("filters");
  if (form) {
    form.querySelectorAll("select").forEach(function (s) {
      s.addEventListener("change", function () { form.submit(); });
    });
  }
})();
