(function () {
  var doc = document;
  var rounds = doc.querySelectorAll('details.round');
  function setAll(open) { for (var i = 0; i < rounds.length; i++) { rounds[i].open = open; } }
  function reveal(el) {
    for (var p = el; p; p = p.parentElement) { if (p.tagName === 'DETAILS') { p.open = true; } }
  }
  doc.getElementById('expand').addEventListener('click', function () { setAll(true); });
  doc.getElementById('collapse').addEventListener('click', function () { setAll(false); });
  function showHash() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && doc.getElementById(id);
    if (el) { reveal(el); el.scrollIntoView({block: 'center'}); }
  }
  window.addEventListener('hashchange', showHash);
  var find = doc.getElementById('find'), found = doc.getElementById('found');
  find.addEventListener('input', function () {
    var old = doc.querySelectorAll('.match.hit');
    for (var i = 0; i < old.length; i++) { old[i].classList.remove('hit'); }
    var q = find.value.trim().toLowerCase(), hits = [];
    var agent = /^a?(\d+)$/.exec(q), match = /^r\d+-m\d+$/.exec(q);
    if (agent) {
      var width = Math.max(agent[1].length, (doc.querySelector('.match') || {dataset: {a: 'a000'}}).dataset.a.length - 1);
      var id = 'a' + ('000000' + agent[1]).slice(-width);
      hits = doc.querySelectorAll('.match[data-a="' + id + '"], .match[data-b="' + id + '"]');
    } else if (match && doc.getElementById(q)) {
      hits = [doc.getElementById(q)];
    }
    for (var k = 0; k < hits.length; k++) { hits[k].classList.add('hit'); reveal(hits[k]); }
    found.textContent = q ? hits.length + ' match' + (hits.length === 1 ? '' : 'es') : '';
    if (hits.length) { hits[0].scrollIntoView({block: 'center'}); }
  });
  if (location.hash) { showHash(); }
  doc.documentElement.setAttribute('data-ready', '1');
})();
