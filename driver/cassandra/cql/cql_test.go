package cql

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"testing"
)

// TestToken: tokens captured from Cassandra 5.0.5 (SELECT token(?) FROM system.local, the
// package driver/cassandra's TestServer/tokens, which checks 45 keys against the live
// server): ASCII keys, tails of 8, 13, 14 and 15 bytes with bytes ≥ 0x80 (sign-extended by
// Cassandra), keys of more than one 16-byte block, and the empty key (the minimum token).
func TestToken(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want int64
	}{
		{"", math.MinInt64},
		{"user1", -1727604350198519072},
		{"user6284781860667377211", 4844203595558397365},
		{"ü", 2039338041252279364},
		{"日本語のキー", -6915128621077656969},
		{"jqxeézgn", 9037967314014726851},
		{"pwdkéfmtéovcz", 1773423132386819914},
		{"qxelégnuépwdé", 346237156541772039},
		{"ryfméhovéqxeéz", -5973679229289179326},
		{"fmtaévcjéelsénubéwdkéfmté", 1344976793161801482},
		{"ovcjéelsénubéwdkéfmtéovcéxelégnuz", -8938174010355450221},
	} {
		if got := Token(tc.key); got != tc.want {
			t.Errorf("Token(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
}

func TestTokenAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { Token("user6284781860667377211") }); n != 0 {
		t.Errorf("Token allocates %v times", n)
	}
}

// TestRequests: the bytes of each request, as the v4 specification lays them out.
func TestRequests(t *testing.T) {
	hexOf := func(b []byte) string { return hex.EncodeToString(b) }
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		// version 4, flags 0, stream 0, STARTUP, length 22; {"CQL_VERSION": "3.0.0"}
		{"startup", AppendStartup(nil, 0), "040000000100000016" + "0001" + "000b" + hex.EncodeToString([]byte("CQL_VERSION")) + "0005" + hex.EncodeToString([]byte("3.0.0"))},
		{"options", AppendOptions(nil, 7), "040000070500000000"},
		// SASL PLAIN: [bytes] NUL user NUL password
		{"auth", AppendAuthResponse(nil, 0, "u", "pw"), "04000000" + "0f" + "00000009" + "00000005" + "0075" + "00" + "7077"},
		// [long string] query, consistency ONE, no flags
		{"query", AppendQuery(nil, 0, "SELECT 1", One), "04000000070000000f" + "00000008" + hex.EncodeToString([]byte("SELECT 1")) + "0001" + "00"},
		{"prepare", AppendPrepare(nil, 0x0102, "Q"), "040001020900000005" + "00000001" + "51"},
		// [short bytes] id, consistency QUORUM, flags values|skip_metadata, 2 values: "k", int 10
		{"execute", AppendExecute(nil, 3, []byte{0xab, 0xcd}, Quorum,
			2, AppendIntValue(AppendStringValue(nil, "k"), 10)),
			"04000003" + "0a" + "00000016" + "0002abcd" + "0004" + "03" + "0002" + "000000016b" + "000000040000000a"},
		{"execute no values", AppendExecute(nil, 0, []byte{1}, One, 0, nil), "04000000" + "0a" + "00000006" + "000101" + "0001" + "02"},
		{"null value", AppendBytes(nil, nil), "ffffffff"},
	} {
		if got := hexOf(tc.got); got != tc.want {
			t.Errorf("%s:\n got  %s\n want %s", tc.name, got, tc.want)
		}
	}
	b, s := BeginBatch(nil, 0, BatchUnlogged, 1)
	b = AppendBatchExecute(b, []byte{9}, 1, AppendStringValue(nil, "k"))
	b = EndBatch(b, s, One)
	if want := "04000000" + "0d" + "00000011" + "01" + "0001" + "01" + "000109" + "0001" + "000000016b" + "0001" + "00"; hexOf(b) != want {
		t.Errorf("batch:\n got  %s\n want %s", hexOf(b), want)
	}
}

// frame builds a response frame.
func frame(flags byte, op byte, body []byte) []byte {
	b := []byte{responseVersion, flags, 0, 1, op}
	b = AppendInt(b, int32(len(body)))
	return append(b, body...)
}

func TestParseHeader(t *testing.T) {
	h, err := ParseHeader(frame(0, OpResult, []byte{1, 2, 3}))
	if err != nil || h.Op != OpResult || h.Stream != 1 || h.Length != 3 {
		t.Errorf("header %+v, %v", h, err)
	}
	for name, b := range map[string][]byte{
		"short":      {responseVersion, 0, 0},
		"v5":         {0x85, 0, 0, 0, OpResult, 0, 0, 0, 0},
		"a request":  {Version, 0, 0, 0, OpResult, 0, 0, 0, 0},
		"negative":   {responseVersion, 0, 0, 0, OpResult, 0xff, 0xff, 0xff, 0xff},
		"too long":   {responseVersion, 0, 0, 0, OpResult, 0x7f, 0, 0, 0},
		"compressed": {responseVersion, flagCompression, 0, 0, OpResult, 0, 0, 0, 0},
	} {
		if _, err := ParseHeader(b); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v, want ErrProtocol", name, err)
		}
	}
}

