package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxbench/boxbench/testkit/testenv"
)

// The HTML report is checked in a real browser: Debian's chromium, headless. The page's own
// script sets body[data-ok] after checking that every chart has visible marks with finite
// coordinates and that no script error happened; the test reads it from the dumped DOM, and
// fails on any console message (the page logs nothing, so any message is a script or SVG
// error).

// chromium runs headless chromium on a file with extra arguments and returns its stdout and
// its log.
func chromium(t *testing.T, file string, args ...string) (stdout, log string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, args...)
	argv = append(argv, "file://"+file)
	cmd := exec.CommandContext(ctx, "chromium", argv...)
	// chromium forks helpers; on timeout kill the whole process group, not just the parent.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(argv, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

var (
	bodyTag     = regexp.MustCompile(`<body[^>]*>`)
	attr        = regexp.MustCompile(`data-(ok|charts|problems)="([^"]*)"`)
	consoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)
)

// renderCheck loads an HTML file and returns the page's self-check attributes and the
// console messages.
func renderCheck(t *testing.T, file string) (map[string]string, []string) {
	t.Helper()
	dom, log := chromium(t, file, "--dump-dom")
	body := bodyTag.FindString(dom)
	if body == "" {
		t.Fatalf("no <body> in the dumped DOM:\n%.2000s", dom)
	}
	got := map[string]string{}
	for _, m := range attr.FindAllStringSubmatch(body, -1) {
		got[m[1]] = m[2]
	}
	return got, consoleLine.FindAllString(log, -1)
}

func TestHTMLInChromium(t *testing.T) {
	testenv.NeedCommands(t, "chromium")
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			st := openFixture(t, f.name)
			r, err := Build(st)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := WriteHTML(&b, r); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), f.name+".html")
			if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			got, console := renderCheck(t, file)
			if len(console) > 0 {
				t.Errorf("console messages (script or SVG errors):\n%s", strings.Join(console, "\n"))
			}
			if got["ok"] != "true" {
				t.Errorf("page self-check: data-ok=%q, problems: %s", got["ok"], got["problems"])
			}
			want := strings.Count(b.String(), "data-chart=")
			if n, _ := strconv.Atoi(got["charts"]); n != want || n == 0 {
				t.Errorf("page checked %s charts, the HTML has %d", got["charts"], want)
			}
			if f.name == "quickstart" {
				screenshot(t, file)
			}
		})
	}
}

// screenshot renders the top of the page at a laptop-like size: testdata/screenshot.png with
// -update (for the README), a temporary file otherwise. Either way it must not be blank.
func screenshot(t *testing.T, file string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "screenshot.png")
	if *update {
		out, _ = filepath.Abs(filepath.Join("testdata", "screenshot.png"))
	}
	chromium(t, file, "--screenshot="+out, "--window-size=1400,1800")
	fh, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1400 || b.Dy() != 1800 {
		t.Errorf("screenshot is %dx%d, want 1400x1800", b.Dx(), b.Dy())
	}
	colors := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colors[r>>8<<16|g>>8<<8|bl>>8] = true
		}
	}
	if len(colors) < 20 {
		t.Errorf("screenshot looks blank: %d distinct colours", len(colors))
	}
}

// TestHTMLCheckCanFail makes sure the browser check notices broken pages: a chart without
// marks, a non-finite coordinate, a script error.
func TestHTMLCheckCanFail(t *testing.T) {
	testenv.NeedCommands(t, "chromium")
	st := openFixture(t, "edge")
	r, err := Build(st)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	first := strings.Index(page, `class="mark`)
	cases := []struct {
		name, html string
		selfCheck  bool // the page's own check must say so (else the console must)
	}{
		{"no marks", strings.ReplaceAll(page, `class="mark`, `class="nomark`), true},
		{"NaN", page[:first] + strings.Replace(page[first:], `d="M`, `d="MNaN `, 1), true},
		{"script error", strings.Replace(page, "<script>", "<script>undefinedFunction();</script><script>", 1), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "broken.html")
			if err := os.WriteFile(file, []byte(c.html), 0o644); err != nil {
				t.Fatal(err)
			}
			got, console := renderCheck(t, file)
			if c.selfCheck && got["ok"] != "false" {
				t.Errorf("the page's check did not notice: data-ok=%q", got["ok"])
			}
			if !c.selfCheck && len(console) == 0 {
				t.Errorf("no console message for a script error")
			}
			t.Logf("data-ok=%q problems=%q console messages=%d", got["ok"], got["problems"], len(console))
		})
	}
}
