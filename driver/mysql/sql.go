package mysql

import (
	"database/sql"
	"sync"
	"sync/atomic"

	"github.com/boxbench/boxbench/driver/internal/sqltable"
)

// prep is a statement's prepared form, prepared once through database/sql (which re-prepares it
// on each connection that runs it).
type prep struct {
	mu sync.Mutex               // serialises preparing
	ps atomic.Pointer[sql.Stmt] // nil until prepared
}

// stmts builds and caches the statements of one table. MySQL's markers are positional ("?"):
// the arguments go in the order the markers appear in the statement.
type stmts = sqltable.Table[prep]

func newStmts(table string) *stmts { return sqltable.New[prep](table, sqltable.Positional, nil) }
