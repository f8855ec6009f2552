package sqltable

import (
	"testing"

	"github.com/boxbench/boxbench/driver"
)

// The expected texts are what the MySQL and PostgreSQL drivers sent before they shared this
// package; a change here changes what the benchmark asks the servers.
func TestSQL(t *testing.T) {
	all := []string{"FIELD0", "FIELD1", "FIELD2"}
	for _, c := range []struct {
		kind                 Kind
		fields               []string
		rows                 int
		positional, numbered string
	}{
		{Read, nil, 1,
			"SELECT * FROM usertable WHERE YCSB_KEY = ?",
			"SELECT * FROM usertable WHERE YCSB_KEY = $1"},
		{Read, all[1:2], 1,
			"SELECT FIELD1 FROM usertable WHERE YCSB_KEY = ?",
			"SELECT FIELD1 FROM usertable WHERE YCSB_KEY = $1"},
		{Scan, nil, 1,
			"SELECT * FROM usertable WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?",
			"SELECT * FROM usertable WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2"},
		{Scan, all[2:], 1,
			"SELECT FIELD2 FROM usertable WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?",
			"SELECT FIELD2 FROM usertable WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2"},
		{Update, all[:1], 1,
			"UPDATE usertable SET FIELD0 = ? WHERE YCSB_KEY = ?",
			"UPDATE usertable SET FIELD0 = $2 WHERE YCSB_KEY = $1"},
		{Update, all, 1,
			"UPDATE usertable SET FIELD0 = ?, FIELD1 = ?, FIELD2 = ? WHERE YCSB_KEY = ?",
			"UPDATE usertable SET FIELD0 = $2, FIELD1 = $3, FIELD2 = $4 WHERE YCSB_KEY = $1"},
		{Insert, all, 5, // rows is ignored for a single insert
			"INSERT INTO usertable (YCSB_KEY, FIELD0, FIELD1, FIELD2) VALUES (?, ?, ?, ?)",
			"INSERT INTO usertable (YCSB_KEY, FIELD0, FIELD1, FIELD2) VALUES ($1, $2, $3, $4)"},
		{Batch, all, 2,
			"INSERT INTO usertable (YCSB_KEY, FIELD0, FIELD1, FIELD2) VALUES (?, ?, ?, ?), (?, ?, ?, ?)",
			"INSERT INTO usertable (YCSB_KEY, FIELD0, FIELD1, FIELD2) VALUES ($1, $2, $3, $4), ($5, $6, $7, $8)"},
		{Batch, all[:1], 3,
			"INSERT INTO usertable (YCSB_KEY, FIELD0) VALUES (?, ?), (?, ?), (?, ?)",
			"INSERT INTO usertable (YCSB_KEY, FIELD0) VALUES ($1, $2), ($3, $4), ($5, $6)"},
	} {
		for _, d := range []struct {
			ph   Placeholder
			want string
		}{{Positional, c.positional}, {Numbered, c.numbered}} {
			st := New[struct{}]("usertable", d.ph, nil).Get(c.kind, c.fields, c.rows)
			if st.SQL != d.want {
				t.Errorf("kind %d %v rows %d:\n got %s\nwant %s", c.kind, c.fields, c.rows, st.SQL, d.want)
			}
		}
	}
}

func TestDDL(t *testing.T) {
	tbl := driver.Table{Name: "usertable", FieldCount: 2}
	if got, want := DropTable(tbl), "DROP TABLE IF EXISTS usertable"; got != want {
		t.Errorf("DropTable = %q, want %q", got, want)
	}
	if got, want := CreateTable(tbl),
		"CREATE TABLE usertable (YCSB_KEY VARCHAR(255) PRIMARY KEY, FIELD0 TEXT, FIELD1 TEXT)"; got != want {
		t.Errorf("CreateTable = %q, want %q", got, want)
	}
}

// TestGetCaches: the same shape returns the same statement (a driver prepares it once), a
// different field list with the same key goes through the slow path to its own statement,
// the caller's slice is not retained, and init runs once per statement built.
func TestGetCaches(t *testing.T) {
	inits := 0
	tb := New("t", Numbered, func(st *Stmt[int]) { inits++; st.Prep = inits })
	fields := []string{"FIELD0", "FIELD1"}
	a := tb.Get(Update, fields, 1)
	if b := tb.Get(Update, []string{"FIELD0", "FIELD1"}, 1); b != a {
		t.Error("same field list: a different statement")
	}
	fields[1] = "FIELD9" // the caller reuses its slice: same key, different list
	c := tb.Get(Update, fields, 1)
	if c == a || c.SQL != "UPDATE t SET FIELD0 = $2, FIELD9 = $3 WHERE YCSB_KEY = $1" {
		t.Errorf("colliding key: got %q (same statement: %v)", c.SQL, c == a)
	}
	if a.Fields[1] != "FIELD1" {
		t.Errorf("statement kept the caller's slice: fields %v", a.Fields)
	}
	if d := tb.Get(Update, fields, 1); d != c {
		t.Error("slow path: a second statement for the same SQL")
	}
	if all, none := tb.Get(Read, nil, 1), tb.Get(Read, []string{}, 1); all == none {
		t.Error("nil fields (all columns) and no fields share a statement")
	}
	if tb.Get(Batch, fields[:1], 2) == tb.Get(Batch, fields[:1], 3) {
		t.Error("batches of 2 and 3 rows share a statement")
	}
	if a.Prep != 1 || c.Prep == 0 {
		t.Errorf("init: Prep %d and %d", a.Prep, c.Prep)
	}
	if tb.Name() != "t" {
		t.Errorf("Name = %q", tb.Name())
	}
}
