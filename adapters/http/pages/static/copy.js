// Copy buttons: a button with data-copy copies the named input's value.
'use strict';
document.addEventListener('click', function (e) {
  var b = e.target.closest('button.copy-button');
  if (!b) return;
  var input = document.getElementById(b.dataset.copy);
  if (!input) return;
  input.select();
  var done = function () { b.textContent = 'Copied'; };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(input.value).then(done, function () {});
  } else {
    try { if (document.execCommand('copy')) done(); } catch (err) { /* the text stays selected to copy by hand */ }
  }
});
// Without PETAL_API the server does not know its own address; the page does.
document.querySelectorAll('[data-site]').forEach(function (e) {
  if (e.tagName === 'INPUT') e.value = e.value.replace('{site}', location.origin);
  else e.textContent = e.textContent.replace('{site}', location.origin);
});