// TestBody: the tracing id, warnings and custom payload a response's flags announce are
// skipped, in the specification's order.
func TestBody(t *testing.T) {
	msg := AppendInt(nil, ResultVoid)
	var b []byte
	b = append(b, bytes.Repeat([]byte{7}, 16)...)                 // tracing id
	b = AppendString(AppendString(AppendShort(b, 2), "w1"), "w2") // warnings
	b = AppendShort(b, 1)                                         // custom payload
	b = AppendBytes(AppendString(b, "k"), []byte("v"))
	b = append(b, msg...)
	h, _ := ParseHeader(frame(flagTracing|flagWarning|flagCustomPayload, OpResult, b))
	got, err := Body(h, b)
	if err != nil || !bytes.Equal(got, msg) {
		t.Errorf("body % x, %v; want % x", got, err, msg)
	}
	if _, err := Body(Header{Flags: flagWarning}, []byte{0, 1, 0, 9, 'x'}); !errors.Is(err, ErrProtocol) {
		t.Errorf("truncated warnings: %v", err)
	}
}

// TestRows: a Rows result with metadata (a QUERY's: column specs, a set<text> column and a
// map) and without (an EXECUTE with skip_metadata).
func TestRows(t *testing.T) {
	var b []byte
	b = AppendInt(b, ResultRows)
	b = AppendInt(b, mfGlobalTableSpec)
	b = AppendInt(b, 2)
	b = AppendString(AppendString(b, "system"), "local")
	b = AppendShort(AppendString(b, "tokens"), 0x0022)
	b = AppendShort(b, 0x000D)
	b = AppendShort(AppendString(b, "m"), 0x0021)
	b = AppendShort(AppendShort(b, 0x000D), 0x0009)
	b = AppendInt(b, 1) // one row
	set := AppendStringValue(AppendStringValue(AppendInt(nil, 2), "-5"), "42")
	b = AppendBytes(b, set)
	b = AppendBytes(b, nil)
	r := Reader{B: b}
	if k := r.Int(); k != ResultRows {
		t.Fatalf("kind %d", k)
	}
	cols, rows, err := Rows(&r)
	if err != nil || cols != 2 || rows != 1 {
		t.Fatalf("%d cols, %d rows, %v", cols, rows, err)
	}
	var got []string
	if err := Collection(r.Bytes(), func(e []byte) { got = append(got, string(e)) }); err != nil || len(got) != 2 || got[0] != "-5" || got[1] != "42" {
		t.Errorf("set %q, %v", got, err)
	}
	if v := r.Bytes(); v != nil || r.Err != nil || len(r.B) != 0 {
		t.Errorf("null %v, %v, %d left", v, r.Err, len(r.B))
	}

	noMeta := AppendInt(AppendInt(AppendInt(AppendInt(nil, ResultRows), mfNoMetadata), 11), 3)
	r = Reader{B: noMeta}
	r.Int()
	if cols, rows, err := Rows(&r); err != nil || cols != 11 || rows != 3 {
		t.Errorf("no metadata: %d cols, %d rows, %v", cols, rows, err)
	}
	if n := testing.AllocsPerRun(100, func() { r := Reader{B: noMeta}; r.Int(); Rows(&r) }); n != 0 {
		t.Errorf("Rows allocates %v times", n)
	}
	r = Reader{B: noMeta[:10]}
	r.Int()
	if _, _, err := Rows(&r); !errors.Is(err, ErrProtocol) {
		t.Errorf("truncated: %v", err)
	}
}

func TestError(t *testing.T) {
	b := AppendShortBytes(AppendString(AppendInt(nil, CodeUnprepared), "unknown id"), []byte{1, 2})
	e := ParseError(b)
	if e.Code != CodeUnprepared || e.Message != "unknown id" || !bytes.Equal(e.ID, []byte{1, 2}) {
		t.Errorf("%+v", e)
	}
	if e.Error() != "unprepared (0x2500): unknown id" {
		t.Errorf("%q", e.Error())
	}
	for code, timeout := range map[int32]bool{CodeReadTimeout: true, CodeWriteTimeout: true, CodeUnavailable: false, CodeOverloaded: false, CodeInvalid: false} {
		e := ParseError(AppendString(AppendInt(nil, code), "m"))
		if e.Timeout() != timeout || e.Temporary() != (code != CodeInvalid) {
			t.Errorf("0x%04x: timeout %v temporary %v", code, e.Timeout(), e.Temporary())
		}
	}
}

func TestConsistency(t *testing.T) {
	if c, ok := ParseConsistency("LOCAL_ONE"); !ok || c != LocalOne {
		t.Errorf("LOCAL_ONE: %v %v", c, ok)
	}
	if _, ok := ParseConsistency("one"); ok {
		t.Error("lower case accepted: the caller upper-cases")
	}
}
