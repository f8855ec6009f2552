// Package sqltable builds and caches the SQL of the YCSB usertable (YCSB_KEY and FIELD0..n) for
// the SQL drivers. What differs between databases is passed in: the parameter markers
// (Placeholder) and the driver's own prepared-statement state (the type parameter P), which
// each driver keeps and uses in its own way.
package sqltable

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/boxbench/boxbench/driver"
)

// DefaultTable is the table used until a driver's Setup or UseTable names another (YCSB's name).
const DefaultTable = "usertable"

// maxParams is the limit of parameters per prepared statement of both servers (PostgreSQL's bind
// parameters, MySQL's placeholders).
const maxParams = 65535

// BatchRows is how many rows of fields columns (plus the key) one multi-row INSERT may carry.
func BatchRows(fields int) int { return maxParams / (fields + 1) }

// Kind is the statement shape.
type Kind uint8

const (
	Read Kind = iota
	Scan
	Update
	Insert
	Batch
)

// Placeholder returns the marker of the n-th (1-based) parameter.
//
// Parameters are numbered as the drivers bind them by number: the key is 1, then a scan's
// count or the values in field order (an insert: row after row, each row's key first). With
// positional markers (Positional) the parameters are bound in the order the markers appear in
// the text instead, which for Update is the values first and the key last.
type Placeholder func(n int) string

// Positional is MySQL's marker, "?".
func Positional(int) string { return "?" }

// Numbered is PostgreSQL's marker, "$n".
func Numbered(n int) string { return "$" + strconv.Itoa(n) }

// Stmt is one statement of a table. Its SQL and Fields do not change once Table.Get returned
// it; Prep is the driver's prepared-statement state, which the driver guards itself.
type Stmt[P any] struct {
	SQL    string
	Fields []string // the field list it was built for (nil: all columns, for reads and scans)
	Prep   P
}

// key finds a statement without building its SQL: the generator passes either no fields, one
// field, or the same full list every time, so (kind, count, first field) nearly always
// identifies the list; Get checks the whole list and falls back to the slow path.
type key struct {
	kind  Kind
	n     int
	first string
}

// Table builds and caches the statements of one table. Safe for concurrent use.
type Table[P any] struct {
	name string
	ph   Placeholder
	init func(*Stmt[P])
	m    sync.Map // key → *Stmt[P]
	mu   sync.Mutex
	slow map[string]*Stmt[P] // statements whose key collided, by SQL
}

// New returns the statements of the table name, with markers ph. init, if not nil, is called
// on every statement built (before any caller sees it), to set up the driver's state; a
// statement built concurrently for the same key may be built, and init called, more than once
// with only one of them returned.
func New[P any](name string, ph Placeholder, init func(*Stmt[P])) *Table[P] {
	return &Table[P]{name: name, ph: ph, init: init, slow: map[string]*Stmt[P]{}}
}

// Name is the table's name.
func (t *Table[P]) Name() string { return t.name }

// Get returns the statement for kind over fields; rows is the row count of a batch insert.
// It does not allocate once the statement exists.
func (t *Table[P]) Get(kind Kind, fields []string, rows int) *Stmt[P] {
	k := key{kind: kind, n: len(fields)}
	if fields == nil {
		k.n = -1
	} else if len(fields) > 0 {
		k.first = fields[0]
	}
	if kind == Batch {
		k.n = k.n<<20 | rows
	}
	if v, ok := t.m.Load(k); ok {
		st := v.(*Stmt[P])
		if sameFields(st.Fields, fields) {
			return st
		}
		return t.getSlow(kind, fields, rows)
	}
	st := t.build(kind, fields, rows)
	v, _ := t.m.LoadOrStore(k, st)
	return v.(*Stmt[P])
}

func (t *Table[P]) getSlow(kind Kind, fields []string, rows int) *Stmt[P] {
	st := t.build(kind, fields, rows)
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.slow[st.SQL]; ok {
		return old
	}
	t.slow[st.SQL] = st
	return st
}

func sameFields(a, b []string) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (t *Table[P]) build(kind Kind, fields []string, rows int) *Stmt[P] {
	var own []string // the caller owns fields; keep a copy (nil stays nil: "all columns")
	if fields != nil {
		own = append(make([]string, 0, len(fields)), fields...)
	}
	st := &Stmt[P]{SQL: t.sql(kind, fields, rows), Fields: own}
	if t.init != nil {
		t.init(st)
	}
	return st
}

// sql is the text of the statement kind over fields (nil: all columns).
func (t *Table[P]) sql(kind Kind, fields []string, rows int) string {
	cols := "*"
	if fields != nil {
		cols = strings.Join(fields, ", ")
	}
	switch kind {
	case Read:
		return fmt.Sprintf("SELECT %s FROM %s WHERE YCSB_KEY = %s", cols, t.name, t.ph(1))
	case Scan:
		return fmt.Sprintf("SELECT %s FROM %s WHERE YCSB_KEY >= %s ORDER BY YCSB_KEY LIMIT %s",
			cols, t.name, t.ph(1), t.ph(2))
	case Update:
		set := make([]string, len(fields))
		for i, f := range fields {
			set[i] = f + " = " + t.ph(i+2)
		}
		return fmt.Sprintf("UPDATE %s SET %s WHERE YCSB_KEY = %s", t.name, strings.Join(set, ", "), t.ph(1))
	case Insert, Batch:
		if kind == Insert {
			rows = 1
		}
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT INTO %s (YCSB_KEY, %s) VALUES ", t.name, cols)
		p := 1
		for r := 0; r < rows; r++ {
			if r > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for c := 0; c <= len(fields); c++ {
				if c > 0 {
					b.WriteString(", ")
				}
				b.WriteString(t.ph(p))
				p++
			}
			b.WriteByte(')')
		}
		return b.String()
	}
	return ""
}

// DropTable is the statement that drops table t if it exists.
func DropTable(t driver.Table) string { return "DROP TABLE IF EXISTS " + t.Name }

// CreateTable is the statement that creates table t as YCSB's JDBC binding documents it: a
// VARCHAR(255) primary key YCSB_KEY and TEXT columns FIELD0..n.
func CreateTable(t driver.Table) string {
	cols := make([]string, 0, t.FieldCount)
	for _, f := range t.Fields() {
		cols = append(cols, f+" TEXT")
	}
	return fmt.Sprintf("CREATE TABLE %s (YCSB_KEY VARCHAR(255) PRIMARY KEY, %s)", t.Name, strings.Join(cols, ", "))
}
