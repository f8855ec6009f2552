package cql

import (
	"encoding/binary"
	"fmt"
)

// Reader reads the protocol's notations from B, advancing it. The first short read sets Err
// (wrapping ErrProtocol) and every later read returns a zero value; views returned by Bytes
// and String are into the caller's buffer.
type Reader struct {
	B   []byte
	Err error
}

func (r *Reader) need(n int) bool {
	if r.Err != nil {
		return false
	}
	if n < 0 || len(r.B) < n {
		r.Err = fmt.Errorf("%w: message truncated (%d bytes needed, %d left)", ErrProtocol, n, len(r.B))
		r.B = nil
		return false
	}
	return true
}

// Skip drops n bytes.
func (r *Reader) Skip(n int) {
	if r.need(n) {
		r.B = r.B[n:]
	}
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if !r.need(1) {
		return 0
	}
	v := r.B[0]
	r.B = r.B[1:]
	return v
}

// Short reads a [short].
func (r *Reader) Short() int {
	if !r.need(2) {
		return 0
	}
	v := binary.BigEndian.Uint16(r.B)
	r.B = r.B[2:]
	return int(v)
}

// Int reads an [int].
func (r *Reader) Int() int32 {
	if !r.need(4) {
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.B))
	r.B = r.B[4:]
	return v
}

// String reads a [string] (a view).
func (r *Reader) String() []byte {
	n := r.Short()
	if !r.need(n) {
		return nil
	}
	v := r.B[:n:n]
	r.B = r.B[n:]
	return v
}

// ShortBytes reads [short bytes] (a view).
func (r *Reader) ShortBytes() []byte { return r.String() }

// Bytes reads [bytes] (a view); a null value is nil.
func (r *Reader) Bytes() []byte {
	n := int(r.Int())
	if n < 0 || r.Err != nil {
		return nil
	}
	if !r.need(n) {
		return nil
	}
	v := r.B[:n:n]
	r.B = r.B[n:]
	return v
}

// StringMultimap reads a [string multimap] into a new map (the handshake's SUPPORTED).
func (r *Reader) StringMultimap() map[string][]string {
	m := map[string][]string{}
	for n := r.Short(); n > 0 && r.Err == nil; n-- {
		k := string(r.String())
		for v := r.Short(); v > 0 && r.Err == nil; v-- {
			m[k] = append(m[k], string(r.String()))
		}
	}
	return m
}

// option skips a column type ([option]), the nested ones of collections, tuples and UDTs
// included.
func (r *Reader) option(depth int) {
	if depth > 32 {
		r.Err = fmt.Errorf("%w: column type nested too deeply", ErrProtocol)
		return
	}
	switch id := r.Short(); id {
	case 0x0000: // custom: a class name
		r.String()
	case 0x0020, 0x0022: // list, set
		r.option(depth + 1)
	case 0x0021: // map
		r.option(depth + 1)
		r.option(depth + 1)
	case 0x0030: // UDT: keyspace, name, fields (name, type)
		r.String()
		r.String()
		for n := r.Short(); n > 0 && r.Err == nil; n-- {
			r.String()
			r.option(depth + 1)
		}
	case 0x0031: // tuple
		for n := r.Short(); n > 0 && r.Err == nil; n-- {
			r.option(depth + 1)
		}
	}
}

// Consistency is a CQL consistency level.
type Consistency uint16

// Consistency levels.
const (
	Any         Consistency = 0x0000
	One         Consistency = 0x0001
	Two         Consistency = 0x0002
	Three       Consistency = 0x0003
	Quorum      Consistency = 0x0004
	All         Consistency = 0x0005
	LocalQuorum Consistency = 0x0006
	EachQuorum  Consistency = 0x0007
	LocalOne    Consistency = 0x000A
)

// Consistencies are the levels a client may ask for by name, in the protocol's order.
var Consistencies = []struct {
	Name  string
	Level Consistency
}{{"ANY", Any}, {"ONE", One}, {"TWO", Two}, {"THREE", Three}, {"QUORUM", Quorum}, {"ALL", All},
	{"LOCAL_QUORUM", LocalQuorum}, {"EACH_QUORUM", EachQuorum}, {"LOCAL_ONE", LocalOne}}

// ParseConsistency returns the level named s (upper case, as CQL names it).
func ParseConsistency(s string) (Consistency, bool) {
	for _, c := range Consistencies {
		if c.Name == s {
			return c.Level, true
		}
	}
	return 0, false
}
