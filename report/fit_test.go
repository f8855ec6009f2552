package report

import (
	"bytes"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// The page must fit the screen: at a laptop's width and at a phone's, nothing makes the page
// scroll sideways. A wide table scrolls inside its own box (div.scroll), preformatted text
// inside its <pre>, and a chart's marks stay inside its <svg>; every other element stays
// within the viewport. The page is loaded in one iframe per width to test (headless
// Chromium's window is never narrower than 500 px), inside a wrapper page whose script
// measures each with every <details> open (a reader may open them all) and writes what it
// found into the wrapper's body[data-fit-WIDTH-*], which the test reads from the dumped DOM as
// it reads the page's own check.

// fitWidths are the viewport widths the page must fit: a laptop and a phone.
var fitWidths = []int{1280, 390}

// fitWrapper is the wrapper page; %s are its iframes (fitFrame). An element overflows when
// its box reaches past the viewport's right edge (or left of 0) and no designated scroll
// container holds it: .scroll, <pre>, and <svg> (which clips its own content); so does text
// that runs out of its element. Of overflowing elements only the outermost are named (their
// descendants overflow with them), each with its path of ids and classes and its edges in
// CSS pixels.
const fitWrapper = `<!doctype html>
<html><head><script>
function measure(frame, w) {
  var win = frame.contentWindow, doc = frame.contentDocument, over = [];
  doc.querySelectorAll("details").forEach(function (d) { d.open = true; });
  var vw = win.innerWidth;
  function name(el) {
    var parts = [];
    for (var e = el; e && e !== doc.body; e = e.parentElement) {
      var s = e.tagName.toLowerCase();
      if (e.id) s += "#" + e.id;
      if (typeof e.className === "string" && e.className.trim()) s += "." + e.className.trim().split(/\s+/).join(".");
      parts.unshift(s);
      if (e.id) break;
    }
    return parts.join(" > ");
  }
  doc.body.querySelectorAll("*").forEach(function (el) {
    if (el.tagName === "SCRIPT" || el.tagName === "STYLE") return;
    if (el.parentElement && el.parentElement.closest(".scroll, pre, svg")) return;
    var b = el.getBoundingClientRect();
    if (b.width === 0 && b.height === 0) return;
    if (b.right <= vw + 0.5 && b.left >= -0.5) return;
    for (var i = 0; i < over.length; i++) if (over[i].el.contains(el)) return;
    over.push({el: el, s: name(el) + " [" + Math.round(b.left) + ".." + Math.round(b.right) + "]"});
  });
  // Text that does not wrap runs out of its element's box without widening the box.
  var walk = doc.createTreeWalker(doc.body, NodeFilter.SHOW_TEXT), range = doc.createRange();
  for (var t = walk.nextNode(); t; t = walk.nextNode()) {
    var el = t.parentElement;
    if (!el || el.closest(".scroll, pre, svg, script, style")) continue;
    range.selectNodeContents(t);
    var b = range.getBoundingClientRect();
    if (b.width === 0 || (b.right <= vw + 0.5 && b.left >= -0.5)) continue;
    var seen = false;
    for (var i = 0; i < over.length; i++) seen = seen || over[i].el.contains(el);
    if (!seen) over.push({el: el, s: "text of " + name(el) + " [" + Math.round(b.left) + ".." + Math.round(b.right) + "]"});
  }
  function put(k, v) { document.body.setAttribute("data-fit-" + w + "-" + k, v); }
  put("width", String(vw));
  put("scroll", String(doc.documentElement.scrollWidth));
  put("over", over.map(function (o) { return o.s; }).join(" | "));
  var inner = [];
  doc.querySelectorAll(".scroll, pre").forEach(function (el) {
    if (el.scrollWidth > el.clientWidth + 1) inner.push(name(el) + " " + el.scrollWidth + "/" + el.clientWidth);
  });
  put("inner", inner.join(" | "));
  var main = doc.querySelector("#overhead .scroll");
  put("main", main ? main.scrollWidth + "/" + main.clientWidth : "");
}
</script></head>
<body style="margin:0">%s</body>
</html>
`

// fitFrame is one iframe of the wrapper: %d its width (twice), %s the page, escaped for srcdoc
// (a srcdoc document has the wrapper's origin, so the wrapper's script can read it).
const fitFrame = `<iframe style="display:block;border:0;width:%dpx;height:900px" onload="measure(this, %d)" srcdoc="%s"></iframe>`

var fitAttr = regexp.MustCompile(`data-fit-(\d+)-(width|scroll|over|inner|main)="([^"]*)"`)

// fitPage is one page the fit test renders.
type fitPage struct {
	name string
	html []byte
}

// fit is what the wrapper measured of a page: the viewport's width, the page's
// document.documentElement.scrollWidth, the overflowing elements ("" for none), the scroll
// boxes that scroll and how far ("" for none) and the overhead table's box (its scrollWidth /
// clientWidth).
type fit struct {
	width, scroll int
	over, inner   string
	main          string
}

// fitMeasure renders page at viewports of each of widths CSS pixels, in one browser.
func fitMeasure(t *testing.T, page []byte, widths ...int) map[int]fit {
	t.Helper()
	var frames strings.Builder
	escaped := html.EscapeString(string(page))
	for _, w := range widths {
		fmt.Fprintf(&frames, fitFrame, w, w, escaped)
	}
	file := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(fitWrapper, frames.String())), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := chromium(t, file, "--dump-dom", "--window-size="+strconv.Itoa(slices.Max(widths)+200)+",1000")
	got := map[string]string{}
	for _, m := range fitAttr.FindAllStringSubmatch(bodyTag.FindString(dom), -1) {
		got[m[1]+" "+m[2]] = html.UnescapeString(m[3])
	}
	fits := map[int]fit{}
	for _, w := range widths {
		k := strconv.Itoa(w) + " "
		if got[k+"width"] == "" {
			t.Fatalf("the measuring script did not run at %d px; the wrapper's DOM:\n%.1000s", w, dom)
		}
		f := fit{over: got[k+"over"], inner: got[k+"inner"], main: got[k+"main"]}
		f.width, _ = strconv.Atoi(got[k+"width"])
		f.scroll, _ = strconv.Atoi(got[k+"scroll"])
		fits[w] = f
	}
	return fits
}

