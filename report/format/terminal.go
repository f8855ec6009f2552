package format

import (
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/boxbench/boxbench/spec/section"
)

// Terminal safety. Strings a report prints come from a results file, which may have come from
// anywhere, and from engines: an ESC, a CSI (C1) or a bidirectional override among them would
// let that file set the window title, clear the screen, move the cursor or reorder what a
// reader sees. Every command that writes to a terminal writes through a Terminal writer, so no
// such character reaches it whichever field carried it; the characters that
// section.ControlChar names are shown escaped instead, and invalid UTF-8 bytes as \xNN.
//
// The escapes are Go's: \a, \r and the like, \x1b for another ASCII control, \u009b, \u007f or \u202e for the others.
// DEL and C1 use the \u form so that JSON output stays JSON (encoding/json escapes the ASCII
// controls itself but passes DEL, C1 and bidirectional characters through). New lines and tabs
// are kept: the layouts (multi-line reasons and log tails, tab-separated tables) need them, and
// they move nothing but to the next line or column. A carriage return is escaped: it would let
// a string overwrite the line it is printed on.

// Safe returns s with every character that must not reach a terminal escaped, new lines and
// tabs included: for a string that must stay on one line.
func Safe(s string) string {
	if clean(s, false) {
		return s
	}
	return string(appendSafe(nil, []byte(s), false))
}

// SafeLines is Safe keeping new lines and tabs.
func SafeLines(s string) string {
	if clean(s, true) {
		return s
	}
	return string(appendSafe(nil, []byte(s), true))
}

func clean(s string, layout bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || (c < 0x20 && !(layout && (c == '\n' || c == '\t'))) {
			return false // not plain ASCII: appendSafe decides
		}
	}
	return true
}

// TerminalWriter passes text to the writer under it with every character that must not reach a
// terminal escaped (new lines and tabs kept). A multi-byte character split across two Writes
// is held back until it is whole; Flush writes what is held. Not safe for concurrent use.
type TerminalWriter struct {
	w       io.Writer
	pending []byte
	buf     []byte
}

// Terminal returns a TerminalWriter over w; over a TerminalWriter it returns that writer (the
// escaped text is plain ASCII, so filtering twice changes nothing).
func Terminal(w io.Writer) *TerminalWriter {
	if t, ok := w.(*TerminalWriter); ok {
		return t
	}
	return &TerminalWriter{w: w}
}

// Write escapes p and writes it; it reports len(p) when the writer under it took everything.
func (t *TerminalWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(t.pending) > 0 {
		p = append(t.pending, p...)
		t.pending = nil
	}
	cut := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				cut = i
			}
			break
		}
	}
	t.pending = append(t.pending[:0:0], p[cut:]...)
	t.buf = appendSafe(t.buf[:0], p[:cut], true)
	if _, err := t.w.Write(t.buf); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes the bytes held back (an incomplete character, escaped as invalid UTF-8).
func (t *TerminalWriter) Flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	out := appendSafe(nil, t.pending, true)
	t.pending = nil
	_, err := t.w.Write(out)
	return err
}

func appendSafe(dst, p []byte, layout bool) []byte {
	for len(p) > 0 {
		r, size := utf8.DecodeRune(p)
		switch {
		case r == utf8.RuneError && size <= 1:
			dst = append(dst, `\x`...)
			dst = appendHex(dst, uint32(p[0]), 2)
		case layout && (r == '\n' || r == '\t'):
			dst = append(dst, byte(r))
		case !section.ControlChar(r):
			dst = append(dst, p[:size]...)
		case r < 0x0e && shortEscape[r] != 0:
			dst = append(dst, '\\', shortEscape[r])
		case r < 0x7f:
			dst = append(dst, `\x`...)
			dst = appendHex(dst, uint32(r), 2)
		default:
			dst = append(dst, `\u`...)
			dst = appendHex(dst, uint32(r), 4)
		}
		p = p[size:]
	}
	return dst
}

// shortEscape are Go's one-letter escapes (\a for BEL, \r, \n, ...).
var shortEscape = [0x0e]byte{7: 'a', 8: 'b', 9: 't', 10: 'n', 11: 'v', 12: 'f', 13: 'r'}

func appendHex(dst []byte, v uint32, digits int) []byte {
	s := strconv.FormatUint(uint64(v), 16)
	for i := len(s); i < digits; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}
