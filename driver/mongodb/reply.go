package mongodb

import (
	"encoding/binary"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// ServerError is a command the server refused: a reply {ok: 0, code, codeName, errmsg}. The
// connection stays usable.
type ServerError struct {
	Code    int32
	Name    string // codeName, when the server sends it
	Message string
}

func (e *ServerError) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("mongodb: %s (%s, code %d)", e.Message, e.Name, e.Code)
	}
	return fmt.Sprintf("mongodb: %s (code %d)", e.Message, e.Code)
}

// WriteError is a write the server refused inside a command that succeeded ({ok: 1} with
// writeErrors, or a writeConcernError, whose Index is -1): the first one, and how many there
// were. The connection stays usable.
type WriteError struct {
	Index   int // the document's or statement's position in the command (in BatchInsert: in keys)
	Code    int32
	Message string
	Count   int // the number of write errors in the reply
}

func (e *WriteError) Error() string {
	s := fmt.Sprintf("mongodb: write error at index %d: %s (code %d)", e.Index, e.Message, e.Code)
	if e.Index < 0 {
		s = fmt.Sprintf("mongodb: write concern error: %s (code %d)", e.Message, e.Code)
	}
	if e.Count > 1 {
		s += fmt.Sprintf(" and %d more", e.Count-1)
	}
	return s
}

// Codes the driver treats specially.
const (
	codeNamespaceNotFound = 26    // drop of a collection that does not exist
	CodeDuplicateKey      = 11000 // insert of an existing _id
)

// result is what the driver learns from a reply body; it holds views into the reply.
type result struct {
	n       int64          // documents written (insert) or matched (update)
	batch   bsoncore.Array // cursor.firstBatch of a find
	cursor  int64          // cursor.id: 0 when the server closed it
	limits  limits         // hello's
	payload []byte         // saslStart's
	done    bool           // saslStart's
}

type limits struct{ maxMessage, maxBatch int64 }

// decode reads a reply body in one pass over its top-level elements: an {ok: 0} reply is a
// *ServerError, write errors a *WriteError, a malformed body errProtocol. It allocates only
// for an error.
func decode(body bsoncore.Document) (result, error) {
	var r result
	var ok, okSeen bool
	var code int32
	var name, msg []byte
	var werr *WriteError
	rest, valid := elements(body)
	if !valid {
		return r, fmt.Errorf("%w: malformed reply body", errProtocol)
	}
	for len(rest) > 0 {
		el, next, valid := bsoncore.ReadElement(rest)
		if !valid {
			return r, fmt.Errorf("%w: malformed reply element", errProtocol)
		}
		rest = next
		key, v := el.KeyBytes(), el.Value()
		switch string(key) { // no allocation: a conversion only compared
		case "ok":
			okSeen = true
			if b, isBool := v.BooleanOK(); isBool {
				ok = b
			} else if f, isNum := v.AsFloat64OK(); isNum {
				ok = f == 1
			}
		case "code":
			code, _ = v.AsInt32OK()
		case "codeName":
			name, _ = stringBytes(v)
		case "errmsg":
			msg, _ = stringBytes(v)
		case "n":
			r.n, _ = v.AsInt64OK()
		case "cursor":
			doc, isDoc := v.DocumentOK()
			if !isDoc {
				return r, fmt.Errorf("%w: cursor is a %s", errProtocol, v.Type)
			}
			if err := r.readCursor(doc); err != nil {
				return r, err
			}
		case "writeErrors":
			arr, isArr := v.ArrayOK()
			if !isArr {
				return r, fmt.Errorf("%w: writeErrors is a %s", errProtocol, v.Type)
			}
			werr = writeErrors(arr)
		case "writeConcernError":
			if werr == nil {
				doc, _ := v.DocumentOK()
				c, _ := doc.Lookup("code").AsInt32OK()
				m, _ := stringBytes(doc.Lookup("errmsg"))
				werr = &WriteError{Index: -1, Code: c, Message: string(m), Count: 1}
			}
		case "maxMessageSizeBytes":
			r.limits.maxMessage, _ = v.AsInt64OK()
		case "maxWriteBatchSize":
			r.limits.maxBatch, _ = v.AsInt64OK()
		case "payload":
			_, r.payload, _ = v.BinaryOK()
		case "done":
			r.done, _ = v.BooleanOK()
		}
	}
	if !okSeen {
		return r, fmt.Errorf("%w: reply without ok", errProtocol)
	}
	if !ok {
		if len(msg) == 0 {
			msg = []byte("command failed")
		}
		return r, &ServerError{Code: code, Name: string(name), Message: string(msg)}
	}
	if werr != nil {
		return r, werr
	}
	return r, nil
}

