/* Hosted checkout: the pages' one script, progressive enhancement only (every page works
   without it). It formats the card number, shows the brand, inserts the "/" of the expiry,
   checks the form with the server's rules before posting, sends the form once (saying so in a
   live region), and reloads the
   "confirming with the processor" page. It reads and sends nothing but the form itself.
   Its SHA-384 is in docs/payment-page-scripts.md; the CSP allows this file by that hash. */
(function () {
  "use strict";

  function digits(s) { return s.replace(/\D/g, ""); }

  /* The brand from the leading digits, as checkout-domain's CardBrand::of. */
  function brand(d) {
    var p2 = +d.slice(0, 2), p3 = +d.slice(0, 3), p4 = +d.slice(0, 4);
    if (d.charAt(0) === "4") return "Visa";
    if (p2 === 34 || p2 === 37) return "American Express";
    if ((p2 >= 51 && p2 <= 55) || (d.length >= 4 && p4 >= 2221 && p4 <= 2720)) return "Mastercard";
    if (p2 === 65 || (p3 >= 644 && p3 <= 649) || p4 === 6011) return "Discover";
    return "";
  }

  /* The Luhn check, as checkout-domain's luhn_ok. */
  function luhn(d) {
    var sum = 0;
    for (var i = 0; i < d.length; i++) {
      var n = +d.charAt(d.length - 1 - i);
      if (i % 2 === 1) { n *= 2; if (n > 9) n -= 9; }
      sum += n;
    }
    return sum % 10 === 0;
  }

  /* Groups of four; American Express as 4-6-5. */
  function formatNumber(d) {
    if (brand(d) === "American Express") {
      return [d.slice(0, 4), d.slice(4, 10), d.slice(10, 15)].filter(Boolean).join(" ");
    }
    return (d.match(/.{1,4}/g) || []).join(" ");
  }

  /* Month and year as CardExpiry::parse reads them; null when malformed. */
  function parseExpiry(s) {
    var t = s.trim(), m = /^(\d{1,2})\s*[\/\-\s]\s*(\d{2}|\d{4})$/.exec(t) || /^(\d{2})(\d{2}|\d{4})$/.exec(t);
    if (!m) return null;
    var month = +m[1], year = m[2].length === 2 ? 2000 + +m[2] : +m[2];
    return month >= 1 && month <= 12 ? { month: month, year: year } : null;
  }

  function checkExpiry(s, msgs) {
    if (!s.trim()) return msgs.required;
    var e = parseExpiry(s), now = new Date();
    if (!e) return msgs.badExpiry;
    var y = now.getUTCFullYear(), mo = now.getUTCMonth() + 1;
    if (e.year < y || (e.year === y && e.month < mo)) return msgs.expiredCard;
    if (e.year > y + 20) return msgs.badExpiry;
    return "";
  }

  function setError(form, id, message) {
    var input = form.querySelector("#" + id), old = form.querySelector("#" + id + "-error");
    var described = (input.getAttribute("aria-describedby") || "").split(" ")
      .filter(function (x) { return x && x !== id + "-error"; });
    if (old) old.remove();
    if (message) {
      var p = document.createElement("p");
      p.className = "error"; p.id = id + "-error"; p.textContent = message;
      input.insertAdjacentElement("afterend", p);
      input.setAttribute("aria-invalid", "true");
      described.push(p.id);
    } else {
      input.removeAttribute("aria-invalid");
    }
    if (described.length) input.setAttribute("aria-describedby", described.join(" "));
    else input.removeAttribute("aria-describedby");
  }

  function enhanceForm(form) {
    var msgs = {
      required: form.dataset.required, badName: form.dataset.badName,
      badNumber: form.dataset.badNumber, badExpiry: form.dataset.badExpiry,
      expiredCard: form.dataset.expiredCard, badCvv: form.dataset.badCvv
    };
    var number = form.querySelector("#cardNumber"), expiry = form.querySelector("#cardExpiry");
    var cvv = form.querySelector("#cardCvv"), name = form.querySelector("#cardholderName");
    var brandOut = document.getElementById("card-brand"), pay = form.querySelector("#pay");
    var summary = document.getElementById("error-summary"), sent = false;
    var banner = document.getElementById("banner"), status = document.getElementById("pay-status");

    number.addEventListener("input", function () {
      var d = digits(number.value).slice(0, 19), atEnd = number.selectionStart === number.value.length;
      number.value = formatNumber(d);
      if (atEnd) number.setSelectionRange(number.value.length, number.value.length);
      brandOut.textContent = brand(d);
    });
    expiry.addEventListener("input", function (e) {
      var v = expiry.value;
      if (/^delete/.test(e.inputType || "")) return;
      if (/^\d[\/\-\s]/.test(v)) v = "0" + v;
      var d = digits(v).slice(0, 6);
      expiry.value = d.length > 2 ? d.slice(0, 2) + "/" + d.slice(2) : d.length === 2 ? d + "/" : d;
    });
    cvv.addEventListener("input", function () { cvv.value = digits(cvv.value).slice(0, 4); });

    /* The card-testing guard's proof of work, when the form carries one: the number whose
       SHA-256 after the salt is the challenge, found with SubtleCrypto in batches. */
    var pow = document.getElementById("pow-number"), proof = null;
    if (pow && window.crypto && crypto.subtle && window.TextEncoder) {
      proof = new Promise(function (resolve) {
        var salt = form.elements.powSalt.value, target = form.elements.powChallenge.value;
        var max = +pow.dataset.max, n = 0, enc = new TextEncoder();
        function hex(buf) {
          var b = new Uint8Array(buf), s = "";
          for (var i = 0; i < b.length; i++) s += (b[i] < 16 ? "0" : "") + b[i].toString(16);
          return s;
        }
        function batch() {
          var tries = [];
          for (var k = 0; k < 1000 && n <= max; k++, n++) {
            tries.push(crypto.subtle.digest("SHA-256", enc.encode(salt + n)));
          }
          var first = n - tries.length;
          Promise.all(tries).then(function (hashes) {
            for (var i = 0; i < hashes.length; i++) {
              if (hex(hashes[i]) === target) { pow.value = String(first + i); resolve(); return; }
            }
            if (n > max) { resolve(); return; }
            setTimeout(batch, 0);
          });
        }
        batch();
      });
    }

    form.addEventListener("submit", function (e) {
      if (sent) { e.preventDefault(); return; }
      if (proof && !pow.value) {
        /* Sent once the check is done (the fields are checked then). */
        e.preventDefault();
        pay.setAttribute("aria-busy", "true");
        proof.then(function () { proof = null; pay.removeAttribute("aria-busy"); form.requestSubmit ? form.requestSubmit(pay) : form.submit(); });
        return;
      }
      var d = digits(number.value), holder = name.value.trim(), code = cvv.value.trim();
      var errors = [
        ["cardholderName", !holder ? msgs.required : holder.length > 100 ? msgs.badName : ""],
        ["cardNumber", !d ? msgs.required : (d.length < 12 || d.length > 19 || !luhn(d)) ? msgs.badNumber : ""],
        ["cardExpiry", checkExpiry(expiry.value, msgs)],
        ["cardCvv", !code ? msgs.required
          : (!/^\d+$/.test(code) || code.length !== (brand(d) === "American Express" ? 4 : 3)) ? msgs.badCvv : ""]
      ];
      var list = summary.querySelector("ul"), bad = 0;
      list.textContent = "";
      errors.forEach(function (entry) {
        setError(form, entry[0], entry[1]);
        if (!entry[1]) return;
        bad++;
        var label = form.querySelector("label[for=" + entry[0] + "]").firstChild.textContent.trim();
        var li = document.createElement("li"), a = document.createElement("a");
        a.href = "#" + entry[0]; a.textContent = label + ": " + entry[1];
        li.appendChild(a); list.appendChild(li);
      });
      if (bad) {
        e.preventDefault();
        var note = document.getElementById("retype-note");
        if (note) note.hidden = true;
        summary.hidden = false;
        summary.focus();
        return;
      }
      /* Sending: the old messages go, a polite live region says so, and Pay keeps the focus
         (aria-disabled, not disabled, which would drop the focus to the page). */
      sent = true;
      summary.hidden = true;
      if (banner) banner.hidden = true;
      pay.setAttribute("aria-disabled", "true");
      pay.setAttribute("aria-busy", "true");
      pay.textContent = form.dataset.processing;
      form.setAttribute("aria-busy", "true");
      status.textContent = form.dataset.processingStatus;
    });

    /* Links of the error summary move focus into the field, not just scroll to it. */
    summary.addEventListener("click", function (e) {
      var target = e.target.closest("a[href^='#']");
      if (!target) return;
      var input = document.getElementById(target.getAttribute("href").slice(1));
      if (input) { e.preventDefault(); input.focus(); }
    });
    /* Back to this form from the browser's cache (it may show it as it was when sent): read
       the page again, a GET, so that it shows where the payment stands now. */
    window.addEventListener("pageshow", function (e) {
      if (e.persisted) window.location.reload();
    });
    if (!summary.hidden) summary.focus();
    brandOut.textContent = brand(digits(number.value));
  }

  function start() {
    var form = document.getElementById("card-form");
    if (form) enhanceForm(form);
    var result = document.getElementById("result");
    var seconds = result && +result.dataset.refresh;
    if (seconds) setTimeout(function () { window.location.reload(); }, seconds * 1000);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
