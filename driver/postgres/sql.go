package postgres

import (
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

// stmt is one SQL statement the driver prepares on each connection that runs it.
type stmt struct {
	name   string
	sql    string
	fields []string // the field list it was built for (nil: all columns, for reads and scans)
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
	seq   *atomic.Int64
	m     sync.Map // stmtKey → *stmt
	mu    sync.Mutex
	slow  map[string]*stmt // statements whose key collided, by SQL
}

func newStmts(table string, seq *atomic.Int64) *stmts {
	return &stmts{table: table, seq: seq, slow: map[string]*stmt{}}
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
		q = fmt.Sprintf("SELECT %s FROM %s WHERE YCSB_KEY = $1", cols, s.table)
	case opScan:
		q = fmt.Sprintf("SELECT %s FROM %s WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2", cols, s.table)
	case opUpdate:
		set := make([]string, len(fields))
		for i, f := range fields {
			set[i] = fmt.Sprintf("%s = $%d", f, i+2)
		}
		q = fmt.Sprintf("UPDATE %s SET %s WHERE YCSB_KEY = $1", s.table, strings.Join(set, ", "))
	case opInsert, opBatch:
		if kind == opInsert {
			rows = 1
		}
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT INTO %s (YCSB_KEY, %s) VALUES ", s.table, cols)
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
				fmt.Fprintf(&b, "$%d", p)
				p++
			}
			b.WriteByte(')')
		}
		q = b.String()
	}
	var own []string // the caller owns fields; keep a copy (nil stays nil: "all columns")
	if fields != nil {
		own = append(make([]string, 0, len(fields)), fields...)
	}
	return &stmt{name: fmt.Sprintf("boxbench_%d", s.seq.Add(1)), sql: q, fields: own}
}
