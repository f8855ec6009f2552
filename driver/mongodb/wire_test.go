package mongodb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

// The requests are read back with the official driver's wiremessage package, an OP_MSG reader
// independent of this package's writer, and compared as extended JSON.

type sentMsg struct {
	reqID int32
	body  string
	seqID string
	seq   []string
}

func readRequest(t *testing.T, m []byte) sentMsg {
	t.Helper()
	length, reqID, respTo, op, rem, ok := wiremessage.ReadHeader(m)
	if !ok || int(length) != len(m) || respTo != 0 || op != wiremessage.OpMsg {
		t.Fatalf("header: length %d of %d, responseTo %d, opcode %v, ok %v", length, len(m), respTo, op, ok)
	}
	flags, rem, ok := wiremessage.ReadMsgFlags(rem)
	if !ok || flags != 0 {
		t.Fatalf("flags %v, ok %v", flags, ok)
	}
	var s sentMsg
	s.reqID = reqID
	for len(rem) > 0 {
		var st wiremessage.SectionType
		st, rem, ok = wiremessage.ReadMsgSectionType(rem)
		if !ok {
			t.Fatal("section type")
		}
		switch st {
		case wiremessage.SingleDocument:
			var doc bsoncore.Document
			doc, rem, ok = wiremessage.ReadMsgSectionSingleDocument(rem)
			if !ok || doc.Validate() != nil {
				t.Fatalf("body: ok %v, %v", ok, doc.Validate())
			}
			s.body = doc.String()
		case wiremessage.DocumentSequence:
			var docs []bsoncore.Document
			s.seqID, docs, rem, ok = wiremessage.ReadMsgSectionDocumentSequence(rem)
			if !ok {
				t.Fatal("document sequence")
			}
			for _, d := range docs {
				if err := d.Validate(); err != nil {
					t.Fatal(err)
				}
				s.seq = append(s.seq, d.String())
			}
		default:
			t.Fatalf("section type %v", st)
		}
	}
	return s
}

