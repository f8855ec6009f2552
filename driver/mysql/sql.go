package mysql

import (
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// opKind is the statement shape.
type opKind uint8

const (
	opRead opKind = iota
	opScan
	opUpdate
	opInsert
	opBatch
)

// stmt is one SQL statement, prepared once through database/sql (which re-prepares it on each
// connection that runs it).
type stmt struct {
	sql    string
	mu     sync.Mutex               // serialises preparing
	ps     atomic.Pointer[sql.Stmt] // nil until prepared
	fields []string                 // the field list it was built for (nil: all columns, for reads and scans)
}

// stmtKey finds a statement without building its SQL: the generator passes either no fields,
// one field, or the same full list every time, so (kind, count, first field) nearly always
// identifies the list; stmts.get checks the whole list and falls back to the slow path.
type stmtKey struct {
	kind  opKind
	n     int
	first string
}

// stmts builds and caches the statements of one table.
type stmts struct {
	table string
	m     sync.Map // stmtKey → *stmt
	mu    sync.Mutex
	slow  map[string]*stmt // statements whose key collided, by SQL
}

func newStmts(table string) *stmts {
	return &stmts{table: table, slow: map[string]*stmt{}}
}

// get returns the statement for kind over fields; rows is the row count of a batch insert.
func (s *stmts) get(kind opKind, fields []string, rows int) *stmt {
	k := stmtKey{kind: kind, n: len(fields)}
	if fields == nil {
		k.n = -1
	} else if len(fields) > 0 {
		k.first = fields[0]
	}
	if kind == opBatch {
		k.n = k.n<<20 | rows
	}
	if v, ok := s.m.Load(k); ok {
		st := v.(*stmt)
		if sameFields(st.fields, fields) {
			return st
		}
		return s.getSlow(kind, fields, rows)
	}
	st := s.build(kind, fields, rows)
	v, _ := s.m.LoadOrStore(k, st)
	return v.(*stmt)
}

func (s *stmts) getSlow(kind opKind, fields []string, rows int) *stmt {
	st := s.build(kind, fields, rows)
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.slow[st.sql]; ok {
		return old
	}
	s.slow[st.sql] = st
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

func (s *stmts) build(kind opKind, fields []string, rows int) *stmt {
	cols := "*"
	if fields != nil {
		cols = strings.Join(fields, ", ")
	}
	var q string
	switch kind {
	case opRead:
		q = fmt.Sprintf("SELECT %s FROM %s WHERE YCSB_KEY = ?", cols, s.table)
	case opScan:
		q = fmt.Sprintf("SELECT %s FROM %s WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?", cols, s.table)
	case opUpdate:
		set := make([]string, len(fields))
		for i, f := range fields {
			set[i] = f + " = ?"
		}
		q = fmt.Sprintf("UPDATE %s SET %s WHERE YCSB_KEY = ?", s.table, strings.Join(set, ", "))
	case opInsert, opBatch:
		if kind == opInsert {
			rows = 1
		}
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT INTO %s (YCSB_KEY, %s) VALUES ", s.table, cols)
		for r := 0; r < rows; r++ {
			if r > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for c := 0; c <= len(fields); c++ {
				if c > 0 {
					b.WriteString(", ")
				}
				b.WriteByte('?')
			}
			b.WriteByte(')')
		}
		q = b.String()
	}
	var own []string // the caller owns fields; keep a copy (nil stays nil: "all columns")
	if fields != nil {
		own = append(make([]string, 0, len(fields)), fields...)
	}
	return &stmt{sql: q, fields: own}
}
