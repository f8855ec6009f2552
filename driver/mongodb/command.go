package mongodb

import (
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/boxbench/boxbench/version"
)

// The commands the binding sends, built with bsoncore's Append* functions into the
// connection's buffer (they append without allocating). Each leaves a finished message in
// c.wbuf. The command name comes first in the body, $db last, as the official driver sends
// them; no lsid (the official driver's implicit session: FerretDB 1.x ignores sessions, and
// nothing here needs one).

// hello is the handshake, with the client metadata MongoDB allows in the first hello only.
func (c *conn) hello() {
	c.begin()
	b := bsoncore.AppendInt32Element(c.wbuf, "hello", 1)
	ci, b := bsoncore.AppendDocumentElementStart(b, "client")
	di, b := bsoncore.AppendDocumentElementStart(b, "driver")
	b = bsoncore.AppendStringElement(b, "name", "boxbench")
	b = bsoncore.AppendStringElement(b, "version", version.Version())
	b, _ = bsoncore.AppendDocumentEnd(b, di)
	oi, b := bsoncore.AppendDocumentElementStart(b, "os")
	b = bsoncore.AppendStringElement(b, "type", "linux")
	b, _ = bsoncore.AppendDocumentEnd(b, oi)
	b, _ = bsoncore.AppendDocumentEnd(b, ci)
	c.wbuf = bsoncore.AppendStringElement(b, "$db", "admin")
	c.endBody()
	c.finish()
}

// saslStartPlain is SASL PLAIN (RFC 4616) in one step: an empty authorisation identity, the
// user and the password, NUL-separated. FerretDB 1.x keeps them for the connection and opens
// its PostgreSQL connections with them, so a wrong password fails at the first command that
// reaches PostgreSQL (New's ping), not here.
func (c *conn) saslStartPlain(user, password string) {
	c.begin()
	b := bsoncore.AppendInt32Element(c.wbuf, "saslStart", 1)
	b = bsoncore.AppendStringElement(b, "mechanism", "PLAIN")
	payload := make([]byte, 0, 2+len(user)+len(password)) // once per connection
	payload = append(append(append(append(payload, 0), user...), 0), password...)
	b = bsoncore.AppendBinaryElement(b, "payload", 0, payload)
	b = bsoncore.AppendInt32Element(b, "autoAuthorize", 1)
	c.wbuf = bsoncore.AppendStringElement(b, "$db", "$external")
	c.endBody()
	c.finish()
}

// simple is {name: 1, $db: db} (ping) or {name: coll, $db: db} (drop).
func (c *conn) simple(name, arg, db string) {
	c.begin()
	if arg == "" {
		c.wbuf = bsoncore.AppendInt32Element(c.wbuf, name, 1)
	} else {
		c.wbuf = bsoncore.AppendStringElement(c.wbuf, name, arg)
	}
	c.wbuf = bsoncore.AppendStringElement(c.wbuf, "$db", db)
	c.endBody()
	c.finish()
}

// find is a read (gte false: {_id: key}, at most one document) or a scan (gte true:
// {_id: {$gte: key}} sorted by _id, at most limit documents), with the projection of fields
// (nil: all), in a single batch: the server closes the cursor, no getMore or killCursors
// follows.
func (c *conn) find(coll, db, key string, gte bool, limit int32, fields []string) {
	c.begin()
	b := bsoncore.AppendStringElement(c.wbuf, "find", coll)
	fi, b := bsoncore.AppendDocumentElementStart(b, "filter")
	if gte {
		gi, bb := bsoncore.AppendDocumentElementStart(b, "_id")
		bb = bsoncore.AppendStringElement(bb, "$gte", key)
		b, _ = bsoncore.AppendDocumentEnd(bb, gi)
	} else {
		b = bsoncore.AppendStringElement(b, "_id", key)
	}
	b, _ = bsoncore.AppendDocumentEnd(b, fi)
	if gte {
		si, bb := bsoncore.AppendDocumentElementStart(b, "sort")
		bb = bsoncore.AppendInt32Element(bb, "_id", 1)
		b, _ = bsoncore.AppendDocumentEnd(bb, si)
	}
	if fields != nil {
		pi, bb := bsoncore.AppendDocumentElementStart(b, "projection")
		for _, f := range fields {
			bb = bsoncore.AppendInt32Element(bb, f, 1)
		}
		b, _ = bsoncore.AppendDocumentEnd(bb, pi)
	}
	b = bsoncore.AppendInt64Element(b, "limit", int64(limit))
	b = bsoncore.AppendInt32Element(b, "batchSize", limit)
	b = bsoncore.AppendBooleanElement(b, "singleBatch", true)
	c.wbuf = bsoncore.AppendStringElement(b, "$db", db)
	c.endBody()
	c.finish()
}

// update is one ordered update statement, {q: {_id: key}, u: {$set: {field: value…}}}, in
// the "updates" document sequence.
func (c *conn) update(coll, db, key string, fields []string, values [][]byte) {
	c.begin()
	b := bsoncore.AppendStringElement(c.wbuf, "update", coll)
	b = bsoncore.AppendBooleanElement(b, "ordered", true)
	c.wbuf = bsoncore.AppendStringElement(b, "$db", db)
	c.endBody()
	c.beginSequence("updates")
	si, b := bsoncore.AppendDocumentStart(c.wbuf)
	qi, b := bsoncore.AppendDocumentElementStart(b, "q")
	b = bsoncore.AppendStringElement(b, "_id", key)
	b, _ = bsoncore.AppendDocumentEnd(b, qi)
	ui, b := bsoncore.AppendDocumentElementStart(b, "u")
	seti, b := bsoncore.AppendDocumentElementStart(b, "$set")
	b = appendFields(b, fields, values)
	b, _ = bsoncore.AppendDocumentEnd(b, seti)
	b, _ = bsoncore.AppendDocumentEnd(b, ui)
	c.wbuf, _ = bsoncore.AppendDocumentEnd(b, si)
	c.finish()
}

// insertStart begins an ordered insert; appendRecord adds its documents, finish ends it.
func (c *conn) insertStart(coll, db string) {
	c.begin()
	b := bsoncore.AppendStringElement(c.wbuf, "insert", coll)
	b = bsoncore.AppendBooleanElement(b, "ordered", true)
	c.wbuf = bsoncore.AppendStringElement(b, "$db", db)
	c.endBody()
	c.beginSequence("documents")
}

// appendRecord appends the document {_id: key, field: value…} to the open sequence.
func (c *conn) appendRecord(key string, fields []string, values [][]byte) {
	di, b := bsoncore.AppendDocumentStart(c.wbuf)
	b = bsoncore.AppendStringElement(b, "_id", key)
	b = appendFields(b, fields, values)
	c.wbuf, _ = bsoncore.AppendDocumentEnd(b, di)
}

// appendFields appends field: value elements, the values as generic binary (YCSB's MongoDB
// binding stores byte arrays so).
func appendFields(b []byte, fields []string, values [][]byte) []byte {
	for i, f := range fields {
		b = bsoncore.AppendBinaryElement(b, f, 0, values[i])
	}
	return b
}