// fitPages are the report's pages: every golden fixture, the previous release's results file,
// the published-vs-this-host study, a duet experiment and a cluster's, where the time goes.
func fitPages(t *testing.T) []fitPage {
	t.Helper()
	var pages []fitPage
	add := func(name string, r *Report) {
		var b bytes.Buffer
		if err := WriteHTML(&b, r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pages = append(pages, fitPage{name, b.Bytes()})
	}
	for _, f := range fixtures {
		r, err := Build(openFixture(t, f.name))
		if err != nil {
			t.Fatal(err)
		}
		add(f.name, r)
	}
	add("legacy-v1", legacyReport(t))
	add("published", publishedFixture(t))
	add("where", whereFixture(t))
	return pages
}

// TestHTMLFitsScreen renders every page at every width of fitWidths: the page never scrolls
// sideways, and on a laptop (1280 px) the overhead table, the one read first, is whole
// without scrolling its box; on a phone it scrolls in its box.
func TestHTMLFitsScreen(t *testing.T) {
	testenv.NeedCommands(t, "chromium")
	for _, p := range fitPages(t) {
		t.Run(p.name, func(t *testing.T) {
			fits := fitMeasure(t, p.html, fitWidths...)
			for _, w := range fitWidths {
				t.Run(strconv.Itoa(w), func(t *testing.T) {
					checkFit(t, w, fits[w])
				})
			}
		})
	}
}

// checkFit holds a page measured at w px to TestHTMLFitsScreen's rules.
func checkFit(t *testing.T, w int, f fit) {
	t.Helper()
	if f.width != w {
		t.Fatalf("the page saw a viewport %d px wide, want %d", f.width, w)
	}
	if f.scroll > f.width || f.over != "" {
		t.Errorf("the page is wider than the screen: scrollWidth %d at %d; overflowing: %s", f.scroll, f.width, f.over)
	}
	var sw, cw int
	if _, err := fmt.Sscanf(f.main, "%d/%d", &sw, &cw); err != nil {
		t.Fatalf("no overhead table measured (%q): %v", f.main, err)
	}
	if w >= 1280 && sw > cw {
		t.Errorf("at %d px the overhead table is %d px wide in a box of %d: it scrolls", w, sw, cw)
	}
	if f.inner != "" {
		t.Logf("scrolling in their own box: %s", f.inner)
	}
}

// TestHTMLFitCheckCanFail makes sure the measure notices what it is for: a box wider than a
// phone, a line that cannot wrap, an overhead table too wide for a laptop; and that a wide
// table in a scroll box is not an overflow of the page.
func TestHTMLFitCheckCanFail(t *testing.T) {
	testenv.NeedCommands(t, "chromium")
	r, err := Build(openFixture(t, "edge"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	insert := func(at, what string) []byte {
		i := strings.Index(page, at)
		if i < 0 {
			t.Fatalf("no %q in the page", at)
		}
		return []byte(page[:i] + what + page[i:])
	}
	cases := []struct {
		name  string
		html  []byte
		width int
		want  string // in the overflowing elements; "" for none
	}{
		{"wide box", insert(`<section id="spec">`, `<div id="wide" style="width:600px">x</div>`), 390, "div#wide [12..612]"},
		{"unbreakable line", insert(`<section id="spec">`, `<p id="line" style="white-space:nowrap">`+strings.Repeat("word ", 200)+`</p>`), 390, "text of p#line"},
		{"wide table in its box", insert(`<section id="spec">`, `<div class="scroll"><table><tr><td style="min-width:3000px">x</td></tr></table></div>`), 390, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fitMeasure(t, c.html, c.width)[c.width]
			t.Logf("scrollWidth %d at %d; overflowing: %q", f.scroll, f.width, f.over)
			if c.want == "" && (f.over != "" || f.scroll > f.width) {
				t.Errorf("a table scrolling in its own box counted as an overflow: scrollWidth %d, %q", f.scroll, f.over)
			}
			if c.want != "" && (!strings.Contains(f.over, c.want) || f.scroll <= f.width) {
				t.Errorf("overflow not noticed: scrollWidth %d at %d, overflowing %q, want %q", f.scroll, f.width, f.over, c.want)
			}
		})
	}
	t.Run("overhead table too wide", func(t *testing.T) {
		wide := strings.Replace(page, `<th>verdict</th>`, `<th style="min-width:400px">verdict</th>`, 1)
		f := fitMeasure(t, []byte(wide), 1280)[1280]
		var sw, cw int
		if _, err := fmt.Sscanf(f.main, "%d/%d", &sw, &cw); err != nil || sw <= cw {
			t.Errorf("the overhead table's box does not scroll: %q", f.main)
		}
	})
}