// readCursor finds firstBatch (an array of documents) and id.
func (r *result) readCursor(doc bsoncore.Document) error {
	rest, ok := elements(doc)
	if !ok {
		return fmt.Errorf("%w: malformed cursor", errProtocol)
	}
	for len(rest) > 0 {
		el, next, ok := bsoncore.ReadElement(rest)
		if !ok {
			return fmt.Errorf("%w: malformed cursor", errProtocol)
		}
		rest = next
		v := el.Value()
		switch string(el.KeyBytes()) {
		case "firstBatch":
			if r.batch, ok = v.ArrayOK(); !ok {
				return fmt.Errorf("%w: firstBatch is a %s", errProtocol, v.Type)
			}
		case "id":
			r.cursor, _ = v.AsInt64OK()
		}
	}
	return nil
}

// documents counts the documents of a find's first batch, checking that each is one; a reply
// without a batch is a protocol error.
func documents(batch bsoncore.Array) (int, error) {
	if batch == nil {
		return 0, fmt.Errorf("%w: find reply without cursor.firstBatch", errProtocol)
	}
	rest, ok := elements(batch)
	if !ok {
		return 0, fmt.Errorf("%w: malformed batch", errProtocol)
	}
	n := 0
	for len(rest) > 0 {
		el, next, ok := bsoncore.ReadElement(rest)
		if !ok || bsoncore.Type(el[0]) != bsoncore.TypeEmbeddedDocument {
			return n, fmt.Errorf("%w: a batch element is not a document", errProtocol)
		}
		rest = next
		n++
	}
	return n, nil
}

// writeErrors returns the first of a writeErrors array ([{index, code, errmsg}]), or nil when
// it is empty.
func writeErrors(arr bsoncore.Array) *WriteError {
	var first *WriteError
	count := 0
	rest, ok := elements(arr)
	if !ok {
		return &WriteError{Index: -1, Message: "malformed writeErrors"}
	}
	for len(rest) > 0 {
		el, next, ok := bsoncore.ReadElement(rest)
		if !ok {
			break
		}
		rest = next
		count++
		if first != nil {
			continue
		}
		doc, _ := el.Value().DocumentOK()
		i, _ := doc.Lookup("index").AsInt64OK()
		c, _ := doc.Lookup("code").AsInt32OK()
		m, _ := stringBytes(doc.Lookup("errmsg"))
		first = &WriteError{Index: int(i), Code: c, Message: string(m)}
	}
	if first != nil {
		first.Count = count
	}
	return first
}

// elements returns the elements of a document or array (between its length and its final
// zero), or false if its framing is wrong.
func elements(doc []byte) ([]byte, bool) {
	if len(doc) < 5 || int(int32(binary.LittleEndian.Uint32(doc))) != len(doc) || doc[len(doc)-1] != 0 {
		return nil, false
	}
	return doc[4 : len(doc)-1], true
}

// stringBytes is a string value's bytes, without copying them.
func stringBytes(v bsoncore.Value) ([]byte, bool) {
	if v.Type != bsoncore.TypeString || len(v.Data) < 5 {
		return nil, false
	}
	return v.Data[4 : len(v.Data)-1], true
}