func TestRequests(t *testing.T) {
	fields := []string{"FIELD0", "FIELD1"}
	vals := [][]byte{[]byte("ab"), []byte("c")}
	const binAB, binC = `{"$binary":{"base64":"YWI=","subType":"00"}}`, `{"$binary":{"base64":"Yw==","subType":"00"}}`
	cases := []struct {
		name  string
		build func(c *conn)
		want  sentMsg
	}{
		{"read all", func(c *conn) { c.find("usertable", "ycsb", "user1", false, 1, nil) },
			sentMsg{body: `{"find": "usertable","filter": {"_id": "user1"},"limit": {"$numberLong":"1"},"batchSize": {"$numberInt":"1"},"singleBatch": true,"$db": "ycsb"}`}},
		{"read one", func(c *conn) { c.find("t", "db", "k", false, 1, fields[1:]) },
			sentMsg{body: `{"find": "t","filter": {"_id": "k"},"projection": {"FIELD1": {"$numberInt":"1"}},"limit": {"$numberLong":"1"},"batchSize": {"$numberInt":"1"},"singleBatch": true,"$db": "db"}`}},
		{"scan", func(c *conn) { c.find("t", "db", "user5", true, 10, fields) },
			sentMsg{body: `{"find": "t","filter": {"_id": {"$gte": "user5"}},"sort": {"_id": {"$numberInt":"1"}},"projection": {"FIELD0": {"$numberInt":"1"},"FIELD1": {"$numberInt":"1"}},"limit": {"$numberLong":"10"},"batchSize": {"$numberInt":"10"},"singleBatch": true,"$db": "db"}`}},
		{"update", func(c *conn) { c.update("t", "db", "k", fields, vals) },
			sentMsg{body: `{"update": "t","ordered": true,"$db": "db"}`, seqID: "updates",
				seq: []string{`{"q": {"_id": "k"},"u": {"$set": {"FIELD0": ` + binAB + `,"FIELD1": ` + binC + `}}}`}}},
		{"insert two", func(c *conn) {
			c.insertStart("t", "db")
			c.appendRecord("k1", fields, vals)
			c.appendRecord("k2", fields[:1], vals[1:])
			c.finish()
		}, sentMsg{body: `{"insert": "t","ordered": true,"$db": "db"}`, seqID: "documents",
			seq: []string{`{"_id": "k1","FIELD0": ` + binAB + `,"FIELD1": ` + binC + `}`, `{"_id": "k2","FIELD0": ` + binC + `}`}}},
		{"drop", func(c *conn) { c.simple("drop", "t", "db") }, sentMsg{body: `{"drop": "t","$db": "db"}`}},
		{"ping", func(c *conn) { c.simple("ping", "", "db") }, sentMsg{body: `{"ping": {"$numberInt":"1"},"$db": "db"}`}},
		{"plain", func(c *conn) { c.saslStartPlain("u", "pw") },
			// payload: "\x00u\x00pw"
			sentMsg{body: `{"saslStart": {"$numberInt":"1"},"mechanism": "PLAIN","payload": {"$binary":{"base64":"AHUAcHc=","subType":"00"}},"autoAuthorize": {"$numberInt":"1"},"$db": "$external"}`}},
	}
	c := newConn(nil)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.build(c)
			got := readRequest(t, c.wbuf)
			if got.reqID != int32(i+1) {
				t.Errorf("request id %d, want %d (one more per message)", got.reqID, i+1)
			}
			got.reqID = 0
			if got.body != tc.want.body || got.seqID != tc.want.seqID || strings.Join(got.seq, "\n") != strings.Join(tc.want.seq, "\n") {
				t.Errorf("sent\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
	c.hello()
	if got := readRequest(t, c.wbuf); !strings.HasPrefix(got.body, `{"hello": {"$numberInt":"1"},"client": {"driver": {"name": "boxbench",`) ||
		!strings.HasSuffix(got.body, `"os": {"type": "linux"}},"$db": "admin"}`) {
		t.Errorf("hello: %s", got.body)
	}
}

// TestRequestsDoNotAllocate: once the buffer has grown, building a request allocates nothing
// (the benchmark against a server checks the whole operation).
func TestRequestsDoNotAllocate(t *testing.T) {
	c := newConn(nil)
	fields := []string{"FIELD0", "FIELD1", "FIELD2"}
	vals := [][]byte{bytes.Repeat([]byte{'a'}, 100), bytes.Repeat([]byte{'b'}, 100), bytes.Repeat([]byte{'c'}, 100)}
	reply := message(t, 1, 0, okDoc(bsoncore.AppendInt32Element(nil, "n", 1)))
	ops := map[string]func(){
		"find":   func() { c.find("usertable", "ycsb", "user1000", false, 1, fields[1:2]) },
		"scan":   func() { c.find("usertable", "ycsb", "user1000", true, 10, fields) },
		"update": func() { c.update("usertable", "ycsb", "user1000", fields, vals) },
		"insert": func() {
			c.insertStart("usertable", "ycsb")
			c.appendRecord("user1000", fields, vals)
			c.finish()
		},
		"decode": func() {
			body, err := parseReply(reply, 1)
			if err == nil {
				_, err = decode(body)
			}
			if err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, op := range ops {
		if n := testing.AllocsPerRun(100, op); n != 0 {
			t.Errorf("%s: %v allocations per call", name, n)
		}
	}
}

// message is a reply to reqID: header, flags, body (and a 4-byte checksum when the flag is set).
func message(t *testing.T, reqID int32, flags wiremessage.MsgFlag, body bsoncore.Document, extra ...[]byte) []byte {
	t.Helper()
	idx, m := wiremessage.AppendHeaderStart(nil, 99, reqID, wiremessage.OpMsg)
	m = wiremessage.AppendMsgFlags(m, flags)
	m = wiremessage.AppendMsgSectionType(m, wiremessage.SingleDocument)
	m = append(m, body...)
	for _, e := range extra {
		m = append(m, e...)
	}
	if flags&wiremessage.ChecksumPresent != 0 {
		m = append(m, 1, 2, 3, 4)
	}
	binary.LittleEndian.PutUint32(m[idx:], uint32(len(m)))
	return m
}

// okDoc is a document of the given elements followed by ok: 1.0.
func okDoc(elems ...[]byte) bsoncore.Document {
	return bsoncore.BuildDocument(nil, append(elems, bsoncore.AppendDoubleElement(nil, "ok", 1))...)
}

func TestParseReply(t *testing.T) {
	body := okDoc()
	seq := []byte{1}
	seq = binary.LittleEndian.AppendUint32(seq, 4+2+5)
	seq = append(seq, 'x', 0)
	seq = append(seq, bsoncore.BuildDocument(nil)...)
	cases := []struct {
		name string
		msg  []byte
		err  string // "" for a valid reply
	}{
		{"plain", message(t, 7, 0, body), ""},
		{"checksum skipped", message(t, 7, wiremessage.ChecksumPresent, body), ""},
		{"optional flag ignored", message(t, 7, wiremessage.ExhaustAllowed, body), ""},
		{"sequence skipped", message(t, 7, 0, body, seq), ""},
		{"other request", message(t, 6, 0, body), "reply to request 6, want 7"},
		{"moreToCome", message(t, 7, wiremessage.MoreToCome, body), "moreToCome"},
		{"unknown required flag", message(t, 7, 1<<5, body), "unknown required flag bits 0x20"},
		{"two bodies", message(t, 7, 0, body, []byte{0}, body), "two bodies"},
		{"section kind 2", message(t, 7, 0, body, []byte{2}), "section kind 2"},
		{"truncated body", func() []byte { m := message(t, 7, 0, body); return fixLen(m[:len(m)-1]) }(), "malformed body"},
		{"bad length", func() []byte { m := message(t, 7, 0, body); m[0]++; return m }(), "truncated reply"},
		{"OP_REPLY", func() []byte {
			m := message(t, 7, 0, body)
			binary.LittleEndian.PutUint32(m[12:], uint32(wiremessage.OpReply))
			return m
		}(), "opcode 1, want 2013"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseReply(tc.msg, 7)
			if tc.err == "" {
				if err != nil || !bytes.Equal(got, body) {
					t.Errorf("body %v, %v; want %v", got, err, body)
				}
				return
			}
			if err == nil || !errors.Is(err, errProtocol) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v, want a protocol error with %q", err, tc.err)
			}
		})
	}
}

func fixLen(m []byte) []byte {
	binary.LittleEndian.PutUint32(m, uint32(len(m)))
	return m
}

func TestDecode(t *testing.T) {
	doc := func(elems ...[]byte) []byte { return bsoncore.BuildDocument(nil, elems...) }
	batch := func(n int) []byte {
		var vals []bsoncore.Value
		for i := 0; i < n; i++ {
			vals = append(vals, bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument,
				Data: doc(bsoncore.AppendStringElement(nil, "_id", "k"))})
		}
		return bsoncore.BuildArray(nil, vals...)
	}
	cursor := func(arr []byte) []byte {
		return bsoncore.AppendDocumentElement(nil, "cursor", doc(
			bsoncore.AppendArrayElement(nil, "firstBatch", arr),
			bsoncore.AppendInt64Element(nil, "id", 0),
			bsoncore.AppendStringElement(nil, "ns", "ycsb.t")))
	}
	t.Run("find", func(t *testing.T) {
		for _, n := range []int{0, 1, 10} {
			r, err := decode(okDoc(cursor(batch(n))))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := documents(r.batch); got != n || err != nil {
				t.Errorf("%d documents, %v; want %d", got, err, n)
			}
		}
		notDocs := bsoncore.BuildArray(nil, bsoncore.Value{Type: bsoncore.TypeInt32, Data: []byte{1, 0, 0, 0}})
		r, err := decode(okDoc(cursor(notDocs)))
		if err == nil {
			_, err = documents(r.batch)
		}
		if !errors.Is(err, errProtocol) {
			t.Errorf("a batch of numbers: %v, want a protocol error", err)
		}
		r, err = decode(okDoc())
		if err == nil {
			_, err = documents(r.batch)
		}
		if !errors.Is(err, errProtocol) {
			t.Errorf("a find reply without a cursor: %v, want a protocol error", err)
		}
	})
	t.Run("update", func(t *testing.T) {
		r, err := decode(okDoc(bsoncore.AppendInt32Element(nil, "n", 0), bsoncore.AppendInt32Element(nil, "nModified", 0)))
		if err != nil || r.n != 0 {
			t.Errorf("n %d, %v; want 0", r.n, err)
		}
	})
	t.Run("ok 0", func(t *testing.T) {
		_, err := decode(doc(bsoncore.AppendDoubleElement(nil, "ok", 0),
			bsoncore.AppendStringElement(nil, "errmsg", "no such command: 'bogus'"),
			bsoncore.AppendInt32Element(nil, "code", 59),
			bsoncore.AppendStringElement(nil, "codeName", "CommandNotFound")))
		var se *ServerError
		if !errors.As(err, &se) || se.Code != 59 || se.Name != "CommandNotFound" || se.Message != "no such command: 'bogus'" {
			t.Fatalf("%#v", err)
		}
		if want := "mongodb: no such command: 'bogus' (CommandNotFound, code 59)"; err.Error() != want {
			t.Errorf("%q, want %q", err, want)
		}
	})
	t.Run("ok false, no message", func(t *testing.T) {
		_, err := decode(doc(bsoncore.AppendBooleanElement(nil, "ok", false)))
		var se *ServerError
		if !errors.As(err, &se) || se.Message != "command failed" {
			t.Errorf("%v", err)
		}
	})
	t.Run("write errors", func(t *testing.T) {
		we := func(i int32, code int32, msg string) bsoncore.Value {
			return bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: doc(
				bsoncore.AppendInt32Element(nil, "index", i), bsoncore.AppendInt32Element(nil, "code", code),
				bsoncore.AppendStringElement(nil, "errmsg", msg))}
		}
		_, err := decode(okDoc(bsoncore.AppendInt32Element(nil, "n", 1),
			bsoncore.AppendArrayElement(nil, "writeErrors", bsoncore.BuildArray(nil,
				we(1, CodeDuplicateKey, "E11000 duplicate key error collection: ycsb.t"), we(2, 11000, "again")))))
		var w *WriteError
		if !errors.As(err, &w) || w.Index != 1 || w.Code != CodeDuplicateKey || w.Count != 2 {
			t.Fatalf("%#v", err)
		}
		if want := "mongodb: write error at index 1: E11000 duplicate key error collection: ycsb.t (code 11000) and 1 more"; err.Error() != want {
			t.Errorf("%q, want %q", err, want)
		}
		_, err = decode(okDoc(bsoncore.AppendDocumentElement(nil, "writeConcernError", doc(
			bsoncore.AppendInt32Element(nil, "code", 64), bsoncore.AppendStringElement(nil, "errmsg", "waiting for replication timed out")))))
		if !errors.As(err, &w) || w.Index != -1 || w.Code != 64 {
			t.Errorf("write concern: %#v", err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		for name, body := range map[string][]byte{
			"no ok":            doc(bsoncore.AppendInt32Element(nil, "n", 1)),
			"cursor not a doc": okDoc(bsoncore.AppendInt32Element(nil, "cursor", 1)),
			"short element":    {10, 0, 0, 0, 0x10, 'n', 0, 1, 0, 0},
			"length too large": {6, 0, 0, 0, 0x08, 0},
		} {
			if _, err := decode(body); !errors.Is(err, errProtocol) {
				t.Errorf("%s: %v, want a protocol error", name, err)
			}
		}
	})
}

// FuzzReply: no reply, however malformed, makes the parser panic or read out of bounds; what
// it accepts has a body that is a document.
func FuzzReply(f *testing.F) {
	doc := func(elems ...[]byte) []byte { return bsoncore.BuildDocument(nil, elems...) }
	cursor := bsoncore.AppendDocumentElement(nil, "cursor", doc(
		bsoncore.AppendArrayElement(nil, "firstBatch", bsoncore.BuildArray(nil,
			bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: doc(bsoncore.AppendStringElement(nil, "_id", "k"))})),
		bsoncore.AppendInt64Element(nil, "id", 0)))
	we := bsoncore.AppendArrayElement(nil, "writeErrors", bsoncore.BuildArray(nil,
		bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: doc(bsoncore.AppendInt32Element(nil, "index", 0),
			bsoncore.AppendInt32Element(nil, "code", 11000), bsoncore.AppendStringElement(nil, "errmsg", "dup"))}))
	for _, body := range [][]byte{okDoc(), okDoc(cursor), okDoc(we),
		doc(bsoncore.AppendDoubleElement(nil, "ok", 0), bsoncore.AppendStringElement(nil, "errmsg", "x"))} {
		f.Add(message(&testing.T{}, 1, 0, body))
		f.Add(message(&testing.T{}, 1, wiremessage.ChecksumPresent, body))
	}
	f.Fuzz(func(t *testing.T, m []byte) {
		body, err := parseReply(m, 1)
		if err != nil {
			return
		}
		if _, ok := elements(body); !ok {
			t.Fatalf("accepted a body that is not a document: %x", body)
		}
		if r, err := decode(body); err == nil {
			_, _ = documents(r.batch)
		}
	})
}
