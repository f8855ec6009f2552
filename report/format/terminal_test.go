package format

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestSafe(t *testing.T) {
	for _, tc := range []struct{ in, want, lines string }{
		{"plain µs → ok", "plain µs → ok", "plain µs → ok"},
		{"\x1b]0;t\a\x1b[2J", `\x1b]0;t\a\x1b[2J`, `\x1b]0;t\a\x1b[2J`},
		{"a\nb\tc\rd", `a\nb\tc\rd`, "a\nb\tc\\rd"},
		{"\u009b31m\u202eabc\u2066\x7f", `\u009b31m\u202eabc\u2066\u007f`, `\u009b31m\u202eabc\u2066\u007f`},
		{"bad\xff\xc3", `bad\xff\xc3`, `bad\xff\xc3`},
	} {
		if got := Safe(tc.in); got != tc.want {
			t.Errorf("Safe(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := SafeLines(tc.in); got != tc.lines {
			t.Errorf("SafeLines(%q) = %q, want %q", tc.in, got, tc.lines)
		}
		if Safe(Safe(tc.in)) != Safe(tc.in) {
			t.Errorf("Safe is not idempotent on %q", tc.in)
		}
	}
}

// TestTerminalWriter: characters split across writes come out whole; JSON stays JSON (the
// escapes of DEL, C1 and bidirectional characters are JSON's too).
func TestTerminalWriter(t *testing.T) {
	var b bytes.Buffer
	w := Terminal(&b)
	in := "µs → \u202e\x1b[2J\n"
	for i := 0; i < len(in); i++ {
		if _, err := w.Write([]byte{in[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := "µs → \\u202e\\x1b[2J\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	w.Write([]byte("cut \xc3"))
	w.Flush()
	if b.String() != `cut \xc3` {
		t.Errorf("an incomplete character at the end: %q", b.String())
	}
	b.Reset()
	doc, _ := json.Marshal(map[string]string{"k\u0085": "\x7f\u009b\u202e\x1b<"})
	w.Write(doc)
	var back map[string]string
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back["k\u0085"] != "\x7f\u009b\u202e\x1b<" {
		t.Errorf("JSON through the writer: %s (%v, %q)", b.String(), err, back)
	}
	if strings.ContainsAny(b.String(), "\x7f\u009b\u202e\x1b") {
		t.Errorf("raw control characters passed: %q", b.String())
	}
}
